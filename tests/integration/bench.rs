//! `storlab bench` end to end: engines, byte accounting, JSON schema,
//! verification, and the data-safety rules.

use crate::util::{LoopDev, Tmpfs, cmd, have, is_root, skip, stderr, stdout, storlab};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// Whether this kernel lets us create an io_uring, asked of the kernel
/// directly (not through storlab, so a storlab bug fails the test instead of
/// turning it into a skip).
fn uring_ok() -> bool {
    // struct io_uring_params is 120 bytes; zeroed means "no options".
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup(2) with a valid, writable params buffer of the
    // size the kernel expects; the returned descriptor is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 2u32, params.as_mut_ptr()) };
    if fd >= 0 {
        // SAFETY: closing the descriptor we were just given.
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}

fn dir_is_empty(p: &Path) -> bool {
    std::fs::read_dir(p).unwrap().next().is_none()
}

/// Every field the schema promises, with the right types.
fn check_schema(v: &Value) {
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["tool"]["name"], "storlab");
    assert!(v["tool"]["version"].is_string());
    for k in ["kernel", "cpu_model", "hostname", "os", "arch"] {
        assert!(v["host"][k].is_string(), "host.{k}");
    }
    assert!(v["host"]["cpu_count"].as_u64().unwrap() >= 1);
    assert!(v["host"]["mem_total_bytes"].as_u64().unwrap() > 0);
    assert!(v["target"]["path"].is_string());
    assert!(v["target"]["kind"].is_string());
    assert!(v["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(v["interrupted"].is_boolean());
    let phases = v["phases"].as_array().unwrap();
    assert!(!phases.is_empty());
    for ph in phases {
        let p = &ph["params"];
        for k in [
            "name",
            "rw",
            "rwmixread",
            "bs",
            "size_bytes",
            "numjobs",
            "iodepth",
            "engine",
            "cache",
            "time_based",
            "ramp_ns",
            "end_fsync",
            "layout",
            "buffer_pattern",
            "verify",
            "seed",
        ] {
            assert!(!p[k].is_null(), "params.{k} missing in {p}");
        }
        for d in ["read", "write", "total"] {
            for k in ["bytes", "ops", "bw_bytes_per_s", "iops"] {
                assert!(ph[d][k].is_number(), "{d}.{k}");
            }
        }
        assert!(ph["elapsed_ns"].as_u64().is_some());
        assert!(ph["latency_span"].as_str().unwrap().contains("completion"));
        assert!(ph["cpu"]["cpu_ns_per_io"].is_number());
        assert!(ph["jobs"].as_array().unwrap().len() as u64 == p["numjobs"].as_u64().unwrap());
        assert!(ph["cache"]["mode"].is_string());
    }
}

fn run_engine(engine: &str) {
    let d = tempfile::tempdir().unwrap();
    let out = storlab(&[
        "bench",
        d.path().to_str().unwrap(),
        &format!("--engine={engine}"),
        "--rw=write",
        "--bs=64k",
        "--size=8M",
        "--numjobs=2",
        "--iodepth=4",
        "--cache=cold",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{engine}: {}", stderr(&out));
    let v = json_of(&out);
    check_schema(&v);
    let ph = &v["phases"][0];
    // Each job writes its 8 MiB once: 2 × 8 MiB in 64 KiB writes.
    assert_eq!(ph["write"]["bytes"], 2 * 8 * 1024 * 1024, "{engine}");
    assert_eq!(ph["write"]["ops"], 2 * 128, "{engine}");
    assert_eq!(ph["read"]["bytes"], 0);
    for j in ph["jobs"].as_array().unwrap() {
        assert_eq!(j["write"]["bytes"], 8 * 1024 * 1024);
    }
    // Rate = bytes / window.
    let bw = ph["write"]["bw_bytes_per_s"].as_f64().unwrap();
    let expect = 16.0 * 1048576.0 / (ph["elapsed_ns"].as_f64().unwrap() / 1e9);
    assert!((bw - expect).abs() / expect < 1e-9, "{bw} vs {expect}");
    assert_eq!(ph["fsync_in_window"], engine != "null");
    assert!(dir_is_empty(d.path()), "scratch files must be removed");
}

#[test]
fn null_engine_runs_the_whole_pipeline() {
    run_engine("null");
}

#[test]
fn psync_engine() {
    run_engine("psync");
}

#[test]
fn io_uring_engine() {
    if !uring_ok() {
        skip("io_uring_engine", "the kernel refuses io_uring here");
        return;
    }
    run_engine("io_uring");
}

#[test]
fn quick_check_with_no_arguments() {
    // `storlab` alone in an empty directory: four phases, a table, files removed.
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .args(["bench", "--size=16M", "--runtime=1s"])
        .current_dir(d.path())
        .env_remove("STORLAB_DB")
        .env("XDG_DATA_HOME", d.path().join("data"))
        .output()
        .unwrap();
    crate::util::assert_quick_check(&out, d.path());
}

#[test]
fn kept_files_hold_exactly_what_was_reported() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("data.bin");
    let out = storlab(&[
        "bench",
        file.to_str().unwrap(),
        "--rw=randwrite",
        "--bs=4k",
        "--size=4M",
        "--iodepth=8",
        "--engine=psync",
        "--cache=cold",
        "--keep",
        "--fallocate=none",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["phases"][0]["write"]["bytes"], 4 << 20);
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 4 << 20);
    // A full-coverage permutation wrote every 4 KiB block: each starts with
    // storlab's header carrying its own offset.
    for (i, block) in data.chunks(4096).enumerate() {
        let off = u64::from_le_bytes(block[8..16].try_into().unwrap());
        assert_eq!(
            off,
            (i * 4096) as u64,
            "block {i} not written exactly once in place"
        );
    }
    assert_eq!(v["target"]["kept"], true);
}

#[test]
fn device_counters_match_reported_bytes() {
    // On a loop device nobody else uses, the kernel's sectors-written count
    // must equal what storlab reports.
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    let stat = |f: usize| -> u64 {
        let s = std::fs::read_to_string(format!("/sys/block/{}/stat", lo.name())).unwrap();
        s.split_whitespace().nth(f).unwrap().parse().unwrap()
    };
    let before_w = stat(6);
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--allow-destroy",
        "--rw=write",
        "--bs=128k",
        "--size=16M",
        "--iodepth=4",
        "--engine=psync",
        "--direct",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let reported = v["phases"][0]["write"]["bytes"].as_u64().unwrap();
    let written = (stat(6) - before_w) * 512;
    assert_eq!(reported, 16 << 20);
    assert_eq!(
        written, reported,
        "device wrote {written} bytes, storlab reported {reported}"
    );
    assert_eq!(v["target"]["kind"], "block_device");
}

#[test]
fn verify_reports_a_flipped_byte() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("v.dat");
    let f = file.to_str().unwrap();
    let out = storlab(&[
        "bench",
        f,
        "--rw=write",
        "--bs=16k",
        "--size=1M",
        "--verify",
        "--keep",
        "--cache=cold",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("0 mismatches"), "{}", stdout(&out));
    // Corrupt one byte in the middle of the 5th 4 KiB unit.
    let mut data = std::fs::read(&file).unwrap();
    let flip = 4 * 4096 + 1234;
    data[flip] ^= 0x01;
    std::fs::write(&file, &data).unwrap();
    let out = storlab(&[
        "bench",
        f,
        "--rw=read",
        "--bs=16k",
        "--size=1M",
        "--verify",
        "--cache=cold",
        "--output-format=json",
        "-q",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a mismatch exits 1: {}",
        stderr(&out)
    );
    let v = json_of(&out);
    let ver = &v["phases"][0]["verify"];
    assert_eq!(ver["mismatches"], 1);
    assert_eq!(ver["first_mismatches"][0]["offset_bytes"], 4 * 4096);
    assert!(
        ver["first_mismatches"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("checksum")
    );
    // Verification is not benchmark I/O: the read phase counts exactly its 1 MiB.
    assert_eq!(v["phases"][0]["read"]["bytes"], 1 << 20);
    assert!(stderr(&out).contains("failed verification"));
}

#[test]
fn existing_file_is_not_written_without_allow_destroy() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("precious.txt");
    std::fs::write(&file, b"do not touch").unwrap();
    let out = storlab(&["bench", file.to_str().unwrap(), "--rw=write", "--size=64k"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("already exists") && e.contains("--allow-destroy"),
        "{e}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"do not touch");
}

#[test]
fn bad_input_exits_2_with_a_fix() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["bench", t, "--rw=sideways"], "randrw"),
        (vec!["bench", t, "--bs=4q"], "e.g. 4096, 4k"),
        (vec!["bench", t, "--bs=1000"], "multiple of 512"),
        (vec!["bench", t, "--rw=read", "--time-based"], "--runtime"),
        (vec!["bench", t, "--bssplit=4k/50:8k/20"], "add up to 70"),
        (
            vec!["bench", t, "--engine=aio"],
            "one of io_uring, libaio, psync, null",
        ),
        (
            vec!["bench", t, "--size=1T", "--rw=write"],
            "not enough free space",
        ),
        (
            vec!["bench", "/nonexistent-dir/x/y"],
            "create the directory first",
        ),
    ] {
        let out = storlab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
    assert!(dir_is_empty(d.path()));
}

#[test]
fn job_file_errors_quote_file_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nbs = \"4k\"\n\n[[phase]]\nrw = \"read\"\nqueue_depth = 8\n",
    )
    .unwrap();
    let out = storlab(&[
        "bench",
        d.path().to_str().unwrap(),
        "--job",
        job.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("job.toml:6:1") && e.contains("queue_depth"),
        "{e}"
    );
}

#[test]
fn job_file_runs_phases_in_order_with_cli_overrides() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nbs = \"64k\"\nsize = \"2M\"\nengine = \"psync\"\ncache = \"cold\"\n\
         [[phase]]\nname = \"fill\"\nrw = \"write\"\n[[phase]]\nname = \"scan\"\nrw = \"read\"\n",
    )
    .unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = storlab(&[
        "bench",
        target.to_str().unwrap(),
        "--job",
        job.to_str().unwrap(),
        "--bs=128k",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fill", "scan"]);
    assert_eq!(v["phases"][1]["params"]["bs"][0]["bs_bytes"], 131072);
    assert_eq!(v["phases"][1]["read"]["bytes"], 2 << 20);
    // The cold read must report whether eviction worked.
    assert!(v["phases"][1]["cache"]["verified"].is_boolean());
}

#[test]
fn json_out_file_matches_stdout_document() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let out = storlab(&[
        "bench",
        t.to_str().unwrap(),
        "--engine=null",
        "--rw=randrw",
        "--rwmixread=70",
        "--size=4M",
        "--json-out",
        j.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    check_schema(&v);
    let ph = &v["phases"][0];
    let (r, w) = (
        ph["read"]["ops"].as_f64().unwrap(),
        ph["write"]["ops"].as_f64().unwrap(),
    );
    assert_eq!(r + w, 1024.0);
    assert!(
        (r / (r + w) - 0.7).abs() < 0.06,
        "read share {}",
        r / (r + w)
    );
    assert!(stdout(&out).contains("randrw"), "table on stdout");
}

#[test]
fn ctrl_c_stops_promptly_keeps_results_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let child = cmd()
        .args([
            "bench",
            d.path().to_str().unwrap(),
            "--rw=randread",
            "--size=8M",
            "--engine=psync",
            "--cache=cold",
            "--runtime=60s",
            "--time-based",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    // SAFETY: kill with a valid pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "took {:?} to stop",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["interrupted"], true);
    assert!(v["stop_reason"].as_str().unwrap().contains("Ctrl-C"));
    let ph = v["phases"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(ph["interrupted"], true);
    assert!(
        ph["read"]["ops"].as_u64().unwrap() > 0,
        "partial results kept"
    );
    assert!(dir_is_empty(d.path()), "scratch files removed after Ctrl-C");
}

#[test]
fn loop_device_needs_allow_destroy() {
    let Some(lo) = LoopDev::new(8 << 20) else {
        return;
    };
    let out = storlab(&["bench", lo.dev.to_str().unwrap(), "--rw=write", "--size=1M"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allow-destroy"), "{}", stderr(&out));
    // Reading is harmless and allowed.
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=read",
        "--size=1M",
        "--engine=psync",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn mounted_device_is_refused_even_with_allow_destroy() {
    let mnt = tempfile::tempdir().unwrap();
    let Some(mut lo) = LoopDev::new(32 << 20) else {
        return;
    };
    if !have("mkfs.ext4") {
        skip(
            "mounted_device_is_refused_even_with_allow_destroy",
            "mkfs.ext4 not installed (e2fsprogs)",
        );
        return;
    }
    let dev = lo.path();
    lo.stack().mkfs("ext4", &["-q", "-F"], &dev).unwrap();
    lo.stack().mount(&dev, mnt.path(), &[]).unwrap();
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=write",
        "--size=1M",
        "--allow-destroy",
    ]);
    lo.stack().umount(mnt.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is mounted"), "{}", stderr(&out));
}

#[test]
fn full_disk_stops_with_a_clear_message_and_cleans_up() {
    if !is_root() {
        skip(
            "full_disk_stops_with_a_clear_message_and_cleans_up",
            "needs root to mount a small tmpfs",
        );
        return;
    }
    let Some(fs) = Tmpfs::new("full_disk_stops_with_a_clear_message_and_cleans_up", "48m") else {
        return;
    };
    let m = fs.path();
    let target = m.join("bench");
    std::fs::create_dir(&target).unwrap();
    // A sparse (not pre-allocated) file written slowly; meanwhile another
    // writer fills the file system.
    let child = cmd()
        .args([
            "bench",
            target.to_str().unwrap(),
            "--rw=write",
            "--bs=64k",
            "--size=16M",
            "--fallocate=none",
            "--rate-iops=40",
            "--cache=cold",
            "--engine=psync",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let hog = m.join("hog");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&hog).unwrap();
        let block = vec![0xA5u8; 1 << 16];
        while f.write_all(&block).is_ok() {}
    }
    let out = child.wait_with_output().unwrap();
    let entries: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
    let _ = std::fs::remove_file(&hog);
    drop(fs);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("disk filled up"), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["interrupted"], true);
    assert!(
        v["phases"][0]["write"]["bytes"].as_u64().unwrap() > 0,
        "what was measured is reported"
    );
    assert!(v["phases"][0]["errors"]["ENOSPC"].as_u64().unwrap() >= 1);
    assert!(entries.is_empty(), "storlab's files removed after ENOSPC");
}

#[test]
fn monitor_timeline_accounts_for_the_bytes_written() {
    // On a private loop device, the sampled device timeline must add up to
    // the bytes storlab wrote.
    let Some(lo) = LoopDev::new(64 << 20) else {
        return;
    };
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--allow-destroy",
        "--rw=write",
        "--bs=64k",
        "--size=32M",
        "--engine=psync",
        "--direct",
        "--rate-iops=400",
        "--monitor",
        "--monitor-interval=200ms",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let m = &v["monitor"];
    let name = lo.name();
    assert!(
        m["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == name.as_str()),
        "{m}"
    );
    let samples: Vec<&Value> = m["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["device"] == name.as_str())
        .collect();
    assert!(
        samples.len() >= 4,
        "a 1.3 s run sampled every 200 ms: {} samples",
        samples.len()
    );
    let mut prev = 0u64;
    let mut bytes = 0.0;
    for s in samples {
        let t = s["t_ns"].as_u64().unwrap();
        bytes += s["w_bytes_per_s"].as_f64().unwrap() * (t - prev) as f64 / 1e9;
        prev = t;
    }
    let reported = v["phases"][0]["write"]["bytes"].as_f64().unwrap();
    assert_eq!(reported, (32 << 20) as f64);
    assert!(
        (bytes - reported).abs() / reported < 0.02,
        "timeline {bytes} vs reported {reported}"
    );
}

#[test]
fn runs_are_saved_phase_by_phase_and_survive_kill_9() {
    // A three-phase run is killed (SIGKILL) during its last phase: the
    // database opens and holds every phase that had finished.
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("crash.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nsize = \"4M\"\nbs = \"64k\"\nengine = \"psync\"\ncache = \"cold\"\n\
         [[phase]]\nname = \"one\"\nrw = \"write\"\n\
         [[phase]]\nname = \"two\"\nrw = \"read\"\n\
         [[phase]]\nname = \"long\"\nrw = \"randread\"\nruntime = \"60s\"\ntime_based = true\n",
    )
    .unwrap();
    let mut child = cmd()
        .args([
            "bench",
            target.to_str().unwrap(),
            "--job",
            job.to_str().unwrap(),
            "-q",
            "--tag",
            "case=crash",
        ])
        .env("STORLAB_DB", &db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until both short phases are saved (the third runs for a minute).
    let t = Instant::now();
    loop {
        let out = cmd()
            .args(["show", "latest", "--json"])
            .env("STORLAB_DB", &db)
            .output()
            .unwrap();
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            if v[0]["report"]["phases"]
                .as_array()
                .is_some_and(|p| p.len() >= 2)
            {
                break;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "phases never appeared in the database"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup, no final save
    child.wait().unwrap();
    let out = cmd()
        .args(["show", "tag:case=crash", "--json"])
        .env("STORLAB_DB", &db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let v = &list[0];
    let phases = v["report"]["phases"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two"]);
    assert_eq!(phases[0]["write"]["bytes"], 4 << 20);
    assert_eq!(
        v["report"]["interrupted"], true,
        "an unfinished run loads as interrupted"
    );
    // The killed run left its scratch directory behind; remove it here.
    let _ = std::fs::remove_dir_all(&target);
}

#[test]
fn a_write_phase_cut_short_does_not_count_as_layout() {
    // The write phase stops on its runtime after ~20 of 64 blocks; the read
    // phase after it must not read holes, so storlab lays the file out first.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("f.dat");
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nsize = \"4M\"\nbs = \"64k\"\nengine = \"psync\"\ncache = \"cold\"\n\
         [[phase]]\nname = \"partial\"\nrw = \"write\"\nrate_iops = 20\nruntime = \"1s\"\n\
         [[phase]]\nname = \"scan\"\nrw = \"read\"\n",
    )
    .unwrap();
    let out = storlab(&[
        "bench",
        file.to_str().unwrap(),
        "--job",
        job.to_str().unwrap(),
        "--keep",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    let written = v["phases"][0]["write"]["bytes"].as_u64().unwrap();
    assert!(
        written < 4 << 20,
        "the write phase was meant to stop early ({written} bytes)"
    );
    assert!(v["phases"][0]["warnings"].to_string().contains("full pass"));
    assert_eq!(v["phases"][1]["read"]["bytes"], 4 << 20);
    let data = std::fs::read(&file).unwrap();
    for (i, unit) in data.chunks(4096).enumerate() {
        let off = u64::from_le_bytes(unit[8..16].try_into().unwrap());
        assert_eq!(
            off,
            (i * 4096) as u64,
            "unit {i} was never written: the read phase read a hole"
        );
    }
}

#[test]
fn device_with_a_mounted_partition_is_refused() {
    let mnt = tempfile::tempdir().unwrap();
    let Some(mut lo) = LoopDev::new(32 << 20) else {
        return;
    };
    if !have("addpart") || !have("mkfs.ext4") {
        skip(
            "device_with_a_mounted_partition_is_refused",
            "addpart or mkfs.ext4 not installed (util-linux, e2fsprogs)",
        );
        return;
    }
    // A partition from sector 2048, 20 MiB long, made without a partition table.
    let dev = lo.path();
    let part = match lo.stack().add_partition(&dev, "1", "2048", "40960") {
        Ok(p) => p,
        Err(e) => {
            skip(
                "device_with_a_mounted_partition_is_refused",
                &format!("addpart failed on the loop device: {e}"),
            );
            return;
        }
    };
    lo.stack().mkfs("ext4", &["-q", "-F"], &part).unwrap();
    lo.stack().mount(&part, mnt.path(), &[]).unwrap();
    let out = storlab(&[
        "bench",
        lo.dev.to_str().unwrap(),
        "--rw=write",
        "--size=1M",
        "--allow-destroy",
    ]);
    drop(lo);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("its partition") && e.contains("is mounted"),
        "{e}"
    );
}

#[test]
fn shared_file_with_stride_tiles_one_file() {
    // Four jobs interleave 64 KiB units in one file: every block written
    // exactly once, at its own offset, and the jobs' bytes add up.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("shared.dat");
    let out = storlab(&[
        "bench",
        file.to_str().unwrap(),
        "--rw=write",
        "--bs=16k",
        "--size=1M",
        "--numjobs=4",
        "--shared-file",
        "--stride=64k",
        "--engine=psync",
        "--cache=cold",
        "--keep",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["phases"][0]["write"]["bytes"], 4 << 20);
    assert_eq!(
        v["phases"][0]["params"]["layout"]["kind"],
        "shared_interleaved"
    );
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 4 << 20);
    for (i, unit) in data.chunks(4096).enumerate() {
        let off = u64::from_le_bytes(unit[8..16].try_into().unwrap());
        assert_eq!(off, (i * 4096) as u64, "unit {i}");
    }
}

/// A `--json-out` that cannot be written is an error (exit 2), even though
/// the store kept the run.
#[test]
fn an_unwritable_json_out_exits_2_and_the_run_is_still_saved() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let db = d.path().join("r.db");
    // A name longer than the file system allows: nothing to see before the
    // run, the write fails after it.
    let out = d.path().join(format!("{}.json", "x".repeat(300)));
    let bench = |out: &std::path::Path| {
        storlab(&[
            "bench",
            t.to_str().unwrap(),
            "--rw",
            "read",
            "--engine",
            "null",
            "--size",
            "1M",
            "--db",
            db.to_str().unwrap(),
            "--json-out",
            out.to_str().unwrap(),
        ])
    };
    let o = bench(&out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    let runs = storlab(&["runs", "--db", db.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    // A directory that does not exist is found before the run: no second run.
    let o = bench(&d.path().join("no-such-dir/out.json"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    // So is a "directory" that is a file.
    let o = bench(&db.join("out.json"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a directory"), "{}", stderr(&o));
    let runs = storlab(&["runs", "--db", db.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
}
