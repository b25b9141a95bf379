//! `storlab campaign FILE.toml`: measure a matrix of configurations (RAID
//! level, chunk, file system, ...) that must be built and torn down between
//! tests, as one resumable command.
//!
//! Each cell runs its `setup` shell commands, then its storlab runs (bench
//! with a profile or job file, or a sweep) as child `storlab` processes
//! tagged `campaign=ID cell=NAME` plus the cell's own tags, then its
//! `teardown` — always, also after a failure or Ctrl-C. Every command's
//! output goes to the cell's log in the campaign directory
//! (`./storlab-campaigns/ID/`), with the expanded campaign and its state, so
//! `--resume ID` continues after the last cell whose results are stored.
//! The end is one comparison table across cells (and, with `--report`, the
//! HTML report of all of them). The file format, the state and the
//! comparison are the `storlab-campaign` crate's; this is flags, child
//! processes and printing.
//! With `--output-format json` / `--json` the plan (`--dry-run`) or the
//! result (every cell with its status, run ids and log, and the comparison
//! rows) is one serializer-made document on stdout; progress stays on
//! stderr.

use crate::Outcome;
use crate::commands::child;
use crate::commands::common::DbArgs;
use crate::commands::outfmt::TableFormat;
use anyhow::{Context, Result, bail};
use clap::{Args, Parser};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use storlab_campaign::report::{
    PlanDoc, PlannedCell, ResultDoc, cell_docs, comparison_rows, describe, failed_cells,
    latest_of_each, missing_rows,
};
use storlab_campaign::runs::{all_runs_stored, finished, stored};
use storlab_campaign::spec::matrix_env;
use storlab_campaign::state::{child_args, id_salt, new_id, reserved_tag};
use storlab_campaign::{Campaign, CampaignFile, Cell, CellState, CellStatus, Dir, Stage, State};
use storlab_print::campaign::result_text;
use storlab_store::Store;
use storlab_types::StoredRun;

const CAMPAIGN_HELP: &str = "\
The campaign file: [[cell]] tables, or a [matrix] of lists (fs = [\"ext4\",
\"xfs\"]; a key needs a list) and a [template] whose strings use {key} and
{target} placeholders. Each cell has name, tags, setup and teardown (shell
commands, run with sh -c), target and run (storlab command lines starting
with bench or sweep). Top-level keys: name, baseline (the cell the others
are compared with) and teardown_timeout (seconds or a duration such as
\"10m\"; default 300 s: a teardown command still running then is stopped
with everything it started, the cell is marked failed and the campaign
exits 2).

Every setup and teardown command gets the cell's values in its
environment: STORLAB_MATRIX_<KEY> (the key upper-cased, other characters
than letters and digits as _), STORLAB_CELL and STORLAB_TARGET. In those
commands a placeholder becomes a reference to its variable, never the
value's text: {fs} is \"${STORLAB_MATRIX_FS}\" (inside double quotes
${STORLAB_MATRIX_FS}), so no value runs as shell code, whatever quotes the
command puts around it. A placeholder inside single quotes, where the shell
expands nothing, is refused with the file and line: use double quotes.
Elsewhere (name, tags, target, run words: no shell) a placeholder is the
value itself. --dry-run shows the commands as they will run, with the
variables. Control characters in matrix values and targets are refused
with the file and line.

Before the first setup command runs, every run's words are parsed as the
child storlab will parse them (and the profile or job file they name is
read). Setup and teardown commands run in a process group of their own
that a stop (Ctrl-C, SIGTERM) ends as a whole; child storlab runs end with
the campaign, even after kill -9. Each cell's state records the stage it
reached (setup, running, teardown, done): --resume ID runs the teardown of
a cell the campaign was killed in, then the cell again, unless it was
killed in the teardown after its runs were stored; then only the teardown
runs again. The comparison takes one run per cell and run (the latest
finished one if a run was stored twice, with a note), has a row for every
cell, and one without figures says why.";

/// `storlab campaign FILE.toml`
#[derive(Args, Debug)]
#[command(after_long_help = CAMPAIGN_HELP)]
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
    pub out: crate::commands::outfmt::OutputArgs<TableFormat>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// A signal asked the campaign to stop: SIGINT, SIGTERM and SIGHUP, as bench.
