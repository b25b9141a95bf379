//! The text `storlab plan` prints: a design's report, predicted beside
//! measured, search results, and the number formats they share. Data in,
//! text out: the CLI chooses the table style ([`Style`]: its terminal
//! tables, or Markdown) and prints; the `csv_*` functions ([`csv_layout`], [`csv_search`], ...) give the same results as rows
//! in machine units.

use crate::against::{Against, mean_absolute_error};
use crate::catalog::Catalog;
use crate::design::DesignReport;
use crate::hardware::DriveMedia;
use crate::layout::Severity;
use crate::perf::{Prediction, Workload};
use crate::reliability::{HOURS_PER_YEAR, afr_from_mtbf};
use crate::search::{SearchResult, SearchSpec};
use crate::spec::thousands;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use storlab_types::Pattern;
use storlab_types::{format_bytes, format_rate};

/// What `storlab plan layout --help` says about the performance model.
pub const MODEL_HELP: &str = "\
The performance model: for each workload, what one request costs every part, and what
each part could deliver alone; the smallest is the prediction, the part that binds.
  drives        seek + half a revolution (random) or the zone-average media rate
                (streaming), plus a per-command overhead (0.1 ms on disks unless the
                catalog or a calibration says otherwise): bigger chunks stream faster
  RAID work     full-stripe writes cost (D+P)/D; partial stripes read-modify-write or
                reconstruct-write, whichever is cheaper; 'full-stripe (cache)' = a
                write-back cache gathers a sequential stream into full stripes
  controller    throughput, IOPS, read path and write path (parity engine, cache,
                cache mirroring) where the catalog gives them; RAID 6 computes P and Q
  links         per direction (full duplex; a parallel SCSI bus is shared), after
                protocol efficiency (iSCSI reads about 0.88 of the line rate, writes less)
  concurrency   Little's law: at most (--streams x --qd) / latency of one request
  buffered      --mix-buffered: reads reach the device as 128 KiB read-ahead windows,
                writes as 512 KiB write-back requests, two streams on every spindle
Compare with your own runs: --against RUN. Fit a device to them: storlab plan calibrate.";

/// How the tables are drawn: the terminal's table style (the CLI's), or
/// Markdown (`--output-format md`: pipe tables, prose lines kept apart).
#[derive(Clone, Copy)]
pub struct Style {
    table: fn() -> Table,
    markdown: bool,
}

impl Style {
    /// Tables in the CLI's style, wrapped to the width each section asks.
    pub fn terminal(table: fn() -> Table) -> Style {
        Style {
            table,
            markdown: false,
        }
    }

    /// Markdown: pipe tables, never wrapped.
    pub fn markdown() -> Style {
        Style {
            table: Table::new,
            markdown: true,
        }
    }

    pub(crate) fn table(&self) -> Table {
        (self.table)()
    }

    /// Wrap a wide table to `width` columns (terminal only).
    fn wide(&self, t: &mut Table, width: u16) {
        if !self.markdown {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(width);
        }
    }

    /// A table as text.
    pub(crate) fn show(&self, t: &Table) -> String {
        if !self.markdown {
            return t.to_string();
        }
        let row = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
        let cells = |r: &comfy_table::Row| r.cell_iter().map(|c| md_cell(&c.content())).collect();
        let mut lines = Vec::new();
        if let Some(h) = t.header() {
            let h: Vec<String> = cells(h);
            let rule = vec!["---".to_string(); h.len()];
            lines.push(row(h));
            lines.push(row(rule));
        }
        lines.extend(t.row_iter().map(|r| row(cells(r))));
        format!("\n{}\n", lines.join("\n"))
    }

    /// The whole text: in Markdown every prose line is a line of its own
    /// (a hard break) and tables stand apart.
    fn finish(&self, text: String) -> String {
        if !self.markdown {
            return text;
        }
        let mut out = String::new();
        for line in text.lines() {
            // Indented prose would be a code block: lines start flush.
            let l = line.trim();
            if l.is_empty() || l.starts_with('|') {
                out.push_str(l);
            } else {
                out.push_str(&md_text(l));
                out.push_str("  ");
            }
            out.push('\n');
        }
        // At most one blank line in a row.
        while out.contains("\n\n\n") {
            out = out.replace("\n\n\n", "\n\n");
        }
        out.trim_start_matches('\n').to_string()
    }
}

/// A Markdown table cell: backslashes and pipes escaped, line breaks as
/// spaces.
fn md_cell(s: &str) -> String {
    md_text(&s.replace(['\n', '\r'], " ")).replace('|', "\\|")
}

