//! One job's I/O loop: keep `iodepth` I/Os in flight, time each from
//! submission to completion, count only what completes inside the measured
//! window, stop on time, on a finished pass, on an error or on Ctrl-C.

use crate::data::{self, DataGen};
use crate::engine::{Dir, Engine, NullEngine, PsyncEngine, UringEngine, UringOptions};
use crate::offsets::{OffsetGen, RegionMap, Rng};
use crate::stats::{DirCounter, ErrorCounts};
use crate::sys::{self, OpenFlags, SlotBufs};
use crate::{Control, JobProgress};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storlab_types::{CacheMode, EngineKind, PhaseParams};

/// Everything one worker needs, decided before it starts.
#[derive(Debug, Clone)]
pub struct WorkerPlan {
    pub job: u32,
    pub path: PathBuf,
    pub file_id: u32,
    pub region: RegionMap,
    /// Logical bytes in this job's region.
    pub size: u64,
    pub unit: usize,
}

/// What a worker measured.
#[derive(Debug, Default)]
pub struct WorkerOut {
    pub read: DirCounter,
    pub write: DirCounter,
    pub window_start: Option<Instant>,
    pub window_end: Option<Instant>,
    pub end_fsync_ns: u64,
    pub errors: ErrorCounts,
    /// The first hard error (stops the phase), e.g. "ENOSPC".
    pub fatal: Option<String>,
    /// One full pass of the region was completed while measuring.
    pub full_pass: bool,
    pub verify_checked: u64,
    pub verify_bad: Vec<(u64, String)>,
    pub verify_bad_count: u64,
    /// Whether io_uring registration took effect (None for other engines).
    pub registered: Option<bool>,
}

/// Keeps the first few mismatches; counts all.
pub const MAX_REPORTED_MISMATCHES: usize = 8;

struct Slot {
    dir: Dir,
    len: u32,
    offset: u64,
    submitted: Instant,
}

/// Run one worker. `barrier` releases all workers together.
pub fn run_worker(
    plan: &WorkerPlan,
    p: &PhaseParams,
    control: &Control,
    progress: &JobProgress,
    barrier: &Barrier,
) -> WorkerOut {
    let mut out = WorkerOut::default();
    let setup = (|| -> std::io::Result<_> {
        let file = sys::open(
            &plan.path,
            OpenFlags {
                write: p.rw.writes(),
                create_new: false,
                direct: p.cache == CacheMode::Direct,
            },
        )?;
        let depth = match p.engine {
            EngineKind::Psync => 1,
            _ => p.iodepth.max(1) as usize,
        };
        let bufs = SlotBufs::new(depth, p.max_bs() as usize)?;
        Ok((file, bufs))
    })();
    let (file, mut bufs) = match setup {
        Ok(x) => x,
        Err(e) => {
            barrier.wait();
            out.fatal = Some(format!("cannot open {}: {e}", plan.path.display()));
            return out;
        }
    };
    let fd = file.as_raw_fd();
    let depth = bufs.len();
    match p.engine {
        EngineKind::Null => {
            let mut e = NullEngine::new(depth);
            drive(
                &mut e, plan, p, control, progress, barrier, &mut bufs, &mut out, fd,
            );
        }
        EngineKind::Psync => {
            let mut e = PsyncEngine::new(fd);
            drive(
                &mut e, plan, p, control, progress, barrier, &mut bufs, &mut out, fd,
            );
        }
        EngineKind::IoUring => {
            let opts = UringOptions {
                depth,
                registered: p.registered,
                sqpoll: p.sqpoll,
                batch: p.iodepth_batch as usize,
            };
            match UringEngine::new(fd, &mut bufs, opts) {
                Ok(mut e) => {
                    out.registered = Some(e.registered());
                    drive(
                        &mut e, plan, p, control, progress, barrier, &mut bufs, &mut out, fd,
                    );
                }
                Err(e) => {
                    barrier.wait();
                    out.fatal = Some(format!("io_uring setup failed: {e}; try --engine psync"));
                }
            }
        }
    }
    drop(file);
    out
}

/// Choose a block size from the mix.
#[inline]
fn pick_bs(p: &PhaseParams, total_weight: u32, rng: &mut Rng) -> u64 {
    if p.bs.len() == 1 {
        return p.bs[0].bs_bytes;
    }
    let mut r = rng.below(total_weight as u64) as u32;
    for b in &p.bs {
        if r < b.weight {
            return b.bs_bytes;
        }
        r -= b.weight;
    }
    p.bs[0].bs_bytes
}

