//! What makes an IO500 phase or run INVALID, with io500's own reasons
//! (`INVALID(...)` in its sources at 02091cf). An invalid phase makes the run
//! invalid, unless the phase is optional, in which case only the extended
//! run is (`main.c`). storlab never scores an invalid run silently: the
//! reasons travel with the result.

use crate::phases::Phase;
use serde::Serialize;

/// Why a phase or run is INVALID.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Reason {
    /// `[debug] stonewall-time` differs from the rules' 300 s (30 s under
    /// `scc`) (`phase_dbg.c`).
    #[error("stonewall-time {configured}s != {required}s")]
    StonewallTime { configured: u64, required: u64 },
    /// `[debug] pause-dir` is set (`main.c`).
    #[error("pausing between phases is activated (pause-dir)")]
    PauseDir,
    /// A dry run (`main.c`).
    #[error("dry run mode activated")]
    DryRun,
    /// `[mdtest-hard] files-per-dir` is set (`phase_mdtest_hard.c`).
    #[error("files-per-dir is set")]
    FilesPerDir,
    /// A write/create phase ended before the stonewall time (`phase_ior.c`,
    /// `main.c`: "Runtime of phase is below stonewall time").
    #[error("runtime of phase ({runtime:.3}s) is below the stonewall time ({stonewall}s)")]
    BelowStonewall { runtime: f64, stonewall: u64 },
    /// A write/create phase ran shorter than the rules' minimum (300 s, or
    /// 30 s under `scc`), whatever stonewall time was configured (`main.c`:
    /// "Runtime is smaller than expected minimum runtime").
    #[error("runtime ({runtime:.3}s) is smaller than the expected minimum runtime ({minimum}s)")]
    BelowMinimum { runtime: f64, minimum: u64 },
    /// A phase's score is 0 (`main.c`: "Resulting score shouldn't be 0.0").
    #[error("resulting score shouldn't be 0.0")]
    ZeroScore,
    /// The phase reported I/O errors (`phase_ior.c`, `phase_mdworkbench.c`).
    #[error("errors ({0}) occurred during the phase")]
    Errors(u64),
    /// find found nothing (`phase_find.c`).
    #[error("find didn't find anything")]
    FindFoundNothing,
}

/// The reasons a finished phase is INVALID: io500's checks after each phase
/// (`main.c`) and the phase's own (errors, find's count).
/// `stonewall_s` is the configured stonewall time, `minimum_s` the rules'
/// minimum (300 s, 30 s under `scc`).
pub fn check_phase(
    phase: &Phase,
    runtime_s: f64,
    score: f64,
    stonewall_s: u64,
    minimum_s: u64,
    errors: u64,
) -> Vec<Reason> {
    let mut out = Vec::new();
    if errors > 0 {
        out.push(Reason::Errors(errors));
    }
    if phase.verify_stonewall && runtime_s < stonewall_s as f64 {
        out.push(Reason::BelowStonewall {
            runtime: runtime_s,
            stonewall: stonewall_s,
        });
    } else if score == 0.0 && !phase.dummy {
        out.push(Reason::ZeroScore);
    }
    if phase.verify_stonewall && runtime_s < minimum_s as f64 {
        out.push(Reason::BelowMinimum {
            runtime: runtime_s,
            minimum: minimum_s,
        });
    }
    if phase.name == "find" && score == 0.0 {
        out.push(Reason::FindFoundNothing);
    }
    out
}

/// Whether a run with these invalid phases (name, optional) is valid, and
/// whether its extended score is: an optional phase spoils only the latter.
pub fn run_validity<'a>(invalid: impl IntoIterator<Item = &'a Phase>) -> (bool, bool) {
    let mut run = true;
    let mut extended = true;
    for p in invalid {
        extended = false;
        if !p.optional {
            run = false;
        }
    }
    (run, extended)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phases::find;

    fn p(name: &str) -> &'static Phase {
        find(name).expect("a phase of io500")
    }

    #[test]
    fn a_write_phase_shorter_than_the_stonewall_is_invalid_a_read_phase_is_not() {
        let r = check_phase(p("ior-easy-write"), 12.0, 3.2, 300, 300, 0);
        assert_eq!(
            r,
            [
                Reason::BelowStonewall {
                    runtime: 12.0,
                    stonewall: 300
                },
                Reason::BelowMinimum {
                    runtime: 12.0,
                    minimum: 300
                }
            ]
        );
        assert!(check_phase(p("ior-easy-write"), 301.0, 3.2, 300, 300, 0).is_empty());
        assert!(check_phase(p("ior-easy-read"), 12.0, 3.2, 300, 300, 0).is_empty());
        assert_eq!(
            check_phase(p("mdtest-easy-stat"), 40.0, 0.0, 300, 300, 0),
            [Reason::ZeroScore]
        );
        assert_eq!(
            check_phase(p("find"), 1.0, 0.0, 300, 300, 0),
            [Reason::ZeroScore, Reason::FindFoundNothing]
        );
        assert_eq!(
            check_phase(p("ior-hard-read"), 40.0, 1.0, 300, 300, 3),
            [Reason::Errors(3)]
        );
    }

    #[test]
    fn a_short_stonewall_run_is_invalid_even_when_each_phase_reaches_it() {
        // `--stonewall 5s` (a trial run): the write phase reaches its 5 s but
        // not the rules' 300 s, so io500 marks it INVALID.
        let r = check_phase(p("mdtest-hard-write"), 5.2, 1.0, 5, 300, 0);
        assert_eq!(
            r,
            [Reason::BelowMinimum {
                runtime: 5.2,
                minimum: 300
            }]
        );
    }

    #[test]
    fn an_optional_phase_spoils_only_the_extended_run() {
        assert_eq!(run_validity([p("find-easy")]), (true, false));
        assert_eq!(run_validity([p("find-easy"), p("find")]), (false, false));
        assert_eq!(run_validity([]), (true, true));
    }

    #[test]
    fn reasons_read_like_io500s() {
        let r = Reason::StonewallTime {
            configured: 5,
            required: 300,
        };
        assert_eq!(r.to_string(), "stonewall-time 5s != 300s");
    }
}
