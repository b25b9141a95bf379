//! fio's dedupe options (issue 27): `dedupe_percentage` of the written
//! blocks repeat an earlier block's content, as fio's `io_u.c`
//! (`get_buf_state`) and `dedupe.c` decide it:
//!
//! * each write buffer draws 1..=100; at most `dedupe_percentage` it is a
//!   duplicate, else the job's next unique block (unique block k of job j
//!   has content `C(j, k)`, from a seeded generator); 100 % writes the
//!   first unique block over and over;
//! * `dedupe_mode=repeat`: a duplicate is the job's last unique block;
//! * `dedupe_mode=working_set`: a duplicate is one of the first
//!   `size × dedupe_working_set_percentage / 100 / bs` unique blocks (fio's
//!   `num_unique_pages`), drawn uniformly; with `dedupe_global` page i is
//!   unique block `i mod P` of job `(j + i / P) mod jobs` (`P` = pages per
//!   job), so the jobs repeat each other's blocks.
//!
//! With `buffer_compress_percentage` that share of each unit is zeros, as
//! storlab's `compressible` pattern. Dedupe blocks carry no verify header
//! (a header would make every block unique), so `verify` is refused with
//! dedupe, as a contradiction.

use crate::offsets::Rng;
use crate::options::{PhaseSpec, SpecError};
use storlab_types::fioverify::DedupeOptions;

/// Resolve the dedupe options, checked.
pub fn resolve(s: &PhaseSpec, verify: bool) -> Result<Option<DedupeOptions>, SpecError> {
    let pct = s.dedupe_percentage.unwrap_or(0);
    let mode = s
        .dedupe_mode
        .as_deref()
        .map(|m| m.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "repeat".into());
    if !matches!(mode.as_str(), "repeat" | "working_set") {
        return Err(SpecError(format!(
            "dedupe_mode={mode}: use repeat or working_set"
        )));
    }
    let ws = s.dedupe_working_set_percentage.unwrap_or(5);
    if pct > 100 || ws > 100 {
        return Err(SpecError(
            "dedupe_percentage and dedupe_working_set_percentage are from 0 to 100".into(),
        ));
    }
    if pct == 0 {
        return Ok(None);
    }
    if verify {
        return Err(SpecError(
            "dedupe_percentage with verify: verified blocks carry a header that makes each one \
             unique, so none could repeat: drop verify or the dedupe options"
                .into(),
        ));
    }
    if s.buffer_pattern.as_deref() == Some("zero") || s.zero_buffers.is_some_and(|z| z.0) {
        return Err(SpecError(
            "dedupe_percentage with zero buffers: every zero block repeats already: drop one"
                .into(),
        ));
    }
    Ok(Some(DedupeOptions {
        percentage: pct as u8,
        mode,
        working_set_pct: ws as u8,
        global: s.dedupe_global.is_some_and(|g| g.0),
    }))
}

/// One job's dedupe state.
#[derive(Debug)]
pub(crate) struct Deduper {
    opts: DedupeOptions,
    seed: u64,
    job: u64,
    jobs: u64,
    draw: Rng,
    pick: Rng,
    /// Unique blocks written so far (the next unique block's number).
    unique: u64,
    /// The last unique block's content (job, number).
    last: (u64, u64),
    /// Working-set pages, and pages per job with `dedupe_global`.
    pages: u64,
    per_job: u64,
    /// Percent of each unit that is zeros.
    zero_pct: u8,
}

impl Deduper {
    /// A job's state: job `job` of `jobs`, writing `size` bytes in blocks
    /// of at least `min_bs`.
    pub(crate) fn new(
        opts: &DedupeOptions,
        seed: u64,
        (job, jobs): (u64, u64),
        size: u64,
        min_bs: u64,
        zero_pct: u8,
    ) -> Deduper {
        let pages = (size * u64::from(opts.working_set_pct) / 100 / min_bs.max(1)).max(1);
        let jobs = jobs.max(1);
        Deduper {
            opts: opts.clone(),
            seed,
            job,
            jobs,
            draw: Rng::new(seed ^ job.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0xDED0),
            pick: Rng::new(seed ^ job.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7) ^ 0x5E7),
            unique: 0,
            last: (job, 0),
            pages,
            per_job: (pages / jobs).max(1),
            zero_pct,
        }
    }

    /// Which content the next written block has: (job, unique number).
    pub(crate) fn next_content(&mut self) -> (u64, u64) {
        let pct = u64::from(self.opts.percentage);
        if pct >= 100 {
            return (self.job, 0);
        }
        let v = 1 + self.draw.below(100);
        if v <= pct {
            if self.opts.mode == "working_set" {
                let i = self.pick.below(self.pages);
                return if self.opts.global {
                    ((self.job + i / self.per_job) % self.jobs, i % self.per_job)
                } else {
                    (self.job, i)
                };
            }
            return self.last;
        }
        let c = (self.job, self.unique);
        self.unique += 1;
        self.last = c;
        c
    }

    /// Fill the write buffer `buf` (one block) with its content, in units
    /// of `unit` bytes.
    pub(crate) fn fill(&mut self, buf: &mut [u8], unit: usize) {
        let (j, k) = self.next_content();
        let mut rng = Rng::new(
            self.seed
                ^ j.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ k.wrapping_mul(0xBF58_476D_1CE4_E5B9),
        );
        for u in buf.chunks_mut(unit.max(1)) {
            let zeros = u.len() * usize::from(self.zero_pct) / 100;
            let random = u.len() - zeros;
            crate::data::fill_random(&mut u[..random], &mut rng);
            u[random..].fill(0);
        }
    }
}

