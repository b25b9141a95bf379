//! Fault injection (issue 9): storlab never destroys what is not its own,
//! never loses a measured result silently, and stops cleanly whatever
//! happens. Root-only tests (loop devices, mounts) probe and skip with a
//! reason; CI runs as root. docs/SAFETY.md maps each promise to its test.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn import_one(dir: &Path) {
    let out = in_dir(dir)
        .args(["import"])
        .arg(store_fixture("fio-3.33-randread.json"))
        .output()
        .unwrap();
    ok(&out);
}

fn run_count(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

fn send(child: &std::process::Child, sig: i32) {
    // SAFETY: kill with the pid of our own child and a valid signal number.
    unsafe { libc::kill(child.id() as i32, sig) };
}

// ---------------------------------------------------------------- devices

#[test]
fn a_mounted_btrfs_is_refused_even_with_allow_destroy() {
    let test = "a_mounted_btrfs_is_refused_even_with_allow_destroy";
    if !have("mkfs.btrfs") {
        skip(test, "mkfs.btrfs not installed (btrfs-progs)");
        return;
    }
    let mnt = tempfile::tempdir().unwrap();
    let Some(mut lo) = LoopDev::new(128 << 20) else {
        return;
    };
    let dev = lo.path();
    if let Err(e) = lo.stack().mkfs("btrfs", &["-q", "-f"], &dev) {
        skip(test, &e);
        return;
    }
    if let Err(e) = lo.stack().mount(&dev, mnt.path(), &[]) {
        skip(test, &format!("cannot mount btrfs: {e}"));
        return;
    }
    std::fs::write(mnt.path().join("precious.txt"), b"user data").unwrap();
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=write",
        "--size=1M",
        "--engine=psync",
        "--allow-destroy",
        "-q",
    ]);
    let still_there = std::fs::read(mnt.path().join("precious.txt"));
    lo.stack().umount(mnt.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mounted") || err.contains("in use"),
        "names the reason: {err}"
    );
    assert_eq!(still_there.unwrap(), b"user data");
    // And the file system is still a btrfs.
    let probe = run_tool(
        "blkid",
        &["-o", "value", "-s", "TYPE", lo.dev.to_str().unwrap()],
    );
    match probe {
        Ok(t) => assert_eq!(t, "btrfs"),
        Err(e) => panic!("blkid could not probe {}: {e}", lo.dev.display()),
    }
}

