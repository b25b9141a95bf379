//! `storlab-bench`: storlab's single-node I/O engine.
//!
//! The flow is one way: a job description ([`spec::JobFile`] /
//! [`PhaseSpec`]) is validated into [`storlab_types::PhaseParams`],
//! [`prepare`] resolves them against the system into a [`ResolvedJob`]
//! (target checked for safety, free space, files created), and [`run`] runs
//! the phases and returns [`storlab_types::PhaseResult`]s. Nothing here
//! prints; callers watch progress through [`Control`] and receive each
//! phase's result as soon as it is complete.
//!
//! The public API is what this page lists: the option table ([`OPTIONS`],
//! [`PhaseSpec`], [`resolve_phase`]), job files ([`JobFile`]), [`prepare`],
//! [`run`], [`Control`] and the result types of `storlab-types`; the
//! public modules [`cluster`] (multi-process hooks, MPI result merging and
//! the ranks' agreement on one job) and [`jobspec`] (job building: machine
//! defaults < job file < flags, the quick check, fio job files), [`ior`]
//! (IOR's flags as a storlab job), [`launcher`] (what the MPI launcher's
//! environment says), [`profiles`] (the published workloads)
//! and [`repeat`] (the spread of repeats). Everything else is private: `options` (the option table), `spec` (job files),
//! `target` (resolution and safety), `offsets` (permutations and regions),
//! `data` (what is written, verification), `engine` (null, psync, io_uring;
//! engines own their buffers), `worker` (one job's loop), `clock` (the
//! monotonic clock and the in-flight meter), `gate` (starting workers
//! together), `stats` (histograms and rates), `run` (the phase loop),
//! `sys` (raw system calls). `unsafe` is denied in the whole crate except
//! `sys` and `engine/uring.rs`, where each block carries its SAFETY
//! argument.
#![deny(unsafe_code)]

mod access;
mod clock;
pub mod cluster;
mod data;
mod dedupe;
pub mod devstat;
mod engine;
mod errors;
mod fio_flags;
mod fio_job;
mod gate;
pub mod groups;
pub mod iolog;
pub mod ior;
pub mod jobspec;
pub mod launcher;
mod limits;
mod offsets;
mod options;
mod pace;
mod placement;
mod prio;
pub mod profiles;
mod readcheck;
mod record;
pub mod repeat;
mod run;
mod runctl;
mod series;
mod spec;
mod stats;
mod sweep;
pub mod sweeper;
mod sys;
mod target;
mod verify;
mod worker;
mod zbd;

pub use cluster::{PhaseSync, Share, TICK};
/// Incompressible data for files other crates lay out (replay).
pub use data::fill_random;
pub use engine::{libaio_available, uring_available};
pub use fio_flags::{FIO_FLAGS, FioFlag, translate_fio_flag};
pub use fio_job::FioJobFile;
pub use groups::{MIN_OVERLAP, overlap, parse_group_arg, with_command_line};
pub use offsets::Rng;
pub use options::{
    FIO_UNIT_SPELLINGS, Flag, FlagError, OPTIONS, OptDef, OptKind, PAIRED, PhaseSpec, SpecError,
    find_option, parse_bssplit, parse_choice, resolve_phase, spec_from_flags, spec_from_pairs,
    typed_value,
};
pub use record::{FallbackError, Verdict, write_fallback};
pub use run::{
    Carried, LATENCY_SPAN, LayoutState, MIN_TRUSTED_IOS, MIN_TRUSTED_NS, RunOutcome, run,
    run_synced, run_synced_phases, run_with_layout,
};
pub use spec::JobFile;
pub use stats::{DirCounter, histogram_of, latency as latency_stats, new_histogram, rates};
pub use sweep::{
    MAX_POINTS, SweepPoint, Vary, expand as expand_sweep, short_size, split_group_key,
};
/// Page-cache control for files other crates lay out (replay).
pub use sys::{fadvise_dontneed, fadvise_whole_file, resident_pages, trim};
pub use target::{
    DataFile, ResolvedTarget, SafetyOptions, TargetError, TargetKind, own_run_dir, probe_direct,
    resolve as resolve_target,
};

