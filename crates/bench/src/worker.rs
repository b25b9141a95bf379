//! One job's I/O loop: keep `iodepth` I/Os in flight, time each from the
//! system call that hands it to the kernel to the moment its completion is
//! reaped, count only what completes inside the measured window, and stop
//! on time, on a finished pass, on an error or on Ctrl-C.
//!
//! The loop, [`Worker::run`], reads as its steps: refill every free slot,
//! handing the queued I/Os to the kernel in a few growing batches (2, 4,
//! 8, ...: the device gets the first at once, and a burst of 32 freed
//! slots costs 4–5 system calls, not 32; the first batch is as large as
//! the I/Os still in flight when the device is busy, so a deep queue is
//! refilled in one call; `iodepth_batch` N > 1 submits every N instead),
//! submit the rest, wait for a completion, reap every completion ready and
//! account. Nothing waits for a batch to fill: the
//! refill takes only slots free now. Timestamps:
//!
//! * **submission**: the clock is read immediately before the system call
//!   that carries the I/O, and that reading is the I/O's start. When a
//!   call carries several I/Os they share that reading; the later ones
//!   reach the device up to one submit call later, so their latency is
//!   overstated by at most that call's duration, which is measured (such a
//!   call never waits for completions) and reported (`stamp_error_ns`);
//! * **completion**: read once when the wait returns; the completions reaped
//!   then are exactly those present at that moment.
//!
//! The in-flight count changes only at those two moments, so the
//! time-weighted mean depth ([`DepthMeter`]) and the latencies obey
//! Little's law by construction: IOPS × mean latency = mean depth.

use crate::clock::{Clock, DepthMark, DepthMeter, MonoClock, mean_depth};
use crate::data::{self, DataGen};
use crate::engine::{
    Dir, Engine, Io, LibaioEngine, NullEngine, PsyncEngine, Slots, UringEngine, UringOptions,
};
use crate::gate::Ticket;
use crate::iolog::JobLog;
use crate::offsets::{OffsetGen, RegionMap, Rng, Skew};
use crate::pace::Pacer;
use crate::runctl::{Hold, JobCtl, Reaped};
use crate::series::{IntervalBuf, SeriesCollector};
use crate::stats::{DirCounter, ErrorCounts};
use crate::sys::{self, OpenFlags};
use crate::{Control, JobProgress};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;
use storlab_types::{CacheMode, EngineKind, PhaseParams, RandomDistribution, RwMode};

/// Everything one worker needs, decided before it starts.
#[derive(Debug, Clone)]
pub(crate) struct WorkerPlan {
    pub job: u32,
    pub path: PathBuf,
    pub file_id: u32,
    pub region: RegionMap,
    /// Logical bytes in this job's region.
    pub size: u64,
    pub unit: usize,
}

/// What a worker measured. Times are nanoseconds since the phase's common
/// epoch (the release of all workers).
#[derive(Debug, Default)]
pub(crate) struct WorkerOut {
    pub read: DirCounter,
    pub write: DirCounter,
    pub window_start_ns: Option<u64>,
    pub window_end_ns: Option<u64>,
    pub end_fsync_ns: u64,
    pub errors: ErrorCounts,
    /// The first hard error (stops the phase), e.g. "ENOSPC".
    pub fatal: Option<String>,
    /// One full pass of the region was completed while measuring.
    pub full_pass: bool,
    /// Full passes completed while measuring (`loops` asks for several).
    pub passes: u32,
    pub verify_checked: u64,
    pub verify_bad: Vec<(u64, String)>,
    pub verify_bad_count: u64,
    /// Latency per command priority (fio's cmdprio; prio.rs).
    pub prio_lat: crate::prio::PrioLat,
    /// Whether io_uring registration took effect (None for other engines).
    pub registered: Option<bool>,
    /// Time-weighted mean I/Os in flight from the window's first submission
    /// until issuing stopped (the steady state; the final drain excluded).
    pub mean_depth: Option<f64>,
    /// The depth the worker tried to keep (slots).
    pub target_depth: usize,
    /// Longest submit call that carried several I/Os under one timestamp:
    /// the bound on how much a shared stamp overstates a latency.
    pub stamp_error_ns: Option<u64>,
    /// Sum and count of those calls' durations.
    pub stamp_error_sum: (u64, u64),
    /// What kept slots free, measured over the same window as `mean_depth`.
    pub causes: DepthCauses,
    /// fio's latency_target search: the depth found, whether it settled,
    /// whether it failed at depth 1.
    pub latency_target: Option<(u32, bool, bool)>,
}

/// What the worker measured about the time its slots were not in flight,
/// over the window of `mean_depth` (first submission until issuing
/// stopped): the depth warning names the cause from these, not a guess.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DepthCauses {
    /// Length of the window.
    pub window_ns: u64,
    /// Asleep for the rate cap or `thinktime`.
    pub paced_ns: u64,
    /// The worker thread on a CPU, and runnable but waiting for one (the
    /// scheduler's own counters; None where the kernel has no schedstat).
    pub on_cpu_ns: Option<u64>,
    pub cpu_wait_ns: Option<u64>,
    /// In submit calls that do not wait: the kernel's submission path,
    /// during which the slots not yet handed over stay free.
    pub submit_ns: u64,
    /// Submit calls in which the kernel took fewer I/Os than offered
    /// (EAGAIN/EBUSY: its queue was full).
    pub refused: u64,
    /// Where the missing depth went, as slot-nanoseconds (a slot free for
    /// 1 µs = 1000): free slots during submit calls that do not wait (the
    /// kernel's submission path; the slots later in a refill wait for the
    /// calls before theirs), during calls that wait (the refill held I/Os
    /// back: flow control, an fsync due), and while asleep (rate cap,
    /// thinktime), and in the fsync calls of `fsync` (every N writes). The
    /// rest of `depth × window − area` was spent between a reap and the
    /// next submit call (storlab's own processing, and any time the worker
    /// was preempted there).
    pub lost_submit: u64,
    pub lost_wait: u64,
    pub lost_sleep: u64,
    pub lost_fsync: u64,
    /// Free slots during stalls: a stretch of at least [`STALL_NS`] in
    /// user space between a reap (or a submit call's return) and the next
    /// submit call, or a submit call that took that long — the worker off
    /// its CPU with freed slots in hand (storlab's own work there takes
    /// microseconds, unless a large verify or checksum runs there). Not
    /// counted in `lost_submit`.
    pub lost_stall: u64,
}

/// A stretch without a system call this long, in the middle of a refill,
/// is the worker being preempted (or a page fault storm), not its work.
pub(crate) const STALL_NS: u64 = 200_000;

