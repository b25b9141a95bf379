//! fio and IOR habits end to end: the application's time series, steady
//! state, `--repeat`, fio's `loops`/`thinktime`/`bssplit` byte counts, the
//! "too short to trust" flag and fio job files.

use crate::util::{bench_json, json, stderr, stdout, storlab, u};
use serde_json::Value;

#[test]
fn series_points_add_up_to_the_phase_and_match_a_known_device() {
    let dir = tempfile::tempdir().unwrap();
    // The null engine with a 200 µs service time at QD 1: 5,000 IOPS.
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--null-latency",
            "200us",
            "--rw",
            "randread",
            "--size",
            "16M",
            "--runtime",
            "2s",
            "--time-based",
            "--log-interval",
            "250ms",
        ],
    );
    let ph = &v["phases"][0];
    let s = &ph["series"];
    assert_eq!(u(&s["interval_ns"]), 250_000_000);
    let points = s["points"].as_array().unwrap();
    assert!((8..=10).contains(&points.len()), "{} points", points.len());
    // The device did work: 2 s at up to 5,000 IOPS, and the full intervals
    // all saw I/O. How much depends on the machine: under the full suite
    // beside other builds a QD-1 thread is descheduled for tens of ms at a
    // time (1,512 ops, p99 31 ms, seen at load 15), so the count is only
    // held to a tenth; the identities below hold at any speed.
    assert!(u(&ph["total"]["ops"]) > 1_000, "{}", ph["total"]);
    let full: Vec<&Value> = points
        .iter()
        .filter(|p| u(&p["span_ns"]) == 250_000_000)
        .collect();
    assert!(full.len() >= 6, "{} full intervals", full.len());
    assert!(
        full.iter().all(|p| u(&p["total"]["ops"]) > 0),
        "an idle interval"
    );
    let sum = |k: &str| points.iter().map(|p| u(&p["total"][k])).sum::<u64>();
    assert_eq!(sum("ops"), u(&ph["total"]["ops"]));
    assert_eq!(sum("bytes"), u(&ph["total"]["bytes"]));
    let span: u64 = points.iter().map(|p| u(&p["span_ns"])).sum();
    assert_eq!(span, u(&ph["elapsed_ns"]), "the points tile the window");
    let mut t_prev = 0;
    let mut done = 0.0;
    for p in points {
        let t = u(&p["t_ns"]);
        assert!(t > t_prev, "time goes forward");
        t_prev = t;
        let span = u(&p["span_ns"]);
        let iops = p["total"]["iops"].as_f64().unwrap();
        let ops = u(&p["total"]["ops"]) as f64;
        assert!((iops - ops * 1e9 / span as f64).abs() < 1e-6 * iops.max(1.0));
        // A 200 µs device at QD 1 never runs ahead of its schedule: by the
        // end of each interval at most t / 200 µs I/Os (+1) are done. (An
        // interval after the thread was kept off the CPU may beat 5,000
        // IOPS: the null engine's deadline schedule owes the slot the
        // kernel's wake-up lateness, up to 100 ms, so it catches up.)
        done += ops;
        assert!(done <= t as f64 / 200e3 + 1.0, "{done} I/Os by {t} ns");
        if span == 250_000_000 && ops > 0.0 {
            // Little's law holds within the interval (at most one I/O in
            // flight, plus the part of the first I/O's latency that lay in
            // the interval before).
            let lat = &p["read"]["lat_ns"];
            let depth = iops * lat["mean"].as_f64().unwrap() / 1e9;
            let edge = u(&lat["max"]) as f64 / span as f64;
            assert!(depth <= 1.0 + edge + 0.01, "interval depth {depth}, {lat}");
        }
    }
    // No mean beats the service time: what a late wake-up is owed comes
    // out of that lateness, never out of the device's time.
    let mean = ph["read"]["lat_ns"]["mean"].as_f64().unwrap();
    assert!(mean >= 0.99 * 200e3, "mean latency {mean}");
}

