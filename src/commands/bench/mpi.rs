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
//!    [`storlab_cluster::bench::ClusterSync`]: per phase, all ranks agree on errors, leave a barrier
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
use crate::commands::outfile::Permit;
use anyhow::{Result, anyhow};
use std::sync::Arc;
use storlab_bench::cluster::clients;
use storlab_bench::{Control, ResolvedJob, SafetyOptions};
use storlab_cluster::Comm;
use storlab_cluster::bench::{
    ClusterSync, Ranks, Step, SyncOptions, TargetMsg, check_files, local_job,
};
use storlab_cluster::mpi::{Mpi, MpiComm};
use storlab_types::{BenchReport, CacheMode, PhaseParams, RepeatInfo};

/// Whether this process was started by an MPI launcher.
pub fn launched() -> bool {
    storlab_cluster::launched()
}

/// A failed collective step: rank 0 reports it, the others stay quiet.
enum Stop {
    Report(anyhow::Error),
    Quiet,
}

/// The communicator and what every rank knows about every other.
type World<'a> = Ranks<&'a MpiComm>;

/// A step every rank took: if any failed, rank 0 reports the first
/// failure (its own as it is; another rank's with its rank and node).
fn checked<T>(world: &World, what: &str, r: Result<T>) -> Result<T, Stop> {
    let msg = r.as_ref().err().map(|e| format!("{e:#}"));
    match world.first_failure(what, msg) {
        Step::Ok => r.map_err(|_| Stop::Quiet),
        Step::Report(m) => Err(Stop::Report(anyhow!(m))),
        Step::Quiet => Err(Stop::Quiet),
    }
}

/// `storlab bench` under MPI: the whole run on every rank.
pub fn execute(cmd: BenchCommand, planned: Result<super::PlannedJob>) -> Result<Outcome> {
    let mut mpi = Mpi::init()?;
    let node = storlab_cluster::mpi::node_name();
    mpi.abort_on_panic(&node, PANIC_EXIT);
    let mem_here = storlab_host::host_info().mem_total_bytes;
    let world = Ranks::exchange(mpi.comm(), &node, mem_here);
    let rank = world.rank();
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
    let code_all = world.comm.broadcast_u64(code);
    drop(world);
    mpi.finish(); // the default panic hook again, then MPI_Finalize
    Ok(outcome_of(if rank == 0 { code } else { code_all }))
}

/// The exit code of every rank when one panicked (a hard error).
const PANIC_EXIT: i32 = 2;

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
    world.client_order(matches!(by, ClientsBy::Node))
}