/// What an fio job file reads besides its text (the environment, fio's
/// keywords, included files): `FioJobFile::parse_with` takes another source.
pub use fio_job::{JobSource as FioJobSource, Keyword as FioKeyword, System as FioSystem};

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use storlab_types::{CacheMode, EngineKind, HostInfo, PhaseParams};

/// A job ready to run: phases and the checked target.
#[derive(Debug, Clone)]
pub struct ResolvedJob {
    pub phases: Vec<PhaseParams>,
    pub target: ResolvedTarget,
    pub host: HostInfo,
    /// Verification/stamp unit in bytes (4 KiB or the smallest block size).
    pub unit: usize,
    pub warnings: Vec<String>,
}

/// Errors from [`prepare`].
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{0}")]
    Unsupported(String),
}

/// Resolve `phases` against `target` (None = `./storlab-scratch`): check
/// engines and safety, create storlab's files. Call
/// [`ResolvedTarget::cleanup`] when done.
pub fn prepare(
    target: Option<&Path>,
    phases: Vec<PhaseParams>,
    safety: SafetyOptions,
) -> Result<ResolvedJob, PrepareError> {
    if phases.is_empty() {
        return Err(PrepareError::Unsupported("the job has no phases".into()));
    }
    let mut phases = phases;
    placement::fill_to_end(&mut phases, target);
    // Before anything is created: threads, buffers and files must fit the
    // process limits, or a worker would fail to start part-way.
    limits::check(&phases).map_err(PrepareError::Unsupported)?;
    let mut warnings = Vec::new();
    // Every workload a phase runs: its groups, each with its own engine,
    // block sizes and cache mode.
    let flat = groups::flatten(&phases);
    if flat.iter().any(|p| p.engine == EngineKind::IoUring)
        && let Err(e) = engine::uring_available()
    {
        return Err(PrepareError::Unsupported(format!(
            "io_uring is not available here ({e}); use --engine psync"
        )));
    }
    if flat.iter().any(|p| p.engine == EngineKind::Libaio)
        && let Err(e) = engine::libaio_available()
    {
        return Err(PrepareError::Unsupported(format!(
            "native AIO (libaio) is not available here ({e}); use --engine io_uring or psync"
        )));
    }
    let min_bs = flat
        .iter()
        .flat_map(|p| p.bs.iter().map(|b| b.bs_bytes))
        .min()
        .unwrap_or(4096);
    let unit = verify::unit_for(&flat, min_bs).map_err(PrepareError::Unsupported)?;
    placement::check_offsets(&phases).map_err(PrepareError::Unsupported)?;
    if let Some(p) = flat
        .iter()
        .find(|p| p.verify && p.bs.iter().any(|b| b.bs_bytes % unit as u64 != 0))
    {
        return Err(PrepareError::Unsupported(format!(
            "phase {}: with --verify every block size must be a multiple of {unit} bytes",
            p.name
        )));
    }
    let host = storlab_host::host_info();
    let mut target = target::resolve(target, &phases, safety)?;
    if let Err(e) = groups::add_existing(&mut target, &phases) {
        target.cleanup();
        return Err(PrepareError::Unsupported(e));
    }
    // O_DIRECT must work on the target if a phase asks for it.
    if flat.iter().any(|p| p.cache == CacheMode::Direct) {
        let f = &target.files[0];
        if let Err(e) = sys::open(
            &f.path,
            sys::OpenFlags {
                write: false,
                create_new: false,
                direct: true,
            },
        ) {
            target.cleanup();
            return Err(PrepareError::Unsupported(format!(
                "{} does not support O_DIRECT ({e}); use --cache cold (buffered, evicted before each phase) or --cache warm",
                f.path.display()
            )));
        }
    }
    let working_set: u64 = target.files.iter().map(|f| f.size).sum();
    if flat
        .iter()
        .any(|p| p.cache != CacheMode::Direct && !run::single_cold_pass(p))
        && working_set < 2 * host.mem_total_bytes
    {
        warnings.push(format!(
            "buffered I/O on a working set of {} with {} of RAM: results may be served from the page cache \
             (use --cache direct or a size over 2× RAM to measure the device)",
            storlab_types::format_bytes(working_set),
            storlab_types::format_bytes(host.mem_total_bytes)
        ));
    }
    Ok(ResolvedJob {
        phases,
        target,
        host,
        unit,
        warnings,
    })
}

