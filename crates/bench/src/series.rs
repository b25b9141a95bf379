//! The application's own time series (fio's `write_bw_log` /
//! `write_iops_log` / `write_lat_log` with `log_avg_msec`) and the
//! steady-state judge (fio's `steadystate`).
//!
//! Workers count each completion into the interval it was reaped in
//! ([`IntervalBuf`]), a few integer operations per I/O; when a worker's
//! clock moves past an interval it hands that interval's counts to the
//! shared [`SeriesCollector`] (one lock per interval per worker). An
//! interval every worker has closed is reduced to its figures at once (so
//! memory stays small however long the phase), and the steady-state rule
//! is checked over the latest window. [`SeriesCollector::points`] turns the
//! intervals into [`SeriesPoint`]s clipped to the phase's window.
//!
//! Interval latency percentiles come from histograms with 2 significant
//! digits (1 % resolution), enough for a chart; the phase's own figures
//! keep 3.

use crate::stats::{latency, rates};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_types::{
    DirStats, LatencyStats, PhaseSeries, SeriesPoint, SteadyCriterion, SteadyMetric, SteadyOutcome,
    SteadyState,
};

fn small_histogram() -> Histogram<u64> {
    // Auto-resizing: a few KiB for the latencies actually seen.
    // cannot fail: 2 significant digits is within hdrhistogram's 0..=5.
    Histogram::new(2).expect("valid histogram precision")
}

/// Counts of one direction in one interval.
#[derive(Debug, Clone)]
pub(crate) struct IntervalCounter {
    bytes: u64,
    ops: u64,
    /// Sum of the latencies, ns (the interval's exact mean for the
    /// steady-state judge's `lat`).
    lat_sum: u128,
    hist: Histogram<u64>,
}

impl Default for IntervalCounter {
    fn default() -> Self {
        IntervalCounter {
            bytes: 0,
            ops: 0,
            lat_sum: 0,
            hist: small_histogram(),
        }
    }
}

impl IntervalCounter {
    fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.bytes += bytes;
        self.ops += 1;
        self.lat_sum += u128::from(lat_ns);
        // Auto-resizing: `record` grows the histogram (saturating_record
        // would clamp to its current top instead).
        if self.hist.record(lat_ns.max(1)).is_err() {
            self.hist.saturating_record(lat_ns.max(1));
        }
    }

    fn merge(&mut self, o: &IntervalCounter) {
        self.bytes += o.bytes;
        self.ops += o.ops;
        self.lat_sum += o.lat_sum;
        // Auto-resizing histograms accept any other's values.
        let _ = self.hist.add(&o.hist);
    }
}

/// One worker's current interval.
#[derive(Debug, Default)]
pub(crate) struct IntervalBuf {
    index: u64,
    read: IntervalCounter,
    write: IntervalCounter,
}

/// An interval every worker has closed, reduced to its figures.
#[derive(Debug, Clone, Default)]
struct DoneBin {
    read: (u64, u64, Option<LatencyStats>),
    write: (u64, u64, Option<LatencyStats>),
    total_lat: Option<LatencyStats>,
    /// Mean latency of both directions, ns (exact; 0 without I/O).
    mean_lat_ns: f64,
}

#[derive(Debug, Default)]
struct OpenBin {
    read: IntervalCounter,
    write: IntervalCounter,
    closed_by: u32,
}

impl OpenBin {
    fn reduce(&self) -> DoneBin {
        let mut total = self.read.clone();
        total.merge(&self.write);
        DoneBin {
            read: (self.read.bytes, self.read.ops, latency(&self.read.hist)),
            write: (self.write.bytes, self.write.ops, latency(&self.write.hist)),
            total_lat: latency(&total.hist),
            mean_lat_ns: if total.ops > 0 {
                total.lat_sum as f64 / total.ops as f64
            } else {
                0.0
            },
        }
    }
}

#[derive(Debug, Default)]
struct Bins {
    open: BTreeMap<u64, OpenBin>,
    done: BTreeMap<u64, DoneBin>,
    steady: Option<SteadyOutcome>,
    /// The last interval of each worker that has finished: it closes no
    /// later interval, so it counts as having closed them all (else one
    /// job done early would hold every later interval open and the
    /// steady-state rule would never be judged again).
    finished_at: Vec<u64>,
}

