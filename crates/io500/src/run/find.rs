//! io500's `find` as its parallel find (pfind) does it: walk the data
//! directory with every rank, test each file against `-newer TIMESTAMP
//! -size 3901c -name *01*` with pfind's rules (the name first, on the
//! directory entry; `lstat` only for a name that matches; `-newer` is
//! pfind's: the file's ctime, in whole seconds, not before the timestamp
//! file's ctime), and score the files looked at per second
//! (`total_files / runtime / 1000` in io500's `phase_find.c`), not the
//! files found; finding none makes the run INVALID.
//!
//! Two walkers: [`find`], ranks as threads of one process sharing one
//! queue of directories (`storlab io500 --np N`), and [`find_on_ranks`],
//! one walker per MPI rank sharing the work as pfind's ranks do (below).

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use storlab_cluster::Comm;

/// What a find found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FindCount {
    /// Files looked at (pfind's `total_files`).
    pub total: u64,
    /// Files that matched every test.
    pub found: u64,
    /// Entries that could not be read or stat'ed.
    pub errors: u64,
    pub elapsed_ns: u64,
}

impl FindCount {
    /// Every rank's counts as one: the sums, over the slowest rank's time
    /// (pfind's `MPI_SUM` of the counts and `MPI_MAX` of the runtimes).
    pub fn sum(parts: &[FindCount]) -> FindCount {
        parts.iter().fold(FindCount::default(), |a, p| FindCount {
            total: a.total + p.total,
            found: a.found + p.found,
            errors: a.errors + p.errors,
            elapsed_ns: a.elapsed_ns.max(p.elapsed_ns),
        })
    }
}

/// pfind's `-name` pattern `*01*`: the name holds `01`.
pub fn name_matches(name: &OsStr) -> bool {
    name.as_bytes().windows(2).any(|w| w == b"01")
}

/// pfind's `-size 3901c -newer TIMESTAMP` (its `check_buf`): the size,
/// and a ctime (seconds) not below the timestamp file's.
fn stat_matches(size: u64, ctime_s: i64, stamp_ctime_s: i64) -> bool {
    size == crate::phases::fixed::MDTEST_HARD_FILE_SIZE && ctime_s >= stamp_ctime_s
}

/// Whether a file of `size` bytes whose inode changed at `ctime_s`
/// (seconds) matches, given the timestamp file's ctime `stamp_ctime_s`:
/// pfind's `check_buf` drops a file whose `st_ctime` is *below* the
/// timestamp's, so a file of the timestamp's own second matches.
pub fn matches(name: &OsStr, size: u64, ctime_s: i64, stamp_ctime_s: i64) -> bool {
    name_matches(name) && stat_matches(size, ctime_s, stamp_ctime_s)
}

/// Files looked at, found, and entries that could not be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    total: u64,
    found: u64,
    errors: u64,
}

impl Counts {
    /// pfind's `find_do_lstat`: a file whose name matched is looked at
    /// (counted) where it is `lstat`ed, by its whole path.
    fn lstat(&mut self, whole: &CStr, stamp_ctime_s: i64) {
        self.total += 1;
        match rustix::fs::lstat(whole) {
            Ok(st) => {
                let size = u64::try_from(st.st_size).unwrap_or(0);
                if stat_matches(size, st.st_ctime, stamp_ctime_s) {
                    self.found += 1;
                }
            }
            Err(_) => self.errors += 1,
        }
    }
}

/// What one directory entry asks of the walker.
enum Entry<'a> {
    /// A subdirectory to walk.
    Dir(PathBuf),
    /// A file whose name matches: its whole path (NUL-terminated), to be
    /// `lstat`ed ([`Counts::lstat`]) here or by another rank.
    Stat(&'a CStr),
    /// One entry was read (pfind's `max_entries_per_iter` counts these).
    Read,
}

