//! The run loop, phase by phase: lay files out, put the page cache in the
//! declared state, release the workers together, merge what they measured
//! into a [`PhaseResult`], verify if asked, hand the result to the caller.

use crate::cluster::{PhaseSync, Share, TICK};
use crate::data::DataGen;
use crate::devstat;
use crate::gate::StartGate;
use crate::offsets::RegionMap;
use crate::series::SeriesCollector;
use crate::stats::{DirCounter, ErrorCounts};
use crate::sys::{self, AlignedBuf, OpenFlags};
use crate::target::TargetKind;
use crate::worker::{self, MAX_REPORTED_MISMATCHES, WorkerOut, WorkerPlan};
use crate::{Control, ResolvedJob};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
pub(crate) mod grouped;

use storlab_types::{
    CacheMode, CacheReport, CpuStats, DepthReport, DirStats, FileLayout, JobResult, PhaseParams,
    PhaseResult, VerifyMismatch, VerifyResult,
};

/// What latency figures span, stated in every result.
pub const LATENCY_SPAN: &str = "per I/O, from the clock reading taken immediately before the system call that \
hands it to the kernel to the reading taken when its completion is reaped (includes queueing in the kernel and \
device; for psync, the pread/pwrite call)";

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    pub phases: Vec<PhaseResult>,
    /// Why the run stopped early (Ctrl-C, disk full, I/O error).
    pub stop_reason: Option<String>,
    pub warnings: Vec<String>,
}

/// What has been laid out of each file of a resolved target, kept across
/// calls to [`run_with_layout`] so that a sweep lays its files out once and
/// extends them only when a point needs more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayoutState {
    /// Bytes laid out (written with real data) from the start of each file.
    pub done: Vec<u64>,
    /// Bytes written by layouts so far.
    pub bytes: u64,
    /// Nanoseconds spent laying out so far.
    pub ns: u64,
}

impl LayoutState {
    /// Nothing of storlab's new files is laid out; existing files and
    /// devices count as laid out (they hold data already).
    pub fn new(job: &ResolvedJob) -> LayoutState {
        LayoutState {
            done: job
                .target
                .files
                .iter()
                .map(|f| if f.created { 0 } else { f.size })
                .collect(),
            bytes: 0,
            ns: 0,
        }
    }
}

/// Run every phase of `job` in order. `on_phase` is called with each phase's
/// result as soon as it is complete (so callers can save it at once).
pub fn run(job: &ResolvedJob, control: &Control, on_phase: impl FnMut(&PhaseResult)) -> RunOutcome {
    let mut layout = LayoutState::new(job);
    run_with_layout(job, control, &mut layout, on_phase)
}

/// [`run`], with what is already laid out of the target's files given and
/// updated (a sweep runs each point as its own job over the same target).
pub fn run_with_layout(
    job: &ResolvedJob,
    control: &Control,
    laid_out: &mut LayoutState,
    on_phase: impl FnMut(&PhaseResult),
) -> RunOutcome {
    let mut carried = Carried {
        layout: std::mem::take(laid_out),
        extents: None,
    };
    let all = 0..job.phases.len();
    let out = run_phases(job, control, &mut carried, all, None, on_phase);
    *laid_out = carried.layout;
    out
}

/// [`run`] as one of several processes running the same job together
/// (MPI ranks): `sync` starts each phase on every process at once, spreads
/// stops and errors, and says which jobs and files are this process's.
/// `job.target.files` lists the files of every process.
pub fn run_synced(
    job: &ResolvedJob,
    control: &Control,
    sync: &dyn PhaseSync,
    on_phase: impl FnMut(&PhaseResult),
) -> RunOutcome {
    let mut carried = Carried::new(job);
    let all = 0..job.phases.len();
    run_phases(job, control, &mut carried, all, Some(sync), on_phase)
}

/// What a job run a few phases at a time carries from one call of
/// [`run_synced_phases`] to the next: what is laid out of its files, and
/// what each job wrote in a stonewalled write (so a read run later, with
/// other work between, reads exactly that).
#[derive(Debug, Clone, Default)]
pub struct Carried {
    pub layout: LayoutState,
    /// Bytes each job (by global index) wrote in the last stonewalled
    /// write phase, and that phase.
    extents: Option<(Vec<u64>, PhaseParams)>,
}

impl Carried {
    /// Nothing run yet.
    pub fn new(job: &ResolvedJob) -> Carried {
        Carried {
            layout: LayoutState::new(job),
            extents: None,
        }
    }

    /// What each job wrote in the last stonewalled write phase (by global
    /// job), if that phase was cut short.
    pub fn written(&self) -> Option<&[u64]> {
        self.extents.as_ref().map(|(e, _)| e.as_slice())
    }
}

/// [`run_synced`] for phases `phases` of `job` only (in order), with what
/// the earlier calls left in `carried`: the caller steps one job through
/// its phases on its own thread, with other work between them (io500 runs
/// mdtest between IOR's write and its read).
pub fn run_synced_phases(
    job: &ResolvedJob,
    control: &Control,
    sync: &dyn PhaseSync,
    carried: &mut Carried,
    phases: std::ops::Range<usize>,
    on_phase: impl FnMut(&PhaseResult),
) -> RunOutcome {
    run_phases(job, control, carried, phases, Some(sync), on_phase)
}

