//! `storlab-sim`: simulate a storage architecture at cluster scale before it
//! is built — clients, networks, data movers, a file-system layer, arrays and
//! drives — and say which component binds.
//!
//! The main type is [`Scenario`] (a TOML file, [`scenario`]) resolved against
//! the hardware catalog ([`catalog`], an adapter over `storlab-plan`'s) into
//! a [`Resolved`] model. Two solvers read the same model ([`model`]):
//!
//! * [`analytic::solve`]: bottleneck bounds plus exact mean value analysis —
//!   instant, so sweeps of thousands of points cost nothing;
//! * [`des::simulate`]: a discrete-event simulation of every request on the
//!   event engine ([`engine`]: integer-nanosecond time, event queue, seeded
//!   RNG — the same seed gives the same result bit for bit) with bandwidth
//!   shared max-min fairly among flows ([`net`]), for what bounds cannot
//!   express: lock serialisation, caches filling over time, latency
//!   distributions.
//!
//! [`sweep()`] runs either over `--vary` values; [`listing()`] is what
//! `storlab sim` lists of them and [`record()`] the run of kind `sim` the
//! store keeps. The crate is pure: it reads no files and prints nothing. Definitions and sources: `docs/SIM.md`.
#![forbid(unsafe_code)]

pub mod analytic;
pub mod catalog;
pub mod chart;
pub mod des;
pub mod engine;
pub mod error;
pub mod listing;
pub mod model;
pub mod net;
pub mod record;
pub mod scenario;
pub mod sweep;

pub use catalog::SimCatalog;
pub use error::SimError;
pub use listing::{Listing, listing};
pub use model::{Point, Utilisation};
pub use record::{SIM_SCHEMA_VERSION, document, record};
pub use scenario::{Resolved, Scenario, Vary, parse_vary};
pub use sweep::{Solver, SweepPoint, sweep};
