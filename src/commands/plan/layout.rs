//! `storlab plan layout`: one design, its tables or JSON.

use super::*;

/// What `storlab plan layout --help` says about the performance model.
pub(super) const MODEL_HELP: &str = "\
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

#[derive(Args, Debug)]
pub(super) struct LayoutArgs {
    /// Layout: R<level>/<span>[/<drives>][,chunk=SIZE][,stripe=SIZE] or lvm(<groups>*R<level>/<span>, stripe=SIZE),
    /// e.g. R60/12/48, R6/12, R10/2/8, lvm(4*R5/6, stripe=1M)
    #[arg(value_name = "LAYOUT")]
    layout: String,
    /// Chunk (strip) size inside a group, overriding the layout's
    #[arg(long, value_name = "SIZE")]
    chunk: Option<String>,
    /// Stripe size across groups (R50/R60 or LVM), overriding the layout's
    #[arg(long, value_name = "SIZE")]
    stripe: Option<String>,
    /// Controllers the groups are spread over (needs an lvm(...) layout)
    #[arg(long, default_value_t = 1)]
    controllers: u32,
    /// File system stripe unit to check for alignment (XFS su), with --fs-sw
    #[arg(long, value_name = "SIZE", requires = "fs_sw")]
    fs_su: Option<String>,
    /// File system stripe width in units (XFS sw)
    #[arg(long, requires = "fs_su")]
    fs_sw: Option<u32>,
    /// Request size of the sequential workloads
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1M",
        help_heading = "Workloads"
    )]
    seq_size: String,
    /// Request size of the random workloads
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4k",
        help_heading = "Workloads"
    )]
    random_size: String,
    /// Read share of the mixed workload
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "70",
        help_heading = "Workloads"
    )]
    mix_read: String,
    /// Request size of the mixed workload
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "64k",
        help_heading = "Workloads"
    )]
    mix_size: String,
    /// The mixed workload is sequential (e.g. SAS analytics: 8k, 50/50), not random
    #[arg(long, help_heading = "Workloads")]
    mix_sequential: bool,
    /// The mixed workload goes through the page cache: sequential reads reach the
    /// device as 128 KiB read-ahead windows, writes as 512 KiB write-back requests
    #[arg(long, help_heading = "Workloads")]
    mix_buffered: bool,
    #[command(flatten)]
    concurrency: ConcurrencyArgs,
    /// Stored runs on this hardware (an id, latest, tag:K=V): each phase's measured
    /// throughput beside the model's prediction for that workload
    #[arg(long, value_name = "RUN", value_parser = crate::commands::common::parse_run_arg)]
    against: Vec<storlab_store::RunSelector>,
    #[command(flatten)]
    db: crate::commands::common::DbArgs,
    /// Compute cores the storage must feed (required = cores x --mbps-per-core)
    #[arg(long, help_heading = "Sizing")]
    cores: Option<u32>,
    /// MB/s each core needs: 75 is a published planning figure for analytics;
    /// 25 to 135 is the range seen across workloads (25, 50, 135)
    #[arg(long, value_name = "MB/S", default_value_t = DEFAULT_MB_PER_S_PER_CORE, help_heading = "Sizing")]
    mbps_per_core: f64,
    #[command(flatten)]
    drive: DriveArgs,
    #[command(flatten)]
    system: SystemArgs,
}

impl LayoutArgs {
    /// The design the arguments describe, as the plan crate takes it.
    fn spec(&self) -> storlab_plan::DesignSpec {
        storlab_plan::DesignSpec {
            layout: self.layout.clone(),
            chunk: self.chunk.clone(),
            stripe: self.stripe.clone(),
            controllers: Some(self.controllers),
            drive: self.drive.choice(),
            system: self.system.choice(),
            workloads: storlab_plan::spec::WorkloadChoice {
                seq_size: Some(self.seq_size.clone()),
                random_size: Some(self.random_size.clone()),
                mix_read: Some(self.mix_read.clone()),
                mix_size: Some(self.mix_size.clone()),
                mix_sequential: self.mix_sequential,
                mix_buffered: self.mix_buffered,
                streams: Some(self.concurrency.streams),
                qd: Some(self.concurrency.qd),
            },
            fs_su: self.fs_su.clone(),
            fs_sw: self.fs_sw,
            cores: self.cores,
            mbps_per_core: Some(self.mbps_per_core),
            catalogs: self.drive.catalog.clone(),
        }
    }
}

