//! Issue 24's mechanisms across plan and sim: a 70/30 read/write mix gives
//! the same answer in `plan layout` and a one-client `sim` scenario of the
//! same design, and one stream at queue depth 1 is bound by its round trip
//! (HBA and fabric, controller, drives, transfer) in both, the same figure.

use crate::util::{stderr, stdout, storlab};
use serde_json::Value;

fn run_json(args: &[&str]) -> Value {
    let o = storlab(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("valid JSON")
}

/// The three designs of `model::plan_and_a_one_client_sim_agree_on_the_same_design`.
const DESIGNS: [(&str, &str, &str); 3] = [
    ("R5/12", "cheetah-15k5-300gb", "perc-6e"),
    ("R0/24", "cheetah-15k5-300gb", "perc-6e"),
    ("R6/10", "exos-x18-18tb", "megaraid-9361-8i"),
];

fn sim_point(dir: &std::path::Path, text: &str) -> Value {
    let f = dir.join("s.toml");
    std::fs::write(&f, text).expect("write scenario");
    let path = f.to_str().expect("utf-8 path");
    let v = run_json(&[
        "sim",
        path,
        "--solver",
        "both",
        "--output-format",
        "json",
        "--no-save",
    ]);
    v["points"][0].clone()
}

#[test]
fn plan_and_a_one_client_sim_agree_on_a_70_30_mix() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (layout, drive, ctrl) in DESIGNS {
        for (plan_flag, sim_pattern) in [(Some("--mix-sequential"), "rw"), (None, "randrw")] {
            let mut args = vec![
                "plan",
                "layout",
                layout,
                "--drive",
                drive,
                "--controller",
                ctrl,
                "--mix-read",
                "70",
                "--mix-size",
                "1M",
                "--streams",
                "1",
                "--qd",
                "4096",
                "--json",
            ];
            args.extend(plan_flag);
            let v = run_json(&args);
            let p = v["performance"]
                .as_array()
                .expect("performance")
                .iter()
                .find(|p| p["pattern"].get("mix").is_some())
                .unwrap_or_else(|| panic!("no mix in {v}"))
                .clone();
            let want = p["bytes_per_s"].as_f64().expect("bytes_per_s");
            let text = format!(
                r#"[clients]
count = 1
nic = "1000GB/s"
[array]
controller = "{ctrl}"
raid = "{layout}"
drive = "{drive}"
[workload]
pattern = "{sim_pattern}"
rwmixread = 70
bs = "1MiB"
file_size = "64GiB"
iodepth = 4096
"#
            );
            let got = sim_point(dir.path(), &text);
            let a = got["analytic"]["aggregate_bytes_per_s"]
                .as_f64()
                .expect("analytic");
            let d = got["des"]["aggregate_bytes_per_s"].as_f64().expect("des");
            let what = format!("{layout} {drive} {ctrl} {sim_pattern} 70/30");
            assert!(
                (a - want).abs() <= 0.01 * want,
                "{what}: sim {:.1} MB/s, plan {:.1} MB/s ({})",
                a / 1e6,
                want / 1e6,
                p["binding"]
            );
            assert!(
                (d - want).abs() <= 0.05 * want,
                "{what}: des {d} plan {want}"
            );
        }
    }
    // The read path by hand: R0/24 behind the PERC 6/E's 1.5 GB/s read path
    // (no write figure) carries 1.5 / 0.7 = 2,142.9 MB/s of a 70/30 stream.
    let text = r#"[clients]
count = 1
nic = "1000GB/s"
[array]
controller = "perc-6e"
raid = "R0/24"
drive = "cheetah-15k5-300gb"
[workload]
pattern = "rw"
rwmixread = 70
bs = "1MiB"
file_size = "64GiB"
iodepth = 4096
"#;
    let got = sim_point(dir.path(), text);
    let a = got["analytic"]["aggregate_bytes_per_s"]
        .as_f64()
        .expect("a");
    assert!((a - 1.5e9 / 0.7).abs() < 1.0, "{got}");
    assert_eq!(got["analytic"]["binding"], "array controller");
    assert_eq!(got["resolved"]["workload"]["pattern"], "rw");
}