type Stop = crate::commands::signals::Signals;

impl CampaignCommand {
    pub fn execute(self) -> Result<Outcome> {
        if let Some(path) = self.report.as_ref().filter(|_| !self.dry_run) {
            // Never the database, a device or a file storlab did not write
            // (without --force): refused before the campaign's directory is
            // made and any setup command runs, not after the last cell.
            crate::commands::common::check_output_path(
                path,
                &self.db.db,
                self.force,
                crate::commands::common::OutputKind::HtmlReport,
            )?;
        }
        let (id, dir, campaign) = self.load()?;
        if self.dry_run {
            if self.is_json() {
                crate::output::print_json(&PlanDoc {
                    id: &id,
                    dir: &dir.path,
                    dry_run: true,
                    name: &campaign.name,
                    baseline: &campaign.baseline,
                    teardown_timeout_s: campaign.teardown_timeout_s,
                    cells: campaign
                        .cells
                        .iter()
                        .map(|cell| PlannedCell {
                            cell,
                            log: dir.log(&cell.name),
                        })
                        .collect(),
                })?;
            } else {
                crate::output::print(&describe(&id, &campaign))?;
            }
            return Ok(Outcome::Ok);
        }
        self.confirm(&campaign)?;
        let store = self.db.open()?;
        let stop = Stop::install()?;
        let mut state = dir.load_state()?;
        eprintln!(
            "campaign {id}: {} cells, logs in {}",
            campaign.cells.len(),
            dir.path.display()
        );
        for (i, cell) in campaign.cells.iter().enumerate() {
            if finished(&store, &id, cell, state.cells.get(&cell.name)) {
                eprintln!(
                    "[{}/{}] {}: already finished, skipped",
                    i + 1,
                    campaign.cells.len(),
                    cell.name
                );
                continue;
            }
            eprintln!("[{}/{}] {}", i + 1, campaign.cells.len(), cell.name);
            let timeout = Duration::from_secs(campaign.teardown_timeout_s);
            if let Some(killed) = state
                .cells
                .get(&cell.name)
                .filter(|s| s.status == CellStatus::Running)
                .cloned()
            {
                // Killed mid-cell: what its setup built is still there. If
                // its runs all went through and are stored, only the
                // teardown is left (running the cell again stored a second
                // run of each, and the comparison lost every figure).
                let measured = killed.measured(all_runs_stored(&store, &id, cell));
                let mut log = dir.open_log(&cell.name)?;
                if measured {
                    eprintln!(
                        "  killed in its teardown earlier: its runs are stored, only the teardown runs again"
                    );
                    let _ = writeln!(
                        log,
                        "# resumed: the teardown of the attempt that was killed in it; its runs are stored"
                    );
                    dir.enter(&mut state, &cell.name, Stage::Teardown, None)?;
                } else {
                    eprintln!("  interrupted mid-cell earlier: its teardown runs first");
                    let _ = writeln!(
                        log,
                        "# resumed: the teardown of the attempt that was killed mid-cell, then the cell again"
                    );
                }
                let end = teardown(cell, &mut log, timeout);
                if let Some(t) = &end.failed {
                    eprintln!("  (that teardown: {t})");
                }
                if end.hung {
                    return self.hung(&id, &dir, cell, &mut state, end.failed);
                }
                if measured {
                    let st = CellState {
                        status: if end.failed.is_some() {
                            CellStatus::Failed
                        } else {
                            CellStatus::Finished
                        },
                        reason: end.failed,
                        stored_runs: stored(&store, &id, &cell.name).len(),
                        stage: Some(Stage::Done),
                    };
                    let _ = writeln!(log, "# cell {}: {:?}", cell.name, st.status);
                    eprintln!("  {}", st.status.word());
                    state.cells.insert(cell.name.clone(), st);
                    dir.save_state(&state)?;
                    continue;
                }
            }
            let (st, hung) = self.run_cell(&id, cell, &dir, &mut state, &stop, &store, timeout)?;
            if hung {
                return self.hung(&id, &dir, cell, &mut state, st.reason);
            }
            eprintln!(
                "  {}{}",
                match st.status {
                    CellStatus::Failed => "FAILED",
                    ref s => s.word(),
                },
                st.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            let interrupted = st.status == CellStatus::Interrupted;
            state.cells.insert(cell.name.clone(), st);
            dir.save_state(&state)?;
            if interrupted || stop.requested() {
                eprintln!(
                    "storlab: campaign stopped; continue with: storlab campaign --resume {id}"
                );
                // --json still prints the document: which cells ended how.
                if self.is_json() {
                    self.summarise(&id, &dir, &campaign, &state, &store, true)?;
                }
                return Ok(Outcome::Interrupted);
            }
        }
        self.summarise(&id, &dir, &campaign, &state, &store, false)
    }

    fn is_json(&self) -> bool {
        self.out.format() == TableFormat::Json
    }

    /// A teardown command did not end in time: the cell is marked failed
    /// with the reason, the campaign stops (exit 2): what it left behind
    /// needs a person before the next cell's setup.
    fn hung(
        &self,
        id: &str,
        dir: &Dir,
        cell: &Cell,
        state: &mut State,
        reason: Option<String>,
    ) -> Result<Outcome> {
        let reason = reason.unwrap_or_else(|| "a teardown command hung".into());
        state.cells.insert(
            cell.name.clone(),
            CellState {
                status: CellStatus::Failed,
                reason: Some(reason.clone()),
                stored_runs: 0,
                stage: Some(Stage::Done),
            },
        );
        dir.save_state(state)?;
        bail!(
            "campaign {id} stopped at cell {}: {reason}. Check what its setup built by hand \
             (log: {}), then continue with: storlab campaign --resume {id}",
            cell.name,
            dir.log(&cell.name).display()
        )
    }

    /// The campaign to run: a new one from the file (its directory made, the
    /// expanded campaign saved) or the saved one of `--resume`.
    fn load(&self) -> Result<(String, Dir, Campaign)> {
        if let Some(id) = &self.resume {
            let dir = Dir::of(&self.dir, id)?;
            let c = dir.load_campaign(id, &self.dir)?;
            // A profile or job file may have changed since.
            check_runs(&c, id, &self.db.db)?;
            return Ok((id.clone(), dir, c));
        }
        let Some(file) = &self.file else {
            bail!("give a campaign file, or --resume ID");
        };
        let text = crate::commands::common::read_input(file, "campaign file")?;
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("campaign")
            .to_string();
        let campaign = CampaignFile::parse(&text, file)?.expand(&stem)?;
        if let Some((cell, t)) = reserved_tag(&campaign) {
            bail!("cell {cell}: the tag {t} is set by storlab itself; use another name");
        }
        let id = new_id(
            &campaign.name,
            &storlab_types::time::now_rfc3339().to_string(),
            id_salt(),
        );
        // Every run's words as the child storlab will parse them, before
        // the campaign's directory is made and any setup command (they may
        // destroy data) runs.
        check_runs(&campaign, &id, &self.db.db)?;
        let dir = Dir::of(&self.dir, &id)?;
        if self.dry_run {
            return Ok((id, dir, campaign));
        }
        dir.create(&self.dir, &campaign)?;
        Ok((id, dir, campaign))
    }

    /// Setup commands may destroy data: ask once for the whole campaign.
    fn confirm(&self, c: &Campaign) -> Result<()> {
        let n: usize = c
            .cells
            .iter()
            .map(|c| c.setup.len() + c.teardown.len())
            .sum();
        if n == 0 || self.yes {
            return Ok(());
        }
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            bail!(
                "this campaign runs {n} setup/teardown commands that may destroy data; \
                 review them with --dry-run, then confirm with --yes"
            );
        }
        eprint!(
            "{}This campaign runs the {n} setup/teardown commands above as root shell commands; \
             they may destroy data. Type yes to go on: ",
            describe("(new)", c)
        );
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        if line.trim() != "yes" {
            bail!("not confirmed; nothing was run");
        }
        Ok(())
    }

