//! A storlab job file derived from a trace's [`Summary`]: the trace's
//! request sizes (`bs`/`bssplit`), read/write mix (`rw`, `rwmixread`),
//! sequential or random access, number of processes (`numjobs`), file per
//! process or one shared file, the region each process covers (`size`),
//! the concurrency each process kept (`iodepth`) and its fsync rate. It is
//! a synthetic stand-in for sweeps and `plan`/`sim`, not a replay: the
//! order and timing of the operations are not kept.

use crate::{Format, Summary};

/// The most entries of a derived `bssplit`.
const MAX_SPLIT: usize = 8;

/// A derived job file and how it was derived.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DerivedJob {
    /// The job file (TOML, `[global]` + one `[[phase]]`).
    pub toml: String,
    /// What was approximated (also comments in `toml`).
    pub notes: Vec<JobNote>,
}

/// Something a derived job approximates; its `Display` is the sentence the
/// job file's comments carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobNote {
    #[error(
        "more than 256 distinct request sizes: bssplit uses power-of-two buckets (each bucket's lower bound)"
    )]
    SizeBuckets,
    #[error(
        "request sizes that are not multiples of 512 bytes are rounded up to one (storlab's block sizes are whole sectors)"
    )]
    SizesRoundedToSectors,
    #[error(
        "{left} of {ops} operations have sizes beyond the {MAX_SPLIT} most common; they are left out of bssplit"
    )]
    SizesLeftOut { left: u64, ops: u64 },
    #[error("no non-empty request: bs 4k")]
    NoRequests,
    #[error("the trace records no completion times: iodepth 1")]
    NoCompletionTimes,
    #[error("some sizes are not multiples of 512 bytes: O_DIRECT may refuse them")]
    UnalignedForDirect,
}

