//! Time for the measurement: a monotonic clock read as nanoseconds since a
//! common epoch (the moment the phase's workers were released together),
//! behind a trait so the timestamp bookkeeping can be tested with a clock
//! the test drives; and the time-weighted in-flight meter.

use std::time::Instant;

/// A monotonic clock in nanoseconds since some fixed epoch.
pub(crate) trait Clock {
    fn now(&self) -> u64;
}

/// `CLOCK_MONOTONIC` (through `Instant`), relative to `epoch`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MonoClock {
    epoch: Instant,
}

impl MonoClock {
    pub fn new(epoch: Instant) -> MonoClock {
        MonoClock { epoch }
    }
}

impl Clock for MonoClock {
    #[inline]
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Time-weighted number of I/Os in flight: the integral of the in-flight
/// count over time, updated at each submission and each reap (the only
/// moments the count changes, by the definition latency uses: from the
/// submitting system call to the reap). Its mean over a window is the queue
/// depth the device saw; by Little's law it equals IOPS × mean latency.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DepthMeter {
    last_ns: u64,
    in_flight: u64,
    /// I/O-nanoseconds accumulated up to `last_ns`.
    area: u128,
}

impl DepthMeter {
    /// The count changes to `in_flight` at time `t`.
    #[inline]
    pub fn set(&mut self, t: u64, in_flight: usize) {
        self.area = self.area_at(t);
        self.last_ns = self.last_ns.max(t);
        self.in_flight = in_flight as u64;
    }

    /// The integral up to `t` (≥ the last change).
    #[inline]
    pub fn area_at(&self, t: u64) -> u128 {
        self.area + u128::from(self.in_flight) * u128::from(t.saturating_sub(self.last_ns))
    }
}

/// A point on the meter: (time, integral so far).
pub(crate) type DepthMark = (u64, u128);

/// Mean in flight between two marks.
pub(crate) fn mean_depth(from: DepthMark, to: DepthMark) -> Option<f64> {
    let dt = to.0.checked_sub(from.0)?;
    if dt == 0 {
        return None;
    }
    Some(to.1.saturating_sub(from.1) as f64 / dt as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_integrates_a_step_function() {
        let mut m = DepthMeter::default();
        m.set(100, 4); // 4 in flight from t=100
        m.set(300, 2); // 2 from t=300
        m.set(400, 0);
        assert_eq!(m.area_at(400), 4 * 200 + 2 * 100);
        // Mean over [100, 400] = (800 + 200) / 300.
        let mean = mean_depth((100, 0), (400, m.area_at(400))).unwrap();
        assert!((mean - 1000.0 / 300.0).abs() < 1e-9);
        assert_eq!(mean_depth((5, 0), (5, 0)), None);
    }
}