/// A job's dedupe state for phase `p` (None without dedupe): job `job`
/// of the run's `jobs`, writing `size` bytes.
pub(crate) fn for_job(
    p: &storlab_types::PhaseParams,
    job: u32,
    jobs: usize,
    size: u64,
) -> Option<Deduper> {
    let d = p.dedupe.as_ref()?;
    let zero_pct = match p.buffer_pattern {
        storlab_types::BufferPattern::Compressible { pct } => pct,
        _ => 0,
    };
    let min_bs = p.bs.iter().map(|b| b.bs_bytes).min().unwrap_or(4096);
    Some(Deduper::new(
        d,
        p.seed,
        (u64::from(job), jobs as u64),
        size,
        min_bs,
        zero_pct,
    ))
}

#[cfg(test)]
/// The share of `block`-byte blocks of `data` that repeat an earlier
/// block (blocks − distinct blocks, over blocks): what fio's
/// `t/fio-dedupe` reports as its duplicate extents.
pub fn duplicate_share(data: &[u8], block: usize) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut n = 0usize;
    for b in data.chunks_exact(block) {
        n += 1;
        seen.insert(b);
    }
    if n == 0 {
        return 0.0;
    }
    (n - seen.len()) as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pct: u8, mode: &str, global: bool) -> DedupeOptions {
        DedupeOptions {
            percentage: pct,
            mode: mode.into(),
            working_set_pct: 50,
            global,
        }
    }

    fn write(d: &mut Deduper, blocks: usize) -> Vec<u8> {
        let mut out = vec![0u8; blocks * 4096];
        for b in out.chunks_exact_mut(4096) {
            d.fill(b, 4096);
        }
        out
    }

    #[test]
    fn the_share_of_duplicate_blocks_is_dedupe_percentage() {
        for mode in ["repeat", "working_set"] {
            let mut d = Deduper::new(&opts(30, mode, false), 1, (0, 1), 64 << 20, 4096, 0);
            let data = write(&mut d, 16384);
            let share = duplicate_share(&data, 4096);
            assert!((share - 0.30).abs() < 0.02, "{mode}: {share}");
        }
        // None without dedupe: storlab's blocks are all unique.
        let mut d = Deduper::new(&opts(100, "repeat", false), 1, (0, 1), 1 << 20, 4096, 0);
        let data = write(&mut d, 64);
        assert!((duplicate_share(&data, 4096) - 63.0 / 64.0).abs() < 1e-9);
    }

    #[test]
    fn dedupe_global_repeats_blocks_across_jobs() {
        // dedupe-global.fio: two jobs, 50 %, working_set 50 %, global.
        let size = 16u64 << 20;
        let blocks = (size / 4096) as usize;
        let run = |global| {
            let mut a = Deduper::new(&opts(50, "working_set", global), 9, (0, 2), size, 4096, 50);
            let mut b = Deduper::new(&opts(50, "working_set", global), 9, (1, 2), size, 4096, 50);
            let (da, db) = (write(&mut a, blocks), write(&mut b, blocks));
            let alone = duplicate_share(&da, 4096);
            let both = duplicate_share(&[da, db].concat(), 4096);
            (alone, both)
        };
        let (alone, both) = run(true);
        // As fio's example shows: each file alone dedupes less than both together.
        assert!(both > alone + 0.1, "global: alone {alone}, both {both}");
        let (alone_local, both_local) = run(false);
        // Without global the files share nothing: together = alone.
        assert!(
            (both_local - alone_local).abs() < 0.02,
            "{alone_local} {both_local}"
        );
        // Compressible: half of each unit is zeros.
        let mut d = Deduper::new(&opts(10, "repeat", false), 1, (0, 1), 1 << 20, 4096, 50);
        let data = write(&mut d, 4);
        assert!(data[2048..4096].iter().all(|&x| x == 0));
    }
}
