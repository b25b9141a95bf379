//! The sweep's summary: one row per point (and phase), the varied values,
//! MB/s, IOPS, p50/p99 latency, CPU, cache state and a flag where the point
//! looks served from the page cache; then the totals (points, failures,
//! layout, time outside the measured windows). Also the JSON document.

use super::{PointResult, SweepTotals};
use comfy_table::{Cell, CellAlignment};
use storlab_types::{CacheMode, PhaseResult, format_bytes, format_latency_ns};

/// Whether a phase's figures may come from the page cache rather than the
/// device: storlab's own cache check said so, or it read buffered from a
/// working set smaller than the RAM that was pre-read (`warm`) or read
/// more than once (a time-based phase repeats its passes).
pub fn looks_cached(ph: &PhaseResult, mem_total: u64) -> bool {
    let p = &ph.params;
    let working_set = p.size_bytes.saturating_mul(u64::from(p.numjobs));
    let fits = mem_total > 0 && working_set < mem_total;
    let reread = match p.cache {
        CacheMode::Direct => false,
        CacheMode::Warm => true,
        CacheMode::Cold => p.time_based,
    };
    ph.cache.may_be_cached || (p.rw.reads() && fits && reread)
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

/// The table and the totals, as text.
pub fn render(results: &[PointResult], keys: &[&str], t: &SweepTotals) -> String {
    let mut table = crate::commands::common::result_table();
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
                Cell::new(if ph.interrupted {
                    format!("{} (stopped)", ph.params.name)
                } else {
                    ph.params.name.clone()
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
                        g.name, g.params.numjobs, g.params.rw
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

/// The sweep as JSON: totals and one entry per point (its parameters, run,
/// error and each phase's main figures).
pub fn json_document(results: &[PointResult], t: &SweepTotals) -> serde_json::Value {
    let points: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let params: serde_json::Map<String, serde_json::Value> = r
                .point
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            let mem = r
                .report
                .as_ref()
                .map_or(t.mem_total_bytes, |rep| rep.host.mem_total_bytes);
            let phases: Vec<serde_json::Value> = r
                .report
                .iter()
                .flat_map(|rep| rep.phases.iter())
                .map(|ph| {
                    let mut v = phase_json(ph, mem);
                    if let Some(g) = &ph.groups {
                        v["overlap"] = serde_json::json!(g.overlap);
                        v["groups"] = g
                            .groups
                            .iter()
                            .map(|g| {
                                serde_json::json!({
                                    "name": g.name,
                                    "rw": g.params.rw.as_str(),
                                    "numjobs": g.params.numjobs,
                                    "iodepth": g.params.iodepth,
                                    "bw_bytes_per_s": g.total.bw_bytes_per_s,
                                    "iops": g.total.iops,
                                    "lat_p50_ns": g.total.lat_ns.map(|l| l.p50),
                                    "lat_p99_ns": g.total.lat_ns.map(|l| l.p99),
                                    "elapsed_ns": g.elapsed_ns,
                                })
                            })
                            .collect();
                    }
                    v
                })
                .collect();
            serde_json::json!({
                "index": r.point.index,
                "params": params,
                "run_id": r.run_id,
                "resumed": r.resumed,
                "error": r.error,
                "phases": phases,
            })
        })
        .collect();
    document(points, t)
}

/// One phase's main figures in the sweep document.
fn phase_json(ph: &PhaseResult, mem: u64) -> serde_json::Value {
    serde_json::json!({
        "name": ph.params.name,
        "rw": ph.params.rw.as_str(),
        "bw_bytes_per_s": ph.total.bw_bytes_per_s,
        "iops": ph.total.iops,
        "lat_p50_ns": ph.total.lat_ns.map(|l| l.p50),
        "lat_p99_ns": ph.total.lat_ns.map(|l| l.p99),
        "elapsed_ns": ph.elapsed_ns,
        "cpu_utilization_pct": ph.cpu.utilization_pct,
        "cpu_ns_per_io": ph.cpu.cpu_ns_per_io,
        "cache_mode": ph.cache.mode,
        "may_be_cached": looks_cached(ph, mem),
    })
}

/// The sweep document around its points.
fn document(points: Vec<serde_json::Value>, t: &SweepTotals) -> serde_json::Value {
    serde_json::json!({
        // What wrote it (and how `--json-out` knows the file is storlab's
        // when the sweep is run again).
        "tool": {"name": "storlab", "version": storlab_types::STORLAB_VERSION},
        "document": crate::commands::outfile::SWEEP_DOCUMENT,
        "sweep_id": t.sweep_id,
        "points": points,
        "failed": t.failed,
        "interrupted": t.interrupted,
        "wall_ns": t.wall_ns,
        "measured_ns": t.measured_ns,
        "outside_measured_ns": t.wall_ns.saturating_sub(t.measured_ns),
        "layout_bytes": t.layout_bytes,
        "layout_ns": t.layout_ns,
        "mem_total_bytes": t.mem_total_bytes,
    })
}
