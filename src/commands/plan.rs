//! `storlab plan`: design storage before buying it. A thin front end over
//! `storlab-plan`: reads catalog files, turns flags into a design, prints
//! tables or JSON.

use crate::Outcome;
use crate::output;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use std::path::PathBuf;
use storlab_plan::catalog::Catalog;
use storlab_plan::design::{DEFAULT_MB_PER_S_PER_CORE, Sizing};
use storlab_plan::hardware::{DriveMedia, Hardware};
use storlab_plan::layout::{FsStripe, GroupLevel, Layout, Severity};
use storlab_plan::perf::{Pattern, Prediction, Workload};
use storlab_plan::reliability::{
    HOURS_PER_YEAR, ReliabilityInputs, afr_from_mtbf, mtbf_from_afr, parse_hours,
};
use storlab_plan::search::{Constraints, SearchResult, SearchSpace, SearchSpec};
use storlab_plan::{Design, DesignReport};
use storlab_types::{
    format_bytes, format_rate, parse_duration, parse_percent, parse_rate, parse_size,
};

/// Design a storage system: RAID layout, capacity, reliability, predicted performance.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab plan layout R60/12/48 --drive exos-x18-18tb
  storlab plan layout 'lvm(4*R6/10, stripe=2M)' --controllers 2 --cores 64
  storlab plan search --drive constellation-es3-4tb --drives 24..96 --min-usable 150TB
  storlab plan search --layout R60/12/x --drives 24..240 --min-usable 500TB
  storlab plan catalog")]
pub struct PlanCommand {
    #[command(subcommand)]
    action: PlanAction,
}

#[derive(Subcommand, Debug)]
enum PlanAction {
    /// Capacity, reliability and predicted performance of one layout (e.g. R60/12/48)
    Layout(Box<LayoutArgs>),
    /// Enumerate layouts for a drive model and count and print the Pareto-optimal ones
    Search(Box<SearchArgs>),
    /// List the hardware catalog (drives, controllers, enclosures, links) with sources
    Catalog(CatalogArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Table,
    Json,
}

#[derive(Args, Debug)]
struct CatalogArgs {
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    output_format: Format,
}

/// The drive model and figures that override the catalog.
#[derive(Args, Debug)]
struct DriveArgs {
    /// Drive model from the catalog (`storlab plan catalog` lists them)
    #[arg(long, value_name = "MODEL", default_value = "exos-x18-18tb")]
    drive: String,
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    /// Drive capacity, e.g. 2TB
    #[arg(long, value_name = "SIZE", help_heading = "Drive overrides")]
    capacity: Option<String>,
    /// Drive MTBF, e.g. 600000h
    #[arg(
        long,
        value_name = "DURATION",
        conflicts_with = "afr",
        help_heading = "Drive overrides"
    )]
    mtbf: Option<String>,
    /// Annualised failure rate instead of MTBF, e.g. 1.5%
    #[arg(long, value_name = "PERCENT", help_heading = "Drive overrides")]
    afr: Option<String>,
    /// Unrecoverable read errors per bit read, e.g. 1e-15
    #[arg(long, value_name = "RATE", help_heading = "Drive overrides")]
    ber: Option<String>,
    /// Sector size lost to one read error, e.g. 512 or 4k
    #[arg(long, value_name = "SIZE", help_heading = "Drive overrides")]
    sector_size: Option<String>,
    /// Rebuild rate, e.g. 50MB/s (rebuild time = capacity / rate)
    #[arg(
        long,
        value_name = "RATE",
        conflicts_with = "rebuild_time",
        help_heading = "Drive overrides"
    )]
    rebuild_rate: Option<String>,
    /// Rebuild time given directly, e.g. 12h
    #[arg(long, value_name = "DURATION", help_heading = "Drive overrides")]
    rebuild_time: Option<String>,
    /// Spindle speed (disks)
    #[arg(long, help_heading = "Drive overrides")]
    rpm: Option<f64>,
    /// Average seek time (disks), e.g. 8.5ms
    #[arg(long, value_name = "DURATION", help_heading = "Drive overrides")]
    avg_seek: Option<String>,
    /// Sustained media rate (disks), e.g. 200MB/s
    #[arg(long, value_name = "RATE", help_heading = "Drive overrides")]
    seq_rate: Option<String>,
    /// Rated 4 KiB random read IOPS (SSDs)
    #[arg(long, help_heading = "Drive overrides")]
    read_iops: Option<f64>,
    /// Rated 4 KiB random write IOPS (SSDs)
    #[arg(long, help_heading = "Drive overrides")]
    write_iops: Option<f64>,
    /// Rated sequential read rate (SSDs)
    #[arg(long, value_name = "RATE", help_heading = "Drive overrides")]
    seq_read: Option<String>,
    /// Rated sequential write rate (SSDs)
    #[arg(long, value_name = "RATE", help_heading = "Drive overrides")]
    seq_write: Option<String>,
}

