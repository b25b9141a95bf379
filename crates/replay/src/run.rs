//! The replay itself: one thread per rank, each fed through a bounded
//! channel while the trace is read again (memory does not grow with the
//! trace; a Darshan log, whose records are grouped by file and not in time
//! order, is sorted per rank first, bounded by what Darshan itself kept).
//!
//! A rank issues its operations in the trace's order. With a recorded
//! timing (`--speed original` or a factor) each operation waits for its
//! scheduled start, the rank's own start plus the recorded offset from the
//! rank's first operation divided by the factor (think time and compute
//! gaps are kept); the thread sleeps until just before it and spins the
//! rest, so the start lag it reports (issue time minus scheduled time) is
//! the replay's own error, not the sleep's. With `--speed max` it issues
//! each operation as soon as the previous one returned, from one thread
//! per rank that stamps no schedule (`flat_out`).
//!
//! Reads and writes are `pread`/`pwrite` of the recorded offset and length
//! (buffered; traces carry arbitrary offsets that O_DIRECT would refuse),
//! `fsync`/`fdatasync` call the same, and trims are issued as fio's
//! `read_iolog` issues them (`os_trim`: a hole punched in a file, a
//! `BLKDISCARD` on a device); opens and closes are counted, not issued (the
//! files are laid out and open for the whole replay).

use crate::prepare::Prepared;
use crate::result::{RankFigures, ReplayResult};
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::{Duration, Instant};
use storlab_trace::{Format, Op, OpenOptions, TraceError, TraceReader};

/// Operations queued per rank ahead of its thread, at least.
const QUEUE: usize = 4096;
/// Operations queued ahead of all the ranks together, when a rank's
/// [`QUEUE`] is less than its share: about 48 MiB. The replay starts once
/// this many are queued (or the trace ended, or a queue is full), so a
/// trace of up to a million operations is read whole before its first
/// operation, as fio reads an iolog before its job starts, and a rank
/// whose operations are fast (served from the page cache) never waits for
/// the trace's reading. (1,024 ranks × [`QUEUE`] is more, about 200 MiB:
/// the most a replay queues.)
const AHEAD: usize = 1 << 20;
/// Operations handed to a rank at once: one wake-up of the feeder per
/// batch, not per operation (on a busy machine the feeder had competed
/// with its rank for a CPU at every operation).
const BATCH: usize = 256;
/// A rank sleeps until this long before an operation's start, then spins.
const SPIN: Duration = Duration::from_micros(200);
/// The replay starts this long after the feeder has queued the first
/// operations (or found a queue full), so no rank starts behind.
const LEAD: Duration = Duration::from_millis(20);
/// Operations the feeder queues before it sets the start.
const PRIME: usize = AHEAD;

/// A rank's queue, in batches: its share of [`AHEAD`], at least [`QUEUE`].
fn queue_batches(ranks: usize) -> usize {
    (AHEAD / ranks.max(1)).max(QUEUE) / BATCH
}

/// The common start of every rank, set once by the feeder.
type Start = std::sync::OnceLock<Instant>;

/// The feeder's hold on the start: it calls `ready` (under MPI, a barrier
/// of every process: all start at one epoch), then sets the start.
struct Gate<'a> {
    at: &'a Start,
    ready: &'a Ready<'a>,
    /// Rank threads running (at real-time priority where allowed), and
    /// how many there are: the start is set once all run, so none starts
    /// late for having waited for a CPU at ordinary priority.
    running: &'a std::sync::atomic::AtomicUsize,
    ranks: usize,
}

/// Longest wait of the start for the rank threads to run.
const RUNNING: Duration = Duration::from_secs(2);

/// Called once by the feeder (the calling thread) when its ranks' queues
/// are primed, just before the common start is set. Under MPI it is a
/// barrier, so every process starts together; it is called exactly once
/// on every path, errors and stops included.
pub type Ready<'a> = dyn Fn() + 'a;

impl Gate<'_> {
    fn set(&self) {
        if self.at.get().is_none() {
            let t = Instant::now();
            while self.running.load(std::sync::atomic::Ordering::SeqCst) < self.ranks
                && t.elapsed() < RUNNING
            {
                std::thread::sleep(Duration::from_micros(500));
            }
            (self.ready)();
            let _ = self.at.set(Instant::now() + LEAD);
        }
    }
}

