//! Job groups on disjoint sets of MPI ranks (issue 23, `--group-ranks`,
//! `ranks = "..."` per group). The MPI tests run under a real `mpirun`
//! (four ranks, `--oversubscribe`) and need the MPI build: `cargo test
//! --features mpi --test integration granks::` (their names hold `mpi`, so
//! CI's `cargo test --features mpi --test integration mpi` runs them).
//! Every run is bounded by `timeout`, so a hang fails instead of blocking.

use crate::util::{cmd, stderr};

/// Outside mpirun, groups given to ranks are refused before any I/O.
#[test]
fn group_ranks_without_a_launcher_are_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    let o = cmd()
        .args([
            "bench",
            &target,
            "--engine",
            "null",
            "--size",
            "1M",
            "--group",
            "rw=read",
            "--group",
            "rw=write",
            "--group-ranks",
            "0,1",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a multi-client run") && stderr(&o).contains("mpirun"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    // ranks outside a group mean nothing either.
    let o = cmd()
        .args([
            "bench", &target, "--engine", "null", "--size", "1M", "--ranks", "0-1",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("use them with groups"),
        "{}",
        stderr(&o)
    );
}

#[cfg(feature = "mpi")]
mod under_mpi {
    use crate::util::{cmd, have, is_root, skip, stderr, stdout, storlab_bin};
    use serde_json::Value;
    use std::process::{Command, Output};

    /// `mpirun -np N` of storlab with the test environment, bounded by `secs`.
    fn mpirun(np: u32, secs: u32, args: &[&str]) -> Option<Output> {
        if !have("mpirun") {
            skip(
                "granks",
                "mpirun not found (Debian: openmpi-bin libopenmpi-dev)",
            );
            return None;
        }
        let mut c = Command::new("timeout");
        c.arg(secs.to_string()).arg("mpirun");
        if is_root() {
            c.arg("--allow-run-as-root");
        }
        c.args(["--oversubscribe", "-np", &np.to_string()]);
        c.arg(storlab_bin()).args(args);
        for (k, v) in cmd().get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        c.stdin(std::process::Stdio::null());
        Some(c.output().expect("run mpirun"))
    }

    fn json(o: &Output) -> Value {
        serde_json::from_str(&stdout(o))
            .unwrap_or_else(|e| panic!("not JSON ({e}): stdout {} stderr {}", stdout(o), stderr(o)))
    }

    fn u(v: &Value) -> u64 {
        v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
    }

    /// The identities of a grouped multi-client phase: every job moved
    /// data only in its group's direction; each rank's bytes are its jobs';
    /// the phase's bytes are the sum of the groups' and of the ranks'; each
    /// group's rate is its bytes over its own window and the phase's over
    /// the union window. `dirs[g]` is "read" or "write"; returns the groups.
    fn check_identities(p: &Value, ranks_of: &[&[u64]], dirs: &[&str]) -> Vec<Value> {
        let g = p["groups"]["groups"].as_array().unwrap().clone();
        assert_eq!(g.len(), ranks_of.len());
        let per_rank = p["cluster"]["per_rank"].as_array().unwrap();
        assert_eq!(per_rank.len(), 4);
        let jobs = p["jobs"].as_array().unwrap();
        for (gi, group) in g.iter().enumerate() {
            let (mine, other) = if dirs[gi] == "read" {
                ("read", "write")
            } else {
                ("write", "read")
            };
            assert!(u(&group[mine]["bytes"]) > 0, "{gi}: {group}");
            assert_eq!(u(&group[other]["bytes"]), 0, "{gi}: {group}");
            let first = u(&group["first_job"]);
            let n = u(&group["params"]["numjobs"]);
            assert_eq!(n, ranks_of[gi].len() as u64, "one job per rank");
            // The group's jobs: its direction only, and its bytes.
            let mut sum = 0;
            for j in first..first + n {
                let job = jobs.iter().find(|x| u(&x["job"]) == j).unwrap();
                assert_eq!(u(&job[other]["bytes"]), 0, "job {j}: {job}");
                assert!(u(&job[mine]["bytes"]) > 0, "job {j}: {job}");
                sum += u(&job[mine]["bytes"]);
            }
            assert_eq!(sum, u(&group["total"]["bytes"]), "group {gi}: jobs' sum");
            // Its ranks: the jobs they ran, and the same bytes in all.
            let ranks: Vec<&Value> = per_rank
                .iter()
                .filter(|r| ranks_of[gi].contains(&u(&r["rank"])))
                .collect();
            assert_eq!(ranks.len(), ranks_of[gi].len());
            let rank_sum: u64 = ranks.iter().map(|r| u(&r["total"]["bytes"])).sum();
            assert_eq!(
                rank_sum,
                u(&group["total"]["bytes"]),
                "group {gi}: ranks' sum"
            );
            for r in &ranks {
                let j = u(&r["first_job"]);
                assert!((first..first + n).contains(&j), "rank {r} ran job {j}");
                let job = jobs.iter().find(|x| u(&x["job"]) == j).unwrap();
                assert_eq!(u(&job[mine]["bytes"]), u(&r["total"]["bytes"]));
            }
            // The group's rate: its bytes over its own window.
            let (s, e) = (u(&group["start_ns"]), u(&group["end_ns"]));
            assert_eq!(u(&group["elapsed_ns"]), e - s);
            let bw = group["total"]["bw_bytes_per_s"].as_f64().unwrap();
            let want = u(&group["total"]["bytes"]) as f64 * 1e9 / (e - s) as f64;
            assert!((bw - want).abs() <= want * 1e-9, "{bw} vs {want}");
        }
        let total: u64 = g.iter().map(|x| u(&x["total"]["bytes"])).sum();
        assert_eq!(u(&p["total"]["bytes"]), total, "phase = sum of groups");
        let ranks: u64 = per_rank.iter().map(|r| u(&r["total"]["bytes"])).sum();
        assert_eq!(u(&p["total"]["bytes"]), ranks, "phase = sum of ranks");
        let read: u64 = g.iter().map(|x| u(&x["read"]["bytes"])).sum();
        assert_eq!(u(&p["read"]["bytes"]), read);
        // The union window: first start to last end of the groups.
        let start = g.iter().map(|x| u(&x["start_ns"])).min().unwrap();
        let end = g.iter().map(|x| u(&x["end_ns"])).max().unwrap();
        assert_eq!(u(&p["elapsed_ns"]), end - start);
        let bw = p["total"]["bw_bytes_per_s"].as_f64().unwrap();
        let want = total as f64 * 1e9 / (end - start) as f64;
        assert!((bw - want).abs() <= want * 1e-9, "{bw} vs {want}");
        g
    }

    /// `mpirun -np 4 ... --group-ranks 0-1,2-3`: ranks 0–1 read and 2–3
    /// write, together (overlap at least 90 % on the null engine with a
    /// service time), rank 0 reports each group and the aggregate, and
    /// stores one run with the group rows.
    #[test]
    fn group_ranks_under_mpi_split_directions_and_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().display().to_string();
        let tag = format!("granks={}", std::process::id());
        let Some(o) = mpirun(
            4,
            120,
            &[
                "bench",
                &target,
                "--engine",
                "null",
                "--null-latency",
                "100us",
                "--cache",
                "cold",
                "--size",
                "4M",
                "--bs",
                "4k",
                "--runtime",
                "2s",
                "--time-based",
                "--group",
                "rw=read name=readers",
                "--group",
                "rw=write name=writers",
                "--group-ranks",
                "0-1,2-3",
                "--tag",
                &tag,
                "-q",
                "--output-format",
                "json",
            ],
        ) else {
            return;
        };
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json(&o);
        let p = &r["phases"][0];
        assert_eq!(r["phases"].as_array().unwrap().len(), 1);
        assert_eq!(u(&p["params"]["numjobs"]), 4);
        let g = check_identities(p, &[&[0, 1], &[2, 3]], &["read", "write"]);
        assert_eq!(g[0]["name"], "readers");
        assert_eq!(g[1]["name"], "writers");
        let overlap = p["groups"]["overlap"].as_f64().unwrap();
        assert!(overlap >= 0.9, "overlap {overlap}: {p}");
        // Latency merged from the ranks' histograms: no upper-bound note.
        let warnings = p["warnings"].to_string();
        assert!(!warnings.contains("upper bound"), "{warnings}");
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "scratch files left behind"
        );
        // Stored as one run, the group rows in it.
        let o = cmd()
            .args(["show", &format!("tag:{tag}"), "--json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let runs = json(&o);
        let runs = runs.as_array().unwrap();
        assert_eq!(runs.len(), 1, "{runs:?}");
        let stored = &runs[0]["report"]["phases"][0];
        assert_eq!(stored["groups"]["groups"].as_array().unwrap().len(), 2);
        assert_eq!(stored["total"]["bytes"], p["total"]["bytes"]);
    }

    /// A job file gives each group its ranks (`ranks = "..."`), sets that
    /// need not be ranges: ranks 0 and 2 write, 1 and 3 read (files of
    /// their own, laid out before the phase); each rank still runs only
    /// its group's jobs, at its place among all jobs.
    #[test]
    fn group_ranks_under_mpi_from_a_job_file_interleaved() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        std::fs::create_dir(&target).unwrap();
        let job = dir.path().join("job.toml");
        std::fs::write(
            &job,
            "[global]\nengine = \"psync\"\ncache = \"cold\"\nbs = \"64k\"\n\
             [[phase]]\nname = \"mix\"\n\
             [[phase.group]]\nname = \"w\"\nrw = \"write\"\nsize = \"2M\"\nranks = \"0:2\"\n\
             [[phase.group]]\nname = \"r\"\nrw = \"read\"\nsize = \"1M\"\nranks = \"1:3\"\n",
        )
        .unwrap();
        let (t, j) = (target.display().to_string(), job.display().to_string());
        let Some(o) = mpirun(
            4,
            120,
            &["bench", &t, "--job", &j, "-q", "--output-format", "json"],
        ) else {
            return;
        };
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json(&o);
        let p = &r["phases"][0];
        let g = check_identities(p, &[&[0, 2], &[1, 3]], &["write", "read"]);
        // Size-bound: every job moved its group's size exactly.
        assert_eq!(u(&g[0]["write"]["bytes"]), 2 * (2 << 20));
        assert_eq!(u(&g[1]["read"]["bytes"]), 2 * (1 << 20));
        assert_eq!(g[0]["params"]["ranks"], serde_json::json!([0, 2]));
    }

    /// Sets that do not fit the ranks launched, or overlap, or leave a
    /// rank out: exit 2 on every rank, rank 0 saying why once, before
    /// any file exists.
    #[test]
    fn group_ranks_under_mpi_that_do_not_fit_are_refused_before_any_io() {
        for (sets, said) in [
            (
                "0-1,2-4",
                "group rank 4 does not exist: 4 ranks were launched",
            ),
            ("0,2-3", "rank 1 of the 4 ranks launched in no group"),
            ("0-2,2-3", "rank 2 is given to groups 'read' and 'write'"),
            ("0-1,2-3,3", "3 rank set(s) for 2 group(s)"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().display().to_string();
            let Some(o) = mpirun(
                4,
                60,
                &[
                    "bench",
                    &target,
                    "--engine",
                    "null",
                    "--size",
                    "1M",
                    "--group",
                    "rw=read",
                    "--group",
                    "rw=write",
                    "--group-ranks",
                    sets,
                    "-q",
                ],
            ) else {
                return;
            };
            assert_eq!(o.status.code(), Some(2), "{sets}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(err.contains(said), "{sets}: {err}");
            assert_eq!(err.matches("storlab: error").count(), 1, "{sets}: {err}");
            assert!(
                std::fs::read_dir(dir.path()).unwrap().next().is_none(),
                "{sets}: a file was made"
            );
        }
    }
}
