//! What `storlab sim --chart` draws, as data: aggregate throughput against
//! the varied value, each solver's line cut where the binding component
//! changes. The report crate's chart registry draws it
//! (`storlab_report::registry::sim_chart`).

use crate::sweep::SweepPoint;

/// A named line: `(x, y)` points in order.
pub type Series = (String, Vec<(f64, f64)>);

/// The chart of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputChart {
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// The x values span a factor of 8 or more: a log2 axis.
    pub log: bool,
    /// The varied values are sizes (`64MiB`): size ticks.
    pub sizes: bool,
    /// Where the first binding component gives way to the next.
    pub marker: Option<(f64, String)>,
}

/// The x value of a point: the varied value as a number (sizes in bytes),
/// or its position.
fn x_of(p: &SweepPoint, i: usize) -> f64 {
    let v = p.value.as_deref().unwrap_or("");
    v.parse::<f64>()
        .ok()
        .or_else(|| storlab_types::parse_size(v).ok().map(|b| b as f64))
        .unwrap_or_else(|| {
            if p.value.is_none() {
                f64::from(p.resolved.clients)
            } else {
                (i + 1) as f64
            }
        })
}

/// Throughput vs the varied value; each solver's line is cut where its
/// binding component changes, each piece named for what binds it.
pub fn throughput(points: &[SweepPoint], key: &str) -> ThroughputChart {
    let mut series: Vec<Series> = Vec::new();
    let mut marker: Option<(f64, String)> = None;
    for which in ["analytic", "des"] {
        let mut cur: Option<Series> = None;
        let mut last_binding: Option<String> = None;
        for (i, p) in points.iter().enumerate() {
            let s = if which == "analytic" {
                p.analytic.as_ref()
            } else {
                p.des.as_ref()
            };
            let Some(s) = s else { continue };
            let x = x_of(p, i);
            let y = s.aggregate_bytes_per_s / 1e6;
            if last_binding.as_deref() != Some(s.binding.as_str()) {
                if let Some(prev) = &last_binding
                    && marker.is_none()
                {
                    marker = Some((x, format!("{prev} → {}", s.binding)));
                }
                // The new piece starts from the last point of the one
                // before, so the line stays continuous.
                let joint = cur.as_ref().and_then(|c| c.1.last().copied());
                series.extend(cur.take());
                cur = Some((
                    format!("{which}: bound by {}", s.binding),
                    joint.into_iter().collect(),
                ));
                last_binding = Some(s.binding.clone());
            }
            if let Some(c) = cur.as_mut() {
                c.1.push((x, y));
            }
        }
        series.extend(cur);
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    let log = lo > 0.0 && hi / lo >= 8.0;
    // Values written as sizes (file_size=64MiB,...) get size ticks.
    let sizes = points.iter().any(|p| {
        p.value
            .as_deref()
            .is_some_and(|v| v.parse::<f64>().is_err() && storlab_types::parse_size(v).is_ok())
    });
    let name = points
        .first()
        .map_or_else(String::new, |p| p.resolved.name.clone());
    ThroughputChart {
        title: format!("Simulated throughput vs {key}: {name}"),
        subtitle:
            "storlab sim (simulated, not measured); each line piece is named for the component that binds it"
                .into(),
        x_label: if log { format!("{key} (log scale)") } else { key.to_string() },
        y_label: "Aggregate throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        log,
        sizes,
        marker,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scenario, SimCatalog, Solver, parse_vary, sweep};

    /// Clients on 100 MB/s NICs against a 400 MB/s back end: the NICs bind
    /// first, then the back end; the line is cut there, on a log axis.
    #[test]
    fn the_line_is_cut_where_the_binding_component_changes() {
        let text = r#"
[clients]
count = 1
nic = "100MB/s"
[array]
port = "10GB/s"
backend = "400MB/s"
[workload]
pattern = "read"
bs = "1MiB"
file_size = "1GiB"
"#;
        let s = Scenario::parse("t.toml", text).unwrap();
        let v = parse_vary("clients=1,2,4,8,16").unwrap();
        let points = sweep(&s, Some(&v), &SimCatalog::builtin(), Solver::Analytic).unwrap();
        let c = throughput(&points, "clients");
        assert!(c.log && !c.sizes, "{c:?}");
        assert!(c.series.len() >= 2, "{c:?}");
        assert!(c.series[0].0.starts_with("analytic: bound by "), "{c:?}");
        // The second piece starts where the first ended.
        assert_eq!(c.series[1].1.first(), c.series[0].1.last());
        let (x, label) = c.marker.clone().unwrap();
        assert!(x > 1.0 && label.contains(" → "), "{c:?}");
        assert!(c.title.contains("clients"), "{c:?}");
    }
}
