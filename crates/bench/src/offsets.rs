//! Where each I/O goes: sequential cursors (with fio's skips and
//! backwards steps), full-coverage random permutations with O(1) memory,
//! random-with-replacement, fio's skewed laws (zipf, pareto, normal,
//! zoned: [`Skew`]), and the mapping of a job's logical region onto files
//! (per-job file, shared regions, interleaved stride).

mod sprandom;

use storlab_types::RandomDistribution;

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
    /// Slots drawn from a skewed law, with replacement; a "pass" is
    /// `slots` I/Os.
    Skewed {
        skew: Box<Skew>,
        slot: u64,
        i: u64,
    },
    /// fio's `rw=read:N`: each I/O starts `skip` bytes after the end of the
    /// one before (before it, when negative); see [`OffsetGen::skipping`].
    Skipping {
        last_end: u64,
        size: u64,
        skip: i64,
    },
    /// fio's `zonemode=strided`; see [`OffsetGen::strided`].
    Strided {
        /// Where the current zone starts.
        zone: u64,
        /// The next offset.
        pos: u64,
        /// Bytes done in the current zone.
        done: u64,
        /// Bytes done in this pass.
        moved: u64,
        /// (zonesize, zonerange, zoneskip, size of the region).
        params: (u64, u64, u64, u64),
    },
    /// fio's `sprandom`; a pass ends when the preconditioning is done.
    Sprandom {
        spr: Box<sprandom::Sprandom>,
        params: (u64, u64, u32, f64),
        seed: u64,
    },
    /// fio's `random_distribution=sequence`; see [`OffsetGen::sequence`].
    Sequence {
        blocks: Vec<u64>,
        stride: bool,
        count: u64,
        slots: u64,
        slot: u64,
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
            OffsetGen::Skewed { skew, slot, i } => {
                let wrapped = *i == skew.slots;
                if wrapped {
                    *i = 0;
                }
                *i += 1;
                (skew.draw(rng) * *slot, wrapped)
            }
            OffsetGen::Sprandom { spr, params, seed } => {
                if let Some(b) = spr.next_block(rng) {
                    return (b * params.1, false);
                }
                // Done (fio ends the job here): a job that goes on
                // (time_based) preconditions again, in a new order.
                *seed = seed.wrapping_add(1);
                let (blocks, bs, regions, op) = *params;
                **spr = sprandom::Sprandom::new(blocks, bs, regions, op, *seed);
                (spr.next_block(rng).unwrap_or(0) * bs, true)
            }
            OffsetGen::Sequence {
                blocks,
                stride,
                count,
                slots,
                slot,
            } => {
                // fio's __get_next_rand_offset_sequence: the i-th I/O's
                // block is blocks[i mod n], plus (i div n)·n with stride.
                let n = blocks.len().max(1) as u64;
                let at = |c: u64| {
                    let base = blocks.get((c % n) as usize).copied().unwrap_or(0);
                    if *stride { c / n * n + base } else { base }
                };
                // A pass is `slots` I/Os; a stride past the region (where
                // fio stops finding offsets) starts the next pass.
                let mut wrapped = *count > 0 && *count % (*slots).max(1) == 0;
                if at(*count) >= *slots {
                    *count = 0;
                    wrapped = true;
                }
                let b = at(*count);
                *count += 1;
                (b * *slot, wrapped)
            }
            OffsetGen::Strided {
                zone,
                pos,
                done,
                moved,
                params,
            } => strided_next(zone, pos, done, moved, *params, len),
            OffsetGen::Skipping {
                last_end,
                size,
                skip,
            } => {
                // fio's get_next_seq_offset with file_offset 0: the first
                // I/O is at 0; each next one `skip` after the end of the
                // last; past either end, forward skips wrap to 0 and
                // backward ones to `size + skip`. (fio would fail an I/O
                // that starts inside the region but ends past it; storlab
                // wraps it to the start.)
                let mut pos = i128::from(*last_end);
                if pos != 0 {
                    pos += i128::from(*skip);
                    if pos < 0 || pos >= i128::from(*size) {
                        pos = if *skip > 0 {
                            0
                        } else {
                            i128::from(*size) + i128::from(*skip)
                        };
                    }
                }
                let mut off = u64::try_from(pos).unwrap_or(0);
                if off + len > *size {
                    off = 0;
                }
                *last_end = off + len;
                (off, false)
            }
        }
    }

    /// Skewed slots from `skew`, each `slot` bytes.
    pub fn skewed(skew: Skew, slot: u64) -> OffsetGen {
        OffsetGen::Skewed {
            skew: Box::new(skew),
            slot,
            i: 0,
        }
    }

    /// fio's `zonemode=strided` over a region of `size` bytes: sequential
    /// I/O in the zone from 0 until `zone_size` bytes are done (inside a
    /// range of `range` bytes from the zone's start), then the next zone
    /// `range + skip` bytes further, wrapping to 0 at the end of the region.
    /// A pass is `size` bytes of I/O (fio's io_size; skipped bytes do not
    /// count).
    pub fn strided(zone_size: u64, range: u64, skip: u64, size: u64) -> OffsetGen {
        OffsetGen::Strided {
            zone: 0,
            pos: 0,
            done: 0,
            moved: 0,
            params: (zone_size, range.max(1), skip, size),
        }
    }

    /// fio's `sprandom` over `size` bytes of `bs`-byte blocks.
    pub fn sprandom(spr: &storlab_types::Sprandom, size: u64, bs: u64, seed: u64) -> OffsetGen {
        let params = (size / bs.max(1), bs, spr.regions, spr.op);
        OffsetGen::Sprandom {
            spr: Box::new(sprandom::Sprandom::new(
                params.0,
                bs,
                spr.regions,
                spr.op,
                seed,
            )),
            params,
            seed,
        }
    }

    /// fio's `random_distribution=sequence:...` over `size` bytes of
    /// `slot`-byte blocks (the blocks were checked to lie in the region).
    pub fn sequence(blocks: &[u64], stride: bool, size: u64, slot: u64) -> OffsetGen {
        OffsetGen::Sequence {
            blocks: blocks.to_vec(),
            stride,
            count: 0,
            slots: (size / slot.max(1)).max(1),
            slot,
        }
    }

    /// Sequential with fio's offset modifier: `skip` bytes after each I/O
    /// (negative: backwards) in a region of `size` bytes. Passes are
    /// counted by bytes by the caller (fio moves `size` bytes a pass), so
    /// this never reports a wrap.
    pub fn skipping(size: u64, skip: i64) -> OffsetGen {
        OffsetGen::Skipping {
            last_end: 0,
            size,
            skip,
        }
    }
}