/// The I/Os an adaptive refill hands over in its first call. After a burst
/// of completions the device is idle until the first new I/O reaches it, so
/// the first call is small: the kernel plugs (holds back until the call
/// ends) the I/Os of a call carrying more than two, and the kernel's
/// submission path costs microseconds per I/O, so one call carrying a whole
/// burst of 32 kept the virtio disk idle ~80 µs per burst (−15 % IOPS),
/// while one call per I/O costs a system call per I/O. Each later call of
/// the refill carries twice the one before (2, 4, 8, 16): a burst of 32
/// takes 4–5 calls, and the device has work from the first microseconds
/// (docs/PERFORMANCE.md, issue 22).
///
/// The first call carries more when the device is busy: as many I/Os as
/// are still in flight (so a burst of 16 freed at QD 32 with 16 still at
/// the device goes in one call; at QD 128 nearly every refill is one call).
/// Holding them for the call's duration cannot idle a device that still
/// has that many to serve, and each call saved is a return to user space
/// where a busy machine preempts the worker with slots not yet handed
/// over (libaio 4 KiB reads at QD 128: 121.8 → 123.1 in flight, 51k → 57k
/// IOPS, A/B of 6 rounds; no change at QD 32, where a burst usually leaves
/// few in flight).
pub(crate) const FIRST_CHUNK: usize = 2;

/// Keeps the first few mismatches; counts all.
pub(crate) const MAX_REPORTED_MISMATCHES: usize = 8;

/// Run one worker: get ready, wait at the gate, run the loop.
pub(crate) fn run_worker(
    plan: &WorkerPlan,
    p: &PhaseParams,
    control: &Control,
    progress: &JobProgress,
    series: &SeriesCollector,
    ticket: Ticket<'_>,
) -> WorkerOut {
    let env = Env {
        control,
        progress,
        series,
    };
    let mut out = WorkerOut::default();
    let file = match sys::open(
        &plan.path,
        OpenFlags {
            write: p.rw.writes(),
            create_new: false,
            direct: p.cache == CacheMode::Direct,
        },
    ) {
        Ok(f) => f,
        Err(e) => {
            drop(ticket);
            out.fatal = Some(format!("cannot open {}: {e}", plan.path.display()));
            return out;
        }
    };
    // fio's numa_cpu_nodes/numa_mem_policy/prio (placement.rs): nothing when unset.
    if let Err(m) = crate::placement::prepare_thread(p) {
        drop(ticket);
        out.fatal = Some(m);
        return out;
    }
    let depth = match p.engine {
        EngineKind::Psync => 1,
        _ => p.iodepth.max(1) as usize,
    };
    let slots = match Slots::new(depth, p.max_bs() as usize) {
        Ok(s) => s,
        Err(e) => {
            drop(ticket);
            out.fatal = Some(format!("cannot map {depth} I/O buffers: {e}"));
            return out;
        }
    };
    let fd = file.as_raw_fd();
    match p.engine {
        EngineKind::Null => {
            let service = (p.null_latency_ns > 0).then(|| Duration::from_nanos(p.null_latency_ns));
            let e = NullEngine::new(slots, service);
            start(e, plan, p, env, ticket, fd, out)
        }
        EngineKind::Psync => start(PsyncEngine::new(fd, slots), plan, p, env, ticket, fd, out),
        EngineKind::Libaio => match LibaioEngine::new(fd, slots) {
            Ok(e) => start(e, plan, p, env, ticket, fd, out),
            Err(e) => {
                drop(ticket);
                out.fatal = Some(format!(
                    "libaio setup (io_setup) failed: {e}; check fs.aio-max-nr or try --engine io_uring"
                ));
                out
            }
        },
        EngineKind::IoUring => {
            let opts = UringOptions {
                registered: p.registered,
                sqpoll: p.sqpoll,
            };
            match UringEngine::new(fd, slots, opts) {
                Ok(e) => start(e, plan, p, env, ticket, fd, out),
                Err(e) => {
                    drop(ticket);
                    out.fatal = Some(format!("io_uring setup failed: {e}; try --engine psync"));
                    out
                }
            }
        }
    }
    // `file` is closed here, after the engine (and its in-flight I/O) is gone.
}

/// What the worker shares with the run: stop flag, progress, time series.
#[derive(Debug, Clone, Copy)]
struct Env<'a> {
    control: &'a Control,
    progress: &'a JobProgress,
    series: &'a SeriesCollector,
}

fn start<E: Engine>(
    engine: E,
    plan: &WorkerPlan,
    p: &PhaseParams,
    env: Env<'_>,
    ticket: Ticket<'_>,
    fd: i32,
    mut out: WorkerOut,
) -> WorkerOut {
    out.registered = engine.registered();
    // fio's run-control options: registered before the release.
    let mut ctl = JobCtl::of(plan.job, p, &env.control.runctl);
    let Some(epoch) = ticket.wait() else {
        out.fatal = Some("the phase was called off before it started".into());
        return out;
    };
    let ctx = Ctx {
        plan,
        p,
        control: env.control,
        progress: env.progress,
        series: env.series,
        fd,
    };
    if let Some(c) = &mut ctl {
        c.start_delay(&env.control.stop, &env.control.phase_stop);
    }
    let mut worker = Worker::new(engine, MonoClock::new(epoch), ctx, out);
    worker.ctl = ctl.map(|mut c| {
        c.started(worker.now);
        c
    });
    match crate::zbd::for_job(&env.control.zbd, plan, p) {
        Ok(z) => worker.zbd = z,
        Err(m) => worker.fail("ZBD", m),
    }
    worker.iolog = JobLog::new(
        env.control.iolog.get().map(|s| &**s),
        plan.job,
        &plan.path,
        epoch,
    );
    worker.run()
}

/// What the worker reads but does not own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub plan: &'a WorkerPlan,
    pub p: &'a PhaseParams,
    pub control: &'a Control,
    pub progress: &'a JobProgress,
    /// The phase's time series (and its steady-state judge).
    pub series: &'a SeriesCollector,
    /// The data file (fsync); the engine holds its own use of it.
    pub fd: i32,
}

/// Per-slot bookkeeping of the I/O it carries.
#[derive(Debug, Clone, Copy)]
struct SlotMeta {
    dir: Dir,
    len: u32,
    offset: u64,
    submitted_ns: u64,
}

