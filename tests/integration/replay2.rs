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

/// A trace of one file: a 4 KiB write at 0, a write at `last` (its end is
/// the trace's extent), a read at 4 KiB.
fn device_trace(dir: &Path, last: u64) -> std::path::PathBuf {
    let p = dir.join(format!("dev-{last}.iolog"));
    std::fs::write(
        &p,
        format!(
            "fio version 3 iolog\n0 /data/f add\n0 /data/f open\n10 /data/f write 0 4096\n\
             20 /data/f write {last} 4096\n30 /data/f read 4096 4096\n40 /data/f close\n"
        ),
    )
    .expect("trace");
    p
}

/// Whether the 4 KiB at `offset` of `dev` are all zero.
fn zeroed(dev: &Path, offset: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(dev).expect("open device");
    let mut b = vec![0u8; 4096];
    f.read_exact_at(&mut b, offset).expect("read device");
    b.iter().all(|&x| x == 0)
}

/// A block device TARGET: a trace that writes needs --allow-destroy; an
/// offset beyond the device's end is refused with its record before any
/// I/O; with --allow-destroy the trace's writes land at their offsets.
#[test]
fn a_trace_replays_onto_a_block_device_with_bench_s_checks() {
    const T: &str = "a_trace_replays_onto_a_block_device_with_bench_s_checks";
    if !crate::util::needs_root_and(T, &["losetup"]) {
        return;
    }
    let Some(lo) = crate::util::LoopDev::new(8 << 20) else {
        return;
    };
    let d = tempfile::tempdir().expect("tempdir");
    let db = d.path().join("r.db");
    let dev = lo.path();
    let replay = |trace: &Path, extra: &[&str]| {
        let mut c = cmd();
        c.args(["replay", s(trace), &dev, "--db", s(&db)])
            .args(extra);
        c.output().expect("run")
    };
    let last = (8 << 20) - 4096;
    let trace = device_trace(d.path(), last);

    let out = replay(&trace, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow-destroy"), "{}", stderr(&out));
    assert!(zeroed(&lo.dev, 0), "nothing written");
    assert!(!db.exists(), "refused before the store is opened");

    let beyond = device_trace(d.path(), last + 1);
    let out = replay(&beyond, &["--allow-destroy"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("record 3") && err.contains("beyond the end of"),
        "{err}"
    );
    assert!(zeroed(&lo.dev, 0), "nothing written");

    let out = replay(&trace, &["--allow-destroy", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(u(&v["phases"][0]["write"]["bytes"]), 8192);
    assert_eq!(u(&v["phases"][0]["read"]["bytes"]), 4096);
    assert_eq!(v["target"]["kind"], "block_device");
    assert!(!zeroed(&lo.dev, 0), "the write at 0 landed");
    assert!(!zeroed(&lo.dev, last), "the last write landed");
    assert!(zeroed(&lo.dev, 8192), "nothing between");
}

/// A device something is built on (here: a loop device over it, with a
/// mounted file system) is refused even with --allow-destroy, by bench's
/// own walk of the device stack.
#[test]
fn replay_never_writes_a_device_another_is_built_on() {
    const T: &str = "replay_never_writes_a_device_another_is_built_on";
    if !crate::util::needs_root_and(T, &["losetup", "mkfs.ext4", "mount", "umount"]) {
        return;
    }
    let Some(a) = crate::util::LoopDev::new(32 << 20) else {
        return;
    };
    let d = tempfile::tempdir().expect("tempdir");
    let mut undo = crate::util::loopdev::Stack::new();
    let b = undo.attach(&a.dev, &[]).expect("loop over the loop");
    let mnt = d.path().join("mnt");
    undo.ext4_mounted(&b, &mnt).expect("ext4 mounted");
    let trace = device_trace(d.path(), 4096);
    let before = std::fs::read(&a.dev).expect("read device");
    let out = cmd()
        .args(["replay", s(&trace), &a.path(), "--allow-destroy"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("backs {b}")) && err.contains("mounted"),
        "{err}"
    );
    assert!(
        std::fs::read(&a.dev).expect("read device") == before,
        "nothing written"
    );
}

fn darshan(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/darshan")
        .join(name)
}

/// A replay stores its per-file figures (adding up to the phase's), the
/// time in I/O here against the trace's, and the two series the timeline
/// chart draws; `report` draws that chart for the run and lists its id.
#[test]
fn a_replay_stores_per_file_figures_io_time_and_its_timeline_chart() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let db = d.path().join("r.db");
    let trace = darshan("dxt.darshan");
    let out = cmd()
        .args([
            "replay",
            s(&trace),
            s(&target),
            "--speed",
            "max",
            "--db",
            s(&db),
        ])
        .arg("--json")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let r = &v["replay"];
    let files = r["files"].as_array().expect("per-file figures");
    assert!(files.len() > 1, "{r}");
    let sum = |k: &str| files.iter().map(|f| u(&f[k])).sum::<u64>();
    let p = &v["phases"][0];
    assert_eq!(sum("bytes_read"), u(&p["read"]["bytes"]));
    assert_eq!(sum("bytes_written"), u(&p["write"]["bytes"]));
    assert_eq!(sum("reads") + sum("writes"), u(&p["total"]["ops"]));
    assert!(
        files
            .iter()
            .all(|f| f["name"].as_str().is_some_and(|n| !n.is_empty()))
    );
    // Darshan records durations: the I/O time here against the trace's.
    let (here, traced) = (u(&r["io_ns"]), u(&r["trace_io_ns"]));
    let pct = r["io_time_change_pct"].as_f64().expect("change");
    assert!((pct - (here as f64 / traced as f64 - 1.0) * 100.0).abs() < 1e-6);
    // The series: every byte replayed and recorded is in one of them.
    let total = |k: &str| r[k].as_array().expect(k).iter().map(u).sum::<u64>();
    let bytes = u(&p["read"]["bytes"]) + u(&p["write"]["bytes"]);
    assert_eq!(total("replayed_bytes"), bytes);
    assert_eq!(total("recorded_bytes"), bytes);

    // The human table names the files and the I/O time change.
    let out = cmd()
        .args([
            "replay",
            s(&trace),
            s(&target),
            "--speed",
            "max",
            "--db",
            s(&db),
        ])
        .output()
        .expect("run");
    let text = stdout(&out);
    assert!(text.contains("this system would have spent"), "{text}");
    assert!(text.contains("in the trace  file"), "{text}");

    let runs = storlab(&["runs", "--db", s(&db), "--json"]);
    let runs: Value = serde_json::from_str(&stdout(&runs)).expect("runs JSON");
    let id = runs
        .as_array()
        .and_then(|a| a.first())
        .and_then(|r| r["id"].as_i64())
        .expect("a run id");
    let svg = d.path().join("replay.svg");
    let out = storlab(&[
        "report",
        &id.to_string(),
        "--db",
        s(&db),
        "--chart",
        &format!("replay-{id}"),
        "-o",
        s(&svg),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = std::fs::read_to_string(&svg).expect("chart written");
    assert!(svg.contains("recorded (the trace)"), "recorded series");
    assert!(svg.contains("replayed (this system)"), "replayed series");
    let help = storlab(&["report", "--help"]);
    assert!(
        stdout(&help).contains("replay-<run id>"),
        "the chart id is listed"
    );
}

/// At the recorded timing, an operation whose time has come starts even
/// while the rank's previous one (a 64 MiB read) is still running: its
/// start lag is not the previous operation's duration.
#[test]
fn a_slow_operation_does_not_delay_the_next_ones_start() {
    let d = tempfile::tempdir().expect("tempdir");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let big = 64 << 20;
    let trace = d.path().join("slow.iolog");
    std::fs::write(
        &trace,
        format!(
            "fio version 3 iolog\n0 /app/f add\n0 /app/f open\n0 /app/f read 0 {big}\n\
             1000 /app/f read 0 4096\n2000 /app/f read 4096 4096\n3000 /app/f close\n"
        ),
    )
    .expect("trace");
    let db = d.path().join("r.db");
    let out = cmd()
        .args(["replay", s(&trace), s(&target), "--db", s(&db), "--json"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let slowest = u(&v["phases"][0]["total"]["lat_ns"]["max"]);
    let lag = u(&v["replay"]["lag_ns"]["max"]);
    assert!(
        lag < slowest / 2,
        "the later reads waited for the 64 MiB one: start lag {lag} ns, its latency {slowest} ns"
    );
    assert_eq!(u(&v["phases"][0]["read"]["ops"]), 3);
}
