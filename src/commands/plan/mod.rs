//! `storlab plan`: design storage before buying it. A thin front end over
//! `storlab-plan`: reads catalog files, turns flags into a design, prints
//! tables or JSON.

use crate::output::{Document, Rendering, Reply};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use storlab_plan::catalog::Catalog;
use storlab_plan::design::DEFAULT_MB_PER_S_PER_CORE;
use storlab_plan::render::Style;
mod calibrate;
mod catalog;
mod layout;
mod search;

use calibrate::{CalibrateArgs, calibrate};
use catalog::{CatalogArgs, catalog};
use layout::{LayoutArgs, layout};
use search::{SearchArgs, search};
use storlab_types::parse_size;

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

/// `--output-format table|json`, with `--json` as its shorthand (`plan
/// catalog`).
pub(super) type OutputArgs = super::outfmt::OutputArgs<super::outfmt::TableFormat>;

/// `--output-format table|json|md|csv` (`plan layout`, `search`,
/// `calibrate`): Markdown tables for a document, CSV rows in machine units.
pub(super) type DocOutputArgs = super::outfmt::OutputArgs<Format>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    // Plain comments: values with help switch --help to clap's long layout.
    Table,
    Json,
    // Markdown tables in human units.
    #[value(alias = "markdown")]
    Md,
    // Rows in machine units.
    Csv,
}

impl super::outfmt::Format for Format {
    const HELP: &'static str = "Output format: table, json, md (Markdown) or csv [default: table]";
    const JSON: Self = Format::Json;
    const DEFAULT: Option<Self> = Some(Format::Table);
    fn rendering(self) -> Rendering {
        match self {
            Format::Table => Rendering::Human,
            Format::Json => Rendering::Json,
            Format::Md => Rendering::Markdown,
            Format::Csv => Rendering::Csv,
        }
    }
}

/// A plan document in every format: `human`/`markdown` the crate's text in
/// the terminal's or Markdown's table style, `csv` its rows, `json` its
/// serde form (keys sorted, as plan's JSON always was).
pub(super) trait PlanDoc: serde::Serialize {
    fn text(&self, st: Style) -> String;
    fn rows(&self) -> String;
    /// JSON keys sorted (layout, calibrate) or in the document's order
    /// (search), as each always printed them.
    const SORTED: bool = true;
}

/// A [`PlanDoc`] as the front end shows it.
pub(super) struct Shown<T>(pub T);

impl<T: PlanDoc> Document for Shown<T> {
    fn human(&self) -> Result<String> {
        Ok(self.0.text(Style::terminal(table)))
    }
    fn json(&self) -> Result<String> {
        if T::SORTED {
            crate::output::json_text(&serde_json::to_value(&self.0)?)
        } else {
            crate::output::json_text(&self.0)
        }
    }
    fn markdown(&self) -> Result<String> {
        Ok(self.0.text(Style::markdown()))
    }
    fn csv(&self) -> Result<String> {
        Ok(self.0.rows())
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
    #[arg(long, value_name = "PERCENT", help_heading = "Drive overrides", value_parser = storlab_plan::spec::fill_percent)]
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
    out: DocOutputArgs,
}

pub(super) fn size(what: &str, s: &str) -> Result<u64> {
    parse_size(s).with_context(|| format!("--{what}"))
}
pub(super) fn load_catalog(files: &[PathBuf]) -> Result<Catalog> {
    Ok(storlab_plan::spec::catalog_with(files, read_catalog)?)
}

/// A catalog file's text, for the plan crate (which reads no files).
pub(super) fn read_catalog(p: &std::path::Path) -> std::result::Result<String, String> {
    crate::commands::common::read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
}

impl DriveArgs {
    /// The drive as the plan crate takes it.
    pub(super) fn choice(&self) -> storlab_plan::spec::DriveChoice {
        storlab_plan::spec::DriveChoice {
            model: Some(self.drive.clone()),
            capacity: self.capacity.clone(),
            mtbf: self.mtbf.clone(),
            afr: self.afr.clone(),
            ber: self.ber.clone(),
            sector_size: self.sector_size.clone(),
            rebuild_rate: self.rebuild_rate.clone(),
            rebuild_time: self.rebuild_time.clone(),
            rpm: self.rpm,
            avg_seek: self.avg_seek.clone(),
            seq_rate: self.seq_rate.clone(),
            fill: self.fill,
            read_iops: self.read_iops,
            write_iops: self.write_iops,
            seq_read: self.seq_read.clone(),
            seq_write: self.seq_write.clone(),
        }
    }
}

impl SystemArgs {
    /// Controllers, links, spares and mission as the plan crate takes them.
    pub(super) fn choice(&self) -> storlab_plan::spec::SystemChoice {
        storlab_plan::spec::SystemChoice {
            controller: Some(self.controller.clone()),
            backend: self.backend.clone(),
            host_link: self.host_link.clone(),
            no_write_back: self.no_write_back,
            controller_max: self.controller_max.clone(),
            controller_max_iops: self.controller_max_iops,
            controller_max_read: self.controller_max_read.clone(),
            controller_max_write: self.controller_max_write.clone(),
            controller_memory: self.controller_memory.clone(),
            mirror_link: self.mirror_link.clone(),
            luns: Some(self.luns),
            lun_read: self.lun_read.clone(),
            lun_write: self.lun_write.clone(),
            multipath: self.multipath.clone(),
            ownership: Some(self.ownership.clone()),
            array_controllers: Some(self.array_controllers),
            enclosure: self.enclosure.clone(),
            host_limit: self.host_limit.clone(),
            spares: Some(self.hot_spares),
            replace_delay: Some(self.replace_delay.clone()),
            mission: Some(self.mission.clone()),
            fleet: Some(self.fleet),
        }
    }
}

impl PlanCommand {
    pub fn execute(self) -> Result<Reply> {
        match self.action {
            PlanAction::Layout(a) => layout(*a),
            PlanAction::Search(a) => search(*a),
            PlanAction::Catalog(a) => catalog(a),
            PlanAction::Calibrate(a) => calibrate(*a),
        }
    }
}

pub(super) fn table() -> comfy_table::Table {
    crate::commands::common::result_table()
}
