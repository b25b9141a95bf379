//! bench's ranks over a [`Comm`]: who is where ([`Ranks`]), what rank 0
//! tells every rank about the target it prepared ([`TargetMsg`]), each
//! rank's view of the job ([`local_job`], [`check_files`]) and bench's
//! [`PhaseSync`] ([`ClusterSync`]): per phase, all ranks agree on errors,
//! leave a barrier together (each rank's clock counts from the moment it
//! left it; the following barrier measures the exit skew), every 20 ms
//! reduce their state (an error, the stonewall, done), and after it send
//! their figures to rank 0, which merges them
//! ([`storlab_bench::cluster::merge`]).

pub mod iolog;
pub mod run;

use crate::comm::Comm;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storlab_bench::cluster::clients;
use storlab_bench::cluster::grouped::merge_grouped;
use storlab_bench::cluster::merge::{RankPart, RunFacts, bytes_at, ior_terms, merge};
use storlab_bench::groups::{has_rank_sets, rank_group, scaled_for_ranks};
use storlab_bench::{Control, DataFile, PhaseSync, ResolvedJob, ResolvedTarget, Share, TargetKind};
use storlab_types::{CacheMode, PhaseParams, PhaseResult, TargetInfo};

/// How a step every rank took went, as this rank sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Every rank succeeded.
    Ok,
    /// Some rank failed; this is rank 0, which says why.
    Report(String),
    /// Some rank failed; this rank stays quiet (rank 0 reports).
    Quiet,
}

/// The communicator and what every rank knows about every other.
#[derive(Debug)]
pub struct Ranks<C> {
    pub comm: C,
    /// Node name of each rank.
    pub nodes: Vec<String>,
    /// RAM of each rank's node, bytes.
    pub mem: Vec<u64>,
}

impl<C: Comm> Ranks<C> {
    /// Every rank's node name and RAM, exchanged (collective: a gather of
    /// the names to rank 0, its list broadcast, an all-gather of the RAM).
    pub fn exchange(comm: C, node: &str, mem_here: u64) -> Ranks<C> {
        let all = comm.gather_strings(node);
        let names = comm.broadcast_string(&all.join("\n"));
        let mem = comm.all_gather_u64(&[mem_here]);
        Ranks {
            comm,
            nodes: names.lines().map(String::from).collect(),
            mem,
        }
    }

    pub fn rank(&self) -> u32 {
        self.comm.rank()
    }

    pub fn size(&self) -> u32 {
        self.comm.size()
    }

    pub fn root(&self) -> bool {
        self.comm.root()
    }

    /// This rank's node name.
    pub fn node(&self) -> &str {
        self.nodes
            .get(self.rank() as usize)
            .map_or("?", String::as_str)
    }

    /// A step every rank took (`mine`: this rank's failure): whether
    /// every rank succeeded, else at rank 0 the first failure (its own as
    /// it is; another rank's with its rank, node and `what`).
    pub fn first_failure(&self, what: &str, mine: Option<String>) -> Step {
        if self.comm.all(mine.is_none()) {
            return Step::Ok;
        }
        match self.comm.first_of(mine) {
            None if !self.root() => Step::Quiet,
            Some((0, m)) => Step::Report(m),
            first => {
                let (rank, m) = first.unwrap_or_default();
                Step::Report(format!(
                    "rank {rank} on {}: {what}: {m}",
                    self.nodes.get(rank as usize).cloned().unwrap_or_default()
                ))
            }
        }
    }

    /// The client order: which ranks are the first k (by rank, or one
    /// rank per node in turn).
    pub fn client_order(&self, by_node: bool) -> Vec<u32> {
        if by_node {
            clients::order_by_node(&self.nodes)
        } else {
            (0..self.size()).collect()
        }
    }

    /// Whether every rank resolved the same job: the digests of the
    /// canonical job texts are all-gathered (so every rank takes the same
    /// decision). `Ok(())` if they agree; else every rank's text at rank 0
    /// (`Err(Some(texts))`) and `Err(None)` elsewhere.
    pub fn agree_on_job(&self, text: &str) -> Result<(), Option<Vec<String>>> {
        let mine = storlab_bench::cluster::agree::digest(text);
        let all = self.comm.all_gather_u64(&mine[..]);
        if all.chunks(2).all(|d| d == &all[..2]) {
            return Ok(());
        }
        let texts = self.comm.gather_strings(text);
        Err(self.root().then_some(texts))
    }
}

