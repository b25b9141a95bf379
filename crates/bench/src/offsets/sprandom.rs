//! fio's `sprandom` (`sprandom.c`, SanDisk's SSD preconditioning) as an
//! offset stream: every block of the region is written once in a random
//! order (fio's lfsr; storlab's [`Permutation`]), and while region k of
//! the physical capacity (logical size × (1 + `spr_op`), cut into
//! `spr_num_regions`) is written, each offset is kept with the
//! probability `invalid_pct[k]` and written again at the start of region
//! k + 1, which invalidates its first copy. So region k ends with the
//! share of invalid blocks a steady-state SSD has there (Desnoyers' model:
//! write amplification ≈ 0.5 / OP + 0.7; validity × space is constant).

use super::{Permutation, Rng};
use std::collections::VecDeque;

/// fio's `PCT_PRECISION`: invalidation probabilities in 1/10000.
const PCT_PRECISION: u64 = 10_000;

/// `n` values from `a` to `b`, evenly spaced (fio's `linspace`).
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    match n {
        0 => Vec::new(),
        1 => vec![a],
        _ => (0..n)
            .map(|i| a + i as f64 * (b - a) / (n as f64 - 1.0))
            .collect(),
    }
}

/// fio's `linear_interp`: y at `x` on the polyline (xs, ys), clamped to
/// its ends.
fn interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    for i in 0..n - 1 {
        if x >= xs[i] && x <= xs[i + 1] {
            let (x1, x2) = (xs[i], xs[i + 1]);
            if (x2 - x1).abs() < 1e-9 {
                return ys[i];
            }
            return ys[i] + (ys[i + 1] - ys[i]) * ((x - x1) / (x2 - x1));
        }
    }
    0.0
}

/// fio's `compute_validity_dist`: the share of valid blocks of each of
/// `n` equal regions, from the most valid to the least, reversed (the
/// first region written is the least valid at steady state).
pub(crate) fn validity_dist(n: usize, op: f64) -> Vec<f64> {
    let waf = 0.5 / op + 0.7;
    let gc_validity = 1.0 - 1.0 / waf;
    let validity = linspace(1.0, gc_validity, n);
    let mut acc = 0.0;
    let xs: Vec<f64> = validity
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    // Equal region sizes: resample the curve on evenly spaced x.
    let (x0, x1) = (xs[0], xs[n - 1]);
    let mut out: Vec<f64> = linspace(x0, x1, n)
        .into_iter()
        .map(|x| interp(x, &xs, &validity))
        .collect();
    out.reverse();
    out
}

/// fio's `sprandom_info` with `spr_cs=0`.
#[derive(Debug, Clone)]
pub struct Sprandom {
    perm: Permutation,
    /// Next index into `perm` (the lfsr's position).
    next: u64,
    invalid_pct: Vec<u64>,
    region_write_count: u64,
    writes_remaining: u64,
    current_region: usize,
    phase: usize,
    invalid_count: [u64; 2],
    /// Offsets staged this region, and those committed for re-writing
    /// (fio's two-phase circular buffer).
    staged: Vec<u64>,
    committed: VecDeque<u64>,
}

impl Sprandom {
    /// `blocks` logical blocks of `bs` bytes (fio's alignment is the write
    /// block size), `regions` regions, over-provisioning `op`.
    pub fn new(blocks: u64, bs: u64, regions: u32, op: f64, seed: u64) -> Sprandom {
        let n = regions.max(1) as usize;
        let logical = blocks * bs;
        // fio's sprandom_physical_size, aligned down to the block size.
        let physical = logical + (logical as f64 * op).ceil() as u64;
        let physical = physical - physical % bs.max(1);
        let region_write_count = (physical / n as u64) / bs.max(1);
        let invalid_pct = validity_dist(n, op)
            .iter()
            .map(|v| ((1.0 - v) * PCT_PRECISION as f64).round() as u64)
            .collect();
        Sprandom {
            perm: Permutation::new(blocks.max(1), seed ^ 0x5350_5241),
            next: 0,
            invalid_pct,
            region_write_count,
            writes_remaining: region_write_count,
            current_region: 0,
            phase: 0,
            invalid_count: [0, 0],
            staged: Vec::new(),
            committed: VecDeque::new(),
        }
    }

    /// fio's `sprandom_add_with_probability`: keep `block` for re-writing
    /// with the current region's invalidation probability. (fio reads one
    /// entry past its table in the last region; storlab uses the last.)
    fn keep_maybe(&mut self, block: u64, phase: usize, rng: &mut Rng) {
        let k = self.current_region.min(self.invalid_pct.len() - 1);
        if rng.below(PCT_PRECISION + 1) <= self.invalid_pct[k] {
            self.staged.push(block);
            self.invalid_count[phase] += 1;
        }
    }

    /// fio's `sprandom_get_next_offset`: the next block, or None when the
    /// preconditioning is done (every region written).
    pub fn next_block(&mut self, rng: &mut Rng) -> Option<u64> {
        // First re-write what the previous region kept.
        if let Some(b) = self.committed.pop_front() {
            self.keep_maybe(b, self.phase ^ 1, rng);
            return Some(b);
        }
        if self.writes_remaining == 0 {
            if self.current_region >= self.invalid_pct.len() {
                return None;
            }
            self.invalid_count[self.phase] = 0;
            self.current_region += 1;
            self.phase ^= 1;
            self.writes_remaining = self
                .region_write_count
                .saturating_sub(self.invalid_count[self.phase]);
            self.committed.extend(self.staged.drain(..));
        }
        if self.next >= self.perm.len() {
            return None;
        }
        let b = self.perm.get(self.next);
        self.next += 1;
        self.writes_remaining = self.writes_remaining.saturating_sub(1);
        self.keep_maybe(b, self.phase ^ 1, rng);
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's model: with 15 % over-provisioning the write amplification is
    /// 0.5/0.15 + 0.7 ≈ 4.03, so the least valid region (the one garbage
    /// collection takes) is 1 − 1/4.03 ≈ 75 % valid; the distribution runs
    /// from there (first, reversed) to fully valid, falling monotonically.
    #[test]
    fn validity_follows_fios_model() {
        let v = validity_dist(100, 0.15);
        let gc = 1.0 - 1.0 / (0.5 / 0.15 + 0.7);
        assert_eq!(v.len(), 100);
        assert!((v[0] - gc).abs() < 1e-9, "{}", v[0]);
        assert!((v[99] - 1.0).abs() < 1e-9);
        assert!(v.windows(2).all(|w| w[0] <= w[1] + 1e-12));
    }

    /// Every block is written once, plus the re-writes; in all, about the
    /// physical capacity (logical × (1 + OP)); and the re-writes of a
    /// region's blocks follow the region's invalidation share.
    #[test]
    fn writes_every_block_and_about_the_physical_capacity() {
        let blocks = 20_000u64;
        let mut s = Sprandom::new(blocks, 4096, 10, 0.15, 7);
        let mut rng = Rng::new(3);
        let mut seen = vec![0u32; blocks as usize];
        let mut n = 0u64;
        while let Some(b) = s.next_block(&mut rng) {
            seen[b as usize] += 1;
            n += 1;
            assert!(n < 3 * blocks, "never ends");
        }
        assert!(seen.iter().all(|&c| c >= 1), "every block written");
        let physical = blocks as f64 * 1.15;
        let ratio = n as f64 / physical;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{n} writes for {physical} blocks"
        );
        let rewrites: u32 = seen.iter().map(|c| c - 1).sum();
        assert!(rewrites > 0);
    }
}
