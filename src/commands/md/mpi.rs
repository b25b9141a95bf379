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
//! 3. runs [`storlab_md::run`] with [`MpiSync`] (barrier, all-gather of the
//!    create counts, agreement on errors and stops); after each measured
//!    phase every rank sends its figures, histogram included, to rank 0,
//!    which merges them exactly and saves the phase at once;
//! 4. rank 0 removes everything (unless `--keep`) and reports; every rank
//!    exits with rank 0's code.

use super::{MdCommand, Watcher, emit, finish, remove_run_dir};
use crate::Outcome;
use anyhow::{Result, anyhow};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::DirCounter;
use storlab_md::record;
use storlab_md::{Control, MdSpec, Posix, RankPhase, RankSync, Tree};
use storlab_types::time::now_rfc3339;
use storlab_types::{BenchReport, SCHEMA_VERSION, STORLAB_VERSION, ToolInfo};

/// The communicator as md's ranks need it.
pub struct MpiSync<'a> {
    comm: &'a SimpleCommunicator,
    rank: u32,
    size: u32,
}

impl RankSync for MpiSync<'_> {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn ranks(&self) -> u32 {
        self.size
    }
    fn barrier(&self) {
        self.comm.barrier();
    }
    fn gather_all(&self, value: u64) -> Vec<u64> {
        let mut out = vec![0u64; self.size as usize];
        self.comm.all_gather_into(&value, &mut out[..]);
        out
    }
    fn any(&self, flag: bool) -> bool {
        let mut out = 0u64;
        self.comm
            .all_reduce_into(&u64::from(flag), &mut out, SystemOperation::max());
        out == 1
    }
}

impl MpiSync<'_> {
    fn root(&self) -> bool {
        self.rank == 0
    }

    /// Whether every rank passed `ok`.
    fn all(&self, ok: bool) -> bool {
        !self.any(!ok)
    }

    /// The smallest and largest of every rank's `v`.
    fn min_max(&self, v: u64) -> (u64, u64) {
        let (mut lo, mut hi) = (0u64, 0u64);
        self.comm
            .all_reduce_into(&v, &mut lo, SystemOperation::min());
        self.comm
            .all_reduce_into(&v, &mut hi, SystemOperation::max());
        (lo, hi)
    }

    /// Every rank's bytes at rank 0 (rank order); empty elsewhere.
    fn gather_bytes(&self, b: &[u8]) -> Vec<Vec<u8>> {
        if !self.root() {
            self.comm.process_at_rank(0).send(b);
            return Vec::new();
        }
        let mut out = vec![b.to_vec()];
        for r in 1..self.size {
            let (bytes, _) = self.comm.process_at_rank(r as i32).receive_vec::<u8>();
            out.push(bytes);
        }
        out
    }

    /// Rank 0's string on every rank.
    fn broadcast_string(&self, s: &str) -> String {
        let root = self.comm.process_at_rank(0);
        let mut len = s.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.root() {
            s.as_bytes().to_vec()
        } else {
            vec![0u8; usize::try_from(len).unwrap_or(0)]
        };
        root.broadcast_into(&mut buf[..]);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// A failed collective step: rank 0 reports it, the others stay quiet.
enum Stop {
    Report(anyhow::Error),
    Quiet,
}

/// `storlab md` under MPI: the whole run on every rank.
pub fn execute(cmd: MdCommand, spec: MdSpec, tree: Tree) -> Result<Outcome> {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        anyhow::bail!("MPI could not be initialised (already initialised?)");
    };
    let comm = universe.world();
    let sync = MpiSync {
        comm: &comm,
        rank: comm.rank() as u32,
        size: comm.size() as u32,
    };
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
    let mut code_all = code;
    comm.process_at_rank(0).broadcast_into(&mut code_all);
    let rank = sync.rank;
    drop(comm);
    drop(universe); // MPI_Finalize
    let code = if rank == 0 { code } else { code_all };
    Ok(Outcome::from_exit_code(u8::try_from(code).unwrap_or(2)))
}

