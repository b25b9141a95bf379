//! fio's verify, error-tolerance, priority, placement and dedupe options
//! in job files (issue 27), through the binary: each test checks the
//! semantics fio documents, not only that the file runs. Before issue 27
//! every one of these options was refused by name (exit 2).

use super::util::*;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `storlab bench --fio-job FILE TARGET ARGS... --no-save --output-format json -q`
/// run in `dir` (the job file written there as `job.fio`).
fn run_job(dir: &Path, job: &str, target: &Path, args: &[&str]) -> Output {
    let f = write(dir, "job.fio", job);
    let mut c = in_dir(dir);
    c.args(["bench", "--fio-job", &s(&f), &s(target)])
        .args(args)
        .args(["--no-save", "--output-format", "json", "-q"]);
    c.output().expect("storlab runs")
}

fn ok_json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}\n{}", stderr(out), stdout(out));
    json(out)
}

/// A file of `len` zero bytes (the existing file a job overwrites with
/// --allow-destroy; storlab leaves it in place for the test to read).
fn zero_file(dir: &Path, name: &str, len: u64) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .and_then(|f| f.set_len(len))
        .expect("a zero file");
    p
}

/// Which 4 KiB units of `data` hold anything but zeros.
fn written_units(data: &[u8]) -> Vec<usize> {
    data.chunks(4096)
        .enumerate()
        .filter(|(_, c)| c.iter().any(|&b| b != 0))
        .map(|(i, _)| i)
        .collect()
}

/// `offset=120k`, `offset_increment=1m`, 3 jobs of 64 KiB on one file:
/// job N writes exactly [120k + N × 1m, +64k), nothing else is touched
/// (fio's "job N starts at offset + N × increment").
#[test]
fn offset_increment_places_job_n_at_offset_plus_n_increments() {
    let dir = tempfile::tempdir().unwrap();
    let target = zero_file(dir.path(), "disk.img", 4 << 20);
    let job = "[global]\nrw=write\nbs=16k\nsize=64k\noffset=120k\noffset_increment=1m\n\
               numjobs=3\n[w]\n";
    let v = ok_json(&run_job(dir.path(), job, &target, &["--allow-destroy"]));
    let p = &v["phases"][0]["params"];
    assert_eq!(u(&p["offset_bytes"]), 120 << 10);
    assert_eq!(u(&p["offset_increment_bytes"]), 1 << 20);
    let data = std::fs::read(&target).unwrap();
    assert_eq!(data.len(), 4 << 20, "the file keeps its size");
    let mut want = Vec::new();
    for n in 0..3usize {
        let start = (120 << 10) + n * (1 << 20);
        want.extend(start / 4096..(start + (64 << 10)) / 4096);
    }
    assert_eq!(written_units(&data), want);
}

/// With `verify` the jobs' regions are laid out and checked, never the
/// holes between them: 3 regions of 64 KiB 1 GiB apart in one sparse file
/// allocate about 192 KiB, not 2 GiB (a first version wrote the holes).
#[test]
fn offset_increment_with_verify_never_touches_the_holes() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let target = zero_file(dir.path(), "sparse.img", (2 << 30) + (64 << 10));
    let job = "[global]\nrw=write\nbs=16k\nsize=64k\noffset_increment=1g\nnumjobs=3\n\
               verify=crc32c\n[w]\n";
    let v = ok_json(&run_job(dir.path(), job, &target, &["--allow-destroy"]));
    let ver = &v["phases"][0]["verify"];
    assert_eq!(u(&ver["blocks_checked"]), 3 * 16, "{ver}");
    assert_eq!(u(&ver["mismatches"]), 0, "{ver}");
    let allocated = std::fs::metadata(&target).unwrap().blocks() * 512;
    assert!(allocated <= 1 << 20, "{allocated} bytes allocated");
}

