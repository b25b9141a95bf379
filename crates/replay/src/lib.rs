//! Replaying a recorded application's I/O on the storage under test
//! (`storlab replay TRACE TARGET`): every rank's operations of a fio iolog,
//! a Darshan DXT log or a blktrace, issued again on files storlab lays out
//! in its own directory of TARGET, with the recorded timing (`--speed
//! original`, or scaled by a factor) or as fast as each rank's order allows
//! (`--speed max`).
//!
//! The steps, each a module:
//! * [`map`]: where each traced file lives under TARGET (`--map FROM=TO`
//!   prefix rules; never outside storlab's own directory);
//! * [`mod@prepare`]: a first pass over the trace (streamed) that learns the
//!   files, their extents and every rank's counts, refuses a trace that
//!   cannot be replayed before any I/O, and lays the files out;
//! * [`run`]: the replay: one thread per rank, fed through a bounded
//!   channel as the trace is read (a Darshan log, whose records are not in
//!   time order, is sorted per rank first), each operation issued at its
//!   scheduled time, its start lag and latency measured;
//! * `sys` (private): the page-cache hint given each replayed file
//!   (`--fadvise`, `posix_fadvise`), the one system call beyond std;
//! * [`result`]: what the replay measured, checked against the trace
//!   (bytes and operations per rank equal, or the difference explained),
//!   and the run record (kind `replay`).
//!
//! Nothing here prints; errors are typed.
#![forbid(unsafe_code)]

pub mod figures;
pub mod map;
pub mod prepare;
pub mod result;
pub mod run;
mod sys;

pub use map::{MapError, PathMap};
pub use prepare::{Layout, PrepareError, Prepared, prepare};
pub use result::{RankFigures, ReplayResult};
pub use run::{Fadvise, ReplayError, Speed, Stop, replay};
