//! `storlab plan`: design storage before buying it. A thin front end over
//! `storlab-plan`: reads catalog files, turns flags into a design, prints
//! tables or JSON.

use crate::Outcome;
use crate::output;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{CellAlignment, ContentArrangement, Table};
use std::path::PathBuf;
use storlab_plan::catalog::Catalog;
use storlab_plan::design::{DEFAULT_MB_PER_S_PER_CORE, Sizing};
use storlab_plan::hardware::{DriveMedia, Hardware, zone_average};
use storlab_plan::layout::{FsStripe, Layout, Severity};
use storlab_plan::perf::{Pattern, Prediction, Workload};
use storlab_plan::reliability::{
    HOURS_PER_YEAR, ReliabilityInputs, afr_from_mtbf, mtbf_from_afr, parse_hours,
};
use storlab_plan::search::{Constraints, SearchResult, SearchSpace, SearchSpec};
use storlab_plan::{Design, DesignReport};
mod against;
mod calibrate;
mod catalog;
mod layout;
mod search;

use calibrate::{CalibrateArgs, calibrate};
use catalog::{CatalogArgs, catalog};
use layout::{LayoutArgs, layout};
pub use layout::{design_from_spec, design_to_record};
use search::{SearchArgs, search};
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
  storlab plan catalog
  storlab plan layout R6/12 --drive exos-x18-18tb --against latest
  storlab plan calibrate 12 13 --as my-disk --like exos-x18-18tb --hold-out 64k")]
pub struct PlanCommand {
    #[command(subcommand)]
    action: PlanAction,
}

#[derive(Subcommand, Debug)]
enum PlanAction {
    /// Capacity, reliability and predicted performance of one layout (e.g. R60/12/48)
    #[command(after_long_help = layout::MODEL_HELP)]
    Layout(Box<LayoutArgs>),
    /// Enumerate layouts for a drive model and count and print the Pareto-optimal ones
    Search(Box<SearchArgs>),
    /// List the hardware catalog (drives, controllers, enclosures, links) with sources
    Catalog(CatalogArgs),
    /// Fit a catalog entry (streaming rate, per-command overhead, IOPS, reads and writes
    /// apart) to stored runs of one device and write it as a catalog file
    Calibrate(Box<CalibrateArgs>),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Table,
    Json,
}

/// `--output-format table|json`, with `--json` as its shorthand (the same
/// spelling as every other command).
#[derive(Args, Debug)]
pub(super) struct OutputArgs {
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    output_format: Format,
    /// Shorthand for --output-format json
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
}

impl OutputArgs {
    pub(super) fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.output_format
        }
    }
}

