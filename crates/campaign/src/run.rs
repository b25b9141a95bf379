//! Running a campaign: its cells in order through the sweeper's one loop
//! ([`storlab_bench::sweeper::drive()`], a failed cell going on:
//! a finished cell skipped, a stop request ending the campaign after the
//! cell running), each cell's setup, child `storlab` runs and teardown
//! (always, also after a failure or a stop) with every stage recorded in
//! the state as it starts, the resume of a cell the campaign was killed
//! in, the stop at a hung teardown, and the summary at the end. The front
//! end supplies the stop request, the wording of what happens ([`Tell`],
//! the sweeper's `Progress`) and the printing; nothing here prints.

use crate::process::{self, CmdError};
use crate::report::{
    CampaignRow, Missing, cell_docs, comparison_rows, failed_cells, latest_of_each, missing_rows,
};
use crate::runs::{all_runs_stored, finished, stored};
use crate::spec::{Campaign, Cell};
use crate::state::{CellState, CellStatus, Dir, Stage, State, StateError, child_args};
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storlab_bench::sweeper::{
    Before, OnFailure, Outcome, PointInfo, Points, Progress, SweepEvent, drive,
};
use storlab_store::Store;
use storlab_types::StoredRun;

/// Why a campaign could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Its directory's files could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// A teardown command did not end in time: what it left behind needs
    /// a person before the next cell's setup.
    #[error(
        "campaign {id} stopped at cell {cell}: {reason}. Check what its setup built by hand \
         (log: {}), then continue with: storlab campaign --resume {id}",
        log.display()
    )]
    Hung {
        id: String,
        cell: String,
        reason: String,
        log: PathBuf,
    },
    /// The campaign file is wrong.
    #[error(transparent)]
    File(#[from] crate::spec::CampaignError),
    /// A cell sets a tag storlab sets itself.
    #[error("cell {cell}: the tag {tag} is set by storlab itself; use another name")]
    ReservedTag { cell: String, tag: String },
    /// Setup commands would run without `--yes` and no one can be asked.
    #[error(
        "this campaign runs {0} setup/teardown commands that may destroy data; \
         review them with --dry-run, then confirm with --yes"
    )]
    NotConfirmable(usize),
    /// The question was not answered yes.
    #[error("not confirmed; nothing was run")]
    NotConfirmed,
    /// The answer could not be read.
    #[error("cannot read the answer: {0}")]
    Answer(#[source] std::io::Error),
    /// A run's words would fail in the child storlab.
    #[error("cell {cell}: `{line}` would fail: {why} (nothing was run)")]
    WouldFail {
        cell: String,
        line: String,
        why: String,
    },
}

/// What happens inside a cell, for the front end to word.
#[derive(Debug, Clone, Copy)]
pub enum CellEvent<'a> {
    /// The cell was killed in its teardown after its runs were stored:
    /// only the teardown runs again.
    ResumeTeardownOnly,
    /// The cell was killed mid-cell: its teardown runs first, then the cell.
    ResumeTeardownFirst,
    /// That earlier attempt's teardown failed.
    EarlierTeardownFailed(&'a str),
    /// The resumed teardown ended the cell.
    ResumedEnded(&'a CellStatus),
    /// The cell's `nth` of `of` storlab runs starts.
    RunStarting {
        nth: usize,
        of: usize,
        words: &'a [String],
    },
    /// The cell ended so.
    Ended(&'a CellState),
}

/// The words for what happens inside a cell: one line for stderr.
impl Display for CellEvent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellEvent::ResumeTeardownOnly => write!(
                f,
                "  killed in its teardown earlier: its runs are stored, only the teardown runs again"
            ),
            CellEvent::ResumeTeardownFirst => {
                write!(f, "  interrupted mid-cell earlier: its teardown runs first")
            }
            CellEvent::EarlierTeardownFailed(t) => write!(f, "  (that teardown: {t})"),
            CellEvent::ResumedEnded(s) => write!(f, "  {}", s.word()),
            CellEvent::RunStarting { nth, of, words } => {
                write!(f, "  run {nth}/{of}: storlab {}", words.join(" "))
            }
            CellEvent::Ended(st) => {
                let word = match st.status {
                    CellStatus::Failed => "FAILED",
                    ref s => s.word(),
                };
                match &st.reason {
                    Some(r) => write!(f, "  {word}: {r}"),
                    None => write!(f, "  {word}"),
                }
            }
        }
    }
}

