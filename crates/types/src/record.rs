//! Result records: what a benchmark run produced, in one serde type tree.
//!
//! [`BenchReport`] is the JSON document `storlab bench --output-format json`
//! prints, the record the store saves, and what reports read. Every key that
//! holds a quantity carries its unit (`_bytes`, `_ns`, `_bytes_per_s`,
//! `_per_s`). The full description is `docs/results-schema.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// I/O pattern of a phase, named as fio names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    #[default]
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mix of reads and writes (fio's `readwrite`/`rw`).
    ReadWrite,
    /// Random mix of reads and writes.
    RandRw,
    /// Sequential read-modify-write: each block is read, then written back
    /// at the same offset once its read completes (an out-of-core solver's
    /// panel update).
    #[serde(rename = "rmw")]
    ReadModifyWrite,
    /// Sequential trims (fio's `trim`): a hole punched in a file, a discard
    /// on a block device.
    Trim,
    /// Random trims (fio's `randtrim`).
    RandTrim,
}

impl RwMode {
    pub const ALL: [RwMode; 9] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::ReadWrite,
        RwMode::RandRw,
        RwMode::ReadModifyWrite,
        RwMode::Trim,
        RwMode::RandTrim,
    ];
    /// The words a user may write, in the order messages list them (the
    /// parameter registry's choices): each [`RwMode::parse`]s.
    pub const WORDS: [&'static str; 10] = [
        "read",
        "write",
        "randread",
        "randwrite",
        "readwrite",
        "rw",
        "randrw",
        "rmw",
        "trim",
        "randtrim",
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "readwrite",
            RwMode::RandRw => "randrw",
            RwMode::ReadModifyWrite => "rmw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
        }
    }
    pub fn parse(s: &str) -> Option<RwMode> {
        match s {
            "rw" => Some(RwMode::ReadWrite),
            "readmodifywrite" => Some(RwMode::ReadModifyWrite),
            _ => RwMode::ALL.into_iter().find(|m| m.as_str() == s),
        }
    }
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim
        )
    }
    /// Whether the phase issues trims (then it issues nothing else; a trim
    /// destroys data as a write does, so [`RwMode::writes`] holds too).
    pub fn trims(self) -> bool {
        matches!(self, RwMode::Trim | RwMode::RandTrim)
    }
    /// Whether the phase issues any writes.
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }
    /// Whether the phase issues any reads.
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }
    /// Percentage of reads given the configured mix.
    pub fn read_pct(self, rwmixread: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite | RwMode::Trim | RwMode::RandTrim => 0,
            RwMode::ReadWrite | RwMode::RandRw => rwmixread,
            // One write per read: half the I/Os of each kind.
            RwMode::ReadModifyWrite => 50,
        }
    }
}

impl std::fmt::Display for RwMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which I/O engine ran the phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    #[default]
    IoUring,
    Psync,
    /// No I/O at all: exercises the whole pipeline.
    Null,
    /// Linux native AIO (io_submit/io_getevents), fio's `libaio`.
    Libaio,
}

impl EngineKind {
    /// Every engine, in declaration order (shell completion offers them so).
    pub const ALL: [EngineKind; 4] = [
        EngineKind::IoUring,
        EngineKind::Psync,
        EngineKind::Null,
        EngineKind::Libaio,
    ];
    /// The words a user may write, in the order messages list them (the
    /// parameter registry's choices): each [`EngineKind::parse`]s.
    pub const WORDS: [&'static str; 4] = ["io_uring", "libaio", "psync", "null"];
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
            EngineKind::Libaio => "libaio",
        }
    }
    pub fn parse(s: &str) -> Option<EngineKind> {
        match s {
            "io_uring" | "iouring" | "uring" => Some(EngineKind::IoUring),
            "psync" | "pread" => Some(EngineKind::Psync),
            "null" => Some(EngineKind::Null),
            "libaio" => Some(EngineKind::Libaio),
            _ => None,
        }
    }
}

/// Declared page-cache state for a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// O_DIRECT: the page cache is bypassed.
    #[default]
    Direct,
    /// Buffered I/O with the file's pages evicted before the timed window.
    Cold,
    /// Buffered I/O with the file pre-read into the page cache.
    Warm,
    /// Buffered I/O with the page cache left as earlier steps left it:
    /// neither evicted nor pre-read (IOR's and io500's way, fio's
    /// `invalidate=0`). What is resident is measured, not declared.
    Buffered,
}

impl CacheMode {
    /// Every cache mode, in declaration order.
    pub const ALL: [CacheMode; 4] = [
        CacheMode::Direct,
        CacheMode::Cold,
        CacheMode::Warm,
        CacheMode::Buffered,
    ];
    /// The words a user may write (the parameter registry's choices): each
    /// [`CacheMode::parse`]s.
    pub const WORDS: [&'static str; 4] = ["direct", "cold", "warm", "buffered"];
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Direct => "direct",
            CacheMode::Cold => "cold",
            CacheMode::Warm => "warm",
            CacheMode::Buffered => "buffered",
        }
    }
    pub fn parse(s: &str) -> Option<CacheMode> {
        match s {
            "direct" => Some(CacheMode::Direct),
            "cold" => Some(CacheMode::Cold),
            "warm" => Some(CacheMode::Warm),
            "buffered" => Some(CacheMode::Buffered),
            _ => None,
        }
    }
}

/// What data is written.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BufferPattern {
    /// Incompressible and unique per block (the default).
    #[default]
    Random,
    /// All zero bytes (compresses and deduplicates completely).
    Zero,
    /// `pct` percent of each block compresses away (zeros), the rest is random.
    Compressible { pct: u8 },
    /// IOR's fixed data packets (`--dataPacketType=timestamp` with a fixed
    /// `-G` signature, as io500 runs IOR): one buffer made once and
    /// written unchanged by every transfer, 8-byte word `i` of it
    /// [`ior_packet_word`]`(i)`, never zero, so a read check tells written
    /// data from a hole. What `storlab io500`'s IOR phases write.
    Ior,
}

/// Word `i` of an [`BufferPattern::Ior`] buffer: IOR's timestamp packet
/// (`signature + i` in the low half) under a fixed upper half, so no word
/// is zero.
pub fn ior_packet_word(i: u64) -> u64 {
    0x494F_5235_0000_0000 | (0x5EED_0000u64.wrapping_add(i) & 0xFFFF_FFFF)
}

/// One entry of a block-size mix (`--bssplit 4k/50:64k/50`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsWeight {
    pub bs_bytes: u64,
    /// Relative weight (percent of I/Os when the weights add to 100).
    pub weight: u32,
}

