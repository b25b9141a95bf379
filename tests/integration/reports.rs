//! `storlab export`, `compare` and `report`: the thin commands over
//! crates/report, run on a real database filled by `storlab import`.

use crate::util::{self, ok, run_in, stderr};
use serde_json::Value;

/// A database with: 1 the randread fixture (tag cfg=base), 2 the same run
/// with 20 % less bandwidth and IOPS (cfg=slow), 3 the job file with clones.
fn filled() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let base = util::store_fixture("fio-3.33-randread.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let read = &mut doc["jobs"][0]["read"];
    let bw = read["bw_bytes"].as_f64().unwrap();
    read["bw_bytes"] = Value::from((bw * 0.8).round());
    let iops = read["iops"].as_f64().unwrap();
    read["iops"] = Value::from(iops * 0.8);
    let slow = dir.join("slow.json");
    std::fs::write(&slow, doc.to_string()).unwrap();
    ok(&run_in(
        dir,
        &["import", base.to_str().unwrap(), "--tag", "cfg=base"],
    ));
    ok(&run_in(
        dir,
        &["import", slow.to_str().unwrap(), "--tag", "cfg=slow"],
    ));
    ok(&run_in(
        dir,
        &[
            "import",
            util::store_fixture("fio-3.33-jobfile-clones.json")
                .to_str()
                .unwrap(),
            "--tag",
            "cfg=clones",
        ],
    ));
    d
}

#[test]
fn export_json_csv_and_markdown() {
    let d = filled();
    let dir = d.path();
    let doc: Value = serde_json::from_str(&ok(&run_in(dir, &["export", "--all"]))).unwrap();
    let ids: Vec<i64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![1, 2, 3]);
    assert!(doc["schema_version"].as_u64().is_some());

    let csv = ok(&run_in(
        dir,
        &["export", "tag:cfg=clones", "--format", "csv"],
    ));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "run_id");
    assert!(
        header.contains(&"bw_bytes_per_s") && header.contains(&"lat_p99_ns"),
        "{header:?}"
    );
    let rows: Vec<&str> = lines.collect();
    // seqwrite: write; mixed: read, write, total.
    assert!(rows.len() >= 4, "{csv}");
    assert!(rows.iter().all(|r| r.starts_with("3,")), "{csv}");

    let md = ok(&run_in(dir, &["export", "1", "2", "--format", "md"]));
    assert!(md.lines().next().unwrap().starts_with("| Run |"), "{md}");
    assert!(md.contains("| 2 | cfg=slow |"), "{md}");

    let out = dir.join("runs.csv");
    let o = run_in(
        dir,
        &[
            "export",
            "latest",
            "--format",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    ok(&o);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("run_id,")
    );
    let o = run_in(dir, &["export", "latest", "--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn compare_shows_runs_relative_to_the_baseline() {
    let d = filled();
    let dir = d.path();
    let text = ok(&run_in(
        dir,
        &["compare", "tag:cfg=slow", "--baseline", "tag:cfg=base"],
    ));
    assert!(text.contains("Baseline: #1 cfg=base"), "{text}");
    assert!(text.contains("-20 % worse"), "{text}");
    let v: Value = serde_json::from_str(&ok(&run_in(
        dir,
        &["compare", "2", "--baseline", "1", "--json"],
    )))
    .unwrap();
    assert_eq!(v["baseline_id"], 1);
    assert!(!v["rows"].as_array().unwrap().is_empty());
    let o = run_in(dir, &["compare", "2", "--baseline", "tag:cfg=nothing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no run matches 'tag:cfg=nothing'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn report_writes_a_self_contained_html_file_and_single_charts() {
    let d = filled();
    let dir = d.path();
    let html_path = dir.join("report.html");
    let o = ok(&run_in(
        dir,
        &[
            "report",
            "2",
            "3",
            "--baseline",
            "1",
            "-o",
            html_path.to_str().unwrap(),
        ],
    ));
    assert!(o.contains("wrote") && o.contains("3 runs"), "{o}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.matches("<svg").count() >= 3, "charts are inline SVG");
    assert!(!html.contains("<script"), "no script");
    for attr in ["src=\"http", "href=\"http", "url(http"] {
        assert!(
            !html.contains(attr),
            "nothing fetched from the network: {attr}"
        );
    }
    // Default file name.
    ok(&run_in(dir, &["report", "--all"]));
    assert!(dir.join("report.html").exists());

    let svg = dir.join("relative.svg");
    ok(&run_in(
        dir,
        &[
            "report",
            "1",
            "2",
            "--baseline",
            "1",
            "--format",
            "svg",
            "--chart",
            "relative",
            "-o",
            svg.to_str().unwrap(),
        ],
    ));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("</svg>"));

    let o = run_in(dir, &["report", "1", "--format", "svg", "--chart", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("throughput"),
        "lists the charts there are: {}",
        stderr(&o)
    );

    let png = dir.join("tp.png");
    let o = run_in(
        dir,
        &[
            "report",
            "1",
            "2",
            "--format",
            "png",
            "-o",
            png.to_str().unwrap(),
        ],
    );
    if o.status.code() == Some(2) && stderr(&o).contains("no fonts") {
        util::skip(
            "report png",
            "no system fonts (Debian package fonts-dejavu-core)",
        );
        return;
    }
    ok(&o);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 1000);

    // -o onto a directory is refused.
    let o = run_in(dir, &["report", "1", "-o", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a directory") && stderr(&o).contains("give a file name"),
        "{}",
        stderr(&o)
    );
}