// long-function: the phase loop reads as its steps (agree, lay out, run,
// verify, mark laid out, hand over, stop); splitting it would scatter them.
fn run_phases(
    job: &ResolvedJob,
    control: &Control,
    carried: &mut Carried,
    range: std::ops::Range<usize>,
    sync: Option<&dyn PhaseSync>,
    mut on_phase: impl FnMut(&PhaseResult),
) -> RunOutcome {
    let mut outcome = RunOutcome::default();
    let agree = |ok: bool| sync.map_or(ok, |s| s.agree(ok));
    let Carried {
        layout: laid_out,
        extents,
    } = carried;
    laid_out.done.resize(job.target.files.len(), 0);
    // Bytes each job wrote in a stonewalled write phase (by global job).
    let phases = job.phases.iter().enumerate();
    for (index, p) in phases.take(range.end).skip(range.start) {
        if !agree(!control.stop.load(Ordering::Relaxed)) || exit_all(control, &mut outcome) {
            break;
        }
        control.begin_phase(index);
        // Groups on rank sets (--group-ranks): this process runs its group.
        let mine = grouped::on_ranks(sync, index, p);
        *extents = extents.take().filter(|_| p.groups.is_empty());
        if !p.groups.is_empty() && mine.is_none() {
            if !grouped::hand_over(job, p, control, laid_out, sync, &mut outcome, &mut on_phase) {
                break;
            }
            continue;
        }
        let on_ranks = mine.is_some();
        let (p, share) = match &mine {
            Some((g, share)) => (g, *share),
            None => (
                p,
                sync.map_or_else(|| Share::alone(p), |s| s.share(index, p)),
            ),
        };
        // Jobs that would use files that were not prepared (processes that
        // planned different job counts) stop every process, never index
        // past the file list.
        let fits = share_fits(job, p, &share);
        if let Err(why) = &fits {
            outcome.stop_reason = Some(why.clone());
        }
        if !agree(fits.is_ok()) {
            outcome.stop_reason.get_or_insert_with(|| {
                "another process's jobs do not match the files prepared for them".into()
            });
            break;
        }
        let files = phase_files(job, p, &share);
        let region = region_bytes(job, p, &share);
        // Lay out before reading (never read holes) and before any verify;
        // only the part of each file this phase uses, and only what is new.
        let need_layout = layout_needed(job, p, &files, &laid_out.done, &share);
        if (sync.is_some() || !need_layout.is_empty())
            && !lay_out_share(
                job,
                p,
                control,
                &share,
                need_layout,
                laid_out,
                &mut outcome,
                &agree,
            )
        {
            break;
        }
        let cache = prepare_cache(job, p, &files, control);
        let limits = extents
            .as_ref()
            .filter(|(_, w)| p.rw.reads() && !p.rw.writes() && same_geometry(w, p))
            .map(|(e, _)| e.as_slice());
        let resets = control.zbd.resets();
        let (mut result, every_job_full_pass) =
            run_phase(job, p, control, cache, &share, sync, limits);
        // fio's zone resets (zonemode=zbd), this phase's.
        if let Some(z) = &mut result.params.zbd {
            z.zone_resets = control.zbd.resets().saturating_sub(resets);
        }
        if p.verify && !p.verify_opts.no_check && p.rw.writes() && !result.interrupted {
            // Verification reads happen after the timed window and are not counted.
            let v = verify_files(job, p, &files, control, &share);
            result.verify = Some(merge_verify(result.verify.take(), v));
        }
        // A write-only phase that covered every block of its region lays it
        // out, but only if every job finished at least one full pass. A
        // process with no jobs (waiting while others run) does not object.
        let covered = p.numjobs == 0
            || (!result.interrupted
                && every_job_full_pass
                && !p.rw.reads()
                && covers_region(p)
                && result.jobs.len() == p.numjobs as usize);
        if agree(covered) {
            // A group's process knows only what its own jobs wrote.
            let all = if on_ranks {
                files.clone()
            } else {
                phase_files_all(job, &share, &files)
            };
            mark_laid_out(job, laid_out, &all, region);
            *extents = None;
        } else if let Some(s) = sync.filter(|_| !on_ranks && p.rw.writes() && !p.rw.reads()) {
            // Cut short on purpose: the reads that follow read what was written.
            *extents = written_extents(s, p, &result, &share);
            if extents.is_some() && !result.interrupted {
                mark_laid_out(job, laid_out, &phase_files_all(job, &share, &files), region);
            }
        }
        on_phase(&result);
        let fatal = !agree(!result.interrupted);
        outcome.phases.push(result);
        if fatal {
            outcome.stop_reason = control.reason().or_else(|| {
                outcome
                    .phases
                    .last()
                    .and_then(|r| r.warnings.first().cloned())
            });
            break;
        }
    }
    if outcome.stop_reason.is_none() && control.stop.load(Ordering::Relaxed) {
        outcome.stop_reason = control.reason().or_else(|| Some("stopped".into()));
    }
    outcome
}

/// Lays out this process's part of what a phase needs (a shared file: its
/// slice), all processes agreeing on success; false stops the run (the
/// reason is in `outcome`).
#[allow(clippy::too_many_arguments)]
fn lay_out_share(
    job: &ResolvedJob,
    p: &PhaseParams,
    control: &Control,
    share: &Share,
    need_layout: Vec<(usize, u64, u64)>,
    laid_out: &mut LayoutState,
    outcome: &mut RunOutcome,
    agree: &dyn Fn(bool) -> bool,
) -> bool {
    // A shared file is laid out by every process, each its slice.
    let mine: Vec<(usize, u64, u64)> = need_layout
        .iter()
        .map(|&(f, from, to)| {
            if job.target.shared {
                let (s, e) = share.slice_of(to - from);
                (f, from + s, from + e)
            } else {
                (f, from, to)
            }
        })
        .filter(|&(_, from, to)| from < to)
        .collect();
    let t0 = Instant::now();
    let r = if mine.is_empty() {
        Ok(())
    } else {
        layout(job, p, &mine, control)
    };
    laid_out.ns += t0.elapsed().as_nanos() as u64;
    if let Err(e) = &r {
        outcome.stop_reason = Some(describe_io_error("laying out files", e));
    }
    if !agree(r.is_ok()) {
        outcome
            .stop_reason
            .get_or_insert_with(|| "another process failed laying out its files".into());
        return false;
    }
    if !agree(!control.stop.load(Ordering::Relaxed)) {
        return false;
    }
    for (f, from, to) in need_layout {
        laid_out.done[f] = to;
        laid_out.bytes += to - from;
    }
    true
}

