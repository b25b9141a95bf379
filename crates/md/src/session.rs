//! One process's md run from the target to the final record, the steps
//! that are neither flags nor printing: storlab's own new directory in the
//! target (made only after every check), the run's header stored before
//! anything is measured (`begin`), each phase handed on as it finishes
//! (the front end stores it at once), the directory removed afterwards
//! (unless kept; always after a failure), and the final record.

use crate::{Control, MdError, MdFs, MdSpec, RankPhase, Solo, Tree, record};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;
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

impl std::fmt::Display for NotRemoved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot remove {}: {}; remove it by hand",
            self.dir.display(),
            self.error
        )
    }
}

/// The progress line of a running md job: each phase's name and items,
/// and the rate since the last look.
#[derive(Debug, Clone)]
pub struct LiveLine {
    names: Vec<(String, u64)>,
    last: Option<(usize, u64, Instant)>,
}

/// What the progress line shows now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// `[2/4] stat`.
    pub prefix: String,
    /// The running phase's items, and how many are done.
    pub length: u64,
    pub position: u64,
    /// `1200 of 5000 done   3000/s`.
    pub message: String,
}

impl LiveLine {
    pub fn new(spec: &MdSpec) -> LiveLine {
        let names = crate::plan(spec)
            .iter()
            .map(|p| (p.name(), spec.count(p.item)))
            .collect();
        LiveLine { names, last: None }
    }

    /// Where `control`'s run is at `now`.
    pub fn look(&mut self, control: &Control, now: Instant) -> Shown {
        let phase = control.phase.load(Ordering::Relaxed);
        let items = control.done.load(Ordering::Relaxed);
        let (name, total) = self.names.get(phase).cloned().unwrap_or_default();
        let rate = match self.last {
            Some((p, n, at)) if p == phase && items >= n => {
                Some((items - n) as f64 / now.duration_since(at).as_secs_f64().max(1e-9))
            }
            _ => None,
        };
        self.last = Some((phase, items, now));
        Shown {
            prefix: format!("[{}/{}] {name}", phase + 1, self.names.len()),
            length: total.max(1),
            position: items.min(total),
            message: format!(
                "{items} of {total} done{}",
                rate.map(|r| format!("   {r:.0}/s")).unwrap_or_default()
            ),
        }
    }
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
    use std::time::Duration;

    /// The line names the running phase and its items, and a rate only
    /// between two looks at the same phase.
    #[test]
    fn the_live_line_follows_the_phases_and_their_rate() {
        let (spec, _) = crate::job::build(&crate::job::MdFlags {
            files: Some(5000),
            ..Default::default()
        })
        .unwrap();
        let mut line = LiveLine::new(&spec);
        let control = Control::new();
        let t0 = Instant::now();
        control.done.store(1000, Ordering::Relaxed);
        let first = line.look(&control, t0);
        assert_eq!(
            first.prefix,
            format!("[1/{}] {}", line.names.len(), line.names[0].0)
        );
        assert_eq!((first.length, first.position), (5000, 1000));
        assert_eq!(first.message, "1000 of 5000 done");
        control.done.store(4000, Ordering::Relaxed);
        let later = line.look(&control, t0 + Duration::from_secs(1));
        assert_eq!(later.message, "4000 of 5000 done   3000/s");
        control.phase.store(1, Ordering::Relaxed);
        control.done.store(10, Ordering::Relaxed);
        let next = line.look(&control, t0 + Duration::from_secs(2));
        assert!(
            next.prefix.starts_with("[2/") && !next.message.contains("/s"),
            "{next:?}"
        );
    }

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