/// Markdown prose: characters that would start emphasis or code escaped.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub fn render_layout(r: &DesignReport, st: Style) -> String {
    let g = &r.geometry;
    let hw = &r.design.hardware;
    let mut out = String::new();
    let notes = |v: &[String]| {
        if v.is_empty() {
            String::new()
        } else {
            format!(" ({})", v.join(", "))
        }
    };
    let capacity = if hw.drive.overrides.iter().any(|o| o.starts_with("capacity")) {
        String::new()
    } else {
        format!(" ({:.2} TB)", hw.drive.capacity_bytes as f64 / 1e12)
    };
    out.push_str(&format!(
        "storlab plan: {} on {} x {}{}{capacity}, {} x {}{}{}\n\n",
        g.notation,
        g.drives,
        hw.drive.name,
        notes(&hw.drive.overrides),
        hw.controllers.max(1),
        hw.controller.name,
        notes(&hw.controller.overrides),
        if r.design.hot_spares > 0 {
            format!(", {} hot spare(s)", r.design.hot_spares)
        } else {
            String::new()
        }
    ));
    out.push_str(&geometry_table(r, st));
    out.push_str(&reliability_table(r, st));
    out.push_str(&render_performance(&r.performance, &r.design.workloads, st));
    out.push('\n');

    if let Some(s) = &r.sizing {
        let mut t = st.table();
        t.set_header(vec![
            format!(
                "sizing: {} cores x {} MB/s = {}",
                s.cores,
                s.mb_per_s_per_core,
                format_rate(s.required_bytes_per_s)
            ),
            "predicted".to_string(),
            "vs required".to_string(),
        ]);
        for c in &s.checks {
            t.add_row(vec![
                c.workload.clone(),
                format_rate(c.predicted_bytes_per_s),
                format!("{:.2}x {}", c.ratio, if c.meets { "ok" } else { "SHORT" }),
            ]);
        }
        out.push_str(&st.show(&t));
        out.push_str(&format!("\nverdict: {}\n", s.verdict));
        out.push_str("(75 MB/s per core is a published planning figure for analytics; workloads range from about 25 to 135 MB/s per core: 25, 50, 75, 135)\n\n");
    }
    if let Some(e) = &r.enclosures {
        out.push_str(&format!(
            "enclosures: {} x {} ({} of {} bays: {} drives{})\n\n",
            e.count,
            e.model,
            e.data_drives + e.hot_spares,
            e.bays,
            e.data_drives,
            if e.hot_spares > 0 {
                format!(" + {} hot spare(s)", e.hot_spares)
            } else {
                String::new()
            }
        ));
    }
    if let Some(c) = &r.cost {
        out.push_str(&format!(
            "cost: {} {} ({} drives, {} enclosures), {:.1} {} per usable TB\n\n",
            thousands(c.total.round() as u64),
            c.currency,
            c.drives,
            c.enclosures,
            c.per_usable_tb,
            c.currency
        ));
    }
    for f in &r.findings {
        let tag = match f.severity {
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Ok => "ok",
        };
        out.push_str(&format!("{tag}: {}\n", f.message));
    }
    st.finish(out)
}

/// The layout section: level, groups, chunk and stripe, capacity.
fn geometry_table(r: &DesignReport, st: Style) -> String {
    let g = &r.geometry;
    let mut out = String::new();
    let mut t = st.table();
    t.set_header(vec!["layout", ""]);
    let agg = match g.aggregation {
        crate::Aggregation::Single => "one group",
        crate::Aggregation::Controller => "the controller stripes over the groups",
        crate::Aggregation::Lvm => "LVM stripes over the groups",
    };
    t.add_row(vec!["level".to_string(), format!("{} ({agg})", g.level)]);
    t.add_row(vec![
        "groups".to_string(),
        format!(
            "{} x {} drives ({} data + {} redundant)",
            g.groups, g.span, g.data_drives_per_group, g.parity_drives_per_group
        ),
    ]);
    t.add_row(vec![
        "chunk / full stripe".to_string(),
        format!(
            "{} per drive / {} per group{}",
            format_bytes(g.chunk_bytes),
            format_bytes(g.group_full_stripe_bytes),
            g.inter_group_stripe_bytes
                .map(|s| format!(", {} across groups", format_bytes(s)))
                .unwrap_or_default()
        ),
    ]);
    t.add_row(vec!["raw".to_string(), tb(g.raw_bytes)]);
    t.add_row(vec![
        "usable".to_string(),
        format!(
            "{}, {:.1}% of raw (overhead {:.1}%)",
            tb(g.usable_bytes),
            (1.0 - g.overhead_fraction) * 100.0,
            g.overhead_fraction * 100.0
        ),
    ]);
    t.add_row(vec![
        "failures survived".to_string(),
        format!(
            "{} per group; {} in the worst case, up to {} if spread over groups",
            g.failures_survived_per_group,
            g.failures_survived_worst_case,
            g.failures_survived_best_case
        ),
    ]);
    out.push_str(&st.show(&t));
    out.push_str("\n\n");

    out
}