/// `verify_backlog=8`: a writing job reads back and checks its writes
/// every 8 writes (fio), then the phase's regions are checked again
/// (`do_verify`, fio's default): every 4 KiB unit is checked twice.
/// `do_verify=0` checks nothing.
#[test]
fn verify_backlog_checks_the_writes_as_they_go_and_do_verify_0_checks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let job = "[w]\nrw=write\nbs=16k\nsize=1m\nverify=sha256\nverify_backlog=8\n";
    let v = ok_json(&run_job(dir.path(), job, &scratch, &[]));
    let ph = &v["phases"][0];
    assert_eq!(ph["params"]["verify_opts"]["method"], "sha256");
    assert_eq!(u(&ph["params"]["verify_opts"]["backlog"]), 8);
    assert_eq!(
        u(&ph["verify"]["blocks_checked"]),
        2 * 256,
        "{}",
        ph["verify"]
    );
    assert_eq!(u(&ph["verify"]["mismatches"]), 0);
    let job = "[w]\nrw=write\nbs=16k\nsize=1m\nverify=crc32c\ndo_verify=0\n";
    let v = ok_json(&run_job(dir.path(), job, &scratch, &[]));
    let checked = v["phases"][0]["verify"]["blocks_checked"]
        .as_u64()
        .unwrap_or(0);
    assert_eq!(checked, 0, "do_verify=0 checks nothing");
}

/// fio's surface-scan.fio on an existing 2 MiB file: `fill_device` writes
/// to the file's end (not the 256 MiB default size), in 512-byte verify
/// units (`verify_interval`) whose bytes after the header are
/// `verify_pattern`; the stonewalled read phase (`do_verify=1`) checks
/// every unit; a unit changed behind storlab's back is found.
#[test]
fn surface_scan_fills_the_file_with_the_pattern_and_checks_every_unit() {
    let dir = tempfile::tempdir().unwrap();
    let target = zero_file(dir.path(), "scan.img", 2 << 20);
    let text = std::fs::read_to_string("tests/fixtures/fio-examples/surface-scan.fio").unwrap();
    let job: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("filename"))
        .map(|l| format!("{l}\n"))
        .collect();
    let v = ok_json(&run_job(dir.path(), &job, &target, &["--allow-destroy"]));
    let data = std::fs::read(&target).unwrap();
    assert_eq!(data.len(), 2 << 20, "filled to the file's end, not beyond");
    for (i, unit) in data.chunks(512).enumerate() {
        let pat = [0xaa, 0x55, 0x5a, 0xa5];
        assert!(
            unit[32..]
                .iter()
                .enumerate()
                .all(|(k, &b)| b == pat[(32 + k) % 4]),
            "unit {i} does not carry the pattern"
        );
    }
    let write = &v["phases"][0];
    assert_eq!(u(&write["write"]["bytes"]), 2 << 20);
    assert!(write["verify"].is_null() || u(&write["verify"]["blocks_checked"]) == 0);
    let read = &v["phases"][1];
    assert_eq!(
        u(&read["verify"]["blocks_checked"]),
        4096,
        "{}",
        read["verify"]
    );
    assert_eq!(u(&read["verify"]["mismatches"]), 0);
    // One pattern byte changed: the read phase of the same file finds it.
    let mut bad = data.clone();
    bad[(1 << 20) + 700] ^= 0xff;
    std::fs::write(&target, &bad).unwrap();
    let job = "[global]\nbs=64k\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\
               verify_dump=1\n[r]\nrw=read\nsize=2m\n";
    let out = run_job(dir.path(), job, &target, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out);
    let ver = &v["phases"][0]["verify"];
    assert_eq!(u(&ver["mismatches"]), 1, "{ver}");
    let at: usize = (1 << 20) + 512;
    assert_eq!(u(&ver["first_mismatches"][0]["offset_bytes"]), at as u64);
    // verify_dump: the bad unit as it was read, in the current directory.
    let dumped = std::fs::read(dir.path().join(format!("scan.img.{at}.received"))).unwrap();
    assert_eq!(dumped, bad[at..at + 512]);
}

