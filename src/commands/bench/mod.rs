//! `storlab bench`: run I/O workloads and report what the storage did.
//!
//! With no workload options it runs the newcomer's quick all-round check:
//! sequential write and read, random read and write, a few seconds each.

use crate::Outcome;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};
use storlab_bench::{Control, JobFile, PhaseSpec, SafetyOptions};
use storlab_types::{
    BenchReport, ByteSize, DirStats, PhaseParams, PhaseResult, SCHEMA_VERSION, STORLAB_VERSION,
    ToolInfo, format_bytes,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
}

/// Workload options, named as fio names them. On the command line they
/// override the job file's values for every phase.
#[derive(Args, Debug, Default, Clone)]
pub struct WorkloadArgs {
    /// I/O pattern: read, write, randread, randwrite, readwrite (rw), randrw
    #[arg(long, value_name = "PATTERN")]
    pub rw: Option<String>,
    /// Percentage of reads in a mixed pattern (readwrite, randrw) [default: 50]
    #[arg(long, value_name = "PCT")]
    pub rwmixread: Option<u8>,
    /// Block size, e.g. 4k, 64k, 1M [default: 4k]
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<ByteSize>,
    /// Block size mix, SIZE/PERCENT pairs: 4k/50:64k/50
    #[arg(long, value_name = "MIX")]
    pub bssplit: Option<String>,
    /// Bytes per job (its file or region) [default: 256M]
    #[arg(long, value_name = "SIZE")]
    pub size: Option<ByteSize>,
    /// Number of jobs (threads) [default: 1]
    #[arg(long, value_name = "N")]
    pub numjobs: Option<u32>,
    /// I/Os in flight per job [default: 1]
    #[arg(long, value_name = "N")]
    pub iodepth: Option<u32>,
    /// I/O engine: io_uring, psync, null [default: io_uring, psync where io_uring is unavailable]
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// O_DIRECT (same as --cache direct)
    #[arg(long)]
    pub direct: bool,
    /// Page-cache state: direct (O_DIRECT), cold (evicted before each phase), warm (pre-read)
    /// [default: direct, cold where O_DIRECT is unsupported]
    #[arg(long, value_name = "MODE")]
    pub cache: Option<String>,
    /// With --cache cold, also drop the whole page cache (root only)
    #[arg(long)]
    pub drop_caches: bool,
    /// Limit of the measured time, e.g. 30s, 2m
    #[arg(long, value_name = "DUR")]
    pub runtime: Option<String>,
    /// Repeat passes over the region until --runtime expires
    #[arg(long)]
    pub time_based: bool,
    /// Warm-up time whose I/O is not counted, e.g. 5s
    #[arg(long, value_name = "DUR")]
    pub ramp_time: Option<String>,
    /// fsync after every N writes per job
    #[arg(long, value_name = "N")]
    pub fsync_every: Option<u32>,
    /// Do not fsync at the end of write phases (writes may then not be durable)
    #[arg(long)]
    pub no_end_fsync: bool,
    /// One file shared by all jobs (each job its own region)
    #[arg(long)]
    pub shared_file: bool,
    /// With a shared file, interleave jobs in units of SIZE
    #[arg(long, value_name = "SIZE")]
    pub stride: Option<ByteSize>,
    /// Data written: random (incompressible, default), zero, compressible:PCT
    #[arg(long, value_name = "PATTERN")]
    pub buffer_pattern: Option<String>,
    /// Random offsets with replacement instead of every block once per pass
    #[arg(long)]
    pub random_with_replacement: bool,
    /// Write self-checking blocks and check them on read (exit 1 on any mismatch)
    #[arg(long)]
    pub verify: bool,
    /// Seed for offsets and data
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// io_uring: kernel-side submission polling (uses a kernel thread's CPU)
    #[arg(long)]
    pub sqpoll: bool,
    /// io_uring: do not register buffers and files
    #[arg(long)]
    pub no_registered: bool,
    /// Cap on I/Os per second per job
    #[arg(long, value_name = "N")]
    pub rate_iops: Option<u32>,
    /// io_uring: enter the kernel once N I/Os are queued [default: 1, each at once]
    #[arg(long, value_name = "N")]
    pub iodepth_batch: Option<u32>,
    /// Pre-allocation of new files: native (fallocate, default) or none (sparse)
    #[arg(long, value_name = "MODE", value_parser = ["native", "none"])]
    pub fallocate: Option<String>,
}

