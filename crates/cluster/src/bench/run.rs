//! `storlab bench` on every rank of a multi-client run, behind the front
//! end's store, live line and printing ([`BenchFront`]). What each rank
//! does, in order:
//!
//! 1. plans the phases from the same options and job file (the front end
//!    did; a rank that could not makes every rank stop, rank 0 saying
//!    why); then the ranks compare a digest of the canonical job each
//!    resolved ([`storlab_bench::cluster::agree`]): ranks started with
//!    different options stop before any file exists, and rank 0 names the
//!    ranks and options that differ;
//! 2. for each client count (`--clients`, default all ranks) and each
//!    repeat (points of the sweeper's one loop, [`storlab_bench::sweeper::drive()`],
//!    the first failed run stopping every rank): rank 0 opens the store, resolves the target and creates
//!    every client's files (a file per job per rank, or the one shared
//!    file) and sends their names to all; each client checks it can open
//!    its files on its node before any I/O;
//! 3. runs the phases through [`ClusterSync`] (per phase: agreement on
//!    errors, the start barrier, the 20 ms reductions), each phase's parts
//!    merged at rank 0 and saved at once;
//! 4. rank 0 removes the files (unless `--keep`), gathers the warnings
//!    (its own, the target's, each node's page cache) and hands the report
//!    to the front end; every rank goes on with rank 0's outcome.
//!
//! Ranks that are not among the first k clients run every collective step
//! with no jobs: they wait at the barriers.

use super::{ClusterSync, Ranks, Step, SyncOptions, TargetMsg, check_rank_files, local_job};
use crate::comm::Comm;
use crate::step::{Failed, RankStop};
use std::path::Path;
use std::sync::Arc;
use storlab_bench::cluster::agree::{JobCanon, joined_tags, target_as_meant};
use storlab_bench::cluster::clients;
use storlab_bench::jobspec::Job;
use storlab_bench::sweeper::{
    Before, OnFailure, Outcome, PointInfo, Points, Progress, Silent, drive,
};
use storlab_bench::{Control, ResolvedJob, SafetyOptions};
use storlab_types::time::now_rfc3339;
use storlab_types::{
    BenchReport, CacheMode, PhaseParams, PhaseResult, RepeatInfo, STORLAB_VERSION,
};

/// What the front end does around a multi-client run: rank 0's store and
/// printing, every rank's signals and live line. Called from the thread
/// that talks to the other ranks.
pub trait BenchFront {
    /// Rank 0's store of one run.
    type Sink;
    /// The live line of one run.
    type Live;
    /// Rank 0, before anything is created: the output paths are allowed.
    fn check_outputs(&mut self, target: Option<&Path>) -> Result<(), Failed>;
    /// Every rank, before any scratch file exists: watch for signals.
    fn watch_signals(&mut self) -> Result<(), Failed>;
    /// Rank 0: the store for one run, its tags with `extra` added.
    fn open_sink(&mut self, extra: &[(&str, String)]) -> Result<Self::Sink, Failed>;
    /// Rank 0: the run's header saved.
    fn begin(&mut self, sink: &mut Self::Sink, header: &BenchReport) -> Result<(), Failed>;
    /// Rank 0: one merged phase, saved at once.
    fn phase(&mut self, sink: &mut Self::Sink, phase: &PhaseResult);
    /// The live line of the phases named (shown only when not `quiet`);
    /// it also turns a signal into a stop through `control`.
    fn live_start(
        &mut self,
        control: &Arc<Control>,
        phases: Vec<String>,
        quiet: bool,
    ) -> Self::Live;
    fn live_stop(&mut self, live: Self::Live);
    /// Rank 0: where the page cache sits above the disk holding `file`.
    fn cache_warnings(&self, file: &Path, modes: &[CacheMode]) -> Vec<String>;
    /// Rank 0: a repeat of `--repeat N` starts.
    fn repeat_starts(&mut self, repeat: &RepeatInfo);
    /// Rank 0: the run's report stored, written and shown; its exit code
    /// and run id.
    fn emit(
        &mut self,
        report: BenchReport,
        sink: Self::Sink,
        repeat: Option<&RepeatInfo>,
    ) -> (u8, Option<i64>);
    /// Rank 0: every repeat of one client count ran (`reports`).
    fn repeats_done(&mut self, group: &str, count: u32, reports: &[BenchReport]);
    /// Rank 0: every client count ran (several): each run and its id.
    fn counts_done(&mut self, runs: &[(BenchReport, Option<i64>)]);
    /// Rank 0: `--write-iolog`: every rank wrote its file (in rank order).
    fn iologs_written(&mut self, _files: &[std::path::PathBuf]) {}
}

