//! What a replay measured, beside what the trace recorded: per rank the
//! operations and bytes (equal to the trace's, or the difference named),
//! the time spent in I/O here against the trace's, the start lag of a
//! timed replay (p50/p99/max), and the whole as a run record (kind
//! `replay`, one phase, one job per rank).

use crate::figures::{Bins, FileFigures, RankExtra};
use crate::prepare::Prepared;
use crate::run::Speed;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::time::Duration;
use storlab_trace::Op;
use storlab_types::{
    BenchReport, DirStats, HostInfo, JobResult, LagNs, LatencyStats, PhaseParams, PhaseResult,
    ReplayFigures, ReplayFile, RwMode,
};

/// One rank's replay.
#[derive(Debug, Clone)]
pub struct RankFigures {
    pub rank: u32,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Opens and closes (counted, not issued).
    pub not_issued: u64,
    /// Reads that found fewer bytes than recorded (the trace read past
    /// what it had written).
    pub short_reads: u64,
    /// Failed operations by errno name.
    pub errors: BTreeMap<String, u64>,
    /// Sum of the operations' latencies here.
    pub io_ns: u64,
    /// Sum of the recorded operations' durations, where the trace has them.
    pub trace_io_ns: u64,
    pub traced_durations: u64,
    /// First issue and last completion, from the replay's start.
    pub first_issue: Option<Duration>,
    pub last_done: Duration,
    pub last_issue: Duration,
    /// Recorded starts of the first and last data operation.
    pub first_start_ns: Option<u64>,
    pub last_start_ns: u64,
    pub lag: Histogram<u64>,
    pub latency: Histogram<u64>,
    pub interrupted: bool,
    /// Bytes over time (replayed and recorded) and per file.
    pub extra: RankExtra,
}

impl RankFigures {
    pub fn new(rank: u32, lag: Histogram<u64>, latency: Histogram<u64>) -> RankFigures {
        RankFigures {
            rank,
            reads: 0,
            writes: 0,
            syncs: 0,
            bytes_read: 0,
            bytes_written: 0,
            not_issued: 0,
            short_reads: 0,
            errors: BTreeMap::new(),
            io_ns: 0,
            trace_io_ns: 0,
            traced_durations: 0,
            first_issue: None,
            last_done: Duration::ZERO,
            last_issue: Duration::ZERO,
            first_start_ns: None,
            last_start_ns: 0,
            lag,
            latency,
            interrupted: false,
            extra: RankExtra::default(),
        }
    }

    /// Add the figures of another thread that replayed operations of the
    /// same rank (a timed replay issues a rank's operations from several
    /// threads, so none waits for another's completion).
    pub fn absorb(&mut self, o: RankFigures) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.syncs += o.syncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.not_issued += o.not_issued;
        self.short_reads += o.short_reads;
        for (e, n) in o.errors {
            *self.errors.entry(e).or_default() += n;
        }
        self.io_ns = self.io_ns.saturating_add(o.io_ns);
        self.trace_io_ns = self.trace_io_ns.saturating_add(o.trace_io_ns);
        self.traced_durations += o.traced_durations;
        self.first_issue = match (self.first_issue, o.first_issue) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_done = self.last_done.max(o.last_done);
        self.last_issue = self.last_issue.max(o.last_issue);
        self.first_start_ns = match (self.first_start_ns, o.first_start_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_start_ns = self.last_start_ns.max(o.last_start_ns);
        let _ = self.lag.add(&o.lag);
        let _ = self.latency.add(&o.latency);
        self.interrupted |= o.interrupted;
        self.extra.realtime &= o.extra.realtime;
        self.extra.realtime_ops += o.extra.realtime_ops;
        self.extra.cpu_user_ns = self.extra.cpu_user_ns.saturating_add(o.extra.cpu_user_ns);
        self.extra.cpu_sys_ns = self.extra.cpu_sys_ns.saturating_add(o.extra.cpu_sys_ns);
        self.extra.trims += o.extra.trims;
        self.extra.bytes_trimmed += o.extra.bytes_trimmed;
        self.extra.replayed.merge(&o.extra.replayed);
        self.extra.recorded.merge(&o.extra.recorded);
        for (i, f) in &o.extra.files {
            self.extra.files.entry(*i).or_default().merge(f);
        }
    }

