//! Resolved hardware: the figures the models use, after the catalog and the
//! command-line overrides have been applied. Every rate is in bytes per
//! second (decimal), every time in seconds or hours as named.

use serde::Serialize;

/// How a drive serves I/O.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DriveMedia {
    /// A spinning disk: service time = seek + rotational latency + transfer.
    Hdd {
        rpm: f64,
        /// Average seek (read) time, seconds.
        avg_seek_s: f64,
        /// Sustained media rate (average over the surface), bytes/s.
        seq_bytes_per_s: f64,
    },
    /// A solid-state drive, described by its rated figures.
    Ssd {
        /// Rated 4 KiB random read IOPS (deep queue).
        read_iops: f64,
        /// Rated 4 KiB random write IOPS (steady state).
        write_iops: f64,
        seq_read_bytes_per_s: f64,
        seq_write_bytes_per_s: f64,
    },
}

/// A drive model with everything the three models need.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriveSpec {
    pub name: String,
    pub capacity_bytes: u64,
    pub media: DriveMedia,
    pub mtbf_hours: f64,
    /// Unrecoverable read errors per bit read.
    pub ber_per_bit: f64,
    pub sector_bytes: u64,
    /// Rate at which a rebuild writes the replacement drive, bytes/s.
    pub rebuild_bytes_per_s: f64,
    /// Rebuild time given directly (overrides capacity / rebuild rate), hours.
    pub rebuild_hours: Option<f64>,
    pub price: Option<f64>,
    /// The currency of `price` (the catalog's `currency`; none written:
    /// [`crate::catalog::DEFAULT_CURRENCY`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Fixed cost of every command the drive serves, seconds: command
    /// processing, and on disks the rotational miss between chunk-sized
    /// commands of a stream (docs/MODEL.md §3.1). A disk is busy for it;
    /// an SSD overlaps it with other commands, so it only adds latency.
    /// 0 = none modelled.
    #[serde(default)]
    pub cmd_overhead_s: f64,
    /// Disks: media rate at the outer and inner edge, bytes/s, when the
    /// catalog gives them; `seq_bytes_per_s` is then their zone average over
    /// the capacity in use ([`zone_average`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_outer_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_inner_bytes_per_s: Option<f64>,
    /// Figures replaced on the command line, as the report prints them
    /// (`capacity overridden to 2.00 TB`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// The concurrency knee `plan calibrate` fitted from a queue-depth
    /// sweep of the device, per direction and pattern (docs/MODEL.md §3.14):
    /// where one covers a workload, plan and sim queue the drives by it
    /// ([`crate::path::device_queue`]).
    #[serde(default, skip_serializing_if = "DriveQueues::is_empty")]
    pub queue: DriveQueues,
}

/// A calibrated device's queueing curves, one per direction and pattern
/// (the catalog's `[drive.queue.rand_read]` and so on).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveQueues {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_read: Option<crate::calibrate::QueueFit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_read: Option<crate::calibrate::QueueFit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_write: Option<crate::calibrate::QueueFit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_write: Option<crate::calibrate::QueueFit>,
}

impl DriveQueues {
    pub fn is_empty(&self) -> bool {
        self.seq_read.is_none()
            && self.rand_read.is_none()
            && self.seq_write.is_none()
            && self.rand_write.is_none()
    }

    /// The curve for one direction and pattern.
    pub fn get(&self, write: bool, random: bool) -> Option<&crate::calibrate::QueueFit> {
        match (write, random) {
            (false, false) => self.seq_read.as_ref(),
            (false, true) => self.rand_read.as_ref(),
            (true, false) => self.seq_write.as_ref(),
            (true, true) => self.rand_write.as_ref(),
        }
    }

    /// Each curve with its name as the catalog writes it.
    pub fn named(&self) -> [(&'static str, Option<&crate::calibrate::QueueFit>); 4] {
        [
            ("seq_read", self.seq_read.as_ref()),
            ("rand_read", self.rand_read.as_ref()),
            ("seq_write", self.seq_write.as_ref()),
            ("rand_write", self.rand_write.as_ref()),
        ]
    }
}

/// Average media rate of a zoned disk over the outer `used` fraction of its
/// capacity (0 < used ≤ 1), from the rates at the outer and inner edge.
///
/// With constant linear bit density the rate is proportional to the radius
/// r and the capacity between r and the outer edge to r_o² − r². Reading the
/// outer fraction u takes ∫ dC / rate ∝ (r_o − r_u), so the average is
/// (rate(r_o) + rate(r_u)) / 2 with r_u² = r_o² − u (r_o² − r_i²).
pub fn zone_average(outer: f64, inner: f64, used: f64) -> f64 {
    let u = used.clamp(0.0, 1.0);
    let ratio = (inner / outer).clamp(0.0, 1.0);
    let r_u = (1.0 - u * (1.0 - ratio * ratio)).sqrt();
    outer * (1.0 + r_u) / 2.0
}

impl DriveSpec {
    /// Rebuild time in hours: as given, or capacity / rebuild rate.
    pub fn rebuild_hours(&self) -> f64 {
        self.rebuild_hours
            .unwrap_or(self.capacity_bytes as f64 / self.rebuild_bytes_per_s / 3600.0)
    }

