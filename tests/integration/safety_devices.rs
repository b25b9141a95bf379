//! Never write under a mounted file system, however the device or file is
//! reached (a loop device's backing file, a loop device under another, a
//! symbolic link); the null engine's service time never outlasts the
//! runtime or a signal; a cgroup memory limit is a limit (root tests make
//! their own loop devices, mounts and cgroups, and undo them on drop).

use crate::util::loopdev::Stack;
use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// `storlab bench TARGET --rw=write` with `--allow-destroy`.
fn write_with_allow_destroy(target: &Path) -> Output {
    storlab(&[
        "bench",
        &s(target),
        "--rw=write",
        "--size=1M",
        "--engine=psync",
        "--allow-destroy",
        "--no-save",
        "-q",
    ])
}

/// A 64-bit FNV-1a checksum of a file's bytes.
fn checksum(p: &Path) -> u64 {
    let bytes = std::fs::read(p).unwrap();
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn refused(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_image_behind_a_mounted_loop_is_never_written_even_with_allow_destroy() {
    const T: &str = "the_image_behind_a_mounted_loop_is_never_written_even_with_allow_destroy";
    if !needs_root_and(T, &["losetup", "mkfs.ext4", "mount", "umount", "e2fsck"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("img.a");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let mut undo = Stack::new();
    let lo = undo.attach(&img, &[]).unwrap();
    let mnt = d.path().join("mnt");
    undo.ext4_mounted(&lo, &mnt).unwrap();
    std::fs::write(mnt.join("precious.txt"), b"user data").unwrap();
    run_tool("sync", &[]).unwrap();
    let before = checksum(&img);

    let out = write_with_allow_destroy(&img);
    refused(
        &out,
        &[
            &format!(
                "{} backs {lo}, which is mounted on {}",
                img.display(),
                mnt.display()
            ),
            "--allow-destroy",
        ],
    );
    // Renamed, the image is still recognised (the loop device's own
    // device and inode, not the path it was attached by).
    let renamed = d.path().join("renamed.img");
    std::fs::rename(&img, &renamed).unwrap();
    let out = write_with_allow_destroy(&renamed);
    refused(&out, &[&format!("{} backs {lo}", renamed.display())]);
    // Through a symbolic link too, naming the link and the file.
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&renamed, &link).unwrap();
    let out = write_with_allow_destroy(&link);
    refused(&out, &[&format!("{} -> ", link.display()), "backs"]);

    run_tool("sync", &[]).unwrap();
    assert_eq!(
        checksum(&renamed),
        before,
        "the image's bytes are unchanged"
    );
    assert_eq!(
        std::fs::read(mnt.join("precious.txt")).unwrap(),
        b"user data"
    );
    undo.umount(&mnt);
    run_tool("e2fsck", &["-fn", &lo]).expect("the file system checks clean");
    undo.mount(&lo, &mnt, &[]).expect("and mounts again");
    assert_eq!(
        std::fs::read(mnt.join("precious.txt")).unwrap(),
        b"user data"
    );
}

#[test]
fn a_loop_device_under_another_is_refused_mounted_or_not_and_free_once_detached() {
    const T: &str = "a_loop_device_under_another_is_refused_mounted_or_not_and_free_once_detached";
    if !needs_root_and(T, &["losetup", "mkfs.ext4", "mount", "umount"]) {
        return;
    }
    let Some(a) = LoopDev::new(32 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let mut undo = Stack::new();
    let b = undo.attach(&a.dev, &[]).unwrap();
    let mnt = d.path().join("mnt");
    undo.ext4_mounted(&b, &mnt).unwrap();
    let out = write_with_allow_destroy(&a.dev);
    refused(
        &out,
        &[&format!(
            "{} backs {b}, which is mounted on {}",
            a.dev.display(),
            mnt.display()
        )],
    );
    // Not mounted, B still presents A's blocks: A is claimed by the stack.
    undo.umount(&mnt);
    let out = write_with_allow_destroy(&a.dev);
    refused(
        &out,
        &[&format!("{} backs {b}", a.dev.display()), "losetup -d"],
    );
    assert!(!stderr(&out).contains("mounted on"), "{}", stderr(&out));
    // Detached, A is an unused device again and may be destroyed.
    undo.detach(&b);
    let out = write_with_allow_destroy(&a.dev);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_file_two_loop_devices_below_a_mount_is_refused_naming_the_whole_chain() {
    const T: &str = "a_file_two_loop_devices_below_a_mount_is_refused_naming_the_whole_chain";
    if !needs_root_and(T, &["losetup", "mkfs.ext4", "mount", "umount"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let mut undo = Stack::new();
    let a = undo.attach(&img, &[]).unwrap();
    let b = undo.attach(Path::new(&a), &[]).unwrap();
    let mnt = d.path().join("mnt");
    undo.ext4_mounted(&b, &mnt).unwrap();
    run_tool("sync", &[]).unwrap();
    let before = checksum(&img);
    let out = write_with_allow_destroy(&img);
    refused(
        &out,
        &[&format!(
            "{} backs {a}, which backs {b}, which is mounted on {}",
            img.display(),
            mnt.display()
        )],
    );
    run_tool("sync", &[]).unwrap();
    assert_eq!(checksum(&img), before, "the image's bytes are unchanged");
}

#[test]
fn a_file_backing_an_unmounted_loop_device_is_refused_a_plain_file_is_not() {
    const T: &str = "a_file_backing_an_unmounted_loop_device_is_refused_a_plain_file_is_not";
    if !needs_root_and(T, &["losetup"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("img");
    std::fs::write(&img, vec![0x5au8; 4 << 20]).unwrap();
    let mut undo = Stack::new();
    let lo = undo.attach(&img, &[]).unwrap();
    let out = write_with_allow_destroy(&img);
    refused(&out, &[&format!("{} backs {lo}", img.display())]);
    assert!(
        std::fs::read(&img).unwrap().iter().all(|&b| b == 0x5a),
        "unchanged"
    );
    // Reading it is harmless and allowed.
    let out = storlab(&[
        "bench",
        &s(&img),
        "--rw=read",
        "--size=1M",
        "--engine=psync",
        "--no-save",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    undo.detach(&lo);
    let out = write_with_allow_destroy(&img);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_plain_unused_loop_device_is_still_writable_with_allow_destroy() {
    let Some(lo) = LoopDev::new(8 << 20) else {
        return;
    };
    let out = write_with_allow_destroy(&lo.dev);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_symlink_to_a_mounted_device_names_the_link_and_the_device() {
    const T: &str = "a_symlink_to_a_mounted_device_names_the_link_and_the_device";
    if !needs_root_and(T, &["mkfs.ext4", "mount", "umount"]) {
        return;
    }
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let mut undo = Stack::new();
    let mnt = d.path().join("mnt");
    undo.ext4_mounted(&s(&lo.dev), &mnt).unwrap();
    let link = d.path().join("x");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    let out = write_with_allow_destroy(&link);
    refused(
        &out,
        &[&format!(
            "{} -> {}, which is mounted on {}",
            link.display(),
            lo.dev.display(),
            mnt.display()
        )],
    );
}

/// `bench` on the null engine with a 30 s service time and `--runtime`.
fn null_30s(dir: &Path, runtime: &str) -> std::process::Child {
    cmd()
        .args([
            "bench",
            &s(dir),
            "--engine=null",
            "--null-latency=30s",
            "--runtime",
            runtime,
            "--rw=randread",
            "--size=1M",
            "--iodepth=4",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_null_latency_longer_than_the_runtime_ends_with_the_runtime() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = null_30s(d.path(), "1s").wait_with_output().unwrap();
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "took {took:?} for --runtime 1s"
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ph = &v["phases"][0];
    assert_eq!(
        ph["read"]["ops"], 0,
        "an I/O that would end after the deadline is not counted: {ph}"
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "scratch removed"
    );
}

#[test]
fn sigterm_stops_a_null_latency_longer_than_the_runtime_promptly() {
    let d = tempfile::tempdir().unwrap();
    let child = null_30s(d.path(), "60s");
    // The scratch directory exists once the signal handlers are installed
    // (they come first); then the I/O is 0.5 s into its 30 s.
    let up = Instant::now();
    while std::fs::read_dir(d.path()).unwrap().count() == 0 {
        assert!(
            up.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    // SAFETY: kill with the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "took {took:?} to stop after SIGTERM"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "scratch removed"
    );
}

/// A memory cgroup of our own under this process's (v1, or v2 where the
/// memory controller can be enabled for it) with a limit; removed on drop.
struct MemCgroup {
    dir: PathBuf,
    procs: std::ffi::CString,
}

impl MemCgroup {
    fn new(limit: u64) -> Result<MemCgroup, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let name = format!("storlab-test-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v1_path = own.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, c, p) = (f.next()?, f.next()?, f.next()?);
            c.split(',').any(|c| c == "memory").then(|| p.to_string())
        });
        let (dir, limit_file) = match v1_path {
            Some(p) if v1.join("memory.limit_in_bytes").exists() => (
                v1.join(p.trim_start_matches('/')).join(&name),
                "memory.limit_in_bytes",
            ),
            _ => {
                let p = own
                    .lines()
                    .find_map(|l| l.strip_prefix("0::"))
                    .ok_or("no cgroup v1 memory controller and no cgroup v2 line")?;
                let parent = Path::new("/sys/fs/cgroup").join(p.trim_start_matches('/'));
                let ctl = parent.join("cgroup.subtree_control");
                if !std::fs::read_to_string(&ctl).is_ok_and(|t| t.contains("memory")) {
                    std::fs::write(&ctl, "+memory").map_err(|e| {
                        format!(
                            "cannot enable the v2 memory controller in {}: {e}",
                            ctl.display()
                        )
                    })?;
                }
                (parent.join(&name), "memory.max")
            }
        };
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cg = MemCgroup {
            procs: std::ffi::CString::new(s(&dir.join("cgroup.procs")))
                .map_err(|e| e.to_string())?,
            dir,
        };
        std::fs::write(cg.dir.join(limit_file), limit.to_string())
            .map_err(|e| format!("{limit_file}: {e}"))?;
        Ok(cg)
    }

    /// Run storlab inside the group.
    fn storlab(&self, args: &[&str]) -> Output {
        use std::os::unix::process::CommandExt;
        let procs = self.procs.clone();
        let mut c = cmd();
        c.args(args);
        // SAFETY: between fork and exec only async-signal-safe calls
        // (open, write, close) on a string prepared before the fork.
        unsafe {
            c.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let ok = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                libc::close(fd);
                if ok {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        c.output().expect("run storlab in the cgroup")
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        for _ in 0..20 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn a_cgroup_memory_limit_refuses_jobs_whose_buffers_do_not_fit() {
    const T: &str = "a_cgroup_memory_limit_refuses_jobs_whose_buffers_do_not_fit";
    if !is_root() {
        return skip(T, "needs root to make a memory cgroup");
    }
    // 16 jobs × (16 × 1 MiB of buffers + 1 MiB) ≈ 272 MiB under a 128 MiB
    // limit: killed by the OOM killer part-way unless refused up front.
    let cg = match MemCgroup::new(128 << 20) {
        Ok(c) => c,
        Err(e) => return skip(T, &format!("cannot make a memory cgroup: {e}")),
    };
    let d = tempfile::tempdir().unwrap();
    let out = cg.storlab(&[
        "bench",
        &s(d.path()),
        "--engine=null",
        "--rw=write",
        "--bs=1m",
        "--iodepth=16",
        "--numjobs=16",
        "--size=1m",
        "--no-save",
        "-q",
    ]);
    refused(&out, &["16 jobs need about", "--numjobs"]);
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing created"
    );
    // A job that fits runs in the same group.
    let out = cg.storlab(&[
        "bench",
        &s(d.path()),
        "--engine=null",
        "--rw=write",
        "--bs=1m",
        "--iodepth=2",
        "--numjobs=2",
        "--size=4m",
        "--no-save",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}