/// Walk `root` with `workers` threads sharing a queue of directories;
/// `stamp_ctime_s` is the timestamp file's ctime in seconds.
pub fn find(root: &Path, stamp_ctime_s: i64, workers: u32, stop: &AtomicBool) -> FindCount {
    let queue = Mutex::new(vec![root.to_path_buf()]);
    let busy = AtomicU64::new(0);
    let (total, found, errors) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let next = queue.lock().ok().and_then(|mut q| {
                        let d = q.pop();
                        if d.is_some() {
                            busy.fetch_add(1, Ordering::SeqCst);
                        }
                        d
                    });
                    let Some(dir) = next else {
                        if busy.load(Ordering::SeqCst) == 0 {
                            return;
                        }
                        std::thread::yield_now();
                        continue;
                    };
                    let mut c = Counts::default();
                    let mut subdirs = Vec::new();
                    scan(&dir, stamp_ctime_s, &mut c, &mut |e, c| {
                        match e {
                            Entry::Dir(p) => subdirs.push(p),
                            Entry::Stat(whole) => c.lstat(whole, stamp_ctime_s),
                            Entry::Read => {}
                        }
                        true
                    });
                    total.fetch_add(c.total, Ordering::Relaxed);
                    found.fetch_add(c.found, Ordering::Relaxed);
                    errors.fetch_add(c.errors, Ordering::Relaxed);
                    if let Ok(mut q) = queue.lock() {
                        q.extend(subdirs);
                    }
                    busy.fetch_sub(1, Ordering::SeqCst);
                }
            });
        }
    });
    FindCount {
        total: total.into_inner(),
        found: found.into_inner(),
        errors: errors.into_inner(),
        elapsed_ns: u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX),
    }
}

/// Bytes of directory entries one `getdents64` may return: glibc's
/// `readdir` buffer, which pfind reads through (32 KiB).
const DIRENT_BUF: usize = 32 * 1024;

/// One directory, as pfind's `find_do_readdir` reads it: the entries are
/// read with `getdents64` into one buffer (no name is copied), a file's
/// name is tested in place and counted here when it does not match
/// (pfind counts those at the read); a matching name's whole path is
/// built (in one reused buffer) and handed to `on` as [`Entry::Stat`]; an
/// entry whose type the directory does not give is `fstatat`ed in the
/// directory, and that stat decides (counted here). `on` also gets every
/// subdirectory and one [`Entry::Read`] per entry; when it returns false
/// the directory is left at once.
fn scan(
    dir: &Path,
    stamp_ctime_s: i64,
    c: &mut Counts,
    on: &mut dyn FnMut(Entry<'_>, &mut Counts) -> bool,
) {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty()) else {
        c.errors += 1;
        return;
    };
    let mut path = dir.as_os_str().as_bytes().to_vec();
    path.push(b'/');
    let base = path.len();
    let mut buf = Vec::<u8>::with_capacity(DIRENT_BUF);
    let mut entries = rustix::fs::RawDir::new(&fd, buf.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let Ok(entry) = entry else {
            c.errors += 1;
            break;
        };
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let ty = entry.file_type();
        let go = if ty == FileType::Unknown {
            // pfind: `fstatat(dirfd, name)` decides, and a file's stat is
            // its test (no second stat).
            match rustix::fs::statat(&fd, name, AtFlags::empty()) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                    on(Entry::Dir(dir.join(OsStr::from_bytes(bytes))), c)
                }
                Ok(st) => {
                    c.total += 1;
                    let size = u64::try_from(st.st_size).unwrap_or(0);
                    if matches(OsStr::from_bytes(bytes), size, st.st_ctime, stamp_ctime_s) {
                        c.found += 1;
                    }
                    true
                }
                Err(_) => {
                    c.errors += 1;
                    true
                }
            }
        } else if ty == FileType::Directory {
            on(Entry::Dir(dir.join(OsStr::from_bytes(bytes))), c)
        } else if !name_matches(OsStr::from_bytes(bytes)) {
            c.total += 1;
            true
        } else {
            // pfind lstats the whole path (`start_dir/path/name`), not the
            // name in the open directory.
            path.truncate(base);
            path.extend_from_slice(name.to_bytes_with_nul());
            match CStr::from_bytes_with_nul(&path) {
                Ok(whole) => on(Entry::Stat(whole), c),
                Err(_) => {
                    c.errors += 1;
                    true
                }
            }
        };
        if !go || !on(Entry::Read, c) {
            return;
        }
    }
}

/// pfind's queue length as io500 runs it (`pfind-queue-length`, `-q
/// 10000`): a matching file read while a rank's queue is this full is
/// `lstat`ed at once by the rank reading its directory.
const QUEUE: usize = 10_000;

/// pfind's `max_entries_per_iter` (1,000): the work a rank does between
/// two looks at the other ranks (an entry read or a file `lstat`ed counts
/// one).
const SLICE: u64 = 1_000;

