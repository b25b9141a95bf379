//! `storlab sweep`: run a bench workload at every point of a parameter
//! sweep (`--vary bs=4k..4m:x2 --vary numjobs=1,2,4`), store each point as
//! its own run tagged with the sweep's id and parameters, print one table
//! and draw the chart.
//!
//! [`SweepCommand::execute`] reads as its steps: the points (from `--vary`
//! and the profile's sweep), the points already stored (`--resume`), each
//! point planned into phases (a point that cannot be planned is recorded as
//! failed), one target prepared for the largest point (so files are laid
//! out once and extended only when a point needs more), the points run in
//! order (a point that fails is recorded and the sweep goes on; a signal
//! stops it, keeping what was measured), then the table, the time spent
//! outside the measured windows and the chart.
//! `storlab_print::sweep` renders the summary; `chart` builds the chart from the points.

pub(crate) mod chart;

use crate::Outcome;
use crate::commands::outfile::Permit;
use crate::commands::run::{self, Live, OutputFormat, RunArgs, Sink, write_fallback};
use crate::commands::signals::Signals;
use crate::commands::workload::WorkloadArgs;
use crate::commands::workload::find_profile;
use crate::output::{Rendered, Reply};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::jobspec::Job as PlannedJob;
use storlab_bench::profiles::Profile;
use storlab_bench::sweeper;
use storlab_bench::sweeper::resume::{self, NoSuchSweep, first_resumable};
use storlab_bench::sweeper::{
    PointInfo, PointSink, Progress, Refused, Saved, StoreError, SweepEvent, SweepRun, new_sweep_id,
    plan_points, point_tags, reserved_tag, sweep_line,
};
pub use storlab_bench::sweeper::{PointResult, SweepTotals};
use storlab_bench::{Control, SafetyOptions, SweepPoint, Vary, expand_sweep};
use storlab_store::{RunFilter, RunStatus, RunSummary, Store};
use storlab_types::RunKind;
use storlab_types::{BenchReport, PhaseResult};

const SWEEP_HELP: &str = "\
Each --vary names a bench option (as in `storlab bench --help`, with its
job-file key, flag, fio spelling or another name of the parameter
vocabulary, e.g. qd for iodepth) and its values: a list (bs=4k,64k,1m), a
multiplying range (bs=4k..4m:x2, iodepth=1..256:x2), an adding one
(numjobs=1..8:+1), N evenly spaced points (iodepth=1..64/3), or a list
mixing them (bs=512,4k..64k:x2); TO is included when the steps land on it
(docs/parameters.md). Several --vary run every combination (the first option
changes slowest); --zip pairs the lists value by value instead. Sizes may be
relative to this machine's RAM: --size 2xRAM, --vary size=0.25xRAM,2xRAM.
With --job or --profile every point runs all the job's phases; without
them (and without --rw) each point is one phase of sequential reads.

Every point is saved as its own run, tagged sweep=ID, sweep_point=N,
sweep_params=bs=4k,numjobs=2 (storlab runs --tag sweep=ID lists them). A
point that fails is recorded with its error and the sweep goes on;
--resume ID runs only the points not yet stored (given alone, with the
options the sweep was first run with). Files are laid out once
for the whole sweep and reused (extended when a point needs more).

--chart FILE.svg|FILE.png draws MB/s against the first varied option, one
line per value of the second; varying size then bs on reads draws the
IOzone-style heat map (file size x record size) with RAM marked.";