/// Hand `batch` to its rank; the start is set first when the queue is
/// full (the ranks must run to make room) or enough is queued.
fn hand(tx: &SyncSender<Vec<Job>>, batch: Vec<Job>, start: &Gate, sent: &mut usize) -> bool {
    let before = *sent;
    *sent += batch.len();
    if before < PRIME && *sent >= PRIME {
        start.set();
    }
    match tx.try_send(batch) {
        Ok(()) => true,
        Err(std::sync::mpsc::TrySendError::Full(batch)) => {
            start.set();
            tx.send(batch).is_ok()
        }
        Err(std::sync::mpsc::TrySendError::Disconnected(_)) => false,
    }
}

/// Operations gathered per rank until a batch is full: each rank's sender
/// and batch in a slot, found without hashing when the record's rank is the
/// previous record's (every record of a one-rank trace, runs of records in
/// a merged one).
struct Batches {
    slots: Vec<(SyncSender<Vec<Job>>, Vec<Job>)>,
    index: HashMap<u32, usize>,
    /// The previous record's rank and its slot.
    last: Option<(u32, usize)>,
}

impl Batches {
    fn new(senders: &HashMap<u32, SyncSender<Vec<Job>>>) -> Batches {
        let mut b = Batches {
            slots: Vec::with_capacity(senders.len()),
            index: HashMap::with_capacity(senders.len()),
            last: None,
        };
        for (&rank, tx) in senders {
            b.index.insert(rank, b.slots.len());
            b.slots.push((tx.clone(), Vec::with_capacity(BATCH)));
        }
        b
    }

    /// Queue `job` for `rank` (a rank not replayed here is skipped).
    fn push(&mut self, rank: u32, job: Job, start: &Gate, sent: &mut usize) {
        let slot = match self.last {
            Some((r, s)) if r == rank => s,
            _ => {
                let Some(&s) = self.index.get(&rank) else {
                    return;
                };
                self.last = Some((rank, s));
                s
            }
        };
        let (tx, b) = &mut self.slots[slot];
        b.push(job);
        if b.len() >= BATCH {
            // A closed channel means the rank stopped (a signal): nothing to do.
            let full = std::mem::replace(b, Vec::with_capacity(BATCH));
            hand(tx, full, start, sent);
        }
    }

    fn flush(&mut self, start: &Gate, sent: &mut usize) {
        for (tx, b) in &mut self.slots {
            if !b.is_empty() {
                hand(tx, std::mem::take(b), start, sent);
            }
        }
    }
}

/// How fast the trace is replayed.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Speed {
    /// Each operation at its recorded start.
    Original,
    /// Each operation as soon as the rank's previous one returned.
    Max,
    /// Recorded starts divided by the factor (2 = twice as fast).
    Factor(f64),
}

/// The page-cache hint each replayed file gets when it is opened
/// (`posix_fadvise` over the whole file), as fio gives one
/// (`fadvise_hint`). `normal` (the default) gives none: the kernel's own
/// read-ahead, which is what the recorded application had unless it asked
/// otherwise, and what `storlab bench` records with. fio's `read_iolog`
/// gives `sequential` (its default `fadvise_hint=1` hints by the job's
/// `rw`, which an iolog replay leaves at `read`: never random), which
/// doubles the read-ahead window; `random` turns read-ahead off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    #[default]
    Normal,
    Sequential,
    Random,
}

impl Fadvise {
    /// `normal`, `sequential` or `random`.
    pub fn parse(s: &str) -> Result<Fadvise, ReplayError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" | "none" => Ok(Fadvise::Normal),
            "sequential" => Ok(Fadvise::Sequential),
            "random" => Ok(Fadvise::Random),
            _ => Err(ReplayError::Fadvise(s.into())),
        }
    }
}

