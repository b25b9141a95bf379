//! The one loop over a sweep's points, whatever runs them: `sweep`'s
//! points in this process ([`super::run_points`]), a campaign's cells as
//! child processes (`storlab_campaign`) and the client counts × repeats of
//! a multi-client bench (`storlab_cluster`). What they share is here: the
//! points in order, a point finished by an earlier attempt skipped
//! (`--resume`, [`SweepEvent::PointResumed`]), a stop request ending the
//! sweep after the point running (never in the middle of one), a failed
//! point going on or ending the sweep as the [`OnFailure`] policy says,
//! each point's place and the time left handed to the front end's
//! [`Progress`], and the totals. Running a point is the caller's
//! ([`Points::run`]).

use super::{PointInfo, Progress, SweepEvent, time_left};
use std::time::Instant;

/// Where a point stands before the sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// It is to run.
    ToRun,
    /// An earlier attempt finished it: skipped.
    Finished,
    /// It failed before it could run (it could not be planned): counted
    /// as one of the points to run when the sweep starts, recorded by
    /// [`Points::prepare`], never run.
    Failed,
}

/// How one point ended, for the sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It ran to its end: the sweep goes on.
    Done,
    /// It failed (the error, for [`SweepEvent::PointFailed`]): the sweep
    /// goes on or stops as the [`OnFailure`] policy says.
    Failed(String),
    /// It was interrupted: the sweep stops after it.
    Stopped,
}

/// What a failed point does to the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The other points still run (`sweep`, campaigns).
    GoOn,
    /// No other point runs (a multi-client bench: every rank stops).
    Stop,
}

/// The points of a sweep, as the loop sees them.
pub trait Points {
    /// Why the sweep cannot go on (it ends at once with it).
    type Error;
    /// Each point's label, in order (a point's index is its place here).
    fn labels(&self) -> Vec<String>;
    /// Where point `index` stands before the sweep runs.
    fn before(&mut self, index: usize) -> Before;
    /// The seconds point `index` is planned to take, when known (for the
    /// time left).
    fn planned_secs(&self, _index: usize) -> Option<f64> {
        None
    }
    /// Called once the sweep is told started, before any point: what
    /// every point shares is made ready (its warnings told). False: no
    /// point is run.
    fn prepare(&mut self, _progress: &mut dyn Progress) -> Result<bool, Self::Error> {
        Ok(true)
    }
    /// A stop was asked for by the points themselves (checked before each
    /// point, with the stop request).
    fn halted(&self) -> bool {
        false
    }
    /// Run point `info.index` (told first as [`SweepEvent::PointStarting`]).
    fn run(
        &mut self,
        info: &PointInfo,
        progress: &mut dyn Progress,
    ) -> Result<Outcome, Self::Error>;
}

/// What the loop did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Driven {
    pub points: usize,
    /// Finished by an earlier attempt, not run again.
    pub skipped: usize,
    /// Run now (to their end, or the one interrupted).
    pub ran: usize,
    /// Run now and failed.
    pub failed: usize,
    /// A point was interrupted or a stop was requested: points are left.
    pub interrupted: bool,
    /// A point failed under [`OnFailure::Stop`]: points are left.
    pub stopped_on_failure: bool,
}

