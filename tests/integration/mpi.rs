//! Multi-client runs under a real `mpirun` (Open MPI from Debian), built
//! only with `--features mpi`: `cargo test --features mpi --test integration mpi::`.
//! Four ranks on this machine; a test pretends to be two nodes by giving
//! each rank a node name (`STORLAB_MPI_NODE`). Every run is bounded by
//! `timeout`, so a hang fails instead of blocking CI.

use crate::util::{cmd, have, skip, stderr, stdout, storlab_bin};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

/// `mpirun -np N` of storlab with the test environment, bounded by `secs`;
/// `node_of_rank` (a shell expression over `$r`) names each rank's node.
fn mpirun(np: u32, secs: u32, node_of_rank: Option<&str>, args: &[&str]) -> Option<Output> {
    let bin = storlab_bin();
    match node_of_rank {
        Some(expr) => {
            let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
            let script = format!(
                "r=$OMPI_COMM_WORLD_RANK; STORLAB_MPI_NODE={expr} exec '{}' {}",
                bin.display(),
                quoted.join(" ")
            );
            crate::util::mpirun("mpi", np, secs, ["sh", "-c", &script])
        }
        None => {
            let launch = std::iter::once(bin.as_os_str()).chain(args.iter().map(OsStr::new));
            crate::util::mpirun("mpi", np, secs, launch)
        }
    }
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): stdout {} stderr {}", stdout(o), stderr(o)))
}

fn cluster(p: &Value) -> &Value {
    &p["cluster"]
}

fn rank_bytes(p: &Value) -> Vec<u64> {
    cluster(p)["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total"]["bytes"].as_u64().unwrap())
        .collect()
}

fn job_file(dir: &Path, text: &str) -> String {
    let p = dir.join("job.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const WRITE_READ: &str = r#"
[global]
bs = "1M"
size = "8M"
engine = "psync"
verify = true
[[phase]]
name = "write"
rw = "write"
[[phase]]
name = "read"
rw = "read"
"#;

/// Write and read back with verification in each layout: the aggregate is
/// the sum of the ranks, the files have the layout's sizes, and every rank
/// found its data where the layout puts it.
#[test]
fn layouts_write_read_verify() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(dir.path(), WRITE_READ);
    let target = dir.path().display().to_string();
    let mib = 1u64 << 20;
    for (extra, layout) in [
        (vec![], "n-n"),
        (vec!["--shared-file"], "n-1-segmented"),
        (vec!["--shared-file", "--stride", "2M"], "n-1-strided"),
    ] {
        let mut args = vec![
            "bench",
            &target,
            "--job",
            &job,
            "--keep",
            "-q",
            "--output-format",
            "json",
        ];
        args.extend(extra.iter());
        let Some(o) = mpirun(4, 120, None, &args) else {
            return;
        };
        assert!(o.status.success(), "{layout}: {}", stderr(&o));
        let r = json(&o);
        for p in r["phases"].as_array().unwrap() {
            let c = cluster(p);
            assert_eq!(c["layout"], layout);
            assert_eq!(c["clients"], 4);
            let per_rank = rank_bytes(p);
            assert_eq!(per_rank.len(), 4);
            let total = p["total"]["bytes"].as_u64().unwrap();
            assert_eq!(total, per_rank.iter().sum::<u64>(), "{layout}");
            assert_eq!(total, 4 * 8 * mib, "{layout}: every byte moved once");
            assert_eq!(p["params"]["numjobs"], 4);
            let v = &p["verify"];
            assert_eq!(v["mismatches"], 0, "{layout}: {v}");
            assert!(v["blocks_checked"].as_u64().unwrap() >= 4 * 8 * mib / 4096);
            assert!(
                c["first_done"]["elapsed_ns"].as_u64() <= c["last_done"]["elapsed_ns"].as_u64()
            );
            assert!(c["clock_error_bound_ns"].as_u64().is_some());
        }
        let files: Vec<u64> = r["target"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| std::fs::metadata(f.as_str().unwrap()).unwrap().len())
            .collect();
        if layout == "n-n" {
            assert_eq!(files, vec![8 * mib; 4]);
        } else {
            assert_eq!(files, vec![32 * mib]);
        }
    }
}

/// `--stonewall`: every rank stops once the first reaches it; bytes are
/// those actually moved, first done ≤ last done, and the read phase after
/// reads exactly what each rank wrote.
#[test]
fn stonewall_reports_true_bytes_and_reads_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(
        dir.path(),
        r#"
[global]
bs = "256k"
size = "64M"
engine = "psync"
verify = true
[[phase]]
name = "write"
rw = "write"
rate_iops = 20
[[phase]]
name = "read"
rw = "read"
"#,
    );
    let target = dir.path().display().to_string();
    // A file per process, and one shared file segmented and strided: the
    // read after a stonewalled write reads each rank's written extent.
    for (extra, layout) in [
        (vec![], "n-n"),
        (vec!["--shared-file"], "n-1-segmented"),
        (vec!["--shared-file", "--stride", "2M"], "n-1-strided"),
    ] {
        let mut args = vec![
            "bench",
            &target,
            "--job",
            &job,
            "--stonewall",
            "1s",
            "-q",
            "--output-format",
            "json",
        ];
        args.extend(extra);
        let Some(o) = mpirun(4, 120, None, &args) else {
            return;
        };
        assert!(o.status.success(), "{layout}: {}", stderr(&o));
        stonewalled_write_then_read(&json(&o), layout);
    }
}

