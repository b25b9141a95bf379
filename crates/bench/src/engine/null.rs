//! The null engine: no device. Each I/O completes at once with its full
//! length, or, with a synthetic service time S, as a device model: an I/O
//! is due S after the system call that submitted it, and is reaped when
//! the worker next looks.
//!
//! **Lateness does not accumulate.** The engine waits for a due I/O in an
//! absolute sleep (`clock_nanosleep(TIMER_ABSTIME)` on `CLOCK_MONOTONIC`,
//! timer slack 1 ns), never spinning: nine workers spinning on two cores
//! starved each other (275 instead of 10,000 I/Os per second each at
//! 100 µs). The kernel still wakes a sleeper late (on a 2-vCPU VM at load
//! 10: 17 µs on average for one thread under `SCHED_FIFO`, 55 µs for nine
//! ordinary ones), and at depth 1 every late wake-up would delay every
//! later I/O: N jobs at S would give N/(S + wake-up latency), a figure of
//! the machine's scheduler, not of the pipeline. So the time the engine's
//! sleep overran an I/O's due time (its *wake-up lateness*, measured at
//! each wake) is the worker's, not the device's: that I/O's latency shows
//! it, and the device, which finished on time, owes the slot that time:
//! the slot's next I/O is due S after its submission less what is owed (at
//! most S per I/O, at most [`CATCH_UP`] owed in all, so a worker stopped
//! for longer loses the rest). The worker's own time between a wake-up
//! and its next submission (storlab's pipeline) is never owed: it lowers
//! IOPS as on a real device. Over a run, N free-running QD-1 jobs give
//! N/(S + pipeline time), and the mean latency is S plus the pipeline's
//! share (Little's law); single latencies after a late wake-up are shorter
//! than S by the lateness the one before carried.
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
use rustix::thread::{ClockId, Timespec};
use std::collections::VecDeque;
use std::io;
use std::num::NonZeroU64;
use std::time::Duration;

/// The longest one wait in `submit` lasts, so a stop is noticed in time.
pub(crate) const SLICE: Duration = Duration::from_millis(10);

/// The most wake-up lateness a slot is owed (or S, when longer): a worker
/// kept off the CPU longer than this loses the rest of that time.
pub(crate) const CATCH_UP: Duration = Duration::from_millis(100);