    /// Busy time of one operation of `bytes`, seconds (its command
    /// overhead included).
    pub fn op_time(&self, write: bool, bytes: f64, access: Access) -> f64 {
        self.busy(write, bytes, 1.0, access)
    }

    /// Unloaded latency of one operation of `bytes`, seconds: its busy
    /// time plus, on an SSD, the command overhead it overlaps with others.
    pub fn latency(&self, write: bool, bytes: f64, access: Access) -> f64 {
        let busy = self.op_time(write, bytes, access);
        if self.is_hdd() {
            busy
        } else {
            busy + self.cmd_overhead_s
        }
    }

    /// Busy time of `ops` operations moving `bytes` in all, seconds.
    pub fn busy(&self, write: bool, bytes: f64, ops: f64, access: Access) -> f64 {
        let fixed = ops * self.cmd_overhead_s;
        match &self.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => {
                let rev = 60.0 / rpm;
                let transfer = bytes / seq_bytes_per_s;
                let position = match access {
                    Access::Stream => 0.0,
                    Access::Random => avg_seek_s + rev / 2.0,
                    Access::Near => rev / 2.0,
                    Access::SameSpot => rev,
                };
                fixed + ops * position + transfer
            }
            DriveMedia::Ssd {
                read_iops,
                write_iops,
                seq_read_bytes_per_s,
                seq_write_bytes_per_s,
            } => {
                let (iops, bw) = if write {
                    (write_iops, seq_write_bytes_per_s)
                } else {
                    (read_iops, seq_read_bytes_per_s)
                };
                // An SSD overlaps its commands: the fixed cost adds to each
                // command's latency ([`DriveSpec::latency`]), not to the
                // drive's busy time; the rated IOPS bound small requests.
                match access {
                    Access::Stream => bytes / bw,
                    _ => (ops / iops).max(bytes / bw),
                }
            }
        }
    }

    pub fn is_hdd(&self) -> bool {
        matches!(self.media, DriveMedia::Hdd { .. })
    }
}

/// Where the head is when an operation starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Streaming: no positioning between operations.
    Stream,
    /// Anywhere: average seek plus half a revolution.
    Random,
    /// Close by (next stripe of a sequential stream): half a revolution.
    Near,
    /// The block just read, written back: one full revolution.
    SameSpot,
}

/// A link with its usable rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkSpec {
    /// As typed, e.g. `sas12x4`.
    pub name: String,
    /// Lanes or ports.
    pub lanes: u32,
    /// Usable payload rate of all lanes together, bytes/s.
    pub bytes_per_s: f64,
    /// A shared bus (parallel SCSI): all drives on it share one rate.
    pub shared_bus: bool,
    /// Usable rate in the write direction (host to drives) when it differs
    /// from `bytes_per_s` (the read direction); a full-duplex link carries
    /// both directions at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_s: Option<f64>,
}

impl LinkSpec {
    /// A symmetric full-duplex link (the same usable rate both ways).
    pub fn new(name: impl Into<String>, lanes: u32, bytes_per_s: f64) -> Self {
        LinkSpec {
            name: name.into(),
            lanes,
            bytes_per_s,
            shared_bus: false,
            write_bytes_per_s: None,
        }
    }

    /// Usable rate in the write direction.
    pub fn write_rate(&self) -> f64 {
        self.write_bytes_per_s.unwrap_or(self.bytes_per_s)
    }

    /// Requests per second the link carries when each moves `read` bytes in
    /// the read direction and `write` bytes in the write direction: a shared
    /// bus (half duplex) adds the two times, a full-duplex link is bound by
    /// the busier direction.
    pub fn capacity(&self, read: f64, write: f64) -> f64 {
        let tr = if read > 0.0 {
            read / self.bytes_per_s
        } else {
            0.0
        };
        let tw = if write > 0.0 {
            write / self.write_rate()
        } else {
            0.0
        };
        let t = if self.shared_bus { tr + tw } else { tr.max(tw) };
        if t > 0.0 { 1.0 / t } else { f64::INFINITY }
    }
}