/// The drive model and figures that override the catalog.
#[derive(Args, Debug)]
pub(super) struct DriveArgs {
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
    /// Sustained media rate (disks; the average over the surface), e.g. 200MB/s
    #[arg(long, value_name = "RATE", help_heading = "Drive overrides")]
    seq_rate: Option<String>,
    /// Percent of each disk's capacity in use: the media rate is the zone average
    /// over the outer part (catalog disks with outer and inner rates; default 100)
    #[arg(long, value_name = "PERCENT", help_heading = "Drive overrides", value_parser = fill_percent)]
    fill: Option<f64>,
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

/// How much I/O the workloads keep in flight (Little's law bounds throughput
/// by outstanding requests / latency).
#[derive(Args, Debug)]
pub(super) struct ConcurrencyArgs {
    /// Independent streams (jobs) of every workload
    #[arg(long, value_name = "N", default_value_t = storlab_plan::perf::DEFAULT_STREAMS, help_heading = "Workloads")]
    streams: u32,
    /// Outstanding requests per stream (queue depth)
    #[arg(long, value_name = "N", default_value_t = storlab_plan::perf::DEFAULT_QD, help_heading = "Workloads")]
    qd: u32,
}

impl ConcurrencyArgs {
    pub(super) fn check(&self) -> Result<()> {
        Ok(storlab_plan::perf::check_concurrency(
            self.streams,
            self.qd,
        )?)
    }
}

/// Controllers, links, enclosures and host.
#[derive(Args, Debug)]
pub(super) struct SystemArgs {
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
    /// Controller read-path limit, e.g. 1.5GB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    controller_max_read: Option<String>,
    /// Controller write-path limit (parity engine, cache, cache mirroring), e.g. 800MB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    controller_max_write: Option<String>,
    /// Bandwidth of the controller's cache memory, e.g. 5.3GB/s: every byte crosses it several times (host in/out, drives in/out, parity reads and writes, the mirror)
    #[arg(long, value_name = "RATE", help_heading = "System")]
    controller_memory: Option<String>,
    /// Link over which a dual controller mirrors its write cache to the partner, e.g. fc2x2: every written byte crosses it again
    #[arg(long, value_name = "LINK", help_heading = "System")]
    mirror_link: Option<String>,
    /// LUNs (volumes) the workload spreads over: per-LUN rates scale with them, and with --multipath they decide the front-end ports in use
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "System")]
    luns: u32,
    /// One LUN's read-ahead (prefetch) rate, e.g. a measured single-LUN limit of 400MB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    lun_read: Option<String>,
    /// One LUN's destage (flush to the back end) rate, e.g. 250MB/s
    #[arg(long, value_name = "RATE", help_heading = "System")]
    lun_write: Option<String>,
    /// Host multipathing: failover (one path per LUN) or balanced (every usable path); default: every host-link port works
    #[arg(long, value_name = "MODE", help_heading = "System")]
    multipath: Option<String>,
    /// LUN ownership of a dual-controller array: active-passive (a LUN only through its owner's ports) or active-active
    #[arg(
        long,
        value_name = "MODE",
        default_value = "active-active",
        help_heading = "System"
    )]
    ownership: String,
    /// Controllers (storage processors) whose ports make up the host link, for --ownership active-passive
    #[arg(long, value_name = "N", default_value_t = 2, help_heading = "System")]
    array_controllers: u32,
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
    #[command(flatten)]
    out: OutputArgs,
}

fn fill_percent(s: &str) -> Result<f64, String> {
    let p = parse_percent(s).map_err(|e| e.to_string())?;
    if p > 0.0 && p <= 100.0 {
        Ok(p)
    } else {
        Err(format!(
            "{s} is not a share of the disk in use; give 1 to 100, e.g. 60%"
        ))
    }
}

pub(super) fn size(what: &str, s: &str) -> Result<u64> {
    parse_size(s).with_context(|| format!("--{what}"))
}
pub(super) fn rate(what: &str, s: &str) -> Result<f64> {
    parse_rate(s).with_context(|| format!("--{what}"))
}
pub(super) fn hours(what: &str, s: &str) -> Result<f64> {
    parse_hours(s).with_context(|| format!("--{what}"))
}
pub(super) fn positive(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        bail!("--{what} must be a positive number, not {v}")
    }
}

pub(super) fn load_catalog(files: &[PathBuf]) -> Result<Catalog> {
    let mut cat = Catalog::builtin();
    for f in files {
        let text = crate::commands::common::read_input(f, "catalog file")?;
        cat.extend(&f.display().to_string(), &text)?;
    }
    Ok(cat)
}