/// What rank 0 sends every rank about the target it prepared.
#[derive(Debug, Serialize, Deserialize)]
pub struct TargetMsg {
    pub kind: String,
    pub info: TargetInfo,
    pub files: Vec<(PathBuf, u64, bool)>,
    pub shared: bool,
    pub unit: usize,
    pub warnings: Vec<String>,
}

impl TargetMsg {
    /// The message of the job rank 0 prepared.
    pub fn of(j: &ResolvedJob) -> TargetMsg {
        TargetMsg {
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
        }
    }

    /// Rank 0's message on every rank (collective); an error everywhere
    /// if rank 0 had none or it did not arrive intact.
    pub fn broadcast<C: Comm>(comm: &C, msg: Option<&TargetMsg>) -> Result<TargetMsg, MsgError> {
        let text = comm.broadcast_string(
            &msg.map(|m| serde_json::to_string(m).unwrap_or_default())
                .unwrap_or_default(),
        );
        Ok(serde_json::from_str(&text)?)
    }
}

/// Rank 0's target message did not arrive intact.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct MsgError(#[from] serde_json::Error);

/// This rank's view of the job: rank 0's files, its own phases (no jobs
/// when it is not a client, `me` None).
pub fn local_job(
    node: &str,
    phases: &[PhaseParams],
    msg: &TargetMsg,
    me: Option<u32>,
) -> ResolvedJob {
    let phases = phases
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
        host.hostname = node.to_string();
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

/// A client could not open one of its files.
#[derive(Debug, thiserror::Error)]
#[error("cannot open {}: {error}", path.display())]
pub struct OpenError {
    pub path: PathBuf,
    /// Part of the message, not a source, so `{:#}` says it once.
    pub error: std::io::Error,
}

/// A client opens the files its jobs use, as the phases will (write access
/// if any phase writes, O_DIRECT if any asks for it).
pub fn check_files(job: &ResolvedJob, me: Option<u32>) -> Result<(), OpenError> {
    check_rank_files(job, me, u32::MAX)
}

/// [`check_files`] on rank `rank`: a rank of a group (`--group-ranks`)
/// opens its group's jobs' files.
pub fn check_rank_files(job: &ResolvedJob, me: Option<u32>, rank: u32) -> Result<(), OpenError> {
    let Some(c) = me else { return Ok(()) };
    let Some(p) = job.phases.first() else {
        return Ok(());
    };
    let write = job.phases.iter().any(|p| p.rw.writes());
    let direct = job.phases.iter().any(|p| p.cache == CacheMode::Direct);
    // A group's rank (--group-ranks): its group's jobs' files.
    let (first, n) = match rank_group(p, rank) {
        Some((g, first)) if has_rank_sets(p) => (
            first as usize,
            p.groups.get(g).map_or(0, |g| g.numjobs as usize),
        ),
        _ => (c as usize * p.numjobs as usize, p.numjobs as usize),
    };
    let files: Vec<&DataFile> = if job.target.shared {
        job.target.files.iter().take(1).collect()
    } else {
        job.target.files.iter().skip(first).take(n).collect()
    };
    for f in files {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(write);
        if direct {
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&f.path).map_err(|error| OpenError {
            path: f.path.clone(),
            error,
        })?;
    }
    Ok(())
}

/// What [`ClusterSync::run`] leaves on a rank.
#[derive(Debug)]
pub struct ClusterOutcome {
    /// This rank's own run (its phases, why it stopped, its warnings).
    pub local: storlab_bench::RunOutcome,
    /// The merged phases (rank 0 only; empty elsewhere).
    pub merged: Vec<PhaseResult>,
    /// Why the cluster run stopped, naming the rank (rank 0 only).
    pub stop_reason: Option<String>,
}

/// How the clients of a run work together (the cluster flags).
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// `--reorder-tasks`: readers read another node's data.
    pub reorder: bool,
    pub stonewall: Option<Duration>,
    pub wear_out: bool,
    /// `--clients-by` as stored (`rank` or `node`).
    pub clients_by: String,
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

/// bench's [`PhaseSync`] over a communicator. Interior mutability: the run
/// loop and the phase callback both hold it, on the one thread that calls
/// the communicator.
pub struct ClusterSync<'w, C> {
    world: &'w Ranks<C>,
    clients: Vec<u32>,
    /// This rank's place among the clients (None: it only waits).
    me: Option<u32>,
    shift: Option<u32>,
    opts: SyncOptions,
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
    /// Each phase as planned (its groups' ranks, for `--group-ranks`).
    phases: Vec<PhaseParams>,
    /// The phase running, when its groups are given to ranks: (phase
    /// index, this rank's group, its first job's global index).
    grouped: Cell<Option<(usize, u32, u32)>>,
}

