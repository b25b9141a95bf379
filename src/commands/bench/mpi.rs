//! `storlab bench` launched by `mpirun` or `srun` (cargo feature `mpi`):
//! every rank runs the job on its node, phases start together, rank 0
//! prints and stores the aggregate.
//!
//! What each rank does, in order:
//!
//! 1. plans the phases from the same options and job file; a rank that
//!    cannot (bad option, unreadable job file) makes every rank stop, and
//!    rank 0 alone says why (exit 2); then the ranks compare a digest of
//!    the job each resolved ([`super::cluster_agree`], [`storlab_bench::cluster::agree`]): ranks started with
//!    different options stop before any file exists, and rank 0 names the
//!    ranks and options that differ (exit 2);
//! 2. for each client count (`--clients`, default all ranks): rank 0
//!    resolves the target and creates every client's files (a file per job
//!    per rank, or the one shared file) and sends their names to all;
//!    each client checks it can open its files on its node before any I/O;
//! 3. runs the phases through [`storlab_bench::run_synced`] with
//!    [`MpiSync`]: per phase, all ranks agree on errors, leave a barrier
//!    together (each rank's clock counts from the moment it left it; the
//!    following barrier measures the exit skew), and every 20 ms reduce
//!    their state (an error, the stonewall, done);
//! 4. after each phase sends its figures to rank 0, which merges them
//!    ([`storlab_bench::cluster::merge`]) and saves the phase at once.
//!
//! Ranks that are not among the first k clients run every collective step
//! with no jobs: they wait at the barriers.
//!
//! A panic on the thread that calls MPI would leave the other ranks
//! waiting in a collective step for ever: under MPI a panic hook prints it
//! (rank-tagged) and calls `MPI_Abort`, so `mpirun` ends every rank.
//! Panics on worker threads are already a phase error every rank agrees on.

use super::cluster_args::ClientsBy;
use super::{BenchCommand, Live, Signals, Sink};
use crate::Outcome;
use anyhow::{Context, Result, anyhow};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storlab_bench::cluster::clients;
use storlab_bench::cluster::merge::{RankPart, RunFacts, bytes_at, ior_terms, merge};
use storlab_bench::{
    Control, DataFile, PhaseSync, ResolvedJob, ResolvedTarget, SafetyOptions, Share, TargetKind,
};
use storlab_types::{
    BenchReport, CacheMode, PhaseParams, PhaseResult, RepeatInfo, SCHEMA_VERSION, STORLAB_VERSION,
    TargetInfo, ToolInfo,
};

/// Whether this process was started by an MPI launcher.
pub fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "PMI_SIZE",
        "PMI_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

/// A failed collective step: rank 0 reports it, the others stay quiet.
enum Stop {
    Report(anyhow::Error),
    Quiet,
}

/// The communicator and what every rank knows about every other.
struct World {
    comm: SimpleCommunicator,
    rank: u32,
    size: u32,
    /// Node name of each rank (`STORLAB_MPI_NODE` overrides the host name,
    /// so tests can pretend to be several nodes).
    nodes: Vec<String>,
    /// RAM of each rank's node, bytes.
    mem: Vec<u64>,
}

impl World {
    fn root(&self) -> bool {
        self.rank == 0
    }

    fn max_u64(&self, v: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; v.len()];
        self.comm
            .all_reduce_into(v, &mut out[..], SystemOperation::max());
        out
    }

    fn min_u64(&self, v: u64) -> u64 {
        let mut out = 0u64;
        self.comm
            .all_reduce_into(&v, &mut out, SystemOperation::min());
        out
    }

    fn all(&self, ok: bool) -> bool {
        self.min_u64(u64::from(ok)) == 1
    }

    /// Every rank's string at rank 0 (rank order); empty elsewhere.
    fn gather_strings(&self, s: &str) -> Vec<String> {
        if !self.root() {
            self.comm.process_at_rank(0).send(s.as_bytes());
            return Vec::new();
        }
        let mut out = vec![s.to_string()];
        for r in 1..self.size {
            let (bytes, _) = self.comm.process_at_rank(r as i32).receive_vec::<u8>();
            out.push(String::from_utf8_lossy(&bytes).into_owned());
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
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// A step every rank took: if any failed, rank 0 reports the first
    /// failure (its own as it is; another rank's with its rank and node).
    fn checked<T>(&self, what: &str, r: Result<T>) -> Result<T, Stop> {
        let msg = r.as_ref().err().map(|e| format!("{e:#}"));
        if self.all(msg.is_none()) {
            return r.map_err(|_| Stop::Quiet);
        }
        let all = self.gather_strings(msg.as_deref().unwrap_or(""));
        if !self.root() {
            return Err(Stop::Quiet);
        }
        if let Some(m) = msg {
            return Err(Stop::Report(anyhow!(m)));
        }
        let (rank, m) = all
            .iter()
            .enumerate()
            .find(|(_, m)| !m.is_empty())
            .map(|(r, m)| (r, m.clone()))
            .unwrap_or_default();
        Err(Stop::Report(anyhow!(
            "rank {rank} on {}: {what}: {m}",
            self.nodes.get(rank).cloned().unwrap_or_default()
        )))
    }
}

fn node_name() -> String {
    std::env::var("STORLAB_MPI_NODE")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| mpi::environment::processor_name().ok())
        .unwrap_or_else(|| "?".into())
}