impl serde::Serialize for JobNote {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `4096` → `4k`, `1048576` → `1m`, otherwise bytes.
fn size_text(b: u64) -> String {
    for (unit, suffix) in [(1u64 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")] {
        if b >= unit && b % unit == 0 {
            return format!("{}{suffix}", b / unit);
        }
    }
    b.to_string()
}

/// Whole percentages of `counts` adding up to 100 (largest remainder).
fn percentages(counts: &[u64]) -> Vec<u64> {
    let total: u64 = counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
    if total == 0 {
        return vec![0; counts.len()];
    }
    let total = u128::from(total);
    let mut pct: Vec<u64> = counts
        .iter()
        .map(|&c| (u128::from(c) * 100 / total) as u64)
        .collect();
    let mut rema: Vec<(u128, usize)> = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (u128::from(c) * 100 % total, i))
        .collect();
    rema.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let short = 100 - pct.iter().sum::<u64>();
    for &(_, i) in rema.iter().take(short as usize) {
        pct[i] += 1;
    }
    pct
}

/// Text safe inside a TOML comment or basic string (no control characters).
fn plain(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The `bssplit` entries (size, whole percent; they add up to 100): the
/// most common sizes, rounded up to whole sectors.
fn block_split(s: &Summary, ops: u64, notes: &mut Vec<JobNote>) -> Vec<(u64, u64)> {
    // Request sizes: the exact ones when few, else power-of-two buckets.
    let mut sizes: Vec<(u64, u64)> = if s.common_sizes.is_empty() {
        notes.push(JobNote::SizeBuckets);
        s.size_histogram
            .iter()
            .map(|b| (b.min_bytes, b.reads + b.writes))
            .collect()
    } else {
        s.common_sizes.clone()
    };
    sizes.retain(|&(b, _)| b > 0);
    // storlab's block sizes are whole 512-byte sectors.
    if sizes.iter().any(|&(b, _)| b % 512 != 0) {
        notes.push(JobNote::SizesRoundedToSectors);
        let mut merged: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
        for &(b, n) in &sizes {
            *merged
                .entry(b.div_ceil(512).saturating_mul(512))
                .or_default() += n;
        }
        sizes = merged.into_iter().collect();
    }
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if sizes.len() > MAX_SPLIT {
        let left: u64 = sizes[MAX_SPLIT..].iter().map(|x| x.1).sum();
        notes.push(JobNote::SizesLeftOut { left, ops });
        sizes.truncate(MAX_SPLIT);
    }
    let pct = percentages(&sizes.iter().map(|x| x.1).collect::<Vec<_>>());
    let mut split: Vec<(u64, u64)> = sizes
        .iter()
        .zip(&pct)
        .filter(|(_, p)| **p > 0)
        .map(|(x, p)| (x.0, *p))
        .collect();
    if split.is_empty() {
        split.push((4096, 100));
        notes.push(JobNote::NoRequests);
    }
    let fix = 100u64.saturating_sub(split.iter().map(|x| x.1).sum());
    split[0].1 += fix;
    split
}

/// Derive a job file; None when the trace has no reads or writes.
pub fn derive_job(s: &Summary) -> Option<DerivedJob> {
    let reads: u64 = s.ranks.iter().map(|r| r.reads).sum();
    let writes: u64 = s.ranks.iter().map(|r| r.writes).sum();
    if reads + writes == 0 {
        return None;
    }
    let mut notes = Vec::new();
    let split = block_split(s, reads + writes, &mut notes);
    let max_bs = split.iter().map(|x| x.0).max().unwrap_or(4096);
    let sequential = s.sequential_share >= 0.5;
    let rw = match (reads > 0, writes > 0, sequential) {
        (true, false, true) => "read",
        (true, false, false) => "randread",
        (false, true, true) => "write",
        (false, true, false) => "randwrite",
        (_, _, true) => "rw",
        (_, _, false) => "randrw",
    };
    let rwmixread = percentages(&[reads, writes])[0];
    let data_ranks = s
        .ranks
        .iter()
        .filter(|r| r.reads + r.writes > 0)
        .count()
        .max(1) as u64;
    let shared = s
        .files
        .iter()
        .any(|f| f.ranks > 1 && f.reads + f.writes > 0);
    let extent = s.files.iter().map(|f| f.extent_bytes).max().unwrap_or(0);
    let per_job = if shared {
        extent.div_ceil(data_ranks)
    } else {
        extent
    };
    let size = per_job.div_ceil(max_bs).max(1).saturating_mul(max_bs);
    let iodepth = s
        .concurrency
        .iter()
        .filter_map(|b| b.mean_in_flight)
        .fold(0.0f64, f64::max);
    let iodepth = if s.completion_times {
        ((iodepth / data_ranks as f64).round() as u64).clamp(1, 1024)
    } else {
        notes.push(JobNote::NoCompletionTimes);
        1
    };
    let syncs =
        s.ops.get("fsync").copied().unwrap_or(0) + s.ops.get("fdatasync").copied().unwrap_or(0);
    let fsync_every = if syncs > 0 && writes > 0 {
        (writes / syncs).max(1)
    } else {
        0
    };
    let cache = match s.format {
        Format::Blktrace { .. } => "direct",
        _ => "cold",
    };
    if split.iter().any(|x| x.0 % 512 != 0) && cache == "direct" {
        notes.push(JobNote::UnalignedForDirect);
    }
    let mut t = String::new();
    t += &format!(
        "# Derived by `storlab trace to-job` from {}\n",
        plain(&s.trace)
    );
    t += &format!(
        "# {}: {} records, {} rank(s), {} file(s), {} B read, {} B written, {:.0} % sequential\n",
        plain(&s.format.describe()),
        s.records,
        s.ranks.len(),
        s.files.len(),
        s.bytes_read,
        s.bytes_written,
        s.sequential_share * 100.0
    );
    t += "# A synthetic stand-in (sizes, mixes, processes), not a replay: order and timing are not kept.\n";
    for n in &notes {
        t += &format!("# note: {}\n", plain(&n.to_string()));
    }
    t += "\n[global]\n";
    if split.len() == 1 {
        t += &format!("bs = \"{}\"\n", size_text(split[0].0));
    } else {
        let parts: Vec<String> = split
            .iter()
            .map(|(b, p)| format!("{}/{p}", size_text(*b)))
            .collect();
        t += &format!("bssplit = \"{}\"\n", parts.join(":"));
    }
    t += &format!("size = \"{}\"\n", size_text(size));
    t += &format!("cache = \"{cache}\"\n");
    t += "\n[[phase]]\nname = \"trace\"\n";
    t += &format!("rw = \"{rw}\"\n");
    if reads > 0 && writes > 0 {
        t += &format!("rwmixread = {rwmixread}\n");
    }
    t += &format!("numjobs = {data_ranks}\n");
    if shared && data_ranks > 1 {
        t += "shared_file = true\n";
    }
    t += &format!("iodepth = {iodepth}\n");
    if fsync_every > 0 {
        t += &format!("fsync_every = {fsync_every}\n");
    }
    Some(DerivedJob { toml: t, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_add_up_to_100() {
        assert_eq!(percentages(&[1, 1, 1]), [34, 33, 33]);
        assert_eq!(percentages(&[80, 20]), [80, 20]);
        assert_eq!(percentages(&[999, 1]), [100, 0]);
    }

    #[test]
    fn sizes_are_written_as_storlab_reads_them() {
        assert_eq!(size_text(4096), "4k");
        assert_eq!(size_text(1 << 20), "1m");
        assert_eq!(size_text(4000), "4000");
    }
}

#[cfg(test)]
mod note_tests {
    use super::JobNote;

    /// The typed notes keep the sentences the job file's comments and
    /// `--json` carried as strings.
    #[test]
    fn notes_read_as_before_in_text_and_json() {
        let n = JobNote::SizesLeftOut { left: 3, ops: 10 };
        let text =
            "3 of 10 operations have sizes beyond the 8 most common; they are left out of bssplit";
        assert_eq!(n.to_string(), text);
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            serde_json::Value::from(text)
        );
    }
}