    /// Count one issued operation.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &mut self,
        file: usize,
        op: Op,
        length: u64,
        outcome: std::io::Result<usize>,
        lag_ns: Option<u64>,
        latency_ns: u64,
        issue: Duration,
        done: Duration,
        traced_ns: Option<u64>,
        start_ns: u64,
        since_first_ns: u64,
    ) {
        self.first_issue.get_or_insert(issue);
        self.last_issue = issue;
        self.last_done = self.last_done.max(done);
        self.io_ns = self.io_ns.saturating_add(latency_ns);
        if let Some(lag) = lag_ns {
            // (None: `--speed max`, which has no schedule to be late for.)
            let _ = self.lag.record(lag);
        }
        let _ = self.latency.record(latency_ns.max(1));
        if let Some(t) = traced_ns {
            self.trace_io_ns = self.trace_io_ns.saturating_add(t);
            self.traced_durations += 1;
        }
        if op.is_data() {
            self.first_start_ns.get_or_insert(start_ns);
            self.last_start_ns = start_ns;
        }
        let per_file = self.extra.files.entry(file).or_default();
        per_file.io_ns = per_file.io_ns.saturating_add(latency_ns);
        if let Some(t) = traced_ns {
            per_file.trace_io_ns = per_file.trace_io_ns.saturating_add(t);
            per_file.traced += 1;
        }
        if op.is_data() {
            self.extra.recorded.add(since_first_ns, length);
        }
        let n = match outcome {
            Ok(n) => n as u64,
            Err(e) => {
                let name = e
                    .raw_os_error()
                    .map_or_else(|| e.kind().to_string(), |c| format!("errno {c}"));
                *self.errors.entry(name).or_default() += 1;
                return;
            }
        };
        if op.is_data() {
            let at = u64::try_from(issue.as_nanos()).unwrap_or(u64::MAX);
            self.extra.replayed.add(at, n);
        }
        match op {
            Op::Read => {
                self.reads += 1;
                self.bytes_read += n;
                per_file.reads += 1;
                per_file.bytes_read += n;
                if n < length {
                    self.short_reads += 1;
                }
            }
            Op::Write => {
                self.writes += 1;
                self.bytes_written += n;
                per_file.writes += 1;
                per_file.bytes_written += n;
            }
            Op::Trim => {
                self.extra.trims += 1;
                self.extra.bytes_trimmed += n;
                per_file.trims += 1;
                per_file.bytes_trimmed += n;
            }
            _ => self.syncs += 1,
        }
    }
}

/// The replay, whole.
#[derive(Debug, Clone)]
pub struct ReplayResult {
    pub speed: Speed,
    pub ranks: Vec<RankFigures>,
    pub interrupted: bool,
    /// Differences between what was replayed and what the trace holds,
    /// each worded (empty when every rank's counts are equal).
    pub differences: Vec<String>,
    /// From the replay's start to the last completion.
    pub elapsed: Duration,
    /// The trace's own span (first start to last end or start).
    pub trace_ns: u64,
    /// The traced files' names, by the layout's index.
    pub file_names: Vec<String>,
}

/// p50, p99 and max of a histogram, ns.
pub fn percentiles(h: &Histogram<u64>) -> (u64, u64, u64) {
    if h.is_empty() {
        (0, 0, 0)
    } else {
        (h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.max())
    }
}