#[test]
fn steadystate_stops_a_flat_phase_early() {
    let dir = tempfile::tempdir().unwrap();
    // Paced at 2,000 IOPS: flat even on a loaded machine (a late I/O is
    // caught up at once), so the rule is met after the first full window.
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rate-iops",
            "2000",
            "--rw",
            "randread",
            "--size",
            "16M",
            "--runtime",
            "30s",
            "--time-based",
            "--log-interval",
            "500ms",
            "--steadystate",
            "iops:25%",
            "--steadystate-duration",
            "2s",
        ],
    );
    let ph = &v["phases"][0];
    let steady = &ph["series"]["steady"];
    assert_eq!(steady["reached"], true, "{steady}");
    let elapsed = u(&ph["elapsed_ns"]);
    let at = u(&steady["at_ns"]);
    assert!(at >= 2_000_000_000, "not before one window: {at}");
    assert!(elapsed < 25_000_000_000, "stopped after {elapsed} ns");
    // The phase stops once the interval that met the rule is closed. The
    // measured window ends at the last completion, which may precede that
    // close by the pacing gap (0.5 ms at 2,000 IOPS) plus a loaded
    // machine's wake-up delay: 10 ms allowed.
    assert!(
        elapsed + 10_000_000 >= at && elapsed < at + 1_500_000_000,
        "steady at {at} ns, stopped at {elapsed} ns"
    );
    assert!(steady["last_value_pct"].as_f64().unwrap() <= 25.0);
    assert_eq!(ph["interrupted"], false);
}

#[test]
fn loops_bssplit_and_thinktime_move_what_fio_moves() {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(
        dir.path(),
        &[
            "--engine", "null", "--rw", "read", "--size", "1M", "--bs", "4k", "--loops", "3",
        ],
    );
    assert_eq!(u(&v["phases"][0]["total"]["bytes"]), 3 << 20);
    // A random mix of block sizes moves exactly --size bytes per pass.
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rw",
            "randrw",
            "--bssplit",
            "4k/50:64k/50",
            "--size",
            "8M",
        ],
    );
    let ph = &v["phases"][0];
    assert_eq!(u(&ph["total"]["bytes"]), 8 << 20);
    // So does a sequential one: a pass that reaches 60 KiB of 64 KiB and
    // draws 8 KiB ends on a 4 KiB I/O instead of skipping the tail.
    let seq = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rw",
            "read",
            "--bssplit",
            "8k/50:4k/50",
            "--size",
            "64k",
            "--loops",
            "4",
        ],
    );
    assert_eq!(u(&seq["phases"][0]["total"]["bytes"]), 4 * (64 << 10));
    let w = ph["warnings"].to_string();
    assert!(w.contains("too short to trust"), "{w}");
    // thinktime (fio: a bare number is microseconds): 100 I/Os × 2 ms.
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--rw",
            "read",
            "--size",
            "400k",
            "--bs",
            "4k",
            "--thinktime",
            "2000",
            "--null-latency",
            "100us",
        ],
    );
    let e = u(&v["phases"][0]["elapsed_ns"]);
    assert!(
        e >= 99 * 2_000_000,
        "100 I/Os with 2 ms think time took {e} ns"
    );
    // The depth is low on purpose: no warning blames storlab's CPU cost;
    // the depth warning names the think time as its cause (issue 22).
    let achieved = v["phases"][0]["depth"]["achieved"].as_f64().unwrap();
    assert!(achieved < 0.2, "{achieved}");
    let w = v["phases"][0]["warnings"].to_string();
    assert!(
        w.contains("in flight") && w.contains("--thinktime 2000 µs"),
        "{w}"
    );
    assert!(!w.contains("CPU"), "{w}");
}