/// Why a replay stopped with an error (its figures so far are lost only
/// when the trace itself failed).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("--speed {0:?}: write original, max or a factor above 0 (e.g. 2 for twice as fast)")]
    Speed(String),
    #[error(
        "--fadvise {0:?}: write normal (no hint: the kernel's read-ahead), sequential (fio's read_iolog) or random (no read-ahead)"
    )]
    Fadvise(String),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(
        "{trace}: the trace names {name:?} on its second reading but not its first; it changed while storlab read it"
    )]
    Changed { trace: String, name: String },
    #[error("a replay thread could not be started: {0}")]
    Thread(std::io::Error),
}

impl Speed {
    /// `original`, `max` or a factor (`2`, `0.5`, `2x`).
    pub fn parse(s: &str) -> Result<Speed, ReplayError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "original" | "1" | "1x" => Ok(Speed::Original),
            "max" => Ok(Speed::Max),
            other => other
                .trim_end_matches('x')
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f > 0.0)
                .map(Speed::Factor)
                .ok_or_else(|| ReplayError::Speed(s.into())),
        }
    }

    fn factor(self) -> Option<f64> {
        match self {
            Speed::Original => Some(1.0),
            Speed::Max => None,
            Speed::Factor(f) => Some(f),
        }
    }
}

/// One operation as a rank thread receives it.
#[derive(Debug, Clone, Copy)]
struct Job {
    /// Index into the replay's files (u32: the job is 48 bytes, a million
    /// of them queued ahead).
    file: u32,
    op: Op,
    offset: u64,
    length: u64,
    start_ns: u64,
    end_ns: Option<u64>,
}

impl Job {
    /// The bytes of buffer the operation needs: a read's or a write's
    /// length, none for a sync or a trim (whose range may be gigabytes).
    fn data_len(&self) -> usize {
        if self.op.is_data() {
            usize::try_from(self.length).unwrap_or(usize::MAX)
        } else {
            0
        }
    }
}

/// Asked by every rank before each operation: true ends the replay early
/// (a signal), keeping what was measured.
pub type Stop<'a> = dyn Fn() -> bool + Sync + 'a;

/// Replay `prep`'s trace (opened again with `opts`) at `speed`.
pub fn replay(
    prep: &Prepared,
    opts: &OpenOptions,
    speed: Speed,
    stop: &Stop<'_>,
) -> Result<ReplayResult, ReplayError> {
    let figures = replay_ranks(prep, opts, speed, stop, &|| {})?;
    Ok(ReplayResult::new(prep, speed, figures, stop()))
}

/// Replay the ranks of `prep.layout.ranks` and return their figures;
/// `ready` is called once, on this thread, when their queues are primed
/// (see [`Ready`]), even when the replay fails.
pub fn replay_ranks(
    prep: &Prepared,
    opts: &OpenOptions,
    speed: Speed,
    stop: &Stop<'_>,
    ready: &Ready<'_>,
) -> Result<Vec<RankFigures>, ReplayError> {
    let layout = &prep.layout;
    let start = Start::new();
    let running = std::sync::atomic::AtomicUsize::new(0);
    let gate = Gate {
        at: &start,
        ready,
        running: &running,
        ranks: layout.ranks.len(),
    };
    let files: std::io::Result<Vec<Target>> = prep
        .paths
        .iter()
        .map(|p| Target::open(p, prep))
        .collect::<Result<_, _>>();
    let files = match files {
        Ok(f) => f,
        Err(e) => {
            gate.set();
            return Err(ReplayError::Thread(e));
        }
    };
    let mut senders: HashMap<u32, SyncSender<Vec<Job>>> = HashMap::new();
    let mut figures = Vec::new();
    // Up to TIMED_THREADS per rank while the threads stay within MAX_RANKS.
    let threads = (crate::prepare::MAX_RANKS / layout.ranks.len().max(1)).clamp(1, TIMED_THREADS);
    let ranks_here = layout.ranks.len().max(1);
    // Whether real-time priority can be had, tried once here (on the
    // calling thread, not a replay thread) for a timed replay.
    let rt_ok = speed.factor().is_some()
        && std::env::var_os("STORLAB_NO_RT").is_none()
        && storlab_host::os::realtime_thread().is_ok()
        && storlab_host::os::ordinary_thread().is_ok();
    let fed = std::thread::scope(|s| -> Result<(), ReplayError> {
        let mut handles = Vec::new();
        for &rank in &layout.ranks {
            let (tx, rx) = sync_channel::<Vec<Job>>(queue_batches(layout.ranks.len()));
            senders.insert(rank, tx);
            let (files, start, running) = (&files, &start, &running);
            let h = std::thread::Builder::new()
                .name(format!("replay-{rank}"))
                .spawn_scoped(s, move || {
                    // Real time from here (the wait for the start is a
                    // sleep); the helper threads inherit it.
                    let rt = rt_ok && storlab_host::os::realtime_thread().is_ok();
                    running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    rank_thread(rank, rx, files, start, speed, stop, threads, ranks_here, rt)
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    senders.clear();
                    gate.set();
                    return Err(ReplayError::Thread(e));
                }
            }
        }
        let cpu0 = storlab_host::os::cpu_time(true);
        let fed = feed(prep, opts, &senders, &gate, stop);
        let cpu1 = storlab_host::os::cpu_time(true);
        gate.set();
        senders.clear();
        for h in handles {
            if let Ok(f) = h.join() {
                figures.push(f);
            }
        }
        // The trace's reading is part of the replay's cost: the first rank's.
        if let Some(f) = figures.first_mut() {
            f.extra.cpu_user_ns += ns(cpu1.0.saturating_sub(cpu0.0));
            f.extra.cpu_sys_ns += ns(cpu1.1.saturating_sub(cpu0.1));
        }
        fed
    });
    fed?;
    Ok(figures)
}