impl DriveArgs {
    pub(super) fn resolve(&self, cat: &Catalog) -> Result<storlab_plan::hardware::DriveSpec> {
        let mut d = cat.drive(&self.drive)?;
        if let Some(c) = &self.capacity {
            d.capacity_bytes = size("capacity", c)?;
            if d.capacity_bytes == 0 {
                bail!("--capacity must be more than zero, e.g. 2TB");
            }
            d.overrides.push(format!(
                "capacity overridden to {:.2} TB",
                d.capacity_bytes as f64 / 1e12
            ));
        }
        if let Some(m) = &self.mtbf {
            d.mtbf_hours = positive("mtbf", hours("mtbf", m)?)?;
            d.overrides.push(format!(
                "MTBF overridden to {} h",
                thousands(d.mtbf_hours.round() as u64)
            ));
        }
        if let Some(a) = &self.afr {
            let p = parse_percent(a).context("--afr")?;
            if p <= 0.0 || p >= 100.0 {
                bail!("--afr must be above 0% and below 100%, e.g. 1.5%");
            }
            d.mtbf_hours = mtbf_from_afr(p / 100.0);
            d.overrides.push(format!("AFR overridden to {p}%"));
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
            d.overrides
                .push(format!("read error rate overridden to {v:e} per bit"));
        }
        if let Some(s) = &self.sector_size {
            d.sector_bytes = size("sector-size", s)?;
            if d.sector_bytes == 0 {
                bail!("--sector-size must be more than zero, e.g. 512 or 4k");
            }
            d.overrides
                .push(format!("sector size overridden to {} B", d.sector_bytes));
        }
        if let Some(r) = &self.rebuild_rate {
            d.rebuild_bytes_per_s = positive("rebuild-rate", rate("rebuild-rate", r)?)?;
            d.overrides.push(format!(
                "rebuild rate overridden to {}",
                format_rate(d.rebuild_bytes_per_s)
            ));
        }
        if let Some(t) = &self.rebuild_time {
            d.rebuild_hours = Some(positive("rebuild-time", hours("rebuild-time", t)?)?);
            d.overrides.push(format!("rebuild time overridden to {t}"));
        }
        match &mut d.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => {
                if let Some(r) = self.rpm {
                    *rpm = positive("rpm", r)?;
                    d.overrides.push(format!("rpm overridden to {r}"));
                }
                if let Some(s) = &self.avg_seek {
                    *avg_seek_s = parse_duration(s).context("--avg-seek")?.as_secs_f64();
                    d.overrides.push(format!("seek overridden to {s}"));
                }
                if let Some(s) = &self.seq_rate {
                    *seq_bytes_per_s = positive("seq-rate", rate("seq-rate", s)?)?;
                    d.overrides.push(format!("media rate overridden to {s}"));
                    d.seq_outer_bytes_per_s = None;
                    d.seq_inner_bytes_per_s = None;
                } else if let (Some(f), Some(o), Some(i)) =
                    (self.fill, d.seq_outer_bytes_per_s, d.seq_inner_bytes_per_s)
                {
                    *seq_bytes_per_s = zone_average(o, i, f / 100.0);
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
                    d.overrides.push(format!("read IOPS overridden to {v}"));
                }
                if let Some(v) = self.write_iops {
                    *write_iops = positive("write-iops", v)?;
                    d.overrides.push(format!("write IOPS overridden to {v}"));
                }
                if let Some(s) = &self.seq_read {
                    *seq_read_bytes_per_s = positive("seq-read", rate("seq-read", s)?)?;
                    d.overrides.push(format!("read rate overridden to {s}"));
                }
                if let Some(s) = &self.seq_write {
                    *seq_write_bytes_per_s = positive("seq-write", rate("seq-write", s)?)?;
                    d.overrides.push(format!("write rate overridden to {s}"));
                }
                if self.rpm.is_some() || self.avg_seek.is_some() || self.seq_rate.is_some() {
                    bail!(
                        "{} is an SSD: give --read-iops, --write-iops, --seq-read, --seq-write (--rpm/--avg-seek/--seq-rate are for disks)",
                        d.name
                    );
                }
            }
        }
        if self.fill.is_some() && d.seq_outer_bytes_per_s.is_none() && self.seq_rate.is_none() {
            bail!(
                "--fill needs the disk's outer and inner media rates, and the catalog has none for {}; give --seq-rate instead",
                d.name
            );
        }
        Ok(d)
    }
}

