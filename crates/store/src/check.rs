//! `storlab check`: is a run worse than its baseline by more than a tolerance?
//!
//! Phases are matched by name, I/O pattern and block size(s); a baseline phase
//! with no same-named partner may match the one phase of the run with the same
//! pattern, block size, jobs and queue depth (fio imports name jobs freely).
//! For each direction the baseline did I/O in, four figures are compared:
//! bandwidth and IOPS (higher is better), p50 and p99 latency (lower is better).
//! A figure fails when it is worse than the baseline's by more than the
//! tolerance, in percent of the baseline's value. A baseline phase missing
//! from the run, a phase cut short, or a run that did not finish fail too:
//! a nightly check must not pass because the run broke.

use serde::Serialize;
use storlab_types::{DirStats, PhaseResult, StoredRun, format_bytes, format_rate};

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Bandwidth,
    Iops,
    LatP50,
    LatP99,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::Bandwidth,
        Metric::Iops,
        Metric::LatP50,
        Metric::LatP99,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Metric::Bandwidth => "bandwidth",
            Metric::Iops => "IOPS",
            Metric::LatP50 => "p50 latency",
            Metric::LatP99 => "p99 latency",
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Bandwidth | Metric::Iops)
    }

    fn value(self, d: &DirStats) -> Option<f64> {
        match self {
            Metric::Bandwidth => Some(d.bw_bytes_per_s),
            Metric::Iops => Some(d.iops),
            Metric::LatP50 => d.lat_ns.map(|l| l.p50 as f64),
            Metric::LatP99 => d.lat_ns.map(|l| l.p99 as f64),
        }
    }

    /// The value with its unit, as the reasons print it.
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::Bandwidth => format_rate(v),
            Metric::Iops => format!("{v:.0}"),
            Metric::LatP50 | Metric::LatP99 => format_ns(v),
        }
    }
}

/// Nanoseconds as a human latency (shared with the rest of storlab).
pub use storlab_types::format_latency_ns as format_ns;

/// One compared figure (values in bytes/s, I/O per s or ns).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The phase as labelled in reasons: `'randread' (randread, 4 KiB)`.
    pub phase: String,
    /// `read` or `write`.
    pub direction: &'static str,
    pub metric: Metric,
    pub value: f64,
    pub baseline: f64,
    /// How much worse than the baseline, percent of the baseline (negative: better).
    pub worse_pct: f64,
    pub failed: bool,
}

/// The outcome of checking one run against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub run_id: i64,
    pub baseline_id: i64,
    pub tolerance_pct: f64,
    pub findings: Vec<Finding>,
    /// One line per failure, ready to print.
    pub failures: Vec<String>,
    /// What was not compared, and how phases were matched when not by name.
    pub notes: Vec<String>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Why nothing could be checked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    #[error(
        "run {run} and baseline run {baseline} have no phase in common (phases match by name, \
         I/O pattern and block size): nothing to check; choose a baseline that ran the same workload"
    )]
    NothingInCommon { run: i64, baseline: i64 },
    #[error("invalid tolerance {0}%: give a percentage from 0 to 100, e.g. --tolerance 10%")]
    BadTolerance(f64),
}

fn label(p: &PhaseResult) -> String {
    let bs: Vec<String> = p
        .params
        .bs
        .iter()
        .map(|b| format_bytes(b.bs_bytes))
        .collect();
    format!("'{}' ({}, {})", p.params.name, p.params.rw, bs.join("+"))
}

fn same_shape(a: &PhaseResult, b: &PhaseResult) -> bool {
    a.params.rw == b.params.rw && a.params.bs == b.params.bs
}

