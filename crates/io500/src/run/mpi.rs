//! `mpirun -np N storlab io500`: one io500 rank per process, every rank
//! running its own share of each phase on its main thread (the only one
//! that talks to MPI), in io500's order, with a collective step between
//! phases as io500 has a barrier there. The phases are the ones
//! `run::drive` runs for ranks as threads, over a communicator:
//!
//! 1. every rank resolves the job from its own options and config; a rank
//!    that cannot stops every rank (rank 0 says why, exit 2), and the
//!    ranks compare a digest of the resolved job, the target as it
//!    resolves and the storlab version before anything is made (the
//!    never-destroy rule: ranks that disagree make nothing);
//! 2. rank 0 opens the store, makes storlab's own directory, checks the
//!    free space and makes ior-easy's and ior-hard's files for every rank;
//!    every rank checks it sees them;
//! 3. the IOR phases: each rank steps its own bench job (one job, its
//!    place among every rank's) through storlab-cluster's `ClusterSync`
//!    (a start barrier, the 20 ms reductions that spread the stonewall
//!    with IOR's wear-out: every rank writes up to the most any rank
//!    wrote, the merge of every rank's part at rank 0 over the global
//!    window); what each rank wrote is carried to the read
//!    ([`storlab_bench::Carried`]), which reads exactly that;
//! 4. the mdtest phases: each rank's `md::RankMd` over `CommSync`
//!    (the create count every rank holds shared, the rank shift), every
//!    rank's figures gathered to rank 0 and merged exactly;
//! 5. the timestamp is made by rank 0 (its ctime broadcast); find walks
//!    the data directory with every rank, as pfind does (rank 0 starts at
//!    the top, a rank out of work is given half of the others' queues),
//!    the files looked at summed over the ranks;
//! 6. rank 0 marks, scores, prints and stores the run (kind `io500`), then
//!    removes everything unless `--keep`.

use super::{
    Config, Job, Outcome, Ran, RunError, Stop, blank, drive, find, find_result, ior, ior_jobs,
    make_dirs, md, md_specs, reorder, timestamp, unknown,
};
use md::Which;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use storlab_bench::ResolvedJob;
use storlab_cluster::Comm;
use storlab_cluster::bench::{ClusterSync, Ranks, Step, SyncOptions, TargetMsg, local_job};
use storlab_cluster::md::{CommSync, gather};
use storlab_cluster::step::{Failed, RankStop};
use storlab_md::Op;
use storlab_types::{
    ClusterPhase, DirStats, PhaseParams, PhaseResult, RankResult, STORLAB_VERSION, TargetInfo,
};

/// What the front end does around an io500 run under MPI.
pub trait Io500Front {
    /// Rank 0's run: its store and header.
    type Run;
    /// Rank 0, before anything is made: the output paths checked, the
    /// store opened.
    fn open(&mut self, target: &Path) -> Result<Self::Run, Failed>;
    /// Rank 0, once storlab's own directory is made in the target
    /// (`info`): the run's header saved.
    fn begin(&mut self, run: &mut Self::Run, info: TargetInfo) -> Result<(), Failed>;
    /// Every rank: signals stop `stop` from now on, with the progress
    /// line unless `quiet`; None: the watching ends.
    fn watch(&mut self, stop: Option<(&Arc<Stop>, bool)>);
    /// Rank 0: one phase over every rank, saved at once.
    fn phase(&mut self, run: &mut Self::Run, phase: &PhaseResult);
    /// Rank 0: remove storlab's directory and everything in it.
    fn remove(&mut self, dir: &Path);
    /// Rank 0: the run scored, stored and shown; its exit code.
    fn finish(
        &mut self,
        run: Self::Run,
        ran: Outcome,
        job: &Job,
        cfg: &Config,
    ) -> Result<u8, Failed>;
}

/// `storlab io500` started by an MPI launcher with `n` processes: MPI up,
/// the job resolved on every rank for the communicator's size
/// (`resolve`), [`run_rank`], rank 0's error handed to `report`, MPI
/// finalised; every rank returns rank 0's exit code.
#[cfg(feature = "mpi")]
pub fn launch<F: Io500Front>(
    _n: u32,
    front: &mut F,
    resolve: impl FnOnce(u32) -> Result<(Job, Config), RunError>,
    (target, quiet): (&Path, bool),
    report: impl FnOnce(&Failed),
) -> Result<u8, RunError> {
    let body = |comm: &storlab_cluster::mpi::MpiComm| {
        let node = storlab_cluster::mpi::node_name();
        let resolved = resolve(comm.size()).map_err(|e| e.to_string());
        run_rank(comm, &node, resolved, target, quiet, front)
    };
    storlab_cluster::mpi::launch(None, body, report).map_err(|e| RunError::Setup(e.to_string()))
}