/// A piece of work one rank may hand another: a directory to read, or a
/// matching file to `lstat` (pfind's `work_t`, type `d` or not).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Work {
    Dir(PathBuf),
    Stat(std::ffi::CString),
}

impl Work {
    /// `d` or `s`, the path's bytes, a NUL.
    fn encode(items: &[Work], out: &mut Vec<u8>) {
        for w in items {
            let (tag, bytes) = match w {
                Work::Dir(p) => (b'd', p.as_os_str().as_bytes()),
                Work::Stat(s) => (b's', s.as_bytes()),
            };
            out.push(tag);
            out.extend_from_slice(bytes);
            out.push(0);
        }
    }

    fn decode(bytes: &[u8]) -> Vec<Work> {
        bytes
            .split(|&b| b == 0)
            .filter_map(|w| {
                let (&tag, path) = w.split_first()?;
                match tag {
                    b'd' => Some(Work::Dir(PathBuf::from(OsStr::from_bytes(path)))),
                    b's' => std::ffi::CString::new(path).ok().map(Work::Stat),
                    _ => None,
                }
            })
            .collect()
    }
}

/// Whether the walk goes on after a look at the other ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Go,
    /// Every rank is out of work (or a stop was asked for on one).
    Over,
}

/// One rank's walker of [`find_on_ranks`].
struct Walker<'a, C> {
    comm: &'a C,
    stamp_ctime_s: i64,
    stop: &'a AtomicBool,
    /// This rank's pending work, newest last (pfind's `work` stack).
    queue: Vec<Work>,
    /// Work done since the last look.
    used: u64,
}

impl<C: Comm> Walker<'_, C> {
    /// One look at every rank (collective): each rank's queue length,
    /// whether it is reading a directory (`busy`) and whether it was asked
    /// to stop. Over when no rank has work left; otherwise, when some rank
    /// is idle, every rank gives the newest half of its queue (pfind's
    /// answer to a steal: `pending_work / 2`, from the top) and the idle
    /// ranks deal the given items out in turn, in rank order.
    fn look(&mut self, busy: bool) -> Look {
        self.used = 0;
        let mine = [
            self.queue.len() as u64,
            u64::from(busy),
            u64::from(self.stop.load(Ordering::Relaxed)),
        ];
        let all = self.comm.all_gather_u64(&mine);
        let rows: Vec<&[u64]> = all.chunks_exact(3).collect();
        if rows.iter().any(|r| r[2] != 0) {
            self.queue.clear();
            return Look::Over;
        }
        if rows.iter().all(|r| r[0] == 0 && r[1] == 0) {
            return Look::Over;
        }
        let idle: Vec<u32> = (0u32..)
            .zip(&rows)
            .filter(|(_, r)| r[0] == 0 && r[1] == 0)
            .map(|(i, _)| i)
            .collect();
        let given: u64 = rows.iter().map(|r| r[0] / 2).sum();
        if idle.is_empty() || given == 0 {
            return Look::Go;
        }
        let keep = self.queue.len() - self.queue.len() / 2;
        let give = self.queue.split_off(keep);
        let mut bytes = Vec::new();
        Work::encode(&give, &mut bytes);
        let parts = self.comm.gather_bytes(&bytes);
        let dealt = self.comm.broadcast_bytes(&parts.concat());
        let me = self.comm.rank();
        let k = idle.len();
        self.queue.extend(
            Work::decode(&dealt)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| idle[i % k] == me)
                .map(|(_, w)| w),
        );
        Look::Go
    }

    /// Until every rank is out of work: the newest piece of work first
    /// (pfind's stack), a look at the others after every directory and
    /// after every [`SLICE`] of work.
    fn run(&mut self, c: &mut Counts) {
        loop {
            while let Some(w) = self.queue.pop() {
                match w {
                    Work::Dir(d) => {
                        if self.read_dir(&d, c) == Look::Over || self.look(false) == Look::Over {
                            return;
                        }
                    }
                    Work::Stat(whole) => {
                        c.lstat(&whole, self.stamp_ctime_s);
                        self.used += 1;
                        if self.used >= SLICE && self.look(false) == Look::Over {
                            return;
                        }
                    }
                }
            }
            if self.look(false) == Look::Over {
                return;
            }
        }
    }

    /// Read directory `dir`, queueing its subdirectories and its matching
    /// files (`lstat`ed at once when the queue is full, as pfind does),
    /// with a look at the others after every [`SLICE`] entries.
    fn read_dir(&mut self, dir: &Path, c: &mut Counts) -> Look {
        let mut over = false;
        let stamp = self.stamp_ctime_s;
        scan(dir, stamp, c, &mut |e, c| {
            match e {
                Entry::Dir(p) => self.queue.push(Work::Dir(p)),
                Entry::Stat(whole) if self.queue.len() < QUEUE => {
                    self.queue.push(Work::Stat(whole.to_owned()));
                }
                Entry::Stat(whole) => {
                    c.lstat(whole, stamp);
                    self.used += 1;
                }
                Entry::Read => {
                    self.used += 1;
                    if self.used >= SLICE && self.look(true) == Look::Over {
                        over = true;
                        return false;
                    }
                }
            }
            true
        });
        if over { Look::Over } else { Look::Go }
    }
}

