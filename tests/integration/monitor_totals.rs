//! Issue 27 (monitor): the once-counted total never drops real traffic, and
//! totals are named for what they are. Runs the binary on the `cachedloop`
//! fixture (a buffered loop device whose file is on `vda`; see
//! `tests/fixtures/monitor/README.md`) and on the recorded `loopstack`.

use crate::util::{s, stderr, stdout, storlab};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(name)
}

/// The first interval of a replay as JSON lines.
fn first_interval(root: &Path, args: &[&str]) -> Value {
    let replay = root.join("replay.txt");
    let mut argv = vec![
        "monitor",
        "--replay",
        &s(&replay),
        "--sys-root",
        &s(root),
        "--output-format",
        "jsonl",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    argv.extend(args.iter().map(|a| a.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let o = storlab(&argv);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    serde_json::from_str(out.lines().next().expect("one interval")).expect("JSON")
}

/// The page cache serves a buffered loop device's 512 KiB of reads while
/// `vda`, which holds its file, reads 256 KiB of its own: the top total is
/// 768 KiB/s of reads (the old total, `vda - loop3` clamped at zero, was
/// 512), and the loop's written-back writes are still counted once.
#[test]
fn a_cached_loop_keeps_the_reads_of_the_device_under_it() {
    let v = first_interval(&fixture("cachedloop"), &["vda", "loop3"]);
    let top = &v["totals"][0];
    assert_eq!(top["device"], "top", "{v}");
    let kib = |x: &Value| x.as_f64().unwrap() / 1024.0;
    assert_eq!(kib(&top["r_bytes_per_s"]), 768.0, "{v}");
    assert_eq!(kib(&top["w_bytes_per_s"]), 160.0, "{v}");
    // The table says how the total was formed.
    let replay = fixture("cachedloop").join("replay.txt");
    let root = fixture("cachedloop");
    let o = storlab(&[
        "monitor",
        "--replay",
        &s(&replay),
        "--sys-root",
        &s(&root),
        "--no-clear",
        "vda",
        "loop3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("(vda - loop3 writes)"), "{text}");
}

/// `--layer all`: each level's total is named by the kinds of device on
/// it, not `level0`, `level1`.
#[test]
fn level_totals_are_named_for_what_they_hold() {
    let v = first_interval(
        &fixture("loopstack"),
        &["--layer", "all", "loop0p1", "loop0p2", "loop1", "loop2"],
    );
    let names: Vec<&str> = v["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["device"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["loop@3", "loop@2", "part", "loop@0"], "{v}");
}
