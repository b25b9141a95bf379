//! `storlab bench --help` describes the quick check that runs without
//! `--rw`, and what it says is what the quick check does.

use crate::util::{cmd, stdout};
use serde_json::Value;

#[test]
fn bench_help_describes_the_quick_check_it_runs() {
    let o = cmd().args(["bench", "--help"]).output().unwrap();
    assert!(o.status.success());
    // Help text is wrapped to the terminal width: compare it unwrapped.
    let help = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    for claim in [
        "Without --rw (and without --job), bench runs a quick all-round check",
        "four phases of 3 s each on one 256 MiB file",
        "sequential 1 MiB writes at queue depth 16",
        "sequential 1 MiB reads at QD 16",
        "random 4 KiB reads at QD 32",
        "random 4 KiB writes at QD 32",
        "writes for a few seconds under the current directory, in ./storlab-scratch",
        "apply to all four phases",
    ] {
        assert!(
            help.contains(claim),
            "bench --help lacks '{claim}':\n{help}"
        );
    }

    // The quick check, shortened by flags (which the help says apply to
    // all four phases), does what the help says, in a scratch directory
    // under the current directory that it removes.
    let d = tempfile::tempdir().unwrap();
    let o = cmd()
        .args([
            "bench",
            "--size=16M",
            "--runtime=1s",
            "--output-format=json",
            "--no-save",
            "-q",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let phases: Vec<(String, String, u64, u64, u64, u64)> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let p = &p["params"];
            (
                p["name"].as_str().unwrap().to_string(),
                p["rw"].as_str().unwrap().to_string(),
                p["bs"][0]["bs_bytes"].as_u64().unwrap(),
                p["iodepth"].as_u64().unwrap(),
                p["size_bytes"].as_u64().unwrap(),
                p["runtime_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = |name: &str, rw: &str, bs: u64, qd: u64| {
        (
            name.to_string(),
            rw.to_string(),
            bs,
            qd,
            16 << 20,
            1_000_000_000,
        )
    };
    assert_eq!(
        phases,
        [
            want("seq-write", "write", 1 << 20, 16),
            want("seq-read", "read", 1 << 20, 16),
            want("rand-read", "randread", 4096, 32),
            want("rand-write", "randwrite", 4096, 32),
        ]
    );
    assert_eq!(v["target"]["path"], "storlab-scratch");
    assert!(!d.path().join("storlab-scratch").exists());
}
