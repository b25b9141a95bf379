//! The human summary of a bench run: one row per phase and direction,
//! per-job rows when there are several jobs, then what the numbers mean and
//! any doubts. Pure: a report in, text out.

use comfy_table::{Cell, CellAlignment, Table};
use storlab_types::format_latency_ns as fmt_lat;
use storlab_types::{BenchReport, DirStats, PhaseParams, PhaseResult, format_bytes};

fn pattern(p: &PhaseParams) -> String {
    let bs = if p.bs.len() == 1 {
        format_bytes(p.bs[0].bs_bytes)
    } else {
        p.bs.iter()
            .map(|b| format!("{}/{}%", format_bytes(b.bs_bytes), b.weight))
            .collect::<Vec<_>>()
            .join(":")
    };
    let mix = if matches!(
        p.rw,
        storlab_types::RwMode::ReadWrite | storlab_types::RwMode::RandRw
    ) {
        format!(" {}% read", p.rwmixread)
    } else {
        String::new()
    };
    format!("{} {bs}{mix}", p.rw)
}

/// The one unit of every latency column of a table, named in its header.
#[derive(Debug, Clone, Copy)]
struct LatUnit {
    name: &'static str,
    ns: f64,
    decimals: usize,
}

const MICROS: LatUnit = LatUnit {
    name: "µs",
    ns: 1e3,
    decimals: 1,
};
const MILLIS: LatUnit = LatUnit {
    name: "ms",
    ns: 1e6,
    decimals: 2,
};

/// ms when every phase's median latency is at least 1 ms, else µs.
fn lat_unit(r: &BenchReport) -> LatUnit {
    let p50s = r
        .phases
        .iter()
        .filter_map(|ph| ph.total.lat_ns.map(|l| l.p50));
    match p50s.min() {
        Some(m) if m >= 1_000_000 => MILLIS,
        _ => MICROS,
    }
}

#[allow(clippy::too_many_arguments)]
fn stat_row(
    table: &mut Table,
    label: String,
    pat: String,
    shape: String,
    d: &DirStats,
    cpu: Option<f64>,
    unit: LatUnit,
) {
    let lat = d.lat_ns.unwrap_or_default();
    let has = d.lat_ns.is_some();
    let l = |v: f64| {
        if has {
            format!("{:.*}", unit.decimals, v / unit.ns)
        } else {
            "-".into()
        }
    };
    table.add_row(vec![
        Cell::new(label),
        Cell::new(pat),
        Cell::new(shape),
        Cell::new(format!("{:.1}", d.bw_bytes_per_s / 1e6)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.1}", d.bw_bytes_per_s / 1048576.0))
            .set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.0}", d.iops)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.mean)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p50 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p99 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p99_9 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.max as f64)).set_alignment(CellAlignment::Right),
        Cell::new(cpu.map(|c| format!("{:.1}", c / 1e3)).unwrap_or_default())
            .set_alignment(CellAlignment::Right),
    ]);
}