/// The reliability section: drive, repair, read errors, MTTDL, P(loss).
fn reliability_table(r: &DesignReport, st: Style) -> String {
    let g = &r.geometry;
    let hw = &r.design.hardware;
    let rel = &r.reliability;
    let mut out = String::new();
    let mut t = st.table();
    t.set_header(vec!["reliability", ""]);
    t.add_row(vec![
        "drive".to_string(),
        format!(
            "MTBF {} h (AFR {:.2}%), read errors {:.0e} per bit, {} sectors",
            thousands(rel.drive_mtbf_hours.round() as u64),
            afr_from_mtbf(rel.drive_mtbf_hours) * 100.0,
            hw.drive.ber_per_bit,
            format_bytes(hw.drive.sector_bytes)
        ),
    ]);
    t.add_row(vec![
        "repair".to_string(),
        format!(
            "{:.1} h rebuild{} + {:.1} h until it starts{}",
            rel.rebuild_hours,
            if hw.drive.rebuild_hours.is_some() {
                " (given)".to_string()
            } else {
                format!(
                    " ({:.2} TB at {})",
                    hw.drive.capacity_bytes as f64 / 1e12,
                    format_rate(hw.drive.rebuild_bytes_per_s)
                )
            },
            rel.replace_delay_hours,
            if r.design.hot_spares > 0 {
                " (hot spare)"
            } else {
                " (replacement)"
            }
        ),
    ]);
    if rel.chain.tolerance > 0 {
        t.add_row(vec![
            "read error in a critical rebuild".to_string(),
            format!(
                "{} chance (reading {:.1} TB with no redundancy left); {:.0}% of the loss risk",
                pct(rel.ure_probability_per_critical_rebuild),
                rel.critical_rebuild_read_bytes / 1e12,
                rel.ure_share_of_loss * 100.0
            ),
        ]);
    }
    t.add_row(vec![
        "MTTDL per group".to_string(),
        format!(
            "{} (numerical solution of the chain: {}; without read errors: {})",
            years(rel.group_mttdl_hours),
            years(rel.group_mttdl_numerical_hours),
            years(rel.group_mttdl_without_ure_hours)
        ),
    ]);
    t.add_row(vec![
        "MTTDL of the volume".to_string(),
        format!(
            "{} ({} groups; any group lost loses the volume)",
            years(rel.volume_mttdl_hours),
            g.groups
        ),
    ]);
    t.add_row(vec![
        format!("P(loss) in {}", years(rel.mission_hours)),
        if rel.fleet > 1 {
            format!(
                "{} for one volume (transient solution: {}); {} for a fleet of {} ({:.3} losses expected)",
                prob(rel.volume_loss_probability),
                prob(rel.volume_loss_probability_numerical),
                prob(rel.fleet_loss_probability),
                rel.fleet,
                rel.fleet_expected_losses
            )
        } else {
            format!(
                "{} for one volume (transient solution of the chain: {})",
                prob(rel.volume_loss_probability),
                prob(rel.volume_loss_probability_numerical)
            )
        },
    ]);
    out.push_str(&st.show(&t));
    out.push_str("\n\n");

    out
}

fn cell_for(p: &Prediction, iops: f64, bytes: f64) -> String {
    match p.pattern {
        Pattern::RandRead | Pattern::RandWrite | Pattern::Mix { .. } => {
            format!("{} IOPS", thousands(iops.round() as u64))
        }
        _ => format_rate(bytes),
    }
}

/// Headroom over the prediction: "+29%" below double, "4.6x" above.
fn headroom(h: f64) -> String {
    if h < 1.0 {
        format!("+{:.0}%", h * 100.0)
    } else {
        format!("{:.1}x", h + 1.0)
    }
}

