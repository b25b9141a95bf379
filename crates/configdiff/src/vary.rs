//! `--vary NAME[,NAME...]`: the parameters a comparison is about.

use std::collections::BTreeSet;
use storlab_types::StoredRun;

/// Every name `--vary` knows, with what it covers. Groups (`host`,
/// `target`, `device`, `tool`) stand for several facts at once.
pub const KNOWN_KEYS: &[(&str, &str)] = &[
    ("rw", "I/O pattern"),
    ("rwmixread", "read share of a mixed phase (alias mix)"),
    ("bs", "block size or mix (aliases blocksize, bssplit)"),
    ("size", "bytes per job (alias filesize)"),
    ("numjobs", "jobs (alias jobs)"),
    ("iodepth", "queue depth per job (alias qd)"),
    ("engine", "I/O engine (alias ioengine)"),
    ("cache", "cache mode direct/cold/warm (alias direct)"),
    ("drop_caches", "cold cache by dropping the page cache"),
    ("rate_iops", "IOPS cap"),
    ("runtime", "time limit"),
    ("time_based", "loop until the runtime"),
    ("ramp", "warm-up time (alias ramp_time)"),
    ("fsync", "fsync every N writes"),
    ("end_fsync", "fsync at the end of a write phase"),
    ("layout", "file per job or shared file"),
    ("buffer_pattern", "data written"),
    ("random_with_replacement", "random offsets with replacement"),
    ("verify", "verified writes and reads"),
    ("sqpoll", "io_uring submission polling"),
    ("registered", "io_uring registered buffers and files"),
    ("iodepth_batch", "io_uring submit batch"),
    ("fallocate", "pre-allocated files"),
    ("null_latency", "null engine service time"),
    (
        "host",
        "the machine: host, os, kernel, arch, cpu, cpus, ram",
    ),
    ("os", "operating system"),
    ("kernel", "kernel version"),
    ("arch", "CPU architecture"),
    ("cpu", "CPU model"),
    ("cpus", "CPU count"),
    ("ram", "memory size"),
    (
        "target",
        "what was measured: target, target_kind, filesystem, device, device_model",
    ),
    ("target_kind", "directory, file or block device"),
    ("filesystem", "file system type (alias fs)"),
    ("device", "device and its model"),
    ("device_model", "device model (alias model)"),
    ("tool", "tool and its version"),
    ("tool_version", "tool version (alias version)"),
];

const GROUPS: &[(&str, &[&str])] = &[
    (
        "host",
        &["host", "os", "kernel", "arch", "cpu", "cpus", "ram"],
    ),
    (
        "target",
        &[
            "target",
            "target_kind",
            "filesystem",
            "device",
            "device_model",
        ],
    ),
    ("device", &["device", "device_model"]),
    ("tool", &["tool", "tool_version"]),
];

const ALIASES: &[(&str, &str)] = &[
    ("mix", "rwmixread"),
    ("blocksize", "bs"),
    ("bssplit", "bs"),
    ("filesize", "size"),
    ("jobs", "numjobs"),
    ("qd", "iodepth"),
    ("ioengine", "engine"),
    ("direct", "cache"),
    ("ramp_time", "ramp"),
    ("fs", "filesystem"),
    ("model", "device_model"),
    ("version", "tool_version"),
    ("hostname", "host"),
];

/// A bad `--vary` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaryError {
    #[error(
        "--vary: empty parameter name in '{0}'; give names separated by commas, e.g. --vary iodepth,bs"
    )]
    Empty(String),
    #[error(
        "--vary: unknown parameter '{name}'; use one of: {known} (or a parameter name from the \
         runs' JSON records, see `storlab show --json`)"
    )]
    Unknown { name: String, known: String },
}

/// The parameters under study (canonical keys).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vary {
    keys: BTreeSet<String>,
    /// Names that are not built-in keys; they must name a parameter of the
    /// runs compared ([`Vary::check_against`]).
    other: BTreeSet<String>,
}

