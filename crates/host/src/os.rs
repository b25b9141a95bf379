//! The system calls for host facts and process control that the rest of
//! storlab needs, behind safe functions: file-system space and type
//! (`statvfs`, `statfs`), page size and clock ticks (`sysconf`), whether we
//! are root (`geteuid`), device numbers (major/minor), CPU time
//! (`getrusage`), signals (`kill`), advisory locks (`flock`), `access`,
//! an exclusive rename (`renameat2(RENAME_NOREPLACE)`) and a child that
//! dies with its parent (`PR_SET_PDEATHSIG`).
//!
//! Every other crate but bench's I/O engine is `#![forbid(unsafe_code)]`;
//! each `unsafe` block here carries its SAFETY argument.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path contains a NUL byte: {}", path.display()),
        )
    })
}

/// Space on the file system holding a path (`statvfs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSpace {
    /// The file system's preferred I/O block size (`f_bsize`).
    pub block_size: u64,
    /// Size of the file system in bytes (`f_blocks × f_frsize`).
    pub total_bytes: u64,
    /// Bytes an unprivileged user may still write (`f_bavail × f_frsize`).
    pub avail_bytes: u64,
}

/// [`FsSpace`] of the file system holding `path`.
pub fn fs_space(path: &Path) -> io::Result<FsSpace> {
    let c = cpath(path)?;
    // SAFETY: a zeroed statvfs is a valid out-parameter (plain integers).
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated string that outlives the call and
    // `st` a writable statvfs; statvfs writes only into `st`.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let frsize = st.f_frsize as u64;
    Ok(FsSpace {
        block_size: st.f_bsize as u64,
        total_bytes: (st.f_blocks as u64).saturating_mul(frsize),
        avail_bytes: (st.f_bavail as u64).saturating_mul(frsize),
    })
}

/// The file system type magic (`statfs`'s `f_type`, e.g. `0x6969` for NFS)
/// of the file system holding `path`.
pub fn fs_type(path: &Path) -> io::Result<i64> {
    let c = cpath(path)?;
    // SAFETY: a zeroed statfs is a valid out-parameter (plain integers).
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated string that outlives the call and
    // `st` a writable statfs; statfs writes only into `st`.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // c_long on some targets, i64 on others
    Ok(st.f_type as i64)
}

/// The memory page size in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// Kernel clock ticks per second (`USER_HZ`, the unit of `/proc/stat` and
/// `/proc/PID/stat` times): 100 on every Linux architecture storlab runs
/// on, asked of the system all the same.
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let n = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(n).ok().filter(|&n| n > 0).unwrap_or(100)
}

