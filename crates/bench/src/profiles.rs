//! Profiles: the published test patterns shipped as TOML job files
//! (`profiles/*.toml`, embedded in the binary) plus the user's own (a
//! user's profile of the same name wins). A profile is a job file with a
//! `[profile]` table: `about` (one line on what it emulates), `source`
//! (where the pattern comes from), `vary` (the sweep `storlab sweep
//! --profile NAME` runs, in `--vary` syntax), `zip`, and `per_core_mb_s` (a
//! planning figure per CPU core that the report compares the measured rate
//! against).
//!
//! This module parses profiles and finds one by name; the command line
//! reads the user's files (its input rules) and prints the warnings.

use crate::{JobFile, SpecError, Vary};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storlab_types::BenchReport;

/// The shipped profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("seq", include_str!("../../../profiles/seq.toml")),
    ("iops", include_str!("../../../profiles/iops.toml")),
    ("cache", include_str!("../../../profiles/cache.toml")),
    ("scaling", include_str!("../../../profiles/scaling.toml")),
    ("sas", include_str!("../../../profiles/sas.toml")),
    ("sas-dd", include_str!("../../../profiles/sas-dd.toml")),
    ("oltp", include_str!("../../../profiles/oltp.toml")),
    ("ooc", include_str!("../../../profiles/ooc.toml")),
    ("ior-fpp", include_str!("../../../profiles/ior-fpp.toml")),
    (
        "ior-shared",
        include_str!("../../../profiles/ior-shared.toml"),
    ),
];

/// Where a shipped profile comes from, as [`Profile::origin`] says it.
pub const BUILT_IN: &str = "built-in";

/// A profile that cannot be parsed or found.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Not TOML.
    #[error("profile {name} ({origin})")]
    Toml {
        name: String,
        origin: String,
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A `[profile]` table with a bad field.
    #[error("profile {name} ({origin}): [profile]: {message}")]
    Meta {
        name: String,
        origin: String,
        message: String,
    },
    /// No `[profile]` table.
    #[error(
        "profile {name} ({origin}) has no [profile] table: add one with at least about = \"what it emulates\""
    )]
    NoMeta { name: String, origin: String },
    /// The job file could not be read back as a document.
    #[error("cannot re-read the profile")]
    Reread(#[source] Box<toml::de::Error>),
    /// The job file without `[profile]` could not be written back.
    #[error("cannot re-serialise the profile")]
    Reserialise(#[source] toml::ser::Error),
    /// A bad job file.
    #[error(transparent)]
    Job(#[from] SpecError),
    /// A bad sweep in `vary`.
    #[error("profile {name} ({origin})")]
    Vary {
        name: String,
        origin: String,
        #[source]
        source: SpecError,
    },
    /// The user's profile of that name is broken.
    #[error(
        "profile {name} ({path}) cannot be used: {error}; fix the file (storlab profiles lists the others)"
    )]
    Broken {
        name: String,
        path: String,
        error: String,
    },
    /// No profile of that name.
    #[error("no profile named '{name}': use one of {names} (storlab profiles lists them)")]
    NotFound { name: String, names: String },
}

/// A profile's `[profile]` table.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileMeta {
    pub about: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub vary: Vec<String>,
    #[serde(default)]
    pub zip: bool,
    pub per_core_mb_s: Option<f64>,
}

/// A profile: its name, where it was found, its text and the job file
/// without the `[profile]` table.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    /// [`BUILT_IN`] or the user's file.
    pub origin: String,
    pub text: String,
    pub meta: ProfileMeta,
    /// The job file to run (the text with `[profile]` taken out).
    pub job_text: String,
}

