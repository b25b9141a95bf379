//! The shared front end of every command that runs phases (bench, md,
//! sweep, campaigns): how a run is carried out and where its results go
//! ([`RunArgs`]), the checks made before any file exists ([`check_paths`]),
//! the store side ([`Sink`], [`open_sink_tagged`], [`write_fallback`]),
//! the watcher ([`Live`]) and what the MPI launcher says ([`launcher_size`]).
//! Commands import this module, never one another.

mod live;
mod sink;

pub use live::{Live, Watched};
pub use sink::{RunDoc, Sink, conclude, write_fallback};
pub use storlab_bench::launcher::{launcher_rank, launcher_size, speaks_for_its_command_line};

use crate::commands::outfile::Permit;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Result format on stdout of a command that runs phases: a table, or
/// the JSON document.
pub use super::outfmt::RunFormat as OutputFormat;

/// How a run is carried out and where its results go (shared by every
/// command that runs bench phases).
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Keep the data files afterwards
    #[arg(long)]
    pub keep: bool,
    /// Allow writing to an existing file or a block device (destroys its contents); never one a mounted file system, swap or another device is built on
    #[arg(long)]
    pub allow_destroy: bool,
    /// No live progress on stderr
    #[arg(long, short)]
    pub quiet: bool,
    // Result format on stdout: --output-format, --json.
    #[command(flatten)]
    pub out: super::outfmt::OutputArgs<OutputFormat>,
    /// Also write the JSON result document to FILE (never over an SQLite database, a device or a
    /// FIFO; over an existing file only if it is an earlier --json-out document, or with --force)
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Let --json-out overwrite an existing file that is not an earlier --json-out document (never
    /// an SQLite database)
    #[arg(long)]
    pub force: bool,
    /// Sample the devices under the target (iostat -x figures, every layer of
    /// the stack) during the run and keep the timeline with the results
    #[arg(long)]
    pub monitor: bool,
    #[command(flatten)]
    pub db: crate::commands::common::DbArgs,
    #[command(flatten)]
    pub record: crate::commands::common::RecordArgs,
    /// Do not save the run in the results database
    #[arg(long)]
    pub no_save: bool,
    /// Sampling interval of --monitor
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = storlab_types::parse_duration)]
    pub monitor_interval: Duration,
    /// `bench --write-iolog`: where the run's workers record their I/O.
    #[arg(skip)]
    pub iolog: Option<std::sync::Arc<storlab_bench::iolog::Sink>>,
}

/// The target and `--json-out` against the database and the output rules:
/// the results database is never a target, nor an output.
pub fn check_paths(target: Option<&Path>, args: &RunArgs) -> Result<Option<Permit>> {
    check_paths_as(target, args, crate::commands::common::OutputKind::BenchJson)
}

/// [`check_paths`] for a command whose `--json-out` is of another `kind`
/// (sweep): [`crate::commands::outfile::check_run_paths`].
pub fn check_paths_as(
    target: Option<&Path>,
    args: &RunArgs,
    kind: crate::commands::common::OutputKind,
) -> Result<Option<Permit>> {
    // bench takes its fio-json (`OutputArgs::take_fio_json`) before this.
    if args.out.format() == OutputFormat::FioJson {
        anyhow::bail!(
            "--output-format fio-json is a format of `storlab bench` only: use --output-format json here"
        );
    }
    let (out, db) = (args.json_out.as_deref(), &args.db.db);
    let check = crate::commands::outfile::check_run_paths;
    Ok(check(target, out, db, args.force, kind)?)
}

/// Open the store and check the labels (or nothing, with `--no-save`),
/// with tags of the caller's own added (a repeat's group, an
/// MPI scaling run's client count).
pub fn open_sink_tagged(args: &RunArgs, extra: &[(&str, String)]) -> Result<Sink> {
    let mut tags = args.record.tag_map()?;
    for (k, v) in extra {
        tags.insert((*k).to_string(), v.clone());
    }
    let store = if args.no_save {
        None
    } else {
        Some(args.db.open()?)
    };
    Ok(Sink::new(
        store,
        &args.db.db,
        tags,
        args.record.note().map(String::from),
    ))
}

/// The exit code of a saved and reported run (bench and md): how the save
/// ended (`ending`), else `storlab_bench::Verdict` of the record.
pub fn verdict(
    report: &storlab_types::BenchReport,
    ending: Option<crate::Outcome>,
    signal: Option<i32>,
) -> crate::Outcome {
    use crate::Outcome;
    use storlab_bench::Verdict;
    if let Some(o) = ending {
        return o;
    }
    match Verdict::of(report, signal.is_some()) {
        Verdict::VerifyFailed(n) => {
            eprintln!("storlab: verify: {n} block(s) failed verification");
            Outcome::Failed
        }
        Verdict::Signalled => Outcome::Interrupted,
        Verdict::StoppedEarly => Outcome::Error,
        Verdict::Ok => Outcome::Ok,
    }
}

/// Save, write and print (with `print`: the table from `table`, or JSON,
/// on stdout) the results of an MPI run on rank 0; make sure they exist
/// somewhere; the exit code ([`verdict`]) and the record.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn emit(
    report: storlab_types::BenchReport,
    args: &RunArgs,
    sink: &mut Sink,
    (signal, print): (Option<i32>, bool),
    table: impl FnOnce(&storlab_types::BenchReport) -> String,
) -> Result<(crate::Outcome, storlab_types::BenchReport)> {
    let (report, doc, ending) = conclude(report, sink, table)?;
    if print {
        crate::output::emit(crate::output::Reply::doc(doc, args.out.rendering()))?;
    }
    Ok((verdict(&report, ending, signal), report))
}
