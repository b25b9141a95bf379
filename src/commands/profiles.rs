//! `storlab profiles`: the published test patterns
//! ([`storlab_bench::profiles`]) plus the user's own in
//! `$XDG_CONFIG_HOME/storlab/profiles/NAME.toml` (a user's profile of the
//! same name wins). `bench --profile` and `sweep --profile` run one
//! ([`crate::commands::workload::find_profile`]). `storlab profiles
//! [list]` and `profiles show NAME` print them for people, or with
//! `--output-format json` / `--json` as one serializer-made document.

use super::outfmt::{TableFormat, TextFormat};
use super::workload::{find_profile, profile_catalog, profile_dir, warn_broken};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use storlab_bench::profiles::{Profile, ProfileMeta};

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
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (an array of profiles)")))]
pub struct ListFormat {
    #[command(flatten)]
    out: crate::commands::outfmt::OutputArgs<TableFormat>,
}

/// The output format of `profiles show`.
#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (the profile's full content)")))]
pub struct ShowFormat {
    #[command(flatten)]
    out: crate::commands::outfmt::OutputArgs<TextFormat>,
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

/// A profile as `--json` prints it (`full`: with its job and text).
fn doc(p: &Profile, full: bool) -> Result<ProfileDoc<'_>> {
    let jf = storlab_bench::JobFile::parse(&p.job_text, &p.job_path())?;
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
            Some(toml::from_str(&p.job_text).context("cannot re-read the profile")?)
        } else {
            None
        },
        text: full.then_some(p.text.as_str()),
    })
}

impl ProfilesCommand {
    pub fn execute(self) -> Result<crate::Outcome> {
        match self.action {
            Some(ProfilesAction::Show { name, format }) => {
                let p = find_profile(&name)?;
                if format.out.format() == TextFormat::Json {
                    crate::output::print_json(&doc(&p, true)?)?;
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
    let cat = profile_catalog()?;
    // JSON stays an array of usable profiles; the broken ones are named on
    // stderr (and in the table).
    warn_broken(&cat);
    let all = &cat.profiles;
    if format.out.format() == TableFormat::Json {
        let docs = all
            .iter()
            .map(|p| doc(p, false))
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
        &profile_dir()
            .map(|d| format!("{}/NAME.toml\n", d.display()))
            .unwrap_or_else(|| "$XDG_CONFIG_HOME/storlab/profiles/NAME.toml\n".into()),
    );
    crate::output::print(&text)
}