impl WorkloadArgs {
    fn to_spec(&self) -> PhaseSpec {
        let flag = |b: bool| b.then_some(true);
        PhaseSpec {
            name: None,
            rw: self.rw.clone(),
            rwmixread: self.rwmixread,
            bs: self.bs,
            bssplit: self.bssplit.clone(),
            size: self.size,
            numjobs: self.numjobs,
            iodepth: self.iodepth,
            engine: self.engine.clone(),
            direct: flag(self.direct),
            cache: self.cache.clone(),
            drop_caches: flag(self.drop_caches),
            runtime: self.runtime.clone(),
            time_based: flag(self.time_based),
            ramp_time: self.ramp_time.clone(),
            fsync_every: self.fsync_every,
            end_fsync: self.no_end_fsync.then_some(false),
            shared_file: flag(self.shared_file),
            stride: self.stride,
            buffer_pattern: self.buffer_pattern.clone(),
            random_with_replacement: flag(self.random_with_replacement),
            verify: flag(self.verify),
            seed: self.seed,
            sqpoll: flag(self.sqpoll),
            registered: self.no_registered.then_some(false),
            rate_iops: self.rate_iops,
            iodepth_batch: self.iodepth_batch,
            fallocate: self.fallocate.as_deref().map(|f| f == "native"),
        }
    }

    /// Whether any option that defines a workload was given.
    fn defines_workload(&self) -> bool {
        self.rw.is_some()
    }
}

/// `storlab bench [TARGET]`
#[derive(Args, Debug)]
pub struct BenchCommand {
    /// Directory (storlab makes its own subdirectory), new file path, or block
    /// device [default: ./storlab-scratch]
    pub target: Option<PathBuf>,
    /// TOML job file with [global] and [[phase]] tables
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Keep the data files afterwards
    #[arg(long)]
    pub keep: bool,
    /// Allow writing to an existing file or a block device (destroys its contents)
    #[arg(long)]
    pub allow_destroy: bool,
    /// No live progress on stderr
    #[arg(long, short)]
    pub quiet: bool,
    /// Result format on stdout
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub output_format: OutputFormat,
    /// Also write the JSON result document to FILE
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Sample the devices under the target (iostat -x figures, every layer of
    /// the stack) during the run and keep the timeline with the results
    #[arg(long)]
    pub monitor: bool,
    #[command(flatten)]
    pub db: crate::commands::common::DbArgs,
    #[command(flatten)]
    pub record: crate::commands::common::RecordArgs,
    /// Do not save the run in the results database
    #[arg(long)]
    pub no_save: bool,
    /// Sampling interval of --monitor
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = parse_interval)]
    pub monitor_interval: Duration,
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    storlab_types::parse_duration(s).map_err(|e| e.to_string())
}

/// The quick all-round check's phases (before command-line overrides).
fn quick_phases() -> Vec<PhaseSpec> {
    let phase =
        |name: &str, rw: &str, bs: u64, qd: u32, time_based: bool, runtime: &str| PhaseSpec {
            name: Some(name.into()),
            rw: Some(rw.into()),
            bs: Some(ByteSize(bs)),
            iodepth: Some(qd),
            size: Some(ByteSize(256 << 20)),
            runtime: Some(runtime.into()),
            time_based: Some(time_based),
            ..Default::default()
        };
    vec![
        // Its first full pass also lays the file out for the reads.
        phase("seq-write", "write", 1 << 20, 16, true, "3s"),
        phase("seq-read", "read", 1 << 20, 16, true, "3s"),
        phase("rand-read", "randread", 4096, 32, true, "3s"),
        phase("rand-write", "randwrite", 4096, 32, true, "3s"),
    ]
}

