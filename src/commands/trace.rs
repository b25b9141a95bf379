//! `storlab trace`: what an application trace holds (`summary`) and a job
//! file derived from it (`to-job`), over `crates/trace`'s streaming readers
//! (fio iolog v2/v3, Darshan DXT, blktrace).

use super::outfmt::{OutputArgs, TableFormat};
use crate::output::{Rendered, Rendering, Reply, Shown};
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
                let doc = Shown::new(s, storlab_trace::render_text);
                Ok(Reply::doc(doc, a.out.rendering()))
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
                // TOML for programs (`> app.toml`), printed exactly as derived.
                Ok(Reply::doc(Rendered::same(job.toml), Rendering::Json))
            }
        }
    }
}