/// `storlab bench` under MPI: the whole run on every rank.
pub fn execute(cmd: BenchCommand, planned: Result<super::PlannedJob>) -> Result<Outcome> {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        anyhow::bail!("MPI could not be initialised (already initialised?)");
    };
    let comm = universe.world();
    let rank = comm.rank() as u32;
    let size = comm.size() as u32;
    let node = node_name();
    install_panic_abort(rank, &node);
    let names = {
        let w = World {
            comm: universe.world(),
            rank,
            size,
            nodes: Vec::new(),
            mem: Vec::new(),
        };
        let all = w.gather_strings(&node);
        w.broadcast_string(&all.join("\n"))
    };
    let mem_here = storlab_host::host_info().mem_total_bytes;
    let mut mem = vec![0u64; size as usize];
    comm.all_gather_into(&mem_here, &mut mem[..]);
    let world = World {
        comm,
        rank,
        size,
        nodes: names.lines().map(String::from).collect(),
        mem,
    };
    let r = run_all(&world, cmd, planned);
    // Every rank ends with rank 0's outcome (mpirun's exit code).
    let code = match &r {
        Ok(o) => code_of(*o),
        Err(_) => code_of(Outcome::Error),
    };
    // The error is printed before the broadcast below releases the other
    // ranks: once one of them exits non-zero, mpirun kills the rest, and a
    // message printed after MPI_Finalize could be lost with rank 0.
    if let Err(Stop::Report(e)) = &r {
        crate::output::print_error(e);
    }
    let mut code_all = code;
    world.comm.process_at_rank(0).broadcast_into(&mut code_all);
    drop(world);
    // The default hook again: no MPI_Abort once MPI is finalised.
    drop(std::panic::take_hook());
    drop(universe); // MPI_Finalize
    Ok(outcome_of(if rank == 0 { code } else { code_all }))
}

/// The exit code of every rank when one panicked (a hard error).
const PANIC_EXIT: i32 = 2;

/// A panic on this thread (the one that calls MPI) ends the whole job:
/// the other ranks may be waiting for this one in a collective step, and
/// would wait for ever. The hook prints the panic with the rank and node
/// and calls `MPI_Abort`, on which `mpirun` ends every rank. A panic on
/// another thread (a worker) is only printed: its join turns it into a
/// phase error, which every rank agrees on at the next step.
fn install_panic_abort(rank: u32, node: &str) {
    let main = std::thread::current().id();
    let node = node.to_string();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let on_main = thread.id() == main;
        let name = thread.name().unwrap_or("unnamed").to_string();
        // Written without eprintln!, which would panic again (an abort
        // without MPI_Abort) if stderr were gone.
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "storlab: rank {rank} on {node}: internal error: panic in thread {name}{at}: {what}"
        );
        if on_main && mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            let _ = writeln!(
                err,
                "storlab: rank {rank} on {node}: aborting every rank (MPI_Abort) so the job does not hang; \
                 please report this bug"
            );
            SimpleCommunicator::world().abort(PANIC_EXIT);
        }
    }));
}

/// A test hook (debug builds only, so a release build never panics on an
/// environment variable): `STORLAB_TEST_PANIC_RANK=N` makes rank N panic
/// when the first phase starts, while every other rank waits for it in a
/// collective step.
fn test_panic(rank: u32) {
    if cfg!(debug_assertions)
        && std::env::var("STORLAB_TEST_PANIC_RANK").is_ok_and(|v| v.trim() == rank.to_string())
    {
        panic!("test panic on rank {rank} (STORLAB_TEST_PANIC_RANK)");
    }
}