fn known_list() -> String {
    KNOWN_KEYS
        .iter()
        .map(|(k, _)| *k)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Vary {
    /// Parse `iodepth`, `qd,bs`, `host`. Names are case-insensitive and `-`
    /// equals `_`. A name that is neither built in nor alias must look like a
    /// parameter name (letters, digits, `_`); it is checked against the runs
    /// later.
    pub fn parse(s: &str) -> Result<Vary, VaryError> {
        let mut v = Vary::default();
        v.add(s)?;
        Ok(v)
    }

    /// Add the names in `s` (repeated `--vary` flags).
    pub fn add(&mut self, s: &str) -> Result<(), VaryError> {
        for raw in s.split(',') {
            let name = raw.trim().to_ascii_lowercase().replace('-', "_");
            if name.is_empty() {
                return Err(VaryError::Empty(s.to_string()));
            }
            let name = ALIASES
                .iter()
                .find(|(a, _)| *a == name)
                .map(|(_, k)| (*k).to_string())
                .unwrap_or(name);
            if let Some((_, members)) = GROUPS.iter().find(|(g, _)| *g == name) {
                self.keys.extend(members.iter().map(|m| (*m).to_string()));
            } else if KNOWN_KEYS.iter().any(|(k, _)| *k == name) {
                self.keys.insert(name);
            } else if name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                self.keys.insert(name.clone());
                self.other.insert(name);
            } else {
                return Err(VaryError::Unknown {
                    name: raw.trim().to_string(),
                    known: known_list(),
                });
            }
        }
        Ok(())
    }

    /// Merge several `--vary` values.
    pub fn from_list(list: &[String]) -> Result<Vary, VaryError> {
        let mut v = Vary::default();
        for s in list {
            v.add(s)?;
        }
        Ok(v)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(String::as_str)
    }

    /// Refuse names that are neither built in nor a parameter any of these
    /// runs recorded (a typo must not silently allow a comparison).
    pub fn check_against<'a>(
        &self,
        runs: impl IntoIterator<Item = &'a StoredRun>,
    ) -> Result<(), VaryError> {
        if self.other.is_empty() {
            return Ok(());
        }
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for r in runs {
            for p in &r.report.phases {
                if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&p.params) {
                    seen.extend(m.keys().map(|k| crate::diff::generic_key(k)));
                }
            }
        }
        match self.other.iter().find(|n| !seen.contains(*n)) {
            None => Ok(()),
            Some(n) => Err(VaryError::Unknown {
                name: n.clone(),
                known: known_list(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn aliases_groups_and_case() {
        let v = Vary::parse("QD, bs").unwrap();
        assert!(v.contains("iodepth") && v.contains("bs"));
        let v = Vary::parse("device").unwrap();
        assert!(v.contains("device") && v.contains("device_model"));
        assert!(!v.contains("target"));
        let v = Vary::from_list(&["host".into(), "ramp-time".into()]).unwrap();
        assert!(v.contains("kernel") && v.contains("ramp"));
        assert!(Vary::default().is_empty());
    }

    #[test]
    fn bad_names_say_what_is_allowed() {
        let e = Vary::parse("iodepth,").unwrap_err().to_string();
        assert!(e.contains("empty parameter name"), "{e}");
        let e = Vary::parse("queue depth").unwrap_err().to_string();
        assert!(e.contains("'queue depth'") && e.contains("iodepth"), "{e}");
        // Identifier-like unknowns are checked against the runs.
        let v = Vary::parse("thinktime").unwrap();
        let e = v.check_against([]).unwrap_err().to_string();
        assert!(e.contains("'thinktime'"), "{e}");
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_accepts_every_known_key(s in "\\PC{0,40}", i in 0usize..KNOWN_KEYS.len()) {
            let _ = Vary::parse(&s);
            let k = KNOWN_KEYS[i].0;
            let v = Vary::parse(&k.to_ascii_uppercase().replace('_', "-")).unwrap();
            prop_assert!(v.contains(k));
            prop_assert!(v.other.is_empty());
        }
    }
}
