//! A design as the user writes it: the layout, the drive and its overrides,
//! the controllers, spares, mission and the catalog files, each as given.
//! [`DesignSpec`] is what `storlab bench --design`, the `planned_as` tag,
//! `storlab report` and `storlab plan layout` share: it parses today's
//! compact string (`R6/10/20 --drive exos-x18-18tb --controller perc-h800`,
//! the arguments of `storlab plan layout` in one string), displays one
//! canonical form of it (the form the store keeps: flags in one order,
//! `--flag value`, quoted where a shell would need it) and resolves it
//! against a [`Catalog`] into the [`Design`] the model evaluates.
//!
//! Parsing keeps each value as typed (sizes, rates and durations are read
//! when the design is resolved, with the messages `storlab plan layout`
//! gives), so `parse(display(spec)) == spec` for every spec that parses.

use crate::PlanError;
use crate::catalog::Catalog;
use crate::design::{DEFAULT_MB_PER_S_PER_CORE, Design, Sizing};
use crate::error::BadValue;
use crate::hardware::{DriveMedia, DriveSpec, EnclosureSpec, Hardware, zone_average};
use crate::layout::{FsStripe, Layout};
use crate::perf::{self, DEFAULT_QD, DEFAULT_STREAMS, Workload};
use crate::reliability::{ReliabilityInputs, mtbf_from_afr, parse_hours};
use crate::search::{Constraints, SearchSpace, SearchSpec};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use storlab_types::Pattern;
use storlab_types::{format_rate, parse_duration, parse_percent, parse_rate, parse_size};

/// The drive model a design assumes unless it names one.
pub const DEFAULT_DRIVE: &str = "exos-x18-18tb";
/// The controller a design assumes unless it names one.
pub const DEFAULT_CONTROLLER: &str = "megaraid-9361-8i";

/// The drive model and the figures that override the catalog's. With the
/// `clap` feature these are `storlab plan`'s drive flags (their doc
/// comments are the flags' help).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct DriveChoice {
    /// Drive model from the catalog (`storlab plan catalog` lists them)
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "clap", arg(long = "drive", id = "drive", value_name = "MODEL", default_value = DEFAULT_DRIVE))]
    pub model: Option<String>,
    /// Drive capacity, e.g. 2TB
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", help_heading = "Drive overrides")
    )]
    pub capacity: Option<String>,
    /// Drive MTBF, e.g. 600000h
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "DURATION",
            conflicts_with = "afr",
            help_heading = "Drive overrides"
        )
    )]
    pub mtbf: Option<String>,
    /// Annualised failure rate instead of MTBF, e.g. 1.5%
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "PERCENT", help_heading = "Drive overrides")
    )]
    pub afr: Option<String>,
    /// Unrecoverable read errors per bit read, e.g. 1e-15
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "Drive overrides")
    )]
    pub ber: Option<String>,
    /// Sector size lost to one read error, e.g. 512 or 4k
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", help_heading = "Drive overrides")
    )]
    pub sector_size: Option<String>,
    /// Rebuild rate, e.g. 50MB/s (rebuild time = capacity / rate)
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "RATE",
            conflicts_with = "rebuild_time",
            help_heading = "Drive overrides"
        )
    )]
    pub rebuild_rate: Option<String>,
    /// Rebuild time given directly, e.g. 12h
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DURATION", help_heading = "Drive overrides")
    )]
    pub rebuild_time: Option<String>,
    /// Spindle speed (disks)
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Drive overrides"))]
    pub rpm: Option<f64>,
    /// Average seek time (disks), e.g. 8.5ms
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DURATION", help_heading = "Drive overrides")
    )]
    pub avg_seek: Option<String>,
    /// Sustained media rate (disks; the average over the surface), e.g. 200MB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "Drive overrides")
    )]
    pub seq_rate: Option<String>,
    /// Percent of each disk's capacity in use: the media rate is the zone average
    /// over the outer part (catalog disks with outer and inner rates; default 100)
    #[cfg_attr(feature = "clap", arg(long, value_name = "PERCENT", help_heading = "Drive overrides", value_parser = fill_percent))]
    pub fill: Option<f64>,
    /// Rated 4 KiB random read IOPS (SSDs)
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Drive overrides"))]
    pub read_iops: Option<f64>,
    /// Rated 4 KiB random write IOPS (SSDs)
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Drive overrides"))]
    pub write_iops: Option<f64>,
    /// Rated sequential read rate (SSDs)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "Drive overrides")
    )]
    pub seq_read: Option<String>,
    /// Rated sequential write rate (SSDs)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "Drive overrides")
    )]
    pub seq_write: Option<String>,
}

/// Controllers, links, enclosures, host, spares and mission. With the
/// `clap` feature these are `storlab plan`'s system and reliability flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct SystemChoice {
    /// RAID controller (or HBA + md) from the catalog
    #[cfg_attr(feature = "clap", arg(long, value_name = "MODEL", default_value = DEFAULT_CONTROLLER, help_heading = "System"))]
    pub controller: Option<String>,
    /// Drive-side link of each controller, overriding the catalog, e.g. sas12x8 or u320x2
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "LINK", help_heading = "System")
    )]
    pub backend: Option<String>,
    /// Host-side link of each controller, e.g. pcie3x8, fc8x2, 10gbe-iscsix2
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "LINK", help_heading = "System")
    )]
    pub host_link: Option<String>,
    /// The controller has no write-back cache: sequential writes smaller than a stripe are partial-stripe writes
    #[cfg_attr(feature = "clap", arg(long, help_heading = "System"))]
    pub no_write_back: bool,
    /// Controller throughput limit, e.g. 4GB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub controller_max: Option<String>,
    /// Controller IOPS limit
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "IOPS", help_heading = "System")
    )]
    pub controller_max_iops: Option<f64>,
    /// Controller read-path limit, e.g. 1.5GB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub controller_max_read: Option<String>,
    /// Controller write-path limit (parity engine, cache, cache mirroring), e.g. 800MB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub controller_max_write: Option<String>,
    /// Bandwidth of the controller's cache memory, e.g. 5.3GB/s: every byte crosses it several times (host in/out, drives in/out, parity reads and writes, the mirror)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub controller_memory: Option<String>,
    /// The controller's own time per command, e.g. 50us: part of one request's round trip (a stream with few requests in flight is bound by it)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "TIME", help_heading = "System")
    )]
    pub controller_latency: Option<String>,
    /// HBA and fabric time of one request's round trip (initiator, switch hops, both ways), e.g. 20us
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "TIME", help_heading = "System")
    )]
    pub host_latency: Option<String>,
    /// Link over which a dual controller mirrors its write cache to the partner, e.g. fc2x2: every written byte crosses it again
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "LINK", help_heading = "System")
    )]
    pub mirror_link: Option<String>,
    /// LUNs (volumes) the workload spreads over: per-LUN rates scale with them, and with --multipath they decide the front-end ports in use
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", default_value = "1", help_heading = "System")
    )]
    pub luns: Option<u32>,
    /// One LUN's read-ahead (prefetch) rate, e.g. a measured single-LUN limit of 400MB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub lun_read: Option<String>,
    /// One LUN's destage (flush to the back end) rate, e.g. 250MB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub lun_write: Option<String>,
    /// Host multipathing: failover (one path per LUN) or balanced (every usable path); default: every host-link port works
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "MODE", help_heading = "System")
    )]
    pub multipath: Option<String>,
    /// LUN ownership of a dual-controller array: active-passive (a LUN only through its owner's ports) or active-active
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "MODE",
            default_value = "active-active",
            help_heading = "System"
        )
    )]
    pub ownership: Option<String>,
    /// Controllers (storage processors) whose ports make up the host link, for --ownership active-passive
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", default_value = "2", help_heading = "System")
    )]
    pub array_controllers: Option<u32>,
    /// Drive enclosure (JBOD) model; its uplink becomes part of the model
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "MODEL", help_heading = "System")
    )]
    pub enclosure: Option<String>,
    /// What the host itself can move, e.g. 10GB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "System")
    )]
    pub host_limit: Option<String>,
    /// Hot spares (rebuild starts at once; counted in drives, enclosure bays and cost)
    #[cfg_attr(
        feature = "clap",
        arg(
            long = "hot-spares",
            id = "hot_spares",
            value_name = "HOT_SPARES",
            default_value = "0",
            help_heading = "Reliability"
        )
    )]
    pub spares: Option<u32>,
    /// Without a hot spare: time until a failed drive is replaced
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "DURATION",
            default_value = "24h",
            help_heading = "Reliability"
        )
    )]
    pub replace_delay: Option<String>,
    /// Mission time for the probability of data loss
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "DURATION",
            default_value = "5y",
            help_heading = "Reliability"
        )
    )]
    pub mission: Option<String>,
    /// Number of identical volumes (fleet) for the fleet loss probability
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "1", help_heading = "Reliability")
    )]
    pub fleet: Option<u32>,
}