impl Profile {
    /// Parse a profile's text; `origin` names it in messages.
    pub fn parse(name: &str, origin: &str, text: &str) -> Result<Profile, ProfileError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|source| ProfileError::Toml {
            name: name.into(),
            origin: origin.into(),
            source: Box::new(source),
        })?;
        let meta = match table.remove("profile") {
            Some(v) => v
                .try_into::<ProfileMeta>()
                .map_err(|e| ProfileError::Meta {
                    name: name.into(),
                    origin: origin.into(),
                    message: e.message().to_string(),
                })?,
            None => {
                return Err(ProfileError::NoMeta {
                    name: name.into(),
                    origin: origin.into(),
                });
            }
        };
        let job_text = toml::to_string(&table).map_err(ProfileError::Reserialise)?;
        // Check the job file and the sweep now, so a broken profile is named at once.
        JobFile::parse(&job_text, Path::new(&format!("profile {name}")))?;
        for v in &meta.vary {
            Vary::parse(v).map_err(|source| ProfileError::Vary {
                name: name.into(),
                origin: origin.into(),
                source,
            })?;
        }
        Ok(Profile {
            name: name.to_string(),
            origin: origin.to_string(),
            text: text.to_string(),
            meta,
            job_text,
        })
    }

    /// The path used in messages about the job file.
    pub fn job_path(&self) -> PathBuf {
        PathBuf::from(format!("profile {}", self.name))
    }

    /// Whether it is one of the shipped profiles.
    pub fn is_builtin(&self) -> bool {
        self.origin == BUILT_IN
    }
}

/// A user profile that could not be read or parsed: left out, named with
/// its error (one broken file must not take every profile with it).
#[derive(Debug, Clone)]
pub struct Broken {
    pub name: String,
    pub path: PathBuf,
    pub error: String,
}

/// The warning a broken user profile gets wherever profiles are listed or
/// looked up.
impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "profile {} ({}) is left out: {} (fix or remove the file; the other profiles work)",
            self.name,
            self.path.display(),
            self.error
        )
    }
}

/// Why a user's profile file could not be read, as the reader words it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(pub String);

/// A user's profile file as the command line read it: its name (the file
/// stem), its path, and its text or why it could not be read.
#[derive(Debug, Clone)]
pub struct UserFile {
    pub name: String,
    pub path: PathBuf,
    pub text: Result<String, Unreadable>,
}

/// The user's profile files in `dir` (its `*.toml` files, sorted by
/// path), each read with `read`; none when the directory cannot be listed.
pub fn user_files(
    dir: Option<&Path>,
    read: impl Fn(&Path) -> Result<String, Unreadable>,
) -> Vec<UserFile> {
    let Some(rd) = dir.and_then(|d| std::fs::read_dir(d).ok()) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| UserFile {
            name: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            text: read(&path),
            path,
        })
        .collect()
}

/// Every profile that loads, and the user's files that do not.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub profiles: Vec<Profile>,
    pub broken: Vec<Broken>,
}

impl Catalog {
    /// Every profile: the user's first (in the order given; they override
    /// shipped ones of the same name), then the shipped ones. A user file
    /// that cannot be read or parsed is set aside in `broken` (its error as
    /// `describe` words it); if it has a shipped profile's name, that name
    /// is broken too (the user meant to override it: running the shipped
    /// one instead would measure something else without a word).
    pub fn load(
        user: impl IntoIterator<Item = UserFile>,
        describe: impl Fn(ProfileError) -> String,
    ) -> Result<Catalog, ProfileError> {
        let mut out = Catalog::default();
        for f in user {
            let parsed = f.text.map_err(|e| e.0).and_then(|text| {
                Profile::parse(&f.name, &f.path.display().to_string(), &text).map_err(&describe)
            });
            match parsed {
                Ok(profile) => out.profiles.push(profile),
                Err(error) => out.broken.push(Broken {
                    name: f.name,
                    path: f.path,
                    error,
                }),
            }
        }
        for (name, text) in BUILTIN {
            if !out.profiles.iter().any(|p| p.name == *name)
                && !out.broken.iter().any(|b| b.name == *name)
            {
                out.profiles.push(Profile::parse(name, BUILT_IN, text)?);
            }
        }
        Ok(out)
    }

    /// The user's broken profile called `name`, as an error.
    pub fn broken_named(&self, name: &str) -> Option<ProfileError> {
        self.broken
            .iter()
            .find(|b| b.name == name)
            .map(|b| ProfileError::Broken {
                name: name.to_string(),
                path: b.path.display().to_string(),
                error: b.error.clone(),
            })
    }

    /// The profile called `name`, or an error listing the names (a broken
    /// user profile of that name: its parse error).
    pub fn find(self, name: &str) -> Result<Profile, ProfileError> {
        if let Some(e) = self.broken_named(name) {
            return Err(e);
        }
        let names: Vec<String> = self.profiles.iter().map(|p| p.name.clone()).collect();
        self.profiles
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ProfileError::NotFound {
                name: name.to_string(),
                names: names.join(", "),
            })
    }
}

