//! The null engine: no device. Each I/O completes at once with its full
//! length, or, with a synthetic service time, exactly that long after the
//! system call that submitted it. The second form is a device with a known
//! answer: at depth N and service time S, a correct pipeline measures
//! latency S and N/S I/Os per second (Little's law), which the tests check.
//!
//! A service time may be longer than the phase (`--null-latency 30s
//! --runtime 1s`): a wait in [`Engine::submit`] lasts at most [`SLICE`], so
//! the worker sees the deadline, Ctrl-C or SIGTERM within that, and then
//! gives up the I/Os whose service time has not ended yet
//! ([`Engine::abandon`]). An abandoned I/O ends there and is not counted:
//! it did not complete. One whose service time has ended is reaped and
//! counted, as a real device's I/O completing while the in-flight I/O
//! drains is (fio's null engine has no service time, and a real device
//! drains within its latency; a synthetic one would take the whole
//! service time).

use super::{Engine, Io, QueueError, Slots};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

/// The longest one wait in `submit` lasts, so a stop is noticed in time.
pub(crate) const SLICE: Duration = Duration::from_millis(10);

/// No I/O; optional fixed service time per I/O.
#[derive(Debug)]
pub(crate) struct NullEngine {
    slots: Slots,
    service: Option<Duration>,
    queued: Vec<Io>,
    /// Submitted I/Os in submission order with the time each is done.
    pending: VecDeque<(u32, u32, Instant)>,
}

impl NullEngine {
    pub fn new(slots: Slots, service: Option<Duration>) -> NullEngine {
        let depth = slots.len();
        NullEngine {
            slots,
            service,
            queued: Vec::with_capacity(depth),
            pending: VecDeque::with_capacity(depth),
        }
    }

    /// Sleep until `due`: coarse sleep, then spin the last stretch so a
    /// synthetic service time is met within microseconds.
    fn wait_until(due: Instant) {
        loop {
            let now = Instant::now();
            if now >= due {
                return;
            }
            let left = due - now;
            if left > Duration::from_micros(200) {
                std::thread::sleep(left - Duration::from_micros(150));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Engine for NullEngine {
    fn slots(&self) -> &Slots {
        &self.slots
    }
    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buf_mut(slot)
    }
    fn queue(&mut self, io: Io) -> Result<(), QueueError> {
        self.slots.take(&io)?;
        self.queued.push(io);
        Ok(())
    }
    fn submit(&mut self, wait: usize) -> io::Result<usize> {
        let now = Instant::now();
        let due = now + self.service.unwrap_or_default();
        let n = self.queued.len();
        for io in self.queued.drain(..) {
            self.slots.submitted(io.slot);
            self.pending.push_back((io.slot, io.len, due));
        }
        // Completions are due in submission order (one fixed service time).
        if wait > 0
            && let Some(&(_, _, due)) = self.pending.get(wait.min(self.pending.len()) - 1)
        {
            Self::wait_until(due.min(Instant::now() + SLICE));
        }
        Ok(n)
    }
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> usize {
        let now = Instant::now();
        let mut n = 0;
        while let Some(&(slot, len, due)) = self.pending.front() {
            if due > now {
                break;
            }
            self.pending.pop_front();
            self.slots.completed(slot);
            f(slot, len as i32);
            n += 1;
        }
        n
    }
    fn has_completions(&mut self) -> bool {
        self.pending
            .front()
            .is_some_and(|&(_, _, due)| due <= Instant::now())
    }
    /// Give up the I/Os not yet done; those whose service time has ended
    /// stay, to be reaped (and counted) like a real device's completions.
    fn abandon<F: FnMut(u32)>(&mut self, mut f: F) -> usize {
        let now = Instant::now();
        // Due times are in submission order (one fixed service time).
        let done = self.pending.iter().take_while(|p| p.2 <= now).count();
        let n = self.pending.len() - done;
        for (slot, _, _) in self.pending.drain(done..) {
            self.slots.completed(slot);
            f(slot);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;

    fn engine(service: Duration) -> NullEngine {
        NullEngine::new(Slots::new(2, 4096).unwrap(), Some(service))
    }

    #[test]
    fn a_long_service_time_is_waited_in_slices_and_can_be_abandoned() {
        let mut e = engine(Duration::from_secs(30));
        for slot in 0..2 {
            let io = Io {
                slot,
                dir: Dir::Read,
                offset: 0,
                len: 4096,
            };
            e.queue(io).unwrap();
        }
        let t = Instant::now();
        assert_eq!(e.submit(1).unwrap(), 2);
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "submit waited {:?} of a 30 s service time",
            t.elapsed()
        );
        assert_eq!(e.reap(|_, _| {}), 0, "nothing completed early");
        assert_eq!(e.in_flight(), 2);
        let mut freed = Vec::new();
        assert_eq!(e.abandon(|s| freed.push(s)), 2);
        freed.sort_unstable();
        assert_eq!(freed, vec![0, 1]);
        assert_eq!(e.in_flight(), 0);
        // The slots are usable again.
        e.buf_mut(0)[0] = 1;
    }

    #[test]
    fn completed_io_is_not_abandoned() {
        let mut e = engine(Duration::from_millis(1));
        let io = Io {
            slot: 1,
            dir: Dir::Read,
            offset: 0,
            len: 4096,
        };
        e.queue(io).unwrap();
        e.submit(0).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(e.abandon(|_| panic!("a completed I/O was given up")), 0);
        let mut got = Vec::new();
        assert_eq!(e.reap(|s, r| got.push((s, r))), 1);
        assert_eq!(got, vec![(1, 4096)]);
    }

    #[test]
    fn a_short_service_time_is_met_in_one_call() {
        let mut e = engine(Duration::from_millis(3));
        let io = Io {
            slot: 0,
            dir: Dir::Write,
            offset: 0,
            len: 512,
        };
        e.queue(io).unwrap();
        let t = Instant::now();
        e.submit(1).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(3));
        let mut got = Vec::new();
        assert_eq!(e.reap(|s, r| got.push((s, r))), 1);
        assert_eq!(got, vec![(0, 512)]);
    }
}