pub fn render_performance(preds: &[Prediction], workloads: &[Workload], st: Style) -> String {
    let mut out = String::new();
    let mut t = st.table();
    t.set_header(vec![
        "workload",
        "predicted",
        "MB/s",
        "bound by",
        "write path",
        "next limit (headroom)",
    ]);
    for p in preds {
        let next = p
            .parts
            .iter()
            .filter(|x| !x.binds)
            .min_by(|a, b| a.headroom.total_cmp(&b.headroom))
            .map(|x| format!("{} ({})", x.name, headroom(x.headroom)))
            .unwrap_or_default();
        // An upper bound (a part without a published limit could bind
        // below it) is shown as one: "≤ 2.73 GB/s".
        let le = if p.bound { "≤ " } else { "" };
        t.add_row(vec![
            p.workload.clone(),
            format!("{le}{}", cell_for(p, p.iops, p.bytes_per_s)),
            format!("{le}{:.1}", p.bytes_per_s / 1e6),
            p.binding.clone(),
            p.write_path.clone().unwrap_or_else(|| "-".into()),
            next,
        ]);
    }
    out.push_str(&st.show(&t));
    out.push('\n');
    for p in preds {
        out.push_str(&format!("  {}: {}\n", p.workload, p.explanation));
        for u in &p.unknowns {
            out.push_str(&format!("    upper bound only: {u}\n"));
        }
    }
    out.push('\n');
    // Every part against every workload: what it alone could do.
    let mut t = st.table();
    let mut header = vec!["part: what it alone could do".to_string()];
    header.extend(preds.iter().map(|p| p.workload.clone()));
    t.set_header(header);
    st.wide(&mut t, 160);
    // Workloads need not have the same parts (a write path binds only
    // writes, a parity engine only parity writes): one row per part name,
    // '-' where a part plays no role.
    let mut names: Vec<&str> = Vec::new();
    for p in preds {
        for x in &p.parts {
            if !names.contains(&x.name.as_str()) {
                names.push(&x.name);
            }
        }
    }
    for name in names {
        let mut row = vec![name.to_string()];
        for p in preds {
            row.push(match p.parts.iter().find(|x| x.name == name) {
                Some(x) if x.binds => {
                    format!("{} << binds", cell_for(p, x.max_iops, x.max_bytes_per_s))
                }
                Some(x) => format!(
                    "{} ({})",
                    cell_for(p, x.max_iops, x.max_bytes_per_s),
                    headroom(x.headroom)
                ),
                None => "-".to_string(),
            });
        }
        t.add_row(row);
    }
    for i in 1..=preds.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    out.push_str(&st.show(&t));
    let inflight = workloads.first().map_or(String::new(), |w| {
        format!(
            "{} stream{} x QD {}",
            w.streams,
            if w.streams == 1 { "" } else { "s" },
            w.qd
        )
    });
    out.push_str(&format!(
        "\n(each workload keeps {inflight} in flight (--streams, --qd); what each part means: storlab plan layout --help)\n"
    ));
    out
}

/// Predicted beside measured, one row per phase: random I/O in IOPS at
/// the queue depth it ran with (jobs x iodepth), streaming in MB/s.
pub fn render_against(rows: &[Against], st: Style) -> String {
    let mut t = st.table();
    st.wide(&mut t, 170);
    t.set_header(vec![
        "run / phase",
        "workload",
        "in flight",
        "measured",
        "predicted",
        "error",
        "what the model thinks binds",
    ]);
    for r in rows {
        let le = if r.bound { "≤ " } else { "" };
        let (measured, predicted) = if r.random {
            (
                format!("{} IOPS", thousands(r.measured_iops.round() as u64)),
                r.predicted_iops.map_or("-".to_string(), |p| {
                    format!("{le}{} IOPS", thousands(p.round() as u64))
                }),
            )
        } else {
            (
                format!("{:.1} MB/s", r.measured_bytes_per_s / 1e6),
                r.predicted_bytes_per_s
                    .map_or("-".to_string(), |p| format!("{le}{:.1} MB/s", p / 1e6)),
            )
        };
        t.add_row(vec![
            format!("{} / {}", r.run, r.phase),
            r.workload.clone(),
            format!("{} x QD {}", r.jobs, r.iodepth),
            measured,
            predicted,
            r.error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0)),
            if r.bound {
                format!(
                    "{}; upper bound only: {}",
                    r.explanation,
                    r.unknowns.join("; ")
                )
            } else {
                r.explanation.clone()
            },
        ]);
    }
    let mut out = st.show(&t);
    out.push('\n');
    if let Some((mae, n)) = mean_absolute_error(rows) {
        out.push_str(&format!(
            "mean absolute error {:.1}% over {n} phase(s); error = (predicted - measured) / measured\n",
            mae * 100.0,
        ));
    }
    if rows.iter().any(|r| r.random) {
        out.push_str(
            "random I/O in IOPS at the queue depth it ran with (jobs x QD); streaming in MB/s\n",
        );
    }
    st.finish(out)
}