/// One stonewalled write + read run's checks (see the test above).
fn stonewalled_write_then_read(r: &Value, layout: &str) {
    let phases = r["phases"].as_array().unwrap();
    let (w, rd) = (&phases[0], &phases[1]);
    let c = cluster(w);
    assert_eq!(c["layout"], layout);
    assert_eq!(c["stonewall_ns"], 1_000_000_000u64);
    let written = rank_bytes(w);
    let total = w["total"]["bytes"].as_u64().unwrap();
    assert_eq!(total, written.iter().sum::<u64>());
    assert!(total < (4 * 64) << 20, "stopped early: {total}");
    assert!(written.iter().all(|&b| b > 0));
    assert_eq!(c["last_done"]["bytes"].as_u64().unwrap(), total);
    let first = c["first_done"]["elapsed_ns"].as_u64().unwrap();
    let last = c["last_done"]["elapsed_ns"].as_u64().unwrap();
    assert!(first <= last, "first done {first} > last done {last}");
    assert!(c["first_done"]["bytes"].as_u64().unwrap() <= total);
    assert!(!w["interrupted"].as_bool().unwrap());
    // The read is fast (no rate cap): it reads each rank's written extent.
    assert_eq!(
        rank_bytes(rd),
        written,
        "{layout}: read exactly what was written"
    );
    assert_eq!(rd["verify"]["mismatches"], 0, "{layout}");
}

/// `--reorder-tasks`: with two (pretend) nodes, each rank reads and
/// verifies the data a rank on the other node wrote.
#[test]
fn reorder_tasks_reads_another_nodes_data() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(dir.path(), WRITE_READ);
    let target = dir.path().display().to_string();
    let Some(o) = mpirun(
        4,
        120,
        Some("n$((r / 2))"),
        &[
            "bench",
            &target,
            "--job",
            &job,
            "--reorder-tasks",
            "-q",
            "--output-format",
            "json",
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    let read = &r["phases"][1];
    let c = cluster(read);
    assert_eq!(c["nodes"], 2);
    assert_eq!(c["reorder_shift"], 2);
    let ranks = c["per_rank"].as_array().unwrap();
    for rk in ranks {
        let me = rk["rank"].as_u64().unwrap();
        let src = rk["first_job"].as_u64().unwrap();
        assert_ne!(me / 2, src / 2, "rank {me} read job {src} on its own node");
    }
    assert_eq!(read["verify"]["mismatches"], 0);
    assert!(read["verify"]["blocks_checked"].as_u64().unwrap() > 0);
}

/// `--clients 1,2,4`: three stored runs, tagged, with 1, 2 and 4 clients.
#[test]
fn clients_scaling_stores_one_run_per_count() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    let db = dir.path().join("scaling.db");
    let dbs = db.display().to_string();
    let Some(o) = mpirun(
        4,
        120,
        Some("n$((r % 2))"),
        &[
            "bench",
            &target,
            "--db",
            &dbs,
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "4M",
            "--engine",
            "psync",
            "--clients",
            "1,2,4",
            "--clients-by",
            "node",
            "-q",
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("per client MB/s"), "{}", stdout(&o));
    let e = cmd()
        .args(["export", "--db", &dbs, "--all", "--format", "json"])
        .output()
        .unwrap();
    assert!(e.status.success(), "{}", stderr(&e));
    let doc: Value = serde_json::from_str(&stdout(&e)).unwrap();
    let mut seen = Vec::new();
    for run in doc["runs"].as_array().unwrap() {
        let c = &run["report"]["phases"][0]["cluster"];
        let k = c["clients"].as_u64().unwrap();
        assert_eq!(run["tags"]["clients"], k.to_string());
        assert_eq!(c["per_rank"].as_array().unwrap().len() as u64, k);
        // By node: two clients are on two nodes.
        if k == 2 {
            assert_eq!(c["nodes"], 2);
        }
        seen.push(k);
    }
    seen.sort();
    assert_eq!(seen, vec![1, 2, 4]);
}

/// A rank killed mid-run: the job ends within the timeout with a message
/// naming the rank, and the phase that finished before is in the database.
#[test]
fn killed_rank_ends_the_job_and_keeps_finished_phases() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(
        dir.path(),
        r#"
[global]
bs = "1M"
size = "8M"
engine = "psync"
[[phase]]
name = "write"
rw = "write"
[[phase]]
name = "read"
rw = "read"
runtime = "60s"
time_based = true
"#,
    );
    let target = dir.path().display().to_string();
    let db = dir.path().join("kill.db");
    let dbs = db.display().to_string();
    // Rank 2 kills itself 3 s into the run (during the 60 s read).
    let killer = format!(
        "if [ $OMPI_COMM_WORLD_RANK = 2 ]; then (sleep 3; kill -9 $$) & fi; exec '{}' bench '{target}' --db '{dbs}' --job '{job}' -q",
        storlab_bin().display()
    );
    let started = std::time::Instant::now();
    let Some(o) = raw_mpirun(4, 50, &killer) else {
        return;
    };
    let took = started.elapsed();
    assert!(!o.status.success());
    assert_ne!(o.status.code(), Some(124), "timed out: the job hung");
    assert!(took.as_secs() < 45, "took {took:?}");
    let err = stderr(&o);
    assert!(err.contains("rank 2"), "{err}");
    let runs = cmd()
        .args(["export", "--db", &dbs, "--all", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&runs)).unwrap();
    let phases = doc["runs"][0]["report"]["phases"].as_array().unwrap();
    assert_eq!(phases[0]["params"]["name"], "write");
    assert_eq!(phases[0]["cluster"]["clients"], 4);
}