/// Check `run` against `baseline` with a tolerance in percent.
pub fn check(
    run: &StoredRun,
    baseline: &StoredRun,
    tolerance_pct: f64,
) -> Result<CheckReport, CheckError> {
    if !(0.0..=100.0).contains(&tolerance_pct) {
        return Err(CheckError::BadTolerance(tolerance_pct));
    }
    let mut out = CheckReport {
        run_id: run.id,
        baseline_id: baseline.id,
        tolerance_pct,
        findings: vec![],
        failures: vec![],
        notes: vec![],
    };
    let phases = &run.report.phases;
    let mut used = vec![false; phases.len()];
    let mut matched = 0;
    for bp in &baseline.report.phases {
        let exact = (0..phases.len()).find(|&i| {
            !used[i] && phases[i].params.name == bp.params.name && same_shape(&phases[i], bp)
        });
        let found = exact.or_else(|| {
            let similar: Vec<usize> = (0..phases.len())
                .filter(|&i| {
                    !used[i]
                        && same_shape(&phases[i], bp)
                        && phases[i].params.numjobs == bp.params.numjobs
                        && phases[i].params.iodepth == bp.params.iodepth
                })
                .collect();
            (similar.len() == 1).then(|| similar[0])
        });
        let Some(i) = found else {
            out.failures.push(format!(
                "phase {} of baseline run {} is missing from run {}",
                label(bp),
                baseline.id,
                run.id
            ));
            continue;
        };
        used[i] = true;
        matched += 1;
        let p = &phases[i];
        if exact.is_none() {
            out.notes.push(format!(
                "phase {} compared with baseline phase {} (same pattern, block size, jobs and depth)",
                label(p),
                label(bp)
            ));
        }
        if p.interrupted {
            out.failures.push(format!(
                "phase {} was cut short; its figures cover only part of the work",
                label(p)
            ));
        }
        compare_phase(p, bp, tolerance_pct, &mut out);
    }
    for (i, p) in phases.iter().enumerate() {
        if !used[i] {
            out.notes.push(format!(
                "phase {} has no partner in baseline run {}: not checked",
                label(p),
                baseline.id
            ));
        }
    }
    if matched == 0 {
        return Err(CheckError::NothingInCommon {
            run: run.id,
            baseline: baseline.id,
        });
    }
    if run.report.interrupted {
        out.failures.push(format!(
            "run {} did not complete: {}",
            run.id,
            run.report.stop_reason.as_deref().unwrap_or("stopped early")
        ));
    }
    Ok(out)
}

