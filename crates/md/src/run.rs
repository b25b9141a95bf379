//! The phase loop: make the tree, then for each operation (directories
//! first, then files, as mdtest orders them) let every rank start together,
//! time each operation, and agree on the counts the next phases use.

use crate::fs::{MdFs, errno_name};
use crate::names::NameBuf;
use crate::tree::Tree;
use crate::{Item, MdError, MdSpec, Op};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use storlab_bench::DirCounter;

/// How the ranks of one job work together. One process alone is [`Solo`];
/// under MPI the command implements it over the communicator; tests run
/// ranks as threads.
pub trait RankSync {
    /// This rank (0-based).
    fn rank(&self) -> u32;
    /// How many ranks run the job.
    fn ranks(&self) -> u32;
    /// Wait until every rank has arrived.
    fn barrier(&self);
    /// Every rank's `value`, by rank (an all-gather).
    fn gather_all(&self, value: u64) -> Vec<u64>;
    /// Whether any rank passed `true` (an all-reduce of OR).
    fn any(&self, flag: bool) -> bool;
}

/// One process, no one to wait for.
#[derive(Debug, Default, Clone, Copy)]
pub struct Solo;

impl RankSync for Solo {
    fn rank(&self) -> u32 {
        0
    }
    fn ranks(&self) -> u32 {
        1
    }
    fn barrier(&self) {}
    fn gather_all(&self, value: u64) -> Vec<u64> {
        vec![value]
    }
    fn any(&self, flag: bool) -> bool {
        flag
    }
}

/// Shared between the loop and whoever watches it (signals, progress).
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop: the running phase ends at its next item (interrupted).
    pub stop: AtomicBool,
    /// Items done in the running phase (updated every 256 items).
    pub done: AtomicU64,
    /// Index into [`plan`] of the running phase.
    pub phase: AtomicUsize,
    reason: Mutex<Option<String>>,
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    /// Ask the run to stop, saying why (the first reason is kept).
    pub fn request_stop(&self, why: &str) {
        if let Ok(mut r) = self.reason.lock()
            && r.is_none()
        {
            *r = Some(why.to_string());
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Why the run was asked to stop.
    pub fn stop_reason(&self) -> Option<String> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }
}

/// One phase of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedPhase {
    pub item: Item,
    pub op: Op,
    /// Measured and reported; an untimed phase is a create the measured
    /// operations need.
    pub timed: bool,
}

impl PlannedPhase {
    /// `file-create`, `dir-stat`, ...
    pub fn name(&self) -> String {
        format!("{}-{}", self.item.as_str(), self.op.as_str())
    }
}

/// The phases a job runs, in order: directories, then files; per item kind
/// create, stat, read (files), rename, delete. A kind none of whose
/// operations is measured is left out; its create runs untimed when a
/// measured operation needs the items. Deletes that are not measured are
/// left to the cleanup.
pub fn plan(spec: &MdSpec) -> Vec<PlannedPhase> {
    let mut out = Vec::new();
    for item in [Item::Dir, Item::File] {
        if spec.count(item) == 0 {
            continue;
        }
        let applies = |op: &Op| !(item == Item::Dir && *op == Op::Read);
        let measured: Vec<Op> = spec.ops.iter().copied().filter(applies).collect();
        if measured.is_empty() {
            continue;
        }
        for op in Op::ALL {
            if !applies(&op) {
                continue;
            }
            let timed = measured.contains(&op);
            if timed || op == Op::Create {
                out.push(PlannedPhase { item, op, timed });
            }
        }
    }
    out
}

/// One rank's figures for one phase.
#[derive(Debug, Clone)]
pub struct RankPhase {
    pub phase: PlannedPhase,
    pub rank: u32,
    /// The rank whose items were visited (another one under a rank shift).
    pub visited_rank: u32,
    /// Items this rank was to work on.
    pub planned: u64,
    /// Items done (`counter.ops`), bytes moved and the latency histogram.
    pub counter: DirCounter,
    /// This rank's own window: first operation started to last finished.
    pub elapsed_ns: u64,
    /// Every rank started together to every rank done (barrier to barrier),
    /// the window the aggregate rate is over.
    pub window_ns: u64,
    /// CPU time of the thread that did the operations.
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Failed operations by errno name (the first stops the phase).
    pub errors: BTreeMap<String, u64>,
    /// The first failure, with the path.
    pub error: Option<String>,
    /// The stonewall ended this create before every item was made.
    pub stonewalled: bool,
    /// Stopped by a stop request.
    pub interrupted: bool,
}