/// The human summary: one row per phase and direction, per-job rows when
/// there are several jobs, then what the numbers mean and any doubts.
pub fn render_table(r: &BenchReport) -> String {
    let mut t = crate::style::result_table();
    let unit = lat_unit(r);
    let u = unit.name;
    t.set_header(vec![
        "phase".to_string(),
        "pattern".into(),
        "jobs×QD".into(),
        "MB/s".into(),
        "MiB/s".into(),
        "IOPS".into(),
        format!("lat mean ({u})"),
        format!("p50 ({u})"),
        format!("p99 ({u})"),
        format!("p99.9 ({u})"),
        format!("max ({u})"),
        "CPU/IO (µs)".into(),
    ]);
    for ph in &r.phases {
        let p = &ph.params;
        let shape = format!("{}×{}", p.numjobs, p.iodepth);
        let name = if ph.interrupted {
            format!("{} (interrupted)", ph.name())
        } else {
            ph.name().to_string()
        };
        let both = p.rw.reads() && p.rw.writes();
        let cpu = Some(ph.cpu.cpu_ns_per_io);
        if let Some(g) = &ph.groups {
            group_rows(&mut t, ph, g, name, unit);
            continue;
        }
        if both && p.report.unified_rw_reporting == "mixed" {
            // fio's unified_rw_reporting=mixed: one line, both directions.
            let label = format!("{name} (mixed)");
            stat_row(
                &mut t,
                label,
                pattern(p),
                shape.clone(),
                &ph.total,
                cpu,
                unit,
            );
        } else if both {
            stat_row(
                &mut t,
                name,
                pattern(p),
                shape.clone(),
                &ph.total,
                cpu,
                unit,
            );
            stat_row(
                &mut t,
                "  read".into(),
                String::new(),
                String::new(),
                &ph.read,
                None,
                unit,
            );
            stat_row(
                &mut t,
                "  write".into(),
                String::new(),
                String::new(),
                &ph.write,
                None,
                unit,
            );
        } else {
            let d = if p.rw.reads() { &ph.read } else { &ph.write };
            stat_row(&mut t, name, pattern(p), shape.clone(), d, cpu, unit);
        }
        if ph.jobs.len() > 1 && !p.group_reporting {
            for j in &ph.jobs {
                // A job's read + write over its own window. Its latency is
                // shown only for single-direction phases: the summaries of
                // two directions cannot be merged into one distribution.
                let d = match (p.rw.reads(), p.rw.writes()) {
                    (true, false) => j.read,
                    (false, true) => j.write,
                    _ => DirStats {
                        bytes: j.read.bytes + j.write.bytes,
                        ops: j.read.ops + j.write.ops,
                        bw_bytes_per_s: j.read.bw_bytes_per_s + j.write.bw_bytes_per_s,
                        iops: j.read.iops + j.write.iops,
                        lat_ns: None,
                    },
                };
                stat_row(
                    &mut t,
                    format!("  job {}", j.job),
                    String::new(),
                    String::new(),
                    &d,
                    None,
                    unit,
                );
            }
        }
    }
    let mut out = format!(
        "storlab bench on {} ({}{})\n{t}\n",
        r.target.path,
        r.target
            .filesystem
            .as_deref()
            .unwrap_or(r.target.kind.as_str()),
        r.target
            .device
            .as_deref()
            .map(|d| format!(" on {d}"))
            .unwrap_or_default()
    );
    out.push_str("MB/s = 10^6 bytes/s, MiB/s = 2^20 bytes/s. Rates are the bytes of all jobs / one phase window (first submission to last completion).\n");
    out.push_str("Latency: per I/O, from the system call that submits it to the reap of its completion; histograms merged across jobs.\n");
    out.push_str("Depth in flight: time-weighted mean I/Os between those two moments (= IOPS × mean latency, Little's law). CPU/IO: process CPU (user+sys) per I/O.\n");
    for ph in &r.phases {
        out.push_str(&phase_notes(ph));
        out.push_str(&percentile_lines(ph));
    }
    if r.target.created_by_storlab {
        out.push_str(if r.target.kept {
            "Data files kept.\n"
        } else {
            "Data files removed.\n"
        });
    }
    out
}