/// What a phase made of `groups` run at once does, as one phase's
/// parameters say it (`bench`'s groups and fio's concurrent jobs alike):
/// `read` or `write` when every group only reads or only writes,
/// `readwrite` otherwise; the jobs that only read (for the read share); and
/// the block sizes weighted by each group's jobs, as percentages.
pub fn group_mix(groups: &[PhaseParams]) -> (RwMode, u64, Vec<BsWeight>) {
    let reads = groups.iter().any(|g| g.rw.reads());
    let writes = groups.iter().any(|g| g.rw.writes());
    let rw = match (reads, writes) {
        (true, false) => RwMode::Read,
        (false, true) => RwMode::Write,
        _ => RwMode::ReadWrite,
    };
    let read_jobs: u64 = groups
        .iter()
        .filter(|g| g.rw.reads() && !g.rw.writes())
        .map(|g| u64::from(g.numjobs))
        .sum();
    let mut bs: Vec<BsWeight> = Vec::new();
    for g in groups {
        for b in &g.bs {
            let w = b.weight.saturating_mul(g.numjobs);
            match bs.iter_mut().find(|x| x.bs_bytes == b.bs_bytes) {
                Some(x) => x.weight += w,
                None => bs.push(BsWeight {
                    bs_bytes: b.bs_bytes,
                    weight: w,
                }),
            }
        }
    }
    let sum: u64 = bs.iter().map(|b| u64::from(b.weight)).sum::<u64>().max(1);
    for b in &mut bs {
        b.weight = ((u64::from(b.weight) * 100 + sum / 2) / sum) as u32;
    }
    (rw, read_jobs, bs)
}

/// How the phase's files are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileLayout {
    /// One file per job (default).
    #[default]
    PerJob,
    /// One file; each job owns a contiguous region of `size`.
    SharedRegions,
    /// One file; jobs interleave in units of `stride_bytes` (job j owns
    /// units j, j+numjobs, j+2·numjobs, ...).
    SharedInterleaved { stride_bytes: u64 },
}

/// Every resolved input of one phase: what the engine actually ran.
///
/// `Default` is the zero record (no name, no block size, nothing on),
/// for records made outside the option table (fio import, `storlab sim`,
/// test data): they set what they know and take `..Default::default()`
/// for the rest, so a new option touches only the table, this struct and
/// the code that uses it. The option table's defaults are in
/// `crates/bench/src/options.rs`, not here.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PhaseParams {
    pub name: String,
    pub rw: RwMode,
    /// Percentage of reads in a mixed phase (ignored for pure read/write).
    pub rwmixread: u8,
    /// Block sizes and their weights; one entry for a single `--bs`.
    pub bs: Vec<BsWeight>,
    /// Bytes per job (each job's region or file).
    pub size_bytes: u64,
    pub numjobs: u32,
    pub iodepth: u32,
    pub engine: EngineKind,
    pub cache: CacheMode,
    /// Whether `cache = cold` may drop the whole page cache (root only).
    pub drop_caches: bool,
    /// Time limit of the measured window (after ramp), if any.
    pub runtime_ns: Option<u64>,
    /// Loop over the region until `runtime` expires.
    pub time_based: bool,
    /// Warm-up time whose I/O is not counted.
    pub ramp_ns: u64,
    /// fsync after every N writes per job (0 = never).
    pub fsync_every: u32,
    /// fsync at the end of a write phase, inside the timed window.
    pub end_fsync: bool,
    pub layout: FileLayout,
    pub buffer_pattern: BufferPattern,
    /// Random offsets drawn with replacement instead of a full-coverage permutation.
    pub random_with_replacement: bool,
    /// Write self-checking blocks and check them on read.
    pub verify: bool,
    /// Seed for offsets, data and the verify header.
    pub seed: u64,
    /// io_uring: kernel-side submission polling.
    pub sqpoll: bool,
    /// io_uring: registered (fixed) buffers and files.
    pub registered: bool,
    /// Cap on I/Os per second per job (fio's `rate_iops`); 0 = no cap.
    #[serde(default)]
    pub rate_iops: u32,
    /// io_uring and libaio: submit after this many queued I/Os (fio's
    /// `iodepth_batch_submit`); 1 is adaptive: after a burst of completions
    /// the freed slots go to the kernel in growing calls (2, 4, 8, ...),
    /// never waiting for a batch to fill.
    #[serde(default = "one")]
    pub iodepth_batch: u32,
    /// Pre-allocate new files with fallocate (fio's `fallocate=native`);
    /// off leaves them sparse until written.
    #[serde(default = "yes")]
    pub fallocate: bool,
    /// Null engine only: a synthetic fixed service time per I/O (0 = none),
    /// a device with a known answer for checking the measurement pipeline.
    #[serde(default)]
    pub null_latency_ns: u64,
    /// Length of one interval of the application's time series
    /// ([`PhaseResult::series`]; fio's `log_avg_msec`).
    #[serde(default = "one_second")]
    pub log_interval_ns: u64,
    /// Stop the phase once its throughput is steady (fio's `steadystate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyState>,
    /// Passes over the region (fio's `loops`); with `time_based` the
    /// runtime decides instead.
    #[serde(default = "one")]
    pub loops: u32,
    /// Pause after each completion before the slot is reused (fio's
    /// `thinktime`), ns; 0 = none.
    #[serde(default)]
    pub thinktime_ns: u64,
    /// A group's existing files, read in place and never written
    /// (`files = "PATHS"`): absolute paths, globs expanded, in order; job
    /// `k` of the group reads file `k mod len`. Empty otherwise (and then
    /// absent from the JSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// A group that uses the files of another group of its phase
    /// (`files_of = "NAME"`): its job `k` uses that group's job `k mod
    /// numjobs` file. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_of: Option<String>,
    /// fio's `group_reporting`: the table shows one line per reporting
    /// group instead of one per job. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_reporting: bool,
    /// A group reported with the group before it under `group_reporting`
    /// (a job of an fio file that no `new_group` separates from the job
    /// before it). Absent (false) otherwise: a group reports on its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shares_report: bool,
    /// A group of a multi-client run (`ranks`, `--group-ranks`): the MPI
    /// ranks that run its jobs, each `numjobs` of them. Empty otherwise
    /// (and then absent from the JSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<u32>,
    /// Job groups run together in this phase (`[[phase.group]]`, `--group`):
    /// each group's own resolved parameters, in order; its jobs are the
    /// phase's jobs `first..first + numjobs` in that order. Empty for an
    /// ordinary phase (and then absent from the JSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<PhaseParams>,
    /// A metadata phase of `storlab md` (run kind `md`): which operation on
    /// which items, and the tree and job they belong to. Absent in every
    /// other record (and in records made before `md` existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<MdParams>,
    /// How the phase is reported (fio's reporting-only options: they
    /// change what is shown, never the workload). Absent when all are at
    /// their defaults.
    #[serde(default, skip_serializing_if = "ReportOptions::is_default")]
    pub report: ReportOptions,
    /// Where random I/Os fall (fio's `random_distribution`); absent =
    /// uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<crate::RandomDistribution>,
    /// Sequential patterns: bytes skipped after each I/O (fio's
    /// `rw=read:N`); negative moves backwards. Absent = 0.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_skip_bytes: i64,
    /// Block size of writes when it differs from `bs` (fio's `bs=R,W`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_write_bytes: Option<u64>,
    /// Bandwidth caps per job (fio's `rate=R,W`), bytes/s; 0 = none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub rate_read_bytes_per_s: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub rate_write_bytes_per_s: u64,
    /// How capped I/Os are spaced (fio's `rate_process`). Absent = linear.
    #[serde(default, skip_serializing_if = "crate::RateProcess::is_linear")]
    pub rate_process: crate::RateProcess,
    /// Stop each job after this many bytes (fio's `io_size`); 0 = one pass
    /// of `size` (times `loops`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub io_size_bytes: u64,
    /// Stop each job after this many I/Os (fio's `number_ios`); 0 = none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub number_ios: u64,
    /// fio's `zonemode=strided`: bytes of I/O done in each zone before
    /// skipping to the next (`zonesize`); 0 = no zones (`zonemode=none`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub zone_size_bytes: u64,
    /// The region a zone's I/O is confined to (`zonerange`; fio's default
    /// is `zonesize`); 0 when there are no zones.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub zone_range_bytes: u64,
    /// Bytes skipped after each zone's range (`zoneskip`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub zone_skip_bytes: u64,
    /// fio's `zonemode=zbd` (zones with write pointers, emulated); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<crate::ZbdParams>,
    /// Where each job's region starts in its file or device (fio's
    /// `offset`), bytes; job N adds N × `offset_increment_bytes`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub offset_bytes: u64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub offset_increment_bytes: u64,
    /// fio's `fill_device`: a write phase that ends at ENOSPC as its
    /// normal end (not an error).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fill_device: bool,
    /// fio's verify options beyond on/off.
    #[serde(
        default,
        skip_serializing_if = "crate::fioverify::VerifyOptions::is_default"
    )]
    pub verify_opts: crate::fioverify::VerifyOptions,
    /// fio's continue_on_error/ignore_error/error_dump.
    #[serde(
        default,
        skip_serializing_if = "crate::fioverify::ErrorPolicy::is_default"
    )]
    pub error_policy: crate::fioverify::ErrorPolicy,
    /// fio's I/O priorities (prio, prioclass, cmdprio_*).
    #[serde(
        default,
        skip_serializing_if = "crate::fioverify::PrioOptions::is_default"
    )]
    pub prio: crate::fioverify::PrioOptions,
    /// fio's NUMA placement (numa_cpu_nodes, numa_mem_policy).
    #[serde(
        default,
        skip_serializing_if = "crate::fioverify::Placement::is_default"
    )]
    pub placement: crate::fioverify::Placement,
    /// fio's dedupe options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<crate::fioverify::DedupeOptions>,
    /// fio's run-control options (startdelay, exitall, flow, rate_min,
    /// latency_target); absent when all are off.
    #[serde(default, skip_serializing_if = "crate::RunControl::is_off")]
    pub run_control: Option<crate::RunControl>,
    /// Every read compared, word by word and inside the timed window,
    /// with what the job's writes wrote (`buffer_pattern = ior`, never zero): IOR's
    /// `-R` read check as `storlab io500` runs it. A read that differs
    /// counts as a verify mismatch. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_reads: bool,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// fio's reporting-only options of a phase: what is shown, not what runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReportOptions {
    /// fio's `percentile_list`: latency percentiles reported besides the
    /// standard ones (p50, p90, p99, p99.9, p99.99), in percent, in the
    /// order given ([`PhaseResult::percentiles`] holds their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentile_list: Vec<f64>,
    /// fio's `unified_rw_reporting`: `mixed` shows one line of reads and
    /// writes together per phase, `both` the two directions and the mixed
    /// line; empty (fio's `none`) the directions of a mixed phase.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unified_rw_reporting: String,
    /// Keep fio's latency distribution ([`CustomPercentiles::distribution`]):
    /// set by `bench --output-format fio-json`, whose `latency_ns`,
    /// `latency_us` and `latency_ms` it fills.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency_distribution: bool,
}