/// `storlab sweep [TARGET] --vary OPTION=VALUES ...`
#[derive(Args, Debug)]
#[command(after_long_help = SWEEP_HELP)]
pub struct SweepCommand {
    /// Directory (storlab makes its own subdirectory), new file path, or block
    /// device [default: ./storlab-scratch]
    pub target: Option<PathBuf>,
    /// An option and its values: bs=4k,64k,1m or bs=4k..4m:x2 or numjobs=1..8:+1 or iodepth=1..64/3
    /// (repeatable)
    #[arg(long = "vary", value_name = "OPTION=VALUES")]
    pub vary: Vec<String>,
    /// Pair the --vary lists value by value instead of running every combination
    #[arg(long)]
    pub zip: bool,
    /// TOML job file: every point runs all its phases
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    pub job: Option<PathBuf>,
    /// A shipped or user profile (storlab profiles): its phases, and its sweep unless --vary is given
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Run only the points of sweep SWEEP-ID not yet stored (alone: with the options it was run with)
    #[arg(long, value_name = "SWEEP-ID")]
    pub resume: Option<String>,
    /// Draw the sweep: FILE.svg or FILE.png
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

impl SweepCommand {
    pub fn execute(self) -> Result<Reply> {
        if let Some(refused) = self.workload.refusal_in(Some("sweep")) {
            return refused.map(Reply::done);
        }
        // Under mpirun/srun every process would run the whole sweep on the
        // same storage at once: N sweeps disturbing each other's numbers.
        if let Some(n) = run::launcher_size().filter(|&n| n > 1) {
            // The other ranks end quietly with 0 and leave the exit code to
            // rank 0: one of them exiting non-zero first would let mpirun
            // kill rank 0 before its message is out.
            if run::launcher_rank().unwrap_or(0) != 0 {
                return Ok(Reply::done(Outcome::Ok));
            }
            return Err(Refused::UnderLauncher(n).into());
        }
        if self.run.monitor {
            return Err(Refused::Monitor.into());
        }
        let json_out = run::check_paths_as(
            self.target.as_deref(),
            &self.run,
            crate::commands::common::OutputKind::SweepJson,
        )?;
        let chart_out = match &self.chart {
            Some(path) => Some(crate::commands::outfile::check_chart_path(
                path,
                &self.run.db.db,
                self.run.force,
            )?),
            None => None,
        };
        if self.resume.is_some() && self.run.no_save {
            return Err(Refused::ResumeUnsaved.into());
        }
        if let Some(id) = &self.resume
            && self.vary.is_empty()
            && self.profile.is_none()
            && self.job.is_none()
        {
            // `storlab sweep --resume ID` alone: the sweep as first typed.
            return self.resumed_as_stored(id)?.execute();
        }
        let profile = self.profile.as_deref().map(find_profile).transpose()?;
        // `--vary`, then the profile's sweep for options no flag sets.
        let spec = self.workload.spec()?;
        let (varies, zip) = sweeper::varies(&self.vary, self.zip, profile.as_ref(), spec)?;
        let points = expand_sweep(&varies, zip)?;
        if varies.is_empty() {
            return Err(Refused::Nothing.into());
        }
        let job_text = self.job_text(profile.as_ref())?;
        let user_tags = self.run.record.tag_map()?;
        if let Some(k) = reserved_tag(&user_tags) {
            return Err(Refused::ReservedTag(k).into());
        }
        let store = if self.run.no_save {
            None
        } else {
            Some(self.run.db.open()?)
        };
        let sweep_id = self.resume.clone().unwrap_or_else(new_sweep_id);
        let stored = match (&self.resume, &store) {
            (Some(id), Some(st)) => stored_points(st, id, &self.run.db.db)?,
            _ => BTreeMap::new(),
        };
        // Plan every point not yet stored (a point that cannot be planned
        // fails alone): the job file (or flags), the workload flags, then
        // the point's values on top; anyhow, so an error shows its causes.
        let job = job_text.as_ref().map(|(t, p)| (t.as_str(), p.as_path()));
        let target = self.target.as_deref();
        let plan = |p: &SweepPoint| -> Result<PlannedJob> {
            Ok(sweeper::plan_point(self.workload.spec()?, p, job, target)?)
        };
        let (mut results, todo) = plan_points(points, &stored, plan);
        drop(store);
        let totals = self.run_points(sweep_id, user_tags, &mut results, todo)?;
        self.finish(&results, &varies, totals, (json_out, chart_out))
    }

    /// Run the planned points through the sweeper, with the store, the
    /// live line and the signals of the front end.
    fn run_points(
        &self,
        sweep_id: String,
        tags: BTreeMap<String, String>,
        results: &mut [PointResult],
        todo: Vec<(usize, PlannedJob)>,
    ) -> Result<SweepTotals> {
        let host_label = if todo.iter().any(|(_, p)| !p.phases.is_empty()) {
            crate::commands::config::get()?.host.clone()
        } else {
            None
        };
        let run = SweepRun {
            sweep_id: sweep_id.clone(),
            command_line: storlab_types::record::command_line(),
            target: self.target.clone(),
            safety: SafetyOptions {
                allow_destroy: self.run.allow_destroy,
            },
            keep: self.run.keep,
            host_label,
        };
        let mut sink = StoreSink {
            args: &self.run,
            tags,
            sweep_id: sweep_id.clone(),
            sink: None,
        };
        // Signals are watched before any scratch file exists.
        let signals = Signals::install()?;
        let mut words = Words {
            sweep_id,
            quiet: self.run.quiet,
            signals: signals.clone(),
            live: None,
        };
        let stop = || signals.received().is_some();
        Ok(storlab_bench::sweeper::run_points(
            &run, results, todo, &mut sink, &mut words, &stop,
        )?)
    }