impl<'w, C: Comm> ClusterSync<'w, C> {
    pub fn new(
        world: &'w Ranks<C>,
        opts: SyncOptions,
        clients: &[u32],
        numjobs: Vec<u32>,
    ) -> ClusterSync<'w, C> {
        let me = clients
            .iter()
            .position(|&r| r == world.rank())
            .map(|c| c as u32);
        ClusterSync {
            world,
            clients: clients.to_vec(),
            me,
            shift: clients::reorder_shift(&world.nodes, clients),
            opts,
            skew_ns: Cell::new(0),
            samples: RefCell::new(Vec::new()),
            stonewalled: Cell::new(false),
            wear_deadline: Cell::new(None),
            local_failed: Cell::new(false),
            epoch: Cell::new(None),
            first_done: Cell::new(0),
            numjobs,
            phases: Vec::new(),
            grouped: Cell::new(None),
        }
    }

    /// The phases as planned, so a phase of groups given to ranks
    /// (`--group-ranks`) runs each rank's group and merges per group.
    pub fn with_phases(mut self, phases: &[PhaseParams]) -> Self {
        self.phases = phases.to_vec();
        self
    }

    /// Readers read the data of the client `shift` places further in the
    /// client order, a shift the caller computed (io500: IOR's `-C -Q`
    /// offset, `storlab_io500::run::reorder`), in place of
    /// `--reorder-tasks`'s nearest other node; 0: each reads its own.
    pub fn with_read_shift(mut self, shift: u32) -> Self {
        self.opts.reorder = shift != 0;
        self.shift = Some(shift);
        self
    }

    /// This rank's place among the clients (None: it only waits).
    pub fn me(&self) -> Option<u32> {
        self.me
    }

    /// The rank shift of `--reorder-tasks` (None: every client on one node).
    pub fn shift(&self) -> Option<u32> {
        self.shift
    }

    fn k(&self) -> u32 {
        self.clients.len() as u32
    }

    /// The client whose data this rank's jobs use in phase `p`.
    fn source(&self, p: &PhaseParams) -> Option<u32> {
        let c = self.me?;
        let reading = p.rw.reads() && !p.rw.writes();
        if self.opts.reorder && reading {
            Some((c + self.shift.unwrap_or(1)) % self.k())
        } else {
            Some(c)
        }
    }

    /// Run this rank's `job` with the other ranks (collective): the phases
    /// through [`storlab_bench::run_synced_phases`] (all of them, nothing
    /// carried in), and after each every rank's part gathered to rank 0,
    /// which merges it and hands the merged phase to `on_merged` at once
    /// (to be saved before the next phase starts).
    pub fn run(
        &self,
        job: &ResolvedJob,
        control: &Control,
        on_merged: impl FnMut(&PhaseResult),
    ) -> ClusterOutcome {
        let mut carried = storlab_bench::Carried::new(job);
        self.run_phases(job, control, &mut carried, 0..job.phases.len(), on_merged)
    }

    /// [`ClusterSync::run`] for phases `phases` of `job` only, with what
    /// earlier calls left in `carried` (what is laid out, what each job
    /// wrote under a stonewall): a job stepped through its phases on this
    /// thread with other collective work between them (io500 under MPI).
    pub fn run_phases(
        &self,
        job: &ResolvedJob,
        control: &Control,
        carried: &mut storlab_bench::Carried,
        phases: std::ops::Range<usize>,
        mut on_merged: impl FnMut(&PhaseResult),
    ) -> ClusterOutcome {
        let mut merged: Vec<PhaseResult> = Vec::new();
        let mut stop_reason: Option<String> = None;
        let outcome =
            storlab_bench::run_synced_phases(job, control, self, carried, phases, |phase| {
                let part = self.part(control, phase);
                if let Some((p, reason)) = self.gather(part) {
                    on_merged(&p);
                    if let Some(r) = reason {
                        stop_reason.get_or_insert(r);
                    }
                    merged.push(p);
                }
            });
        ClusterOutcome {
            local: outcome,
            merged,
            stop_reason,
        }
    }

    /// What this rank tells rank 0 after a phase (every rank calls it).
    pub fn part(&self, control: &Control, phase: &PhaseResult) -> Option<RankPart> {
        let window = control.last_window().filter(|_| self.me.is_some());
        let first_done = self.world.comm.min_u64(window.map_or(u64::MAX, |w| w.1));
        let mut samples = self.samples.borrow().clone();
        if let Some(w) = window {
            samples.push((w.1, phase.total.bytes));
        }
        self.first_done.set(first_done);
        let c = self.me?;
        let p = &phase.params;
        let src = self.source(p).unwrap_or(c);
        let grouped = self.grouped.get();
        let first_job = grouped.map_or(src * p.numjobs, |g| g.2);
        // Every phase sends its histograms: rank 0 merges the percentiles exactly.
        let hists = Some(control.last_hists());
        let files = phase
            .jobs
            .iter()
            .map(|j| {
                let g = (first_job + j.job) as usize;
                file_label(p, g)
            })
            .collect();
        let error = self
            .local_failed
            .get()
            .then(|| phase.warnings.first().cloned())
            .flatten();
        Some(RankPart {
            rank: self.world.rank(),
            node: self.world.node().to_string(),
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
            group: grouped.map(|g| g.1),
            hists,
        })
        .map(|mut part| {
            part.result.cluster = None;
            part
        })
    }

    /// Send this rank's part to rank 0; there, the merged phase and the
    /// reason it stopped (naming the rank), if it did.
    pub fn gather(&self, part: Option<RankPart>) -> Option<(PhaseResult, Option<String>)> {
        let text = part
            .as_ref()
            .map(|p| serde_json::to_string(p).unwrap_or_default())
            .unwrap_or_default();
        let bound = self.world.comm.max_u64(&[self.skew_ns.get()])[0];
        let all = self.world.comm.gather_strings(&text);
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
            ranks: self.world.size(),
            clients_by: self.opts.clients_by.clone(),
            reorder_shift: self.opts.reorder.then(|| self.shift.unwrap_or(1)),
            stonewall_ns: self.opts.stonewall.map(|d| d.as_nanos() as u64),
            wear_out: self.opts.wear_out,
            clock_error_bound_ns: bound,
            first_done_ns: self.first_done.get(),
        };
        let merged = match self.grouped.get().and_then(|g| self.phases.get(g.0)) {
            Some(p) => merge_grouped(parts, &facts, p)?,
            None => merge(parts, &facts)?,
        };
        Some((merged, reason))
    }
}