/// The phase's intervals, shared by its workers.
#[derive(Debug)]
pub(crate) struct SeriesCollector {
    interval_ns: u64,
    /// Where interval 0 starts, ns since the phase's epoch (the end of the ramp).
    origin_ns: u64,
    jobs: u32,
    steadystate: Option<SteadyState>,
    /// Set when the steady-state rule is met: the workers stop issuing.
    reached: AtomicBool,
    bins: Mutex<Bins>,
}

impl SeriesCollector {
    pub(crate) fn new(
        interval_ns: u64,
        origin_ns: u64,
        jobs: u32,
        steadystate: Option<SteadyState>,
    ) -> SeriesCollector {
        SeriesCollector {
            interval_ns: interval_ns.max(1),
            origin_ns,
            jobs: jobs.max(1),
            steadystate,
            reached: AtomicBool::new(false),
            bins: Mutex::new(Bins {
                steady: steadystate.map(|_| SteadyOutcome::default()),
                ..Default::default()
            }),
        }
    }

    /// Whether the steady-state rule has been met (workers stop issuing).
    #[inline]
    pub(crate) fn steady_reached(&self) -> bool {
        self.reached.load(Ordering::Relaxed)
    }

    /// Count one completion reaped at `tc` (ns since the epoch) into the
    /// worker's buffer, handing finished intervals over first.
    #[inline]
    pub(crate) fn record(&self, buf: &mut IntervalBuf, tc: u64, read: bool, bytes: u64, lat: u64) {
        let k = tc.saturating_sub(self.origin_ns) / self.interval_ns;
        if k != buf.index {
            self.advance(buf, k);
        }
        if read {
            buf.read.record(bytes, lat);
        } else {
            buf.write.record(bytes, lat);
        }
    }

    /// Close the buffer's interval (and any empty ones up to `k`) and move
    /// it to interval `k`.
    fn advance(&self, buf: &mut IntervalBuf, k: u64) {
        if k < buf.index {
            // Completions are reaped in clock order; never go back.
            return;
        }
        let read = std::mem::take(&mut buf.read);
        let write = std::mem::take(&mut buf.write);
        let mut g = self.bins.lock().unwrap_or_else(|e| e.into_inner());
        let first = buf.index;
        self.close(&mut g, first, Some((read, write)));
        for i in first + 1..k {
            self.close(&mut g, i, None);
        }
        buf.index = k;
    }

    /// A worker is done: close its last interval, and count it as closing
    /// every later one (intervals only it held open are complete now).
    pub(crate) fn finish(&self, buf: &mut IntervalBuf) {
        let k = buf.index;
        self.advance(buf, k + 1);
        let mut g = self.bins.lock().unwrap_or_else(|e| e.into_inner());
        g.finished_at.push(k);
        let later: Vec<u64> = g.open.range(k + 1..).map(|(i, _)| *i).collect();
        for i in later {
            self.complete_if_closed(&mut g, i);
        }
    }

    fn close(&self, g: &mut Bins, i: u64, counts: Option<(IntervalCounter, IntervalCounter)>) {
        if g.done.contains_key(&i) {
            return;
        }
        let bin = g.open.entry(i).or_default();
        if let Some((r, w)) = counts {
            bin.read.merge(&r);
            bin.write.merge(&w);
        }
        bin.closed_by += 1;
        self.complete_if_closed(g, i);
    }

    /// Reduce open interval `i` once every worker has closed it or finished
    /// before it.
    fn complete_if_closed(&self, g: &mut Bins, i: u64) {
        let gone = g.finished_at.iter().filter(|&&k| k < i).count() as u32;
        let Some(bin) = g.open.get(&i) else { return };
        if bin.closed_by + gone >= self.jobs {
            let done = bin.reduce();
            g.open.remove(&i);
            g.done.insert(i, done);
            self.judge(g, i);
        }
    }