/// Read the trace again and hand each data or sync operation to its rank.
fn feed(
    prep: &Prepared,
    opts: &OpenOptions,
    senders: &HashMap<u32, SyncSender<Vec<Job>>>,
    start: &Gate,
    stop: &Stop<'_>,
) -> Result<(), ReplayError> {
    let mut sent = 0usize;
    let mut batches = Batches::new(senders);
    let layout = &prep.layout;
    let mut reader = TraceReader::open(&layout.trace, opts)?;
    // The layout's index of each trace file id (ids are dense from 0).
    let mut index: Vec<Option<u32>> = Vec::new();
    let sorted = matches!(layout.format, Format::Darshan { .. });
    let mut by_rank: HashMap<u32, Vec<Job>> = HashMap::new();
    // (A stable sort by start keeps each rank's recorded order among equal starts.)
    while let Some(r) = reader.next() {
        if stop() {
            return Ok(());
        }
        let r = r?;
        let file = match index.get(r.file as usize) {
            Some(&Some(i)) => i,
            _ => {
                let name = reader
                    .files()
                    .get(r.file as usize)
                    .cloned()
                    .unwrap_or_default();
                // (A u32: the layout's files are the trace's, named by u32 ids.)
                let i = layout
                    .file_index(&name)
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(|| ReplayError::Changed {
                        trace: layout.trace.display().to_string(),
                        name,
                    })?;
                let at = r.file as usize;
                if index.len() <= at {
                    index.resize(at + 1, None);
                }
                index[at] = Some(i);
                i
            }
        };
        let job = Job {
            file,
            op: r.op,
            offset: r.offset,
            length: r.length,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
        };
        if sorted {
            // Only the ranks replayed here are kept (one MPI rank's share).
            if senders.contains_key(&r.rank) {
                by_rank.entry(r.rank).or_default().push(job);
            }
        } else {
            batches.push(r.rank, job, start, &mut sent);
        }
    }
    // Every rank in time order, handed out merged by time so no rank waits
    // behind another's queue.
    let mut all: Vec<(u32, Job)> = by_rank
        .into_iter()
        .flat_map(|(rank, jobs)| jobs.into_iter().map(move |j| (rank, j)))
        .collect();
    all.sort_by_key(|(_, j)| j.start_ns);
    for (rank, j) in all {
        if stop() {
            break;
        }
        batches.push(rank, j, start, &mut sent);
    }
    batches.flush(start, &mut sent);
    Ok(())
}

/// Longest sleep between looks at the stop flag (a trace's think time can
/// be minutes).
const NAP: Duration = Duration::from_millis(50);

