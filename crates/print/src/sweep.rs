//! The sweep's summary: one row per point (and phase), the varied values,
//! MB/s, IOPS, p50/p99 latency, CPU, cache state and a flag where the point
//! looks served from the page cache; then the totals (points, failures,
//! layout, time outside the measured windows). The JSON document is the
//! sweeper's (`storlab_bench::sweeper::json_document`).

use comfy_table::{Cell, CellAlignment};
use storlab_bench::sweeper::{PointResult, SweepTotals, looks_cached};
use storlab_types::{format_bytes, format_latency_ns};

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

/// The table and the totals, as text, then the line naming the chart
/// written (`chart`), if one was.
pub fn render_with_chart(
    results: &[PointResult],
    keys: &[&str],
    t: &SweepTotals,
    chart: Option<&std::path::Path>,
) -> String {
    let mut text = render(results, keys, t);
    if let Some(path) = chart {
        text.push_str(&format!("Chart written to {}.\n", path.display()));
    }
    text
}

/// The table and the totals, as text.
pub fn render(results: &[PointResult], keys: &[&str], t: &SweepTotals) -> String {
    let mut table = crate::style::result_table();
    let mut head: Vec<String> = vec!["#".into()];
    head.extend(keys.iter().map(|k| k.to_string()));
    head.extend(
        [
            "phase", "MB/s", "IOPS", "p50", "p99", "CPU/IO", "cache", "cached?", "run",
        ]
        .map(String::from),
    );
    table.set_header(head);
    for r in results {
        let mut lead: Vec<Cell> = vec![right((r.point.index + 1).to_string())];
        lead.extend(r.point.params.iter().map(|(_, v)| Cell::new(v)));
        let run = r
            .run_id
            .map(|id| format!("{id}{}", if r.resumed { " (stored)" } else { "" }))
            .unwrap_or_else(|| "-".into());
        let phases = r
            .report
            .as_ref()
            .map(|rep| rep.phases.as_slice())
            .unwrap_or(&[]);
        let mem = r
            .report
            .as_ref()
            .map_or(t.mem_total_bytes, |rep| rep.host.mem_total_bytes);
        for ph in phases {
            let mut row = lead.clone();
            let lat = ph.total.lat_ns;
            let l = |v: Option<u64>| v.map(|v| format_latency_ns(v as f64)).unwrap_or("-".into());
            row.extend([
                Cell::new({
                    // Control characters escaped, as the bench table does
                    // (a job file's phase name cannot clear the screen).
                    let name = storlab_types::text::escape_controls(&ph.params.name);
                    if ph.interrupted {
                        format!("{name} (stopped)")
                    } else {
                        name.into_owned()
                    }
                }),
                right(format!("{:.1}", ph.total.bw_bytes_per_s / 1e6)),
                right(format!("{:.0}", ph.total.iops)),
                right(l(lat.map(|x| x.p50))),
                right(l(lat.map(|x| x.p99))),
                right(if ph.total.ops > 0 {
                    format_latency_ns(ph.cpu.cpu_ns_per_io)
                } else {
                    "-".into()
                }),
                Cell::new(&ph.cache.mode),
                Cell::new(if looks_cached(ph, mem) { "yes" } else { "" }),
                right(run.clone()),
            ]);
            table.add_row(row);
            // A phase of job groups: each group over its own window.
            for g in ph.groups.iter().flat_map(|g| &g.groups) {
                let mut row = lead.clone();
                let lat = g.total.lat_ns;
                row.extend([
                    Cell::new(format!(
                        "  {} ({}×{})",
                        storlab_types::text::escape_controls(&g.name),
                        g.params.numjobs,
                        g.params.rw
                    )),
                    right(format!("{:.1}", g.total.bw_bytes_per_s / 1e6)),
                    right(format!("{:.0}", g.total.iops)),
                    right(l(lat.map(|x| x.p50))),
                    right(l(lat.map(|x| x.p99))),
                    right(if g.total.ops > 0 {
                        format_latency_ns(g.cpu.cpu_ns_per_io)
                    } else {
                        "-".into()
                    }),
                    Cell::new(&g.cache.mode),
                    Cell::new(""),
                    right(String::new()),
                ]);
                table.add_row(row);
            }
        }
        if let Some(e) = &r.error {
            let mut row = lead.clone();
            row.push(Cell::new(format!("FAILED: {}", truncate(e, 90))));
            row.extend((0..7).map(|_| Cell::new("")));
            row.push(right(run.clone()));
            table.add_row(row);
        } else if phases.is_empty() {
            let mut row = lead.clone();
            row.push(Cell::new("not run"));
            table.add_row(row);
        }
    }
    let mut out = format!("Sweep {}\n{table}\n", t.sweep_id);
    out.push_str(&format!(
        "{} points, {} failed{}. MB/s = 10^6 bytes/s over each phase's measured window; p50/p99 = latency per I/O; CPU/IO = process CPU time per I/O; \
         cached? = the figures may come from the page cache (buffered reads of a working set under the RAM, or storlab's cache check).\n",
        t.points,
        t.failed,
        if t.interrupted { ", stopped early" } else { "" }
    ));
    let wall = t.wall_ns as f64 / 1e9;
    let outside = t.wall_ns.saturating_sub(t.measured_ns) as f64 / 1e9;
    out.push_str(&format!(
        "Wall time {wall:.1} s: {:.1} s inside measured windows, {outside:.1} s outside them ({:.0} %: layout {} in {:.1} s, cache preparation, ramp-up, fsync and setup).\n",
        t.measured_ns as f64 / 1e9,
        if t.wall_ns > 0 { 100.0 * outside / wall } else { 0.0 },
        format_bytes(t.layout_bytes),
        t.layout_ns as f64 / 1e9,
    ));
    out.push_str(&format!(
        "Stored with tag sweep={0} (storlab runs --tag sweep={0}).\n",
        t.sweep_id
    ));
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use storlab_bench::SweepPoint;

    fn point(index: usize, qd: &str) -> SweepPoint {
        SweepPoint {
            index,
            params: vec![("bs", "4k".into()), ("iodepth", qd.into())],
        }
    }

    /// A fixed sweep of four points: one measured (its stopped phase
    /// marked), one resumed from the store, one failed with a long error
    /// (cut at 90 characters), one not run; then the totals. The phase
    /// name's control characters are shown escaped, as the bench table
    /// shows them (before the move into this crate they went out raw).
    #[test]
    fn sweep_table_of_fixed_points() {
        let results = [
            PointResult {
                point: point(0, "1"),
                run_id: Some(7),
                report: Some(fixture::bench()),
                error: None,
                resumed: false,
            },
            PointResult {
                point: point(1, "4"),
                run_id: Some(3),
                report: Some(fixture::cluster()),
                error: None,
                resumed: true,
            },
            PointResult {
                point: point(2, "16"),
                run_id: Some(8),
                report: None,
                error: Some(format!("the target filled up: {}", "x".repeat(100))),
                resumed: false,
            },
            PointResult {
                point: point(3, "64"),
                run_id: None,
                report: None,
                error: None,
                resumed: false,
            },
        ];
        let totals = SweepTotals {
            sweep_id: "sw-1".into(),
            points: 4,
            failed: 1,
            wall_ns: 60_000_000_000,
            measured_ns: 45_000_000_000,
            layout_bytes: 2 << 30,
            layout_ns: 5_000_000_000,
            interrupted: true,
            mem_total_bytes: 64 << 30,
            page_cache_bytes: None,
        };
        fixture::golden("sweep.txt", &render(&results, &["bs", "iodepth"], &totals));
    }
}
