//! Memory limits of this process's control groups, v1 and v2.
//!
//! A job whose buffers exceed the cgroup's limit is killed by the OOM
//! killer part-way (with its scratch files left), however much memory the
//! machine has free, so the memory check needs the tightest of:
//!
//! * cgroup v2: `memory.max` − `memory.current` of the process's cgroup
//!   (the `0::` line of `/proc/self/cgroup`) and of every ancestor up to
//!   the mount (`max` = no limit);
//! * cgroup v1: `memory.limit_in_bytes` − `memory.usage_in_bytes` of the
//!   cgroup named on the `memory` controller's line, and its ancestors. An
//!   unlimited v1 group shows a huge number (`PAGE_COUNTER_MAX` pages,
//!   9223372036854771712 on x86-64): anything from 2^62 bytes up means no
//!   limit.
//!
//! The cgroup path is relative to the hierarchy's root, which is mounted
//! at the mount point of the `cgroup`/`cgroup2` entry of
//! `/proc/self/mountinfo` (its `root` field is stripped first, for a
//! container that sees only part of the hierarchy). Every file is read
//! under a root directory given by the caller, so tests use fixture trees.

use std::fs;
use std::path::{Path, PathBuf};

/// Limits at or above this many bytes mean "no limit" (v1 shows
/// `PAGE_COUNTER_MAX` pages when unlimited).
const NO_LIMIT: u64 = 1 << 62;

/// Bytes this process can still allocate before a cgroup limit (v1 or
/// v2) is reached: the tightest over its groups and their ancestors. None
/// when no limit applies or none can be read.
pub fn memory_headroom() -> Option<u64> {
    memory_headroom_in(Path::new("/"))
}

/// [`memory_headroom`] with `/proc` and `/sys` read under `root`.
pub fn memory_headroom_in(root: &Path) -> Option<u64> {
    let under = |p: &str| root.join(p.trim_start_matches('/'));
    let groups = fs::read_to_string(under("/proc/self/cgroup")).ok()?;
    let mounts = fs::read_to_string(under("/proc/self/mountinfo"))
        .ok()
        .and_then(|t| crate::mountinfo::parse(&t).ok())
        .unwrap_or_default();
    let mut best: Option<u64> = None;
    let mut take = |h: Option<u64>| {
        if let Some(h) = h {
            best = Some(best.map_or(h, |b| b.min(h)));
        }
    };
    for line in groups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if controllers.is_empty() {
            // cgroup v2 (the unified hierarchy).
            let mount = mounts
                .iter()
                .filter(|m| m.fs_type == "cgroup2")
                .map(|m| (m.root.clone(), m.mount_point.clone()))
                .next_back()
                .unwrap_or_else(|| ("/".into(), "/sys/fs/cgroup".into()));
            take(walk(root, &mount, path, "memory.max", "memory.current"));
        } else if controllers.split(',').any(|c| c == "memory") {
            let mount = mounts
                .iter()
                .filter(|m| m.fs_type == "cgroup" && m.options().any(|o| o == "memory"))
                .map(|m| (m.root.clone(), m.mount_point.clone()))
                .next_back()
                .unwrap_or_else(|| ("/".into(), "/sys/fs/cgroup/memory".into()));
            take(walk(
                root,
                &mount,
                path,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ));
        }
    }
    best
}

/// A limit file's value: None for `max` or a number meaning no limit.
fn limit_value(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < NO_LIMIT).then_some(v)
}