/// Wait for `at`: sleep in naps until just before it, then spin. False when
/// a stop was asked for meanwhile.
fn wait_until(at: Instant, stop: &Stop<'_>) -> bool {
    loop {
        let now = Instant::now();
        if at <= now + SPIN {
            break;
        }
        if stop() {
            return false;
        }
        std::thread::sleep((at - now - SPIN).min(NAP));
    }
    while Instant::now() < at {
        std::hint::spin_loop();
    }
    true
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn histogram() -> Histogram<u64> {
    // cannot fail: 3 significant figures is within hdrhistogram's range
    Histogram::new(3).expect("3 significant figures")
}

/// Threads a timed replay issues one rank's operations from: an operation
/// whose time has come starts even while the rank's earlier ones are still
/// in flight (a slow operation does not delay the next one's start), as
/// long as fewer than this many are.
pub const TIMED_THREADS: usize = 4;

/// A rank's queue as its issuing threads share it: the next operation's
/// place in the rank's order, and the rank's first recorded start.
struct Queue {
    rx: Receiver<Vec<Job>>,
    /// The batch being taken from.
    batch: std::collections::VecDeque<Job>,
    next: u64,
    base: Option<u64>,
    /// The recorded start of the rank's previous operation.
    prev: Option<u64>,
}

/// What a rank's issuing threads share.
struct RankShared<'a> {
    rank: u32,
    queue: std::sync::Mutex<Queue>,
    /// The place in the rank's order of the next operation to start: the
    /// operations start in the trace's order, whichever thread holds them.
    turn: Turn,
    t0: Instant,
    files: &'a [Target],
    factor: Option<f64>,
    /// Real-time priority is allowed for operations at least this far
    /// apart (replayed time); `None`: never (`--speed max`,
    /// `STORLAB_NO_RT`).
    rt_gap: Option<Duration>,
    /// The rank's threads start at real-time priority.
    rt_now: bool,
    stop: &'a Stop<'a>,
}

/// One rank: issue its operations in order, at their times. A timed replay
/// issues them from `threads` threads (see [`TIMED_THREADS`]); `--speed
/// max` from one, each as soon as the previous one returned.
#[allow(clippy::too_many_arguments)]
fn rank_thread(
    rank: u32,
    rx: Receiver<Vec<Job>>,
    files: &[Target],
    start: &Start,
    speed: Speed,
    stop: &Stop<'_>,
    threads: usize,
    ranks_here: usize,
    rt_now: bool,
) -> RankFigures {
    // `rt_now`: the thread runs at real time from before the wait for the
    // common start (a sleep), so the first operations are not late on a
    // busy machine; the helper threads inherit it. Each thread drops it at
    // its first dense or late operation (see `Priority`).
    let t0 = loop {
        if let Some(t) = start.get() {
            break *t;
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    if speed.factor().is_none() {
        return flat_out(rank, &rx, files, t0, stop);
    }
    let shared = RankShared {
        rank,
        queue: std::sync::Mutex::new(Queue {
            rx,
            batch: std::collections::VecDeque::new(),
            next: 0,
            base: None,
            prev: None,
        }),
        turn: Turn::new(),
        t0,
        files,
        factor: speed.factor(),
        rt_gap: rt_now.then(|| rt_gap(ranks_here)),
        rt_now,
        stop,
    };
    if threads <= 1 {
        return issuer(&shared, 0);
    }
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|i| {
                let sh = &shared;
                std::thread::Builder::new()
                    .name(format!("replay-{rank}.{i}"))
                    .spawn_scoped(s, move || issuer(sh, i as u64))
                    .ok()
            })
            .collect();
        let mut f = issuer(&shared, 0);
        for h in helpers {
            if let Ok(o) = h.join() {
                f.absorb(o);
            }
        }
        f
    })
}

/// Spins on the turn before a thread blocks for it.
const TURN_SPINS: u32 = 2000;

/// The rank's turn: the place in its order of the next operation to
/// start. A thread whose operation is next spins briefly, then blocks (a
/// dense stretch or a replay that fell behind would otherwise have up to
/// [`TIMED_THREADS`] threads spinning for the one that holds the turn,
/// which then waits for a CPU behind them).
struct Turn {
    next: std::sync::atomic::AtomicU64,
    waiters: std::sync::atomic::AtomicU32,
    lock: std::sync::Mutex<()>,
    moved: std::sync::Condvar,
}

