//! Before any I/O: one streamed pass over the trace that learns its files
//! (their extents, whether they are read), its ranks and their counts, and
//! refuses what cannot be replayed (a record whose offset and length
//! overflow, a file the map does not place inside TARGET, more ranks than
//! threads storlab will start, more bytes than the file system has free).
//! Then the layout: storlab's own new directory in TARGET, each traced
//! file created in it, the files the trace reads filled to their extent
//! with incompressible data (so a read finds data, not a hole), the
//! others left empty for the replay to write.

use crate::map::{MapError, PathMap};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use storlab_trace::{Format, OpenOptions, Summarizer, Summary, TraceError, TraceReader};
use storlab_types::{CacheReport, CacheState, TargetInfo};

/// Most ranks replayed as threads of one process.
pub const MAX_RANKS: usize = 1024;

/// Why a trace cannot be replayed (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Map(#[from] MapError),
    #[error(
        "{trace}: record {record}: offset {offset} + length {length} overflows; the trace is corrupt"
    )]
    Overflow {
        trace: String,
        record: u64,
        offset: u64,
        length: u64,
    },
    #[error(
        "{trace}: {ranks} ranks; storlab replays at most {MAX_RANKS} ranks as threads of one process"
    )]
    TooManyRanks { trace: String, ranks: usize },
    #[error("{trace}: no read, write or trim to replay")]
    Empty { trace: String },
    #[error(
        "{trace}: --ranks {asked}, but the trace has {has} ranks; give --ranks 1 to {has} (ranks 0 to N-1 are replayed)"
    )]
    RanksAbove { trace: String, asked: u32, has: u32 },
    #[error("--ranks 0: give at least 1 (ranks 0 to N-1 of the trace are replayed)")]
    NoRanks,
    #[error(
        "the trace's files need {need} bytes on {target}, which has {free} free; give a TARGET with more space"
    )]
    NoSpace {
        need: u64,
        free: u64,
        target: String,
    },
    #[error(transparent)]
    Target(#[from] storlab_bench::TargetError),
    #[error(
        "stopped while laying out the trace's files; nothing was replayed and the files are removed"
    )]
    Stopped,
    #[error(
        "TARGET {0} is a block device: under MPI storlab replay lays the trace's files out in a directory every rank sees; run one process (ranks as threads) to replay onto a device, or give a directory"
    )]
    Device(String),
    #[error(
        "TARGET {device} is a block device, which takes a trace of one file or device (a blktrace, an iolog of one file); {trace} addresses {files} files: give a directory"
    )]
    DeviceFiles {
        trace: String,
        device: String,
        files: usize,
    },
    #[error(
        "{trace}: record {record}: {file:?} is addressed up to byte {end}, beyond the end of {device} ({size} bytes); nothing was written: give a larger device, or a directory"
    )]
    BeyondDevice {
        trace: String,
        record: u64,
        file: String,
        end: u64,
        device: String,
        size: u64,
    },
    #[error(
        "TARGET {0} is not a directory: give a directory (storlab replays in its own subdirectory of it)"
    )]
    NotDirectory(String),
    #[error("cannot lay out {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One traced file and where it is replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// As the trace names it.
    pub name: String,
    /// Under the run directory.
    pub rel: PathBuf,
    /// One past the highest byte the trace addresses.
    pub extent: u64,
    /// The trace reads or trims it: laid out full, with data (a read
    /// finds data, a trim frees real blocks, not a hole).
    pub read: bool,
    /// The record (1-based) that reaches the extent: named when the
    /// extent is beyond a device's end.
    pub extent_record: u64,
}

/// What the first pass learnt.
#[derive(Debug, Clone)]
pub struct Layout {
    pub trace: PathBuf,
    pub format: Format,
    pub files: Vec<PlannedFile>,
    /// The ranks that issue data operations, ascending.
    pub ranks: Vec<u32>,
    /// The trace's own figures (what the replay is checked against).
    pub summary: Summary,
}

