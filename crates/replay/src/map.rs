//! Where a traced file is replayed: `--map FROM=TO` rules replace a path
//! prefix (the longest matching rule wins); without a rule a traced path
//! keeps its own name, its leading `/` dropped. The result is always a
//! relative path inside storlab's own run directory: `..`, empty names and
//! absolute targets are refused.

use std::path::{Component, Path, PathBuf};

/// Why a map rule or a mapped path is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error(
        "--map {0:?}: write FROM=TO (e.g. --map /scratch/app=app): a traced path prefix and where it goes under TARGET"
    )]
    Syntax(String),
    #[error(
        "--map {rule:?}: TO must be a relative path inside TARGET without `..` (e.g. app/data)"
    )]
    Escapes { rule: String },
    #[error(
        "the trace names {name:?}, which no --map rule covers; add --map FROM=TO for it (with --map, every traced file needs a rule)"
    )]
    Unmapped { name: String },
    #[error(
        "the trace names {name:?}, which would land outside TARGET ({why}); map it with --map FROM=TO"
    )]
    Outside { name: String, why: &'static str },
}

/// The `--map` rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathMap {
    rules: Vec<(String, PathBuf)>,
}

fn relative_inside(p: &Path) -> bool {
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && p.components().any(|c| matches!(c, Component::Normal(_)))
}

impl PathMap {
    /// Parse `FROM=TO` rules.
    pub fn parse<'a>(rules: impl IntoIterator<Item = &'a str>) -> Result<PathMap, MapError> {
        let mut out = PathMap::default();
        for r in rules {
            let Some((from, to)) = r.split_once('=') else {
                return Err(MapError::Syntax(r.into()));
            };
            if from.is_empty() {
                return Err(MapError::Syntax(r.into()));
            }
            let to = PathBuf::from(to);
            if !to.as_os_str().is_empty() && !relative_inside(&to) {
                return Err(MapError::Escapes { rule: r.into() });
            }
            out.rules.push((from.trim_end_matches('/').to_string(), to));
        }
        out.rules
            .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Ok(out)
    }

    /// Where the traced file `name` goes, relative to the run directory.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, MapError> {
        let mapped = if self.rules.is_empty() {
            PathBuf::from(name.trim_start_matches('/'))
        } else {
            let hit = self.rules.iter().find_map(|(from, to)| {
                let rest = name.strip_prefix(from.as_str())?;
                if rest.is_empty() {
                    // A rule for the file itself: exactly TO (joining "" would
                    // add a trailing slash and make it a directory's name).
                    Some(to.clone())
                } else {
                    rest.starts_with('/')
                        .then(|| to.join(rest.trim_start_matches('/')))
                }
            });
            hit.ok_or_else(|| MapError::Unmapped { name: name.into() })?
        };
        if mapped.as_os_str().is_empty() {
            return Err(MapError::Outside {
                name: name.into(),
                why: "it maps to TARGET itself, not a file in it",
            });
        }
        if !relative_inside(&mapped) {
            return Err(MapError::Outside {
                name: name.into(),
                why: "its path climbs out with `..`",
            });
        }
        Ok(mapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_paths_stay_inside() {
        let m =
            PathMap::parse(["/scratch=s", "/scratch/app=a", "/data/x.dat=x.dat"]).expect("rules");
        assert_eq!(
            m.resolve("/scratch/app/out.1").expect("mapped"),
            PathBuf::from("a/out.1")
        );
        assert_eq!(
            m.resolve("/scratch/other").expect("mapped"),
            PathBuf::from("s/other")
        );
        assert_eq!(
            m.resolve("/data/x.dat").expect("mapped"),
            PathBuf::from("x.dat")
        );
        assert!(matches!(
            m.resolve("/scratchy/f"),
            Err(MapError::Unmapped { .. })
        ));
        assert!(matches!(
            m.resolve("/home/u/f"),
            Err(MapError::Unmapped { .. })
        ));
    }

    #[test]
    fn a_whole_file_rule_maps_to_a_file_name_not_a_directory() {
        let m = PathMap::parse(["/tmp/w/data=data"]).expect("rule");
        let p = m.resolve("/tmp/w/data").expect("mapped");
        assert_eq!(p.to_str(), Some("data"), "no trailing slash: {p:?}");
    }

    #[test]
    fn without_rules_a_path_keeps_its_name_and_dotdot_is_refused() {
        let m = PathMap::default();
        assert_eq!(
            m.resolve("/scratch/f").expect("mapped"),
            PathBuf::from("scratch/f")
        );
        assert_eq!(m.resolve("rel/f").expect("mapped"), PathBuf::from("rel/f"));
        assert!(matches!(
            m.resolve("/a/../../etc/passwd"),
            Err(MapError::Outside { .. })
        ));
        assert!(matches!(m.resolve("/"), Err(MapError::Outside { .. })));
    }

    #[test]
    fn bad_rules_are_refused_with_the_fix() {
        assert!(matches!(
            PathMap::parse(["nofrom"]),
            Err(MapError::Syntax(_))
        ));
        assert!(matches!(
            PathMap::parse(["/a=/etc"]),
            Err(MapError::Escapes { .. })
        ));
        assert!(matches!(
            PathMap::parse(["/a=../up"]),
            Err(MapError::Escapes { .. })
        ));
        let e = PathMap::parse(["/a=/etc"]).expect_err("absolute");
        assert!(e.to_string().contains("relative path inside TARGET"));
    }

    proptest::proptest! {
        /// Whatever the trace names, a mapped path never leaves TARGET.
        #[test]
        fn a_resolved_path_is_always_relative_and_inside(name in "[/a-z.]{0,30}") {
            if let Ok(p) = PathMap::default().resolve(&name) {
                proptest::prop_assert!(relative_inside(&p), "{name:?} -> {p:?}");
            }
        }
    }
}