impl Turn {
    fn new() -> Turn {
        Turn {
            next: std::sync::atomic::AtomicU64::new(0),
            waiters: std::sync::atomic::AtomicU32::new(0),
            lock: std::sync::Mutex::new(()),
            moved: std::sync::Condvar::new(),
        }
    }

    fn reached(&self, seq: u64) -> bool {
        self.next.load(std::sync::atomic::Ordering::SeqCst) >= seq
    }

    /// Operation `seq` has started: the next one may.
    fn pass(&self, seq: u64) {
        use std::sync::atomic::Ordering;
        self.next.store(seq + 1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self
                .lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            self.moved.notify_all();
        }
    }

    /// Wait until the rank's operations before `seq` have started. False
    /// when a stop was asked for meanwhile.
    fn wait(&self, seq: u64, stop: &Stop<'_>) -> bool {
        use std::sync::atomic::Ordering;
        for _ in 0..TURN_SPINS {
            if self.reached(seq) {
                return true;
            }
            std::hint::spin_loop();
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut g = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let ok = loop {
            if self.reached(seq) {
                break true;
            }
            if stop() {
                break false;
            }
            g = match self.moved.wait_timeout(g, NAP) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        };
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        ok
    }
}

/// One issuing thread of a rank: take the rank's next operation, wait for
/// its time and its turn, issue it, measure it.
fn issuer(sh: &RankShared<'_>, thread: u64) -> RankFigures {
    let mut f = RankFigures::new(sh.rank, histogram(), histogram());
    let mut buf = IoBuf::default();
    let mut rng = storlab_bench::Rng::new(0xda7a ^ u64::from(sh.rank) ^ (thread << 32));
    let stop = sh.stop;
    let cpu0 = storlab_host::os::cpu_time(true);
    let mut prio = Priority::probe(sh.rt_gap, sh.rt_now);
    f.extra.realtime = prio.allowed;
    loop {
        let (seq, job, first, gap) = {
            let mut q = sh
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if q.batch.is_empty() {
                match q.rx.recv() {
                    Ok(b) => q.batch = b.into(),
                    Err(_) => break,
                }
            }
            let Some(job) = q.batch.pop_front() else {
                continue;
            };
            let seq = q.next;
            q.next += 1;
            let first = *q.base.get_or_insert(job.start_ns);
            let gap = q.prev.map_or(u64::MAX, |p| job.start_ns.saturating_sub(p));
            q.prev = Some(job.start_ns);
            (seq, job, first, gap)
        };
        if stop() {
            f.interrupted = true;
            break;
        }
        let since_first = job.start_ns.saturating_sub(first);
        // (A timed replay: `--speed max` goes through `flat_out`.)
        let k = sh.factor.unwrap_or(f64::INFINITY);
        let scheduled = sh.t0 + Duration::from_secs_f64(since_first as f64 / 1e9 / k);
        // The buffer is made before the wait, not on the operation's time
        // (a read's or write's: a trim's length is a range, not a buffer).
        let b = buf.get(job.data_len(), job.op == Op::Write, &mut rng);
        if let Some(min) = sh.rt_gap {
            // Real time only for a sparse operation this thread will sleep
            // before (on time), never while it spins through a dense stretch
            // or catches up (see `Priority`).
            let sparse = gap as f64 / 1e9 / k >= min.as_secs_f64();
            prio.set(sparse && Instant::now() + SPIN < scheduled);
        }
        if !wait_until(scheduled, stop) {
            f.interrupted = true;
            break;
        }
        if prio.on && !sh.turn.reached(seq) {
            // Behind: the previous operation has not started at this one's
            // time; wait for it at ordinary priority.
            prio.set(false);
        }
        if !sh.turn.wait(seq, stop) {
            f.interrupted = true;
            break;
        }
        if !issued(job.op) {
            f.not_issued += 1;
            sh.turn.pass(seq);
            continue;
        }
        let issue = Instant::now();
        sh.turn.pass(seq);
        f.extra.realtime_ops += u64::from(prio.on);
        let outcome = issue_op(&sh.files[job.file as usize], &job, b);
        let done = Instant::now();
        f.record(
            job.file as usize,
            job.op,
            job.length,
            outcome,
            Some(ns(issue.saturating_duration_since(scheduled))),
            ns(done - issue),
            issue.saturating_duration_since(sh.t0),
            done.saturating_duration_since(sh.t0),
            job.end_ns.map(|e| e.saturating_sub(job.start_ns)),
            job.start_ns,
            since_first,
        );
    }
    let cpu1 = storlab_host::os::cpu_time(true);
    f.extra.cpu_user_ns = ns(cpu1.0.saturating_sub(cpu0.0));
    f.extra.cpu_sys_ns = ns(cpu1.1.saturating_sub(cpu0.1));
    f
}

/// Real-time spinning a replay allows itself: a fifth of one CPU for the
/// whole process. A thread spins up to [`SPIN`] before each operation, so
/// operations are issued at real-time priority only when they are at least
/// `5 × SPIN × ranks` apart (1 ms for one rank).
fn rt_gap(ranks_here: usize) -> Duration {
    SPIN * 5 * u32::try_from(ranks_here).unwrap_or(u32::MAX).max(1)
}

/// An issuing thread's scheduling: real-time (`SCHED_FIFO` 1, root or
/// `CAP_SYS_NICE`) only while it sleeps and spins towards a sparse
/// operation it is on time for, ordinary otherwise. So the timing a busy
/// machine would spoil (the wake-up at an operation's time) is kept, and a
/// dense trace or a replay that fell behind (whose threads spin or issue
/// back to back) never holds the CPUs ahead of the machine's own threads:
/// at most a fifth of one CPU ([`rt_gap`]).
struct Priority {
    /// The thread may take real-time priority.
    allowed: bool,
    /// It has it now.
    on: bool,
}

impl Priority {
    /// At real-time priority when `on` (the thread already is), allowed
    /// it when the replay found it can be had (`gap` given).
    fn probe(gap: Option<Duration>, on: bool) -> Priority {
        Priority {
            allowed: gap.is_some(),
            on: on && gap.is_some(),
        }
    }