    /// The steady-state rule over the window ending with interval `last`.
    fn judge(&self, g: &mut Bins, last: u64) {
        let Some(ss) = self.steadystate else { return };
        if self.steady_reached() {
            return;
        }
        let n = (ss.window_ns / self.interval_ns).max(2);
        let end_ns = (last + 1).saturating_mul(self.interval_ns);
        if last + 1 < n || end_ns < ss.ramp_ns.saturating_add(ss.window_ns) {
            return;
        }
        let secs = self.interval_ns as f64 / 1e9;
        let ys: Option<Vec<f64>> = (last + 1 - n..=last)
            .map(|i| {
                g.done.get(&i).map(|b| {
                    let (bytes, ops) = (b.read.0 + b.write.0, b.read.1 + b.write.1);
                    match ss.metric {
                        SteadyMetric::Bw => bytes as f64 / secs,
                        SteadyMetric::Iops => ops as f64 / secs,
                        SteadyMetric::Lat => b.mean_lat_ns,
                    }
                })
            })
            .collect();
        let Some(ys) = ys else { return };
        let Some(value) = steady_value(&ys, secs, ss.criterion) else {
            return;
        };
        let reached = value <= ss.tolerance_pct;
        if let Some(o) = g.steady.as_mut() {
            o.last_value_pct = Some(value);
            if reached {
                o.reached = true;
                o.at_ns = Some(end_ns);
            }
        }
        if reached {
            self.reached.store(true, Ordering::Relaxed);
        }
    }

    /// The points of a phase whose measured window ran from `start_ns` to
    /// `end_ns` (since the epoch); every interval still open is reduced.
    pub(crate) fn points(&self, start_ns: u64, end_ns: u64) -> PhaseSeries {
        let mut g = self.bins.lock().unwrap_or_else(|e| e.into_inner());
        let open = std::mem::take(&mut g.open);
        for (i, b) in open {
            g.done.insert(i, b.reduce());
        }
        let mut points = Vec::new();
        if end_ns > start_ns {
            let iv = self.interval_ns;
            let first = start_ns.saturating_sub(self.origin_ns) / iv;
            let last = (end_ns - 1).saturating_sub(self.origin_ns) / iv;
            for k in first..=last {
                let b0 = (self.origin_ns + k * iv).max(start_ns);
                let b1 = (self.origin_ns + (k + 1) * iv).min(end_ns);
                let span = b1.saturating_sub(b0);
                let bin = g.done.get(&k).cloned().unwrap_or_default();
                let dir = |(bytes, ops, lat): (u64, u64, Option<LatencyStats>)| {
                    let (bw, iops) = rates(bytes, ops, span);
                    DirStats {
                        bytes,
                        ops,
                        bw_bytes_per_s: bw,
                        iops,
                        lat_ns: lat,
                    }
                };
                let read = dir(bin.read);
                let write = dir(bin.write);
                let total = dir((
                    bin.read.0 + bin.write.0,
                    bin.read.1 + bin.write.1,
                    bin.total_lat,
                ));
                points.push(SeriesPoint {
                    t_ns: b1 - start_ns,
                    span_ns: span,
                    read,
                    write,
                    total,
                });
            }
        }
        PhaseSeries {
            interval_ns: self.interval_ns,
            points,
            steady: g.steady.clone(),
        }
    }
}

