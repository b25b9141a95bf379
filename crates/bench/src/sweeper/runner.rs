//! The sweep's points in this process, run through the sweeper's one
//! loop ([`super::drive()`]): the planned points run in order over one
//! prepared target (files laid out once, extended when a point needs
//! more), each stored as its own run through a [`PointSink`]; a point that
//! fails is recorded and the sweep goes on; a stop request ends it after
//! the point running, keeping what was measured. The front end supplies
//! the store ([`PointSink`]), the live line and the wording of what
//! happens ([`Progress`]) and the stop request (signals).

use super::drive::{Before, OnFailure, Outcome, Points, drive};
use super::{PointResult, SweepTotals, planned_secs, point_error};
use crate::jobspec::Job;
use crate::{
    Control, LayoutState, PrepareError, ResolvedJob, SafetyOptions, SweepPoint, run_with_layout,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use storlab_types::time::now_rfc3339;
use storlab_types::{BenchReport, HostInfo, PhaseResult, TargetInfo};

/// How a sweep runs: its id, the command line its runs record, the target
/// and what may be done to it.
#[derive(Debug, Clone, Default)]
pub struct SweepRun {
    pub sweep_id: String,
    /// The command line every point's run records.
    pub command_line: Vec<String>,
    /// The target given (a planned point's own target comes first).
    pub target: Option<PathBuf>,
    pub safety: SafetyOptions,
    /// Keep the scratch files afterwards (`--keep`).
    pub keep: bool,
    /// The host's name in the records (the configured label), if set.
    pub host_label: Option<String>,
}

/// What became of storing one point's record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    /// Its run in the store, when everything was saved.
    pub run_id: Option<i64>,
    /// What could not be saved, in order (empty: nothing was lost).
    pub failures: Vec<String>,
}

/// Where each point's run is stored (the front end's store and fallback
/// file).
pub trait PointSink {
    /// Start storing `point`'s run with its header. An error here means
    /// the store cannot be used at all: a point about to run ends the
    /// sweep with it.
    fn begin(&mut self, point: &SweepPoint, header: &BenchReport) -> Result<(), StoreError>;
    /// One phase of the current point finished.
    fn phase(&mut self, phase: &PhaseResult);
    /// Store the current point's whole record.
    fn finish(&mut self, report: &BenchReport) -> Saved;
    /// Keep a record the store could not take (its failures are in its
    /// warnings), so it is never lost.
    fn keep_unsaved(&mut self, point: &SweepPoint, report: &BenchReport);
}

/// Where a point is in the sweep, for the words around it.
#[derive(Debug, Clone)]
pub struct PointInfo {
    /// The point's parameters (`bs=4k,numjobs=2`).
    pub label: String,
    /// Its place among all the sweep's points (from 0) and their number.
    pub index: usize,
    pub points: usize,
    /// Its place among the points run now (from 0) and their number.
    pub nth: usize,
    pub to_run: usize,
    /// Seconds the sweep has left, when known.
    pub left_s: Option<f64>,
}