/// A real ENOSPC: an existing sparse 48 MiB file on a 64 MiB tmpfs that
/// another file has filled to 24 MiB free. fio's default stops at the
/// error; `continue_on_error=write` with `ignore_error=,ENOSPC` (fio's
/// enospc-pressure.fio) counts each failed write as `write:ENOSPC` and
/// goes on to the end of the pass; an error outside the list (EIO is
/// fio's default list, ENOSPC is not in it) still stops the phase.
#[test]
fn continue_on_error_counts_a_real_enospc_and_goes_on() {
    let Some(fs) = Tmpfs::new("continue_on_error", "64m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(fs.path().join("filler"), vec![1u8; 40 << 20]).unwrap();
    let target = zero_file(fs.path(), "sparse.img", 48 << 20);
    let base = "[global]\nrw=write\nbs=1m\nsize=48m\nend_fsync=0\n";
    let out = run_job(
        dir.path(),
        &format!("{base}[w]\n"),
        &target,
        &["--allow-destroy"],
    );
    assert_ne!(
        out.status.code(),
        Some(0),
        "an ENOSPC stops fio's default job"
    );
    let job = format!("{base}continue_on_error=write\nignore_error=,ENOSPC\nerror_dump=0\n[w]\n");
    let out = run_job(dir.path(), &job, &target, &["--allow-destroy"]);
    let v = json(&out);
    let ph = &v["phases"][0];
    let enospc = ph["errors"]["write:ENOSPC"].as_u64().unwrap_or(0);
    let written = u(&ph["write"]["bytes"]);
    assert!(
        enospc >= 20,
        "the failed writes are counted: {}",
        ph["errors"]
    );
    assert!(
        written >= 20 << 20,
        "the writes that fit were made: {written}"
    );
    assert_eq!(
        (written >> 20) + enospc,
        48,
        "every write of the pass was tried: {written} bytes, {enospc} errors"
    );
    assert_eq!(ph["interrupted"], false, "{}", stderr(&out));
    // EIO's list without ENOSPC: the phase stops as fio's does.
    let job = format!("{base}continue_on_error=write\n[w]\n");
    std::fs::remove_file(&target).unwrap();
    let target = zero_file(fs.path(), "sparse.img", 48 << 20);
    let out = run_job(dir.path(), &job, &target, &["--allow-destroy"]);
    assert_ne!(
        out.status.code(),
        Some(0),
        "ENOSPC is not in fio's default list"
    );
}

/// Duplicate 4 KiB blocks of `data`, as a share of its blocks.
fn duplicate_share(data: &[u8]) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let n = data.len() / 4096;
    for b in data.chunks_exact(4096) {
        seen.insert(b);
    }
    (n - seen.len()) as f64 / n as f64
}

/// `dedupe_percentage=30`: 30 % of the written 4 KiB blocks repeat an
/// earlier block (fio's get_buf_state), storlab's own data none; with
/// `dedupe_mode=working_set` and `dedupe_global` (dedupe-global.fio) two
/// jobs repeat each other's blocks: both regions together dedupe more than
/// each alone.
#[test]
fn dedupe_percentage_is_the_share_of_duplicate_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let target = zero_file(dir.path(), "d.img", 8 << 20);
    let job = "[w]\nrw=write\nbs=4k\nsize=8m\ndedupe_percentage=30\ndedupe_mode=repeat\n";
    ok_json(&run_job(dir.path(), job, &target, &["--allow-destroy"]));
    let share = duplicate_share(&std::fs::read(&target).unwrap());
    assert!((share - 0.30).abs() < 0.03, "duplicate share {share}");
    let job = "[w]\nrw=write\nbs=4k\nsize=8m\n";
    ok_json(&run_job(dir.path(), job, &target, &["--allow-destroy"]));
    let share = duplicate_share(&std::fs::read(&target).unwrap());
    assert_eq!(share, 0.0, "storlab's own data never repeats");
    let job = "[global]\nrw=write\nbs=4k\nsize=4m\nnumjobs=2\ndedupe_mode=working_set\n\
               dedupe_global=1\ndedupe_percentage=50\ndedupe_working_set_percentage=50\n[w]\n";
    ok_json(&run_job(dir.path(), job, &target, &["--allow-destroy"]));
    let data = std::fs::read(&target).unwrap();
    let (a, b) = data.split_at(4 << 20);
    let (sa, sb, both) = (
        duplicate_share(a),
        duplicate_share(b),
        duplicate_share(&data),
    );
    assert!(both > sa.max(sb) + 0.1, "alone {sa} {sb}, together {both}");
}

