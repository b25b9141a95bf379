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

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_types::RwMode;

    /// Two jobs write 1 MiB at a time under `LocalSync`, job 1 ten times
    /// slower than job 0 (a deterministic rate limit on one rank: job 0
    /// may have issued 1 MiB per ms since the start, job 1 1 MiB per
    /// 10 ms), obeying the limits and the phase stop as bench's workers
    /// do, the stonewall at 150 ms. Each job's bytes at the end and the
    /// extents the read is given.
    fn stonewalled(wear_out: bool) -> (Vec<u64>, Option<Vec<u64>>) {
        const MIB: u64 = 1 << 20;
        let control = Control::new(2);
        let sync = LocalSync::new(Duration::from_millis(150), wear_out);
        let p = PhaseParams {
            rw: RwMode::Write,
            ..PhaseParams::default()
        };
        sync.share(0, &p);
        let epoch = sync.start(false).expect("started");
        std::thread::scope(|s| {
            let hs: Vec<_> = [1u64, 10]
                .into_iter()
                .enumerate()
                .map(|(j, ms)| {
                    let job = &control.jobs[j];
                    let stop = &control.phase_stop;
                    s.spawn(move || {
                        loop {
                            let (done, limit) = (
                                job.issued_bytes.load(Ordering::Relaxed),
                                job.limit_bytes.load(Ordering::Relaxed),
                            );
                            let limited = limit > 0 && done >= limit;
                            if stop.load(Ordering::Relaxed) || limited || done >= 4096 * MIB {
                                return;
                            }
                            let allowed = epoch.elapsed().as_millis() as u64 / ms * MIB;
                            if done < allowed {
                                job.issued_bytes.fetch_add(MIB, Ordering::Relaxed);
                            } else {
                                std::thread::sleep(Duration::from_micros(200));
                            }
                        }
                    })
                })
                .collect();
            while sync.tick(&control, epoch, hs.iter().all(|h| h.is_finished())) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let bytes: Vec<u64> = control
            .jobs
            .iter()
            .map(|j| j.issued_bytes.load(Ordering::Relaxed))
            .collect();
        let local = [(0u32, bytes[0]), (1u32, bytes[1])];
        (bytes.clone(), sync.written_extents(&local, 2))
    }

    #[test]
    fn wear_out_brings_the_slow_rank_to_the_busiest_ranks_bytes() {
        // Without wear-out the slow rank stops short at the stonewall: the
        // check below can fail.
        let (plain, extents) = stonewalled(false);
        assert!(plain[1] * 4 < plain[0], "{plain:?}");
        assert_eq!(
            extents,
            Some(plain.clone()),
            "the read reads what each wrote"
        );
        // IOR's stoneWallingWearOut=1: every rank goes on to the busiest
        // rank's count, and the read is given exactly that per rank.
        let (worn, extents) = stonewalled(true);
        assert_eq!(worn[0], worn[1], "{worn:?}");
        assert!(worn[0] >= plain[1], "{worn:?}");
        assert_eq!(extents, Some(worn));
    }
}
