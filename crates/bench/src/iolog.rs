//! `storlab bench --write-iolog FILE`: every I/O the run issues, per job,
//! written in fio's iolog version 3 format (fio's `iolog.c`: a first line
//! `fio version 3 iolog`, then `TIME FILE add|open|close` and
//! `TIME FILE read|write|sync OFFSET LENGTH`, TIME in microseconds from the
//! start), so `fio --read_iolog=FILE` and `storlab replay FILE` issue the
//! same I/O sequence storlab did.
//!
//! Recording stays off the I/O path: each worker appends a 32-byte entry
//! per I/O to its own buffer at the moment it hands the I/O to the kernel
//! (the submission stamp it takes anyway), and hands the full buffer
//! (4,096 entries) to a writer thread, which spills it in binary to one
//! unlinked scratch file per job beside FILE. At the end of the run
//! ([`Recording::finish`]) the jobs' spills, each in time order, are merged
//! by time into the text log, written to a new temporary file beside FILE
//! and renamed into place. Memory does not grow with the run.
//!
//! FILE is an output file: an existing file (of any kind: storlab cannot
//! tell its own iolog from fio's) is never written over, and a name that
//! appears while the run goes is refused at the rename, not replaced.

use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Entries a worker collects before it hands them to the writer.
const CHUNK: usize = 4096;

/// Why an iolog cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum IologError {
    #[error(
        "--write-iolog {}: the file exists; storlab never writes an iolog over an existing file \
         (it cannot tell its own from fio's or another tool's): remove it or choose another name",
        path.display()
    )]
    Exists { path: PathBuf },
    #[error(
        "--write-iolog {}: the directory {} does not exist; create it or choose another file name",
        path.display(), dir.display()
    )]
    NoDirectory { path: PathBuf, dir: PathBuf },
    #[error(
        "--write-iolog {}: the file name has white space, which fio's iolog cannot carry \
         (fio reads names up to white space); choose another name", path.display()
    )]
    Name { path: PathBuf },
    #[error(
        "--write-iolog: the run's file {} has white space or is over 256 bytes long, which fio's \
         iolog cannot carry; give a TARGET whose path has no white space", name.display()
    )]
    FileName { name: PathBuf },
    #[error("--write-iolog {}: {what}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "--write-iolog {}: a file appeared at this name during the run; it is left as it is and \
         the iolog is not written", path.display()
    )]
    Appeared { path: PathBuf },
}

/// What one issued I/O leaves in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Nanoseconds from the start of the recording.
    pub t_ns: u64,
    pub offset: u64,
    pub len: u32,
    /// Index into the recording's file names.
    pub file: u32,
    pub action: Action,
}

/// The iolog actions storlab issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Action {
    Read = 0,
    Write = 1,
    Sync = 2,
    /// fio's `trim` (a hole punched in a file, a discard on a device).
    Trim = 3,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Sync => "sync",
            Action::Trim => "trim",
        }
    }
    fn from_u8(b: u8) -> Action {
        match b {
            0 => Action::Read,
            1 => Action::Write,
            3 => Action::Trim,
            _ => Action::Sync,
        }
    }
}

const ENTRY_BYTES: usize = 25;

impl Entry {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.t_ns.to_le_bytes());
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.file.to_le_bytes());
        out.push(self.action as u8);
    }
    fn decode(b: &[u8; ENTRY_BYTES]) -> Entry {
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(a)
        };
        let u32_at = |i: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&b[i..i + 4]);
            u32::from_le_bytes(a)
        };
        Entry {
            t_ns: u64_at(0),
            offset: u64_at(8),
            len: u32_at(16),
            file: u32_at(20),
            action: Action::from_u8(b[24]),
        }
    }
}

/// A full buffer of one job's entries, in time order.
struct Chunk {
    job: u32,
    entries: Vec<Entry>,
}

/// What the workers share: the writer's channel, the start and the names.
#[derive(Debug)]
pub struct Sink {
    tx: Mutex<Option<Sender<Chunk>>>,
    start: Instant,
    files: Mutex<Vec<PathBuf>>,
}

impl Sink {
    fn file_index(&self, path: &Path) -> u32 {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        match files.iter().position(|f| f == path) {
            Some(i) => i as u32,
            None => {
                files.push(path.to_path_buf());
                (files.len() - 1) as u32
            }
        }
    }
}

/// One worker's share of the recording: entries buffered here and handed
/// to the writer thread when the buffer is full, and when it is dropped
/// (the worker's end).
pub(crate) struct JobLog {
    tx: Sender<Chunk>,
    job: u32,
    file: u32,
    /// The phase's epoch, in ns from the recording's start: the worker's
    /// clock reads from its phase's epoch.
    base_ns: u64,
    buf: Vec<Entry>,
}