/// fio caps the zipf normalisation sum at this many terms (`ZIPF_MAX_GEN`).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// A law over ranks `0..n` (rank 0 the hottest), as fio's `lib/zipf.c` and
/// `lib/gauss.c` draw them, or a zone table.
#[derive(Debug, Clone)]
enum Law {
    /// Gray et al.'s zipf generator, fio's `zipf_next`.
    Zipf {
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
    },
    /// fio's `pareto_next`: rank = (n−1)·u^pow, pow = ln h / ln(1−h).
    Pareto { pow: f64 },
    /// fio's `gauss_next`: the mean of 12 uniform ranks plus a uniform
    /// deviation of `stddev` ranks.
    Normal { stddev: u64 },
    /// `zones[k]` = (first slot, slots) of zone k; `pick[v]` the zone of
    /// percentage point v (0..100), as fio's zone_state_index.
    Zoned {
        zones: Vec<(u64, u64)>,
        pick: Vec<u16>,
    },
}

/// A skewed law over the `slots` slots of one job's region: a rank drawn
/// from the law, placed by a seeded permutation (fio hashes the rank; a
/// permutation gives every rank its own slot) and rotated by the
/// distribution's center (`center · slots`, or a random rotation when no
/// center is given, as fio). Zoned laws draw uniformly inside a zone.
/// Built once per job: the hot slots stay the same across passes.
#[derive(Debug, Clone)]
pub struct Skew {
    law: Law,
    slots: u64,
    perm: Permutation,
    rotate: u64,
}

