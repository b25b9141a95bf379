//! Reading application I/O traces, streamed: fio iologs (v2 and v3), Darshan
//! DXT logs (`.darshan`, modules DXT_POSIX and DXT_MPIIO) and blktrace's
//! binary per-CPU files, all into one record type, [`TraceRecord`], through
//! one iterator, [`TraceReader`]. Memory does not grow with the number of
//! records: only with the number of files, ranks and (for blktrace) CPUs.
//!
//! On top of the reader: [`Summary`] (what a trace holds: ranks, files,
//! bytes, request sizes, sequential share, concurrency over time) and
//! [`derive_job`] (a storlab job file with the trace's sizes and mixes).
//!
//! Every refusal is a [`TraceError`] naming the file, the record (or line)
//! and the reason; nothing here panics on any input (property-tested).
//!
//! For a replay executor: [`TraceReader`] yields timed operations
//! ([`TraceRecord::start_ns`], relative to the trace's start) with the rank
//! that issued them; the per-format order is documented on [`Format`].
#![forbid(unsafe_code)]

mod blktrace;
mod darshan;
mod iolog;
mod job;
mod ranks;
mod render;
mod summary;

use std::fs::File;
use std::path::{Path, PathBuf};

pub use job::{DerivedJob, JobNote, derive_job};
pub use ranks::{rank_path, trace_files};
pub use render::render_text;
pub use summary::{ConcurrencyBin, FileSummary, RankSummary, SizeBucket, Summarizer, Summary};

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Open,
    Close,
    Fsync,
    Fdatasync,
    Trim,
}

impl Op {
    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Open => "open",
            Op::Close => "close",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::Trim => "trim",
        }
    }

    /// Whether it moves data (read or write).
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// Index of a file in [`TraceReader::files`].
pub type FileId = u32;

/// One operation of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// The process (MPI rank) that issued it; 0 for fio iologs and blktrace
    /// (a per-rank set of iologs: the rank of its file).
    pub rank: u32,
    /// The file (or device) it addressed, an index into [`TraceReader::files`].
    pub file: FileId,
    pub op: Op,
    /// Byte offset in the file or device (0 where the op has none).
    pub offset: u64,
    /// Bytes moved (0 for open, close, fsync).
    pub length: u64,
    /// When it started, in nanoseconds from the start of the trace.
    pub start_ns: u64,
    /// When it completed, where the format records it (Darshan DXT does;
    /// fio iologs and blktrace issue/queue events do not).
    pub end_ns: Option<u64>,
}

/// The trace formats read, each with its record order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `fio version 2 iolog`: times from `wait` lines; file order.
    FioIologV2,
    /// `fio version 3 iolog`: every line has a timestamp (µs); file order.
    FioIologV3,
    /// One fio iolog per rank (`bench --write-iolog` under MPI: `run.iolog`
    /// given, `run.rank0.iolog`, `run.rank1.iolog`, ... read), rank r's
    /// file as rank r; merged by time.
    FioIologRanks { version: u32, ranks: u32 },
    /// A Darshan log (format version, e.g. "3.41") with DXT segments of the
    /// chosen module; ordered by file record, then rank, writes before reads
    /// (each group in time order), not globally by time. `partial`: the
    /// Darshan runtime ran out of memory for this module and dropped
    /// operations (the figures are then a lower bound).
    Darshan {
        version: String,
        module: DxtModule,
        partial: bool,
    },
    /// blktrace per-CPU files of one device, merged by time.
    Blktrace { cpus: u32, event: BlkEvent },
}

impl Format {
    /// A short name for tables.
    pub fn describe(&self) -> String {
        match self {
            Format::FioIologV2 => "fio iolog v2".into(),
            Format::FioIologV3 => "fio iolog v3".into(),
            Format::FioIologRanks { version, ranks } => {
                format!("fio iolog v{version}, one file per rank ({ranks} files)")
            }
            Format::Darshan {
                version,
                module,
                partial,
            } => format!(
                "Darshan {version} {}{}",
                module.name(),
                if *partial {
                    " (partial: the runtime dropped operations)"
                } else {
                    ""
                }
            ),
            Format::Blktrace { cpus, event } => format!(
                "blktrace ({cpus} per-CPU file{}, {} events)",
                if *cpus == 1 { "" } else { "s" },
                event.name()
            ),
        }
    }
}

