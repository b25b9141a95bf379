//! Where each I/O goes: sequential cursors, full-coverage random
//! permutations with O(1) memory, random-with-replacement, and the mapping
//! of a job's logical region onto files (per-job file, shared regions,
//! interleaved stride).

/// A fast, seedable PRNG (xoshiro256++): offsets, mixes and data.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
    /// Uniform in [0, n) (Lemire's multiply-shift; n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// A pseudo-random permutation of `0..n` computed on demand: a 4-round
/// Feistel network over the smallest even number of bits covering `n`, with
/// cycle walking for values ≥ n. O(1) memory, every index exactly once.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = if n <= 1 {
            2
        } else {
            64 - (n - 1).leading_zeros()
        };
        let bits = bits.max(2).div_ceil(2) * 2;
        let half_bits = bits / 2;
        let mut rng = Rng::new(seed ^ 0x5065_726D_7574_6521);
        Permutation {
            n,
            half_bits,
            half_mask: if half_bits >= 64 {
                u64::MAX
            } else {
                (1u64 << half_bits) - 1
            },
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
        }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    #[inline]
    fn round(&self, x: u64, k: u64) -> u64 {
        let mut z = x ^ k;
        z = z.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z ^= z >> 29;
        z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (z ^ (z >> 32)) & self.half_mask
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mut l = x >> self.half_bits;
        let mut r = x & self.half_mask;
        for &k in &self.keys {
            let nl = r;
            r = l ^ self.round(r, k);
            l = nl;
        }
        (l << self.half_bits) | r
    }

    /// The i-th element of the permutation (i < n).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.feistel(i);
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }
}

/// How a job's logical offsets `[0, size)` map onto its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionMap {
    /// The job's own file, or its contiguous region starting at `base`.
    Contiguous { base: u64 },
    /// Interleaved: logical stride unit u of job j is physical unit u·numjobs + j.
    Interleaved { stride: u64, numjobs: u64, job: u64 },
}

impl RegionMap {
    #[inline]
    pub fn physical(&self, logical: u64) -> u64 {
        match *self {
            RegionMap::Contiguous { base } => base + logical,
            RegionMap::Interleaved {
                stride,
                numjobs,
                job,
            } => (logical / stride * numjobs + job) * stride + logical % stride,
        }
    }
}

/// Generates the logical offset of each I/O of one job.
#[derive(Debug, Clone)]
pub enum OffsetGen {
    Sequential {
        next: u64,
        size: u64,
    },
    /// Full coverage: slot `perm.get(i)` for the i-th I/O of a pass.
    Permuted {
        perm: Permutation,
        i: u64,
        slot: u64,
        pass: u64,
        seed: u64,
    },
    /// Uniform random slots; a "pass" is `slots` I/Os.
    WithReplacement {
        slots: u64,
        slot: u64,
        i: u64,
    },
}

impl OffsetGen {
    /// `slot` is the granularity of random offsets (the largest block size).
    pub fn new(random: bool, with_replacement: bool, size: u64, slot: u64, seed: u64) -> OffsetGen {
        let slots = (size / slot).max(1);
        match (random, with_replacement) {
            (false, _) => OffsetGen::Sequential { next: 0, size },
            (true, false) => OffsetGen::Permuted {
                perm: Permutation::new(slots, seed),
                i: 0,
                slot,
                pass: 0,
                seed,
            },
            (true, true) => OffsetGen::WithReplacement { slots, slot, i: 0 },
        }
    }