/// fio's `exitall` with `exit_what=all` ended the run: the phases left do
/// not run, and the outcome says which job ended it.
fn exit_all(control: &Control, outcome: &mut RunOutcome) -> bool {
    let why = control.runctl.run_ended();
    outcome.warnings.extend(why.clone());
    why.is_some()
}

/// `files` are laid out from their start to `region` bytes (or their end).
fn mark_laid_out(job: &ResolvedJob, laid_out: &mut LayoutState, files: &[usize], region: u64) {
    for &f in files {
        laid_out.done[f] = laid_out.done[f].max(region.min(job.target.files[f].size));
    }
}

/// What each job (by global index) of every process wrote in write phase
/// `p`, cut short on purpose (stonewall); `None` when it ran to its end.
fn written_extents(
    s: &dyn PhaseSync,
    p: &PhaseParams,
    result: &PhaseResult,
    share: &Share,
) -> Option<(Vec<u64>, PhaseParams)> {
    let local: Vec<(u32, u64)> = result
        .jobs
        .iter()
        .map(|j| (share.first_job + j.job, j.write.bytes))
        .collect();
    s.written_extents(&local, share.total_jobs)
        .map(|e| (e, p.clone()))
}

fn describe_io_error(what: &str, e: &io::Error) -> String {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        format!("the disk filled up while {what} (ENOSPC): use a smaller --size or free some space")
    } else {
        format!("error while {what}: {e}")
    }
}

/// Whether this process's jobs of phase `p`, and every process's (which
/// the layout bookkeeping touches), have their files in `job`.
fn share_fits(job: &ResolvedJob, p: &PhaseParams, share: &Share) -> Result<(), String> {
    let have = job.target.files.len() as u64;
    let end = u64::from(share.first_job) + u64::from(p.numjobs);
    let total = u64::from(share.total_jobs);
    let files = if job.target.shared { 1 } else { total };
    if end > total || files > have {
        return Err(format!(
            "phase {}: this process's jobs ({} from job {}, of {total} in all) do not match the \
             {have} file(s) prepared: were the processes started with different --numjobs?",
            p.name, p.numjobs, share.first_job
        ));
    }
    Ok(())
}

/// Indices into `job.target.files` that phase `p` touches (this process's).
fn phase_files(job: &ResolvedJob, p: &PhaseParams, share: &Share) -> Vec<usize> {
    if job.target.shared {
        vec![0]
    } else {
        let first = share.first_job as usize;
        (first..first + p.numjobs as usize).collect()
    }
}

/// What phase `p` must lay out before it runs: (file, from, to) for each
/// part of its files not laid out yet, when it reads or verifies (each
/// region apart where fio's offsets leave holes between them).
fn layout_needed(
    job: &ResolvedJob,
    p: &PhaseParams,
    files: &[usize],
    done: &[u64],
    share: &Share,
) -> Vec<(usize, u64, u64)> {
    let region = region_bytes(job, p, share);
    files
        .iter()
        .flat_map(|&f| {
            crate::placement::file_ranges(p, f, job.target.shared, share.total_jobs, region)
                .into_iter()
                .map(move |r| (f, r))
        })
        .map(|(f, (start, end))| (f, done[f].max(start), end.min(job.target.files[f].size)))
        .filter(|&(_, from, to)| from < to && (p.rw.reads() || p.verify))
        .collect()
}

/// Every process's files of a phase.
fn phase_files_all(job: &ResolvedJob, share: &Share, files: &[usize]) -> Vec<usize> {
    if job.target.shared {
        files.to_vec()
    } else {
        (0..share.total_jobs as usize).collect()
    }
}

/// Whether a read phase covers the same regions a write phase wrote.
fn same_geometry(w: &PhaseParams, r: &PhaseParams) -> bool {
    w.size_bytes == r.size_bytes && w.numjobs == r.numjobs && w.layout == r.layout
}

/// The bytes from the start of each file that phase `p` uses (every
/// process's jobs in a shared file).
fn region_bytes(job: &ResolvedJob, p: &PhaseParams, share: &Share) -> u64 {
    if job.target.shared {
        p.size_bytes.saturating_mul(u64::from(share.total_jobs)) // checked in target::resolve
    } else {
        p.size_bytes
    }
}

/// Whether one full pass of `p` writes every byte of its region.
fn covers_region(p: &PhaseParams) -> bool {
    (!p.rw.is_random() || !p.random_with_replacement) && p.bs.len() == 1
}

/// One plan per local job; `limits`: bytes each job (by global index) may
/// read, what a stonewalled write phase left.
fn worker_plans(
    job: &ResolvedJob,
    p: &PhaseParams,
    share: &Share,
    limits: Option<&[u64]>,
) -> Vec<WorkerPlan> {
    let unit = job.unit;
    (0..p.numjobs)
        .map(|local| {
            let j = share.first_job + local;
            let size = limits
                .and_then(|l| l.get(j as usize))
                .map_or(p.size_bytes, |&w| {
                    let bs = p.max_bs().max(1);
                    (w.min(p.size_bytes) / bs * bs).max(bs.min(p.size_bytes))
                });
            // fio's offset/offset_increment (placement.rs): 0 and j × size without.
            let base = |shared| crate::placement::job_base(p, j, shared).unwrap_or(0);
            let (file, region) = if !job.target.shared {
                (j as usize, RegionMap::Contiguous { base: base(false) })
            } else {
                let region = match p.layout {
                    FileLayout::SharedInterleaved { stride_bytes } => RegionMap::Interleaved {
                        stride: stride_bytes,
                        numjobs: u64::from(share.total_jobs),
                        job: j as u64,
                    },
                    _ => RegionMap::Contiguous { base: base(true) },
                };
                (0, region)
            };
            WorkerPlan {
                job: j,
                path: job.target.files[file].path.clone(),
                file_id: file as u32,
                region,
                size,
                unit,
            }
        })
        .collect()
}

