//! Job files: `[global]` + `[[phase]]` tables in TOML, keyed by the option
//! table's names (`rw`, `bs`, `iodepth`, ... and fio's aliases such as
//! `ioengine`), layered with machine defaults and the command line into
//! [`PhaseParams`]. Unknown keys and bad values are errors that quote the
//! file, line and column and say what is allowed.

use crate::options::{PhaseSpec, SpecError, resolve_phase};
use serde::Deserialize;
use std::path::Path;
use storlab_types::PhaseParams;
use storlab_types::text::line_col;

/// A parsed job file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// Optional default target (the command line's TARGET wins).
    pub target: Option<String>,
    #[serde(default)]
    pub global: PhaseSpec,
    #[serde(default)]
    pub phase: Vec<toml::Spanned<PhaseSpec>>,
}

impl JobFile {
    /// Parse TOML text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<JobFile, SpecError> {
        toml::from_str::<JobFile>(text).map_err(|e| {
            let loc = e
                .span()
                .map(|s| {
                    let (l, c) = line_col(text, s.start);
                    format!("{}:{l}:{c}", path.display())
                })
                .unwrap_or_else(|| path.display().to_string());
            let mut msg = e.message().to_string();
            if msg.contains("unknown field") {
                msg.push_str(" (the keys are the options of `storlab bench --help`, with underscores: iodepth_batch)");
            }
            SpecError(format!("{loc}: {msg}"))
        })
    }

    /// The phases as typed, layered: `base` (defaults that depend on the
    /// machine, e.g. psync where io_uring is unavailable) < global < phase
    /// < `over` (the command line). A file with no `[[phase]]` runs
    /// `[global]` as a single phase. Each spec comes with the line and
    /// column of its table, for messages.
    pub fn specs(
        &self,
        text: &str,
        base: &PhaseSpec,
        over: &PhaseSpec,
    ) -> Vec<(PhaseSpec, Option<(usize, usize)>)> {
        let global = base.overlay(&self.global);
        if self.phase.is_empty() {
            return vec![(crate::groups::with_command_line(&global, over), None)];
        }
        self.phase
            .iter()
            .map(|sp| {
                let at = line_col(text, sp.span().start);
                let phase = global.overlay(sp.get_ref());
                (crate::groups::with_command_line(&phase, over), Some(at))
            })
            .collect()
    }

    /// Resolve every phase (see [`JobFile::specs`] for the layers).
    pub fn phases(
        &self,
        text: &str,
        path: &Path,
        base: &PhaseSpec,
        cli: &PhaseSpec,
    ) -> Result<Vec<PhaseParams>, SpecError> {
        let specs = self.specs(text, base, cli);
        let phases = specs
            .iter()
            .enumerate()
            .map(|(i, (spec, at))| {
                resolve_phase(spec, i).map_err(|e| match at {
                    Some((l, c)) => SpecError(format!(
                        "{}:{l}:{c}: phase {}: {}",
                        path.display(),
                        i + 1,
                        e.0
                    )),
                    None => SpecError(format!("{}: {}", path.display(), e.0)),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // A phase is found by its name (results, comparisons, charts): two
        // of one name would be mixed up.
        for (i, ph) in phases.iter().enumerate() {
            if let Some(first) = phases[..i].iter().position(|q| q.name == ph.name) {
                let at = |k: usize| match specs[k].1 {
                    Some((l, c)) => format!("{}:{l}:{c}", path.display()),
                    None => path.display().to_string(),
                };
                return Err(SpecError(format!(
                    "{}: phase {}: the name {:?} is already phase {}'s (at {}); phase names must \
                     be unique: rename one",
                    at(i),
                    i + 1,
                    ph.name,
                    first + 1,
                    at(first)
                )));
            }
        }
        Ok(phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Flag;
    use proptest::prelude::*;
    use storlab_types::{BsWeight, CacheMode, EngineKind};

    fn p(text: &str) -> Result<Vec<PhaseParams>, SpecError> {
        let path = Path::new("job.toml");
        let f = JobFile::parse(text, path)?;
        f.phases(text, path, &PhaseSpec::default(), &PhaseSpec::default())
    }

    #[test]
    fn duplicate_phase_names_are_refused_with_both_lines() {
        let e = p("[[phase]]\nname = \"a\"\nrw = \"read\"\n\n[[phase]]\nname = \"b\"\n\n[[phase]]\nname = \"a\"\nrw = \"write\"\n")
            .unwrap_err()
            .0;
        assert!(e.starts_with("job.toml:8:1: phase 3:"), "{e}");
        assert!(
            e.contains("\"a\"") && e.contains("phase 1's (at job.toml:1:1)"),
            "{e}"
        );
        // Unnamed phases get distinct names of their own.
        let ok = p("[[phase]]\nrw = \"read\"\n[[phase]]\nrw = \"read\"\n").unwrap();
        assert_ne!(ok[0].name, ok[1].name);
    }

    #[test]
    fn global_and_phases_layer() {
        let phases = p(r#"
[global]
bs = "1M"
size = "64M"
iodepth = 8
[[phase]]
name = "write"
rw = "write"
[[phase]]
rw = "randread"
bs = "4k"
"#)
        .unwrap();
        assert_eq!(phases.len(), 2);
        assert_eq!(phases[0].name, "write");
        assert_eq!(phases[0].bs[0].bs_bytes, 1 << 20);
        assert_eq!(phases[1].bs[0].bs_bytes, 4096);
        assert_eq!(phases[1].iodepth, 8);
        assert_eq!(phases[1].size_bytes, 64 << 20);
        assert_eq!(phases[1].name, "2-randread");
    }

    #[test]
    fn cli_overrides_file_and_fio_spellings_work() {
        let text = "[[phase]]\nrw = \"read\"\niodepth = 4\nioengine = \"psync\"\ndirect = 1\n";
        let f = JobFile::parse(text, Path::new("j.toml")).unwrap();
        let cli = PhaseSpec {
            iodepth: Some(32),
            ..Default::default()
        };
        let ph = f
            .phases(text, Path::new("j.toml"), &PhaseSpec::default(), &cli)
            .unwrap();
        assert_eq!(ph[0].iodepth, 32);
        assert_eq!(ph[0].engine, EngineKind::Psync);
        assert_eq!(ph[0].cache, CacheMode::Direct);
    }

    #[test]
    fn paired_settings_override_together_and_base_is_lowest() {
        let text = "[global]\nbssplit = \"4k/50:64k/50\"\ncache = \"cold\"\n\
                    [[phase]]\nrw = \"read\"\nbs = \"1M\"\ndirect = true\n\
                    [[phase]]\nrw = \"write\"\nengine = \"null\"\n";
        let path = Path::new("j.toml");
        let f = JobFile::parse(text, path).unwrap();
        let base = PhaseSpec {
            engine: Some(EngineKind::Psync),
            cache: Some(CacheMode::Warm),
            ..Default::default()
        };
        let ph = f.phases(text, path, &base, &PhaseSpec::default()).unwrap();
        assert_eq!(
            ph[0].bs,
            vec![BsWeight {
                bs_bytes: 1 << 20,
                weight: 100
            }]
        );
        assert_eq!(ph[0].cache, CacheMode::Direct);
        assert_eq!(
            ph[0].engine,
            EngineKind::Psync,
            "the machine default fills what nobody set"
        );
        assert_eq!(
            ph[1].bs.len(),
            2,
            "the global mix applies where the phase sets no size"
        );
        assert_eq!(
            ph[1].cache,
            CacheMode::Cold,
            "the file's choice beats the machine default"
        );
        assert_eq!(ph[1].engine, EngineKind::Null);
    }

    #[test]
    fn unknown_key_quotes_line_and_column() {
        let e = p("[global]\nbs = \"4k\"\nblocksizes = 3\n").unwrap_err().0;
        assert!(e.starts_with("job.toml:3:1:"), "{e}");
        assert!(e.contains("blocksizes"), "{e}");
        assert!(e.contains("expected one of"), "{e}");
    }

    #[test]
    fn bad_values_quote_location_and_fix() {
        let e = p("[global]\nbs = \"4q\"\n").unwrap_err().0;
        assert!(e.starts_with("job.toml:2:"), "{e}");
        assert!(e.contains("e.g. 4096, 4k"), "{e}");
        let e = p("[[phase]]\nrw = \"read\"\n[[phase]]\nrw = \"sideways\"\n")
            .unwrap_err()
            .0;
        // A choice is read as its type, so the file's reader points at the
        // word itself (line 4, column 6) and lists the choices.
        assert!(e.starts_with("job.toml:4:6: invalid rw 'sideways'"), "{e}");
        assert!(e.contains("randrw"), "{e}");
        let e = p("[global]\nruntime = \"5 parsecs\"\n").unwrap_err().0;
        assert!(e.contains("runtime"), "{e}");
        let e = p("[global]\nverify = \"maybe\"\n").unwrap_err().0;
        assert!(e.contains("yes/no"), "{e}");
        assert_eq!(
            toml::from_str::<PhaseSpec>("verify = \"on\"")
                .unwrap()
                .verify,
            Some(Flag(true))
        );
    }

    #[test]
    fn shipped_examples_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let f = JobFile::parse(&text, &path).unwrap();
                let phases = f
                    .phases(&text, &path, &PhaseSpec::default(), &PhaseSpec::default())
                    .unwrap();
                assert!(!phases.is_empty(), "{}", path.display());
                n += 1;
            }
        }
        assert!(n >= 2, "examples found: {n}");
    }

    proptest! {
        #[test]
        fn job_file_parser_never_panics(text in "\\PC{0,200}") {
            let path = Path::new("f.toml");
            if let Ok(f) = JobFile::parse(&text, path) {
                let _ = f.phases(&text, path, &PhaseSpec::default(), &PhaseSpec::default());
            }
        }

        #[test]
        fn structured_job_files_never_panic(
            bs in "[0-9]{1,5}[kKmM]?", rw in "(read|write|randrw|x)", depth in 0u32..70000, mix in 0u32..=300
        ) {
            let text = format!("[global]\nbs = \"{bs}\"\n[[phase]]\nrw = \"{rw}\"\niodepth = {depth}\nrwmixread = {mix}\n");
            let path = Path::new("f.toml");
            if let Ok(f) = JobFile::parse(&text, path) {
                let _ = f.phases(&text, path, &PhaseSpec::default(), &PhaseSpec::default());
            }
        }
    }
}