/// Uniform in [0, 1) with 53 bits.
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Skew {
    /// The law of `dist` over `slots` slots of `slot` bytes.
    pub fn new(dist: &RandomDistribution, slots: u64, slot: u64, seed: u64) -> Skew {
        let n = slots.max(1);
        let mut rng = Rng::new(seed ^ 0x534B_4557);
        let random_rotation = rng.below(n);
        let at = |c: f64| ((n as f64 * c) as u64).min(n - 1);
        let (law, rotate) = match dist {
            RandomDistribution::Zipf { theta, center } => {
                let zetan: f64 = (1..=n.min(ZIPF_MAX_GEN))
                    .map(|i| (i as f64).powf(-theta))
                    .sum();
                let zeta2 = 1.0 + 0.5f64.powf(*theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let law = Law::Zipf {
                    theta: *theta,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta,
                };
                (law, center.map_or(random_rotation, at))
            }
            RandomDistribution::Pareto { h, center } => {
                let pow = h.ln() / (1.0 - h).ln();
                (Law::Pareto { pow }, center.map_or(random_rotation, at))
            }
            RandomDistribution::Normal { dev_pct, center } => {
                let stddev = if *dev_pct > 0.0 {
                    ((n as f64 * dev_pct / 100.0).ceil() as u64).min(n / 2)
                } else {
                    0
                };
                // fio: rand_off = n·(center − 0.5), none without a center.
                let rotate = center.map_or(0, |c| {
                    ((n as f64 * (c - 0.5)) as i64).rem_euclid(n as i64) as u64
                });
                (Law::Normal { stddev }, rotate)
            }
            // Never drawn from: a sequence is OffsetGen::sequence's (the
            // worker builds no Skew for it); uniform if it were.
            RandomDistribution::Sequence { .. } => (
                Law::Zoned {
                    zones: vec![(0, n)],
                    pick: vec![0; 100],
                },
                0,
            ),
            RandomDistribution::Zoned { zones } | RandomDistribution::ZonedAbs { zones } => {
                let abs = matches!(dist, RandomDistribution::ZonedAbs { .. });
                let mut table = Vec::new();
                let mut pick = Vec::with_capacity(100);
                let mut start = 0u64;
                for (k, z) in zones.iter().enumerate() {
                    let (first, count) = if abs {
                        (start / slot, z.extent / slot)
                    } else {
                        // fio: offset = stotal·lastb/100, blocks = lastb·(send−stotal)/100.
                        (start * n / 100, n * z.extent / 100)
                    };
                    start += z.extent;
                    let first = first.min(n - 1);
                    table.push((first, count.clamp(1, n - first)));
                    pick.extend(std::iter::repeat_n(k as u16, z.access_pct as usize));
                }
                (Law::Zoned { zones: table, pick }, 0)
            }
        };
        Skew {
            law,
            slots: n,
            perm: Permutation::new(n, seed ^ 0x5343_4154),
            rotate,
        }
    }

    /// The rank (0 = hottest) of the next I/O, before placement; for a
    /// zoned law the slot itself.
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        let n = self.slots;
        match &self.law {
            Law::Zipf {
                theta,
                zetan,
                alpha,
                eta,
            } => {
                let u = unit(rng);
                let z = u * zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(*alpha)) as u64
                };
                (val - 1) % n
            }
            Law::Pareto { pow } => (((n - 1) as f64 * unit(rng).powf(*pow)) as u64).min(n - 1),
            Law::Normal { stddev } => {
                let sum: u64 = (0..12).map(|_| rng.below(n + 1)).sum();
                let mut sum = sum.div_ceil(12);
                if *stddev > 0 {
                    let mut dev = (*stddev as f64 * unit(rng)) as i64 - (*stddev / 2) as i64;
                    let fits = |d: i64| (0..n as i64).contains(&(sum as i64 + d));
                    while dev != 0 && !fits(dev) {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev) as u64;
                }
                sum.min(n - 1)
            }
            Law::Zoned { zones, pick } => {
                let (first, count) = zones[pick[rng.below(pick.len() as u64) as usize] as usize];
                first + rng.below(count)
            }
        }
    }

    /// The slot of the next I/O.
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let r = self.rank(rng);
        if matches!(self.law, Law::Zoned { .. }) {
            return r;
        }
        (self.perm.get(r) + self.rotate) % self.slots
    }
}

