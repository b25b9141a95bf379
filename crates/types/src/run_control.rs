//! Run-control parameters of a phase (issue 27): fio's options that make
//! jobs start late, pace each other, stop each other, fail below a minimum
//! rate or search for the queue depth that meets a latency target.

use serde::{Deserialize, Serialize};

/// fio's run-control options of one job, resolved. Absent from a record
/// when every one is off ([`RunControl::is_off`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RunControl {
    /// `startdelay`: the job starts this long after the phase's epoch
    /// (its ramp and runtime start then), ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub startdelay_ns: u64,
    /// `exitall`: when this job ends, the jobs [`RunControl::exit_what`]
    /// names are stopped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exitall: bool,
    /// `exit_what`: which jobs `exitall` stops.
    #[serde(default, skip_serializing_if = "ExitWhat::is_group")]
    pub exit_what: ExitWhat,
    /// `flow`: this job's weight in fio's token flow control (0 = off);
    /// the jobs of one `flow_id` keep their I/O counts in the ratio of
    /// their weights.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow: u64,
    /// `flow_id`: the jobs that pace each other share it (default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_id: u64,
    /// `flow_sleep`: how long a job ahead of its share waits (after its
    /// I/O in flight has completed) before it checks again, ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_sleep_ns: u64,
    /// `rate_min` / `ratemin`: the job fails when a direction's bandwidth
    /// over a `ratecycle` falls below this, bytes/s (read, write; 0 = off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_min_read: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_min_write: u64,
    /// `rate_iops_min`: as `rate_min` in I/Os per second (read, write).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_iops_min_read: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_iops_min_write: u64,
    /// `ratecycle`: the span the minimum rate is judged over, ns (fio's
    /// default 1 s).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ratecycle_ns: u64,
    /// `latency_target`: fio's search for the highest queue depth whose
    /// latencies meet this target, ns (0 = off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latency_target_ns: u64,
    /// `latency_window`: how long each depth is tried, ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latency_window_ns: u64,
    /// `latency_percentile`: the share of I/Os that must meet the target,
    /// percent (fio's default 100).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub latency_percentile: f64,
    /// `latency_run`: keep searching for the whole runtime instead of
    /// stopping once the depth has settled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency_run: bool,
    /// `sprandom`: fio's SanDisk random preconditioning (a random-write
    /// offset stream); absent when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<Sprandom>,
}

/// fio's `sprandom` (`sprandom.c`): the region is written once at random
/// (fio's lfsr), plus the blocks re-written so that, region by region of
/// the physical capacity, the share of invalid blocks follows the
/// steady-state distribution of an SSD with this over-provisioning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sprandom {
    /// `spr_num_regions` (fio's default 100).
    pub regions: u32,
    /// `spr_op`: over-provisioning, a fraction (fio's default 0.15).
    pub op: f64,
}

impl RunControl {
    /// Whether no run-control option is set (then absent from records).
    pub fn is_off(o: &Option<RunControl>) -> bool {
        o.is_none_or(|r| r == RunControl::default())
    }

    /// Whether a minimum rate is checked.
    pub fn has_rate_min(&self) -> bool {
        self.rate_min_read > 0
            || self.rate_min_write > 0
            || self.rate_iops_min_read > 0
            || self.rate_iops_min_write > 0
    }
}

/// fio's `exit_what`: which jobs a job with `exitall` stops when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's `groupid`: jobs that no
    /// `new_group` or `stonewall` separates).
    #[default]
    Group,
    /// Every job running (the whole phase); the next phase runs.
    Stonewall,
    /// Every job: the phase and every phase after it.
    All,
}

impl ExitWhat {
    pub fn is_group(&self) -> bool {
        *self == ExitWhat::Group
    }
}

/// What fio's latency-target search found over a phase's jobs
/// ([`crate::DepthReport::latency_target`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyTargetResult {
    /// The queue depth the search settled on (fio's `latency_depth`); the
    /// smallest over the jobs when they differ.
    pub depth: u32,
    /// The largest depth found over the jobs.
    pub depth_max: u32,
    /// Whether every job's search settled (fio's final window at that
    /// depth) rather than being cut off by the runtime.
    pub settled: bool,
    /// Whether some job missed the target at depth 1 with
    /// `latency_percentile=100` (fio stops such a job with ETIMEDOUT).
    pub failed: bool,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