impl ReportOptions {
    /// Every option at its default (then absent from the JSON).
    pub fn is_default(&self) -> bool {
        *self == ReportOptions::default()
    }
}

/// The latency percentiles of a phase's `percentile_list`, per direction:
/// (percent, ns) in the list's order, from the same merged histograms as
/// the standard percentiles; and fio's latency distribution when asked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CustomPercentiles {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<(f64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<(f64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub total: Vec<(f64, u64)>,
    /// With `report.latency_distribution`: fio's latency distribution of
    /// both directions, percent of I/Os per bucket, keyed as `ns:2` ...
    /// `ns:1000` (under 1 µs), `us:2` ... `us:1000`, `ms:2` ... `ms:2000`
    /// and `ms:>=2000`; a bucket holds the I/Os above the one before it
    /// up to its value, as fio's `latency_ns`/`latency_us`/`latency_ms`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distribution: Vec<(String, f64)>,
    /// Phases whose I/Os carry several priorities (fio's `cmdprio_*`):
    /// the latency of each priority apart, as fio's `clat_prio`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_prio: Vec<PrioLatency>,
}

/// The latency of the I/Os of one direction that carried one priority.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PrioLatency {
    /// `read` or `write`.
    pub dir: String,
    /// Linux ioprio value (class << 13 | hint << 3 | level); 0 = none.
    pub ioprio: u16,
    pub class: u8,
    pub level: u8,
    pub ios: u64,
    pub mean_ns: f64,
    /// (percent, ns): p50, p90, p99, p99.9.
    pub percentiles: Vec<(f64, u64)>,
}

