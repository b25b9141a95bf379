//! One process's md run from the target to the final record, the steps
//! that are neither flags nor printing: storlab's own new directory in the
//! target (made only after every check), the run's header stored before
//! anything is measured (`begin`), each phase handed on as it finishes
//! (the front end stores it at once), the directory removed afterwards
//! (unless kept; always after a failure), and the final record.

use crate::{Control, MdError, MdFs, MdSpec, RankPhase, Solo, Tree, record};
use std::path::{Path, PathBuf};
use storlab_bench::TargetError;
use storlab_types::time::now_rfc3339;
use storlab_types::{BenchReport, HostInfo, PhaseResult};

/// Why an md run could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum SessionError<E> {
    /// storlab's own directory could not be made in the target.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The run's header could not be stored (nothing was measured).
    #[error("{0}")]
    Begin(E),
    /// The run itself failed.
    #[error(transparent)]
    Md(#[from] MdError),
}

/// A directory that could not be removed (the front end words it).
#[derive(Debug)]
pub struct NotRemoved {
    pub dir: PathBuf,
    pub error: std::io::Error,
}

/// The record of an md run, with the directories left behind.
#[derive(Debug)]
pub struct SoloRun {
    pub report: BenchReport,
    pub not_removed: Vec<NotRemoved>,
}

/// Run `spec` in a new directory of `target` as one process. `begin`
/// stores the header and returns what ends with the run (the live line);
/// `on_phase` gets each phase's record as it finishes.
#[allow(clippy::too_many_arguments)]
pub fn run_solo<F: MdFs, E, D: FnOnce()>(
    fs: &F,
    spec: &MdSpec,
    tree: &Tree,
    target: &Path,
    host: HostInfo,
    control: &Control,
    keep: bool,
    begin: impl FnOnce(&BenchReport) -> Result<D, E>,
    mut on_phase: impl FnMut(&PhaseResult),
) -> Result<SoloRun, SessionError<E>> {
    let (run_dir, info) = storlab_bench::own_run_dir(target)?;
    let mut not_removed = Vec::new();
    let header = BenchReport::new(host, info);
    let done = match begin(&header) {
        Ok(d) => d,
        Err(e) => {
            not_removed.extend(remove_run_dir(&run_dir));
            return Err(SessionError::Begin(e));
        }
    };
    let mut phases = Vec::new();
    let result = crate::run(fs, spec, &run_dir, &Solo, control, |p| {
        let ph = record::phase_result(spec, tree, std::slice::from_ref(p), now_rfc3339());
        on_phase(&ph);
        phases.push(ph);
    });
    done();
    // A stopped run is never kept: its half-made tree is no result.
    let keep = keep && control.stop_reason().is_none();
    if !keep || result.is_err() {
        not_removed.extend(remove_run_dir(&run_dir));
    }
    let ran = result?;
    Ok(SoloRun {
        report: final_report(header, phases, &ran, control, keep),
        not_removed,
    })
}

/// Remove storlab's own directory and everything the run made in it.
pub fn remove_run_dir(dir: &Path) -> Option<NotRemoved> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Some(NotRemoved {
            dir: dir.to_path_buf(),
            error: e,
        }),
        _ => None,
    }
}

/// The final record: the header, the phases, and why the run stopped (a
/// stop request, or the first rank's failed operation).
pub fn final_report(
    header: BenchReport,
    phases: Vec<PhaseResult>,
    ran: &[RankPhase],
    control: &Control,
    keep: bool,
) -> BenchReport {
    let mut target = header.target.clone();
    target.kept = keep;
    let failed = ran.iter().find_map(|p| p.error.clone());
    let stop_reason = control.stop_reason().or(failed);
    BenchReport {
        finished_at: now_rfc3339(),
        interrupted: stop_reason.is_some(),
        stop_reason,
        target,
        phases,
        ..header
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_header_leaves_no_directory_and_a_run_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let spec = crate::job::build(&crate::job::MdFlags {
            files: Some(3),
            ..Default::default()
        })
        .unwrap();
        let control = Control::new();
        let refused = run_solo(
            &crate::Posix,
            &spec.0,
            &spec.1,
            d.path(),
            HostInfo::default(),
            &control,
            false,
            |_| Err::<fn(), _>(std::io::Error::other("db locked")),
            |_| {},
        );
        assert!(matches!(refused, Err(SessionError::Begin(_))));
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
        let mut seen = 0;
        let ran = run_solo(
            &crate::Posix,
            &spec.0,
            &spec.1,
            d.path(),
            HostInfo::default(),
            &control,
            false,
            |_| Ok::<_, std::io::Error>(|| {}),
            |_| seen += 1,
        )
        .unwrap();
        assert!(seen > 0 && seen == ran.report.phases.len());
        assert!(!ran.report.interrupted, "{:?}", ran.report.stop_reason);
        assert!(ran.not_removed.is_empty());
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
    }
}
