//! md's ranks over a [`Comm`]: [`CommSync`] is `storlab_md`'s
//! [`RankSync`] for any communicator, and [`gather`] brings every rank's
//! figures of a phase, histogram included, to rank 0 for an exact merge.

pub mod run;

use crate::comm::Comm;
use serde::{Deserialize, Serialize};
use storlab_bench::DirCounter;
use storlab_md::{RankPhase, RankSync};

/// md's [`RankSync`] over a communicator (one implementation for MPI and
/// for in-process ranks).
#[derive(Debug)]
pub struct CommSync<C>(pub C);

impl<C: Comm> RankSync for CommSync<C> {
    fn rank(&self) -> u32 {
        self.0.rank()
    }
    fn ranks(&self) -> u32 {
        self.0.size()
    }
    fn barrier(&self) {
        self.0.barrier();
    }
    fn gather_all(&self, value: u64) -> Vec<u64> {
        self.0.all_gather_u64(&[value])
    }
    fn any(&self, flag: bool) -> bool {
        self.0.any(flag)
    }
}

/// One rank's figures as they travel to rank 0 (the histogram as its
/// recorded values and counts, so the merge is exact).
#[derive(Debug, Serialize, Deserialize)]
struct Wire {
    rank: u32,
    visited_rank: u32,
    planned: u64,
    bytes: u64,
    ops: u64,
    hist: Vec<(u64, u64)>,
    elapsed_ns: u64,
    window_ns: u64,
    user_ns: u64,
    sys_ns: u64,
    errors: Vec<(String, u64)>,
    error: Option<String>,
    stonewalled: bool,
    interrupted: bool,
}

/// Every rank's part of the phase just finished, at rank 0 (empty
/// elsewhere). A part that does not arrive intact becomes that rank's
/// error, never a panic.
pub fn gather<C: Comm>(comm: &C, p: &RankPhase) -> Vec<RankPhase> {
    let w = Wire {
        rank: comm.rank(),
        visited_rank: p.visited_rank,
        planned: p.planned,
        bytes: p.counter.bytes,
        ops: p.counter.ops,
        hist: p
            .counter
            .hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
        elapsed_ns: p.elapsed_ns,
        window_ns: p.window_ns,
        user_ns: p.user_ns,
        sys_ns: p.sys_ns,
        errors: p.errors.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        error: p.error.clone(),
        stonewalled: p.stonewalled,
        interrupted: p.interrupted,
    };
    let bytes = serde_json::to_vec(&w).unwrap_or_default();
    comm.gather_bytes(&bytes)
        .into_iter()
        .enumerate()
        .map(|(r, b)| {
            let w: Wire = serde_json::from_slice(&b).unwrap_or_else(|e| Wire {
                rank: r as u32,
                error: Some(format!("rank {r}: its figures did not arrive intact ({e})")),
                ..lost(r as u32)
            });
            let mut counter = DirCounter::default();
            for (v, n) in &w.hist {
                counter.hist.saturating_record_n(*v, *n);
            }
            counter.bytes = w.bytes;
            counter.ops = w.ops;
            RankPhase {
                phase: p.phase,
                rank: w.rank,
                visited_rank: w.visited_rank,
                planned: w.planned,
                counter,
                elapsed_ns: w.elapsed_ns,
                window_ns: w.window_ns,
                user_ns: w.user_ns,
                sys_ns: w.sys_ns,
                errors: w.errors.into_iter().collect(),
                error: w.error,
                stonewalled: w.stonewalled,
                interrupted: w.interrupted,
            }
        })
        .collect()
}

fn lost(rank: u32) -> Wire {
    Wire {
        rank,
        visited_rank: rank,
        planned: 0,
        bytes: 0,
        ops: 0,
        hist: Vec::new(),
        elapsed_ns: 0,
        window_ns: 0,
        user_ns: 0,
        sys_ns: 0,
        errors: Vec::new(),
        error: None,
        stonewalled: false,
        interrupted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalComm;
    use storlab_md::{Control, MdSpec, Posix};

    fn spec(files: u64) -> MdSpec {
        storlab_testkit::md_spec!(storlab_md, files)
    }

    /// Three thread ranks run md through [`CommSync`] in one shared tree;
    /// after each phase every rank's figures reach rank 0 intact (items,
    /// and the histogram with one sample per item), and nowhere else.
    #[test]
    fn three_ranks_run_md_and_rank_zero_gets_every_part_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        let out = LocalComm::run(3, |c| {
            let sync = CommSync(c);
            let mut gathered = Vec::new();
            let phases = storlab_md::run(&Posix, &spec(5), &base, &sync, &Control::new(), |p| {
                gathered.push(gather(&sync.0, p));
            })
            .unwrap();
            (phases, gathered)
        });
        for (r, (phases, gathered)) in out.iter().enumerate() {
            assert_eq!(phases.len(), 3, "rank {r}");
            assert_eq!(gathered.len(), 3, "a gather per phase on rank {r}");
            if r != 0 {
                assert!(gathered.iter().all(Vec::is_empty), "rank {r}");
            }
        }
        for (i, parts) in out[0].1.iter().enumerate() {
            assert_eq!(parts.len(), 3);
            for (r, part) in parts.iter().enumerate() {
                let own = &out[r].0[i];
                assert_eq!(part.rank, r as u32);
                assert_eq!(part.phase.name(), own.phase.name());
                assert_eq!(part.items(), 5);
                assert_eq!(part.counter.ops, own.counter.ops);
                assert_eq!(part.counter.hist.len(), own.counter.hist.len());
                assert_eq!(part.counter.hist.max(), own.counter.hist.max());
                assert_eq!(part.errors, own.errors);
                assert_eq!(part.error, None);
            }
        }
    }

    #[test]
    fn comm_sync_is_md_rank_sync() {
        let out = LocalComm::run(2, |c| {
            let s = CommSync(c);
            s.barrier();
            (
                s.rank(),
                s.ranks(),
                s.gather_all(u64::from(s.rank()) + 7),
                s.any(s.rank() == 1),
            )
        });
        assert_eq!(
            out,
            vec![(0, 2, vec![7, 8], true), (1, 2, vec![7, 8], true)]
        );
    }
}
