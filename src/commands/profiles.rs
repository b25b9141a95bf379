//! `storlab profiles`: the published test patterns shipped as TOML job
//! files (`profiles/*.toml`, embedded in the binary) plus the user's own in
//! `$XDG_CONFIG_HOME/storlab/profiles/NAME.toml` (a user's profile of the
//! same name wins). A profile is a job file with a `[profile]` table:
//! `about` (one line on what it emulates), `source` (where the pattern
//! comes from), `vary` (the sweep `storlab sweep --profile NAME` runs, in
//! `--vary` syntax), `zip`, and `per_core_mb_s` (a planning figure per CPU
//! core that the report compares the measured rate against).
//! `bench --profile` and `sweep --profile` run one. `storlab profiles
//! [list]` and `profiles show NAME` print them for people, or with
//! `--output-format json` / `--json` as one serializer-made document.

use super::outfmt::{TableFormat, TextFormat};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use storlab_types::BenchReport;

/// The shipped profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("seq", include_str!("../../profiles/seq.toml")),
    ("iops", include_str!("../../profiles/iops.toml")),
    ("cache", include_str!("../../profiles/cache.toml")),
    ("scaling", include_str!("../../profiles/scaling.toml")),
    ("sas", include_str!("../../profiles/sas.toml")),
    ("sas-dd", include_str!("../../profiles/sas-dd.toml")),
    ("oltp", include_str!("../../profiles/oltp.toml")),
    ("ooc", include_str!("../../profiles/ooc.toml")),
    ("ior-fpp", include_str!("../../profiles/ior-fpp.toml")),
    ("ior-shared", include_str!("../../profiles/ior-shared.toml")),
];

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
    /// `built-in` or the user's file.
    pub origin: String,
    pub text: String,
    pub meta: ProfileMeta,
    /// The job file to run (the text with `[profile]` taken out).
    pub job_text: String,
}

impl Profile {
    /// Parse a profile's text; `origin` names it in messages.
    pub fn parse(name: &str, origin: &str, text: &str) -> Result<Profile> {
        let mut table: toml::Table =
            toml::from_str(text).with_context(|| format!("profile {name} ({origin})"))?;
        let meta = match table.remove("profile") {
            Some(v) => v.try_into::<ProfileMeta>().map_err(|e| {
                anyhow::anyhow!("profile {name} ({origin}): [profile]: {}", e.message())
            })?,
            None => bail!(
                "profile {name} ({origin}) has no [profile] table: add one with at least about = \"what it emulates\""
            ),
        };
        let job_text = toml::to_string(&table).context("cannot re-serialise the profile")?;
        // Check the job file and the sweep now, so a broken profile is named at once.
        storlab_bench::JobFile::parse(&job_text, std::path::Path::new(&format!("profile {name}")))?;
        for v in &meta.vary {
            storlab_bench::Vary::parse(v).with_context(|| format!("profile {name} ({origin})"))?;
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

    /// Text added after a run's table: with `per_core_mb_s`, each phase's
    /// aggregate and per-stream MB/s and this host's MB/s per core against
    /// the planning figure.
    pub fn extra_report(&self, r: &BenchReport) -> Option<String> {
        let per_core = self.meta.per_core_mb_s?;
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
}

/// The user's profile directory: `$XDG_CONFIG_HOME/storlab/profiles`.
pub fn user_dir() -> Option<PathBuf> {
    super::config::config_path().and_then(|p| p.parent().map(|d| d.join("profiles")))
}

/// A user profile that could not be read or parsed: left out, named with
/// its error (one broken file must not take every profile with it).
#[derive(Debug, Clone)]
pub struct Broken {
    pub name: String,
    pub path: PathBuf,
    pub error: String,
}

/// Every profile that loads, and the user's files that do not.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub profiles: Vec<Profile>,
    pub broken: Vec<Broken>,
}

impl Catalog {
    /// A warning on stderr for each broken user profile.
    pub fn warn(&self) {
        for b in &self.broken {
            eprintln!(
                "storlab: warning: profile {} ({}) is left out: {} \
                 (fix or remove the file; the other profiles work)",
                b.name,
                b.path.display(),
                b.error
            );
        }
    }
}

/// Every profile: the user's first (they override shipped ones of the same
/// name), then the shipped ones, sorted by name within each. A user file
/// that cannot be read or parsed is set aside in `broken`; if it has a
/// shipped profile's name, that name is broken too (the user meant to
/// override it: running the shipped one instead would measure something
/// else without a word).
pub fn catalog() -> Result<Catalog> {
    let mut out = Catalog::default();
    if let Some(dir) = user_dir()
        && let Ok(rd) = std::fs::read_dir(&dir)
    {
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parsed = crate::commands::common::read_input(&p, "profile")
                .and_then(|text| Profile::parse(&name, &p.display().to_string(), &text));
            match parsed {
                Ok(profile) => out.profiles.push(profile),
                Err(e) => out.broken.push(Broken {
                    name,
                    path: p,
                    error: format!("{e:#}"),
                }),
            }
        }
    }
    for (name, text) in BUILTIN {
        if !out.profiles.iter().any(|p| p.name == *name)
            && !out.broken.iter().any(|b| b.name == *name)
        {
            out.profiles.push(Profile::parse(name, "built-in", text)?);
        }
    }
    Ok(out)
}

/// The profile called `name`, or an error listing the names (a broken
/// user profile of that name: its parse error). Other broken user
/// profiles are named in a warning.
pub fn find(name: &str) -> Result<Profile> {
    let cat = catalog()?;
    if let Some(b) = cat.broken.iter().find(|b| b.name == name) {
        bail!(
            "profile {name} ({}) cannot be used: {}; fix the file (storlab profiles lists the others)",
            b.path.display(),
            b.error
        );
    }
    cat.warn();
    let names: Vec<String> = cat.profiles.iter().map(|p| p.name.clone()).collect();
    cat.profiles
        .into_iter()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no profile named '{name}': use one of {} (storlab profiles lists them)",
                names.join(", ")
            )
        })
}