/// The run-level options of a multi-client run (the same on every rank).
#[derive(Debug, Clone, Default)]
pub struct ClusterRun {
    /// `--clients`: the client counts (none: every rank).
    pub clients: Option<Vec<u32>>,
    /// `--clients-by node`: the first k clients spread over nodes.
    pub by_node: bool,
    pub sync: SyncOptions,
    /// `--repeat N`.
    pub repeat: u32,
    pub keep: bool,
    pub allow_destroy: bool,
    /// `--monitor` (not sampled in multi-client runs: a warning).
    pub monitor: bool,
    /// `-q`.
    pub quiet: bool,
    /// The configured host label, if any.
    pub host_label: Option<String>,
    /// `--tag` as given (not the config file's defaults: rank 0's are
    /// stored), `--note`, `--design`.
    pub tags: Vec<(String, String)>,
    pub note: Option<String>,
    pub design: Option<String>,
    /// `--write-iolog FILE`: each rank records its I/O in FILE with its
    /// rank inserted ([`super::iolog`]).
    pub iolog: Option<std::path::PathBuf>,
}

impl ClusterRun {
    /// This rank's resolved job as canonical JSON (same job, same text):
    /// what the ranks compare before any file exists.
    pub fn canonical_job(&self, planned: &Job) -> serde_json::Result<String> {
        JobCanon {
            version: STORLAB_VERSION,
            target: target_as_meant(planned.target.as_deref()),
            phases: &planned.phases,
            clients: self.clients.as_deref(),
            clients_by: &self.sync.clients_by,
            stonewall_ns: self
                .sync
                .stonewall
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            stonewall_wear_out: self.sync.wear_out,
            reorder_tasks: self.sync.reorder,
            repeat: self.repeat,
            keep: self.keep,
            allow_destroy: self.allow_destroy,
            monitor: self.monitor,
            tag: joined_tags(&self.tags),
            note: self.note.as_deref(),
            design: self.design.as_deref(),
        }
        .to_text()
    }
}

/// A step every rank took: if any failed, rank 0 reports the first
/// failure (its own as it is; another rank's with its rank and node).
pub(super) fn checked<C: Comm, T>(
    world: &Ranks<C>,
    what: &str,
    r: Result<T, Failed>,
) -> Result<T, RankStop> {
    let msg = r.as_ref().err().map(|e| e.0.clone());
    match world.first_failure(what, msg) {
        Step::Ok => r.map_err(|_| RankStop::Quiet),
        Step::Report(m) => Err(RankStop::Report(Failed(m))),
        Step::Quiet => Err(RankStop::Quiet),
    }
}

