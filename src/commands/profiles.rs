//! `storlab profiles`: the published test patterns
//! ([`storlab_bench::profiles`]) plus the user's own in
//! `$XDG_CONFIG_HOME/storlab/profiles/NAME.toml` (a user's profile of the
//! same name wins). `bench --profile` and `sweep --profile` run one
//! ([`crate::commands::workload::find_profile`]). `storlab profiles
//! [list]` and `profiles show NAME` print them for people, or with
//! `--output-format json` / `--json` as one serializer-made document.

use super::outfmt::{TableFormat, TextFormat};
use super::workload::{find_profile, profile_catalog, profile_dir, warn_broken};
use crate::output::{Rendered, Reply};
use anyhow::Result;
use clap::{Args, Subcommand};

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

impl ProfilesCommand {
    pub fn execute(self) -> Result<Reply> {
        match self.action {
            Some(ProfilesAction::Show { name, format }) => {
                let p = find_profile(&name)?;
                let doc = if format.out.format() == TextFormat::Json {
                    Rendered::same(crate::output::json_text(&p.doc(true)?)?)
                } else {
                    Rendered::same(p.text)
                };
                Ok(Reply::doc(doc, format.out.rendering()))
            }
            Some(ProfilesAction::List(format)) => list(&format),
            None => list(&self.list),
        }
    }
}

/// `storlab profiles [list]`
fn list(format: &ListFormat) -> Result<Reply> {
    let cat = profile_catalog()?;
    // JSON stays an array of usable profiles; the broken ones are named on
    // stderr (and in the table). Made in the format chosen (the JSON
    // documents are built only when asked for).
    warn_broken(&cat);
    let doc = if format.out.format() == TableFormat::Json {
        let docs = cat
            .profiles
            .iter()
            .map(|p| p.doc(false))
            .collect::<Result<Vec<_>, _>>()?;
        Rendered::same(crate::output::json_text(&docs)?)
    } else {
        Rendered::same(cat.listing(profile_dir().as_deref()))
    };
    Ok(Reply::doc(doc, format.out.rendering()))
}