/// `storlab profiles [list | show NAME]`
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ProfilesCommand {
    #[command(subcommand)]
    pub action: Option<ProfilesAction>,
    /// `storlab profiles` alone lists them (as `list`).
    #[command(flatten)]
    pub list: ListFormat,
}

#[derive(Subcommand, Debug)]
pub enum ProfilesAction {
    /// List every profile: name, what it emulates, where it comes from (the default)
    List(ListFormat),
    /// Print a profile's job file (copy it to change it; `storlab bench --job FILE`)
    Show {
        /// Profile name (see `storlab profiles`)
        name: String,
        #[command(flatten)]
        format: ShowFormat,
    },
}

/// The output format of `profiles [list]`.
#[derive(Args, Debug)]
pub struct ListFormat {
    /// Output format
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    output_format: TableFormat,
    /// Shorthand for --output-format json (an array of profiles)
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
}

/// The output format of `profiles show`.
#[derive(Args, Debug)]
pub struct ShowFormat {
    /// Output format
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    output_format: TextFormat,
    /// Shorthand for --output-format json (the profile's full content)
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
}

/// A profile as `--json` prints it.
#[derive(Debug, Serialize)]
struct ProfileDoc<'a> {
    name: &'a str,
    /// `built-in` (shipped in the binary) or `user` (a file in the user's
    /// profile directory).
    origin: &'static str,
    /// The user's file; none for a built-in profile.
    path: Option<&'a str>,
    /// The `[profile]` table: about, source, vary, zip, per_core_mb_s.
    #[serde(flatten)]
    meta: &'a ProfileMeta,
    /// Each phase as the profile sets it (`[global]` overlaid by the
    /// phase's table; options it leaves out take bench's defaults), sizes
    /// in bytes as they resolve on this machine (`2xRAM`); `job` has them
    /// as written.
    phases: Vec<storlab_bench::PhaseSpec>,
    /// `show` only: the job file without `[profile]`, as a document.
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<toml::Table>,
    /// `show` only: the profile's TOML text as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

impl Profile {
    fn doc(&self, full: bool) -> Result<ProfileDoc<'_>> {
        let jf = storlab_bench::JobFile::parse(&self.job_text, &self.job_path())?;
        let phases = jf
            .specs(&self.job_text, &Default::default(), &Default::default())
            .into_iter()
            .map(|(spec, _)| spec)
            .collect();
        let builtin = self.origin == "built-in";
        Ok(ProfileDoc {
            name: &self.name,
            origin: if builtin { "built-in" } else { "user" },
            path: (!builtin).then_some(self.origin.as_str()),
            meta: &self.meta,
            phases,
            job: if full {
                Some(toml::from_str(&self.job_text).context("cannot re-read the profile")?)
            } else {
                None
            },
            text: full.then_some(self.text.as_str()),
        })
    }
}

impl ProfilesCommand {
    pub fn execute(self) -> Result<crate::Outcome> {
        match self.action {
            Some(ProfilesAction::Show { name, format }) => {
                let p = find(&name)?;
                if format.json || format.output_format == TextFormat::Json {
                    crate::output::print_json(&p.doc(true)?)?;
                } else {
                    crate::output::print(&p.text)?;
                }
            }
            Some(ProfilesAction::List(format)) => list(&format)?,
            None => list(&self.list)?,
        }
        Ok(crate::Outcome::Ok)
    }
}

/// `storlab profiles [list]`
fn list(format: &ListFormat) -> Result<()> {
    let cat = catalog()?;
    // JSON stays an array of usable profiles; the broken ones are named on
    // stderr (and in the table).
    cat.warn();
    let all = &cat.profiles;
    if format.json || format.output_format == TableFormat::Json {
        let docs = all
            .iter()
            .map(|p| p.doc(false))
            .collect::<Result<Vec<_>>>()?;
        return crate::output::print_json(&docs);
    }
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
        if p.origin != "built-in" {
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
        &user_dir()
            .map(|d| format!("{}/NAME.toml\n", d.display()))
            .unwrap_or_else(|| "$XDG_CONFIG_HOME/storlab/profiles/NAME.toml\n".into()),
    );
    crate::output::print(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_profile_parses_and_resolves() {
        storlab_types::set_ram_bytes(4 << 30);
        for (name, text) in BUILTIN {
            let p = Profile::parse(name, "built-in", text).unwrap();
            assert!(
                !p.meta.about.is_empty() && !p.meta.source.is_empty(),
                "{name}"
            );
            let jf = storlab_bench::JobFile::parse(&p.job_text, &p.job_path()).unwrap();
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
                .map(|v| storlab_bench::Vary::parse(v).unwrap())
                .collect();
            assert!(storlab_bench::expand_sweep(&varies, p.meta.zip).is_ok());
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
        let e = format!(
            "{:#}",
            Profile::parse("x", "f.toml", "[profile]\nabout=\"a\"\nvary=[\"bs\"]\n").unwrap_err()
        );
        assert!(e.contains("OPTION=VALUES"), "{e}");
    }
}