/// A test hook (debug builds only): `STORLAB_TEST_RATE_IOPS=N` caps
/// every phase of this rank at N I/Os per second after the ranks agreed on
/// one job, so a test can make one rank slower than the others (the
/// option itself must be the same on every rank).
fn test_slow_rank(planned: &mut Job) {
    let rate = std::env::var("STORLAB_TEST_RATE_IOPS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok());
    if let Some(rate) = rate.filter(|_| cfg!(debug_assertions)) {
        for p in &mut planned.phases {
            p.rate_iops = rate;
        }
    }
}

/// The whole multi-client run on this rank (collective); rank 0's exit
/// code, or the step that stopped every rank.
pub fn run_bench<C: Comm, F: BenchFront>(
    world: &Ranks<C>,
    planned: Result<Job, Failed>,
    run: &ClusterRun,
    front: &mut F,
) -> Result<u8, RankStop> {
    let mut planned = checked(world, "cannot plan the job", planned)?;
    // Before anything is created: every rank runs the same job.
    agree_on_job(world, run.canonical_job(&planned).map_err(Failed::of))?;
    test_slow_rank(&mut planned);
    // The output rules hold under MPI too, checked by rank 0 before
    // anything is created.
    let paths = if world.root() {
        front.check_outputs(planned.target.as_deref())
    } else {
        Ok(())
    };
    checked(world, "refused", paths)?;
    let iologs = super::iolog::start(world, run.iolog.as_deref())?;
    // Signals are watched from before any scratch file exists, once for
    // every client count: a Ctrl-C between two counts is not forgotten.
    checked(
        world,
        "cannot install the signal handlers",
        front.watch_signals(),
    )?;
    let counts = run.clients.clone().unwrap_or_else(|| vec![world.size()]);
    if let Some(&k) = counts.iter().find(|&&k| k > world.size()) {
        return Err(RankStop::at_root(
            &world.comm,
            Failed(format!(
                "--clients {k}: only {} ranks were launched; launch at least {k} (mpirun -np {k}) or use smaller counts",
                world.size()
            )),
        ));
    }
    if let Err(why) = group_ranks_fit(&planned, run, world.size()) {
        return Err(RankStop::at_root(&world.comm, Failed(why)));
    }
    let order = world.client_order(run.by_node);
    // --repeat N (IOR's -i): the job N times per client count, each a run
    // of its own tagged repeat_group, then IOR's summary (rank 0). Each
    // count × repeat is a point of the sweeper's loop; a failed run stops
    // every rank.
    let mut points = ClientCounts {
        world,
        run,
        planned: &planned,
        front,
        iolog: iologs.as_ref().map(super::iolog::Iologs::sink),
        scaling: counts.len() > 1,
        counts,
        order,
        repeats: run.repeat.max(1),
        group: storlab_bench::repeat::group_id(),
        runs: Vec::new(),
        reps: Vec::new(),
        last: 0,
    };
    let group = points.group.clone();
    drive(&group, &mut points, OnFailure::Stop, &mut Silent, &|| false)?;
    if world.root() && points.scaling {
        points.front.counts_done(&points.runs);
    }
    points.iolog = None;
    if let Some(logs) = iologs {
        let files = logs.finish(world)?;
        if world.root() {
            points.front.iologs_written(&files);
        }
    }
    Ok(points.last)
}

/// The runs of a multi-client bench (each client count × each repeat) as
/// the sweeper's points.
struct ClientCounts<'a, C, F> {
    world: &'a Ranks<C>,
    run: &'a ClusterRun,
    planned: &'a Job,
    front: &'a mut F,
    /// `--write-iolog`: this rank's recording.
    iolog: Option<Arc<storlab_bench::iolog::Sink>>,
    counts: Vec<u32>,
    /// Several client counts: each run is tagged with its count.
    scaling: bool,
    /// The ranks in the order they become clients.
    order: Vec<u32>,
    /// `--repeat N` (at least 1).
    repeats: u32,
    group: String,
    /// Rank 0's run of each point so far, and its id.
    runs: Vec<(BenchReport, Option<i64>)>,
    /// The repeats of the client count running.
    reps: Vec<BenchReport>,
    /// Rank 0's exit code of the last run, as every rank knows it.
    last: u8,
}

impl<C: Comm, F: BenchFront> Points for ClientCounts<'_, C, F> {
    type Error = RankStop;

    fn labels(&self) -> Vec<String> {
        let count = self.repeats;
        self.counts
            .iter()
            .flat_map(|k| (1..=count).map(move |i| format!("clients={k} repeat={i}/{count}")))
            .collect()
    }

    fn before(&mut self, _: usize) -> Before {
        Before::ToRun
    }

    fn run(&mut self, info: &PointInfo, _: &mut dyn Progress) -> Result<Outcome, RankStop> {
        let (world, count) = (self.world, self.repeats);
        let k = self.counts[info.index / count as usize];
        let index = (info.index % count as usize) as u32 + 1;
        if index == 1 {
            self.reps.clear();
        }
        let clients = &self.order[..k as usize];
        let repeat = (count > 1).then(|| RepeatInfo {
            group: self.group.clone(),
            index,
            count,
        });
        if world.root()
            && let Some(i) = &repeat
        {
            self.front.repeat_starts(i);
        }
        let one = One {
            world,
            run: self.run,
            planned: self.planned,
            clients,
            scaling: self.scaling,
            repeat: repeat.as_ref(),
            iolog: self.iolog.as_ref(),
        };
        let (code, report, id) = one.run(&mut *self.front)?;
        if let Some(r) = report {
            self.reps.push(r.clone());
            self.runs.push((r, id));
        }
        // Every rank goes on (or not) with rank 0's outcome.
        self.last = u8::try_from(world.comm.broadcast_u64(u64::from(code)))
            .unwrap_or(crate::step::ERROR_EXIT);
        if self.last != 0 {
            return Ok(Outcome::Failed(format!("exit code {}", self.last)));
        }
        if world.root() && count > 1 && index == count {
            self.front.repeats_done(&self.group, count, &self.reps);
        }
        Ok(Outcome::Done)
    }
}

/// Job groups given to ranks (`--group-ranks`): the sets cover the `n`
/// ranks launched, and the run options that would move a rank's jobs are
/// refused with them (every rank decides alike: the job is agreed on).
fn group_ranks_fit(planned: &Job, run: &ClusterRun, n: u32) -> Result<(), String> {
    if !planned
        .phases
        .iter()
        .any(storlab_bench::groups::has_rank_sets)
    {
        return Ok(());
    }
    storlab_bench::groups::check_ranks_fit(&planned.phases, n).map_err(|e| e.to_string())?;
    if run
        .clients
        .as_ref()
        .is_some_and(|c| c.iter().any(|&k| k != n))
    {
        return Err(
            "--clients with --group-ranks: the groups' rank sets decide which ranks run; drop --clients"
                .into(),
        );
    }
    if run.sync.reorder {
        return Err(
            "--reorder-tasks with --group-ranks: a group's ranks read their own files; drop --reorder-tasks"
                .into(),
        );
    }
    Ok(())
}

