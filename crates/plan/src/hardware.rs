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
}

impl DriveSpec {
    /// Rebuild time in hours: as given, or capacity / rebuild rate.
    pub fn rebuild_hours(&self) -> f64 {
        self.rebuild_hours
            .unwrap_or(self.capacity_bytes as f64 / self.rebuild_bytes_per_s / 3600.0)
    }

    /// Busy time of one operation of `bytes`, seconds.
    pub fn op_time(&self, write: bool, bytes: f64, access: Access) -> f64 {
        match &self.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => {
                let rev = 60.0 / rpm;
                let transfer = bytes / seq_bytes_per_s;
                match access {
                    Access::Stream => transfer,
                    Access::Random => avg_seek_s + rev / 2.0 + transfer,
                    Access::Near => rev / 2.0 + transfer,
                    Access::SameSpot => rev + transfer,
                }
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
                match access {
                    Access::Stream => bytes / bw,
                    _ => (1.0 / iops).max(bytes / bw),
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
}

/// A RAID controller (or an HBA with host software RAID).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControllerSpec {
    pub name: String,
    /// Front-end bytes/s the controller can move (its own limit).
    pub max_bytes_per_s: Option<f64>,
    /// Front-end requests/s the controller can process.
    pub max_iops: Option<f64>,
    /// Parity (XOR/P+Q) engine rate in data bytes/s.
    pub parity_bytes_per_s: Option<f64>,
    /// Write-back cache that gathers sequential writes into full stripes.
    pub write_back: bool,
    /// Drive-side ports (e.g. 8 lanes of 12 Gb/s SAS).
    pub backend: LinkSpec,
    /// Host-side link (PCIe slot, or FC/iSCSI ports of an external array).
    pub host: LinkSpec,
    pub max_drives: Option<u32>,
    pub price: Option<f64>,
}

/// A drive enclosure (JBOD) behind a controller.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnclosureSpec {
    pub name: String,
    pub slots: u32,
    pub uplink: LinkSpec,
    pub price: Option<f64>,
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