/// A test hook (debug builds only): `STORLAB_TEST_RATE_IOPS=N` caps
/// every phase of this rank at N I/Os per second after the ranks agreed on
/// one job, so a test can make one rank slower than the others (the
/// option itself must be the same on every rank).
fn test_slow_rank(planned: &mut super::PlannedJob) {
    let rate = std::env::var("STORLAB_TEST_RATE_IOPS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok());
    if let Some(rate) = rate.filter(|_| cfg!(debug_assertions)) {
        for p in &mut planned.phases {
            p.rate_iops = rate;
        }
    }
}

/// An outcome as the number MPI broadcasts.
fn code_of(o: Outcome) -> u64 {
    u64::from(o.exit_code())
}

fn outcome_of(code: u64) -> Outcome {
    Outcome::from_exit_code(u8::try_from(code).unwrap_or(2))
}

/// The client order: which ranks are the first k.
fn client_order(world: &World, by: ClientsBy) -> Vec<u32> {
    match by {
        ClientsBy::Rank => (0..world.size).collect(),
        ClientsBy::Node => clients::order_by_node(&world.nodes),
    }
}

fn run_all(
    world: &World,
    cmd: BenchCommand,
    planned: Result<super::PlannedJob>,
) -> Result<Outcome, Stop> {
    let mut planned = world.checked("cannot plan the job", planned)?;
    // Before anything is created: every rank runs the same job.
    agree_on_job(world, &cmd, &planned)?;
    test_slow_rank(&mut planned);
    // The output rules hold under MPI too (never the database, a device or
    // someone else's file), checked by rank 0 before anything is created.
    let paths = if world.root() {
        super::check_paths(planned.target.as_deref(), &cmd.run)
    } else {
        Ok(())
    };
    world.checked("refused", paths)?;
    // Signals are watched from before any scratch file exists, once for
    // every client count: a Ctrl-C between two counts is not forgotten.
    let signals = world.checked("cannot install the signal handlers", Signals::install())?;
    let by = cmd.cluster.clients_by.unwrap_or_default();
    let counts = cmd
        .cluster
        .clients
        .clone()
        .map_or_else(|| vec![world.size], |c| c.0);
    if let Some(&k) = counts.iter().find(|&&k| k > world.size) {
        return Err(if world.root() {
            Stop::Report(anyhow!(
                "--clients {k}: only {} ranks were launched; launch at least {k} (mpirun -np {k}) or use smaller counts",
                world.size
            ))
        } else {
            Stop::Quiet
        });
    }
    let order = client_order(world, by);
    let mut runs = Vec::new();
    let mut last = Outcome::Ok;
    // --repeat N (IOR's -i): the job N times per client count, each a run
    // of its own tagged repeat_group, then IOR's summary (rank 0).
    let count = cmd.repeat.max(1);
    let group = super::repeat::group_id();
    'counts: for &k in &counts {
        let clients = &order[..k as usize];
        let mut reps = Vec::new();
        for index in 1..=count {
            let info = (count > 1).then(|| RepeatInfo {
                group: group.clone(),
                index,
                count,
            });
            if world.root()
                && let Some(i) = &info
                && matches!(cmd.run.output_format, super::OutputFormat::Table)
            {
                let _ = crate::output::print(&format!("Repeat {} of {}\n", i.index, i.count));
            }
            let (outcome, report, id) = run_once(
                world,
                &cmd,
                &planned,
                (clients, counts.len() > 1),
                info.as_ref(),
                &signals,
            )?;
            if let Some(r) = report {
                reps.push(r.clone());
                runs.push((r, id));
            }
            // Every rank goes on (or not) with rank 0's outcome.
            let mut code = code_of(outcome);
            world.comm.process_at_rank(0).broadcast_into(&mut code);
            last = outcome_of(code);
            if last != Outcome::Ok {
                break 'counts;
            }
        }
        if world.root() && count > 1 {
            let _ = super::repeat::print_ior_summary(&cmd.run, &group, count, &reps);
        }
    }
    if world.root() && counts.len() > 1 {
        let rows = super::cluster_table::clients_rows(&runs);
        let _ = crate::output::print(&format!(
            "Clients (one stored run per count):\n{}",
            super::cluster_table::render_clients(&rows)
        ));
    }
    Ok(last)
}

