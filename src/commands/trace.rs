//! `storlab trace`: what an application trace holds (`summary`) and a job
//! file derived from it (`to-job`), over `crates/trace`'s streaming readers
//! (fio iolog v2/v3, Darshan DXT, blktrace).

use super::outfmt::{OutputArgs, TableFormat};
use crate::output::{self, Document, Rendering, Reply};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use storlab_trace::{
    BlkEvent, DxtModule, OpenError, OpenOptions, Summary, TraceReader, derive_job,
};

#[derive(Args, Debug)]
pub struct TraceCommand {
    #[command(subcommand)]
    action: TraceAction,
}

#[derive(Subcommand, Debug)]
enum TraceAction {
    /// Print what a trace holds: ranks, files, bytes read and written, request sizes, sequential share, concurrency over time
    ///
    /// TRACE is a fio iolog (v2 or v3), a Darshan log with DXT data
    /// (.darshan) or a blktrace per-CPU file (NAME.blktrace.N, or NAME:
    /// all of NAME's per-CPU files are read). The trace is streamed; a
    /// truncated or corrupt one is refused with the file, the record (or
    /// line) and the reason (exit 2).
    Summary(SummaryArgs),
    /// Derive a storlab job file (sizes, read/write mix, sequential or random, processes) from a trace
    ///
    /// The job file is printed on standard output (`> app.toml`, then
    /// `storlab bench --job app.toml TARGET` or a sweep); it is checked as
    /// `bench --job` checks it before it is printed. It keeps the trace's
    /// mix, not its order or timing.
    ToJob(ToJobArgs),
}

#[derive(Args, Debug)]
struct TraceArgs {
    /// The trace file
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// Darshan: which DXT module to read (default posix when the log has it, else mpiio)
    #[arg(long, value_enum, value_name = "MODULE")]
    dxt_module: Option<DxtArg>,
    /// blktrace: the event that stands for a request: issue (D, what the device saw) or queue (Q, what was asked)
    #[arg(long, value_enum, default_value_t = BlkArg::Issue, value_name = "EVENT")]
    blk_event: BlkArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DxtArg {
    Posix,
    Mpiio,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BlkArg {
    Issue,
    Queue,
}

#[derive(Args, Debug)]
struct SummaryArgs {
    #[command(flatten)]
    trace: TraceArgs,
    #[command(flatten)]
    out: OutputArgs<TableFormat>,
}

#[derive(Args, Debug)]
struct ToJobArgs {
    #[command(flatten)]
    trace: TraceArgs,
}

impl TraceArgs {
    fn open(&self) -> anyhow::Result<TraceReader> {
        let opts = OpenOptions {
            dxt_module: self.dxt_module.map(|m| match m {
                DxtArg::Posix => DxtModule::Posix,
                DxtArg::Mpiio => DxtModule::Mpiio,
            }),
            blk_event: match self.blk_event {
                BlkArg::Issue => BlkEvent::Issue,
                BlkArg::Queue => BlkEvent::Queue,
            },
        };
        let mut opener = |p: &Path| {
            super::outfile::open_input(p, "trace").map_err(|e| OpenError::Refused(format!("{e:#}")))
        };
        Ok(TraceReader::open_with(&self.trace, &opts, &mut opener)?)
    }

    fn summary(&self) -> anyhow::Result<Summary> {
        Ok(Summary::of(self.open()?)?)
    }
}

impl TraceCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        match self.action {
            TraceAction::Summary(a) => {
                let s = a.trace.summary()?;
                Ok(Reply::doc(TraceSummary(s), a.out.rendering()))
            }
            TraceAction::ToJob(a) => {
                let s = a.trace.summary()?;
                let Some(job) = derive_job(&s) else {
                    anyhow::bail!(
                        "{}: the trace has no reads or writes, so there is no workload to derive",
                        a.trace.trace.display()
                    );
                };
                // The job file must be one `storlab bench --job` runs.
                let label = Path::new("derived job");
                storlab_bench::JobFile::parse(&job.toml, label)
                    .and_then(|f| {
                        f.phases(&job.toml, label, &Default::default(), &Default::default())
                    })
                    .with_context(|| {
                        format!(
                            "{}: the job derived from this trace is not one `storlab bench` runs \
                             (its sizes or process count are beyond bench's limits)",
                            a.trace.trace.display()
                        )
                    })?;
                Ok(Reply::doc(DerivedJob(job.toml), Rendering::Json))
            }
        }
    }
}