impl RankPhase {
    /// Items done.
    pub fn items(&self) -> u64 {
        self.counter.ops
    }
}

/// The tree of `rank` (or the shared one) under `base`.
fn tree_base(base: &Path, spec: &MdSpec, rank: u32) -> PathBuf {
    if spec.unique_dir {
        base.join(format!("rank.{rank}"))
    } else {
        base.join("shared")
    }
}

/// Make this rank's tree (or rank 0 the shared one); every rank waits.
fn make_trees<F: MdFs, S: RankSync>(
    fs: &F,
    spec: &MdSpec,
    tree: &Tree,
    base: &Path,
    sync: &S,
) -> Result<(), MdError> {
    let mut failed = None;
    if spec.unique_dir || sync.rank() == 0 {
        let top = tree_base(base, spec, sync.rank());
        let mut make = |p: &Path| {
            if failed.is_none()
                && let Err(e) = fs.make_dir(p)
            {
                failed = Some(format!("cannot make the directory {}: {e}", p.display()));
            }
        };
        make(&top);
        for d in 0..tree.dirs() {
            make(&top.join(tree.path(d)));
        }
    }
    let any = sync.any(failed.is_some());
    sync.barrier();
    match (failed, any) {
        (Some(e), _) => Err(MdError::Io(e)),
        (None, true) => Err(MdError::Io("another rank could not make its tree".into())),
        (None, false) => Ok(()),
    }
}

/// Run the job's phases on this rank under `base` (a directory this run
/// owns). `on_phase` gets each measured phase as soon as every rank has
/// finished it. Returns every phase run, measured or not.
pub fn run<F: MdFs, S: RankSync>(
    fs: &F,
    spec: &MdSpec,
    base: &Path,
    sync: &S,
    control: &Control,
    mut on_phase: impl FnMut(&RankPhase),
) -> Result<Vec<RankPhase>, MdError> {
    let mut steps = Steps::new(fs, spec, base, sync)?;
    let mut results = Vec::new();
    for (idx, ph) in plan(spec).into_iter().enumerate() {
        control.phase.store(idx, Ordering::Relaxed);
        let shift = if ph.op.shifted() { spec.rank_shift } else { 0 };
        let (r, stop) = steps.step(fs, sync, control, ph, shift, false);
        if ph.timed {
            on_phase(&r);
        }
        results.push(r);
        if stop {
            break;
        }
    }
    Ok(results)
}

/// A job's phases run one at a time, when the caller says (io500 runs
/// mdtest's create, stat, read and delete with other work in between):
/// [`Steps::new`] makes the trees, each [`Steps::step`] runs one operation
/// on exactly the items the create made.
pub struct Steps<'a> {
    spec: &'a MdSpec,
    tree: Tree,
    base: PathBuf,
    data: Vec<u8>,
    rbuf: Vec<u8>,
    /// Items each rank holds, by kind (what its create really made).
    counts: BTreeMap<&'static str, Vec<u64>>,
    renamed: BTreeMap<&'static str, bool>,
    /// Compare what each read read with what the create wrote (mdtest `-X`).
    verify_reads: bool,
    /// Sync after each create, inside its window (mdtest `-Y`).
    sync_creates: bool,
}