/// The parameters of one `storlab md` phase (mdtest's options, resolved).
///
/// The phase's `total.ops` counts the items the operation completed on, over
/// all ranks; `jobs` holds one entry per rank (`job` = rank) with its own
/// count and window. A stonewalled create makes fewer items than
/// `items_per_rank`; the later phases then work on exactly the items made.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MdParams {
    /// `create`, `stat`, `read`, `rename` or `delete`.
    pub op: String,
    /// `file` or `dir`.
    pub item: String,
    /// Items each rank was asked to create (mdtest's `-n`).
    pub items_per_rank: u64,
    /// Items each rank worked on in this phase (after a stonewalled create,
    /// what the rank really created; with a rank shift, the counts of the
    /// ranks whose items were visited), by rank.
    pub items_by_rank: Vec<u64>,
    /// Tree depth below the top directory (mdtest's `-z`).
    pub depth: u32,
    /// Subdirectories per tree directory (mdtest's `-b`).
    pub branch: u32,
    /// Directories in one tree (items are spread over all of them).
    pub tree_dirs: u64,
    /// Every rank in its own tree (mdtest's `-u`), or all in one shared tree.
    pub unique_dir: bool,
    /// Bytes written to each file when it is created (mdtest's `-w`).
    pub write_bytes: u64,
    /// Bytes read from each file in the read phase (mdtest's `-e`).
    pub read_bytes: u64,
    /// Ranks (processes) that ran the phase.
    pub ranks: u32,
    /// Stat and read visit the items of rank (r + shift) mod ranks
    /// (mdtest's `-N`); 0 = their own.
    pub rank_shift: u32,
    /// Create phases stop after this long (mdtest's `-W`, in ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall_ns: Option<u64>,
    /// A create phase the stonewall ended before every item was made.
    #[serde(default)]
    pub stonewalled: bool,
}

fn one_second() -> u64 {
    1_000_000_000
}

/// What "steady" means for [`PhaseParams::steadystate`], as fio's
/// `steadystate=bw_slope:0.3%`, `steadystate_duration` and `ss_ramp`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// `bw` (bytes/s), `iops` or `lat` (mean latency, ns).
    pub metric: SteadyMetric,
    /// Criterion: `slope` (least-squares slope of the per-interval figure
    /// over the window, in percent of the window's mean per second) or
    /// `deviation` (the largest |figure − mean| over the window, in percent
    /// of the mean), as fio's `bw_slope` and `bw`.
    pub criterion: SteadyCriterion,
    /// The largest slope or deviation still called steady, percent.
    pub tolerance_pct: f64,
    /// The window the criterion looks at, ns (a whole number of intervals).
    pub window_ns: u64,
    /// Time from the start of the measured window before checking begins, ns.
    pub ramp_ns: u64,
}

/// The figure a steady-state criterion looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    Bw,
    Iops,
    /// The mean latency of the I/Os completed in each interval, both
    /// directions (fio's `lat`, which takes its clat mean; storlab's
    /// latency spans submission to completion).
    Lat,
}

/// How a steady-state window is judged flat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyCriterion {
    Slope,
    Deviation,
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

impl PhaseParams {
    /// The single block size, or the largest of a mix.
    pub fn max_bs(&self) -> u64 {
        let read = self.bs.iter().map(|b| b.bs_bytes).max().unwrap_or(0);
        read.max(self.bs_write_bytes.unwrap_or(0))
    }

    /// Block size(s) for people: `1 MiB`, or `4 KiB/50:64 KiB/50` for a mix.
    /// With a separate write size, fio's form: `4 KiB,64 KiB`.
    pub fn bs_human(&self) -> String {
        let read = match self.bs.as_slice() {
            [one] => crate::format_bytes(one.bs_bytes),
            many => many
                .iter()
                .map(|b| format!("{}/{}", crate::format_bytes(b.bs_bytes), b.weight))
                .collect::<Vec<_>>()
                .join(":"),
        };
        match self.bs_write_bytes {
            Some(w) => format!("{read},{}", crate::format_bytes(w)),
            None => read,
        }
    }
}

/// Latency summary in nanoseconds, from a histogram merged across jobs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyStats {
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub max: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    #[serde(rename = "p99_9")]
    pub p99_9: u64,
    #[serde(rename = "p99_99")]
    pub p99_99: u64,
}

/// Figures for one direction (read or write) or their total.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DirStats {
    /// Bytes moved inside the measured window.
    pub bytes: u64,
    /// I/O operations completed inside the measured window.
    pub ops: u64,
    /// `bytes / elapsed` of the window the figures belong to.
    pub bw_bytes_per_s: f64,
    /// `ops / elapsed`.
    pub iops: f64,
    /// Latency of each I/O, submission to completion; absent when no I/O.
    pub lat_ns: Option<LatencyStats>,
}

/// CPU used by the process during the phase's measured window.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuStats {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// (user + sys) / completed I/Os.
    pub cpu_ns_per_io: f64,
    /// (user + sys) / elapsed, in percent of one core.
    pub utilization_pct: f64,
}

/// Per-job figures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub job: u32,
    pub elapsed_ns: u64,
    pub read: DirStats,
    pub write: DirStats,
    pub errors: BTreeMap<String, u64>,
    /// Time-weighted mean I/Os this job kept in flight (see [`DepthReport`]).
    #[serde(default)]
    pub mean_depth: Option<f64>,
}

/// The queue depth the device actually saw, from the engine's own counts.
///
/// Each I/O is in flight from the system call that handed it to the kernel
/// until its completion was reaped (the span latency measures), so by
/// Little's law `littles_law_depth` (IOPS × mean latency) equals
/// `achieved` up to the edges of the window.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DepthReport {
    /// `iodepth` × jobs (1 per job for psync).
    pub requested: u32,
    /// Time-weighted mean I/Os in flight, summed over jobs, from each job's
    /// first submission in the window until it stopped issuing (steady
    /// state; the final drain excluded).
    pub achieved: f64,
    /// IOPS × mean latency over the phase window.
    pub littles_law_depth: f64,
    /// With `iodepth_batch` > 1, I/Os submitted together share one
    /// timestamp; the later ones in a batch reach the device up to one
    /// submit call later. This is the longest such call measured: the bound
    /// on how much a shared stamp overstates a latency (a preempted call
    /// makes it large). None when every I/O had its own stamp.
    pub stamp_error_ns: Option<u64>,
    /// The mean duration of those calls: the typical overstatement.
    #[serde(default)]
    pub stamp_error_mean_ns: Option<f64>,
    /// fio's `latency_target` search: the depth it found. Absent without
    /// a latency target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::LatencyTargetResult>,
}

/// What was done about the page cache and whether it worked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CacheReport {
    /// `direct`, `cold`, `warm` or `buffered` (`mixed`).
    pub mode: crate::CacheState,
    /// How the pages were evicted or loaded (`posix_fadvise(DONTNEED)`,
    /// `drop_caches`, `pre-read`), if anything was done.
    pub method: Option<String>,
    /// Pages of the phase's files resident before the action (mincore).
    pub resident_pages_before: Option<u64>,
    /// Pages resident after it, checked right before the timed window.
    pub resident_pages_after: Option<u64>,
    pub total_pages: Option<u64>,
    /// Whether the declared state was reached (cold: no pages left; warm:
    /// all resident; buffered declares none: None).
    pub verified: Option<bool>,
    /// Buffered I/O with a working set under 2× RAM: results may be served
    /// from the page cache.
    pub may_be_cached: bool,
}