impl ReplayResult {
    /// The replay of `ranks` (every rank's figures, gathered) against
    /// the trace of `prep`; `stopped` when a stop was asked for.
    pub fn new(
        prep: &Prepared,
        speed: Speed,
        mut ranks: Vec<RankFigures>,
        stopped: bool,
    ) -> ReplayResult {
        ranks.sort_by_key(|r| r.rank);
        let mut differences = Vec::new();
        for t in &prep.layout.summary.ranks {
            let Some(r) = ranks.iter().find(|r| r.rank == t.rank) else {
                if t.reads + t.writes > 0 {
                    differences.push(format!(
                        "rank {}: not replayed ({} reads, {} writes of the trace left out by --ranks)",
                        t.rank, t.reads, t.writes
                    ));
                }
                continue;
            };
            let pairs = [
                ("reads", r.reads, t.reads),
                ("writes", r.writes, t.writes),
                ("bytes read", r.bytes_read, t.bytes_read),
                ("bytes written", r.bytes_written, t.bytes_written),
                ("trims", r.extra.trims, t.trims),
                ("bytes trimmed", r.extra.bytes_trimmed, t.bytes_trimmed),
            ];
            for (what, got, want) in pairs {
                if got != want {
                    differences.push(format!(
                        "rank {}: {what} {got}, the trace has {want}",
                        t.rank
                    ));
                }
            }
            if r.short_reads > 0 {
                differences.push(format!(
                    "rank {}: {} reads found fewer bytes than recorded (past the end of what the file holds)",
                    r.rank, r.short_reads
                ));
            }
            for (e, n) in &r.errors {
                differences.push(format!("rank {}: {n} operations failed with {e}", r.rank));
            }
        }
        let interrupted = stopped || ranks.iter().any(|r| r.interrupted);
        if interrupted {
            differences.push("the replay was stopped before the end of the trace".into());
        }
        let elapsed = ranks.iter().map(|r| r.last_done).max().unwrap_or_default();
        ReplayResult {
            speed,
            interrupted,
            differences,
            elapsed,
            trace_ns: prep.layout.summary.duration_ns,
            file_names: prep.layout.files.iter().map(|f| f.name.clone()).collect(),
            ranks,
        }
    }

