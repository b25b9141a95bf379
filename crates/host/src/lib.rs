//! `storlab-host`: the one place that knows the machine storlab runs on.
//!
//! * [`mountinfo`]: the mount table (`/proc/self/mountinfo`), parsed once,
//!   for bench's device and mount checks, the store's read-only test and
//!   the monitor's device tree.
//! * [`host_info`]: the host facts every record echoes (hostname, OS,
//!   kernel, CPU, memory, page size), and [`meminfo`] for one field of
//!   `/proc/meminfo` (RAM-relative sizes, cache warnings).
//! * [`cgroup`]: the memory this process may still use under its cgroup
//!   v1 or v2 limits (bench's memory check).
//! * [`blockstack`]: who uses a block device or a file (mounts, swap,
//!   holders, loop devices over it), walked up the stack, for bench's
//!   refusal to write anything under a mounted file system.
//!
//! * [`os`]: the system calls the other crates need for host facts and
//!   process control (statvfs, statfs, page size, clock ticks, root,
//!   device numbers, CPU time, kill, flock, access, an exclusive rename,
//!   a child that dies with its parent), as safe functions: every other
//!   crate except bench's I/O engine forbids `unsafe`.
//!
//! Everything here reads `/proc`, `/sys` and `/etc`; nothing writes, except
//! what [`os`]'s callers ask of it (a rename, a lock, a signal).
#![deny(unsafe_code)]

pub mod blockstack;
pub mod cgroup;
pub mod mountinfo;
pub mod os;

use std::fs;
use storlab_types::HostInfo;

fn read_trim(p: &str) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// One field of `/proc/meminfo` (`MemTotal`, `MemAvailable`, `Cached`) in
/// bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    meminfo_in(&fs::read_to_string("/proc/meminfo").ok()?, key)
}

/// [`meminfo`] over a given text.
pub fn meminfo_in(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let v = v.trim();
        let (n, kb) = match v.strip_suffix("kB") {
            Some(n) => (n.trim(), true),
            None => (v, false),
        };
        let n: u64 = n.parse().ok()?;
        if kb { n.checked_mul(1024) } else { Some(n) }
    })
}

/// The CPU model named in a `/proc/cpuinfo` text (x86 `model name`, Arm
/// `Model`, others `cpu model`).
pub fn cpu_model_in(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
    })
}

/// Host facts for the record.
pub fn host_info() -> HostInfo {
    let os = read_trim("/etc/os-release")
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .or_else(|| read_trim("/proc/sys/kernel/ostype"))
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    HostInfo {
        hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_default(),
        os,
        kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_default(),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model_in(&t))
            .unwrap_or_default(),
        cpu_count: std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1),
        mem_total_bytes: meminfo("MemTotal").unwrap_or(0),
        page_size_bytes: os::page_size(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields() {
        let t = "MemTotal:       24576000 kB\nMemAvailable:   1000 kB\nHugePages_Total:       0\n";
        assert_eq!(meminfo_in(t, "MemTotal"), Some(24_576_000 * 1024));
        assert_eq!(meminfo_in(t, "MemAvailable"), Some(1_024_000));
        assert_eq!(meminfo_in(t, "HugePages_Total"), Some(0));
        assert_eq!(meminfo_in(t, "Mem"), None);
        assert_eq!(
            meminfo_in("MemTotal: 99999999999999999999 kB", "MemTotal"),
            None
        );
    }

    #[test]
    fn cpu_models() {
        assert_eq!(
            cpu_model_in("processor\t: 0\nmodel name\t: AMD EPYC\n").as_deref(),
            Some("AMD EPYC")
        );
        assert_eq!(
            cpu_model_in("Model\t\t: Raspberry Pi 4\n").as_deref(),
            Some("Raspberry Pi 4")
        );
        assert_eq!(cpu_model_in("flags: x\n"), None);
    }

    #[test]
    fn this_host_is_described() {
        let h = host_info();
        assert!(!h.kernel.is_empty() && !h.hostname.is_empty());
        assert!(h.mem_total_bytes > 0 && h.cpu_count >= 1);
        assert!(h.page_size_bytes >= 4096);
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,200}") {
            let _ = meminfo_in(&s, "MemTotal");
            let _ = cpu_model_in(&s);
        }
    }
}
