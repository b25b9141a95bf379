//! `storlab campaign FILE.toml`: measure a matrix of configurations that
//! must be built and torn down between tests, as one resumable command.
//! The file format, the state, the child processes, the run of the cells
//! (through the sweeper) and the comparison are the `storlab-campaign`
//! crate's (its docs say how a campaign runs); this is the flags, the run
//! words checked by the CLI's own parser, the confirmation, the progress
//! lines on stderr, and the result document (the plan of `--dry-run` or
//! the comparison, as text or `--json`) that `main` prints.

use crate::Outcome;
use crate::commands::common::{DbArgs, OutputKind, check_output_path};
use crate::commands::outfmt::{OutputArgs, TableFormat};
use crate::output::{self, Rendered, Rendering, Reply};
use anyhow::{Context, Result, bail};
use clap::{Args, Parser};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::Control;
use storlab_bench::sweeper::{PointInfo, Progress, SweepEvent};
use storlab_campaign::report::{PlanDoc, describe};
use storlab_campaign::run::{self, CellEvent, Run, Summary, Tell};

/// `storlab campaign FILE.toml`
#[derive(Args, Debug)]
#[command(after_long_help = storlab_campaign::HELP)]
#[command(mut_arg("json", |a| a.help(
    "Shorthand for --output-format json (the planned cells with --dry-run, else every cell's \
     status, runs and log, and the comparison rows)"
)))]
pub struct CampaignCommand {
    /// The campaign file (cells, or a [matrix] and a [template]); not needed with --resume
    #[arg(value_name = "FILE", required_unless_present = "resume")]
    pub file: Option<PathBuf>,
    /// Print every cell with its expanded commands and stop
    #[arg(long)]
    pub dry_run: bool,
    /// Run the setup commands without asking (for scripts): they may destroy data
    #[arg(long)]
    pub yes: bool,
    /// Continue the campaign with this id after its last finished cell
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Also write the HTML report of every run of the campaign
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Overwrite the --report file even though it is not a storlab HTML report (never an SQLite
    /// database)
    #[arg(long)]
    pub force: bool,
    /// Where campaigns keep their logs and state
    #[arg(long, value_name = "DIR", default_value = "storlab-campaigns")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub out: OutputArgs<TableFormat>,
    #[command(flatten)]
    pub db: DbArgs,
}

impl CampaignCommand {
    pub fn execute(self) -> Result<Reply> {
        if let Some(path) = self.report.as_ref().filter(|_| !self.dry_run) {
            // Never the database, a device or a file storlab did not write
            // (without --force): refused before the campaign's directory is
            // made and any setup command runs, not after the last cell.
            check_output_path(path, &self.db.db, self.force, OutputKind::HtmlReport)?;
        }
        let camp = self.load()?;
        let how = self.out.rendering();
        if self.dry_run {
            // Every cell with its expanded commands.
            let text = describe(&camp.id, &camp.campaign);
            let json = output::json_text(&PlanDoc::new(&camp.id, &camp.dir, &camp.campaign))?;
            return Ok(Reply::doc(Rendered::new(text, json), how));
        }
        // Setup commands may destroy data: asked once for the whole campaign.
        let stdin = std::io::stdin();
        let answer = stdin.is_terminal().then(|| stdin.lock());
        run::confirm(&camp.campaign, self.yes, answer, &mut std::io::stderr())?;
        let store = self.db.open()?;
        let signals = crate::commands::signals::Signals::install()?;
        let words = || Words(&camp.dir.path);
        let ran = camp.cells(&store, &|| signals.requested(), &mut words(), &mut words())?;
        if ran.interrupted {
            let id = &camp.id;
            eprintln!("storlab: campaign stopped; continue with: storlab campaign --resume {id}");
            // --json still prints the document: which cells ended how.
            if how != Rendering::Json {
                return Ok(Reply::done(Outcome::Interrupted));
            }
        }
        let sum = Summary::gather(&store, camp, ran, self.report.clone());
        for n in &sum.notes {
            eprintln!("storlab: note: {n}");
        }
        if let Some(path) = sum.report.as_ref().filter(|_| !sum.stopped) {
            // Under the same rules as before the first cell, checked again
            // now that the file is written.
            check_output_path(path, &self.db.db, self.force, OutputKind::HtmlReport)?
                .write(sum.html().as_bytes())?;
        }
        let outcome = match (sum.stopped, sum.failed().is_empty()) {
            (true, _) => Outcome::Interrupted,
            (false, true) => Outcome::Ok,
            (false, false) => Outcome::Failed,
        };
        let mut reply = Reply::doc(ended(&sum)?, how);
        reply.outcome = outcome;
        Ok(reply)
    }

