//! Which phase of a run is compared with which phase of the baseline.
//!
//! The one rule, used by `compare`, `check` and the report:
//!
//! 1. **Name.** A phase with the baseline phase's name *and shape* (I/O
//!    pattern and block size or mix) is its partner.
//! 2. **Shape.** Otherwise the only phase left with the same shape (fio
//!    imports name their jobs freely).
//! 3. **Shape and setup.** Otherwise, among several of that shape, the only
//!    one that also has the same jobs, queue depth and cache mode.
//!
//! Each phase is used at most once, and name matches are made first (so a
//! shape match never steals a later phase's same-named partner). A
//! parameter named with `--vary` leaves the shape: `--vary bs` pairs a
//! 1 MiB `seqread` with a 4 KiB one. Anything else stays unmatched, and the
//! callers say so: a 1 MiB phase is never judged against a 4 KiB one.

use crate::Vary;
use serde::Serialize;
use storlab_types::{PhaseParams, PhaseResult};

/// How a pair was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Same name and shape.
    Name,
    /// The only phase left with the same shape.
    Shape,
    /// The only phase left with the same shape, jobs, depth and cache mode.
    ShapeAndSetup,
}

impl MatchedBy {
    /// How the pair was found, for a note (`None` for a match by name).
    pub fn note(self) -> Option<&'static str> {
        match self {
            MatchedBy::Name => None,
            MatchedBy::Shape => Some("the only phase with the same I/O pattern and block size"),
            MatchedBy::ShapeAndSetup => Some(
                "the only phase with the same I/O pattern, block size, jobs, queue depth and cache mode",
            ),
        }
    }
}

/// A run phase and its baseline partner (indices into the phase lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PhaseMatch {
    pub phase: usize,
    pub baseline_phase: usize,
    pub by: MatchedBy,
}

/// The result of [`match_phases`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Matching {
    /// In the baseline's phase order.
    pub pairs: Vec<PhaseMatch>,
    /// Run phases with no partner.
    pub unmatched: Vec<usize>,
    /// Baseline phases with no partner.
    pub unmatched_baseline: Vec<usize>,
}

impl Matching {
    /// The baseline partner of run phase `i`, if any.
    pub fn partner(&self, i: usize) -> Option<&PhaseMatch> {
        self.pairs.iter().find(|m| m.phase == i)
    }
}

fn same_shape(a: &PhaseParams, b: &PhaseParams, vary: &Vary) -> bool {
    (vary.contains("rw")
        || (a.rw == b.rw
            && (!a.rw.reads()
                || !a.rw.writes()
                || a.rwmixread == b.rwmixread
                || vary.contains("rwmixread"))))
        && (vary.contains("bs") || a.bs == b.bs)
}

fn same_setup(a: &PhaseParams, b: &PhaseParams, vary: &Vary) -> bool {
    (vary.contains("numjobs") || a.numjobs == b.numjobs)
        && (vary.contains("iodepth") || a.iodepth == b.iodepth)
        && (vary.contains("cache") || a.cache == b.cache)
}

/// Pair the phases of a run with the baseline's by the rule above. When
/// both lists are the same phases (the baseline compared with itself),
/// every phase is its own partner.
pub fn match_phases(run: &[PhaseResult], baseline: &[PhaseResult], vary: &Vary) -> Matching {
    let run: Vec<&PhaseParams> = run.iter().map(|p| &p.params).collect();
    let baseline: Vec<&PhaseParams> = baseline.iter().map(|p| &p.params).collect();
    match_params(&run, &baseline, vary)
}

/// Pair the job groups of two phases (their params, in order) by the same
/// rule: name and shape, else the only group of that shape, else the only
/// one with the same jobs, depth and cache mode. Indices are group indices.
pub fn match_groups(run: &[PhaseParams], baseline: &[PhaseParams], vary: &Vary) -> Matching {
    let run: Vec<&PhaseParams> = run.iter().collect();
    let baseline: Vec<&PhaseParams> = baseline.iter().collect();
    match_params(&run, &baseline, vary)
}