/// Outcome of `--verify` for a read phase.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerifyResult {
    pub blocks_checked: u64,
    pub mismatches: u64,
    /// The first few offsets (bytes, within the file named) that failed.
    pub first_mismatches: Vec<VerifyMismatch>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerifyMismatch {
    pub file: String,
    pub offset_bytes: u64,
    pub reason: String,
}

/// One phase's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub params: PhaseParams,
    /// Wall-clock start (RFC 3339, UTC); the measurement itself uses a monotonic clock.
    pub started_at: String,
    /// First submission to last completion of the measured window, ns.
    pub elapsed_ns: u64,
    /// Whether the end-of-phase fsync is inside `elapsed_ns`.
    pub fsync_in_window: bool,
    /// Nanoseconds of that end fsync (already included in `elapsed_ns` if in window).
    pub end_fsync_ns: u64,
    /// What the latency figures span.
    pub latency_span: String,
    pub read: DirStats,
    pub write: DirStats,
    /// Read + write over the same window; latency merged.
    pub total: DirStats,
    pub jobs: Vec<JobResult>,
    pub cpu: CpuStats,
    /// Error counts by kind (errno name or "short_read", ...).
    pub errors: BTreeMap<String, u64>,
    pub cache: CacheReport,
    pub verify: Option<VerifyResult>,
    /// Requested vs achieved queue depth (absent in records made before it existed).
    #[serde(default)]
    pub depth: Option<DepthReport>,
    /// The phase was cut short (Ctrl-C, ENOSPC, error).
    pub interrupted: bool,
    pub warnings: Vec<String>,
    /// A phase run by several processes at once (MPI ranks): how the
    /// aggregate above was formed, with every rank's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterPhase>,
    /// The application's own figures per interval (absent in records made
    /// before it existed, and for imported results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<PhaseSeries>,
    /// A phase of several job groups run at once: each group's own figures
    /// and how much they overlapped. The phase's own `read`/`write`/`total`
    /// are then the aggregate over the union window. Absent for an ordinary
    /// phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<PhaseGroups>,
    /// The latency percentiles of `params.report.percentile_list` (fio's
    /// `percentile_list`). Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<CustomPercentiles>,
    /// The block layer's own counters of the target's device(s)
    /// (`/sys/block/DEV/stat`) read before and after the phase: how many
    /// device requests the phase's requests became (merged or not).
    /// Device-wide: other programs' I/O to the same device is included.
    /// Absent where the target has no block device (tmpfs, NFS) and in
    /// records made before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_stat: Option<DeviceStatDelta>,
}

/// The difference of a device's `/sys/block/DEV/stat` over one phase
/// (Documentation/ABI/testing/procfs-diskstats, fields 1–3 and 5–7),
/// summed over the devices the target resolves to (a partition counts as
/// its disk, an LVM or md volume as its members; a loop device as itself).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeviceStatDelta {
    /// The kernel names the counters were read from (`vda`, `loop3`).
    pub devices: Vec<String>,
    /// Always `true`: the counters are the whole device's, not this
    /// program's alone (other programs' I/O in the same window counts).
    pub device_wide: bool,
    /// Read requests the device completed (after merging).
    pub read_ios: u64,
    /// Read requests merged into another before reaching the device.
    pub read_merges: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
}

impl DeviceStatDelta {
    /// Requests issued per device request in one direction, `(completed +
    /// merged) / completed`; `None` with nothing completed.
    pub fn merge_factor(&self, write: bool) -> Option<f64> {
        let (ios, merges) = if write {
            (self.write_ios, self.write_merges)
        } else {
            (self.read_ios, self.read_merges)
        };
        (ios > 0).then(|| (ios + merges) as f64 / ios as f64)
    }
}

/// The groups of a phase that ran several workloads at once.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PhaseGroups {
    /// Fraction (0–1) of the phase's union window during which every group
    /// was moving data at once: the intersection of the groups' windows
    /// over their union.
    pub overlap: f64,
    /// Nanoseconds during which every group was moving data at once.
    pub all_moving_ns: u64,
    pub groups: Vec<GroupResult>,
    /// With `group_reporting`, when `new_group` does not separate every
    /// group: one entry per reporting group (consecutive groups up to the
    /// next `new_group`), its figures over its own window with latency
    /// histograms merged exactly, named `a+b` after its groups. Empty
    /// (absent) when every group reports on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reporting: Vec<GroupResult>,
}

/// One group's own figures: its bytes over its own window (first
/// submission of its first job to the last completion of its last job).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GroupResult {
    pub name: String,
    /// The group's index among the phase's jobs: its jobs are
    /// `first_job .. first_job + params.numjobs` of `PhaseResult::jobs`.
    pub first_job: u32,
    pub params: PhaseParams,
    /// The group's window, ns after the phase's common epoch.
    pub start_ns: u64,
    pub end_ns: u64,
    pub elapsed_ns: u64,
    pub read: DirStats,
    pub write: DirStats,
    pub total: DirStats,
    /// CPU of the group's worker threads (thread CPU clocks from the
    /// thread's start to its end: includes the worker's setup and ramp).
    pub cpu: CpuStats,
    #[serde(default)]
    pub depth: Option<DepthReport>,
    pub cache: CacheReport,
    pub warnings: Vec<String>,
    /// The group's own latency percentiles of `params.report.percentile_list`
    /// and latency distribution, from its jobs' histograms (as the phase's
    /// `percentiles`). Absent without either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<CustomPercentiles>,
    /// The group's own verification (its `verify=`): absent when the group
    /// does not verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<GroupVerify>,
}

/// What a verifying job group checked (fio's `verify=` in a job that runs
/// beside others): the units checked inline (its verified reads and
/// `verify_backlog` read-backs) and by its verify pass after its writes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GroupVerify {
    /// Every check of the group: inline and pass together.
    #[serde(flatten)]
    pub checked: VerifyResult,
    /// Units the verify pass after the group's writes checked.
    pub pass_blocks_checked: u64,
    /// Whether that pass ran: `ran`, `none` (the group writes nothing to
    /// check, or `do_verify=0`), or `not run: REASON`.
    pub pass: String,
}

