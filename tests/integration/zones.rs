//! fio's `zonemode=strided` (issue 27, zones): I/O in zones of `zonesize`
//! bytes, a skip of `zoneskip` bytes between zones, wrapping at the end of
//! the file; checked on the offsets a run writes in its iolog, against
//! fio's own where fio is installed.

use crate::util::{bench_json, cmd, have, skip, stderr, stdout};
use std::path::Path;

/// The offsets (KiB) of the reads of a fio v3 iolog (`time file action
/// offset length`), in order.
fn read_offsets_kib(log: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(log).expect("the iolog");
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "read").then(|| f[3].parse::<u64>().expect("an offset") / 1024)
        })
        .collect()
}

/// 512k file, bs=16k, zonesize=64k, zoneskip=128k: four reads in a zone,
/// then the next zone 192k on (0, 192k, 384k), back to 0 past the end; a
/// pass is 512k of reads (32), as fio's.
const JOB: &str = "[global]\nioengine=psync\nrw=read\nbs=16k\nsize=512k\nzonemode=strided\n\
                   zonesize=64k\nzoneskip=128k\n[z]\n";

fn strided_cycle(n: usize) -> Vec<u64> {
    [0, 16, 32, 48, 192, 208, 224, 240, 384, 400, 416, 432]
        .iter()
        .cycle()
        .take(n)
        .copied()
        .collect()
}

/// Run `bench --fio-job` on `text` in `dir`, writing its iolog to `log`.
fn run_job(dir: &Path, text: &str, log: &Path) -> std::process::Output {
    let job = dir.join("z.fio");
    std::fs::write(&job, text).expect("write the job file");
    cmd()
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.db"))
        .args(["bench", "--fio-job"])
        .arg(&job)
        .arg(dir.join("scratch"))
        .arg("--write-iolog")
        .arg(log)
        .output()
        .expect("run storlab")
}

/// The job file's reads are exactly the zones': sequential inside each
/// 64k zone, a skip of 128k between zones, wrapping at the file's end.
#[test]
fn a_strided_job_reads_zone_after_zone_with_the_skip_between() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("io.log");
    let out = run_job(d.path(), JOB, &log);
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    assert_eq!(read_offsets_kib(&log), strided_cycle(32));
}

/// Through flags: zonerange=32k under zonesize=64k reads each zone's range
/// twice before the skip of 32k + 96k (fio's setup_strided_zone_mode); the
/// record keeps the zone fields.
#[test]
fn a_zone_range_under_the_zone_size_is_read_again_before_the_skip() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("io.log");
    let log_s = log.to_str().unwrap();
    let v = bench_json(
        d.path(),
        &[
            "--rw=read",
            "--bs=16k",
            "--size=512k",
            "--zonemode=strided",
            "--zonesize=64k",
            "--zonerange=32k",
            "--zoneskip=96k",
            "--write-iolog",
            log_s,
        ],
    );
    let p = &v["phases"][0]["params"];
    assert_eq!(p["zone_size_bytes"], 64 << 10, "{p}");
    assert_eq!(p["zone_range_bytes"], 32 << 10, "{p}");
    assert_eq!(p["zone_skip_bytes"], 96 << 10, "{p}");
    let want: Vec<u64> = [
        0, 16, 0, 16, 128, 144, 128, 144, 256, 272, 256, 272, 384, 400, 384, 400,
    ]
    .iter()
    .cycle()
    .take(32)
    .copied()
    .collect();
    assert_eq!(read_offsets_kib(&log), want);
}

/// fio itself, on the same job file, reads the same offsets in the same
/// order.
#[test]
fn strided_offsets_are_fios() {
    if !have("fio") {
        skip(
            "strided_offsets_are_fios",
            "fio is not installed (Debian: fio)",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let job = d.path().join("z.fio");
    std::fs::write(&job, JOB).unwrap();
    let fio_log = d.path().join("fio.log");
    let st = std::process::Command::new("fio")
        .arg(format!("--directory={}", data.display()))
        .arg(format!("--write_iolog={}", fio_log.display()))
        .arg("--output=/dev/null")
        .arg(&job)
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run fio");
    assert!(st.success(), "fio failed on {JOB}");
    let ours = d.path().join("storlab.log");
    let out = run_job(d.path(), JOB, &ours);
    assert!(out.status.success(), "{}\n{}", stderr(&out), stdout(&out));
    let fio = read_offsets_kib(&fio_log);
    assert_eq!(fio.len(), 32, "fio's reads: {fio:?}");
    assert_eq!(read_offsets_kib(&ours), fio);
}

/// zonemode=zbd without a zonesize, strided without a zonesize or with a random pattern, and
/// an unknown mode are refused with the fix, exit 2.
#[test]
fn zone_mistakes_are_refused_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, want) in [
        (vec!["--zonemode=strided"], "needs --zonesize"),
        (
            vec!["--zonemode=strided", "--zonesize=64k", "--rw=randread"],
            "sequential patterns",
        ),
        (vec!["--zonemode=zbd"], "needs --zonesize"),
        (vec!["--zonemode=stripy"], "give none, strided or zbd"),
    ] {
        let mut a = vec!["bench", dir, "--size=512k", "--bs=16k", "--no-save"];
        a.extend_from_slice(&args);
        let out = cmd().args(&a).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    // zonemode=zbd runs (zbd.rs; tests in zbd.rs): a read of fresh zones
    // reads nothing, as fio's.
    let log = d.path().join("io.log");
    let zbd = JOB.replace("strided", "zbd").replace("zoneskip=128k\n", "");
    let out = run_job(d.path(), &zbd, &log);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read_offsets_kib(&log).is_empty());
}
