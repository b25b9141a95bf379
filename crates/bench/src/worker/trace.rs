//! A diagnostic of where the depth goes between a reap and the resubmission
//! of the freed slots (issue 22), switched on by the environment variable
//! `STORLAB_REFILL_TRACE=FILE`: each worker appends one JSON line to FILE
//! when it finishes. Off (the default) it costs one never-taken branch per
//! reap and per submit call. With `STORLAB_REFILL_TRACE_SCHED=1` it also
//! reads the thread's scheduler counters (`/proc/thread-self/schedstat`,
//! run delay) at each reap and before each waiting call; those reads cost a
//! system call each, measured and reported as `sched_read_ns`.
//!
//! What it adds up, over the window of the achieved depth:
//!
//! * `lost_slot_ns`: for every I/O, the time from the reap that freed its
//!   slot to the stamp before the call that handed it over again — the
//!   area the depth meter misses (`depth × window − area`, printed beside
//!   it as `lost_meter_slot_ns`; the two agree when the definition is
//!   consistent);
//! * `lost_in_submit_slot_ns`: the part of it spent inside submit calls
//!   that do not wait (each call's duration × the slots free during it);
//! * `lost_before_first_ns`: the part from the reap to the first stamp of
//!   the refill (storlab's processing of the completions and of the new
//!   I/Os) × the slots reaped;
//! * `run_delay_ns` and `lost_desched_rounds_slot_ns`: the scheduler's run
//!   delay during refills, and the lost area of the rounds that had some.

use std::io::Write;

/// Buckets of burst sizes: 1, 2–3, 4–7, 8–15, 16–31, 32–63, 64+.
const BUCKETS: usize = 7;

fn bucket(n: usize) -> usize {
    (usize::BITS - n.max(1).leading_zeros()).min(BUCKETS as u32) as usize - 1
}

#[derive(Debug, Default)]
pub(crate) struct RefillTrace {
    path: String,
    sched: bool,
    depth: usize,
    /// When each slot was freed (the reap's stamp); 0 = not freed in window.
    freed_at: Vec<u64>,
    /// The current round: its reap stamp, slots reaped, whether it has had
    /// its first submission, and the run delay at its start.
    round_tc: u64,
    round_n: usize,
    round_first_done: bool,
    round_delay0: Option<u64>,
    round_lost: u64,
    rounds: u64,
    reaped: u64,
    burst_hist: [u64; BUCKETS],
    lost_slot_ns: u128,
    lost_before_first_ns: u128,
    lost_in_submit_slot_ns: u128,
    lost_desched_rounds_slot_ns: u128,
    flush_calls: u64,
    flush_ns: u64,
    flush_ios: u64,
    wait_calls: u64,
    wait_ios: u64,
    run_delay_ns: u64,
    desched_rounds: u64,
    sched_reads: u64,
    sched_read_ns: u64,
}

impl RefillTrace {
    /// A trace when `STORLAB_REFILL_TRACE` names a file.
    pub fn from_env(depth: usize) -> Option<Box<RefillTrace>> {
        let path = std::env::var("STORLAB_REFILL_TRACE").ok()?;
        if path.is_empty() {
            return None;
        }
        let sched = std::env::var("STORLAB_REFILL_TRACE_SCHED").is_ok_and(|v| v == "1");
        Some(Box::new(RefillTrace {
            path,
            sched,
            depth,
            freed_at: vec![0; depth],
            ..RefillTrace::default()
        }))
    }

    fn run_delay(&mut self, now: &dyn Fn() -> u64) -> Option<u64> {
        if !self.sched {
            return None;
        }
        let t0 = now();
        let d = crate::sys::thread_sched().map(|s| s.1);
        self.sched_read_ns += now().saturating_sub(t0);
        self.sched_reads += 1;
        d
    }

    /// A reap at `tc` freed `slots` (in the window or not).
    pub fn reaped(&mut self, tc: u64, slots: &[(u32, i32)], window: bool, now: &dyn Fn() -> u64) {
        if !window || slots.is_empty() {
            return;
        }
        // A reap inside a refill (after a flush) continues its round.
        if self.round_first_done || self.round_n == 0 {
            self.close_round(now);
            self.round_tc = tc;
            self.round_first_done = false;
            self.round_delay0 = self.run_delay(now);
            self.rounds += 1;
        }
        self.round_n += slots.len();
        self.reaped += slots.len() as u64;
        for &(s, _) in slots {
            if let Some(f) = self.freed_at.get_mut(s as usize) {
                *f = tc;
            }
        }
    }

