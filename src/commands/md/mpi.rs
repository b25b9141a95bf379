//! `storlab md` launched by `mpirun` or `srun` (cargo feature `mpi`):
//! every rank works in its own tree (`-u`) or all in one shared tree,
//! phases start together at a barrier, and rank 0 prints and stores the
//! aggregate with every rank's count and rate.
//!
//! What each rank does, in order:
//!
//! 1. resolves the job from its own command line and exchanges a digest of
//!    it (the job, the target's real path, the storlab version) before
//!    anything is made: ranks that disagree (a different `-n` in one rank's
//!    environment, another binary) are refused, rank 0 saying why (exit 2);
//! 2. rank 0 checks the output paths, opens the store and makes storlab's
//!    own directory; every rank checks it can see it (a shared file system);
//! 3. runs [`storlab_md::run`] with [`storlab_cluster::md::CommSync`] over the communicator (barrier, all-gather of the
//!    create counts, agreement on errors and stops); after each measured
//!    phase every rank sends its figures, histogram included, to rank 0,
//!    which merges them exactly and saves the phase at once;
//! 4. rank 0 removes everything (unless `--keep`) and reports; every rank
//!    exits with rank 0's code.

use super::{MdCommand, Watcher, emit, finish, remove_run_dir};
use crate::Outcome;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_cluster::Comm;
use storlab_cluster::md::{CommSync, gather};
use storlab_cluster::mpi::{Mpi, MpiComm};
use storlab_md::record;
use storlab_md::{Control, MdSpec, Posix, Tree};
use storlab_types::BenchReport;
use storlab_types::time::now_rfc3339;

/// md's ranks over the MPI communicator.
type MpiSync<'a> = CommSync<&'a MpiComm>;

/// A failed collective step: rank 0 reports it, the others stay quiet.
enum Stop {
    Report(anyhow::Error),
    Quiet,
}

/// `storlab md` under MPI: the whole run on every rank.
pub fn execute(cmd: MdCommand, spec: MdSpec, tree: Tree) -> Result<Outcome> {
    let mpi = Mpi::init()?;
    let sync = CommSync(mpi.comm());
    let r = run(&sync, &cmd, &spec, &tree);
    let code = match &r {
        Ok(o) => u64::from(o.exit_code()),
        Err(_) => u64::from(Outcome::Error.exit_code()),
    };
    // Printed before the broadcast releases the other ranks (mpirun may
    // kill the rest once one exits non-zero).
    if let Err(Stop::Report(e)) = &r {
        crate::output::print_error(e);
    }
    let code_all = sync.0.broadcast_u64(code);
    let rank = sync.0.rank();
    mpi.finish(); // MPI_Finalize
    let code = if rank == 0 { code } else { code_all };
    Ok(Outcome::from_exit_code(u8::try_from(code).unwrap_or(2)))
}

fn run(sync: &MpiSync, cmd: &MdCommand, spec: &MdSpec, tree: &Tree) -> Result<Outcome, Stop> {
    let target = cmd.target().to_path_buf();
    let digest = storlab_md::agree::job_digest(spec, &target);
    let (lo, hi) = sync.0.min_max(digest);
    if lo != hi {
        return Err(report(
            sync,
            anyhow!(
                "the {} ranks resolved different md jobs (job digests {lo:016x} to {hi:016x}): every rank \
                 must get the same options, target and storlab version; nothing was created",
                sync.0.size()
            ),
        ));
    }
    // Rank 0 checks the outputs, opens the store, makes the directory.
    let mut made: Option<(PathBuf, BenchReport, super::Sink)> = None;
    let mut why = String::new();
    if sync.0.root() {
        match prepare(cmd, &target) {
            Ok(m) => made = Some(m),
            Err(e) => why = format!("{e:#}"),
        }
    }
    let signals = super::Signals::install();
    let run_dir = PathBuf::from(
        sync.0.broadcast_string(
            &made
                .as_ref()
                .map(|m| m.0.display().to_string())
                .unwrap_or_default(),
        ),
    );
    if run_dir.as_os_str().is_empty() {
        return Err(report(sync, anyhow!("{why}")));
    }
    let signals = match signals {
        Ok(s) if sync.0.all(run_dir.is_dir()) => s,
        _ => {
            if let Some((dir, ..)) = &made {
                remove_run_dir(dir);
            }
            return Err(report(
                sync,
                anyhow!(
                    "not every rank can see {} (or install its signal handlers): md under MPI needs TARGET on \
                     a file system every node mounts at the same path",
                    run_dir.display()
                ),
            ));
        }
    };
    let control = Arc::new(Control::new());
    let quiet = cmd.run.quiet || !sync.0.root();
    let watcher = Watcher::start(Arc::clone(&control), signals.clone(), spec, quiet);
    let mut phases = Vec::new();
    let mut sink = made.as_mut().map(|m| &mut m.2);
    let result = storlab_md::run(&Posix, spec, &run_dir, sync, &control, |p| {
        let parts = gather(&sync.0, p);
        if let (Some(s), false) = (sink.as_mut(), parts.is_empty()) {
            let ph = record::phase_result(spec, tree, &parts, now_rfc3339());
            s.phase(&ph);
            phases.push(ph);
        }
    });
    watcher.stop();
    let stopped = sync.0.any(control.stop_reason().is_some());
    sync.0.barrier();
    let Some((dir, header, mut sink)) = made else {
        return Ok(Outcome::Ok);
    };
    let keep = cmd.run.keep && !stopped;
    if !keep {
        remove_run_dir(&dir);
    }
    let ran = result.map_err(|e| Stop::Report(e.into()))?;
    let mut report = finish(header, phases, &ran, &control, keep);
    if stopped && report.stop_reason.is_none() {
        report.interrupted = true;
        report.stop_reason = Some("another rank was interrupted".into());
    }
    emit(report, &cmd.run, &mut sink, signals.received()).map_err(Stop::Report)
}

fn report(sync: &MpiSync, e: anyhow::Error) -> Stop {
    if sync.0.root() {
        Stop::Report(e)
    } else {
        Stop::Quiet
    }
}

/// Rank 0's part before anything runs: paths, store, storlab's directory,
/// the run's header saved.
fn prepare(cmd: &MdCommand, target: &Path) -> Result<(PathBuf, BenchReport, super::Sink)> {
    let json_out = crate::commands::run::check_paths(Some(target), &cmd.run)?;
    let mut sink = crate::commands::run::open_sink_tagged(&cmd.run, &[])?;
    sink.json_out_to(json_out);
    let (dir, info) = storlab_bench::own_run_dir(target)?;
    let header = header(info);
    if let Err(e) = sink.begin("md", &header) {
        remove_run_dir(&dir);
        return Err(e);
    }
    Ok((dir, header, sink))
}

fn header(info: storlab_types::TargetInfo) -> BenchReport {
    let mut host = storlab_host::host_info();
    if let Ok(c) = crate::commands::config::get()
        && let Some(label) = &c.host
    {
        host.hostname = label.clone();
    }
    BenchReport::new(host, info)
}