/// Every rank resolved the same job, or none goes on: the digests of the
/// canonical jobs are all-gathered (so every rank takes the same
/// decision); on a difference the jobs go to rank 0, which names the ranks
/// and options that differ.
fn agree_on_job<C: Comm>(world: &Ranks<C>, text: Result<String, Failed>) -> Result<(), RankStop> {
    let text = checked(world, "cannot describe the job", text)?;
    let texts = match world.agree_on_job(&text) {
        Ok(()) => return Ok(()),
        Err(None) => return Err(RankStop::Quiet),
        Err(Some(texts)) => texts,
    };
    Err(RankStop::Report(Failed(
        storlab_bench::cluster::agree::describe_mismatch(&texts).unwrap_or_else(|| {
            "ranks were started with different options (their jobs' digests differ); \
             start every rank with the same command line"
                .into()
        }),
    )))
}

/// One run with the first `clients.len()` clients.
struct One<'a, C> {
    world: &'a Ranks<C>,
    run: &'a ClusterRun,
    planned: &'a Job,
    clients: &'a [u32],
    /// Several client counts: each run is tagged with its count.
    scaling: bool,
    repeat: Option<&'a RepeatInfo>,
    iolog: Option<&'a Arc<storlab_bench::iolog::Sink>>,
}

/// Rank 0's store and files of one run.
struct Prepared<S> {
    sink: S,
    job: ResolvedJob,
}

/// What every rank knows once rank 0 prepared the run: rank 0's store
/// and files (none elsewhere) and the target message.
type Ready<S> = (Option<Prepared<S>>, TargetMsg);