/// The line for stderr that tells the sweeper's `event` about a campaign
/// whose directory is `dir` (none for events a campaign does not have).
pub fn progress_line(event: &SweepEvent<'_>, dir: &Path) -> Option<String> {
    Some(match event {
        SweepEvent::Started {
            sweep_id, points, ..
        } => format!(
            "campaign {sweep_id}: {points} cells, logs in {}",
            dir.display()
        ),
        SweepEvent::PointResumed(p) => format!(
            "[{}/{}] {}: already finished, skipped",
            p.index + 1,
            p.points,
            p.label
        ),
        SweepEvent::PointStarting(p) => format!("[{}/{}] {}", p.index + 1, p.points, p.label),
        _ => return None,
    })
}

/// Where the events inside a cell go (the front end writes them, e.g.
/// each [`CellEvent`]'s line to stderr).
pub trait Tell {
    fn cell(&mut self, event: CellEvent<'_>);
}

/// A campaign to run: its id, directory and cells, and the database its
/// child runs store into (`--db`).
#[derive(Debug)]
pub struct Run {
    pub id: String,
    pub dir: Dir,
    pub campaign: Campaign,
    pub db: PathBuf,
}

/// How the campaign's cells went.
#[derive(Debug)]
pub struct Ran {
    pub state: State,
    /// A cell was interrupted or a stop was requested: cells are left
    /// (`--resume ID` continues).
    pub interrupted: bool,
}

impl Run {
    /// Run every cell not finished yet (as `store` and the state say), in
    /// order, until `stop` says a stop was requested (a signal).
    pub fn cells(
        &self,
        store: &Store,
        stop: &dyn Fn() -> bool,
        progress: &mut dyn storlab_bench::sweeper::Progress,
        tell: &mut dyn Tell,
    ) -> Result<Ran, RunError> {
        let mut cells = Cells {
            run: self,
            store,
            stop,
            state: self.dir.load_state()?,
            tell,
        };
        let totals = drive(&self.id, &mut cells, OnFailure::GoOn, progress, stop)?;
        Ok(Ran {
            state: cells.state,
            interrupted: totals.interrupted,
        })
    }
}

/// The campaign's cells as the sweeper's points.
struct Cells<'a> {
    run: &'a Run,
    store: &'a Store,
    stop: &'a dyn Fn() -> bool,
    state: State,
    tell: &'a mut dyn Tell,
}

impl Points for Cells<'_> {
    type Error = RunError;

    fn labels(&self) -> Vec<String> {
        let c = &self.run.campaign.cells;
        c.iter().map(|c| c.name.clone()).collect()
    }

    fn before(&mut self, index: usize) -> Before {
        let cell = &self.run.campaign.cells[index];
        let done = finished(
            self.store,
            &self.run.id,
            cell,
            self.state.cells.get(&cell.name),
        );
        if done {
            Before::Finished
        } else {
            Before::ToRun
        }
    }

    /// A cell that ran to its end is [`Outcome::Done`], failed or not: the
    /// campaign tells its failures itself ([`Tell`]).
    fn run(&mut self, info: &PointInfo, _: &mut dyn Progress) -> Result<Outcome, RunError> {
        let cell = &self.run.campaign.cells[info.index];
        if self.resume(cell)? {
            return Ok(Outcome::Done);
        }
        let (st, hung) = self.one(cell)?;
        if hung {
            return Err(self.hung(cell, st.reason)?);
        }
        self.tell.cell(CellEvent::Ended(&st));
        let interrupted = st.status == CellStatus::Interrupted;
        self.state.cells.insert(cell.name.clone(), st);
        self.run.dir.save_state(&self.state)?;
        Ok(if interrupted {
            Outcome::Stopped
        } else {
            Outcome::Done
        })
    }
}