/// Without MPI support (the `mpi` feature), a launch of `n` processes is
/// refused before anything is made.
#[cfg(not(feature = "mpi"))]
pub fn launch<F: Io500Front>(
    n: u32,
    _front: &mut F,
    _resolve: impl FnOnce(u32) -> Result<(Job, Config), RunError>,
    _run: (&Path, bool),
    _report: impl FnOnce(&Failed),
) -> Result<u8, RunError> {
    Err(RunError::Setup(format!(
        "storlab io500 was started by an MPI launcher with {n} processes, but this build has no MPI \
         support: build with `cargo build --release --features mpi`, or run one process with --np N"
    )))
}

/// Rank 0's preparation: the front end's store opened, storlab's own
/// directory made in `target`, the free space checked, the header saved;
/// the directory removed again if a step fails.
pub fn prepare<F: Io500Front>(
    front: &mut F,
    target: &Path,
    job: &Job,
) -> Result<(PathBuf, F::Run), Failed> {
    let mut run = front.open(target)?;
    let (dir, info) = storlab_bench::own_run_dir(target).map_err(Failed::of)?;
    let free = info.free_bytes_before;
    let begun = job
        .check_space(target, free)
        .map_err(Failed::of)
        .and_then(|()| front.begin(&mut run, info));
    match begun {
        Ok(()) => Ok((dir, run)),
        Err(e) => {
            front.remove(&dir);
            Err(e)
        }
    }
}

/// The text every rank digests: everything that decides what a rank does.
pub fn job_text(job: &Job, cfg: &Config, target: &Path) -> String {
    let real = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    format!("{job:?}|{cfg:?}|{}|{STORLAB_VERSION}", real.display())
}

