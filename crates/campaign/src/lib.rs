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
//! * `process` and `run` (feature `run`): running a campaign, its cells
//!   in order through the sweeper's loop for child-run points, each
//!   cell's setup, child `storlab` runs and teardown as child processes
//!   that do not outlive storlab, resume, timeouts, and the summary.
//!
//! Nothing here prints: the CLI declares the flags, supplies the stop
//! request and the words for what happens, and prints.
#![forbid(unsafe_code)]

#[cfg(feature = "run")]
pub mod process;
#[cfg(feature = "results")]
pub mod report;
#[cfg(feature = "run")]
pub mod run;
#[cfg(feature = "results")]
pub mod runs;
pub mod spec;
pub mod state;

pub use spec::{Campaign, CampaignError, CampaignFile, Cell};
pub use state::{CellState, CellStatus, Dir, Stage, State, StateError};

/// How a campaign runs, for people: `storlab campaign --help` shows it
/// after the flags.
pub const HELP: &str = "\
The campaign file: [[cell]] tables, or a [matrix] of lists (fs = [\"ext4\",
\"xfs\"]; a key needs a list) and a [template] whose strings use {key} and
{target} placeholders. Each cell has name, tags, setup and teardown (shell
commands, run with sh -c), target and run (storlab command lines starting
with bench or sweep). Top-level keys: name, baseline (the cell the others
are compared with) and teardown_timeout (seconds or a duration such as
\"10m\"; default 300 s: a teardown command still running then is stopped
with everything it started, the cell is marked failed and the campaign
exits 2).

Every setup and teardown command gets the cell's values in its
environment: STORLAB_MATRIX_<KEY> (the key upper-cased, other characters
than letters and digits as _), STORLAB_CELL and STORLAB_TARGET. In those
commands a placeholder becomes a reference to its variable, never the
value's text: {fs} is \"${STORLAB_MATRIX_FS}\" (inside double quotes
${STORLAB_MATRIX_FS}), so no value runs as shell code, whatever quotes the
command puts around it. A placeholder inside single quotes, where the shell
expands nothing, is refused with the file and line: use double quotes.
Elsewhere (name, tags, target, run words: no shell) a placeholder is the
value itself. --dry-run shows the commands as they will run, with the
variables. Control characters in matrix values and targets are refused
with the file and line.

Before the first setup command runs, every run's words are parsed as the
child storlab will parse them (and the profile or job file they name is
read). Setup and teardown commands run in a process group of their own
that a stop (Ctrl-C, SIGTERM) ends as a whole; child storlab runs end with
the campaign, even after kill -9. Each cell's state records the stage it
reached (setup, running, teardown, done): --resume ID runs the teardown of
a cell the campaign was killed in, then the cell again, unless it was
killed in the teardown after its runs were stored; then only the teardown
runs again. The comparison takes one run per cell and run (the latest
finished one if a run was stored twice, with a note), has a row for every
cell, and one without figures says why.";
