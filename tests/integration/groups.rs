//! Job groups (issue 23): several workloads in one phase, started at one
//! epoch. Exact figures on the null engine, the `sas-dd` profile as one
//! concurrent phase, refusals before anything is written, the JSON of an
//! ordinary phase unchanged, and groups surviving the store.

use crate::util::{bench_json, json, stderr, stdout, storlab, u};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The phase's read/write bytes are its jobs' and its groups'; each
/// group's bytes are its own jobs'; each group's rate is its bytes over its
/// own window; the phase's over the union window.
fn assert_identities(ph: &Value) {
    let jobs = ph["jobs"].as_array().unwrap();
    let groups = ph["groups"]["groups"].as_array().unwrap();
    for dir in ["read", "write"] {
        let by_jobs: u64 = jobs.iter().map(|j| u(&j[dir]["bytes"])).sum();
        let by_groups: u64 = groups.iter().map(|g| u(&g[dir]["bytes"])).sum();
        assert_eq!(u(&ph[dir]["bytes"]), by_jobs, "{dir}: phase vs jobs");
        assert_eq!(u(&ph[dir]["bytes"]), by_groups, "{dir}: phase vs groups");
    }
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    for g in groups {
        let first = u(&g["first_job"]) as usize;
        let n = u(&g["params"]["numjobs"]) as usize;
        let mine: u64 = jobs[first..first + n]
            .iter()
            .map(|j| u(&j["read"]["bytes"]) + u(&j["write"]["bytes"]))
            .sum();
        assert_eq!(u(&g["total"]["bytes"]), mine, "group {}", g["name"]);
        let el = u(&g["elapsed_ns"]);
        assert_eq!(el, u(&g["end_ns"]) - u(&g["start_ns"]));
        let rate = u(&g["total"]["bytes"]) as f64 / (el as f64 / 1e9);
        let got = f(&g["total"]["bw_bytes_per_s"]);
        assert!((got - rate).abs() <= 1e-6 * rate, "{got} vs {rate}");
        starts.push(u(&g["start_ns"]));
        ends.push(u(&g["end_ns"]));
    }
    let union = ends.iter().max().unwrap() - starts.iter().min().unwrap();
    assert_eq!(
        u(&ph["elapsed_ns"]),
        union,
        "the phase's window is the union"
    );
    let all = ends
        .iter()
        .min()
        .unwrap()
        .saturating_sub(*starts.iter().max().unwrap());
    assert_eq!(u(&ph["groups"]["all_moving_ns"]), all);
    let frac = all as f64 / union as f64;
    assert!((f(&ph["groups"]["overlap"]) - frac).abs() < 1e-9);
}

/// The issue's exact figures: a 6-job QD1 reader group and a 3-job QD1
/// writer group on a device with a fixed service time S give 6/S + 3/S
/// IOPS (±2 %), each group its own, overlapping ≥ 95 %, at S = 100 µs
/// (60,000 + 30,000) and at 10 ms (600 + 300). Each group also keeps its
/// jobs' depth (IOPS × the group's own mean latency = its numjobs, ±2 %).
/// On any machine: the null engine sleeps (never spins) and owes a slot
/// the kernel's wake-up lateness, so nine workers on two loaded cores meet
/// S (before, they spun: 1,773 + 814 IOPS at 100 µs, load 19), and the
/// worker is optimised in test builds too (a debug build's 3 µs per I/O
/// gave 58,149 + 28,119).
///
/// Each figure gets up to three runs: run beside the rest of the suite
/// (dozens of CPU-bound storlab processes on two cores) a run's nine
/// threads can be starved of CPU for most of its 2 s (56,916 IOPS seen
/// that way), which no device model can make up; every failed run is
/// printed, and three in a row fail the test.
#[test]
fn null_engine_groups_give_exactly_n_over_s_each_and_overlap() {
    for (service, s_ns) in [("100us", 100e3), ("10ms", 10e6)] {
        let mut failures = Vec::new();
        while let Err(why) = n_over_s_run(service, s_ns) {
            eprintln!(
                "null_engine_groups_give_exactly_n_over_s_each_and_overlap: run failed: {why}"
            );
            failures.push(why);
            assert!(failures.len() < 3, "three runs in a row: {failures:#?}");
        }
    }
}