/// The design the arguments describe (layout, hardware, repair policy,
/// workloads), checked.
fn design_of(a: &LayoutArgs) -> Result<Design> {
    let spec = a.spec();
    let cat = spec.catalog(read_catalog)?;
    Ok(spec.design(&cat)?)
}

pub(super) fn layout(a: LayoutArgs) -> Result<Outcome> {
    // Errors quote the layout exactly as typed (with --chunk/--stripe).
    let typed = [("--chunk", &a.chunk), ("--stripe", &a.stripe)]
        .iter()
        .filter_map(|(flag, v)| v.as_ref().map(|v| format!(" {flag} {v}")))
        .fold(format!("layout '{}'", a.layout), |acc, s| acc + &s);
    let design = design_of(&a)?;
    let report = storlab_plan::evaluate(&design).with_context(|| typed)?;
    let measured = if a.against.is_empty() {
        None
    } else {
        let store = a.db.open_existing()?;
        let runs = store.select(&a.against, false)?;
        Some(super::against::against(&design, &runs)?)
    };
    match a.system.out.format() {
        Format::Json => {
            let mut doc = serde_json::to_value(&report)?;
            if let (Some(m), Some(obj)) = (&measured, doc.as_object_mut()) {
                obj.insert("against".to_string(), serde_json::to_value(m)?);
            }
            output::print_json(&doc)?
        }
        Format::Table => {
            let mut text = render_layout(&report);
            if let Some(m) = &measured {
                text.push_str("\npredicted vs measured\n");
                text.push_str(&super::against::render_against(m));
            }
            output::print(&text)?
        }
    }
    let short = report
        .sizing
        .as_ref()
        .is_some_and(|s| s.checks.iter().any(|c| !c.meets));
    Ok(if short { Outcome::Failed } else { Outcome::Ok })
}

// long-function: the report's sections in the order printed.
fn render_layout(r: &DesignReport) -> String {
    let g = &r.geometry;
    let hw = &r.design.hardware;
    let rel = &r.reliability;
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
    let mut t = table();
    t.set_header(vec!["layout", ""]);
    let agg = match g.aggregation {
        storlab_plan::Aggregation::Single => "one group",
        storlab_plan::Aggregation::Controller => "the controller stripes over the groups",
        storlab_plan::Aggregation::Lvm => "LVM stripes over the groups",
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
    out.push_str(&t.to_string());
    out.push_str("\n\n");

    let mut t = table();
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
    out.push_str(&t.to_string());
    out.push_str("\n\n");

    out.push_str(&render_performance(&r.performance, &r.design.workloads));
    out.push('\n');

    if let Some(s) = &r.sizing {
        let mut t = table();
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
        out.push_str(&t.to_string());
        out.push_str("\n(75 MB/s per core is a published planning figure for analytics; workloads range from about 25 to 135 MB/s per core: 25, 50, 75, 135)\n\n");
    }
    if let Some(c) = &r.cost {
        out.push_str(&format!(
            "cost: {:.0} ({} drives, {} enclosures), {:.1} per usable TB\n\n",
            c.total, c.drives, c.enclosures, c.per_usable_tb
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

fn render_performance(preds: &[Prediction], workloads: &[Workload]) -> String {
    let mut out = String::new();
    let mut t = table();
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
    out.push_str(&t.to_string());
    out.push('\n');
    for p in preds {
        out.push_str(&format!("  {}: {}\n", p.workload, p.explanation));
        for u in &p.unknowns {
            out.push_str(&format!("    upper bound only: {u}\n"));
        }
    }
    out.push('\n');
    // Every part against every workload: what it alone could do.
    let mut t = table();
    let mut header = vec!["part: what it alone could do".to_string()];
    header.extend(preds.iter().map(|p| p.workload.clone()));
    t.set_header(header);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
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
    out.push_str(&t.to_string());
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