impl<'a> Steps<'a> {
    /// Check the job and make this rank's tree (every rank waits).
    pub fn new<F: MdFs, S: RankSync>(
        fs: &F,
        spec: &'a MdSpec,
        base: &Path,
        sync: &S,
    ) -> Result<Steps<'a>, MdError> {
        let tree = spec.check()?;
        make_trees(fs, spec, &tree, base, sync)?;
        Ok(Steps {
            spec,
            tree,
            base: base.to_path_buf(),
            data: pattern(spec.write_bytes),
            rbuf: vec![0u8; usize::try_from(spec.read_bytes).unwrap_or(0)],
            counts: BTreeMap::new(),
            renamed: BTreeMap::new(),
            verify_reads: false,
            sync_creates: false,
        })
    }

    /// mdtest's `-X`: every read phase compares the bytes each file gave
    /// with the bytes its create wrote, inside the timed window; a file
    /// that differs counts as a `mismatch` error (the phase goes on, as
    /// mdtest's does).
    pub fn verify_reads(mut self, on: bool) -> Self {
        self.verify_reads = on;
        self
    }

    /// mdtest's `-Y`: every create phase ends with a `sync` on every rank
    /// before the closing barrier, inside the phase's window.
    pub fn sync_creates(mut self, on: bool) -> Self {
        self.sync_creates = on;
        self
    }

    /// Items each rank holds of `item` (after its create; the job's count
    /// before).
    pub fn counts(&self, item: Item) -> Vec<u64> {
        self.counts.get(item.as_str()).cloned().unwrap_or_default()
    }

    /// Run phase `ph` on this rank, with every rank: a stat, read, rename
    /// or delete visits the items of rank (r + `shift`) mod ranks. With
    /// `wear_out`, a create its stonewall stopped goes on until this rank
    /// has made as many items as the busiest rank (mdtest's `-W`: every
    /// rank ends with the same count, inside the phase's time). Returns the
    /// rank's figures and whether the run must stop (a rank failed or was
    /// interrupted).
    pub fn step<F: MdFs, S: RankSync>(
        &mut self,
        fs: &F,
        sync: &S,
        control: &Control,
        ph: PlannedPhase,
        shift: u32,
        wear_out: bool,
    ) -> (RankPhase, bool) {
        let spec = self.spec;
        let ranks = sync.ranks().max(1);
        let rank = sync.rank();
        control.done.store(0, Ordering::Relaxed);
        let key = ph.item.as_str();
        let have = self
            .counts
            .entry(key)
            .or_insert_with(|| vec![spec.count(ph.item); ranks as usize]);
        let visited = (rank + shift % ranks) % ranks;
        let planned = match ph.op {
            Op::Create => spec.count(ph.item),
            _ => have.get(visited as usize).copied().unwrap_or(0),
        };
        let mut job = PhaseJob {
            ph,
            tree: &self.tree,
            top: tree_base(&self.base, spec, visited),
            name_rank: visited,
            items: spec.count(ph.item),
            from: 0,
            count: planned,
            renamed: self.renamed.get(key).copied().unwrap_or(false),
            data: &self.data,
            verify: self.verify_reads,
        };
        sync.barrier();
        let t0 = Instant::now();
        let deadline = match (ph.op, ph.timed, spec.stonewall_ns) {
            (Op::Create, true, Some(ns)) => Some(t0 + std::time::Duration::from_nanos(ns)),
            _ => None,
        };
        let mut r = run_phase(fs, &job, &mut self.rbuf, control, deadline);
        if wear_out && ph.op == Op::Create && deadline.is_some() {
            let most = sync.gather_all(r.items()).into_iter().max().unwrap_or(0);
            if r.error.is_none() && !r.interrupted && r.items() < most {
                job.from = r.items();
                job.count = most;
                let more = run_phase(fs, &job, &mut self.rbuf, control, None);
                r.counter.merge(&more.counter);
                r.elapsed_ns = nanos(t0.elapsed());
                r.errors = more.errors;
                r.error = more.error;
                r.interrupted = more.interrupted;
            }
        }
        if self.sync_creates && ph.op == Op::Create {
            fs.sync();
        }
        r.rank = rank;
        sync.barrier();
        r.window_ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let stop = sync.any(r.error.is_some() || r.interrupted);
        if ph.op == Op::Create {
            self.counts.insert(key, sync.gather_all(r.items()));
        }
        if ph.op == Op::Rename && !stop {
            self.renamed.insert(key, true);
        }
        (r, stop)
    }
}

/// What one phase of one rank works on.
struct PhaseJob<'a> {
    ph: PlannedPhase,
    tree: &'a Tree,
    /// The visited rank's tree.
    top: PathBuf,
    /// The rank in the visited items' names.
    name_rank: u32,
    /// Items per rank the job asked for (their placement in the tree).
    items: u64,
    /// The first item to visit (a wear-out goes on where the create stopped).
    from: u64,
    /// Items to visit (a prefix of the placement).
    count: u64,
    renamed: bool,
    data: &'a [u8],
    /// Compare each read with `data` (mdtest `-X`).
    verify: bool,
}

