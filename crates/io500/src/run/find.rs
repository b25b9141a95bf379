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
use std::os::unix::fs::MetadataExt;
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

/// One directory: (files looked at, found, errors, subdirectories).
fn scan(dir: &Path, stamp_ctime_s: i64) -> (u64, u64, u64, Vec<PathBuf>) {
    let (mut total, mut found, mut errors) = (0, 0, 0);
    let mut subdirs = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (0, 0, 1, subdirs);
    };
    for entry in rd {
        let Ok(entry) = entry else {
            errors += 1;
            continue;
        };
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                subdirs.push(entry.path());
                continue;
            }
            Ok(_) => {}
            Err(_) => {
                errors += 1;
                continue;
            }
        }
        total += 1;
        let name = entry.file_name();
        if !name_matches(&name) {
            continue;
        }
        // pfind lstats the whole path (`start_dir/path/name`), not the
        // name in the open directory.
        match std::fs::symlink_metadata(entry.path()) {
            Ok(m) => {
                if matches(&name, m.size(), m.ctime(), stamp_ctime_s) {
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
}

#[cfg(test)]
mod newer {
    use super::*;

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
