//! `storlab show`: print stored runs with their parameters and figures.

use super::common::{DbArgs, RunArgs};
use super::outfmt::{OutputArgs, TextFormat};
use crate::output::{self, Document, Reply};
use clap::Args;
use std::fmt::Write as _;
use storlab_types::format_latency_ns as format_ns;
use storlab_types::{DirStats, StoredRun, format_bytes, format_rate};

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (the stored records, a list of runs)")))]
pub struct ShowCommand {
    #[command(flatten)]
    runs: RunArgs,
    #[command(flatten)]
    out: OutputArgs<TextFormat>,
    #[command(flatten)]
    db: DbArgs,
}

impl ShowCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let store = self.db.open_existing()?;
        let runs = self.runs.load(&store)?;
        Ok(Reply::doc(Shown(runs), self.out.rendering()))
    }
}

/// The stored runs, as `show` prints them: each run's header and phase
/// table, or the records as a JSON list.
struct Shown(Vec<StoredRun>);

impl Document for Shown {
    fn human(&self) -> anyhow::Result<String> {
        let text: Vec<String> = self.0.iter().map(render).collect();
        Ok(text.join("\n"))
    }
    fn json(&self) -> anyhow::Result<String> {
        output::json_text(&self.0)
    }
}

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

    let mut t = crate::commands::common::list_table();
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
        s.push_str(&super::common::trim_table(&t.to_string()));
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