/// Every rank resolved the same job, or none goes on: the digests of the
/// canonical jobs are all-gathered (so every rank takes the same
/// decision); on a difference the jobs go to rank 0, which names the ranks
/// and options that differ.
fn agree_on_job(
    world: &World,
    cmd: &BenchCommand,
    planned: &super::PlannedJob,
) -> Result<(), Stop> {
    let text = world.checked(
        "cannot describe the job",
        super::cluster_agree::canonical_job(cmd, planned).map_err(anyhow::Error::from),
    )?;
    let mine = storlab_bench::cluster::agree::digest(&text);
    let mut all = vec![0u64; 2 * world.size as usize];
    world.comm.all_gather_into(&mine[..], &mut all[..]);
    if all.chunks(2).all(|d| d == &all[..2]) {
        return Ok(());
    }
    let texts = world.gather_strings(&text);
    if !world.root() {
        return Err(Stop::Quiet);
    }
    Err(Stop::Report(anyhow!(
        "{}",
        storlab_bench::cluster::agree::describe_mismatch(&texts).unwrap_or_else(|| {
            "ranks were started with different options (their jobs' digests differ); \
             start every rank with the same command line"
                .into()
        })
    )))
}

/// What rank 0 sends every rank about the target it prepared.
#[derive(Debug, Serialize, Deserialize)]
struct TargetMsg {
    kind: String,
    info: TargetInfo,
    files: Vec<(PathBuf, u64, bool)>,
    shared: bool,
    unit: usize,
    warnings: Vec<String>,
}