fn run_phase(
    job: &ResolvedJob,
    p: &PhaseParams,
    control: &Control,
    cache: CacheReport,
    share: &Share,
    sync: Option<&dyn PhaseSync>,
    limits: Option<&[u64]>,
) -> (PhaseResult, bool) {
    let plans = worker_plans(job, p, share, limits);
    let started_at = storlab_types::time::now_rfc3339_millis();
    control.reset_progress();
    let series = SeriesCollector::new(p.log_interval_ns, p.ramp_ns, p.numjobs, p.steadystate);
    // The device's own request counters around the workers (devstat.rs).
    let probe = job
        .target
        .files
        .first()
        .and_then(|f| devstat::Probe::for_path(&f.path));
    let before = probe.as_ref().and_then(devstat::Probe::read);
    let (outs, cpu_window) = run_workers(&plans, p, control, &series, sync);
    let device_stat = probe.zip(before).and_then(|(pr, b)| pr.delta(&b));
    let every_job_full_pass = !outs.is_empty() && outs.iter().all(|o| o.full_pass);
    let mut result = summarize(p, started_at, &outs, cpu_window, cache, control);
    result.device_stat = device_stat;
    let start = outs.iter().filter_map(|o| o.window_start_ns).min();
    if let Some(s) = start {
        let series = series.points(s, s + result.elapsed_ns);
        if series.steady.as_ref().is_some_and(|o| o.reached) {
            // Stopping once steady is the plan, not a short pass.
            result
                .warnings
                .retain(|w| !w.starts_with("runtime ran out before one full pass"));
        }
        result.series = Some(series);
    }
    (result, every_job_full_pass)
}

/// Start one thread per job, release them together, collect what they
/// measured and the process CPU time of the measured part. A thread that
/// cannot be spawned or that panics becomes an error of the phase; the
/// others are called off (or drain their I/O) instead of waiting forever.
fn run_workers(
    plans: &[WorkerPlan],
    p: &PhaseParams,
    control: &Control,
    series: &SeriesCollector,
    sync: Option<&dyn PhaseSync>,
) -> (Vec<WorkerOut>, (Duration, Duration)) {
    let params = vec![p; plans.len()];
    run_workers_with(plans, &params, p, control, series, sync, (None, None))
}

/// CPU (user, system ns) each worker thread used, stored as it ends.
type ThreadCpu = [(AtomicU64, AtomicU64)];

/// What a worker's thread does after its worker ends, with its index and
/// result (a job group's verify pass, `run/grouped.rs`): after the
/// thread's CPU time is taken, so it is not counted as the job's.
pub(crate) type AfterWorker<'a> = dyn Fn(usize, &mut WorkerOut) + Sync + 'a;

/// [`run_workers`] with each plan's own parameters (`params[i]` for
/// `plans[i]`: a phase of job groups) and, when `thread_cpu` is given,
/// each worker thread's own CPU time.
fn run_workers_with(
    plans: &[WorkerPlan],
    params: &[&PhaseParams],
    p: &PhaseParams,
    control: &Control,
    series: &SeriesCollector,
    sync: Option<&dyn PhaseSync>,
    (thread_cpu, after): (Option<&ThreadCpu>, Option<&AfterWorker<'_>>),
) -> (Vec<WorkerOut>, (Duration, Duration)) {
    let gate = StartGate::new();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(plans.len());
        let mut spawn_error = None;
        for (i, (plan, wp)) in plans.iter().zip(params.iter().copied()).enumerate() {
            let (gate, progress) = (&gate, &control.jobs[i]);
            let spawned = std::thread::Builder::new()
                .name(format!("storlab-job{i}"))
                .spawn_scoped(s, move || {
                    let mut out =
                        worker::run_worker(plan, wp, control, progress, series, gate.ticket());
                    if let Some(c) = thread_cpu.and_then(|c| c.get(i)) {
                        let (user, sys) = storlab_host::os::cpu_time(true);
                        c.0.store(user.as_nanos() as u64, Ordering::Relaxed);
                        c.1.store(sys.as_nanos() as u64, Ordering::Relaxed);
                    }
                    if let Some(f) = after {
                        f(i, &mut out);
                    }
                    out
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(format!(
                        "cannot start job {i} of {} (thread spawn failed: {e}); use fewer --numjobs or raise the process limits",
                        plans.len()
                    ));
                    break;
                }
            }
        }
        if let Some(sync) = sync {
            return run_synced_workers(&gate, handles, spawn_error, p, control, sync);
        }
        if let Some(msg) = spawn_error {
            gate.cancel();
            control.request_stop(&msg);
            let mut outs: Vec<WorkerOut> = handles.into_iter().map(join_worker).collect();
            outs.push(WorkerOut {
                fatal: Some(msg),
                ..Default::default()
            });
            return (outs, (Duration::ZERO, Duration::ZERO));
        }
        let t0 = gate.release_when(handles.len());
        control.mark_started(t0, p);
        // CPU is sampled from the end of ramp-up, when counting starts.
        if p.ramp_ns > 0 {
            let ramp_end = t0 + Duration::from_nanos(p.ramp_ns);
            while Instant::now() < ramp_end && !handles.iter().all(|h| h.is_finished()) {
                std::thread::sleep(
                    Duration::from_millis(5)
                        .min(ramp_end.saturating_duration_since(Instant::now())),
                );
            }
        }
        let cpu0 = storlab_host::os::cpu_time(false);
        let outs: Vec<WorkerOut> = handles.into_iter().map(join_worker).collect();
        let cpu1 = storlab_host::os::cpu_time(false);
        (
            outs,
            (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
        )
    })
}