/// The line under the table for one phase: its time, bytes, engine and
/// notes (end fsync, cache, depth, verify, series, groups, errors), then
/// one line per verify mismatch listed.
fn phase_notes(ph: &PhaseResult) -> String {
    let mut out = String::new();
    let mut notes = Vec::new();
    // Verify mismatches follow the phase's line, one per line.
    let mut mismatch_lines = Vec::new();
    if ph.fsync_in_window {
        notes.push(format!(
            "end fsync inside the timed window ({})",
            fmt_lat(ph.end_fsync_ns as f64)
        ));
    }
    let c = &ph.cache;
    match (c.mode.as_str(), c.verified) {
        ("direct", _) => notes.push("O_DIRECT".into()),
        (m, Some(v)) => notes.push(format!(
            "cache {m} via {}: {} ({}/{} pages resident)",
            c.method.as_deref().unwrap_or("-"),
            if v { "verified" } else { "NOT reached" },
            c.resident_pages_after.unwrap_or(0),
            c.total_pages.unwrap_or(0)
        )),
        (m, None) => notes.push(format!("cache {m}")),
    }
    if let Some(d) = &ph.depth {
        let mut n = format!("depth {:.1} of {} in flight", d.achieved, d.requested);
        if let (Some(e), Some(m)) = (d.stamp_error_ns, d.stamp_error_mean_ns) {
            n.push_str(&format!(
                " (batched submits share a timestamp: latency overstated by {} on average, at most {})",
                fmt_lat(m),
                fmt_lat(e as f64)
            ));
        }
        if let Some(l) = &d.latency_target {
            // fio's latency_target search: the depth it found.
            let range = if l.depth_max > l.depth {
                format!("{}-{}", l.depth, l.depth_max)
            } else {
                l.depth.to_string()
            };
            let how = if l.failed {
                "the target was missed at depth 1"
            } else if l.settled {
                "settled"
            } else {
                "still searching when the run ended"
            };
            n.push_str(&format!("; latency_target found depth {range} ({how})"));
        }
        notes.push(n);
    }
    if let Some(v) = &ph.verify {
        notes.push(format!(
            "verify: {} blocks checked, {} mismatches",
            v.blocks_checked, v.mismatches
        ));
        for m in &v.first_mismatches {
            mismatch_lines.push(format!(
                "  mismatch in {} at offset {}: {}\n",
                m.file, m.offset_bytes, m.reason
            ));
        }
        if v.mismatches > v.first_mismatches.len() as u64 {
            mismatch_lines.push(format!(
                "  ... and {} more (the first {} are listed)\n",
                v.mismatches - v.first_mismatches.len() as u64,
                v.first_mismatches.len()
            ));
        }
    }
    if let Some(n) = series_note(ph) {
        notes.push(n);
    }
    if let Some(g) = &ph.groups {
        notes.push(format!(
            "{} groups at once, all moving data for {:.0} % of the phase ({})",
            g.groups.len(),
            g.overlap * 100.0,
            fmt_lat(g.all_moving_ns as f64)
        ));
        for m in &g.groups {
            if let Some(v) = &m.verify {
                let pass = match v.pass.as_str() {
                    "ran" => format!("{} by the pass after its writes", v.pass_blocks_checked),
                    "none" => "no pass after its writes".into(),
                    other => format!("pass after its writes {other}"),
                };
                notes.push(format!(
                    "group {} verify: {} blocks checked ({pass}), {} mismatches",
                    m.name, v.checked.blocks_checked, v.checked.mismatches
                ));
            }
        }
    }
    if !ph.errors.is_empty() {
        let e: Vec<String> = ph.errors.iter().map(|(k, v)| format!("{k}×{v}")).collect();
        notes.push(format!("errors: {}", e.join(", ")));
    }
    let secs = ph.elapsed_ns as f64 / 1e9;
    out.push_str(&format!(
        "{}: {:.2} s, {} moved, {}; {}\n",
        ph.name(),
        secs,
        format_bytes(ph.total.bytes),
        ph.params.engine.as_str(),
        notes.join("; ")
    ));
    out.extend(mismatch_lines);
    out
}

/// The latency percentiles of the phase's `percentile_list` (fio's), one
/// line per direction shown: `NAME read: p95 1.2 ms, p99.5 3.4 ms`.
fn percentile_lines(ph: &PhaseResult) -> String {
    let Some(c) = &ph.percentiles else {
        return String::new();
    };
    let mixed = ph.params.report.unified_rw_reporting == "mixed";
    let dirs: Vec<(&str, &Vec<(f64, u64)>)> = match (ph.params.rw.reads(), ph.params.rw.writes()) {
        (true, true) if mixed => vec![("mixed", &c.total)],
        (true, true) => vec![("read", &c.read), ("write", &c.write), ("total", &c.total)],
        (true, false) => vec![("read", &c.read)],
        _ => vec![("write", &c.write)],
    };
    let mut out = String::new();
    for (dir, list) in dirs.into_iter().filter(|(_, l)| !l.is_empty()) {
        let vals: Vec<String> = list
            .iter()
            .map(|(p, ns)| format!("p{p} {}", fmt_lat(*ns as f64)))
            .collect();
        out.push_str(&format!(
            "{} {dir} latency percentiles (percentile_list): {}\n",
            ph.name(),
            vals.join(", ")
        ));
    }
    out
}