#[test]
fn nrfiles_above_one_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = storlab(&[
        "bench",
        dir.path().to_str().unwrap(),
        "--engine",
        "null",
        "--rw",
        "read",
        "--nrfiles",
        "4",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nrfiles 4"), "{}", stderr(&out));
}

#[test]
fn repeats_are_saved_as_runs_of_one_group_with_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = storlab(&[
        "bench",
        data.to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "50us",
        "--rw",
        "randread",
        "--size",
        "4M",
        "--repeat",
        "3",
        "--db",
        db.to_str().unwrap(),
        "--output-format",
        "json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let group = v["repeat_group"].as_str().unwrap();
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["repeat"]["group"], group);
        assert_eq!(u(&r["repeat"]["index"]), i as u64 + 1);
        assert_eq!(u(&r["repeat"]["count"]), 3);
    }
    let s = &v["summary"][0]["iops"];
    assert_eq!(u(&s["n"]), 3);
    let vals: Vec<f64> = runs
        .iter()
        .map(|r| r["phases"][0]["total"]["iops"].as_f64().unwrap())
        .collect();
    let mean = vals.iter().sum::<f64>() / 3.0;
    assert!((s["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(s["min"].as_f64().unwrap(), min);
    // Stored as three runs carrying the group tag.
    let out = storlab(&["runs", "--db", db.to_str().unwrap()]);
    let listed = stdout(&out);
    assert_eq!(
        listed.matches(&format!("repeat_group={group}")).count(),
        3,
        "{listed}"
    );
    // compare's noise rule sees them as replicates of one configuration.
    let ids: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    let out = storlab(&[
        "compare",
        "--db",
        db.to_str().unwrap(),
        "--baseline",
        &ids[0],
        &ids[1],
        &ids[2],
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(r#""kind":"replicates""#) || text.contains(r#""kind": "replicates""#),
        "{text}"
    );
}

#[test]
fn verify_report_checks_the_checksum_first_and_lists_one_mismatch_per_line() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("v.dat");
    let f = file.to_str().unwrap();
    let common = ["--bs=16k", "--size=1M", "--verify", "--cache=cold", "-q"];
    let mut a = vec!["bench", f, "--rw=write", "--keep", "--no-save"];
    a.extend_from_slice(&common);
    let out = storlab(&a);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut data = std::fs::read(&file).unwrap();
    // A flipped bit in unit 2's offset field, and in the payload of units 7 and 9.
    data[2 * 4096 + 8] ^= 0x01;
    data[7 * 4096 + 2000] ^= 0x10;
    data[9 * 4096 + 3000] ^= 0x04;
    std::fs::write(&file, &data).unwrap();
    let mut a = vec!["bench", f, "--rw=read", "--allow-destroy", "--no-save"];
    a.extend_from_slice(&common);
    let out = storlab(&a);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  mismatch in"))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (line, off) in lines.iter().zip([2, 7, 9]) {
        assert!(line.contains(&format!("offset {}:", off * 4096)), "{line}");
        assert!(line.contains("checksum mismatch"), "{line}");
    }
}

#[test]
fn fio_command_line_spellings() {
    let d = tempfile::tempdir().unwrap();
    let out = storlab(&[
        "bench",
        "--directory",
        d.path().to_str().unwrap(),
        "--name=fio-style",
        "--ioengine=libaio",
        "--direct=1",
        "--rw=randread",
        "--bs=4k",
        "--size=32M",
        "--iodepth=8",
        "--group_reporting",
        "--loops=2",
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let ph = &v["phases"][0];
    assert_eq!(ph["params"]["name"], "fio-style");
    assert_eq!(ph["params"]["engine"], "libaio");
    assert_eq!(ph["params"]["cache"], "direct");
    assert_eq!(u(&ph["total"]["bytes"]), 64 << 20, "two loops of 32 MiB");
    // libaio keeps the depth it was asked for (Little's law on its own
    // figures). 16k I/Os, not 2k: a worker descheduled for a few ms at
    // the edge of a 0.1 s window moved the two figures 9 % apart at load 20.
    let depth = &ph["depth"];
    assert_eq!(u(&depth["requested"]), 8);
    let (a, l) = (
        depth["achieved"].as_f64().unwrap(),
        depth["littles_law_depth"].as_f64().unwrap(),
    );
    assert!(
        (a - l).abs() / a < 0.05,
        "achieved {a} vs IOPS × latency {l}"
    );
    let out = storlab(&[
        "bench",
        "--filename",
        d.path().to_str().unwrap(),
        "--rw=read",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--directory"), "{}", stderr(&out));
}

#[test]
fn fio_job_files_run_with_fio_units_and_refuse_what_they_cannot_run() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("site.fio");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        &job,
        format!(
            "; two phases, fio style\n[global]\nioengine=libaio\ndirect=1\nsize=2m\n\
             directory={}\ngroup_reporting\n\n[seq-write]\nrw=write\nbs=64k\niodepth=4\n\n\
             [rand-read]\nstonewall\nrw=randread\nbs=4k\niodepth=8\n",
            data.display()
        ),
    )
    .unwrap();
    let out = storlab(&[
        "bench",
        "--fio-job",
        job.to_str().unwrap(),
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["params"]["name"], "seq-write");
    assert_eq!(phases[1]["params"]["engine"], "libaio");
    // fio's 2m is 2 MiB; fio's default end_fsync=0 is kept.
    assert_eq!(u(&phases[0]["write"]["bytes"]), 2 << 20);
    assert_eq!(phases[0]["params"]["end_fsync"], false);
    assert_eq!(u(&phases[1]["read"]["bytes"]), 2 << 20);
    assert!(v["target"]["path"].as_str().unwrap().contains("data"));

    // fio's units: with the default kb_base=1024, 4KiB is 4000 bytes, not a block size.
    std::fs::write(&job, "[j]\nrw=read\nsize=1m\nbs=4KiB\n").unwrap();
    let out = storlab(&["bench", "--fio-job", job.to_str().unwrap(), "--no-save"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("4000"), "{}", stderr(&out));
    // An option storlab cannot run is refused by name and line.
    // (zonemode=zbd runs since issue 27's zbd work: `atomic` stays refused.)
    std::fs::write(&job, "[j]\nrw=read\nsize=1m\natomic=1\n").unwrap();
    let out = storlab(&["bench", "--fio-job", job.to_str().unwrap(), "--no-save"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("site.fio:4") && e.contains("'atomic'"), "{e}");
    // Jobs fio would run at the same time run together as one phase of
    // groups (they were refused before): see groups.rs.
}

#[test]
fn an_existing_file_is_used_whole_and_a_verified_cold_pass_is_not_called_cached() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("existing.dat");
    std::fs::write(&file, vec![7u8; 3 << 20]).unwrap();
    let f = file.to_str().unwrap();
    let base = [
        "--rw=read",
        "--bs=4k",
        "--engine=psync",
        "--no-save",
        "--output-format=json",
        "-q",
    ];
    let mut a = vec!["bench", f, "--cache=cold"];
    a.extend_from_slice(&base);
    let out = storlab(&a);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let ph = &v["phases"][0];
    assert_eq!(
        u(&ph["params"]["size_bytes"]),
        3 << 20,
        "fio: the file's size"
    );
    assert_eq!(u(&ph["total"]["bytes"]), 3 << 20);
    // One pass over files whose eviction was verified cannot be served from
    // the page cache: no such warning, though the file is far under 2× RAM.
    assert_eq!(ph["cache"]["verified"], true, "{}", ph["cache"]);
    assert_eq!(ph["cache"]["may_be_cached"], false);
    let all = format!("{}{}", v["warnings"], ph["warnings"]);
    assert!(!all.contains("page cache"), "{all}");
    assert!(all.contains("too short to trust"), "{all}");
    // A time-based cold run re-reads blocks: the warning stays.
    let mut a = vec!["bench", f, "--cache=cold", "--runtime=1s", "--time-based"];
    a.extend_from_slice(&base);
    let out = storlab(&a);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let all = format!("{}{}", v["warnings"], v["phases"][0]["warnings"]);
    assert!(all.contains("page cache"), "{all}");
}