    /// One cell: setup, runs, teardown (always), each command logged, each
    /// stage recorded in `state` as it starts; and whether a teardown
    /// command hung (was stopped at the timeout).
    #[allow(clippy::too_many_arguments)]
    fn run_cell(
        &self,
        id: &str,
        cell: &Cell,
        dir: &Dir,
        state: &mut State,
        stop: &Stop,
        store: &Store,
        teardown_timeout: Duration,
    ) -> Result<(CellState, bool)> {
        let mut log = dir.open_log(&cell.name)?;
        let mut outcome: Result<(), (CellStatus, String)> = Ok(());
        dir.enter(state, &cell.name, Stage::Setup, None)?;
        for cmd in &cell.setup {
            if let Err(e) = shell(cmd, cell, &mut log, stop, None) {
                outcome = Err(e.into_status(format!("setup `{cmd}`")));
                break;
            }
        }
        if outcome.is_ok() {
            dir.enter(state, &cell.name, Stage::Running, None)?;
            outcome = self.run_storlab(id, cell, &mut log, stop);
        }
        // The teardown runs whatever happened, also after Ctrl-C; a kill
        // in it leaves the cell measured (no reason) or not.
        let so_far = outcome.as_ref().err().map(|(_, r)| r.clone());
        dir.enter(state, &cell.name, Stage::Teardown, so_far)?;
        let end = teardown(cell, &mut log, teardown_timeout);
        let stored_runs = stored(store, id, &cell.name).len();
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
        Ok((
            CellState {
                status,
                reason,
                stored_runs,
                stage: Some(Stage::Done),
            },
            end.hung,
        ))
    }

