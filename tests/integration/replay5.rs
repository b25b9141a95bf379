//! Replay, fifth round (issue 26): trims replayed as fio's `read_iolog`
//! issues them (a hole punched in a file, `BLKDISCARD` on a device), through
//! the real binary.

use crate::util::{bench_json, cmd, json, s, stderr, u};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

const BS: u64 = 64 << 10;

/// Whether `len` bytes of `path` at `offset` are all zero.
fn zeroed(path: &Path, offset: u64, len: u64) -> bool {
    let f = std::fs::File::open(path).expect("open");
    let mut b = vec![0u8; len as usize];
    f.read_exact_at(&mut b, offset).expect("read");
    b.iter().all(|&x| x == 0)
}

/// `storlab replay TRACE TARGET --speed max --json ARGS...`.
fn replay(trace: &Path, target: &str, args: &[&str]) -> std::process::Output {
    cmd()
        .args([
            "replay",
            s(trace).as_str(),
            target,
            "--speed",
            "max",
            "--json",
        ])
        .args(args)
        .output()
        .expect("run storlab replay")
}

/// A trim run recorded by `bench --write-iolog` (24 random 64 KiB trims of a
/// 4 MiB file) replays every trim: the replay's copy of the file (laid out
/// full of data, kept with `--keep`) reads zeros exactly at the logged
/// ranges and data everywhere else, its blocks are freed, and the replay's
/// trims and bytes equal the log's. Before, trims were counted and not
/// issued: the file kept all its data.
#[test]
fn a_recorded_log_with_trims_replays_them_as_holes_in_the_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let bench_dir = d.path().join("bench");
    std::fs::create_dir(&bench_dir).expect("bench dir");
    let log = d.path().join("trims.iolog");
    let v = bench_json(
        &bench_dir,
        &[
            "--rw",
            "randtrim",
            "--bs",
            "64k",
            "--size",
            "4m",
            "--number-ios",
            "24",
            "--write-iolog",
            s(&log).as_str(),
        ],
    );
    assert_eq!(u(&v["phases"][0]["write"]["ops"]), 24, "24 trims recorded");
    let text = std::fs::read_to_string(&log).expect("iolog");
    let trims: Vec<u64> = text
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[2] == "trim")
        .map(|f| {
            assert_eq!(f[4], "65536", "{text}");
            f[3].parse().expect("offset")
        })
        .collect();
    assert_eq!(trims.len(), 24, "{text}");
    let extent = trims.iter().max().expect("a trim") + BS;

    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let out = replay(
        &log,
        &s(&target),
        &["--keep", "--db", &s(&d.path().join("r.db"))],
    );
    let v = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(u(&v["replay"]["trims"]), 24, "{}", v["replay"]);
    assert_eq!(u(&v["replay"]["bytes_trimmed"]), 24 * BS, "{}", v["replay"]);
    let warnings = v["phases"][0]["warnings"].to_string();
    assert!(
        !warnings.contains("trim"),
        "counts equal the trace's: {warnings}"
    );
    let file = v["target"]["files"][0].as_str().expect("the laid-out file");
    let file = Path::new(file);
    assert_eq!(std::fs::metadata(file).expect("kept").len(), extent);
    for block in 0..extent / BS {
        let at = block * BS;
        assert_eq!(
            zeroed(file, at, BS),
            trims.contains(&at),
            "block at {at}: zeros exactly where the log trimmed"
        );
    }
    let allocated = std::fs::metadata(file).expect("kept").blocks() * 512;
    assert!(
        allocated <= extent - 24 * BS + BS,
        "the trimmed blocks are freed: {allocated} bytes allocated of {extent}"
    );
}