/// A phase of job groups: the aggregate (all groups' bytes over the union
/// window) with its read and write totals, then each group over its own
/// window, then each group's jobs.
fn group_rows(
    t: &mut Table,
    ph: &PhaseResult,
    g: &storlab_types::PhaseGroups,
    name: String,
    unit: LatUnit,
) {
    let p = &ph.params;
    let shape = format!("{}×{}", p.numjobs, p.iodepth);
    let cpu = Some(ph.cpu.cpu_ns_per_io);
    stat_row(
        t,
        format!("{name} (all groups)"),
        format!("{} groups", g.groups.len()),
        shape,
        &ph.total,
        cpu,
        unit,
    );
    for (label, d) in [("  read", &ph.read), ("  write", &ph.write)] {
        if d.ops > 0 {
            stat_row(t, label.into(), String::new(), String::new(), d, None, unit);
        }
    }
    // group_reporting: one line per reporting group, no job lines.
    let lines = if p.group_reporting && !g.reporting.is_empty() {
        &g.reporting
    } else {
        &g.groups
    };
    for m in lines {
        let gp = &m.params;
        let d = match (gp.rw.reads(), gp.rw.writes()) {
            (true, false) => &m.read,
            (false, true) => &m.write,
            _ => &m.total,
        };
        stat_row(
            t,
            format!("  group {}", m.name),
            pattern(gp),
            format!("{}×{}", gp.numjobs, gp.iodepth),
            d,
            Some(m.cpu.cpu_ns_per_io),
            unit,
        );
        if gp.numjobs > 1 && !p.group_reporting {
            let jobs = ph
                .jobs
                .iter()
                .skip(m.first_job as usize)
                .take(gp.numjobs as usize);
            for j in jobs {
                let d = match (gp.rw.reads(), gp.rw.writes()) {
                    (true, false) => j.read,
                    (false, true) => j.write,
                    _ => DirStats {
                        bytes: j.read.bytes + j.write.bytes,
                        ops: j.read.ops + j.write.ops,
                        bw_bytes_per_s: j.read.bw_bytes_per_s + j.write.bw_bytes_per_s,
                        iops: j.read.iops + j.write.iops,
                        lat_ns: None,
                    },
                };
                stat_row(
                    t,
                    format!("    job {}", j.job),
                    String::new(),
                    String::new(),
                    &d,
                    None,
                    unit,
                );
            }
        }
    }
}

