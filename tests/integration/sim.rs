//! `storlab sim`: each shipped scenario shows the behaviour it is named for,
//! by number; the two solvers agree on plateaus; results reach the store as
//! kind `sim`; bad input exits 2 with a message that says what to fix.

use crate::util::{stderr, stdout, storlab};
use serde_json::Value;

const EX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sim/");

fn example(name: &str) -> String {
    format!("{EX}{name}.toml")
}

/// Run `storlab sim` with JSON output and no saving; the points.
fn sim(args: &[&str]) -> Vec<Value> {
    let mut a = vec!["sim"];
    a.extend(args);
    a.extend(["--output-format", "json", "--no-save"]);
    let o = storlab(&a);
    assert!(o.status.success(), "{a:?}: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    assert_eq!(v["kind"], "sim");
    v["points"].as_array().expect("points").clone()
}

fn agg(p: &Value, solver: &str) -> f64 {
    p[solver]["aggregate_bytes_per_s"]
        .as_f64()
        .expect("aggregate")
        / 1e6
}

fn binding(p: &Value, solver: &str) -> String {
    p[solver]["binding"].as_str().expect("binding").to_string()
}

/// A resolved figure of the point's scenario (link rates come from plan's
/// catalog, so the tests read them rather than repeat them), MB/s.
fn fig(p: &Value, path: &[&str]) -> f64 {
    let mut v = &p["resolved"];
    for k in path {
        v = &v[*k];
    }
    v.as_f64().unwrap_or_else(|| panic!("{path:?} in {p}")) / 1e6
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-9)
}

#[test]
fn dlm_shared_file_write_stays_flat_at_one_clients_link() {
    let pts = sim(&[
        &example("direct-iscsi-san-dlm-shared-write"),
        "--vary",
        "clients=1,2,4,16,64",
        "--solver",
        "both",
    ]);
    // One client alone: its 1 GbE iSCSI link.
    let nic = fig(&pts[0], &["client_nic_bytes_per_s"]);
    assert!(close(agg(&pts[0], "analytic"), nic, 0.01));
    let two = agg(&pts[1], "analytic");
    for p in &pts[1..] {
        for s in ["analytic", "des"] {
            let a = agg(p, s);
            // Flat: within 1 % of two clients, never above one link.
            assert!(close(a, two, 0.01), "{s} {a} vs {two}");
            assert!(a <= nic * 1.001, "{s} {a}");
            assert_eq!(binding(p, s), "DLM lock");
        }
        assert!(close(agg(p, "des"), agg(p, "analytic"), 0.05));
    }
}

#[test]
fn data_movers_scale_until_the_movers_saturate() {
    let f = example("data-movers-parallel-fs");
    let pts = sim(&[&f, "--vary", "clients=1,2,4,8,16,64", "--solver", "both"]);
    let nic = fig(&pts[0], &["client_nic_bytes_per_s"]);
    let movers = 2.0 * fig(&pts[0], &["movers", "storage_side_bytes_per_s"]);
    // Linear while the clients bind: N × one client's link.
    for (p, n) in pts.iter().zip([1.0, 2.0, 4.0]) {
        for s in ["analytic", "des"] {
            assert!(close(agg(p, s), nic * n, 0.01), "{s} n={n}: {}", agg(p, s));
        }
    }
    // Then flat at the two movers' storage ports (4 × 1 GbE each).
    for p in &pts[4..] {
        for s in ["analytic", "des"] {
            assert!(close(agg(p, s), movers, 0.01), "{s}: {}", agg(p, s));
            assert_eq!(binding(p, s), "mover storage ports");
        }
    }
    // More movers at 16 clients lift the plateau until something else binds.
    let pts = sim(&[&f, "--vary", "movers=1,2,3,4", "--solver", "analytic"]);
    let a: Vec<f64> = pts.iter().map(|p| agg(p, "analytic")).collect();
    assert!(
        close(a[0], movers / 2.0, 0.01) && close(a[1], movers, 0.01),
        "{a:?}"
    );
    assert!(a.windows(2).all(|w| w[1] >= w[0]), "{a:?}");
    assert_ne!(binding(&pts[3], "analytic"), "mover storage ports");
}