/// A profile as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct ProfileDoc<'a> {
    pub name: &'a str,
    /// `built-in` (shipped in the binary) or `user` (a file in the user's
    /// profile directory).
    pub origin: &'static str,
    /// The user's file; none for a built-in profile.
    pub path: Option<&'a str>,
    /// The `[profile]` table: about, source, vary, zip, per_core_mb_s.
    #[serde(flatten)]
    pub meta: &'a ProfileMeta,
    /// Each phase as the profile sets it (`[global]` overlaid by the
    /// phase's table; options it leaves out take bench's defaults), sizes
    /// in bytes as they resolve on this machine (`2xRAM`); `job` has them
    /// as written.
    pub phases: Vec<crate::PhaseSpec>,
    /// `show` only: the job file without `[profile]`, as a document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<toml::Table>,
    /// `show` only: the profile's TOML text as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
}

impl Profile {
    /// The profile as `--json` prints it (`full`: with its job and text).
    pub fn doc(&self, full: bool) -> Result<ProfileDoc<'_>, ProfileError> {
        let p = self;
        let jf = JobFile::parse(&p.job_text, &p.job_path())?;
        let phases = jf
            .specs(&p.job_text, &Default::default(), &Default::default())
            .into_iter()
            .map(|(spec, _)| spec)
            .collect();
        let builtin = p.is_builtin();
        Ok(ProfileDoc {
            name: &p.name,
            origin: if builtin { "built-in" } else { "user" },
            path: (!builtin).then_some(p.origin.as_str()),
            meta: &p.meta,
            phases,
            job: if full {
                Some(toml::from_str(&p.job_text).map_err(|e| ProfileError::Reread(Box::new(e)))?)
            } else {
                None
            },
            text: full.then_some(p.text.as_str()),
        })
    }
}

impl Catalog {
    /// The list as `storlab profiles` shows it: each profile's name, what it
    /// emulates and where it comes from, the broken user files, and how to
    /// run one (`dir`: the user's profile directory).
    pub fn listing(&self, dir: Option<&Path>) -> String {
        let (all, cat) = (&self.profiles, self);
        let w = all
            .iter()
            .map(|p| p.name.len())
            .chain(cat.broken.iter().map(|b| b.name.len()))
            .max()
            .unwrap_or(4);
        let mut text = String::new();
        for p in all {
            text.push_str(&format!("{:w$}  {}\n", p.name, p.meta.about));
            let mut from = format!("{:w$}  from: {}", "", p.meta.source);
            if !p.is_builtin() {
                from.push_str(&format!(" ({})", p.origin));
            }
            text.push_str(&from);
            text.push('\n');
        }
        for b in &cat.broken {
            text.push_str(&format!(
                "{:w$}  BROKEN, left out: {}\n{:w$}  file: {}\n",
                b.name,
                b.error.lines().next().unwrap_or_default(),
                "",
                b.path.display()
            ));
        }
        text.push_str(
        "\nRun one: storlab bench --profile NAME [TARGET]; its sweep: storlab sweep --profile NAME [TARGET];\n\
         its job file: storlab profiles show NAME. Your own: ",
    );
        text.push_str(
            &dir.map(|d| format!("{}/NAME.toml\n", d.display()))
                .unwrap_or_else(|| "$XDG_CONFIG_HOME/storlab/profiles/NAME.toml\n".into()),
        );
        text
    }
}

