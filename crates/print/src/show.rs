//! One stored run as `storlab show` prints it: its header lines (times,
//! tool, host, target, tags, note, command line, monitor) and its phase
//! table, then any warnings.

use std::fmt::Write as _;
use storlab_types::format_latency_ns as format_ns;
use storlab_types::{DirStats, StoredRun, format_bytes, format_rate};

fn status(run: &StoredRun) -> &'static str {
    if run.report.interrupted {
        "interrupted"
    } else {
        "finished"
    }
}

/// The human view of one run.
pub fn render(run: &StoredRun) -> String {
    let r = &run.report;
    let mut s = String::new();
    let _ = writeln!(s, "run {} · {} · {}", run.id, run.kind, status(run));
    let mut line = |k: &str, v: String| {
        if !v.trim().is_empty() {
            let _ = writeln!(s, "  {k:<9} {}", storlab_types::text::escape_controls(&v));
        }
    };
    line(
        "started",
        format!("{}   finished {}", r.started_at, r.finished_at),
    );
    if let Some(why) = &r.stop_reason {
        line("stopped", why.clone());
    }
    line("tool", format!("{} {}", r.tool.name, r.tool.version));
    let h = &r.host;
    let mut host = if h.hostname.is_empty() {
        "-".to_string()
    } else {
        h.hostname.clone()
    };
    if !h.kernel.is_empty() || h.cpu_count > 0 {
        host += &format!(
            " ({} {}, {}, {} CPUs {}, {} RAM)",
            h.os,
            h.kernel,
            h.arch,
            h.cpu_count,
            h.cpu_model,
            format_bytes(h.mem_total_bytes)
        );
    }
    line("host", host);
    let t = &r.target;
    let mut target = format!("{} ({})", t.path, t.kind);
    if let Some(fs) = &t.filesystem {
        target += &format!(", {fs}");
    }
    if let Some(dev) = t.device.as_ref().filter(|d| **d != t.path) {
        target += &format!(" on {dev}");
    }
    if let Some(m) = &t.device_model {
        target += &format!(" [{m}]");
    }
    line("target", target);
    let tags: Vec<String> = run.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    line("tags", tags.join(" "));
    line("note", run.note.clone().unwrap_or_default());
    line("command", r.command_line.join(" "));
    if let Some(m) = &r.monitor {
        line(
            "monitor",
            format!(
                "{} samples of {} every {}",
                m.samples.len(),
                m.devices.join(", "),
                format_ns(m.interval_ns as f64)
            ),
        );
    }
    s.push('\n');

    let mut t = crate::style::list_table();
    t.set_header([
        "PHASE", "RW", "BS", "JOBS", "QD", "ENGINE", "CACHE", "SECONDS", "MB/s", "IOPS", "P50",
        "P99", "P99.9", "",
    ]);
    for p in &r.phases {
        let bs: Vec<String> = p
            .params
            .bs
            .iter()
            .map(|b| format_bytes(b.bs_bytes).replace(' ', ""))
            .collect();
        let mut row = |name: String, d: &DirStats, flag: &str| {
            let lat = |f: fn(&storlab_types::LatencyStats) -> u64| {
                d.lat_ns
                    .map(|l| format_ns(f(&l) as f64))
                    .unwrap_or("-".into())
            };
            t.add_row([
                name,
                p.params.rw.to_string(),
                bs.join("+"),
                p.params.numjobs.to_string(),
                p.params.iodepth.to_string(),
                p.params.engine.as_str().to_string(),
                p.params.cache.as_str().to_string(),
                format!("{:.2}", p.elapsed_ns as f64 / 1e9),
                format_rate(d.bw_bytes_per_s)
                    .trim_end_matches(" MB/s")
                    .to_string(),
                format!("{:.0}", d.iops),
                lat(|l| l.p50),
                lat(|l| l.p99),
                lat(|l| l.p99_9),
                flag.to_string(),
            ]);
        };
        let flag = if p.interrupted { "cut short" } else { "" };
        row(
            storlab_types::text::escape_controls(&p.params.name).into_owned(),
            &p.total,
            flag,
        );
        if p.read.ops > 0 && p.write.ops > 0 {
            row("  read".into(), &p.read, "");
            row("  write".into(), &p.write, "");
        }
    }
    if r.phases.is_empty() {
        s.push_str("  (no phases saved)\n");
    } else {
        s.push_str(&crate::style::trim_table(&t.to_string()));
        if let Some(span) = r.phases.first().map(|p| &p.latency_span) {
            let _ = writeln!(s, "latency: {span}");
        }
    }
    let mut warnings: Vec<String> = r.warnings.clone();
    for p in &r.phases {
        warnings.extend(p.warnings.iter().map(|w| format!("{}: {w}", p.params.name)));
    }
    if !warnings.is_empty() {
        s.push_str("warnings:\n");
        for w in warnings {
            let _ = writeln!(s, "  - {w}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn stored() -> StoredRun {
        let mut report = fixture::bench();
        report.phases[0]
            .warnings
            .push("page cache may serve reads".into());
        StoredRun {
            id: 42,
            kind: "bench".into(),
            tags: [("raid".to_string(), "R6/12".to_string())].into(),
            note: Some("after firmware\u{7} update".into()),
            report,
        }
    }

    /// A fixed stored run: header lines (control characters escaped), the
    /// phase table with read and write rows of the mixed phase, the
    /// latency span and the warnings.
    #[test]
    fn show_of_a_fixed_run() {
        fixture::golden("show.txt", &render(&stored()));
    }

    /// A run without phases says so instead of an empty table.
    #[test]
    fn no_phases_no_table() {
        let mut run = stored();
        run.report.phases.clear();
        let s = render(&run);
        assert!(
            s.contains("  (no phases saved)\n") && !s.contains("PHASE"),
            "{s}"
        );
    }
}