#[test]
fn a_device_held_exclusively_by_another_program_is_refused() {
    let Some(lo) = LoopDev::new(16 << 20) else {
        return;
    };
    // Hold the device the way mount, md or a VM does: O_EXCL.
    use std::os::unix::fs::OpenOptionsExt;
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .unwrap();
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=write",
        "--size=1M",
        "--engine=psync",
        "--allow-destroy",
        "-q",
    ]);
    drop(held);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("in use"), "{}", stderr(&out));
    // Released, the same command runs.
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=write",
        "--size=1M",
        "--engine=psync",
        "--allow-destroy",
        "--no-save",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_fifo_target_is_refused_at_once_and_dev_typos_create_nothing() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    run_tool("mkfifo", &[fifo.to_str().unwrap()]).unwrap();
    let child = in_dir(d.path())
        .args([
            "bench",
            fifo.to_str().unwrap(),
            "--rw=read",
            "--size=1M",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("FIFO"), "{}", stderr(&out));

    let typo = "/dev/storlab-test-no-such-disk";
    let out = in_dir(d.path())
        .args(["bench", typo, "--rw=write", "--size=1M", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev"), "{}", stderr(&out));
    assert!(!Path::new(typo).exists(), "no file created on /dev");
}

#[test]
fn size_times_numjobs_overflow_is_refused_and_creates_nothing() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    for layout in ["--shared-file=0", "--shared-file=1"] {
        let out = in_dir(d.path())
            .args([
                "bench",
                target.to_str().unwrap(),
                "--rw=write",
                "--size=6148914691236519936",
                "--numjobs=3",
                layout,
                "-q",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{layout}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("64 bits") || stderr(&out).contains("16 EiB"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn plan_capacity_overflow_is_an_error_not_150_percent() {
    let out = storlab(&["plan", "layout", "R6/12", "--capacity", "15E"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("16 EiB"), "{}", stderr(&out));
}

// ---------------------------------------------------------------- outputs

#[test]
fn outputs_that_are_the_database_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_one(dir);
    import_one(dir);
    let db = dir.join("results.db");
    let before = std::fs::read(&db).unwrap();
    let db_s = db.to_str().unwrap().to_string();
    let wal = format!("{db_s}-wal");
    let link = dir.join("link.db");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["report".into(), "--all".into(), "-o".into(), db_s.clone()],
        vec![
            "report".into(),
            "--all".into(),
            "-o".into(),
            db_s.clone(),
            "--force".into(),
        ],
        vec!["export".into(), "--all".into(), "-o".into(), db_s.clone()],
        vec!["export".into(), "--all".into(), "-o".into(), wal.clone()],
        vec![
            "export".into(),
            "--all".into(),
            "-o".into(),
            link.to_str().unwrap().into(),
        ],
        vec![
            "bench".into(),
            dir.join("t.dat").to_str().unwrap().into(),
            "--rw=write".into(),
            "--size=1M".into(),
            "--engine=null".into(),
            "--json-out".into(),
            db_s.clone(),
        ],
        vec![
            "sweep".into(),
            dir.join("s.dat").to_str().unwrap().into(),
            "--rw=randread".into(),
            "--size=1M".into(),
            "--engine=null".into(),
            "--vary".into(),
            "bs=4k,8k".into(),
            "--json-out".into(),
            db_s.clone(),
        ],
        vec![
            "bench".into(),
            db_s.clone(),
            "--rw=read".into(),
            "--size=4k".into(),
            "--engine=null".into(),
        ],
        vec![
            "bench".into(),
            db_s.clone(),
            "--rw=write".into(),
            "--size=4k".into(),
            "--allow-destroy".into(),
        ],
    ];
    for args in &cases {
        let out = in_dir(dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("database"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "database untouched");
    assert_eq!(run_count(&db), 2);
    assert!(
        !dir.join("t.dat").exists(),
        "nothing created before refusing"
    );
}

#[test]
fn outputs_never_overwrite_devices_or_files_storlab_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    import_one(dir);
    // A file of the user's: refused without --force, kept intact.
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    for args in [
        vec!["export", "--all", "-o", "notes.txt"],
        vec!["report", "--all", "-o", "notes.txt"],
        vec![
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "--json-out",
            "notes.txt",
        ],
    ] {
        let out = in_dir(dir).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    }
    assert!(!dir.join("t.dat").exists());
    // With --force it is the user's call.
    ok(&in_dir(dir)
        .args(["export", "--all", "-o", "notes.txt", "--force"])
        .output()
        .unwrap());
    assert!(
        std::fs::read_to_string(&notes)
            .unwrap()
            .contains("schema_version")
    );
    // storlab's own output is rewritten without --force.
    for fmt in ["json", "csv", "md"] {
        let name = format!("out.{fmt}");
        for _ in 0..2 {
            ok(&in_dir(dir)
                .args(["export", "--all", "--format", fmt, "-o", &name])
                .output()
                .unwrap());
        }
    }
    ok(&in_dir(dir)
        .args([
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "--json-out",
            "r.json",
            "-q",
        ])
        .output()
        .unwrap());
    ok(&in_dir(dir)
        .args([
            "bench",
            "t2.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "--json-out",
            "r.json",
            "-q",
        ])
        .output()
        .unwrap());
    // Nor a new file on /dev (a mistyped device name).
    let out = in_dir(dir)
        .args(["export", "--all", "-o", "/dev/storlab-test-typo.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!Path::new("/dev/storlab-test-typo.json").exists());
    // A character device is never an output.
    let out = in_dir(dir)
        .args(["export", "--all", "-o", "/dev/full", "--force"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("device"), "{}", stderr(&out));
    // Nor a block device, whatever the flags (root: a loop device).
    if let Some(lo) = LoopDev::new(4 << 20) {
        let before = std::fs::read(&lo.dev).unwrap();
        let out = in_dir(dir)
            .args([
                "bench",
                "t3.dat",
                "--rw=write",
                "--size=1M",
                "--engine=null",
                "--allow-destroy",
                "--force",
                "--json-out",
            ])
            .arg(&lo.dev)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("block device"), "{}", stderr(&out));
        assert_eq!(std::fs::read(&lo.dev).unwrap(), before, "device untouched");
    }
}

// ---------------------------------------------------------------- the results history

#[test]
fn sixteen_processes_create_and_fill_a_new_database_at_once() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("fresh.db");
    let fixture = store_fixture("fio-3.33-randread.json");
    let children: Vec<_> = (0..16)
        .map(|_| {
            cmd()
                .arg("import")
                .arg(&fixture)
                .arg(&fixture)
                .env("STORLAB_DB", &db)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut failures = Vec::new();
    for c in children {
        let out = wait_at_most(c, Duration::from_secs(60));
        if !out.status.success() {
            failures.push(stderr(&out));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(run_count(&db), 32, "every import saved");
    assert_eq!(integrity(&db), "ok");
}

#[test]
fn reading_commands_do_not_create_or_change_anything() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(dir.join("results.db"), b"").unwrap();
    for args in [
        vec!["runs"],
        vec!["show", "latest"],
        vec!["export", "--all"],
    ] {
        let out = in_dir(dir).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::metadata(dir.join("results.db")).unwrap().len(), 0);
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "no side files: {names:?}");
}

#[test]
fn a_corrupt_database_names_sqlite3_recover() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    for _ in 0..30 {
        import_one(dir);
    }
    let db = dir.join("results.db");
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 3 * 4096);
    for (i, b) in bytes.iter_mut().enumerate().skip(2 * 4096) {
        *b = (i as u8).wrapping_mul(13) ^ 0xc3;
    }
    std::fs::write(&db, &bytes).unwrap();
    let out = in_dir(dir).args(["export", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(".recover"), "{}", stderr(&out));
}

#[test]
fn a_database_on_a_read_only_mount_can_be_listed() {
    let Some(fs) = Tmpfs::new("a_database_on_a_read_only_mount_can_be_listed", "16m") else {
        return;
    };
    import_one(fs.path());
    assert!(fs.remount_read_only(), "remount read-only");
    let out = in_dir(fs.path()).args(["runs"]).output().unwrap();
    let out2 = in_dir(fs.path())
        .args(["show", "latest", "--json"])
        .output()
        .unwrap();
    let _ = Command::new("mount")
        .args(["-o", "remount,rw"])
        .arg(fs.path())
        .status();
    ok(&out);
    let v: Value = serde_json::from_str(&ok(&out2)).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
}

#[test]
fn a_database_file_system_filling_mid_run_keeps_every_phase_in_a_fallback_file() {
    let test = "a_database_file_system_filling_mid_run_keeps_every_phase_in_a_fallback_file";
    let Some(fs) = Tmpfs::new(test, "2m") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let db = fs.path().join("results.db");
    let job = work.path().join("job.toml");
    let mut text = String::from(
        "[global]\nsize = \"1M\"\nbs = \"4k\"\nengine = \"null\"\nruntime = \"400ms\"\ntime_based = true\n",
    );
    for i in 0..5 {
        text += &format!("[[phase]]\nname = \"p{i}\"\nrw = \"randread\"\n");
    }
    std::fs::write(&job, text).unwrap();
    let child = cmd()
        .current_dir(work.path())
        .env("STORLAB_DB", &db)
        .args([
            "bench",
            "t.dat",
            "--job",
            job.to_str().unwrap(),
            "-q",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run is in the database, fill its file system.
    let t = Instant::now();
    while !(db.exists() && run_count(&db) > 0) && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    {
        use std::io::Write;
        let mut hog = std::fs::File::create(fs.path().join("hog")).unwrap();
        let block = vec![0x5au8; 4096];
        while hog.write_all(&block).is_ok() {}
        let _ = hog.sync_all();
    }
    let out = wait_at_most(child, Duration::from_secs(60));
    let _ = std::fs::remove_file(fs.path().join("hog"));
    assert_eq!(
        out.status.code(),
        Some(2),
        "lost phases are an error: {}",
        stderr(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("storlab-unsaved-"), "{err}");
    let fallback: Vec<PathBuf> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("storlab-unsaved-"))
        .collect();
    assert_eq!(fallback.len(), 1, "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&fallback[0]).unwrap()).unwrap();
    assert_eq!(v["phases"].as_array().unwrap().len(), 5, "every phase kept");
    assert_eq!(integrity(&db), "ok");
    assert!(!work.path().join("t.dat").exists(), "scratch file removed");
}

#[test]
fn json_out_failing_under_no_save_keeps_the_run_in_a_fallback_file() {
    let test = "json_out_failing_under_no_save_keeps_the_run_in_a_fallback_file";
    let Some(fs) = Tmpfs::new(test, "1m") else {
        return;
    };
    {
        use std::io::Write;
        let mut hog = std::fs::File::create(fs.path().join("hog")).unwrap();
        let block = vec![0x5au8; 4096];
        while hog.write_all(&block).is_ok() {}
    }
    let work = tempfile::tempdir().unwrap();
    let out = in_dir(work.path())
        .args([
            "bench",
            "t.dat",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "--no-save",
            "-q",
            "--json-out",
        ])
        .arg(fs.path().join("r.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let n = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("storlab-unsaved-")
        })
        .count();
    assert_eq!(n, 1, "{}", stderr(&out));
}

// ---------------------------------------------------------------- faults

#[test]
fn truncating_the_file_under_a_running_read_is_a_short_read_error() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("data.bin");
    std::fs::write(&file, vec![0x77u8; 32 << 20]).unwrap();
    let child = in_dir(d.path())
        .args([
            "bench",
            file.to_str().unwrap(),
            "--rw=randread",
            "--bs=4k",
            "--size=32M",
            "--engine=psync",
            "--cache=warm",
            "--runtime=20s",
            "--time-based",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("short read"), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(
        v["phases"][0]["errors"]["short_read"].as_u64().unwrap_or(0) >= 1,
        "{v}"
    );
}

#[test]
fn thousands_of_jobs_under_a_memory_limit_exit_2_without_deadlock() {
    let d = tempfile::tempdir().unwrap();
    let bin = storlab_bin();
    // 1.5 GB of address space: storlab starts, but not 4096 thread stacks.
    let script = format!(
        "ulimit -v 1500000 && exec {} bench t --rw=randread --size=4k --bs=4k --engine=null --numjobs=4096 --runtime=2s --time-based -q --no-save",
        bin.display()
    );
    std::fs::create_dir(d.path().join("t")).unwrap();
    let child = Command::new("sh")
        .args(["-c", &script])
        .current_dir(d.path())
        .env("STORLAB_DB", d.path().join("results.db"))
        .env("XDG_CONFIG_HOME", d.path().join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("spawn") || err.contains("memory") || err.contains("limit"),
        "names the resource: {err}"
    );
    assert_eq!(
        std::fs::read_dir(d.path().join("t")).unwrap().count(),
        0,
        "scratch files removed"
    );
}

/// Jobs whose buffers cannot fit in this machine's memory (here 512 jobs ×
/// 64 × 64 MiB = 2 TiB) are refused before anything is created, naming
/// the memory and the fix, instead of being OOM-killed with their scratch
/// files left behind.
#[test]
fn jobs_whose_buffers_exceed_the_memory_are_refused_before_any_file() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let out = crate::util::storlab(&[
        "bench",
        t.to_str().unwrap(),
        "--rw=write",
        "--bs=64m",
        "--iodepth=64",
        "--size=64m",
        "--numjobs=512",
        "--no-save",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("of memory") && err.contains("is available"),
        "{err}"
    );
    assert!(err.contains("--numjobs"), "{err}");
    assert_eq!(std::fs::read_dir(&t).unwrap().count(), 0, "files created");
}

/// SIGHUP, SIGTERM, SIGINT and SIGKILL at random points of a multi-phase
/// run: the database passes `PRAGMA integrity_check`, every run in it is
/// readable, and (except after SIGKILL, which cannot be caught) no scratch
/// file is left.
#[test]
fn signals_at_random_points_leave_an_intact_database_and_no_scratch_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let job = dir.join("job.toml");
    std::fs::write(
        &job,
        "[global]\nsize = \"2M\"\nbs = \"64k\"\nengine = \"psync\"\ncache = \"cold\"\nruntime = \"300ms\"\n\
         [[phase]]\nname = \"w\"\nrw = \"write\"\n\
         [[phase]]\nname = \"r\"\nrw = \"read\"\ntime_based = true\n\
         [[phase]]\nname = \"rr\"\nrw = \"randread\"\ntime_based = true\n\
         [[phase]]\nname = \"rw\"\nrw = \"randwrite\"\ntime_based = true\n",
    )
    .unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let mut rng = seed;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        rng
    };
    println!("signal delays seeded with {seed}");
    let signals = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGKILL, "SIGKILL"),
    ];
    for round in 0..2 {
        for (sig, name) in signals {
            let target = dir.join(format!("t-{name}-{round}"));
            std::fs::create_dir(&target).unwrap();
            let child = in_dir(dir)
                .args([
                    "bench",
                    target.to_str().unwrap(),
                    "--job",
                    job.to_str().unwrap(),
                    "-q",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let delay = Duration::from_millis(50 + u64::from(next() % 1200));
            std::thread::sleep(delay);
            send(&child, sig);
            let out = wait_at_most(child, Duration::from_secs(15));
            let db = dir.join("results.db");
            if db.exists() {
                assert_eq!(integrity(&db), "ok", "{name} after {delay:?}");
            }
            if sig == libc::SIGKILL {
                let _ = std::fs::remove_dir_all(&target);
                continue;
            }
            // Stopped by the signal (130) or finished before it (0); or,
            // when the signal came before storlab watched for it (process
            // start-up), killed by it: then nothing may exist yet, which
            // the scratch check below holds.
            use std::os::unix::process::ExitStatusExt;
            assert!(
                matches!(out.status.code(), Some(0 | 130)) || out.status.signal() == Some(sig),
                "{name} after {delay:?}: {:?} {}",
                out.status,
                stderr(&out)
            );
            assert_eq!(
                std::fs::read_dir(&target).unwrap().count(),
                0,
                "{name} after {delay:?}: scratch files left"
            );
        }
    }
    // Every run saved loads (interrupted ones with what they measured).
    let out = in_dir(dir)
        .args(["show", "--all", "--json"])
        .output()
        .unwrap();
    ok(&out);
    let listed = in_dir(dir).args(["runs"]).output().unwrap();
    assert!(!stdout(&listed).contains("running"), "{}", stdout(&listed));
}

#[test]
fn monitor_record_keeps_its_samples_on_sighup_and_sigterm() {
    for sig in [libc::SIGHUP, libc::SIGTERM] {
        let d = tempfile::tempdir().unwrap();
        let child = in_dir(d.path())
            .args([
                "monitor",
                "--interval",
                "100ms",
                "--record",
                "--output-format",
                "csv",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        send(&child, sig);
        let out = wait_at_most(child, Duration::from_secs(10));
        assert!(out.status.success(), "signal {sig}: {}", stderr(&out));
        assert!(stderr(&out).contains("saved as run"), "{}", stderr(&out));
        assert_eq!(run_count(&d.path().join("results.db")), 1);
    }
}

#[test]
fn monitor_replay_refuses_dev_zero_and_listen_stops_at_count() {
    let out = storlab(&["monitor", "--replay", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a replay file"),
        "{}",
        stderr(&out)
    );
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/monitor/loopstack/replay.txt");
    let child = cmd()
        .args(["monitor", "--replay"])
        .arg(&file)
        .args(["--count", "1", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn monitor_listen_on_all_interfaces_warns() {
    let child = cmd()
        .args([
            "monitor",
            "--interval",
            "100ms",
            "--count",
            "2",
            "--listen",
            "0.0.0.0:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("unauthenticated"), "{}", stderr(&out));
}

// ---------------------------------------------------------------- the code itself

/// No `.unwrap()` or `.expect(` on a fallible operation outside tests: an
/// `expect` is allowed only where a `// cannot fail:` comment on the line
/// before says why it cannot.
#[test]
fn no_unwrap_or_expect_outside_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        // crates/testkit is test code (a dev-dependency only).
        if e.file_name() != "testkit" {
            dirs.push(e.path().join("src"));
        }
    }
    let mut files = Vec::new();
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "tests") {
                    dirs.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 20, "found the sources");
    let mut offenders = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("test") {
            continue; // tests.rs, testdata.rs, safety_tests.rs
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Line of the last `// cannot fail:` justification.
        let mut justified_at = None;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break; // the test module is at the end of each file
            }
            if line.contains("cannot fail:") {
                justified_at = Some(i);
            }
            let code = line.split("//").next().unwrap_or("");
            if (code.contains(".unwrap()") || code.contains(".expect("))
                && justified_at.is_none_or(|j| i - j > 3)
            {
                offenders.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "unwrap/expect outside tests:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn failures_found_before_the_run_leave_no_scratch_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let target = dir.join("t");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(dir.join("corrupt.db"), vec![0x42u8; 8192]).unwrap();
    let cases: [(&[&str], Option<&str>); 3] = [
        (&["--tag", "a=1", "--tag", "a=2"], None),
        (&[], Some("no/such/dir/results.db")),
        (&[], Some("corrupt.db")),
    ];
    for (extra, db) in cases {
        let mut c = in_dir(dir);
        c.args([
            "bench",
            "t",
            "--rw=write",
            "--size=1M",
            "--engine=null",
            "-q",
        ])
        .args(extra);
        if let Some(db) = db {
            c.env("STORLAB_DB", dir.join(db));
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{extra:?} {db:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            0,
            "{extra:?} {db:?}: scratch files left"
        );
    }
}
