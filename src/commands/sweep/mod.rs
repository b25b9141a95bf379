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
use crate::output::{Document, Reply};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::jobspec::Job as PlannedJob;
use storlab_bench::profiles::Profile;
use storlab_bench::sweeper::{
    PointInfo, PointSink, Progress, Saved, StoreError, SweepEvent, SweepRun, fmt_secs,
    new_sweep_id, plan_points, point_tags, reserved_tag, resume_words,
};
pub use storlab_bench::sweeper::{PointResult, SweepTotals};
use storlab_bench::{Control, SafetyOptions, SweepPoint, Vary, expand_sweep};
use storlab_store::{RunFilter, RunStatus, Store};
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
            bail!(
                "storlab sweep was started as {n} processes by an MPI launcher: each would run the whole \
                 sweep on the same storage at once; run the sweep without mpirun/srun, or measure \
                 many clients with `mpirun -np {n} storlab bench ... --clients 1,2,4` (one run per client count)"
            );
        }
        if self.run.monitor {
            bail!(
                "--monitor is not available for sweeps: run `storlab monitor` beside the sweep instead"
            );
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
            bail!("--resume reads the stored points: drop --no-save");
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
        let (varies, zip) = self.varies(profile.as_ref())?;
        let points = expand_sweep(&varies, zip)?;
        if varies.is_empty() {
            bail!(
                "nothing to sweep: add --vary OPTION=VALUES (e.g. --vary bs=4k,64k,1m) or a --profile with a sweep"
            );
        }
        let job_text = self.job_text(profile.as_ref())?;
        let user_tags = self.run.record.tag_map()?;
        if let Some(k) = reserved_tag(&user_tags) {
            bail!("--tag {k}=...: {k} is set by the sweep itself; use another key");
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
        // Plan every point not yet stored; a point that cannot be planned fails alone.
        let (mut results, todo) =
            plan_points(points, &stored, |p| self.plan_point(p, job_text.as_ref()));
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
        let filter = RunFilter {
            tags: vec![("sweep".into(), id.into())],
            ..Default::default()
        };
        let runs = store.list(&filter)?;
        if runs.is_empty() {
            bail!(
                "--resume {id}: no runs tagged sweep={id} in {} (the sweep id is printed at its start; storlab runs --tag sweep=ID)",
                self.run.db.db.display()
            );
        }
        for r in runs {
            let line = store.load(r.id)?.report.command_line;
            let Some(args) = resume_words(&line) else {
                continue;
            };
            let Ok(stored) =
                Stored::try_parse_from(std::iter::once("sweep".to_string()).chain(args))
            else {
                continue;
            };
            let mut cmd = stored.s;
            if cmd.vary.is_empty() && cmd.profile.is_none() && cmd.job.is_none() {
                continue;
            }
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
                eprintln!(
                    "storlab: resuming sweep {id} as run {}: storlab {}",
                    r.id,
                    line[line.iter().position(|a| a == "sweep").unwrap_or(0)..].join(" ")
                );
            }
            return Ok(cmd);
        }
        bail!(
            "--resume {id}: no stored point of sweep {id} in {} says how it was run; give its options again (--vary ...)",
            self.run.db.db.display()
        )
    }

    /// The options varied: `--vary`, then the profile's sweep for options
    /// neither `--vary` nor a workload flag sets.
    fn varies(&self, profile: Option<&Profile>) -> Result<(Vec<Vary>, bool)> {
        Ok(storlab_bench::sweeper::varies(
            &self.vary,
            self.zip,
            profile,
            self.workload.spec()?,
        )?)
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

    /// A point's phases: the job file (or flags), the workload flags, then
    /// the point's values on top (anyhow: its causes in its message).
    fn plan_point(
        &self,
        point: &SweepPoint,
        job: Option<&(String, PathBuf)>,
    ) -> Result<PlannedJob> {
        let job = job.map(|(t, p)| (t.as_str(), p.as_path()));
        Ok(storlab_bench::sweeper::plan_point(
            self.workload.spec()?,
            point,
            job,
            self.target.as_deref(),
        )?)
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
        let mut reply = Reply::doc(Swept { table, json }, self.run.out.rendering());
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

/// The sweep's result: the table (with the chart's line) or the sweeper's
/// JSON document.
struct Swept {
    table: String,
    json: String,
}

impl Document for Swept {
    fn human(&self) -> Result<String> {
        Ok(self.table.clone())
    }
    fn json(&self) -> Result<String> {
        Ok(self.json.clone())
    }
}

/// The points of sweep `id` already stored in full: params label → (run, report).
fn stored_points(
    store: &Store,
    id: &str,
    db: &Path,
) -> Result<BTreeMap<String, (i64, BenchReport)>> {
    let filter = RunFilter {
        tags: vec![("sweep".into(), id.into())],
        ..Default::default()
    };
    let runs = store.list(&filter)?;
    if runs.is_empty() {
        bail!(
            "--resume {id}: no runs tagged sweep={id} in {} (the sweep id is printed at its start; storlab runs --tag sweep=ID)",
            db.display()
        );
    }
    let mut out = BTreeMap::new();
    for r in runs {
        if r.status != RunStatus::Finished {
            continue;
        }
        let Some(label) = r.tags.get("sweep_params") else {
            continue;
        };
        let run = store.load(r.id)?;
        if run.report.interrupted || run.report.phases.is_empty() {
            continue;
        }
        out.insert(label.clone(), (r.id, run.report));
    }
    Ok(out)
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
        let begun = sink.begin("bench", header).map_err(words);
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
            failures: sink.failures,
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
            SweepEvent::Started {
                sweep_id,
                points,
                to_run,
            } if !self.quiet => {
                eprintln!("storlab: sweep {sweep_id}: {points} points, {to_run} to run")
            }
            SweepEvent::Warning(w) => crate::output::warn(w),
            SweepEvent::PointStarting(p) if !self.quiet => eprintln!(
                "storlab: sweep {}: point {}/{} ({} of {} to run) {}{}",
                self.sweep_id,
                p.index + 1,
                p.points,
                p.nth + 1,
                p.to_run,
                p.label,
                p.left_s
                    .map(|s| format!(", about {} left", fmt_secs(s)))
                    .unwrap_or_default()
            ),
            SweepEvent::PointFailed { label, error } if !self.quiet => {
                eprintln!("storlab: sweep point {label} failed: {error}; going on")
            }
            SweepEvent::NotRecorded { label, error } => {
                eprintln!("storlab: error: cannot record failed point {label}: {error}")
            }
            SweepEvent::SaveFailed(f) => eprintln!("storlab: error: {f}"),
            _ => {}
        }
    }

    fn point_running(&mut self, p: &PointInfo, phases: &[String], control: &Arc<Control>) {
        let names = phases
            .iter()
            .map(|name| {
                format!(
                    "point {}/{} {} {name}{}",
                    p.index + 1,
                    p.points,
                    p.label,
                    p.left_s
                        .map(|s| format!(" (sweep: ~{} left)", fmt_secs(s)))
                        .unwrap_or_default()
                )
            })
            .collect();
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