/// The workloads the design is predicted for. With the `clap` feature
/// these are `storlab plan layout`'s workload flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadChoice {
    /// Request size of the sequential workloads
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "1M",
            help_heading = "Workloads"
        )
    )]
    pub seq_size: Option<String>,
    /// Request size of the random workloads
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "4k",
            help_heading = "Workloads"
        )
    )]
    pub random_size: Option<String>,
    /// Read share of the mixed workload
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "PERCENT",
            default_value = "70",
            help_heading = "Workloads"
        )
    )]
    pub mix_read: Option<String>,
    /// Request size of the mixed workload
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "64k",
            help_heading = "Workloads"
        )
    )]
    pub mix_size: Option<String>,
    /// The mixed workload is sequential (e.g. SAS analytics: 8k, 50/50), not random
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Workloads"))]
    pub mix_sequential: bool,
    /// The mixed workload goes through the page cache: sequential reads reach the
    /// device as 128 KiB read-ahead windows, writes as 512 KiB write-back requests
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Workloads"))]
    pub mix_buffered: bool,
    /// Independent streams (jobs) of every workload
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value = DEFAULT_STREAMS.to_string(), help_heading = "Workloads"))]
    pub streams: Option<u32>,
    /// Outstanding requests per stream (queue depth)
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value = DEFAULT_QD.to_string(), help_heading = "Workloads"))]
    pub qd: Option<u32>,
}

/// A whole design as written: see the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DesignSpec {
    /// Layout notation as typed, e.g. `R60/12/48` or `lvm(4*R5/6, stripe=1M)`.
    pub layout: String,
    pub chunk: Option<String>,
    pub stripe: Option<String>,
    /// Controllers the groups are spread over (`--controllers`).
    pub controllers: Option<u32>,
    pub drive: DriveChoice,
    pub system: SystemChoice,
    pub workloads: WorkloadChoice,
    pub fs_su: Option<String>,
    pub fs_sw: Option<u32>,
    pub cores: Option<u32>,
    pub mbps_per_core: Option<f64>,
    /// Extra catalog files (`--catalog`), read by the caller.
    pub catalogs: Vec<PathBuf>,
}

