//! `storlab-types`: the vocabulary every storlab crate shares.
//!
//! * [`units`]: sizes, durations, rates and percentages as storage people type
//!   them (`4k`, `64KiB`, `10GB`, `30s`, `50MB/s`, `1.5%`), parsed with errors
//!   that say what is allowed, and formatted with explicit unit suffixes.
//! * [`record`]: the result records ([`record::BenchReport`] and its
//!   [`record::PhaseResult`]s) that the bench engine produces and that the JSON
//!   output, the store and the reports consume. [`SCHEMA_VERSION`] versions
//!   them; `docs/results-schema.md` documents them.
//! * [`time`]: the length of a year and RFC 3339 timestamps; [`csv`]: the
//!   one CSV field quoting; [`text`]: control characters escaped for a
//!   terminal. One definition of each, shared by every crate.
//!
//! This crate does no I/O (beyond reading the clock).
#![forbid(unsafe_code)]

pub mod access;
pub mod csv;
pub mod fio_units;
pub mod fioverify;
pub mod metric;
pub mod outcome;
pub mod params;
pub mod pattern;
pub mod range;
pub mod record;
pub mod replay;
pub mod run_control;
pub mod text;
// The closed vocabularies of a record as enums with their JSON words.
pub mod kinds;
pub mod time;
pub mod units;

pub use access::{RandomDistribution, RateProcess, UnifiedRw, ZbdParams, Zone};
pub use fio_units::fio_size;
pub use metric::Metric;
pub use pattern::Pattern;
pub use record::*;
pub use replay::{LagNs, ReplayFigures, ReplayFile};
pub use run_control::{ExitWhat, LatencyTargetResult, RunControl, Sprandom};
pub use units::{
    ByteSize, ParseError, format_bytes, format_latency_ns, format_rate, parse_duration,
    parse_percent, parse_rate, parse_relative_size, parse_size, ram_bytes, set_ram_bytes,
};

pub use kinds::{CacheState, MonitorLayer, RunKind, TargetKind};

/// Version of the JSON result document (and of [`record::BenchReport`]).
/// Bump it when a field changes meaning or disappears; adding a field does not.
pub const SCHEMA_VERSION: u32 = 1;

/// The tag that carries a run's design (`bench --design`): `storlab plan
/// layout`'s arguments, read back by `storlab report`.
pub const DESIGN_TAG: &str = "planned_as";

/// The storlab version that produced a record.
pub const STORLAB_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod units_proptests;
