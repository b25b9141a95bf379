//! `storlab import` of an IO500 result directory (issue 25): the real
//! io500's own files, kept in `crates/io500/tests/fixtures/io500-run`.

use crate::util::{cmd, ok, refused_storing_nothing};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/io500/tests/fixtures/io500-run")
}

#[test]
fn an_io500_result_directory_imports_as_a_run_of_its_phases_and_compares() {
    let d = tempfile::tempdir().expect("tempdir");
    let db = d.path().join("r.db");
    for _ in 0..2 {
        let out = cmd()
            .arg("import")
            .arg(fixture())
            .args(["--host", "node1", "--json", "--db"])
            .arg(&db)
            .output()
            .expect("run");
        let v: serde_json::Value = serde_json::from_str(&ok(&out)).expect("JSON");
        assert_eq!(v["imported"][0]["tool"], "io500");
        assert_eq!(
            v["imported"][0]["phases"].as_array().map(Vec::len),
            Some(13)
        );
    }
    let show = cmd()
        .args(["show", "latest", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_str(&ok(&show)).expect("JSON");
    let run = &v[0]["report"];
    assert_eq!(v[0]["kind"], "io500");
    let phases = run["phases"].as_array().expect("phases");
    let easy = phases
        .iter()
        .find(|p| p["params"]["name"] == "ior-easy-write")
        .expect("phase");
    // 0.608249 GiB/s as io500 printed it.
    let gib = easy["write"]["bw_bytes_per_s"].as_f64().expect("rate") / (1u64 << 30) as f64;
    assert!((gib - 0.608249).abs() < 1e-9, "{gib}");
    let stat = phases
        .iter()
        .find(|p| p["params"]["name"] == "mdtest-easy-stat")
        .expect("phase");
    assert!((stat["read"]["iops"].as_f64().expect("rate") - 216_555.652).abs() < 1e-6);
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("INVALID run: stonewall-time 1s != 300s"),
        "{warnings}"
    );
    // Two imports of the same result compare phase by phase, unchanged.
    let cmp = cmd()
        .args(["compare", "--baseline", "1", "2", "--db"])
        .arg(&db)
        .output()
        .expect("run");
    let text = ok(&cmp);
    assert!(text.contains("mdtest-hard-delete"), "{text}");
}

#[test]
fn a_directory_that_is_not_an_io500_result_is_refused_and_nothing_is_saved() {
    let d = tempfile::tempdir().expect("tempdir");
    let db = d.path().join("r.db");
    let empty = d.path().join("results");
    std::fs::create_dir(&empty).expect("dir");
    let args = ["import".as_ref(), empty.as_os_str()];
    refused_storing_nothing(&args, &db, &["no result_summary.txt"]);
}