/// Where a flag's value lives in a [`DesignSpec`].
enum Slot<'a> {
    Str(&'a mut Option<String>),
    U32(&'a mut Option<u32>),
    F64(&'a mut Option<f64>),
    Percent(&'a mut Option<f64>),
    Bool(&'a mut bool),
    Paths(&'a mut Vec<PathBuf>),
}

/// Every flag of a design, in the order the canonical form writes them.
const FLAGS: &[&str] = &[
    "chunk",
    "stripe",
    "drive",
    "catalog",
    "capacity",
    "mtbf",
    "afr",
    "ber",
    "sector-size",
    "rebuild-rate",
    "rebuild-time",
    "rpm",
    "avg-seek",
    "seq-rate",
    "fill",
    "read-iops",
    "write-iops",
    "seq-read",
    "seq-write",
    "controller",
    "controllers",
    "backend",
    "host-link",
    "no-write-back",
    "controller-max",
    "controller-max-iops",
    "controller-max-read",
    "controller-max-write",
    "controller-memory",
    "controller-latency",
    "host-latency",
    "mirror-link",
    "luns",
    "lun-read",
    "lun-write",
    "multipath",
    "ownership",
    "array-controllers",
    "enclosure",
    "host-limit",
    "hot-spares",
    "replace-delay",
    "mission",
    "fleet",
    "fs-su",
    "fs-sw",
    "seq-size",
    "random-size",
    "mix-read",
    "mix-size",
    "mix-sequential",
    "mix-buffered",
    "streams",
    "qd",
    "cores",
    "mbps-per-core",
];

/// Pairs of flags that contradict each other.
const CONFLICTS: &[(&str, &str)] = &[("mtbf", "afr"), ("rebuild-rate", "rebuild-time")];

impl DesignSpec {
    fn slot(&mut self, flag: &str) -> Option<Slot<'_>> {
        let (d, s, w) = (&mut self.drive, &mut self.system, &mut self.workloads);
        Some(match flag {
            "chunk" => Slot::Str(&mut self.chunk),
            "stripe" => Slot::Str(&mut self.stripe),
            "controllers" => Slot::U32(&mut self.controllers),
            "fs-su" => Slot::Str(&mut self.fs_su),
            "fs-sw" => Slot::U32(&mut self.fs_sw),
            "cores" => Slot::U32(&mut self.cores),
            "mbps-per-core" => Slot::F64(&mut self.mbps_per_core),
            "catalog" => Slot::Paths(&mut self.catalogs),
            "drive" => Slot::Str(&mut d.model),
            "capacity" => Slot::Str(&mut d.capacity),
            "mtbf" => Slot::Str(&mut d.mtbf),
            "afr" => Slot::Str(&mut d.afr),
            "ber" => Slot::Str(&mut d.ber),
            "sector-size" => Slot::Str(&mut d.sector_size),
            "rebuild-rate" => Slot::Str(&mut d.rebuild_rate),
            "rebuild-time" => Slot::Str(&mut d.rebuild_time),
            "rpm" => Slot::F64(&mut d.rpm),
            "avg-seek" => Slot::Str(&mut d.avg_seek),
            "seq-rate" => Slot::Str(&mut d.seq_rate),
            "fill" => Slot::Percent(&mut d.fill),
            "read-iops" => Slot::F64(&mut d.read_iops),
            "write-iops" => Slot::F64(&mut d.write_iops),
            "seq-read" => Slot::Str(&mut d.seq_read),
            "seq-write" => Slot::Str(&mut d.seq_write),
            "controller" => Slot::Str(&mut s.controller),
            "backend" => Slot::Str(&mut s.backend),
            "host-link" => Slot::Str(&mut s.host_link),
            "no-write-back" => Slot::Bool(&mut s.no_write_back),
            "controller-max" => Slot::Str(&mut s.controller_max),
            "controller-max-iops" => Slot::F64(&mut s.controller_max_iops),
            "controller-max-read" => Slot::Str(&mut s.controller_max_read),
            "controller-max-write" => Slot::Str(&mut s.controller_max_write),
            "controller-memory" => Slot::Str(&mut s.controller_memory),
            "controller-latency" => Slot::Str(&mut s.controller_latency),
            "host-latency" => Slot::Str(&mut s.host_latency),
            "mirror-link" => Slot::Str(&mut s.mirror_link),
            "luns" => Slot::U32(&mut s.luns),
            "lun-read" => Slot::Str(&mut s.lun_read),
            "lun-write" => Slot::Str(&mut s.lun_write),
            "multipath" => Slot::Str(&mut s.multipath),
            "ownership" => Slot::Str(&mut s.ownership),
            "array-controllers" => Slot::U32(&mut s.array_controllers),
            "enclosure" => Slot::Str(&mut s.enclosure),
            "host-limit" => Slot::Str(&mut s.host_limit),
            "hot-spares" => Slot::U32(&mut s.spares),
            "replace-delay" => Slot::Str(&mut s.replace_delay),
            "mission" => Slot::Str(&mut s.mission),
            "fleet" => Slot::U32(&mut s.fleet),
            "seq-size" => Slot::Str(&mut w.seq_size),
            "random-size" => Slot::Str(&mut w.random_size),
            "mix-read" => Slot::Str(&mut w.mix_read),
            "mix-size" => Slot::Str(&mut w.mix_size),
            "mix-sequential" => Slot::Bool(&mut w.mix_sequential),
            "mix-buffered" => Slot::Bool(&mut w.mix_buffered),
            "streams" => Slot::U32(&mut w.streams),
            "qd" => Slot::U32(&mut w.qd),
            _ => return None,
        })
    }

    /// The words of the canonical form (unquoted).
    pub fn words(&self) -> Vec<String> {
        let mut me = self.clone();
        let mut out = vec![self.layout.clone()];
        // A value that looks like a flag is joined to its flag, so that it
        // reads back as a value.
        let push = |out: &mut Vec<String>, flag: &str, v: String| {
            if v.starts_with('-') {
                out.push(format!("--{flag}={v}"));
            } else {
                out.push(format!("--{flag}"));
                out.push(v);
            }
        };
        for flag in FLAGS {
            match me.slot(flag) {
                Some(Slot::Str(v)) => {
                    if let Some(v) = v.take() {
                        push(&mut out, flag, v);
                    }
                }
                Some(Slot::U32(v)) => {
                    if let Some(v) = v.take() {
                        push(&mut out, flag, v.to_string());
                    }
                }
                Some(Slot::F64(v) | Slot::Percent(v)) => {
                    if let Some(v) = v.take() {
                        push(&mut out, flag, v.to_string());
                    }
                }
                Some(Slot::Bool(b)) if *b => out.push(format!("--{flag}")),
                Some(Slot::Paths(ps)) => {
                    for p in ps.drain(..) {
                        push(&mut out, flag, p.display().to_string());
                    }
                }
                Some(Slot::Bool(_)) | None => {}
            }
        }
        out
    }

    /// Parse the compact string (`storlab plan layout`'s arguments in one
    /// string, quoted as a shell quotes). Old stored forms (any flag order,
    /// `--flag=value`, output and database options) still parse.
    pub fn parse(spec: &str) -> Result<DesignSpec, PlanError> {
        let syntax = |reason: String| PlanError::DesignSyntax {
            spec: spec.to_string(),
            reason,
        };
        if spec.contains('\0') {
            return Err(syntax("it contains a NUL byte".into()));
        }
        let Some(words) = shlex::split(spec) else {
            return Err(PlanError::Design(format!(
                "design '{spec}': unbalanced quotes; quote a layout with spaces as 'lvm(4*R5/6, stripe=1M)'"
            )));
        };
        if words.is_empty() {
            return Err(PlanError::Design(
                "the design is empty; give storlab plan layout's arguments, e.g. \"R6/10/20 --drive exos-x18-18tb\"".into(),
            ));
        }
        let mut out = DesignSpec::default();
        let mut layout: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        let mut it = words.into_iter();
        while let Some(w) = it.next() {
            if !w.starts_with('-') || w == "-" {
                if let Some(first) = &layout {
                    return Err(syntax(format!(
                        "unexpected argument '{w}' found (the layout is '{first}'; quote a layout with spaces)"
                    )));
                }
                layout = Some(w);
                continue;
            }
            let Some(body) = w.strip_prefix("--").filter(|b| !b.is_empty()) else {
                return Err(syntax(format!("unexpected argument '{w}' found")));
            };
            let (flag, inline) = match body.split_once('=') {
                Some((f, v)) => (f.to_string(), Some(v.to_string())),
                None => (body.to_string(), None),
            };
            if flag == "against" {
                return Err(PlanError::Design(format!(
                    "design '{spec}': --against has no place in a design; the run tagged is what it is held against"
                )));
            }
            let known = matches!(flag.as_str(), "json" | "db" | "output-format")
                || DesignSpec::default().slot(&flag).is_some();
            if !known {
                return Err(syntax(format!("unexpected argument '--{flag}' found")));
            }
            if seen.contains(&flag) && flag != "catalog" {
                return Err(syntax(format!(
                    "the argument '--{flag}' cannot be used multiple times"
                )));
            }
            seen.push(flag.clone());
            let needs_value = !matches!(
                flag.as_str(),
                "json" | "mix-sequential" | "mix-buffered" | "no-write-back"
            );
            let value = if !needs_value {
                if let Some(v) = inline {
                    return Err(syntax(format!(
                        "unexpected value '{v}' for '--{flag}' found; no more were expected"
                    )));
                }
                String::new()
            } else {
                match inline {
                    Some(v) => v,
                    None => match it.next() {
                        Some(v) if !(v.starts_with('-') && v.len() > 1) => v,
                        _ => {
                            return Err(syntax(format!(
                                "a value is required for '--{flag}' but none was supplied"
                            )));
                        }
                    },
                }
            };
            // Output and database options of `storlab plan layout` are no
            // part of a design; old stored strings may carry them.
            match flag.as_str() {
                "json" | "db" => continue,
                "output-format" if value == "table" || value == "json" => continue,
                "output-format" => {
                    return Err(syntax(format!(
                        "invalid value '{value}' for '--output-format' (table or json)"
                    )));
                }
                _ => {}
            }
            let invalid = |kind: &str, e: String| {
                syntax(format!("invalid value '{value}' for '--{flag}': {kind}{e}"))
            };
            match out.slot(&flag) {
                None => return Err(syntax(format!("unexpected argument '--{flag}' found"))),
                Some(Slot::Str(v)) => *v = Some(value),
                Some(Slot::U32(v)) => {
                    *v = Some(value.parse().map_err(|e| invalid("", format!("{e}")))?);
                }
                Some(Slot::F64(v)) => {
                    *v = Some(value.parse().map_err(|e| invalid("", format!("{e}")))?);
                }
                Some(Slot::Percent(v)) => {
                    *v = Some(fill_percent(&value).map_err(|e| invalid("", e.0))?)
                }
                Some(Slot::Bool(b)) => *b = true,
                Some(Slot::Paths(ps)) => ps.push(PathBuf::from(value)),
            }
        }
        for (a, b) in CONFLICTS {
            if seen.iter().any(|f| f == a) && seen.iter().any(|f| f == b) {
                return Err(syntax(format!(
                    "the argument '--{a}' cannot be used with '--{b}'"
                )));
            }
        }
        if out.fs_su.is_some() != out.fs_sw.is_some() {
            return Err(syntax("--fs-su and --fs-sw go together".into()));
        }
        let Some(layout) = layout else {
            return Err(syntax(
                "the following required arguments were not provided: <LAYOUT>".into(),
            ));
        };
        out.layout = layout;
        Ok(out)
    }

    /// The design this spec describes (layout, hardware, repair policy,
    /// workloads), checked; `cat` holds the built-in catalog and the
    /// spec's `--catalog` files ([`DesignSpec::catalog`]).
    pub fn design(&self, cat: &Catalog) -> Result<Design, PlanError> {
        let l = self
            .layout
            .parse::<Layout>()?
            .with_sizes(self.chunk.as_deref(), self.stripe.as_deref())?;
        l.require_drives()?;
        let hardware = self
            .system
            .hardware(cat, &self.drive, self.controllers.unwrap_or(1))?;
        let (delay, mission) = self.system.repair()?;
        let workloads = self.workloads.workloads()?;
        let fs_stripe = match (&self.fs_su, self.fs_sw) {
            (Some(su), Some(sw)) => Some(FsStripe {
                su_bytes: size("fs-su", su)?,
                sw,
            }),
            _ => None,
        };
        let sizing = match self.cores {
            Some(cores) => Some(Sizing {
                cores,
                mb_per_s_per_core: positive(
                    "mbps-per-core",
                    self.mbps_per_core.unwrap_or(DEFAULT_MB_PER_S_PER_CORE),
                )?,
            }),
            None => None,
        };
        Ok(Design {
            layout: l,
            hardware,
            hot_spares: self.system.spares.unwrap_or(0),
            replace_delay_hours: delay,
            mission_hours: mission,
            fleet: self.system.fleet.unwrap_or(1),
            workloads,
            fs_stripe,
            sizing,
        })
    }

    /// The layout as the user typed it, with its `--chunk` and `--stripe`
    /// (what errors quote: `layout 'R6/12' --chunk 8E`).
    pub fn typed_layout(&self) -> String {
        [("--chunk", &self.chunk), ("--stripe", &self.stripe)]
            .iter()
            .filter_map(|(flag, v)| v.as_ref().map(|v| format!(" {flag} {v}")))
            .fold(format!("layout '{}'", self.layout), |acc, s| acc + &s)
    }

    /// The built-in catalog with the spec's `--catalog` files on top; `read`
    /// gives a file's text (the crate reads no files).
    pub fn catalog<E: fmt::Display>(
        &self,
        read: impl FnMut(&Path) -> Result<String, E>,
    ) -> Result<Catalog, PlanError> {
        catalog_with(&self.catalogs, read)
    }

    /// The spec with every `--catalog FILE` made absolute (a report made in
    /// another directory must find the same file).
    pub fn with_absolute_catalogs(mut self) -> Result<DesignSpec, PlanError> {
        for p in &mut self.catalogs {
            *p = std::path::absolute(&*p).map_err(|e| {
                PlanError::Design(format!("cannot make {} absolute: {e}", p.display()))
            })?;
        }
        Ok(self)
    }
}

impl fmt::Display for DesignSpec {
    /// The canonical form: the layout, then the flags in one order,
    /// quoted where a shell would need it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, w) in self.words().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
            if !w.is_empty() && w.chars().all(plain) {
                f.write_str(w)?;
                continue;
            }
            match shlex::try_quote(w) {
                Ok(q) => f.write_str(&q)?,
                // Only a NUL byte cannot be quoted, and parse refuses it.
                Err(_) => f.write_str(&w.replace('\0', ""))?,
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for DesignSpec {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DesignSpec::parse(s)
    }
}

/// The design a run is tagged with (`planned_as=...`): parsed, resolved
/// against the catalog (`read` gives catalog files' text) and checked as
/// `storlab plan layout` checks it (e.g. controllers for the groups), so
/// that a design a run records can always be predicted.
pub fn design_from_spec<E: fmt::Display>(
    spec: &str,
    read: impl FnMut(&Path) -> Result<String, E>,
) -> Result<Design, PlanError> {
    let in_design = |e: PlanError| match e {
        e @ (PlanError::Design(_) | PlanError::DesignSyntax { .. }) => e,
        e => PlanError::InDesign {
            spec: spec.to_string(),
            error: Box::new(e),
        },
    };
    let s = DesignSpec::parse(spec)?;
    let design = s
        .catalog(read)
        .and_then(|cat| s.design(&cat))
        .map_err(in_design)?;
    crate::evaluate(&design).map_err(in_design)?;
    Ok(design)
}

/// The design as a run records it: checked by [`design_from_spec`], in its
/// canonical form with every `--catalog FILE` made absolute.
pub fn design_to_record<E: fmt::Display>(
    spec: &str,
    read: impl FnMut(&Path) -> Result<String, E>,
) -> Result<String, PlanError> {
    design_from_spec(spec, read)?;
    Ok(DesignSpec::parse(spec)?
        .with_absolute_catalogs()?
        .to_string())
}

/// The built-in catalog with `files` on top (same name replaces).
pub fn catalog_with<E: fmt::Display>(
    files: &[PathBuf],
    mut read: impl FnMut(&Path) -> Result<String, E>,
) -> Result<Catalog, PlanError> {
    let mut cat = Catalog::builtin();
    for f in files {
        let text = read(f).map_err(|e| PlanError::Design(e.to_string()))?;
        cat.extend(&f.display().to_string(), &text)?;
    }
    Ok(cat)
}

/// `--fill`: a share of the disk in use, 1 to 100 percent.
pub fn fill_percent(s: &str) -> Result<f64, BadValue> {
    let p = parse_percent(s).map_err(BadValue::of)?;
    if p > 0.0 && p <= 100.0 {
        Ok(p)
    } else {
        Err(BadValue(format!(
            "{s} is not a share of the disk in use; give 1 to 100, e.g. 60%"
        )))
    }
}

fn flag_error(what: &str, reason: impl fmt::Display) -> PlanError {
    PlanError::invalid(format!("--{what}"), reason.to_string())
}
fn size(what: &str, s: &str) -> Result<u64, PlanError> {
    parse_size(s).map_err(|e| flag_error(what, e))
}
fn rate(what: &str, s: &str) -> Result<f64, PlanError> {
    parse_rate(s).map_err(|e| flag_error(what, e))
}
fn hours(what: &str, s: &str) -> Result<f64, PlanError> {
    parse_hours(s).map_err(|e| flag_error(what, e))
}
fn positive(what: &str, v: f64) -> Result<f64, PlanError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(PlanError::Design(format!(
            "--{what} must be a positive number, not {v}"
        )))
    }
}
fn positive_rate(what: &str, s: &str) -> Result<f64, PlanError> {
    positive(what, rate(what, s)?)
}
fn duration(what: &str, s: &str) -> Result<f64, PlanError> {
    parse_duration(s)
        .map_err(|e| flag_error(what, e))
        .map(|d| d.as_secs_f64())
}
fn bail<T>(msg: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError::Design(msg.into()))
}

/// Thousands separated by commas: `1,200,000`.
pub fn thousands(n: u64) -> String {
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

impl WorkloadChoice {
    /// The standard workloads (sequential, random, mixed) at the chosen
    /// sizes and concurrency.
    pub fn workloads(&self) -> Result<Vec<Workload>, PlanError> {
        let mix_read = parse_percent(self.mix_read.as_deref().unwrap_or("70"))
            .map_err(|e| flag_error("mix-read", e))?;
        let sz = perf::parse_request_size;
        let (streams, qd) = self.concurrency();
        let workloads = Workload::standard(
            sz("seq-size", self.seq_size.as_deref().unwrap_or("1M"))?,
            sz("random-size", self.random_size.as_deref().unwrap_or("4k"))?,
            Workload {
                buffered: self.mix_buffered,
                ..Workload::new(
                    Pattern::Mix {
                        read_pct: mix_read,
                        random: !self.mix_sequential,
                    },
                    sz("mix-size", self.mix_size.as_deref().unwrap_or("64k"))?,
                )
            },
        )
        .into_iter()
        .map(|w| w.with_concurrency(streams, qd))
        .collect::<Vec<_>>();
        perf::check_concurrency(streams, qd)?;
        Ok(workloads)
    }

    /// `--streams` and `--qd`, with their defaults.
    pub fn concurrency(&self) -> (u32, u32) {
        (
            self.streams.unwrap_or(DEFAULT_STREAMS),
            self.qd.unwrap_or(DEFAULT_QD),
        )
    }
}

impl DriveChoice {
    /// The catalog's drive with this choice's overrides applied (each noted
    /// in the drive's `overrides`, as the report prints them).
    pub fn resolve(&self, cat: &Catalog) -> Result<DriveSpec, PlanError> {
        let mut d = cat.drive(self.model.as_deref().unwrap_or(DEFAULT_DRIVE))?;
        self.common_overrides(&mut d)?;
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
                    *avg_seek_s = parse_duration(s)
                        .map_err(|e| flag_error("avg-seek", e))?
                        .as_secs_f64();
                    d.overrides.push(format!("seek overridden to {s}"));
                }
                if let Some(s) = &self.seq_rate {
                    *seq_bytes_per_s = positive_rate("seq-rate", s)?;
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
                    return bail(format!(
                        "{} is a disk: give --rpm, --avg-seek, --seq-rate (--read-iops/--write-iops/--seq-read/--seq-write are for SSDs)",
                        d.name
                    ));
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
                    *seq_read_bytes_per_s = positive_rate("seq-read", s)?;
                    d.overrides.push(format!("read rate overridden to {s}"));
                }
                if let Some(s) = &self.seq_write {
                    *seq_write_bytes_per_s = positive_rate("seq-write", s)?;
                    d.overrides.push(format!("write rate overridden to {s}"));
                }
                if self.rpm.is_some() || self.avg_seek.is_some() || self.seq_rate.is_some() {
                    return bail(format!(
                        "{} is an SSD: give --read-iops, --write-iops, --seq-read, --seq-write (--rpm/--avg-seek/--seq-rate are for disks)",
                        d.name
                    ));
                }
            }
        }
        if self.fill.is_some() && d.seq_outer_bytes_per_s.is_none() && self.seq_rate.is_none() {
            return bail(format!(
                "--fill needs the disk's outer and inner media rates, and the catalog has none for {}; give --seq-rate instead",
                d.name
            ));
        }
        Ok(d)
    }

    /// Overrides that apply to disks and SSDs alike.
    fn common_overrides(&self, d: &mut DriveSpec) -> Result<(), PlanError> {
        if let Some(c) = &self.capacity {
            d.capacity_bytes = size("capacity", c)?;
            if d.capacity_bytes == 0 {
                return bail("--capacity must be more than zero, e.g. 2TB");
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
            let p = parse_percent(a).map_err(|e| flag_error("afr", e))?;
            if p <= 0.0 || p >= 100.0 {
                return bail("--afr must be above 0% and below 100%, e.g. 1.5%");
            }
            d.mtbf_hours = mtbf_from_afr(p / 100.0);
            d.overrides.push(format!("AFR overridden to {p}%"));
        }
        if let Some(b) = &self.ber {
            let v: f64 = b.trim().parse().map_err(|_| {
                PlanError::Design(format!(
                    "--ber '{b}' is not a number; give errors per bit read, e.g. 1e-15"
                ))
            })?;
            if !(v > 0.0 && v < 1e-6) {
                return bail(format!(
                    "--ber {b} is not a per-bit error rate; data sheets give 1e-14 to 1e-17 (\"1 sector per 10^15 bits\" = 1e-15)"
                ));
            }
            d.ber_per_bit = v;
            d.overrides
                .push(format!("read error rate overridden to {v:e} per bit"));
        }
        if let Some(s) = &self.sector_size {
            d.sector_bytes = size("sector-size", s)?;
            if d.sector_bytes == 0 {
                return bail("--sector-size must be more than zero, e.g. 512 or 4k");
            }
            d.overrides
                .push(format!("sector size overridden to {} B", d.sector_bytes));
        }
        if let Some(r) = &self.rebuild_rate {
            d.rebuild_bytes_per_s = positive_rate("rebuild-rate", r)?;
            d.overrides.push(format!(
                "rebuild rate overridden to {}",
                format_rate(d.rebuild_bytes_per_s)
            ));
        }
        if let Some(t) = &self.rebuild_time {
            d.rebuild_hours = Some(positive("rebuild-time", hours("rebuild-time", t)?)?);
            d.overrides.push(format!("rebuild time overridden to {t}"));
        }
        Ok(())
    }
}

impl SystemChoice {
    /// The hardware: the catalog's controller with this choice's
    /// overrides, `controllers` of them, the drive, enclosure and host.
    pub fn hardware(
        &self,
        cat: &Catalog,
        drive: &DriveChoice,
        controllers: u32,
    ) -> Result<Hardware, PlanError> {
        let mut c = cat.controller(self.controller.as_deref().unwrap_or(DEFAULT_CONTROLLER))?;
        let link = |flag: &str, name: &str| cat.link(name).map_err(|e| flag_error(flag, e));
        if let Some(b) = &self.backend {
            c.backend = link("backend", b)?;
            c.overrides.push(format!("back-end {b}"));
        }
        if let Some(h) = &self.host_link {
            c.host = link("host-link", h)?;
            c.overrides.push(format!("host link {h}"));
        }
        if self.no_write_back {
            c.write_back = false;
            c.overrides.push("no write-back cache".to_string());
        }
        if let Some(m) = &self.controller_max {
            c.max_bytes_per_s = Some(positive_rate("controller-max", m)?);
            c.overrides.push(format!("throughput limit {m}"));
        }
        if let Some(i) = self.controller_max_iops {
            c.max_iops = Some(positive("controller-max-iops", i)?);
            c.overrides.push(format!("IOPS limit {i}"));
        }
        if let Some(m) = &self.controller_max_read {
            c.max_read_bytes_per_s = Some(positive_rate("controller-max-read", m)?);
            c.overrides.push(format!("read-path limit {m}"));
        }
        if let Some(m) = &self.controller_max_write {
            c.max_write_bytes_per_s = Some(positive_rate("controller-max-write", m)?);
            c.write_limit_by = Some("given with --controller-max-write".to_string());
            c.overrides.push(format!("write-path limit {m}"));
        }
        if let Some(m) = &self.controller_memory {
            c.memory_bytes_per_s = Some(positive_rate("controller-memory", m)?);
            c.overrides.push(format!("cache memory {m}"));
        }
        if let Some(t) = &self.controller_latency {
            c.cmd_latency_s = Some(duration("controller-latency", t)?);
            c.overrides.push(format!("command latency {t}"));
        }
        if let Some(t) = &self.host_latency {
            c.host_latency_s = duration("host-latency", t)?;
            c.overrides.push(format!("HBA and fabric latency {t}"));
        }
        if let Some(l) = &self.mirror_link {
            c.mirror = Some(link("mirror-link", l)?);
            c.overrides.push(format!("cache mirror over {l}"));
        }
        let luns = self.luns.unwrap_or(1);
        if luns == 0 {
            return bail("--luns must be at least 1");
        }
        c.luns = luns;
        if let Some(m) = &self.lun_read {
            c.lun_read_bytes_per_s = Some(positive_rate("lun-read", m)?);
            c.overrides.push(format!("per-LUN read-ahead {m}"));
        }
        if let Some(m) = &self.lun_write {
            c.lun_write_bytes_per_s = Some(positive_rate("lun-write", m)?);
            c.overrides.push(format!("per-LUN destage {m}"));
        }
        let ownership_text = self.ownership.as_deref().unwrap_or("active-active");
        let ownership = crate::path::Ownership::parse(ownership_text)?;
        if let Some(m) = &self.multipath {
            let mp = crate::path::Multipath::parse(m)?;
            let used = crate::path::ports_in_use(
                c.host.lanes,
                self.array_controllers.unwrap_or(2),
                luns,
                ownership,
                mp,
            );
            c.host = crate::path::link_in_use(&c.host, used);
            c.overrides.push(format!(
                "{m} multipathing, {ownership_text} ownership, {luns} LUN(s): {used} host port(s) in use"
            ));
        }
        let enclosure = match &self.enclosure {
            Some(e) => Some(EnclosureSpec {
                hot_spares: self.spares.unwrap_or(0),
                ..cat.enclosure(e)?
            }),
            None => None,
        };
        if controllers == 0 {
            return bail("--controllers must be at least 1");
        }
        Ok(Hardware {
            drive: drive.resolve(cat)?,
            controller: c,
            controllers,
            enclosure,
            host_bytes_per_s: match &self.host_limit {
                Some(h) => Some(positive_rate("host-limit", h)?),
                None => None,
            },
        })
    }

    /// Replacement delay and mission, hours.
    pub fn repair(&self) -> Result<(f64, f64), PlanError> {
        let mission = hours("mission", self.mission.as_deref().unwrap_or("5y"))?;
        if mission <= 0.0 {
            return bail("--mission must be positive, e.g. 5y or 43800h");
        }
        if self.fleet == Some(0) {
            return bail("--fleet must be at least 1");
        }
        Ok((
            hours(
                "replace-delay",
                self.replace_delay.as_deref().unwrap_or("24h"),
            )?,
            mission,
        ))
    }
}

/// The throughput objective of a search: sequential reads or writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ThroughputOf {
    // (Plain comments: values with help switch --help to clap's long layout.)
    SeqRead,
    #[default]
    SeqWrite,
}

