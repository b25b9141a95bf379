//! The one communicator abstraction every multi-rank path uses.

/// What the ranks of one job can do together. Every method is a
/// collective step: every rank calls it, in the same order, or the job
/// hangs.
pub trait Comm {
    /// This rank (0-based).
    fn rank(&self) -> u32;
    /// How many ranks run the job.
    fn size(&self) -> u32;
    /// Wait until every rank has arrived.
    fn barrier(&self);
    /// Rank 0's `value` on every rank.
    fn broadcast_u64(&self, value: u64) -> u64;
    /// Rank 0's bytes on every rank (the others' `bytes` are ignored).
    fn broadcast_bytes(&self, bytes: &[u8]) -> Vec<u8>;
    /// Every rank's `values` (the same length on every rank), concatenated
    /// in rank order, on every rank.
    fn all_gather_u64(&self, values: &[u64]) -> Vec<u64>;
    /// Every rank's bytes at rank 0, in rank order; empty elsewhere.
    fn gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// The element-wise largest of every rank's `values` (the same length
    /// on every rank), on every rank.
    fn max_u64(&self, values: &[u64]) -> Vec<u64>;
    /// The smallest of every rank's `value`, on every rank.
    fn min_u64(&self, value: u64) -> u64;

    /// Whether this is rank 0 (the one that prints and stores).
    fn root(&self) -> bool {
        self.rank() == 0
    }
    /// Whether any rank passed `true`.
    fn any(&self, flag: bool) -> bool {
        self.max_u64(&[u64::from(flag)]).first().copied() == Some(1)
    }
    /// Whether every rank passed `true`.
    fn all(&self, ok: bool) -> bool {
        self.min_u64(u64::from(ok)) == 1
    }
    /// The smallest and largest of every rank's `value`.
    fn min_max(&self, value: u64) -> (u64, u64) {
        let lo = self.min_u64(value);
        let hi = self.max_u64(&[value]).first().copied().unwrap_or(value);
        (lo, hi)
    }
    /// Rank 0's string on every rank.
    fn broadcast_string(&self, s: &str) -> String {
        String::from_utf8_lossy(&self.broadcast_bytes(s.as_bytes())).into_owned()
    }
    /// Every rank's string at rank 0 (rank order); empty elsewhere.
    fn gather_strings(&self, s: &str) -> Vec<String> {
        self.gather_bytes(s.as_bytes())
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect()
    }
    /// Every rank's `mine` gathered (collective); at rank 0 the first
    /// one with its rank: rank 0's own when it has one, else the lowest
    /// other rank's. None elsewhere, and when no rank has one.
    fn first_of(&self, mine: Option<String>) -> Option<(u32, String)> {
        let all = self.gather_strings(mine.as_deref().unwrap_or(""));
        if self.rank() != 0 {
            return None;
        }
        if let Some(m) = mine {
            return Some((0, m));
        }
        let (rank, m) = all.into_iter().enumerate().find(|(_, m)| !m.is_empty())?;
        Some((u32::try_from(rank).unwrap_or(u32::MAX), m))
    }
    /// Why the ranks stop, at rank 0 (None elsewhere): rank 0's own
    /// reason, or else the first reason another rank was given, naming
    /// that rank (a batch system's signal reaches the ranks at different
    /// moments, and the first one stops them all).
    fn stop_reason(&self, here: Option<String>) -> Option<String> {
        let (rank, why) = self.first_of(here)?;
        Some(if rank == 0 {
            why
        } else {
            format!("{why} (on rank {rank})")
        })
    }
}

impl<C: Comm + ?Sized> Comm for &C {
    fn rank(&self) -> u32 {
        (**self).rank()
    }
    fn size(&self) -> u32 {
        (**self).size()
    }
    fn barrier(&self) {
        (**self).barrier();
    }
    fn broadcast_u64(&self, value: u64) -> u64 {
        (**self).broadcast_u64(value)
    }
    fn broadcast_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        (**self).broadcast_bytes(bytes)
    }
    fn all_gather_u64(&self, values: &[u64]) -> Vec<u64> {
        (**self).all_gather_u64(values)
    }
    fn gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        (**self).gather_bytes(bytes)
    }
    fn max_u64(&self, values: &[u64]) -> Vec<u64> {
        (**self).max_u64(values)
    }
    fn min_u64(&self, value: u64) -> u64 {
        (**self).min_u64(value)
    }
}