#[allow(clippy::too_many_arguments)]
fn drive<E: Engine>(
    engine: &mut E,
    plan: &WorkerPlan,
    p: &PhaseParams,
    control: &Control,
    progress: &JobProgress,
    barrier: &Barrier,
    bufs: &mut SlotBufs,
    out: &mut WorkerOut,
    fd: i32,
) {
    let depth = engine.depth();
    let seed = p.seed ^ (plan.job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng::new(seed);
    let mut data = DataGen::new(
        p.buffer_pattern,
        plan.unit,
        p.seed,
        p.verify,
        1 + plan.job as u64,
    );
    let slot_size = p.max_bs();
    let new_offsets = |pass_seed: u64| {
        OffsetGen::new(
            p.rw.is_random(),
            p.random_with_replacement,
            plan.size,
            slot_size,
            pass_seed,
        )
    };
    let mut offsets = new_offsets(seed);
    let total_weight: u32 = p.bs.iter().map(|b| b.weight).sum();
    let read_pct = p.rw.read_pct(p.rwmixread) as u64;

    let mut slots: Vec<Slot> = (0..depth)
        .map(|_| Slot {
            dir: Dir::Read,
            len: 0,
            offset: 0,
            submitted: Instant::now(),
        })
        .collect();
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    // Writes since each slot's payload was generated (0 = must regenerate).
    let mut slot_uses: Vec<u32> = vec![0; depth];
    let mut just_queued: Vec<u32> = Vec::with_capacity(depth);
    let mut inflight = 0usize;

    barrier.wait();
    let start = Instant::now();
    let ramp = Duration::from_nanos(p.ramp_ns);
    let ramp_end = start + ramp;
    let mut measuring = p.ramp_ns == 0;
    let mut window_start: Option<Instant> = None;
    let mut deadline = if measuring {
        p.runtime_ns.map(|r| start + Duration::from_nanos(r))
    } else {
        None
    };
    let mut issuing = true;
    let mut writes_since_fsync = 0u32;
    let mut need_fsync = false;
    let (mut prog_bytes, mut prog_ops) = (0u64, 0u64);
    let check_verify = p.verify && p.rw.reads();
    let rate = (p.rate_iops > 0).then_some(p.rate_iops as f64);
    let mut issued = 0u64;
    // The latest clock reading: the deadline is checked against the time of
    // the last completion instead of reading the clock once more per round.
    let mut now = start;

    loop {
        // Decide whether to keep issuing.
        if issuing {
            if control.stop.load(Ordering::Relaxed) {
                issuing = false;
            } else if let Some(d) = deadline
                && now >= d
            {
                issuing = false;
            }
        }
        // Fill free slots (paced when a rate cap is set).
        let mut throttled_until = None;
        if issuing && !need_fsync {
            while let Some(&slot) = free.last() {
                if let Some(r) = rate {
                    let due = start + Duration::from_secs_f64(issued as f64 / r);
                    if Instant::now() < due {
                        throttled_until = Some(due);
                        break;
                    }
                }
                issued += 1;
                let is_read = read_pct == 100 || (read_pct > 0 && rng.below(100) < read_pct);
                let dir = if is_read { Dir::Read } else { Dir::Write };
                let bs = pick_bs(p, total_weight, &mut rng);
                let (logical, wrapped) = offsets.next(bs, &mut rng);
                if wrapped && measuring {
                    out.full_pass = true;
                    if !p.time_based {
                        issuing = false;
                        break;
                    }
                }
                free.pop();
                let offset = plan.region.physical(logical);
                if dir == Dir::Write {
                    let uses = &mut slot_uses[slot as usize];
                    let regenerate = *uses == 0 || *uses >= data::REGENERATE_EVERY;
                    *uses = if regenerate { 1 } else { *uses + 1 };
                    // Regenerate the whole buffer so a later, larger block
                    // (--bssplit) never writes a stale or zero tail.
                    let buf = bufs.slice_mut(slot as usize);
                    let len = if regenerate { buf.len() } else { bs as usize };
                    data.fill(&mut buf[..len], plan.file_id, offset, regenerate);
                } else {
                    // A read will overwrite the payload: regenerate before the next write.
                    slot_uses[slot as usize] = 0;
                }
                engine.queue(slot, dir, offset, bs as u32, bufs);
                let s = &mut slots[slot as usize];
                s.dir = dir;
                s.len = bs as u32;
                s.offset = offset;
                just_queued.push(slot);
                inflight += 1;
            }
        }
        if inflight == 0 {
            if let Some(due) = throttled_until {
                // Sleep in short steps so Ctrl-C and the deadline are noticed.
                let wait = due
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(20));
                std::thread::sleep(wait);
                now = Instant::now();
                continue;
            }
            if need_fsync {
                do_fsync(fd, out);
                need_fsync = false;
                writes_since_fsync = 0;
                continue;
            }
            break;
        }
        let ts = Instant::now();
        for &s in &just_queued {
            slots[s as usize].submitted = ts;
        }
        just_queued.clear();
        if window_start.is_none() && measuring {
            window_start = Some(ts);
        }
        if let Err(e) = engine.submit_wait(1, bufs) {
            let kind = sys::errno_name(e.raw_os_error().unwrap_or(libc::EIO));
            *out.errors.entry(kind.clone()).or_default() += 1;
            out.fatal = Some(format!("submission failed: {e}"));
            break;
        }
        let tc = Instant::now();
        now = tc;
        if !measuring && tc >= ramp_end {
            // Ramp over: start counting; a full pass is measured from here.
            measuring = true;
            window_start = Some(ramp_end);
            deadline = p.runtime_ns.map(|r| ramp_end + Duration::from_nanos(r));
            offsets = new_offsets(seed ^ 0x5241_4D50);
        }
        let ws = window_start;
        let mut fatal: Option<String> = None;
        engine.reap(|slot, res| {
            let s = &slots[slot as usize];
            free.push(slot);
            inflight -= 1;
            let counted = measuring && ws.is_some_and(|w| s.submitted >= w);
            if res < 0 {
                let name = sys::errno_name(-res);
                *out.errors.entry(name.clone()).or_default() += 1;
                if fatal.is_none() {
                    fatal = Some(name);
                }
                return;
            }
            let n = res as u64;
            if n < s.len as u64 {
                let kind = if s.dir == Dir::Read {
                    "short_read"
                } else {
                    "short_write"
                };
                *out.errors.entry(kind.to_string()).or_default() += 1;
            }
            if check_verify && s.dir == Dir::Read && n > 0 {
                let buf = &bufs.slice(slot as usize)[..n as usize];
                let (checked, bad) = data::verify(buf, plan.unit, p.seed, plan.file_id, s.offset);
                out.verify_checked += checked;
                if let Some(b) = bad {
                    out.verify_bad_count += 1;
                    if out.verify_bad.len() < MAX_REPORTED_MISMATCHES {
                        out.verify_bad.push(b);
                    }
                }
            }
            if s.dir == Dir::Write {
                writes_since_fsync += 1;
            }
            if counted {
                let lat = tc.saturating_duration_since(s.submitted).as_nanos() as u64;
                match s.dir {
                    Dir::Read => out.read.record(n, lat),
                    Dir::Write => out.write.record(n, lat),
                }
                out.window_end = Some(tc);
                prog_bytes += n;
                prog_ops += 1;
            }
        });
        if prog_ops > 0 {
            progress.bytes.fetch_add(prog_bytes, Ordering::Relaxed);
            progress.ops.fetch_add(prog_ops, Ordering::Relaxed);
            prog_bytes = 0;
            prog_ops = 0;
        }
        if let Some(f) = fatal {
            if out.fatal.is_none() {
                out.fatal = Some(f);
            }
            issuing = false;
        }
        if p.fsync_every > 0 && writes_since_fsync >= p.fsync_every {
            need_fsync = true;
        }
    }
    out.window_start = window_start;
    // Writes are done when durable: the end fsync is inside the window.
    if p.rw.writes() && p.end_fsync && out.fatal.is_none() && p.engine != EngineKind::Null {
        let t = Instant::now();
        do_fsync(fd, out);
        let end = Instant::now();
        out.end_fsync_ns = end.duration_since(t).as_nanos() as u64;
        if out.window_end.is_some() {
            out.window_end = Some(end);
        }
    }
}

fn do_fsync(fd: i32, out: &mut WorkerOut) {
    if let Err(e) = sys::fsync(fd) {
        let name = sys::errno_name(e.raw_os_error().unwrap_or(libc::EIO));
        *out.errors.entry(name.clone()).or_default() += 1;
        out.fatal.get_or_insert(name);
    }
}