/// What to issue next: directions, sizes, offsets and write data.
#[derive(Debug)]
struct IoGen {
    rng: Rng,
    offsets: OffsetGen,
    data: DataGen,
    seed: u64,
    total_weight: u32,
    read_pct: u64,
    /// Writes since each slot's payload was generated (0 = regenerate).
    slot_uses: Vec<u32>,
    /// A random block-size mix ends a pass after `size` bytes, as fio does
    /// (its offsets step over max-bs slots, which a pass would under-fill).
    by_bytes: bool,
    /// Bytes issued in the current pass (with `by_bytes`).
    pass_bytes: u64,
    /// A skewed `random_distribution`, built once per job (its hot blocks
    /// stay put across passes).
    skew: Option<Skew>,
    /// fio's dedupe_percentage (dedupe.rs): the content of each write.
    dedupe: Option<crate::dedupe::Deduper>,
}

impl IoGen {
    fn new(ctx: &Ctx<'_>, depth: usize) -> IoGen {
        let (p, plan) = (ctx.p, ctx.plan);
        let seed = p.seed ^ u64::from(plan.job).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let skew = p
            .random_distribution
            .as_ref()
            .filter(|d| p.rw.is_random() && !matches!(d, RandomDistribution::Sequence { .. }))
            .map(|d| Skew::new(d, plan.size / p.max_bs(), p.max_bs(), seed));
        let mut data = DataGen::new(
            p.buffer_pattern,
            plan.unit,
            p.seed,
            p.verify,
            1 + u64::from(plan.job),
        );
        data.set_pattern(p.verify_opts.pattern.clone());
        IoGen {
            rng: Rng::new(seed),
            offsets: Self::offsets(ctx, seed, skew.as_ref()),
            data,
            seed,
            total_weight: p.bs.iter().map(|b| b.weight).sum(),
            // Read-modify-write: the generator issues the reads; each
            // write follows its read's completion (Worker::rmw_writes).
            read_pct: if p.rw == RwMode::ReadModifyWrite {
                100
            } else {
                u64::from(p.rw.read_pct(p.rwmixread))
            },
            slot_uses: vec![0; depth],
            // Several sizes at random offsets, or fio's skips: a pass is
            // `size` bytes, as in fio.
            by_bytes: ((p.bs.len() > 1 || p.bs_write_bytes.is_some()) && p.rw.is_random())
                || p.seq_skip_bytes != 0,
            pass_bytes: 0,
            skew,
            dedupe: crate::dedupe::for_job(p, plan.job, ctx.control.jobs.len(), plan.size),
        }
    }

    fn offsets(ctx: &Ctx<'_>, pass_seed: u64, skew: Option<&Skew>) -> OffsetGen {
        let p = ctx.p;
        // fio: sprandom's offsets come before any distribution's.
        if let Some(spr) = p.run_control.and_then(|r| r.sprandom)
            && p.rw.is_random()
        {
            return OffsetGen::sprandom(&spr, ctx.plan.size, p.max_bs(), pass_seed);
        }
        if let Some(skew) = skew {
            return OffsetGen::skewed(skew.clone(), p.max_bs());
        }
        if let Some(RandomDistribution::Sequence { blocks, stride }) = &p.random_distribution
            && p.rw.is_random()
        {
            return OffsetGen::sequence(blocks, *stride, ctx.plan.size, p.max_bs());
        }
        if p.zone_size_bytes != 0 {
            return OffsetGen::strided(
                p.zone_size_bytes,
                p.zone_range_bytes,
                p.zone_skip_bytes,
                ctx.plan.size,
            );
        }
        if p.seq_skip_bytes != 0 && !p.rw.is_random() {
            return OffsetGen::skipping(ctx.plan.size, p.seq_skip_bytes);
        }
        OffsetGen::new(
            p.rw.is_random(),
            p.random_with_replacement,
            ctx.plan.size,
            p.max_bs(),
            pass_seed,
        )
    }

    /// The ramp is over: a full pass is counted from here.
    fn restart_pass(&mut self, ctx: &Ctx<'_>) {
        self.offsets = Self::offsets(ctx, self.seed ^ 0x5241_4D50, self.skew.as_ref());
        self.pass_bytes = 0;
    }

    fn pick_bs(&mut self, p: &PhaseParams) -> u64 {
        if p.bs.len() == 1 {
            return p.bs[0].bs_bytes;
        }
        let mut r = self.rng.below(u64::from(self.total_weight)) as u32;
        for b in &p.bs {
            if r < b.weight {
                return b.bs_bytes;
            }
            r -= b.weight;
        }
        p.bs[0].bs_bytes
    }

    /// Direction, size and logical offset of the next I/O, and whether it
    /// starts a new pass over the region.
    fn next(&mut self, p: &PhaseParams, size: u64) -> (Dir, u64, u64, bool) {
        let rp = self.read_pct;
        let is_read = rp == 100 || (rp > 0 && self.rng.below(100) < rp);
        let dir = if is_read { Dir::Read } else { Dir::Write };
        let mut bs = match (dir, p.bs_write_bytes) {
            (Dir::Write, Some(w)) => w,
            _ => self.pick_bs(p),
        };
        if !self.by_bytes {
            let (logical, wrapped) = self.offsets.next(bs, &mut self.rng);
            return (dir, bs, logical, wrapped);
        }
        let sizes = || p.bs.iter().map(|b| b.bs_bytes).chain(p.bs_write_bytes);
        let min_bs = sizes().min().unwrap_or(bs);
        let mut wrapped = false;
        if size.saturating_sub(self.pass_bytes) < min_bs {
            self.pass_bytes = 0;
            wrapped = true;
        }
        let left = size - self.pass_bytes;
        if bs > left {
            // The pass ends on exactly `size` bytes: the largest size that fits.
            bs = sizes().filter(|&b| b <= left).max().unwrap_or(min_bs);
        }
        self.pass_bytes += bs;
        let (logical, _) = self.offsets.next(bs, &mut self.rng);
        (dir, bs, logical, wrapped)
    }

    /// Prepare slot `slot`'s buffer for what it will carry.
    fn prepare(&mut self, buf: &mut [u8], slot: u32, dir: Dir, bs: u64, file: u32, off: u64) {
        let uses = &mut self.slot_uses[slot as usize];
        if dir == Dir::Read {
            // A read will overwrite the payload: regenerate before the next write.
            *uses = 0;
            return;
        }
        if let Some(d) = &mut self.dedupe {
            return d.fill(&mut buf[..bs as usize], self.data.unit());
        }
        let regenerate = *uses == 0 || *uses >= data::REGENERATE_EVERY;
        *uses = if regenerate { 1 } else { *uses + 1 };
        // Regenerate the whole buffer so a later, larger block (--bssplit)
        // never writes a stale or zero tail.
        let len = if regenerate { buf.len() } else { bs as usize };
        self.data.fill(&mut buf[..len], file, off, regenerate);
    }
}