/// The application's own bandwidth, IOPS and latency per interval of one
/// phase: what fio's `write_bw_log`/`write_iops_log`/`write_lat_log` with
/// `log_avg_msec` record, measured by storlab's workers at each completion.
///
/// Intervals are aligned to the end of the ramp (the start of the measured
/// window) and are `interval_ns` long; point `i` covers
/// `[i·interval_ns, (i+1)·interval_ns)` after the window's first
/// submission, clipped to the window: the first and last points may be
/// shorter (their `span_ns` says so, and their rates are over that span).
/// An I/O belongs to the interval its completion was reaped in. The points'
/// bytes and ops add up exactly to the phase's `read`/`write`/`total`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PhaseSeries {
    /// The nominal interval (`--log-interval`), ns.
    pub interval_ns: u64,
    pub points: Vec<SeriesPoint>,
    /// Whether and when `steadystate` ended the phase (phases with it set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyOutcome>,
}

/// One interval of a [`PhaseSeries`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, ns since the phase's measured window began
    /// (add the phase's `started_at` for wall-clock time).
    pub t_ns: u64,
    /// Length of the interval, ns: the rates below are over this span.
    pub span_ns: u64,
    /// Reads completed in the interval (latency: of those reads).
    pub read: DirStats,
    /// Writes completed in the interval.
    pub write: DirStats,
    /// Both directions; latency merged.
    pub total: DirStats,
}

/// How `steadystate` ended (or did not end) a phase.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SteadyOutcome {
    /// The criterion was met and the phase stopped early.
    pub reached: bool,
    /// When it was met, ns since the measured window began.
    pub at_ns: Option<u64>,
    /// The slope or deviation of the last window checked, percent.
    pub last_value_pct: Option<f64>,
}

/// This run's place in a `--repeat N` series: the repeats are stored as
/// separate runs that share `group` (also their `repeat_group` tag).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RepeatInfo {
    /// Shared by all repeats of one invocation.
    pub group: String,
    /// 1-based index of this repeat.
    pub index: u32,
    /// How many repeats were asked for.
    pub count: u32,
}

/// A phase run by several processes at once (`mpirun ... storlab bench`),
/// as rank 0 combined it. The aggregate's bytes are the sum of the ranks'
/// bytes; its rates are over the global window (earliest first submission
/// to latest last completion over all ranks), never sums of rates.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClusterPhase {
    /// Ranks that ran the job (the first `clients` of them; `--clients`).
    pub clients: u32,
    /// Ranks in the launch (the others waited at the barrier).
    pub ranks: u32,
    /// Distinct nodes among the clients.
    pub nodes: u32,
    /// Which ranks count as the first `clients`: `rank` order, or `node`
    /// (spread over nodes first).
    pub clients_by: String,
    /// `n-n` (a file per job of each rank), `n-1-segmented` (one shared
    /// file, each job one contiguous block), `n-1-strided` (one shared file,
    /// jobs interleaved block by block).
    pub layout: String,
    /// IOR's terms: transfer size (the block size of each I/O), block size
    /// (the contiguous bytes of one job in one segment) and segment count.
    pub transfer_bytes: u64,
    pub block_bytes: u64,
    pub segments: u64,
    /// A read phase read the data written by the rank this many places
    /// further in the client order, on another node (`--reorder-tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder_shift: Option<u32>,
    /// `--stonewall`: every rank stopped once the first reached this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall_ns: Option<u64>,
    /// `--stonewall-wear-out`: ranks went on to the furthest rank's amount.
    #[serde(default)]
    pub stonewall_wear_out: bool,
    /// Earliest first submission to latest last completion, ns, from each
    /// rank's offsets relative to the moment it left a common barrier.
    pub window_ns: u64,
    /// Upper bound on the error those offsets carry: the barrier exit skew,
    /// measured as the longest time any rank spent in the barrier that
    /// followed.
    pub clock_error_bound_ns: u64,
    /// Up to the moment the first rank finished: bytes every rank had moved
    /// by then over that time (all ranks still moving data).
    pub first_done: DoneRate,
    /// To the last rank's completion: all bytes over the global window.
    pub last_done: DoneRate,
    pub per_rank: Vec<RankResult>,
    pub per_node: Vec<NodeResult>,
    /// Spread of the per-rank and per-node rates, bytes/s.
    pub rank_bw_bytes_per_s: Spread,
    pub node_bw_bytes_per_s: Spread,
    /// The rank with the lowest rate.
    pub slowest_rank: Option<u32>,
}

/// Bytes over a time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DoneRate {
    pub elapsed_ns: u64,
    pub bytes: u64,
    pub bw_bytes_per_s: f64,
}

/// Minimum, mean and maximum.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

/// One rank's part of a multi-process phase.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RankResult {
    pub rank: u32,
    /// The node it ran on (its host name, or `STORLAB_MPI_NODE`).
    pub node: String,
    /// Global index of its first job; its jobs are the next `numjobs`.
    pub first_job: u32,
    /// Its first submission and last completion, ns after it left the
    /// common barrier that started the phase.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Read + write figures over its own window.
    pub total: DirStats,
    /// Bytes it had moved when the first rank finished (interpolated
    /// between progress samples taken every 20 ms).
    pub bytes_at_first_done: u64,
    /// Its files (`n-n`) or the shared file, and the offsets of its jobs.
    pub files: Vec<String>,
    /// The hard error that stopped it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One node's part: its ranks' bytes over the node's own window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NodeResult {
    pub node: String,
    pub ranks: u32,
    pub bytes: u64,
    pub bw_bytes_per_s: f64,
}

/// Facts about the machine the run was on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    pub mem_total_bytes: u64,
    pub page_size_bytes: u64,
}

/// What was benchmarked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    /// As given (or the default scratch directory).
    pub path: String,
    /// `directory`, `file` or `block_device` (`devices` for a monitor
    /// timeline, `simulation` for `storlab sim`).
    pub kind: crate::TargetKind,
    /// The files or device the I/O went to.
    pub files: Vec<String>,
    /// File system type of the target (`ext4`, `xfs`, `tmpfs`, ...).
    pub filesystem: Option<String>,
    pub mount_point: Option<String>,
    /// Device under the file system or the device itself (`/dev/vda`).
    pub device: Option<String>,
    pub device_model: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size_bytes: Option<u64>,
    pub physical_block_size_bytes: Option<u64>,
    /// Free bytes on the file system before layout.
    pub free_bytes_before: Option<u64>,
    /// Whether storlab created the files (and so may remove them).
    pub created_by_storlab: bool,
    /// Whether the files were kept afterwards.
    pub kept: bool,
}

