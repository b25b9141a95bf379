//! `storlab plan search`: the Pareto-optimal designs for a drive model and count.

use super::*;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ThroughputOf {
    SeqRead,
    SeqWrite,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum IopsOf {
    RandRead,
    RandWrite,
}

#[derive(Args, Debug)]
pub(super) struct SearchArgs {
    /// Total drives (not counting hot spares): a count (48) or a range (24..96)
    #[arg(long, value_name = "N|MIN..MAX", required_unless_present = "layout")]
    drives: Option<String>,
    /// Only layouts of this shape; x is filled in from --drives, e.g. R60/12/x or
    /// 'lvm(x*R6/10, stripe=2M)' (fixes level, span, aggregation, chunk, stripe)
    #[arg(long, value_name = "LAYOUT", conflicts_with_all = ["levels", "spans", "chunks"])]
    layout: Option<String>,
    /// RAID levels to try: r0 r1/r10 r5/r50 r6/r60 (a level covers single groups and
    /// groups striped by the controller or LVM)
    #[arg(long, value_delimiter = ',', default_value = "r10,r5,r6")]
    levels: Vec<String>,
    /// Drives per group to try, e.g. 6..16 (default: R1 2-3, R5 3-16, R6 4-24)
    #[arg(long, value_name = "MIN..MAX")]
    spans: Option<String>,
    /// Chunk sizes to try
    #[arg(long, value_delimiter = ',', default_value = "64k,256k,1M")]
    chunks: Vec<String>,
    /// Try 1 to this many controllers (groups spread over them with LVM)
    #[arg(long, default_value_t = 1)]
    max_controllers: u32,
    /// Do not try LVM striping where the controller can stripe itself (R50/R60/R10)
    #[arg(long)]
    no_lvm: bool,
    /// Minimum usable capacity, e.g. 200TB
    #[arg(long, value_name = "SIZE", help_heading = "Constraints")]
    min_usable: Option<String>,
    /// Minimum volume MTTDL, e.g. 10000y
    #[arg(long, value_name = "DURATION", help_heading = "Constraints")]
    min_mttdl: Option<String>,
    /// Maximum probability of data loss over the mission; designs above it are left
    /// out (100% keeps every design)
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "1%",
        help_heading = "Constraints"
    )]
    max_loss: String,
    /// Minimum throughput of the throughput workload, e.g. 2GB/s
    #[arg(long, value_name = "RATE", help_heading = "Constraints")]
    min_throughput: Option<String>,
    /// Minimum IOPS of the IOPS workload
    #[arg(long, help_heading = "Constraints")]
    min_iops: Option<f64>,
    /// Maximum cost (needs prices in the catalog)
    #[arg(long, help_heading = "Constraints")]
    max_cost: Option<f64>,
    /// Throughput objective
    #[arg(
        long,
        value_enum,
        default_value = "seq-write",
        help_heading = "Objectives"
    )]
    throughput_of: ThroughputOf,
    /// IOPS objective
    #[arg(
        long,
        value_enum,
        default_value = "rand-write",
        help_heading = "Objectives"
    )]
    iops_of: IopsOf,
    /// Request size of the throughput objective
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1M",
        help_heading = "Objectives"
    )]
    seq_size: String,
    /// Request size of the IOPS objective
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4k",
        help_heading = "Objectives"
    )]
    random_size: String,
    #[command(flatten)]
    concurrency: ConcurrencyArgs,
    /// Show at most this many Pareto-optimal designs in the table (JSON has all)
    #[arg(long, default_value_t = 25)]
    top: usize,
    #[command(flatten)]
    drive: DriveArgs,
    #[command(flatten)]
    system: SystemArgs,
}

fn parse_range(what: &str, s: &str) -> Result<(u32, u32)> {
    let err =
        || anyhow::anyhow!("--{what} '{s}' should be a count (48) or a range MIN..MAX (24..96)");
    let num = |x: &str| x.trim().parse::<u32>().map_err(|_| err());
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.trim_start_matches('='))?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if lo == 0 || lo > hi {
        bail!("--{what} '{s}' is empty or starts at zero; e.g. 24..96");
    }
    Ok((lo, hi))
}

