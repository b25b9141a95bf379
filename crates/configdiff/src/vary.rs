//! `--vary NAME[,NAME...]`: the parameters a comparison is about.

use std::collections::BTreeSet;
use storlab_types::StoredRun;
use storlab_types::params::{PARAMS, Param};

/// Every name `--vary` knows without looking into the runs, with what it
/// covers: the parameters of the one vocabulary
/// ([`storlab_types::params`]) that the configuration diff compares.
/// Groups (`host`, `target`, `device`, `tool`) stand for several facts.
pub fn known_keys() -> impl Iterator<Item = &'static Param> {
    PARAMS.iter().filter(|p| p.compared)
}

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
    known_keys().map(|p| p.key).collect::<Vec<_>>().join(", ")
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
            let name = storlab_types::params::normalize(raw);
            if name.is_empty() {
                return Err(VaryError::Empty(s.to_string()));
            }
            let param = storlab_types::params::lookup(&name);
            let name = param.map_or(name, |p| p.key.to_string());
            if let Some(p) = param.filter(|p| !p.members.is_empty()) {
                self.keys.extend(p.members.iter().map(|m| (*m).to_string()));
            } else if param.is_some_and(|p| p.compared) {
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
        fn parse_never_panics_and_accepts_every_known_key(s in "\\PC{0,40}", i in 0usize..known_keys().count()) {
            let _ = Vary::parse(&s);
            let k = known_keys().nth(i).unwrap().key;
            let v = Vary::parse(&k.to_ascii_uppercase().replace('_', "-")).unwrap();
            prop_assert!(v.contains(k));
            prop_assert!(v.other.is_empty());
        }
    }
}