fn compare_phase(p: &PhaseResult, bp: &PhaseResult, tol: f64, out: &mut CheckReport) {
    let phase = label(p);
    for (direction, d, bd) in [("read", &p.read, &bp.read), ("write", &p.write, &bp.write)] {
        if bd.ops == 0 {
            continue;
        }
        if d.ops == 0 {
            out.failures.push(format!(
                "phase {phase}: no {direction}s completed, the baseline did {}",
                bd.ops
            ));
            continue;
        }
        for metric in Metric::ALL {
            let (Some(v), Some(b)) = (metric.value(d), metric.value(bd)) else {
                continue;
            };
            if b <= 0.0 || !b.is_finite() || !v.is_finite() {
                continue;
            }
            let worse_pct = if metric.higher_is_better() {
                (b - v) / b * 100.0
            } else {
                (v - b) / b * 100.0
            };
            // A hair of slack so that "exactly at the tolerance" passes
            // despite floating point.
            let failed = worse_pct > tol + 1e-9;
            if failed {
                let (dir_word, worse) = if metric.higher_is_better() {
                    ("below", worse_pct)
                } else {
                    ("above", worse_pct)
                };
                out.failures.push(format!(
                    "phase {phase}: {direction} {} {} is {worse:.1}% {dir_word} the baseline's {} (tolerance {tol}%)",
                    metric.label(),
                    metric.format(v),
                    metric.format(b),
                ));
            }
            out.findings.push(Finding {
                phase: phase.clone(),
                direction,
                metric,
                value: v,
                baseline: b,
                worse_pct,
                failed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{phase, report};
    use proptest::prelude::*;
    use storlab_types::RwMode;

    fn run(id: i64, phases: Vec<PhaseResult>) -> StoredRun {
        StoredRun {
            id,
            kind: "bench".into(),
            tags: Default::default(),
            note: None,
            report: report("2026-11-21T08:00:00Z", "n", "/t", phases),
        }
    }

    fn base() -> StoredRun {
        run(
            1,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 500e6, 2_000_000),
                phase("randread", RwMode::RandRead, 4096, 40e6, 400_000),
            ],
        )
    }

    #[test]
    fn identical_runs_pass() {
        let b = base();
        let r = check(&run(2, b.report.phases.clone()), &b, 10.0).unwrap();
        assert!(r.passed(), "{:?}", r.failures);
        assert_eq!(r.findings.len(), 8);
        assert!(r.findings.iter().all(|f| f.worse_pct == 0.0));
    }

    #[test]
    fn a_slower_phase_fails_with_one_line_per_figure() {
        let b = base();
        // randread: 20 % less bandwidth (so 20 % fewer IOPS) and p99 up 50 %.
        let r = run(
            2,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 495e6, 2_000_000),
                phase("randread", RwMode::RandRead, 4096, 32e6, 600_000),
            ],
        );
        let c = check(&r, &b, 10.0).unwrap();
        assert!(!c.passed());
        assert_eq!(c.failures.len(), 4, "{:#?}", c.failures);
        assert!(c.failures[0].contains("'randread' (randread, 4 KiB): read bandwidth 32.0 MB/s is 20.0% below the baseline's 40.0 MB/s (tolerance 10%)"), "{}", c.failures[0]);
        assert!(
            c.failures
                .iter()
                .any(|f| f.contains("p99 latency 600.0 µs is 50.0% above the baseline's 400.0 µs")),
            "{:#?}",
            c.failures
        );
        // The same run passes with a looser tolerance.
        assert!(check(&r, &b, 60.0).unwrap().passed());
    }

    #[test]
    fn faster_is_never_a_failure() {
        let b = base();
        let r = run(
            2,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 900e6, 1_000_000),
                phase("randread", RwMode::RandRead, 4096, 80e6, 100_000),
            ],
        );
        let c = check(&r, &b, 0.0).unwrap();
        assert!(c.passed(), "{:?}", c.failures);
        assert!(c.findings.iter().all(|f| f.worse_pct < 0.0));
    }

    #[test]
    fn missing_cut_short_and_unfinished_fail() {
        let b = base();
        let mut p = phase("seqwrite", RwMode::Write, 1 << 20, 500e6, 2_000_000);
        p.interrupted = true;
        let mut r = run(2, vec![p]);
        r.report.interrupted = true;
        r.report.stop_reason = Some("Ctrl-C".into());
        let c = check(&r, &b, 10.0).unwrap();
        assert!(
            c.failures
                .iter()
                .any(|f| f.contains("'randread'") && f.contains("missing from run 2"))
        );
        assert!(c.failures.iter().any(|f| f.contains("cut short")));
        assert!(
            c.failures
                .iter()
                .any(|f| f.contains("did not complete: Ctrl-C"))
        );
    }

    #[test]
    fn phases_match_by_shape_when_names_differ_and_nothing_in_common_is_an_error() {
        let b = base();
        let r = run(
            2,
            vec![phase("job1", RwMode::RandRead, 4096, 40e6, 400_000)],
        );
        let c = check(&r, &b, 10.0).unwrap();
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("'job1'") && n.contains("'randread'"))
        );
        assert_eq!(
            c.failures.len(),
            1,
            "only seqwrite is missing: {:?}",
            c.failures
        );
        let other = run(3, vec![phase("x", RwMode::Read, 8192, 1e6, 1)]);
        assert_eq!(
            check(&other, &b, 10.0).unwrap_err(),
            CheckError::NothingInCommon {
                run: 3,
                baseline: 1
            }
        );
        assert!(check(&r, &b, 120.0).is_err());
    }

    proptest! {
        #[test]
        fn fails_exactly_when_worse_than_tolerance(
            base_bw in 1e6f64..1e10, ratio in 0.1f64..2.0, tol in 0.0f64..50.0
        ) {
            let b = run(1, vec![phase("p", RwMode::Read, 4096, base_bw, 1000)]);
            let r = run(2, vec![phase("p", RwMode::Read, 4096, base_bw * ratio, 1000)]);
            let c = check(&r, &b, tol).unwrap();
            let worse = (1.0 - ratio) * 100.0;
            // bandwidth and IOPS move together here; latency is unchanged.
            if worse > tol + 1e-6 {
                prop_assert!(!c.passed());
            } else if worse < tol - 1e-6 {
                prop_assert!(c.passed(), "{:?}", c.failures);
            }
        }
    }
}