/// One run of the 6 + 3 QD-1 groups at service time `service`: the
/// structure is asserted, the figures returned as an error.
fn n_over_s_run(service: &str, s_ns: f64) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--null-latency",
            service,
            "--size",
            "16M",
            "--runtime",
            "2s",
            "--time-based",
            "--group",
            "name=readers rw=read numjobs=6 iodepth=1",
            "--group",
            "name=writers rw=write numjobs=3 iodepth=1",
        ],
    );
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "one phase");
    let ph = &phases[0];
    assert_eq!(u(&ph["params"]["numjobs"]), 9);
    let groups = ph["groups"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["name"], "readers");
    assert_eq!(groups[1]["name"], "writers");
    assert_eq!(u(&groups[1]["first_job"]), 6);
    assert_identities(ph);
    assert_eq!(u(&groups[0]["write"]["ops"]), 0);
    assert_eq!(u(&groups[1]["read"]["ops"]), 0);
    for (g, dir, jobs) in [(&groups[0], "read", 6.0), (&groups[1], "write", 3.0)] {
        let iops = f(&g[dir]["iops"]);
        let want = jobs * 1e9 / s_ns;
        if (iops / want - 1.0).abs() > 0.02 {
            return Err(format!(
                "{service} {}: {iops} IOPS, want {want} ± 2 %",
                g["name"]
            ));
        }
        let lat = &g[dir]["lat_ns"];
        let depth = iops * f(&lat["mean"]) / 1e9;
        if (depth / jobs - 1.0).abs() > 0.02 {
            return Err(format!(
                "{service} {}: {iops} IOPS x {} ns = {depth}, want {jobs}",
                g["name"], lat["mean"]
            ));
        }
    }
    let overlap = f(&ph["groups"]["overlap"]);
    if overlap < 0.95 {
        return Err(format!("{service}: overlap {overlap}"));
    }
    Ok(())
}

/// The SAS dd test is one phase: 6 readers of laid-out files and 3
/// writers, started together; read and write bytes in the same phase, 9
/// streams, and the profile's per-group and aggregate figures. (Time-based
/// and without the end fsync here so both groups run the same second:
/// the writers' fsync would otherwise run on alone.)
#[test]
fn sas_dd_profile_runs_readers_and_writers_in_one_phase() {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(
        dir.path(),
        &[
            "--profile",
            "sas-dd",
            "--engine",
            "psync",
            "--size",
            "8m",
            "--runtime",
            "1s",
            "--time-based",
            "--no-end-fsync",
        ],
    );
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "one concurrent phase");
    let ph = &phases[0];
    assert!(u(&ph["read"]["bytes"]) > 0, "{}", ph["read"]);
    assert!(u(&ph["write"]["bytes"]) > 0, "{}", ph["write"]);
    assert_eq!(ph["jobs"].as_array().unwrap().len(), 9, "9 streams");
    let groups = ph["groups"]["groups"].as_array().unwrap();
    let shape: Vec<(String, u64, String)> = groups
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_string(),
                u(&g["params"]["numjobs"]),
                g["params"]["rw"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("dd-read".to_string(), 6, "read".to_string()),
            ("dd-write".to_string(), 3, "write".to_string())
        ]
    );
    for g in groups {
        assert_eq!(u(&g["params"]["bs"][0]["bs_bytes"]), 1 << 20);
        assert_eq!(g["params"]["cache"], "cold", "buffered");
    }
    assert_identities(ph);
    let overlap = f(&ph["groups"]["overlap"]);
    // Groups run one after the other would overlap 0; at once, close to 1.
    // A loaded machine starts a thread late now and then (0.83 seen at
    // load 15 on 2 cores), so 0.75 is the bar: still only a concurrent run
    // passes it.
    assert!(overlap >= 0.75, "overlap {overlap}");
    // The table's profile report: per group and aggregate, per core.
    let d = dir.path().to_str().unwrap();
    let out = storlab(&[
        "bench",
        d,
        "-q",
        "--profile",
        "sas-dd",
        "--engine",
        "null",
        "--size",
        "4m",
        "--no-save",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("group dd-read: 6 streams"), "{text}");
    assert!(text.contains("group dd-write: 3 streams"), "{text}");
    assert!(text.contains("dd: 9 streams, aggregate"), "{text}");
    assert!(text.contains("MB/s per core"), "{text}");
}

/// A group that finishes early leaves the others alone: the overlap says
/// so and the phase carries a warning.
#[test]
fn a_group_that_ends_early_is_shown_not_assumed_concurrent() {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(
        dir.path(),
        &[
            "--engine",
            "null",
            "--null-latency",
            "1ms",
            "--group",
            "name=long rw=read runtime=1s time_based",
            "--group",
            "name=short rw=write size=64k bs=4k",
        ],
    );
    let ph = &v["phases"][0];
    assert_identities(ph);
    let overlap = f(&ph["groups"]["overlap"]);
    // 16 writes of 1 ms against a 1 s reader.
    assert!(overlap < 0.2, "overlap {overlap}");
    let w = ph["warnings"].to_string();
    assert!(w.contains("moved data together for only"), "{w}");
    assert!(w.contains("group short finished first"), "{w}");
}