/// [`run_workers`]'s second half for a multi-process run: every process
/// releases its workers at the common epoch `sync` returns (or all call the
/// phase off), then ticks until every process is done.
fn run_synced_workers<'s>(
    gate: &StartGate,
    handles: Vec<std::thread::ScopedJoinHandle<'s, WorkerOut>>,
    spawn_error: Option<String>,
    p: &PhaseParams,
    control: &Control,
    sync: &dyn PhaseSync,
) -> (Vec<WorkerOut>, (Duration, Duration)) {
    gate.wait_arrivals(handles.len());
    // A worker that finished before the release could not start.
    let local_error = spawn_error.is_some() || handles.iter().any(|h| h.is_finished());
    let Some(epoch) = sync.start(local_error) else {
        gate.cancel();
        let mut outs: Vec<WorkerOut> = handles.into_iter().map(join_worker).collect();
        outs.push(WorkerOut {
            fatal: Some(spawn_error.unwrap_or_else(|| {
                "the phase was called off: a process could not start its jobs".into()
            })),
            ..Default::default()
        });
        control.request_stop("a process could not start its jobs");
        return (outs, (Duration::ZERO, Duration::ZERO));
    };
    gate.release_at(epoch);
    control.mark_started(epoch, p);
    let cpu0 = storlab_host::os::cpu_time(false);
    while sync.tick(control, epoch, handles.iter().all(|h| h.is_finished())) {
        std::thread::sleep(TICK);
    }
    let outs: Vec<WorkerOut> = handles.into_iter().map(join_worker).collect();
    let cpu1 = storlab_host::os::cpu_time(false);
    (
        outs,
        (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
    )
}

/// A worker's result; a panic becomes the phase's error (its engine has
/// already waited for its in-flight I/O while unwinding).
fn join_worker(h: std::thread::ScopedJoinHandle<'_, WorkerOut>) -> WorkerOut {
    h.join().unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        WorkerOut {
            fatal: Some(format!("internal error: a worker thread panicked ({why})")),
            ..Default::default()
        }
    })
}

/// Requested vs achieved queue depth over the jobs, and the warning when a
/// phase did not keep the depth it asked for.
fn depth_report(
    p: &PhaseParams,
    outs: &[WorkerOut],
    total: &DirStats,
) -> (Option<DepthReport>, Option<String>) {
    let requested: usize = outs.iter().map(|o| o.target_depth).sum();
    let depths: Vec<f64> = outs.iter().filter_map(|o| o.mean_depth).collect();
    if depths.is_empty() || requested == 0 {
        return (None, None);
    }
    let achieved: f64 = depths.iter().sum();
    let littles = total
        .lat_ns
        .map(|l| total.iops * l.mean / 1e9)
        .unwrap_or(0.0);
    let report = DepthReport {
        requested: u32::try_from(requested).unwrap_or(u32::MAX),
        achieved,
        littles_law_depth: littles,
        stamp_error_ns: outs.iter().filter_map(|o| o.stamp_error_ns).max(),
        stamp_error_mean_ns: {
            let (s, n) = outs.iter().fold((0u64, 0u64), |a, o| {
                (a.0 + o.stamp_error_sum.0, a.1 + o.stamp_error_sum.1)
            });
            (n > 0).then(|| s as f64 / n as f64)
        },
        latency_target: crate::runctl::found(outs.iter().map(|o| o.latency_target)),
    };
    let low = achieved < 0.95 * requested as f64;
    let instant_engine = p.engine == storlab_types::EngineKind::Null && p.null_latency_ns == 0;
    let warning = (low && !instant_engine).then(|| {
        format!(
            "{achieved:.1} of {requested} I/Os in flight on average ({:.0} %): {}",
            100.0 * achieved / requested as f64,
            crate::runctl::depth_cause(p)
                .map_or_else(|| worker::depth_cause(p, outs), String::from)
        )
    });
    (Some(report), warning)
}