/// A trace that trims a block device TARGET destroys data as a write does:
/// refused without `--allow-destroy` (exit 2, nothing discarded), and with
/// it the range is discarded (`BLKDISCARD`: the loop device reads zeros
/// there) and nothing else is touched. Before, the trace counted as
/// read-only: it replayed without `--allow-destroy` and discarded nothing.
#[test]
fn trims_onto_a_device_need_allow_destroy_and_discard_the_range() {
    const T: &str = "trims_onto_a_device_need_allow_destroy_and_discard_the_range";
    if !crate::util::needs_root_and(T, &["losetup"]) {
        return;
    }
    let Some(dev) = crate::util::LoopDev::new(4 << 20) else {
        return;
    };
    // Data everywhere first (a pattern with no zero byte).
    let pattern: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251 + 1) as u8).collect();
    {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&dev.dev)
            .expect("open device");
        f.write_all_at(&pattern, 0).expect("fill device");
        f.sync_all().expect("sync device");
    }
    let d = tempfile::tempdir().expect("tempdir");
    let trace = d.path().join("discard.iolog");
    std::fs::write(
        &trace,
        "fio version 3 iolog\n0 /data/dev add\n0 /data/dev open\n\
         10 /data/dev trim 1048576 1048576\n20 /data/dev read 0 4096\n30 /data/dev close\n",
    )
    .expect("trace");
    let db = s(&d.path().join("r.db"));
    let out = replay(&trace, &dev.path(), &["--db", &db]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow-destroy"), "{}", stderr(&out));
    assert!(!zeroed(&dev.dev, 1 << 20, 1 << 20), "nothing discarded");

    let out = replay(&trace, &dev.path(), &["--db", &db, "--allow-destroy"]);
    let v = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(u(&v["replay"]["trims"]), 1, "{}", v["replay"]);
    assert_eq!(u(&v["replay"]["bytes_trimmed"]), 1 << 20, "{}", v["replay"]);
    assert!(zeroed(&dev.dev, 1 << 20, 1 << 20), "the range discarded");
    let f = std::fs::File::open(&dev.dev).expect("open device");
    let mut rest = vec![0u8; 1 << 20];
    for at in [0u64, 2 << 20, 3 << 20] {
        f.read_exact_at(&mut rest, at).expect("read device");
        assert!(
            rest[..] == pattern[at as usize..at as usize + (1 << 20)],
            "the MiB at {at} untouched"
        );
    }
}

/// `--fadvise` reaches the kernel: the replayed file gets the hint when it
/// is opened. A trace reading the first 8 pages of a 4 MiB file one after
/// another (and its last page) leaves exactly those 9 pages in the page
/// cache with `--fadvise random` (read-ahead off), and more with the
/// default `normal` (the kernel reads ahead of a sequential start). The
/// laid-out copy is evicted before the replay and kept for the count.
/// Before, `--fadvise` did not exist (exit 2).
#[test]
fn fadvise_random_turns_read_ahead_off_and_normal_keeps_it() {
    const T: &str = "fadvise_random_turns_read_ahead_off_and_normal_keeps_it";
    let d = tempfile::tempdir().expect("tempdir");
    let mut text = String::from("fio version 3 iolog\n0 /app/f add\n0 /app/f open\n");
    for page in 0..8u64 {
        text.push_str(&format!("{} /app/f read {} 4096\n", page + 1, page * 4096));
    }
    text.push_str(&format!(
        "9 /app/f read {} 4096\n10 /app/f close\n",
        (4 << 20) - 4096
    ));
    let trace = d.path().join("seq.iolog");
    std::fs::write(&trace, text).expect("trace");
    let mut resident = Vec::new();
    for hint in ["random", "normal"] {
        let target = d.path().join(hint);
        std::fs::create_dir(&target).expect("target");
        let db = s(&d.path().join("r.db"));
        let out = replay(
            &trace,
            &s(&target),
            &["--keep", "--fadvise", hint, "--db", &db],
        );
        let v = json(&out);
        assert!(out.status.success(), "{}", stderr(&out));
        if v["phases"][0]["cache"]["verified"] != serde_json::Value::Bool(true) {
            crate::util::skip(
                T,
                "the laid-out file stayed in the page cache after eviction (a tmpfs TARGET?)",
            );
            return;
        }
        let file = std::fs::File::open(v["target"]["files"][0].as_str().expect("file"))
            .expect("the kept file");
        let (n, total) = storlab_bench::resident_pages(&file, 4 << 20).expect("mincore");
        assert_eq!(total, 1024, "4 MiB of 4 KiB pages");
        resident.push(n);
    }
    assert_eq!(resident[0], 9, "random: exactly the 9 pages read");
    if resident[1] == 9 {
        crate::util::skip(T, "the file system under the temp dir does not read ahead");
        return;
    }
    assert!(resident[1] > 9, "normal reads ahead: {resident:?}");
}