impl BenchCommand {
    /// Build the phases from the job file, the quick profile or the flags.
    fn phases(&self, warnings: &mut Vec<String>) -> Result<(Vec<PhaseParams>, Option<PathBuf>)> {
        let cli = self.workload.to_spec();
        let mut job_text = String::new();
        let mut file_target = None;
        let job = match &self.job {
            Some(path) => {
                job_text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read job file {}", path.display()))?;
                let jf = JobFile::parse(&job_text, path)?;
                file_target = jf.target.clone().map(PathBuf::from);
                Some(jf)
            }
            None => None,
        };
        let target = self.target.clone().or(file_target);
        // Defaults that depend on this machine: the lowest layer, so the job
        // file or a flag that chooses wins wherever it is set.
        let mut machine = PhaseSpec::default();
        if cli.engine.is_none()
            && let Err(e) = storlab_bench::engine::uring_available()
        {
            warnings.push(format!(
                "io_uring is not available ({e}); psync is the default engine"
            ));
            machine.engine = Some("psync".into());
        }
        if cli.cache.is_none()
            && cli.direct.is_none()
            && !storlab_bench::target::probe_direct(target.as_deref())
        {
            warnings.push(
                "the target does not support O_DIRECT; the default cache mode is cold (buffered, pages evicted before each phase)"
                    .into(),
            );
            machine.cache = Some("cold".into());
        }
        let phases = match (&job, &self.job) {
            (Some(jf), Some(path)) => jf.phases(&job_text, path, &machine, &cli)?,
            _ if self.workload.defines_workload() => {
                vec![storlab_bench::spec::resolve_phase(
                    &machine.overlay(&cli),
                    0,
                )?]
            }
            _ => quick_phases()
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    storlab_bench::spec::resolve_phase(&machine.overlay(q).overlay(&cli), i)
                })
                .collect::<Result<_, _>>()?,
        };
        Ok((phases, target))
    }

    pub fn execute(self) -> Result<Outcome> {
        let command_line: Vec<String> = std::env::args().collect();
        let started_at = now_rfc3339();
        let mut warnings = Vec::new();
        let (phases, target) = self.phases(&mut warnings)?;
        let safety = SafetyOptions {
            allow_destroy: self.allow_destroy,
        };
        let job = storlab_bench::prepare(target.as_deref(), phases, safety)?;
        warnings.extend(job.warnings.iter().cloned());

        let max_jobs = job
            .phases
            .iter()
            .map(|p| p.numjobs as usize)
            .max()
            .unwrap_or(1);
        let control = Arc::new(Control::new(max_jobs));
        let sigint = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(sig, Arc::clone(&sigint))
                .context("cannot install the Ctrl-C handler")?;
        }
        let show_progress = !self.quiet && std::io::stderr().is_terminal();
        let done = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (control, sigint, done) =
                (Arc::clone(&control), Arc::clone(&sigint), Arc::clone(&done));
            let names: Vec<String> = job.phases.iter().map(|p| p.name.clone()).collect();
            std::thread::spawn(move || watch(&control, &sigint, &done, show_progress, &names))
        };

        // Device timeline: the devices under the target, every layer.
        let sampler = if self.monitor {
            let at = job.target.files[0].path.clone();
            match storlab_monitor::Sampler::for_path(
                &at,
                storlab_monitor::Layer::All,
                self.monitor_interval,
            ) {
                Ok(s) => Some(s.spawn()),
                Err(e) => {
                    warnings.push(format!(
                        "--monitor: cannot sample the devices under {}: {e}",
                        at.display()
                    ));
                    None
                }
            }
        } else {
            None
        };

        // Save as we go: the run header now, each phase as it finishes, so a
        // crash or Ctrl-C later loses nothing already measured.
        let tags = self.record.tag_map()?;
        let store = if self.no_save {
            None
        } else {
            Some(self.db.open()?)
        };
        let header = BenchReport {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "storlab".into(),
                version: STORLAB_VERSION.into(),
            },
            command_line: command_line.clone(),
            started_at: started_at.clone(),
            finished_at: String::new(),
            interrupted: false,
            stop_reason: None,
            host: job.host.clone(),
            target: job.target.info.clone(),
            phases: Vec::new(),
            warnings: warnings.clone(),
            monitor: None,
        };
        let run_id = match &store {
            Some(st) => Some(st.begin_run("bench", &header, &tags, self.record.note())?),
            None => None,
        };
        let mut save_errors = Vec::new();
        let outcome = storlab_bench::run(&job, &control, |phase| {
            if let (Some(st), Some(id)) = (&store, run_id)
                && let Err(e) = st.add_phase(id, phase)
            {
                save_errors.push(format!(
                    "could not save phase {} to {}: {e}",
                    phase.params.name,
                    self.db.db.display()
                ));
            }
        });
        warnings.extend(save_errors);
        let monitor = sampler.and_then(|h| match h.stop() {
            Ok(t) => Some(t),
            Err(e) => {
                warnings.push(format!("--monitor: sampling failed: {e}"));
                None
            }
        });
        done.store(true, Ordering::SeqCst);
        let _ = watcher.join();

        // Remove scratch files (also after Ctrl-C or a full disk) unless asked to keep them.
        let keep = self.keep && outcome.stop_reason.is_none();
        if !keep {
            job.target.cleanup();
        }
        let mut target_info = job.target.info.clone();
        target_info.kept = keep && target_info.created_by_storlab;
        let interrupted = outcome.stop_reason.is_some();
        warnings.extend(outcome.warnings.iter().cloned());
        let mut report = BenchReport {
            finished_at: now_rfc3339(),
            interrupted,
            stop_reason: outcome.stop_reason.clone(),
            target: target_info,
            phases: outcome.phases,
            warnings,
            monitor,
            ..header
        };
        let mut saved = None;
        if let (Some(st), Some(id)) = (&store, run_id) {
            match st.finish_run(id, &report) {
                Ok(()) => saved = Some(id),
                Err(e) => report.warnings.push(format!(
                    "could not save the run to {}: {e}",
                    self.db.db.display()
                )),
            }
        }

        let json = serde_json::to_string_pretty(&report).context("cannot serialise the results")?;
        if let Some(path) = &self.json_out {
            std::fs::write(path, format!("{json}\n"))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        match self.output_format {
            OutputFormat::Json => crate::output::print(&format!("{json}\n"))?,
            OutputFormat::Table => {
                let mut text = render_table(&report);
                if let Some(id) = saved {
                    text.push_str(&format!(
                        "Saved as run {id} in {} (storlab show {id}).\n",
                        self.db.db.display()
                    ));
                }
                crate::output::print(&text)?
            }
        }
        for w in &report.warnings {
            eprintln!("storlab: warning: {w}");
        }
        if let Some(reason) = &report.stop_reason {
            eprintln!("storlab: stopped early: {reason}");
        }
        let mismatches = report.verify_mismatches();
        if mismatches > 0 {
            eprintln!("storlab: verify: {mismatches} block(s) failed verification");
            return Ok(Outcome::Failed);
        }
        if sigint.load(Ordering::Relaxed) {
            return Ok(Outcome::Interrupted);
        }
        if interrupted {
            return Ok(Outcome::Error);
        }
        Ok(Outcome::Ok)
    }
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Turns Ctrl-C into a stop request and draws live progress on a terminal.
fn watch(control: &Control, sigint: &AtomicBool, done: &AtomicBool, show: bool, names: &[String]) {
    let mut last = (0u64, 0u64, std::time::Instant::now(), usize::MAX);
    let mut drawn = false;
    let mut tick = 0u32;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if sigint.load(Ordering::Relaxed) && !control.stop.load(Ordering::Relaxed) {
            control.request_stop("interrupted by Ctrl-C (SIGINT)");
        }
        tick += 1;
        if !show || tick % 5 != 0 {
            continue;
        }
        let s = control.snapshot();
        let now = std::time::Instant::now();
        if s.phase != last.3 || s.bytes < last.0 {
            // A new phase (counters were reset): take a baseline first, so the
            // first rate shown covers a real interval.
            last = (s.bytes, s.ops, now, s.phase);
            continue;
        }
        let dt = now.duration_since(last.2).as_secs_f64().max(1e-9);
        let (mbps, iops) = (
            (s.bytes.saturating_sub(last.0)) as f64 / dt / 1e6,
            (s.ops.saturating_sub(last.1)) as f64 / dt,
        );
        last = (s.bytes, s.ops, now, s.phase);
        let name = names.get(s.phase).map(String::as_str).unwrap_or("?");
        let line = match (s.elapsed_ns, s.planned_ns) {
            (None, _) => format!("[{}/{}] {name}: laying out files", s.phase + 1, names.len()),
            (Some(e), Some(p)) => format!(
                "[{}/{}] {name}: {mbps:>9.1} MB/s {iops:>10.0} IOPS   {:.0} s left",
                s.phase + 1,
                names.len(),
                (p.saturating_sub(e)) as f64 / 1e9
            ),
            (Some(e), None) => format!(
                "[{}/{}] {name}: {mbps:>9.1} MB/s {iops:>10.0} IOPS   {:.0} s",
                s.phase + 1,
                names.len(),
                e as f64 / 1e9
            ),
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        drawn = true;
    }
    if drawn {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
    }
}