/// The next offset of fio's strided zones (`OffsetGen::Strided`): `zone`
/// is the current zone's start, `pos` the next offset in it, `done` the
/// bytes done in this zone, `moved` the bytes of this pass;
/// `params` = (zonesize, zonerange, zoneskip, region size).
#[inline]
fn strided_next(
    zone: &mut u64,
    pos: &mut u64,
    done: &mut u64,
    moved: &mut u64,
    (zone_size, range, skip, size): (u64, u64, u64, u64),
    len: u64,
) -> (u64, bool) {
    // fio's setup_strided_zone_mode: after `zonesize` bytes,
    // the next zone starts `zonerange + zoneskip` further on
    // (from the start past the end of the region); inside a
    // zone, I/O goes back to the zone's start at the end of
    // its range. A pass is `size` bytes of I/O, as fio's
    // io_size, however often the zones wrapped.
    let wrapped = *moved > 0 && *moved + len > size;
    if wrapped {
        *moved = 0;
    }
    if *done >= zone_size {
        *done = 0;
        *zone += range + skip;
        if *zone >= size {
            *zone = 0;
        }
        *pos = *zone;
    }
    if *pos >= *zone + range {
        *pos = *zone;
    }
    // An I/O past the end of the region (fio would fail it)
    // starts over at the first zone.
    if *pos + len > size {
        (*zone, *pos, *done) = (0, 0, 0);
    }
    let off = *pos;
    *pos += len;
    *done += len;
    *moved += len;
    (off, wrapped)
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

    /// Hits per slot of `draws` I/Os from `dist` over `n` slots.
    fn hits(dist: &str, n: u64, draws: usize) -> Vec<u64> {
        let d = crate::access::parse_distribution(dist).unwrap().unwrap();
        let skew = Skew::new(&d, n, 4096, 11);
        let mut g = OffsetGen::skewed(skew, 4096);
        let mut rng = Rng::new(5);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            h[(g.next(4096, &mut rng).0 / 4096) as usize] += 1;
        }
        h
    }

    /// Share of all hits taken by the hottest `frac` of the slots.
    fn hottest_share(mut h: Vec<u64>, frac: f64) -> f64 {
        let total: u64 = h.iter().sum();
        h.sort_unstable_by(|a, b| b.cmp(a));
        let k = (h.len() as f64 * frac) as usize;
        h[..k].iter().sum::<u64>() as f64 / total as f64
    }

    /// zipf(θ): the hottest 10 % of the blocks take H(n/10, θ) / H(n, θ) of
    /// the hits (the analytic share; fio's generator is Gray et al.'s
    /// approximation of it), and the hottest block 1 / H(n, θ).
    #[test]
    fn zipf_hit_share_matches_the_analytic_value() {
        let n = 10_000u64;
        for theta in [1.2f64, 0.8] {
            let h_n = |k: u64| (1..=k).map(|i| (i as f64).powf(-theta)).sum::<f64>();
            let want = h_n(n / 10) / h_n(n);
            let h = hits(&format!("zipf:{theta}"), n, 1_000_000);
            let top = *h.iter().max().unwrap() as f64 / 1e6;
            let got = hottest_share(h, 0.1);
            assert!((got - want).abs() < 0.01, "zipf:{theta}: {got} want {want}");
            assert!((top - 1.0 / h_n(n)).abs() < 0.01, "zipf:{theta} top {top}");
        }
        // Uniform for contrast: the hottest 10 % take little more than 10 %.
        let d = OffsetGen::new(true, true, 10_000 * 4096, 4096, 3);
        let (mut g, mut rng) = (d, Rng::new(5));
        let mut h = vec![0u64; 10_000];
        for _ in 0..1_000_000 {
            h[(g.next(4096, &mut rng).0 / 4096) as usize] += 1;
        }
        assert!(hottest_share(h, 0.1) < 0.13);
    }

    /// pareto:h: the hottest fraction f takes f^(ln(1−h)/ln h) of the hits:
    /// 80 % on the hottest 20 % for h = 0.2.
    #[test]
    fn pareto_hit_share_matches_the_analytic_value() {
        let h = 0.2f64;
        let h_hits = hits("pareto:0.2", 10_000, 1_000_000);
        for f in [0.05, 0.2, 0.5] {
            let want = f64::powf(f, (1.0 - h).ln() / h.ln());
            let got = hottest_share(h_hits.clone(), f);
            assert!((got - want).abs() < 0.01, "f={f}: {got} want {want}");
        }
        assert!((hottest_share(h_hits, 0.2) - 0.8).abs() < 0.01);
    }

    /// zoned:60/10:30/20:10/70: 60 % of the I/Os in the first 10 % of the
    /// region, uniformly; 30 % in the next 20 %; 10 % in the rest.
    #[test]
    fn zoned_zones_take_their_shares() {
        let n = 1000u64;
        let h = hits("zoned:60/10:30/20:10/70", n, 400_000);
        let share = |a: usize, b: usize| h[a..b].iter().sum::<u64>() as f64 / 400_000.0;
        assert!((share(0, 100) - 0.6).abs() < 0.005, "{}", share(0, 100));
        assert!((share(100, 300) - 0.3).abs() < 0.005);
        assert!((share(300, 1000) - 0.1).abs() < 0.005);
        // Uniform inside a zone: every block of the first zone about 0.6 %.
        assert!(
            h[..100].iter().all(|&c| (1_800..3_000).contains(&c)),
            "{:?}",
            &h[..100]
        );
        // zoned_abs: absolute extents (here 40 KiB = 10 slots of 4 KiB).
        let d = crate::access::parse_distribution("zoned_abs:90/40k:10/360k")
            .unwrap()
            .unwrap();
        let skew = Skew::new(&d, 100, 4096, 1);
        let mut rng = Rng::new(2);
        let first = (0..100_000).filter(|_| skew.draw(&mut rng) < 10).count();
        assert!((first as f64 / 1e5 - 0.9).abs() < 0.01, "{first}");
    }

    /// normal:P as fio's gauss_next: the mean of 12 uniform ranks (σ = n/12
    /// around n/2) plus a uniform spread of P % of n: σ² = n²/144 + (Pn/100)²/12.
    #[test]
    fn normal_spread_is_fios() {
        let n = 100_000u64;
        for pct in [0.0f64, 40.0] {
            let d = crate::access::parse_distribution(&format!("normal:{pct}"))
                .unwrap()
                .unwrap();
            let skew = Skew::new(&d, n, 4096, 4);
            let mut rng = Rng::new(9);
            let r: Vec<f64> = (0..200_000).map(|_| skew.rank(&mut rng) as f64).collect();
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / r.len() as f64).sqrt();
            let s = pct / 100.0 * n as f64;
            let want = ((n as f64).powi(2) / 144.0 + s * s / 12.0).sqrt();
            assert!((mean / (n as f64 / 2.0) - 1.0).abs() < 0.01, "{mean}");
            assert!(
                (sd / want - 1.0).abs() < 0.02,
                "normal:{pct}: sd {sd} want {want}"
            );
            // Inside ±1σ: about 68 % without the uniform spread (a bell, not
            // a flat one).
            let inside = r.iter().filter(|x| (*x - mean).abs() < want).count() as f64;
            if pct == 0.0 {
                assert!((inside / r.len() as f64 - 0.683).abs() < 0.01, "{inside}");
            }
        }
    }

    /// The center moves the hot spot: zipf:1.2:0.25 puts rank 0 at slot
    /// perm(0) + n/4, so two centers give two different hottest blocks, and
    /// the same seed the same hot set.
    #[test]
    fn a_center_rotates_the_hot_spot() {
        let hot = |dist: &str| {
            let h = hits(dist, 1000, 50_000);
            (0..1000).max_by_key(|&i| h[i]).unwrap() as u64
        };
        let (a, b) = (hot("zipf:1.2:0"), hot("zipf:1.2:0.25"));
        assert_eq!((a + 250) % 1000, b);
        assert_eq!(hot("zipf:1.2:0.25"), b);
    }

    /// fio's rw=read:-8k with bs=4k: 0 first, then from the end down one
    /// block at a time (size−8k, size−12k, ..., 4k, 0, size−8k, ...);
    /// rw=write:112k with bs=16k: every 128k, wrapping to 0 past the end.
    #[test]
    fn skips_give_fios_offset_sequence() {
        let k = 1024u64;
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::skipping(64 * k, -8 * 1024);
        let offs: Vec<u64> = (0..18).map(|_| g.next(4 * k, &mut rng).0 / k).collect();
        assert_eq!(
            offs,
            vec![
                0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 56, 52
            ]
        );
        let mut g = OffsetGen::skipping(512 * k, 112 * 1024);
        let offs: Vec<u64> = (0..6).map(|_| g.next(16 * k, &mut rng).0 / k).collect();
        assert_eq!(offs, vec![0, 128, 256, 384, 0, 128]);
    }

    /// fio's zonemode=strided, offsets as fio 3 writes them in its iolog
    /// (512k file, bs=16k): zonesize=64k zoneskip=128k reads 4 blocks
    /// every 192k, wrapping to 0 past the end, and a pass is 512k of I/O
    /// (32 reads, two wraps); zonerange=32k (under zonesize) reads each
    /// zone's range twice before the skip of 32k + 96k.
    #[test]
    fn strided_zones_give_fios_offset_sequence() {
        let k = 1024u64;
        let mut rng = Rng::new(1);
        let run = |g: &mut OffsetGen, rng: &mut Rng, n: usize| -> Vec<(u64, bool)> {
            (0..n)
                .map(|_| {
                    let (o, w) = g.next(16 * k, rng);
                    (o / k, w)
                })
                .collect()
        };
        let mut g = OffsetGen::strided(64 * k, 64 * k, 128 * k, 512 * k);
        let got = run(&mut g, &mut rng, 33);
        let cycle = [0, 16, 32, 48, 192, 208, 224, 240, 384, 400, 416, 432];
        let want: Vec<u64> = cycle.iter().cycle().take(33).copied().collect();
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), want);
        // The 33rd I/O (after 512k of reads) starts the second pass.
        let passes: Vec<usize> = (0..33).filter(|&i| got[i].1).collect();
        assert_eq!(passes, vec![32]);
        let mut g = OffsetGen::strided(64 * k, 32 * k, 96 * k, 512 * k);
        let got: Vec<u64> = run(&mut g, &mut rng, 16).iter().map(|x| x.0).collect();
        assert_eq!(
            got,
            vec![
                0, 16, 0, 16, 128, 144, 128, 144, 256, 272, 256, 272, 384, 400, 384, 400
            ]
        );
    }

    /// fio's examples/sequence-distribution.fio: sequence:2,0,1 reads
    /// blocks 2, 0, 1, 2, 0, 1; with random_sequence_stride=1 cycle c adds
    /// 3c: 2, 0, 1, 5, 3, 4. Past the region (12 blocks) a stride starts a
    /// new pass at group 0.
    #[test]
    fn sequence_gives_fios_block_order() {
        let k = 4096u64;
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::sequence(&[2, 0, 1], false, 12 * k, k);
        let blocks: Vec<u64> = (0..6).map(|_| g.next(k, &mut rng).0 / k).collect();
        assert_eq!(blocks, vec![2, 0, 1, 2, 0, 1]);
        let mut g = OffsetGen::sequence(&[2, 0, 1], true, 12 * k, k);
        let got: Vec<(u64, bool)> = (0..15)
            .map(|_| {
                let (o, w) = g.next(k, &mut rng);
                (o / k, w)
            })
            .collect();
        let blocks: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(blocks, vec![2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 2, 0, 1]);
        assert!(got[12].1, "the 13th I/O starts a new pass");
        assert!(got[..12].iter().all(|g| !g.1));
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
