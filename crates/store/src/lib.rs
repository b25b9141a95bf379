//! `storlab-store`: storlab's results history, an embedded SQLite file
//! (the CLI's default is `~/.local/share/storlab/storlab.db`) that keeps every run so runs can be listed,
//! compared and checked against a baseline later.
//!
//! The main type is [`Store`]. A benchmark saves its run piece by piece, each
//! piece committed at once, so a crash or Ctrl-C loses nothing already measured:
//!
//! ```no_run
//! # use storlab_store::Store;
//! # fn demo(header: &storlab_types::BenchReport, phase: &storlab_types::PhaseResult,
//! #         fin: &storlab_types::BenchReport) -> Result<(), storlab_store::StoreError> {
//! let store = Store::open(std::path::Path::new("storlab.db"))?;
//! let id = store.begin_run("bench", header, &Default::default(), None)?;
//! store.add_phase(id, phase)?;            // committed before the next phase starts
//! store.finish_run(id, fin)?;
//! let run = store.load(id)?;               // a storlab_types::StoredRun
//! # Ok(()) }
//! ```
//!
//! Whole runs (imports, monitor recordings) go in with [`Store::save_run`].
//! Runs are chosen with [`select::RunSelector`] (`12`, `latest`, `tag:cfg=a`)
//! and [`Store::resolve`]. The store only stores: fio's JSON output is read
//! by `storlab-fio`, and `check`'s arithmetic is in `storlab-configdiff`.
//!
//! The file uses WAL journaling, so readers (`storlab runs` in another
//! terminal) never block a running benchmark and see each phase as soon as it
//! is committed. The schema is versioned ([`schema`]); older files are
//! migrated on open, newer ones refused.
#![forbid(unsafe_code)]

pub mod schema;
pub mod select;
mod sink;

use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storlab_types::{BenchReport, MonitorTimeline, PhaseResult, RunKind, StoredRun};

pub use select::{RunSelector, SelectError, TagConflict, merge_tags, parse_tag};
pub use sink::{BeginError, RunSink};

/// The database file used when neither `--db` nor `STORLAB_DB` is given.
pub const DEFAULT_DB: &str = "storlab.db";