pub fn render_search(r: &SearchResult, spec: &SearchSpec, top: usize, st: Style) -> String {
    let mut out = format!(
        "storlab plan search: {} drives of {} ({:.2} TB), {}; {} designs evaluated, {} meet the constraints, {} are Pareto-optimal\n\
         objectives: usable capacity, volume MTTDL, {}, {}{}\n\n",
        if spec.space.min_drives == spec.space.max_drives {
            spec.space.min_drives.to_string()
        } else {
            format!("{}..{}", spec.space.min_drives, spec.space.max_drives)
        },
        spec.hardware.drive.name,
        spec.hardware.drive.capacity_bytes as f64 / 1e12,
        spec.hardware.controller.name,
        r.evaluated,
        r.feasible,
        r.pareto.len(),
        r.throughput_workload,
        r.iops_workload,
        if r.pareto.iter().all(|c| c.cost.is_some()) && !r.pareto.is_empty() {
            ", cost"
        } else {
            ""
        }
    );
    let mut t = st.table();
    let with_cost = r.pareto.iter().all(|c| c.cost.is_some()) && !r.pareto.is_empty();
    let mut header = vec![
        "layout",
        "ctrl",
        "usable",
        "MTTDL",
        "P(loss)",
        "throughput",
        "IOPS",
    ];
    let currency = r
        .pareto
        .first()
        .and_then(|c| c.cost.as_ref())
        .map_or(String::new(), |c| c.currency.clone());
    let cost_header = format!("cost ({currency})");
    if with_cost {
        header.push(&cost_header);
    }
    header.push("trade-off");
    t.set_header(header);
    st.wide(&mut t, 170);
    for c in r.pareto.iter().take(top) {
        let mut row = vec![
            c.layout.clone(),
            c.controllers.to_string(),
            format!("{:.0} TB", c.usable_bytes as f64 / 1e12),
            years(c.volume_mttdl_hours),
            prob(c.loss_probability),
            format!(
                "{} ({})",
                format_rate(c.throughput_bytes_per_s),
                short_part(&c.throughput_binding)
            ),
            format!(
                "{} ({})",
                thousands(c.iops.round() as u64),
                short_part(&c.iops_binding)
            ),
        ];
        if with_cost {
            row.push(
                c.cost
                    .as_ref()
                    .map_or(String::new(), |k| thousands(k.total.round() as u64)),
            );
        }
        row.push(c.tradeoff.clone());
        t.add_row(row);
    }
    out.push_str(&st.show(&t));
    out.push('\n');
    if r.pareto.len() > top {
        out.push_str(&format!(
            "({} more Pareto-optimal designs; --top {} or --output-format json shows them)\n",
            r.pareto.len() - top,
            r.pareto.len()
        ));
    }
    out.push_str(&format!(
        "P(loss) over {}; throughput and IOPS in parentheses: the part that binds\n",
        years(spec.reliability.mission_hours)
    ));
    if let Some(m) = spec.constraints.max_loss_probability {
        out.push_str(&format!(
            "designs with P(loss) above {} over the mission are left out (--max-loss; 100% keeps them all)\n",
            prob(m)
        ));
    }
    if r.pruned_trivial > 0 {
        out.push_str(&format!(
            "{} more design{} differ{} from one shown only trivially (behind on one objective, ahead by no more than 1% capacity, 10% MTTDL, 2% throughput or IOPS, 1% cost) and {} left out\n",
            r.pruned_trivial,
            if r.pruned_trivial == 1 { "" } else { "s" },
            if r.pruned_trivial == 1 { "s" } else { "" },
            if r.pruned_trivial == 1 { "is" } else { "are" },
        ));
    }
    if r.pareto.iter().any(|c| !c.ties.is_empty()) {
        out.push_str("\"ties with\": designs of another shape within 1% capacity, 10% MTTDL, 2% throughput and IOPS and 1% cost on every objective: the same trade-off; choose by what the model does not weigh\n");
    }
    st.finish(out)
}

fn short_part(p: &str) -> String {
    p.split(" (").next().unwrap_or(p).to_string()
}

/// Years with sensible precision: "3.2 years", "1,234 years", "2.1e9 years".
pub fn years(h: f64) -> String {
    let y = h / HOURS_PER_YEAR;
    if !y.is_finite() {
        "never".to_string()
    } else if y < 1.0 {
        format!("{:.0} days", h / 24.0)
    } else if y < 100.0 {
        format!("{y:.1} years")
    } else if y < 1e6 {
        format!("{} years", thousands(y.round() as u64))
    } else {
        format!("{y:.2e} years")
    }
}

/// A probability of data loss, in the one format every table uses:
/// scientific notation with three significant digits ("1.52e-4").
pub fn prob(p: f64) -> String {
    if p <= 0.0 {
        "0".to_string()
    } else {
        format!("{p:.2e}")
    }
}

/// A chance that is not a P(loss) (e.g. a read error in one rebuild): percent.
pub fn pct(p: f64) -> String {
    if p < 1e-4 {
        format!("{:.2}%", p * 100.0)
    } else {
        format!("{:.1}%", p * 100.0)
    }
}

pub fn tb(b: u64) -> String {
    // Capacities are decimal TB everywhere (as drive labels are); binary
    // units are kept for chunk and stripe sizes, which are powers of two.
    format!("{:.1} TB", b as f64 / 1e12)
}

/// One section of the catalog listing: the shared table style, wrapped to
/// 160 columns.
fn section(header: Vec<&str>, st: Style) -> Table {
    let mut t = st.table();
    st.wide(&mut t, 160);
    t.set_header(header);
    t
}

/// A rate that may be absent from the catalog.
fn opt_rate(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), format_rate)
}

