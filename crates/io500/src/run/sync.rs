//! The stonewall of an IOR phase for ranks that are threads of one
//! process: bench's [`PhaseSync`] hooks, done locally. IOR's `-D S`: a
//! write stops issuing once S seconds have passed; with
//! `stoneWallingWearOut=1` every rank then goes on until it has written as
//! much as the rank that wrote most (IOR's `pairs_accessed` max), and the
//! read that follows reads exactly what each rank wrote.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storlab_bench::Control;
use storlab_bench::cluster::{PhaseSync, Share};
use storlab_types::PhaseParams;

/// One bench job's [`PhaseSync`]: stonewalls its write phases.
pub(crate) struct LocalSync {
    stonewall: Duration,
    wear_out: bool,
    /// The phase running writes (only writes are stonewalled).
    writes: Cell<bool>,
    stonewalled: Cell<bool>,
}

impl LocalSync {
    pub(crate) fn new(stonewall: Duration, wear_out: bool) -> LocalSync {
        LocalSync {
            stonewall,
            wear_out,
            writes: Cell::new(false),
            stonewalled: Cell::new(false),
        }
    }
}

impl PhaseSync for LocalSync {
    fn share(&self, _index: usize, p: &PhaseParams) -> Share {
        self.writes.set(p.rw.writes() && !p.rw.reads());
        Share::alone(p)
    }

    fn agree(&self, ok: bool) -> bool {
        ok
    }

    fn start(&self, local_error: bool) -> Option<Instant> {
        self.stonewalled.set(false);
        (!local_error).then(Instant::now)
    }

    fn tick(&self, control: &Control, epoch: Instant, local_done: bool) -> bool {
        if self.writes.get() && !self.stonewalled.get() && epoch.elapsed() >= self.stonewall {
            self.stonewalled.set(true);
            if self.wear_out {
                let most = control
                    .jobs
                    .iter()
                    .map(|j| j.issued_bytes.load(Ordering::Relaxed))
                    .max()
                    .unwrap_or(0);
                for j in &control.jobs {
                    j.limit_bytes.store(most.max(1), Ordering::Relaxed);
                }
            } else {
                control.phase_stop.store(true, Ordering::Relaxed);
            }
        }
        !local_done
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
        Some(v)
    }
}
