//! Replay, finished (issue 26): `bench --write-iolog` (fio's iolog v3, replayed
//! by fio and by storlab), replaying onto a block device, the timeline
//! chart of a replay, through the real binary.

use crate::util::{bench_json, cmd, have, skip, stderr, stdout, storlab, u};
use serde_json::Value;
use std::path::Path;

/// Reads, writes and bytes of each direction in an iolog's I/O lines.
fn iolog_counts(text: &str) -> (u64, u64, u64, u64) {
    let (mut r, mut w, mut br, mut bw) = (0, 0, 0, 0);
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() == 5 {
            let len: u64 = f[4].parse().expect("length");
            match f[2] {
                "read" => (r, br) = (r + 1, br + len),
                "write" => (w, bw) = (w + 1, bw + len),
                _ => {}
            }
        }
    }
    (r, w, br, bw)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Every I/O of a run is in the iolog, in fio's v3 format: fio's own
/// `read_iolog` replays it with the same operations and bytes, and so does
/// `storlab replay`.
#[test]
fn bench_write_iolog_is_replayed_by_fio_and_storlab_with_the_same_io() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let log = d.path().join("run.iolog");
    let v = bench_json(
        &target,
        &[
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--size",
            "2m",
            "--numjobs",
            "2",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "--keep",
            "--write-iolog",
            s(&log),
        ],
    );
    let p = &v["phases"][0];
    let text = std::fs::read_to_string(&log).expect("the iolog was written");
    assert!(text.starts_with("fio version 3 iolog\n"), "{}", &text[..80]);
    let (r, w, br, bw) = iolog_counts(&text);
    assert_eq!((r, br), (u(&p["read"]["ops"]), u(&p["read"]["bytes"])));
    assert_eq!((w, bw), (u(&p["write"]["ops"]), u(&p["write"]["bytes"])));
    assert_eq!(r + w, 1024, "2 jobs × 2 MiB / 4 KiB");
    // Both jobs' files are in it, merged by time.
    let times: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.split(' ')
                .next()
                .and_then(|t| t.parse().ok())
                .expect("time")
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order");
    assert!(text.contains("job0.dat add") && text.contains("job1.dat add"));

    // storlab replays it with every operation and byte equal.
    let out = cmd()
        .args(["replay", s(&log), s(&target), "--speed", "max", "--json"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let rv: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let rp = &rv["phases"][0];
    assert_eq!(u(&rp["read"]["ops"]), r);
    assert_eq!(u(&rp["write"]["bytes"]), bw);

    if !have("fio") {
        skip(
            "bench_write_iolog_is_replayed_by_fio_and_storlab_with_the_same_io",
            "fio is not installed (the storlab half ran)",
        );
        return;
    }
    let out = std::process::Command::new("fio")
        .args(["--name=replay", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", s(&log)))
        .current_dir(d.path())
        .output()
        .expect("fio");
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let o = stdout(&out);
    let fio: Value = serde_json::from_str(&o[o.find('{').expect("JSON")..]).expect("fio JSON");
    let job = &fio["jobs"][0];
    assert_eq!(u(&job["read"]["total_ios"]), r, "fio replays the reads");
    assert_eq!(u(&job["write"]["total_ios"]), w, "fio replays the writes");
    assert_eq!(u(&job["read"]["io_bytes"]), br);
    assert_eq!(u(&job["write"]["io_bytes"]), bw);
}

/// An existing file at the iolog's name is never written over, whatever it
/// is, and the run does not start (exit 2, nothing laid out).
#[test]
fn write_iolog_never_writes_over_an_existing_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let theirs = d.path().join("theirs.txt");
    std::fs::write(&theirs, "not storlab's\n").expect("file");
    let out = storlab(&[
        "bench",
        s(&target),
        "--size",
        "1m",
        "--no-save",
        "-q",
        "--write-iolog",
        s(&theirs),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("never writes an iolog over"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).expect("read"),
        "not storlab's\n"
    );
    assert_eq!(
        std::fs::read_dir(&target).expect("dir").count(),
        0,
        "no run started"
    );
    // A missing directory is named before the run too.
    let out = storlab(&[
        "bench",
        s(&target),
        "--size",
        "1m",
        "--no-save",
        "-q",
        "--write-iolog",
        s(&d.path().join("no/such/dir/x.iolog")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
}
