//! The human summary of a multi-client run (rank 0 prints it under the
//! usual phase table): per phase the aggregate, first done / last done, the
//! clock error bound, the spread over ranks and over nodes and the slowest
//! rank; and the clients table of a `--clients` scaling run. Pure: reports
//! in, text out.

use comfy_table::{Cell, CellAlignment};
use storlab_types::{BenchReport, ClusterPhase, PhaseResult};

fn mb(v: f64) -> String {
    format!("{:.1}", v / 1e6)
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

fn spread(s: &storlab_types::Spread) -> String {
    format!("{} / {} / {}", mb(s.min), mb(s.mean), mb(s.max))
}

/// The cluster part of one run: a row per phase, then the notes.
pub fn render_cluster(r: &BenchReport) -> String {
    let phases: Vec<(&PhaseResult, &ClusterPhase)> = r
        .phases
        .iter()
        .filter_map(|p| p.cluster.as_ref().map(|c| (p, c)))
        .collect();
    let Some((_, first)) = phases.first() else {
        return String::new();
    };
    let mut t = crate::style::result_table();
    t.set_header(vec![
        "phase",
        "layout",
        "clients",
        "nodes",
        "aggregate MB/s",
        "first done MB/s",
        "last done MB/s",
        "ranks min/mean/max MB/s",
        "nodes min/mean/max MB/s",
        "slowest rank",
    ]);
    for (p, c) in &phases {
        let slowest = c
            .slowest_rank
            .and_then(|s| c.per_rank.iter().find(|x| x.rank == s))
            .map(|x| format!("{} ({})", x.rank, x.node))
            .unwrap_or_else(|| "-".into());
        t.add_row(vec![
            Cell::new(&p.params.name),
            Cell::new(&c.layout),
            right(c.clients.to_string()),
            right(c.nodes.to_string()),
            right(mb(p.total.bw_bytes_per_s)),
            right(mb(c.first_done.bw_bytes_per_s)),
            right(mb(c.last_done.bw_bytes_per_s)),
            right(spread(&c.rank_bw_bytes_per_s)),
            right(spread(&c.node_bw_bytes_per_s)),
            Cell::new(slowest),
        ]);
    }
    let bound = phases
        .iter()
        .map(|(_, c)| c.clock_error_bound_ns)
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "{t}\n{} of {} ranks ran the job ({} per job, clients by {}). Aggregate = all ranks' bytes \
         over the global window (earliest first submission to latest last completion); each rank timed \
         itself from the moment it left a common barrier, so windows carry at most {:.3} ms of error \
         (the barrier exit skew, measured). First done = bytes all ranks had moved when the first rank \
         finished / that time; last done = all bytes / the whole window.\n",
        first.clients,
        first.ranks,
        storlab_types::format_bytes(first.block_bytes * first.segments),
        first.clients_by,
        bound as f64 / 1e6,
    );
    if let Some(ns) = first.stonewall_ns {
        out.push_str(&format!(
            "Stonewall: every rank stopped once the first had run {:.1} s{}; bytes are those actually moved.\n",
            ns as f64 / 1e9,
            if first.stonewall_wear_out {
                " (then went on to the furthest job's amount: wear-out)"
            } else {
                ""
            }
        ));
    }
    out
}

/// One row of the clients table.
#[derive(Debug, Clone)]
pub struct ClientsRow {
    pub clients: u32,
    pub phase: String,
    pub bw_bytes_per_s: f64,
    pub iops: f64,
    pub spread: storlab_types::Spread,
    pub run_id: Option<i64>,
}

/// Rows of a scaling run from its runs' reports (one per client count).
pub fn clients_rows(runs: &[(BenchReport, Option<i64>)]) -> Vec<ClientsRow> {
    let mut rows = Vec::new();
    for (r, id) in runs {
        for p in &r.phases {
            if let Some(c) = &p.cluster {
                rows.push(ClientsRow {
                    clients: c.clients,
                    phase: p.params.name.clone(),
                    bw_bytes_per_s: p.total.bw_bytes_per_s,
                    iops: p.total.iops,
                    spread: c.rank_bw_bytes_per_s,
                    run_id: *id,
                });
            }
        }
    }
    rows
}