impl Layout {
    /// The index in [`Layout::files`] of the traced file `name`.
    pub fn file_index(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|f| f.name == name)
    }

    /// Bytes the layout writes before the replay (the read files' extents)
    /// plus what the replay may add (the written files' extents).
    /// How many ranks the trace's job had: the count it declares (Darshan's
    /// nprocs), else one past its highest rank.
    pub fn trace_ranks(&self) -> u32 {
        let seen = self
            .summary
            .ranks
            .iter()
            .map(|r| r.rank.saturating_add(1))
            .max()
            .unwrap_or(0);
        self.summary.declared_ranks.unwrap_or(0).max(seen)
    }

    /// Replay only the trace's ranks `0..n` (`--ranks N`); `n` above the
    /// trace's ranks is refused.
    pub fn select_ranks(&mut self, n: u32) -> Result<(), PrepareError> {
        if n == 0 {
            return Err(PrepareError::NoRanks);
        }
        let has = self.trace_ranks();
        if n > has {
            return Err(PrepareError::RanksAbove {
                trace: self.trace.display().to_string(),
                asked: n,
                has,
            });
        }
        self.ranks.retain(|&r| r < n);
        Ok(())
    }

    /// Replay only trace rank `rank` (one MPI rank's share; none when the
    /// trace has no data operation of that rank).
    pub fn only_rank(&mut self, rank: u32) {
        self.ranks.retain(|&r| r == rank);
    }

    /// A digest of what this layout replays: the trace file's size and
    /// modification time, the first pass's figures, the files' places, the
    /// ranks chosen and `extra` (the speed): every MPI rank computes it
    /// and all must match before any I/O.
    pub fn identity(&self, extra: &str) -> u64 {
        // Every file the trace is read from (a per-rank set of iologs: each).
        let (mut size, mut mtime) = (0u64, 0u128);
        for f in storlab_trace::trace_files(&self.trace) {
            let meta = std::fs::metadata(&f).ok();
            size = size
                .wrapping_mul(31)
                .wrapping_add(meta.as_ref().map_or(0, std::fs::Metadata::len));
            mtime = mtime.wrapping_mul(31).wrapping_add(
                meta.and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos()),
            );
        }
        let figures = serde_json::to_string(&self.summary).unwrap_or_default();
        let files: Vec<String> = self
            .files
            .iter()
            .map(|f| format!("{}>{}:{}:{}", f.name, f.rel.display(), f.extent, f.read))
            .collect();
        fnv(&format!(
            "{size}|{mtime}|{figures}|{files:?}|{:?}|{extra}|{}",
            self.ranks,
            env!("CARGO_PKG_VERSION")
        ))
    }

    /// Whether the trace writes or trims: a trim destroys data as a write
    /// does (a hole punched, a device's range discarded).
    pub fn writes(&self) -> bool {
        self.summary
            .ranks
            .iter()
            .any(|r| r.writes > 0 || r.trims > 0)
    }

    pub fn bytes_needed(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.extent)
            .fold(0u64, u64::saturating_add)
    }
}

/// FNV-1a, 64 bits.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The first pass over `trace` (no I/O on the target).
pub fn prepare(trace: &Path, opts: &OpenOptions, map: &PathMap) -> Result<Layout, PrepareError> {
    let name = trace.display().to_string();
    let mut reader = TraceReader::open(trace, opts)?;
    let mut sum = Summarizer::default();
    // Per trace file: the highest end addressed and the record reaching it.
    let mut ends: std::collections::HashMap<u32, (u64, u64)> = std::collections::HashMap::new();
    for (i, r) in reader.by_ref().enumerate() {
        let r = r?;
        let record = i as u64 + 1;
        let Some(end) = r.offset.checked_add(r.length) else {
            return Err(PrepareError::Overflow {
                trace: name,
                record,
                offset: r.offset,
                length: r.length,
            });
        };
        let e = ends.entry(r.file).or_insert((0, record));
        if end > e.0 {
            *e = (end, record);
        }
        sum.add(&r);
    }
    let by_name: std::collections::HashMap<&str, u64> = ends
        .iter()
        .filter_map(|(id, &(_, rec))| Some((reader.files().get(*id as usize)?.as_str(), rec)))
        .collect();
    let summary = sum.finish(&reader);
    let ranks: Vec<u32> = summary
        .ranks
        .iter()
        .filter(|r| r.reads + r.writes + r.trims > 0)
        .map(|r| r.rank)
        .collect();
    if ranks.is_empty() {
        return Err(PrepareError::Empty { trace: name });
    }
    if ranks.len() > MAX_RANKS {
        return Err(PrepareError::TooManyRanks {
            trace: name,
            ranks: ranks.len(),
        });
    }
    let mut files = Vec::new();
    for f in &summary.files {
        files.push(PlannedFile {
            name: f.name.clone(),
            rel: map.resolve(&f.name)?,
            extent: f.extent_bytes,
            read: f.reads > 0 || f.trims > 0,
            extent_record: by_name.get(f.name.as_str()).copied().unwrap_or(0),
        });
    }
    Ok(Layout {
        trace: trace.to_path_buf(),
        format: reader.format().clone(),
        files,
        ranks,
        summary,
    })
}

