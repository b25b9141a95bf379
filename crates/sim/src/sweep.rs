//! Run a solver over the values of one `--vary` key.

use crate::catalog::SimCatalog;
use crate::error::SimError;
use crate::model::Point;
use crate::scenario::{Scenario, Vary};
use crate::{analytic, des};
use serde::Serialize;

/// Which solver(s) to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    Analytic,
    Des,
    /// Both, side by side.
    Both,
}

/// One value of the varied key and what the solvers said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The varied key and value (`clients`, `16`); none without `--vary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub resolved: crate::scenario::Resolved,
    pub analytic: Option<Point>,
    pub des: Option<Point>,
}

impl SweepPoint {
    /// The point's answers: the analytic one, then the simulated one.
    pub fn solved(&self) -> Vec<&Point> {
        self.analytic.iter().chain(self.des.iter()).collect()
    }
}

/// Solve `scenario` at each value of `vary` (or once without it).
pub fn sweep(
    scenario: &Scenario,
    vary: Option<&Vary>,
    cat: &SimCatalog,
    solver: Solver,
) -> Result<Vec<SweepPoint>, SimError> {
    let cases: Vec<(Option<(String, String)>, Scenario)> = match vary {
        None => vec![(None, scenario.clone())],
        Some(v) => v
            .values
            .iter()
            .map(|x| Ok((Some((v.key.clone(), x.clone())), scenario.with(&v.key, x)?)))
            .collect::<Result<_, SimError>>()?,
    };
    let mut out = Vec::with_capacity(cases.len());
    for (kv, s) in cases {
        let r = s.resolve(cat)?;
        let analytic =
            matches!(solver, Solver::Analytic | Solver::Both).then(|| analytic::solve(&r));
        let des = match solver {
            Solver::Des | Solver::Both => Some(des::simulate(&r)?),
            Solver::Analytic => None,
        };
        let (key, value) = kv.map_or((None, None), |(k, v)| (Some(k), Some(v)));
        out.push(SweepPoint {
            key,
            value,
            resolved: r,
            analytic,
            des,
        });
    }
    Ok(out)
}
