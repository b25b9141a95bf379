//! fio's `zonemode=zbd` emulated on storlab's own files (issue 27, zbd):
//! zones of `zonesize` with write pointers, all empty at the start, as fio
//! emulates them on a regular file. Checked on the offsets a run writes in
//! its iolog (fio's iolog v3): writes at the write pointers, the open-zone
//! limit, a trim's reset, the reset threshold, reads below the pointers;
//! where fio is installed, fio's own iolog of the same job passes the same
//! checks (or gives the same offsets).

use crate::util::{cmd, have, skip, stderr, stdout};
use std::collections::BTreeMap;
use std::path::Path;

const K: u64 = 1024;
const ZONE: u64 = 64 * K;

/// (action, offset, length) of the reads and writes of a fio v3 iolog.
fn ios(log: &Path) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(log).expect("the iolog");
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && (f[2] == "read" || f[2] == "write")).then(|| {
                (
                    f[2].to_string(),
                    f[3].parse().expect("an offset"),
                    f[4].parse().expect("a length"),
                )
            })
        })
        .collect()
}

/// Run `bench --fio-job` on `text` in `dir` (its files in `dir/scratch`),
/// writing its iolog to `dir/io.log`.
fn run(dir: &Path, text: &str) -> (std::process::Output, Vec<(String, u64, u64)>) {
    let job = dir.join("z.fio");
    std::fs::write(&job, text).expect("write the job file");
    let log = dir.join("io.log");
    let _ = std::fs::remove_file(&log);
    let out = cmd()
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.db"))
        .args(["bench", "--fio-job"])
        .arg(&job)
        .arg(dir.join("scratch"))
        .arg("--write-iolog")
        .arg(&log)
        .args(["--output-format", "json"])
        .output()
        .expect("run storlab");
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let ios = ios(&log);
    (out, ios)
}

/// fio on `text` over a file of `size` bytes it finds existing (fio
/// emulates zones only on a file that is there), with its iolog.
fn fio(dir: &Path, text: &str, size: u64) -> Option<Vec<(String, u64, u64)>> {
    if !have("fio") {
        return None;
    }
    let data = dir.join("fio.dat");
    std::fs::File::create(&data).unwrap().set_len(size).unwrap();
    let job = dir.join("f.fio");
    std::fs::write(&job, text).unwrap();
    let log = dir.join("fio.log");
    let st = std::process::Command::new("fio")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output=/dev/null")
        .arg(&job)
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run fio");
    assert!(st.success(), "fio failed on {text}");
    Some(ios(&log))
}

/// What a replay of the writes found.
#[derive(Debug, Default)]
struct Replay {
    /// Resets of full zones, and of zones not yet full.
    full: usize,
    early: usize,
    /// The write (index) of the first reset of a zone not yet full.
    first_early: Option<usize>,
    /// The most zones partly written at once.
    most_open: usize,
}

/// The zone resets the run's result reports for its phase `i` (fio's
/// "N zone resets").
fn resets(out: &std::process::Output, i: usize) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&stdout(out)).expect("the result as JSON");
    v["phases"][i]["params"]["zbd"]["zone_resets"]
        .as_u64()
        .expect("params.zbd.zone_resets")
}

/// Replays the writes zone by zone: every write must start at its zone's
/// write pointer, or at the zone's start (a reset).
fn replay_writes(ios: &[(String, u64, u64)]) -> Replay {
    let mut wp: BTreeMap<u64, u64> = BTreeMap::new();
    let mut r = Replay::default();
    for (i, (_, off, len)) in ios.iter().filter(|i| i.0 == "write").enumerate() {
        let used = wp.entry(off / ZONE).or_insert(0);
        let at = off % ZONE;
        if at == 0 && *used == ZONE {
            r.full += 1;
        } else if at != *used {
            assert_eq!(
                at, 0,
                "a write at {off} is neither at the pointer {used} nor a reset"
            );
            r.early += 1;
            r.first_early.get_or_insert(i);
        }
        *used = at + len;
        assert!(*used <= ZONE, "a write past its zone at {off}");
        r.most_open = r
            .most_open
            .max(wp.values().filter(|&&u| u > 0 && u < ZONE).count());
    }
    r
}

const RANDWRITE: &str = "[global]\nioengine=psync\nrw=randwrite\nbs=16k\nsize=1m\nzonemode=zbd\n\
                         zonesize=64k\nio_size=6400k\n[w]\n";

/// Every write lands at its zone's write pointer: inside a zone the
/// offsets go up one block at a time until the zone is full and reset
/// (fio's 176 resets on a 64 MiB file). fio's own iolog passes the same
/// replay.
#[test]
fn every_write_lands_at_its_zones_write_pointer() {
    let d = tempfile::tempdir().unwrap();
    let (out, ios) = run(d.path(), RANDWRITE);
    assert_eq!(ios.len(), 400, "{ios:?}");
    let r = replay_writes(&ios);
    assert!(r.full > 10, "{r:?}: resets of full zones");
    assert_eq!(resets(&out, 0), r.full as u64, "the result counts them");
    assert_eq!(r.early, 0, "no reset before a zone is full: {r:?}");
    if let Some(fio) = fio(d.path(), RANDWRITE, 1 << 20) {
        let f = replay_writes(&fio);
        assert!(f.full > 10 && f.early == 0, "fio: {f:?}");
    } else {
        skip(
            "every_write_lands_at_its_zones_write_pointer (fio part)",
            "fio is not installed",
        );
    }
}