/// Run `points` in order under `sweep_id`: a finished one is skipped, the
/// others run one after another until one is interrupted, `stop` says a
/// stop was requested (checked before each point and after it) or a point
/// fails under [`OnFailure::Stop`]. An error from a point ends the sweep
/// with that error.
pub fn drive<P: Points + ?Sized>(
    sweep_id: &str,
    points: &mut P,
    on_failure: OnFailure,
    progress: &mut dyn Progress,
    stop: &dyn Fn() -> bool,
) -> Result<Driven, P::Error> {
    let labels = points.labels();
    let before: Vec<Before> = (0..labels.len()).map(|i| points.before(i)).collect();
    let mut totals = Driven {
        points: labels.len(),
        ..Default::default()
    };
    progress.event(SweepEvent::Started {
        sweep_id,
        points: labels.len(),
        to_run: before.iter().filter(|b| **b != Before::Finished).count(),
    });
    if !points.prepare(progress)? {
        return Ok(totals);
    }
    let planned: Vec<Option<f64>> = (0..labels.len())
        .filter(|i| before[*i] == Before::ToRun)
        .map(|i| points.planned_secs(i))
        .collect();
    let to_run = planned.len();
    let mut walls: Vec<f64> = Vec::new();
    for (index, label) in labels.into_iter().enumerate() {
        let mut info = PointInfo {
            label,
            index,
            points: totals.points,
            nth: totals.ran,
            to_run,
            left_s: time_left(&walls, &planned[totals.ran.min(to_run)..]),
        };
        match before[index] {
            Before::ToRun => {}
            Before::Failed => continue,
            Before::Finished => {
                totals.skipped += 1;
                info.left_s = None;
                progress.event(SweepEvent::PointResumed(&info));
                continue;
            }
        }
        if stop() || points.halted() {
            totals.interrupted = true;
            break;
        }
        progress.event(SweepEvent::PointStarting(&info));
        let t0 = Instant::now();
        let outcome = points.run(&info, progress)?;
        walls.push(t0.elapsed().as_secs_f64());
        totals.ran += 1;
        if let Outcome::Failed(error) = &outcome {
            totals.failed += 1;
            progress.event(SweepEvent::PointFailed {
                label: &info.label,
                error,
            });
        }
        if outcome == Outcome::Stopped || stop() {
            totals.interrupted = true;
            break;
        }
        if matches!(outcome, Outcome::Failed(_)) && on_failure == OnFailure::Stop {
            totals.stopped_on_failure = true;
            break;
        }
    }
    Ok(totals)
}

/// The live side for a sweep nobody watches (the multi-client bench tells
/// its own front end).
pub struct Silent;

impl Progress for Silent {
    fn event(&mut self, _: SweepEvent<'_>) {}
    fn point_running(&mut self, _: &PointInfo, _: &[String], _: &std::sync::Arc<crate::Control>) {}
    fn point_done(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Control;
    use std::cell::Cell;
    use std::sync::Arc;

    /// Points named a..e; `finished` ones are skipped, `unplanned` ones
    /// failed before the sweep; `stop_in` is interrupted; `fail_in` fails
    /// (the sweep may go on); `error_in` cannot go on.
    struct Fake<'a> {
        finished: Vec<usize>,
        unplanned: Vec<usize>,
        stop_in: Option<usize>,
        fail_in: Option<usize>,
        error_in: Option<usize>,
        ran: Vec<String>,
        runs: &'a Cell<usize>,
    }

    impl Points for Fake<'_> {
        type Error = String;
        fn labels(&self) -> Vec<String> {
            ["a", "b", "c", "d", "e"].map(String::from).to_vec()
        }
        fn before(&mut self, index: usize) -> Before {
            if self.finished.contains(&index) {
                Before::Finished
            } else if self.unplanned.contains(&index) {
                Before::Failed
            } else {
                Before::ToRun
            }
        }
        fn run(&mut self, info: &PointInfo, _: &mut dyn Progress) -> Result<Outcome, String> {
            self.runs.set(self.runs.get() + 1);
            self.ran.push(info.label.clone());
            if self.error_in == Some(info.index) {
                return Err(format!("{} hung", info.label));
            }
            Ok(if self.stop_in == Some(info.index) {
                Outcome::Stopped
            } else if self.fail_in == Some(info.index) {
                Outcome::Failed("no space".into())
            } else {
                Outcome::Done
            })
        }
    }

    #[derive(Default)]
    struct Told(Vec<String>);

    impl Progress for Told {
        fn event(&mut self, event: SweepEvent<'_>) {
            self.0.push(match event {
                SweepEvent::Started { points, to_run, .. } => format!("start {points} {to_run}"),
                SweepEvent::PointStarting(p) => format!("run {} {}/{}", p.label, p.nth, p.to_run),
                SweepEvent::PointResumed(p) => format!("skip {}", p.label),
                SweepEvent::PointFailed { label, error } => format!("failed {label}: {error}"),
                e => format!("{e:?}"),
            });
        }
        fn point_running(&mut self, _: &PointInfo, _: &[String], _: &Arc<Control>) {}
        fn point_done(&mut self) {}
    }