impl SystemArgs {
    pub(super) fn hardware(
        &self,
        cat: &Catalog,
        drive: &DriveArgs,
        controllers: u32,
    ) -> Result<Hardware> {
        let mut c = cat.controller(&self.controller)?;
        if let Some(b) = &self.backend {
            c.backend = cat.link(b).context("--backend")?;
            c.overrides.push(format!("back-end {b}"));
        }
        if let Some(h) = &self.host_link {
            c.host = cat.link(h).context("--host-link")?;
            c.overrides.push(format!("host link {h}"));
        }
        if self.no_write_back {
            c.write_back = false;
            c.overrides.push("no write-back cache".to_string());
        }
        if let Some(m) = &self.controller_max {
            c.max_bytes_per_s = Some(positive("controller-max", rate("controller-max", m)?)?);
            c.overrides.push(format!("throughput limit {m}"));
        }
        if let Some(i) = self.controller_max_iops {
            c.max_iops = Some(positive("controller-max-iops", i)?);
            c.overrides.push(format!("IOPS limit {i}"));
        }
        if let Some(m) = &self.controller_max_read {
            c.max_read_bytes_per_s = Some(positive(
                "controller-max-read",
                rate("controller-max-read", m)?,
            )?);
            c.overrides.push(format!("read-path limit {m}"));
        }
        if let Some(m) = &self.controller_max_write {
            c.max_write_bytes_per_s = Some(positive(
                "controller-max-write",
                rate("controller-max-write", m)?,
            )?);
            c.write_limit_by = Some("given with --controller-max-write".to_string());
            c.overrides.push(format!("write-path limit {m}"));
        }
        if let Some(m) = &self.controller_memory {
            c.memory_bytes_per_s = Some(positive(
                "controller-memory",
                rate("controller-memory", m)?,
            )?);
            c.overrides.push(format!("cache memory {m}"));
        }
        if let Some(l) = &self.mirror_link {
            c.mirror = Some(cat.link(l).context("--mirror-link")?);
            c.overrides.push(format!("cache mirror over {l}"));
        }
        if self.luns == 0 {
            bail!("--luns must be at least 1");
        }
        c.luns = self.luns;
        if let Some(m) = &self.lun_read {
            c.lun_read_bytes_per_s = Some(positive("lun-read", rate("lun-read", m)?)?);
            c.overrides.push(format!("per-LUN read-ahead {m}"));
        }
        if let Some(m) = &self.lun_write {
            c.lun_write_bytes_per_s = Some(positive("lun-write", rate("lun-write", m)?)?);
            c.overrides.push(format!("per-LUN destage {m}"));
        }
        let ownership = storlab_plan::path::Ownership::parse(&self.ownership)?;
        if let Some(m) = &self.multipath {
            let mp = storlab_plan::path::Multipath::parse(m)?;
            let used = storlab_plan::path::ports_in_use(
                c.host.lanes,
                self.array_controllers,
                self.luns,
                ownership,
                mp,
            );
            c.host = storlab_plan::path::link_in_use(&c.host, used);
            c.overrides.push(format!(
                "{m} multipathing, {} ownership, {} LUN(s): {used} host port(s) in use",
                self.ownership, self.luns
            ));
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

    pub(super) fn repair(&self) -> Result<(f64, f64)> {
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
            PlanAction::Calibrate(a) => calibrate(*a),
        }
    }
}

pub(super) fn table() -> Table {
    crate::commands::common::result_table()
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

pub(super) fn thousands(n: u64) -> String {
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

/// A probability of data loss, in the one format every table uses:
/// scientific notation with three significant digits ("1.52e-4").
pub(super) fn prob(p: f64) -> String {
    if p <= 0.0 {
        "0".to_string()
    } else {
        format!("{p:.2e}")
    }
}

/// A chance that is not a P(loss) (e.g. a read error in one rebuild): percent.
pub(super) fn pct(p: f64) -> String {
    if p < 1e-4 {
        format!("{:.2}%", p * 100.0)
    } else {
        format!("{:.1}%", p * 100.0)
    }
}

pub(super) fn tb(b: u64) -> String {
    // Capacities are decimal TB everywhere (as drive labels are); binary
    // units are kept for chunk and stripe sizes, which are powers of two.
    format!("{:.1} TB", b as f64 / 1e12)
}