/// Everything that can go wrong with the store. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "no storlab database at {}: `storlab bench` or `storlab import FILE` creates one; \
         or point --db (or STORLAB_DB) at an existing one",
        path.display()
    )]
    NotFound { path: PathBuf },
    #[error(
        "{} was written by a newer storlab (database schema version {found}; this storlab \
         understands versions up to {supported}): upgrade storlab to read it, or use another --db file",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error(
        "{} is not a storlab database ({what}); pass --db with a storlab database or a new file name",
        path.display()
    )]
    NotStorlab { path: PathBuf, what: String },
    #[error("cannot use {} as the database: {why}; pass --db with a file path", path.display())]
    BadPath { path: PathBuf, why: String },
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "upgrading {} from schema version {from} to {to} failed: {source}; the file was left at version {from}",
        path.display()
    )]
    Migration {
        path: PathBuf,
        from: i64,
        to: i64,
        source: rusqlite::Error,
    },
    #[error(
        "cannot switch {} to WAL journaling (got '{mode}'): the store needs a local file system \
         that supports shared memory; put the database on local disk with --db",
        path.display()
    )]
    NoWal { path: PathBuf, mode: String },
    #[error(
        "{} is empty: it holds no runs yet (`storlab bench` or `storlab import FILE` makes it a storlab database)",
        path.display()
    )]
    Empty { path: PathBuf },
    #[error(
        "{} is at schema version {found} and sits on a read-only file system, so it cannot be upgraded to \
         version {supported}: copy it to a writable place and point --db at the copy",
        path.display()
    )]
    NeedsUpgrade {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("database error: {}", sql_message(.0))]
    Sql(#[from] rusqlite::Error),
    #[error("no run with id {0}; `storlab runs` lists the runs")]
    NoSuchRun(i64),
    #[error("run {0} is already finished; start a new run with begin_run")]
    AlreadyFinished(i64),
    #[error("no run matches '{selector}'{hint}")]
    NoMatch { selector: String, hint: String },
    #[error("no run matches the baseline {0}")]
    NoBaseline(String),
    #[error(
        "the stored {what} of run {id} cannot be read ({source}); the database may have been edited by hand"
    )]
    Corrupt {
        id: i64,
        what: &'static str,
        source: serde_json::Error,
    },
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        source: serde_json::Error,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Whether an error is SQLite's "database is locked" (busy).
fn is_busy(e: &StoreError) -> bool {
    let code = match e {
        StoreError::Sql(e) | StoreError::Open { source: e, .. } => e.sqlite_error_code(),
        StoreError::Migration { source, .. } => source.sqlite_error_code(),
        _ => None,
    };
    matches!(
        code,
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Whether SQLite reports damaged pages (or a file that stopped being a
/// database part-way).
fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// What to do about corrupt pages: keep a copy, salvage with the sqlite3 shell.
const RECOVER_HINT: &str = "the database file is corrupt (damaged pages). Keep a copy of it, then salvage what \
can be read with the sqlite3 shell: `sqlite3 BROKEN.db .recover | sqlite3 RECOVERED.db`, and point --db at \
RECOVERED.db";

/// Whether the file starts with SQLite's magic string (so a "not a
/// database" error means damage, not a wrong file).
fn has_sqlite_header(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

/// Whether `path` lies on a file system mounted read-only, from the mount
/// table (`storlab_host::mountinfo`). Never opens the database itself:
/// closing any descriptor of it would drop SQLite's POSIX locks held
/// elsewhere in this process.
fn read_only_fs(path: &Path) -> bool {
    let Ok(file) = std::fs::canonicalize(path) else {
        return false;
    };
    let mounts = storlab_host::mountinfo::current();
    storlab_host::mountinfo::mount_of(&mounts, &file).is_some_and(|m| m.has_flag("ro"))
}

/// A path as an SQLite URI path: `%`, `?` and `#` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() && !b.is_ascii_control() => out.push(b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// An SQLite error as the user reads it: corruption says how to recover.
fn sql_message(e: &rusqlite::Error) -> String {
    if is_corruption(e) {
        format!("{e}: {RECOVER_HINT}")
    } else {
        e.to_string()
    }
}

/// Whether a run was completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Begun and not finished, and the process writing it is alive.
    Running,
    /// Begun and never finished: the process writing it is gone (crash,
    /// kill, power loss), or it runs on another host and cannot be checked.
    Unfinished,
    Finished,
    /// Finished early (Ctrl-C, ENOSPC, error); its phases hold what was measured.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Unfinished => "unfinished",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
        }
    }
    /// The status column as stored (`running`, `finished`, `interrupted`).
    fn parse(s: &str) -> RunStatus {
        match s {
            "finished" => RunStatus::Finished,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Running,
        }
    }

    /// The stored status, with `running` checked against the writer process.
    fn observed(stored: &str, writer_host: Option<&str>, writer_pid: Option<i64>) -> RunStatus {
        match RunStatus::parse(stored) {
            RunStatus::Running if !writer_alive(writer_host, writer_pid) => RunStatus::Unfinished,
            s => s,
        }
    }
}

/// This machine's host name, as the kernel has it.
fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Whether the process that began a run is still alive. Only a writer on
/// this host can be checked; any other is taken as gone.
fn writer_alive(host: Option<&str>, pid: Option<i64>) -> bool {
    match (host, pid) {
        (Some(h), Some(pid)) if pid > 0 && !h.is_empty() && h == local_hostname() => {
            Path::new("/proc").join(pid.to_string()).exists()
        }
        _ => false,
    }
}

/// One line of `storlab runs`: the typed columns of a run, without its records.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub kind: String,
    pub status: RunStatus,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub host: String,
    pub target: String,
    pub tool: String,
    pub tool_version: String,
    pub note: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Number of phases saved.
    pub phases: u32,
    /// Distinct I/O patterns of its phases, in phase order (`write`, `randread`).
    pub workloads: Vec<String>,
    /// Distinct block sizes of its phases, bytes, in phase order.
    pub block_sizes: Vec<u64>,
    /// Distinct block-size mixes (`--bssplit`) of its phases, as
    /// `4KiB/50:64KiB/50`; such phases add nothing to `block_sizes`.
    pub block_mixes: Vec<String>,
}

impl RunSummary {
    /// The JSON object `storlab runs --json` prints for this run (keys in
    /// the order the document has always had them).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "kind": self.kind,
            "status": self.status.as_str(),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "host": self.host,
            "target": self.target,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "phases": self.phases,
            "workloads": self.workloads,
            "block_sizes_bytes": self.block_sizes,
            "block_mixes": self.block_mixes,
            "tags": self.tags,
            "note": self.note,
        })
    }
}

/// Which run a `--baseline` selector took when it matched several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineChoice {
    pub id: i64,
    /// How many runs the selector matched.
    pub matched: usize,
    pub selector: String,
}

impl std::fmt::Display for BaselineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "baseline: run {}, the latest of {} runs matching {}",
            self.id, self.matched, self.selector
        )
    }
}

