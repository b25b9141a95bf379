//! `storlab-campaign`: campaigns, a matrix of configurations that must be
//! built and torn down between tests (`storlab campaign FILE.toml`).
//!
//! * [`spec`]: the campaign file (`[[cell]]` tables, or `[matrix]` ×
//!   `[template]` with `{key}` placeholders) parsed and expanded into
//!   [`Cell`]s; pure.
//! * [`state`]: the campaign directory (saved campaign, per-cell state
//!   written atomically, logs), the resume decisions and the arguments of a
//!   cell's child runs.
//! * `runs` and `report` (feature `results`, on by default): a campaign's
//!   runs in the results database, the comparison across cells, the
//!   `--json` documents and their text forms. The fuzz check builds
//!   without them (the file format and state only).
//!
//! Nothing here prints or starts a process: the CLI runs the setup,
//! teardown and storlab child processes and prints.
#![forbid(unsafe_code)]

#[cfg(feature = "results")]
pub mod report;
#[cfg(feature = "results")]
pub mod runs;
pub mod spec;
pub mod state;

pub use spec::{Campaign, CampaignError, CampaignFile, Cell};
pub use state::{CellState, CellStatus, Dir, Stage, State, StateError};
