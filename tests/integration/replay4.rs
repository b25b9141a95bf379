//! Replay, fourth round (issue 26): what `bench --write-iolog` records of a
//! trim run, through the real binary.

use crate::util::{bench_json, stdout, storlab, u};

/// A trim run's every trim is in its iolog as fio's `trim` action (fio's
/// `read_iolog` replays trims), with the run's offsets and lengths; before,
/// a `randtrim` run wrote an iolog of no I/O at all. `storlab trace summary`
/// reads the iolog back with the same count.
#[test]
fn bench_write_iolog_records_every_trim() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let log = d.path().join("trim.iolog");
    let v = bench_json(
        &target,
        &[
            "--rw",
            "randtrim",
            "--bs",
            "64k",
            "--size",
            "4m",
            "--write-iolog",
            log.to_str().expect("utf-8 path"),
        ],
    );
    let trims = u(&v["phases"][0]["write"]["ops"]);
    assert_eq!(
        trims, 64,
        "4 MiB / 64 KiB trims: {}",
        v["phases"][0]["write"]
    );
    let text = std::fs::read_to_string(&log).expect("the iolog was written");
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[2] == "trim")
        .collect();
    assert_eq!(lines.len() as u64, trims, "{text}");
    assert!(lines.iter().all(|f| f[4] == "65536"), "{text}");
    let mut offsets: Vec<u64> = lines
        .iter()
        .map(|f| f[3].parse().expect("offset"))
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert_eq!(offsets.len(), 64, "every 64 KiB block trimmed once");
    assert_eq!(offsets.last(), Some(&(63 * 65536)));
    let out = storlab(&[
        "trace",
        "summary",
        log.to_str().expect("utf-8 path"),
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stdout(&out));
    let sum: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(u(&sum["ops"]["trim"]), trims, "{sum}");
}