    fn fake(runs: &Cell<usize>) -> Fake<'_> {
        Fake {
            finished: vec![1],
            unplanned: Vec::new(),
            stop_in: None,
            fail_in: None,
            error_in: None,
            ran: Vec::new(),
            runs,
        }
    }

    #[test]
    fn finished_points_are_skipped_and_the_rest_run_in_order() {
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        let mut told = Told::default();
        let t = drive("c-1", &mut c, OnFailure::GoOn, &mut told, &|| false).unwrap();
        assert_eq!(c.ran, ["a", "c", "d", "e"]);
        assert_eq!(
            t,
            Driven {
                points: 5,
                skipped: 1,
                ran: 4,
                ..Default::default()
            }
        );
        assert_eq!(
            told.0,
            [
                "start 5 4",
                "run a 0/4",
                "skip b",
                "run c 1/4",
                "run d 2/4",
                "run e 3/4"
            ]
        );
    }

    #[test]
    fn an_unplanned_point_counts_at_the_start_and_never_runs() {
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.unplanned = vec![3];
        let mut told = Told::default();
        let t = drive("s-1", &mut c, OnFailure::GoOn, &mut told, &|| false).unwrap();
        assert_eq!(c.ran, ["a", "c", "e"]);
        assert_eq!((t.ran, t.skipped, t.failed), (3, 1, 0));
        assert_eq!(told.0[0], "start 5 4");
        assert_eq!(told.0[1], "run a 0/3");
    }

    #[test]
    fn an_interrupted_point_or_a_stop_request_ends_the_sweep_after_it() {
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.stop_in = Some(2);
        let t = drive(
            "c-1",
            &mut c,
            OnFailure::GoOn,
            &mut Told::default(),
            &|| false,
        )
        .unwrap();
        assert!(t.interrupted);
        assert_eq!(
            c.ran,
            ["a", "c"],
            "nothing starts after the interrupted one"
        );
        // A stop requested while the second point ran: it ends and is
        // kept, no other starts.
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.finished.clear();
        let stop = || runs.get() >= 2;
        let mut told = Told::default();
        let t = drive("c-1", &mut c, OnFailure::GoOn, &mut told, &stop).unwrap();
        assert!(t.interrupted);
        assert_eq!(c.ran, ["a", "b"]);
        assert_eq!(t.ran, 2);
        assert_eq!(told.0.last().map(String::as_str), Some("run b 1/5"));
    }

    #[test]
    fn a_failure_stops_the_sweep_under_stop_and_not_under_go_on() {
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.fail_in = Some(2);
        let mut told = Told::default();
        let t = drive("s-1", &mut c, OnFailure::GoOn, &mut told, &|| false).unwrap();
        assert_eq!(c.ran, ["a", "c", "d", "e"]);
        assert_eq!(
            (t.failed, t.stopped_on_failure, t.interrupted),
            (1, false, false)
        );
        assert!(told.0.contains(&"failed c: no space".to_string()));

        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.fail_in = Some(2);
        let t = drive(
            "m-1",
            &mut c,
            OnFailure::Stop,
            &mut Told::default(),
            &|| false,
        )
        .unwrap();
        assert_eq!(c.ran, ["a", "c"], "nothing runs after the failed point");
        assert_eq!(
            (t.failed, t.stopped_on_failure, t.interrupted),
            (1, true, false)
        );
    }

    #[test]
    fn an_error_ends_the_sweep_with_it() {
        let runs = Cell::new(0);
        let mut c = fake(&runs);
        c.error_in = Some(3);
        let e = drive(
            "c-1",
            &mut c,
            OnFailure::GoOn,
            &mut Told::default(),
            &|| false,
        )
        .unwrap_err();
        assert_eq!(e, "d hung");
        assert_eq!(c.ran, ["a", "c", "d"]);
    }
}