    /// All ranks' start lags merged (exact: HDR histograms add).
    pub fn lag(&self) -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap_or_else(|_| self.ranks[0].lag.clone());
        for r in &self.ranks {
            let _ = h.add(&r.lag);
        }
        h
    }

    /// Data operations per second of a rank's issue times against the
    /// trace's recorded starts: `(n − 1) / (last − first)` both ways, so a
    /// timed replay of a steady stream gives the trace's rate.
    pub fn rates(&self) -> Option<(f64, f64)> {
        let r = self.ranks.first()?;
        let n = (r.reads + r.writes) as f64;
        let replay = (r.last_issue.checked_sub(r.first_issue?)?).as_secs_f64();
        let trace = (r.last_start_ns - r.first_start_ns?) as f64 / 1e9;
        (n > 1.0 && replay > 0.0 && trace > 0.0).then(|| ((n - 1.0) / replay, (n - 1.0) / trace))
    }

    /// Time in I/O here against the trace's, summed over ranks (only the
    /// operations the trace timed).
    pub fn io_time(&self) -> (u64, u64) {
        let here = self.ranks.iter().map(|r| r.io_ns).sum();
        let traced = self.ranks.iter().map(|r| r.trace_io_ns).sum();
        (here, traced)
    }

    /// Every rank's per-file figures added up, by the layout's file index.
    pub fn files(&self) -> BTreeMap<usize, FileFigures> {
        let mut all: BTreeMap<usize, FileFigures> = BTreeMap::new();
        for r in &self.ranks {
            for (i, f) in &r.extra.files {
                all.entry(*i).or_default().merge(f);
            }
        }
        all
    }

    /// The timeline, per-file figures and I/O time of the run record.
    pub fn figures(&self, prep: &Prepared) -> ReplayFigures {
        let (mut replayed, mut recorded) = (Bins::default(), Bins::default());
        for r in &self.ranks {
            replayed.merge(&r.extra.replayed);
            recorded.merge(&r.extra.recorded);
        }
        // One width for both series.
        let w = replayed.width_ns.max(recorded.width_ns);
        let (replayed, recorded) = (replayed.at_width(w), recorded.at_width(w));
        let files = self
            .files()
            .into_iter()
            .map(|(i, f)| ReplayFile {
                name: prep
                    .layout
                    .files
                    .get(i)
                    .map_or_else(String::new, |p| p.name.clone()),
                reads: f.reads,
                writes: f.writes,
                bytes_read: f.bytes_read,
                bytes_written: f.bytes_written,
                io_ns: f.io_ns,
                trace_io_ns: (f.traced > 0).then_some(f.trace_io_ns),
                trims: f.trims,
                bytes_trimmed: f.bytes_trimmed,
            })
            .collect();
        let (here, traced) = self.io_time();
        let (p50, p99, max) = percentiles(&self.lag());
        ReplayFigures {
            speed: match self.speed {
                Speed::Original => "original".into(),
                Speed::Max => "max".into(),
                Speed::Factor(f) => format!("{f}"),
            },
            interval_ns: w,
            replayed_bytes: replayed.bytes,
            recorded_bytes: recorded.bytes,
            files,
            io_ns: here,
            trace_io_ns: (traced > 0).then_some(traced),
            io_time_change_pct: (traced > 0).then(|| (here as f64 / traced as f64 - 1.0) * 100.0),
            lag_ns: (self.speed != Speed::Max).then_some(LagNs { p50, p99, max }),
            realtime: self.speed != Speed::Max && self.ranks.iter().all(|r| r.extra.realtime),
            realtime_ops: self.ranks.iter().map(|r| r.extra.realtime_ops).sum(),
            trims: self.ranks.iter().map(|r| r.extra.trims).sum(),
            bytes_trimmed: self.ranks.iter().map(|r| r.extra.bytes_trimmed).sum(),
            rate_ops_per_s: self
                .rates()
                .map(|(replayed, recorded)| storlab_types::replay::RatePair { replayed, recorded }),
        }
    }

    /// CPU of the replay: every rank's issuing threads and the threads that
    /// read the trace for them (thread clocks), over `elapsed_ns`.
    fn cpu(&self, elapsed_ns: u64) -> storlab_types::CpuStats {
        let user: u64 = self.ranks.iter().map(|r| r.extra.cpu_user_ns).sum();
        let sys: u64 = self.ranks.iter().map(|r| r.extra.cpu_sys_ns).sum();
        let ops: u64 = self
            .ranks
            .iter()
            .map(|r| r.reads + r.writes + r.syncs + r.extra.trims)
            .sum();
        let all = user.saturating_add(sys) as f64;
        storlab_types::CpuStats {
            user_ns: user,
            sys_ns: sys,
            cpu_ns_per_io: if ops == 0 { 0.0 } else { all / ops as f64 },
            utilization_pct: if elapsed_ns == 0 {
                0.0
            } else {
                all * 100.0 / elapsed_ns as f64
            },
        }
    }

    /// The run record: one phase, `replay`, one job per rank.
    pub fn to_report(&self, prep: &Prepared, host: HostInfo) -> BenchReport {
        let mut report = BenchReport::new(host, prep.target.clone());
        let elapsed_ns = u64::try_from(self.elapsed.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        let secs = elapsed_ns as f64 / 1e9;
        let dir = |bytes: u64, ops: u64, lat: Option<LatencyStats>| DirStats {
            bytes,
            ops,
            bw_bytes_per_s: bytes as f64 / secs,
            iops: ops as f64 / secs,
            lat_ns: lat,
        };
        let (br, bw): (u64, u64) = (
            self.ranks.iter().map(|r| r.bytes_read).sum(),
            self.ranks.iter().map(|r| r.bytes_written).sum(),
        );
        let (nr, nw): (u64, u64) = (
            self.ranks.iter().map(|r| r.reads).sum(),
            self.ranks.iter().map(|r| r.writes).sum(),
        );
        let mut lat = Histogram::<u64>::new(3).unwrap_or_else(|_| self.ranks[0].latency.clone());
        for r in &self.ranks {
            let _ = lat.add(&r.latency);
        }
        let total_lat = storlab_bench::latency_stats(&lat);
        let mut errors = BTreeMap::new();
        for r in &self.ranks {
            for (e, n) in &r.errors {
                *errors.entry(e.clone()).or_insert(0) += n;
            }
        }
        let jobs = self
            .ranks
            .iter()
            .map(|r| {
                let e = u64::try_from(r.last_done.as_nanos())
                    .unwrap_or(u64::MAX)
                    .max(1);
                let s = e as f64 / 1e9;
                JobResult {
                    job: r.rank,
                    elapsed_ns: e,
                    read: DirStats {
                        bytes: r.bytes_read,
                        ops: r.reads,
                        bw_bytes_per_s: r.bytes_read as f64 / s,
                        iops: r.reads as f64 / s,
                        lat_ns: None,
                    },
                    write: DirStats {
                        bytes: r.bytes_written,
                        ops: r.writes,
                        bw_bytes_per_s: r.bytes_written as f64 / s,
                        iops: r.writes as f64 / s,
                        lat_ns: None,
                    },
                    errors: r.errors.clone(),
                    mean_depth: None,
                }
            })
            .collect();
        let (p50, p99, max) = percentiles(&self.lag());
        let mut warnings = self.differences.clone();
        if prep.cache.verified == Some(false) {
            warnings.push(format!(
                "cache not cold: {} of {} pages of the read files stayed in the page cache after eviction; reads may be served from memory",
                prep.cache.resident_pages_after.unwrap_or(0),
                prep.cache.total_pages.unwrap_or(0)
            ));
        }
        if self.speed != Speed::Max {
            warnings.push(format!(
                "start lag behind the recorded timing: p50 {p50} ns, p99 {p99} ns, max {max} ns"
            ));
        }
        let phase = PhaseResult {
            device_stat: None,
            params: PhaseParams {
                name: "replay".into(),
                rw: if nw == 0 {
                    RwMode::Read
                } else if nr == 0 {
                    RwMode::Write
                } else {
                    RwMode::ReadWrite
                },
                rwmixread: (nr * 100).checked_div(nr + nw).map_or(0, |p| p as u8),
                numjobs: u32::try_from(self.ranks.len()).unwrap_or(u32::MAX),
                iodepth: 1,
                engine: storlab_types::EngineKind::Psync,
                loops: 1,
                ..PhaseParams::default()
            },
            started_at: report.started_at.clone(),
            elapsed_ns,
            fsync_in_window: false,
            end_fsync_ns: 0,
            latency_span: "each operation: the pread/pwrite/fsync system call, issue to return"
                .into(),
            read: dir(br, nr, None),
            write: dir(bw, nw, None),
            total: dir(br + bw, nr + nw, total_lat),
            jobs,
            cpu: self.cpu(elapsed_ns),
            errors,
            cache: prep.cache.clone(),
            verify: None,
            depth: None,
            interrupted: self.interrupted,
            warnings,
            cluster: None,
            series: None,
            groups: None,
            percentiles: None,
        };
        report.phases.push(phase);
        report.replay = Some(self.figures(prep));
        report.interrupted = self.interrupted;
        report.finish();
        report
    }
}