/// Progress counters of one job, updated by its worker once per batch.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct JobProgress {
    pub bytes: AtomicU64,
    pub ops: AtomicU64,
    /// Bytes handed to the kernel so far in the phase (ramp included).
    pub issued_bytes: AtomicU64,
    /// Stop issuing once `issued_bytes` reaches this (0 = no limit): the
    /// stonewall wear-out of a multi-process run.
    pub limit_bytes: AtomicU64,
    /// The job hit a hard error (its phase is lost).
    pub failed: AtomicBool,
}

/// Shared between the caller and the workers: the stop flag (Ctrl-C) and
/// live progress.
#[derive(Debug)]
pub struct Control {
    /// Set to stop as soon as possible; in-flight I/O is drained.
    pub stop: AtomicBool,
    /// Set to end the current phase's issuing early on purpose (stonewall):
    /// unlike `stop`, the phase is complete, not interrupted. Cleared at the
    /// start of each phase.
    pub phase_stop: AtomicBool,
    pub jobs: Vec<JobProgress>,
    pub phase: AtomicUsize,
    epoch: Instant,
    /// Nanoseconds after `epoch` when the current phase's workers started (0 = not yet).
    phase_start_ns: AtomicU64,
    /// Planned length of the phase (ramp + runtime), 0 when unknown.
    phase_planned_ns: AtomicU64,
    /// Bytes the phase moves in one pass (size-bound phases), 0 when time-bound.
    phase_planned_bytes: AtomicU64,
    /// Layout before the phase: bytes written and to write.
    layout_done: AtomicU64,
    layout_total: AtomicU64,
    reason: Mutex<Option<String>>,
    /// The last phase's measured window: first submission and last
    /// completion, ns after its common epoch.
    last_window: Mutex<Option<(u64, u64)>>,
    /// `bench --write-iolog`: where the workers record what they issue.
    iolog: std::sync::OnceLock<std::sync::Arc<iolog::Sink>>,
    /// The last phase's latency histograms (read, write), as
    /// `(value, count)` buckets: what a process sends so that another can
    /// merge them exactly.
    last_hists: Mutex<cluster::merge::RankHists>,
    /// fio's run-control options: what the jobs of a phase share (flows,
    /// exitall), reset at each phase.
    pub(crate) runctl: runctl::Shared,
    /// fio's zonemode=zbd: each file's zones, kept across phases.
    pub(crate) zbd: zbd::Registry,
}

/// A snapshot of progress for display.
#[derive(Debug, Clone, Copy)]
pub struct ProgressSnapshot {
    pub phase: usize,
    pub bytes: u64,
    pub ops: u64,
    /// Since the workers were released; None while laying out.
    pub elapsed_ns: Option<u64>,
    pub planned_ns: Option<u64>,
    /// Bytes one pass moves, for phases bounded by size rather than time.
    pub planned_bytes: Option<u64>,
    /// Laying out files before the phase: (bytes written, bytes to write).
    pub layout: Option<(u64, u64)>,
}

impl Control {
    /// A control for jobs of up to `max_jobs` workers.
    pub fn new(max_jobs: usize) -> Control {
        Control {
            stop: AtomicBool::new(false),
            phase_stop: AtomicBool::new(false),
            last_window: Mutex::new(None),
            last_hists: Mutex::new((Vec::new(), Vec::new())),
            jobs: (0..max_jobs).map(|_| JobProgress::default()).collect(),
            phase: AtomicUsize::new(0),
            epoch: Instant::now(),
            phase_start_ns: AtomicU64::new(0),
            phase_planned_ns: AtomicU64::new(0),
            phase_planned_bytes: AtomicU64::new(0),
            layout_done: AtomicU64::new(0),
            layout_total: AtomicU64::new(0),
            reason: Mutex::new(None),
            iolog: std::sync::OnceLock::new(),
            runctl: runctl::Shared::default(),
            zbd: zbd::Registry::default(),
        }
    }