fn summarize(
    p: &PhaseParams,
    started_at: String,
    outs: &[WorkerOut],
    cpu: (Duration, Duration),
    cache: CacheReport,
    control: &Control,
) -> PhaseResult {
    let start = outs.iter().filter_map(|o| o.window_start_ns).min();
    let end = outs.iter().filter_map(|o| o.window_end_ns).max();
    let elapsed_ns = match (start, end) {
        (Some(s), Some(e)) => e.saturating_sub(s),
        _ => 0,
    };
    control.set_last_window(start.zip(end));
    let mut read = DirCounter::default();
    let mut write = DirCounter::default();
    let mut errors: ErrorCounts = BTreeMap::new();
    let mut jobs = Vec::new();
    let mut warnings = Vec::new();
    let mut verify = VerifyResult::default();
    let mut fatal = None;
    let mut end_fsync_ns = 0;
    for (j, o) in outs.iter().enumerate() {
        read.merge(&o.read);
        write.merge(&o.write);
        for (k, v) in &o.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
        let je = match (o.window_start_ns, o.window_end_ns) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => 0,
        };
        end_fsync_ns = end_fsync_ns.max(o.end_fsync_ns);
        jobs.push(JobResult {
            job: j as u32,
            elapsed_ns: je,
            read: o.read.to_stats(je),
            write: o.write.to_stats(je),
            errors: o.errors.clone(),
            mean_depth: o.mean_depth,
        });
        if let Some(f) = &o.fatal {
            fatal.get_or_insert_with(|| f.clone());
        }
        if o.registered == Some(false) && p.registered {
            warnings.push(format!(
                "job {j}: io_uring buffer/file registration was refused (RLIMIT_MEMLOCK?); ran unregistered"
            ));
        }
        verify.blocks_checked += o.verify_checked;
        verify.mismatches += o.verify_bad_count;
        for (off, why) in &o.verify_bad {
            if verify.first_mismatches.len() < MAX_REPORTED_MISMATCHES {
                verify.first_mismatches.push(VerifyMismatch {
                    file: format!("job {j}"),
                    offset_bytes: *off,
                    reason: why.clone(),
                });
            }
        }
    }
    control.set_last_hists(&read, &write);
    let mut total = read.clone();
    total.merge(&write);
    let total_stats = total.to_stats(elapsed_ns);
    let (depth, depth_warning) = depth_report(p, outs, &total_stats);
    let user_stop = control.stop.load(Ordering::Relaxed);
    let interrupted = fatal.is_some() || user_stop;
    if let Some(f) = &fatal {
        let msg = if f.contains("ENOSPC") {
            "the disk filled up during the phase (ENOSPC): results cover what completed; use a smaller --size".to_string()
        } else {
            format!("the phase stopped on an error: {f}")
        };
        warnings.insert(0, msg.clone());
        control.set_reason(msg);
    }
    warnings.extend(depth_warning.filter(|_| !interrupted));
    warnings.extend(phase_warnings(p, outs, interrupted, &cache));
    warnings.extend(
        too_short(elapsed_ns, total.ops)
            .filter(|_| !interrupted)
            .map(String::from),
    );
    let cpu_ns = (cpu.0 + cpu.1).as_nanos() as u64;
    let ops = total.ops;
    // fio's verify_backlog (verify.rs) checks inside writing phases too.
    let has_verify =
        (p.verify || p.check_reads) && (p.rw.reads() || (p.verify && p.verify_opts.backlog > 0));
    PhaseResult {
        device_stat: None,
        params: p.clone(),
        started_at,
        elapsed_ns,
        fsync_in_window: p.rw.writes()
            && p.end_fsync
            && p.engine != storlab_types::EngineKind::Null,
        end_fsync_ns,
        latency_span: LATENCY_SPAN.to_string(),
        read: read.to_stats(elapsed_ns),
        write: write.to_stats(elapsed_ns),
        total: total_stats,
        jobs,
        cpu: CpuStats {
            user_ns: cpu.0.as_nanos() as u64,
            sys_ns: cpu.1.as_nanos() as u64,
            cpu_ns_per_io: if ops > 0 {
                cpu_ns as f64 / ops as f64
            } else {
                0.0
            },
            utilization_pct: if elapsed_ns > 0 {
                cpu_ns as f64 * 100.0 / elapsed_ns as f64
            } else {
                0.0
            },
        },
        errors,
        cache,
        verify: has_verify.then_some(verify),
        depth,
        interrupted,
        warnings,
        series: None,
        cluster: None,
        groups: None,
        percentiles: crate::prio::with_prio(
            crate::stats::custom_percentiles(&p.report, [&read.hist, &write.hist, &total.hist]),
            crate::prio::by_prio(outs.iter().map(|o| &o.prio_lat)),
        ),
    }
}

/// A phase this short says more about start-up and timer resolution than
/// about the storage (fio users know to run longer): under a second, or
/// fewer I/Os than a latency percentile needs.
pub const MIN_TRUSTED_NS: u64 = 1_000_000_000;
/// See [`MIN_TRUSTED_NS`].
pub const MIN_TRUSTED_IOS: u64 = 2_000;

fn too_short(elapsed_ns: u64, ops: u64) -> Option<&'static str> {
    // A phase of 5 s or more is trusted for its rate whatever its I/O
    // count: a bandwidth phase of large transfers (IOR's `-t 16m`) does
    // few I/Os per second, and the remedy the warning gives (`--runtime
    // 10s --time-based`, whose window ends a little under 10 s) must
    // clear it.
    const LONG_ENOUGH_NS: u64 = 5 * MIN_TRUSTED_NS;
    if ops == 0 || elapsed_ns >= LONG_ENOUGH_NS {
        return None;
    }
    if elapsed_ns < MIN_TRUSTED_NS {
        Some(
            "too short to trust: the phase lasted under 1 s; use a larger --size or --runtime 10s --time-based",
        )
    } else if ops < MIN_TRUSTED_IOS {
        Some(
            "too short to trust: fewer than 2,000 I/Os; use a larger --size or --runtime 10s --time-based",
        )
    } else {
        None
    }
}

/// Doubts about a phase's figures that do not depend on the counts.
fn phase_warnings(
    p: &PhaseParams,
    outs: &[WorkerOut],
    interrupted: bool,
    cache: &CacheReport,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if p.engine == storlab_types::EngineKind::Psync && p.iodepth > 1 {
        warnings.push(format!(
            "psync is synchronous: iodepth {} was ignored (depth 1 per job)",
            p.iodepth
        ));
    }
    if !p.time_based && !interrupted && p.runtime_ns.is_some() && outs.iter().any(|o| !o.full_pass)
    {
        warnings.push("runtime ran out before one full pass over the region".into());
    }
    if p.rw.writes() && !p.end_fsync {
        warnings.push(
            "end_fsync is off: written data may still be in the page cache, not on the device"
                .into(),
        );
    }
    if cache.verified == Some(false) {
        warnings.push(match p.cache {
            CacheMode::Cold => format!(
                "cache eviction did not succeed: {} of {} pages stayed resident; reads may be served from memory",
                cache.resident_pages_after.unwrap_or(0),
                cache.total_pages.unwrap_or(0)
            ),
            _ => "pre-read did not bring every page into the cache".into(),
        });
    }
    if cache.may_be_cached && p.cache == CacheMode::Cold {
        warnings.push(
            "the working set is under 2× RAM: buffered results may be served from the page cache"
                .into(),
        );
    }
    warnings
}