impl JobLog {
    /// The log of job `job` on `path`, whose clock starts at `epoch`, when
    /// the run records an iolog.
    pub(crate) fn new(
        sink: Option<&Sink>,
        job: u32,
        path: &Path,
        epoch: Instant,
    ) -> Option<JobLog> {
        let sink = sink?;
        let tx = sink.tx.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        Some(JobLog {
            tx,
            job,
            file: sink.file_index(path),
            base_ns: u64::try_from(epoch.saturating_duration_since(sink.start).as_nanos())
                .unwrap_or(u64::MAX),
            buf: Vec::with_capacity(CHUNK),
        })
    }

    /// One I/O handed to the kernel at `t_ns` (the worker's clock).
    #[inline]
    pub(crate) fn issued(&mut self, t_ns: u64, write: bool, offset: u64, len: u32) {
        let action = if write { Action::Write } else { Action::Read };
        self.push(t_ns, action, offset, len);
    }

    /// A trim of `len` bytes at `offset`, issued at `t_ns`.
    pub(crate) fn trimmed(&mut self, t_ns: u64, offset: u64, len: u32) {
        self.push(t_ns, Action::Trim, offset, len);
    }

    /// An fsync of the job's file at `t_ns`.
    pub(crate) fn synced(&mut self, t_ns: u64) {
        self.push(t_ns, Action::Sync, 0, 0);
    }

    #[inline]
    fn push(&mut self, t_ns: u64, action: Action, offset: u64, len: u32) {
        self.buf.push(Entry {
            t_ns: self.base_ns.saturating_add(t_ns),
            offset,
            len,
            file: self.file,
            action,
        });
        if self.buf.len() >= CHUNK {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        let entries = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        // A writer gone (it failed) is reported by `Recording::finish`.
        let _ = self.tx.send(Chunk {
            job: self.job,
            entries,
        });
    }
}

impl Drop for JobLog {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            self.hand_over();
        }
    }
}

/// One job's spilled entries: an unlinked scratch file.
struct Spill {
    out: BufWriter<File>,
    count: u64,
}

type Spills = HashMap<u32, Spill>;

/// A run's iolog being recorded: made before the run (the file name
/// checked), handed to [`crate::Control::record_iolog`], finished after.
#[derive(Debug)]
pub struct Recording {
    path: PathBuf,
    dir: PathBuf,
    sink: Arc<Sink>,
    writer: Option<std::thread::JoinHandle<Result<Spills, std::io::Error>>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill").field("count", &self.count).finish()
    }
}

/// What [`Recording::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub path: PathBuf,
    /// I/O lines (reads, writes, syncs).
    pub ios: u64,
    pub files: usize,
}

fn io_err<'a>(path: &'a Path, what: &'static str) -> impl Fn(std::io::Error) -> IologError + 'a {
    move |source| IologError::Io {
        path: path.to_path_buf(),
        what,
        source,
    }
}

impl Recording {
    /// Check `path` (nothing there, its directory exists, no white space in
    /// its name) and start the writer thread. Nothing is created at `path`
    /// until [`Recording::finish`].
    pub fn start(path: &Path) -> Result<Recording, IologError> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(IologError::Exists {
                path: path.to_path_buf(),
            });
        }
        if path
            .as_os_str()
            .to_string_lossy()
            .contains(char::is_whitespace)
        {
            return Err(IologError::Name {
                path: path.to_path_buf(),
            });
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        if !dir.is_dir() {
            return Err(IologError::NoDirectory {
                path: path.to_path_buf(),
                dir,
            });
        }
        // The spills' directory must take files now, not after the run.
        let probe = scratch(&dir, "probe");
        File::options()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(io_err(path, "cannot create files in its directory"))?;
        let _ = std::fs::remove_file(&probe);
        let (tx, rx) = channel();
        let sink = Arc::new(Sink {
            tx: Mutex::new(Some(tx)),
            start: Instant::now(),
            files: Mutex::new(Vec::new()),
        });
        let spill_dir = dir.clone();
        let writer = std::thread::Builder::new()
            .name("iolog-writer".into())
            .spawn(move || write_spills(&rx, &spill_dir))
            .map_err(io_err(path, "cannot start the writer thread"))?;
        Ok(Recording {
            path: path.to_path_buf(),
            dir,
            sink,
            writer: Some(writer),
        })
    }

    /// [`Recording::start`] when a file is given.
    pub fn maybe(path: Option<&Path>) -> Result<Option<Recording>, IologError> {
        path.map(Recording::start).transpose()
    }

    /// [`Recording::finish`] of a recording, if there is one.
    pub fn end(recording: Option<Recording>) -> Result<Option<Written>, IologError> {
        recording.map(Recording::finish).transpose()
    }

    /// What the workers record into.
    pub fn sink(&self) -> Arc<Sink> {
        Arc::clone(&self.sink)
    }

    /// After the run (every worker gone): merge the jobs' entries by time
    /// into the iolog and put it in place.
    pub fn finish(mut self) -> Result<Written, IologError> {
        self.sink
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let spills = match self.writer.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r.map_err(io_err(&self.path, "cannot keep the recorded I/O"))?,
            _ => {
                return Err(IologError::Io {
                    path: self.path.clone(),
                    what: "the writer thread failed",
                    source: std::io::Error::other("panicked"),
                });
            }
        };
        let files = self
            .sink
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for f in &files {
            let s = f.as_os_str().to_string_lossy();
            if s.contains(char::is_whitespace) || s.len() > 256 {
                return Err(IologError::FileName { name: f.clone() });
            }
        }
        let tmp = scratch(&self.dir, "tmp");
        let made = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_err(&self.path, "cannot create the file"))
            .and_then(|f| {
                let ios = merge(spills, &files, BufWriter::new(f))
                    .map_err(io_err(&self.path, "cannot write the file"))?;
                Ok(ios)
            });
        let ios = match made {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        if let Err(e) = rename_noreplace(&tmp, &self.path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                IologError::Appeared {
                    path: self.path.clone(),
                }
            } else {
                io_err(&self.path, "cannot put the file in place")(e)
            });
        }
        Ok(Written {
            path: self.path.clone(),
            ios,
            files: files.len(),
        })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // Not finished (the run failed before it): let the writer end.
        self.sink
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