/// The whole io500 run on this rank (collective): rank 0's exit code, or
/// the step that stopped every rank. `resolved`: the job this rank made
/// of its options and config, or why it could not; `node`: this rank's
/// node name.
pub fn run_rank<C: Comm, F: Io500Front>(
    comm: &C,
    node: &str,
    resolved: Result<(Job, Config), String>,
    target: &Path,
    quiet: bool,
    front: &mut F,
) -> Result<u8, RankStop> {
    let world = Ranks::exchange(comm, node, 0);
    let mine = resolved.as_ref().err().cloned();
    step(&world, "bad io500 job", mine)?;
    let Ok((job, cfg)) = resolved else {
        return Err(RankStop::Quiet);
    };
    if let Err(texts) = world.agree_on_job(&job_text(&job, &cfg, target)) {
        let n = comm.size();
        let differ = texts
            .map(|t| {
                t.iter()
                    .enumerate()
                    .filter(|(_, x)| **x != t[0])
                    .map(|(r, _)| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        return Err(RankStop::at_root(
            comm,
            Failed(format!(
                "the {n} ranks resolved different io500 jobs (ranks {differ} differ from rank 0): every rank \
                 must get the same config.ini, options, target and storlab version; nothing was created"
            )),
        ));
    }
    // Rank 0 checks the outputs, opens the store, makes the directory.
    let mut made = None;
    let mut why = Failed(String::new());
    if comm.root() {
        match prepare(front, target, &job) {
            Ok(m) => made = Some(m),
            Err(e) => why = e,
        }
    }
    let run_dir = PathBuf::from(
        comm.broadcast_string(
            &made
                .as_ref()
                .map(|m| m.0.display().to_string())
                .unwrap_or_default(),
        ),
    );
    if run_dir.as_os_str().is_empty() {
        return Err(RankStop::at_root(comm, why));
    }
    let stop = Stop::new(1);
    front.watch(Some((&stop, quiet || !comm.root())));
    if !comm.all(run_dir.is_dir()) {
        front.watch(None);
        if let Some((dir, _)) = &made {
            front.remove(dir);
        }
        return Err(RankStop::at_root(
            comm,
            Failed(format!(
                "not every rank can see {}: io500 under MPI needs TARGET on \
                 a file system every node mounts at the same path",
                run_dir.display()
            )),
        ));
    }
    let mut out = Outcome::default();
    let mut run = made.as_mut().map(|m| &mut m.1);
    let mut prepared = Vec::new();
    let r = phases(
        &world,
        &job,
        &cfg,
        &run_dir,
        &stop,
        &mut prepared,
        &mut out,
        |ph| {
            if let Some(r) = run.as_mut() {
                front.phase(r, ph);
            }
        },
    );
    if let Err(e) = r {
        out.failed = Some(e.to_string());
    }
    if out.stop_reason.is_none() && stop.requested() {
        out.stop_reason = stop.reason();
    }
    front.watch(None);
    // Every rank is done with the files before rank 0 removes them.
    comm.barrier();
    let Some((dir, run)) = made else {
        return Ok(0);
    };
    if !job.keep {
        for p in &prepared {
            p.target.cleanup();
        }
        front.remove(&dir);
    }
    front.finish(run, out, &job, &cfg).map_err(RankStop::Report)
}

/// A step every rank took (`mine`: this rank's failure): every rank stops
/// if one failed, rank 0 saying why.
fn step<C: Comm>(world: &Ranks<C>, what: &str, mine: Option<String>) -> Result<(), RankStop> {
    match world.first_failure(what, mine) {
        Step::Ok => Ok(()),
        Step::Report(m) => Err(RankStop::Report(Failed(m))),
        Step::Quiet => Err(RankStop::Quiet),
    }
}

/// [`step`] inside the run: a failure is the run's (recorded as failed).
fn agreed<C: Comm>(world: &Ranks<C>, what: &str, mine: Option<String>) -> Result<(), RunError> {
    step(world, what, mine).map_err(|e| RunError::Io(e.to_string()))
}

#[allow(clippy::too_many_arguments)]
fn phases<C: Comm>(
    world: &Ranks<C>,
    job: &Job,
    cfg: &Config,
    dir: &Path,
    stop: &Stop,
    prepared: &mut Vec<ResolvedJob>,
    out: &mut Outcome,
    on_phase: impl FnMut(&PhaseResult),
) -> Result<(), RunError> {
    let comm = &world.comm;
    let data = dir.join("datafiles");
    let res = dir.join("results");
    let made = comm.root().then(|| make_dirs(&data, &res)).transpose();
    agreed(
        world,
        "cannot make io500's directories",
        made.err().map(|e| e.to_string()),
    )?;
    let (easy, hard) = ior_jobs(job, cfg);
    let stonewall = Duration::from_secs(job.stonewall_s);
    let mut steppers = Vec::new();
    for (j, sub, control) in [
        (&easy, "ior-easy", &stop.easy),
        (&hard, "ior-hard", &stop.hard),
    ] {
        let local = ior::IorJob {
            ranks: 1,
            ..j.clone()
        }
        .phases();
        let global = comm
            .root()
            .then(|| {
                let all = local
                    .as_ref()
                    .map_err(|e| RunError::Setup(e.to_string()))?
                    .iter()
                    .cloned()
                    .map(|p| PhaseParams {
                        numjobs: comm.size(),
                        ..p
                    })
                    .collect();
                ior::prepare(&data.join(sub), all)
            })
            .transpose();
        let why = local
            .as_ref()
            .err()
            .or(global.as_ref().err())
            .map(|e| e.to_string());
        agreed(world, &format!("cannot prepare {sub}"), why)?;
        let (Ok(local), Ok(global)) = (local, global) else {
            return Err(RunError::Io("another rank failed".into()));
        };
        let msg = TargetMsg::broadcast(comm, global.as_ref().map(TargetMsg::of).as_ref())
            .map_err(|e| RunError::Io(format!("internal error: target message: {e}")))?;
        prepared.extend(global);
        let me = Some(comm.rank());
        let view = local_job(world.node(), &local, &msg, me);
        let open = storlab_cluster::bench::check_files(&view, me).map_err(|e| e.to_string());
        agreed(world, &format!("cannot open {sub}'s files"), open.err())?;
        steppers.push(ior::Stepper::of(view, Arc::clone(control), true, stonewall));
    }
    let [easy_job, hard_job]: [ior::Stepper; 2] = steppers
        .try_into()
        .map_err(|_| RunError::Io("internal error: IOR jobs".into()))?;
    let specs = md_specs(job);
    let bases = [data.join("mdtest-easy"), data.join("mdtest-hard")];
    let clients: Vec<u32> = (0..comm.size()).collect();
    let sync_opts = |stonewall: Option<Duration>| SyncOptions {
        stonewall,
        wear_out: true,
        clients_by: "rank".into(),
        ..SyncOptions::default()
    };
    let numjobs = |s: &ior::Stepper| s.job.phases.iter().map(|p| p.numjobs).collect::<Vec<_>>();
    // IOR's `-C -Q` read shift, as IOR computes it from where the ranks run.
    let shift = |phase: &str| {
        reorder::ior_read_offset(&world.nodes, reorder::ior_read_q(phase, job.file_per_proc))
    };
    let read_sync = |s: &ior::Stepper, phase: &str| {
        ClusterSync::new(world, sync_opts(None), &clients, numjobs(s)).with_read_shift(shift(phase))
    };
    let mut ranks = MpiRanks {
        world,
        job,
        syncs: [
            ClusterSync::new(
                world,
                sync_opts(Some(stonewall)),
                &clients,
                numjobs(&easy_job),
            ),
            read_sync(&easy_job, "ior-easy-read"),
            read_sync(&easy_job, "ior-rnd4K-easy-read"),
        ],
        hard_syncs: [
            ClusterSync::new(
                world,
                sync_opts(Some(stonewall)),
                &clients,
                numjobs(&hard_job),
            ),
            read_sync(&hard_job, "ior-hard-read"),
        ],
        easy: easy_job,
        hard: hard_job,
        md: md::RankMd::new(&specs, bases),
        md_control: &stop.md,
        data: &data,
        stamp: res.join("timestampfile"),
        stamp_ctime_s: 0,
    };
    drive(&mut ranks, job, cfg, stop, out, on_phase)
}

/// One MPI rank's engines: its IOR jobs, its mdtest steps.
struct MpiRanks<'a, C> {
    world: &'a Ranks<C>,
    job: &'a Job,
    /// ior-easy's syncs: its writes (stonewalled, worn out), its read and
    /// its 4 KiB random read (each with IOR's `-C -Q` shift).
    syncs: [ClusterSync<'a, C>; 3],
    hard_syncs: [ClusterSync<'a, C>; 2],
    easy: ior::Stepper,
    hard: ior::Stepper,
    md: md::RankMd<'a>,
    md_control: &'a storlab_md::Control,
    data: &'a Path,
    stamp: PathBuf,
    stamp_ctime_s: i64,
}

impl<C: Comm> super::Ranks for MpiRanks<'_, C> {
    fn stop_requested(&self, here: bool) -> bool {
        self.world.comm.any(here)
    }

    fn stop_reason(&self, here: Option<String>) -> Option<String> {
        self.world.comm.stop_reason(here)
    }

    fn phase(&mut self, name: &str) -> Result<Ran, RunError> {
        match name {
            "ior-easy-write" | "ior-easy-read" | "ior-rnd4K-easy-read" => Ok(self.ior(true, name)),
            "ior-hard-write" | "ior-hard-read" => Ok(self.ior(false, name)),
            "mdtest-easy-write" => self.md(Which::Easy, Op::Create),
            "mdtest-easy-stat" => self.md(Which::Easy, Op::Stat),
            "mdtest-easy-delete" => self.md(Which::Easy, Op::Delete),
            "mdtest-hard-write" => self.md(Which::Hard, Op::Create),
            "mdtest-hard-stat" => self.md(Which::Hard, Op::Stat),
            "mdtest-hard-read" => self.md(Which::Hard, Op::Read),
            "mdtest-hard-delete" => self.md(Which::Hard, Op::Delete),
            "timestamp" => self.timestamp(),
            "find" => Ok(self.find()),
            other => Err(unknown(other)),
        }
    }
}

impl<C: Comm> MpiRanks<'_, C> {
    /// Phase `name` of ior-easy (or ior-hard) on every rank, merged at
    /// rank 0 over the global window.
    fn ior(&mut self, easy: bool, name: &str) -> Ran {
        let (st, syncs): (_, &[ClusterSync<'_, C>]) = if easy {
            (&mut self.easy, &self.syncs)
        } else {
            (&mut self.hard, &self.hard_syncs)
        };
        let i = st.index_of(name);
        let writes = st
            .job
            .phases
            .get(i)
            .is_some_and(|p| p.rw.writes() && !p.rw.reads());
        let sync = if writes {
            &syncs[0]
        } else if name == "ior-rnd4K-easy-read" {
            &syncs[2]
        } else {
            &syncs[1]
        };
        let ran = sync.run_phases(&st.job, &st.control, &mut st.carried, i..i + 1, |_| {});
        let local = ran.local.phases.first();
        let stopped = self
            .world
            .comm
            .any(local.is_none_or(|r| r.interrupted) || ran.stop_reason.is_some());
        Ran {
            result: ran.merged.into_iter().next(),
            stopped,
        }
    }

    /// `op` of mdtest-easy (or -hard) on every rank, every rank's figures
    /// merged at rank 0.
    fn md(&mut self, which: Which, op: Op) -> Result<Ran, RunError> {
        let started = storlab_types::time::now_rfc3339();
        let sync = CommSync(&self.world.comm);
        let r = self.md.step(&sync, self.md_control, which, op);
        let mine = r.as_ref().err().cloned();
        agreed(self.world, "mdtest", mine)?;
        let Ok((part, _stop)) = r else {
            return Err(RunError::Io("another rank failed".into()));
        };
        let parts = gather(&self.world.comm, &part);
        let stopped = self.world.comm.any(part.interrupted);
        let result = if parts.is_empty() {
            None
        } else {
            let spec = &md_specs(self.job)[which as usize];
            let tree = spec.check().map_err(|e| RunError::Setup(e.to_string()))?;
            Some(storlab_md::record::phase_result(
                spec, &tree, &parts, started,
            ))
        };
        Ok(Ran { result, stopped })
    }

    /// Rank 0 makes the timestamp file; every rank gets its ctime.
    fn timestamp(&mut self) -> Result<Ran, RunError> {
        let comm = &self.world.comm;
        let t = comm.root().then(|| timestamp(&self.stamp)).transpose();
        agreed(
            self.world,
            "timestamp",
            t.as_ref().err().map(|e| e.to_string()),
        )?;
        let here = t.ok().flatten().unwrap_or(0);
        self.stamp_ctime_s = comm.broadcast_u64(here as u64) as i64;
        Ok(Ran {
            result: Some(blank(PhaseParams::default())),
            stopped: false,
        })
    }

    /// find as pfind runs it: every rank walks part of the data directory
    /// (rank 0 starts at the top, the others are given work as they run
    /// out), after a barrier; the files looked at are the sum of the
    /// ranks', over the slowest rank's time, each rank's part kept.
    fn find(&mut self) -> Ran {
        let comm = &self.world.comm;
        let started = storlab_types::time::now_rfc3339();
        comm.barrier();
        let parts =
            find::find_on_ranks(comm, self.data, self.stamp_ctime_s, &AtomicBool::new(false));
        let result = comm.root().then(|| {
            let mut r = find_result(&find::FindCount::sum(&parts), comm.size(), started);
            r.cluster = Some(find_ranks(&parts, &self.world.nodes));
            r
        });
        Ran {
            result,
            stopped: false,
        }
    }
}

/// find's per-rank figures (files looked at, each rank's own time) as a
/// phase's cluster section.
fn find_ranks(parts: &[find::FindCount], nodes: &[String]) -> ClusterPhase {
    let mut distinct: Vec<&String> = nodes.iter().collect();
    distinct.sort();
    distinct.dedup();
    let n = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    ClusterPhase {
        clients: n,
        ranks: n,
        nodes: u32::try_from(distinct.len()).unwrap_or(u32::MAX),
        clients_by: "rank".into(),
        layout: "find".into(),
        window_ns: parts.iter().map(|p| p.elapsed_ns).max().unwrap_or(0),
        per_rank: (0u32..)
            .zip(parts)
            .map(|(rank, p)| RankResult {
                rank,
                node: nodes.get(rank as usize).cloned().unwrap_or_default(),
                first_job: rank,
                end_ns: p.elapsed_ns,
                total: DirStats {
                    ops: p.total,
                    iops: p.total as f64 / (p.elapsed_ns as f64 / 1e9).max(1e-9),
                    ..DirStats::default()
                },
                ..RankResult::default()
            })
            .collect(),
        ..ClusterPhase::default()
    }
}
