//! The null engine: no device. Each I/O completes at once with its full
//! length, or, with a synthetic service time, exactly that long after the
//! system call that submitted it. The second form is a device with a known
//! answer: at depth N and service time S, a correct pipeline measures
//! latency S and N/S I/Os per second (Little's law), which the tests check.

use super::{Engine, Io, QueueError, Slots};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

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
            Self::wait_until(due);
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
}
