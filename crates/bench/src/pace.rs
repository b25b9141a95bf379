//! When a rate-capped I/O may be issued: fio's `rate_iops` (I/Os per
//! second, both directions together, as storlab always had it), `rate`
//! (bytes per second per direction) and `rate_process`.
//!
//! Each cap is a lane. A `linear` lane makes the I/O that follows `u`
//! units (I/Os or bytes) of its lane due at `u / rate` after the start, as
//! fio's `usec_for_io` does: a worker that fell behind catches up, one
//! that is ahead sleeps. A `poisson` lane spaces I/Os by exponential gaps
//! whose mean is the I/O's share of the rate (`1 / rate_iops`, or
//! `len / rate` bytes; fio uses the smallest block size there, which is
//! the same for a single `bs`), drawn once per I/O, so the arrivals form a
//! Poisson process of the asked rate. An I/O is due when every lane that
//! covers it allows it.

use crate::engine::Dir;
use crate::offsets::Rng;
use storlab_types::{PhaseParams, RateProcess};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Covers {
    All,
    Reads,
    Writes,
}

#[derive(Debug, Clone)]
struct Lane {
    covers: Covers,
    /// Units per second: I/Os for `All`, bytes otherwise.
    rate: u64,
    /// Units issued so far (linear).
    units: u64,
    /// Poisson: when the last I/O of this lane was due, and the next one's
    /// due time once drawn (ns after the start).
    last_ns: f64,
    next_ns: Option<f64>,
}

impl Lane {
    fn applies(&self, dir: Dir) -> bool {
        match self.covers {
            Covers::All => true,
            Covers::Reads => dir == Dir::Read,
            Covers::Writes => dir == Dir::Write,
        }
    }

    fn units_of(&self, len: u64) -> u64 {
        if self.covers == Covers::All { 1 } else { len }
    }
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    process: RateProcess,
    lanes: Vec<Lane>,
    rng: Rng,
}

