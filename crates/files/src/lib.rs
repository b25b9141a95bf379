//! `storlab-files`: what storlab may write over, and what it reads.
//!
//! * [`output`]: each kind of result file storlab writes ([`OutputKind`]),
//!   how an existing file is recognised as storlab's own earlier output of
//!   that kind (so the same command may replace it without `--force`),
//!   every rule a result file follows, checked before anything runs
//!   ([`check_output_path`], `docs/SAFETY.md` §2), and the [`Permit`] that
//!   writes it with the rules checked again, leaving no half-written new
//!   file behind.
//! * [`input`]: input files (job files, campaign and scenario files,
//!   catalogs, fio JSON, traces) are read only when they are regular files:
//!   a FIFO would block without a word, a device never ends.
//! * [`text`]: text that is not UTF-8 is refused with the line, column and
//!   byte offset of its first bad byte.
//!
//! Errors are typed ([`Error`]); their text is what the front end prints.
#![forbid(unsafe_code)]

pub mod input;
pub mod output;
pub mod text;

pub use input::{open_input, read_input, read_input_bytes, special_kind};
pub use output::{
    BENCH_REPEAT_DOCUMENT, OutputKind, Permit, SWEEP_DOCUMENT, chart_is_png, check_chart_path,
    check_database_path, check_output_path, check_run_paths, database_file, same_file,
};
pub use text::{NotUtf8, utf8};

use std::path::PathBuf;

/// Why a result file may not be written, or an input file not read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "{} is the results database ({}): writing there would destroy every stored run; \
         choose another output file name", path.display(), which.display()
    )]
    Database { path: PathBuf, which: PathBuf },
    #[error(
        "{} is {kind}, not a regular file; result files are only written to regular files: \
         give a file name", path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{} is an SQLite database (another results database?): storlab never writes \
         a result file over one, not even with --force; choose another file name", path.display()
    )]
    Sqlite { path: PathBuf },
    /// Storlab's own output, of another kind than the one to be written.
    #[error(
        "{} is storlab's {}, not {}: pass --force to overwrite it, or choose \
         another file name",
        path.display(),
        // "an HTML report" → "HTML report"
        is.describe().split_once(' ').map_or("", |(_, rest)| rest),
        kind.describe()
    )]
    OtherKind {
        path: PathBuf,
        is: OutputKind,
        kind: OutputKind,
    },
    #[error(
        "{} already exists and storlab did not write it (it is not {} of \
         storlab's): pass --force to overwrite it, or choose another file name",
        path.display(), kind.describe()
    )]
    Foreign { path: PathBuf, kind: OutputKind },
    #[error("cannot write {}; choose another file: {err}", path.display())]
    NotWritable { path: PathBuf, err: std::io::Error },
    #[error(
        "{} is a symbolic link to a file that does not exist; give the file's own name",
        path.display()
    )]
    DanglingLink { path: PathBuf },
    #[error(
        "{} is a symbolic link to a file that cannot be reached ({err}); give the file's \
         own name", path.display()
    )]
    UnreachableLink { path: PathBuf, err: std::io::Error },
    /// The directory of a new result file is missing or not a directory.
    #[error(
        "{}: {} {}; write the file elsewhere",
        path.display(),
        dir.display(),
        if *exists { "is not a directory" } else { "does not exist (create the directory first)" }
    )]
    NoDirectory {
        path: PathBuf,
        dir: PathBuf,
        exists: bool,
    },
    #[error(
        "{} does not exist, and a new file on /dev would live in RAM next to the devices: \
         check the name, or write the file elsewhere", path.display()
    )]
    NewOnDev { path: PathBuf },
    #[error("cannot create {} in {}; write the file elsewhere: {err}", path.display(), dir.display())]
    CannotCreate {
        path: PathBuf,
        dir: PathBuf,
        err: std::io::Error,
    },
    #[error("cannot write {}: {err}", path.display())]
    Write { path: PathBuf, err: std::io::Error },
    #[error(
        "{} appeared while storlab ran and was not overwritten; choose another \
         file name", path.display()
    )]
    Appeared { path: PathBuf },
    /// The results database is a FIFO, a device or a directory.
    #[error(
        "the results database {} is {kind}, not a regular file; give a database file \
         (--db FILE or STORLAB_DB)", path.display()
    )]
    DatabaseNotRegular { path: PathBuf, kind: &'static str },
    /// A run's target is the results database.
    #[error(
        "{} is storlab's results database ({}): benchmarking it would destroy every stored run; \
         give a directory, a new file name or a disk", target.display(), which.display()
    )]
    TargetIsDatabase { target: PathBuf, which: PathBuf },
    /// A run's `--json-out` is its target.
    #[error("--json-out {} is the benchmark's target: choose another file name", path.display())]
    JsonOutIsTarget { path: PathBuf },
    #[error("--chart {}: the file name must end in .svg or .png", path.display())]
    ChartName { path: PathBuf },
    /// An input file that is not a regular file (`label`: "job file x.toml").
    #[error(
        "{label} is {kind}, not a regular file: storlab reads its input only from regular \
         files (a pipe or device may never end); give the file itself"
    )]
    InputNotRegular { label: String, kind: &'static str },
    #[error("cannot read {label}: {err}")]
    Read { label: String, err: std::io::Error },
    #[error("{label}: {err}")]
    NotUtf8 { label: String, err: NotUtf8 },
}
