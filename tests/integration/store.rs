//! `storlab runs`, `show`, `import` and `check` on real SQLite files in
//! temporary directories, with fio JSON from checked-in fixtures and from
//! Debian's fio run by the test.

use crate::util::{self, ok, run_in, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn show_json(dir: &Path, run: &str) -> Value {
    let runs: Value = serde_json::from_str(&ok(&run_in(dir, &["show", run, "--json"]))).unwrap();
    runs[0].clone()
}

#[test]
fn reading_commands_refuse_a_missing_database_without_creating_it() {
    let d = tempfile::tempdir().unwrap();
    // (`runs` with no database is an empty history: exit 0, see
    // seams::runs_on_no_history_man_pages_and_completion_values.)
    for args in [&["show", "latest"][..], &["check", "1", "--baseline", "2"]] {
        let o = run_in(d.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("no storlab database at"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!d.path().join("results.db").exists());
}

#[test]
fn import_fixtures_then_list_and_show() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let out = ok(&run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-2.x-style.json").to_str().unwrap(),
            util::store_fixture("fio-3.33-jobfile-clones.json")
                .to_str()
                .unwrap(),
            "--tag",
            "controller=perc5e",
            "--tag",
            "raid=R6/12",
            "--note",
            "old results",
            "--host",
            "oss01",
        ],
    ));
    assert!(
        out.contains("as run 1: fio 2.2.10, 1 phase (randread-qd32)"),
        "{out}"
    );
    assert!(
        out.contains("as run 2: fio 3.33, 2 phases (seqwrite, mixed)"),
        "{out}"
    );

    let table = ok(&run_in(dir, &["runs"]));
    assert!(table.contains("controller=perc5e raid=R6/12"), "{table}");
    assert!(table.contains("write,randrw 70/30 @ 64KiB,4KiB"), "{table}");
    assert!(table.contains("oss01"), "{table}");

    // Filters: workload, target, date, kind, tag.
    let ids = |args: &[&str]| -> Vec<i64> {
        let mut a = vec!["runs", "--json"];
        a.extend_from_slice(args);
        let v: Value = serde_json::from_str(&ok(&run_in(dir, &a))).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&[]), vec![1, 2]);
    assert_eq!(ids(&["--rw", "randrw"]), vec![2]);
    assert_eq!(ids(&["--workload", "randread"]), vec![1]);
    assert_eq!(ids(&["--target", "/dev/sdb"]), vec![1]);
    assert_eq!(ids(&["--until", "2020-01-01"]), vec![1]);
    assert_eq!(
        ids(&["--since", "2020-01-01", "--kind", "fio-import"]),
        vec![2]
    );
    assert_eq!(ids(&["--tag", "raid=R6/12", "--limit", "1"]), vec![2]);
    assert!(ids(&["--tag", "raid=R5"]).is_empty());

    let text = ok(&run_in(dir, &["show", "1"]));
    assert!(text.contains("run 1 · fio-import · finished"), "{text}");
    assert!(text.contains("randread-qd32"), "{text}");
    assert!(text.contains("note      old results"), "{text}");
    let run = show_json(dir, "latest");
    assert_eq!(run["id"], 2);
    assert_eq!(run["kind"], "fio-import");
    assert_eq!(run["report"]["tool"]["name"], "fio");
    assert_eq!(run["tags"]["controller"], "perc5e");
    assert_eq!(run["report"]["phases"].as_array().unwrap().len(), 2);

    // STORLAB_DB is overridden by --db (one that does not exist yet is
    // an empty history: no runs, exit 0, nothing created).
    let other = dir.join("other.db");
    let o = run_in(dir, &["runs", "--db", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("other.db") && stderr(&o).contains("no runs yet"),
        "{}",
        stderr(&o)
    );
    assert!(!other.exists());
}