/// Controllers, links, enclosures and host.
#[derive(Args, Debug)]
struct SystemArgs {
    /// RAID controller (or HBA + md) from the catalog
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "megaraid-9361-8i",
        help_heading = "System"
    )]
    controller: String,
    /// Drive-side link of each controller, overriding the catalog, e.g. sas12x8 or u320x2
    #[arg(long, value_name = "LINK", help_heading = "System")]
    backend: Option<String>,
    /// Host-side link of each controller, e.g. pcie3x8, fc8x2, 10gbe-iscsix2
    #[arg(long, value_name = "LINK", help_heading = "System")]
    host_link: Option<String>,
    /// The controller has no write-back cache: sequential writes smaller than a stripe are partial-stripe writes
    #[arg(long, help_heading = "System")]
    no_write_back: bool,
    /// Controller throughput limit, e.g. 4GB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    controller_max: Option<String>,
    /// Controller IOPS limit
    #[arg(long, value_name = "IOPS", help_heading = "System")]
    controller_max_iops: Option<f64>,
    /// Drive enclosure (JBOD) model; its uplink becomes part of the model
    #[arg(long, value_name = "MODEL", help_heading = "System")]
    enclosure: Option<String>,
    /// What the host itself can move, e.g. 10GB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    host_limit: Option<String>,
    /// Hot spares (rebuild starts at once; counted in drives and cost)
    #[arg(long, default_value_t = 0, help_heading = "Reliability")]
    hot_spares: u32,
    /// Without a hot spare: time until a failed drive is replaced
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "24h",
        help_heading = "Reliability"
    )]
    replace_delay: String,
    /// Mission time for the probability of data loss
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5y",
        help_heading = "Reliability"
    )]
    mission: String,
    /// Number of identical volumes (fleet) for the fleet loss probability
    #[arg(long, default_value_t = 1, help_heading = "Reliability")]
    fleet: u32,
    #[arg(long, value_enum, default_value = "table")]
    output_format: Format,
}

#[derive(Args, Debug)]
struct LayoutArgs {
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
struct SearchArgs {
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
    /// Maximum probability of data loss over the mission, e.g. 0.1%
    #[arg(long, value_name = "PERCENT", help_heading = "Constraints")]
    max_loss: Option<String>,
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
    /// Show at most this many Pareto-optimal designs in the table (JSON has all)
    #[arg(long, default_value_t = 25)]
    top: usize,
    #[command(flatten)]
    drive: DriveArgs,
    #[command(flatten)]
    system: SystemArgs,
}

fn size(what: &str, s: &str) -> Result<u64> {
    parse_size(s).with_context(|| format!("--{what}"))
}
fn rate(what: &str, s: &str) -> Result<f64> {
    parse_rate(s).with_context(|| format!("--{what}"))
}
fn hours(what: &str, s: &str) -> Result<f64> {
    parse_hours(s).with_context(|| format!("--{what}"))
}
fn positive(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        bail!("--{what} must be a positive number, not {v}")
    }
}

