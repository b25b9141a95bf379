//! A bench run's record around the phases: the header saved before the
//! first phase ([`ResolvedJob::header`]), the final record once the
//! phases are done and the scratch files removed
//! ([`ResolvedJob::finish_record`]), and how the run ends ([`Verdict`]).
//! The command line only wires these to its store, its watcher and its
//! printer. When the store loses a run, [`write_fallback`] keeps its
//! record in a file.

use crate::{ResolvedJob, RunOutcome};
use std::path::PathBuf;
use storlab_types::time::now_rfc3339;
use storlab_types::{BenchReport, MonitorTimeline, RepeatInfo};

impl ResolvedJob {
    /// The run's record before any phase: this job's host and target,
    /// `started_at`, the `warnings` so far and a repeat's place in its
    /// series.
    pub fn header(
        &self,
        started_at: String,
        warnings: Vec<String>,
        repeat: Option<RepeatInfo>,
    ) -> BenchReport {
        BenchReport {
            started_at,
            warnings,
            repeat,
            ..BenchReport::new(self.host.clone(), self.target.info.clone())
        }
    }

    /// The most jobs any phase runs at once (the size of its
    /// [`crate::Control`]).
    pub fn max_jobs(&self) -> usize {
        self.phases
            .iter()
            .map(|p| p.numjobs as usize)
            .max()
            .unwrap_or(1)
    }

    /// Remove scratch files (also after a signal or a full disk) unless
    /// asked to `keep` them, and assemble the final record.
    pub fn finish_record(
        &self,
        header: BenchReport,
        outcome: RunOutcome,
        monitor: Option<MonitorTimeline>,
        keep: bool,
    ) -> BenchReport {
        let keep = keep && outcome.stop_reason.is_none();
        if !keep {
            self.target.cleanup();
        }
        let mut target = self.target.info.clone();
        target.kept = keep && target.created_by_storlab;
        let mut warnings = header.warnings.clone();
        warnings.extend(outcome.warnings);
        BenchReport {
            finished_at: now_rfc3339(),
            interrupted: outcome.stop_reason.is_some(),
            stop_reason: outcome.stop_reason,
            target,
            phases: outcome.phases,
            warnings,
            monitor,
            ..header
        }
    }
}

/// How a saved and reported run ends (the command line turns it into an
/// exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every phase ran to its end.
    Ok,
    /// `--verify` found this many bad blocks.
    VerifyFailed(u64),
    /// A signal stopped it.
    Signalled,
    /// It stopped early on a hard error (a full disk, an I/O error).
    StoppedEarly,
}

impl Verdict {
    /// The verdict on `report`; `signalled` when a signal was received.
    pub fn of(report: &BenchReport, signalled: bool) -> Verdict {
        let mismatches = report.verify_mismatches();
        if mismatches > 0 {
            Verdict::VerifyFailed(mismatches)
        } else if signalled {
            Verdict::Signalled
        } else if report.interrupted {
            Verdict::StoppedEarly
        } else {
            Verdict::Ok
        }
    }
}

/// The record could be written nowhere: each place tried and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the results anywhere ({0})")]
pub struct FallbackError(pub String);

/// Write `json` where nothing is lost: a new file in the working directory
/// (or, if that is not writable, the temporary directory), never over an
/// existing one. A file that could not be written whole (a full disk) is
/// removed, so no empty or cut-off `storlab-unsaved-*.json` is left
/// behind. Returns its path.
pub fn write_fallback(json: &str) -> Result<PathBuf, FallbackError> {
    let stamp = storlab_types::time::now_rfc3339().replace([':', '-'], "");
    let name = format!("storlab-unsaved-{stamp}-{}.json", std::process::id());
    let mut last_err = None;
    for dir in [PathBuf::from("."), std::env::temp_dir()] {
        let path = dir.join(&name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path);
        let r = file.and_then(|mut f| {
            use std::io::Write;
            let written = f
                .write_all(json.as_bytes())
                .and_then(|()| f.write_all(b"\n"))
                .and_then(|()| f.sync_all());
            if written.is_err() {
                // Ours (create_new): never leave it empty or cut off.
                let _ = std::fs::remove_file(&path);
            }
            written
        });
        match r {
            Ok(()) => return Ok(std::fs::canonicalize(&path).unwrap_or(path)),
            Err(e) => last_err = Some(format!("{}: {e}", path.display())),
        }
    }
    Err(FallbackError(last_err.unwrap_or_default()))
}
