//! `storlab-monitor`: watch block devices without double counting stacked
//! layers, and explain how the storage under a path is set up.
//!
//! * [`diskstats`] and [`cpu`] parse `/proc/diskstats` (every kernel layout:
//!   7, 14, 18 and 20 fields) and `/proc/stat`;
//! * [`rates`] turns two snapshots into sysstat `iostat -x` figures
//!   ([`storlab_types::DeviceSample`]);
//! * [`tree`] reads the device stack from `/sys/block` ([`DeviceTree`]:
//!   partitions, holders/slaves, loop backing files) and picks the devices and
//!   totals of a [`Layer`] so each request is counted once;
//! * [`sampler`] holds the interval engine ([`Monitor`]) and the background
//!   [`Sampler`] whose [`SamplerHandle::stop`] returns a
//!   [`storlab_types::MonitorTimeline`];
//! * [`replay`] reads recorded snapshots, [`prometheus`] renders and serves
//!   the counters (`_total`, as node_exporter's), [`inspect`] gathers a
//!   path's file system and device facts and recommendations;
//! * [`positional`] reads iostat's `[DEVICE...] [INTERVAL [COUNT]]`;
//! * [`display`] turns each interval into the table, CSV rows or JSON
//!   lines `storlab monitor` writes, and [`inspect::render_text`] a report
//!   into the text `storlab inspect` prints; [`routes`] hands each interval
//!   to the Prometheus server, the timeline and the display, and
//!   [`session`] runs `storlab monitor`: the record file, the loops over a
//!   replay or the kernel, what happens when standard output goes away.
//!
//! The sysfs and procfs roots are injectable ([`SysPaths`]) so everything
//! runs against recorded fixtures in tests.
#![forbid(unsafe_code)]

pub mod cpu;
pub mod diskstats;
pub mod display;
pub mod inspect;
pub mod page_cache;
/// The mount table: the one parser, in `storlab-host`.
use storlab_host::mountinfo;
pub mod positional;
pub mod prometheus;
pub mod rates;
pub mod replay;
pub mod routes;
pub mod sampler;
pub mod session;
pub mod tree;

pub use sampler::{
    Interval, LiveSource, Monitor, Sampler, SamplerHandle, Snapshot, TimelineBuilder,
};
pub use tree::{DeviceTree, Layer, Selection, SysPaths};

use std::path::PathBuf;

impl From<mountinfo::Error> for Error {
    fn from(e: mountinfo::Error) -> Error {
        Error::Parse {
            what: "mountinfo",
            line: e.line,
            reason: e.reason,
        }
    }
}

impl From<session::RecordError> for Error {
    fn from(e: session::RecordError) -> Error {
        Error::Record(e)
    }
}

/// What went wrong, with what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot parse {what}, line {line}: {reason}")]
    Parse {
        what: &'static str,
        line: usize,
        reason: String,
    },
    #[error("cannot read {}: {err}", path.display())]
    Io { path: PathBuf, err: std::io::Error },
    /// A device or path the user named is not known; the message says how
    /// to list what is.
    #[error("{0}")]
    NotFound(String),
    /// Inconsistent data (a replay file whose time goes backwards, ...).
    #[error("{0}")]
    Data(String),
    #[error(
        "cannot listen on {addr}: {err}; pick another address or port (e.g. --listen 127.0.0.1:9465)"
    )]
    Listen { addr: String, err: std::io::Error },
    /// The record file (`storlab monitor --record FILE`).
    #[error("{0}")]
    Record(session::RecordError),
    /// Standard output failed during the monitor (reported at the end,
    /// after everything else was kept; `kept` says where the samples are).
    #[error("cannot write to standard output: {err}: the display stopped after that{kept}")]
    Display { err: std::io::Error, kept: String },
    /// No device to monitor at the layer asked for.
    #[error("no devices to monitor at layer {}", .0.as_str())]
    NoDevices(Layer),
    /// A replay file that cannot be used (`storlab monitor --replay`).
    #[error("{}", replay_error_text(file, what))]
    Replay { file: PathBuf, what: ReplayError },
}

/// What is wrong with a replay file.
#[derive(Debug)]
pub enum ReplayError {
    /// It cannot be read.
    Read(Box<Error>),
    /// A damaged line.
    Line { line: usize, reason: String },
    /// Data that does not hold together.
    Data(Box<Error>),
    /// None of the devices asked for is in it: those, and (some of) what it has.
    NoDevices {
        missing: Vec<String>,
        have: Vec<String>,
    },
    /// Fewer than two snapshots.
    Short(usize),
}

fn replay_error_text(file: &std::path::Path, what: &ReplayError) -> String {
    let f = file.display();
    match what {
        ReplayError::Read(e) => format!("reading the replay file {f}: {e}"),
        ReplayError::Line { line, reason } => {
            format!("{f}:{line}: {reason} (a replay file: see --replay in storlab monitor --help)")
        }
        ReplayError::Data(e) => format!("in the replay file {f}: {e}"),
        ReplayError::NoDevices { missing, have } => format!(
            "the replay file {f} has no samples of {}; it has: {}",
            missing.join(", "),
            have.join(" ")
        ),
        ReplayError::Short(n) => {
            format!(
                "the replay file {f} has {n} snapshot(s); at least 2 are needed for one interval"
            )
        }
    }
}