impl Cells<'_> {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.run.campaign.teardown_timeout_s)
    }

    /// A cell the campaign was killed in: what its setup built is still
    /// there, so its teardown runs first. If its runs all went through and
    /// are stored, only the teardown is left (running the cell again
    /// stored a second run of each, and the comparison lost every figure):
    /// then the cell is done (true).
    fn resume(&mut self, cell: &Cell) -> Result<bool, RunError> {
        let (run, dir) = (self.run, &self.run.dir);
        let Some(killed) = self
            .state
            .cells
            .get(&cell.name)
            .filter(|s| s.status == CellStatus::Running)
            .cloned()
        else {
            return Ok(false);
        };
        let measured = killed.measured(all_runs_stored(self.store, &run.id, cell));
        let mut log = dir.open_log(&cell.name)?;
        if measured {
            self.tell.cell(CellEvent::ResumeTeardownOnly);
            let _ = writeln!(
                log,
                "# resumed: the teardown of the attempt that was killed in it; its runs are stored"
            );
            dir.enter(&mut self.state, &cell.name, Stage::Teardown, None)?;
        } else {
            self.tell.cell(CellEvent::ResumeTeardownFirst);
            let _ = writeln!(
                log,
                "# resumed: the teardown of the attempt that was killed mid-cell, then the cell again"
            );
        }
        let end = process::teardown(cell, &mut log, self.timeout());
        if let Some(t) = &end.failed {
            self.tell.cell(CellEvent::EarlierTeardownFailed(t));
        }
        if end.hung {
            return Err(self.hung(cell, end.failed)?);
        }
        if !measured {
            return Ok(false);
        }
        let st = CellState {
            status: if end.failed.is_some() {
                CellStatus::Failed
            } else {
                CellStatus::Finished
            },
            reason: end.failed,
            stored_runs: stored(self.store, &run.id, &cell.name).len(),
            stage: Some(Stage::Done),
        };
        let _ = writeln!(log, "# cell {}: {:?}", cell.name, st.status);
        self.tell.cell(CellEvent::ResumedEnded(&st.status));
        self.state.cells.insert(cell.name.clone(), st);
        dir.save_state(&self.state)?;
        Ok(true)
    }

    /// A teardown command did not end in time: the cell is marked failed
    /// with the reason and the campaign stops with [`RunError::Hung`].
    fn hung(&mut self, cell: &Cell, reason: Option<String>) -> Result<RunError, RunError> {
        let reason = reason.unwrap_or_else(|| "a teardown command hung".into());
        self.state.cells.insert(
            cell.name.clone(),
            CellState {
                status: CellStatus::Failed,
                reason: Some(reason.clone()),
                stored_runs: 0,
                stage: Some(Stage::Done),
            },
        );
        self.run.dir.save_state(&self.state)?;
        Ok(RunError::Hung {
            id: self.run.id.clone(),
            cell: cell.name.clone(),
            reason,
            log: self.run.dir.log(&cell.name),
        })
    }

    /// One cell: setup, runs, teardown (always), each command logged, each
    /// stage recorded in the state as it starts; and whether a teardown
    /// command hung (was stopped at the timeout).
    fn one(&mut self, cell: &Cell) -> Result<(CellState, bool), RunError> {
        let (run, dir) = (self.run, &self.run.dir);
        let mut log = dir.open_log(&cell.name)?;
        let mut outcome: Result<(), (CellStatus, String)> = Ok(());
        dir.enter(&mut self.state, &cell.name, Stage::Setup, None)?;
        for cmd in &cell.setup {
            if let Err(e) = process::shell(cmd, cell, &mut log, self.stop, None) {
                outcome = Err(status(e, format!("setup `{cmd}`")));
                break;
            }
        }
        if outcome.is_ok() {
            dir.enter(&mut self.state, &cell.name, Stage::Running, None)?;
            outcome = self.storlab(cell, &mut log);
        }
        // The teardown runs whatever happened, also after Ctrl-C; a kill
        // in it leaves the cell measured (no reason) or not.
        let so_far = outcome.as_ref().err().map(|(_, r)| r.clone());
        dir.enter(&mut self.state, &cell.name, Stage::Teardown, so_far)?;
        let end = process::teardown(cell, &mut log, self.timeout());
        let stored_runs = stored(self.store, &run.id, &cell.name).len();
        let (status, reason) = match (outcome, end.failed) {
            (_, Some(t)) if end.hung => (CellStatus::Failed, Some(t)),
            (Err((s, r)), _) => (s, Some(r)),
            (Ok(()), Some(t)) => (CellStatus::Failed, Some(t)),
            (Ok(()), None) => (CellStatus::Finished, None),
        };
        let _ = writeln!(
            log,
            "# cell {}: {status:?} {}",
            cell.name,
            reason.clone().unwrap_or_default()
        );
        let st = CellState {
            status,
            reason,
            stored_runs,
            stage: Some(Stage::Done),
        };
        Ok((st, end.hung))
    }

    /// The cell's storlab runs, as child processes writing to the log.
    fn storlab(
        &mut self,
        cell: &Cell,
        log: &mut std::fs::File,
    ) -> Result<(), (CellStatus, String)> {
        let exe = std::env::current_exe().map_err(|e| {
            (
                CellStatus::Failed,
                format!("cannot find storlab itself: {e}"),
            )
        })?;
        for (i, words) in cell.run.iter().enumerate() {
            let args = child_args(&self.run.id, cell, i, &self.run.db);
            let line = format!("storlab {}", args.join(" "));
            self.tell.cell(CellEvent::RunStarting {
                nth: i + 1,
                of: cell.run.len(),
                words,
            });
            process::storlab(&exe, &args, log, self.stop)
                .map_err(|e| status(e, format!("`{line}`")))?;
        }
        Ok(())
    }
}