    /// The slots `pending` are stamped `ts` before the call that carries
    /// them (`waits`: the call also waits for a completion).
    pub fn stamped(&mut self, ts: u64, pending: &[u32], waits: bool, now: &dyn Fn() -> u64) {
        let mut lost = 0u64;
        for &s in pending {
            if let Some(f) = self.freed_at.get_mut(s as usize)
                && *f > 0
            {
                lost += ts.saturating_sub(*f);
                *f = 0;
            }
        }
        self.lost_slot_ns += u128::from(lost);
        self.round_lost += lost;
        if self.round_n > 0 && !self.round_first_done {
            self.round_first_done = true;
            self.lost_before_first_ns +=
                u128::from(ts.saturating_sub(self.round_tc)) * self.round_n as u128;
        }
        if waits {
            self.wait_calls += 1;
            self.wait_ios += pending.len() as u64;
            self.close_round(now);
        }
    }

    /// A call that does not wait took `d` ns, carrying `n` I/Os; `free`
    /// slots were neither in flight nor in it meanwhile.
    pub fn flushed(&mut self, d: u64, n: usize, free: usize) {
        self.flush_calls += 1;
        self.flush_ns += d;
        self.flush_ios += n as u64;
        self.lost_in_submit_slot_ns += u128::from(d) * free as u128;
    }

    fn close_round(&mut self, now: &dyn Fn() -> u64) {
        if self.round_n == 0 {
            return;
        }
        self.burst_hist[bucket(self.round_n)] += 1;
        if let Some(d0) = self.round_delay0
            && let Some(d1) = self.run_delay(now)
        {
            let d = d1.saturating_sub(d0);
            self.run_delay_ns += d;
            if d > 0 {
                self.desched_rounds += 1;
                self.lost_desched_rounds_slot_ns += u128::from(self.round_lost);
            }
        }
        self.round_n = 0;
        self.round_lost = 0;
        self.round_delay0 = None;
    }

    /// Append the summary (JSON, one line) to the trace file.
    pub fn write(mut self, job: u32, window_ns: u64, area: u128, now: &dyn Fn() -> u64) {
        self.close_round(now);
        let full = self.depth as u128 * u128::from(window_ns);
        let line = format!(
            concat!(
                "{{\"job\":{},\"depth\":{},\"window_ns\":{},\"achieved\":{:.4},",
                "\"lost_meter_slot_ns\":{},\"lost_slot_ns\":{},\"lost_before_first_ns\":{},",
                "\"lost_in_submit_slot_ns\":{},\"lost_desched_rounds_slot_ns\":{},",
                "\"rounds\":{},\"reaped\":{},\"burst_hist\":{:?},\"flush_calls\":{},",
                "\"flush_ns\":{},\"flush_ios\":{},\"wait_calls\":{},\"wait_ios\":{},",
                "\"run_delay_ns\":{},\"desched_rounds\":{},\"sched_reads\":{},\"sched_read_ns\":{}}}\n"
            ),
            job,
            self.depth,
            window_ns,
            if window_ns > 0 {
                area as f64 / window_ns as f64
            } else {
                0.0
            },
            full.saturating_sub(area),
            self.lost_slot_ns,
            self.lost_before_first_ns,
            self.lost_in_submit_slot_ns,
            self.lost_desched_rounds_slot_ns,
            self.rounds,
            self.reaped,
            self.burst_hist,
            self.flush_calls,
            self.flush_ns,
            self.flush_ios,
            self.wait_calls,
            self.wait_ios,
            self.run_delay_ns,
            self.desched_rounds,
            self.sched_reads,
            self.sched_read_ns,
        );
        // A diagnostic: a file that cannot be written loses the line only.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_sizes_fall_in_power_of_two_buckets() {
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(3), 1);
        assert_eq!(bucket(4), 2);
        assert_eq!(bucket(31), 4);
        assert_eq!(bucket(32), 5);
        assert_eq!(bucket(500), 6);
    }
}