/// `storlab plan catalog`: drives, controllers, enclosures and links, each
/// with its source.
pub fn render_catalog(cat: &Catalog, st: Style) -> String {
    let mut out = String::new();
    let mut t = section(
        vec![
            "drive",
            "capacity",
            "performance",
            "MTBF (AFR)",
            "BER",
            "source",
        ],
        st,
    );
    for e in cat.drives() {
        let Ok(d) = cat.drive(e.name.get_ref()) else {
            continue;
        };
        let perf = match &d.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => format!(
                "{rpm:.0} rpm, seek {:.1} ms, {}",
                avg_seek_s * 1e3,
                format_rate(*seq_bytes_per_s)
            ),
            DriveMedia::Ssd {
                read_iops,
                write_iops,
                seq_read_bytes_per_s,
                seq_write_bytes_per_s,
            } => format!(
                "SSD {}/{} IOPS, {}/{}",
                thousands(*read_iops as u64),
                thousands(*write_iops as u64),
                format_rate(*seq_read_bytes_per_s),
                format_rate(*seq_write_bytes_per_s)
            ),
        };
        t.add_row(vec![
            d.name.clone(),
            format!("{:.2} TB", d.capacity_bytes as f64 / 1e12),
            perf,
            format!(
                "{} h ({:.2}%)",
                thousands(d.mtbf_hours.round() as u64),
                afr_from_mtbf(d.mtbf_hours) * 100.0
            ),
            format!("{:.0e}", d.ber_per_bit),
            e.source.clone(),
        ]);
    }
    out.push_str(&st.show(&t));
    out.push_str("\n\n");
    let mut t = section(
        vec![
            "controller",
            "back-end",
            "host",
            "write-back",
            "limit read / write",
            "source",
        ],
        st,
    );
    for e in cat.controllers() {
        let Ok(c) = cat.controller(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            c.name.clone(),
            format!(
                "{} ({})",
                c.backend.name,
                format_rate(c.backend.bytes_per_s)
            ),
            format!("{} ({})", c.host.name, format_rate(c.host.bytes_per_s)),
            if c.write_back { "yes" } else { "no" }.to_string(),
            format!(
                "{} / {}",
                opt_rate(c.max_read_bytes_per_s.or(c.max_bytes_per_s)),
                opt_rate(c.max_write_bytes_per_s.or(c.max_bytes_per_s))
            ),
            e.source.clone(),
        ]);
    }
    out.push_str(&st.show(&t));
    out.push_str("\n\n");
    let mut t = section(vec!["enclosure", "slots", "uplink", "source"], st);
    for e in cat.enclosures() {
        let Ok(c) = cat.enclosure(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            c.name.clone(),
            c.slots.to_string(),
            format!("{} ({})", c.uplink.name, format_rate(c.uplink.bytes_per_s)),
            e.source.clone(),
        ]);
    }
    out.push_str(&st.show(&t));
    out.push_str("\n\n");
    let mut t = section(
        vec![
            "link (add x<N> for lanes/ports)",
            "usable per lane, read / write",
            "source",
        ],
        st,
    );
    for e in cat.links() {
        let Ok(l) = cat.link(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            format!(
                "{}{}",
                l.name,
                if l.shared_bus { " (shared bus)" } else { "" }
            ),
            format!(
                "{} / {}",
                format_rate(l.bytes_per_s),
                format_rate(l.write_rate())
            ),
            e.source.clone(),
        ]);
    }
    out.push_str(&st.show(&t));
    out.push('\n');
    st.finish(out)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("not identified".to_string(), f)
}