/// A bad option is reported once (by rank 0), with exit 2.
#[test]
fn bad_option_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    let Some(o) = mpirun(
        4,
        60,
        None,
        &["bench", &target, "--bs", "1000", "--rw", "write"],
    ) else {
        return;
    };
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.matches("storlab: error").count(), 1, "{err}");
}

/// The output rules hold under MPI: `--json-out` naming the results
/// database is refused by rank 0 before any file is created, and the
/// database is intact.
#[test]
fn json_out_over_the_database_is_refused_under_mpi() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let db = dir.path().join("r.db");
    let t = target.display().to_string();
    let d = db.display().to_string();
    // A stored run first, so there is a history to lose.
    let Some(o) = mpirun(
        2,
        60,
        None,
        &[
            "bench", &t, "--rw", "write", "--bs", "1M", "--size", "4M", "--db", &d,
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&db).unwrap();
    let Some(o) = mpirun(
        2,
        60,
        None,
        &[
            "bench",
            &t,
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "4M",
            "--db",
            &d,
            "--json-out",
            &d,
        ],
    ) else {
        return;
    };
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("database"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database was changed"
    );
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "scratch files left"
    );
}

/// One rank hits a real I/O error (its file size limit: EFBIG) in a 30 s
/// time-based write: every rank stops within a tick, rank 0 names the rank
/// and the reason, the phase is saved marked interrupted, exit 2.
#[test]
fn one_ranks_io_error_stops_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(
        dir.path(),
        r#"
[global]
bs = "1M"
size = "16M"
engine = "psync"
[[phase]]
name = "warmup"
rw = "write"
size = "2M"
[[phase]]
name = "long-write"
rw = "write"
runtime = "30s"
time_based = true
"#,
    );
    let target = dir.path().display().to_string();
    let db = dir.path().join("err.db");
    let dbs = db.display().to_string();
    // Rank 2 may not write past 4 MiB of any file (SIGXFSZ ignored, so the
    // write fails with EFBIG instead of killing the process).
    let script = format!(
        "if [ $OMPI_COMM_WORLD_RANK = 2 ]; then trap '' XFSZ; ulimit -f 4096; fi; \
         exec '{}' bench '{target}' --db '{dbs}' --job '{job}' -q",
        storlab_bin().display()
    );
    let started = std::time::Instant::now();
    let Some(o) = raw_mpirun(4, 60, &script) else {
        return;
    };
    let took = started.elapsed();
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(124), "the job hung: {err}");
    assert!(!o.status.success(), "{err}");
    assert!(took.as_secs() < 25, "the others did not stop: {took:?}");
    assert!(err.contains("rank 2 on"), "{err}");
    assert!(err.contains("EFBIG") || err.contains("too large"), "{err}");
    let runs = cmd()
        .args(["export", "--db", &dbs, "--all", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&runs)).unwrap();
    let report = &doc["runs"][0]["report"];
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{report}");
    assert!(!phases[0]["interrupted"].as_bool().unwrap());
    assert!(phases[1]["interrupted"].as_bool().unwrap());
    let per_rank = phases[1]["cluster"]["per_rank"].as_array().unwrap();
    let bad: Vec<u64> = per_rank
        .iter()
        .filter(|r| r["error"].is_string())
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(bad, vec![2]);
    assert!(
        report["stop_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("rank 2"),
        "{report}"
    );
}