/// A scratch file's name in `dir`, this process's own.
fn scratch(dir: &Path, what: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".storlab-iolog-{}-{n}.{what}", std::process::id()))
}

/// The writer thread: each chunk appended to its job's spill file (made
/// and unlinked at once: nothing is left behind, whatever happens).
fn write_spills(rx: &Receiver<Chunk>, dir: &Path) -> Result<Spills, std::io::Error> {
    let mut spills: Spills = HashMap::new();
    let mut bytes = Vec::with_capacity(CHUNK * ENTRY_BYTES);
    let mut failed = None;
    for chunk in rx {
        if failed.is_some() {
            continue; // drain, so no worker ever waits on a dead writer
        }
        let spill = match spills.entry(chunk.job) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let path = scratch(dir, "spill");
                let f = File::options()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&path);
                let _ = std::fs::remove_file(&path);
                match f {
                    Ok(f) => v.insert(Spill {
                        out: BufWriter::with_capacity(1 << 20, f),
                        count: 0,
                    }),
                    Err(e) => {
                        failed = Some(e);
                        continue;
                    }
                }
            }
        };
        bytes.clear();
        for e in &chunk.entries {
            e.encode(&mut bytes);
        }
        if let Err(e) = spill.out.write_all(&bytes) {
            failed = Some(e);
            continue;
        }
        spill.count += chunk.entries.len() as u64;
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(spills),
    }
}

/// One job's spill read back in order.
struct Head {
    input: BufReader<File>,
    left: u64,
}

impl Head {
    fn next(&mut self) -> std::io::Result<Option<Entry>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut b = [0u8; ENTRY_BYTES];
        self.input.read_exact(&mut b)?;
        Ok(Some(Entry::decode(&b)))
    }
}

/// Write the iolog: the header, every file added and opened, the jobs'
/// entries merged by time, every file closed. Returns the I/O lines.
fn merge(spills: Spills, files: &[PathBuf], mut out: impl Write) -> std::io::Result<u64> {
    let mut heads = Vec::new();
    // By job, so that the heap's head index is the job's order (a HashMap
    // iterates in no fixed order, and equal times must keep the job order).
    let mut spills: Vec<(u32, Spill)> = spills.into_iter().collect();
    spills.sort_by_key(|(job, _)| *job);
    for (_, s) in spills {
        let mut f = s
            .out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        f.rewind()?;
        heads.push(Head {
            input: BufReader::with_capacity(1 << 20, f),
            left: s.count,
        });
    }
    let names: Vec<String> = files
        .iter()
        .map(|f| f.as_os_str().to_string_lossy().into_owned())
        .collect();
    writeln!(out, "fio version 3 iolog")?;
    for n in &names {
        writeln!(out, "0 {n} add")?;
    }
    for n in &names {
        writeln!(out, "0 {n} open")?;
    }
    // Min-heap on (time, head index): equal times keep the job order.
    let mut heap = BinaryHeap::new();
    let mut current = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter_mut().enumerate() {
        let e = h.next()?;
        if let Some(e) = e {
            heap.push(std::cmp::Reverse((e.t_ns, i)));
        }
        current.push(e);
    }
    let (mut ios, mut last_us) = (0u64, 0u64);
    while let Some(std::cmp::Reverse((_, i))) = heap.pop() {
        let Some(e) = current[i] else { continue };
        let us = e.t_ns / 1000;
        last_us = last_us.max(us);
        let name = names.get(e.file as usize).map_or("?", String::as_str);
        writeln!(
            out,
            "{us} {name} {} {} {}",
            e.action.word(),
            e.offset,
            e.len
        )?;
        ios += 1;
        current[i] = heads[i].next()?;
        if let Some(n) = current[i] {
            heap.push(std::cmp::Reverse((n.t_ns, i)));
        }
    }
    for n in &names {
        writeln!(out, "{last_us} {n} close")?;
    }
    let mut f = out;
    f.flush()?;
    Ok(ios)
}