/// What [`Worker::generate`] produced.
#[derive(Debug, Clone, Copy)]
enum Gen {
    Io(Dir, u64, u64),
    Again,
    Stop,
}

/// The measured window and when to stop issuing.
#[derive(Debug, Default)]
struct Window {
    measuring: bool,
    ramp_end_ns: u64,
    deadline_ns: Option<u64>,
    issuing: bool,
    /// First submission of the window and the meter there.
    start: Option<DepthMark>,
    /// When issuing stopped, and the meter there.
    stop: Option<DepthMark>,
    /// The thread's scheduler counters at `start`.
    sched: Option<(u64, u64)>,
}

/// One worker's loop state. See the module documentation.
pub(crate) struct Worker<'a, E: Engine, C: Clock> {
    engine: E,
    clock: C,
    ctx: Ctx<'a>,
    iogen: IoGen,
    slots: Vec<SlotMeta>,
    free: Vec<u32>,
    /// Queued in the engine, not yet handed to the kernel (to be stamped).
    pending: Vec<u32>,
    /// Completions of the current reap.
    reaped: Vec<(u32, i32)>,
    /// `iodepth_batch` when above 1: hand queued I/Os over every N during
    /// a refill. None (the default, 1): adaptive, see [`Worker::refill`].
    batch: Option<usize>,
    /// How many queued I/Os the refill hands over in its next call.
    chunk: usize,
    /// When the worker last came back to user space with slots to refill
    /// (a reap, or a submit call's return): a long stretch from here to the
    /// next stamp is a stall (`DepthCauses::lost_stall`).
    back_ns: u64,
    win: Window,
    meter: DepthMeter,
    out: WorkerOut,
    writes_since_fsync: u32,
    need_fsync: bool,
    issued: u64,
    issued_bytes: u64,
    /// The latest clock reading (deadline checks use it instead of reading
    /// the clock once more per round).
    now: u64,
    prog_bytes: u64,
    prog_ops: u64,
    /// This job's current interval of the time series.
    ibuf: IntervalBuf,
    /// No new I/O before this time (`thinktime` after a completion).
    think_until: u64,
    /// Read-modify-write: blocks read and not yet written back (offset, length).
    rmw_writes: std::collections::VecDeque<(u64, u32)>,
    /// Read-modify-write: reads in flight, and whether the last pass's reads are all issued.
    rmw_reads_in_flight: usize,
    rmw_reads_done: bool,
    /// `--write-iolog`: what this job issues, buffered off the I/O path.
    iolog: Option<JobLog>,
    /// The rate caps (`rate_iops`, `rate`), if any.
    pacer: Option<Pacer>,
    /// An I/O generated but not yet due under the rate caps: issued first
    /// once it is.
    staged: Option<(Dir, u64, u64)>,
    /// I/Os and bytes issued while measuring (`number_ios`, `io_size`).
    win_ios: u64,
    win_bytes: u64,
    /// fio's cmdprio_* (prio.rs): each I/O's priority; None without.
    prio: Option<crate::prio::Picker>,
    /// fio's verify_backlog (verify.rs): written blocks read back every N.
    backlog: Option<crate::verify::Backlog>,
    /// fio's run-control options (flow, exitall, rate_min, latency
    /// target): None when the phase sets none of them.
    ctl: Option<JobCtl<'a>>,
    /// A trim phase's target is a block device (discard) or not (punch a
    /// hole); learnt at its first trim.
    trim_dev: Option<bool>,
    /// fio's zonemode=zbd (zbd.rs): where each I/O lands in its zone.
    zbd: Option<crate::zbd::ZbdJob>,
    /// `STORLAB_REFILL_TRACE`: where the depth goes (a diagnostic; None
    /// unless the variable is set).
    trace: Option<Box<trace::RefillTrace>>,
}

impl<E: Engine, C: Clock> std::fmt::Debug for Worker<'_, E, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("job", &self.ctx.plan.job)
            .finish()
    }
}