/// Uniform in [0, 1) with 53 bits.
#[inline]
pub(crate) fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Pacer {
    /// The pacer of phase `p`, or None when nothing is capped (the loop
    /// then never reads the clock for pacing).
    pub fn of(p: &PhaseParams, seed: u64) -> Option<Pacer> {
        let lanes: Vec<Lane> = [
            (Covers::All, u64::from(p.rate_iops)),
            (Covers::Reads, p.rate_read_bytes_per_s),
            (Covers::Writes, p.rate_write_bytes_per_s),
        ]
        .into_iter()
        .filter(|(_, r)| *r > 0)
        .map(|(covers, rate)| Lane {
            covers,
            rate,
            units: 0,
            last_ns: 0.0,
            next_ns: None,
        })
        .collect();
        (!lanes.is_empty()).then(|| Pacer {
            process: p.rate_process,
            lanes,
            rng: Rng::new(seed ^ 0x5041_4345),
        })
    }

    /// When (ns after the start) an I/O of `dir` and `len` bytes may go.
    /// Asking again before [`Pacer::issued`] gives the same answer.
    pub fn due(&mut self, dir: Dir, len: u64) -> u64 {
        let mut due = 0u64;
        for lane in self.lanes.iter_mut().filter(|l| l.applies(dir)) {
            let t = match self.process {
                RateProcess::Linear => {
                    u64::try_from(u128::from(lane.units) * 1_000_000_000 / u128::from(lane.rate))
                        .unwrap_or(u64::MAX)
                }
                RateProcess::Poisson => {
                    let units = lane.units_of(len);
                    let rng = &mut self.rng;
                    let next = *lane.next_ns.get_or_insert_with(|| {
                        let mean = units as f64 * 1e9 / lane.rate as f64;
                        lane.last_ns - (1.0 - unit(rng)).ln() * mean
                    });
                    next as u64
                }
            };
            due = due.max(t);
        }
        due
    }

    /// The I/O asked about last was issued.
    pub fn issued(&mut self, dir: Dir, len: u64) {
        for lane in self.lanes.iter_mut().filter(|l| l.applies(dir)) {
            lane.units += lane.units_of(len);
            if let Some(n) = lane.next_ns.take() {
                lane.last_ns = n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> PhaseParams {
        let spec = crate::options::spec_from_pairs(pairs.iter().copied()).unwrap();
        crate::options::resolve_phase(&spec, 0).unwrap()
    }

    /// Due times of `n` I/Os of `dir`, issued as soon as allowed.
    fn dues(p: &mut Pacer, n: usize, dir: Dir, len: u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let d = p.due(dir, len);
                assert_eq!(p.due(dir, len), d, "asking twice gives the same time");
                p.issued(dir, len);
                d
            })
            .collect()
    }

    #[test]
    fn nothing_capped_means_no_pacer() {
        assert!(Pacer::of(&params(&[("rw", "randread")]), 1).is_none());
    }

    /// rate=1m,500k: reads at 1 MB/s and writes at 500 kB/s, each on its own.
    #[test]
    fn linear_caps_each_direction_apart() {
        let p = params(&[("rw", "randrw"), ("rate", "1MB,500kB"), ("bs", "4k")]);
        assert_eq!(p.rate_read_bytes_per_s, 1_000_000);
        assert_eq!(p.rate_write_bytes_per_s, 500_000);
        let mut pacer = Pacer::of(&p, 1).unwrap();
        let r = dues(&mut pacer, 3, Dir::Read, 4096);
        assert_eq!(r, vec![0, 4_096_000, 8_192_000]);
        let w = dues(&mut pacer, 3, Dir::Write, 4096);
        assert_eq!(w, vec![0, 8_192_000, 16_384_000]);
        // A write-only cap leaves reads free.
        let p = params(&[("rw", "randrw"), ("rate", ",500kB")]);
        let mut pacer = Pacer::of(&p, 1).unwrap();
        assert_eq!(dues(&mut pacer, 3, Dir::Read, 4096), vec![0, 0, 0]);
    }

    /// Poisson: the gaps are exponential with the asked mean (mean and
    /// coefficient of variation 1), for rate_iops and for a byte rate.
    #[test]
    fn poisson_gaps_are_exponential_with_the_rate_as_mean() {
        for (pairs, mean_ns) in [
            (vec![("rate_iops", "2000")], 500_000.0),
            (vec![("rate", "4096000")], 1_000_000.0),
        ] {
            let mut all = vec![
                ("rw", "randread"),
                ("bs", "4k"),
                ("rate_process", "poisson"),
            ];
            all.extend(pairs);
            let p = params(&all);
            assert_eq!(p.rate_process, RateProcess::Poisson);
            let mut pacer = Pacer::of(&p, 7).unwrap();
            let d = dues(&mut pacer, 100_001, Dir::Read, 4096);
            let gaps: Vec<f64> = d.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
            let n = gaps.len() as f64;
            let m = gaps.iter().sum::<f64>() / n;
            let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / n).sqrt();
            assert!((m / mean_ns - 1.0).abs() < 0.02, "mean {m} want {mean_ns}");
            assert!((sd / m - 1.0).abs() < 0.03, "cv {}", sd / m);
            // Memoryless: about e^-1 of the gaps exceed the mean.
            let over = gaps.iter().filter(|&&g| g > mean_ns).count() as f64 / n;
            assert!((over - (-1.0f64).exp()).abs() < 0.01, "{over}");
        }
        // Linear: every gap is the mean.
        let p = params(&[("rw", "randread"), ("rate_iops", "2000")]);
        let mut pacer = Pacer::of(&p, 7).unwrap();
        let d = dues(&mut pacer, 5, Dir::Read, 4096);
        assert!(d.windows(2).all(|w| w[1] - w[0] == 500_000), "{d:?}");
    }
}
