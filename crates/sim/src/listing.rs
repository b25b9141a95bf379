//! What `storlab sim` lists: one row per point and solver, a column per
//! component that any point uses, and the parts without a published limit.
//! Data only: the CLI puts it in its listing style and prints it.

use crate::sweep::SweepPoint;

/// The listing of a sweep: a title line, the table's header and rows, and
/// notes printed under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub title: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

fn mb(v: f64) -> String {
    format!("{:.1}", v / 1e6)
}

/// The listing of `points`, swept over `key` (none without `--vary`).
pub fn listing(points: &[SweepPoint], key: Option<&str>) -> Listing {
    let mut comps: Vec<String> = Vec::new();
    for c in crate::model::COMPONENTS {
        if points
            .iter()
            .flat_map(SweepPoint::solved)
            .any(|s| s.utilisation.iter().any(|u| u.component == c))
        {
            comps.push(c.to_string());
        }
    }
    let des = points.iter().any(|p| p.des.is_some());
    let mut head: Vec<String> = Vec::new();
    if let Some(k) = key {
        head.push(k.to_string());
    }
    let show_clients = key != Some("clients");
    if show_clients {
        head.push("clients".into());
    }
    head.extend(
        ["solver", "aggregate MB/s", "per client MB/s", "binding"]
            .iter()
            .map(|s| s.to_string()),
    );
    head.push("mean lat ms".into());
    if des {
        head.push("p99 ms".into());
        head.push("client p99 ms (best-worst)".into());
    }
    head.extend(comps.iter().map(|c| format!("{c} %")));
    let mut rows = Vec::new();
    for p in points {
        for s in p.solved() {
            let mut row: Vec<String> = Vec::new();
            if key.is_some() {
                row.push(p.value.clone().unwrap_or_default());
            }
            if show_clients {
                row.push(s.clients.to_string());
            }
            row.push(s.solver.clone());
            // An upper bound (a part without a published limit could bind
            // below it) is shown as one.
            let le = if s.bound { "≤ " } else { "" };
            row.push(format!("{le}{}", mb(s.aggregate_bytes_per_s)));
            row.push(format!("{le}{:.2}", s.per_client_bytes_per_s / 1e6));
            row.push(s.binding.clone());
            row.push(format!("{:.2}", s.mean_latency_ns / 1e6));
            if des {
                let ms = |v: u64| format!("{:.2}", v as f64 / 1e6);
                row.push(s.p99_latency_ns.map_or("-".into(), ms));
                row.push(match (s.best_client_p99_ns, s.worst_client_p99_ns) {
                    (Some(b), Some(w)) => format!("{}-{}", ms(b), ms(w)),
                    _ => "-".into(),
                });
            }
            for c in &comps {
                row.push(
                    s.utilisation
                        .iter()
                        .find(|u| &u.component == c)
                        .map_or("-".into(), |u| format!("{:.0}", u.pct)),
                );
            }
            rows.push(row);
        }
    }
    let title = points.first().map(|p| {
        format!(
            "{}: {} {} {} × {} (MB = 10^6 bytes; utilisation of the busiest instance)",
            p.resolved.name,
            p.resolved.workload.pattern.fio_word(),
            match p.resolved.workload.sharing {
                crate::scenario::Sharing::NN => "N-N",
                crate::scenario::Sharing::N1 => "N-1",
            },
            storlab_types::format_bytes(p.resolved.workload.file_size_bytes),
            storlab_types::format_bytes(p.resolved.workload.bs_bytes),
        )
    });
    let mut unknowns: Vec<&String> = points
        .iter()
        .flat_map(SweepPoint::solved)
        .flat_map(|s| s.unknowns.iter())
        .collect();
    unknowns.sort();
    unknowns.dedup();
    Listing {
        title,
        header: head,
        rows,
        notes: unknowns
            .into_iter()
            .map(|u| format!("upper bound only (≤): {u}"))
            .collect(),
    }
}
