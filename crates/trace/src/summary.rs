//! What a trace holds, gathered in one pass in memory that grows with
//! ranks and files, never with records.

use crate::{FileId, Format, Op, TraceError, TraceReader, TraceRecord};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Request sizes are counted in power-of-two buckets: bucket `k` holds
/// sizes in `[2^k, 2^(k+1))` (bucket 0 also holds 0).
pub const SIZE_BUCKETS: usize = 64;
/// The most concurrency bins kept; when the trace outgrows them, pairs of
/// bins are merged and the bin width doubles.
pub const MAX_BINS: usize = 64;
/// The first bin width: 1 ms.
const FIRST_BIN_NS: u64 = 1_000_000;
/// Exact request sizes remembered (beyond that, only buckets).
const MAX_EXACT_SIZES: usize = 256;

/// Per-rank figures (what pydarshan's per-rank counts are compared with).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RankSummary {
    pub rank: u32,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Everything but reads and writes: opens, closes, syncs and trims.
    pub other_ops: u64,
    /// Of the other operations, trims (fio's `trim`, blktrace's discards)
    /// and the bytes they address: a replay issues them and checks both.
    pub trims: u64,
    pub bytes_trimmed: u64,
}

/// Per-file figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileSummary {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Trims of it, and the bytes they address.
    pub trims: u64,
    pub bytes_trimmed: u64,
    /// One past the highest byte addressed.
    pub extent_bytes: u64,
    /// Ranks that addressed it.
    pub ranks: u32,
}

/// Request sizes in `[min_bytes, max_bytes]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

/// One interval of the trace's time line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConcurrencyBin {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Data operations that started in it.
    pub ops_started: u64,
    /// Mean operations in flight (busy time of all operations overlapping
    /// the bin / its width); null when the trace has no completion times.
    pub mean_in_flight: Option<f64>,
}

/// What a trace holds.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub trace: String,
    pub format: Format,
    pub records: u64,
    /// Ranks the trace declares (Darshan's nprocs), if it does.
    pub declared_ranks: Option<u32>,
    pub ranks: Vec<RankSummary>,
    pub files: Vec<FileSummary>,
    pub ops: BTreeMap<&'static str, u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// From the first start to the last start (or completion).
    pub duration_ns: u64,
    pub size_histogram: Vec<SizeBucket>,
    /// Reads and writes that start where the previous data operation of
    /// the same rank on the same file ended (Darshan's "consecutive").
    pub sequential_ops: u64,
    /// Reads and writes that do not (the first of each rank and file is
    /// counted as sequential when it starts at offset 0).
    pub random_ops: u64,
    /// sequential / (sequential + random), 0 without data operations.
    pub sequential_share: f64,
    /// Mean bytes per read and per write.
    pub mean_read_bytes: u64,
    pub mean_write_bytes: u64,
    /// The most frequent exact request sizes (size, read+write count),
    /// biggest count first; empty when the trace had too many sizes.
    pub common_sizes: Vec<(u64, u64)>,
    pub concurrency: Vec<ConcurrencyBin>,
    pub completion_times: bool,
}

#[derive(Default)]
struct Bins {
    width: u64,
    started: Vec<u64>,
    busy: Vec<f64>,
}

impl Bins {
    fn index(&mut self, t: u64) -> usize {
        if self.width == 0 {
            self.width = FIRST_BIN_NS;
            self.started = vec![0; MAX_BINS];
            self.busy = vec![0.0; MAX_BINS];
        }
        while t / self.width >= MAX_BINS as u64 {
            self.width = self.width.saturating_mul(2);
            for i in 0..MAX_BINS / 2 {
                self.started[i] = self.started[2 * i] + self.started[2 * i + 1];
                self.busy[i] = self.busy[2 * i] + self.busy[2 * i + 1];
            }
            for i in MAX_BINS / 2..MAX_BINS {
                self.started[i] = 0;
                self.busy[i] = 0.0;
            }
        }
        (t / self.width) as usize
    }