/// What the sweep tells as it goes (the front end words it).
#[derive(Debug, Clone)]
pub enum SweepEvent<'a> {
    /// The sweep starts: its points and how many are still to run.
    Started {
        sweep_id: &'a str,
        points: usize,
        to_run: usize,
    },
    /// A warning from preparing the target.
    Warning(&'a str),
    /// A point is about to run.
    PointStarting(&'a PointInfo),
    /// A point finished by an earlier attempt is skipped (a campaign's cell).
    PointResumed(&'a PointInfo),
    /// A point failed (not stopped by a signal); the sweep goes on.
    PointFailed { label: &'a str, error: &'a str },
    /// A point that could not be planned could not be recorded either.
    NotRecorded { label: &'a str, error: &'a str },
    /// Part of a failed point's record could not be saved.
    SaveFailed(&'a str),
}

impl SweepEvent<'_> {
    /// Whether it is progress (`-q` hides it), not a warning or an error.
    pub fn is_progress(&self) -> bool {
        matches!(
            self,
            SweepEvent::Started { .. }
                | SweepEvent::PointStarting(_)
                | SweepEvent::PointResumed(_)
                | SweepEvent::PointFailed { .. }
        )
    }
}

/// How `storlab sweep` words an event on standard error (after
/// `storlab: `); none for a warning (the front end's own words) and a
/// point resumed (not told).
pub fn sweep_line(event: &SweepEvent<'_>, sweep_id: &str) -> Option<String> {
    Some(match event {
        SweepEvent::Started {
            sweep_id,
            points,
            to_run,
        } => format!("sweep {sweep_id}: {points} points, {to_run} to run"),
        SweepEvent::PointStarting(p) => format!(
            "sweep {sweep_id}: point {}/{} ({} of {} to run) {}{}",
            p.index + 1,
            p.points,
            p.nth + 1,
            p.to_run,
            p.label,
            p.left_s
                .map(|s| format!(", about {} left", super::fmt_secs(s)))
                .unwrap_or_default()
        ),
        SweepEvent::PointFailed { label, error } => {
            format!("sweep point {label} failed: {error}; going on")
        }
        SweepEvent::NotRecorded { label, error } => {
            format!("error: cannot record failed point {label}: {error}")
        }
        SweepEvent::SaveFailed(f) => format!("error: {f}"),
        SweepEvent::Warning(_) | SweepEvent::PointResumed(_) => return None,
    })
}

impl PointInfo {
    /// The live line's name of one of the point's phases.
    pub fn phase_line(&self, phase: &str) -> String {
        format!(
            "point {}/{} {} {phase}{}",
            self.index + 1,
            self.points,
            self.label,
            self.left_s
                .map(|s| format!(" (sweep: ~{} left)", super::fmt_secs(s)))
                .unwrap_or_default()
        )
    }
}

/// The live side of a sweep: its events and the progress line of the
/// point running.
pub trait Progress {
    fn event(&mut self, event: SweepEvent<'_>);
    /// A point's phases (`phases`: their names) start on `control`; the
    /// live line runs until [`Progress::point_done`].
    fn point_running(&mut self, point: &PointInfo, phases: &[String], control: &Arc<Control>);
    fn point_done(&mut self);
}

/// Why a sweep could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The target could not be prepared.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// A point's run could not be started in the store.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The store refused to start a point's run (the front end's words for
/// why, its causes included).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// Run the `todo` points (each with its place in `results`) of a sweep
/// over one target through the sweeper's loop ([`drive()`], a failed point
/// going on); points that could not be planned (an error in `results`)
/// are recorded as failed first. `stop` says whether a stop was requested
/// (a signal). Fills `results` and returns the totals.
pub fn run_points(
    run: &SweepRun,
    results: &mut [PointResult],
    todo: Vec<(usize, Job)>,
    sink: &mut dyn PointSink,
    progress: &mut dyn Progress,
    stop: &dyn Fn() -> bool,
) -> Result<SweepTotals, SweepError> {
    let started = Instant::now();
    let mut totals = SweepTotals {
        sweep_id: run.sweep_id.clone(),
        points: results.len(),
        page_cache_bytes: storlab_host::meminfo("MemAvailable"),
        ..Default::default()
    };
    let mut planned: Vec<Option<Job>> = results.iter().map(|_| None).collect();
    for (i, job) in todo {
        planned[i] = Some(job);
    }
    let mut points = InProcess {
        run,
        results,
        planned,
        sink,
        stop,
        job: None,
        control: None,
        layout: None,
        measured_ns: 0,
        mem_total_bytes: 0,
    };
    let outcome = drive(&run.sweep_id, &mut points, OnFailure::GoOn, progress, stop);
    let interrupted = outcome.as_ref().is_ok_and(|d| d.interrupted);
    if let Some(job) = &points.job
        && (!run.keep || interrupted)
    {
        job.target.cleanup();
    }
    let driven = outcome?;
    totals.interrupted = driven.interrupted;
    totals.mem_total_bytes = points.mem_total_bytes;
    totals.measured_ns = points.measured_ns;
    if let Some(layout) = &points.layout {
        totals.layout_bytes = layout.bytes;
        totals.layout_ns = layout.ns;
    }
    totals.failed = points.results.iter().filter(|r| r.error.is_some()).count();
    totals.wall_ns = started.elapsed().as_nanos() as u64;
    Ok(totals)
}

/// A point's run header: what every record of the sweep starts with.
fn header(
    run: &SweepRun,
    host: &HostInfo,
    target: &TargetInfo,
    warnings: Vec<String>,
) -> BenchReport {
    // The one constructor, with the sweep's command line and warnings.
    BenchReport {
        command_line: run.command_line.clone(),
        warnings,
        ..BenchReport::new(host.clone(), target.clone())
    }
}

/// Store a point that failed before it could run; its run id when stored.
fn record_failure(
    run: &SweepRun,
    sink: &mut dyn PointSink,
    progress: &mut dyn Progress,
    point: &SweepPoint,
    error: &str,
    host: &HostInfo,
    target: &TargetInfo,
) -> Option<i64> {
    let mut report = header(run, host, target, Vec::new());
    report.finished_at = now_rfc3339();
    report.interrupted = true;
    report.stop_reason = Some(format!("sweep point failed: {error}"));
    let label = point.label();
    if let Err(e) = sink.begin(point, &report) {
        progress.event(SweepEvent::NotRecorded {
            label: &label,
            error: &e.0,
        });
        return None;
    }
    let saved = sink.finish(&report);
    for f in &saved.failures {
        progress.event(SweepEvent::SaveFailed(f));
    }
    saved.run_id
}

/// A sweep's points run in this process over one prepared target, as the
/// sweeper's loop sees them.
struct InProcess<'a, 'b> {
    run: &'a SweepRun,
    results: &'b mut [PointResult],
    /// Each result's planned job, taken when it runs (none: resumed or
    /// failed to plan).
    planned: Vec<Option<Job>>,
    sink: &'b mut dyn PointSink,
    stop: &'b dyn Fn() -> bool,
    /// The target prepared for every point (files sized for the largest).
    job: Option<ResolvedJob>,
    control: Option<Arc<Control>>,
    layout: Option<LayoutState>,
    measured_ns: u64,
    mem_total_bytes: u64,
}

impl Points for InProcess<'_, '_> {
    type Error = SweepError;

    fn labels(&self) -> Vec<String> {
        self.results.iter().map(|r| r.point.label()).collect()
    }

    fn before(&mut self, index: usize) -> Before {
        let r = &self.results[index];
        if r.resumed {
            Before::Finished
        } else if self.planned[index].is_some() {
            Before::ToRun
        } else {
            Before::Failed
        }
    }

    fn planned_secs(&self, index: usize) -> Option<f64> {
        self.planned[index]
            .as_ref()
            .and_then(|p| planned_secs(&p.phases))
    }

    /// One target for every point (files sized for the largest); points
    /// that could not be planned are recorded as failed at once.
    fn prepare(&mut self, progress: &mut dyn Progress) -> Result<bool, SweepError> {
        let mut todo = self.planned.iter().flatten();
        let target = todo
            .next()
            .and_then(|p| p.target.clone())
            .or_else(|| self.run.target.clone());
        let all_phases: Vec<_> = self
            .planned
            .iter()
            .flatten()
            .flat_map(|p| p.phases.clone())
            .collect();
        if !all_phases.is_empty() {
            let mut job = crate::prepare(target.as_deref(), all_phases, self.run.safety)?;
            if let Some(label) = &self.run.host_label {
                job.host.hostname = label.clone();
            }
            for w in &job.warnings {
                progress.event(SweepEvent::Warning(w));
            }
            self.job = Some(job);
        }
        let host = self
            .job
            .as_ref()
            .map(|j| j.host.clone())
            .unwrap_or_else(storlab_host::host_info);
        self.mem_total_bytes = host.mem_total_bytes;
        let target_info = self
            .job
            .as_ref()
            .map(|j| j.target.info.clone())
            .unwrap_or_default();
        for r in self.results.iter_mut().filter(|r| r.error.is_some()) {
            let err = r.error.clone().unwrap_or_default();
            r.run_id = record_failure(
                self.run,
                self.sink,
                progress,
                &r.point,
                &err,
                &host,
                &target_info,
            );
        }
        let Some(job) = &self.job else {
            return Ok(false);
        };
        let max_jobs = job
            .phases
            .iter()
            .map(|p| p.numjobs as usize)
            .max()
            .unwrap_or(1);
        self.control = Some(Arc::new(Control::new(max_jobs)));
        self.layout = Some(LayoutState::new(job));
        Ok(true)
    }

    fn halted(&self) -> bool {
        self.control
            .as_ref()
            .is_some_and(|c| c.stop.load(Ordering::Relaxed))
    }

    fn run(
        &mut self,
        info: &PointInfo,
        progress: &mut dyn Progress,
    ) -> Result<Outcome, SweepError> {
        let i = info.index;
        let (Some(job), Some(control), Some(planned)) = (
            self.job.as_ref(),
            self.control.clone(),
            self.planned[i].take(),
        ) else {
            return Ok(Outcome::Done);
        };
        let point_job = ResolvedJob {
            phases: planned.phases,
            warnings: planned.warnings,
            ..job.clone()
        };
        let mut layout = self.layout.take().unwrap_or_else(|| LayoutState::new(job));
        let point = self.results[i].point.clone();
        let one = self.one(&point, info, &point_job, &control, &mut layout, progress);
        self.layout = Some(layout);
        let (report, saved, error) = one?;
        self.measured_ns += report.phases.iter().map(|p| p.elapsed_ns).sum::<u64>();
        let r = &mut self.results[i];
        r.run_id = saved;
        r.error = error.clone();
        r.report = Some(report);
        Ok(error.map_or(Outcome::Done, Outcome::Failed))
    }
}

impl InProcess<'_, '_> {
    /// Run one point as its own stored run. Returns its report, run id and
    /// the error that made it a failure (a signal does not).
    fn one(
        &mut self,
        point: &SweepPoint,
        info: &PointInfo,
        job: &ResolvedJob,
        control: &Arc<Control>,
        layout: &mut LayoutState,
        progress: &mut dyn Progress,
    ) -> Result<(BenchReport, Option<i64>, Option<String>), SweepError> {
        let header = header(self.run, &job.host, &job.target.info, job.warnings.clone());
        self.sink.begin(point, &header)?;
        let names: Vec<String> = job.phases.iter().map(|p| p.name.clone()).collect();
        progress.point_running(info, &names, control);
        let sink = &mut *self.sink;
        let outcome = run_with_layout(job, control, layout, |ph| sink.phase(ph));
        progress.point_done();
        let mut target = job.target.info.clone();
        target.kept = self.run.keep && target.created_by_storlab;
        let mut report = BenchReport {
            finished_at: now_rfc3339(),
            interrupted: outcome.stop_reason.is_some(),
            stop_reason: outcome.stop_reason.clone(),
            target,
            phases: outcome.phases,
            ..header
        };
        report.warnings.extend(outcome.warnings);
        let saved = self.sink.finish(&report);
        if !saved.failures.is_empty() {
            // A record that could not be stored is kept elsewhere.
            report.warnings.extend(saved.failures.iter().cloned());
            self.sink.keep_unsaved(point, &report);
        }
        let error = point_error(
            &report,
            outcome.stop_reason.as_deref(),
            (self.stop)(),
            &saved.failures,
        );
        Ok((report, saved.run_id, error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Vary, expand_sweep, spec_from_pairs};
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;

    /// A store in memory: every record finished, and what it refuses.
    #[derive(Default)]
    struct FakeSink {
        next_id: i64,
        begun: Vec<String>,
        phases: usize,
        finished: Vec<BenchReport>,
        unsaved: Vec<(String, BenchReport)>,
        /// Labels of points whose record the store refuses.
        refuse: Vec<String>,
        current: String,
    }

    impl PointSink for FakeSink {
        fn begin(&mut self, point: &SweepPoint, _: &BenchReport) -> Result<(), StoreError> {
            self.current = point.label();
            self.begun.push(point.label());
            Ok(())
        }
        fn phase(&mut self, _: &PhaseResult) {
            self.phases += 1;
        }
        fn finish(&mut self, report: &BenchReport) -> Saved {
            if self.refuse.contains(&self.current) {
                return Saved {
                    run_id: None,
                    failures: vec!["database is locked".into()],
                };
            }
            self.next_id += 1;
            self.finished.push(report.clone());
            Saved {
                run_id: Some(self.next_id),
                failures: Vec::new(),
            }
        }
        fn keep_unsaved(&mut self, point: &SweepPoint, report: &BenchReport) {
            self.unsaved.push((point.label(), report.clone()));
        }
    }

    /// Counts points and, after `stop_after` points ended, asks to stop.
    struct FakeProgress<'a> {
        done: &'a Cell<usize>,
        events: RefCell<Vec<String>>,
    }

    impl Progress for FakeProgress<'_> {
        fn event(&mut self, event: SweepEvent<'_>) {
            self.events.borrow_mut().push(format!("{event:?}"));
        }
        fn point_running(&mut self, _: &PointInfo, phases: &[String], _: &Arc<Control>) {
            assert!(!phases.is_empty());
        }
        fn point_done(&mut self) {
            self.done.set(self.done.get() + 1);
        }
    }

    /// Three planned points of sequential reads in a fresh directory.
    fn planned(dir: &std::path::Path) -> (Vec<PointResult>, Vec<(usize, Job)>) {
        let points = expand_sweep(&[Vary::parse("bs=4k,8k,16k").unwrap()], false).unwrap();
        super::super::plan_points(points, &BTreeMap::new(), |p| {
            let pairs: Vec<(&str, &str)> = p.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let mut spec = spec_from_pairs(pairs.into_iter().chain([
                ("rw", "read"),
                ("size", "64k"),
                ("direct", "0"),
            ]))?;
            spec.rw = Some(storlab_types::RwMode::Read);
            crate::jobspec::build(None, Some(dir), &spec)
        })
    }

    fn sweep_run(dir: &std::path::Path) -> SweepRun {
        SweepRun {
            sweep_id: "sw-test".into(),
            command_line: vec!["storlab".into(), "sweep".into()],
            target: Some(dir.to_path_buf()),
            ..Default::default()
        }
    }

    #[test]
    fn an_interrupt_midway_keeps_the_finished_points() {
        let d = tempfile::tempdir().unwrap();
        let (mut results, todo) = planned(d.path());
        assert_eq!(todo.len(), 3);
        let done = Cell::new(0);
        let mut progress = FakeProgress {
            done: &done,
            events: RefCell::default(),
        };
        let mut sink = FakeSink::default();
        // The stop request comes while the first point runs.
        let stop = || done.get() >= 1;
        let totals = run_points(
            &sweep_run(d.path()),
            &mut results,
            todo,
            &mut sink,
            &mut progress,
            &stop,
        )
        .unwrap();
        assert!(totals.interrupted, "{totals:?}");
        assert_eq!(totals.failed, 0, "a stopped sweep is not a failed one");
        assert_eq!(sink.begun, ["bs=4k"], "no point starts after the stop");
        assert_eq!(results[0].run_id, Some(1));
        let kept = results[0].report.as_ref().unwrap();
        assert_eq!(kept.phases.len(), 1, "the finished point keeps its phase");
        assert!(kept.phases[0].total.bw_bytes_per_s > 0.0);
        assert_eq!(sink.phases, 1);
        assert!(results[1].report.is_none() && results[2].report.is_none());
        assert!(results.iter().all(|r| r.error.is_none()));
        // Stopped early: the scratch files are removed even without --keep.
        assert!(
            std::fs::read_dir(d.path()).unwrap().next().is_none(),
            "scratch files left behind"
        );
    }

    #[test]
    fn a_record_the_store_refuses_is_a_failure_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let (mut results, todo) = planned(d.path());
        let done = Cell::new(0);
        let mut progress = FakeProgress {
            done: &done,
            events: RefCell::default(),
        };
        let mut sink = FakeSink {
            refuse: vec!["bs=8k".into()],
            ..Default::default()
        };
        let totals = run_points(
            &sweep_run(d.path()),
            &mut results,
            todo,
            &mut sink,
            &mut progress,
            &|| false,
        )
        .unwrap();
        assert!(!totals.interrupted);
        assert_eq!(totals.failed, 1, "{results:?}");
        assert_eq!(
            results[1].error.as_deref(),
            Some("not saved: database is locked")
        );
        assert_eq!(results[1].run_id, None);
        // The others went on and were stored.
        assert_eq!(results[0].run_id, Some(1));
        assert_eq!(results[2].run_id, Some(2));
        // Never silent: the record is kept elsewhere, naming why, and the
        // failure is told.
        assert_eq!(sink.unsaved.len(), 1);
        assert_eq!(sink.unsaved[0].0, "bs=8k");
        assert!(
            sink.unsaved[0]
                .1
                .warnings
                .iter()
                .any(|w| w.contains("database is locked"))
        );
        assert!(
            progress
                .events
                .borrow()
                .iter()
                .any(|e| e.contains("PointFailed") && e.contains("bs=8k")),
            "{:?}",
            progress.events
        );
    }

    #[test]
    fn an_unplannable_point_is_recorded_failed_and_the_rest_run() {
        let d = tempfile::tempdir().unwrap();
        let (mut results, mut todo) = planned(d.path());
        // The middle point could not be planned.
        todo.remove(1);
        results[1].error = Some("no such group".into());
        let done = Cell::new(0);
        let mut progress = FakeProgress {
            done: &done,
            events: RefCell::default(),
        };
        let mut sink = FakeSink::default();
        let totals = run_points(
            &sweep_run(d.path()),
            &mut results,
            todo,
            &mut sink,
            &mut progress,
            &|| false,
        )
        .unwrap();
        assert_eq!(totals.failed, 1);
        assert_eq!(done.get(), 2);
        // Recorded first, as a stopped run naming why.
        assert_eq!(sink.begun, ["bs=8k", "bs=4k", "bs=16k"]);
        let failed = &sink.finished[0];
        assert!(failed.interrupted);
        assert_eq!(
            failed.stop_reason.as_deref(),
            Some("sweep point failed: no such group")
        );
        assert_eq!(results[1].run_id, Some(1));
        assert!(results[0].report.is_some() && results[2].report.is_some());
    }
}

#[cfg(test)]
mod words {
    use super::*;

    /// The sweep's lines: progress (hidden by `-q`) and errors (never);
    /// a warning and a resumed point are not the sweep's to word.
    #[test]
    fn each_event_has_its_line() {
        let p = PointInfo {
            label: "bs=4k".into(),
            index: 1,
            points: 4,
            nth: 0,
            to_run: 3,
            left_s: Some(90.0),
        };
        let started = SweepEvent::Started {
            sweep_id: "sw-1",
            points: 4,
            to_run: 3,
        };
        let line = |e: &SweepEvent<'_>| sweep_line(e, "sw-1");
        assert_eq!(line(&started).unwrap(), "sweep sw-1: 4 points, 3 to run");
        assert_eq!(
            line(&SweepEvent::PointStarting(&p)).unwrap(),
            "sweep sw-1: point 2/4 (1 of 3 to run) bs=4k, about 1m30s left"
        );
        let failed = SweepEvent::PointFailed {
            label: "bs=4k",
            error: "x",
        };
        assert_eq!(
            line(&failed).unwrap(),
            "sweep point bs=4k failed: x; going on"
        );
        let lost = SweepEvent::SaveFailed("disk full");
        assert_eq!(line(&lost).unwrap(), "error: disk full");
        assert!(line(&SweepEvent::Warning("w")).is_none());
        assert!(line(&SweepEvent::PointResumed(&p)).is_none());
        assert!(started.is_progress() && failed.is_progress() && !lost.is_progress());
        assert_eq!(
            p.phase_line("read"),
            "point 2/4 bs=4k read (sweep: ~1m30s left)"
        );
    }
}
