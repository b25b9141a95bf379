//! `storlab-configdiff`: the rule `storlab compare`, `storlab check` and the
//! HTML report share for *what may be compared with what*.
//!
//! * [`match_phases`] pairs each phase of a run with a baseline phase
//!   (same name and shape, else the only phase of that shape; see
//!   [`matching`](mod@matching)). Both commands use it, so they never
//!   disagree about which phases belong together.
//! * [`differences`] lists every way two phases' configurations differ:
//!   every workload parameter (including ones added to
//!   [`storlab_types::PhaseParams`] later: they are found through serde),
//!   and the host, target, device and tool facts of their runs. The main
//!   type is [`Difference`].
//! * [`Vary`] is what the user declared to be under study
//!   (`--vary iodepth`); [`Judgement`] splits the differences into those under
//!   study and those that make a verdict meaningless. A figure may be called
//!   better or worse only when [`Judgement::comparable`] holds.
//!
//! * [`check`] is `storlab check`'s arithmetic over those pairs: figures
//!   against a baseline with a tolerance, and a verdict of "configuration
//!   differs" when the pairs are not comparable.
//!
//! A fact that one of the two runs did not record (an fio import has no
//! kernel version) is not counted as a difference: nothing is known to differ.
#![forbid(unsafe_code)]

pub mod check;
pub mod diff;
pub mod implied;
mod io500_score;
pub mod matching;
pub mod vary;

/// The store's test records, shared rather than copied (check's tests).
#[cfg(test)]
use storlab_testkit::records as store_testdata;

pub use diff::{Difference, Scope, differences, phase_differences, run_differences};
pub use matching::{MatchedBy, Matching, PhaseMatch, match_groups, match_phases};
pub use vary::{Vary, VaryError, known_keys};

use serde::Serialize;

/// The differences between two phases, split by what the user declared to
/// be under study.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Judgement {
    /// Differences in parameters named with `--vary`: what the comparison
    /// is about.
    pub under_study: Vec<Difference>,
    /// Every other difference: while any is left, no figure may be called
    /// better or worse.
    pub other: Vec<Difference>,
}

impl Judgement {
    /// Split `diffs` by `vary`.
    pub fn new(diffs: Vec<Difference>, vary: &Vary) -> Judgement {
        let (under_study, other) = diffs.into_iter().partition(|d| vary.contains(&d.key));
        Judgement { under_study, other }
    }

    /// Whether a verdict (better / worse / noise) is meaningful.
    pub fn comparable(&self) -> bool {
        self.other.is_empty()
    }

    /// Every difference, those under study first.
    pub fn all(&self) -> impl Iterator<Item = &Difference> {
        self.under_study.iter().chain(&self.other)
    }

    /// The parameter keys that stand in the way of a verdict, for a hint
    /// such as `--vary iodepth,bs`.
    pub fn blocking_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for d in &self.other {
            if !keys.contains(&d.key) {
                keys.push(d.key.clone());
            }
        }
        keys
    }
}

#[cfg(test)]
use storlab_testkit::json_records as testdata;
