//! The chart of one `storlab sim --chart FILE` (registry kind `sim`):
//! simulated aggregate throughput against the varied value, each solver's
//! line cut where its binding component changes and each piece named for
//! what binds it.

use crate::svg::{LineChart, LineSeries, XScale, fmt_tick};

/// One solver's answer at a point: aggregate bytes/s and what binds it.
#[derive(Debug, Clone, Copy)]
pub struct SimSolved<'a> {
    pub aggregate_bytes_per_s: f64,
    pub binding: &'a str,
}

/// One point of a simulated sweep.
#[derive(Debug, Clone, Copy)]
pub struct SimChartPoint<'a> {
    /// Where it sits on the x axis.
    pub x: f64,
    /// The varied value as given (`64MiB`), if any.
    pub value: Option<&'a str>,
    pub analytic: Option<SimSolved<'a>>,
    pub des: Option<SimSolved<'a>>,
}

/// Throughput vs the varied value `key` of scenario `name`, as SVG.
pub fn sim_chart(points: &[SimChartPoint<'_>], key: &str, name: &str) -> String {
    let mut series: Vec<LineSeries> = Vec::new();
    let mut marker: Option<(f64, String)> = None;
    for which in ["analytic", "des"] {
        let mut cur: Option<LineSeries> = None;
        let mut last_binding: Option<&str> = None;
        for p in points {
            let s = if which == "analytic" {
                p.analytic
            } else {
                p.des
            };
            let Some(s) = s else { continue };
            let (x, y) = (p.x, s.aggregate_bytes_per_s / 1e6);
            if last_binding != Some(s.binding) {
                if let Some(prev) = last_binding
                    && marker.is_none()
                {
                    marker = Some((x, format!("{prev} → {}", s.binding)));
                }
                // The new piece starts from the last point of the one
                // before, so the line stays continuous.
                let joint = cur.as_ref().and_then(|c| c.points.last().copied());
                series.extend(cur.take());
                cur = Some(LineSeries {
                    name: format!("{which}: bound by {}", s.binding),
                    points: joint.into_iter().collect(),
                });
                last_binding = Some(s.binding);
            }
            if let Some(c) = cur.as_mut() {
                c.points.push((x, y));
            }
        }
        series.extend(cur);
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    let log = lo > 0.0 && hi / lo >= 8.0;
    // Values written as sizes (file_size=64MiB,...) get size ticks.
    let sizes = points.iter().any(|p| {
        p.value
            .is_some_and(|v| v.parse::<f64>().is_err() && storlab_types::parse_size(v).is_ok())
    });
    LineChart {
        title: format!("Simulated throughput vs {key}: {name}"),
        subtitle: Some(
            "storlab sim (simulated, not measured); each line piece is named for the component that binds it"
                .into(),
        ),
        x_label: if log { format!("{key} (log scale)") } else { key.to_string() },
        y_label: "Aggregate throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        x_scale: if log { XScale::Log2 } else { XScale::Linear },
        x_fmt: if sizes {
            |v| storlab_types::format_bytes(v as u64)
        } else {
            fmt_tick
        },
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: marker,
        x_spans: Vec::new(),
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line is cut where what binds it changes, the change is marked,
    /// and the pieces join.
    #[test]
    fn pieces_are_named_for_what_binds_them() {
        let at = |x: f64, mb: f64, binding| SimChartPoint {
            x,
            value: None,
            analytic: Some(SimSolved {
                aggregate_bytes_per_s: mb * 1e6,
                binding,
            }),
            des: None,
        };
        let pts = [
            at(1.0, 100.0, "clients"),
            at(2.0, 200.0, "clients"),
            at(4.0, 250.0, "link"),
        ];
        let svg = sim_chart(&pts, "clients", "demo");
        assert!(svg.contains("analytic: bound by clients"), "{svg}");
        assert!(svg.contains("analytic: bound by link"), "{svg}");
        assert!(svg.contains("clients → link"), "{svg}");
        assert!(svg.contains("Simulated throughput vs clients: demo"));
    }
}