    /// The cell's storlab runs, as child processes writing to the log.
    fn run_storlab(
        &self,
        id: &str,
        cell: &Cell,
        log: &mut std::fs::File,
        stop: &Stop,
    ) -> Result<(), (CellStatus, String)> {
        let exe = std::env::current_exe().map_err(|e| {
            (
                CellStatus::Failed,
                format!("cannot find storlab itself: {e}"),
            )
        })?;
        for (i, words) in cell.run.iter().enumerate() {
            let args = child_args(id, cell, i, &self.db.db);
            let line = format!("storlab {}", args.join(" "));
            eprintln!(
                "  run {}/{}: storlab {}",
                i + 1,
                cell.run.len(),
                words.join(" ")
            );
            let mut c = Command::new(&exe);
            // A kill -9 of the campaign ends its storlab child too.
            storlab_host::os::die_with_parent(&mut c).args(&args);
            run_logged(c, &line, log, stop, Group::No, None)
                .map_err(|e| e.into_status(format!("`{line}`")))?;
        }
        Ok(())
    }

    /// The comparison table across cells and the optional HTML report.
    /// The comparison (table or JSON document) and the report; `stopped`:
    /// the campaign was interrupted (no report: `--resume` writes it).
    fn summarise(
        &self,
        id: &str,
        dir: &Dir,
        c: &Campaign,
        state: &State,
        store: &Store,
        stopped: bool,
    ) -> Result<Outcome> {
        let mut all_runs: Vec<(String, StoredRun)> = Vec::new();
        for cell in &c.cells {
            for r in stored(store, id, &cell.name) {
                all_runs.push((cell.name.clone(), r));
            }
        }
        let (runs, notes) = latest_of_each(all_runs);
        for n in &notes {
            eprintln!("storlab: note: {n}");
        }
        let rows = comparison_rows(c, &runs);
        let missing = missing_rows(c, state, &runs, &rows, id);
        let failed = failed_cells(c, state);
        if let Some(path) = self.report.as_ref().filter(|_| !stopped) {
            let all: Vec<StoredRun> = runs.iter().map(|(_, r)| r.clone()).collect();
            let base = runs.iter().position(|(cell, _)| *cell == c.baseline);
            // Under the same rules as before the first cell, checked again
            // now that the file is written.
            crate::commands::common::check_output_path(
                path,
                &self.db.db,
                self.force,
                crate::commands::common::OutputKind::HtmlReport,
            )?
            .write(storlab_report::html_report(&all, base).as_bytes())?;
        }
        if self.is_json() {
            crate::output::print_json(&ResultDoc {
                id,
                dir: &dir.path,
                name: &c.name,
                baseline: &c.baseline,
                cells: cell_docs(c, state, &runs, dir),
                comparison: &rows,
                missing: &missing,
                notes: &notes,
                report: self.report.as_deref().filter(|_| !stopped),
            })?;
        } else {
            let out = result_text(
                id,
                c,
                (&rows, &missing),
                (&failed, &notes),
                &dir.path,
                self.report.as_deref(),
            );
            crate::output::print(&out)?;
        }
        Ok(if failed.is_empty() {
            Outcome::Ok
        } else {
            Outcome::Failed
        })
    }
}