    /// The sweep `id` as its first stored point's command line gave it (the
    /// same TARGET, --vary, workload flags, tags), resumed, with this
    /// command's output options and database.
    fn resumed_as_stored(&self, id: &str) -> Result<SweepCommand> {
        #[derive(clap::Parser, Debug)]
        #[command(name = "storlab sweep")]
        struct Stored {
            #[command(flatten)]
            s: SweepCommand,
        }
        use clap::Parser;
        let store = self.run.db.open_existing()?;
        let runs = sweep_runs(&store, id, &self.run.db.db)?;
        let parse = |args: Vec<String>| {
            let words = std::iter::once("sweep".to_string()).chain(args);
            let cmd = Stored::try_parse_from(words).ok()?.s;
            (!cmd.vary.is_empty() || cmd.profile.is_some() || cmd.job.is_some()).then_some(cmd)
        };
        let line_of = |run| Ok::<_, anyhow::Error>(store.load(run)?.report.command_line);
        let ids = runs.iter().map(|r| r.id);
        let Some((note, mut cmd)) = first_resumable(id, ids, line_of, parse)? else {
            bail!(
                "--resume {id}: no stored point of sweep {id} in {} says how it was run; give its options again (--vary ...)",
                self.run.db.db.display()
            )
        };
        cmd.resume = Some(id.to_string());
        cmd.run.db = self.run.db.clone();
        cmd.run.quiet |= self.run.quiet;
        if self.run.out.format() != OutputFormat::Table {
            cmd.run.out = self.run.out;
        }
        if self.run.json_out.is_some() {
            cmd.run.json_out = self.run.json_out.clone();
        }
        if self.chart.is_some() {
            cmd.chart = self.chart.clone();
        }
        if !self.run.quiet {
            eprintln!("storlab: {note}");
        }
        Ok(cmd)
    }

    /// The job file's text and path, read once (a profile's, or --job's).
    fn job_text(&self, profile: Option<&Profile>) -> Result<Option<(String, PathBuf)>> {
        Ok(match (&self.job, profile) {
            (Some(path), _) => Some((
                crate::commands::common::read_input(path, "job file")?,
                path.clone(),
            )),
            (None, Some(p)) => Some((p.job_text.clone(), p.job_path())),
            (None, None) => None,
        })
    }