/// `CLOCK_MONOTONIC` in nanoseconds.
fn mono_ns() -> u64 {
    crate::sys::monotonic_ns()
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// No I/O; optional fixed service time per I/O.
#[derive(Debug)]
pub(crate) struct NullEngine {
    slots: Slots,
    /// Service time in ns (0: complete at once).
    service: u64,
    queued: Vec<Io>,
    /// Submitted I/Os in submission order with the time (monotonic ns)
    /// each is due.
    pending: VecDeque<(u32, u32, u64)>,
    /// Per slot: wake-up lateness owed to its next I/O, in ns.
    owed: Vec<u64>,
    /// The last wait's (target, wake-up) when it woke after its target;
    /// the next reap credits the I/Os it delayed.
    woke_late: Option<(u64, u64)>,
    /// The clock as the last `submit` returned, for the reap right after
    /// it (a clock read costs ~100-250 ns on this VM: two per I/O, not four).
    returned_at: Option<u64>,
    /// Timer slack of the sleeping thread set to 1 ns.
    slack_set: bool,
}

impl NullEngine {
    pub fn new(slots: Slots, service: Option<Duration>) -> NullEngine {
        let depth = slots.len();
        NullEngine {
            owed: vec![0; depth],
            slots,
            service: service.map_or(0, ns),
            queued: Vec::with_capacity(depth),
            pending: VecDeque::with_capacity(depth),
            woke_late: None,
            returned_at: None,
            slack_set: false,
        }
    }

    /// Sleep until `target` (monotonic ns; `now` read just before) in
    /// absolute sleeps, so an interrupted or early return does not stretch
    /// the wait; remember when it returned and how late the wake-up was.
    fn sleep_until(&mut self, target: u64, now: u64) {
        self.returned_at = Some(now);
        if now >= target {
            return;
        }
        if !self.slack_set {
            // The default 50 µs slack would be half a 100 µs service time;
            // where it cannot be set, the lateness is owed like any other.
            let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
            self.slack_set = true;
        }
        let ts = Timespec {
            tv_sec: (target / 1_000_000_000) as i64,
            tv_nsec: (target % 1_000_000_000) as _,
        };
        let mut wake = now;
        while wake < target {
            // EINTR (a signal) just sleeps again; other errors cannot occur
            // for a valid clock and time, and the loop re-reads the clock.
            if rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &ts).is_err() {
                std::thread::yield_now();
            }
            wake = mono_ns();
        }
        self.returned_at = Some(wake);
        if wake > target {
            self.woke_late = Some((target, wake));
        }
    }

    /// What a slot may be owed at most.
    fn owed_cap(&self) -> u64 {
        ns(CATCH_UP).max(self.service)
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
        let now = mono_ns();
        self.returned_at = None;
        let s = self.service;
        let n = self.queued.len();
        for io in self.queued.drain(..) {
            self.slots.submitted(io.slot);
            let owed = &mut self.owed[io.slot as usize];
            let credit = (*owed).min(s);
            *owed -= credit;
            self.pending
                .push_back((io.slot, io.len, now + (s - credit)));
        }
        // Wait for the `wait`-th earliest due time (a credited I/O may be
        // due before older ones, so the queue is not in due order).
        if wait > 0 && !self.pending.is_empty() {
            let k = wait.min(self.pending.len()) - 1;
            let due = if k == 0 {
                self.pending.iter().map(|p| p.2).min()
            } else {
                let mut dues: Vec<u64> = self.pending.iter().map(|p| p.2).collect();
                dues.sort_unstable();
                dues.get(k).copied()
            };
            if let Some(due) = due {
                self.sleep_until(due.min(now + ns(SLICE)), now);
            }
        }
        Ok(n)
    }
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> usize {
        // Right after a submit: what was due when it returned (an I/O due
        // since then is reaped by the next call).
        let now = self.returned_at.take().unwrap_or_else(mono_ns);
        let late = self.woke_late.take();
        let cap = self.owed_cap();
        let mut n = 0;
        let mut i = 0;
        while i < self.pending.len() {
            let (slot, len, due) = self.pending[i];
            if due > now {
                i += 1;
                continue;
            }
            self.pending.remove(i);
            if let Some((target, wake)) = late
                && due <= wake
            {
                // The sleep overran this I/O's due time by this much.
                let o = &mut self.owed[slot as usize];
                *o = (*o + (wake - due.max(target))).min(cap);
            }
            self.slots.completed(slot);
            f(slot, len as i32);
            n += 1;
        }
        n
    }
    fn has_completions(&mut self) -> bool {
        let now = mono_ns();
        self.pending.iter().any(|p| p.2 <= now)
    }
    /// Give up the I/Os not yet done; those whose service time has ended
    /// stay, to be reaped (and counted) like a real device's completions.
    fn abandon<F: FnMut(u32)>(&mut self, mut f: F) -> usize {
        let now = mono_ns();
        let mut n = 0;
        let mut i = 0;
        while i < self.pending.len() {
            let (slot, _, due) = self.pending[i];
            if due <= now {
                i += 1;
                continue;
            }
            self.pending.remove(i);
            self.slots.completed(slot);
            f(slot);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;
    use std::time::Instant;

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

    fn read(slot: u32) -> Io {
        Io {
            slot,
            dir: Dir::Read,
            offset: 0,
            len: 4096,
        }
    }

    /// Submit one I/O on `slot`; its due time less the clock around the
    /// submission (a range, for the clock read inside).
    fn due_after_submit(e: &mut NullEngine, slot: u32) -> (u64, u64) {
        e.queue(read(slot)).unwrap();
        let before = mono_ns();
        e.submit(0).unwrap();
        let after = mono_ns();
        let due = e.pending.back().unwrap().2;
        (due.saturating_sub(after), due.saturating_sub(before))
    }

    fn reap_when_due(e: &mut NullEngine) {
        let due = e.pending.iter().map(|p| p.2).max().unwrap();
        while mono_ns() < due {
            std::thread::sleep(Duration::from_micros(200));
        }
        assert_eq!(e.reap(|_, _| {}), 1);
    }

    /// The time the engine's own sleep overran a due time is owed to the
    /// slot's next I/O (a deadline schedule: late wake-ups do not add up);
    /// the worker's time between a completion and its next submission is
    /// not (here a plain sleep: the pipeline's time lowers IOPS). Before,
    /// every I/O was due S after its submission, so each late wake-up at
    /// depth 1 delayed every later I/O.
    #[test]
    fn a_late_wake_up_is_owed_to_the_slots_next_io_but_pipeline_time_is_not() {
        let s = ns(Duration::from_millis(10));
        let mut e = engine(Duration::from_millis(10));
        let (lo, hi) = due_after_submit(&mut e, 0);
        assert!(lo <= s && s <= hi, "S after submission: {lo}..{hi}");
        // The worker took its time (not the engine's sleep): nothing owed.
        reap_when_due(&mut e);
        assert_eq!(e.owed[0], 0);
        let (lo, hi) = due_after_submit(&mut e, 0);
        assert!(lo <= s && s <= hi, "{lo}..{hi}");
        // The engine's sleep for it woke 3 ms after its due time.
        let due = e.pending[0].2;
        e.woke_late = Some((due, due + 3_000_000));
        reap_when_due(&mut e);
        assert_eq!(e.owed[0], 3_000_000);
        let (lo, hi) = due_after_submit(&mut e, 0);
        let want = s - 3_000_000;
        assert!(lo <= want && want <= hi, "S less 3 ms: {lo}..{hi}");
        assert_eq!(e.owed[0], 0, "paid");
        // Another slot is owed nothing.
        let (lo, hi) = due_after_submit(&mut e, 1);
        assert!(lo <= s && s <= hi, "{lo}..{hi}");
    }

    /// What is owed is paid at most S per I/O (no I/O is due before its
    /// submission) and at most CATCH_UP in all: a worker kept away longer
    /// loses the rest.
    #[test]
    fn what_is_owed_is_paid_at_most_s_per_io_and_capped() {
        let s = ns(Duration::from_millis(1));
        let mut e = engine(Duration::from_millis(1));
        due_after_submit(&mut e, 0);
        let due = e.pending[0].2;
        // Woke 500 ms late (only a test can wait that long for nothing).
        e.woke_late = Some((due, due + 500_000_000));
        reap_when_due(&mut e);
        assert_eq!(e.owed[0], ns(CATCH_UP), "capped");
        let (lo, _) = due_after_submit(&mut e, 0);
        assert_eq!(lo, 0, "due at once, not before its submission");
        assert_eq!(e.owed[0], ns(CATCH_UP) - s);
        // Only the I/Os due before the wake-up are owed anything, and only
        // from the later of their due time and the sleep's target.
        let mut e = engine(Duration::from_millis(1));
        due_after_submit(&mut e, 0);
        due_after_submit(&mut e, 1);
        let (d0, d1) = (e.pending[0].2, e.pending[1].2);
        e.woke_late = Some((d0, d0 + 100));
        std::thread::sleep(Duration::from_millis(3));
        assert!(mono_ns() > d1);
        assert_eq!(e.reap(|_, _| {}), 2);
        assert_eq!(e.owed[0], 100);
        assert_eq!(e.owed[1], (d0 + 100).saturating_sub(d1.max(d0)).min(100));
    }
}