/// What went wrong with one command.
enum CmdError {
    /// It could not start or exited non-zero.
    Failed(String),
    /// A signal asked the campaign to stop while it ran.
    Interrupted,
    /// It ran past its time limit and was stopped.
    TimedOut(Duration),
}

impl CmdError {
    fn message(&self) -> String {
        match self {
            CmdError::Failed(m) => m.clone(),
            CmdError::Interrupted => "interrupted".into(),
            CmdError::TimedOut(t) => format!(
                "still running after {} s (teardown_timeout), so it and every process it started \
                 were stopped",
                t.as_secs()
            ),
        }
    }
    fn into_status(self, what: String) -> (CellStatus, String) {
        match self {
            CmdError::Interrupted => (CellStatus::Interrupted, format!("{what}: interrupted")),
            e => (CellStatus::Failed, format!("{what}: {}", e.message())),
        }
    }
}

/// How the teardown of a cell went.
struct Teardown {
    /// The first command that failed, and why.
    failed: Option<String>,
    /// A command ran past the timeout (the rest were not run).
    hung: bool,
}

/// The cell's teardown commands, each bounded by `timeout`; run also after
/// a stop request (they are not interrupted by one).
fn teardown(cell: &Cell, log: &mut std::fs::File, timeout: Duration) -> Teardown {
    let mut end = Teardown {
        failed: None,
        hung: false,
    };
    for cmd in &cell.teardown {
        if let Err(e) = shell(cmd, cell, log, &Stop::none(), Some(timeout)) {
            let hung = matches!(e, CmdError::TimedOut(_));
            let msg = format!("teardown `{cmd}`: {}", e.message());
            if hung {
                // The hang is the news, not an earlier failure.
                end.failed = Some(msg);
                end.hung = true;
                break;
            }
            end.failed.get_or_insert(msg);
        }
    }
    end
}

/// A setup or teardown command: `sh -c`, in a process group of its own
/// (a stop or a timeout ends everything it started), dying with storlab,
/// the cell's matrix values, name and target in its environment.
fn shell(
    cmd: &str,
    cell: &Cell,
    log: &mut std::fs::File,
    stop: &Stop,
    timeout: Option<Duration>,
) -> Result<(), CmdError> {
    let mut c = Command::new("sh");
    c.args(["-c", cmd])
        .env("STORLAB_CELL", &cell.name)
        .env("STORLAB_TARGET", &cell.target);
    for (k, v) in &cell.matrix {
        c.env(matrix_env(k), v);
    }
    child::own_group(storlab_host::os::die_with_parent(&mut c));
    // The values the command reads from its environment, for the reader.
    let env: Vec<String> = cell
        .matrix
        .iter()
        .map(|(k, v)| format!("{}={v:?}", matrix_env(k)))
        .collect();
    let header = if env.is_empty() {
        format!("$ {cmd}")
    } else {
        format!("$ {cmd}   (with {})", env.join(" "))
    };
    run_logged(c, &header, log, stop, Group::Own, timeout)
}

/// Whether a child leads a process group of its own.
#[derive(Clone, Copy, PartialEq)]
enum Group {
    /// Signals go to the whole group (setup and teardown commands).
    Own,
    /// Signals go to the child (a storlab run; it stops its workers).
    No,
}

