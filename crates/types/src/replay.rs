//! What a replay (`storlab replay`, kind `replay`) measured beyond its
//! one phase: the bytes/s timeline replayed against the trace's own, each
//! traced file's figures, and the time in I/O here against the trace's.

use serde::{Deserialize, Serialize};

/// A replay's own figures ([`crate::BenchReport::replay`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplayFigures {
    /// `original`, `max` or the factor (`2`).
    pub speed: String,
    /// Width of one interval of the two series, ns.
    pub interval_ns: u64,
    /// Bytes read and written per interval by the replay, by issue time
    /// from the replay's start.
    pub replayed_bytes: Vec<u64>,
    /// Bytes per interval as the trace recorded them, by recorded start
    /// from each rank's first operation (the replay's schedule at
    /// `--speed original`).
    pub recorded_bytes: Vec<u64>,
    /// Every traced file, as replayed.
    pub files: Vec<ReplayFile>,
    /// Time in I/O here (sum of the operations' latencies, all ranks).
    pub io_ns: u64,
    /// The same operations' time in I/O as the trace recorded it, where
    /// it has durations (Darshan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_io_ns: Option<u64>,
    /// `(io_ns / trace_io_ns − 1) × 100`: negative = this system would
    /// have spent that much less time in I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_time_change_pct: Option<f64>,
    /// Start lag behind the recorded timing (timed replays), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ns: Option<LagNs>,
    /// A timed replay's issuing threads ran at real-time priority
    /// (`SCHED_FIFO`; root or `CAP_SYS_NICE`), ahead of the machine's
    /// ordinary threads.
    #[serde(default)]
    pub realtime: bool,
    /// Operations issued at real-time priority (a timed replay takes it
    /// only for operations far enough apart that it is on time for).
    #[serde(default)]
    pub realtime_ops: u64,
    /// A timed replay's first rank: its operations per second replayed and
    /// recorded (`(n − 1) / (last start − first start)` both ways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_ops_per_s: Option<RatePair>,
    /// Trims issued (a hole punched in a file, a `BLKDISCARD` on a device)
    /// and the bytes they addressed, all ranks; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trims: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_trimmed: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Operations per second, replayed and recorded.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RatePair {
    pub replayed: f64,
    pub recorded: f64,
}

/// p50, p99 and max of the start lag, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LagNs {
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// One traced file's replay.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReplayFile {
    /// As the trace names it.
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time in I/O here.
    pub io_ns: u64,
    /// Time in I/O in the trace, where it has durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_io_ns: Option<u64>,
    /// Trims of it and the bytes they addressed; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trims: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_trimmed: u64,
}
