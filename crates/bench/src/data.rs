//! What is written: incompressible, unique-per-block data by default, and
//! the self-checking header `--verify` relies on.
//!
//! Every written buffer is divided into *units* (4 KiB, or the block size if
//! smaller). With the `random` pattern each unit is pseudo-random bytes
//! (regenerated on a buffer's first use and at least every 16th) and starts
//! with a 32-byte header:
//!
//! | bytes | content |
//! |---|---|
//! | 0..8 | `MAGIC ^ seed` (the run seed) |
//! | 8..16 | the unit's byte offset in its file |
//! | 16..20 | file index; 20..24 unit length |
//! | 24..32 | with verify: checksum of the unit with this field zero; otherwise the write's generation number |
//!
//! so no two units of a run are alike (nothing for dedupe to find) and a
//! reader can tell a misplaced, stale or corrupted unit.

use crate::offsets::Rng;
use storlab_types::BufferPattern;

/// Header length at the start of each unit.
pub const HEADER: usize = 32;
const MAGIC: u64 = 0x5354_4F52_4C41_4221; // "STORLAB!"

/// The unit size for a phase set whose smallest block is `min_bs`.
pub fn unit_size(min_bs: u64) -> usize {
    min_bs.clamp(512, 4096) as usize
}

/// Fill `buf` with fresh pseudo-random bytes.
#[inline]
pub fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let v = rng.next_u64().to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&v[..n]);
    }
}

/// Checksum of a unit, treating bytes 24..32 as zero.
pub fn checksum(unit: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325 ^ unit.len() as u64;
    let mut mix = |w: u64| {
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01B3).rotate_left(29);
    };
    for (i, c) in unit.chunks(8).enumerate() {
        if i == 3 {
            mix(0);
            continue;
        }
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        mix(u64::from_le_bytes(b));
    }
    h ^ (h >> 31)
}

/// Prepares write buffers for one job.
#[derive(Debug, Clone)]
pub struct DataGen {
    pattern: BufferPattern,
    unit: usize,
    seed: u64,
    verify: bool,
    rng: Rng,
    generation: u64,
    /// fio's `verify_pattern` (verify.rs): the bytes after each header.
    verify_pattern: Vec<u8>,
}

/// A write buffer's random payload is regenerated at least this often.
pub const REGENERATE_EVERY: u32 = 16;

impl DataGen {
    pub fn new(
        pattern: BufferPattern,
        unit: usize,
        seed: u64,
        verify: bool,
        stream: u64,
    ) -> DataGen {
        DataGen {
            pattern,
            unit,
            seed,
            verify,
            rng: Rng::new(seed ^ stream.wrapping_mul(0xA24B_AED4_963E_E407)),
            generation: 0,
            verify_pattern: Vec::new(),
        }
    }

    /// The unit size.
    pub fn unit(&self) -> usize {
        self.unit
    }

    /// Write fio's `verify_pattern` after each unit's header (verify.rs).
    pub fn set_pattern(&mut self, pattern: Vec<u8>) {
        self.verify_pattern = pattern;
    }

    /// Prepare `buf` for a write at `offset` of file `file`.
    ///
    /// With `regenerate`, the whole buffer is filled anew (fresh random
    /// payload); otherwise only the headers are rewritten, which is enough
    /// to make every 4 KiB unit unique (offset, file, write generation) and
    /// costs a few stores per unit instead of generating the payload. The
    /// worker regenerates a buffer on its first use, after a read landed in
    /// it, and every [`REGENERATE_EVERY`] uses.
    pub fn fill(&mut self, buf: &mut [u8], file: u32, offset: u64, regenerate: bool) {
        self.generation += 1;
        if !self.verify_pattern.is_empty() {
            crate::verify::fill_pattern(buf, &self.verify_pattern, self.unit);
            return self.stamp_all(buf, file, offset);
        }
        match self.pattern {
            BufferPattern::Zero => {
                if regenerate {
                    buf.fill(0);
                }
                if self.verify {
                    self.stamp_all(buf, file, offset);
                }
            }
            BufferPattern::Random => {
                if regenerate {
                    fill_random(buf, &mut self.rng);
                }
                self.stamp_all(buf, file, offset);
            }
            BufferPattern::Ior => {
                if regenerate {
                    crate::readcheck::fill(buf);
                }
            }
            BufferPattern::Compressible { pct } => {
                if regenerate {
                    for unit in buf.chunks_mut(self.unit) {
                        let zeros = unit.len() * pct as usize / 100;
                        let random = unit.len() - zeros;
                        fill_random(&mut unit[..random], &mut self.rng);
                        unit[random..].fill(0);
                    }
                }
                self.stamp_all(buf, file, offset);
            }
        }
    }

    fn stamp_all(&self, buf: &mut [u8], file: u32, offset: u64) {
        let unit = self.unit;
        for (i, u) in buf.chunks_mut(unit).enumerate() {
            if u.len() < HEADER {
                continue;
            }
            let off = offset + (i * unit) as u64;
            u[0..8].copy_from_slice(&(MAGIC ^ self.seed).to_le_bytes());
            u[8..16].copy_from_slice(&off.to_le_bytes());
            u[16..20].copy_from_slice(&file.to_le_bytes());
            let ulen = u.len() as u32;
            u[20..24].copy_from_slice(&ulen.to_le_bytes());
            // With verify: a checksum over the unit; otherwise the write
            // generation, so rewrites of the same block differ too.
            let last = if self.verify {
                checksum(u)
            } else {
                self.generation
            };
            u[24..32].copy_from_slice(&last.to_le_bytes());
        }
    }
}