/// One device's figures over one sampling interval, with the definitions of
/// sysstat's `iostat -x` (see `docs/monitor.md`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceSample {
    /// End of the interval, ns since the start of the timeline (monotonic).
    pub t_ns: u64,
    /// Kernel name (`vda`, `dm-0`, `md0`, `loop3`).
    pub device: String,
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub r_bytes_per_s: f64,
    pub w_bytes_per_s: f64,
    pub rrqm_per_s: f64,
    pub wrqm_per_s: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    /// Average request size, bytes.
    pub areq_sz_bytes: f64,
    /// Average queue size.
    pub aqu_sz: f64,
    pub util_pct: f64,
    pub d_per_s: f64,
    pub d_bytes_per_s: f64,
    pub d_await_ms: f64,
    pub f_per_s: f64,
    pub f_await_ms: f64,
    /// Average read request size, bytes (iostat `rareq-sz`).
    #[serde(default)]
    pub r_areq_sz_bytes: f64,
    /// Average write request size, bytes (iostat `wareq-sz`).
    #[serde(default)]
    pub w_areq_sz_bytes: f64,
    /// Discard requests merged per second (iostat `drqm/s`).
    #[serde(default)]
    pub drqm_per_s: f64,
    /// Average discard request size, bytes (iostat `dareq-sz`).
    #[serde(default)]
    pub d_areq_sz_bytes: f64,
    /// Set when the counters cannot be turned into rates for this interval
    /// (they went backwards, or moved more than a device physically can);
    /// every figure above is then 0 and is not a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<SampleFlag>,
    /// What was wrong, for a flagged interval (the counter and its change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_detail: Option<String>,
}

/// Why an interval of a [`DeviceSample`] has no rates (`docs/monitor.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleFlag {
    /// A counter went backwards: a 32-bit wrap or the device was re-created.
    Reset,
    /// A counter moved more than any device could in the interval (beyond
    /// 100 GB/s or 100 M I/Os per second, or to a 2^32−1 / 2^64−1 sentinel).
    Impossible,
}

impl SampleFlag {
    /// `reset` or `impossible`, as in JSON and CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleFlag::Reset => "reset",
            SampleFlag::Impossible => "impossible",
        }
    }
}

/// Host CPU over one sampling interval, percent of all CPUs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuSample {
    pub t_ns: u64,
    pub user_pct: f64,
    pub nice_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub idle_pct: f64,
}

/// A device timeline: what `storlab monitor --record` stores and what
/// `storlab bench --monitor` attaches to a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MonitorTimeline {
    /// Wall-clock time of `t_ns = 0` (RFC 3339, UTC).
    pub started_at: String,
    pub interval_ns: u64,
    /// `top`, `leaf` or `all`.
    pub layer: crate::MonitorLayer,
    pub devices: Vec<String>,
    pub samples: Vec<DeviceSample>,
    pub cpu: Vec<CpuSample>,
    /// Per-interval totals that count each request once: `device` is the
    /// layer name (`top`, `leaf`, or for `all` the kinds of device on each level of the stack: `disk`, `part+loop`, `loop@2`).
    #[serde(default)]
    pub totals: Vec<DeviceSample>,
}

/// Which tool produced the record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `storlab`, or `fio` for imported results.
    pub name: String,
    pub version: String,
}

/// One benchmark run: the JSON document and the stored record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// The command line as typed (argv joined), for the record.
    pub command_line: Vec<String>,
    pub started_at: String,
    pub finished_at: String,
    /// Stopped early (Ctrl-C, ENOSPC, error): the phases hold what was measured.
    pub interrupted: bool,
    /// Why it stopped early, if it did.
    pub stop_reason: Option<String>,
    pub host: HostInfo,
    pub target: TargetInfo,
    pub phases: Vec<PhaseResult>,
    pub warnings: Vec<String>,
    /// Device timeline sampled during the run (`bench --monitor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<MonitorTimeline>,
    /// Set when the run is one of `--repeat N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatInfo>,
    /// A replay's timeline, per-file figures and I/O time against the
    /// trace's (kind `replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::ReplayFigures>,
}

impl ToolInfo {
    /// This storlab: name `storlab`, this version ([`crate::STORLAB_VERSION`]).
    pub fn storlab() -> ToolInfo {
        ToolInfo {
            name: "storlab".into(),
            version: crate::STORLAB_VERSION.into(),
        }
    }
}

impl BenchReport {
    /// The record of a run of storlab's starting now, the one constructor
    /// every command uses: schema version, tool and version, the command
    /// line as typed ([`command_line`]) and the start time (RFC 3339 UTC;
    /// `finished_at` stays empty until [`BenchReport::finish`]), with the
    /// host and target it ran on; no phases, warnings, timeline or repeat
    /// yet, not interrupted. What kind of run it is
    /// ([`crate::RunKind`]) is said when it is stored.
    pub fn new(host: HostInfo, target: TargetInfo) -> BenchReport {
        BenchReport {
            schema_version: crate::SCHEMA_VERSION,
            tool: ToolInfo::storlab(),
            command_line: command_line(),
            started_at: crate::time::now_rfc3339(),
            finished_at: String::new(),
            interrupted: false,
            stop_reason: None,
            host,
            target,
            phases: Vec::new(),
            warnings: Vec::new(),
            monitor: None,
            repeat: None,
            replay: None,
        }
    }

    /// The record of a run another tool made, read back from its output
    /// (fio's JSON, an io500 result directory): the schema version this
    /// storlab writes, the tool and command line that ran it, the run's own
    /// start and end (RFC 3339; empty when the output does not say), the
    /// host and target it ran on; no phases, warnings, timeline or repeat
    /// yet, not interrupted. The other constructor beside
    /// [`BenchReport::new`], so no importer builds a header by hand.
    pub fn imported(
        tool: ToolInfo,
        command_line: Vec<String>,
        (started_at, finished_at): (String, String),
        host: HostInfo,
        target: TargetInfo,
    ) -> BenchReport {
        BenchReport {
            tool,
            command_line,
            started_at,
            finished_at,
            ..BenchReport::new(host, target)
        }
    }

    /// Set `finished_at` to now.
    pub fn finish(&mut self) {
        self.finished_at = crate::time::now_rfc3339();
    }

    /// Total verify mismatches over all phases.
    pub fn verify_mismatches(&self) -> u64 {
        self.phases
            .iter()
            .filter_map(|p| p.verify.as_ref())
            .map(|v| v.mismatches)
            .sum()
    }
}

/// The command line as typed, for a run's record (`command_line`). Never
/// `std::env::args()`, which panics on an argument that is not UTF-8: such
/// an argument keeps its valid parts and shows every other byte as `\xNN`.
pub fn command_line() -> Vec<String> {
    std::env::args_os().map(|a| escape_os(&a)).collect()
}

/// `s` as text: valid UTF-8 unchanged, each byte that is not as `\xNN`
/// (so a non-UTF-8 file name stays recognisable and distinct, unlike `?`).
pub fn escape_os(s: &std::ffi::OsStr) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in s.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    out
}