/// A command's error as the cell's status and reason (`what` names it).
fn status(e: CmdError, what: String) -> (CellStatus, String) {
    match e {
        CmdError::Interrupted => (CellStatus::Interrupted, format!("{what}: interrupted")),
        e => (CellStatus::Failed, format!("{what}: {e}")),
    }
}

/// Setup commands may destroy data: the campaign runs only when `yes`
/// (`--yes`), when it has no setup or teardown command, or when the
/// person at `answer` (the terminal; none when there is no one to ask)
/// types yes to the question written to `ask` with every cell's commands.
pub fn confirm(
    c: &Campaign,
    yes: bool,
    answer: Option<impl std::io::BufRead>,
    ask: &mut dyn Write,
) -> Result<(), RunError> {
    let n: usize = c
        .cells
        .iter()
        .map(|c| c.setup.len() + c.teardown.len())
        .sum();
    if n == 0 || yes {
        return Ok(());
    }
    let Some(mut answer) = answer else {
        return Err(RunError::NotConfirmable(n));
    };
    let _ = write!(
        ask,
        "{}This campaign runs the {n} setup/teardown commands above as root shell commands; \
         they may destroy data. Type yes to go on: ",
        crate::report::describe("(new)", c)
    );
    let _ = ask.flush();
    let mut line = String::new();
    answer.read_line(&mut line).map_err(RunError::Answer)?;
    if line.trim() != "yes" {
        return Err(RunError::NotConfirmed);
    }
    Ok(())
}

/// A new campaign from its file's `text` (`file` names it; its stem is
/// the default name): expanded, its tags checked, its id made and every
/// run's words checked with `check` ([`check_runs`]) before its directory
/// under `root` is made (not for a `dry_run`) and the expanded campaign
/// saved there, and so before any setup command (they may destroy data)
/// runs.
pub fn start<E: Display>(
    (text, file): (&str, &Path),
    root: &Path,
    db: &Path,
    dry_run: bool,
    check: impl FnMut(&[String]) -> Result<(), E>,
) -> Result<Run, RunError> {
    let stem = file.file_stem().and_then(|s| s.to_str());
    let campaign = crate::CampaignFile::parse(text, file)?.expand(stem.unwrap_or("campaign"))?;
    if let Some((cell, tag)) = crate::state::reserved_tag(&campaign) {
        return Err(RunError::ReservedTag {
            cell: cell.to_string(),
            tag: tag.to_string(),
        });
    }
    let now = storlab_types::time::now_rfc3339();
    let id = crate::state::new_id(&campaign.name, &now, storlab_types::time::id_salt());
    check_runs(&campaign, &id, db, check)?;
    let dir = Dir::of(root, &id)?;
    if !dry_run {
        dir.create(root, &campaign)?;
    }
    Ok(Run {
        id,
        dir,
        campaign,
        db: db.to_path_buf(),
    })
}