/// `--stonewall-wear-out`: a slow rank (rank 3 at 12 I/Os per second, the
/// others at 20) goes on after the stonewall to the furthest rank's amount;
/// without it, it stops short. Ranks must be started with the same
/// options, so the slow rank's rate is the debug builds' test hook
/// `STORLAB_TEST_RATE_IOPS`.
#[test]
fn stonewall_wear_out_brings_every_rank_to_the_furthest() {
    if !cfg!(debug_assertions) {
        skip(
            "mpi::stonewall_wear_out_brings_every_rank_to_the_furthest",
            "STORLAB_TEST_RATE_IOPS is honoured by debug builds only",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = job_file(
        dir.path(),
        r#"
[global]
bs = "256k"
size = "64M"
engine = "psync"
[[phase]]
name = "write"
rw = "write"
"#,
    );
    let target = dir.path().display().to_string();
    let mut per_rank = Vec::new();
    for wear_out in [false, true] {
        let script = format!(
            "if [ $OMPI_COMM_WORLD_RANK = 3 ]; then R=12; else R=20; fi; \
             STORLAB_TEST_RATE_IOPS=$R exec '{}' bench '{target}' --job '{job}' --stonewall 1s {} \
             -q --no-save --output-format json",
            storlab_bin().display(),
            if wear_out { "--stonewall-wear-out" } else { "" }
        );
        let Some(o) = raw_mpirun(4, 90, &script) else {
            return;
        };
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json(&o);
        let w = &r["phases"][0];
        assert_eq!(cluster(w)["stonewall_wear_out"], wear_out);
        per_rank.push(rank_bytes(w));
    }
    let transfer = 256 * 1024;
    let (plain, worn) = (&per_rank[0], &per_rank[1]);
    let fast = |v: &[u64]| v[..3].iter().copied().min().unwrap();
    assert!(
        plain[3] + 3 * transfer <= fast(plain),
        "without wear-out: {plain:?}"
    );
    assert!(worn[3] + transfer >= fast(worn), "with wear-out: {worn:?}");
}

/// `mpirun -np N sh -c SCRIPT` with the test environment, bounded by `secs`.
fn raw_mpirun(np: u32, secs: u32, script: &str) -> Option<Output> {
    crate::util::mpirun("mpi", np, secs, ["sh", "-c", script])
}

/// A rank that cannot open the files rank 0 created (its node does not see
/// the same file system: here rank 1 runs in its own mount namespace with
/// an empty tmpfs over the target) stops the job before any I/O: exit 2
/// naming the rank and the file, nothing stored, no scratch file left.
#[test]
fn a_rank_that_cannot_open_the_target_stops_the_job_before_any_io() {
    if !crate::util::is_root() || !have("unshare") {
        skip(
            "a_rank_that_cannot_open_the_target_stops_the_job_before_any_io",
            "needs root and unshare (util-linux) for a private mount namespace",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let t = target.display().to_string();
    let db = dir.path().join("r.db").display().to_string();
    let bench = format!(
        "'{}' bench '{t}' --db '{db}' --rw write --bs 1M --size 4M -q",
        storlab_bin().display()
    );
    let script = format!(
        "if [ $OMPI_COMM_WORLD_RANK = 1 ]; then \
           exec unshare -m sh -c \"mount -t tmpfs none '{t}' && exec {bench}\"; \
         else exec {bench}; fi"
    );
    let Some(o) = raw_mpirun(2, 60, &script) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("rank 1 on"), "{err}");
    assert!(err.contains("cannot open the target on this node"), "{err}");
    assert_eq!(err.matches("storlab: error").count(), 1, "{err}");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "scratch files left"
    );
    if std::path::Path::new(&db).exists() {
        let runs = cmd()
            .args(["runs", "--db", &db, "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&runs.stdout).unwrap();
        let n = v.as_array().map_or(0, Vec::len);
        assert_eq!(n, 0, "nothing stored: {v}");
    }
}