#[test]
fn import_refuses_files_that_are_not_fio_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let cases = [
        ("notes.txt", "just some notes\n", "no JSON document found"),
        ("other.json", "{\"results\": [1, 2, 3]}", "not fio's output"),
        (
            "broken.json",
            "{\"fio version\": \"fio-3.33\", \"jobs\": [",
            "does not parse",
        ),
    ];
    for (name, text, needle) in cases {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let o = run_in(dir, &["import", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = stderr(&o);
        assert!(err.contains(name) && err.contains(needle), "{name}: {err}");
    }
    let o = run_in(dir, &["import", "missing.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read missing.json"),
        "{}",
        stderr(&o)
    );
    // One bad file among good ones saves nothing.
    let o = run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-3.33-randread.json")
                .to_str()
                .unwrap(),
            dir.join("notes.txt").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.join("results.db").exists());
    // Bad tags are refused before anything is read.
    let o = run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-3.33-randread.json")
                .to_str()
                .unwrap(),
            "--tag",
            "raid",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid tag 'raid'"), "{}", stderr(&o));
}

#[test]
fn bad_run_selectors_exit_2_naming_the_problem() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(&run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-3.33-randread.json")
                .to_str()
                .unwrap(),
        ],
    ));
    let cases: [(&[&str], &str); 6] = [
        (&["show", "first"], "invalid run 'first'"),
        (&["show", "0"], "run ids start at 1"),
        (&["show", "tag:cfg"], "no '=' found"),
        (&["show", "7"], "no run matches '7'"),
        (&["show", "tag:cfg=a"], "no run matches 'tag:cfg=a'"),
        (
            &["check", "latest", "--baseline", "latest~4"],
            "holds 1 run",
        ),
    ];
    for (args, needle) in cases {
        let o = run_in(dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    // RUN or --all is required.
    let o = run_in(dir, &["show"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("RUN"), "{}", stderr(&o));
    assert_eq!(show_json(dir, "1")["id"], 1);
    let all: Value = serde_json::from_str(&ok(&run_in(dir, &["show", "--all", "--json"]))).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 1);
}

/// A copy of the randread fixture with bandwidth and IOPS scaled by `f` and
/// p99 latency by `lat_f`.
fn scaled_fixture(dir: &Path, name: &str, f: f64, lat_f: f64) -> PathBuf {
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(util::store_fixture("fio-3.33-randread.json")).unwrap(),
    )
    .unwrap();
    let read = &mut doc["jobs"][0]["read"];
    let bw = read["bw_bytes"].as_f64().unwrap();
    read["bw_bytes"] = Value::from((bw * f).round());
    let iops = read["iops"].as_f64().unwrap();
    read["iops"] = Value::from(iops * f);
    let p99 = read["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap();
    read["clat_ns"]["percentile"]["99.000000"] = Value::from((p99 * lat_f).round());
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[test]
fn check_exits_1_on_a_regression_with_one_line_each_and_0_otherwise() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = util::store_fixture("fio-3.33-randread.json");
    let slow = scaled_fixture(dir, "slow.json", 0.8, 1.5);
    let same = scaled_fixture(dir, "same.json", 0.97, 1.02);
    ok(&run_in(
        dir,
        &["import", base.to_str().unwrap(), "--tag", "baseline=yes"],
    ));
    ok(&run_in(
        dir,
        &["import", same.to_str().unwrap(), "--tag", "night=1"],
    ));
    ok(&run_in(
        dir,
        &["import", slow.to_str().unwrap(), "--tag", "night=2"],
    ));

    let o = run_in(
        dir,
        &[
            "check",
            "tag:night=1",
            "--baseline",
            "tag:baseline=yes",
            "--tolerance",
            "10%",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("ok: run 2 is within 10% of baseline run 1"),
        "{}",
        stdout(&o)
    );

    let o = run_in(
        dir,
        &["check", "latest", "--baseline", "1", "--tolerance", "10%"],
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    let reasons: Vec<&str> = text.lines().filter(|l| l.starts_with("  phase")).collect();
    assert_eq!(reasons.len(), 3, "{text}");
    assert!(
        reasons[0].contains("read bandwidth") && reasons[0].contains("20.0% below"),
        "{text}"
    );
    assert!(
        reasons[1].contains("read IOPS") && reasons[1].contains("20.0% below"),
        "{text}"
    );
    assert!(
        reasons[2].contains("p99 latency") && reasons[2].contains("50.0% above"),
        "{text}"
    );

    // A looser tolerance lets the same run pass; the default is 10 %.
    let o = run_in(
        dir,
        &["check", "latest", "--baseline", "1", "--tolerance", "60"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = run_in(dir, &["check", "latest", "--baseline", "1"]);
    assert_eq!(o.status.code(), Some(1));
    // --json: the same verdict, every figure, for scripts.
    let o = run_in(dir, &["check", "latest", "--baseline", "1", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["checks"][0]["run_id"], 3);
    assert_eq!(v["checks"][0]["failures"].as_array().unwrap().len(), 3);
    assert_eq!(v["checks"][0]["findings"].as_array().unwrap().len(), 4);
    // Bad tolerance: exit 2.
    let o = run_in(
        dir,
        &["check", "latest", "--baseline", "1", "--tolerance", "lots"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid percentage 'lots'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_database_from_a_newer_storlab_is_refused_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    ok(&run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-3.33-randread.json")
                .to_str()
                .unwrap(),
        ],
    ));
    {
        let conn = rusqlite::Connection::open(dir.join("results.db")).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
    }
    let o = run_in(dir, &["runs"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("written by a newer storlab") && err.contains("999"),
        "{err}"
    );
}

#[test]
fn import_real_fio_json_output() {
    let probe = Command::new("fio").arg("--version").output();
    let version = match probe {
        Ok(o) if o.status.success() => stdout(&o).trim().to_string(),
        _ => {
            util::skip(
                "import_real_fio_json_output",
                "fio is not installed (Debian package fio)",
            );
            return;
        }
    };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let data = dir.join("fio-data");
    let fio = Command::new("fio")
        .args([
            "--name=rr",
            &format!("--filename={}", data.display()),
            "--size=4m",
            "--bs=4k",
            "--rw=randread",
            "--ioengine=psync",
            "--output-format=json",
        ])
        .output()
        .expect("run fio");
    assert!(fio.status.success(), "fio failed: {}", stderr(&fio));
    // Keep fio's stdout as is: it may hold notes before the JSON.
    let out = dir.join("fio.json");
    std::fs::write(&out, &fio.stdout).unwrap();
    let text = String::from_utf8_lossy(&fio.stdout).into_owned();
    let json_start = text.find("\n{").map(|i| i + 1).unwrap_or(0);
    let doc: Value = serde_json::from_str(&text[json_start..]).unwrap();

    let o = ok(&run_in(
        dir,
        &["import", out.to_str().unwrap(), "--tag", "tool=fio"],
    ));
    assert!(
        o.contains(&format!("fio {},", version.trim_start_matches("fio-"))),
        "{o} vs {version}"
    );
    let run = show_json(dir, "latest");
    let report = &run["report"];
    assert_eq!(report["tool"]["name"], "fio");
    assert_eq!(run["kind"], "fio-import");
    let phase = &report["phases"][0];
    let job = &doc["jobs"][0];
    assert_eq!(phase["params"]["rw"], "randread");
    assert_eq!(phase["params"]["bs"][0]["bs_bytes"], 4096);
    assert_eq!(phase["params"]["size_bytes"], 4 << 20);
    assert_eq!(phase["read"]["bytes"], job["read"]["io_bytes"]);
    assert_eq!(
        phase["read"]["bytes"],
        4 << 20,
        "fio read the whole 4 MiB file"
    );
    assert_eq!(phase["read"]["ops"], job["read"]["total_ios"]);
    assert_eq!(
        phase["read"]["bw_bytes_per_s"].as_f64(),
        job["read"]["bw_bytes"].as_f64()
    );
    assert_eq!(phase["read"]["iops"].as_f64(), job["read"]["iops"].as_f64());
    let pct = &job["read"]["clat_ns"]["percentile"];
    assert_eq!(phase["read"]["lat_ns"]["p99"], pct["99.000000"]);
    assert_eq!(phase["read"]["lat_ns"]["p50"], pct["50.000000"]);
    assert_eq!(
        phase["read"]["lat_ns"]["max"],
        job["read"]["clat_ns"]["max"]
    );
    // The same run checks clean against itself imported again.
    ok(&run_in(dir, &["import", out.to_str().unwrap()]));
    let o = run_in(
        dir,
        &[
            "check",
            "latest",
            "--baseline",
            "latest~1",
            "--tolerance",
            "0",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}