fn match_params(run: &[&PhaseParams], baseline: &[&PhaseParams], vary: &Vary) -> Matching {
    let mut partner: Vec<Option<(usize, MatchedBy)>> = vec![None; baseline.len()];
    let mut used = vec![false; run.len()];
    // 1. By name (and shape).
    for (bi, bp) in baseline.iter().enumerate() {
        if let Some(i) = (0..run.len())
            .find(|&i| !used[i] && run[i].name == bp.name && same_shape(run[i], bp, vary))
        {
            used[i] = true;
            partner[bi] = Some((i, MatchedBy::Name));
        }
    }
    // 2. and 3. By shape, then by shape and setup.
    for (bi, bp) in baseline.iter().enumerate() {
        if partner[bi].is_some() {
            continue;
        }
        let shaped: Vec<usize> = (0..run.len())
            .filter(|&i| !used[i] && same_shape(run[i], bp, vary))
            .collect();
        let found = match shaped.as_slice() {
            [one] => Some((*one, MatchedBy::Shape)),
            [] => None,
            many => {
                let set: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&i| same_setup(run[i], bp, vary))
                    .collect();
                match set.as_slice() {
                    [one] => Some((*one, MatchedBy::ShapeAndSetup)),
                    _ => None,
                }
            }
        };
        if let Some((i, by)) = found {
            used[i] = true;
            partner[bi] = Some((i, by));
        }
    }
    let mut m = Matching::default();
    for (bi, p) in partner.iter().enumerate() {
        match p {
            Some((i, by)) => m.pairs.push(PhaseMatch {
                phase: *i,
                baseline_phase: bi,
                by: *by,
            }),
            None => m.unmatched_baseline.push(bi),
        }
    }
    m.unmatched = (0..run.len()).filter(|i| !used[*i]).collect();
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{params, phase};
    use proptest::prelude::*;
    use storlab_types::RwMode;

    #[test]
    fn a_1mib_phase_is_never_matched_with_a_4kib_one() {
        let base = vec![phase(params("seqread", RwMode::Read, 4096, 1))];
        let run = vec![phase(params("seqread", RwMode::Read, 1 << 20, 1))];
        let m = match_phases(&run, &base, &Vary::default());
        assert!(m.pairs.is_empty());
        assert_eq!(m.unmatched, vec![0]);
        assert_eq!(m.unmatched_baseline, vec![0]);
        // ... unless block size is what is under study.
        let m = match_phases(&run, &base, &Vary::parse("bs").unwrap());
        assert_eq!(m.pairs.len(), 1);
        assert_eq!(m.pairs[0].by, MatchedBy::Name);
    }

    #[test]
    fn names_first_then_shape_then_setup() {
        let base = vec![
            phase(params("a", RwMode::RandRead, 4096, 1)),
            phase(params("b", RwMode::RandRead, 4096, 32)),
            phase(params("w", RwMode::Write, 1 << 20, 1)),
        ];
        let run = vec![
            phase(params("job2", RwMode::Write, 1 << 20, 1)),
            phase(params("x", RwMode::RandRead, 4096, 32)),
            phase(params("y", RwMode::RandRead, 4096, 1)),
            phase(params("b", RwMode::RandRead, 4096, 32)),
        ];
        let m = match_phases(&run, &base, &Vary::default());
        // b by name; a is one of x, y (two of that shape): by setup, y.
        let p = |bi: usize| m.pairs.iter().find(|p| p.baseline_phase == bi).copied();
        assert_eq!(p(1).unwrap().phase, 3);
        assert_eq!(p(1).unwrap().by, MatchedBy::Name);
        assert_eq!(p(0).unwrap().phase, 2);
        assert_eq!(p(0).unwrap().by, MatchedBy::ShapeAndSetup);
        assert_eq!(p(2).unwrap().phase, 0);
        assert_eq!(p(2).unwrap().by, MatchedBy::Shape);
        assert_eq!(m.unmatched, vec![1]);
    }

    #[test]
    fn groups_pair_by_name_and_shape_not_by_position() {
        let base = vec![
            params("dd-read", RwMode::Read, 1 << 20, 1),
            params("dd-write", RwMode::Write, 1 << 20, 1),
        ];
        // The same groups in the other order, one renamed.
        let run = vec![
            params("writers", RwMode::Write, 1 << 20, 1),
            params("dd-read", RwMode::Read, 1 << 20, 1),
        ];
        let m = match_groups(&run, &base, &Vary::default());
        let p = |bi: usize| m.pairs.iter().find(|p| p.baseline_phase == bi).copied();
        assert_eq!(p(0).unwrap().phase, 1);
        assert_eq!(p(0).unwrap().by, MatchedBy::Name);
        assert_eq!(p(1).unwrap().phase, 0);
        assert_eq!(p(1).unwrap().by, MatchedBy::Shape);
        // A group of another block size is nobody's partner.
        let run = vec![params("dd-read", RwMode::Read, 4096, 1)];
        let m = match_groups(&run, &base, &Vary::default());
        assert!(m.pairs.is_empty());
        assert_eq!(m.unmatched_baseline, vec![0, 1]);
    }

    #[test]
    fn ambiguous_shapes_stay_unmatched() {
        let base = vec![phase(params("a", RwMode::RandRead, 4096, 8))];
        let run = vec![
            phase(params("x", RwMode::RandRead, 4096, 1)),
            phase(params("y", RwMode::RandRead, 4096, 32)),
        ];
        let m = match_phases(&run, &base, &Vary::default());
        assert!(m.pairs.is_empty());
        // With the depth under study it is still ambiguous: two candidates.
        let m = match_phases(&run, &base, &Vary::parse("iodepth").unwrap());
        assert!(m.pairs.is_empty());
    }

    proptest! {
        #[test]
        fn every_phase_is_used_at_most_once_and_accounted_for(
            shapes in proptest::collection::vec((0u8..3, 0u8..3, 0u8..3), 0..6),
            bshapes in proptest::collection::vec((0u8..3, 0u8..3, 0u8..3), 0..6),
        ) {
            let mk = |v: &[(u8, u8, u8)]| -> Vec<PhaseResult> {
                v.iter().map(|&(n, rw, bs)| {
                    let rw = [RwMode::Read, RwMode::RandRead, RwMode::Write][rw as usize];
                    phase(params(&format!("p{n}"), rw, 4096 << bs, 1))
                }).collect()
            };
            let (run, base) = (mk(&shapes), mk(&bshapes));
            let m = match_phases(&run, &base, &Vary::default());
            let mut seen = std::collections::HashSet::new();
            for p in &m.pairs {
                prop_assert!(seen.insert(p.phase));
                prop_assert_eq!(run[p.phase].params.rw, base[p.baseline_phase].params.rw);
                prop_assert_eq!(&run[p.phase].params.bs, &base[p.baseline_phase].params.bs);
            }
            prop_assert_eq!(m.pairs.len() + m.unmatched.len(), run.len());
            prop_assert_eq!(m.pairs.len() + m.unmatched_baseline.len(), base.len());
            // The same list against itself pairs every phase with itself... or
            // with an identical twin.
            let me = match_phases(&run, &run, &Vary::default());
            prop_assert_eq!(me.pairs.len(), run.len());
        }
    }
}