    /// Next logical offset for an I/O of `len` bytes, and whether this I/O
    /// starts a new pass over the region (for non-time-based phases the job
    /// stops when the first pass is complete).
    #[inline]
    pub fn next(&mut self, len: u64, rng: &mut Rng) -> (u64, bool) {
        match self {
            OffsetGen::Sequential { next, size } => {
                let mut wrapped = false;
                if *next + len > *size {
                    *next = 0;
                    wrapped = true;
                }
                let off = *next;
                *next += len;
                (off, wrapped)
            }
            OffsetGen::Permuted {
                perm,
                i,
                slot,
                pass,
                seed,
            } => {
                let mut wrapped = false;
                if *i == perm.len() {
                    *i = 0;
                    *pass += 1;
                    // A new order each pass, still every slot once.
                    *perm = Permutation::new(perm.len(), seed.wrapping_add(*pass));
                    wrapped = true;
                }
                let off = perm.get(*i) * *slot;
                *i += 1;
                (off, wrapped)
            }
            OffsetGen::WithReplacement { slots, slot, i } => {
                let wrapped = *i == *slots;
                if wrapped {
                    *i = 0;
                }
                *i += 1;
                (rng.below(*slots) * *slot, wrapped)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;
    use super::*;
    use proptest::prelude::*;

    fn check_perm(n: u64, seed: u64) {
        let p = Permutation::new(n, seed);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let x = p.get(i);
            assert!(x < n, "n={n} i={i} x={x}");
            assert!(!seen[x as usize], "n={n}: {x} twice");
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn permutation_covers_every_block_once() {
        for n in [1, 2, 3, 4, 5, 7, 8, 100, 255, 256, 257, 1000, 4096, 65_537] {
            check_perm(n, 42);
        }
    }

    #[test]
    fn permutation_is_not_identity() {
        let p = Permutation::new(10_000, 1);
        let fixed = (0..10_000).filter(|&i| p.get(i) == i).count();
        assert!(fixed < 50, "{fixed} fixed points: not shuffled");
        // Consecutive I/Os should not be adjacent blocks most of the time.
        let adjacent = (1..10_000)
            .filter(|&i| p.get(i) == p.get(i - 1) + 1)
            .count();
        assert!(adjacent < 50, "{adjacent} sequential steps");
    }

    #[test]
    fn offset_gen_passes() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(true, false, 64 * 4096, 4096, 9);
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..64 {
            let (off, wrapped) = g.next(4096, &mut rng);
            assert!(!wrapped, "io {k}");
            assert_eq!(off % 4096, 0);
            assert!(seen.insert(off));
        }
        let (_, wrapped) = g.next(4096, &mut rng);
        assert!(wrapped, "the 65th I/O starts pass 2");

        let mut s = OffsetGen::new(false, false, 3 * 4096, 4096, 0);
        let offs: Vec<_> = (0..4).map(|_| s.next(4096, &mut rng)).collect();
        assert_eq!(
            offs,
            vec![(0, false), (4096, false), (8192, false), (0, true)]
        );
    }

    #[test]
    fn passes_with_replacement_and_mixed_sizes() {
        let mut rng = Rng::new(3);
        // With replacement: a pass is `slots` I/Os.
        let mut g = OffsetGen::new(true, true, 8 * 4096, 4096, 1);
        let wraps: Vec<bool> = (0..17).map(|_| g.next(4096, &mut rng).1).collect();
        assert_eq!(wraps.iter().filter(|&&w| w).count(), 2);
        assert!(wraps[8] && wraps[16]);
        // Sequential with mixed sizes: the pass ends when the next block
        // would pass the end, not after size/max_bs I/Os.
        let mut s = OffsetGen::new(false, false, 64 * 1024, 16 * 1024, 0);
        let mut moved = 0;
        let mut n = 0;
        loop {
            let len = if n % 2 == 0 { 4096 } else { 16 * 1024 };
            let (off, wrapped) = s.next(len, &mut rng);
            if wrapped {
                break;
            }
            assert_eq!(off, moved);
            moved += len;
            n += 1;
        }
        assert!(n > 4, "{n} I/Os in the pass");
        assert!(64 * 1024 - moved < 16 * 1024);
    }

    #[test]
    fn interleaved_regions_tile_the_file() {
        let (stride, numjobs, per_job) = (8192u64, 3u64, 4 * 8192u64);
        let mut all = std::collections::BTreeSet::new();
        for job in 0..numjobs {
            let m = RegionMap::Interleaved {
                stride,
                numjobs,
                job,
            };
            for lo in (0..per_job).step_by(4096) {
                assert!(all.insert(m.physical(lo)));
            }
        }
        let expect: std::collections::BTreeSet<u64> =
            (0..numjobs * per_job).step_by(4096).collect();
        assert_eq!(all, expect);
    }

    proptest! {
        #[test]
        fn permutation_property(n in 1u64..3000, seed in any::<u64>()) {
            check_perm(n, seed);
        }

        #[test]
        fn below_is_in_range(n in 1u64..u64::MAX, seed in any::<u64>()) {
            let mut r = Rng::new(seed);
            for _ in 0..16 { prop_assert!(r.below(n) < n); }
        }
    }
}
