//! Issue 21, the output layer and the vocabulary, through the real binary:
//! `report` keeps every format spelling it had and still has no `--json`
//! (nor does shell completion offer one); a `sim --vary` value out of bounds
//! gets the one refusal bench gives; `sim --json` is the same document.

use crate::util::{self, storlab};

fn example(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/sim")
        .join(name);
    p.to_string_lossy().into_owned()
}

#[test]
fn report_has_no_json_flag_and_completion_offers_none() {
    let o = storlab(&["report", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("unexpected argument '--json'"),
        "{}",
        util::stderr(&o)
    );
    let o = storlab(&["completions", "bash"]);
    let text = util::ok(&o);
    let line = text
        .lines()
        .skip_while(|l| !l.contains("storlab__subcmd__report)"))
        .find(|l| l.contains("opts="))
        .unwrap_or_default();
    assert!(line.contains("--output-format"), "{line}");
    assert!(!line.contains("--json"), "{line}");
}

#[test]
fn a_sim_vary_value_out_of_bounds_gets_the_one_refusal() {
    let file = example("random-reads-queue-depth-knee.toml");
    let o = storlab(&["sim", &file, "--vary", "iodepth=0", "--no-save"]);
    assert_eq!(o.status.code(), Some(2));
    let sim = util::stderr(&o);
    let dir = tempfile::tempdir().unwrap();
    let bench_args = [
        "bench",
        "t",
        "--rw",
        "read",
        "--engine",
        "null",
        "--iodepth",
        "0",
    ];
    let o = util::run_in(dir.path(), &bench_args);
    assert_eq!(o.status.code(), Some(2));
    let bench = util::stderr(&o);
    let refusal = "invalid iodepth 0: from 1 to 4096 (e.g. iodepth=1)";
    assert!(
        sim.contains(&format!("workload.iodepth: {refusal}")),
        "{sim}"
    );
    assert!(bench.contains(refusal), "{bench}");
}

#[test]
fn sim_json_is_the_one_document_and_the_table_its_listing() {
    let file = example("two-port-1g-fc-array.toml");
    let args = ["sim", &file, "--vary", "clients=1,2", "--no-save"];
    let doc = util::json(&storlab(&[&args[..], &["--json"]].concat()));
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["kind"], "sim");
    assert_eq!(doc["vary"], "clients");
    assert_eq!(doc["points"].as_array().map(Vec::len), Some(2));
    let table = util::ok(&storlab(&args));
    assert!(table.contains("aggregate MB/s"), "{table}");
}
