//! IO500's phases, in the order `io500` runs them (`src/phase-definitions.h`
//! of io500 at 02091cf), with the flags `main.c` reads: the score group,
//! whether the phase is optional (run and scored only in extended mode),
//! whether it only configures (a "dummy" such as `ior-easy`), and whether its
//! runtime must reach the stonewall time (the write/create phases).

use serde::Serialize;

/// Which half of the score a phase counts toward (`io500_phase_score_group`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScoreGroup {
    /// Not scored (configuration phases, `ior-rnd4K-easy-read`,
    /// `mdworkbench-create`/`-delete`).
    None,
    /// Metadata: kIOPS, the mdtest phases and find.
    Md,
    /// Bandwidth: GiB/s, the IOR phases.
    Bw,
}

/// One IO500 phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// The phase's name, as in `config.ini` sections and the result files.
    pub name: &'static str,
    /// Which score it counts toward.
    pub group: ScoreGroup,
    /// Run and scored only in extended mode (`IO500_PHASE_FLAG_OPTIONAL`).
    pub optional: bool,
    /// Only holds options for the phases after it (`IO500_PHASE_DUMMY`, or a
    /// section without a run of its own).
    pub dummy: bool,
    /// Its runtime must reach the stonewall time (`verify_stonewall`).
    pub verify_stonewall: bool,
}

const fn phase(name: &'static str, group: ScoreGroup) -> Phase {
    Phase {
        name,
        group,
        optional: false,
        dummy: false,
        verify_stonewall: false,
    }
}

const fn dummy(name: &'static str) -> Phase {
    Phase {
        dummy: true,
        ..phase(name, ScoreGroup::None)
    }
}

const fn optional(p: Phase) -> Phase {
    Phase {
        optional: true,
        ..p
    }
}

const fn stonewalled(p: Phase) -> Phase {
    Phase {
        verify_stonewall: true,
        ..p
    }
}

use ScoreGroup::{Bw, Md};

/// Every phase, in io500's order (`phases[]` in `phase-definitions.h`).
pub const PHASES: &[Phase] = &[
    dummy("global"),
    dummy("debug"),
    dummy("ior-easy"),
    stonewalled(phase("ior-easy-write", Bw)),
    dummy("mdtest-easy"),
    stonewalled(phase("mdtest-easy-write", Md)),
    optional(dummy("mdworkbench")),
    optional(phase("mdworkbench-create", ScoreGroup::None)),
    dummy("timestamp"),
    optional(phase("find-easy", Md)),
    dummy("ior-hard"),
    stonewalled(phase("ior-hard-write", Bw)),
    dummy("mdtest-hard"),
    stonewalled(phase("mdtest-hard-write", Md)),
    phase("find", Md),
    optional(phase("find-hard", Md)),
    optional(phase("mdworkbench-bench", Md)),
    phase("ior-easy-read", Bw),
    phase("mdtest-easy-stat", Md),
    phase("ior-hard-read", Bw),
    phase("mdtest-hard-stat", Md),
    optional(phase("mdworkbench-delete", ScoreGroup::None)),
    phase("mdtest-easy-delete", Md),
    phase("mdtest-hard-read", Md),
    phase("mdtest-hard-delete", Md),
    phase("ior-rnd4K-easy-read", ScoreGroup::None),
];

/// The phase called `name` (io500 compares names without regard to case).
pub fn find(name: &str) -> Option<&'static Phase> {
    PHASES.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The unit io500 prints a phase's score in: GiB/s for the IOR phases
/// (names starting with `i`), kIOPS for the others (`main.c`).
pub fn unit(name: &str) -> &'static str {
    if name.starts_with('i') {
        "GiB/s"
    } else {
        "kIOPS"
    }
}

/// The phases that run in a mode: every phase that is not a dummy, and the
/// optional ones only in extended mode (`RUN_PHASE` in `main.c`).
pub fn running(extended: bool) -> impl Iterator<Item = &'static Phase> {
    PHASES
        .iter()
        .filter(move |p| !p.dummy && (extended || !p.optional))
}

/// IO500's fixed parameters that a site cannot change, from the phase
/// sources: ior-hard moves 47,008-byte transfers into one shared file
/// (`-t 47008 -b 47008`, segments from the config), mdtest-hard writes and
/// reads 3,901 bytes per file in one shared directory (`-w 3901 -e 3901`),
/// mdtest-easy creates empty files in a directory per process (`-u -L`).
pub mod fixed {
    /// ior-hard's transfer and block size in bytes.
    pub const IOR_HARD_TRANSFER: u64 = 47_008;
    /// mdtest-hard's file size in bytes.
    pub const MDTEST_HARD_FILE_SIZE: u64 = 3_901;
    /// ior-rnd4K-easy-read's transfer size in bytes.
    pub const IOR_RND_TRANSFER: u64 = 4_096;
    /// The stonewall time a valid run uses, in seconds (`minwrite`).
    pub const STONEWALL_SECONDS: u64 = 300;
    /// The stonewall time of the Student Cluster Competition rules (`scc`).
    pub const SCC_STONEWALL_SECONDS: u64 = 30;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_run_has_io500s_twelve_scored_phases_in_its_order() {
        let scored: Vec<&str> = running(false)
            .filter(|p| p.group != ScoreGroup::None)
            .map(|p| p.name)
            .collect();
        assert_eq!(
            scored,
            [
                "ior-easy-write",
                "mdtest-easy-write",
                "ior-hard-write",
                "mdtest-hard-write",
                "find",
                "ior-easy-read",
                "mdtest-easy-stat",
                "ior-hard-read",
                "mdtest-hard-stat",
                "mdtest-easy-delete",
                "mdtest-hard-read",
                "mdtest-hard-delete",
            ]
        );
        // The extended ior-rnd phase runs in both modes but is not scored.
        assert_eq!(
            running(false).last().map(|p| p.name),
            Some("ior-rnd4K-easy-read")
        );
    }

    #[test]
    fn extended_mode_adds_the_optional_phases_and_only_writes_are_stonewalled() {
        let standard = running(false).count();
        let extended = running(true).count();
        assert_eq!(
            extended - standard,
            5,
            "find-easy, find-hard, mdworkbench x3"
        );
        let walled: Vec<&str> = PHASES
            .iter()
            .filter(|p| p.verify_stonewall)
            .map(|p| p.name)
            .collect();
        assert_eq!(
            walled,
            [
                "ior-easy-write",
                "mdtest-easy-write",
                "ior-hard-write",
                "mdtest-hard-write"
            ]
        );
        assert_eq!(PHASES.len(), 26, "IO500_PHASES in io500-phase.h");
    }

    #[test]
    fn units_follow_io500s_first_letter_rule() {
        assert_eq!(unit("ior-hard-read"), "GiB/s");
        assert_eq!(unit("find"), "kIOPS");
        assert_eq!(
            find("IOR-EASY-WRITE").map(|p| p.group),
            Some(ScoreGroup::Bw)
        );
    }
}