use storlab_types::format_latency_ns as fmt_lat;

fn pattern(p: &PhaseParams) -> String {
    let bs = if p.bs.len() == 1 {
        format_bytes(p.bs[0].bs_bytes)
    } else {
        p.bs.iter()
            .map(|b| format!("{}/{}%", format_bytes(b.bs_bytes), b.weight))
            .collect::<Vec<_>>()
            .join(":")
    };
    let mix = if matches!(
        p.rw,
        storlab_types::RwMode::ReadWrite | storlab_types::RwMode::RandRw
    ) {
        format!(" {}% read", p.rwmixread)
    } else {
        String::new()
    };
    format!("{} {bs}{mix}", p.rw)
}

fn stat_row(
    table: &mut Table,
    label: String,
    pat: String,
    shape: String,
    d: &DirStats,
    cpu: Option<f64>,
) {
    let lat = d.lat_ns.unwrap_or_default();
    let has = d.lat_ns.is_some();
    let l = |v: f64| if has { fmt_lat(v) } else { "-".into() };
    table.add_row(vec![
        Cell::new(label),
        Cell::new(pat),
        Cell::new(shape),
        Cell::new(format!("{:.1}", d.bw_bytes_per_s / 1e6)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.1}", d.bw_bytes_per_s / 1048576.0))
            .set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.0}", d.iops)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.mean)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p50 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p99 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.p99_9 as f64)).set_alignment(CellAlignment::Right),
        Cell::new(l(lat.max as f64)).set_alignment(CellAlignment::Right),
        Cell::new(cpu.map(fmt_lat).unwrap_or_default()).set_alignment(CellAlignment::Right),
    ]);
}

