//! The workload flags of `bench` (and every command that runs a workload),
//! built from the bench option table (`storlab_bench::OPTIONS`) instead of
//! being declared here: each option's flag, value name, help, default and
//! aliases come from its one declaration in `crates/bench/src/options.rs`.
//!
//! Flags take fio's value forms too: `--direct`, `--direct=1`,
//! `--direct=0` (and `--fallocate native` or `--fallocate=none`, whose
//! value is a word and never optional); fio's names are accepted as aliases (`--ioengine`,
//! `--iodepth_batch`), with underscores or dashes.
//!
//! Sizes typed under a fio-only spelling (`--blocksize`) follow fio's units
//! (`kb_base`, default 1024: `4KiB` is 4000 there), as in fio job files;
//! storlab's own flags (`--bs`, `--size`) keep SI/IEC (`4KiB` = `4k` = 4096,
//! `4kB` = 4000).
//!
//! A workload may also come from a profile: [`find_profile`] finds one the
//! user's way (shipped or the user's file; broken files named).

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use std::path::PathBuf;
use storlab_bench::profiles::{Catalog, Profile, Unreadable};
use storlab_bench::{
    FIO_FLAGS, FIO_UNIT_SPELLINGS, FlagError, OPTIONS, OptDef, PhaseSpec, spec_from_flags,
    translate_fio_flag,
};

/// The clap id of a fio-unit spelling.
fn fio_id(name: &str) -> String {
    format!("fio__{name}")
}

/// What the user set on the command line, as a spec layer, or the option
/// table's refusal of one of the values: handed to the command
/// ([`WorkloadArgs::spec`], [`WorkloadArgs::refusal_in`]) as a typed error,
/// worded like every other bad input.
#[derive(Debug, Clone)]
pub struct WorkloadArgs {
    spec: Result<PhaseSpec, FlagError>,
}

impl Default for WorkloadArgs {
    fn default() -> Self {
        WorkloadArgs {
            spec: Ok(PhaseSpec::default()),
        }
    }
}

impl WorkloadArgs {
    /// The spec the flags set, or why one of their values was refused.
    pub fn spec(&self) -> Result<&PhaseSpec, FlagError> {
        self.spec.as_ref().map_err(Clone::clone)
    }

    /// How a command ends when a value was refused (checked first, as
    /// clap checks its own flags): the error, named once under an MPI
    /// launcher (by the rank that speaks for the command line; the others
    /// end with exit 2 quietly). None when every value was accepted.
    /// The usage line of `command` (`bench`, `sweep`) follows the error,
    /// as clap ends its own errors.
    pub fn refusal_in(&self, command: Option<&str>) -> Option<Result<crate::Outcome>> {
        let e = self.spec.as_ref().err()?;
        Some(if super::run::speaks_for_its_command_line() {
            let mut cli = <crate::Cli as clap::CommandFactory>::command();
            cli.build();
            match command.and_then(|c| cli.find_subcommand_mut(c)) {
                Some(sub) => Err(anyhow::anyhow!(
                    "{e}\n\n{}\n\nFor more information, try '{} --help'.",
                    sub.render_usage(),
                    sub.get_bin_name().unwrap_or("storlab")
                )),
                None => Err(e.clone().into()),
            }
        } else {
            Ok(crate::Outcome::Error)
        })
    }
}

/// The clap id of an option's negating flag (`--no-end-fsync`).
fn neg_id(o: &OptDef) -> String {
    format!("{}__off", o.key)
}

fn arg_for(o: &'static OptDef) -> Arg {
    let mut a = Arg::new(o.key)
        .long(o.long)
        .value_name(o.value_name)
        .help(o.help_line())
        .action(ArgAction::Set)
        // As in fio, an option given twice takes its last value.
        .overrides_with(o.key)
        .allow_hyphen_values(o.takes_negative())
        .aliases(o.flag_aliases());
    // An optional value must be attached (`--direct`, `--direct=0`).
    if o.value_optional() {
        a = a
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("1");
    }
    a
}