/// Data written into each file: not all zeros (a file system must store it).
fn pattern(len: u64) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// mdtest's `-X` check: the bytes read are the bytes written (every byte
/// is looked at, as mdtest's `verify_memory_pattern` does).
fn same_bytes(read: &[u8], written: &[u8]) -> bool {
    read.len() <= written.len() && read == &written[..read.len()]
}

fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One rank's pass over its items.
fn run_phase<F: MdFs>(
    fs: &F,
    job: &PhaseJob,
    rbuf: &mut [u8],
    control: &Control,
    deadline: Option<Instant>,
) -> RankPhase {
    let ph = job.ph;
    let mut r = RankPhase {
        phase: ph,
        rank: 0,
        visited_rank: job.name_rank,
        planned: job.count,
        counter: DirCounter::default(),
        elapsed_ns: 0,
        window_ns: 0,
        user_ns: 0,
        sys_ns: 0,
        errors: BTreeMap::new(),
        error: None,
        stonewalled: false,
        interrupted: false,
    };
    let cpu0 = storlab_host::os::cpu_time(true);
    let prefix = ph.item.as_str();
    let (mut a, mut b) = (NameBuf::default(), NameBuf::default());
    let bytes_per = match (ph.op, ph.item) {
        (Op::Create, Item::File) => job.data.len() as u64,
        (Op::Read, _) => rbuf.len() as u64,
        _ => 0,
    };
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let fail = |r: &mut RankPhase, path: String, e: std::io::Error| {
        *r.errors.entry(errno_name(&e)).or_insert(0) += 1;
        r.error = Some(format!("{} {path}: {e}", ph.name()));
    };
    'dirs: for (d, range) in job.tree.blocks(job.items, job.count) {
        let dir_path = job.top.join(job.tree.path(d));
        let dir = match fs.open_dir(&dir_path) {
            Ok(dir) => dir,
            Err(e) => {
                fail(&mut r, dir_path.display().to_string(), e);
                break;
            }
        };
        for i in range {
            if i < job.from {
                continue;
            }
            if control.stop.load(Ordering::Relaxed) {
                r.interrupted = true;
                break 'dirs;
            }
            if deadline.is_some_and(|dl| last >= dl) {
                r.stonewalled = true;
                break 'dirs;
            }
            let name = a.name(prefix, job.name_rank, i, job.renamed);
            let start = Instant::now();
            let res = match (ph.op, ph.item) {
                (Op::Create, Item::File) => fs.create(&dir, name, job.data),
                (Op::Create, Item::Dir) => fs.mkdir(&dir, name),
                (Op::Stat, _) => fs.stat(&dir, name),
                (Op::Read, _) => match fs.read(&dir, name, rbuf) {
                    Ok(n) if n < rbuf.len() => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("short read: {n} of {} bytes", rbuf.len()),
                    )),
                    Ok(_) if job.verify && !same_bytes(rbuf, job.data) => {
                        *r.errors.entry("mismatch".into()).or_insert(0) += 1;
                        Ok(())
                    }
                    other => other.map(|_| ()),
                },
                (Op::Rename, _) => fs.rename(&dir, name, b.name(prefix, job.name_rank, i, true)),
                (Op::Delete, Item::File) => fs.unlink(&dir, name),
                (Op::Delete, Item::Dir) => fs.rmdir(&dir, name),
            };
            last = Instant::now();
            first.get_or_insert(start);
            if let Err(e) = res {
                let n = a.name(prefix, job.name_rank, i, job.renamed);
                fail(
                    &mut r,
                    dir_path
                        .join(n.to_string_lossy().as_ref())
                        .display()
                        .to_string(),
                    e,
                );
                break 'dirs;
            }
            r.counter.record(bytes_per, nanos(last - start));
            if r.counter.ops % 256 == 0 {
                control.done.store(r.counter.ops, Ordering::Relaxed);
            }
        }
    }
    control.done.store(r.counter.ops, Ordering::Relaxed);
    r.elapsed_ns = first.map_or(0, |f| nanos(last.saturating_duration_since(f)));
    let cpu1 = storlab_host::os::cpu_time(true);
    r.user_ns = nanos(cpu1.0.saturating_sub(cpu0.0));
    r.sys_ns = nanos(cpu1.1.saturating_sub(cpu0.1));
    r
}

#[cfg(test)]
mod tests;
