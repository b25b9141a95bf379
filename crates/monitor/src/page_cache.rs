//! Where O_DIRECT stops: a bench whose target sits on memory (tmpfs,
//! ramfs) or on a buffered loop device (its backing file in the page
//! cache) measures the page cache, not a device, whatever `--direct`
//! says. What [`crate::inspect`] knows about the stack under the target
//! becomes one typed finding ([`PageCacheOnly`]), which bench saves in
//! the record as a warning. (The bench crate does not depend on this
//! crate: the CLI joins them.)

use crate::SysPaths;
use crate::inspect::{InspectReport, inspect};
use std::path::{Path, PathBuf};
use storlab_types::CacheMode;

/// Why a target's figures are the page cache's, not a device's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageCacheOnly {
    /// The file system is memory (`tmpfs`, `ramfs`).
    Memory {
        mount_point: PathBuf,
        fs_type: String,
    },
    /// A loop device without direct I/O is in the stack.
    BufferedLoop {
        device: String,
        backing: Option<PathBuf>,
    },
}

const SUFFIX: &str = "the figures are the page cache's, not the device's";

impl std::fmt::Display for PageCacheOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageCacheOnly::Memory {
                mount_point,
                fs_type,
            } => write!(
                f,
                "{} is {fs_type} (memory, no device under it): O_DIRECT stops at the page cache; {SUFFIX}",
                mount_point.display()
            ),
            PageCacheOnly::BufferedLoop { device, backing } => write!(
                f,
                "/dev/{device} is a buffered loop device{}: O_DIRECT stops at the page cache of its backing file; \
                 {SUFFIX} (losetup --direct-io=on /dev/{device} reaches the disk)",
                backing
                    .as_ref()
                    .map(|b| format!(" over {}", b.display()))
                    .unwrap_or_default()
            ),
        }
    }
}

/// The finding for a target at `at` (a file, directory or block device),
/// when any of `modes` is meant to reach the device (`direct`, `cold`);
/// none when the stack cannot be read or nothing caches above the disk.
pub fn page_cache_only(at: &Path, modes: &[CacheMode]) -> Option<PageCacheOnly> {
    if modes.iter().all(|m| *m == CacheMode::Warm) {
        return None;
    }
    // A file not laid out yet: its directory says where it will be.
    let probe = if at.exists() { at } else { at.parent()? };
    let report = inspect(&SysPaths::live(), probe.to_str()?).ok()?;
    of_report(&report)
}

/// The finding an inspection calls for (see [`page_cache_only`]).
pub fn of_report(report: &InspectReport) -> Option<PageCacheOnly> {
    if let Some(fs) = &report.filesystem
        && matches!(fs.fs_type.as_str(), "tmpfs" | "ramfs")
    {
        return Some(PageCacheOnly::Memory {
            mount_point: fs.mount_point.clone(),
            fs_type: fs.fs_type.clone(),
        });
    }
    report.stack.iter().find_map(|l| {
        let lp = l.loop_dev.as_ref()?;
        (lp.direct_io == Some(false)).then(|| PageCacheOnly::BufferedLoop {
            device: l.device.clone(),
            backing: lp.backing_file.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wording bench saves in the record (unchanged from the CLI's).
    #[test]
    fn each_finding_names_where_o_direct_stops() {
        let m = PageCacheOnly::Memory {
            mount_point: "/mnt/t".into(),
            fs_type: "tmpfs".into(),
        };
        assert_eq!(
            m.to_string(),
            "/mnt/t is tmpfs (memory, no device under it): O_DIRECT stops at the page cache; \
             the figures are the page cache's, not the device's"
        );
        let l = PageCacheOnly::BufferedLoop {
            device: "loop3".into(),
            backing: Some("/img/a".into()),
        };
        assert_eq!(
            l.to_string(),
            "/dev/loop3 is a buffered loop device over /img/a: O_DIRECT stops at the page cache of \
             its backing file; the figures are the page cache's, not the device's \
             (losetup --direct-io=on /dev/loop3 reaches the disk)"
        );
        let none = InspectReport {
            target: "/x".into(),
            filesystem: None,
            device: None,
            stack: Vec::new(),
            recommendations: Vec::new(),
            notes: Vec::new(),
        };
        assert_eq!(of_report(&none), None);
        assert_eq!(page_cache_only(Path::new("/x"), &[CacheMode::Warm]), None);
    }
}
