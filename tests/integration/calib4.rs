//! Issue 24, the merge model: bench records the target device's own
//! request counters (`/sys/block/DEV/stat`: completed and merged requests,
//! sectors) around every phase, in the JSON and the database, and
//! `plan calibrate` takes each point's merge factor from them.

use crate::util::{LoopDev, in_dir, ok, stderr};
use serde_json::Value;

/// A job of three 4 KiB O_DIRECT phases at QD 32 on the device: sequential
/// reads, random reads, sequential writes.
const JOB: &str = r#"[global]
size = "48M"
cache = "direct"
runtime = "700ms"
time_based = true
bs = "4k"
iodepth = 32

[[phase]]
name = "seq"
rw = "read"

[[phase]]
name = "rand"
rw = "randread"

[[phase]]
name = "seqw"
rw = "write"
"#;

fn phase<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["phases"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["params"]["name"] == name))
        .unwrap_or_else(|| panic!("no phase {name} in {doc}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// On a loop device of its own (nobody else's I/O): sequential 4 KiB
/// requests at QD 32 are merged (the device completes fewer requests than
/// were issued), random ones are not; the device completes at least as
/// many requests, and moves at least as many bytes, as the tool says it
/// issued (bytes = kernel counters); the same figures are in the database.
#[test]
fn the_device_counters_show_merges_of_sequential_requests_only() {
    let Some(lo) = LoopDev::new(64 << 20) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("merge.toml");
    std::fs::write(&job, JOB).unwrap();
    let out = in_dir(dir.path())
        .args(["bench", &lo.path(), "--allow-destroy", "--job"])
        .arg(&job)
        .args(["--output-format", "json", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = lo.name();
    for p in ["seq", "rand", "seqw"] {
        let d = &phase(&doc, p)["device_stat"];
        assert_eq!(d["devices"], serde_json::json!([name]), "{p}: {d}");
        assert_eq!(d["device_wide"], true, "{p}: {d}");
    }
    let issued = |p: &str, dir: &str| n(&phase(&doc, p)[dir]["ops"]);
    let bytes = |p: &str, dir: &str| n(&phase(&doc, p)[dir]["bytes"]);
    let dev = |p: &str, f: &str| n(&phase(&doc, p)["device_stat"][f]);
    // Sequential: merged, and every issued request accounted for.
    let (ios, merges) = (dev("seq", "read_ios"), dev("seq", "read_merges"));
    assert!(
        merges > 0 && (ios + merges) as f64 / ios as f64 > 1.3,
        "sequential 4 KiB at QD 32: {ios} device reads, {merges} merged"
    );
    assert!(
        ios + merges >= issued("seq", "read"),
        "seq: {ios} + {merges}"
    );
    let wm = dev("seqw", "write_merges");
    assert!(wm > 0, "sequential writes at QD 32: none merged");
    // Random: (almost) never merged; the device completed every request
    // the tool issued (O_DIRECT: no cache in between) and its bytes.
    let (rios, rm) = (dev("rand", "read_ios"), dev("rand", "read_merges"));
    assert!(
        (rm as f64) < 0.02 * rios as f64,
        "random 4 KiB: {rm} of {rios} merged"
    );
    assert!(rios + rm >= issued("rand", "read"), "rand: {rios} + {rm}");
    assert!(dev("rand", "read_sectors") * 512 >= bytes("rand", "read"));
    assert!(dev("seqw", "write_sectors") * 512 >= bytes("seqw", "write"));
    // Stored: the database's phase records carry the same counters.
    let ex = in_dir(dir.path())
        .args(["export", "latest", "--json"])
        .output()
        .unwrap();
    let stored: Value = serde_json::from_str(&ok(&ex)).unwrap();
    let text = stored.to_string();
    let want = phase(&doc, "seq")["device_stat"].to_string();
    assert!(text.contains(&want), "export lacks {want}");
}
