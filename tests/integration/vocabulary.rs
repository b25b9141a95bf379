//! One parameter vocabulary, one range grammar (issue 21 step 3): a name
//! that one command accepts for a parameter, every command accepts
//! (`compare --vary qd` was accepted while `sweep --vary qd=1,2` said
//! "unknown option"), and a sweep reads the range forms of the grammar.

use crate::util::{ok, run_in, stderr};
use serde_json::Value;

/// A null-engine sweep in `dir` over `vary`; its JSON document.
fn sweep(dir: &std::path::Path, vary: &[&str]) -> Value {
    let d = dir.to_str().unwrap();
    let mut args = vec!["sweep", d, "-q", "--engine", "null", "--size", "1m"];
    for v in vary {
        args.extend(["--vary", v]);
    }
    args.extend(["--output-format", "json"]);
    serde_json::from_str(&ok(&run_in(dir, &args))).expect("sweep JSON")
}

fn params(doc: &Value) -> Vec<Value> {
    doc["points"]
        .as_array()
        .unwrap_or_else(|| panic!("no points: {doc}"))
        .iter()
        .map(|p| p["params"].clone())
        .collect()
}

#[test]
fn sweep_accepts_the_aliases_compare_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let doc = sweep(d, &["qd=1,2"]);
    let p = params(&doc);
    assert_eq!(p.len(), 2, "{doc}");
    assert_eq!(p[0]["iodepth"], "1", "{doc}");
    assert_eq!(p[1]["iodepth"], "2", "{doc}");
    // The same alias names the same parameter in a comparison of those runs
    // (the sweep's points differ in it: judged, not refused).
    let runs: Value =
        serde_json::from_str(&ok(&run_in(d, &["runs", "--output-format", "json"]))).unwrap();
    let ids: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    let out = run_in(
        d,
        &[
            "compare",
            &ids[0],
            "--baseline",
            &ids[1],
            "--vary",
            "qd",
            "--json",
        ],
    );
    ok(&out);
    // Other spellings of the vocabulary reach the option too.
    let doc = sweep(d, &["jobs=1,2", "ramp=0,0s"]);
    let p = params(&doc);
    assert_eq!(p.len(), 4, "{doc}");
    assert_eq!(p[3]["numjobs"], "2", "{doc}");
    assert_eq!(p[3]["ramp_time"], "0s", "{doc}");
}

#[test]
fn sweep_reads_every_range_form_of_the_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = params(&sweep(d, &["iodepth=1..64/3"]));
    let qd: Vec<&str> = p.iter().map(|p| p["iodepth"].as_str().unwrap()).collect();
    assert_eq!(qd, ["1", "33", "64"]);
    let p = params(&sweep(d, &["bs=512,4k..16k:x2"]));
    let bs: Vec<&str> = p.iter().map(|p| p["bs"].as_str().unwrap()).collect();
    assert_eq!(bs, ["512", "4k", "8k", "16k"]);
    // A sweep's range still needs its step, named in the message.
    let o = run_in(
        d,
        &["sweep", d.to_str().unwrap(), "--vary", "iodepth=1..16"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a step"), "{}", stderr(&o));
}