/// One run with the first `clients.len()` clients: returns rank 0's
/// outcome, report and run id.
// long-function: one rank's run in the order MPI requires (agree, start, run, gather); split, the collective calls would hide.
fn run_once(
    world: &World,
    cmd: &BenchCommand,
    planned: &super::PlannedJob,
    (clients, scaling): (&[u32], bool),
    repeat: Option<&RepeatInfo>,
    signals: &Signals,
) -> Result<(Outcome, Option<BenchReport>, Option<i64>), Stop> {
    let k = clients.len() as u32;
    let me = clients
        .iter()
        .position(|&r| r == world.rank)
        .map(|c| c as u32);
    let args = &cmd.run;
    // Rank 0 checks the store and the tags before any file exists.
    let sink = if world.root() {
        let mut extra: Vec<(&str, String)> = if scaling {
            vec![("clients", k.to_string())]
        } else {
            Vec::new()
        };
        extra.extend(repeat.map(|r| ("repeat_group", r.group.clone())));
        let r = super::open_sink_tagged(args, &extra);
        Some(r)
    } else {
        None
    };
    let sink = world.checked("cannot open the results database", sink.transpose())?;
    // Rank 0 creates every client's files: the phases scaled to k ranks.
    let global: Vec<PhaseParams> = planned
        .phases
        .iter()
        .map(|p| PhaseParams {
            numjobs: p.numjobs * k,
            ..p.clone()
        })
        .collect();
    let prepared = if world.root() {
        let safety = SafetyOptions {
            allow_destroy: args.allow_destroy,
        };
        Some(
            storlab_bench::prepare(planned.target.as_deref(), global, safety)
                .map_err(anyhow::Error::from),
        )
    } else {
        None
    };
    let prepared = world.checked("cannot prepare the target", prepared.transpose())?;
    let msg = prepared.as_ref().map(|j| TargetMsg {
        kind: match j.target.kind {
            TargetKind::Directory => "directory",
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block_device",
        }
        .into(),
        info: j.target.info.clone(),
        files: j
            .target
            .files
            .iter()
            .map(|f| (f.path.clone(), f.size, f.created))
            .collect(),
        shared: j.target.shared,
        unit: j.unit,
        warnings: j.warnings.clone(),
    });
    let text = world.broadcast_string(
        &msg.as_ref()
            .map(|m| serde_json::to_string(m).unwrap_or_default())
            .unwrap_or_default(),
    );
    let msg: TargetMsg = match serde_json::from_str(&text) {
        Ok(m) => m,
        Err(e) => {
            return Err(if world.root() {
                Stop::Report(anyhow!("internal error: target message: {e}"))
            } else {
                Stop::Quiet
            });
        }
    };
    let cleanup = |j: &Option<ResolvedJob>| {
        if let Some(j) = j {
            j.target.cleanup();
        }
    };
    let mut job = local_job(world, planned, &msg, me);
    if let Some(label) = crate::commands::config::get()
        .ok()
        .and_then(|c| c.host.clone())
    {
        job.host.hostname = label;
    }
    // Each client opens its files on its node before any I/O.
    let open = check_files(&job, me);
    if let Err(e) = world.checked("cannot open the target on this node", open) {
        cleanup(&prepared);
        return Err(e);
    }
    let numjobs = planned.phases.iter().map(|p| p.numjobs).collect();
    let sync = MpiSync::new(world, &cmd.cluster, clients, me, numjobs);
    let mut warnings: Vec<String> = planned.warnings.clone();
    warnings.extend(
        msg.warnings
            .iter()
            .filter(|w| !w.starts_with("buffered I/O on a working set"))
            .cloned(),
    );
    warnings.extend(clients::working_set_warnings(
        &world.nodes,
        &world.mem,
        &planned.phases,
        clients,
    ));
    // Where O_DIRECT stops above the disk (rank 0's view of the target).
    if let Some(f) = prepared.as_ref().and_then(|j| j.target.files.first()) {
        let modes: Vec<CacheMode> = planned.phases.iter().map(|p| p.cache).collect();
        warnings.extend(super::layers::page_cache_warning(&f.path, &modes));
    }
    if args.monitor {
        warnings.push(
            "--monitor is not sampled in multi-client runs: run `storlab monitor` on the nodes"
                .into(),
        );
    }
    if cmd.cluster.reorder_tasks && sync.shift.is_none() {
        warnings.push(
            "--reorder-tasks: every client is on one node, so each reads another rank's data \
             but through the same node's page cache"
                .into(),
        );
    }
    let header = BenchReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "storlab".into(),
            version: STORLAB_VERSION.into(),
        },
        command_line: crate::command_line(),
        started_at: super::now_rfc3339(),
        finished_at: String::new(),
        interrupted: false,
        stop_reason: None,
        host: job.host.clone(),
        target: msg.info.clone(),
        phases: Vec::new(),
        warnings,
        monitor: None,
        repeat: repeat.cloned(),
    };
    let mut sink = sink;
    let begun = match sink.as_mut() {
        Some(s) => s.begin("bench", &header),
        None => Ok(()),
    };
    if let Err(e) = world.checked("cannot start the run", begun) {
        cleanup(&prepared);
        return Err(e);
    }
    let max_jobs = job
        .phases
        .iter()
        .map(|p| p.numjobs as usize)
        .max()
        .unwrap_or(0);
    let control = Arc::new(Control::new(max_jobs));
    let names = job.phases.iter().map(|p| p.name.clone()).collect();
    let quiet = args.quiet || !world.root();
    let live = Live::start(Arc::clone(&control), signals.clone(), quiet, names);
    let mut merged: Vec<PhaseResult> = Vec::new();
    let mut stop_reason: Option<String> = None;
    let outcome = storlab_bench::run_synced(&job, &control, &sync, |phase| {
        let part = sync.part(&control, phase);
        if let Some((p, reason)) = sync.gather(part) {
            if let Some(s) = sink.as_mut() {
                s.phase(&p);
            }
            if let Some(r) = reason {
                stop_reason.get_or_insert(r);
            }
            merged.push(p);
        }
    });
    live.stop();
    // Every rank is done with the files before rank 0 removes them.
    world.comm.barrier();
    let keep = args.keep && outcome.stop_reason.is_none() && stop_reason.is_none();
    let Some(prepared) = prepared else {
        return Ok((Outcome::Ok, None, None));
    };
    if !keep {
        prepared.target.cleanup();
    }
    let mut target = header.target.clone();
    target.kept = keep && target.created_by_storlab;
    let mut warnings = header.warnings.clone();
    warnings.extend(outcome.warnings);
    let stop_reason = stop_reason.or(outcome.stop_reason);
    let report = BenchReport {
        finished_at: super::now_rfc3339(),
        interrupted: stop_reason.is_some(),
        stop_reason,
        target,
        phases: merged,
        warnings,
        ..header
    };
    let mut sink = sink.unwrap_or_else(|| Sink::new(None, &args.db.db, Default::default(), None));
    // Under --repeat with JSON output, the one document comes at the end.
    let print = repeat.is_none() || matches!(args.output_format, super::OutputFormat::Table);
    let (out, id) = match emit_cluster(report.clone(), args, &mut sink, signals.received(), print) {
        Ok(x) => x,
        Err(e) => {
            crate::output::print_error(&e);
            (Outcome::Error, None)
        }
    };
    Ok((out, Some(report), id))
}

