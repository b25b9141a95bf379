//! io500's `find` as its parallel find (pfind) does it: walk the data
//! directory with every rank, test each file against `-newer TIMESTAMP
//! -size 3901c -name *01*`, and score the files looked at per second
//! (`total_files / runtime / 1000` in io500's `phase_find.c`), not the
//! files found; finding none makes the run INVALID.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

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

/// Whether a file of `size` bytes modified at `mtime` matches, given the
/// timestamp file's modification time.
pub fn matches(name: &OsStr, size: u64, mtime: SystemTime, newer_than: SystemTime) -> bool {
    name_matches(name) && size == crate::phases::fixed::MDTEST_HARD_FILE_SIZE && mtime > newer_than
}

/// Walk `root` with `workers` threads sharing a queue of directories.
pub fn find(root: &Path, newer_than: SystemTime, workers: u32, stop: &AtomicBool) -> FindCount {
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
                    let (t, f, e, subdirs) = scan(&dir, newer_than);
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
fn scan(dir: &Path, newer_than: SystemTime) -> (u64, u64, u64, Vec<PathBuf>) {
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
        match entry.metadata() {
            Ok(m) => {
                let mtime = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if matches(&name, m.size(), mtime, newer_than) {
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
    use std::time::Duration;

    #[test]
    fn pfinds_three_tests_must_all_hold() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let later = t + Duration::from_secs(1);
        let n = OsStr::new("file.mdtest.1.101");
        assert!(matches(n, 3901, later, t));
        assert!(!matches(n, 3900, later, t), "size");
        assert!(!matches(n, 3901, t, t), "not newer");
        assert!(
            !matches(OsStr::new("file.mdtest.1.10"), 3901, later, t),
            "name"
        );
    }

    #[test]
    fn find_counts_every_file_looked_at_and_the_matches() {
        let d = tempfile::tempdir().expect("tempdir");
        let stamp = SystemTime::now() - Duration::from_secs(60);
        std::fs::create_dir(d.path().join("sub")).expect("mkdir");
        std::fs::write(d.path().join("a01"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/b01"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/c02"), vec![0u8; 3901]).expect("write");
        std::fs::write(d.path().join("sub/d01"), vec![0u8; 10]).expect("write");
        let c = find(d.path(), stamp, 2, &AtomicBool::new(false));
        assert_eq!((c.total, c.found, c.errors), (4, 2, 0));
    }
}