impl<C: Comm> One<'_, C> {
    /// Rank 0's exit code, report and run id.
    fn run<F: BenchFront>(
        &self,
        front: &mut F,
    ) -> Result<(u8, Option<BenchReport>, Option<i64>), RankStop> {
        let world = self.world;
        let (prepared, msg) = self.prepare(front)?;
        if msg.shared
            && self
                .planned
                .phases
                .iter()
                .any(storlab_bench::groups::has_rank_sets)
        {
            if let Some(p) = &prepared {
                p.job.target.cleanup();
            }
            return Err(RankStop::at_root(
                &world.comm,
                Failed(
                    "--group-ranks needs a directory target (each group's jobs write files of their own): \
                     a single file or block device is not supported with group ranks yet"
                        .into(),
                ),
            ));
        }
        let cleanup = |p: &Option<Prepared<F::Sink>>| {
            if let Some(p) = p {
                p.job.target.cleanup();
            }
        };
        let numjobs = self.planned.phases.iter().map(|p| p.numjobs).collect();
        let sync = ClusterSync::new(world, self.run.sync.clone(), self.clients, numjobs)
            .with_phases(&self.planned.phases);
        let me = sync.me();
        let mut job = local_job(world.node(), &self.planned.phases, &msg, me);
        if let Some(label) = &self.run.host_label {
            job.host.hostname = label.clone();
        }
        // Each client opens its files on its node before any I/O.
        let open = check_rank_files(&job, me, world.rank()).map_err(Failed::of);
        if let Err(e) = checked(world, "cannot open the target on this node", open) {
            cleanup(&prepared);
            return Err(e);
        }
        let warnings = self.warnings(front, &msg, prepared.as_ref().map(|p| &p.job), &sync);
        let header = BenchReport {
            warnings,
            repeat: self.repeat.cloned(),
            ..BenchReport::new(job.host.clone(), msg.info.clone())
        };
        let mut prepared = prepared;
        let begun = match prepared.as_mut() {
            Some(p) => front.begin(&mut p.sink, &header),
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
        if let Some(sink) = self.iolog {
            control.record_iolog(Arc::clone(sink));
        }
        let names = job.phases.iter().map(|p| p.name.clone()).collect();
        let quiet = self.run.quiet || !world.root();
        let live = front.live_start(&control, names, quiet);
        let ran = {
            let mut sink = prepared.as_mut().map(|p| &mut p.sink);
            sync.run(&job, &control, |p| {
                if let Some(s) = sink.as_mut() {
                    front.phase(s, p);
                }
            })
        };
        front.live_stop(live);
        // Every rank is done with the files before rank 0 removes them.
        world.comm.barrier();
        let keep = self.run.keep && ran.local.stop_reason.is_none() && ran.stop_reason.is_none();
        let Some(prepared) = prepared else {
            return Ok((0, None, None));
        };
        if !keep {
            prepared.job.target.cleanup();
        }
        let mut target = header.target.clone();
        target.kept = keep && target.created_by_storlab;
        let mut warnings = header.warnings.clone();
        warnings.extend(ran.local.warnings);
        let stop_reason = ran.stop_reason.or(ran.local.stop_reason);
        let report = BenchReport {
            finished_at: now_rfc3339(),
            interrupted: stop_reason.is_some(),
            stop_reason,
            target,
            phases: ran.merged,
            warnings,
            ..header
        };
        let (code, id) = front.emit(report.clone(), prepared.sink, self.repeat);
        Ok((code, Some(report), id))
    }

    /// Rank 0 checks the store and the tags, then creates every client's
    /// files (the phases scaled to k ranks) and tells every rank about
    /// them (collective).
    fn prepare<F: BenchFront>(&self, front: &mut F) -> Result<Ready<F::Sink>, RankStop> {
        let world = self.world;
        let k = self.clients.len() as u32;
        let sink = if world.root() {
            let mut extra: Vec<(&str, String)> = if self.scaling {
                vec![("clients", k.to_string())]
            } else {
                Vec::new()
            };
            extra.extend(self.repeat.map(|r| ("repeat_group", r.group.clone())));
            Some(front.open_sink(&extra))
        } else {
            None
        };
        let sink = checked(world, "cannot open the results database", sink.transpose())?;
        let global: Vec<PhaseParams> = self
            .planned
            .phases
            .iter()
            .map(|p| {
                if storlab_bench::groups::has_rank_sets(p) {
                    // Each group's jobs on each of its ranks.
                    storlab_bench::groups::scaled_for_ranks(p)
                } else {
                    PhaseParams {
                        numjobs: p.numjobs * k,
                        ..p.clone()
                    }
                }
            })
            .collect();
        let prepared = sink.map(|sink| {
            let safety = SafetyOptions {
                allow_destroy: self.run.allow_destroy,
            };
            storlab_bench::prepare(self.planned.target.as_deref(), global, safety)
                .map(|job| Prepared { sink, job })
                .map_err(Failed::of)
        });
        let prepared = checked(world, "cannot prepare the target", prepared.transpose())?;
        let msg = prepared.as_ref().map(|p| TargetMsg::of(&p.job));
        match TargetMsg::broadcast(&world.comm, msg.as_ref()) {
            Ok(m) => Ok((prepared, m)),
            Err(e) => Err(RankStop::at_root(
                &world.comm,
                Failed(format!("internal error: target message: {e}")),
            )),
        }
    }

    /// The run's warnings: the plan's, the target's (the page cache is
    /// judged per node instead), each node's page cache, where O_DIRECT
    /// stops above the disk (rank 0's view), and what a multi-client run
    /// does not do.
    fn warnings<F: BenchFront>(
        &self,
        front: &F,
        msg: &TargetMsg,
        prepared: Option<&ResolvedJob>,
        sync: &ClusterSync<'_, C>,
    ) -> Vec<String> {
        let planned = self.planned;
        let mut warnings: Vec<String> = planned.warnings.clone();
        warnings.extend(
            msg.warnings
                .iter()
                .filter(|w| !w.starts_with("buffered I/O on a working set"))
                .cloned(),
        );
        warnings.extend(clients::working_set_warnings(
            &self.world.nodes,
            &self.world.mem,
            &planned.phases,
            self.clients,
        ));
        if let Some(f) = prepared.and_then(|j| j.target.files.first()) {
            let modes: Vec<CacheMode> = planned.phases.iter().map(|p| p.cache).collect();
            warnings.extend(front.cache_warnings(&f.path, &modes));
        }
        if self.run.monitor {
            warnings.push(
                "--monitor is not sampled in multi-client runs: run `storlab monitor` on the nodes"
                    .into(),
            );
        }
        if self.run.sync.reorder && sync.shift().is_none() {
            warnings.push(
                "--reorder-tasks: every client is on one node, so each reads another rank's data \
                 but through the same node's page cache"
                    .into(),
            );
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_bench::cluster::agree::{describe_mismatch, digest};
    use storlab_bench::spec_from_pairs;

    /// The canonical job of a rank that planned `pairs` on `target` with
    /// the run options `run`.
    fn job_on(target: &str, pairs: &[(&str, &str)], run: &ClusterRun) -> String {
        let spec =
            spec_from_pairs(pairs.iter().copied()).unwrap_or_else(|e| panic!("{pairs:?}: {e}"));
        let planned = storlab_bench::jobspec::build(None, Some(Path::new(target)), &spec).unwrap();
        run.canonical_job(&planned).unwrap()
    }

    fn base_run() -> ClusterRun {
        ClusterRun {
            sync: SyncOptions {
                clients_by: "rank".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    const BASE: &[(&str, &str)] = &[
        ("rw", "write"),
        ("size", "4M"),
        ("engine", "psync"),
        ("cache", "cold"),
    ];

    /// The base job with `extra` options on top (bs 4k unless given) and
    /// the run options changed by `edit`.
    fn with(extra: &[(&str, &str)], edit: impl FnOnce(&mut ClusterRun)) -> String {
        let mut pairs = BASE.to_vec();
        if !extra.iter().any(|(k, _)| *k == "bs") {
            pairs.push(("bs", "4k"));
        }
        pairs.extend_from_slice(extra);
        let mut run = base_run();
        edit(&mut run);
        job_on("/tmp/agree-target", &pairs, &run)
    }

    fn plain(extra: &[(&str, &str)]) -> String {
        with(extra, |_| {})
    }

    #[test]
    fn the_same_options_give_the_same_text_and_digest() {
        let (a, b) = (plain(&[]), plain(&[]));
        assert_eq!(a, b);
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(describe_mismatch(&[a.clone(), b, a.clone()]), None);
        // What only rank 0 acts on does not count.
        let c = with(&[], |r| {
            r.quiet = true;
            r.host_label = Some("n7".into());
        });
        assert_eq!(digest(&a), digest(&c));
    }

    #[test]
    fn the_digest_is_stable_and_tells_one_byte_apart() {
        let a = plain(&[]);
        let b = a.replacen("\"numjobs\":1", "\"numjobs\":2", 1);
        assert_ne!(a, b);
        assert_ne!(digest(&a), digest(&b));
    }

    #[test]
    fn each_option_that_makes_the_run_is_named() {
        let base = plain(&[]);
        let cases: Vec<(String, &str)> = vec![
            (plain(&[("numjobs", "2")]), "numjobs=2"),
            (plain(&[("bs", "64k")]), "bs=64k"),
            (plain(&[("seed", "7")]), "seed=7"),
            (plain(&[("runtime", "2s")]), "runtime=2s"),
            (
                with(&[], |r| r.tags = vec![("ctl".into(), "b".into())]),
                "tag.ctl=b",
            ),
            (with(&[], |r| r.note = Some("x".into())), "note=x"),
            (with(&[], |r| r.keep = true), "keep=true"),
            (plain(&[("shared_file", "1")]), "layout=shared_regions"),
        ];
        for (other, named) in cases {
            assert_ne!(digest(&base), digest(&other), "{named}");
            let m = describe_mismatch(&[base.clone(), other]).unwrap();
            assert!(
                m.contains(&format!("rank 1 has {named} where rank 0 has")),
                "{named}: {m}"
            );
            assert!(
                m.contains("start every rank with the same command line"),
                "{m}"
            );
        }
    }

    #[test]
    fn the_message_names_every_differing_rank_and_both_values() {
        let base = plain(&[("numjobs", "1")]);
        let two = plain(&[("numjobs", "2"), ("bs", "64k")]);
        let tag = with(&[("numjobs", "1")], |r| {
            r.tags = vec![("a".into(), "1".into())]
        });
        let m = describe_mismatch(&[base.clone(), two.clone(), base.clone(), two, tag]).unwrap();
        assert!(
            m.contains("ranks 1, 3 have bs=64k, numjobs=2 where rank 0 has bs=4k, numjobs=1"),
            "{m}"
        );
        assert!(
            m.contains("rank 4 has tag.a=1 where rank 0 has tag.a=(none)"),
            "{m}"
        );
        assert!(!m.contains("rank 2"), "{m}");
    }

    #[test]
    fn cluster_options_and_the_phase_count_are_compared() {
        let base = plain(&[]);
        let clients = with(&[], |r| r.clients = Some(vec![1, 2]));
        let m = describe_mismatch(&[base.clone(), clients]).unwrap();
        assert!(
            m.contains("rank 1 has clients=1,2 where rank 0 has clients=(none)"),
            "{m}"
        );
        // The quick check (four phases) against one phase from flags.
        let quick = job_on(
            "/tmp/agree-target",
            &[("engine", "psync"), ("cache", "cold")],
            &base_run(),
        );
        let m = describe_mismatch(&[base, quick]).unwrap();
        assert!(
            m.contains("phases=4 (seq-write, seq-read, rand-read, rand-write)"),
            "{m}"
        );
        assert!(m.contains("phases=1 ("), "{m}");
    }

    #[test]
    fn a_relative_target_counts_by_the_path_it_means() {
        let read = [("rw", "read"), ("engine", "psync"), ("cache", "cold")];
        let a = job_on("/tmp/agree-a", &read, &base_run());
        let b = job_on("/tmp/agree-b", &read, &base_run());
        let m = describe_mismatch(&[a, b]).unwrap();
        assert!(
            m.contains("target=/tmp/agree-b where rank 0 has target=/tmp/agree-a"),
            "{m}"
        );
        assert!(m.contains("give an absolute path"), "{m}");
    }

    #[test]
    fn nodes_that_chose_different_machine_defaults_are_told_to_choose() {
        let uring = |t: String| t.replace("\"engine\":\"psync\"", "\"engine\":\"io_uring\"");
        let base = plain(&[]);
        let m = describe_mismatch(&[base.clone(), uring(base.clone())]).unwrap();
        assert!(
            m.contains("rank 1 has engine=io_uring where rank 0 has engine=psync"),
            "{m}"
        );
        assert!(m.contains("give them explicitly"), "{m}");
        // With other differences the engine is not the point.
        let m = describe_mismatch(&[base, uring(plain(&[("numjobs", "3")]))]).unwrap();
        assert!(m.contains("engine=io_uring"), "{m}");
        assert!(!m.contains("give them explicitly"), "{m}");
    }

    #[test]
    fn many_ranks_give_a_bounded_message() {
        let mut texts = vec![plain(&[])];
        for s in 1..=40 {
            texts.push(plain(&[("seed", &s.to_string())]));
        }
        let m = describe_mismatch(&texts).unwrap();
        assert!(m.contains("and 36 more ranks differ"), "{m}");
        assert!(m.len() < 2000, "{}", m.len());
    }
}

/// The whole workflow over thread ranks with a front end in memory: what
/// the MPI build runs, checked without a launcher.
#[cfg(test)]
mod workflow_tests {
    use super::*;
    use crate::LocalComm;
    use storlab_bench::spec_from_pairs;

    /// Records what rank 0's front end was asked to do.
    #[derive(Default)]
    struct Fake {
        begun: usize,
        phases: Vec<String>,
        emitted: Vec<BenchReport>,
        counts_done: usize,
    }

    impl BenchFront for Fake {
        type Sink = ();
        type Live = ();
        fn check_outputs(&mut self, _: Option<&Path>) -> Result<(), Failed> {
            Ok(())
        }
        fn watch_signals(&mut self) -> Result<(), Failed> {
            Ok(())
        }
        fn open_sink(&mut self, _: &[(&str, String)]) -> Result<(), Failed> {
            Ok(())
        }
        fn begin(&mut self, _: &mut (), _: &BenchReport) -> Result<(), Failed> {
            self.begun += 1;
            Ok(())
        }
        fn phase(&mut self, _: &mut (), phase: &PhaseResult) {
            self.phases.push(phase.params.name.clone());
        }
        fn live_start(&mut self, _: &Arc<Control>, _: Vec<String>, _: bool) {}
        fn live_stop(&mut self, _: ()) {}
        fn cache_warnings(&self, _: &Path, _: &[CacheMode]) -> Vec<String> {
            Vec::new()
        }
        fn repeat_starts(&mut self, _: &RepeatInfo) {}
        fn emit(
            &mut self,
            report: BenchReport,
            _: (),
            _: Option<&RepeatInfo>,
        ) -> (u8, Option<i64>) {
            self.emitted.push(report);
            (0, Some(self.emitted.len() as i64))
        }
        fn repeats_done(&mut self, _: &str, _: u32, _: &[BenchReport]) {}
        fn counts_done(&mut self, runs: &[(BenchReport, Option<i64>)]) {
            self.counts_done = runs.len();
        }
    }

    fn planned(dir: &Path) -> Job {
        let spec = spec_from_pairs([
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "64k"),
            ("engine", "psync"),
            ("cache", "cold"),
        ])
        .unwrap();
        storlab_bench::jobspec::build(None, Some(dir), &spec).unwrap()
    }

    fn run_opts() -> ClusterRun {
        ClusterRun {
            sync: SyncOptions {
                clients_by: "rank".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Three ranks, client counts 1 and 3: rank 0 alone stores and emits
    /// one merged run per count, counting every client's bytes; every
    /// rank ends with code 0 and the scratch files are gone.
    #[test]
    fn three_ranks_run_each_client_count_and_rank_zero_alone_emits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let out = LocalComm::run(3, |c| {
            let w = Ranks::exchange(c, "node", 1 << 30);
            let mut front = Fake::default();
            let run = ClusterRun {
                clients: Some(vec![1, 3]),
                ..run_opts()
            };
            let code = run_bench(&w, Ok(planned(&path)), &run, &mut front);
            (code, front)
        });
        let (code, root) = &out[0];
        assert_eq!(code, &Ok(0));
        assert_eq!(root.begun, 2);
        assert_eq!(root.phases, ["1-write", "1-write"]);
        assert_eq!(root.counts_done, 2);
        let bytes: Vec<u64> = root
            .emitted
            .iter()
            .map(|r| r.phases[0].total.bytes)
            .collect();
        assert_eq!(bytes, [64 << 10, 3 * (64 << 10)], "every client's bytes");
        for (code, front) in &out[1..] {
            assert_eq!(code, &Ok(0));
            assert!(front.emitted.is_empty() && front.begun == 0);
        }
        assert!(
            std::fs::read_dir(&path).unwrap().next().is_none(),
            "scratch files left behind"
        );
    }

    /// Groups on disjoint sets of four thread ranks (`--group-ranks
    /// 0,1-3`): each rank runs its group's jobs only, rank 0 emits one
    /// phase with a row per group whose bytes are its ranks' (size-bound:
    /// exactly), and the aggregate is every rank's.
    #[test]
    fn groups_on_rank_sets_run_apart_and_merge_per_group() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let out = LocalComm::run(4, |c| {
            let w = Ranks::exchange(c, "node", 1 << 30);
            let mut spec = spec_from_pairs([
                ("bs", "4k"),
                ("engine", "psync"),
                ("cache", "cold"),
                ("group_ranks", "0,1-3"),
            ])
            .unwrap();
            spec.group = vec![
                storlab_bench::parse_group_arg("name=w rw=write size=128k numjobs=2").unwrap(),
                storlab_bench::parse_group_arg("name=r rw=read size=64k").unwrap(),
            ];
            let planned = storlab_bench::jobspec::build(None, Some(&path), &spec)
                .unwrap()
                .without_groups()
                .unwrap();
            let mut front = Fake::default();
            let code = run_bench(&w, Ok(planned), &run_opts(), &mut front);
            (code, front)
        });
        assert!(out.iter().all(|o| o.0 == Ok(0)), "{:?}", out[0].0);
        let p = &out[0].1.emitted[0].phases[0];
        let g = p.groups.as_ref().unwrap();
        let names: Vec<&str> = g.groups.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["w", "r"]);
        assert_eq!(
            g.groups[0].write.bytes,
            2 * (128 << 10),
            "rank 0's two jobs"
        );
        assert_eq!(g.groups[0].read.bytes, 0);
        assert_eq!(
            g.groups[1].read.bytes,
            3 * (64 << 10),
            "ranks 1-3, one job each"
        );
        assert_eq!(g.groups[1].write.bytes, 0);
        assert_eq!(g.groups[1].first_job, 2);
        assert_eq!(p.total.bytes, 2 * (128 << 10) + 3 * (64 << 10));
        assert_eq!(p.params.numjobs, 5);
        let jobs: Vec<(u32, u64, u64)> = p
            .jobs
            .iter()
            .map(|j| (j.job, j.read.bytes, j.write.bytes))
            .collect();
        assert_eq!(
            jobs,
            [
                (0, 0, 128 << 10),
                (1, 0, 128 << 10),
                (2, 64 << 10, 0),
                (3, 64 << 10, 0),
                (4, 64 << 10, 0)
            ]
        );
        assert!(std::fs::read_dir(&path).unwrap().next().is_none());
    }

    /// A rank that could not plan stops every rank before anything is
    /// created: rank 0 names it, the others stay quiet.
    #[test]
    fn a_rank_that_cannot_plan_stops_every_rank_and_rank_zero_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let out = LocalComm::run(3, |c| {
            let r = c.rank();
            let w = Ranks::exchange(c, &format!("n{r}"), 1 << 30);
            let planned = if r == 1 {
                Err(Failed("bad --bs".into()))
            } else {
                Ok(planned(&path))
            };
            let mut front = Fake::default();
            (run_bench(&w, planned, &run_opts(), &mut front), front.begun)
        });
        assert_eq!(
            out[0].0,
            Err(RankStop::Report(Failed(
                "rank 1 on n1: cannot plan the job: bad --bs".into()
            )))
        );
        assert_eq!(out[1].0, Err(RankStop::Quiet));
        assert_eq!(out[2].0, Err(RankStop::Quiet));
        assert!(out.iter().all(|o| o.1 == 0), "nothing was begun");
        assert!(std::fs::read_dir(&path).unwrap().next().is_none());
    }
}