/// Write every byte of the given files with self-describing data, outside
/// any timed window, on up to [`LAYOUT_THREADS`] threads: `(file, from,
/// to)` writes those bytes of each file. A thread that cannot be started
/// is an error (never a panic): the threads already running finish their
/// files and the error is returned.
fn layout(
    job: &ResolvedJob,
    p: &PhaseParams,
    files: &[(usize, u64, u64)],
    control: &Control,
) -> io::Result<()> {
    control.begin_layout(files.iter().map(|&(_, from, to)| to - from).sum());
    let n = files.len().clamp(1, LAYOUT_THREADS);
    let mut results: Vec<io::Result<()>> = std::thread::scope(|s| {
        let mut hs = Vec::new();
        let mut spawn_error = None;
        for t in 0..n {
            let mine: Vec<(usize, u64, u64)> = files.iter().copied().skip(t).step_by(n).collect();
            let spawned = std::thread::Builder::new()
                .name(format!("storlab-layout-{t}"))
                .spawn_scoped(s, move || {
                    for (f, from, to) in mine {
                        let df = &job.target.files[f];
                        layout_file(&df.path, (from, to), f as u32, job, p, control)?;
                    }
                    Ok(())
                });
            match spawned {
                Ok(h) => hs.push(h),
                Err(e) => {
                    spawn_error = Some(io::Error::new(
                        e.kind(),
                        format!("cannot start a layout thread ({e}); raise the process limits"),
                    ));
                    control.request_stop("a layout thread could not be started");
                    break;
                }
            }
        }
        let mut out: Vec<io::Result<()>> = hs
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a layout thread panicked")))
            })
            .collect();
        out.extend(spawn_error.map(Err));
        out
    });
    results.drain(..).collect()
}

/// Most threads laying out files at once.
const LAYOUT_THREADS: usize = 16;

const LAYOUT_CHUNK: usize = 1 << 20;

fn layout_file(
    path: &Path,
    (from, size): (u64, u64),
    file_id: u32,
    job: &ResolvedJob,
    p: &PhaseParams,
    control: &Control,
) -> io::Result<()> {
    let direct = p.cache == CacheMode::Direct;
    let f = sys::open(
        path,
        OpenFlags {
            write: true,
            create_new: false,
            direct,
        },
    )?;
    let mut buf = AlignedBuf::new(LAYOUT_CHUNK, 4096)?;
    let mut datagen = DataGen::new(
        p.buffer_pattern,
        job.unit,
        p.seed,
        p.verify,
        0x1A70_0000 + file_id as u64,
    );
    datagen.set_pattern(p.verify_opts.pattern.clone());
    let mut off = from;
    while off < size {
        if control.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let n = ((size - off) as usize).min(LAYOUT_CHUNK);
        let chunk = &mut buf.as_mut_slice()[..n];
        datagen.fill(chunk, file_id, off, true);
        let w = sys::pwrite(f.as_raw_fd(), chunk, off)?;
        if w == 0 {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        off += w as u64;
        control.laid_out(w as u64);
    }
    sys::fsync(f.as_raw_fd())
}

/// Put the page cache in the declared state for the files of a phase.
fn prepare_cache(
    job: &ResolvedJob,
    p: &PhaseParams,
    files: &[usize],
    control: &Control,
) -> CacheReport {
    let mut rep = CacheReport {
        mode: p.cache.into(),
        ..Default::default()
    };
    let bytes: u64 = files.iter().map(|&f| job.target.files[f].size).sum();
    if p.cache == CacheMode::Direct {
        return rep;
    }
    rep.may_be_cached = bytes < 2 * job.host.mem_total_bytes;
    let count = |rep: &mut CacheReport, before: bool| {
        let mut res = 0;
        let mut tot = 0;
        for &f in files {
            let df = &job.target.files[f];
            if let Ok(file) = std::fs::File::open(&df.path)
                && let Ok((r, t)) = sys::resident_pages(&file, df.size)
            {
                res += r;
                tot += t;
            }
        }
        rep.total_pages = Some(tot);
        if before {
            rep.resident_pages_before = Some(res);
        } else {
            rep.resident_pages_after = Some(res);
        }
        (res, tot)
    };
    count(&mut rep, true);
    match p.cache {
        CacheMode::Cold => {
            let mut method = vec!["posix_fadvise(DONTNEED)".to_string()];
            for &f in files {
                let df = &job.target.files[f];
                if let Ok(file) = std::fs::File::open(&df.path) {
                    // Dirty pages cannot be dropped: write them back first.
                    let _ = sys::fsync(file.as_raw_fd());
                    let _ = sys::fadvise_dontneed(file.as_raw_fd());
                }
            }
            if p.drop_caches {
                if storlab_host::os::is_root() {
                    sys::sync();
                    if std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok() {
                        method.push("drop_caches".into());
                    }
                } else {
                    method.push("drop_caches skipped (not root)".into());
                }
            }
            rep.method = Some(method.join(" + "));
            let (res, _) = count(&mut rep, false);
            rep.verified = Some(res == 0);
            if res == 0 && single_cold_pass(p) {
                // Every block is read once after a verified eviction: no
                // read can be served from the page cache.
                rep.may_be_cached = false;
            }
        }
        CacheMode::Warm => {
            let mut buf = vec![0u8; LAYOUT_CHUNK];
            for &f in files {
                let df = &job.target.files[f];
                if let Ok(file) = std::fs::File::open(&df.path) {
                    let mut off = 0;
                    while off < df.size && !control.stop.load(Ordering::Relaxed) {
                        match sys::pread(file.as_raw_fd(), &mut buf, off) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => off += n as u64,
                        }
                    }
                }
            }
            rep.method = Some("pre-read".into());
            let (res, tot) = count(&mut rep, false);
            rep.verified = Some(res == tot);
        }
        CacheMode::Buffered => {
            // Nothing done: what the earlier steps left resident is
            // measured (mincore, right before the window) and no state is
            // claimed of it.
            rep.method = Some("none (buffered; the page cache as earlier steps left it)".into());
            let (res, _) = count(&mut rep, false);
            rep.may_be_cached |= res > 0;
        }
        CacheMode::Direct => {}
    }
    rep
}