/// cmdprio-percentage.fio (libaio, idle class for the job, 20 % of the
/// reads realtime): the result reports each priority's latency apart, and
/// the realtime share is 20 %.
#[test]
fn cmdprio_percentage_splits_the_reads_and_reports_each_prioritys_latency() {
    if !is_root() {
        skip("cmdprio", "the realtime class needs root (CAP_SYS_ADMIN)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    // A count of I/Os, not a time: the share holds however busy the machine is.
    let job = "[global]\ndirect=1\nlog_prio=1\n[randread]\nrw=randread\nbs=4k\nioengine=libaio\n\
               iodepth=8\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nnumber_ios=4000\n";
    let v = ok_json(&run_job(
        dir.path(),
        job,
        &scratch,
        &["--size", "16m", "--runtime", "120s", "--time-based"],
    ));
    let by = v["phases"][0]["percentiles"]["by_prio"]
        .as_array()
        .unwrap_or_else(|| panic!("no per-priority latency: {}", v["phases"][0]));
    let ios = |class: u64| -> u64 {
        by.iter()
            .filter(|e| e["class"].as_u64() == Some(class))
            .map(|e| u(&e["ios"]))
            .sum()
    };
    let (rt, idle) = (ios(1), ios(3));
    assert_eq!(rt + idle, 4000, "number_ios=4000: {by:?}");
    let share = rt as f64 / (rt + idle) as f64;
    assert!((share - 0.20).abs() < 0.05, "realtime share {share}");
    assert!(by.iter().all(|e| u(&e["percentiles"][0][1]) > 0));
}

/// numa.fio's job1 (`numa_cpu_nodes=0`, `numa_mem_policy=bind:0`) runs;
/// a node this machine lacks is refused before anything runs, naming the
/// file, the job and the nodes there are (exit 2).
#[test]
fn numa_nodes_run_or_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let job =
        "[global]\nrw=randread\nbs=4k\nsize=1m\n[job1]\nnuma_cpu_nodes=0\nnuma_mem_policy=bind:0\n";
    let v = ok_json(&run_job(dir.path(), job, &scratch, &[]));
    assert_eq!(v["phases"][0]["params"]["placement"]["cpu_nodes"][0], 0);
    let nodes = std::fs::read_to_string("/sys/devices/system/node/online").unwrap_or_default();
    if nodes.trim() == "0" {
        let job = "[job2]\nrw=read\nsize=1m\nnuma_cpu_nodes=0-1\n";
        let out = run_job(dir.path(), job, &scratch, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("job.fio:4") && err.contains("node 1 does not exist"),
            "{err}"
        );
    }
}

/// cmdprio-bssplit.fio's `bssplit=64k/40:1024k/60,1024k/100` (the writes
/// one size: storlab's bs_write) with `cmdprio_bssplit`'s advanced form:
/// the small reads carry (1,1) a quarter and (3,2) three quarters of the
/// time, every other I/O the job's prioclass=2/prio=7, each reported apart.
#[test]
fn cmdprio_bssplit_gives_each_size_its_priorities() {
    if !is_root() {
        skip(
            "cmdprio_bssplit",
            "the realtime class needs root (CAP_SYS_ADMIN)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    // A count of I/Os, not a time: the shares hold however busy the machine is.
    let job = "[global]\ndirect=1\nrw=randrw\nioengine=libaio\niodepth=16\nlog_prio=1\n\
               number_ios=8000\n[adv-def]\nprioclass=2\nprio=7\nbssplit=4k/40:64k/60,64k/100\n\
               cmdprio_bssplit=4k/25/1/1:4k/75/3/2:64k/0,64k/0\n";
    let v = ok_json(&run_job(
        dir.path(),
        job,
        &scratch,
        &["--size", "64m", "--runtime", "120s", "--time-based"],
    ));
    let ph = &v["phases"][0];
    assert_eq!(u(&ph["params"]["bs_write_bytes"]), 65536);
    let by = ph["percentiles"]["by_prio"].as_array().expect("by_prio");
    let ios = |dir: &str, class: u64, level: u64| -> u64 {
        by.iter()
            .filter(|e| e["dir"] == dir && u(&e["class"]) == class && u(&e["level"]) == level)
            .map(|e| u(&e["ios"]))
            .sum()
    };
    let (rt, idle, def) = (ios("read", 1, 1), ios("read", 3, 2), ios("read", 2, 7));
    assert!(rt > 150 && def > 1000, "{by:?}");
    let ratio = idle as f64 / rt as f64;
    assert!(
        (2.0..4.5).contains(&ratio),
        "(3,2) to (1,1) is 3: {ratio} {by:?}"
    );
    let writes: u64 = by
        .iter()
        .filter(|e| e["dir"] == "write")
        .map(|e| u(&e["ios"]))
        .sum();
    assert_eq!(
        writes,
        ios("write", 2, 7),
        "every write has the job's priority: {by:?}"
    );
    assert!(writes > 0);
}