    fn add(&mut self, start: u64, end: Option<u64>) {
        // Widen the bins to hold the end first, so both indexes agree.
        if let Some(e) = end {
            self.index(e);
        }
        let mut i = self.index(start);
        self.started[i] += 1;
        let Some(end) = end else { return };
        let mut t = start;
        while t < end && i < MAX_BINS {
            let bin_end = (i as u64 + 1).saturating_mul(self.width);
            let seg = end.min(bin_end) - t;
            self.busy[i] += seg as f64;
            t += seg;
            i += 1;
        }
    }
}

/// Gathers a [`Summary`] record by record.
pub struct Summarizer {
    records: u64,
    ranks: BTreeMap<u32, RankSummary>,
    files: HashMap<FileId, (FileSummary, std::collections::BTreeSet<u32>)>,
    ops: BTreeMap<&'static str, u64>,
    sizes: [[u64; 2]; SIZE_BUCKETS],
    exact: HashMap<u64, u64>,
    exact_overflow: bool,
    last_end: HashMap<(u32, FileId), u64>,
    seq: u64,
    rand: u64,
    first: Option<u64>,
    last: u64,
    bins: Bins,
    completion_times: bool,
}

impl Default for Summarizer {
    fn default() -> Self {
        Summarizer {
            records: 0,
            ranks: BTreeMap::new(),
            files: HashMap::new(),
            ops: BTreeMap::new(),
            sizes: [[0; 2]; SIZE_BUCKETS],
            exact: HashMap::new(),
            exact_overflow: false,
            last_end: HashMap::new(),
            seq: 0,
            rand: 0,
            first: None,
            last: 0,
            bins: Bins::default(),
            completion_times: true,
        }
    }
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer")
            .field("records", &self.records)
            .finish()
    }
}

fn bucket(len: u64) -> usize {
    if len == 0 {
        0
    } else {
        63 - len.leading_zeros() as usize
    }
}

impl Summarizer {
    /// Count one record.
    pub fn add(&mut self, r: &TraceRecord) {
        self.records += 1;
        *self.ops.entry(r.op.name()).or_default() += 1;
        let rank = self.ranks.entry(r.rank).or_insert_with(|| RankSummary {
            rank: r.rank,
            ..Default::default()
        });
        let (file, franks) = self.files.entry(r.file).or_default();
        franks.insert(r.rank);
        match r.op {
            Op::Read => {
                rank.reads += 1;
                rank.bytes_read = rank.bytes_read.saturating_add(r.length);
                file.reads += 1;
                file.bytes_read = file.bytes_read.saturating_add(r.length);
            }
            Op::Write => {
                rank.writes += 1;
                rank.bytes_written = rank.bytes_written.saturating_add(r.length);
                file.writes += 1;
                file.bytes_written = file.bytes_written.saturating_add(r.length);
            }
            Op::Trim => {
                rank.other_ops += 1;
                rank.trims += 1;
                rank.bytes_trimmed = rank.bytes_trimmed.saturating_add(r.length);
                file.trims += 1;
                file.bytes_trimmed = file.bytes_trimmed.saturating_add(r.length);
            }
            _ => rank.other_ops += 1,
        }
        if r.op.is_data() || r.op == Op::Trim {
            file.extent_bytes = file.extent_bytes.max(r.offset.saturating_add(r.length));
        }
        if r.op.is_data() {
            let w = usize::from(r.op == Op::Write);
            self.sizes[bucket(r.length)][w] += 1;
            if !self.exact_overflow {
                *self.exact.entry(r.length).or_default() += 1;
                if self.exact.len() > MAX_EXACT_SIZES {
                    self.exact_overflow = true;
                    self.exact.clear();
                }
            }
            let key = (r.rank, r.file);
            let end = r.offset.saturating_add(r.length);
            match self.last_end.insert(key, end) {
                Some(prev) if prev == r.offset => self.seq += 1,
                None if r.offset == 0 => self.seq += 1,
                _ => self.rand += 1,
            }
            self.bins.add(r.start_ns, r.end_ns);
            if r.end_ns.is_none() {
                self.completion_times = false;
            }
        }
        self.first = Some(self.first.map_or(r.start_ns, |f| f.min(r.start_ns)));
        self.last = self
            .last
            .max(r.end_ns.unwrap_or(r.start_ns))
            .max(r.start_ns);
    }

