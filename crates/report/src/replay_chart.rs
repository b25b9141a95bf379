//! The replay timeline (`replay-<run id>`): bytes/s over time of a replay
//! (`storlab replay`, kind `replay`) beside the trace's own, from the two
//! per-interval series the replay stored (`BenchReport.replay`): the
//! replayed bytes by issue time from the replay's start, the recorded bytes
//! by recorded start from each rank's first operation. At `--speed
//! original` the two lines lie on each other when the system keeps up; at
//! `max` the replayed line is the same bytes, sooner.

use crate::charts::Chart;
use crate::svg::{LineChart, LineSeries, XScale, fmt_tick};
use storlab_types::StoredRun;

/// The chart of a replay run; none for a run without the two series.
pub fn replay_timeline(run: &StoredRun) -> Vec<Chart> {
    let Some(r) = &run.report.replay else {
        return Vec::new();
    };
    if r.interval_ns == 0 || (r.replayed_bytes.is_empty() && r.recorded_bytes.is_empty()) {
        return Vec::new();
    }
    let secs = r.interval_ns as f64 / 1e9;
    // Each interval's rate, drawn at its middle.
    let line = |name: &str, bytes: &[u64]| LineSeries {
        name: name.into(),
        points: bytes
            .iter()
            .enumerate()
            .map(|(i, b)| ((i as f64 + 0.5) * secs, *b as f64 / secs / 1e6))
            .collect(),
    };
    let speed = match r.speed.as_str() {
        "original" => "at its recorded timing".to_string(),
        "max" => "at maximum speed".to_string(),
        f => format!("{f}× its recorded timing"),
    };
    let title = format!(
        "Replay of run {}: bytes/s over time, recorded vs replayed",
        run.id
    );
    let c = LineChart {
        title: title.clone(),
        subtitle: Some(format!(
            "replayed {speed}; each point is one {} interval: read + write bytes by the operations' \
             start (recorded) or issue (replayed)",
            storlab_types::format_latency_ns(r.interval_ns as f64)
        )),
        x_label: "Time from the start (s)".into(),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        series: vec![
            line("recorded (the trace)", &r.recorded_bytes),
            line("replayed (this system)", &r.replayed_bytes),
        ],
        x_scale: XScale::Linear,
        x_fmt: fmt_tick,
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: None,
        x_spans: Vec::new(),
    };
    vec![Chart {
        id: format!("replay-{}", run.id),
        title,
        svg: c.render_styled(&[0, 1], &[Some(RECORDED_DASH), None]),
    }]
}

/// The recorded line: dashed, so the two lines show where they overlap.
const RECORDED_DASH: &str = "7 4";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::run;
    use storlab_types::ReplayFigures;

    fn replay_run(id: i64, fig: Option<ReplayFigures>) -> StoredRun {
        let mut r = run(id, &[], Vec::new());
        r.report.replay = fig;
        r
    }

    #[test]
    fn both_series_are_drawn_at_their_rates() {
        let fig = ReplayFigures {
            speed: "original".into(),
            interval_ns: 1_000_000_000,
            replayed_bytes: vec![3_000_000, 1_000_000],
            recorded_bytes: vec![2_000_000, 2_000_000],
            ..ReplayFigures::default()
        };
        let c = replay_timeline(&replay_run(7, Some(fig)));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].id, "replay-7");
        let svg = &c[0].svg;
        assert!(svg.contains("recorded (the trace)"), "{svg}");
        assert!(svg.contains("replayed (this system)"));
        assert!(
            svg.contains("stroke-dasharray=\"7 4\""),
            "the recorded line dashed"
        );
        assert!(svg.contains("at its recorded timing"));
    }

    #[test]
    fn a_run_without_the_series_has_no_chart() {
        assert!(replay_timeline(&replay_run(1, None)).is_empty());
        let empty = ReplayFigures {
            interval_ns: 1_000_000,
            ..ReplayFigures::default()
        };
        assert!(replay_timeline(&replay_run(1, Some(empty))).is_empty());
    }
}