fn dur(ns: u64) -> String {
    storlab_types::format_latency_ns(ns as f64)
}

/// The replay as text for people: per-rank counts, the timing error, the
/// rate and I/O time against the trace's, and any difference from it.
pub fn render(r: &ReplayResult, trace: &str, run_id: i64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let speed = match r.speed {
        Speed::Original => "its recorded timing".to_string(),
        Speed::Max => "maximum speed".to_string(),
        Speed::Factor(f) => format!("{f}x its recorded timing"),
    };
    let _ = writeln!(out, "replayed {trace} at {speed} (run {run_id})");
    let _ = writeln!(
        out,
        "{:>6} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "rank", "reads", "writes", "bytes read", "bytes written", "I/O time"
    );
    for k in &r.ranks {
        let _ = writeln!(
            out,
            "{:>6} {:>10} {:>10} {:>14} {:>14} {:>12}",
            k.rank,
            k.reads,
            k.writes,
            k.bytes_read,
            k.bytes_written,
            dur(k.io_ns)
        );
    }
    let trims: u64 = r.ranks.iter().map(|k| k.extra.trims).sum();
    if trims > 0 {
        let bytes: u64 = r.ranks.iter().map(|k| k.extra.bytes_trimmed).sum();
        let _ = writeln!(
            out,
            "trims: {trims} issued, {bytes} bytes (holes punched in files, ranges discarded on a device)"
        );
    }
    render_files(&mut out, r);
    let elapsed = u64::try_from(r.elapsed.as_nanos()).unwrap_or(u64::MAX);
    let _ = writeln!(
        out,
        "took {} here; the trace spans {}",
        dur(elapsed),
        dur(r.trace_ns)
    );
    if r.speed != Speed::Max {
        let (p50, p99, max) = percentiles(&r.lag());
        let _ = writeln!(
            out,
            "start lag behind the recorded timing: p50 {}, p99 {}, max {}",
            dur(p50),
            dur(p99),
            dur(max)
        );
    }
    if r.speed != Speed::Max {
        let _ = writeln!(
            out,
            "{}",
            if r.ranks.iter().all(|k| k.extra.realtime) {
                let rt: u64 = r.ranks.iter().map(|k| k.extra.realtime_ops).sum();
                let all: u64 = r.ranks.iter().map(|k| k.reads + k.writes + k.syncs).sum();
                format!(
                    "real-time priority (SCHED_FIFO) for {rt} of {all} operations: those it was on time for, at least \
                     1 ms apart per rank a process replays (never through dense stretches or while behind)"
                )
            } else {
                "issued at ordinary priority (real-time needs root or CAP_SYS_NICE; STORLAB_NO_RT turns it off): \
                 the lag includes the machine's scheduling delays"
                    .to_string()
            }
        );
    }
    if let Some((here, recorded)) = r.rates() {
        let _ = writeln!(
            out,
            "rank {}'s rate: {here:.1} operations/s replayed, {recorded:.1} recorded",
            r.ranks[0].rank
        );
    }
    let (here, traced) = r.io_time();
    if traced > 0 {
        let change = (here as f64 / traced as f64 - 1.0) * 100.0;
        let _ = writeln!(
            out,
            "time in I/O: {} here, {} in the trace: this system would have spent {:.0} % {} time in I/O",
            dur(here),
            dur(traced),
            change.abs(),
            if change <= 0.0 { "less" } else { "more" }
        );
    }
    if r.differences.is_empty() {
        let _ = writeln!(out, "every rank's operations and bytes equal the trace's");
    } else {
        for d in &r.differences {
            let _ = writeln!(out, "differs from the trace: {d}");
        }
    }
    out
}