    /// Write the chart and JSON file; the table or JSON document and the
    /// exit code go back to `main`, which prints them.
    fn finish(
        &self,
        results: &[PointResult],
        varies: &[Vary],
        totals: SweepTotals,
        (json_out, chart_out): (Option<Permit>, Option<Permit>),
    ) -> Result<Reply> {
        let keys: Vec<&str> = varies.iter().map(|v| v.key).collect();
        let mut chart_err = None;
        if let Some(permit) = &chart_out
            && let Err(e) = chart::write(permit, results, &keys, &totals)
        {
            chart_err = Some(format!("{e:#}"));
        }
        let doc = storlab_bench::sweeper::json_document(
            results,
            &totals,
            crate::commands::outfile::SWEEP_DOCUMENT,
        );
        let json = crate::output::json_text(&doc).context("cannot serialise the sweep")?;
        if let Some(permit) = &json_out {
            permit.write(json.as_bytes())?;
        }
        let chart = self.chart.as_deref().filter(|_| chart_err.is_none());
        let table = storlab_print::sweep::render_with_chart(results, &keys, &totals, chart);
        let mut reply = Reply::doc(Rendered::new(table, json), self.run.out.rendering());
        reply.outcome = if let Some(e) = chart_err {
            eprintln!("storlab: error: {e}");
            Outcome::Error
        } else if totals.interrupted {
            eprintln!(
                "storlab: sweep {} stopped early; storlab sweep --resume {} runs the rest",
                totals.sweep_id, totals.sweep_id
            );
            Outcome::Interrupted
        } else if totals.failed > 0 {
            Outcome::Failed
        } else {
            Outcome::Ok
        };
        Ok(reply)
    }
}

/// The runs tagged `sweep=ID`; none is an error.
fn sweep_runs(store: &Store, id: &str, db: &Path) -> Result<Vec<RunSummary>> {
    let filter = RunFilter {
        tags: vec![("sweep".into(), id.into())],
        ..Default::default()
    };
    let runs = store.list(&filter)?;
    if runs.is_empty() {
        let (id, db) = (id.to_string(), db.to_path_buf());
        return Err(NoSuchSweep { id, db }.into());
    }
    Ok(runs)
}

/// The points of sweep `id` already stored in full: params label → (run, report).
fn stored_points(
    store: &Store,
    id: &str,
    db: &Path,
) -> Result<BTreeMap<String, (i64, BenchReport)>> {
    let runs = sweep_runs(store, id, db)?;
    let runs = runs.iter().map(|r| resume::StoredRun {
        id: r.id,
        finished: r.status == RunStatus::Finished,
        tags: &r.tags,
    });
    resume::finished_points(runs, |run| Ok(store.load(run)?.report))
}

/// The sweep's store: each point's run in the database (`Sink`), and a
/// record the database refused in a fallback file, named loudly.
struct StoreSink<'a> {
    args: &'a RunArgs,
    tags: BTreeMap<String, String>,
    sweep_id: String,
    sink: Option<Sink>,
}

impl PointSink for StoreSink<'_> {
    fn begin(&mut self, point: &SweepPoint, header: &BenchReport) -> Result<(), StoreError> {
        let words = |e: anyhow::Error| StoreError(format!("{e:#}"));
        let store = if self.args.no_save {
            None
        } else {
            Some(self.args.db.open().map_err(words)?)
        };
        let mut sink = Sink::new(
            store,
            &self.args.db.db,
            point_tags(&self.tags, &self.sweep_id, point),
            self.args.record.note().map(String::from),
        );
        let begun = sink.begin(RunKind::Bench, header).map_err(words);
        self.sink = Some(sink);
        begun
    }

    fn phase(&mut self, phase: &PhaseResult) {
        if let Some(sink) = &mut self.sink {
            sink.phase(phase);
        }
    }

    fn finish(&mut self, report: &BenchReport) -> Saved {
        let Some(mut sink) = self.sink.take() else {
            return Saved::default();
        };
        let run_id = sink.finish(report);
        Saved {
            run_id,
            failures: std::mem::take(&mut sink.failures),
        }
    }

    fn keep_unsaved(&mut self, point: &SweepPoint, report: &BenchReport) {
        let written = serde_json::to_string_pretty(report)
            .map_err(anyhow::Error::from)
            .and_then(|json| write_fallback(&json));
        match written {
            Ok(p) => eprintln!(
                "storlab: error: point {} could not be saved; its record is in {}",
                point.label(),
                p.display()
            ),
            Err(e) => eprintln!(
                "storlab: error: point {} could not be saved: {e:#}",
                point.label()
            ),
        }
    }
}

/// The sweep's words on stderr and each point's live line (`Live`, which
/// also turns a signal into a stop of the point running).
struct Words {
    sweep_id: String,
    quiet: bool,
    signals: Signals,
    live: Option<Live>,
}

impl Progress for Words {
    fn event(&mut self, event: SweepEvent<'_>) {
        match event {
            SweepEvent::Warning(w) => crate::output::warn(w),
            e if self.quiet && e.is_progress() => {}
            e => {
                if let Some(line) = sweep_line(&e, &self.sweep_id) {
                    eprintln!("storlab: {line}");
                }
            }
        }
    }

    fn point_running(&mut self, p: &PointInfo, phases: &[String], control: &Arc<Control>) {
        let names = phases.iter().map(|name| p.phase_line(name)).collect();
        self.live = Some(Live::start(
            Arc::clone(control),
            self.signals.clone(),
            self.quiet,
            names,
        ));
    }

    fn point_done(&mut self) {
        if let Some(live) = self.live.take() {
            live.stop();
        }
    }
}
