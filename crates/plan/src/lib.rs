//! `storlab-plan`: design a storage system before buying it.
//!
//! The main type is [`Design`]: a RAID [`layout::Layout`] (parsed from the
//! notation storage engineers use, `R60/12/48` or `lvm(4*R6/10, stripe=2M)`)
//! on drives, controllers and links from the hardware [`catalog::Catalog`].
//! From a design the crate computes
//!
//! * the geometry and capacity ([`layout::Geometry`]) and stripe alignment,
//! * reliability ([`reliability`]): mean time to data loss per group and per
//!   volume from a continuous-time Markov chain (closed form, checked against
//!   a numerical solution of the same chain), with unrecoverable read errors
//!   during rebuild, and the probability of loss over a mission time,
//! * predicted performance ([`perf`]): a bottleneck model over disks, RAID
//!   work, controllers, links and host that says which part binds,
//! * the Pareto-optimal designs among many ([`search`]),
//! * and each stored run's phases predicted beside what they measured
//!   ([`against`]).
//!
//! A design as the user writes it is a [`spec::DesignSpec`]; [`workflow`] is
//! what each `storlab plan` command does with it, and [`render`] the text
//! (tables, Markdown, CSV) it prints.
//!
//! Formulas and sources: `docs/MODEL.md`. The crate is pure: it reads no files
//! (the CLI hands it catalog text) and prints nothing.
#![forbid(unsafe_code)]

pub mod against;
pub mod calibrate;
pub mod catalog;
pub mod design;
pub mod error;
pub mod hardware;
pub mod layout;
pub mod path;
pub mod perf;
pub mod reliability;
pub mod render;
pub mod search;
pub mod spec;
pub mod workflow;

pub use design::{Design, DesignReport, PLAN_SCHEMA_VERSION, evaluate};
pub use error::PlanError;
pub use layout::{Aggregation, Geometry, GroupLevel, Layout};
pub use spec::{DesignSpec, design_from_spec, design_to_record};
