//! storlab's printer: the tables a person reads. Every function is pure
//! (a result in, a `String` or a [`comfy_table::Table`] out) and none
//! writes to stdout: the command line decides where the text goes.
//!
//! - [`style`]: the two table styles (results, listings) every table uses.
//! - [`mod@bench`]: a bench run's phase table and notes.
//! - [`campaign`]: a campaign's comparison across cells and its result text.
//! - [`cluster`]: a multi-client run's cluster, clients and `-q` tables.
//! - [`repeat`]: the summary of a `--repeat` series (ours and IOR's).
//! - [`import`]: what `storlab import` saved.
//! - [`md`]: an md run's phase table and notes.
//! - [`progress`]: what a bench run's live progress line says.
//! - [`show`]: one stored run as `storlab show` prints it.
//! - [`runs`]: the `storlab runs` listing.
//! - [`sim`]: `storlab sim`'s listing of simulated points.
//! - [`sweep`]: a sweep's table (a row per point and phase) and totals.

#![forbid(unsafe_code)]

pub mod bench;
pub mod campaign;
pub mod cluster;
pub mod fiojson;
pub mod import;
pub mod md;
pub mod progress;
pub mod repeat;
pub mod runs;
pub mod show;
pub mod sim;
pub mod style;
pub mod sweep;

#[cfg(test)]
mod fixture;