/// The usual output of a run with the cluster table after it, then the
/// warnings (every rank's, each once, naming the ranks): never between
/// the two tables.
fn emit_cluster(
    report: BenchReport,
    args: &super::RunArgs,
    sink: &mut Sink,
    signal: Option<i32>,
    print: bool,
) -> Result<(Outcome, Option<i64>)> {
    // -q: one screen, whatever the number of ranks.
    let quiet = args.quiet && matches!(args.output_format, super::OutputFormat::Table);
    let cluster = |r: &BenchReport| Some(super::cluster_table::render_cluster(r));
    let summary = (print && quiet).then(|| super::cluster_table::render_quiet(&report));
    let (out, _) = super::emit(report, args, sink, signal, print && !quiet, &cluster)?;
    if let Some(text) = summary {
        let saved = sink
            .run_id()
            .map(|id| format!("Saved as run {id} (storlab show {id}).\n"))
            .unwrap_or_default();
        crate::output::print(&format!("{text}{saved}"))?;
    }
    Ok((out, sink.run_id()))
}

/// This rank's view of the job: rank 0's files, its own phases (no jobs
/// when it is not a client).
fn local_job(
    world: &World,
    planned: &super::PlannedJob,
    msg: &TargetMsg,
    me: Option<u32>,
) -> ResolvedJob {
    let phases = planned
        .phases
        .iter()
        .map(|p| PhaseParams {
            numjobs: if me.is_some() { p.numjobs } else { 0 },
            ..p.clone()
        })
        .collect();
    let kind = match msg.kind.as_str() {
        "directory" => TargetKind::Directory,
        "block_device" => TargetKind::BlockDevice,
        _ => TargetKind::File,
    };
    let mut host = storlab_host::host_info();
    if host.hostname.is_empty() {
        host.hostname = world.nodes[world.rank as usize].clone();
    }
    ResolvedJob {
        phases,
        target: ResolvedTarget::from_peer(
            kind,
            msg.info.clone(),
            msg.files
                .iter()
                .map(|(path, size, created)| DataFile {
                    path: path.clone(),
                    size: *size,
                    created: *created,
                })
                .collect(),
            msg.shared,
        ),
        host,
        unit: msg.unit,
        warnings: Vec::new(),
    }
}

/// A client opens the files its jobs use, as the phases will (write access
/// if any phase writes, O_DIRECT if any asks for it).
fn check_files(job: &ResolvedJob, me: Option<u32>) -> Result<()> {
    let Some(c) = me else { return Ok(()) };
    let Some(p) = job.phases.first() else {
        return Ok(());
    };
    let write = job.phases.iter().any(|p| p.rw.writes());
    let direct = job.phases.iter().any(|p| p.cache == CacheMode::Direct);
    let files: Vec<&DataFile> = if job.target.shared {
        job.target.files.iter().take(1).collect()
    } else {
        let n = p.numjobs as usize;
        job.target
            .files
            .iter()
            .skip(c as usize * n)
            .take(n)
            .collect()
    };
    for f in files {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(write);
        if direct {
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&f.path)
            .with_context(|| format!("cannot open {}", f.path.display()))?;
    }
    Ok(())
}

/// The [`PhaseSync`] of an MPI run. Interior mutability: the run loop and
/// the phase callback both hold it, on the one thread that calls MPI.
struct MpiSync<'w> {
    world: &'w World,
    clients: Vec<u32>,
    /// This rank's place among the clients (None: it only waits).
    me: Option<u32>,
    shift: Option<u32>,
    reorder: bool,
    stonewall: Option<Duration>,
    wear_out: bool,
    by: String,
    // Per phase:
    skew_ns: Cell<u64>,
    samples: RefCell<Vec<(u64, u64)>>,
    stonewalled: Cell<bool>,
    wear_deadline: Cell<Option<Instant>>,
    local_failed: Cell<bool>,
    epoch: Cell<Option<Instant>>,
    /// When the first rank finished the last phase, ns after the barrier.
    first_done: Cell<u64>,
    /// Jobs per client of each phase (the same on every rank).
    numjobs: Vec<u32>,
}