/// The campaign `id` saved under `root` (`--resume`), its runs' words
/// checked again with `check` (a profile or job file may have changed
/// since).
pub fn resume<E: Display>(
    root: &Path,
    id: &str,
    db: &Path,
    check: impl FnMut(&[String]) -> Result<(), E>,
) -> Result<Run, RunError> {
    let dir = Dir::of(root, id)?;
    let campaign = dir.load_campaign(id, root)?;
    check_runs(&campaign, id, db, check)?;
    Ok(Run {
        id: id.to_string(),
        dir,
        campaign,
        db: db.to_path_buf(),
    })
}

/// Every cell's run words checked as the child `storlab` will parse them
/// (`check` gets the child's whole argument list and says why it would
/// fail): a mistake is reported before the first setup command runs, not
/// after it rebuilt the storage.
pub fn check_runs<E: Display>(
    c: &Campaign,
    id: &str,
    db: &Path,
    mut check: impl FnMut(&[String]) -> Result<(), E>,
) -> Result<(), RunError> {
    for cell in &c.cells {
        for (i, words) in cell.run.iter().enumerate() {
            check(&child_args(id, cell, i, db)).map_err(|e| RunError::WouldFail {
                cell: cell.name.clone(),
                line: format!("storlab {}", words.join(" ")),
                why: e.to_string(),
            })?;
        }
    }
    Ok(())
}

/// The end of a campaign (or of its part run now): one run per cell and
/// run from the store, the notes on runs stored twice, and what the
/// comparison, the `--json` document and the HTML report are made of.
#[derive(Debug)]
pub struct Summary {
    pub run: Run,
    pub state: State,
    /// The compared runs, by cell.
    pub runs: Vec<(String, StoredRun)>,
    /// A cell's run stored more than once: which one was compared.
    pub notes: Vec<String>,
    /// The `--report` file asked for.
    pub report: Option<PathBuf>,
    /// The campaign was stopped (no report: `--resume` writes it).
    pub stopped: bool,
}

impl Summary {
    /// The campaign's runs in `store` after its cells `ran`.
    pub fn gather(store: &Store, run: Run, ran: Ran, report: Option<PathBuf>) -> Summary {
        let mut all_runs: Vec<(String, StoredRun)> = Vec::new();
        for cell in &run.campaign.cells {
            for r in stored(store, &run.id, &cell.name) {
                all_runs.push((cell.name.clone(), r));
            }
        }
        let (runs, notes) = latest_of_each(all_runs);
        Summary {
            run,
            state: ran.state,
            runs,
            notes,
            report,
            stopped: ran.interrupted,
        }
    }

    /// The comparison's rows, and each cell and run without one and why.
    pub fn comparison(&self) -> (Vec<CampaignRow<'_>>, Vec<Missing<'_>>) {
        let c = &self.run.campaign;
        let rows = comparison_rows(c, &self.runs);
        let missing = missing_rows(c, &self.state, &self.runs, &rows, &self.run.id);
        (rows, missing)
    }

    /// Every cell that did not finish: `NAME STATUS: REASON`.
    pub fn failed(&self) -> Vec<String> {
        failed_cells(&self.run.campaign, &self.state)
    }

    /// The HTML report of every compared run (the baseline cell's first).
    pub fn html(&self) -> String {
        let all: Vec<StoredRun> = self.runs.iter().map(|(_, r)| r.clone()).collect();
        let base = self
            .runs
            .iter()
            .position(|(cell, _)| *cell == self.run.campaign.baseline);
        storlab_report::html_report(&all, base)
    }