/// Filters of `storlab runs`. Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    /// Runs carrying all of these tags.
    pub tags: Vec<(String, String)>,
    /// Substring of the target path.
    pub target: Option<String>,
    /// Substring of the host name.
    pub host: Option<String>,
    /// Runs that started at or after this time (RFC 3339 prefix, UTC).
    pub since: Option<String>,
    /// Runs that started before this time (RFC 3339 prefix, UTC).
    pub until: Option<String>,
    /// Runs with at least one phase of this I/O pattern (`randread`).
    pub rw: Option<String>,
    /// Runs of this kind (`bench`, `fio-import`, `monitor`).
    pub kind: Option<String>,
    /// At most this many runs, the most recent ones.
    pub limit: Option<usize>,
}

/// An open storlab database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const UNFINISHED_REASON: &str = "the run did not finish: storlab stopped (crash, kill or power loss) \
before recording its end; the phases shown are those completed";
const RUNNING_REASON: &str =
    "the run is still in progress; the phases shown are those completed so far";

impl Store {
    /// Open the database at `path`, creating it if it does not exist, and
    /// upgrade its schema if it is older than this storlab's.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_with(path, true)
    }

    /// Open an existing database for commands that only read: a missing
    /// file is [`StoreError::NotFound`] and an empty one
    /// [`StoreError::Empty`] (never given a schema). The connection is
    /// `query_only`, so reading never changes the file (nor leaves side
    /// files); on a read-only file system the file is opened immutable. Only a file of an older schema
    /// on a writable file system is opened for writing, to be upgraded.
    pub fn open_existing(path: &Path) -> Result<Store> {
        let path_buf = path.to_path_buf();
        if path.as_os_str().is_empty() {
            return Self::open_with(path, false);
        }
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound { path: path_buf });
            }
            Ok(md) if md.is_file() && md.len() == 0 => {
                return Err(StoreError::Empty { path: path_buf });
            }
            _ => {}
        }
        let read_only_fs = read_only_fs(path);
        let open_err = |source| StoreError::Open {
            path: path_buf.clone(),
            source,
        };
        let conn = if read_only_fs {
            // Nobody can change a file on a read-only mount, and SQLite
            // cannot create the WAL index there: read it as immutable.
            Connection::open_with_flags(
                format!("file:{}?immutable=1", uri_path(path)),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )
        } else {
            // Read-write without CREATE, but `query_only`: SQL cannot change
            // the file, and the last connection to close still removes the
            // -wal/-shm files (a read-only connection would leave them).
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        }
        .map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(open_err)?;
        let store = Store {
            conn,
            path: path_buf,
        };
        let (version, fresh) = store.check_identity()?;
        if fresh {
            return Err(StoreError::Empty { path: store.path });
        }
        if version < schema::LATEST {
            if read_only_fs {
                return Err(StoreError::NeedsUpgrade {
                    path: store.path,
                    found: version,
                    supported: schema::LATEST,
                });
            }
            drop(store);
            return Self::open_with(path, false);
        }
        Ok(store)
    }

    fn open_with(path: &Path, create: bool) -> Result<Store> {
        let path_buf = path.to_path_buf();
        if path.as_os_str().is_empty() {
            // SQLite would open a private temporary database and lose the runs.
            return Err(StoreError::BadPath {
                path: path_buf,
                why: "the path is empty (is STORLAB_DB set to an empty string?)".into(),
            });
        }
        if !create && !path.exists() {
            return Err(StoreError::NotFound { path: path_buf });
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.is_dir()
        {
            return Err(StoreError::BadPath {
                path: path_buf,
                why: format!("the directory {} does not exist", parent.display()),
            });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let open_err = |source| StoreError::Open {
            path: path_buf.clone(),
            source,
        };
        let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        let mut store = Store {
            conn,
            path: path_buf,
        };
        // First use by many processes at once: switching a new file to WAL
        // can report "database is locked" without waiting in the busy
        // handler; those steps change nothing when repeated, so retry them
        // (up to the same 30 s) rather than fail.
        let start = std::time::Instant::now();
        let mut attempt = 0u64;
        loop {
            let r = store
                .check_identity()
                .and_then(|_| store.configure())
                .and_then(|()| store.migrate());
            match r {
                Err(e) if is_busy(&e) && start.elapsed() < Duration::from_secs(30) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(5 + (attempt * 7) % 45));
                }
                Err(e) => return Err(e),
                Ok(()) => return Ok(store),
            }
        }
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Schema version of the open file (equal to [`schema::LATEST`] after open).
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    fn not_a_db(&self, e: rusqlite::Error) -> StoreError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase)
            && !has_sqlite_header(&self.path)
        {
            StoreError::NotStorlab {
                path: self.path.clone(),
                what: "it is not an SQLite file".into(),
            }
        } else if is_corruption(&e) {
            StoreError::Sql(e)
        } else {
            StoreError::Open {
                path: self.path.clone(),
                source: e,
            }
        }
    }

    /// Refuse files that belong to another program or a newer storlab.
    /// Returns the schema version and whether the file is fresh (no schema
    /// yet). The three facts are read in one read transaction: another
    /// process creating the schema meanwhile must not make a half-created
    /// file look like "another program's database".
    fn check_identity(&self) -> Result<(i64, bool)> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.not_a_db(e))?;
        let app_id: i64 = tx
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(|e| self.not_a_db(e))?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| self.not_a_db(e))?;
        let objects: i64 = tx
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.not_a_db(e))?;
        drop(tx);
        let fresh = app_id == 0 && version == 0 && objects == 0;
        if app_id != schema::APPLICATION_ID && !fresh {
            return Err(StoreError::NotStorlab {
                path: self.path.clone(),
                what: if app_id == 0 {
                    "it is an SQLite database of another program".into()
                } else {
                    format!("it is an SQLite database with application_id {app_id:#x}")
                },
            });
        }
        if version > schema::LATEST {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                supported: schema::LATEST,
            });
        }
        Ok((version, fresh))
    }

    fn configure(&self) -> Result<()> {
        let mode: String = self
            .conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::NoWal {
                path: self.path.clone(),
                mode,
            });
        }
        // FULL: a committed phase survives power loss too, not only a crash.
        self.conn.pragma_update(None, "synchronous", "FULL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(())
    }

    fn migrate(&mut self) -> Result<()> {
        // Up to date (the common case): no write lock, so opening never
        // waits for a benchmark that is writing its run.
        if self.schema_version()? >= schema::LATEST {
            return Ok(());
        }
        loop {
            let path = self.path.clone();
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Read the version inside the write lock: another process may
            // have migrated the file meanwhile.
            let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if version >= schema::LATEST {
                return Ok(());
            }
            let to = version + 1;
            let step = |tx: &Transaction<'_>| -> rusqlite::Result<()> {
                tx.execute_batch(schema::MIGRATIONS[version as usize])?;
                tx.pragma_update(None, "user_version", to)?;
                tx.pragma_update(None, "application_id", schema::APPLICATION_ID)?;
                Ok(())
            };
            step(&tx)
                .and_then(|()| tx.commit())
                .map_err(|source| StoreError::Migration {
                    path,
                    from: version,
                    to,
                    source,
                })?;
        }
    }

    fn write_tx(&self) -> Result<Transaction<'_>> {
        // Unchecked because the API takes `&self` (one Store per thread);
        // IMMEDIATE takes the write lock up front, so a busy database waits
        // (busy_timeout) instead of failing half-way through.
        Ok(Transaction::new_unchecked(
            &self.conn,
            TransactionBehavior::Immediate,
        )?)
    }

    /// Start a run: saves `header` (the report with no phases yet), its tags
    /// and note, and returns the run id. The run shows as `running` until
    /// [`Store::finish_run`]; if that never comes, it loads as interrupted.
    pub fn begin_run(
        &self,
        kind: impl Into<RunKind>,
        header: &BenchReport,
        tags: &BTreeMap<String, String>,
        note: Option<&str>,
    ) -> Result<i64> {
        let tx = self.write_tx()?;
        let kind = kind.into();
        let id = insert_run(&tx, kind.as_str(), RunStatus::Running, header, tags, note)?;
        tx.commit()?;
        Ok(id)
    }

    /// Save one finished phase of run `run_id`, committed before returning.
    /// Returns the phase's position in the run (0, 1, ...).
    pub fn add_phase(&self, run_id: i64, phase: &PhaseResult) -> Result<i64> {
        let tx = self.write_tx()?;
        let status = run_status(&tx, run_id)?;
        if status != RunStatus::Running {
            return Err(StoreError::AlreadyFinished(run_id));
        }
        let seq = next_seq(&tx, "phases", run_id)?;
        insert_phase(&tx, run_id, seq, phase)?;
        tx.commit()?;
        Ok(seq)
    }

    /// Attach a device timeline to run `run_id`, committed before returning.
    pub fn add_monitor(&self, run_id: i64, timeline: &MonitorTimeline) -> Result<()> {
        let tx = self.write_tx()?;
        run_status(&tx, run_id)?;
        let seq = next_seq(&tx, "monitors", run_id)?;
        insert_monitor(&tx, run_id, seq, timeline)?;
        tx.commit()?;
        Ok(())
    }

    /// Record the end of run `run_id` with the final report: its header
    /// replaces the one saved by `begin_run`, phases of `report` not yet
    /// saved with `add_phase` (those past the count already stored) are
    /// added, and `report.monitor` is attached if no timeline was added yet.
    /// Phases already stored are kept as stored.
    pub fn finish_run(&self, run_id: i64, report: &BenchReport) -> Result<()> {
        let tx = self.write_tx()?;
        if run_status(&tx, run_id)? != RunStatus::Running {
            return Err(StoreError::AlreadyFinished(run_id));
        }
        let stored = next_seq(&tx, "phases", run_id)?;
        for (seq, phase) in report.phases.iter().enumerate().skip(stored as usize) {
            insert_phase(&tx, run_id, seq as i64, phase)?;
        }
        if let Some(m) = &report.monitor
            && next_seq(&tx, "monitors", run_id)? == 0
        {
            insert_monitor(&tx, run_id, 0, m)?;
        }
        let status = if report.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        };
        tx.execute(
            "UPDATE runs SET status = ?2, started_at = ?3, finished_at = ?4, host = ?5, \
             target = ?6, tool = ?7, tool_version = ?8, report_json = ?9 WHERE id = ?1",
            params![
                run_id,
                status.as_str(),
                report.started_at,
                report.finished_at,
                report.host.hostname,
                report.target.path,
                report.tool.name,
                report.tool.version,
                header_json(report)?,
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Save a whole run at once (imports, `monitor --record`) in one
    /// transaction; returns its id.
    pub fn save_run(
        &self,
        kind: impl Into<RunKind>,
        report: &BenchReport,
        tags: &BTreeMap<String, String>,
        note: Option<&str>,
    ) -> Result<i64> {
        let tx = self.write_tx()?;
        let status = if report.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        };
        let id = insert_run(&tx, kind.into().as_str(), status, report, tags, note)?;
        tx.execute(
            "UPDATE runs SET finished_at = ?2 WHERE id = ?1",
            params![id, report.finished_at],
        )?;
        for (seq, phase) in report.phases.iter().enumerate() {
            insert_phase(&tx, id, seq as i64, phase)?;
        }
        if let Some(m) = &report.monitor {
            insert_monitor(&tx, id, 0, m)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Load run `id` with its phases, tags and first device timeline. A run
    /// that was begun but never finished comes back with `interrupted` set and
    /// a `stop_reason` that says so.
    pub fn load(&self, id: i64) -> Result<StoredRun> {
        // One read transaction: a consistent snapshot even while a run writes.
        let tx = self.conn.unchecked_transaction()?;
        let row = tx
            .query_row(
                "SELECT kind, status, note, report_json, writer_host, writer_pid FROM runs WHERE id = ?1",
                [id],
                |r| {
                    let status = RunStatus::observed(
                        &r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(4)?.as_deref(),
                        r.get(5)?,
                    );
                    Ok((
                        r.get::<_, String>(0)?,
                        status,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()?;
        let Some((kind, status, note, report_json)) = row else {
            return Err(StoreError::NoSuchRun(id));
        };
        let mut report: BenchReport =
            serde_json::from_str(&report_json).map_err(|source| StoreError::Corrupt {
                id,
                what: "report",
                source,
            })?;
        let mut stmt =
            tx.prepare("SELECT phase_json FROM phases WHERE run_id = ?1 ORDER BY seq")?;
        let phases = stmt
            .query_map([id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        report.phases = phases
            .iter()
            .map(|j| {
                serde_json::from_str(j).map_err(|source| StoreError::Corrupt {
                    id,
                    what: "phase",
                    source,
                })
            })
            .collect::<Result<_>>()?;
        let monitor: Option<String> = tx
            .query_row(
                "SELECT timeline_json FROM monitors WHERE run_id = ?1 ORDER BY seq LIMIT 1",
                [id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(m) = monitor {
            report.monitor =
                Some(
                    serde_json::from_str(&m).map_err(|source| StoreError::Corrupt {
                        id,
                        what: "device timeline",
                        source,
                    })?,
                );
        }
        if matches!(status, RunStatus::Running | RunStatus::Unfinished) {
            report.interrupted = true;
            if report.stop_reason.is_none() {
                report.stop_reason = Some(
                    if status == RunStatus::Running {
                        RUNNING_REASON
                    } else {
                        UNFINISHED_REASON
                    }
                    .to_string(),
                );
            }
        }
        let tags = load_tags(&tx, id)?;
        drop(stmt);
        tx.finish()?;
        Ok(StoredRun {
            id,
            kind: kind.into(),
            tags,
            note,
            report,
        })
    }

    /// Every device timeline of run `id`, in the order they were added.
    pub fn load_monitors(&self, id: i64) -> Result<Vec<MonitorTimeline>> {
        let mut stmt = self
            .conn
            .prepare("SELECT timeline_json FROM monitors WHERE run_id = ?1 ORDER BY seq")?;
        let rows = stmt
            .query_map([id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.iter()
            .map(|j| {
                serde_json::from_str(j).map_err(|source| StoreError::Corrupt {
                    id,
                    what: "device timeline",
                    source,
                })
            })
            .collect()
    }

    /// The runs that match `filter`, oldest first.
    pub fn list(&self, filter: &RunFilter) -> Result<Vec<RunSummary>> {
        let mut sql = String::from(
            "SELECT id, kind, status, started_at, finished_at, host, target, tool, tool_version, note, \
             writer_host, writer_pid FROM runs WHERE 1",
        );
        let mut args: Vec<String> = Vec::new();
        let arg = |v: &str, args: &mut Vec<String>| {
            args.push(v.to_string());
            format!("?{}", args.len())
        };
        for (k, v) in &filter.tags {
            let (pk, pv) = (arg(k, &mut args), arg(v, &mut args));
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.key = {pk} AND t.value = {pv})"
            );
        }
        if let Some(t) = &filter.target {
            sql += &format!(" AND instr(target, {}) > 0", arg(t, &mut args));
        }
        if let Some(h) = &filter.host {
            sql += &format!(" AND instr(host, {}) > 0", arg(h, &mut args));
        }
        if let Some(s) = &filter.since {
            sql += &format!(" AND started_at >= {}", arg(s, &mut args));
        }
        if let Some(u) = &filter.until {
            sql += &format!(" AND started_at < {}", arg(u, &mut args));
        }
        if let Some(rw) = &filter.rw {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM phases p WHERE p.run_id = runs.id AND p.rw = {})",
                arg(rw, &mut args)
            );
        }
        if let Some(k) = &filter.kind {
            sql += &format!(" AND kind = {}", arg(k, &mut args));
        }
        match filter.limit {
            Some(n) => {
                sql = format!("SELECT * FROM ({sql} ORDER BY id DESC LIMIT {n}) ORDER BY id")
            }
            None => sql += " ORDER BY id",
        }
        let tx = self.conn.unchecked_transaction()?;
        let mut out = Vec::new();
        {
            let mut stmt = tx.prepare(&sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
            while let Some(r) = rows.next()? {
                out.push(RunSummary {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    status: RunStatus::observed(
                        &r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(10)?.as_deref(),
                        r.get(11)?,
                    ),
                    started_at: r.get(3)?,
                    finished_at: r.get(4)?,
                    host: r.get(5)?,
                    target: r.get(6)?,
                    tool: r.get(7)?,
                    tool_version: r.get(8)?,
                    note: r.get(9)?,
                    tags: BTreeMap::new(),
                    phases: 0,
                    workloads: Vec::new(),
                    block_sizes: Vec::new(),
                    block_mixes: Vec::new(),
                });
            }
            let mut phase_stmt = tx.prepare(
                "SELECT rw, bs_bytes, json_extract(phase_json, '$.params.rwmixread'), \
                 json_extract(phase_json, '$.params.bs') FROM phases WHERE run_id = ?1 ORDER BY seq",
            )?;
            for s in &mut out {
                s.tags = load_tags(&tx, s.id)?;
                let mut rows = phase_stmt.query([s.id])?;
                while let Some(r) = rows.next()? {
                    s.phases += 1;
                    let rw: String = r.get(0)?;
                    let bs: i64 = r.get(1)?;
                    let mix: Option<i64> = r.get(2)?;
                    let bs_json: Option<String> = r.get(3)?;
                    // A read/write mix is labelled as one (`randrw 70/30`).
                    let rw = match (rw.as_str(), mix) {
                        ("readwrite" | "randrw", Some(m)) => format!("{rw} {m}/{}", 100 - m),
                        _ => rw,
                    };
                    if !s.workloads.contains(&rw) {
                        s.workloads.push(rw);
                    }
                    let weights: Vec<storlab_types::BsWeight> = bs_json
                        .and_then(|j| serde_json::from_str(&j).ok())
                        .unwrap_or_default();
                    if weights.len() > 1 {
                        let label = weights
                            .iter()
                            .map(|w| {
                                format!(
                                    "{}/{}",
                                    storlab_types::format_bytes(w.bs_bytes).replace(' ', ""),
                                    w.weight
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(":");
                        if !s.block_mixes.contains(&label) {
                            s.block_mixes.push(label);
                        }
                        continue;
                    }
                    let bs = bs.max(0) as u64;
                    if !s.block_sizes.contains(&bs) {
                        s.block_sizes.push(bs);
                    }
                }
            }
        }
        tx.finish()?;
        Ok(out)
    }

    /// The run a `--baseline` selector names: the latest of those it
    /// matches, and, when it matched several, which one was taken (a note
    /// the CLI prints).
    pub fn load_baseline(&self, sel: &RunSelector) -> Result<(StoredRun, Option<BaselineChoice>)> {
        let ids = self.resolve(std::slice::from_ref(sel), false)?;
        let Some(&id) = ids.last() else {
            return Err(StoreError::NoBaseline(sel.to_string()));
        };
        let choice = (ids.len() > 1).then(|| BaselineChoice {
            id,
            matched: ids.len(),
            selector: sel.to_string(),
        });
        Ok((self.load(id)?, choice))
    }

    /// The run ids the selectors name, in the order given (each selector's
    /// runs oldest first), without duplicates. `all` takes every run. A
    /// selector that matches nothing is an error naming it.
    pub fn resolve(&self, selectors: &[RunSelector], all: bool) -> Result<Vec<i64>> {
        let mut ids: Vec<i64> = Vec::new();
        if all {
            let mut stmt = self.conn.prepare("SELECT id FROM runs ORDER BY id")?;
            ids = stmt
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            if ids.is_empty() {
                return Err(StoreError::NoMatch {
                    selector: "--all".into(),
                    hint: format!(": {} holds no runs yet", self.path.display()),
                });
            }
        }
        for sel in selectors {
            let found = self.resolve_one(sel)?;
            if found.is_empty() {
                let hint = match sel {
                    RunSelector::Id(_) => "; `storlab runs` lists the run ids".to_string(),
                    RunSelector::Latest { .. } => {
                        let n: i64 = self
                            .conn
                            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?;
                        format!(
                            ": {} holds {n} run{}",
                            self.path.display(),
                            if n == 1 { "" } else { "s" }
                        )
                    }
                    RunSelector::Tags(_) => "; `storlab runs` shows each run's tags".to_string(),
                };
                return Err(StoreError::NoMatch {
                    selector: sel.to_string(),
                    hint,
                });
            }
            for id in found {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        Ok(ids)
    }

    fn resolve_one(&self, sel: &RunSelector) -> Result<Vec<i64>> {
        Ok(match sel {
            RunSelector::Id(id) => self
                .conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()?
                .into_iter()
                .collect(),
            RunSelector::Latest { back } => self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    [back],
                    |r| r.get(0),
                )
                .optional()?
                .into_iter()
                .collect(),
            RunSelector::Tags(tags) => {
                let mut sql = String::from("SELECT id FROM runs WHERE 1");
                let mut args: Vec<&str> = Vec::new();
                for (k, v) in tags {
                    args.push(k);
                    args.push(v);
                    sql += &format!(
                        " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.key = ?{} AND t.value = ?{})",
                        args.len() - 1,
                        args.len()
                    );
                }
                sql += " ORDER BY id";
                let mut stmt = self.conn.prepare(&sql)?;
                stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            }
        })
    }

    /// Load the runs the selectors name (see [`Store::resolve`]).
    pub fn select(&self, selectors: &[RunSelector], all: bool) -> Result<Vec<StoredRun>> {
        self.resolve(selectors, all)?
            .into_iter()
            .map(|id| self.load(id))
            .collect()
    }
}

/// The report as stored in `runs.report_json`: without its phases and
/// timeline, which have their own tables.
fn header_json(report: &BenchReport) -> Result<String> {
    let mut header = report.clone();
    header.phases.clear();
    header.monitor = None;
    serde_json::to_string(&header).map_err(|source| StoreError::Encode {
        what: "report",
        source,
    })
}

fn insert_run(
    tx: &Transaction<'_>,
    kind: &str,
    status: RunStatus,
    report: &BenchReport,
    tags: &BTreeMap<String, String>,
    note: Option<&str>,
) -> Result<i64> {
    // A run begun here records its writer so readers can tell a live run
    // from one whose storlab died.
    let writer = (status == RunStatus::Running).then(std::process::id);
    tx.execute(
        "INSERT INTO runs (kind, status, started_at, host, target, tool, tool_version, note, report_json, \
         writer_host, writer_pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            kind,
            status.as_str(),
            report.started_at,
            report.host.hostname,
            report.target.path,
            report.tool.name,
            report.tool.version,
            note,
            header_json(report)?,
            writer.as_ref().map(|_| local_hostname()),
            writer.map(i64::from),
        ],
    )?;
    let id = tx.last_insert_rowid();
    let mut stmt = tx.prepare("INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)")?;
    for (k, v) in tags {
        stmt.execute(params![id, k, v])?;
    }
    Ok(id)
}

fn run_status(tx: &Transaction<'_>, run_id: i64) -> Result<RunStatus> {
    let s: Option<String> = tx
        .query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |r| {
            r.get(0)
        })
        .optional()?;
    s.map(|s| RunStatus::parse(&s))
        .ok_or(StoreError::NoSuchRun(run_id))
}

fn next_seq(tx: &Transaction<'_>, table: &str, run_id: i64) -> Result<i64> {
    Ok(tx.query_row(
        &format!("SELECT coalesce(max(seq) + 1, 0) FROM {table} WHERE run_id = ?1"),
        [run_id],
        |r| r.get(0),
    )?)
}

fn insert_phase(tx: &Transaction<'_>, run_id: i64, seq: i64, p: &PhaseResult) -> Result<()> {
    let json = serde_json::to_string(p).map_err(|source| StoreError::Encode {
        what: "phase",
        source,
    })?;
    let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    tx.execute(
        "INSERT INTO phases (run_id, seq, name, rw, bs_bytes, numjobs, iodepth, engine, cache, \
         size_bytes, elapsed_ns, bw_bytes_per_s, iops, interrupted, phase_json, \
         read_lat_p99_ns, write_lat_p99_ns) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            run_id,
            seq,
            p.params.name,
            p.params.rw.as_str(),
            clamp(p.params.max_bs()),
            p.params.numjobs,
            p.params.iodepth,
            p.params.engine.as_str(),
            p.params.cache.as_str(),
            clamp(p.params.size_bytes),
            clamp(p.elapsed_ns),
            p.total.bw_bytes_per_s,
            p.total.iops,
            p.interrupted,
            json,
            p.read.lat_ns.map(|l| clamp(l.p99)),
            p.write.lat_ns.map(|l| clamp(l.p99)),
        ],
    )?;
    insert_groups(tx, run_id, seq, p)
}

/// A phase's job groups, one row each (the JSON keeps everything; these
/// are copies for queries).
fn insert_groups(tx: &Transaction<'_>, run_id: i64, seq: i64, p: &PhaseResult) -> Result<()> {
    let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    for (gseq, g) in p.groups.iter().flat_map(|g| &g.groups).enumerate() {
        tx.execute(
            "INSERT INTO phase_groups (run_id, seq, gseq, name, rw, bs_bytes, numjobs, iodepth, \
             first_job, elapsed_ns, read_bytes, write_bytes, bw_bytes_per_s, iops, \
             read_lat_p99_ns, write_lat_p99_ns) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                run_id,
                seq,
                gseq as i64,
                g.name,
                g.params.rw.as_str(),
                clamp(g.params.max_bs()),
                g.params.numjobs,
                g.params.iodepth,
                g.first_job,
                clamp(g.elapsed_ns),
                clamp(g.read.bytes),
                clamp(g.write.bytes),
                g.total.bw_bytes_per_s,
                g.total.iops,
                g.read.lat_ns.map(|l| clamp(l.p99)),
                g.write.lat_ns.map(|l| clamp(l.p99)),
            ],
        )?;
    }
    Ok(())
}

fn insert_monitor(tx: &Transaction<'_>, run_id: i64, seq: i64, m: &MonitorTimeline) -> Result<()> {
    let json = serde_json::to_string(m).map_err(|source| StoreError::Encode {
        what: "device timeline",
        source,
    })?;
    tx.execute(
        "INSERT INTO monitors (run_id, seq, started_at, interval_ns, devices, samples, timeline_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            run_id,
            seq,
            m.started_at,
            i64::try_from(m.interval_ns).unwrap_or(i64::MAX),
            m.devices.join(","),
            m.samples.len() as i64,
            json,
        ],
    )?;
    Ok(())
}

fn load_tags(conn: &Connection, run_id: i64) -> Result<BTreeMap<String, String>> {
    let mut stmt = conn.prepare_cached("SELECT key, value FROM run_tags WHERE run_id = ?1")?;
    let tags = stmt
        .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(tags)
}

#[cfg(test)]
mod parser_proptests;
#[cfg(test)]
mod safety_tests;
#[cfg(test)]
pub(crate) use storlab_testkit::records as testdata;
#[cfg(test)]
mod tests;