/// Check the units of `buf`, read at `offset` of file `file`. Returns the
/// number of units checked and, for the first bad one, its offset and why.
pub fn verify(
    buf: &[u8],
    unit: usize,
    seed: u64,
    file: u32,
    offset: u64,
) -> (u64, Option<(u64, String)>) {
    let mut checked = 0;
    for (i, u) in buf.chunks(unit).enumerate() {
        if u.len() < HEADER {
            continue;
        }
        checked += 1;
        let off = offset + (i * unit) as u64;
        let word = |r: std::ops::Range<usize>| {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(&u[r]);
            u64::from_le_bytes(b)
        };
        // The checksum (which covers the header fields too) comes first: a
        // flipped bit in the header is corruption, not a misplaced write.
        // Only an intact unit's header is trusted to say where it belongs.
        let reason = if word(24..32) != checksum(u) {
            if u.iter().all(|&b| b == 0) {
                Some("unit is all zeros (never written, or lost)".to_string())
            } else {
                Some("checksum mismatch (corrupted data)".to_string())
            }
        } else if word(0..8) != MAGIC ^ seed {
            Some("header magic/seed mismatch (intact data from another run)".to_string())
        } else if word(8..16) != off {
            Some(format!(
                "unit claims offset {} (misplaced write)",
                word(8..16)
            ))
        } else if word(16..20) != file as u64 {
            Some(format!("unit belongs to file #{}", word(16..20)))
        } else {
            None
        };
        if let Some(r) = reason {
            return (checked, Some((off, r)));
        }
    }
    (checked, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_data_is_incompressible_and_unique() {
        let mut g = DataGen::new(BufferPattern::Random, 4096, 7, false, 0);
        let mut a = vec![0u8; 65536];
        let mut b = vec![0u8; 65536];
        g.fill(&mut a, 0, 0, true);
        g.fill(&mut b, 0, 0, true);
        assert_ne!(a, b, "two writes of the same block differ");
        // Every 4 KiB unit differs from every other one.
        let units: std::collections::BTreeSet<&[u8]> =
            a.chunks(4096).chain(b.chunks(4096)).collect();
        assert_eq!(units.len(), 32);
        // Byte histogram close to uniform: chi-square well under 400 (255 dof).
        // (Headers are structured; the payload after them is what must look random.)
        let mut counts = [0f64; 256];
        let mut n = 0.0;
        for unit in a.chunks(4096) {
            for &x in &unit[HEADER..] {
                counts[x as usize] += 1.0;
                n += 1.0;
            }
        }
        let e = n / 256.0;
        let chi2: f64 = counts.iter().map(|c| (c - e) * (c - e) / e).sum();
        assert!(chi2 < 400.0, "chi2 = {chi2}");
    }

    #[test]
    fn restamped_buffers_stay_unique_per_unit() {
        let mut g = DataGen::new(BufferPattern::Random, 4096, 7, false, 0);
        let mut buf = vec![0u8; 16384];
        let mut seen = std::collections::BTreeSet::new();
        // The same buffer rewritten at the same and at other offsets, without
        // regenerating the payload: every unit ever written differs.
        for (i, off) in [0u64, 0, 16384, 0].into_iter().enumerate() {
            g.fill(&mut buf, 0, off, i == 0);
            for u in buf.chunks(4096) {
                assert!(seen.insert(u.to_vec()), "duplicate unit");
            }
        }
    }

    #[test]
    fn compressible_has_zeros() {
        let mut g = DataGen::new(BufferPattern::Compressible { pct: 50 }, 4096, 7, false, 0);
        let mut a = vec![1u8; 8192];
        g.fill(&mut a, 0, 0, true);
        assert!(a[2048..4096].iter().all(|&b| b == 0));
        assert!(a[32..2048].iter().any(|&b| b != 0));
    }

    #[test]
    fn verify_detects_flips_and_misplacement() {
        let mut g = DataGen::new(BufferPattern::Random, 4096, 99, true, 1);
        let mut a = vec![0u8; 16384];
        g.fill(&mut a, 2, 8192, true);
        assert_eq!(verify(&a, 4096, 99, 2, 8192), (4, None));
        let (_, bad) = verify(&a, 4096, 99, 2, 0);
        assert!(bad.unwrap().1.contains("misplaced"));
        let (_, bad) = verify(&a, 4096, 98, 2, 8192);
        assert!(bad.unwrap().1.contains("magic"));
        a[4096 + 1000] ^= 0x40;
        let (n, bad) = verify(&a, 4096, 99, 2, 8192);
        assert_eq!(n, 2);
        let (off, why) = bad.unwrap();
        assert_eq!(off, 8192 + 4096);
        assert!(why.contains("checksum"));
        // A flipped bit in a header field is corruption, not misplacement.
        let mut b = vec![0u8; 4096];
        g.fill(&mut b, 2, 0, true);
        b[9] ^= 0x01;
        let (_, bad) = verify(&b, 4096, 99, 2, 0);
        assert!(bad.unwrap().1.contains("checksum"), "header flip");
        let zeros = vec![0u8; 4096];
        assert!(
            verify(&zeros, 4096, 99, 2, 0)
                .1
                .unwrap()
                .1
                .contains("zeros")
        );
    }
}