/// Which DXT module of a Darshan log to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DxtModule {
    /// POSIX calls (read/write/pread/pwrite...).
    Posix,
    /// MPI-IO calls (the POSIX calls they make are in DXT_POSIX).
    Mpiio,
}

impl DxtModule {
    pub fn name(self) -> &'static str {
        match self {
            DxtModule::Posix => "DXT_POSIX",
            DxtModule::Mpiio => "DXT_MPIIO",
        }
    }
}

/// Which blktrace event stands for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlkEvent {
    /// `D`: the request was issued to the driver (what the device saw).
    #[default]
    Issue,
    /// `Q`: the bio was queued (what the file system asked for).
    Queue,
}

impl BlkEvent {
    pub fn name(self) -> &'static str {
        match self {
            BlkEvent::Issue => "issue",
            BlkEvent::Queue => "queue",
        }
    }
}

/// Choices made when opening a trace.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Darshan: the DXT module; default DXT_POSIX when the log has it,
    /// otherwise DXT_MPIIO (reading both would count MPI-IO bytes twice).
    pub dxt_module: Option<DxtModule>,
    /// blktrace: the event that stands for a request (default issue).
    pub blk_event: BlkEvent,
}

/// A trace that cannot be read: the file, where in it, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}: {reason}", file.display(), at.describe())]
pub struct TraceError {
    pub file: PathBuf,
    pub at: At,
    pub reason: String,
}

/// Where in a trace a [`TraceError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The file as a whole (cannot open, unknown format, bad header).
    File,
    /// A 1-based line of a text trace.
    Line(u64),
    /// A 1-based record of a binary trace (Darshan: a DXT segment or file
    /// record; blktrace: an event), with its byte offset where known.
    Record(u64),
}

impl At {
    fn describe(&self) -> String {
        match self {
            At::File => "header".into(),
            At::Line(n) => format!("line {n}"),
            At::Record(n) => format!("record {n}"),
        }
    }

    /// The record (or line) number; 0 for the file as a whole.
    pub fn number(&self) -> u64 {
        match self {
            At::File => 0,
            At::Line(n) | At::Record(n) => *n,
        }
    }
}

pub(crate) fn err(file: &Path, at: At, reason: impl Into<String>) -> TraceError {
    TraceError {
        file: file.to_path_buf(),
        at,
        reason: reason.into(),
    }
}

/// Why a trace file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// A directory, FIFO or device.
    #[error("not a regular file; give the trace file itself")]
    NotRegular,
    /// The caller's opener refused it, in its own words.
    #[error("{0}")]
    Refused(String),
}

/// How a trace's files are opened: the CLI passes its own (which refuses
/// FIFOs and devices); the error's message is used as the reason.
pub type Opener<'a> = dyn FnMut(&Path) -> Result<File, OpenError> + 'a;

/// Open a plain file for reading, refusing anything but a regular file.
pub fn open_regular(path: &Path) -> Result<File, OpenError> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular);
    }
    Ok(File::open(path)?)
}

enum Inner {
    Iolog(iolog::Reader),
    Darshan(Box<darshan::Reader>),
    Blktrace(blktrace::Reader),
    Ranks(ranks::Reader),
}

/// A trace being read, one record at a time.
pub struct TraceReader {
    path: PathBuf,
    format: Format,
    inner: Inner,
    failed: bool,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .finish()
    }
}

impl TraceReader {
    /// Open a trace with [`open_regular`].
    pub fn open(path: &Path, opts: &OpenOptions) -> Result<TraceReader, TraceError> {
        Self::open_with(path, opts, &mut open_regular)
    }