/// max_open_zones=2: never more than two zones partly written at once
/// (without the limit, many are); fio's iolog keeps the same bound.
#[test]
fn at_most_max_open_zones_are_written_at_once() {
    let d = tempfile::tempdir().unwrap();
    let limited = RANDWRITE.replace("[w]", "max_open_zones=2\n[w]");
    let (_, ios) = run(d.path(), &limited);
    assert_eq!(replay_writes(&ios).most_open, 2, "zones written at once");
    let zones: std::collections::BTreeSet<u64> = ios.iter().map(|i| i.1 / ZONE).collect();
    assert!(zones.len() > 8, "the writes still spread: {zones:?}");
    let (_, ios) = run(d.path(), RANDWRITE);
    assert!(replay_writes(&ios).most_open > 2, "without the limit");
    if let Some(fio) = fio(d.path(), &limited, 1 << 20) {
        assert!(replay_writes(&fio).most_open <= 2, "fio");
    }
}

/// A trim of a zone resets it: after 96k written sequentially (zone 0
/// full, 32k in zone 1), a write to zone 1 goes to 96k; with a trim of
/// zone 1 between them, to 64k (the zone's start).
#[test]
fn a_trim_resets_its_zone() {
    let d = tempfile::tempdir().unwrap();
    let write = "[global]\nioengine=psync\nzonemode=zbd\nzonesize=64k\nbs=16k\n\
                 [fill]\nrw=write\nsize=256k\nio_size=96k\n";
    let trim = "[trim]\nstonewall\nrw=trim\noffset=64k\nsize=64k\nbs=64k\nio_size=64k\n";
    let again = "[again]\nstonewall\nrw=write\noffset=64k\nsize=64k\nnumber_ios=1\n";
    let (_, ios) = run(d.path(), &format!("{write}{again}"));
    assert_eq!(ios.last().unwrap().1, 96 * K, "at the pointer: {ios:?}");
    let (out, ios) = run(d.path(), &format!("{write}{trim}{again}"));
    assert_eq!(ios.len(), 7, "{ios:?}");
    assert_eq!(resets(&out, 1), 1, "the trim reset one zone");
    assert_eq!(ios.last().unwrap().1, 64 * K, "after the trim: {ios:?}");
}

/// zone_reset_threshold=0.7, zone_reset_frequency=0.125 (the zone-reset-gc
/// example's): once 70 % of the region is below the write pointers, one
/// write in 8 resets its zone first, before the zone is full; without the
/// frequency no zone is reset before it is full.
#[test]
fn the_reset_threshold_resets_zones_before_they_are_full() {
    let d = tempfile::tempdir().unwrap();
    let gc = RANDWRITE.replace(
        "[w]",
        "zone_reset_threshold=0.7\nzone_reset_frequency=0.125\n[w]",
    );
    let (out, ios) = run(d.path(), &gc);
    let r = replay_writes(&ios);
    assert!(r.early > 5, "{r:?}: resets before a zone was full");
    assert_eq!(
        resets(&out, 0),
        (r.full + r.early) as u64,
        "the result counts them"
    );
    // None before 70 % of the 1 MiB region (64 writes of 16k) was written.
    assert!(r.first_early.unwrap() >= 44, "{r:?}");
    let (_, ios) = run(d.path(), RANDWRITE);
    assert_eq!(replay_writes(&ios).early, 0);
}

const SEQ: &str = "[global]\nioengine=psync\nzonemode=zbd\nzonesize=64k\nbs=16k\nsize=256k\n\
                   [fill]\nrw=write\nio_size=96k\n[read]\nstonewall\nrw=read\nread_beyond_wp=0\n";

/// read_beyond_wp=0: a sequential read reads exactly what was written
/// (zone 0's 64k, zone 1's first 32k), as fio does on the same file; on a
/// file where nothing was written it reads nothing (fio's zones of a
/// regular file start empty) and the run still succeeds, as fio's.
#[test]
fn the_seq_read_job_reads_only_written_data() {
    let d = tempfile::tempdir().unwrap();
    let (_, ios) = run(d.path(), SEQ);
    let reads: Vec<u64> = ios
        .iter()
        .filter(|i| i.0 == "read")
        .map(|i| i.1 / K)
        .collect();
    assert_eq!(reads, [0, 16, 32, 48, 64, 80]);
    if let Some(fio) = fio(d.path(), SEQ, 256 * K) {
        let f: Vec<u64> = fio
            .iter()
            .filter(|i| i.0 == "read")
            .map(|i| i.1 / K)
            .collect();
        assert_eq!(reads, f, "fio's reads");
    }
    let (out, ios) = run(
        d.path(),
        "[r]\nrw=read\nzonemode=zbd\nzonesize=64k\nsize=256k\nbs=16k\n",
    );
    assert!(ios.is_empty(), "{ios:?}\n{}", stdout(&out));
}

/// What fio refuses, storlab refuses by name (exit 2): a region smaller
/// than a zone, a trim that is not one zone, no zone size.
#[test]
fn zbd_mistakes_are_refused_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, want) in [
        (vec!["--zonemode=zbd", "--rw=randwrite"], "needs --zonesize"),
        (
            vec!["--zonemode=zbd", "--zonesize=1m", "--rw=write"],
            "smaller than one zone",
        ),
        (
            vec!["--zonemode=zbd", "--zonesize=64k", "--rw=randtrim"],
            "zone size",
        ),
    ] {
        let mut a = vec!["bench", dir, "--size=512k", "--bs=16k", "--no-save"];
        a.extend_from_slice(&args);
        let out = cmd().args(&a).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
}
