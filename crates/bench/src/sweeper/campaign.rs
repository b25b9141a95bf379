//! The sweeper's loop for points that run as child processes: a
//! campaign's cells (each its setup commands, its child `storlab` runs and
//! its teardown), beside [`super::run_points`] for the points run in this
//! process. What the two share is here as there: the points in order, a
//! point finished by an earlier attempt skipped (`--resume`), a stop
//! request ending the sweep after the point running (never in the middle
//! of one), and each point's place and the time left handed to the front
//! end's [`Progress`] as [`SweepEvent`]s. Running a point is the caller's
//! ([`ChildPoints::run`]); the children store their own records.

use super::{PointInfo, Progress, SweepEvent, time_left};
use std::time::Instant;

/// How one point ended, for the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointEnd {
    /// It ran to its end (finished or failed): the sweep goes on.
    Next,
    /// It was interrupted: the sweep stops after it.
    Stopped,
}

/// The points of a sweep whose runs are child processes.
pub trait ChildPoints {
    /// Why the sweep cannot go on (it ends at once with it).
    type Error;
    /// Each point's label (a campaign's cell name), in order.
    fn labels(&self) -> Vec<String>;
    /// Whether point `index` was finished by an earlier attempt: it is
    /// skipped ([`SweepEvent::PointResumed`]).
    fn finished(&mut self, index: usize) -> bool;
    /// Run point `info.index` (told first as [`SweepEvent::PointStarting`]).
    fn run(&mut self, info: &PointInfo) -> Result<PointEnd, Self::Error>;
}

/// What a sweep of child-run points did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildTotals {
    pub points: usize,
    /// Finished by an earlier attempt, not run again.
    pub skipped: usize,
    /// Run now (to their end, or the one interrupted).
    pub ran: usize,
    /// A point was interrupted or a stop was requested: points are left.
    pub interrupted: bool,
}

/// Run the points of `points` in order under `sweep_id`: a finished one
/// is skipped, the others run one after another until one is interrupted
/// or `stop` says a stop was requested (checked before each point and
/// after it). An error from a point ends the sweep with that error.
pub fn run_children<P: ChildPoints>(
    sweep_id: &str,
    points: &mut P,
    progress: &mut dyn Progress,
    stop: &dyn Fn() -> bool,
) -> Result<ChildTotals, P::Error> {
    let labels = points.labels();
    let done: Vec<bool> = (0..labels.len()).map(|i| points.finished(i)).collect();
    let to_run = done.iter().filter(|d| !**d).count();
    let mut totals = ChildTotals {
        points: labels.len(),
        ..Default::default()
    };
    progress.event(SweepEvent::Started {
        sweep_id,
        points: labels.len(),
        to_run,
    });
    // Child runs have no planned time known here: the estimate starts
    // with the first point's wall time.
    let planned: Vec<Option<f64>> = vec![None; to_run];
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
        if done[index] {
            totals.skipped += 1;
            info.left_s = None;
            progress.event(SweepEvent::PointResumed(&info));
            continue;
        }
        if stop() {
            totals.interrupted = true;
            break;
        }
        progress.event(SweepEvent::PointStarting(&info));
        let t0 = Instant::now();
        let end = points.run(&info)?;
        walls.push(t0.elapsed().as_secs_f64());
        totals.ran += 1;
        if end == PointEnd::Stopped || stop() {
            totals.interrupted = true;
            break;
        }
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Control;
    use std::cell::Cell;
    use std::sync::Arc;

    /// Cells named a..e; `finished` ones are skipped; `stop_in` is
    /// interrupted; `fail_in` cannot go on.
    struct Cells<'a> {
        finished: Vec<usize>,
        stop_in: Option<usize>,
        fail_in: Option<usize>,
        ran: Vec<String>,
        runs: &'a Cell<usize>,
    }

    impl ChildPoints for Cells<'_> {
        type Error = String;
        fn labels(&self) -> Vec<String> {
            ["a", "b", "c", "d", "e"].map(String::from).to_vec()
        }
        fn finished(&mut self, index: usize) -> bool {
            self.finished.contains(&index)
        }
        fn run(&mut self, info: &PointInfo) -> Result<PointEnd, String> {
            self.runs.set(self.runs.get() + 1);
            self.ran.push(info.label.clone());
            if self.fail_in == Some(info.index) {
                return Err(format!("{} hung", info.label));
            }
            Ok(if self.stop_in == Some(info.index) {
                PointEnd::Stopped
            } else {
                PointEnd::Next
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
                e => format!("{e:?}"),
            });
        }
        fn point_running(&mut self, _: &PointInfo, _: &[String], _: &Arc<Control>) {}
        fn point_done(&mut self) {}
    }

    fn cells(runs: &Cell<usize>) -> Cells<'_> {
        Cells {
            finished: vec![1],
            stop_in: None,
            fail_in: None,
            ran: Vec::new(),
            runs,
        }
    }

    #[test]
    fn finished_points_are_skipped_and_the_rest_run_in_order() {
        let runs = Cell::new(0);
        let mut c = cells(&runs);
        let mut told = Told::default();
        let t = run_children("c-1", &mut c, &mut told, &|| false).unwrap();
        assert_eq!(c.ran, ["a", "c", "d", "e"]);
        assert_eq!(
            t,
            ChildTotals {
                points: 5,
                skipped: 1,
                ran: 4,
                interrupted: false
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
    fn an_interrupted_point_or_a_stop_request_ends_the_sweep_after_it() {
        let runs = Cell::new(0);
        let mut c = cells(&runs);
        c.stop_in = Some(2);
        let t = run_children("c-1", &mut c, &mut Told::default(), &|| false).unwrap();
        assert!(t.interrupted);
        assert_eq!(
            c.ran,
            ["a", "c"],
            "nothing starts after the interrupted one"
        );
        // A stop requested while the second point ran: it ends, no other
        // starts.
        let runs = Cell::new(0);
        let mut c = cells(&runs);
        c.finished.clear();
        let stop = || runs.get() >= 2;
        let t = run_children("c-1", &mut c, &mut Told::default(), &stop).unwrap();
        assert!(t.interrupted);
        assert_eq!(c.ran, ["a", "b"]);
        assert_eq!(t.ran, 2);
    }

    #[test]
    fn an_error_ends_the_sweep_with_it() {
        let runs = Cell::new(0);
        let mut c = cells(&runs);
        c.fail_in = Some(3);
        let e = run_children("c-1", &mut c, &mut Told::default(), &|| false).unwrap_err();
        assert_eq!(e, "d hung");
        assert_eq!(c.ran, ["a", "c", "d"]);
    }
}