fn run_all(
    world: &World,
    cmd: BenchCommand,
    planned: Result<super::PlannedJob>,
) -> Result<Outcome, Stop> {
    let mut planned = checked(world, "cannot plan the job", planned)?;
    // Before anything is created: every rank runs the same job.
    agree_on_job(world, &cmd, &planned)?;
    test_slow_rank(&mut planned);
    // The output rules hold under MPI too (never the database, a device or
    // someone else's file), checked by rank 0 before anything is created.
    let paths = if world.root() {
        super::check_paths(planned.target.as_deref(), &cmd.run)
    } else {
        Ok(None)
    };
    let json_out = checked(world, "refused", paths)?;
    // Signals are watched from before any scratch file exists, once for
    // every client count: a Ctrl-C between two counts is not forgotten.
    let signals = checked(
        world,
        "cannot install the signal handlers",
        Signals::install(),
    )?;
    let by = cmd.cluster.clients_by.unwrap_or_default();
    let counts = cmd
        .cluster
        .clients
        .clone()
        .map_or_else(|| vec![world.size()], |c| c.0);
    if let Some(&k) = counts.iter().find(|&&k| k > world.size()) {
        return Err(if world.root() {
            Stop::Report(anyhow!(
                "--clients {k}: only {} ranks were launched; launch at least {k} (mpirun -np {k}) or use smaller counts",
                world.size()
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
                && matches!(cmd.run.out.format(), super::OutputFormat::Table)
            {
                let _ = crate::output::print(&format!("Repeat {} of {}\n", i.index, i.count));
            }
            let (outcome, report, id) = run_once(
                world,
                &cmd,
                &planned,
                (clients, counts.len() > 1),
                info.as_ref(),
                (&signals, json_out.as_ref()),
            )?;
            if let Some(r) = report {
                reps.push(r.clone());
                runs.push((r, id));
            }
            // Every rank goes on (or not) with rank 0's outcome.
            let code = world.comm.broadcast_u64(code_of(outcome));
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
    let text = checked(
        world,
        "cannot describe the job",
        super::cluster_agree::canonical_job(cmd, planned).map_err(anyhow::Error::from),
    )?;
    let texts = match world.agree_on_job(&text) {
        Ok(()) => return Ok(()),
        Err(None) => return Err(Stop::Quiet),
        Err(Some(texts)) => texts,
    };
    Err(Stop::Report(anyhow!(
        "{}",
        storlab_bench::cluster::agree::describe_mismatch(&texts).unwrap_or_else(|| {
            "ranks were started with different options (their jobs' digests differ); \
             start every rank with the same command line"
                .into()
        })
    )))
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
    (signals, json_out): (&Signals, Option<&Permit>),
) -> Result<(Outcome, Option<BenchReport>, Option<i64>), Stop> {
    let k = clients.len() as u32;
    let args = &cmd.run;
    // Rank 0 checks the store and the tags before any file exists.
    let sink = if world.root() {
        let mut extra: Vec<(&str, String)> = if scaling {
            vec![("clients", k.to_string())]
        } else {
            Vec::new()
        };
        extra.extend(repeat.map(|r| ("repeat_group", r.group.clone())));
        let r = super::open_sink_tagged(args, &extra).map(|mut s| {
            s.json_out_to(json_out.cloned());
            s
        });
        Some(r)
    } else {
        None
    };
    let sink = checked(world, "cannot open the results database", sink.transpose())?;
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
    let prepared = checked(world, "cannot prepare the target", prepared.transpose())?;
    let msg = prepared.as_ref().map(TargetMsg::of);
    let msg = match TargetMsg::broadcast(&world.comm, msg.as_ref()) {
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
    let numjobs = planned.phases.iter().map(|p| p.numjobs).collect();
    let opts = SyncOptions {
        reorder: cmd.cluster.reorder_tasks,
        stonewall: cmd.cluster.stonewall,
        wear_out: cmd.cluster.stonewall_wear_out,
        clients_by: cmd.cluster.clients_by.unwrap_or_default().as_str().into(),
    };
    let sync = ClusterSync::new(world, opts, clients, numjobs);
    let me = sync.me();
    let mut job = local_job(world.node(), &planned.phases, &msg, me);
    if let Some(label) = crate::commands::config::get()
        .ok()
        .and_then(|c| c.host.clone())
    {
        job.host.hostname = label;
    }
    // Each client opens its files on its node before any I/O.
    let open = check_files(&job, me).map_err(anyhow::Error::from);
    if let Err(e) = checked(world, "cannot open the target on this node", open) {
        cleanup(&prepared);
        return Err(e);
    }
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
    if cmd.cluster.reorder_tasks && sync.shift().is_none() {
        warnings.push(
            "--reorder-tasks: every client is on one node, so each reads another rank's data \
             but through the same node's page cache"
                .into(),
        );
    }
    let header = BenchReport {
        warnings,
        repeat: repeat.cloned(),
        ..BenchReport::new(job.host.clone(), msg.info.clone())
    };
    let mut sink = sink;
    let begun = match sink.as_mut() {
        Some(s) => s.begin("bench", &header),
        None => Ok(()),
    };
    if let Err(e) = checked(world, "cannot start the run", begun) {
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
    let ran = sync.run(&job, &control, |p| {
        if let Some(s) = sink.as_mut() {
            s.phase(p);
        }
    });
    let (outcome, merged, stop_reason) = (ran.local, ran.merged, ran.stop_reason);
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
    let print = repeat.is_none() || matches!(args.out.format(), super::OutputFormat::Table);
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
    let quiet = args.quiet && matches!(args.out.format(), super::OutputFormat::Table);
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
