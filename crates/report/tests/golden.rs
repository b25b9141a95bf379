//! Golden (snapshot) tests: the exporters and the comparison table rendered
//! from fixed fixture runs must match the files in `tests/golden/` byte for
//! byte.
//!
//! After an intended change of output, regenerate the files and review the
//! diff before committing:
//!
//! ```sh
//! STORLAB_UPDATE_GOLDEN=1 cargo test -p storlab-report --test golden
//! # (the one variable of every golden file: storlab_testkit::golden)
//! git diff crates/report/tests/golden
//! ```

use storlab_testkit::fixtures as testdata;

use std::path::PathBuf;
use storlab_report::{
    ExportDocument, compare, export_csv, export_json, export_md, render_comparison,
};

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    storlab_testkit::golden::assert_golden(&path, actual);
}

#[test]
fn csv_export() {
    let csv = export_csv(&testdata::compare_runs());
    check("compare_runs.csv", &csv);
    // Header + 3 runs × 3 phases × 1 direction.
    assert_eq!(csv.lines().count(), 10);
}

#[test]
fn markdown_export() {
    check("compare_runs.md", &export_md(&testdata::compare_runs()));
}

#[test]
fn markdown_export_of_a_mixed_run() {
    // A 70/30 random mix: read, write and total rows.
    let runs = testdata::all_runs();
    let mixed: Vec<_> = runs.into_iter().filter(|r| r.id == 12).collect();
    let md = export_md(&mixed);
    check("mixed_run.md", &md);
}

#[test]
fn json_export_round_trips() {
    let runs = testdata::compare_runs();
    // The golden file holds one run (the format, not the volume, is under test).
    check("one_run.json", &export_json(&runs[..1]));
    let json = export_json(&runs);
    // Lossless: reads back into identical records (serde_json's
    // `float_roundtrip`, enabled by this crate, keeps every bit of a figure).
    let back: ExportDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back.runs, runs);
}

#[test]
fn comparison_table() {
    let runs = testdata::compare_runs();
    let table = render_comparison(&compare(&runs, &runs[0]));
    check("compare_runs.txt", &table);
}

#[test]
fn comparison_across_block_sizes() {
    // The block-size sweep against its 1 MiB run: the "differs" column says
    // what changed, and single runs use the default 5 % noise threshold.
    let sweep: Vec<_> = testdata::all_runs()
        .into_iter()
        .filter(|r| r.tags.get("sweep").map(String::as_str) == Some("bs"))
        .collect();
    let base = sweep.iter().find(|r| r.tags["bs"] == "1m").unwrap();
    // Without saying block size is under study, nothing is paired: a 4 KiB
    // phase is never judged against a 1 MiB one.
    let blind = storlab_report::compare(&sweep, base);
    assert!(blind.rows.iter().all(|r| r.is_baseline), "{blind:#?}");
    assert_eq!(blind.unmatched.len(), 3);
    let vary = storlab_report::Vary::parse("bs").unwrap();
    let table = render_comparison(&storlab_report::compare_with(&sweep, base, &vary));
    assert!(
        table.contains("bs 4 KiB (base 1 MiB) [under study]"),
        "{table}"
    );
    check("bs_sweep_compare.txt", &table);
}

#[test]
fn throughput_chart_svg() {
    let runs = testdata::compare_runs();
    let c = storlab_report::chart(&runs, Some(0), "throughput").unwrap();
    check("compare_runs_throughput.svg", &c.svg);
}
