//! The human summary of an md run: one row per phase (items, items per
//! second, latency percentiles, CPU per operation), the per-rank spread
//! when several ranks ran, then what the numbers mean. Pure.

use comfy_table::{Cell, CellAlignment};
use storlab_types::{BenchReport, PhaseResult, format_latency_ns};

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// Items per second of each rank over its own window: (min, mean, max).
fn rank_spread(p: &PhaseResult) -> Option<(f64, f64, f64)> {
    if p.jobs.len() < 2 {
        return None;
    }
    let rates: Vec<f64> = p
        .jobs
        .iter()
        .map(|j| j.read.iops.max(j.write.iops))
        .collect();
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    Some((min, rates.iter().sum::<f64>() / rates.len() as f64, max))
}

fn lat(p: &PhaseResult, f: impl Fn(&storlab_types::LatencyStats) -> u64) -> String {
    p.total
        .lat_ns
        .as_ref()
        .map_or_else(|| "–".into(), |l| format_latency_ns(f(l) as f64))
}

/// The table and its notes.
pub fn render(r: &BenchReport) -> String {
    let mut t = crate::style::result_table();
    let ranks = r
        .phases
        .iter()
        .filter_map(|p| p.params.md.as_ref().map(|m| m.ranks))
        .max()
        .unwrap_or(1);
    let mut header = vec![
        "phase", "items", "items/s", "p50", "p99", "max", "CPU/op", "note",
    ];
    if ranks > 1 {
        header.insert(3, "rank items/s min–max");
    }
    t.set_header(header);
    for p in &r.phases {
        let mut note = Vec::new();
        if p.params.md.as_ref().is_some_and(|m| m.stonewalled) {
            note.push("stonewalled".to_string());
        }
        for (k, n) in &p.errors {
            note.push(format!("{n} {k}"));
        }
        if p.interrupted && p.errors.is_empty() {
            note.push("interrupted".into());
        }
        let mut row = vec![
            Cell::new(&p.params.name),
            right(p.total.ops),
            right(format!("{:.0}", p.total.iops)),
            right(lat(p, |l| l.p50)),
            right(lat(p, |l| l.p99)),
            right(lat(p, |l| l.max)),
            right(format_latency_ns(p.cpu.cpu_ns_per_io)),
            Cell::new(note.join(", ")),
        ];
        if ranks > 1 {
            let spread = rank_spread(p)
                .map(|(lo, _, hi)| format!("{lo:.0}–{hi:.0}"))
                .unwrap_or_default();
            row.insert(3, right(spread));
        }
        t.add_row(row);
    }
    let mut out = crate::style::trim_table(&t.to_string());
    if let Some(m) = r.phases.iter().find_map(|p| p.params.md.as_ref()) {
        out.push_str(&format!(
            "{} rank(s), {} tree{} of depth {} and branch {} ({} directories each){}{}.\n",
            m.ranks,
            if m.unique_dir { "one" } else { "one shared" },
            if m.unique_dir { " per rank" } else { "" },
            m.depth,
            m.branch,
            m.tree_dirs,
            if m.write_bytes > 0 {
                format!(
                    ", {} written per file",
                    storlab_types::format_bytes(m.write_bytes)
                )
            } else {
                String::new()
            },
            if m.rank_shift > 0 {
                format!(", stat/read shifted by {} rank(s)", m.rank_shift)
            } else {
                String::new()
            },
        ));
    }
    out.push_str(
        "items/s: items done by all ranks / the window from their common start to the last one done; \
         latency per operation (HDR, merged over ranks); CPU/op: user+system time per item.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    /// A fixed two-rank run: the rank spread column, the stonewall note and
    /// the tree line.
    #[test]
    fn md_table_of_a_fixed_run() {
        fixture::golden("md.txt", &render(&fixture::md()));
    }

    /// One rank: no spread column.
    #[test]
    fn one_rank_has_no_spread_column() {
        let mut r = fixture::md();
        for p in &mut r.phases {
            if let Some(m) = p.params.md.as_mut() {
                m.ranks = 1;
            }
        }
        let t = render(&r);
        assert!(!t.contains("rank items/s"), "{t}");
        assert!(render(&fixture::md()).contains("rank items/s min–max"));
    }
}