/// The per-file table (the first 20 files by bytes moved; a line counts
/// the rest).
fn render_files(out: &mut String, r: &ReplayResult) {
    use std::fmt::Write as _;
    let mut files: Vec<(usize, FileFigures)> = r.files().into_iter().collect();
    if files.is_empty() {
        return;
    }
    files.sort_by_key(|(_, f)| std::cmp::Reverse(f.bytes_read + f.bytes_written));
    let _ = writeln!(
        out,
        "{:>10} {:>10} {:>14} {:>14} {:>12} {:>12}  file",
        "reads", "writes", "bytes read", "bytes written", "I/O time", "in the trace"
    );
    const SHOWN: usize = 20;
    for (i, f) in files.iter().take(SHOWN) {
        let name = r.file_names.get(*i).map_or("?", String::as_str);
        let traced = if f.traced > 0 {
            dur(f.trace_io_ns)
        } else {
            "-".to_string()
        };
        let _ = writeln!(
            out,
            "{:>10} {:>10} {:>14} {:>14} {:>12} {:>12}  {name}",
            f.reads,
            f.writes,
            f.bytes_read,
            f.bytes_written,
            dur(f.io_ns),
            traced
        );
    }
    if files.len() > SHOWN {
        let _ = writeln!(out, "(and {} more files)", files.len() - SHOWN);
    }
}