/// What a trace holds, as `trace summary` shows it.
struct TraceSummary(Summary);

impl Document for TraceSummary {
    fn human(&self) -> anyhow::Result<String> {
        Ok(summary_text(&self.0))
    }
    fn json(&self) -> anyhow::Result<String> {
        output::json_text(&self.0)
    }
}

/// The job file `trace to-job` derived: TOML for programs (`> app.toml`),
/// printed exactly as derived in every form.
struct DerivedJob(String);

impl Document for DerivedJob {
    fn human(&self) -> anyhow::Result<String> {
        Ok(self.0.clone())
    }
    fn json(&self) -> anyhow::Result<String> {
        Ok(self.0.clone())
    }
}

/// Bytes with an IEC unit, e.g. `12.5 MiB (13107200 B)`.
fn bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {} ({b} B)", units[u])
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

fn summary_text(s: &Summary) -> String {
    let mut out = String::new();
    out += &format!("trace     {}\n", s.trace);
    out += &format!("format    {}\n", s.format.describe());
    out += &format!(
        "records   {}  ({})\n",
        s.records,
        s.ops
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let declared = s
        .declared_ranks
        .map(|n| format!(" of {n} declared"))
        .unwrap_or_default();
    out += &format!("ranks     {}{declared}\n", s.ranks.len());
    out += &format!("files     {}\n", s.files.len());
    out += &format!("read      {}\n", bytes(s.bytes_read));
    out += &format!("written   {}\n", bytes(s.bytes_written));
    out += &format!("duration  {}\n", ms(s.duration_ns));
    out += &format!(
        "access    {:.1} % sequential ({} sequential, {} random reads and writes)\n",
        s.sequential_share * 100.0,
        s.sequential_ops,
        s.random_ops
    );
    out += "\nper rank\n";
    let mut t = super::common::list_table();
    t.set_header([
        "rank",
        "reads",
        "writes",
        "bytes read",
        "bytes written",
        "other ops",
    ]);
    for r in &s.ranks {
        t.add_row([
            r.rank.to_string(),
            r.reads.to_string(),
            r.writes.to_string(),
            r.bytes_read.to_string(),
            r.bytes_written.to_string(),
            r.other_ops.to_string(),
        ]);
    }
    out += &super::common::trim_table(&t.to_string());
    out += "\nfiles (most bytes first, first 20)\n";
    let mut t = super::common::list_table();
    t.set_header([
        "file",
        "ranks",
        "reads",
        "writes",
        "bytes read",
        "bytes written",
        "extent",
    ]);
    for f in s.files.iter().take(20) {
        t.add_row([
            storlab_types::text::escape_controls(&f.name).into_owned(),
            f.ranks.to_string(),
            f.reads.to_string(),
            f.writes.to_string(),
            f.bytes_read.to_string(),
            f.bytes_written.to_string(),
            f.extent_bytes.to_string(),
        ]);
    }
    out += &super::common::trim_table(&t.to_string());
    out += "\nrequest sizes\n";
    let mut t = super::common::list_table();
    t.set_header(["size (bytes)", "reads", "writes"]);
    for b in &s.size_histogram {
        t.add_row([
            format!("{}..{}", b.min_bytes, b.max_bytes),
            b.reads.to_string(),
            b.writes.to_string(),
        ]);
    }
    out += &super::common::trim_table(&t.to_string());
    if !s.concurrency.is_empty() {
        let w = s.concurrency[0].end_ns - s.concurrency[0].start_ns;
        out += &format!("\nconcurrency over time (bins of {})\n", ms(w));
        let mut t = super::common::list_table();
        t.set_header(["from", "ops started", "mean in flight"]);
        // Only the bins with activity (the JSON has them all).
        for b in s
            .concurrency
            .iter()
            .filter(|b| b.ops_started > 0 || b.mean_in_flight.is_some_and(|m| m > 0.0))
        {
            t.add_row([
                ms(b.start_ns),
                b.ops_started.to_string(),
                b.mean_in_flight
                    .map_or("-".to_string(), |m| format!("{m:.2}")),
            ]);
        }
        out += &super::common::trim_table(&t.to_string());
        if !s.completion_times {
            out += "(the trace records no completion times, so operations in flight are unknown)\n";
        }
    }
    out
}