fn load_catalog(files: &[PathBuf]) -> Result<Catalog> {
    let mut cat = Catalog::builtin();
    for f in files {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read catalog file {}", f.display()))?;
        cat.extend(&f.display().to_string(), &text)?;
    }
    Ok(cat)
}

impl DriveArgs {
    fn resolve(&self, cat: &Catalog) -> Result<storlab_plan::hardware::DriveSpec> {
        let mut d = cat.drive(&self.drive)?;
        if let Some(c) = &self.capacity {
            d.capacity_bytes = size("capacity", c)?;
            if d.capacity_bytes == 0 {
                bail!("--capacity must be more than zero, e.g. 2TB");
            }
        }
        if let Some(m) = &self.mtbf {
            d.mtbf_hours = positive("mtbf", hours("mtbf", m)?)?;
        }
        if let Some(a) = &self.afr {
            let p = parse_percent(a).context("--afr")?;
            if p <= 0.0 || p >= 100.0 {
                bail!("--afr must be above 0% and below 100%, e.g. 1.5%");
            }
            d.mtbf_hours = mtbf_from_afr(p / 100.0);
        }
        if let Some(b) = &self.ber {
            let v: f64 = b.trim().parse().map_err(|_| {
                anyhow::anyhow!("--ber '{b}' is not a number; give errors per bit read, e.g. 1e-15")
            })?;
            if !(v > 0.0 && v < 1e-6) {
                bail!(
                    "--ber {b} is not a per-bit error rate; data sheets give 1e-14 to 1e-17 (\"1 sector per 10^15 bits\" = 1e-15)"
                );
            }
            d.ber_per_bit = v;
        }
        if let Some(s) = &self.sector_size {
            d.sector_bytes = size("sector-size", s)?;
            if d.sector_bytes == 0 {
                bail!("--sector-size must be more than zero, e.g. 512 or 4k");
            }
        }
        if let Some(r) = &self.rebuild_rate {
            d.rebuild_bytes_per_s = positive("rebuild-rate", rate("rebuild-rate", r)?)?;
        }
        if let Some(t) = &self.rebuild_time {
            d.rebuild_hours = Some(positive("rebuild-time", hours("rebuild-time", t)?)?);
        }
        match &mut d.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => {
                if let Some(r) = self.rpm {
                    *rpm = positive("rpm", r)?;
                }
                if let Some(s) = &self.avg_seek {
                    *avg_seek_s = parse_duration(s).context("--avg-seek")?.as_secs_f64();
                }
                if let Some(s) = &self.seq_rate {
                    *seq_bytes_per_s = positive("seq-rate", rate("seq-rate", s)?)?;
                }
                if self.read_iops.is_some()
                    || self.write_iops.is_some()
                    || self.seq_read.is_some()
                    || self.seq_write.is_some()
                {
                    bail!(
                        "{} is a disk: give --rpm, --avg-seek, --seq-rate (--read-iops/--write-iops/--seq-read/--seq-write are for SSDs)",
                        d.name
                    );
                }
            }
            DriveMedia::Ssd {
                read_iops,
                write_iops,
                seq_read_bytes_per_s,
                seq_write_bytes_per_s,
            } => {
                if let Some(v) = self.read_iops {
                    *read_iops = positive("read-iops", v)?;
                }
                if let Some(v) = self.write_iops {
                    *write_iops = positive("write-iops", v)?;
                }
                if let Some(s) = &self.seq_read {
                    *seq_read_bytes_per_s = positive("seq-read", rate("seq-read", s)?)?;
                }
                if let Some(s) = &self.seq_write {
                    *seq_write_bytes_per_s = positive("seq-write", rate("seq-write", s)?)?;
                }
                if self.rpm.is_some() || self.avg_seek.is_some() || self.seq_rate.is_some() {
                    bail!(
                        "{} is an SSD: give --read-iops, --write-iops, --seq-read, --seq-write (--rpm/--avg-seek/--seq-rate are for disks)",
                        d.name
                    );
                }
            }
        }
        Ok(d)
    }
}

