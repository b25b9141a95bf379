//! The start gate: workers get ready (open files, map buffers, build their
//! engine), then wait until the coordinator releases them all at once or
//! calls the phase off. Unlike `std::sync::Barrier` it can be cancelled, so
//! a worker that fails to start (or a thread that cannot be spawned) never
//! leaves the others waiting forever.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Released(Instant),
    Cancelled,
}

#[derive(Debug)]
struct State {
    arrived: usize,
    phase: Phase,
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct StartGate {
    state: Mutex<State>,
    cv: Condvar,
}

impl StartGate {
    pub fn new() -> StartGate {
        StartGate {
            state: Mutex::new(State {
                arrived: 0,
                phase: Phase::Waiting,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked while holding the lock leaves valid state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker's place at the gate. Dropping it unused (an early return or
    /// a panic while getting ready) counts as arriving, so the coordinator
    /// never waits for a worker that is gone.
    pub fn ticket(&self) -> Ticket<'_> {
        Ticket {
            gate: self,
            used: false,
        }
    }

    fn arrive(&self) -> MutexGuard<'_, State> {
        let mut s = self.lock();
        s.arrived += 1;
        self.cv.notify_all();
        s
    }

    /// A worker is ready; wait for the release. Returns the common epoch,
    /// or `None` when the phase was called off.
    fn arrive_and_wait(&self) -> Option<Instant> {
        let mut s = self.arrive();
        loop {
            match s.phase {
                Phase::Released(t) => return Some(t),
                Phase::Cancelled => return None,
                Phase::Waiting => s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    /// Wait until `n` workers have arrived, then release them all with one
    /// common epoch, which is returned.
    pub fn release_when(&self, n: usize) -> Instant {
        let mut s = self.lock();
        while s.arrived < n && s.phase == Phase::Waiting {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let t = Instant::now();
        if s.phase == Phase::Waiting {
            s.phase = Phase::Released(t);
        }
        self.cv.notify_all();
        t
    }

    /// Wait until `n` workers have arrived (or the phase is called off),
    /// without releasing them: a multi-process run first agrees on the
    /// common epoch with the other processes, then calls [`Self::release_at`].
    pub fn wait_arrivals(&self, n: usize) {
        let mut s = self.lock();
        while s.arrived < n && s.phase == Phase::Waiting {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Release every waiting (and later) worker with the epoch `t`.
    pub fn release_at(&self, t: Instant) {
        let mut s = self.lock();
        if s.phase == Phase::Waiting {
            s.phase = Phase::Released(t);
        }
        self.cv.notify_all();
    }

    /// Call the phase off: waiting workers return at once, late ones too.
    pub fn cancel(&self) {
        let mut s = self.lock();
        if s.phase == Phase::Waiting {
            s.phase = Phase::Cancelled;
        }
        self.cv.notify_all();
    }
}

/// See [`StartGate::ticket`].
#[derive(Debug)]
pub(crate) struct Ticket<'a> {
    gate: &'a StartGate,
    used: bool,
}

impl Ticket<'_> {
    /// Ready: wait for the release (the common epoch) or the cancel (`None`).
    pub fn wait(mut self) -> Option<Instant> {
        self.used = true;
        self.gate.arrive_and_wait()
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if !self.used {
            drop(self.gate.arrive());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_everyone_with_one_epoch() {
        let g = StartGate::new();
        let epochs: Vec<Option<Instant>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| g.ticket().wait())).collect();
            let t = g.release_when(4);
            let e: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
            assert!(e.iter().all(|x| *x == Some(t)));
            e
        });
        assert_eq!(epochs.len(), 4);
    }

    #[test]
    fn wait_then_release_at_a_given_epoch() {
        let g = StartGate::new();
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| g.ticket().wait())).collect();
            g.wait_arrivals(3);
            let t = Instant::now();
            g.release_at(t);
            for h in hs {
                assert_eq!(h.join().unwrap(), Some(t));
            }
        });
    }

    #[test]
    fn cancel_frees_waiters_that_would_otherwise_hang() {
        let g = StartGate::new();
        std::thread::scope(|s| {
            let h = s.spawn(|| g.ticket().wait());
            // Pretend the second worker could not be spawned.
            g.cancel();
            assert_eq!(h.join().unwrap(), None);
        });
        // A worker arriving after the cancel does not wait either.
        assert_eq!(g.ticket().wait(), None);
    }

    #[test]
    fn a_worker_that_gives_up_still_counts() {
        let g = StartGate::new();
        std::thread::scope(|s| {
            let ok = s.spawn(|| g.ticket().wait());
            s.spawn(|| {
                let _t = g.ticket();
                // Returns (or panics) before waiting: the ticket's drop arrives.
            });
            let t = g.release_when(2);
            assert_eq!(ok.join().unwrap(), Some(t));
        });
    }
}
