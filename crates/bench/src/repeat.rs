//! A job run N times (`--repeat N`, IOR's `-i`): each repeat's group id
//! and the spread (mean, sample standard deviation, min, max) of each
//! phase's figures over the repeats. Pure; the command line prints it.

use serde::Serialize;
use storlab_types::BenchReport;

/// Mean, sample standard deviation, min and max of one figure over repeats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// None for no values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Spread {
            n,
            mean,
            stddev: var.sqrt(),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// One phase's figures over the repeats (read + write, latency merged).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSpread {
    pub phase: String,
    pub bw_bytes_per_s: Option<Spread>,
    pub iops: Option<Spread>,
    pub lat_p50_ns: Option<Spread>,
    pub lat_p99_ns: Option<Spread>,
}

/// Phase `i` of every repeat that got that far, uninterrupted.
pub fn summarize(runs: &[BenchReport]) -> Vec<PhaseSpread> {
    let phases = runs.iter().map(|r| r.phases.len()).max().unwrap_or(0);
    (0..phases)
        .map(|i| {
            let ph: Vec<_> = runs
                .iter()
                .filter_map(|r| r.phases.get(i))
                .filter(|p| !p.interrupted)
                .collect();
            let fig = |f: &dyn Fn(&storlab_types::PhaseResult) -> Option<f64>| {
                Spread::of(&ph.iter().filter_map(|p| f(p)).collect::<Vec<_>>())
            };
            PhaseSpread {
                phase: runs
                    .iter()
                    .find_map(|r| r.phases.get(i))
                    .map(|p| p.params.name.clone())
                    .unwrap_or_default(),
                bw_bytes_per_s: fig(&|p| Some(p.total.bw_bytes_per_s)),
                iops: fig(&|p| Some(p.total.iops)),
                lat_p50_ns: fig(&|p| p.total.lat_ns.map(|l| l.p50 as f64)),
                lat_p99_ns: fig(&|p| p.total.lat_ns.map(|l| l.p99 as f64)),
            }
        })
        .collect()
}

/// A repeat group's id: the time and this process.
pub fn group_id() -> String {
    format!(
        "{}-{}",
        storlab_types::time::now_rfc3339().replace([':', '-'], ""),
        std::process::id()
    )
}

/// The one JSON document of a `--repeat` series: every run and the
/// spread of each phase's figures.
#[derive(Debug, Serialize)]
pub struct SeriesDoc<'a> {
    /// What wrote it.
    pub tool: storlab_types::ToolInfo,
    /// The document's kind (how `--json-out` knows the file is its own).
    pub document: &'a str,
    pub schema_version: u32,
    pub repeat_group: &'a str,
    pub count: u32,
    pub summary: &'a [PhaseSpread],
    pub runs: &'a [BenchReport],
}

impl<'a> SeriesDoc<'a> {
    /// The document of the series `repeat_group` (`count` repeats asked
    /// for, `runs` done), written by this storlab as a `document`.
    pub fn new(
        document: &'a str,
        repeat_group: &'a str,
        count: u32,
        summary: &'a [PhaseSpread],
        runs: &'a [BenchReport],
    ) -> SeriesDoc<'a> {
        SeriesDoc {
            tool: storlab_types::ToolInfo::storlab(),
            document,
            schema_version: storlab_types::SCHEMA_VERSION,
            repeat_group,
            count,
            summary,
            runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spread_by_hand() {
        let s = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        // Sample variance: sum of squares 32 over 7.
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.n), (2.0, 9.0, 8));
        assert_eq!(Spread::of(&[3.0]).unwrap().stddev, 0.0);
        assert!(Spread::of(&[]).is_none());
    }

    proptest! {
        #[test]
        fn mean_lies_between_min_and_max(v in proptest::collection::vec(0.0f64..1e12, 1..20)) {
            let s = Spread::of(&v).unwrap();
            prop_assert!(s.min <= s.mean * (1.0 + 1e-12) && s.mean <= s.max * (1.0 + 1e-12));
            prop_assert!(s.stddev >= 0.0);
        }
    }
}