/// The slope (percent of the mean per second) or the largest deviation
/// from the mean (percent of the mean) of `ys`, sampled every `secs`.
/// None when the mean is zero (nothing moved: not a steady state to claim).
pub(crate) fn steady_value(ys: &[f64], secs: f64, c: SteadyCriterion) -> Option<f64> {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return None;
    }
    let mean = ys.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    Some(match c {
        SteadyCriterion::Deviation => {
            ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max) / mean * 100.0
        }
        SteadyCriterion::Slope => {
            let xm = (n - 1.0) / 2.0 * secs;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for (i, y) in ys.iter().enumerate() {
                let dx = i as f64 * secs - xm;
                sxy += dx * (y - mean);
                sxx += dx * dx;
            }
            (sxy / sxx).abs() / mean * 100.0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn points_add_up_and_are_clipped_to_the_window() {
        let c = SeriesCollector::new(S, 0, 2, None);
        let mut a = IntervalBuf::default();
        let mut b = IntervalBuf::default();
        // Job a: one read every 100 ms for 2.5 s; job b: writes in second 1 only.
        for i in 1..=25u64 {
            c.record(&mut a, i * S / 10, true, 4096, 1000 * i);
        }
        for i in 0..5u64 {
            c.record(&mut b, S + i * S / 10, false, 8192, 50_000);
        }
        c.finish(&mut a);
        c.finish(&mut b);
        let s = c.points(S / 20, 2_600_000_000);
        assert_eq!(s.points.len(), 3);
        let bytes: u64 = s.points.iter().map(|p| p.total.bytes).sum();
        assert_eq!(bytes, 25 * 4096 + 5 * 8192);
        assert_eq!(
            s.points[0].span_ns,
            S - S / 20,
            "clipped at the window start"
        );
        assert_eq!(s.points[0].t_ns, S - S / 20);
        assert_eq!(s.points[2].span_ns, 600_000_000, "clipped at the end");
        assert_eq!(s.points[1].write.ops, 5);
        assert_eq!(s.points[1].read.ops, 10);
        // 9 reads in [0.05 s, 1 s): reads at 0.1 .. 0.9 s.
        assert_eq!(s.points[0].read.ops, 9);
        let l = s.points[1].write.lat_ns.unwrap();
        assert!((l.p50 as f64 - 50_000.0).abs() < 1000.0, "{l:?}");
        assert!((s.points[1].read.iops - 10.0).abs() < 1e-9);
    }

    #[test]
    fn finished_intervals_are_reduced_early() {
        let c = SeriesCollector::new(S, 0, 1, None);
        let mut a = IntervalBuf::default();
        for i in 0..100u64 {
            c.record(&mut a, i * S, true, 1, 1);
        }
        let g = c.bins.lock().unwrap();
        assert!(g.open.len() <= 1);
        assert_eq!(g.done.len(), 99);
    }

    #[test]
    fn a_job_done_early_does_not_hold_later_intervals_open() {
        let ss = SteadyState {
            metric: SteadyMetric::Iops,
            criterion: SteadyCriterion::Deviation,
            tolerance_pct: 2.0,
            window_ns: 3 * S,
            ramp_ns: 0,
        };
        let c = SeriesCollector::new(S, 0, 2, Some(ss));
        let (mut a, mut b) = (IntervalBuf::default(), IntervalBuf::default());
        // Job a moves its size in the first 1.5 s and finishes ...
        for i in 0..15u64 {
            c.record(&mut a, i * S / 10, true, 1, 1);
        }
        c.finish(&mut a);
        // ... job b runs on at a flat rate: seconds 0 and 1 hold a's I/O too
        // (110 and 105 a second), so the first window within 2 % is seconds
        // 2-4, complete at b's first completion of second 5.
        let mut at = None;
        for sec in 0..10u64 {
            for i in 0..100 {
                c.record(&mut b, sec * S + i * (S / 100), true, 1, 1);
                if c.steady_reached() && at.is_none() {
                    at = Some(sec);
                }
            }
        }
        assert_eq!(at, Some(5), "steady state judged after job a finished");
        let g = c.bins.lock().unwrap();
        assert!(g.open.len() <= 1, "{:?}", g.open.keys().collect::<Vec<_>>());
    }

    #[test]
    fn steady_state_stops_a_flat_phase_not_a_rising_one() {
        let ss = SteadyState {
            metric: SteadyMetric::Iops,
            criterion: SteadyCriterion::Slope,
            tolerance_pct: 1.0,
            window_ns: 5 * S,
            ramp_ns: 2 * S,
        };
        // Rising by 10 % a second: never steady.
        let c = SeriesCollector::new(S, 0, 1, Some(ss));
        let mut a = IntervalBuf::default();
        for sec in 0..20u64 {
            let n = 100 + sec * 10;
            for i in 0..n {
                c.record(&mut a, sec * S + i * (S / n), true, 1, 1);
            }
        }
        assert!(!c.steady_reached());
        // Flat: steady once the ramp and one window have passed (7 s), seen
        // when the first completion of second 7 closes second 6.
        let c = SeriesCollector::new(S, 0, 1, Some(ss));
        let mut a = IntervalBuf::default();
        let mut at = None;
        for sec in 0..20u64 {
            for i in 0..100 {
                c.record(&mut a, sec * S + i * (S / 100), true, 1, 1);
                if c.steady_reached() && at.is_none() {
                    at = Some(sec);
                }
            }
        }
        assert_eq!(at, Some(7));
        let s = c.points(0, 20 * S);
        let o = s.steady.unwrap();
        assert!(o.reached);
        assert_eq!(o.at_ns, Some(7 * S));
    }

    /// fio's `steadystate=lat:5%`: the judge looks at each interval's
    /// mean latency, not at the I/O count. Constant IOPS with latencies
    /// that double every second is not steady; the same IOPS with a flat
    /// mean latency (per-I/O latencies alternating 90/110 µs) is, at the
    /// end of the ramp plus one window.
    #[test]
    fn lat_steady_state_judges_the_mean_latency() {
        let ss = SteadyState {
            metric: SteadyMetric::Lat,
            criterion: SteadyCriterion::Deviation,
            tolerance_pct: 5.0,
            window_ns: 3 * S,
            ramp_ns: S,
        };
        let run = |lat: &dyn Fn(u64, u64) -> u64| {
            let c = SeriesCollector::new(S, 0, 1, Some(ss));
            let mut a = IntervalBuf::default();
            let mut at = None;
            for sec in 0..12u64 {
                for i in 0..100 {
                    c.record(&mut a, sec * S + i * (S / 100), true, 4096, lat(sec, i));
                    if c.steady_reached() && at.is_none() {
                        at = Some(sec);
                    }
                }
            }
            (at, c.points(0, 12 * S).steady.unwrap())
        };
        let (at, o) = run(&|sec, _| 100_000 << sec.min(20));
        assert_eq!(
            at, None,
            "doubling latencies at a constant IOPS are not steady"
        );
        assert!(!o.reached && o.last_value_pct.unwrap() > 5.0, "{o:?}");
        let (at, o) = run(&|_, i| if i % 2 == 0 { 90_000 } else { 110_000 });
        assert_eq!(
            at,
            Some(4),
            "steady once the ramp (1 s) and the window (3 s) are over"
        );
        assert!(o.reached && o.at_ns == Some(4 * S), "{o:?}");
        assert!(
            o.last_value_pct.unwrap() < 1e-9,
            "each interval's mean is 100 µs"
        );
    }

    #[test]
    fn steady_values() {
        let flat = [5.0; 10];
        assert_eq!(steady_value(&flat, 1.0, SteadyCriterion::Slope), Some(0.0));
        let line: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        // Slope 1 per second over a mean of 104.5.
        let v = steady_value(&line, 1.0, SteadyCriterion::Slope).unwrap();
        assert!((v - 100.0 / 104.5).abs() < 1e-9, "{v}");
        let v = steady_value(&[90.0, 110.0], 1.0, SteadyCriterion::Deviation).unwrap();
        assert!((v - 10.0).abs() < 1e-9);
        assert_eq!(steady_value(&[0.0, 0.0], 1.0, SteadyCriterion::Slope), None);
    }

    proptest! {
        #[test]
        fn any_completions_sum_to_the_points(
            times in proptest::collection::vec(0u64..10_000_000_000, 1..200),
            interval in 1_000_000u64..3_000_000_000,
            origin in 0u64..1_000_000_000,
        ) {
            let mut times: Vec<u64> = times.into_iter().map(|t| t + origin).collect();
            times.sort_unstable();
            let c = SeriesCollector::new(interval, origin, 1, None);
            let mut a = IntervalBuf::default();
            for &t in &times {
                c.record(&mut a, t, t % 2 == 0, 512, 10);
            }
            c.finish(&mut a);
            let s = c.points(origin, times.last().copied().unwrap() + 1);
            let ops: u64 = s.points.iter().map(|p| p.total.ops).sum();
            prop_assert_eq!(ops, times.len() as u64);
            let span: u64 = s.points.iter().map(|p| p.span_ns).sum();
            prop_assert_eq!(span, times.last().unwrap() + 1 - origin);
        }
    }
}