/// A run as the store keeps it and as `compare`, `check`, `export` and
/// `report` see it: the record plus its id and labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// Row id in the store (what `storlab runs` lists).
    pub id: i64,
    /// `bench`, `monitor`, `fio-import`, ...
    pub kind: crate::RunKind,
    /// `--tag key=value` labels.
    pub tags: BTreeMap<String, String>,
    /// `--note` free text.
    pub note: Option<String>,
    pub report: BenchReport,
}

#[cfg(test)]
mod tests {
    /// `ALL` names every engine and cache mode once (a new variant fails to
    /// compile here until it is listed), and each word parses back.
    #[test]
    fn all_lists_every_engine_and_cache_mode() {
        for e in EngineKind::ALL {
            match e {
                EngineKind::IoUring | EngineKind::Psync | EngineKind::Null | EngineKind::Libaio => {
                }
            }
            assert_eq!(EngineKind::parse(e.as_str()), Some(e));
        }
        for c in CacheMode::ALL {
            match c {
                CacheMode::Direct | CacheMode::Cold | CacheMode::Warm | CacheMode::Buffered => {}
            }
            assert_eq!(CacheMode::parse(c.as_str()), Some(c));
        }
        let distinct = |v: Vec<&str>| v.iter().collect::<std::collections::BTreeSet<_>>().len();
        assert_eq!(distinct(EngineKind::ALL.map(|e| e.as_str()).to_vec()), 4);
        assert_eq!(distinct(CacheMode::ALL.map(|c| c.as_str()).to_vec()), 4);
    }

    use super::*;

    #[test]
    fn rw_names_round_trip() {
        for m in RwMode::ALL {
            assert_eq!(RwMode::parse(m.as_str()), Some(m));
            let j = serde_json::to_string(&m).unwrap();
            assert_eq!(j, format!("\"{}\"", m.as_str()));
        }
        assert_eq!(RwMode::parse("rw"), Some(RwMode::ReadWrite));
        assert_eq!(RwMode::RandRw.read_pct(70), 70);
        assert_eq!(RwMode::Write.read_pct(70), 0);
    }

    #[test]
    fn engine_and_cache_names() {
        assert_eq!(
            serde_json::to_string(&EngineKind::IoUring).unwrap(),
            "\"io_uring\""
        );
        assert_eq!(EngineKind::parse("io_uring"), Some(EngineKind::IoUring));
        assert_eq!(CacheMode::parse("cold"), Some(CacheMode::Cold));
        assert_eq!(CacheMode::parse("hot"), None);
    }

    /// A phase recorded before job groups existed loads, has none, and is
    /// written back without a `groups` key (the JSON of an ordinary phase
    /// is unchanged); a grouped phase round-trips.
    #[test]
    fn phases_without_groups_load_and_keep_their_json() {
        let dir = serde_json::json!({"bytes": 1, "ops": 1, "bw_bytes_per_s": 1.0, "iops": 1.0, "lat_ns": null});
        let old = serde_json::json!({
            "params": {"name": "r", "rw": "read", "rwmixread": 50, "bs": [{"bs_bytes": 4096, "weight": 100}],
                "size_bytes": 4096, "numjobs": 1, "iodepth": 1, "engine": "psync", "cache": "direct",
                "drop_caches": false, "runtime_ns": null, "time_based": false, "ramp_ns": 0,
                "fsync_every": 0, "end_fsync": true, "layout": {"kind": "per_job"},
                "buffer_pattern": {"kind": "random"}, "random_with_replacement": false,
                "verify": false, "seed": 1, "sqpoll": false, "registered": false},
            "started_at": "2026-01-01T00:00:00Z", "elapsed_ns": 1, "fsync_in_window": false,
            "end_fsync_ns": 0, "latency_span": "x", "read": dir, "write": dir, "total": dir,
            "jobs": [], "cpu": {"user_ns": 0, "sys_ns": 0, "cpu_ns_per_io": 0.0, "utilization_pct": 0.0},
            "errors": {}, "cache": {"mode": "direct", "method": null, "resident_pages_before": null,
            "resident_pages_after": null, "total_pages": null, "verified": null, "may_be_cached": false},
            "verify": null, "interrupted": false, "warnings": []
        });
        let p: PhaseResult = serde_json::from_value(old).unwrap();
        assert!(p.groups.is_none() && p.params.groups.is_empty());
        let back = serde_json::to_value(&p).unwrap();
        assert!(back.get("groups").is_none());
        assert!(back["params"].get("groups").is_none());
        let mut g = p.clone();
        g.params.groups = vec![p.params.clone()];
        g.groups = Some(PhaseGroups {
            reporting: Vec::new(),
            overlap: 0.5,
            all_moving_ns: 7,
            groups: vec![GroupResult {
                name: "r".into(),
                params: p.params.clone(),
                ..Default::default()
            }],
        });
        let text = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<PhaseResult>(&text).unwrap(), g);
    }

    #[test]
    fn non_utf8_arguments_are_escaped_not_lost() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(escape_os(OsStr::new("/data/café")), "/data/café");
        let raw = OsStr::from_bytes(b"/tmp/caf\xe9/x\xff\xfe");
        assert_eq!(escape_os(raw), "/tmp/caf\\xE9/x\\xFF\\xFE");
    }

    /// The one constructor fills what every run record needs: schema,
    /// storlab's name and version, the command line and a start time.
    #[test]
    fn a_new_record_carries_schema_tool_command_line_and_times() {
        let host = HostInfo {
            hostname: "h".into(),
            ..Default::default()
        };
        let target = TargetInfo {
            path: "/t".into(),
            kind: "directory".into(),
            ..Default::default()
        };
        let mut r = BenchReport::new(host.clone(), target.clone());
        assert_eq!(r.schema_version, crate::SCHEMA_VERSION);
        assert_eq!(r.tool.name, "storlab");
        assert_eq!(r.tool.version, crate::STORLAB_VERSION);
        assert_eq!(r.command_line, command_line());
        assert!(!r.command_line.is_empty());
        assert!(
            r.started_at.ends_with('Z') && r.started_at.len() == 20,
            "{}",
            r.started_at
        );
        assert!(r.finished_at.is_empty());
        assert_eq!((&r.host, &r.target), (&host, &target));
        assert!(r.phases.is_empty() && !r.interrupted && r.stop_reason.is_none());
        r.finish();
        assert!(r.finished_at >= r.started_at);
    }

    #[test]
    fn latency_keys_are_stable() {
        let j = serde_json::to_value(LatencyStats::default()).unwrap();
        for k in [
            "min", "mean", "stddev", "max", "p50", "p90", "p99", "p99_9", "p99_99",
        ] {
            assert!(j.get(k).is_some(), "missing {k}");
        }
    }
}