#[test]
fn two_port_1g_fc_array_is_flat_however_many_clients() {
    // Analytic to 1,024 clients; the DES (4,096 requests per client) to 64.
    for (range, solvers) in [
        ("clients=1..1024", &["analytic"][..]),
        ("clients=1..64", &["des"][..]),
    ] {
        let pts = sim(&[
            &example("two-port-1g-fc-array"),
            "--vary",
            range,
            "--solver",
            solvers[0],
        ]);
        // One client at QD1 out of cache: its stream's round trip, the
        // drives' time (plan's model) then 1 MiB over its 1GFC port
        // (docs/MODEL.md §3.12), below the port; two: twice that; from
        // four on, the array's two ports.
        let nic = fig(&pts[0], &["client_nic_bytes_per_s"]);
        let ports = fig(&pts[0], &["array", "ports_bytes_per_s"]);
        let drive_s = fig(&pts[0], &["array", "drive_latency_s"]) * 1e6;
        let stream = 1.048576 / (drive_s + 1.048576 / nic);
        assert!(close(ports, 2.0 * nic, 1e-9));
        assert!(stream < 0.95 * nic, "{stream} vs {nic}");
        for s in solvers {
            assert!(
                close(agg(&pts[0], s), stream, 0.01),
                "{s}: {}",
                agg(&pts[0], s)
            );
            assert!(close(agg(&pts[1], s), 2.0 * stream, 0.01), "{s}");
            assert_eq!(binding(&pts[0], s), "stream round trip");
        }
        for p in pts.iter().skip(2) {
            for s in solvers {
                assert!(close(agg(p, s), ports, 0.01), "{s}: {}", agg(p, s));
                assert_eq!(binding(p, s), "array ports");
            }
        }
    }
}

#[test]
fn a_fast_cache_makes_a_small_file_look_many_times_faster() {
    let pts = sim(&[
        &example("fast-cache-slow-backend"),
        "--vary",
        "file_size=64MiB,16GiB",
        "--solver",
        "both",
    ]);
    for s in ["analytic", "des"] {
        let small = agg(&pts[0], s);
        let large = agg(&pts[1], s);
        assert!(small / large > 9.0, "{s}: {small} vs {large}");
        assert_eq!(binding(&pts[0], s), "array ports");
        assert_eq!(binding(&pts[1], s), "array back end");
        // The large file approaches the back end's 80 MB/s from above.
        assert!(large > 80.0 && large < 85.0, "{s}: {large}");
    }
    assert!(close(agg(&pts[1], "des"), agg(&pts[1], "analytic"), 0.05));
}

#[test]
fn iscsi_array_members_add_throughput_one_to_three() {
    let pts = sim(&[
        &example("iscsi-array-members"),
        "--vary",
        "arrays=1,2,3",
        "--solver",
        "both",
    ]);
    for s in ["analytic", "des"] {
        let a: Vec<f64> = pts.iter().map(|p| agg(p, s)).collect();
        assert!(a[1] > 1.6 * a[0] && a[2] > 1.2 * a[1], "{s}: {a:?}");
    }
    // Each member brings its three 1 GbE ports; with three, the sixteen
    // QD1 streams' round trips bind first (docs/MODEL.md §3.12).
    for (p, n) in pts.iter().zip([1.0, 2.0]) {
        let ports = fig(p, &["array", "ports_bytes_per_s"]);
        assert!(close(agg(p, "analytic"), ports * n, 0.01));
    }
    assert_eq!(binding(&pts[2], "analytic"), "stream round trip");
    assert!(agg(&pts[2], "analytic") < 3.0 * fig(&pts[2], &["array", "ports_bytes_per_s"]));
}

