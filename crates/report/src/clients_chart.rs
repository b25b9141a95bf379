//! The clients-axis chart (`clients`): aggregate throughput as clients are
//! added, from multi-client runs (`mpirun ... storlab bench --clients
//! 1,2,4`). One line per configuration (phase pattern, block size, file
//! layout, cache mode, jobs per client, tags other than `clients`), and
//! beside it the slowest and the fastest client's own rate, so a flat or
//! falling aggregate and an unfair share both show.

use crate::charts::Chart;
use crate::svg::{LineChart, LineSeries, XScale, fmt_tick};
use std::collections::BTreeMap;
use storlab_types::{StoredRun, format_bytes};

/// Drawn when some configuration was measured at two or more client counts.
pub fn clients_chart(runs: &[StoredRun]) -> Option<Chart> {
    // configuration → clients → (aggregate, slowest, fastest) samples
    type Pts = BTreeMap<u32, Vec<(f64, f64, f64)>>;
    let mut groups: BTreeMap<String, Pts> = BTreeMap::new();
    for r in runs {
        for p in &r.report.phases {
            let Some(c) = &p.cluster else { continue };
            let q = &p.params;
            let per_client = q.numjobs / c.clients.max(1);
            let mut key = format!(
                "{} {} {} {}, {} job{}/client",
                p.params.name,
                q.rw.as_str(),
                format_bytes(q.max_bs()),
                c.layout,
                q.cache.as_str(),
                if per_client == 1 { "" } else { "s" }
            );
            if per_client != 1 {
                key = key.replacen(" job", &format!(" {per_client} job"), 1);
            } else {
                key = key.replacen(" job/client", " 1 job/client", 1);
            }
            for (k, v) in r.tags.iter().filter(|(k, _)| k.as_str() != "clients") {
                key.push_str(&format!(", {k}={v}"));
            }
            groups
                .entry(key)
                .or_default()
                .entry(c.clients)
                .or_default()
                .push((
                    p.total.bw_bytes_per_s / 1e6,
                    c.rank_bw_bytes_per_s.min / 1e6,
                    c.rank_bw_bytes_per_s.max / 1e6,
                ));
        }
    }
    groups.retain(|_, pts| pts.len() >= 2);
    if groups.is_empty() {
        return None;
    }
    let mean = |v: &[(f64, f64, f64)], f: fn(&(f64, f64, f64)) -> f64| {
        v.iter().map(f).sum::<f64>() / v.len() as f64
    };
    let mut series = Vec::new();
    let (mut colours, mut dashes) = (Vec::new(), Vec::new());
    for (g, (key, pts)) in groups.iter().enumerate() {
        // The role first: a long configuration is cut at the end of the
        // legend label, never the word that tells the three lines apart.
        let line = |what: &str, f: fn(&(f64, f64, f64)) -> f64| LineSeries {
            name: format!("{what}: {key}"),
            points: pts
                .iter()
                .map(|(k, v)| (f64::from(*k), mean(v, f)))
                .collect(),
        };
        series.push(line("aggregate", |t| t.0));
        series.push(line("slowest client", |t| t.1));
        series.push(line("fastest client", |t| t.2));
        // One colour per configuration; solid, dashed and dotted lines.
        colours.extend([g, g, g]);
        dashes.extend([None, Some(SLOWEST_DASH), Some(FASTEST_DASH)]);
    }
    let title = "Aggregate throughput vs clients";
    let c = LineChart {
        title: title.into(),
        subtitle: Some(
            "Multi-client runs (MPI ranks): aggregate = all clients' bytes over the global window; \
             each client's own rate beside it (slowest, fastest); repeated points are averaged"
                .into(),
        ),
        x_label: "Clients (MPI ranks running the job, log scale)".into(),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        x_scale: XScale::Log2,
        x_fmt: |v| format!("{v}"),
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: None,
        x_spans: Vec::new(),
    };
    Some(Chart {
        id: "clients".into(),
        title: title.into(),
        svg: c.render_styled(&colours, &dashes),
    })
}

/// The slowest client's line: dashed.
const SLOWEST_DASH: &str = "7 4";
/// The fastest client's line: dotted.
const FASTEST_DASH: &str = "2 3";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{Spec, phase, run};
    use storlab_types::{ClusterPhase, RwMode, Spread};

    fn scaling_run(id: i64, clients: u32, agg: f64) -> StoredRun {
        let mut p = phase(&Spec::new("write", RwMode::Write, 1 << 20, agg));
        p.params.numjobs = clients;
        p.cluster = Some(ClusterPhase {
            clients,
            ranks: 4,
            layout: "n-n".into(),
            rank_bw_bytes_per_s: Spread {
                min: agg * 1e6 / f64::from(clients) * 0.9,
                mean: agg * 1e6 / f64::from(clients),
                max: agg * 1e6 / f64::from(clients) * 1.1,
            },
            ..Default::default()
        });
        let k = clients.to_string();
        run(id, &[("clients", k.as_str())], vec![p])
    }

    #[test]
    fn one_line_per_configuration_with_the_client_spread() {
        let runs: Vec<StoredRun> = [(1, 1, 100.0), (2, 2, 180.0), (3, 4, 200.0)]
            .iter()
            .map(|&(id, k, a)| scaling_run(id, k, a))
            .collect();
        let c = clients_chart(&runs).expect("a clients chart");
        assert_eq!(c.id, "clients");
        assert!(c.svg.contains("write write"), "{}", &c.svg[..400]);
        assert!(c.svg.contains("aggregate") && c.svg.contains("slowest client"));
        // Three lines of one colour told apart by their dashes, in the
        // plot and in the legend, and labels that start with the role.
        assert_eq!(
            c.svg
                .matches(&format!("stroke-dasharray=\"{SLOWEST_DASH}\""))
                .count(),
            2
        );
        assert_eq!(
            c.svg
                .matches(&format!("stroke-dasharray=\"{FASTEST_DASH}\""))
                .count(),
            2
        );
        for role in ["aggregate: ", "slowest client: ", "fastest client: "] {
            assert!(c.svg.contains(&format!(">{role}write")), "{role}");
        }
        // The clients tag restates the x axis: it is not part of the line name.
        assert!(!c.svg.contains("clients=2"));
        // One point is not a line.
        assert!(clients_chart(&runs[..1]).is_none());
        // Runs without cluster data have no clients chart.
        let plain = vec![run(
            9,
            &[],
            vec![phase(&Spec::new("write", RwMode::Write, 1 << 20, 5.0))],
        )];
        assert!(clients_chart(&plain).is_none());
    }
}