impl Args for WorkloadArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for (name, key) in FIO_UNIT_SPELLINGS {
            cmd = cmd.arg(
                Arg::new(fio_id(name))
                    .long(*name)
                    .value_name("SIZE")
                    .conflicts_with(*key)
                    .help(format!(
                        "fio's spelling of --{}, in fio's units (--kb-base: with 1024, 4k = 4KB = 4096 but 4KiB = 4000)",
                        key.replace('_', "-")
                    )),
            );
        }
        cmd = cmd.arg(
            Arg::new("kb_base")
                .long("kb-base")
                .alias("kb_base")
                .value_name("1024|1000")
                .value_parser(["1024", "1000"])
                .help("fio's kb_base for sizes given under fio's spellings (--blocksize) [default: 1024]"),
        );
        for f in FIO_FLAGS {
            let mut a = Arg::new(fio_id(f.name))
                .long(f.name)
                .alias(f.name.replace('_', "-"));
            a = a.value_name(f.value_name).help(f.help).hide(true);
            if f.optional_value {
                a = a
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("1");
            }
            cmd = cmd.arg(a.overrides_with(fio_id(f.name)));
        }
        for o in OPTIONS {
            cmd = cmd.arg(arg_for(o));
            if let Some(neg) = o.negate {
                cmd = cmd.arg(
                    Arg::new(neg_id(o))
                        .long(neg)
                        .action(ArgAction::SetTrue)
                        .conflicts_with(o.key)
                        .help(format!("Same as --{}=0", o.long)),
                );
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for WorkloadArgs {
    /// Never fails: a refused value is kept for the command to hand on.
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let kb_base = match m.get_one::<String>("kb_base").map(String::as_str) {
            Some("1000") => 1000,
            _ => 1024,
        };
        let fio_sized = FIO_UNIT_SPELLINGS.iter().filter_map(|(name, key)| {
            let v = m.get_one::<String>(&fio_id(name))?;
            Some((*name, *key, v.as_str()))
        });
        // (position on the command line, key, value): a later spelling of
        // the same option wins, as in fio.
        let mut given: Vec<(usize, &'static str, String)> = Vec::new();
        let at = |id: &str| m.index_of(id).unwrap_or(0);
        for o in OPTIONS {
            if m.value_source(o.key) == Some(ValueSource::CommandLine)
                && let Some(v) = m.get_one::<String>(o.key)
            {
                given.push((at(o.key), o.key, v.clone()));
            }
            if o.negate.is_some() && m.get_flag(&neg_id(o)) {
                given.push((at(&neg_id(o)), o.key, "0".into()));
            }
        }
        for f in FIO_FLAGS {
            if let Some(v) = m.get_one::<String>(&fio_id(f.name)) {
                match translate_fio_flag(f.name, v) {
                    Ok((key, v)) => given.push((at(&fio_id(f.name)), key, v)),
                    Err(e) => {
                        return Ok(WorkloadArgs {
                            spec: Err(e.into()),
                        });
                    }
                }
            }
        }
        given.sort_by_key(|g| g.0);
        let given = given.into_iter().map(|(_, k, v)| (k, v));
        Ok(WorkloadArgs {
            spec: spec_from_flags(fio_sized, kb_base, given),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

// Profiles, found the user's way: the shipped ones and the user's files
// (read under the input rules), broken files named on stderr. Shared by
// bench, sweep, campaigns and `storlab profiles`.

/// The user's profile directory: `$XDG_CONFIG_HOME/storlab/profiles`.
pub fn profile_dir() -> Option<PathBuf> {
    super::config::config_path().and_then(|p| p.parent().map(|d| d.join("profiles")))
}

/// Every profile that loads (the user's `*.toml` files, sorted, then the
/// shipped ones) and the user's files that do not.
pub fn profile_catalog() -> Result<Catalog> {
    let read = |path: &std::path::Path| {
        super::common::read_input(path, "profile").map_err(|e| Unreadable(format!("{e:#}")))
    };
    let user = storlab_bench::profiles::user_files(profile_dir().as_deref(), read);
    Ok(Catalog::load(user, |e| {
        format!("{:#}", anyhow::Error::from(e))
    })?)
}

/// A warning on stderr for each broken user profile.
pub fn warn_broken(cat: &Catalog) {
    for b in &cat.broken {
        eprintln!("storlab: warning: {b}");
    }
}

/// The profile called `name`, or an error listing the names (a broken
/// user profile of that name: its parse error). Other broken user
/// profiles are named in a warning.
pub fn find_profile(name: &str) -> Result<Profile> {
    let cat = profile_catalog()?;
    if let Some(e) = cat.broken_named(name) {
        return Err(e.into());
    }
    warn_broken(&cat);
    Ok(cat.find(name)?)
}