/// pfind with one walker per rank of `comm` (collective; every rank calls
/// it after the same barrier): rank 0 starts with `root`, and a rank out
/// of work is given part of the others' (pfind's work stealing, done in
/// collective looks every `SLICE` items). Each rank counts what it looked at
/// (files not matching the name where their directory was read, matching
/// ones where they were `lstat`ed), over its own time from the call to the
/// end of the walk. Every rank's counts, in rank order, on every rank:
/// [`FindCount::sum`] is pfind's total.
pub fn find_on_ranks<C: Comm>(
    comm: &C,
    root: &Path,
    stamp_ctime_s: i64,
    stop: &AtomicBool,
) -> Vec<FindCount> {
    let t0 = Instant::now();
    let mut w = Walker {
        comm,
        stamp_ctime_s,
        stop,
        queue: Vec::new(),
        used: 0,
    };
    if comm.root() {
        w.queue.push(Work::Dir(root.to_path_buf()));
    }
    let mut c = Counts::default();
    w.run(&mut c);
    let elapsed = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    comm.all_gather_u64(&[c.total, c.found, c.errors, elapsed])
        .chunks_exact(4)
        .map(|v| FindCount {
            total: v[0],
            found: v[1],
            errors: v[2],
            elapsed_ns: v[3],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_s() -> i64 {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        i64::try_from(d.as_secs()).unwrap()
    }

    #[test]
    fn pfinds_three_tests_must_all_hold() {
        let t = 1000;
        let n = OsStr::new("file.mdtest.1.101");
        assert!(matches(n, 3901, t + 1, t));
        assert!(
            matches(n, 3901, t, t),
            "pfind: the timestamp's own second is newer"
        );
        assert!(!matches(n, 3900, t + 1, t), "size");
        assert!(!matches(n, 3901, t - 1, t), "older");
        assert!(
            !matches(OsStr::new("file.mdtest.1.10"), 3901, t + 1, t),
            "name"
        );
    }

    #[test]
    fn find_counts_every_file_looked_at_and_the_matches() {
        let d = tempfile::tempdir().expect("tempdir");
        let stamp = now_s() - 60;
        std::fs::create_dir(d.path().join("sub")).expect("mkdir");
        std::fs::write(d.path().join("a01"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/b01"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/c02"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/d01"), vec![0u8; 10]).expect("write");
        let c = find(d.path(), stamp, 2, &AtomicBool::new(false));
        assert_eq!((c.total, c.found, c.errors), (4, 2, 0));
    }

    /// More entries than one `getdents64` buffer holds (3,000 names of
    /// ~40 bytes: about 170 KiB of entries), a symbolic link (pfind counts
    /// it and `lstat`s it: the link, not its 3,901-byte target) and a
    /// nested directory: every file is looked at once.
    #[test]
    fn every_entry_of_a_directory_larger_than_one_read_is_looked_at() {
        let d = tempfile::tempdir().expect("tempdir");
        let stamp = now_s() - 60;
        let deep = d.path().join("a/b");
        std::fs::create_dir_all(&deep).expect("mkdir");
        for i in 0..3000 {
            let n = format!("file.mdtest.{i:06}.padding-to-forty-bytes");
            std::fs::write(deep.join(n), vec![0u8; 3901]).expect("write");
        }
        std::os::unix::fs::symlink(
            deep.join("file.mdtest.000001.padding-to-forty-bytes"),
            d.path().join("link01"),
        )
        .expect("symlink");
        let c = find(d.path(), stamp, 2, &AtomicBool::new(false));
        let matching = (0..3000)
            .filter(|i| format!("file.mdtest.{i:06}.padding-to-forty-bytes").contains("01"))
            .count() as u64;
        assert_eq!((c.total, c.found, c.errors), (3001, matching, 0), "{c:?}");
    }
}

#[cfg(test)]
mod ranks {
    use super::*;
    use storlab_cluster::LocalComm;

    /// A tree of the io500 data directory's shape: a few small
    /// directories, one per rank, and one large shared one whose names
    /// match `*01*` now and then; `files` is how many files it holds.
    fn tree(root: &Path) -> u64 {
        let mut files = 0;
        for (dir, n) in [
            ("ior-easy", 3),
            ("ior-hard", 1),
            ("md-easy/r0", 40),
            ("md-easy/r1", 40),
            ("md-easy/r2", 40),
            ("md-hard", 3000),
        ] {
            let d = root.join(dir);
            std::fs::create_dir_all(&d).expect("mkdir");
            for i in 0..n {
                std::fs::write(
                    d.join(format!("file.mdtest.{}.{i}", i % 3)),
                    vec![0u8; 3901],
                )
                .expect("write");
                files += 1;
            }
        }
        files
    }

    /// pfind's shape over three ranks: rank 0 starts alone at the root,
    /// the others are given work, every rank looks at some files, and the
    /// files looked at summed over the ranks are every file, the matches
    /// those of one walker.
    #[test]
    fn every_rank_walks_a_part_and_the_parts_are_every_file() {
        let d = tempfile::tempdir().expect("tempdir");
        let files = tree(d.path());
        let one = find(d.path(), 0, 1, &AtomicBool::new(false));
        assert_eq!(one.total, files);
        let stop = AtomicBool::new(false);
        let all = LocalComm::run(3, |c| find_on_ranks(&c, d.path(), 0, &stop));
        for v in &all {
            assert_eq!(v.len(), 3);
            assert_eq!(
                v.iter().map(|p| (p.total, p.found)).collect::<Vec<_>>(),
                all[0]
                    .iter()
                    .map(|p| (p.total, p.found))
                    .collect::<Vec<_>>(),
                "every rank holds every rank's counts"
            );
        }
        let parts = &all[0];
        assert!(
            parts.iter().all(|p| p.total > 0),
            "every rank walks a part: {parts:?}"
        );
        let sum = FindCount::sum(parts);
        assert_eq!(
            (sum.total, sum.found, sum.errors),
            (files, one.found, 0),
            "{parts:?}"
        );
        assert!(one.found > 0);
    }

    /// A work list crosses between ranks as bytes and comes back the same.
    #[test]
    fn work_round_trips_through_bytes() {
        let items = vec![
            Work::Dir(PathBuf::from("/a/b c")),
            Work::Stat(std::ffi::CString::new("/a/b c/file.mdtest.0.101").expect("cstring")),
            Work::Dir(PathBuf::from("/x")),
        ];
        let mut b = Vec::new();
        Work::encode(&items, &mut b);
        assert_eq!(Work::decode(&b), items);
        assert!(Work::decode(&[]).is_empty());
    }
}

#[cfg(test)]
mod newer {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// A file made in the same second as the timestamp file, with a
    /// modification time set back before it: pfind's `-newer` looks at
    /// the ctime in whole seconds, so it matches (the old test, mtime
    /// strictly after the timestamp's, missed it).
    #[test]
    fn newer_is_pfinds_ctime_seconds_not_the_mtime() {
        let d = tempfile::tempdir().expect("tempdir");
        let stamp = d.path().join("timestampfile");
        std::fs::write(&stamp, b"").expect("stamp");
        let f = d.path().join("file.mdtest.0.01");
        std::fs::write(&f, vec![0u8; 3901]).expect("write");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(&f)
            .and_then(|h| h.set_modified(old))
            .expect("set mtime");
        let ctime = std::fs::metadata(&stamp).expect("stat").ctime();
        let c = find(d.path(), ctime, 1, &AtomicBool::new(false));
        assert_eq!((c.total, c.found), (2, 1), "{c:?}");
        let c = find(d.path(), ctime + 1, 1, &AtomicBool::new(false));
        assert_eq!(c.found, 0, "a later timestamp: older files do not match");
    }
}
