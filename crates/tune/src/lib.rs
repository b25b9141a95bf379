//! The workflow of `storlab tune TUNER`: find the best value of one
//! block-layer setting for the user's own device by measuring each
//! candidate, then put everything back. `readahead` is the first tuner.
//!
//! The front end keeps the flags and prints; this crate owns the rest:
//!
//! - [`stack`]: the layers under a path whose read-ahead can be set, top
//!   first, and reading and writing their values;
//! - [`state`]: one tuning per device at a time (an `flock` per device),
//!   the state file written before the first change (original values and
//!   each device's identity) and the recovery that puts them back — at
//!   the end, on error or signal, and after a kill on the next start —
//!   only onto the device they were saved from;
//! - [`child`]: what the child benches read, their command lines, and
//!   running them (each measurement a child `storlab bench`, through
//!   [`Measure`]);
//! - [`measure`]: the values tried, the best two read again for the
//!   run-to-run noise, which points are trusted, and the verdict;
//! - [`doc`]: the result document (`--json`) and its text (the table, in
//!   the style the front end passes, and the advice).
//!
//! Nothing here prints: progress goes through [`Measure::announce`],
//! warnings come back as data.

#![forbid(unsafe_code)]

pub mod child;
pub mod doc;
pub mod measure;
pub mod stack;
pub mod state;

pub use doc::{TuneDoc, TuneParams};
pub use measure::{Measure, NoiseDoc, Point, RepeatDoc, Verdict};
pub use stack::Layer;
pub use state::{Identity, Recovery, Restored, SavedState, Tuning};

use std::path::PathBuf;

/// What went wrong, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file operation, with what was being done (`cannot write X`).
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A sysfs value that is not a number.
    #[error("{} holds '{text}', not a number", path.display())]
    NotANumber {
        path: PathBuf,
        text: String,
        #[source]
        source: std::num::ParseIntError,
    },
    /// Nothing under the target has a read-ahead.
    #[error("no layer under {} has a read-ahead setting (queue/read_ahead_kb)", target.display())]
    NoReadahead { target: PathBuf },
    /// A state file that does not parse.
    #[error(
        "{} is damaged; check the read-ahead values by hand, then remove it",
        path.display()
    )]
    DamagedState {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// Another tuning holds a device.
    #[error(
        "another storlab tune is running on /dev/{device} (pid {}); wait for it to finish, \
         or stop it (kill {}) and it puts the read-ahead back (nothing was changed)",
        pid.map_or_else(|| "unknown".to_string(), |p| p.to_string()),
        pid.map_or_else(|| "PID".to_string(), |p| p.to_string())
    )]
    Busy { device: String, pid: Option<u32> },
    /// `--values` not multiples of 4k.
    #[error("--values: give read-ahead sizes that are multiples of 4k, e.g. 128k,1m,4m")]
    BadValues,
    /// The child bench that lays out the file the reads go to failed.
    #[error("laying out {} failed ({status})", file.display())]
    LayOut { file: PathBuf, status: String },
    /// A target that cannot be read in place nor hold a file.
    #[error("{} is neither a block device nor a directory", target.display())]
    NotDeviceOrDir { target: PathBuf },
    #[error(transparent)]
    Monitor(#[from] storlab_monitor::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// `f` on an I/O error, as `what`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.into();
        move |source| Error::Io { what, source }
    }
}

/// This crate's results.
pub type Result<T> = std::result::Result<T, Error>;