/// The spread of the per-interval MB/s over the phase's full intervals,
/// and the steady-state outcome.
fn series_note(ph: &PhaseResult) -> Option<String> {
    let s = ph.series.as_ref()?;
    let mut mbs: Vec<f64> = s
        .points
        .iter()
        .filter(|p| p.span_ns == s.interval_ns)
        .map(|p| p.total.bw_bytes_per_s / 1e6)
        .collect();
    let mut out = Vec::new();
    if mbs.len() >= 3 {
        mbs.sort_by(f64::total_cmp);
        out.push(format!(
            "per {} interval: MB/s min {:.1}, median {:.1}, max {:.1} ({} intervals)",
            if s.interval_ns % 1_000_000_000 == 0 {
                format!("{} s", s.interval_ns / 1_000_000_000)
            } else {
                format!("{} ms", s.interval_ns / 1_000_000)
            },
            mbs[0],
            mbs[mbs.len() / 2],
            mbs[mbs.len() - 1],
            mbs.len()
        ));
    }
    if let Some(st) = &s.steady {
        out.push(match (st.reached, st.at_ns, st.last_value_pct) {
            (true, Some(t), Some(v)) => format!(
                "steady state reached after {} ({v:.2} %), phase stopped",
                fmt_lat(t as f64)
            ),
            (_, _, Some(v)) => format!("steady state NOT reached (last window {v:.2} %)"),
            _ => "steady state NOT reached (no full window)".to_string(),
        });
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// A phase's name as the tables show it: control characters escaped (a
/// job file's name cannot clear the screen).
trait PhaseName {
    fn name(&self) -> std::borrow::Cow<'_, str>;
}

impl PhaseName for PhaseResult {
    fn name(&self) -> std::borrow::Cow<'_, str> {
        storlab_types::text::escape_controls(&self.params.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    /// A fixed run: a write of one job in ms, a mixed interrupted phase of
    /// two jobs (its name's escape sequence shown, not sent) with a cold
    /// cache, a depth and an error count, and the notes under the table.
    #[test]
    fn bench_table_of_a_fixed_run() {
        fixture::golden("bench.txt", &render_table(&fixture::bench()));
    }

    /// The rest of the notes and the group rows: an end fsync in the
    /// window, verify mismatches (listed, then "and N more"), a series with
    /// its steady state, batched-submit stamps, and a phase of two groups
    /// (one of two jobs), with files kept.
    #[test]
    fn bench_notes_and_groups_of_a_fixed_run() {
        use storlab_types::{
            GroupResult, PhaseGroups, PhaseSeries, RwMode, SeriesPoint, SteadyOutcome,
            VerifyMismatch, VerifyResult,
        };
        let mut r = fixture::bench();
        r.target.kept = true;
        r.target.device = None;
        let w = &mut r.phases[0];
        w.fsync_in_window = true;
        w.end_fsync_ns = 1_500_000;
        w.verify = Some(VerifyResult {
            blocks_checked: 4096,
            mismatches: 3,
            first_mismatches: vec![VerifyMismatch {
                file: "f.0".into(),
                offset_bytes: 8192,
                reason: "seed differs".into(),
            }],
        });
        let point = |t: u64, mbs: f64| SeriesPoint {
            t_ns: t * 1_000_000_000,
            span_ns: 1_000_000_000,
            total: fixture::dir(mbs * 1e6, 100.0, 1.0, None),
            ..SeriesPoint::default()
        };
        w.series = Some(PhaseSeries {
            interval_ns: 1_000_000_000,
            points: vec![point(1, 500.0), point(2, 520.0), point(3, 510.0)],
            steady: Some(SteadyOutcome {
                reached: true,
                at_ns: Some(3_000_000_000),
                last_value_pct: Some(1.5),
            }),
        });
        let m = &mut r.phases[1];
        m.interrupted = false;
        m.errors.clear();
        m.depth = m.depth.map(|mut d| {
            d.stamp_error_ns = Some(40_000);
            d.stamp_error_mean_ns = Some(12_000.0);
            d
        });
        let group = |name: &str, first_job: u32, params, total| GroupResult {
            name: name.into(),
            first_job,
            params,
            read: total,
            write: total,
            total,
            ..GroupResult::default()
        };
        m.groups = Some(PhaseGroups {
            reporting: Vec::new(),
            overlap: 0.97,
            all_moving_ns: 9_700_000_000,
            groups: vec![
                group(
                    "readers",
                    0,
                    fixture::params("readers", RwMode::RandRead, 4096, 2, 16),
                    fixture::dir(70e6, 17_090.0, 10.0, Some(300)),
                ),
                group(
                    "writers",
                    2,
                    fixture::params("writers", RwMode::Write, 1 << 20, 1, 1),
                    fixture::dir(30e6, 28.0, 10.0, Some(900)),
                ),
            ],
        });
        fixture::golden("bench-notes.txt", &render_table(&r));
    }

    /// The unit is ms only when every phase's median is at least 1 ms.
    #[test]
    fn latency_unit_follows_the_fastest_phase() {
        let r = fixture::bench();
        assert_eq!(lat_unit(&r).name, "µs");
        let mut slow = r.clone();
        slow.phases.truncate(1);
        assert_eq!(lat_unit(&slow).name, "ms");
    }
}