    /// The campaign to run: a new one from the file (its directory made, the
    /// expanded campaign saved) or the saved one of `--resume`.
    fn load(&self) -> Result<Run> {
        let db = &self.db.db;
        if let Some(id) = &self.resume {
            return Ok(run::resume(&self.dir, id, db, check_words)?);
        }
        let Some(file) = &self.file else {
            bail!("give a campaign file, or --resume ID");
        };
        let text = crate::commands::common::read_input(file, "campaign file")?;
        let new = run::start((&text, file), &self.dir, db, self.dry_run, check_words)?;
        Ok(new)
    }
}

/// A child run's arguments parsed as the child `storlab` will parse them
/// (the same clap definitions), with the profile and job file they name
/// read; why they would fail.
fn check_words(args: &[String]) -> Result<(), String> {
    let argv = std::iter::once("storlab").chain(args.iter().map(String::as_str));
    let cli = crate::Cli::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        first.trim_start_matches("error: ").to_string()
    })?;
    let (profile, job, workload) = match &cli.command {
        Some(crate::Command::Bench(b)) => {
            (b.profile.as_deref(), b.job.as_deref(), Some(&b.workload))
        }
        Some(crate::Command::Sweep(s)) => {
            (s.profile.as_deref(), s.job.as_deref(), Some(&s.workload))
        }
        _ => (None, None, None),
    };
    if let Some(w) = workload {
        // A value the option table refuses (the command's error).
        w.spec().map_err(|e| e.to_string())?;
    }
    if let Some(p) = profile {
        crate::commands::workload::find_profile(p).map_err(|e| format!("{e:#}"))?;
    }
    if let Some(j) = job {
        std::fs::read_to_string(j)
            .with_context(|| format!("cannot read the job file {}", j.display()))
            .and_then(|t| Ok(storlab_bench::JobFile::parse(&t, j)?))
            .map_err(|e| format!("{e:#}"))?;
    }
    Ok(())
}

/// A campaign's progress on stderr (`.0`: its directory).
struct Words<'a>(&'a Path);

impl Progress for Words<'_> {
    fn event(&mut self, event: SweepEvent<'_>) {
        if let Some(line) = run::progress_line(&event, self.0) {
            eprintln!("{line}");
        }
    }
    // A cell's child runs show their progress in the cell's log.
    fn point_running(&mut self, _: &PointInfo, _: &[String], _: &Arc<Control>) {}
    fn point_done(&mut self) {}
}

impl Tell for Words<'_> {
    fn cell(&mut self, event: CellEvent<'_>) {
        eprintln!("{event}");
    }
}

/// The end: the comparison across cells, each cell's status and log.
fn ended(s: &Summary) -> Result<Rendered> {
    let ((rows, missing), failed) = (s.comparison(), s.failed());
    let (report, r) = (s.report.as_deref(), &s.run);
    let text = storlab_print::campaign::result_text;
    let (rows, failed) = ((&rows[..], &missing[..]), (&failed[..], &s.notes[..]));
    let text = text(&r.id, &r.campaign, rows, failed, &r.dir.path, report);
    Ok(Rendered::new(text, s.json()? + "\n"))
}
