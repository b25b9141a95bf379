//! Counting and rate arithmetic: per-job latency histograms (HDR), merged
//! across jobs, and the conversion of counts over a window into the figures
//! of [`storlab_types::DirStats`].

use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use storlab_types::{DirStats, LatencyStats};

/// Latencies from 1 ns to 1 hour with 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // cannot fail: constant bounds, 1 <= low, high >= 2 * low, sigfig <= 5.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// Counts of one direction for one job (or merged).
#[derive(Debug, Clone)]
pub struct DirCounter {
    pub bytes: u64,
    pub ops: u64,
    pub hist: Histogram<u64>,
}

impl Default for DirCounter {
    fn default() -> Self {
        DirCounter {
            bytes: 0,
            ops: 0,
            hist: new_histogram(),
        }
    }
}

impl DirCounter {
    #[inline]
    pub fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.bytes += bytes;
        self.ops += 1;
        // Saturate rather than fail on an absurd latency (over an hour).
        self.hist.saturating_record(lat_ns.max(1));
    }

    pub fn merge(&mut self, other: &DirCounter) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        // cannot fail: every histogram comes from new_histogram (same bounds).
        self.hist.add(&other.hist).expect("histograms share bounds");
    }

    /// Figures over a window of `elapsed_ns`.
    pub fn to_stats(&self, elapsed_ns: u64) -> DirStats {
        let (bw, iops) = rates(self.bytes, self.ops, elapsed_ns);
        DirStats {
            bytes: self.bytes,
            ops: self.ops,
            bw_bytes_per_s: bw,
            iops,
            lat_ns: latency(&self.hist),
        }
    }
}

/// Bytes and ops over `elapsed_ns` → (bytes/s, ops/s). Zero time gives zero
/// rates rather than infinity.
pub fn rates(bytes: u64, ops: u64, elapsed_ns: u64) -> (f64, f64) {
    if elapsed_ns == 0 {
        return (0.0, 0.0);
    }
    let secs = elapsed_ns as f64 / 1e9;
    (bytes as f64 / secs, ops as f64 / secs)
}

/// A histogram as its recorded buckets `(value, count)`: each value is
/// the highest its bucket holds, so [`histogram_of`] puts every count back
/// in the same bucket (exact, at the histogram's precision).
pub fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// The histogram of several processes' `buckets`, merged exactly.
pub fn histogram_of<'a>(parts: impl IntoIterator<Item = &'a [(u64, u64)]>) -> Histogram<u64> {
    let mut h = new_histogram();
    for part in parts {
        for &(v, n) in part {
            h.saturating_record_n(v.max(1), n);
        }
    }
    h
}

/// Summary of a histogram; `None` when it is empty.
pub fn latency(h: &Histogram<u64>) -> Option<LatencyStats> {
    if h.is_empty() {
        return None;
    }
    Some(LatencyStats {
        min: h.min(),
        mean: h.mean(),
        stddev: h.stdev(),
        max: h.max(),
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p99: h.value_at_quantile(0.99),
        p99_9: h.value_at_quantile(0.999),
        p99_99: h.value_at_quantile(0.9999),
    })
}

/// The values of fio's `percentile_list` in read, write and total
/// histograms (empty ones left out); None without a list.
pub fn custom_percentiles(
    report: &storlab_types::ReportOptions,
    [read, write, total]: [&Histogram<u64>; 3],
) -> Option<storlab_types::CustomPercentiles> {
    let list = &report.percentile_list;
    if list.is_empty() && !report.latency_distribution {
        return None;
    }
    let of = |h: &Histogram<u64>| -> Vec<(f64, u64)> {
        if h.is_empty() {
            return Vec::new();
        }
        list.iter()
            .map(|&p| (p, h.value_at_quantile(p / 100.0)))
            .collect()
    };
    Some(storlab_types::CustomPercentiles {
        read: of(read),
        write: of(write),
        total: of(total),
        distribution: if report.latency_distribution {
            fio_distribution(total)
        } else {
            Vec::new()
        },
        by_prio: Vec::new(),
    })
}

/// fio's latency distribution (`latency_ns`, `latency_us`, `latency_ms`):
/// percent of the histogram's I/Os per bucket, keyed `UNIT:EDGE`.
fn fio_distribution(h: &Histogram<u64>) -> Vec<(String, f64)> {
    let n = h.len();
    if n == 0 {
        return Vec::new();
    }
    const EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut out = Vec::new();
    let mut below = 0u64;
    let mut bucket = |key: String, upto_ns: u64| {
        let c = h.count_between(0, upto_ns);
        out.push((key, (c.saturating_sub(below)) as f64 * 100.0 / n as f64));
        below = c;
    };
    for (unit, scale) in [("ns", 1u64), ("us", 1_000)] {
        for e in EDGES {
            bucket(format!("{unit}:{e}"), e * scale);
        }
    }
    for e in EDGES.iter().chain(&[2000]) {
        bucket(format!("ms:{e}"), e * 1_000_000);
    }
    out.push((
        "ms:>=2000".into(),
        n.saturating_sub(below) as f64 * 100.0 / n as f64,
    ));
    out
}

/// Error counts by kind.
pub type ErrorCounts = BTreeMap<String, u64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_arithmetic() {
        assert_eq!(rates(1_000_000, 250, 500_000_000), (2_000_000.0, 500.0));
        assert_eq!(rates(5, 5, 0), (0.0, 0.0));
        let mut c = DirCounter::default();
        c.record(4096, 100_000);
        c.record(4096, 300_000);
        let s = c.to_stats(1_000_000_000);
        assert_eq!(s.bytes, 8192);
        assert_eq!(s.iops, 2.0);
        assert_eq!(s.bw_bytes_per_s, 8192.0);
        let l = s.lat_ns.unwrap();
        assert!((l.mean - 200_000.0).abs() < 200.0, "{}", l.mean);
    }

    #[test]
    fn merged_histograms_equal_one_histogram_of_all_samples() {
        // Two jobs with very different latencies: the merged percentiles are
        // those of the pooled samples, not an average of per-job percentiles.
        let mut a = DirCounter::default();
        let mut b = DirCounter::default();
        let mut all = DirCounter::default();
        for i in 0..9000u64 {
            a.record(4096, 10_000 + i);
            all.record(4096, 10_000 + i);
        }
        for i in 0..1000u64 {
            b.record(4096, 5_000_000 + i * 100);
            all.record(4096, 5_000_000 + i * 100);
        }
        a.merge(&b);
        assert_eq!(a.ops, 10_000);
        assert_eq!(a.bytes, 10_000 * 4096);
        let (m, p) = (latency(&a.hist).unwrap(), latency(&all.hist).unwrap());
        assert_eq!(m, p);
        // p90 sits at the boundary; p99 lies in job b's range.
        assert!(m.p50 < 20_000);
        assert!(m.p99 > 5_000_000);
        assert_eq!(m.max, all.hist.max());
    }

    #[test]
    fn empty_has_no_latency() {
        assert!(DirCounter::default().to_stats(1).lat_ns.is_none());
    }
}