/// Bad groups are refused with exit 2, naming the problem, before any
/// file is made.
#[test]
fn bad_groups_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (groups, says) in [
        (vec!["rw=read colour=blue"], "colour"),
        (vec!["rw=read", "rw=write shared_file=1"], "shared_file"),
        (
            vec!["name=a rw=read", "name=a rw=write"],
            "two groups are named 'a'",
        ),
        (
            vec!["rw=read numjobs=4000", "rw=write numjobs=200"],
            "4200 jobs",
        ),
        (vec!["rw=sideways"], "sideways"),
    ] {
        let mut args = vec!["bench", d, "--engine", "null", "--no-save", "-q"];
        for g in &groups {
            args.extend_from_slice(&["--group", g]);
        }
        let out = storlab(&args);
        assert_eq!(out.status.code(), Some(2), "{groups:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{groups:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{groups:?}: files were made: {left:?}");
    }
    // Total buffers beyond memory: refused before any file exists.
    let out = storlab(&[
        "bench",
        d,
        "--engine",
        "null",
        "--no-save",
        "-q",
        "--group",
        "rw=read numjobs=2000 bs=64m iodepth=64",
        "--group",
        "rw=write",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("memory"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// An ordinary phase's JSON is unchanged: no `groups` anywhere.
#[test]
fn an_ordinary_phase_has_no_groups_in_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let v = bench_json(
        dir.path(),
        &["--engine", "null", "--rw", "read", "--size", "1m"],
    );
    let ph = &v["phases"][0];
    assert!(ph.get("groups").is_none(), "{ph}");
    assert!(ph["params"].get("groups").is_none(), "{}", ph["params"]);
}

/// A grouped phase is saved and comes back from the store whole.
#[test]
fn groups_survive_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = storlab(&[
        "bench",
        target.to_str().unwrap(),
        "-q",
        "--db",
        db,
        "--engine",
        "null",
        "--size",
        "1m",
        "--group",
        "name=r rw=read",
        "--group",
        "name=w rw=write numjobs=2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = storlab(&["export", "--db", db, "latest", "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let v: Value = serde_json::from_str(&text).unwrap();
    let s = v.to_string();
    assert!(s.contains("\"all_moving_ns\""), "{s}");
    assert!(s.contains("\"first_job\":1"), "{s}");
    // CSV: the phase's rows, then a row per group and direction.
    let out = storlab(&["export", "--db", db, "latest", "--output-format", "csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    let phase_col = |line: &str| line.split(',').nth(7).unwrap_or("").to_string();
    let labels: Vec<String> = csv.lines().skip(1).map(phase_col).collect();
    assert!(labels.contains(&"1-groups/r".to_string()), "{csv}");
    assert!(labels.contains(&"1-groups/w".to_string()), "{csv}");
    // compare against itself pairs the groups.
    let out = storlab(&["compare", "--db", db, "latest", "--baseline", "latest"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("1-groups/w"), "{}", stdout(&out));
}

/// A fio job file with two concurrent jobs and one `stonewall` (refused
/// before: "fio would run this job at the same time as the one before"):
/// storlab runs the two jobs as the groups of one phase and the third as
/// the next phase, and fio's own JSON of the same file puts the jobs in the
/// same groups and moves the same bytes, job for job.
#[test]
fn a_concurrent_fio_job_file_runs_as_groups_like_fio() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("mix.fio");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nsize=4m\nbs=64k\n\n\
         [reader]\nrw=read\n\n[writer]\nrw=write\n\n[after]\nstonewall\nrw=randread\nbs=4k\n",
    )
    .unwrap();
    let out = storlab(&[
        "bench",
        "--fio-job",
        job.to_str().unwrap(),
        "--directory",
        data.to_str().unwrap(),
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(
        phases.len(),
        2,
        "two concurrent jobs, then the stonewalled one"
    );
    let ph = &phases[0];
    assert_eq!(ph["params"]["name"], "reader+writer");
    assert_identities(ph);
    let groups = ph["groups"]["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["reader", "writer"]);
    // storlab's bytes per job (fio job = storlab group).
    let mut storlab_bytes = vec![
        (
            "reader".to_string(),
            u(&groups[0]["read"]["bytes"]),
            u(&groups[0]["write"]["bytes"]),
        ),
        (
            "writer".to_string(),
            u(&groups[1]["read"]["bytes"]),
            u(&groups[1]["write"]["bytes"]),
        ),
        (
            "after".to_string(),
            u(&phases[1]["read"]["bytes"]),
            u(&phases[1]["write"]["bytes"]),
        ),
    ];
    assert_eq!(storlab_bytes[0].1, 4 << 20);
    assert_eq!(storlab_bytes[1].2, 4 << 20);
    assert_eq!(storlab_bytes[2].1, 4 << 20);
    if !crate::util::have("fio") {
        crate::util::skip(
            "a_concurrent_fio_job_file_runs_as_groups_like_fio",
            "fio is not installed: the comparison with fio's own JSON is not made",
        );
        return;
    }
    let fio_dir = d.path().join("fio");
    std::fs::create_dir(&fio_dir).unwrap();
    let out = std::process::Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--directory={}", fio_dir.display()))
        .arg(&job)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let fio: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("fio JSON ({e}): {}", stdout(&out)));
    let jobs = fio["jobs"].as_array().unwrap();
    let mut fio_bytes: Vec<(String, u64, u64)> = jobs
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                u(&j["read"]["io_bytes"]),
                u(&j["write"]["io_bytes"]),
            )
        })
        .collect();
    fio_bytes.sort();
    storlab_bytes.sort();
    assert_eq!(storlab_bytes, fio_bytes, "job for job, the same bytes");
    // fio's reporting groups are storlab's phases.
    let gid = |name: &str| {
        jobs.iter()
            .find(|j| j["jobname"] == name)
            .map(|j| u(&j["groupid"]))
            .unwrap()
    };
    assert_eq!(gid("reader"), gid("writer"), "one group in fio too");
    assert_ne!(gid("reader"), gid("after"));
}

/// `sweep --vary group.NAME.KEY` changes that group alone: "read latency
/// as background writers are added" is one command.
#[test]
fn a_sweep_varies_one_groups_option() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("bg.toml");
    std::fs::write(
        &job,
        "[global]\nengine = \"null\"\nsize = \"1m\"\nruntime = \"0.2s\"\ntime_based = true\n\
         [[phase]]\nname = \"under-load\"\n\
         [[phase.group]]\nname = \"reads\"\nrw = \"randread\"\nnumjobs = 2\n\
         [[phase.group]]\nname = \"w\"\nrw = \"write\"\n",
    )
    .unwrap();
    let t = dir.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let out = storlab(&[
        "sweep",
        t.to_str().unwrap(),
        "-q",
        "--job",
        job.to_str().unwrap(),
        "--vary",
        "group.w.numjobs=1,3",
        "--no-save",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, writers) in points.iter().zip([1, 3]) {
        let ph = &p["phases"][0];
        let g = ph["groups"].as_array().unwrap();
        assert_eq!(g[0]["name"], "reads");
        assert_eq!(u(&g[0]["numjobs"]), 2, "the readers unchanged");
        assert_eq!(u(&g[1]["numjobs"]), writers);
        assert!(g[0]["lat_p99_ns"].as_u64().is_some(), "{}", g[0]);
        assert!(f(&ph["overlap"]) > 0.0);
    }
    // A group that does not exist is named.
    let out = storlab(&[
        "sweep",
        t.to_str().unwrap(),
        "-q",
        "--job",
        job.to_str().unwrap(),
        "--vary",
        "group.writers.numjobs=1,3",
        "--no-save",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let e = format!("{}{}", stderr(&out), stdout(&out));
    assert!(
        e.contains("no job group is named 'writers'") && e.contains("reads, w"),
        "{e}"
    );
}

/// Under mpirun, job groups are refused once, naming the phase, with exit
/// 2 and nothing left (`--group-ranks`, groups on disjoint sets of ranks,
/// is not implemented). Before the refusal at planning, rank 0 made the
/// target's files and the run stopped at the grouped phase without naming
/// it.
#[cfg(feature = "mpi")]
#[test]
fn groups_under_mpi_are_refused_before_anything_is_made() {
    use crate::util::{cmd, have, is_root, skip};
    if !have("mpirun") {
        skip(
            "groups_under_mpi_are_refused_before_anything_is_made",
            "mpirun not found (Debian: openmpi-bin libopenmpi-dev)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = cmd();
    let mut c = std::process::Command::new("timeout");
    c.args(["60", "mpirun"]);
    if is_root() {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-np", "4"])
        .arg(crate::util::storlab_bin())
        .args([
            "bench",
            dir.path().to_str().unwrap(),
            "--engine",
            "null",
            "--no-save",
            "--group",
            "rw=read",
            "--group",
            "rw=write",
        ]);
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let o = c.stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("phase 1-groups: job groups in a multi-process (MPI) run need their ranks")
            .count(),
        1,
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
