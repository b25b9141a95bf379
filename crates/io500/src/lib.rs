//! IO500's rules, as data and arithmetic, so storlab reads, checks and
//! scores IO500 runs exactly as the IO500 benchmark (IO500/io500, MIT) does:
//!
//! * [`phases`]: every phase of the release storlab follows (io500 commit
//!   02091cf), in the order `io500` runs them, with the score group each
//!   counts toward, whether it is optional (extended mode only) and whether
//!   its runtime must reach the stonewall time;
//! * [`plan`]: what each phase does for a config: its shape (what runs on
//!   which files, for how long) and the IOR/mdtest/pfind command line io500
//!   runs for it, word for word as a real run's `result.txt` shows;
//! * [`config`]: the `config.ini` a site writes, read with io500's own rules
//!   (known sections and options only, typed values, comments after `#`/`;`);
//! * [`mod@score`]: bandwidth, IOPS and total score: geometric means, as
//!   `calc_score` in io500's `main.c` computes them;
//! * [`validity`]: the conditions that mark a phase or a run INVALID, with
//!   io500's reasons;
//! * [`record`]: a result directory as a storlab run record (kind `io500`),
//!   the score recomputed from the stored phases;
//! * [`result`]: the `result_summary.txt` and `result.txt` an io500 run
//!   leaves in its result directory, read back so sites can bring their
//!   history into storlab.
//!
//! The crate does no I/O except reading the files it is handed; it never
//! prints.

#![forbid(unsafe_code)]

pub mod config;
pub mod phases;
pub mod plan;
pub mod record;
pub mod result;
#[cfg(feature = "run")]
pub mod run;
pub mod score;
pub mod summary;
pub mod validity;

pub use config::{Config, ConfigError};
pub use phases::{PHASES, Phase, ScoreGroup};
pub use result::{ResultDir, ResultError, SummaryPhase};
pub use score::{Scores, score};
pub use validity::Reason;
