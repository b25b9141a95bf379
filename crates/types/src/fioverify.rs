//! fio's verify, error-tolerance, priority, placement and dedupe options
//! of a phase, resolved (issue 27). Each is absent from the JSON at its
//! default, so records without them read and compare as before.

use serde::{Deserialize, Serialize};

/// fio's verify options beyond on/off (`PhaseParams::verify`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VerifyOptions {
    /// fio's `verify=NAME` as written (`crc32c`, `md5`, `sha256`, `meta`,
    /// ...): storlab checks every variant with its own per-unit checksum
    /// and header; the name is kept for the record.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub method: String,
    /// fio's `verify_backlog=N`: a writing job reads back and checks the
    /// blocks it wrote after every N writes (0 = not during the phase).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backlog: u64,
    /// fio's `verify_dump`: a unit that fails is written beside the data
    /// file as `NAME.OFFSET.received` (and what was expected, where
    /// storlab can rebuild it, as `.expected`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dump: bool,
    /// fio's `verify_pattern`: the bytes repeated through every unit after
    /// its header (instead of random bytes), checked on read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pattern: Vec<u8>,
    /// fio's `verify_interval`: bytes per checked unit (one header and
    /// checksum each); 0 = storlab's unit (4 KiB, or the smallest block).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interval: u64,
    /// fio's `do_verify=0`: write verifiable data but check nothing in this
    /// phase (a later reading phase with `verify` checks it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_check: bool,
    /// fio's `verify_fatal`: a job stops issuing at its first mismatch
    /// (and skips its verify pass); the run fails (exit 1) either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fatal: bool,
    /// fio's `verify_async=N` as given: fio's N offload threads change
    /// where a check runs, not what is checked; storlab checks on the
    /// job's own thread (recorded, not a different workload).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub async_threads: u64,
}

impl VerifyOptions {
    pub fn is_default(&self) -> bool {
        *self == VerifyOptions::default()
    }
}

/// fio's `continue_on_error`, `ignore_error` and `error_dump`: which I/O
/// errors a job counts and goes on after (fio's `td_non_fatal_error`):
/// an error is non-fatal when its kind is in `continue_on` and its errno in
/// that kind's list (fio's default list: EIO, EILSEQ).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ErrorPolicy {
    /// The kinds that may continue: any of `read`, `write`, `verify`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub continue_on: Vec<String>,
    /// errnos continued after, per kind (read, write, verify); an empty
    /// list is fio's default (EIO, EILSEQ).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_read: Vec<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_write: Vec<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_verify: Vec<i32>,
    /// fio's `error_dump=0`: do not list each non-fatal error (they are
    /// counted either way).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_dump: bool,
}

impl ErrorPolicy {
    pub fn is_default(&self) -> bool {
        *self == ErrorPolicy::default()
    }
}

/// One rule of fio's `cmdprio_percentage`/`cmdprio_bssplit`: `pct` % of
/// the I/Os of a direction (of size `bs`, or of any size when `bs` is 0)
/// carry the priority `ioprio` (Linux's value: class << 13 | hint << 3 |
/// level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdPrioRule {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bs: u64,
    pub pct: u8,
    pub ioprio: u16,
}

/// fio's I/O priority options: the job's priority (`prioclass`, `prio`)
/// and per-command priorities (`cmdprio_*`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PrioOptions {
    /// The job's priority (Linux ioprio value), 0 = none set.
    #[serde(default, skip_serializing_if = "is_zero_u16")]
    pub job: u16,
    /// Per-command rules, reads and writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<CmdPrioRule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<CmdPrioRule>,
    /// fio's `log_prio`: accepted; storlab reports the latency of each
    /// priority apart whenever a phase uses several.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_prio: bool,
}

impl PrioOptions {
    pub fn is_default(&self) -> bool {
        *self == PrioOptions::default()
    }
}

/// Linux's ioprio value of a class (1 RT, 2 BE, 3 IDLE), level and hint.
pub fn ioprio_value(class: u8, level: u8, hint: u16) -> u16 {
    (u16::from(class & 7) << 13) | ((hint & 0x3ff) << 3) | u16::from(level & 7)
}

/// Class, level and hint of a Linux ioprio value.
pub fn ioprio_parts(v: u16) -> (u8, u8, u16) {
    ((v >> 13) as u8, (v & 7) as u8, (v >> 3) & 0x3ff)
}

/// fio's `numa_cpu_nodes` and `numa_mem_policy`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Placement {
    /// The NUMA nodes whose CPUs the job's thread runs on (empty = any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_nodes: Vec<u32>,
    /// The memory policy: `default`, `prefer`, `bind`, `interleave` or
    /// `local` (empty = not set).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mem_policy: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mem_nodes: Vec<u32>,
}

impl Placement {
    pub fn is_default(&self) -> bool {
        *self == Placement::default()
    }
}

/// fio's dedupe options: `percentage` % of the written blocks repeat an
/// earlier block's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DedupeOptions {
    pub percentage: u8,
    /// `repeat` (the last unique block again) or `working_set` (one of the
    /// first `working_set_pct` % of the region's unique blocks).
    pub mode: String,
    pub working_set_pct: u8,
    /// fio's `dedupe_global`: the working set is shared by the jobs of the
    /// phase (blocks repeat across their files).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u16(v: &u16) -> bool {
    *v == 0
}