    /// Real-time priority on or off (a system call only on a change).
    fn set(&mut self, rt: bool) {
        let rt = rt && self.allowed;
        if rt == self.on {
            return;
        }
        let r = if rt {
            storlab_host::os::realtime_thread()
        } else {
            storlab_host::os::ordinary_thread()
        };
        match r {
            Ok(()) => self.on = rt,
            Err(_) if rt => self.allowed = false,
            Err(_) => {}
        }
    }
}

/// `--speed max`: one rank's operations from this one thread, one after
/// another, each as soon as the previous one returned (one in flight per
/// rank: what a one-job psync recording did, and what fio's `read_iolog`
/// does at its default `iodepth=1`). There is no schedule, so nothing is
/// stamped for it: the batches the feeder hands over are taken whole
/// (no lock, no turn to pass), and each operation costs two clock reads
/// (issue and completion), as in bench's worker; no start lag is kept.
fn flat_out(
    rank: u32,
    rx: &Receiver<Vec<Job>>,
    files: &[Target],
    t0: Instant,
    stop: &Stop<'_>,
) -> RankFigures {
    let mut f = RankFigures::new(rank, histogram(), histogram());
    let mut buf = IoBuf::default();
    let mut rng = storlab_bench::Rng::new(0xda7a ^ u64::from(rank));
    let cpu0 = storlab_host::os::cpu_time(true);
    let mut first = None;
    if !wait_until(t0, stop) {
        f.interrupted = true;
    }
    'batches: while !f.interrupted {
        let Ok(batch) = rx.recv() else { break };
        for job in batch {
            if stop() {
                f.interrupted = true;
                break 'batches;
            }
            let since_first = job
                .start_ns
                .saturating_sub(*first.get_or_insert(job.start_ns));
            if !issued(job.op) {
                f.not_issued += 1;
                continue;
            }
            let b = buf.get(job.data_len(), job.op == Op::Write, &mut rng);
            let issue = Instant::now();
            let outcome = issue_op(&files[job.file as usize], &job, b);
            let done = Instant::now();
            f.record(
                job.file as usize,
                job.op,
                job.length,
                outcome,
                None,
                ns(done - issue),
                issue.saturating_duration_since(t0),
                done.saturating_duration_since(t0),
                job.end_ns.map(|e| e.saturating_sub(job.start_ns)),
                job.start_ns,
                since_first,
            );
        }
    }
    let cpu1 = storlab_host::os::cpu_time(true);
    f.extra.cpu_user_ns = ns(cpu1.0.saturating_sub(cpu0.0));
    f.extra.cpu_sys_ns = ns(cpu1.1.saturating_sub(cpu0.1));
    f
}