/// Whether a buffered phase touches each block at most once: one pass,
/// offsets without replacement. After a verified eviction its reads must
/// come from the device.
pub(crate) fn single_cold_pass(p: &PhaseParams) -> bool {
    p.cache == CacheMode::Cold && !p.time_based && p.loops <= 1 && !p.random_with_replacement
}

/// Read back the files a write phase wrote and check every unit (not timed).
fn verify_files(
    job: &ResolvedJob,
    p: &PhaseParams,
    files: &[usize],
    control: &Control,
    share: &Share,
) -> VerifyResult {
    let mut v = VerifyResult::default();
    let direct = p.cache == CacheMode::Direct && job.target.kind != TargetKind::BlockDevice;
    for &f in files {
        let df = &job.target.files[f];
        let note = |v: &mut VerifyResult, offset_bytes: u64, reason: String| {
            v.mismatches += 1;
            if v.first_mismatches.len() < MAX_REPORTED_MISMATCHES {
                v.first_mismatches.push(VerifyMismatch {
                    file: df.path.display().to_string(),
                    offset_bytes,
                    reason,
                });
            }
        };
        // A shared file is verified by every process, each its own slice.
        // The parts the phase wrote (fio's offsets leave holes around them).
        let ranges =
            crate::placement::file_ranges(p, f, job.target.shared, share.total_jobs, df.size);
        for (start, stop) in ranges {
            let stop = stop.min(df.size);
            let (from, to) = if job.target.shared {
                let (s, e) = share.slice_of(stop - start.min(stop));
                (start + s, start + e)
            } else {
                (start, stop)
            };
            // The same read-back a job group's verify pass makes (fsync,
            // cached pages dropped, every unit checked; verify_fatal ends
            // it at the first mismatch).
            let region = crate::verify::PassRegion {
                path: &df.path,
                file_id: f as u32,
                from,
                to,
            };
            let got = crate::verify::verify_pass(region, job.unit, p, direct, &control.stop);
            v.blocks_checked += got.checked;
            v.mismatches += got.bad_count - got.bad.len() as u64;
            for (o, why) in got.bad {
                note(&mut v, o, why);
            }
            if p.verify_opts.fatal && got.bad_count > 0 {
                return v;
            }
        }
    }
    v
}

fn merge_verify(a: Option<VerifyResult>, b: VerifyResult) -> VerifyResult {
    let mut a = a.unwrap_or_default();
    a.blocks_checked += b.blocks_checked;
    a.mismatches += b.mismatches;
    for m in b.first_mismatches {
        if a.first_mismatches.len() < MAX_REPORTED_MISMATCHES {
            a.first_mismatches.push(m);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SafetyOptions, prepare, resolve_phase, spec_from_pairs};

    /// A process of a multi-process run whose place among the jobs is
    /// fixed (everything else agreed at once).
    struct Fixed(Share);

    impl PhaseSync for Fixed {
        fn share(&self, _: usize, _: &PhaseParams) -> Share {
            self.0
        }
        fn agree(&self, ok: bool) -> bool {
            ok
        }
        fn start(&self, local_error: bool) -> Option<Instant> {
            (!local_error).then(Instant::now)
        }
        fn tick(&self, _: &Control, _: Instant, local_done: bool) -> bool {
            !local_done
        }
        fn written_extents(&self, _: &[(u32, u64)], _: u32) -> Option<Vec<u64>> {
            None
        }
    }

    fn phase(numjobs: &str) -> PhaseParams {
        let spec = spec_from_pairs([
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "64k"),
            ("engine", "null"),
            ("cache", "cold"),
            ("numjobs", numjobs),
        ])
        .unwrap();
        resolve_phase(&spec, 0).unwrap()
    }

    /// Rank 1 of two started with `--numjobs 2` where rank 0 (which made
    /// the files: 2 ranks × 1 job) had `--numjobs 1`: its jobs 2..4 have no
    /// files. That indexed past the file list (a panic, and the other
    /// rank waited for ever); now the run stops with the reason.
    #[test]
    fn jobs_past_the_prepared_files_stop_the_run_instead_of_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let mut job =
            prepare(Some(dir.path()), vec![phase("2")], SafetyOptions::default()).unwrap();
        assert_eq!(job.target.files.len(), 2);
        job.phases = vec![phase("2")];
        let sync = Fixed(Share {
            first_job: 2,
            total_jobs: 4,
            slice: 1,
            slices: 2,
        });
        let control = Control::new(2);
        let out = run_synced(&job, &control, &sync, |_| {});
        job.target.cleanup();
        assert!(out.phases.is_empty(), "no phase ran");
        let why = out.stop_reason.unwrap_or_default();
        assert!(why.contains("different --numjobs"), "{why}");
        // The same process in its place (jobs 1..2 of 2) runs.
        let mut job =
            prepare(Some(dir.path()), vec![phase("2")], SafetyOptions::default()).unwrap();
        job.phases = vec![phase("1")];
        let sync = Fixed(Share {
            first_job: 1,
            total_jobs: 2,
            slice: 1,
            slices: 2,
        });
        let out = run_synced(&job, &Control::new(1), &sync, |_| {});
        job.target.cleanup();
        assert_eq!(out.phases.len(), 1, "{:?}", out.stop_reason);
        assert_eq!(out.stop_reason, None);
    }
}