/// The layout made: storlab's run directory in TARGET and the files in it.
#[derive(Debug)]
pub struct Prepared {
    pub layout: Layout,
    pub run_dir: PathBuf,
    pub target: TargetInfo,
    /// Absolute path of each planned file, by index.
    pub paths: Vec<PathBuf>,
    /// The page cache before the replay: the read files' pages evicted
    /// (`posix_fadvise(DONTNEED)` after an fsync) and checked with mincore.
    pub cache: CacheReport,
    /// A block device TARGET, checked as bench checks one (and, when the
    /// trace writes, held with `O_EXCL` until the replay is dropped); no
    /// run directory then, nothing to remove.
    pub device: Option<storlab_bench::ResolvedTarget>,
    /// The page-cache hint each file gets when the replay opens it.
    pub fadvise: crate::run::Fadvise,
}

impl Prepared {
    /// Whether the replay goes to a block device (not storlab's directory).
    pub fn on_device(&self) -> bool {
        self.device.is_some()
    }

    /// Remove storlab's run directory (the laid-out files) unless `keep`;
    /// nothing on a device. The error is worded for a warning.
    pub fn remove(&self, keep: bool) -> Result<(), String> {
        if keep || self.on_device() {
            return Ok(());
        }
        std::fs::remove_dir_all(&self.run_dir)
            .map_err(|e| format!("could not remove {}: {e}", self.run_dir.display()))
    }

    /// Whether the trace writes or trims (the files are opened for
    /// writing; onto a device, that needs `--allow-destroy`).
    pub fn writes(&self) -> bool {
        self.layout.writes()
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> PrepareError + '_ {
    move |source| PrepareError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether TARGET is a block device (replayed onto with [`onto_device`]);
/// anything but a directory or a device is refused before the store or the
/// target is touched. A missing TARGET is left to the layout's message.
pub fn is_device(target: &Path) -> Result<bool, PrepareError> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(target) {
        Ok(md) if md.file_type().is_block_device() => Ok(true),
        Ok(md) if !md.is_dir() => Err(PrepareError::NotDirectory(target.display().to_string())),
        _ => Ok(false),
    }
}

/// A trace of one file replayed onto the block device `dev`: the trace's
/// extent must lie inside the device (else the record reaching past its
/// end is named), and the device passes bench's own checks
/// (`storlab_bench::target::resolve`: in use, walked up and down the
/// device stack, refused even with `--allow-destroy`; a trace that writes
/// needs `allow_destroy` and claims the device with `O_EXCL`). Nothing is
/// written here.
pub fn onto_device(
    layout: Layout,
    dev: &Path,
    allow_destroy: bool,
) -> Result<Prepared, PrepareError> {
    use std::io::{Seek, SeekFrom};
    let trace = layout.trace.display().to_string();
    let device = dev.display().to_string();
    let [file] = layout.files.as_slice() else {
        return Err(PrepareError::DeviceFiles {
            trace,
            device,
            files: layout.files.len(),
        });
    };
    let size = std::fs::File::open(dev)
        .and_then(|mut f| f.seek(SeekFrom::End(0)))
        .map_err(io_err(dev))?;
    if file.extent > size {
        return Err(PrepareError::BeyondDevice {
            trace,
            record: file.extent_record,
            file: file.name.clone(),
            end: file.extent,
            device,
            size,
        });
    }
    let writes = layout.writes();
    let phase = storlab_types::PhaseParams {
        name: "replay".into(),
        rw: if writes {
            storlab_types::RwMode::Write
        } else {
            storlab_types::RwMode::Read
        },
        size_bytes: file.extent,
        numjobs: 1,
        ..storlab_types::PhaseParams::default()
    };
    let resolved = storlab_bench::resolve_target(
        Some(dev),
        &[phase],
        storlab_bench::SafetyOptions { allow_destroy },
    )?;
    Ok(Prepared {
        layout,
        run_dir: PathBuf::new(),
        target: resolved.info.clone(),
        paths: vec![dev.to_path_buf()],
        cache: CacheReport::default(),
        device: Some(resolved),
        fadvise: crate::run::Fadvise::Normal,
    })
}

/// Where a replay goes, checked: onto a block device (checked and
/// claimed, nothing to lay out) or into a directory (laid out by
/// [`Place::lay_out`] once the store is open).
#[derive(Debug)]
pub enum Place {
    Device(Box<Prepared>),
    Directory(Box<Layout>),
}

/// Check TARGET for `layout` before the store is opened: a block device
/// through [`onto_device`], a directory left to the layout, anything else
/// refused.
pub fn place(layout: Layout, target: &Path, allow_destroy: bool) -> Result<Place, PrepareError> {
    if is_device(target)? {
        Ok(Place::Device(Box::new(onto_device(
            layout,
            target,
            allow_destroy,
        )?)))
    } else {
        Ok(Place::Directory(Box::new(layout)))
    }
}

impl Place {
    /// The replay's files: the device, or the layout made in `target`.
    pub fn lay_out(self, target: &Path, stop: &crate::Stop<'_>) -> Result<Prepared, PrepareError> {
        match self {
            Place::Device(p) => Ok(*p),
            Place::Directory(layout) => lay_out(*layout, target, stop),
        }
    }
}

/// TARGET must be a directory under MPI: a block device or anything else
/// is refused before the store or the target is touched. A missing TARGET
/// is left to the layout's own message.
pub fn check_target(target: &Path) -> Result<(), PrepareError> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(md) = std::fs::metadata(target) else {
        return Ok(());
    };
    let name = target.display().to_string();
    if md.file_type().is_block_device() {
        Err(PrepareError::Device(name))
    } else if md.is_dir() {
        Ok(())
    } else {
        Err(PrepareError::NotDirectory(name))
    }
}

