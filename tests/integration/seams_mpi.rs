//! IOR/MPI users' habits under a real `mpirun` (built with `--features
//! mpi`): rank 0 alone writes, the other ranks' warnings come once,
//! naming the ranks, after the tables.

use crate::util::{cmd, stderr, stdout, storlab_bin};
use std::ffi::OsStr;
use std::process::Output;

/// `mpirun -np N storlab ARGS` with the test environment, bounded by 120 s.
fn mpirun(np: u32, args: &[&str]) -> Option<Output> {
    let bin = storlab_bin();
    let launch = std::iter::once(bin.as_os_str()).chain(args.iter().map(OsStr::new));
    crate::util::mpirun("seams_mpi", np, 120, launch)
}

/// Four ranks each too short to trust: rank 0 prints the warning once
/// ("…: ranks 0–3"), not once per rank with its node; the
/// tables (the phase table and the cluster table) are on stdout together,
/// with no warning among them. (Each rank's copy was printed, as "rank 1
/// (host): …", and the warnings came between the two tables.)
#[test]
fn other_ranks_warnings_are_printed_once_by_rank_0_naming_the_ranks() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let Some(out) = mpirun(
        4,
        &[
            "bench",
            dir,
            "--engine=null",
            "--rw=write",
            "--bs=4k",
            "--size=1M",
            "--no-save",
        ],
    ) else {
        return;
    };
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    let short: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("too short to trust"))
        .collect();
    assert_eq!(short.len(), 1, "{e}");
    assert!(short[0].ends_with(": ranks 0–3"), "{e}");
    assert!(!e.contains("rank 1 ("), "{e}");
    assert!(!o.contains("warning"), "{o}");
    let tables = o.matches('┌').count();
    assert!(tables >= 2, "the phase table and the cluster table: {o}");
}

/// `-q` under MPI prints one screen: a line per phase with the aggregate,
/// first / last done, the rank spread and the slowest rank, instead of the
/// phase table and the whole cluster table. (-q only hid the progress.)
#[test]
fn quiet_under_mpi_prints_a_one_screen_summary() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        "[global]\nbs = \"64k\"\nsize = \"2M\"\nengine = \"null\"\n\
         [[phase]]\nname = \"w\"\nrw = \"write\"\n[[phase]]\nname = \"r\"\nrw = \"read\"\n",
    )
    .unwrap();
    let dir = d.path().join("w");
    std::fs::create_dir(&dir).unwrap();
    let Some(out) = mpirun(
        4,
        &[
            "bench",
            dir.to_str().unwrap(),
            "--job",
            job.to_str().unwrap(),
            "--no-save",
            "-q",
        ],
    ) else {
        return;
    };
    let o = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{o}\n{}", stderr(&out));
    assert!(o.contains("first / last done MB/s"), "{o}");
    assert!(
        !o.contains("each rank timed itself"),
        "the full cluster table: {o}"
    );
    assert_eq!(o.matches('┌').count(), 1, "one table: {o}");
    assert!(o.lines().count() <= 12, "one screen: {o}");
    for phase in ["│ w ", "│ r "] {
        assert!(o.contains(phase), "{phase}: {o}");
    }
}

/// `--repeat N` under MPI (IOR's `-i N`): the job N times, each a stored
/// run tagged repeat_group, then IOR's summary: Max/Min/Mean/StdDev in
/// MiB/s and MB/s and the ops/s; with JSON output one document of every
/// run and the summary. (It was refused: "--repeat 3: not under MPI yet".)
#[test]
fn repeat_under_mpi_runs_n_times_and_prints_iors_summary() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("w");
    std::fs::create_dir(&dir).unwrap();
    let db = d.path().join("r.db");
    let (dir, db) = (dir.to_str().unwrap(), db.to_str().unwrap());
    let base = [
        "bench",
        dir,
        "--engine=null",
        "--rw=write",
        "--bs=64k",
        "--size=4M",
        "--repeat",
        "3",
        "-q",
        "--db",
        db,
    ];
    let Some(out) = mpirun(2, &base) else {
        return;
    };
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    for want in [
        "Repeat 3 of 3",
        "Summary of all repetitions",
        "Max(MiB/s)",
        "StdDev(MB/s)",
        "Mean(OPs/s)",
    ] {
        assert!(o.contains(want), "{want}: {o}");
    }
    let runs = cmd().args(["runs", "--json", "--db", db]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let groups: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tags"]["repeat_group"].as_str().unwrap())
        .collect();
    assert_eq!(groups.len(), 3, "{v:#}");
    assert!(groups.iter().all(|g| *g == groups[0]), "{groups:?}");

    let mut json = base.to_vec();
    json.extend(["--output-format", "json", "--no-save"]);
    let Some(out) = mpirun(2, &json) else {
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(doc["count"], 3);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 3);
    assert_eq!(
        doc["summary"][0]["bw_bytes_per_s"]["n"], 3,
        "{:#}",
        doc["summary"]
    );
}