impl<'w> MpiSync<'w> {
    fn new(
        world: &'w World,
        args: &super::ClusterArgs,
        clients: &[u32],
        me: Option<u32>,
        numjobs: Vec<u32>,
    ) -> MpiSync<'w> {
        MpiSync {
            world,
            clients: clients.to_vec(),
            me,
            shift: clients::reorder_shift(&world.nodes, clients),
            reorder: args.reorder_tasks,
            stonewall: args.stonewall,
            wear_out: args.stonewall_wear_out,
            by: args.clients_by.unwrap_or_default().as_str().into(),
            skew_ns: Cell::new(0),
            samples: RefCell::new(Vec::new()),
            stonewalled: Cell::new(false),
            wear_deadline: Cell::new(None),
            local_failed: Cell::new(false),
            epoch: Cell::new(None),
            first_done: Cell::new(0),
            numjobs,
        }
    }

    fn k(&self) -> u32 {
        self.clients.len() as u32
    }

    /// The client whose data this rank's jobs use in phase `p`.
    fn source(&self, p: &PhaseParams) -> Option<u32> {
        let c = self.me?;
        let reading = p.rw.reads() && !p.rw.writes();
        if self.reorder && reading {
            Some((c + self.shift.unwrap_or(1)) % self.k())
        } else {
            Some(c)
        }
    }

    /// What this rank tells rank 0 after a phase (every rank calls it).
    fn part(&self, control: &Control, phase: &PhaseResult) -> Option<RankPart> {
        let window = control.last_window().filter(|_| self.me.is_some());
        let first_done = self.world.min_u64(window.map_or(u64::MAX, |w| w.1));
        let mut samples = self.samples.borrow().clone();
        if let Some(w) = window {
            samples.push((w.1, phase.total.bytes));
        }
        self.first_done.set(first_done);
        let c = self.me?;
        let p = &phase.params;
        let src = self.source(p).unwrap_or(c);
        let first_job = src * p.numjobs;
        let files = phase
            .jobs
            .iter()
            .map(|j| {
                let g = (first_job + j.job) as usize;
                self.file_label(p, g)
            })
            .collect();
        let error = self
            .local_failed
            .get()
            .then(|| phase.warnings.first().cloned())
            .flatten();
        Some(RankPart {
            rank: self.world.rank,
            node: self.world.nodes[self.world.rank as usize].clone(),
            first_job,
            window,
            bytes_at_first_done: if first_done == u64::MAX {
                0
            } else {
                bytes_at(&samples, first_done)
            },
            error,
            files,
            result: phase.clone(),
        })
        .map(|mut part| {
            part.result.cluster = None;
            part
        })
    }

    fn file_label(&self, p: &PhaseParams, global_job: usize) -> String {
        let (layout, ..) = ior_terms(p);
        match layout {
            "n-n" => format!("job file {global_job}"),
            "n-1-segmented" => format!(
                "shared file, bytes {}..{}",
                global_job as u64 * p.size_bytes,
                (global_job as u64 + 1) * p.size_bytes
            ),
            _ => format!("shared file, blocks of job {global_job}"),
        }
    }

    /// Send this rank's part to rank 0; there, the merged phase and the
    /// reason it stopped (naming the rank), if it did.
    fn gather(&self, part: Option<RankPart>) -> Option<(PhaseResult, Option<String>)> {
        let text = part
            .as_ref()
            .map(|p| serde_json::to_string(p).unwrap_or_default())
            .unwrap_or_default();
        let bound = self.world.max_u64(&[self.skew_ns.get()])[0];
        let all = self.world.gather_strings(&text);
        if !self.world.root() {
            return None;
        }
        let parts: Vec<RankPart> = all
            .iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect();
        let reason = parts.iter().find_map(|p| {
            p.error
                .as_ref()
                .map(|e| format!("rank {} on {}: {e}", p.rank, p.node))
        });
        let facts = RunFacts {
            ranks: self.world.size,
            clients_by: self.by.clone(),
            reorder_shift: self.reorder.then(|| self.shift.unwrap_or(1)),
            stonewall_ns: self.stonewall.map(|d| d.as_nanos() as u64),
            wear_out: self.wear_out,
            clock_error_bound_ns: bound,
            first_done_ns: self.first_done.get(),
        };
        let merged = merge(parts, &facts)?;
        Some((merged, reason))
    }
}