/// The human summary: one row per phase and direction, per-job rows when
/// there are several jobs, then what the numbers mean and any doubts.
pub fn render_table(r: &BenchReport) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "phase", "pattern", "jobs×QD", "MB/s", "MiB/s", "IOPS", "lat mean", "p50", "p99", "p99.9",
        "max", "CPU/IO",
    ]);
    for ph in &r.phases {
        let p = &ph.params;
        let shape = format!("{}×{}", p.numjobs, p.iodepth);
        let name = if ph.interrupted {
            format!("{} (interrupted)", ph.name())
        } else {
            ph.name().to_string()
        };
        let both = p.rw.reads() && p.rw.writes();
        let cpu = Some(ph.cpu.cpu_ns_per_io);
        if both {
            stat_row(&mut t, name, pattern(p), shape.clone(), &ph.total, cpu);
            stat_row(
                &mut t,
                "  read".into(),
                String::new(),
                String::new(),
                &ph.read,
                None,
            );
            stat_row(
                &mut t,
                "  write".into(),
                String::new(),
                String::new(),
                &ph.write,
                None,
            );
        } else {
            let d = if p.rw.reads() { &ph.read } else { &ph.write };
            stat_row(&mut t, name, pattern(p), shape.clone(), d, cpu);
        }
        if ph.jobs.len() > 1 {
            for j in &ph.jobs {
                // A job's read + write over its own window. Its latency is
                // shown only for single-direction phases: the summaries of
                // two directions cannot be merged into one distribution.
                let d = match (p.rw.reads(), p.rw.writes()) {
                    (true, false) => j.read,
                    (false, true) => j.write,
                    _ => DirStats {
                        bytes: j.read.bytes + j.write.bytes,
                        ops: j.read.ops + j.write.ops,
                        bw_bytes_per_s: j.read.bw_bytes_per_s + j.write.bw_bytes_per_s,
                        iops: j.read.iops + j.write.iops,
                        lat_ns: None,
                    },
                };
                stat_row(
                    &mut t,
                    format!("  job {}", j.job),
                    String::new(),
                    String::new(),
                    &d,
                    None,
                );
            }
        }
    }
    let mut out = format!(
        "storlab bench on {} ({}{})\n{t}\n",
        r.target.path,
        r.target.filesystem.as_deref().unwrap_or(&r.target.kind),
        r.target
            .device
            .as_deref()
            .map(|d| format!(" on {d}"))
            .unwrap_or_default()
    );
    out.push_str("MB/s = 10^6 bytes/s, MiB/s = 2^20 bytes/s. Rates are the bytes of all jobs / one phase window (first submission to last completion).\n");
    out.push_str("Latency: per I/O, submission to completion, from histograms merged across jobs. CPU/IO: process CPU time (user+sys) per completed I/O.\n");
    for ph in &r.phases {
        let mut notes = Vec::new();
        if ph.fsync_in_window {
            notes.push(format!(
                "end fsync inside the timed window ({})",
                fmt_lat(ph.end_fsync_ns as f64)
            ));
        }
        let c = &ph.cache;
        match (c.mode.as_str(), c.verified) {
            ("direct", _) => notes.push("O_DIRECT".into()),
            (m, Some(v)) => notes.push(format!(
                "cache {m} via {}: {} ({}/{} pages resident)",
                c.method.as_deref().unwrap_or("-"),
                if v { "verified" } else { "NOT reached" },
                c.resident_pages_after.unwrap_or(0),
                c.total_pages.unwrap_or(0)
            )),
            (m, None) => notes.push(format!("cache {m}")),
        }
        if let Some(v) = &ph.verify {
            notes.push(format!(
                "verify: {} blocks checked, {} mismatches",
                v.blocks_checked, v.mismatches
            ));
            for m in &v.first_mismatches {
                notes.push(format!(
                    "  mismatch in {} at offset {}: {}",
                    m.file, m.offset_bytes, m.reason
                ));
            }
        }
        if !ph.errors.is_empty() {
            let e: Vec<String> = ph.errors.iter().map(|(k, v)| format!("{k}×{v}")).collect();
            notes.push(format!("errors: {}", e.join(", ")));
        }
        let secs = ph.elapsed_ns as f64 / 1e9;
        out.push_str(&format!(
            "{}: {:.2} s, {} moved, {}; {}\n",
            ph.name(),
            secs,
            format_bytes(ph.total.bytes),
            ph.params.engine.as_str(),
            notes.join("; ")
        ));
    }
    if r.target.created_by_storlab {
        out.push_str(if r.target.kept {
            "Data files kept.\n"
        } else {
            "Data files removed.\n"
        });
    }
    out
}

trait PhaseName {
    fn name(&self) -> &str;
}

impl PhaseName for PhaseResult {
    fn name(&self) -> &str {
        &self.params.name
    }
}