/// The IOPS objective of a search: random reads or writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum IopsOf {
    RandRead,
    #[default]
    RandWrite,
}

/// What `storlab plan search` is asked: the drives and layouts to try, the
/// constraints and objectives, on a drive and system as in a design. With
/// the `clap` feature these are `plan search`'s flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct SearchChoice {
    /// Total drives (not counting hot spares): a count (48) or a range (24..96)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N|MIN..MAX", required_unless_present = "layout")
    )]
    pub drives: Option<String>,
    /// Only layouts of this shape; x is filled in from --drives, e.g. R60/12/x or
    /// 'lvm(x*R6/10, stripe=2M)' (fixes level, span, aggregation, chunk, stripe)
    #[cfg_attr(feature = "clap", arg(long, value_name = "LAYOUT", conflicts_with_all = ["levels", "spans", "chunks"]))]
    pub layout: Option<String>,
    /// RAID levels to try: r0 r1/r10 r5/r50 r6/r60 (a level covers single groups and
    /// groups striped by the controller or LVM)
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', default_value = "r10,r5,r6")
    )]
    pub levels: Vec<String>,
    /// Drives per group to try, e.g. 6..16 (default: R1 2-3, R5 3-16, R6 4-24)
    #[cfg_attr(feature = "clap", arg(long, value_name = "MIN..MAX"))]
    pub spans: Option<String>,
    /// Chunk sizes to try
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', default_value = "64k,256k,1M")
    )]
    pub chunks: Vec<String>,
    /// Try 1 to this many controllers (groups spread over them with LVM)
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    pub max_controllers: u32,
    /// Do not try LVM striping where the controller can stripe itself (R50/R60/R10)
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_lvm: bool,
    /// Minimum usable capacity, e.g. 200TB
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", help_heading = "Constraints")
    )]
    pub min_usable: Option<String>,
    /// Minimum volume MTTDL, e.g. 10000y
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DURATION", help_heading = "Constraints")
    )]
    pub min_mttdl: Option<String>,
    /// Maximum probability of data loss over the mission; designs above it are left
    /// out (100% keeps every design)
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "PERCENT",
            default_value = "1%",
            help_heading = "Constraints"
        )
    )]
    pub max_loss: String,
    /// Minimum throughput of the throughput workload, e.g. 2GB/s
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "RATE", help_heading = "Constraints")
    )]
    pub min_throughput: Option<String>,
    /// Minimum IOPS of the IOPS workload
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Constraints"))]
    pub min_iops: Option<f64>,
    /// Maximum cost (needs prices in the catalog, all in one currency)
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Constraints"))]
    pub max_cost: Option<f64>,
    /// Throughput objective
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_enum,
            default_value = "seq-write",
            help_heading = "Objectives"
        )
    )]
    pub throughput_of: ThroughputOf,
    /// IOPS objective
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_enum,
            default_value = "rand-write",
            help_heading = "Objectives"
        )
    )]
    pub iops_of: IopsOf,
    /// Request size of the throughput objective
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "1M",
            help_heading = "Objectives"
        )
    )]
    pub seq_size: String,
    /// Request size of the IOPS objective
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "4k",
            help_heading = "Objectives"
        )
    )]
    pub random_size: String,
    /// Independent streams (jobs) of every workload
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = DEFAULT_STREAMS, help_heading = "Workloads"))]
    pub streams: u32,
    /// Outstanding requests per stream (queue depth)
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = DEFAULT_QD, help_heading = "Workloads"))]
    pub qd: u32,
    /// Show at most this many Pareto-optimal designs in the table (JSON has all)
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 25))]
    pub top: usize,
    #[cfg_attr(feature = "clap", command(flatten))]
    pub drive: DriveChoice,
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it, and
    /// [override.drive."NAME"] tables change single fields of one
    #[cfg_attr(feature = "clap", arg(long = "catalog", value_name = "FILE"))]
    pub catalogs: Vec<PathBuf>,
    #[cfg_attr(feature = "clap", command(flatten))]
    pub system: SystemChoice,
}