/// The tightest `limit − usage` from the group at `path` up to the root
/// of the hierarchy mounted at `mount` = (root in the hierarchy, mount
/// point).
fn walk(
    root: &Path,
    mount: &(PathBuf, PathBuf),
    path: &str,
    limit_file: &str,
    usage_file: &str,
) -> Option<u64> {
    let (hier_root, mount_point) = mount;
    let top = root.join(mount_point.strip_prefix("/").unwrap_or(mount_point));
    let rel = Path::new(path)
        .strip_prefix(hier_root)
        .unwrap_or(Path::new(path));
    let rel = rel.strip_prefix("/").unwrap_or(rel);
    let mut dir = top.join(rel);
    if !dir.is_dir() {
        // A namespaced view: the mount is the process's own group.
        dir = top.clone();
    }
    let mut best: Option<u64> = None;
    loop {
        let limit = fs::read_to_string(dir.join(limit_file))
            .ok()
            .and_then(|t| limit_value(&t));
        if let Some(limit) = limit {
            let used = fs::read_to_string(dir.join(usage_file))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .unwrap_or(0);
            let h = limit.saturating_sub(used);
            best = Some(best.map_or(h, |b| b.min(h)));
        }
        if dir == top || !dir.starts_with(&top) {
            break;
        }
        match dir.parent() {
            Some(p) => dir = p.to_path_buf(),
            None => break,
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture tree: files (path relative to the root, content).
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let p = d.path().join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        d
    }

    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    /// The layout of this machine's container: v1 with the memory
    /// controller, the process in `/process_api/abc`.
    #[test]
    fn cgroup_v1_limit_minus_usage_is_read() {
        let d = tree(&[
            ("proc/self/mountinfo", V1_MOUNTS),
            (
                "proc/self/cgroup",
                "5:devices:/\n4:memory:/process_api/abc\n0::/\n",
            ),
            (
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            ("sys/fs/cgroup/memory/memory.usage_in_bytes", "5000000000\n"),
            (
                "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
                "1073741824\n",
            ),
            (
                "sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes",
                "268435456\n",
            ),
            (
                "sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
        ]);
        assert_eq!(memory_headroom_in(d.path()), Some(768 << 20));
    }

    #[test]
    fn cgroup_v1_a_tighter_parent_wins_and_huge_means_unlimited() {
        let d = tree(&[
            ("proc/self/mountinfo", V1_MOUNTS),
            ("proc/self/cgroup", "4:memory:/a/b\n"),
            ("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "536870912"),
            ("sys/fs/cgroup/memory/a/memory.usage_in_bytes", "436870912"),
            (
                "sys/fs/cgroup/memory/a/b/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            ("sys/fs/cgroup/memory/a/b/memory.usage_in_bytes", "1000"),
        ]);
        assert_eq!(memory_headroom_in(d.path()), Some(100_000_000));
        let d = tree(&[
            ("proc/self/mountinfo", V1_MOUNTS),
            ("proc/self/cgroup", "4:memory:/a\n"),
            (
                "sys/fs/cgroup/memory/a/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            ("sys/fs/cgroup/memory/a/memory.usage_in_bytes", "1000"),
            (
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "18446744073709551615",
            ),
        ]);
        assert_eq!(memory_headroom_in(d.path()), None, "no limit anywhere");
    }

    #[test]
    fn cgroup_v2_walks_up_to_the_tightest_and_max_means_unlimited() {
        let mounts = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let d = tree(&[
            ("proc/self/mountinfo", mounts),
            ("proc/self/cgroup", "0::/user.slice/job.scope\n"),
            ("sys/fs/cgroup/user.slice/memory.max", "2147483648\n"),
            ("sys/fs/cgroup/user.slice/memory.current", "2000000000\n"),
            ("sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n"),
            (
                "sys/fs/cgroup/user.slice/job.scope/memory.current",
                "1000\n",
            ),
        ]);
        assert_eq!(memory_headroom_in(d.path()), Some(147_483_648));
        let d = tree(&[
            ("proc/self/mountinfo", mounts),
            ("proc/self/cgroup", "0::/user.slice/job.scope\n"),
            ("sys/fs/cgroup/user.slice/memory.max", "max\n"),
            ("sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n"),
            (
                "sys/fs/cgroup/user.slice/job.scope/memory.current",
                "1000\n",
            ),
        ]);
        assert_eq!(memory_headroom_in(d.path()), None);
        // Usage above the limit (reclaim pending): no headroom, not a wrap.
        let d = tree(&[
            ("proc/self/mountinfo", mounts),
            ("proc/self/cgroup", "0::/j\n"),
            ("sys/fs/cgroup/j/memory.max", "1000\n"),
            ("sys/fs/cgroup/j/memory.current", "2000\n"),
        ]);
        assert_eq!(memory_headroom_in(d.path()), Some(0));
    }

    #[test]
    fn a_namespaced_view_and_a_hybrid_layout_take_the_tightest() {
        // A container sees its own group as the mount (root field /ns):
        // /proc/self/cgroup names /ns/job, found at the mount point.
        let d = tree(&[
            (
                "proc/self/mountinfo",
                "30 23 0:26 /ns /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n\
                 35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            ),
            ("proc/self/cgroup", "4:memory:/v1grp\n0::/ns/job\n"),
            ("sys/fs/cgroup/job/memory.max", "1000000\n"),
            ("sys/fs/cgroup/job/memory.current", "1\n"),
            ("sys/fs/cgroup/memory/v1grp/memory.limit_in_bytes", "500000"),
            ("sys/fs/cgroup/memory/v1grp/memory.usage_in_bytes", "0"),
        ]);
        assert_eq!(memory_headroom_in(d.path()), Some(500_000));
    }

    #[test]
    fn missing_files_mean_no_limit_known() {
        let d = tree(&[]);
        assert_eq!(memory_headroom_in(d.path()), None);
        let d = tree(&[("proc/self/cgroup", "0::/\n")]);
        assert_eq!(memory_headroom_in(d.path()), None);
        assert_eq!(limit_value("max"), None);
        assert_eq!(limit_value("garbage"), None);
        assert_eq!(limit_value(" 4096\n"), Some(4096));
    }

    #[test]
    fn this_process_is_read_without_panic() {
        let _ = memory_headroom();
    }
}