    /// The `--json` document.
    pub fn json(&self) -> Result<String, serde_json::Error> {
        let (c, dir) = (&self.run.campaign, &self.run.dir);
        let (rows, missing) = self.comparison();
        serde_json::to_string_pretty(&crate::report::ResultDoc {
            id: &self.run.id,
            dir: &dir.path,
            name: &c.name,
            baseline: &c.baseline,
            cells: cell_docs(c, &self.state, &self.runs, dir),
            comparison: &rows,
            missing: &missing,
            notes: &self.notes,
            report: self.report.as_deref().filter(|_| !self.stopped),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Cell;
    use std::sync::Arc;
    use storlab_bench::Control;
    use storlab_bench::sweeper::Progress;

    /// A cell whose setup and teardown leave marks in `dir` (no storlab
    /// runs, so nothing is measured).
    fn cell(name: &str, dir: &Path, setup: &[&str]) -> Cell {
        let mark = |what: &str| format!("echo {what} >> {}/marks", dir.display());
        let mut s: Vec<String> = vec![mark(&format!("setup-{name}"))];
        s.extend(setup.iter().map(|c| c.to_string()));
        Cell {
            name: name.into(),
            matrix: Default::default(),
            tags: Default::default(),
            setup: s,
            teardown: vec![mark(&format!("teardown-{name}"))],
            target: dir.display().to_string(),
            run: Vec::new(),
        }
    }

    /// A campaign of `cells` in a fresh directory under `root`.
    fn campaign(root: &Path, cells: Vec<Cell>) -> Run {
        let campaign = Campaign {
            name: "t".into(),
            baseline: cells[0].name.clone(),
            cells,
            teardown_timeout_s: 5,
        };
        let dir = Dir::of(root, "t-1").unwrap();
        dir.create(root, &campaign).unwrap();
        Run {
            id: "t-1".into(),
            dir,
            campaign,
            db: root.join("r.db"),
        }
    }

    #[derive(Default)]
    struct Lines(Vec<String>);

    impl Progress for Lines {
        fn event(&mut self, event: SweepEvent<'_>) {
            self.0.extend(progress_line(&event, Path::new("D")));
        }
        fn point_running(&mut self, _: &PointInfo, _: &[String], _: &Arc<Control>) {}
        fn point_done(&mut self) {}
    }

    impl Tell for Lines {
        fn cell(&mut self, event: CellEvent<'_>) {
            self.0.push(event.to_string());
        }
    }

    fn marks(root: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(root.join("marks")).unwrap_or_default();
        text.lines().map(String::from).collect()
    }

    #[test]
    fn a_failed_setup_fails_its_cell_its_teardown_runs_and_the_rest_go_on() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let run = campaign(
            root,
            vec![cell("a", root, &["exit 3"]), cell("b", root, &[])],
        );
        let store = Store::open(&run.db).unwrap();
        let (mut p, mut tell) = (Lines::default(), Lines::default());
        let ran = run.cells(&store, &|| false, &mut p, &mut tell).unwrap();
        assert!(!ran.interrupted);
        assert_eq!(
            marks(root),
            ["setup-a", "teardown-a", "setup-b", "teardown-b"]
        );
        let a = &ran.state.cells["a"];
        assert_eq!(a.status, CellStatus::Failed);
        assert!(
            a.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("setup `exit 3`: exited with")),
            "{a:?}"
        );
        assert_eq!(ran.state.cells["b"].status, CellStatus::Finished);
        assert_eq!(
            p.0,
            ["campaign t-1: 2 cells, logs in D", "[1/2] a", "[2/2] b"]
        );
        assert!(
            tell.0[0].starts_with("  FAILED: setup `exit 3`"),
            "{:?}",
            tell.0
        );
        assert_eq!(tell.0[1], "  finished");
        // The state on disk says the same, and the summary names the failure.
        assert_eq!(run.dir.load_state().unwrap().cells.len(), 2);
        let sum = Summary::gather(&store, run, ran, None);
        assert_eq!(sum.failed().len(), 1);
        assert!(sum.json().unwrap().contains("\"status\": \"failed\""));
    }

    #[test]
    fn a_stop_ends_the_campaign_after_the_cell_and_a_resume_goes_on_from_there() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let cells = vec![cell("a", root, &[]), cell("b", root, &[])];
        let run = campaign(root, cells);
        let store = Store::open(&run.db).unwrap();
        // The stop comes while cell a runs (its teardown is not stopped).
        let stop = || marks(root).len() >= 2;
        let ran = run
            .cells(&store, &stop, &mut Lines::default(), &mut Lines::default())
            .unwrap();
        assert!(ran.interrupted);
        assert_eq!(marks(root), ["setup-a", "teardown-a"]);
        assert_eq!(ran.state.cells["a"].status, CellStatus::Finished);
        // --resume: a is finished and skipped, b runs.
        let mut p = Lines::default();
        let ran = run
            .cells(&store, &|| false, &mut p, &mut Lines::default())
            .unwrap();
        assert!(!ran.interrupted);
        assert_eq!(
            marks(root),
            ["setup-a", "teardown-a", "setup-b", "teardown-b"]
        );
        assert_eq!(p.0[1], "[1/2] a: already finished, skipped");
    }