/// A count (`48`) or a range `MIN..MAX` (`24..96`) of `--what`.
pub fn parse_range(what: &str, s: &str) -> Result<(u32, u32), PlanError> {
    let err = || {
        PlanError::Design(format!(
            "--{what} '{s}' should be a count (48) or a range MIN..MAX (24..96)"
        ))
    };
    let num = |x: &str| x.trim().parse::<u32>().map_err(|_| err());
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.trim_start_matches('='))?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if lo == 0 || lo > hi {
        return bail(format!(
            "--{what} '{s}' is empty or starts at zero; e.g. 24..96"
        ));
    }
    Ok((lo, hi))
}

impl SearchChoice {
    /// The search this describes, checked; `cat` holds the catalog files.
    pub fn spec(&self, cat: &Catalog) -> Result<SearchSpec, PlanError> {
        let hardware = self.system.hardware(cat, &self.drive, 1)?;
        let (delay, mission) = self.system.repair()?;
        let template: Option<Layout> = match &self.layout {
            Some(l) => Some(l.parse()?),
            None => None,
        };
        let (min_drives, max_drives) = match (&self.drives, template.and_then(|t| t.groups)) {
            (Some(d), _) => parse_range("drives", d)?,
            (None, Some(g)) => (
                g * template.map_or(1, |t| t.span),
                g * template.map_or(1, |t| t.span),
            ),
            (None, None) => {
                return bail(format!(
                    "--layout {} leaves the number of drives open; give --drives, e.g. --drives 24..96",
                    self.layout.as_deref().unwrap_or_default()
                ));
            }
        };
        let mut levels = Vec::new();
        for l in &self.levels {
            let lv = crate::layout::parse_level_family(l).map_err(|e| flag_error("levels", e))?;
            if !levels.contains(&lv) {
                levels.push(lv);
            }
        }
        let chunks = self
            .chunks
            .iter()
            .map(|c| crate::layout::parse_sector_multiple(c).map_err(|e| flag_error("chunks", e)))
            .collect::<Result<Vec<_>, _>>()?;
        if self.max_controllers == 0 {
            return bail("--max-controllers must be at least 1");
        }
        let spans = match &self.spans {
            Some(s) => Some(parse_range("spans", s)?),
            None => None,
        };
        perf::check_concurrency(self.streams, self.qd)?;
        let seq = size("seq-size", &self.seq_size)?;
        let rnd = size("random-size", &self.random_size)?;
        if seq == 0 || rnd == 0 {
            return bail("--seq-size and --random-size must be at least one byte, e.g. 1M and 4k");
        }
        let constraints = self.constraints()?;
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
                return bail(format!(
                    "--max-cost needs prices, and the catalog has none for the {}; add `price = ...` to those entries in a --catalog file",
                    missing.join(", ")
                ));
            }
            if let Some(mixed) = crate::design::mixed_currencies(&hardware) {
                return bail(format!(
                    "--max-cost needs prices in one currency, and the catalog's are in several ({mixed}); give the entries one `currency = ...` in a --catalog file"
                ));
            }
        }
        let drive = &hardware.drive;
        let spares = self.system.spares.unwrap_or(0);
        Ok(SearchSpec {
            reliability: ReliabilityInputs {
                drive_mtbf_hours: drive.mtbf_hours,
                drive_capacity_bytes: drive.capacity_bytes,
                ber_per_bit: drive.ber_per_bit,
                sector_bytes: drive.sector_bytes,
                rebuild_hours: drive.rebuild_hours(),
                replace_delay_hours: if spares > 0 { 0.0 } else { delay },
                mission_hours: mission,
                fleet: self.system.fleet.unwrap_or(1),
            },
            hardware,
            space: SearchSpace {
                min_drives,
                max_drives,
                levels,
                spans,
                chunks,
                max_controllers: self.max_controllers,
                try_lvm: !self.no_lvm,
                hot_spares: spares,
                template,
            },
            constraints,
            throughput_workload: Workload::new(
                if self.throughput_of == ThroughputOf::SeqWrite {
                    Pattern::SeqWrite
                } else {
                    Pattern::SeqRead
                },
                seq,
            )
            .with_concurrency(self.streams, self.qd),
            iops_workload: Workload::new(
                if self.iops_of == IopsOf::RandWrite {
                    Pattern::RandWrite
                } else {
                    Pattern::RandRead
                },
                rnd,
            )
            .with_concurrency(self.streams, self.qd),
        })
    }

    fn constraints(&self) -> Result<Constraints, PlanError> {
        Ok(Constraints {
            min_usable_bytes: self
                .min_usable
                .as_deref()
                .map(|s| size("min-usable", s))
                .transpose()?,
            min_mttdl_hours: self
                .min_mttdl
                .as_deref()
                .map(|s| hours("min-mttdl", s))
                .transpose()?,
            max_loss_probability: {
                let p = parse_percent(&self.max_loss).map_err(|e| flag_error("max-loss", e))?;
                if !(p > 0.0 && p <= 100.0) {
                    return bail(
                        "--max-loss must be above 0% and at most 100% (100% keeps every design), e.g. 0.1%",
                    );
                }
                (p < 100.0).then_some(p / 100.0)
            },
            min_throughput_bytes_per_s: self
                .min_throughput
                .as_deref()
                .map(|s| rate("min-throughput", s))
                .transpose()?,
            min_iops: self.min_iops,
            max_cost: self.max_cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn no_files(p: &Path) -> Result<String, BadValue> {
        Err(BadValue(format!("no file {} in this test", p.display())))
    }

    #[test]
    fn the_canonical_form_orders_flags_and_keeps_what_was_given() {
        let s = DesignSpec::parse(
            "--qd=4 --controller hba-9300-8i-md R0/1 --streams 1 --drive exos-x18-18tb",
        )
        .unwrap();
        assert_eq!(
            s.to_string(),
            "R0/1 --drive exos-x18-18tb --controller hba-9300-8i-md --streams 1 --qd 4"
        );
        let lvm =
            DesignSpec::parse("'lvm(4*R5/6, stripe=1M)' --controllers 2 --mix-buffered").unwrap();
        assert_eq!(lvm.layout, "lvm(4*R5/6, stripe=1M)");
        assert_eq!(lvm.controllers, Some(2));
        assert!(lvm.workloads.mix_buffered);
        assert_eq!(
            lvm.to_string(),
            "'lvm(4*R5/6, stripe=1M)' --controllers 2 --mix-buffered"
        );
    }

    /// Strings stored before the design was a domain object (any flag
    /// order, `--flag=value`, output options) still load, to the same
    /// design as their canonical form.
    #[test]
    fn old_stored_strings_still_load() {
        let cat = Catalog::builtin();
        for (old, canonical) in [
            (
                "--drive=exos-x18-18tb R60/10/20 --json --controller perc-h800",
                "R60/10/20 --drive exos-x18-18tb --controller perc-h800",
            ),
            (
                "R60/12/48 --output-format table --hot-spares 2 --mission 3y --afr 1.5%",
                "R60/12/48 --afr 1.5% --hot-spares 2 --mission 3y",
            ),
            ("R6/12 --fill 60%", "R6/12 --fill 60"),
        ] {
            let s = DesignSpec::parse(old).unwrap();
            assert_eq!(s.to_string(), canonical, "{old}");
            let again = DesignSpec::parse(canonical).unwrap();
            assert_eq!(s, again);
            assert_eq!(s.design(&cat).unwrap(), again.design(&cat).unwrap());
        }
    }

    #[test]
    fn bad_designs_name_the_problem() {
        let err = |s: &str| DesignSpec::parse(s).unwrap_err().to_string();
        assert!(err("").contains("the design is empty"));
        assert!(err("R6/12 'open").contains("unbalanced quotes"));
        assert!(err("R6/12 --no-such 1").contains("unexpected argument '--no-such'"));
        assert!(err("R6/12 --no-such").contains("unexpected argument '--no-such'"));
        assert!(err("R6/12 R5/6").contains("unexpected argument 'R5/6'"));
        assert!(err("R6/12 --drive").contains("a value is required for '--drive'"));
        assert!(err("R6/12 --drive a --drive b").contains("multiple times"));
        assert!(err("R6/12 --mtbf 1h --afr 1%").contains("cannot be used with"));
        assert!(err("R6/12 --streams many").contains("'--streams'"));
        assert!(err("R6/12 --fs-su 64k").contains("--fs-su and --fs-sw"));
        assert!(err("--drive exos-x18-18tb").contains("<LAYOUT>"));
        assert!(err("R6/12 --against latest").contains("--against has no place"));
        assert!(err("R6/12 --mix-buffered=yes").contains("unexpected value"));
        // Parses, but the model refuses it: named with the design.
        let e = design_from_spec("R0/1 --controllers 2", no_files)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("design 'R0/1 --controllers 2': "), "{e}");
        assert!(e.contains("controllers"), "{e}");
        let e = design_from_spec("R0/1 --catalog x.toml", no_files)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no file x.toml"), "{e}");
    }

    #[test]
    fn the_spec_resolves_to_the_design_plan_layout_evaluates() {
        let cat = Catalog::builtin();
        let d = DesignSpec::parse("R60/10/20 --capacity 2TB --hot-spares 1 --streams 4 --cores 8")
            .unwrap()
            .design(&cat)
            .unwrap();
        assert_eq!(d.hardware.drive.name, DEFAULT_DRIVE);
        assert_eq!(d.hardware.controller.name, DEFAULT_CONTROLLER);
        assert_eq!(d.hardware.drive.capacity_bytes, 2_000_000_000_000);
        assert_eq!(d.hot_spares, 1);
        assert!(
            d.workloads
                .iter()
                .all(|w| w.streams == 4 && w.qd == DEFAULT_QD)
        );
        assert_eq!(
            d.sizing.map(|s| s.mb_per_s_per_core),
            Some(DEFAULT_MB_PER_S_PER_CORE)
        );
        assert_eq!(d.replace_delay_hours, 24.0);
        crate::evaluate(&d).unwrap();
        // A design is a serde object too.
        let s = DesignSpec::parse("R6/12 --drive exos-x18-18tb --fill 50").unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<DesignSpec>(&json).unwrap(), s);
    }

    #[test]
    fn design_to_record_keeps_the_canonical_form_with_absolute_catalogs() {
        let read = |_: &Path| -> Result<String, BadValue> { Ok(String::new()) };
        let rec = design_to_record("--catalog c.toml R0/1", read).unwrap();
        let abs = std::path::absolute("c.toml").unwrap();
        assert_eq!(rec, format!("R0/1 --catalog {}", abs.display()));
    }

    fn word() -> impl Strategy<Value = String> {
        // Anything but NUL, including spaces, quotes and leading dashes.
        "[^\\x00]{0,12}"
    }

    fn opt<T: std::fmt::Debug + Clone>(
        s: impl Strategy<Value = T>,
    ) -> impl Strategy<Value = Option<T>> {
        proptest::option::of(s)
    }

    fn finite() -> impl Strategy<Value = f64> {
        prop_oneof![
            proptest::num::f64::NORMAL,
            Just(0.0),
            (0u32..100_000).prop_map(f64::from)
        ]
    }

    prop_compose! {
        fn drive()(model in opt(word()), capacity in opt(word()), mtbf in opt(word()),
                   ber in opt(word()), rpm in opt(finite()), fill in opt(1u32..=100),
                   read_iops in opt(finite()), seq_write in opt(word())) -> DriveChoice {
            DriveChoice { model, capacity, mtbf, ber, rpm, fill: fill.map(f64::from),
                          read_iops, seq_write, ..DriveChoice::default() }
        }
    }

    prop_compose! {
        fn system()(controller in opt(word()), no_write_back in any::<bool>(),
                    controller_max_iops in opt(finite()), luns in opt(any::<u32>()),
                    multipath in opt(word()), spares in opt(any::<u32>()),
                    mission in opt(word()), fleet in opt(any::<u32>())) -> SystemChoice {
            SystemChoice { controller, no_write_back, controller_max_iops, luns, multipath,
                           spares, mission, fleet, ..SystemChoice::default() }
        }
    }

    prop_compose! {
        fn spec()(layout in "-|([^\\x00-][^\\x00]{0,11})?", chunk in opt(word()),
                  controllers in opt(any::<u32>()), drive in drive(), system in system(),
                  mix_read in opt(word()), mix_sequential in any::<bool>(),
                  streams in opt(any::<u32>()), fs in opt((word(), any::<u32>())),
                  cores in opt(any::<u32>()), mbps in opt(finite()),
                  catalogs in proptest::collection::vec(word(), 0..3)) -> DesignSpec {
            DesignSpec {
                layout, chunk, controllers, drive, system,
                workloads: WorkloadChoice { mix_read, mix_sequential, streams,
                                            ..WorkloadChoice::default() },
                fs_su: fs.as_ref().map(|f| f.0.clone()), fs_sw: fs.map(|f| f.1),
                cores, mbps_per_core: mbps,
                catalogs: catalogs.into_iter().map(PathBuf::from).collect(),
                ..DesignSpec::default()
            }
        }
    }

    proptest! {
        /// The canonical form reads back as the same design.
        #[test]
        fn display_then_parse_is_the_same_spec(s in spec()) {
            let text = s.to_string();
            let back = DesignSpec::parse(&text);
            prop_assert_eq!(back.as_ref().ok(), Some(&s), "{} -> {:?}", text, back);
        }

        /// Whatever parses has one canonical form: parsing it again changes nothing.
        #[test]
        fn the_canonical_form_is_a_fixed_point(words in proptest::collection::vec(
            prop_oneof![word(), Just("--drive".to_string()), Just("--streams".to_string()),
                        Just("--mix-buffered".to_string()), Just("--catalog".to_string()),
                        Just("--fill=50".to_string()), Just("R6/12".to_string())], 0..8)) {
            let text = words.join(" ");
            if let Ok(s) = DesignSpec::parse(&text) {
                let canonical = s.to_string();
                prop_assert_eq!(DesignSpec::parse(&canonical).ok(), Some(s));
            }
        }
    }
}