    /// The summary of the records added, with the reader's names.
    pub fn finish(self, reader: &TraceReader) -> Summary {
        let names = reader.files();
        let mut files: Vec<FileSummary> = self
            .files
            .into_iter()
            .map(|(id, (mut f, ranks))| {
                f.name = names
                    .get(id as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("#{id}"));
                f.ranks = u32::try_from(ranks.len()).unwrap_or(u32::MAX);
                f
            })
            .collect();
        files.sort_by(|a, b| {
            (b.bytes_read.saturating_add(b.bytes_written))
                .cmp(&a.bytes_read.saturating_add(a.bytes_written))
                .then_with(|| a.name.cmp(&b.name))
        });
        let ranks: Vec<RankSummary> = self.ranks.into_values().collect();
        let bytes_read = ranks
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.bytes_read));
        let bytes_written = ranks
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.bytes_written));
        let reads: u64 = ranks.iter().map(|r| r.reads).sum();
        let writes: u64 = ranks.iter().map(|r| r.writes).sum();
        let size_histogram = self
            .sizes
            .iter()
            .enumerate()
            .filter(|(_, c)| c[0] + c[1] > 0)
            .map(|(k, c)| SizeBucket {
                min_bytes: if k == 0 { 0 } else { 1u64 << k },
                max_bytes: if k == 63 {
                    u64::MAX
                } else {
                    (1u64 << (k + 1)) - 1
                },
                reads: c[0],
                writes: c[1],
            })
            .collect();
        let mut common_sizes: Vec<(u64, u64)> = self.exact.into_iter().collect();
        common_sizes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        common_sizes.truncate(16);
        let completion = self.completion_times && reads + writes > 0;
        let concurrency = if self.bins.width == 0 {
            Vec::new()
        } else {
            let w = self.bins.width;
            let used = (0..MAX_BINS)
                .rev()
                .find(|&i| self.bins.started[i] > 0 || self.bins.busy[i] > 0.0)
                .map_or(0, |i| i + 1);
            (0..used)
                .map(|i| ConcurrencyBin {
                    start_ns: i as u64 * w,
                    end_ns: (i as u64 + 1) * w,
                    ops_started: self.bins.started[i],
                    mean_in_flight: completion.then(|| self.bins.busy[i] / w as f64),
                })
                .collect()
        };
        let data = self.seq + self.rand;
        Summary {
            trace: reader.path().display().to_string(),
            format: reader.format().clone(),
            records: self.records,
            declared_ranks: reader.declared_ranks(),
            ranks,
            files,
            ops: self.ops,
            bytes_read,
            bytes_written,
            duration_ns: self.first.map_or(0, |f| self.last - f),
            size_histogram,
            sequential_ops: self.seq,
            random_ops: self.rand,
            sequential_share: if data == 0 {
                0.0
            } else {
                self.seq as f64 / data as f64
            },
            mean_read_bytes: bytes_read.checked_div(reads).unwrap_or(0),
            mean_write_bytes: bytes_written.checked_div(writes).unwrap_or(0),
            common_sizes,
            concurrency,
            completion_times: completion,
        }
    }
}

impl Summary {
    /// Read a whole trace (streamed) into its summary; the first bad
    /// record stops it.
    pub fn of(mut reader: TraceReader) -> Result<Summary, TraceError> {
        let mut s = Summarizer::default();
        for rec in reader.by_ref() {
            s.add(&rec?);
        }
        Ok(s.finish(&reader))
    }
}