/// What `storlab plan calibrate` fitted, how well, and where it wrote it.
pub fn render_calibration(
    cal: &crate::calibrate::Calibration,
    skipped: &[String],
    path: &std::path::Path,
    kind: &str,
    st: Style,
) -> String {
    let mut out = format!("storlab plan calibrate: {}\n\n", cal.name);
    let mut t = st.table();
    t.set_header(vec!["fitted", "read", "write"]);
    t.add_row(vec![
        "streaming rate (latency = overhead + size / rate)".to_string(),
        opt(cal.read.rate_bytes_per_s, format_rate),
        opt(cal.write.rate_bytes_per_s, format_rate),
    ]);
    t.add_row(vec![
        "streaming capacity (deepest queue measured)".to_string(),
        opt(cal.read.capacity_bytes_per_s, format_rate),
        opt(cal.write.capacity_bytes_per_s, format_rate),
    ]);
    t.add_row(vec![
        "per-command overhead".to_string(),
        opt(cal.read.cmd_overhead_s, |o| format!("{:.3} ms", o * 1e3)),
        opt(cal.write.cmd_overhead_s, |o| format!("{:.3} ms", o * 1e3)),
    ]);
    t.add_row(vec![
        "random IOPS".to_string(),
        opt(cal.read.iops, |i| thousands(i.round() as u64)),
        opt(cal.write.iops, |i| thousands(i.round() as u64)),
    ]);
    let ms = |o: f64| format!("{:.3} ms", o * 1e3);
    t.add_row(vec![
        "random request time (1/IOPS = fixed + size / rate), fixed".to_string(),
        opt(cal.read.random_op_s, ms),
        opt(cal.write.random_op_s, ms),
    ]);
    t.add_row(vec![
        "random request time, transfer rate".to_string(),
        opt(cal.read.random_rate_bytes_per_s, format_rate),
        opt(cal.write.random_rate_bytes_per_s, format_rate),
    ]);
    t.add_row(vec![
        "random latency (shallowest queue), fixed".to_string(),
        opt(cal.read.random_latency_s, ms),
        opt(cal.write.random_latency_s, ms),
    ]);
    out.push_str(&st.show(&t));
    out.push_str("\n\n");
    let mut t = st.table();
    t.set_header(vec!["phase", "measured IOPS", "fitted IOPS", "error", ""]);
    for p in &cal.points {
        t.add_row(vec![
            p.label.clone(),
            format!("{:.0}", p.measured_iops),
            p.predicted_iops
                .map_or("-".to_string(), |x| format!("{x:.0}")),
            p.error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0)),
            if p.fitted {
                "fitted"
            } else if p.held_out {
                "held out: predicted"
            } else {
                "repeat (the median is fitted)"
            }
            .to_string(),
        ]);
    }
    out.push_str(&st.show(&t));
    out.push('\n');
    if let Some(e) = cal.fit_error {
        out.push_str(&format!(
            "fit error (mean |error| of the fitted points): {:.1}%\n",
            e * 100.0
        ));
    }
    if let Some(e) = cal.held_out_error {
        out.push_str(&format!(
            "held-out error (points the fit did not see): {:.1}%\n",
            e * 100.0
        ));
    }
    for s in &cal.not_identified {
        out.push_str(&format!("not identified: {s}\n"));
    }
    for s in skipped {
        out.push_str(&format!("skipped: {s}\n"));
    }
    out.push_str(&format!(
        "wrote {}; use it with --catalog {} --{} {}\n",
        path.display(),
        path.display(),
        kind,
        cal.name
    ));
    st.finish(out)
}

/// CSV text: a header line, then one line per row (fields quoted where
/// needed).
fn csv_table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut out = storlab_types::csv::row(header.iter().copied());
    out.push('\n');
    for r in rows {
        out.push_str(&storlab_types::csv::row(r));
        out.push('\n');
    }
    out
}