/// The classic scaling table: clients, aggregate MB/s and IOPS, per-client
/// MB/s, spread over clients.
pub fn render_clients(rows: &[ClientsRow]) -> String {
    let mut t = crate::style::result_table();
    t.set_header(vec![
        "clients",
        "phase",
        "aggregate MB/s",
        "aggregate IOPS",
        "per client MB/s",
        "clients min/mean/max MB/s",
        "run",
    ]);
    for r in rows {
        t.add_row(vec![
            right(r.clients.to_string()),
            Cell::new(&r.phase),
            right(mb(r.bw_bytes_per_s)),
            right(format!("{:.0}", r.iops)),
            right(mb(r.bw_bytes_per_s / f64::from(r.clients.max(1)))),
            right(spread(&r.spread)),
            right(
                r.run_id
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "-".into()),
            ),
        ]);
    }
    format!("{t}\n")
}

/// `-q` under MPI: one line per phase, one screen for any number of
/// ranks: the aggregate MB/s and IOPS, first done / last done, the rank
/// spread and the slowest rank.
pub fn render_quiet(r: &BenchReport) -> String {
    let mut t = crate::style::result_table();
    t.set_header(vec![
        "phase",
        "ranks",
        "MB/s",
        "IOPS",
        "first / last done MB/s",
        "rank MB/s min / max",
        "slowest rank",
    ]);
    for p in &r.phases {
        let Some(c) = &p.cluster else { continue };
        t.add_row(vec![
            Cell::new(&p.params.name),
            right(c.clients.to_string()),
            right(mb(p.total.bw_bytes_per_s)),
            right(format!("{:.0}", p.total.iops)),
            right(format!(
                "{} / {}",
                mb(c.first_done.bw_bytes_per_s),
                mb(c.last_done.bw_bytes_per_s)
            )),
            right(format!(
                "{} / {}",
                mb(c.rank_bw_bytes_per_s.min),
                mb(c.rank_bw_bytes_per_s.max)
            )),
            right(c.slowest_rank.map_or_else(|| "-".into(), |x| x.to_string())),
        ]);
    }
    format!(
        "{t}\nMB/s = 10^6 bytes/s, all ranks' bytes over the global window (-q: the summary; without it every figure).\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use storlab_types::Spread;

    /// A fixed two-client run: its cluster table with the stonewall line,
    /// its `-q` summary and its row of the clients table.
    #[test]
    fn cluster_tables_of_a_fixed_run() {
        let r = fixture::cluster();
        fixture::golden("cluster.txt", &render_cluster(&r));
        fixture::golden("cluster-quiet.txt", &render_quiet(&r));
        let rows = clients_rows(&[(r, Some(12))]);
        fixture::golden("clients.txt", &render_clients(&rows));
    }

    /// A run without cluster phases has no cluster part.
    #[test]
    fn no_cluster_phase_no_cluster_table() {
        assert_eq!(render_cluster(&fixture::bench()), "");
        assert!(clients_rows(&[(fixture::bench(), None)]).is_empty());
    }

    #[test]
    fn clients_table_divides_the_aggregate_by_the_clients() {
        let rows = vec![ClientsRow {
            clients: 4,
            phase: "write".into(),
            bw_bytes_per_s: 400e6,
            iops: 400.0,
            spread: Spread {
                min: 90e6,
                mean: 100e6,
                max: 110e6,
            },
            run_id: Some(7),
        }];
        let t = render_clients(&rows);
        assert!(t.contains("400.0") && t.contains("100.0") && t.contains("90.0 / 100.0 / 110.0"));
    }
}