/// Page size the buffers are aligned to.
const PAGE: usize = 4096;

/// An issuing thread's buffer: page-aligned (as bench's buffers), so a
/// 4 KiB read or write copies one page, not parts of two; made once and
/// grown when an operation is larger; writes carry incompressible data.
#[derive(Default)]
struct IoBuf {
    mem: Vec<u8>,
    /// Bytes at the start of the aligned buffer that hold random data.
    random: usize,
}

impl IoBuf {
    /// The first `len` bytes of the aligned buffer (random data for a
    /// write).
    fn get(&mut self, len: usize, write: bool, rng: &mut storlab_bench::Rng) -> &mut [u8] {
        if self.mem.len() < len + PAGE {
            // calloc'd: pages are touched by the I/O, not here.
            self.mem = vec![0u8; len + PAGE];
            self.random = 0;
        }
        let at = (PAGE - self.mem.as_ptr() as usize % PAGE) % PAGE;
        let b = &mut self.mem[at..at + len];
        if write && len > self.random {
            storlab_bench::fill_random(b, rng);
            self.random = len;
        }
        b
    }
}

/// Whether `op` is issued (reads, writes, syncs, trims); opens and closes
/// are counted, not issued.
fn issued(op: Op) -> bool {
    matches!(
        op,
        Op::Read | Op::Write | Op::Fsync | Op::Fdatasync | Op::Trim
    )
}

/// A replayed file (or the device TARGET), open for the whole replay.
#[derive(Debug)]
pub(crate) struct Target {
    file: File,
    /// A block device: a trim is a `BLKDISCARD`, not a hole punched.
    device: bool,
}

impl Target {
    /// Open `path` for `prep`'s replay: for writing only when the trace
    /// writes or trims (a device the trace only reads is never opened for
    /// writing; fio opens a read-only job's files `O_RDONLY` too).
    fn open(path: &std::path::Path, prep: &Prepared) -> std::io::Result<Target> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileTypeExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(prep.writes())
            .open(path)?;
        let device = file.metadata()?.file_type().is_block_device();
        crate::sys::fadvise(file.as_raw_fd(), prep.fadvise)?;
        Ok(Target { file, device })
    }
}

/// Issue one operation on `t`; the bytes moved (a trim's: the range's).
fn issue_op(t: &Target, job: &Job, buf: &mut [u8]) -> std::io::Result<usize> {
    let file = &t.file;
    match job.op {
        Op::Read => read_full(file, buf, job.offset),
        Op::Write => file.write_all_at(buf, job.offset).map(|()| buf.len()),
        Op::Fsync => file.sync_all().map(|()| 0),
        Op::Trim => {
            use std::os::fd::AsRawFd;
            storlab_bench::trim(file.as_raw_fd(), job.offset, job.length, t.device)
                .map(|()| usize::try_from(job.length).unwrap_or(usize::MAX))
        }
        _ => file.sync_data().map(|()| 0),
    }
}

/// `pread` until `buf` is full or the file ends; the bytes read.
fn read_full(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuing_buffer_is_page_aligned_whatever_the_sizes_asked() {
        let mut rng = storlab_bench::Rng::new(1);
        let mut b = IoBuf::default();
        for len in [4096, 512, 65536, 4096, 0, 1 << 20] {
            let s = b.get(len, false, &mut rng);
            assert_eq!(s.len(), len);
            assert_eq!(
                s.as_ptr() as usize % PAGE,
                0,
                "{len} bytes not page-aligned"
            );
        }
        let w = b.get(8192, true, &mut rng);
        assert!(w.iter().any(|&x| x != 0), "a write carries data");
    }
}