impl<'a, E: Engine, C: Clock> Worker<'a, E, C> {
    pub(crate) fn new(engine: E, clock: C, ctx: Ctx<'a>, mut out: WorkerOut) -> Self {
        let depth = engine.depth();
        let p = ctx.p;
        out.target_depth = depth;
        let now = clock.now();
        let measuring = p.ramp_ns == 0;
        Worker {
            iogen: IoGen::new(&ctx, depth),
            slots: vec![
                SlotMeta {
                    dir: Dir::Read,
                    len: 0,
                    offset: 0,
                    submitted_ns: 0,
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            pending: Vec::with_capacity(depth),
            reaped: Vec::with_capacity(depth),
            batch: (p.iodepth_batch > 1).then(|| (p.iodepth_batch as usize).min(depth.max(1))),
            chunk: FIRST_CHUNK,
            back_ns: now,
            win: Window {
                measuring,
                ramp_end_ns: now.saturating_add(p.ramp_ns),
                deadline_ns: if measuring {
                    p.runtime_ns.map(|r| now.saturating_add(r))
                } else {
                    None
                },
                issuing: true,
                start: None,
                stop: None,
                sched: None,
            },
            meter: DepthMeter::default(),
            out,
            writes_since_fsync: 0,
            need_fsync: false,
            issued: 0,
            issued_bytes: 0,
            now,
            prog_bytes: 0,
            prog_ops: 0,
            ibuf: IntervalBuf::default(),
            think_until: 0,
            rmw_writes: std::collections::VecDeque::new(),
            rmw_reads_in_flight: 0,
            rmw_reads_done: false,
            iolog: None,
            pacer: Pacer::of(p, p.seed ^ u64::from(ctx.plan.job)),
            staged: None,
            win_ios: 0,
            win_bytes: 0,
            prio: crate::prio::Picker::of(&p.prio, p.seed ^ u64::from(ctx.plan.job), depth),
            backlog: crate::verify::Backlog::of(p),
            trim_dev: None,
            zbd: None,
            trace: trace::RefillTrace::from_env(depth),
            ctl: None,
            engine,
            clock,
            ctx,
        }
    }

    /// The whole loop. Returns what was measured; the engine is dropped
    /// (waiting for any I/O still in flight) before this returns.
    pub(crate) fn run(mut self) -> WorkerOut {
        let start_ns = self.now;
        loop {
            self.check_stop();
            let throttled = if self.win.issuing && !self.need_fsync {
                self.refill(start_ns)
            } else {
                None
            };
            if self.engine.in_flight() + self.pending.len() == 0 {
                if let Some(due) = throttled {
                    self.sleep_until(due);
                    continue;
                }
                if self.need_fsync {
                    self.fsync_now();
                    continue;
                }
                break;
            }
            if !self.submit_and_reap() {
                break;
            }
        }
        let (ctl, control) = (self.ctl.take(), self.ctx.control);
        let mut out = self.finish();
        if let Some(c) = ctl {
            out.latency_target = c.lat_found();
            c.done(&control.phase_stop);
        }
        out
    }

    /// Stop issuing on Ctrl-C, when the runtime is over or once steady.
    /// On Ctrl-C and at the deadline, synthetic I/O still in flight (a null
    /// service time longer than the runtime) is given up, not waited for.
    fn check_stop(&mut self) {
        let over = self.win.deadline_ns.is_some_and(|d| self.now >= d);
        let control = self.ctx.control;
        let cut = over
            || control.stop.load(Ordering::Relaxed)
            || control.phase_stop.load(Ordering::Relaxed)
            || self.ctl.as_mut().is_some_and(|c| c.stopped_by_group());
        if self.win.issuing && (cut || self.ctx.series.steady_reached()) {
            self.stop_issuing(self.now);
        }
        if cut && self.engine.in_flight() > 0 {
            self.abandon_in_flight();
        }
    }

    /// Free the slots of the I/Os the engine gave up (not counted: they
    /// did not complete).
    fn abandon_in_flight(&mut self) {
        let (free, slots) = (&mut self.free, &self.slots);
        let mut reads = 0;
        let n = self.engine.abandon(|slot| {
            free.push(slot);
            reads += usize::from(slots[slot as usize].dir == Dir::Read);
        });
        if n > 0 {
            if self.ctx.p.rw == RwMode::ReadModifyWrite {
                self.rmw_reads_in_flight = self.rmw_reads_in_flight.saturating_sub(reads);
            }
            let t = self.clock.now();
            self.meter.set(t, self.engine.in_flight());
        }
    }

    fn stop_issuing(&mut self, t: u64) {
        self.win.issuing = false;
        if let Some(start) = self.win.start
            && self.win.stop.is_none()
        {
            self.win.stop = Some((t, self.meter.area_at(t)));
            let c = &mut self.out.causes;
            c.window_ns = t.saturating_sub(start.0);
            if let (Some(a), Some(b)) = (self.win.sched, sys::thread_sched()) {
                c.on_cpu_ns = Some(b.0.saturating_sub(a.0));
                c.cpu_wait_ns = Some(b.1.saturating_sub(a.1));
            }
        }
    }

    /// The measured window starts at `t` (its first submission, or the end
    /// of the ramp).
    fn mark_start(&mut self, t: u64) {
        self.win.start = Some((t, self.meter.area_at(t)));
        self.win.sched = sys::thread_sched();
    }

    /// Between the window's first submission and the end of issuing.
    fn in_window(&self) -> bool {
        self.win.start.is_some() && self.win.stop.is_none()
    }

    /// Queue an I/O on every free slot (paced by the rate cap), handing the
    /// queued ones to the kernel as the refill goes: adaptively (the
    /// default) the first [`FIRST_CHUNK`] at once, then twice as many per
    /// call as the call before (2, 4, 8, 16, ...), or every `iodepth_batch`
    /// when that is above 1. What is left at the end is submitted by
    /// [`Worker::submit_and_reap`]; nothing waits for a batch to fill.
    /// Returns when the rate cap next allows an I/O, if it is what stopped
    /// the refill.
    fn refill(&mut self, start_ns: u64) -> Option<u64> {
        let p = self.ctx.p;
        // Adaptive: the first call is small only when the device is nearly
        // idle; with as many I/Os still in flight as the call carries, the
        // device has work during the whole call (see FIRST_CHUNK).
        self.chunk = self
            .batch
            .unwrap_or_else(|| FIRST_CHUNK.max(self.engine.in_flight()));
        while let Some(&slot) = self.free.last() {
            if self.think_until > 0 && self.clock.now() < self.think_until {
                return Some(self.think_until);
            }
            if self.pending.len() >= self.chunk {
                if self.batch.is_none() {
                    self.chunk = self.chunk.saturating_mul(2);
                }
                if !self.flush() {
                    return None;
                }
                // Completions the flush brought out are reaped at once, so
                // their slots are refilled in this same pass.
                self.reap_ready();
                self.check_stop();
                if !self.win.issuing || self.need_fsync {
                    return None;
                }
                continue;
            }
            // A multi-process run's stonewall wear-out: up to a byte count.
            let limit = self.ctx.progress.limit_bytes.load(Ordering::Relaxed);
            if limit > 0 && self.issued_bytes >= limit {
                self.stop_issuing(self.now);
                return None;
            }
            if self.staged.is_none() && self.enough_done() {
                self.stop_issuing(self.now);
                return None;
            }
            if let Some(c) = &mut self.ctl {
                let out = self.engine.in_flight() + self.pending.len();
                match c.hold(out, self.staged.is_none(), &self.clock) {
                    Hold::Go => {}
                    Hold::Wait => return None,
                    Hold::Until(due) => return Some(due),
                    Hold::Stop => {
                        self.stop_issuing(self.now);
                        return None;
                    }
                }
            }
            let (mut dir, bs, offset) = match self.staged.take() {
                Some(io) => io,
                None => match self.generate() {
                    Gen::Io(dir, bs, offset) => (dir, bs, offset),
                    Gen::Again => continue,
                    Gen::Stop => return None,
                },
            };
            if let Some(pacer) = &mut self.pacer {
                let now = self.clock.now();
                let mut due = start_ns.saturating_add(pacer.due(dir, bs));
                // fio's rate_ddir: a mixed phase whose direction is ahead
                // of its cap issues the other one if that is due sooner
                // (each direction then meets its own cap; the mix gives
                // way). Not with bs_write: the I/O's size is its direction's.
                let mixed = matches!(p.rw, RwMode::ReadWrite | RwMode::RandRw);
                if now < due && mixed && p.bs_write_bytes.is_none() {
                    let other = match dir {
                        Dir::Read => Dir::Write,
                        Dir::Write => Dir::Read,
                    };
                    let other_due = start_ns.saturating_add(pacer.due(other, bs));
                    if other_due < due {
                        (dir, due) = (other, other_due);
                    }
                }
                if now < due {
                    self.staged = Some((dir, bs, offset));
                    return Some(due);
                }
                pacer.issued(dir, bs);
            }
            if self.win.measuring {
                self.win_ios += 1;
                self.win_bytes += bs;
            }
            if p.rw == RwMode::ReadModifyWrite && dir == Dir::Read {
                self.rmw_reads_in_flight += 1;
            }
            self.issued += 1;
            self.issued_bytes += bs;
            self.free.pop();
            if p.rw.trims() {
                if !self.trim_now(slot, bs, offset) {
                    return None;
                }
                continue;
            }
            let file = self.ctx.plan.file_id;
            self.iogen
                .prepare(self.engine.buf_mut(slot), slot, dir, bs, file, offset);
            if let Some(k) = &mut self.prio {
                let v = k.assign(&p.prio, slot, dir == Dir::Read, bs);
                self.engine.set_ioprio(slot, v);
            }
            let io = Io {
                slot,
                dir,
                offset,
                len: bs as u32,
            };
            if let Err(e) = self.engine.queue(io) {
                self.fail("QUEUE", format!("internal error: {e}"));
                return None;
            }
            self.slots[slot as usize] = SlotMeta {
                dir,
                len: bs as u32,
                offset,
                submitted_ns: 0,
            };
            self.pending.push(slot);
        }
        None
    }

    /// fio's trim (`rw=trim|randtrim`): synchronous in every fio engine
    /// (`do_io_u_trim`), so here too: a hole punched in a file, `BLKDISCARD`
    /// on a block device (target.rs lets a phase that writes reach a device
    /// only with `--allow-destroy`). Counted as a completed write-direction
    /// I/O of the slot. False once issuing stops.
    fn trim_now(&mut self, slot: u32, bs: u64, offset: u64) -> bool {
        let t0 = self.clock.now();
        if self.win.measuring && self.win.start.is_none() {
            self.mark_start(t0);
        }
        self.slots[slot as usize] = SlotMeta {
            dir: Dir::Write,
            len: bs as u32,
            offset,
            submitted_ns: t0,
        };
        self.meter.set(t0, 1);
        // What the job's descriptor is, not what its path names now.
        let fd = self.ctx.fd;
        let dev = *self
            .trim_dev
            .get_or_insert_with(|| sys::is_block_device_fd(fd));
        if let Some(log) = &mut self.iolog {
            log.trimmed(t0, offset, bs as u32);
        }
        let res = match sys::trim(self.ctx.fd, offset, bs, dev) {
            Ok(()) => bs as i32,
            Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
        };
        let tc = self.clock.now();
        self.meter.set(tc, 0);
        self.now = tc;
        if !self.win.measuring && tc >= self.win.ramp_end_ns {
            self.begin_measuring();
        }
        self.complete(slot, res, tc);
        self.check_stop();
        self.win.issuing && !self.need_fsync
    }

    /// The next I/O of the pattern: a read-modify-write's write-back, or
    /// the generator's next; or loop again, or stop (the passes are done).
    fn generate(&mut self) -> Gen {
        let p = self.ctx.p;
        let rmw = p.rw == RwMode::ReadModifyWrite;
        if let Some((off, len)) = self.rmw_writes.pop_front().filter(|_| rmw) {
            // Write back a block whose read has completed.
            return Gen::Io(Dir::Write, u64::from(len), off);
        }
        if rmw && self.rmw_reads_done {
            // The last pass's reads are issued: wait for them, write
            // their blocks back, then stop.
            if self.rmw_reads_in_flight == 0 {
                self.stop_issuing(self.now);
            }
            return Gen::Stop;
        }
        let (dir, bs, logical, wrapped) = self.iogen.next(p, self.ctx.plan.size);
        let mut offset = self.ctx.plan.region.physical(logical);
        // fio's zonemode=zbd: the I/O moves to its zone's write pointer.
        let (dir, bs, wrapped) = match self.zbd.as_mut().map(|z| z.place(dir, bs, offset, wrapped))
        {
            None => (dir, bs, wrapped),
            Some(Some(io)) => {
                offset = io.offset;
                (io.dir, io.len, io.wrapped)
            }
            Some(None) => {
                self.stop_issuing(self.now);
                return Gen::Stop;
            }
        };
        if wrapped && self.win.measuring {
            self.out.full_pass = true;
            self.out.passes += 1;
            // io_size decides the end instead of the passes.
            if !p.time_based && p.io_size_bytes == 0 && self.out.passes >= p.loops {
                if rmw {
                    self.rmw_reads_done = true;
                    return Gen::Again;
                }
                self.stop_issuing(self.now);
                return Gen::Stop;
            }
        }
        Gen::Io(dir, bs, offset)
    }

    /// `io_size` bytes or `number_ios` I/Os (times `loops`, as fio) were
    /// issued while measuring.
    fn enough_done(&self) -> bool {
        let p = self.ctx.p;
        self.win.measuring
            && ((p.io_size_bytes > 0 && self.win_bytes >= p.io_size_bytes)
                || (p.number_ios > 0
                    && self.win_ios >= p.number_ios.saturating_mul(u64::from(p.loops.max(1)))))
    }

    /// Stamp the pending I/Os with a reading taken just before the system
    /// call that hands them over, and account what the kernel took.
    fn stamp_and_submit(&mut self, wait: usize) -> Result<(u64, usize), std::io::Error> {
        let ts = self.clock.now();
        for &s in &self.pending {
            self.slots[s as usize].submitted_ns = ts;
        }
        let gap = ts.saturating_sub(self.back_ns);
        if gap >= STALL_NS && self.in_window() {
            let free = self.engine.depth().saturating_sub(self.engine.in_flight());
            self.out.causes.lost_stall += gap * free as u64;
        }
        if self.trace.is_some() && self.in_window() {
            let clock = &self.clock;
            if let Some(t) = &mut self.trace {
                t.stamped(ts, &self.pending, wait > 0, &|| clock.now());
            }
        }
        if self.win.measuring && self.win.start.is_none() && !self.pending.is_empty() {
            self.mark_start(ts);
        }
        let r = self.engine.submit(wait);
        let taken = r.as_ref().copied().unwrap_or(0).min(self.pending.len());
        if taken < self.pending.len() && self.in_window() {
            self.out.causes.refused += 1;
        }
        // What the kernel did not take stays pending and is stamped anew
        // when it is handed over.
        if let Some(log) = &mut self.iolog {
            for s in self.pending[..taken]
                .iter()
                .map(|&s| self.slots[s as usize])
            {
                log.issued(ts, s.dir == Dir::Write, s.offset, s.len);
            }
        }
        self.pending.drain(..taken);
        self.meter.set(ts, self.engine.in_flight());
        r.map(|_| (ts, taken))
    }

    /// Hand the pending I/Os over without waiting; time the call when it
    /// carried several I/Os (the bound on their shared stamp's error).
    fn flush(&mut self) -> bool {
        match self.stamp_and_submit(0) {
            Ok((ts, taken)) => {
                self.back_ns = self.clock.now();
                let d = self.back_ns.saturating_sub(ts);
                if self.in_window() {
                    let free = self.engine.depth().saturating_sub(self.engine.in_flight());
                    self.out.causes.submit_ns += d;
                    if d >= STALL_NS {
                        self.out.causes.lost_stall += d * free as u64;
                    } else {
                        self.out.causes.lost_submit += d * free as u64;
                    }
                    if let Some(t) = &mut self.trace {
                        t.flushed(d, taken, free);
                    }
                }
                if taken > 1 {
                    let e = self.out.stamp_error_ns.get_or_insert(0);
                    *e = (*e).max(d);
                    self.out.stamp_error_sum.0 += d;
                    self.out.stamp_error_sum.1 += 1;
                }
                true
            }
            Err(e) => {
                self.submit_failed(&e);
                false
            }
        }
    }

    fn submit_failed(&mut self, e: &std::io::Error) {
        let kind = sys::errno_name(e.raw_os_error().unwrap_or(libc::EIO));
        self.fail(&kind, format!("submission failed: {e}"));
    }

    /// fio's error tolerance (errors.rs): an error the phase's
    /// continue_on_error covers is counted and the job goes on; ENOSPC in
    /// a fill_device write phase ends it as its normal end.
    fn tolerated(&mut self, is_read: bool, errno: i32) -> bool {
        let p = self.ctx.p;
        if p.fill_device && !is_read && errno == libc::ENOSPC {
            self.stop_issuing(self.now);
            return true;
        }
        if p.error_policy.continue_on.is_empty()
            || !crate::errors::non_fatal(&p.error_policy, is_read, errno)
        {
            return false;
        }
        let key = crate::errors::count_key(is_read, errno);
        *self.out.errors.entry(key).or_default() += 1;
        true
    }

    /// Record a hard error: it stops the phase.
    fn fail(&mut self, kind: &str, msg: String) {
        *self.out.errors.entry(kind.to_string()).or_default() += 1;
        self.out.fatal.get_or_insert(msg);
        self.ctx.progress.failed.store(true, Ordering::Relaxed);
        self.stop_issuing(self.now);
    }

    /// Hand over what the refill queued, then wait for at least one
    /// completion and reap. Several I/Os go in one call that does not wait
    /// (its duration is their shared stamp's error bound, measured); if that
    /// call brought completions out they are reaped at once, otherwise the
    /// worker waits in a second call. A single I/O rides with the wait.
    /// Returns false when the loop must end (submission failed).
    fn submit_and_reap(&mut self) -> bool {
        if self.pending.len() > 1 {
            if !self.flush() {
                return false;
            }
            if self.engine.has_completions() {
                let tc = self.clock.now();
                self.reap_at(tc);
                return true;
            }
        }
        let ts = match self.stamp_and_submit(1) {
            Ok((ts, _)) => ts,
            Err(e) => {
                self.submit_failed(&e);
                return false;
            }
        };
        let tc = self.clock.now();
        if self.in_window() {
            let free = self.engine.depth().saturating_sub(self.engine.in_flight());
            self.out.causes.lost_wait += tc.saturating_sub(ts) * free as u64;
        }
        self.reap_at(tc);
        true
    }

    /// Reap without waiting, if anything is ready.
    fn reap_ready(&mut self) {
        if self.engine.has_completions() {
            let tc = self.clock.now();
            self.reap_at(tc);
        }
    }

    /// Reap what is ready, stamping each completion with `tc`, a reading
    /// taken just before.
    fn reap_at(&mut self, tc: u64) {
        self.now = tc;
        self.back_ns = tc;
        if !self.win.measuring && tc >= self.win.ramp_end_ns {
            self.begin_measuring();
        }
        let mut reaped = std::mem::take(&mut self.reaped);
        self.engine.reap(|slot, res| reaped.push((slot, res)));
        self.meter.set(tc, self.engine.in_flight());
        if self.trace.is_some() {
            let (window, clock) = (self.in_window(), &self.clock);
            if let Some(t) = &mut self.trace {
                t.reaped(tc, &reaped, window, &|| clock.now());
            }
        }
        for &(slot, res) in &reaped {
            self.complete(slot, res, tc);
        }
        reaped.clear();
        self.reaped = reaped;
        if let Some(c) = &mut self.ctl {
            match c.reaped(tc) {
                Reaped::Go => {}
                Reaped::Fail(kind, msg) => self.fail(kind, msg),
                Reaped::Restart if self.win.measuring => {
                    // fio's reset_all_stats: the final window at the depth found.
                    self.out.read = Default::default();
                    self.out.write = Default::default();
                    self.mark_start(tc);
                }
                Reaped::Restart => {}
            }
        }
        self.publish_progress();
        let p = self.ctx.p;
        if p.fsync_every > 0 && self.writes_since_fsync >= p.fsync_every {
            self.need_fsync = true;
        }
    }

    /// The ramp is over: start counting; a full pass is measured from here.
    fn begin_measuring(&mut self) {
        let t = self.win.ramp_end_ns;
        self.win.measuring = true;
        self.mark_start(t);
        self.win.deadline_ns = self.ctx.p.runtime_ns.map(|r| t.saturating_add(r));
        self.iogen.restart_pass(&self.ctx);
    }

    /// Account one completion reaped at `tc`.
    fn complete(&mut self, slot: u32, res: i32, tc: u64) {
        self.free.push(slot);
        let s = self.slots[slot as usize];
        let counted = self.win.measuring && self.win.start.is_some_and(|w| s.submitted_ns >= w.0);
        if res < 0 {
            // fio's continue_on_error / fill_device (errors.rs).
            if self.tolerated(s.dir == Dir::Read, -res) {
                return;
            }
            let name = sys::errno_name(-res);
            self.fail(&name.clone(), name);
            return;
        }
        let n = res as u64;
        // A short write is the file system filling up (ENOSPC), as fio sees it.
        if n < u64::from(s.len) && s.dir == Dir::Write && self.tolerated(false, libc::ENOSPC) {
            return;
        }
        if n < u64::from(s.len) {
            let (kind, what) = match s.dir {
                Dir::Read => ("short_read", "short read: file shrank?"),
                Dir::Write => (
                    "short_write",
                    "short write: file system full or file limit?",
                ),
            };
            self.fail(
                kind,
                format!(
                    "{what} {n} of {} bytes at offset {} of {}",
                    s.len,
                    s.offset,
                    self.ctx.plan.path.display()
                ),
            );
            return;
        }
        if s.dir == Dir::Read && self.ctx.p.verify && !self.ctx.p.verify_opts.no_check {
            self.verify(slot, n as usize, s.offset);
        }
        if s.dir == Dir::Read && self.ctx.p.check_reads {
            crate::readcheck::check(
                &mut self.out,
                &self.engine.buf(slot)[..n as usize],
                s.offset,
            );
        }
        if s.dir == Dir::Write {
            self.writes_since_fsync += 1;
            if let Some(b) = &mut self.backlog {
                let (p, plan) = (self.ctx.p, self.ctx.plan);
                let how = (plan.unit, p.seed, plan.file_id, &p.verify_opts.pattern[..]);
                if let Some((checked, bad)) = b.wrote(s.offset, s.len, self.ctx.fd, how) {
                    self.out.verify_checked += checked;
                    self.out.verify_bad_count += bad.len() as u64;
                    let room = MAX_REPORTED_MISMATCHES.saturating_sub(self.out.verify_bad.len());
                    let fatal = p.verify_opts.fatal && !bad.is_empty();
                    self.out.verify_bad.extend(bad.into_iter().take(room));
                    if fatal {
                        // fio's verify_fatal: the job ends at its first mismatch.
                        self.stop_issuing(self.now);
                    }
                }
            }
        }
        if self.ctx.p.thinktime_ns > 0 {
            self.think_until = tc.saturating_add(self.ctx.p.thinktime_ns);
        }
        if self.ctx.p.rw == RwMode::ReadModifyWrite && s.dir == Dir::Read {
            // Its block is written back next (the update of the panel).
            self.rmw_reads_in_flight = self.rmw_reads_in_flight.saturating_sub(1);
            self.rmw_writes.push_back((s.offset, s.len));
        }
        if let Some(c) = &mut self.ctl {
            c.completed(s.dir == Dir::Read, n, tc.saturating_sub(s.submitted_ns), tc);
        }
        if counted {
            let lat = tc.saturating_sub(s.submitted_ns);
            match s.dir {
                Dir::Read => self.out.read.record(n, lat),
                Dir::Write => self.out.write.record(n, lat),
            }
            self.ctx
                .series
                .record(&mut self.ibuf, tc, s.dir == Dir::Read, n, lat);
            if let Some(k) = &mut self.prio {
                k.record(slot, s.dir == Dir::Read, n, lat);
            }
            self.out.window_end_ns = Some(tc);
            self.prog_bytes += n;
            self.prog_ops += 1;
        }
    }

    fn verify(&mut self, slot: u32, n: usize, offset: u64) {
        let (p, plan) = (self.ctx.p, self.ctx.plan);
        let buf = &self.engine.buf(slot)[..n];
        let pattern = &p.verify_opts.pattern;
        let (checked, bad) =
            crate::verify::check(buf, plan.unit, p.seed, plan.file_id, offset, pattern);
        self.out.verify_checked += checked;
        if let Some(b) = bad {
            if p.verify_opts.dump {
                crate::verify::dump(&plan.path, b.0, buf, offset, plan.unit);
            }
            self.out.verify_bad_count += 1;
            if self.out.verify_bad.len() < MAX_REPORTED_MISMATCHES {
                self.out.verify_bad.push(b);
            }
            if p.verify_opts.fatal {
                // fio's verify_fatal: the job ends at its first mismatch.
                self.stop_issuing(self.now);
            }
        }
    }

    fn publish_progress(&mut self) {
        if self.prog_ops > 0 {
            let pr = self.ctx.progress;
            pr.issued_bytes.store(self.issued_bytes, Ordering::Relaxed);
            pr.bytes.fetch_add(self.prog_bytes, Ordering::Relaxed);
            pr.ops.fetch_add(self.prog_ops, Ordering::Relaxed);
            self.prog_bytes = 0;
            self.prog_ops = 0;
        }
    }

    /// Sleep towards `due` in short steps so Ctrl-C and the deadline are noticed.
    fn sleep_until(&mut self, due: u64) {
        let before = self.clock.now();
        let left = due.saturating_sub(before).min(20_000_000);
        std::thread::sleep(Duration::from_nanos(left));
        self.now = self.clock.now();
        // The sleep is counted below, not as a stall.
        self.back_ns = self.now;
        if self.in_window() {
            let slept = self.now.saturating_sub(before);
            let free = self.engine.depth().saturating_sub(self.engine.in_flight());
            self.out.causes.paced_ns += slept;
            self.out.causes.lost_sleep += slept * free as u64;
        }
    }

    fn fsync_now(&mut self) {
        let t0 = self.clock.now();
        if let Some(log) = &mut self.iolog {
            log.synced(t0);
        }
        let r = sys::fsync(self.ctx.fd);
        // The fsync is counted here, not as a stall.
        self.back_ns = self.clock.now();
        if self.in_window() {
            let free = self.engine.depth().saturating_sub(self.engine.in_flight());
            self.out.causes.lost_fsync += self.back_ns.saturating_sub(t0) * free as u64;
        }
        if let Err(e) = r {
            let name = sys::errno_name(e.raw_os_error().unwrap_or(libc::EIO));
            self.fail(&name.clone(), name);
        }
        self.need_fsync = false;
        self.writes_since_fsync = 0;
    }

    /// After the loop: the end fsync (inside the window: writes count when
    /// durable), the window and the depth figures.
    fn finish(mut self) -> WorkerOut {
        if let Some(k) = self.prio.take() {
            self.out.prio_lat = k.lat;
        }
        let end = self.out.window_end_ns.unwrap_or(self.now);
        self.stop_issuing(end);
        let p = self.ctx.p;
        if p.rw.writes() && p.end_fsync && self.out.fatal.is_none() && p.engine != EngineKind::Null
        {
            let t = self.clock.now();
            self.fsync_now();
            let done = self.clock.now();
            self.out.end_fsync_ns = done.saturating_sub(t);
            if self.out.window_end_ns.is_some() {
                self.out.window_end_ns = Some(done);
            }
        }
        self.ctx.series.finish(&mut self.ibuf);
        self.out.window_start_ns = self.win.start.map(|s| s.0);
        if let (Some(a), Some(b)) = (self.win.start, self.win.stop) {
            self.out.mean_depth = mean_depth(a, b);
            if let Some(t) = self.trace.take() {
                let clock = &self.clock;
                let (window, area) = (b.0.saturating_sub(a.0), b.1.saturating_sub(a.1));
                t.write(self.ctx.plan.job, window, area, &|| clock.now());
            }
        }
        let mut out = std::mem::take(&mut self.out);
        out.target_depth = self.engine.depth();
        out
    }
}

mod depth;
#[cfg(test)]
mod tests;
mod trace;

pub(crate) use depth::depth_cause;