/// Text added after a run's table (bench --profile): with `per_core_mb_s`, each phase's
/// aggregate and per-stream MB/s and this host's MB/s per core against
/// the planning figure.
pub fn per_core_figures(profile: &Profile, r: &BenchReport) -> Option<String> {
    let per_core = profile.meta.per_core_mb_s?;
    let cores = r.host.cpu_count.max(1);
    let mut out = format!(
        "\nAgainst the {per_core:.0} MB/s-per-core planning figure ({cores} cores here: {:.0} MB/s needed):\n",
        per_core * f64::from(cores)
    );
    for ph in &r.phases {
        // A phase of groups: each group over its own window first
        // (readers and writers measured while the others run).
        for g in ph.groups.iter().flat_map(|g| &g.groups) {
            let mbs = g.total.bw_bytes_per_s / 1e6;
            out.push_str(&format!(
                "  {} / group {}: {} streams, {mbs:.1} MB/s, {:.1} MB/s per stream\n",
                ph.params.name,
                g.name,
                g.params.numjobs,
                mbs / f64::from(g.params.numjobs.max(1))
            ));
        }
        let agg = ph.total.bw_bytes_per_s / 1e6;
        let per_stream = agg / f64::from(ph.params.numjobs.max(1));
        let mb_core = agg / f64::from(cores);
        let verdict = if mb_core >= per_core {
            "meets"
        } else {
            "below"
        };
        out.push_str(&format!(
                "  {}: {} streams, aggregate {agg:.1} MB/s, {per_stream:.1} MB/s per stream, {mb_core:.1} MB/s per core ({verdict} {per_core:.0})\n",
                ph.params.name, ph.params.numjobs
            ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broken user profile's warning names it, its file, the error and
    /// that the others still work.
    #[test]
    fn a_broken_profile_is_named_with_its_file_and_error() {
        let b = Broken {
            name: "seq".into(),
            path: "/home/u/.config/storlab/profiles/seq.toml".into(),
            error: "bad key".into(),
        };
        assert_eq!(
            b.to_string(),
            "profile seq (/home/u/.config/storlab/profiles/seq.toml) is left out: bad key \
             (fix or remove the file; the other profiles work)"
        );
    }

    fn chain(e: &dyn std::error::Error) -> String {
        let mut s = e.to_string();
        let mut at = e.source();
        while let Some(inner) = at {
            s.push_str(": ");
            s.push_str(&inner.to_string());
            at = inner.source();
        }
        s
    }

    #[test]
    fn every_shipped_profile_parses_and_resolves() {
        storlab_types::set_ram_bytes(4 << 30);
        for (name, text) in BUILTIN {
            let p = Profile::parse(name, BUILT_IN, text).unwrap();
            assert!(
                !p.meta.about.is_empty() && !p.meta.source.is_empty(),
                "{name}"
            );
            let jf = JobFile::parse(&p.job_text, &p.job_path()).unwrap();
            let phases = jf
                .phases(
                    &p.job_text,
                    &p.job_path(),
                    &Default::default(),
                    &Default::default(),
                )
                .unwrap();
            assert!(!phases.is_empty(), "{name}");
            let varies: Vec<_> = p
                .meta
                .vary
                .iter()
                .map(|v| Vary::parse(v).unwrap())
                .collect();
            assert!(crate::expand_sweep(&varies, p.meta.zip).is_ok());
        }
    }

    #[test]
    fn broken_profiles_are_named() {
        let e = Profile::parse("x", "f.toml", "[global]\nbs=\"4k\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [profile]"), "{e}");
        let e = Profile::parse("x", "f.toml", "[profile]\nabout=\"a\"\n[global]\nbss=1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bss"), "{e}");
        let e = chain(
            &Profile::parse("x", "f.toml", "[profile]\nabout=\"a\"\nvary=[\"bs\"]\n").unwrap_err(),
        );
        assert!(e.starts_with("profile x (f.toml): "), "{e}");
        assert!(e.contains("OPTION=VALUES"), "{e}");
    }

    #[test]
    fn a_user_profile_overrides_and_a_broken_one_shadows_the_shipped_one() {
        storlab_types::set_ram_bytes(4 << 30);
        let user = |name: &str, text: Result<&str, &str>| UserFile {
            name: name.into(),
            path: PathBuf::from(format!("/u/{name}.toml")),
            text: text.map(String::from).map_err(|e| Unreadable(e.into())),
        };
        let mine = "[profile]\nabout=\"mine\"\n[[phase]]\nrw=\"read\"\n";
        let cat = Catalog::load(
            [user("seq", Ok(mine)), user("iops", Ok("not = [toml"))],
            |e| chain(&e),
        )
        .unwrap();
        assert_eq!(cat.clone().find("seq").unwrap().meta.about, "mine");
        let e = cat.clone().find("iops").unwrap_err().to_string();
        assert!(
            e.starts_with("profile iops (/u/iops.toml) cannot be used: profile iops"),
            "{e}"
        );
        let e = cat.clone().find("nope").unwrap_err().to_string();
        assert!(
            e.contains("no profile named 'nope': use one of seq, cache"),
            "{e}"
        );
        assert!(!e.contains("iops"), "{e}");
        assert!(cat.find("oltp").unwrap().is_builtin());
    }
}
