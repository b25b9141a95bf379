//! [`Metric`]: a figure of one direction of a run's phase ([`DirStats`]) that
//! `compare`, `check`, the HTML report and campaigns judge against a
//! baseline. One type says what each figure is, which way is better and how
//! it is read from a record; the documents that show it keep their own
//! words for it (`compare`'s column heading "MB/s", `check`'s reason
//! "bandwidth").
//!
//! A Prometheus metric (`monitor --listen`) is a different notion: a named
//! time series of counters and gauges exposed for scraping, with no baseline
//! and no direction; it is not a `Metric`.

use crate::DirStats;
use serde::Serialize;

/// A figure of one direction of a phase, in its base unit (bytes/s, I/O
/// per s or ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Bytes per second.
    Throughput,
    /// I/O operations per second.
    Iops,
    /// Mean latency, ns.
    LatMean,
    /// Median latency, ns.
    LatP50,
    /// 99th percentile latency, ns.
    LatP99,
}

impl Metric {
    /// Whether a larger value is an improvement (rates), or a smaller one
    /// (latencies).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput | Metric::Iops)
    }

    /// The figure in its base unit; `None` when the direction completed no
    /// I/O and so has no latency.
    pub fn value(self, s: &DirStats) -> Option<f64> {
        match self {
            Metric::Throughput => Some(s.bw_bytes_per_s),
            Metric::Iops => Some(s.iops),
            Metric::LatMean => s.lat_ns.map(|l| l.mean),
            Metric::LatP50 => s.lat_ns.map(|l| l.p50 as f64),
            Metric::LatP99 => s.lat_ns.map(|l| l.p99 as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LatencyStats;

    #[test]
    fn values_come_from_the_record_and_names_stay_compares() {
        let mut d = DirStats {
            bw_bytes_per_s: 2e6,
            iops: 500.0,
            ..DirStats::default()
        };
        assert_eq!(Metric::Throughput.value(&d), Some(2e6));
        assert_eq!(Metric::Iops.value(&d), Some(500.0));
        assert_eq!(Metric::LatP99.value(&d), None, "no I/O, no latency");
        d.lat_ns = Some(LatencyStats {
            mean: 1500.0,
            p50: 1000,
            p99: 9000,
            ..LatencyStats::default()
        });
        assert_eq!(Metric::LatMean.value(&d), Some(1500.0));
        assert_eq!(Metric::LatP50.value(&d), Some(1000.0));
        assert_eq!(Metric::LatP99.value(&d), Some(9000.0));
        assert!(Metric::Iops.higher_is_better() && !Metric::LatP50.higher_is_better());
        let json = serde_json::to_string(&[Metric::Throughput, Metric::LatMean]).unwrap();
        assert_eq!(json, r#"["throughput","lat_mean"]"#);
    }
}