#[test]
fn des_agrees_with_analytic_on_every_plateau_and_is_deterministic() {
    for (name, n) in [
        ("two-port-1g-fc-array", "256"),
        ("data-movers-parallel-fs", "64"),
        ("direct-iscsi-san-dlm-shared-write", "32"),
        ("cluster-10000-clients-write", "2000"),
    ] {
        let args = [
            example(name),
            "--vary".into(),
            format!("clients={n}"),
            "--solver".into(),
            "both".into(),
        ];
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let p = &sim(&a)[0];
        let (x, y) = (agg(p, "des"), agg(p, "analytic"));
        assert!(close(x, y, 0.05), "{name}: des {x} analytic {y}");
        assert_eq!(binding(p, "des"), binding(p, "analytic"), "{name}");
    }
    let run = || {
        let o = storlab(&[
            "sim",
            &example("fast-cache-slow-backend"),
            "--solver",
            "des",
            "--seed",
            "7",
            "--format",
            "json",
            "--no-save",
        ]);
        assert!(o.status.success());
        stdout(&o)
    };
    assert_eq!(run(), run());
}

#[test]
fn results_go_to_the_store_as_kind_sim_and_charts_name_the_binding_part() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sim.db");
    let chart = dir.path().join("chart.svg");
    let o = storlab(&[
        "sim",
        &example("two-port-1g-fc-array"),
        "--vary",
        "clients=1,2,4,8",
        "--chart",
        chart.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--tag",
        "design=fc",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("array ports") && table.contains("199.8"),
        "{table}"
    );
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.contains("bound by array ports") && svg.contains("bound by stream round trip"),
        "{svg}"
    );
    let o = storlab(&["runs", "--db", db.to_str().unwrap(), "--kind", "sim"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("sim"), "{}", stdout(&o));
    // Measured runs (null engine, 1 and 2 jobs) in the same database.
    for n in ["1", "2"] {
        let scratch = dir.path().join("scratch");
        let o = storlab(&[
            "bench",
            scratch.to_str().unwrap(),
            "--engine",
            "null",
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "4M",
            "--numjobs",
            n,
            "--db",
            db.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // report draws the measured runs on the jobs axis, and the simulated
    // points apart, in their own chart marked as simulated (they were on the
    // jobs axis beside the measured, as if they were jobs).
    let out = dir.path().join("vs.svg");
    let o = storlab(&[
        "report",
        "--all",
        "--db",
        db.to_str().unwrap(),
        "--format",
        "svg",
        "--chart",
        "vs-numjobs",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("Throughput vs number of jobs"));
    assert!(!svg.contains("sim.scenario=two-port-1g-fc-array"), "{svg}");
    let out = dir.path().join("sim.svg");
    let o = storlab(&[
        "report",
        "--all",
        "--db",
        db.to_str().unwrap(),
        "--chart",
        "simulated",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("Simulated throughput (storlab sim, not measured)"),
        "{svg}"
    );
}

#[test]
fn bad_scenarios_and_vary_values_exit_2_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(example("two-port-1g-fc-array")).unwrap();
    std::fs::write(&f, text.replace("port = \"fc1\"", "port = \"fc3\"")).unwrap();
    let path = f.to_str().unwrap();
    let fc = example_static();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["sim", path, "--no-save"],
            vec!["bad.toml:", "array.port", "fc"],
        ),
        (
            vec!["sim", &fc, "--vary", "clients=0", "--no-save"],
            vec!["--vary clients=0", "from 1"],
        ),
        (
            vec!["sim", &fc, "--vary", "clients", "--no-save"],
            vec!["KEY=V1,V2"],
        ),
        (
            vec!["sim", &fc, "--vary", "array.colour=red", "--no-save"],
            vec!["colour"],
        ),
        (
            vec!["sim", "/nonexistent/x.toml", "--no-save"],
            vec!["cannot read scenario"],
        ),
    ];
    for (args, needles) in cases {
        let o = storlab(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: expected '{n}' in {err}");
        }
    }
}

fn example_static() -> String {
    example("two-port-1g-fc-array")
}