/// Whether the process runs as root (effective user id 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A device number split into (major, minor).
pub fn dev_split(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// A device number from its (major, minor).
pub fn makedev(major: u32, minor: u32) -> u64 {
    libc::makedev(major, minor)
}

/// CPU time so far (user, system), of the calling thread (`thread`, from
/// `getrusage(RUSAGE_THREAD)`: a worker's own CPU) or of the whole process.
pub fn cpu_time(thread: bool) -> (Duration, Duration) {
    let who = if thread {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: a zeroed rusage is a valid out-parameter (plain integers).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a writable rusage; getrusage writes only into it.
    // With a valid `who` it cannot fail (a failure leaves zeros).
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::new(
            u64::try_from(t.tv_sec).unwrap_or(0),
            u32::try_from(t.tv_usec).unwrap_or(0).saturating_mul(1000),
        )
    };
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), in
/// nanoseconds: a cost measure other programs' load does not inflate.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a writable timespec; the clock id is a constant the
    // kernel always provides (a failure leaves `ts` zero).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// Run the calling thread at real-time priority (`SCHED_FIFO`, priority 1,
/// the lowest real-time one): it runs as soon as it wakes, ahead of every
/// ordinary thread, so a busy machine does not delay it (a timed replay's
/// issuing threads). Needs root or `CAP_SYS_NICE`; the kernel's real-time
/// throttling (`sched_rt_runtime_us`) still leaves ordinary threads their
/// share of every second.
pub fn realtime_thread() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pthread_self() names this thread; `param` is a valid
    // sched_param, only read during the call.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// Put the calling thread back at ordinary priority (`SCHED_OTHER`), from
/// [`realtime_thread`].
pub fn ordinary_thread() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in realtime_thread.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// Send signal `sig` to process `pid` (a negative `pid` names a process
/// group). The caller makes sure the id is its own (an unreaped child or
/// its group), so it cannot have been reused.
pub fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Take an exclusive `flock` on `file` without waiting: `Ok(true)` when
/// taken, `Ok(false)` when another process holds it. It is released when
/// the file is closed.
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    // SAFETY: flock(2) on a descriptor `file` keeps open for the call; no
    // memory is passed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Whether this process may write `path` (`access(W_OK)`, which honours
/// read-only mounts and the real user's permissions).
pub fn access_writable(path: &Path) -> io::Result<()> {
    let c = cpath(path)?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call;
    // access(2) only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Rename `from` to `to` only if `to` does not exist
/// (`renameat2(RENAME_NOREPLACE)`); an existing `to` fails with
/// `AlreadyExists`, and a file system without the flag with `EINVAL`.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (f, t) = (cpath(from)?, cpath(to)?);
    // SAFETY: both are NUL-terminated strings that outlive the call;
    // renameat2 only reads them.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Make the child `c` will start receive SIGTERM when this process dies
/// (`PR_SET_PDEATHSIG`), and not start at all when this process died
/// before the child could ask for that.
pub fn die_with_parent(c: &mut Command) -> &mut Command {
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only async-signal-safe functions (prctl, getppid); it allocates
    // nothing (the error is built from a raw errno).
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then no signal
            // comes, so do not start at all.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_match_their_outside_definitions() {
        // getconf is the system's own answer to the same sysconf questions.
        let getconf = |k: &str| {
            std::process::Command::new("getconf")
                .arg(k)
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        if let Some(p) = getconf("PAGESIZE") {
            assert_eq!(page_size(), p);
        }
        if let Some(t) = getconf("CLK_TCK") {
            assert_eq!(clock_ticks(), t);
        }
        let uid = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            .unwrap();
        assert_eq!(is_root(), uid == "0");
        assert_eq!(dev_split(makedev(259, 7)), (259, 7));
        assert_eq!(dev_split(makedev(8, 300)), (8, 300));
    }

    #[test]
    fn space_lock_rename_and_access_on_a_temp_dir() {
        let d = tempfile::tempdir().unwrap();
        let s = fs_space(d.path()).unwrap();
        assert!(s.total_bytes > 0 && s.avail_bytes <= s.total_bytes && s.block_size > 0);
        assert!(fs_type(d.path()).unwrap() != 0);
        assert!(fs_space(&d.path().join("missing")).is_err());
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b");
        rename_noreplace(&a, &d.path().join("c")).unwrap();
        access_writable(&b).unwrap();
        let f1 = File::open(&b).unwrap();
        let f2 = File::open(&b).unwrap();
        assert!(try_lock_exclusive(&f1).unwrap());
        assert!(
            !try_lock_exclusive(&f2).unwrap(),
            "a second open file description waits"
        );
        drop(f1);
        assert!(try_lock_exclusive(&f2).unwrap());
    }

    #[test]
    fn cpu_time_and_kill_of_our_own_child() {
        let t0 = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(thread_cpu_ns() > t0);
        let (u, s) = cpu_time(false);
        assert!(u + s > Duration::ZERO);
        let mut c = Command::new("sleep");
        c.arg("30");
        die_with_parent(&mut c);
        let mut child = c.spawn().unwrap();
        kill(i32::try_from(child.id()).unwrap(), libc::SIGKILL).unwrap();
        let st = child.wait().unwrap();
        assert!(!st.success());
    }
}
