//! io500's `find` as its parallel find (pfind) does it: walk the data
//! directory with every rank, test each file against `-newer TIMESTAMP
//! -size 3901c -name *01*` with pfind's rules (the name first, on the
//! directory entry; `lstat` only for a name that matches; `-newer` is
//! pfind's: the file's ctime, in whole seconds, not before the timestamp
//! file's ctime), and score the files looked at per second
//! (`total_files / runtime / 1000` in io500's `phase_find.c`), not the
//! files found; finding none makes the run INVALID.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

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

/// pfind's `-name` pattern `*01*`: the name holds `01`.
pub fn name_matches(name: &OsStr) -> bool {
    name.as_bytes().windows(2).any(|w| w == b"01")
}

/// Whether a file of `size` bytes whose inode changed at `ctime_s`
/// (seconds) matches, given the timestamp file's ctime `stamp_ctime_s`:
/// pfind's `check_buf` drops a file whose `st_ctime` is *below* the
/// timestamp's, so a file of the timestamp's own second matches.
pub fn matches(name: &OsStr, size: u64, ctime_s: i64, stamp_ctime_s: i64) -> bool {
    name_matches(name)
        && size == crate::phases::fixed::MDTEST_HARD_FILE_SIZE
        && ctime_s >= stamp_ctime_s
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
                    let (t, f, e, subdirs) = scan(&dir, stamp_ctime_s);
                    total.fetch_add(t, Ordering::Relaxed);
                    found.fetch_add(f, Ordering::Relaxed);
                    errors.fetch_add(e, Ordering::Relaxed);
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

/// One directory: (files looked at, found, errors, subdirectories), as
/// pfind's `find_do_readdir` and `find_do_lstat` do it: the entries are
/// read with `getdents64` into one buffer (no name is copied), a file's
/// name is tested in place, and only a matching name's whole path is built
/// (in one reused buffer) and `lstat`ed; an entry whose type the directory
/// does not give is `fstatat`ed in the directory, and that stat decides.
fn scan(dir: &Path, stamp_ctime_s: i64) -> (u64, u64, u64, Vec<PathBuf>) {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let (mut total, mut found, mut errors) = (0, 0, 0);
    let mut subdirs = Vec::new();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty()) else {
        return (0, 0, 1, subdirs);
    };
    let mut path = dir.as_os_str().as_bytes().to_vec();
    path.push(b'/');
    let base = path.len();
    let mut buf = Vec::<u8>::with_capacity(DIRENT_BUF);
    let mut entries = rustix::fs::RawDir::new(&fd, buf.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let Ok(entry) = entry else {
            errors += 1;
            break;
        };
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let ty = entry.file_type();
        if ty == FileType::Unknown {
            // pfind: `fstatat(dirfd, name)` decides, and a file's stat is
            // its test (no second stat).
            match rustix::fs::statat(&fd, name, AtFlags::empty()) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                    subdirs.push(dir.join(OsStr::from_bytes(bytes)));
                }
                Ok(st) => {
                    total += 1;
                    let size = u64::try_from(st.st_size).unwrap_or(0);
                    if matches(OsStr::from_bytes(bytes), size, st.st_ctime, stamp_ctime_s) {
                        found += 1;
                    }
                }
                Err(_) => errors += 1,
            }
            continue;
        }
        if ty == FileType::Directory {
            subdirs.push(dir.join(OsStr::from_bytes(bytes)));
            continue;
        }
        total += 1;
        if !name_matches(OsStr::from_bytes(bytes)) {
            continue;
        }
        // pfind lstats the whole path (`start_dir/path/name`), not the
        // name in the open directory.
        path.truncate(base);
        path.extend_from_slice(name.to_bytes_with_nul());
        let Ok(whole) = std::ffi::CStr::from_bytes_with_nul(&path) else {
            errors += 1;
            continue;
        };
        match rustix::fs::lstat(whole) {
            Ok(st) => {
                let size = u64::try_from(st.st_size).unwrap_or(0);
                if matches(OsStr::from_bytes(bytes), size, st.st_ctime, stamp_ctime_s) {
                    found += 1;
                }
            }
            Err(_) => errors += 1,
        }
    }
    (total, found, errors, subdirs)
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