/// The layout another process made (rank 0 under MPI): the files of
/// `layout` in `run_dir`, each of which must exist (a TARGET every rank
/// sees at the same path).
pub fn attach(layout: Layout, run_dir: &Path) -> Result<Prepared, PrepareError> {
    let mut paths = Vec::new();
    for f in &layout.files {
        let path = run_dir.join(&f.rel);
        std::fs::metadata(&path).map_err(io_err(&path))?;
        paths.push(path);
    }
    Ok(Prepared {
        layout,
        run_dir: run_dir.to_path_buf(),
        target: TargetInfo::default(),
        paths,
        cache: CacheReport::default(),
        device: None,
        fadvise: crate::run::Fadvise::Normal,
    })
}

/// Check the free space, make storlab's own directory in `target` and lay
/// the files out in it. `stop` is asked between MiB of the fill (a signal
/// ends a long layout); on any error or a stop, the directory and whatever
/// was made in it are removed.
pub fn lay_out(
    layout: Layout,
    target: &Path,
    stop: &crate::Stop<'_>,
) -> Result<Prepared, PrepareError> {
    let need = layout.bytes_needed();
    if let Ok(space) = storlab_host::os::fs_space(target)
        && need > space.avail_bytes
    {
        return Err(PrepareError::NoSpace {
            need,
            free: space.avail_bytes,
            target: target.display().to_string(),
        });
    }
    let (run_dir, info) = storlab_bench::own_run_dir(target)?;
    let made = fill(&layout, &run_dir, stop);
    match made {
        Ok((paths, cache)) => {
            let mut info = info;
            info.files = paths.iter().map(|p| p.display().to_string()).collect();
            Ok(Prepared {
                layout,
                run_dir,
                target: info,
                paths,
                cache,
                device: None,
                fadvise: crate::run::Fadvise::Normal,
            })
        }
        Err(e) => {
            // Ours: made by own_run_dir a moment ago.
            let _ = std::fs::remove_dir_all(&run_dir);
            Err(e)
        }
    }
}

/// Make each traced file in `run_dir`, the read ones full of data and
/// evicted; the paths and the cache state reached.
fn fill(
    layout: &Layout,
    run_dir: &Path,
    stop: &crate::Stop<'_>,
) -> Result<(Vec<PathBuf>, CacheReport), PrepareError> {
    let mut paths = Vec::new();
    let mut rng = storlab_bench::Rng::new(0x005e_ed0f_7ace);
    let mut buf = vec![0u8; 1 << 20];
    let (mut before, mut after, mut total) = (0u64, 0u64, 0u64);
    for f in &layout.files {
        let path = run_dir.join(&f.rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io_err(&path))?;
        if f.read {
            let mut left = f.extent;
            while left > 0 {
                if stop() {
                    return Err(PrepareError::Stopped);
                }
                let n = left.min(buf.len() as u64) as usize;
                storlab_bench::fill_random(&mut buf[..n], &mut rng);
                file.write_all(&buf[..n]).map_err(io_err(&path))?;
                left -= n as u64;
            }
            file.sync_all().map_err(io_err(&path))?;
            let (b, _) = storlab_bench::resident_pages(&file, f.extent).map_err(io_err(&path))?;
            storlab_bench::fadvise_dontneed(file.as_raw_fd()).map_err(io_err(&path))?;
            let (a, t) = storlab_bench::resident_pages(&file, f.extent).map_err(io_err(&path))?;
            (before, after, total) = (before + b, after + a, total + t);
        }
        paths.push(path);
    }
    let cache = CacheReport {
        mode: CacheState::Cold,
        method: Some("posix_fadvise(DONTNEED) after fsync, of the files the trace reads".into()),
        resident_pages_before: Some(before),
        resident_pages_after: Some(after),
        total_pages: Some(total),
        verified: Some(after == 0),
        ..CacheReport::default()
    };
    Ok((paths, cache))
}