/// A RAID controller (or an HBA with host software RAID).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControllerSpec {
    pub name: String,
    /// Front-end bytes/s the controller can move (its own limit).
    pub max_bytes_per_s: Option<f64>,
    /// Front-end requests/s the controller can process.
    pub max_iops: Option<f64>,
    /// Parity engine rate: bytes of parity computed per second (a RAID 6
    /// write computes P and Q, twice the work of RAID 5's P).
    pub parity_bytes_per_s: Option<f64>,
    /// Read-path limit of the controller (or array), front-end bytes/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read_bytes_per_s: Option<f64>,
    /// Write-path limit: the parity engine, the write-back cache's own
    /// bandwidth and, in dual-controller arrays, the mirroring of the cache
    /// to the partner; front-end bytes/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write_bytes_per_s: Option<f64>,
    /// What sets the write-path limit, for the explanation ("parity engine",
    /// "cache mirroring to the partner controller").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_limit_by: Option<String>,
    /// Bandwidth of the controller's cache memory (all reads and writes of
    /// it together), bytes/s: every byte moves through it several times
    /// (docs/MODEL.md §3.9, [`crate::path::memory_crossings`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes_per_s: Option<f64>,
    /// The path over which a dual controller mirrors its write-back cache
    /// to the partner: every written byte crosses it once more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<LinkSpec>,
    /// The controller computes parity itself (a RAID-on-chip or RAID
    /// processor with its cache memory), as opposed to an HBA whose host
    /// does it: its write path for parity RAID then has a limit of its
    /// own, unknown unless `max_write`, `parity_rate` or `memory_bandwidth`
    /// is published ([`crate::path::unknowns`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parity_on_controller: bool,
    /// One LUN's (volume's) read-ahead rate, bytes/s: a controller
    /// prefetches for each LUN at its own pace (docs/MODEL.md §3.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lun_read_bytes_per_s: Option<f64>,
    /// One LUN's destage (flush to the back end) rate, bytes/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lun_write_bytes_per_s: Option<f64>,
    /// LUNs the workload spreads over (the per-LUN rates scale with them).
    #[serde(skip_serializing_if = "is_one")]
    pub luns: u32,
    /// The controller's own time per command (firmware, cache look-up, DMA
    /// set-up), seconds, when published or measured: part of one request's
    /// round trip, which bounds a stream with few requests in flight
    /// (docs/MODEL.md §3.12, [`crate::path::RoundTrip`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd_latency_s: Option<f64>,
    /// The host side of one request's round trip, seconds: the initiator's
    /// HBA and driver and the fabric's switch hops, both ways (0 = none
    /// given).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub host_latency_s: f64,
    /// The era and kind of part (`RAID-on-chip, 3Gb/s SAS (LSI SAS1078,
    /// 2007-2009)`): what comparable parts' measurements are taken from
    /// where this one's figure is not published (docs/MODEL.md §3.13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The write rates measured on comparable parts of its class, with
    /// their sources, when a sourced set exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typical_write: Option<TypicalRange>,
    /// Figures replaced on the command line, as the report prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// Write-back cache that gathers sequential writes into full stripes.
    pub write_back: bool,
    /// Drive-side ports (e.g. 8 lanes of 12 Gb/s SAS).
    pub backend: LinkSpec,
    /// Host-side link (PCIe slot, or FC/iSCSI ports of an external array).
    pub host: LinkSpec,
    pub max_drives: Option<u32>,
    pub price: Option<f64>,
    /// The currency of `price`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

impl ControllerSpec {
    /// The one constructor: a controller with these drive-side and host-side
    /// links that limits nothing else (no published throughput, IOPS,
    /// parity or per-LUN figure), with a write-back cache and one LUN. The
    /// catalog and the command line fill in what they know.
    pub fn new(name: impl Into<String>, backend: LinkSpec, host: LinkSpec) -> Self {
        ControllerSpec {
            name: name.into(),
            max_bytes_per_s: None,
            max_iops: None,
            parity_bytes_per_s: None,
            max_read_bytes_per_s: None,
            max_write_bytes_per_s: None,
            write_limit_by: None,
            memory_bytes_per_s: None,
            mirror: None,
            parity_on_controller: false,
            lun_read_bytes_per_s: None,
            lun_write_bytes_per_s: None,
            luns: 1,
            cmd_latency_s: None,
            host_latency_s: 0.0,
            class: None,
            typical_write: None,
            overrides: Vec::new(),
            write_back: true,
            backend,
            host,
            max_drives: None,
            price: None,
            currency: None,
        }
    }
}

/// A range of figures measured on comparable parts, with where each came
/// from: shown beside an upper bound, never used as the prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypicalRange {
    pub low_bytes_per_s: f64,
    pub high_bytes_per_s: f64,
    /// The published measurements the range is taken from.
    pub source: String,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// A drive enclosure (JBOD) behind a controller.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnclosureSpec {
    pub name: String,
    pub slots: u32,
    pub uplink: LinkSpec,
    pub price: Option<f64>,
    /// The currency of `price`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Hot spares housed in these enclosures: they carry no data but each
    /// takes a bay (the design's `--hot-spares`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hot_spares: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Everything about the hardware of one design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hardware {
    pub drive: DriveSpec,
    pub controller: ControllerSpec,
    /// Controllers the groups are spread over (LVM aggregation).
    pub controllers: u32,
    pub enclosure: Option<EnclosureSpec>,
    /// What the host itself can move, bytes/s (memory, CPU, file system).
    pub host_bytes_per_s: Option<f64>,
}

impl Hardware {
    /// Enclosures needed for `drives` data drives and the hot spares
    /// housed with them (every one takes a bay); none without an enclosure
    /// model.
    pub fn enclosures_for(&self, drives: u32) -> u32 {
        self.enclosure.as_ref().map_or(0, |e| {
            drives.saturating_add(e.hot_spares).div_ceil(e.slots.max(1))
        })
    }
}
