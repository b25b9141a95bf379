//! One model of the storage path (issue 24): `plan layout` and a one-client
//! `sim` scenario of the same design give the same answer, because sim's
//! array asks plan's model (`storlab_plan::path`); a part without a
//! published limit makes the answer an upper bound in plan's and sim's
//! table and JSON.

use crate::util::{stderr, stdout, storlab};
use serde_json::Value;

/// The four workloads of the agreement test: plan's pattern name, sim's,
/// and the request size.
const PATTERNS: [(&str, &str, &str); 4] = [
    ("seq_read", "read", "1MiB"),
    ("seq_write", "write", "1MiB"),
    ("rand_read", "randread", "64KiB"),
    ("rand_write", "randwrite", "64KiB"),
];

/// Requests in flight in both tools: deep enough that neither plan's
/// Little's-law part nor sim's queueing (MVA) holds the figure below the
/// components' own limits, which are what the shared model answers.
const QD: &str = "4096";

fn run_json(args: &[&str]) -> Value {
    let o = storlab(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("valid JSON")
}

/// plan's figure for `pattern`, bytes/s, with the whole prediction.
fn plan(layout: &str, drive: &str, controller: &str, pattern: &str) -> (f64, Value) {
    let v = run_json(&[
        "plan",
        "layout",
        layout,
        "--drive",
        drive,
        "--controller",
        controller,
        "--seq-size",
        "1M",
        "--random-size",
        "64k",
        "--streams",
        "1",
        "--qd",
        QD,
        "--json",
    ]);
    let p = v["performance"]
        .as_array()
        .expect("performance")
        .iter()
        .find(|p| p["pattern"] == pattern)
        .unwrap_or_else(|| panic!("no {pattern} in {v}"))
        .clone();
    (p["bytes_per_s"].as_f64().expect("bytes_per_s"), p)
}

/// The same design as a one-client sim scenario: the array named by its
/// controller (whose host link is then the array's ports), layout and drive;
/// a client whose own link cannot bind.
fn scenario(layout: &str, drive: &str, controller: &str, pattern: &str, bs: &str) -> String {
    format!(
        r#"name = "one design, one client"
[clients]
count = 1
nic = "1000GB/s"
[array]
controller = "{controller}"
raid = "{layout}"
drive = "{drive}"
[workload]
pattern = "{pattern}"
bs = "{bs}"
file_size = "64GiB"
iodepth = {QD}
"#
    )
}

fn sim_point(dir: &std::path::Path, text: &str) -> Value {
    let f = dir.join("s.toml");
    std::fs::write(&f, text).expect("write scenario");
    let path = f.to_str().expect("utf-8 path");
    let v = run_json(&["sim", path, "--output-format", "json", "--no-save"]);
    v["points"][0]["analytic"].clone()
}

#[test]
fn plan_and_a_one_client_sim_agree_on_the_same_design() {
    let dir = tempfile::tempdir().expect("tempdir");
    // R5/12: the drives bind every pattern. R0/24 on the same controller:
    // the PERC 6/E's published 1.5 GB/s read path binds sequential reads
    // (sim used to drop it and gave the 1.8 GB/s of the PCIe link).
    for (layout, drive, ctrl) in [
        ("R5/12", "cheetah-15k5-300gb", "perc-6e"),
        ("R0/24", "cheetah-15k5-300gb", "perc-6e"),
        ("R6/10", "exos-x18-18tb", "megaraid-9361-8i"),
    ] {
        for (pp, sp, bs) in PATTERNS {
            let (want, pred) = plan(layout, drive, ctrl, pp);
            let got = sim_point(dir.path(), &scenario(layout, drive, ctrl, sp, bs));
            let agg = got["aggregate_bytes_per_s"].as_f64().expect("aggregate");
            assert!(
                (agg - want).abs() <= 0.01 * want,
                "{layout} {drive} {ctrl} {sp}: sim {:.1} MB/s, plan {:.1} MB/s ({})\nsim: {got}",
                agg / 1e6,
                want / 1e6,
                pred["binding"]
            );
        }
    }
    // The read-path case by number: 1,500 MB/s in both.
    let (want, pred) = plan("R0/24", "cheetah-15k5-300gb", "perc-6e", "seq_read");
    assert!((want - 1.5e9).abs() < 1.0, "{pred}");
    let got = sim_point(
        dir.path(),
        &scenario("R0/24", "cheetah-15k5-300gb", "perc-6e", "read", "1MiB"),
    );
    assert_eq!(got["binding"], "array controller", "{got}");
}

#[test]
fn an_unpublished_write_path_is_an_upper_bound_in_plan_and_sim() {
    // The EqualLogic PS4000 mirrors its write cache to the standby
    // controller; no figure for that path is published.
    let args = |json: bool| {
        let mut a = vec![
            "plan",
            "layout",
            "R5/8",
            "--drive",
            "cheetah-15k5-300gb",
            "--controller",
            "equallogic-ps4000",
        ];
        if json {
            a.push("--json");
        }
        a
    };
    let v = run_json(&args(true));
    let perf = v["performance"].as_array().expect("performance");
    let find = |p: &str| {
        perf.iter()
            .find(|x| x["pattern"] == p)
            .unwrap_or_else(|| panic!("{p}"))
    };
    let w = find("seq_write");
    assert_eq!(w["bound"], true, "{w}");
    let u = w["unknowns"][0].as_str().expect("unknowns");
    assert!(
        u.contains("cache mirroring") && u.contains("plan calibrate"),
        "{u}"
    );
    // Reads cross no unknown part: a prediction, no `bound` key.
    let r = find("seq_read");
    assert!(
        r.get("bound").is_none() && r.get("unknowns").is_none(),
        "{r}"
    );
    // The table marks the write figure "≤" and says why.
    let o = storlab(&args(false));
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let row = t
        .lines()
        .find(|l| l.contains("sequential write"))
        .expect("write row");
    assert!(row.contains("≤ "), "{row}");
    let read_row = t
        .lines()
        .find(|l| l.contains("sequential read"))
        .expect("read row");
    assert!(!read_row.contains('≤'), "{read_row}");
    assert!(
        t.contains("upper bound only: the controller's write path"),
        "{t}"
    );

    // sim: the same array, table and JSON.
    let dir = tempfile::tempdir().expect("tempdir");
    let text = scenario(
        "R5/8",
        "cheetah-15k5-300gb",
        "equallogic-ps4000",
        "write",
        "1MiB",
    );
    let p = sim_point(dir.path(), &text);
    assert_eq!(p["bound"], true, "{p}");
    assert!(
        p["unknowns"][0]
            .as_str()
            .expect("unknowns")
            .contains("cache mirroring")
    );
    let f = dir.path().join("s.toml");
    let o = storlab(&["sim", f.to_str().expect("utf-8"), "--no-save"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("≤ "), "{t}");
    assert!(
        t.contains("upper bound only (≤): the controller's write path"),
        "{t}"
    );
    // Reading from it is a prediction.
    let text = scenario(
        "R5/8",
        "cheetah-15k5-300gb",
        "equallogic-ps4000",
        "read",
        "1MiB",
    );
    let p = sim_point(dir.path(), &text);
    assert!(p.get("bound").is_none(), "{p}");
}

#[test]
fn an_array_without_port_or_controller_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("s.toml");
    std::fs::write(
        &f,
        "[clients]\ncount = 1\nnic = \"fc4\"\n[array]\nbackend = \"400MB/s\"\n\
         [workload]\npattern = \"read\"\nbs = \"1MiB\"\nfile_size = \"1GiB\"\n",
    )
    .expect("write");
    let o = storlab(&["sim", f.to_str().expect("utf-8"), "--no-save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("array.port") && e.contains("controller"), "{e}");
    // `ports` without `port` would be ignored: refused instead.
    std::fs::write(
        &f,
        "[clients]\ncount = 1\nnic = \"fc4\"\n[array]\ncontroller = \"perc-6e\"\nports = 2\nbackend = \"400MB/s\"\n\
         [workload]\npattern = \"read\"\nbs = \"1MiB\"\nfile_size = \"1GiB\"\n",
    )
    .expect("write");
    let o = storlab(&["sim", f.to_str().expect("utf-8"), "--no-save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("array.ports"), "{}", stderr(&o));
}

#[test]
fn lun_paths_and_per_lun_rates_give_the_same_answer_in_plan_and_sim() {
    let dir = tempfile::tempdir().expect("tempdir");
    // CLARiiON CX600: 8 front-end 2Gb FC ports over two storage
    // processors. Active/passive with failover multipathing: one LUN
    // works one port, three LUNs three.
    let fc2 = run_json(&["plan", "catalog", "--json"]);
    let one_port = fc2["links"]
        .as_array()
        .and_then(|l| l.iter().find(|x| x["entry"]["name"] == "fc2"))
        .and_then(|x| x["resolved"]["bytes_per_s"].as_f64())
        .expect("fc2 in the catalog");
    for luns in ["1", "3"] {
        let v = run_json(&[
            "plan",
            "layout",
            "R0/16",
            "--drive",
            "cheetah-15k5-300gb",
            "--controller",
            "clariion-cx600",
            "--multipath",
            "failover",
            "--ownership",
            "active-passive",
            "--luns",
            luns,
            "--qd",
            QD,
            "--json",
        ]);
        let p = &v["performance"][0];
        assert_eq!(p["pattern"], "seq_read");
        let want = p["bytes_per_s"].as_f64().expect("rate");
        assert!(
            p["binding"]
                .as_str()
                .is_some_and(|b| b.contains(&format!("{luns} of 8 ports"))),
            "{p}"
        );
        let n: f64 = luns.parse().expect("number");
        assert!(
            (want - n * one_port).abs() < 1.0,
            "{want} vs {n} x {one_port}"
        );
        // The path keys in the [array] table.
        let text = scenario(
            "R0/16",
            "cheetah-15k5-300gb",
            "clariion-cx600",
            "read",
            "1MiB",
        )
        .replace(
            "[array]\n",
            &format!(
                "[array]\nmultipath = \"failover\"\nownership = \"active-passive\"\nluns = {luns}\n"
            ),
        );
        let got = sim_point(dir.path(), &text);
        let agg = got["aggregate_bytes_per_s"].as_f64().expect("aggregate");
        assert!(
            (agg - want).abs() <= 0.01 * want,
            "luns {luns}: sim {agg} plan {want}"
        );
    }
    // A measured single-LUN read-ahead limit of 150 MB/s, entered once,
    // scales with the LUNs in both tools.
    for (luns, want) in [("1", 150e6), ("4", 600e6)] {
        let v = run_json(&[
            "plan",
            "layout",
            "R0/16",
            "--drive",
            "cheetah-15k5-300gb",
            "--controller",
            "clariion-cx600",
            "--lun-read",
            "150MB/s",
            "--luns",
            luns,
            "--qd",
            QD,
            "--json",
        ]);
        let p = &v["performance"][0];
        let got = p["bytes_per_s"].as_f64().expect("rate");
        assert!((got - want).abs() < 1.0, "{p}");
        let text = scenario(
            "R0/16",
            "cheetah-15k5-300gb",
            "clariion-cx600",
            "read",
            "1MiB",
        )
        .replace(
            "[array]\n",
            &format!("[array]\nlun_read_rate = \"150MB/s\"\nluns = {luns}\n"),
        );
        let s = sim_point(dir.path(), &text);
        let agg = s["aggregate_bytes_per_s"].as_f64().expect("aggregate");
        assert!((agg - want).abs() <= 0.01 * want, "luns {luns}: sim {agg}");
        assert_eq!(s["binding"], "array controller", "{s}");
    }
}

#[test]
fn a_hashed_bond_is_not_a_perfect_pool_for_a_few_clients() {
    // Two clients on one mover with four 1 GbE client ports: a bond that
    // hashes each connection onto one link uses 4·(1 − (3/4)²) = 1.75 of
    // them on average, a perfect pool all four.
    let dir = tempfile::tempdir().expect("tempdir");
    let text = |bonding: &str| {
        format!(
            r#"[clients]
count = 2
nic = "10GB/s"
[movers]
count = 1
client_port = "1gbe-iscsi"
client_ports = 4
storage_port = "100GB/s"
{bonding}
[array]
port = "100GB/s"
backend = "100GB/s"
[workload]
pattern = "read"
bs = "1MiB"
file_size = "4GiB"
iodepth = 8
"#
        )
    };
    let pool = sim_point(dir.path(), &text(""));
    let bond = sim_point(dir.path(), &text("bonding = \"802.3ad\""));
    let (p, b) = (
        pool["aggregate_bytes_per_s"].as_f64().expect("pool"),
        bond["aggregate_bytes_per_s"].as_f64().expect("bond"),
    );
    assert_eq!(pool["binding"], "mover client ports", "{pool}");
    assert_eq!(bond["binding"], "mover client ports", "{bond}");
    assert!((b / p - 1.75 / 4.0).abs() < 1e-6, "{b} / {p}");
    let f = dir.path().join("s.toml");
    std::fs::write(&f, text("bonding = \"lacp-ish\"")).expect("write");
    let o = storlab(&["sim", f.to_str().expect("utf-8"), "--no-save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("802.3ad"), "{}", stderr(&o));
}