impl PhaseSync for MpiSync<'_> {
    fn share(&self, index: usize, p: &PhaseParams) -> Share {
        let k = self.k();
        let per_client = self.numjobs.get(index).copied().unwrap_or(p.numjobs);
        match self.me {
            Some(c) => Share {
                first_job: self.source(p).unwrap_or(c) * p.numjobs,
                total_jobs: k * per_client,
                slice: c,
                slices: k,
            },
            // Not a client: no jobs, an empty slice.
            None => Share {
                first_job: 0,
                total_jobs: k * per_client,
                slice: k,
                slices: k.max(1),
            },
        }
    }

    fn agree(&self, ok: bool) -> bool {
        self.world.all(ok)
    }

    fn start(&self, local_error: bool) -> Option<Instant> {
        self.samples.borrow_mut().clear();
        self.stonewalled.set(false);
        self.wear_deadline.set(None);
        self.local_failed.set(local_error);
        test_panic(self.world.rank);
        let bad = self.world.max_u64(&[u64::from(local_error)])[0];
        if bad != 0 {
            return None;
        }
        // The epoch is the moment a rank leaves a barrier; the time it
        // then spends in the next barrier bounds how far apart the ranks
        // left the first (the last to leave it enters the next one last).
        // A descheduled rank makes that large, so take the best of a few
        // rounds (every rank sees the same maximum, so picks the same).
        let mut best: Option<(Instant, u64)> = None;
        for _ in 0..8 {
            self.world.comm.barrier();
            let t = Instant::now();
            self.world.comm.barrier();
            let d = t.elapsed().as_nanos() as u64;
            let dmax = self.world.max_u64(&[d])[0];
            if best.is_none_or(|b| dmax < b.1) {
                best = Some((t, dmax));
            }
            if dmax < 200_000 {
                break;
            }
        }
        let (epoch, bound) = best?;
        self.skew_ns.set(bound);
        self.epoch.set(Some(epoch));
        Some(epoch)
    }

    fn tick(&self, control: &Control, epoch: Instant, local_done: bool) -> bool {
        let now = epoch.elapsed();
        let failed = control
            .jobs
            .iter()
            .any(|j| j.failed.load(Ordering::Relaxed));
        if failed {
            self.local_failed.set(true);
        }
        let sw_hit = self.stonewall.is_some_and(|d| now >= d);
        let issued = control
            .jobs
            .iter()
            .map(|j| j.issued_bytes.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let g = self.world.max_u64(&[
            u64::from(failed),
            u64::from(sw_hit),
            u64::from(!local_done),
            issued,
            u64::from(control.stop.load(Ordering::Relaxed)),
        ]);
        let bytes = control
            .jobs
            .iter()
            .map(|j| j.bytes.load(Ordering::Relaxed))
            .sum();
        self.samples
            .borrow_mut()
            .push((now.as_nanos() as u64, bytes));
        if (g[0] == 1 || g[4] == 1) && !control.stop.load(Ordering::Relaxed) {
            control.request_stop(if g[0] == 1 {
                "another rank hit an error"
            } else {
                "another rank was asked to stop"
            });
        }
        if g[1] == 1 && !self.stonewalled.get() {
            self.stonewalled.set(true);
            if self.wear_out {
                // Everyone goes on to the furthest job's amount, for at
                // most one more stonewall period.
                for j in &control.jobs {
                    j.limit_bytes.store(g[3].max(1), Ordering::Relaxed);
                }
                self.wear_deadline
                    .set(self.stonewall.map(|d| epoch + 2 * d));
            } else {
                control.phase_stop.store(true, Ordering::Relaxed);
            }
        }
        if self
            .wear_deadline
            .get()
            .is_some_and(|d| Instant::now() >= d)
        {
            control.phase_stop.store(true, Ordering::Relaxed);
        }
        g[2] == 1
    }

    fn written_extents(&self, local: &[(u32, u64)], total_jobs: u32) -> Option<Vec<u64>> {
        if !self.stonewalled.get() {
            return None;
        }
        let mut v = vec![0u64; total_jobs as usize];
        for &(j, b) in local {
            if let Some(x) = v.get_mut(j as usize) {
                *x = b;
            }
        }
        Some(self.world.max_u64(&v))
    }
}