    /// Record every I/O the workers issue from now on into `sink`
    /// (`bench --write-iolog`, [`iolog::Recording`]).
    pub fn record_iolog(&self, sink: std::sync::Arc<iolog::Sink>) {
        let _ = self.iolog.set(sink);
    }

    /// Ask the run to stop, saying why (the first reason is kept).
    pub fn request_stop(&self, reason: &str) {
        self.set_reason(reason.to_string());
        self.stop.store(true, Ordering::SeqCst);
    }

    fn set_reason(&self, r: String) {
        let mut g = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        g.get_or_insert(r);
    }

    /// Why the run was asked to stop.
    pub fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last phase's measured window (first submission, last
    /// completion), ns after the epoch its workers were released at.
    pub fn last_window(&self) -> Option<(u64, u64)> {
        *self.last_window.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_last_window(&self, w: Option<(u64, u64)>) {
        *self.last_window.lock().unwrap_or_else(|e| e.into_inner()) = w;
    }

    /// The last phase's latency histograms (read, write) as `(value,
    /// count)` buckets; [`histogram_of`] rebuilds one exactly.
    pub fn last_hists(&self) -> cluster::merge::RankHists {
        self.last_hists
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_last_hists(&self, read: &DirCounter, write: &DirCounter) {
        *self.last_hists.lock().unwrap_or_else(|e| e.into_inner()) =
            (stats::buckets(&read.hist), stats::buckets(&write.hist));
    }

    fn begin_phase(&self, index: usize) {
        self.phase.store(index, Ordering::Relaxed);
        self.phase_stop.store(false, Ordering::Relaxed);
        self.phase_start_ns.store(0, Ordering::Relaxed);
        self.layout_total.store(0, Ordering::Relaxed);
        self.layout_done.store(0, Ordering::Relaxed);
    }

    fn begin_layout(&self, total: u64) {
        self.layout_done.store(0, Ordering::Relaxed);
        self.layout_total.store(total, Ordering::Relaxed);
    }

    fn laid_out(&self, bytes: u64) {
        self.layout_done.fetch_add(bytes, Ordering::Relaxed);
    }

    fn reset_progress(&self) {
        for j in &self.jobs {
            j.bytes.store(0, Ordering::Relaxed);
            j.ops.store(0, Ordering::Relaxed);
            j.issued_bytes.store(0, Ordering::Relaxed);
            j.limit_bytes.store(0, Ordering::Relaxed);
            j.failed.store(false, Ordering::Relaxed);
        }
        self.runctl.reset();
    }

    fn mark_started(&self, t: Instant, p: &PhaseParams) {
        let ns = t.duration_since(self.epoch).as_nanos() as u64;
        self.phase_start_ns.store(ns.max(1), Ordering::Relaxed);
        self.phase_planned_ns.store(
            p.runtime_ns.map(|r| r + p.ramp_ns).unwrap_or(0),
            Ordering::Relaxed,
        );
        let bytes = if p.time_based {
            0
        } else {
            p.size_bytes.saturating_mul(u64::from(p.numjobs))
        };
        self.phase_planned_bytes.store(bytes, Ordering::Relaxed);
        self.layout_total.store(0, Ordering::Relaxed);
    }

    /// Current progress.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let start = self.phase_start_ns.load(Ordering::Relaxed);
        let planned = self.phase_planned_ns.load(Ordering::Relaxed);
        let planned_bytes = self.phase_planned_bytes.load(Ordering::Relaxed);
        let layout_total = self.layout_total.load(Ordering::Relaxed);
        ProgressSnapshot {
            phase: self.phase.load(Ordering::Relaxed),
            bytes: self
                .jobs
                .iter()
                .map(|j| j.bytes.load(Ordering::Relaxed))
                .sum(),
            ops: self
                .jobs
                .iter()
                .map(|j| j.ops.load(Ordering::Relaxed))
                .sum(),
            elapsed_ns: (start > 0)
                .then(|| (self.epoch.elapsed().as_nanos() as u64).saturating_sub(start)),
            planned_ns: (planned > 0).then_some(planned),
            planned_bytes: (planned_bytes > 0 && start > 0).then_some(planned_bytes),
            layout: (layout_total > 0 && start == 0)
                .then(|| (self.layout_done.load(Ordering::Relaxed), layout_total)),
        }
    }
}