/// How long a stopped command has after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// Run `c` with its output appended to `log` under a header line; a stop
/// request is passed on to it (SIGTERM; SIGKILL if it is still there
/// [`KILL_GRACE`] later) and waited for; so is running past `timeout`.
fn run_logged(
    mut c: Command,
    header: &str,
    log: &mut std::fs::File,
    stop: &Stop,
    group: Group,
    timeout: Option<Duration>,
) -> Result<(), CmdError> {
    let when = storlab_types::time::now_rfc3339();
    let _ = writeln!(log, "# {when} {header}");
    let _ = log.flush();
    let out = log
        .try_clone()
        .map_err(|e| CmdError::Failed(format!("log: {e}")))?;
    let err = log
        .try_clone()
        .map_err(|e| CmdError::Failed(format!("log: {e}")))?;
    let mut running = c
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| CmdError::Failed(format!("cannot start: {e}")))?;
    let started = std::time::Instant::now();
    let pid = running.id();
    let signal = |sig: i32| match group {
        Group::Own => child::signal_group(pid, sig),
        Group::No => terminate(pid, sig),
    };
    let mut signalled: Option<std::time::Instant> = None;
    let mut timed_out = false;
    let status = loop {
        match running.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(CmdError::Failed(format!("waiting: {e}"))),
        }
        if signalled.is_none() {
            if stop.requested() {
                signalled = Some(std::time::Instant::now());
            } else if timeout.is_some_and(|t| started.elapsed() >= t) {
                timed_out = true;
                signalled = Some(std::time::Instant::now());
            }
            if signalled.is_some() {
                // A terminal's Ctrl-C reaches a storlab child too; a
                // SIGTERM sent to the campaign alone is passed on, and a
                // setup command's group is not in the terminal's.
                signal(libc::SIGTERM);
            }
        } else if signalled.is_some_and(|t| t.elapsed() >= KILL_GRACE) {
            signal(libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if group == Group::Own && signalled.is_some() {
        // What the command started and left behind goes with it.
        child::signal_group(pid, libc::SIGKILL);
    }
    let _ = writeln!(log, "# exit {status}");
    if let (true, Some(t)) = (timed_out, timeout) {
        let _ = writeln!(log, "# stopped: still running after {} s", t.as_secs());
        return Err(CmdError::TimedOut(t));
    }
    if stop.requested() {
        return Err(CmdError::Interrupted);
    }
    if status.success() {
        Ok(())
    } else {
        Err(CmdError::Failed(format!(
            "exited with {status} (see the log)"
        )))
    }
}

/// Send `sig` to a child process (SIGTERM: it stops as after Ctrl-C,
/// keeping its results).
fn terminate(pid: u32, sig: i32) {
    if let Ok(pid) = i32::try_from(pid) {
        // `pid` is our own child, not yet reaped (try_wait said it was
        // running), so the id cannot be reused.
        let _ = storlab_host::os::kill(pid, sig);
    }
}

/// Every cell's run words parsed as the child `storlab` will parse them
/// (the same clap definitions), with the profile and job file they name
/// read: a mistake is reported before the first setup command runs, not
/// after it rebuilt the storage.
fn check_runs(c: &Campaign, id: &str, db: &Path) -> Result<()> {
    for cell in &c.cells {
        for (i, words) in cell.run.iter().enumerate() {
            let line = format!("storlab {}", words.join(" "));
            let args = child_args(id, cell, i, db);
            let argv = std::iter::once("storlab").chain(args.iter().map(String::as_str));
            let cli = crate::Cli::try_parse_from(argv).map_err(|e| {
                let text = e.render().to_string();
                anyhow::anyhow!(
                    "cell {}: `{line}` would fail: {} (nothing was run)",
                    cell.name,
                    text.lines()
                        .next()
                        .unwrap_or_default()
                        .trim_start_matches("error: ")
                )
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
            let what = |e: anyhow::Error| {
                anyhow::anyhow!(
                    "cell {}: `{line}` would fail: {e:#} (nothing was run)",
                    cell.name
                )
            };
            if let Some(w) = workload {
                // A value the option table refuses (the command's error).
                w.spec().map_err(|e| what(e.into()))?;
            }
            if let Some(p) = profile {
                crate::commands::workload::find_profile(p).map_err(what)?;
            }
            if let Some(j) = job {
                std::fs::read_to_string(j)
                    .with_context(|| format!("cannot read the job file {}", j.display()))
                    .and_then(|t| Ok(storlab_bench::JobFile::parse(&t, j)?))
                    .map_err(what)?;
            }
        }
    }
    Ok(())
}