fn file_label(p: &PhaseParams, global_job: usize) -> String {
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

impl<C: Comm> PhaseSync for ClusterSync<'_, C> {
    fn share(&self, index: usize, p: &PhaseParams) -> Share {
        self.grouped.set(None);
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

    fn group_share(&self, index: usize, p: &PhaseParams) -> Option<(usize, Share)> {
        self.grouped.set(None);
        if !has_rank_sets(p) {
            return None;
        }
        let (g, first_job) = rank_group(p, self.world.rank())?;
        self.grouped.set(Some((index, g as u32, first_job)));
        Some((
            g,
            Share {
                first_job,
                total_jobs: scaled_for_ranks(p).numjobs,
                slice: 0,
                slices: 1,
            },
        ))
    }

    fn agree(&self, ok: bool) -> bool {
        self.world.comm.all(ok)
    }

    fn start(&self, local_error: bool) -> Option<Instant> {
        self.samples.borrow_mut().clear();
        self.stonewalled.set(false);
        self.wear_deadline.set(None);
        self.local_failed.set(local_error);
        test_panic(self.world.rank());
        let comm = &self.world.comm;
        let bad = comm.max_u64(&[u64::from(local_error)])[0];
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
            comm.barrier();
            let t = Instant::now();
            comm.barrier();
            let d = t.elapsed().as_nanos() as u64;
            let dmax = comm.max_u64(&[d])[0];
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
        let sw_hit = self.opts.stonewall.is_some_and(|d| now >= d);
        let issued = control
            .jobs
            .iter()
            .map(|j| j.issued_bytes.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let g = self.world.comm.max_u64(&[
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
            if self.opts.wear_out {
                // Everyone goes on to the furthest job's amount, for at
                // most one more stonewall period.
                for j in &control.jobs {
                    j.limit_bytes.store(g[3].max(1), Ordering::Relaxed);
                }
                self.wear_deadline
                    .set(self.opts.stonewall.map(|d| epoch + 2 * d));
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
        Some(self.world.comm.max_u64(&v))
    }
}

#[cfg(test)]
mod tests;