#[test]
fn a_mix_needs_its_read_share_in_range_and_only_for_a_mix() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (pattern, mix, says) in [
        ("read", "rwmixread = 70", "applies to pattern"),
        ("rw", "rwmixread = 170", "0 to 100"),
        ("scribble", "", "rw / randrw"),
    ] {
        let f = dir.path().join("bad.toml");
        std::fs::write(
            &f,
            format!(
                "[clients]\ncount = 1\nnic = \"1GB/s\"\n[array]\nport = \"1GB/s\"\nbackend = \"1GB/s\"\n[workload]\npattern = \"{pattern}\"\n{mix}\nbs = \"1MiB\"\nfile_size = \"1GiB\"\n"
            ),
        )
        .expect("write");
        let o = storlab(&["sim", f.to_str().expect("utf-8"), "--no-save"]);
        assert_eq!(o.status.code(), Some(2), "{pattern} {mix}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

#[test]
fn one_stream_at_qd1_is_bound_by_its_round_trip_in_plan_and_sim() {
    // The same request path in both: 100 us of HBA and fabric (plan's
    // --host-latency, sim's network latency), 50 us in the controller,
    // then the drives and the transfer from plan's model.
    let v = run_json(&[
        "plan",
        "layout",
        "R6/10",
        "--drive",
        "exos-x18-18tb",
        "--controller",
        "megaraid-9361-8i",
        "--seq-size",
        "1M",
        "--streams",
        "1",
        "--qd",
        "1",
        "--controller-latency",
        "50us",
        "--host-latency",
        "100us",
        "--json",
    ]);
    let p = v["performance"]
        .as_array()
        .expect("performance")
        .iter()
        .find(|p| p["pattern"] == "seq_read")
        .expect("seq_read")
        .clone();
    let want = p["bytes_per_s"].as_f64().expect("bytes_per_s");
    let why = p["explanation"].as_str().expect("explanation");
    assert!(
        why.contains("one stream's round trip") && why.contains("controller 0.050 ms"),
        "{why}"
    );
    assert!(p.get("bound").is_none(), "{p}");
    // The ports (PCIe 3.0 x8) carry several times this: the stream's own
    // limit binds, not a component.
    let link = p["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .find(|x| {
            x["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("host link"))
        })
        .expect("host link")["max_bytes_per_s"]
        .as_f64()
        .expect("rate");
    assert!(link > 4.0 * want, "{link} vs {want}");

    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"[clients]
count = 1
nic = "1000GB/s"
[network]
latency = "100us"
[array]
controller = "megaraid-9361-8i"
raid = "R6/10"
drive = "exos-x18-18tb"
latency = "50us"
[workload]
pattern = "read"
bs = "1MiB"
file_size = "4GiB"
iodepth = 1
"#;
    let got = sim_point(dir.path(), text);
    for s in ["analytic", "des"] {
        let x = got[s]["aggregate_bytes_per_s"].as_f64().expect("aggregate");
        assert!((x - want).abs() <= 0.01 * want, "{s}: {x} vs plan {want}");
        assert_eq!(got[s]["binding"], "stream round trip", "{s}");
        assert!(got[s].get("bound").is_none(), "{s}: {}", got[s]);
    }
    // Without the controller's command time sim says what it left out.
    let got = sim_point(dir.path(), &text.replace("latency = \"50us\"\n", ""));
    assert_eq!(got["analytic"]["bound"], true, "{got}");
    let u = got["analytic"]["unknowns"][0].as_str().expect("unknowns");
    assert!(
        u.contains("command time") && u.contains("array.latency"),
        "{u}"
    );
}
