//! The IO500 chart: every io500 run's phases (GiB/s for the IOR phases,
//! kIOPS for the mdtest phases and find, as io500 prints them) and its
//! three scores (bandwidth, IOPS, total, computed from the stored phases
//! as io500 computes them), one series per run; INVALID runs say so in
//! their name. A log scale, since GiB/s and kIOPS differ by orders.

use crate::Chart;
use crate::registry::Input;
use crate::svg::{BarChart, BarSeries, fmt_tick};
use storlab_io500::{phases, record, summary};
use storlab_types::{RunKind, StoredRun};

/// Categories: io500's scored phases in its order, then the scores.
fn categories() -> Vec<String> {
    let mut c: Vec<String> = phases::running(false)
        .filter(|p| p.group != phases::ScoreGroup::None)
        .map(|p| format!("{} ({})", p.name, phases::unit(p.name)))
        .collect();
    c.extend(
        [
            "score: bandwidth (GiB/s)",
            "score: IOPS (kIOPS)",
            "score: TOTAL",
        ]
        .map(String::from),
    );
    c
}

/// One run's values, in [`categories`]' order.
fn values(run: &StoredRun) -> Vec<Option<f64>> {
    let mut v: Vec<Option<f64>> = phases::running(false)
        .filter(|p| p.group != phases::ScoreGroup::None)
        .map(|def| {
            let p = run
                .report
                .phases
                .iter()
                .find(|p| p.params.name == def.name)?;
            let x = if phases::unit(def.name) == "GiB/s" {
                p.total.bw_bytes_per_s / (1u64 << 30) as f64
            } else {
                p.total.iops / 1000.0
            };
            (x > 0.0).then_some(x)
        })
        .collect();
    let s = record::score_of(&run.report, false);
    for x in [s.bandwidth_gib_s, s.md_kiops, s.total] {
        v.push((x > 0.0).then_some(x));
    }
    v
}

/// The chart of the io500 runs among the measured ones (none: no chart).
pub(crate) fn io500(input: &Input<'_>) -> Vec<Chart> {
    let runs: Vec<&StoredRun> = input
        .measured
        .iter()
        .filter(|r| r.kind == RunKind::Io500)
        .collect();
    if runs.is_empty() {
        return Vec::new();
    }
    let categories = categories();
    let series = runs
        .iter()
        .map(|r| {
            let invalid = !summary::invalid_reasons(&r.report).is_empty();
            let values = values(r);
            BarSeries {
                name: format!("run {}{}", r.id, if invalid { " [INVALID]" } else { "" }),
                labels: values
                    .iter()
                    .map(|v| v.map(|x| format!("{x:.3}")))
                    .collect(),
                faded: vec![invalid; values.len()],
                values,
            }
        })
        .collect();
    let c = BarChart {
        title: "IO500: phases and score".into(),
        subtitle: Some(
            "IOR phases in GiB/s, mdtest phases and find in kIOPS; the scores are the geometric \
             means io500 computes (pale: INVALID by io500's rules)"
                .into(),
        ),
        y_label: "GiB/s or kIOPS (log scale)".into(),
        x_label: "io500 phase".into(),
        categories,
        series,
        log_y: true,
        y_fmt: fmt_tick,
        faded_legend: Some("INVALID (io500's rules)".into()),
    };
    vec![Chart {
        id: "io500".into(),
        title: "IO500: phases and score".into(),
        svg: c.render(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_types::{BenchReport, DirStats, PhaseParams};

    fn run(id: i64, gib: f64, kiops: f64, warnings: Vec<String>) -> StoredRun {
        let mut report = BenchReport::new(Default::default(), Default::default());
        for def in phases::running(false).filter(|p| p.group != phases::ScoreGroup::None) {
            let mut p = storlab_testkit::json_records::phase(PhaseParams {
                name: def.name.into(),
                ..PhaseParams::default()
            });
            p.total = DirStats {
                bw_bytes_per_s: gib * (1u64 << 30) as f64,
                iops: kiops * 1000.0,
                ..DirStats::default()
            };
            report.phases.push(p);
        }
        report.warnings = warnings;
        StoredRun {
            id,
            kind: RunKind::Io500,
            tags: Default::default(),
            note: None,
            report,
        }
    }

    #[test]
    fn the_chart_has_every_scored_phase_and_the_three_scores() {
        let runs = vec![
            run(1, 2.0, 8.0, vec![]),
            run(
                2,
                1.0,
                1.0,
                vec!["io500: INVALID run: stonewall-time 5s != 300s".into()],
            ),
        ];
        let vary = Default::default();
        let input = Input::new(&runs, None, &vary, &[]);
        let charts = io500(&input);
        assert_eq!(charts.len(), 1);
        let svg = &charts[0].svg;
        assert!(svg.contains("mdtest-hard-delete"));
        assert!(svg.contains("score: TOTAL"));
        assert!(svg.contains("run 2 [INVALID]"));
        // TOTAL = sqrt(2 GiB/s × 8 kIOPS) = 4.
        let v = values(&runs[0]);
        assert_eq!(v.len(), 15);
        assert!((v[14].expect("total") - 4.0).abs() < 1e-12);
    }

    #[test]
    fn runs_of_other_kinds_draw_no_chart() {
        let mut r = run(1, 1.0, 1.0, vec![]);
        r.kind = RunKind::Bench;
        let runs = vec![r];
        let vary = Default::default();
        assert!(io500(&Input::new(&runs, None, &vary, &[])).is_empty());
    }
}