/// `rename(2)` that never replaces: `renameat2(RENAME_NOREPLACE)`, or a
/// hard link and unlink where the file system lacks it.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    match storlab_host::os::rename_noreplace(from, to) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            std::fs::hard_link(from, to)?;
            std::fs::remove_file(from)
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_survives_its_encoding() {
        let e = Entry {
            t_ns: u64::MAX - 3,
            offset: 1 << 40,
            len: 1 << 20,
            file: 7,
            action: Action::Sync,
        };
        let mut b = Vec::new();
        e.encode(&mut b);
        assert_eq!(b.len(), ENTRY_BYTES);
        let arr: [u8; ENTRY_BYTES] = b.try_into().expect("25 bytes");
        assert_eq!(Entry::decode(&arr), e);
    }

    /// Two jobs' logs on two files are merged by time; every line is one
    /// fio's v3 reader takes (time, file, action[, offset, length]).
    #[test]
    fn jobs_are_merged_by_time_in_fios_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("run.iolog");
        let rec = Recording::start(&path).expect("start");
        let sink = rec.sink();
        let epoch = sink.start;
        {
            let mut a = JobLog::new(Some(&sink), 0, Path::new("/x/a"), epoch).expect("log");
            let mut b = JobLog::new(Some(&sink), 1, Path::new("/x/b"), epoch).expect("log");
            for i in 0..5000u64 {
                a.issued(i * 2_000, false, i * 4096, 4096);
                b.issued(i * 2_000 + 1_000, true, i * 8192, 8192);
            }
            a.synced(20_000_000);
            b.trimmed(20_000_000, 1 << 20, 65536);
        }
        drop(sink);
        let w = rec.finish().expect("finish");
        assert_eq!((w.ios, w.files), (10_002, 2));
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "fio version 3 iolog");
        assert_eq!(
            &lines[1..5],
            ["0 /x/a add", "0 /x/b add", "0 /x/a open", "0 /x/b open"]
        );
        assert_eq!(lines[5], "0 /x/a read 0 4096");
        assert_eq!(lines[6], "1 /x/b write 0 8192");
        assert_eq!(lines[7], "2 /x/a read 4096 4096");
        let times: Vec<u64> = lines[5..lines.len() - 2]
            .iter()
            .map(|l| {
                l.split(' ')
                    .next()
                    .and_then(|t| t.parse().ok())
                    .expect("time")
            })
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "merged by time");
        assert_eq!(lines[lines.len() - 4], "20000 /x/a sync 0 0");
        // fio's iolog has trims: `bench --rw randtrim --write-iolog` records them.
        assert_eq!(lines[lines.len() - 3], "20000 /x/b trim 1048576 65536");
        assert_eq!(lines[lines.len() - 1], "20000 /x/b close");
        // No scratch file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("run.iolog")]);
    }

    #[test]
    fn an_existing_file_is_never_written_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("theirs.log");
        std::fs::write(&path, "fio version 3 iolog\n").expect("write");
        let e = Recording::start(&path).expect_err("refused");
        assert!(matches!(e, IologError::Exists { .. }), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "fio version 3 iolog\n"
        );
        // A file appearing during the run is not replaced either.
        let later = dir.path().join("later.log");
        let rec = Recording::start(&later).expect("start");
        std::fs::write(&later, "mine").expect("write");
        let e = rec.finish().expect_err("refused");
        assert!(matches!(e, IologError::Appeared { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&later).expect("read"), "mine");
    }

    #[test]
    fn entry_times_start_at_the_phase_epoch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rec = Recording::start(&dir.path().join("l")).expect("start");
        let sink = rec.sink();
        let epoch = sink.start + std::time::Duration::from_millis(5);
        let mut j = JobLog::new(Some(&sink), 0, Path::new("/f"), epoch).expect("log");
        j.issued(1_000, false, 0, 512);
        assert_eq!(j.buf[0].t_ns, 5_001_000);
        assert!(JobLog::new(None, 0, Path::new("/f"), epoch).is_none());
    }
}
