//! `storlab check` on two io500 runs: besides every phase, the three
//! scores (bandwidth in GiB/s, IOPS in kIOPS, the total), computed from the
//! stored phases as io500 computes them (`storlab_io500::record::score_of`),
//! each failing when it is worse than the baseline's by more than the
//! tolerance. Bandwidth is compared in bytes/s and IOPS in operations/s so
//! the reasons print them in their usual units; the total has no unit.

use crate::check::{CheckFailure, CheckReport, Finding};
use storlab_types::{Metric, RunKind, StoredRun};

const GIB: f64 = (1u64 << 30) as f64;

/// Add the score findings (and failures, when `judge`) of `run` against
/// `baseline`, when both are io500 runs.
pub(crate) fn check(
    run: &StoredRun,
    baseline: &StoredRun,
    tol: f64,
    judge: bool,
    out: &mut CheckReport,
) {
    if run.kind != RunKind::Io500 || baseline.kind != RunKind::Io500 {
        return;
    }
    let (s, b) = (
        storlab_io500::record::score_of(&run.report, false),
        storlab_io500::record::score_of(&baseline.report, false),
    );
    let figures = [
        (
            "bandwidth",
            Metric::Throughput,
            s.bandwidth_gib_s * GIB,
            b.bandwidth_gib_s * GIB,
        ),
        (
            "IOPS",
            Metric::Iops,
            s.md_kiops * 1000.0,
            b.md_kiops * 1000.0,
        ),
        ("TOTAL", Metric::Iops, s.total, b.total),
    ];
    for (name, metric, v, base) in figures {
        if base <= 0.0 || !base.is_finite() || !v.is_finite() {
            continue;
        }
        let worse_pct = (base - v) / base * 100.0;
        let failed = judge && worse_pct > tol + 1e-9;
        let phase = format!("io500 score ({name})");
        if failed {
            out.failures.push(CheckFailure::Worse {
                phase: phase.clone(),
                direction: "score",
                metric,
                value: v,
                baseline: base,
                worse_pct,
                tolerance_pct: tol,
            });
        }
        out.findings.push(Finding {
            phase,
            direction: "score",
            metric,
            value: v,
            baseline: base,
            worse_pct,
            failed,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::check::{CheckOptions, check_with};
    use storlab_types::{BenchReport, DirStats, PhaseParams, RunKind, RwMode, StoredRun};

    /// An io500 run whose IOR phases move `gib` GiB/s and whose metadata
    /// phases do `kiops` kIOPS.
    fn run(id: i64, gib: f64, kiops: f64) -> StoredRun {
        let mut report = BenchReport::new(Default::default(), Default::default());
        for (name, bw) in [
            ("ior-easy-write", true),
            ("mdtest-easy-write", false),
            ("ior-easy-read", true),
            ("mdtest-easy-stat", false),
        ] {
            let rw = if name.ends_with("write") {
                RwMode::Write
            } else {
                RwMode::Read
            };
            let mut p = storlab_testkit::json_records::phase(PhaseParams {
                name: name.into(),
                rw,
                ..PhaseParams::default()
            });
            let d = if bw {
                DirStats {
                    bytes: 1 << 30,
                    ops: 1024,
                    bw_bytes_per_s: gib * (1u64 << 30) as f64,
                    iops: 1.0,
                    ..DirStats::default()
                }
            } else {
                DirStats {
                    ops: 1000,
                    iops: kiops * 1000.0,
                    ..DirStats::default()
                }
            };
            if rw == RwMode::Write {
                p.write = d;
            } else {
                p.read = d;
            }
            p.total = d;
            report.phases.push(p);
        }
        StoredRun {
            id,
            kind: RunKind::Io500,
            tags: Default::default(),
            note: None,
            report,
        }
    }

    #[test]
    fn a_lower_score_fails_the_check_naming_the_score() {
        let opts = CheckOptions::default();
        let same = check_with(&run(2, 1.0, 10.0), &run(1, 1.0, 10.0), 5.0, &opts).expect("check");
        assert!(same.failures.is_empty(), "{:?}", same.failures);
        assert_eq!(
            same.findings
                .iter()
                .filter(|f| f.phase.starts_with("io500 score"))
                .count(),
            3
        );
        // IOPS down 36 %: the IOPS and total scores fail, bandwidth does not.
        let worse = check_with(&run(2, 1.0, 6.4), &run(1, 1.0, 10.0), 5.0, &opts).expect("check");
        let failed: Vec<String> = worse
            .failures
            .iter()
            .map(ToString::to_string)
            .filter(|f| f.contains("io500 score"))
            .collect();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(failed.iter().any(|f| f.contains("TOTAL")));
        assert!(!failed.iter().any(|f| f.contains("bandwidth")));
    }

    #[test]
    fn runs_that_are_not_io500_have_no_score_findings() {
        let (mut a, mut b) = (run(2, 1.0, 1.0), run(1, 2.0, 2.0));
        a.kind = RunKind::Bench;
        b.kind = RunKind::Bench;
        let r = check_with(&a, &b, 5.0, &CheckOptions::default()).expect("check");
        assert!(
            !r.findings
                .iter()
                .any(|f| f.phase.starts_with("io500 score"))
        );
    }
}
