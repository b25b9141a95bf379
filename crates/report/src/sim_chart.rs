//! The `sim` chart kind: `storlab sim --chart`'s throughput against the
//! varied value (`storlab_sim::chart`'s data), drawn as a line chart. The
//! registry ([`crate::registry::sim_chart`]) is how the CLI reaches it.

use crate::svg::{LineChart, LineSeries, XScale, fmt_tick};
use storlab_sim::SweepPoint;

/// Throughput vs the varied value `key`, each solver's line cut where its
/// binding component changes, the change marked.
pub(crate) fn throughput(points: &[SweepPoint], key: &str) -> String {
    let c = storlab_sim::chart::throughput(points, key);
    LineChart {
        title: c.title,
        subtitle: Some(c.subtitle),
        x_label: c.x_label,
        y_label: c.y_label,
        series: c
            .series
            .into_iter()
            .map(|(name, points)| LineSeries { name, points })
            .collect(),
        x_scale: if c.log { XScale::Log2 } else { XScale::Linear },
        x_fmt: if c.sizes {
            |v| storlab_types::format_bytes(v as u64)
        } else {
            fmt_tick
        },
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: c.marker,
        x_spans: Vec::new(),
    }
    .render()
}
