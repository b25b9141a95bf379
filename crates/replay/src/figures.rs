//! A rank's figures beyond its counts: bytes over time, replayed and as
//! recorded (the report's replay timeline), and per traced file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// First width of a time bin.
const FIRST_WIDTH_NS: u64 = 1_000_000;
/// Most bins kept: the width doubles (neighbours merged) beyond.
pub const MAX_BINS: usize = 512;

/// Bytes per time bin, from 0; the width doubles whenever a time falls past
/// [`MAX_BINS`] bins, so memory is bounded whatever the trace's length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bins {
    pub width_ns: u64,
    pub bytes: Vec<u64>,
}

impl Default for Bins {
    fn default() -> Self {
        Bins {
            width_ns: FIRST_WIDTH_NS,
            bytes: Vec::new(),
        }
    }
}

impl Bins {
    /// Add `bytes` at `t_ns`.
    pub fn add(&mut self, t_ns: u64, bytes: u64) {
        // (One division per call: this runs twice per replayed operation.)
        let mut i = t_ns / self.width_ns;
        while i >= MAX_BINS as u64 {
            self.widen();
            i = t_ns / self.width_ns;
        }
        let i = i as usize;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        self.bytes[i] += bytes;
    }

    /// Double the width: each pair of bins becomes one.
    fn widen(&mut self) {
        self.width_ns = self.width_ns.saturating_mul(2);
        self.bytes = self.bytes.chunks(2).map(|c| c.iter().sum()).collect();
    }

    /// Bring to width `w` (a power-of-two multiple of this width).
    pub fn at_width(&self, w: u64) -> Bins {
        let mut b = self.clone();
        while b.width_ns < w {
            b.widen();
        }
        b
    }

    /// Add another's bins into these (both brought to the wider width).
    pub fn merge(&mut self, other: &Bins) {
        let w = self.width_ns.max(other.width_ns);
        *self = self.at_width(w);
        let o = other.at_width(w);
        if self.bytes.len() < o.bytes.len() {
            self.bytes.resize(o.bytes.len(), 0);
        }
        for (a, b) in self.bytes.iter_mut().zip(&o.bytes) {
            *a += b;
        }
    }
}

/// One traced file's figures in one rank.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFigures {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub io_ns: u64,
    pub trace_io_ns: u64,
    /// Operations whose recorded duration the trace has.
    pub traced: u64,
    /// Trims issued, and the bytes they addressed.
    #[serde(default)]
    pub trims: u64,
    #[serde(default)]
    pub bytes_trimmed: u64,
}

impl FileFigures {
    pub fn merge(&mut self, o: &FileFigures) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.io_ns = self.io_ns.saturating_add(o.io_ns);
        self.trace_io_ns = self.trace_io_ns.saturating_add(o.trace_io_ns);
        self.traced += o.traced;
        self.trims += o.trims;
        self.bytes_trimmed += o.bytes_trimmed;
    }
}

/// What a rank measured over time and per file (carried whole to rank 0
/// under MPI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankExtra {
    /// Bytes by issue time from the replay's start.
    pub replayed: Bins,
    /// Bytes by recorded start from the rank's first operation.
    pub recorded: Bins,
    /// By index into the layout's files.
    pub files: BTreeMap<usize, FileFigures>,
    /// Every issuing thread of a timed replay was allowed real-time
    /// priority (root or `CAP_SYS_NICE`, `STORLAB_NO_RT` unset); it takes
    /// it only for sparse operations it is on time for (see
    /// `run::Priority`).
    #[serde(default)]
    pub realtime: bool,
    /// Operations issued at real-time priority.
    #[serde(default)]
    pub realtime_ops: u64,
    /// CPU time (user, system) of the rank's issuing threads (thread
    /// clocks, start to end) and, on a process's first rank, of the thread
    /// that read the trace for it, ns.
    #[serde(default)]
    pub cpu_user_ns: u64,
    #[serde(default)]
    pub cpu_sys_ns: u64,
    /// Trims issued (a hole punched, a device range discarded) and the
    /// bytes they addressed; checked against the trace's.
    #[serde(default)]
    pub trims: u64,
    #[serde(default)]
    pub bytes_trimmed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_widen_instead_of_growing() {
        let mut b = Bins::default();
        b.add(0, 10);
        b.add(FIRST_WIDTH_NS, 5);
        assert_eq!(b.bytes, [10, 5]);
        // 10 s at 1 ms would be 10,000 bins: the width doubles instead.
        b.add(10_000_000_000, 7);
        assert!(b.bytes.len() <= MAX_BINS, "{}", b.bytes.len());
        assert_eq!(b.width_ns, FIRST_WIDTH_NS << 5);
        assert_eq!(b.bytes[0], 15, "the first two merged");
        assert_eq!(b.bytes.iter().sum::<u64>(), 22, "nothing lost");
    }

    #[test]
    fn merging_brings_both_to_the_wider_width() {
        let mut a = Bins::default();
        a.add(0, 1);
        a.add(3 * FIRST_WIDTH_NS, 2);
        let mut b = Bins::default();
        b.add(600 * FIRST_WIDTH_NS, 4);
        a.merge(&b);
        assert_eq!(a.width_ns, 2 * FIRST_WIDTH_NS);
        assert_eq!(a.bytes[0], 1);
        assert_eq!(a.bytes[1], 2);
        assert_eq!(a.bytes[300], 4);
    }
}
