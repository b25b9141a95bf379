//! The flat view every exporter and the comparison share: one [`Row`] per
//! run × phase × direction.

use serde::{Deserialize, Serialize};
use storlab_types::{DirStats, GroupResult, JobResult, PhaseParams, PhaseResult, StoredRun};

/// Which figures of a phase a row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read,
    Write,
    /// Read + write over the same window (only for mixed phases).
    Total,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Total => "total",
        }
    }

    /// The phase's figures for this direction.
    pub fn stats(self, phase: &PhaseResult) -> &DirStats {
        match self {
            Direction::Read => &phase.read,
            Direction::Write => &phase.write,
            Direction::Total => &phase.total,
        }
    }

    /// One job's figures for this direction; `None` for `Total`, which jobs
    /// do not record (their read and write windows differ).
    pub fn job_stats(self, job: &JobResult) -> Option<&DirStats> {
        match self {
            Direction::Read => Some(&job.read),
            Direction::Write => Some(&job.write),
            Direction::Total => None,
        }
    }

    /// The directions a phase reports: `read` if it reads, `write` if it
    /// writes, and `total` as well when it does both.
    pub fn of_phase(phase: &PhaseResult) -> Vec<Direction> {
        let rw = phase.params.rw;
        let mut v = Vec::with_capacity(3);
        if rw.reads() {
            v.push(Direction::Read);
        }
        if rw.writes() {
            v.push(Direction::Write);
        }
        if rw.reads() && rw.writes() {
            v.push(Direction::Total);
        }
        v
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run × phase × direction, borrowing from the runs; a phase of job
/// groups also has one row per group × direction (`group` set: its own
/// parameters, window and figures).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub run: &'a StoredRun,
    pub phase_index: usize,
    pub phase: &'a PhaseResult,
    pub direction: Direction,
    pub stats: &'a DirStats,
    pub group: Option<&'a GroupResult>,
}

impl Row<'_> {
    /// The phase's name, or `phase/group` for a group's row.
    pub fn label(&self) -> String {
        match self.group {
            Some(g) => format!("{}/{}", self.phase.params.name, g.name),
            None => self.phase.params.name.clone(),
        }
    }

    /// The parameters the row's figures come from: the group's own for a
    /// group's row.
    pub fn params(&self) -> &PhaseParams {
        self.group.map_or(&self.phase.params, |g| &g.params)
    }

    /// The window the row's rates are over.
    pub fn elapsed_ns(&self) -> u64 {
        self.group.map_or(self.phase.elapsed_ns, |g| g.elapsed_ns)
    }
}

/// The directions a group reports, as [`Direction::of_phase`].
fn group_directions(g: &GroupResult) -> Vec<Direction> {
    let rw = g.params.rw;
    let mut v = Vec::with_capacity(3);
    if rw.reads() {
        v.push(Direction::Read);
    }
    if rw.writes() {
        v.push(Direction::Write);
    }
    if rw.reads() && rw.writes() {
        v.push(Direction::Total);
    }
    v
}

/// Flatten runs into rows, in the order given: runs, then phases, then
/// read / write / total, then a phase's groups (each read / write / total).
pub fn rows(runs: &[StoredRun]) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for run in runs {
        for (phase_index, phase) in run.report.phases.iter().enumerate() {
            for direction in Direction::of_phase(phase) {
                out.push(Row {
                    run,
                    phase_index,
                    phase,
                    direction,
                    stats: direction.stats(phase),
                    group: None,
                });
            }
            for g in phase.groups.iter().flat_map(|g| &g.groups) {
                for direction in group_directions(g) {
                    out.push(Row {
                        run,
                        phase_index,
                        phase,
                        direction,
                        stats: match direction {
                            Direction::Read => &g.read,
                            Direction::Write => &g.write,
                            Direction::Total => &g.total,
                        },
                        group: Some(g),
                    });
                }
            }
        }
    }
    out
}