impl SystemArgs {
    fn hardware(&self, cat: &Catalog, drive: &DriveArgs, controllers: u32) -> Result<Hardware> {
        let mut c = cat.controller(&self.controller)?;
        if let Some(b) = &self.backend {
            c.backend = cat.link(b).context("--backend")?;
        }
        if let Some(h) = &self.host_link {
            c.host = cat.link(h).context("--host-link")?;
        }
        if self.no_write_back {
            c.write_back = false;
        }
        if let Some(m) = &self.controller_max {
            c.max_bytes_per_s = Some(positive("controller-max", rate("controller-max", m)?)?);
        }
        if let Some(i) = self.controller_max_iops {
            c.max_iops = Some(positive("controller-max-iops", i)?);
        }
        let enclosure = match &self.enclosure {
            Some(e) => Some(cat.enclosure(e)?),
            None => None,
        };
        if controllers == 0 {
            bail!("--controllers must be at least 1");
        }
        Ok(Hardware {
            drive: drive.resolve(cat)?,
            controller: c,
            controllers,
            enclosure,
            host_bytes_per_s: match &self.host_limit {
                Some(h) => Some(positive("host-limit", rate("host-limit", h)?)?),
                None => None,
            },
        })
    }

    fn repair(&self) -> Result<(f64, f64)> {
        let mission = hours("mission", &self.mission)?;
        if mission <= 0.0 {
            bail!("--mission must be positive, e.g. 5y or 43800h");
        }
        if self.fleet == 0 {
            bail!("--fleet must be at least 1");
        }
        Ok((hours("replace-delay", &self.replace_delay)?, mission))
    }
}

impl PlanCommand {
    pub fn execute(self) -> Result<Outcome> {
        match self.action {
            PlanAction::Layout(a) => layout(*a),
            PlanAction::Search(a) => search(*a),
            PlanAction::Catalog(a) => catalog(a),
        }
    }
}

fn layout(a: LayoutArgs) -> Result<Outcome> {
    let cat = load_catalog(&a.drive.catalog)?;
    let mut l: Layout = a.layout.parse()?;
    if let Some(c) = &a.chunk {
        l.chunk_bytes = size("chunk", c)?;
        if l.chunk_bytes == 0 || l.chunk_bytes % 512 != 0 {
            bail!("--chunk must be a non-zero multiple of 512 bytes, e.g. 256k");
        }
    }
    if let Some(s) = &a.stripe {
        let s = size("stripe", s)?;
        if s == 0 || s % 512 != 0 {
            bail!("--stripe must be a non-zero multiple of 512 bytes, e.g. 1M");
        }
        if l.groups == Some(1) {
            bail!(
                "--stripe is the size across groups and {l} has one group; use --chunk for the per-drive size"
            );
        }
        l.stripe_bytes = Some(s);
    }
    if l.groups.is_none() {
        bail!(
            "layout '{l}' leaves the number of drives open (x); give it (e.g. {}) or use `storlab plan search`",
            l.with_groups(4)
        );
    }
    let hardware = a.system.hardware(&cat, &a.drive, a.controllers)?;
    let (delay, mission) = a.system.repair()?;
    let mix_read = parse_percent(&a.mix_read).context("--mix-read")?;
    let sz = |w: &str, s: &str| -> Result<u64> {
        let v = size(w, s)?;
        if v == 0 {
            bail!("--{w} must be at least one byte, e.g. 4k or 1M");
        }
        Ok(v)
    };
    let workloads = Workload::standard(
        sz("seq-size", &a.seq_size)?,
        sz("random-size", &a.random_size)?,
        Workload {
            pattern: Pattern::Mix {
                read_pct: mix_read,
                random: !a.mix_sequential,
            },
            request_bytes: sz("mix-size", &a.mix_size)?,
        },
    );
    let fs_stripe = match (&a.fs_su, a.fs_sw) {
        (Some(su), Some(sw)) => Some(FsStripe {
            su_bytes: size("fs-su", su)?,
            sw,
        }),
        _ => None,
    };
    let sizing = match a.cores {
        Some(cores) => Some(Sizing {
            cores,
            mb_per_s_per_core: positive("mbps-per-core", a.mbps_per_core)?,
        }),
        None => None,
    };
    let design = Design {
        layout: l,
        hardware,
        hot_spares: a.system.hot_spares,
        replace_delay_hours: delay,
        mission_hours: mission,
        fleet: a.system.fleet,
        workloads,
        fs_stripe,
        sizing,
    };
    let report = storlab_plan::evaluate(&design)?;
    match a.system.output_format {
        Format::Json => output::print(&(serde_json::to_string_pretty(&report)? + "\n"))?,
        Format::Table => output::print(&render_layout(&report))?,
    }
    let short = report
        .sizing
        .as_ref()
        .is_some_and(|s| s.checks.iter().any(|c| !c.meets));
    Ok(if short { Outcome::Failed } else { Outcome::Ok })
}

fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t
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

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn prob(p: f64) -> String {
    if p <= 0.0 {
        "0".to_string()
    } else if p < 1e-4 {
        format!("{:.2e}", p)
    } else {
        format!("{:.3}%", p * 100.0)
    }
}

fn tb(b: u64) -> String {
    format!("{:.1} TB ({})", b as f64 / 1e12, format_bytes(b))
}

fn render_layout(r: &DesignReport) -> String {
    let g = &r.geometry;
    let hw = &r.design.hardware;
    let rel = &r.reliability;
    let mut out = String::new();
    out.push_str(&format!(
        "storlab plan: {} on {} x {} ({:.2} TB), {} x {}{}\n\n",
        g.notation,
        g.drives,
        hw.drive.name,
        hw.drive.capacity_bytes as f64 / 1e12,
        hw.controllers.max(1),
        hw.controller.name,
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
                prob(rel.ure_probability_per_critical_rebuild),
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

    out.push_str(&render_performance(&r.performance));
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

fn render_performance(preds: &[Prediction]) -> String {
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
        t.add_row(vec![
            p.workload.clone(),
            cell_for(p, p.iops, p.bytes_per_s),
            format!("{:.1}", p.bytes_per_s / 1e6),
            p.binding.clone(),
            p.write_path.clone().unwrap_or_else(|| "-".into()),
            next,
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    // Every part against every workload: what it alone could do.
    let mut t = table();
    let mut header = vec!["part: what it alone could do".to_string()];
    header.extend(preds.iter().map(|p| p.workload.clone()));
    t.set_header(header);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    if let Some(first) = preds.first() {
        for (i, part) in first.parts.iter().enumerate() {
            let mut row = vec![part.name.clone()];
            for p in preds {
                let x = &p.parts[i];
                row.push(if x.binds {
                    format!("{} << binds", cell_for(p, x.max_iops, x.max_bytes_per_s))
                } else {
                    format!(
                        "{} ({})",
                        cell_for(p, x.max_iops, x.max_bytes_per_s),
                        headroom(x.headroom)
                    )
                });
            }
            t.add_row(row);
        }
    }
    for i in 1..=preds.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    out.push_str(&t.to_string());
    out.push_str("\n(saturation throughput with enough outstanding I/O to keep every drive busy; docs/MODEL.md)\n");
    out
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

fn search(a: SearchArgs) -> Result<Outcome> {
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
        let lv = match l.trim().to_ascii_lowercase().trim_start_matches("raid") {
            "r0" | "0" => GroupLevel::R0,
            "r1" | "r10" | "1" | "10" => GroupLevel::R1,
            "r5" | "r50" | "5" | "50" => GroupLevel::R5,
            "r6" | "r60" | "6" | "60" => GroupLevel::R6,
            _ => bail!(
                "--levels: '{l}' is not a RAID level; use r0, r1 (r10), r5 (r50), r6 (r60), e.g. --levels r6,r10"
            ),
        };
        if !levels.contains(&lv) {
            levels.push(lv);
        }
    }
    let chunks = a
        .chunks
        .iter()
        .map(|c| {
            let v = size("chunks", c)?;
            if v == 0 || v % 512 != 0 {
                bail!("--chunks: {c} is not a non-zero multiple of 512 bytes, e.g. 64k,256k,1M");
            }
            Ok(v)
        })
        .collect::<Result<Vec<_>>>()?;
    if a.max_controllers == 0 {
        bail!("--max-controllers must be at least 1");
    }
    let spans = match &a.spans {
        Some(s) => Some(parse_range("spans", s)?),
        None => None,
    };
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
        max_loss_probability: a
            .max_loss
            .as_deref()
            .map(|s| parse_percent(s).context("--max-loss").map(|p| p / 100.0))
            .transpose()?,
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
        throughput_workload: Workload {
            pattern: match a.throughput_of {
                ThroughputOf::SeqRead => Pattern::SeqRead,
                ThroughputOf::SeqWrite => Pattern::SeqWrite,
            },
            request_bytes: seq,
        },
        iops_workload: Workload {
            pattern: match a.iops_of {
                IopsOf::RandRead => Pattern::RandRead,
                IopsOf::RandWrite => Pattern::RandWrite,
            },
            request_bytes: rnd,
        },
    };
    let result = storlab_plan::search::search(&spec)?;
    match a.system.output_format {
        Format::Json => output::print(&(serde_json::to_string_pretty(&result)? + "\n"))?,
        Format::Table => output::print(&render_search(&result, &spec, a.top))?,
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

fn render_search(r: &SearchResult, spec: &SearchSpec, top: usize) -> String {
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
    let mut t = table();
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
    if with_cost {
        header.push("cost");
    }
    header.push("trade-off");
    t.set_header(header);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(170);
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
                    .map_or(String::new(), |k| format!("{:.0}", k.total)),
            );
        }
        row.push(c.tradeoff.clone());
        t.add_row(row);
    }
    out.push_str(&t.to_string());
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
    out
}

fn short_part(p: &str) -> String {
    p.split(" (").next().unwrap_or(p).to_string()
}

fn catalog(a: CatalogArgs) -> Result<Outcome> {
    let cat = load_catalog(&a.catalog)?;
    if a.output_format == Format::Json {
        let doc = serde_json::json!({
            "schema_version": storlab_plan::PLAN_SCHEMA_VERSION,
            "kind": "plan.catalog",
            "drives": cat.drives().map(|d| serde_json::json!({
                "entry": d,
                "resolved": cat.drive(d.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
            "controllers": cat.controllers().map(|c| serde_json::json!({
                "entry": c,
                "resolved": cat.controller(c.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
            "enclosures": cat.enclosures().collect::<Vec<_>>(),
            "links": cat.links().map(|l| serde_json::json!({
                "entry": l,
                "resolved": cat.link(l.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
        });
        output::print(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
        return Ok(Outcome::Ok);
    }
    let mut out = String::new();
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    t.set_header(vec![
        "drive",
        "capacity",
        "performance",
        "MTBF (AFR)",
        "BER",
        "source",
    ]);
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
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    t.set_header(vec![
        "controller",
        "back-end",
        "host",
        "write-back",
        "source",
    ]);
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
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    t.set_header(vec!["enclosure", "slots", "uplink", "source"]);
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
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    t.set_header(vec![
        "link (add x<N> for lanes/ports)",
        "usable per lane",
        "source",
    ]);
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
            format_rate(l.bytes_per_s),
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    output::print(&out)?;
    Ok(Outcome::Ok)
}