    #[test]
    fn a_cell_killed_mid_cell_runs_its_teardown_first_and_then_again() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let run = campaign(root, vec![cell("a", root, &[])]);
        let store = Store::open(&run.db).unwrap();
        // A kill -9 in the setup left this state.
        let mut state = State::default();
        run.dir.enter(&mut state, "a", Stage::Setup, None).unwrap();
        let mut tell = Lines::default();
        let ran = run
            .cells(&store, &|| false, &mut Lines::default(), &mut tell)
            .unwrap();
        assert_eq!(marks(root), ["teardown-a", "setup-a", "teardown-a"]);
        assert_eq!(
            tell.0,
            [
                "  interrupted mid-cell earlier: its teardown runs first",
                "  finished"
            ]
        );
        assert_eq!(ran.state.cells["a"].stage, Some(Stage::Done));
    }

    #[test]
    fn a_hung_teardown_stops_the_campaign_with_the_cell_failed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let mut c = cell("a", root, &[]);
        c.teardown = vec!["sleep 1000".into()];
        let mut run = campaign(root, vec![c, cell("b", root, &[])]);
        run.campaign.teardown_timeout_s = 0;
        let store = Store::open(&run.db).unwrap();
        let e = run
            .cells(
                &store,
                &|| false,
                &mut Lines::default(),
                &mut Lines::default(),
            )
            .unwrap_err();
        assert!(
            matches!(&e, RunError::Hung { cell, .. } if cell == "a"),
            "{e}"
        );
        assert!(
            e.to_string().contains("storlab campaign --resume t-1"),
            "{e}"
        );
        assert_eq!(marks(root), ["setup-a"], "cell b never started");
        let st = &run.dir.load_state().unwrap().cells["a"];
        assert_eq!(st.status, CellStatus::Failed);
    }

    #[test]
    fn setup_commands_run_only_when_confirmed() {
        let t = tempfile::tempdir().unwrap();
        let run = campaign(t.path(), vec![cell("a", t.path(), &[])]);
        let c = &run.campaign;
        let mut asked = Vec::new();
        let none: Option<&[u8]> = None;
        let e = confirm(c, false, none, &mut asked).unwrap_err();
        assert!(matches!(e, RunError::NotConfirmable(2)), "{e}");
        assert!(e.to_string().contains("confirm with --yes"), "{e}");
        assert!(asked.is_empty(), "no question without a terminal");
        confirm(c, true, none, &mut asked).unwrap();
        let e = confirm(c, false, Some(&b"no\n"[..]), &mut asked).unwrap_err();
        assert!(matches!(e, RunError::NotConfirmed), "{e}");
        let question = String::from_utf8(asked.clone()).unwrap();
        assert!(question.contains("Type yes to go on"), "{question}");
        confirm(c, false, Some(&b"yes\n"[..]), &mut asked).unwrap();
    }

    #[test]
    fn run_words_that_would_fail_are_named_with_their_cell() {
        let t = tempfile::tempdir().unwrap();
        let mut c = cell("a", t.path(), &[]);
        c.run = vec![vec!["bench".into(), "--bogus".into()]];
        let run = campaign(t.path(), vec![c]);
        let mut seen = Vec::new();
        let e = check_runs(&run.campaign, "t-1", Path::new("r.db"), |args| {
            seen = args.to_vec();
            Err("unexpected argument '--bogus'")
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cell a: `storlab bench --bogus` would fail: unexpected argument '--bogus' \
             (nothing was run)"
        );
        // The check sees the child's whole argument list.
        assert!(seen.contains(&"campaign=t-1".to_string()), "{seen:?}");
        assert_eq!(seen[seen.len() - 2..], ["--db", "r.db"]);
    }
}