/// The search the flags describe, each flag mapped in the order of --help.
fn search_spec(a: &SearchArgs) -> Result<SearchSpec> {
    let cat = load_catalog(&a.drive.catalog)?;
    let hardware = a.system.hardware(&cat, &a.drive, 1)?;
    let (delay, mission) = a.system.repair()?;
    let template: Option<Layout> = match &a.layout {
        Some(l) => Some(l.parse()?),
        None => None,
    };
    let (min_drives, max_drives) = match (&a.drives, template.and_then(|t| t.groups)) {
        (Some(d), _) => parse_range("drives", d)?,
        (None, Some(g)) => (
            g * template.map_or(1, |t| t.span),
            g * template.map_or(1, |t| t.span),
        ),
        (None, None) => bail!(
            "--layout {} leaves the number of drives open; give --drives, e.g. --drives 24..96",
            a.layout.as_deref().unwrap_or_default()
        ),
    };
    let mut levels = Vec::new();
    for l in &a.levels {
        let lv = storlab_plan::layout::parse_level_family(l)
            .map_err(|e| anyhow::anyhow!("--levels: {e}"))?;
        if !levels.contains(&lv) {
            levels.push(lv);
        }
    }
    let chunks = a
        .chunks
        .iter()
        .map(|c| {
            storlab_plan::layout::parse_sector_multiple(c)
                .map_err(|e| anyhow::anyhow!("--chunks: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    if a.max_controllers == 0 {
        bail!("--max-controllers must be at least 1");
    }
    let spans = match &a.spans {
        Some(s) => Some(parse_range("spans", s)?),
        None => None,
    };
    a.concurrency.check()?;
    let seq = size("seq-size", &a.seq_size)?;
    let rnd = size("random-size", &a.random_size)?;
    if seq == 0 || rnd == 0 {
        bail!("--seq-size and --random-size must be at least one byte, e.g. 1M and 4k");
    }
    let constraints = Constraints {
        min_usable_bytes: a
            .min_usable
            .as_deref()
            .map(|s| size("min-usable", s))
            .transpose()?,
        min_mttdl_hours: a
            .min_mttdl
            .as_deref()
            .map(|s| hours("min-mttdl", s))
            .transpose()?,
        max_loss_probability: {
            let p = parse_percent(&a.max_loss).context("--max-loss")?;
            if !(p > 0.0 && p <= 100.0) {
                bail!(
                    "--max-loss must be above 0% and at most 100% (100% keeps every design), e.g. 0.1%"
                );
            }
            (p < 100.0).then_some(p / 100.0)
        },
        min_throughput_bytes_per_s: a
            .min_throughput
            .as_deref()
            .map(|s| rate("min-throughput", s))
            .transpose()?,
        min_iops: a.min_iops,
        max_cost: a.max_cost,
    };
    if constraints.max_cost.is_some() {
        let missing: Vec<&str> = [
            hardware.drive.price.is_none().then_some("drive"),
            hardware.controller.price.is_none().then_some("controller"),
            hardware
                .enclosure
                .as_ref()
                .and_then(|e| e.price.is_none().then_some("enclosure")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !missing.is_empty() {
            bail!(
                "--max-cost needs prices, and the catalog has none for the {}; add `price = ...` to those entries in a --catalog file",
                missing.join(", ")
            );
        }
    }
    let drive = &hardware.drive;
    let spec = SearchSpec {
        reliability: ReliabilityInputs {
            drive_mtbf_hours: drive.mtbf_hours,
            drive_capacity_bytes: drive.capacity_bytes,
            ber_per_bit: drive.ber_per_bit,
            sector_bytes: drive.sector_bytes,
            rebuild_hours: drive.rebuild_hours(),
            replace_delay_hours: if a.system.hot_spares > 0 { 0.0 } else { delay },
            mission_hours: mission,
            fleet: a.system.fleet,
        },
        hardware,
        space: SearchSpace {
            min_drives,
            max_drives,
            levels,
            spans,
            chunks,
            max_controllers: a.max_controllers,
            try_lvm: !a.no_lvm,
            hot_spares: a.system.hot_spares,
            template,
        },
        constraints,
        throughput_workload: Workload::new(
            match a.throughput_of {
                ThroughputOf::SeqRead => Pattern::SeqRead,
                ThroughputOf::SeqWrite => Pattern::SeqWrite,
            },
            seq,
        )
        .with_concurrency(a.concurrency.streams, a.concurrency.qd),
        iops_workload: Workload::new(
            match a.iops_of {
                IopsOf::RandRead => Pattern::RandRead,
                IopsOf::RandWrite => Pattern::RandWrite,
            },
            rnd,
        )
        .with_concurrency(a.concurrency.streams, a.concurrency.qd),
    };
    Ok(spec)
}

pub(super) fn search(a: SearchArgs) -> Result<Outcome> {
    let spec = search_spec(&a)?;
    let result = storlab_plan::search::search(&spec)?;
    match a.system.out.format() {
        Format::Json => output::print_json(&result)?,
        Format::Table => output::print(&storlab_plan::render::render_search(
            &result, &spec, a.top, table,
        ))?,
    }
    if result.pareto.is_empty() {
        let why: Vec<String> = result
            .rejected
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        eprintln!(
            "storlab: no design meets the constraints ({} evaluated; rejected: {}); relax a constraint or widen --drives/--levels/--spans",
            result.evaluated,
            if why.is_empty() {
                "none".to_string()
            } else {
                why.join(", ")
            }
        );
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Ok)
}