    /// Open a trace, recognising its format from its first bytes. A
    /// blktrace may be given as any of its per-CPU files
    /// (`NAME.blktrace.N`) or as `NAME.blktrace.` / `NAME`: every
    /// `NAME.blktrace.N` beside it is read.
    pub fn open_with(
        path: &Path,
        opts: &OpenOptions,
        opener: &mut Opener<'_>,
    ) -> Result<TraceReader, TraceError> {
        if let Some(rank_files) = ranks::per_rank_files(path) {
            let reader = ranks::Reader::open(path, &rank_files, opener)?;
            return Ok(TraceReader {
                path: path.to_path_buf(),
                format: Format::FioIologRanks {
                    version: reader.version(),
                    ranks: reader.ranks(),
                },
                inner: Inner::Ranks(reader),
                failed: false,
            });
        }
        if let Some(cpu_files) = blktrace::per_cpu_files(path) {
            let reader = blktrace::Reader::open(path, cpu_files, opts.blk_event, opener)?;
            return Ok(TraceReader {
                path: path.to_path_buf(),
                format: Format::Blktrace {
                    cpus: reader.cpus(),
                    event: opts.blk_event,
                },
                inner: Inner::Blktrace(reader),
                failed: false,
            });
        }
        let mut file = opener(path).map_err(|r| err(path, At::File, r.to_string()))?;
        let mut head = [0u8; 16];
        let n = read_full(&mut file, &mut head).map_err(|e| err(path, At::File, e.to_string()))?;
        let head = &head[..n];
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(0))
            .map_err(|e| err(path, At::File, format!("cannot seek: {e}")))?;
        let (format, inner) = if head.starts_with(b"fio version ") {
            let r = iolog::Reader::new(path, file)?;
            let format = if r.version() == 2 {
                Format::FioIologV2
            } else {
                Format::FioIologV3
            };
            (format, Inner::Iolog(r))
        } else if blktrace::is_blktrace(head) {
            let name = path.to_path_buf();
            let reader = blktrace::Reader::open(path, vec![name], opts.blk_event, opener)?;
            let format = Format::Blktrace {
                cpus: reader.cpus(),
                event: opts.blk_event,
            };
            (format, Inner::Blktrace(reader))
        } else if darshan::looks_like(head) {
            let r = darshan::Reader::new(path, file, opts.dxt_module)?;
            let format = Format::Darshan {
                version: r.version().to_string(),
                module: r.module(),
                partial: r.partial(),
            };
            (format, Inner::Darshan(Box::new(r)))
        } else if head.is_empty() {
            return Err(err(path, At::File, "the file is empty"));
        } else {
            return Err(err(
                path,
                At::File,
                "not a trace storlab reads: expected a fio iolog (first line `fio version 2 iolog` \
                 or `fio version 3 iolog`), a Darshan log (.darshan) or a blktrace per-CPU file \
                 (NAME.blktrace.N)",
            ));
        };
        Ok(TraceReader {
            path: path.to_path_buf(),
            format,
            inner,
            failed: false,
        })
    }

    /// The path given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The format and its version.
    pub fn format(&self) -> &Format {
        &self.format
    }

    /// The names of the files seen so far ([`TraceRecord::file`] indexes it).
    /// Darshan logs name all files up front.
    pub fn files(&self) -> &[String] {
        match &self.inner {
            Inner::Iolog(r) => r.files(),
            Inner::Darshan(r) => r.files(),
            Inner::Blktrace(r) => r.files(),
            Inner::Ranks(r) => r.files(),
        }
    }

    /// The number of ranks the trace declares (Darshan's job `nprocs`), if any.
    pub fn declared_ranks(&self) -> Option<u32> {
        match &self.inner {
            Inner::Darshan(r) => Some(r.nprocs()),
            Inner::Ranks(r) => Some(r.ranks()),
            _ => None,
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = match &mut self.inner {
            Inner::Iolog(r) => r.next_record(),
            Inner::Darshan(r) => r.next_record(),
            Inner::Blktrace(r) => r.next_record(),
            Inner::Ranks(r) => r.next_record(),
        };
        match item {
            Ok(Some(rec)) => Some(Ok(rec)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Read until `buf` is full or the end of the input; the bytes read.
pub(crate) fn read_full(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Seconds (a DXT time) to nanoseconds, refusing what is not a time.
pub(crate) fn secs_to_ns(s: f64) -> Option<u64> {
    if !s.is_finite() || !(0.0..=1e9).contains(&s) {
        return None;
    }
    Some((s * 1e9).round() as u64)
}