fn opt_num(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// `plan layout --output-format csv`: one row per predicted workload, with
/// the design's capacity, reliability and cost, in machine units (bytes,
/// bytes/s, hours; `upper_bound` = the figure is a bound, not a
/// prediction).
pub fn csv_layout(r: &DesignReport) -> String {
    let g = &r.geometry;
    let rel = &r.reliability;
    let rows = r.performance.iter().map(|p| {
        vec![
            g.notation.clone(),
            g.drives.to_string(),
            r.design.hot_spares.to_string(),
            g.usable_bytes.to_string(),
            rel.volume_mttdl_hours.to_string(),
            rel.volume_loss_probability.to_string(),
            p.workload.clone(),
            p.request_bytes.to_string(),
            p.bytes_per_s.to_string(),
            p.iops.to_string(),
            p.bound.to_string(),
            p.binding.clone(),
            opt_num(r.cost.as_ref().map(|c| c.total)),
            r.cost
                .as_ref()
                .map_or(String::new(), |c| c.currency.clone()),
        ]
    });
    csv_table(
        &[
            "layout",
            "drives",
            "hot_spares",
            "usable_bytes",
            "volume_mttdl_hours",
            "loss_probability",
            "workload",
            "request_bytes",
            "predicted_bytes_per_s",
            "predicted_iops",
            "upper_bound",
            "bound_by",
            "cost",
            "currency",
        ],
        rows,
    )
}

/// `plan layout --against ... --output-format csv`: one row per measured
/// phase, measured and predicted, with the jobs and queue depth it ran.
pub fn csv_against(rows: &[Against]) -> String {
    let rows = rows.iter().map(|r| {
        vec![
            r.run.to_string(),
            r.phase.clone(),
            r.workload.clone(),
            r.jobs.to_string(),
            r.iodepth.to_string(),
            r.random.to_string(),
            r.measured_bytes_per_s.to_string(),
            opt_num(r.predicted_bytes_per_s),
            r.measured_iops.to_string(),
            opt_num(r.predicted_iops),
            opt_num(r.error),
            r.bound.to_string(),
            r.explanation.clone(),
        ]
    });
    csv_table(
        &[
            "run",
            "phase",
            "workload",
            "jobs",
            "iodepth",
            "random",
            "measured_bytes_per_s",
            "predicted_bytes_per_s",
            "measured_iops",
            "predicted_iops",
            "error",
            "upper_bound",
            "explanation",
        ],
        rows,
    )
}

/// `plan search --output-format csv`: every Pareto-optimal design (not
/// only `--top`), in machine units.
pub fn csv_search(r: &SearchResult) -> String {
    let rows = r.pareto.iter().map(|c| {
        vec![
            c.layout.clone(),
            c.controllers.to_string(),
            c.drives.to_string(),
            c.usable_bytes.to_string(),
            c.volume_mttdl_hours.to_string(),
            c.loss_probability.to_string(),
            c.throughput_bytes_per_s.to_string(),
            c.throughput_binding.clone(),
            c.iops.to_string(),
            c.iops_binding.clone(),
            opt_num(c.cost.as_ref().map(|k| k.total)),
            c.cost
                .as_ref()
                .map_or(String::new(), |k| k.currency.clone()),
            c.ties.join("; "),
            c.tradeoff.clone(),
        ]
    });
    csv_table(
        &[
            "layout",
            "controllers",
            "drives",
            "usable_bytes",
            "volume_mttdl_hours",
            "loss_probability",
            "throughput_bytes_per_s",
            "throughput_bound_by",
            "iops",
            "iops_bound_by",
            "cost",
            "currency",
            "ties",
            "tradeoff",
        ],
        rows,
    )
}

/// `plan calibrate --output-format csv`: every point against the fit.
pub fn csv_calibration(cal: &crate::calibrate::Calibration) -> String {
    let rows = cal.points.iter().map(|p| {
        vec![
            p.label.clone(),
            p.measured_iops.to_string(),
            opt_num(p.predicted_iops),
            opt_num(p.error),
            if p.fitted {
                "fitted"
            } else if p.held_out {
                "held out"
            } else {
                "repeat"
            }
            .to_string(),
        ]
    });
    csv_table(
        &["phase", "measured_iops", "fitted_iops", "error", "role"],
        rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DesignSpec;

    fn report(args: &str) -> DesignReport {
        let spec = DesignSpec::parse(args).unwrap();
        let design = spec.design(&Catalog::builtin()).unwrap();
        crate::evaluate(&design).unwrap()
    }

    /// Markdown: pipe tables with a rule under the header, no terminal
    /// drawing, cells that cannot break the table, prose not indented into
    /// code blocks.
    #[test]
    fn markdown_is_pipe_tables_and_flush_prose() {
        let md = render_layout(&report("R60/12/48 --cores 400"), Style::markdown());
        assert!(md.contains("| workload | predicted | MB/s | bound by | write path | next limit (headroom) |\n| --- | --- | --- | --- | --- | --- |"), "{md}");
        assert!(!md.contains('│') && !md.contains('┆') && !md.contains('═'));
        assert!(!md.lines().any(|l| l.starts_with(' ')), "{md}");
        assert!(md.contains("verdict: SHORT of 400 cores"), "{md}");
        assert_eq!(md_cell("a|b\nc"), "a\\|b c");
        assert_eq!(md_text("lvm(4*R6/12)"), "lvm(4\\*R6/12)");
    }

    #[test]
    fn csv_has_one_row_per_workload_in_machine_units() {
        let r = report("R6/12 --drive exos-x18-18tb");
        let csv = csv_layout(&r);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + r.performance.len());
        assert!(lines[0].starts_with("layout,drives,hot_spares,usable_bytes,"));
        assert!(
            lines[1].starts_with("R6/12,12,0,180000000000000,"),
            "{}",
            lines[1]
        );
    }

    /// Costs carry their currency; parts in two currencies are not added.
    #[test]
    fn a_cost_names_its_currency_and_mixed_currencies_give_none() {
        let mut cat = Catalog::builtin();
        cat.extend(
            "p.toml",
            "[override.drive.\"exos-x18-18tb\"]\nprice = 300\n[override.controller.\"megaraid-9361-8i\"]\nprice = 900\n",
        )
        .unwrap();
        let spec = DesignSpec::parse("R6/12").unwrap();
        let r = crate::evaluate(&spec.design(&cat).unwrap()).unwrap();
        let c = r.cost.as_ref().unwrap();
        assert_eq!((c.total, c.currency.as_str()), (4500.0, "USD"));
        assert!(render_layout(&r, Style::markdown()).contains("cost: 4,500 USD"));
        cat.extend(
            "q.toml",
            "[override.controller.\"megaraid-9361-8i\"]\ncurrency = \"EUR\"\n",
        )
        .unwrap();
        let r = crate::evaluate(&spec.design(&cat).unwrap()).unwrap();
        assert!(r.cost.is_none());
        assert!(
            r.findings
                .iter()
                .any(|f| f.message.contains("drive USD, controller EUR"))
        );
    }
}