fn run(sync: &MpiSync, cmd: &MdCommand, spec: &MdSpec, tree: &Tree) -> Result<Outcome, Stop> {
    let target = cmd.target().to_path_buf();
    let digest = storlab_md::agree::job_digest(spec, &target);
    let (lo, hi) = sync.min_max(digest);
    if lo != hi {
        return Err(report(
            sync,
            anyhow!(
                "the {} ranks resolved different md jobs (job digests {lo:016x} to {hi:016x}): every rank \
                 must get the same options, target and storlab version; nothing was created",
                sync.size
            ),
        ));
    }
    // Rank 0 checks the outputs, opens the store, makes the directory.
    let mut made: Option<(PathBuf, BenchReport, super::Sink)> = None;
    let mut why = String::new();
    if sync.root() {
        match prepare(cmd, &target) {
            Ok(m) => made = Some(m),
            Err(e) => why = format!("{e:#}"),
        }
    }
    let signals = super::Signals::install();
    let run_dir = PathBuf::from(
        sync.broadcast_string(
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
        Ok(s) if sync.all(run_dir.is_dir()) => s,
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
    let quiet = cmd.run.quiet || !sync.root();
    let watcher = Watcher::start(Arc::clone(&control), signals.clone(), spec, quiet);
    let mut phases = Vec::new();
    let mut sink = made.as_mut().map(|m| &mut m.2);
    let result = storlab_md::run(&Posix, spec, &run_dir, sync, &control, |p| {
        let parts = gather(sync, p);
        if let (Some(s), false) = (sink.as_mut(), parts.is_empty()) {
            let ph = record::phase_result(spec, tree, &parts, now_rfc3339());
            s.phase(&ph);
            phases.push(ph);
        }
    });
    watcher.stop();
    let stopped = sync.any(control.stop_reason().is_some());
    sync.barrier();
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
    if sync.root() {
        Stop::Report(e)
    } else {
        Stop::Quiet
    }
}

/// Rank 0's part before anything runs: paths, store, storlab's directory,
/// the run's header saved.
fn prepare(cmd: &MdCommand, target: &Path) -> Result<(PathBuf, BenchReport, super::Sink)> {
    crate::commands::run::check_paths(Some(target), &cmd.run)?;
    let mut sink = crate::commands::run::open_sink_tagged(&cmd.run, &[])?;
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
    BenchReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "storlab".into(),
            version: STORLAB_VERSION.into(),
        },
        command_line: std::env::args().collect(),
        started_at: now_rfc3339(),
        finished_at: String::new(),
        interrupted: false,
        stop_reason: None,
        host,
        target: info,
        phases: Vec::new(),
        // The table and each phase's `numjobs` say how many ranks ran.
        warnings: Vec::new(),
        monitor: None,
        repeat: None,
    }
}

/// One rank's figures as they travel to rank 0 (the histogram as its
/// recorded values and counts, so the merge is exact).
#[derive(Debug, Serialize, Deserialize)]
struct Wire {
    rank: u32,
    visited_rank: u32,
    planned: u64,
    bytes: u64,
    ops: u64,
    hist: Vec<(u64, u64)>,
    elapsed_ns: u64,
    window_ns: u64,
    user_ns: u64,
    sys_ns: u64,
    errors: Vec<(String, u64)>,
    error: Option<String>,
    stonewalled: bool,
    interrupted: bool,
}

/// Every rank's part of the phase just finished, at rank 0 (empty elsewhere).
fn gather(sync: &MpiSync, p: &RankPhase) -> Vec<RankPhase> {
    let w = Wire {
        rank: sync.rank,
        visited_rank: p.visited_rank,
        planned: p.planned,
        bytes: p.counter.bytes,
        ops: p.counter.ops,
        hist: p
            .counter
            .hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
        elapsed_ns: p.elapsed_ns,
        window_ns: p.window_ns,
        user_ns: p.user_ns,
        sys_ns: p.sys_ns,
        errors: p.errors.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        error: p.error.clone(),
        stonewalled: p.stonewalled,
        interrupted: p.interrupted,
    };
    let bytes = serde_json::to_vec(&w).unwrap_or_default();
    sync.gather_bytes(&bytes)
        .into_iter()
        .enumerate()
        .map(|(r, b)| {
            let w: Wire = serde_json::from_slice(&b).unwrap_or_else(|e| Wire {
                rank: r as u32,
                error: Some(format!("rank {r}: its figures did not arrive intact ({e})")),
                ..lost(r as u32)
            });
            let mut counter = DirCounter::default();
            for (v, n) in &w.hist {
                counter.hist.saturating_record_n(*v, *n);
            }
            counter.bytes = w.bytes;
            counter.ops = w.ops;
            RankPhase {
                phase: p.phase,
                rank: w.rank,
                visited_rank: w.visited_rank,
                planned: w.planned,
                counter,
                elapsed_ns: w.elapsed_ns,
                window_ns: w.window_ns,
                user_ns: w.user_ns,
                sys_ns: w.sys_ns,
                errors: w.errors.into_iter().collect(),
                error: w.error,
                stonewalled: w.stonewalled,
                interrupted: w.interrupted,
            }
        })
        .collect()
}

fn lost(rank: u32) -> Wire {
    Wire {
        rank,
        visited_rank: rank,
        planned: 0,
        bytes: 0,
        ops: 0,
        hist: Vec::new(),
        elapsed_ns: 0,
        window_ns: 0,
        user_ns: 0,
        sys_ns: 0,
        errors: Vec::new(),
        error: None,
        stonewalled: false,
        interrupted: false,
    }
}
