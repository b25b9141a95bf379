//! Hooks for one job run by several processes at once (MPI ranks): the
//! phase loop calls a [`PhaseSync`] at the points where every process must
//! agree (start of a phase, errors, stops) and asks it how this process's
//! jobs map onto the files every process shares ([`Share`]). The bench
//! crate knows nothing of MPI; the command line implements the trait over
//! an MPI communicator. Every method is called from the thread that called
//! [`crate::run_synced`], at the same points on every process, so a
//! collective operation inside each is safe.
//!
//! Its pure parts for the command line's MPI build: [`merge`] (every
//! rank's part of a phase into one result, on rank 0), [`agree`] (the
//! canonical job every rank must share, its digest and the mismatch
//! message) and [`clients`] (client order, reader shift and page-cache
//! warnings from each rank's node).

pub mod agree;
pub mod clients;
pub mod grouped;
pub mod merge;

use crate::Control;
use std::time::{Duration, Instant};
use storlab_types::PhaseParams;

/// How often [`PhaseSync::tick`] is called while a phase runs.
pub const TICK: Duration = Duration::from_millis(20);

/// This process's place among all the jobs of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// Global index of this process's first job: its jobs are
    /// `first_job .. first_job + numjobs`, and with one file per job those
    /// are also the indices of its files.
    pub first_job: u32,
    /// Jobs over every process taking part (`numjobs` × processes).
    pub total_jobs: u32,
    /// Laying out and verifying a shared file is split in `slices`
    /// contiguous pieces; this process does piece `slice`.
    pub slice: u32,
    pub slices: u32,
}

impl Share {
    /// A process on its own: jobs `0..numjobs`.
    pub fn alone(p: &PhaseParams) -> Share {
        Share {
            first_job: 0,
            total_jobs: p.numjobs,
            slice: 0,
            slices: 1,
        }
    }

    /// Byte range `[start, end)` of a `size`-byte shared file this process
    /// lays out or verifies (1 MiB-aligned pieces).
    pub fn slice_of(&self, size: u64) -> (u64, u64) {
        let n = u64::from(self.slices.max(1));
        let chunk = size.div_ceil(n).next_multiple_of(1 << 20);
        let start = (chunk * u64::from(self.slice)).min(size);
        (start, (start + chunk).min(size))
    }
}

/// What a multi-process run does at the points where processes must agree.
pub trait PhaseSync {
    /// This process's share of phase `index`'s jobs (`reading`: the
    /// phase reads, and may read data another process wrote).
    fn share(&self, index: usize, p: &PhaseParams) -> Share;
    /// A phase of job groups whose groups run on disjoint sets of
    /// processes (`--group-ranks`): the group this process runs and its
    /// share of every process's jobs. `None` (the default): the groups are
    /// not split over processes.
    fn group_share(&self, _index: usize, _p: &PhaseParams) -> Option<(usize, Share)> {
        None
    }
    /// Whether `ok` holds on every process.
    fn agree(&self, ok: bool) -> bool;
    /// Every local worker is ready (`local_error`: one could not start).
    /// Returns the common epoch the workers count from, or `None` when the
    /// phase is called off (some process could not start).
    fn start(&self, local_error: bool) -> Option<Instant>;
    /// Called every [`TICK`] while the phase runs, with whether every local
    /// worker has finished; may stop local jobs through `control` (another
    /// process failed, stonewall). Returns false once every process is done.
    fn tick(&self, control: &Control, epoch: Instant, local_done: bool) -> bool;
    /// Bytes each job (by global index) wrote in a write phase that was cut
    /// short on purpose (stonewall), gathered from every process, or
    /// `None` when the phase ran to its end: a read phase that follows reads
    /// exactly what was written.
    fn written_extents(&self, local: &[(u32, u64)], total_jobs: u32) -> Option<Vec<u64>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The slices of a shared file tile it: in order, no gap, no overlap,
        /// and a process past the last slice gets nothing.
        #[test]
        fn slices_tile_the_file(size in 0u64..(64 << 20), slices in 1u32..16) {
            let mut next = 0;
            for slice in 0..slices {
                let (s, e) = Share { first_job: 0, total_jobs: slices, slice, slices }.slice_of(size);
                prop_assert_eq!(s, next);
                prop_assert!(e >= s);
                next = e;
            }
            prop_assert_eq!(next, size);
            let (s, e) = Share { first_job: 0, total_jobs: 0, slice: slices, slices }.slice_of(size);
            prop_assert_eq!(s, e);
        }
    }
}
