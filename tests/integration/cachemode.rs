//! `--cache buffered`: buffered I/O with the page cache left as earlier
//! steps left it, neither evicted nor pre-read — how IOR, io500 and fio's
//! `invalidate=0` run. Before it, io500's IOR phases and `--ior` ran as
//! `warm` (a pre-read of the whole file before each phase, outside the
//! window: on a device twice the reads io500 makes) or `cold` (evicted),
//! and fio's `invalidate=0` was refused.

use crate::util::{cmd, json, stderr, storlab, u};
use serde_json::Value;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A 4 MiB file of the test's own on a disk file system (the target
/// directory: eviction works there, unlike on tmpfs).
fn own_file(dir: &Path) -> std::path::PathBuf {
    let f = dir.join("data.bin");
    let bytes: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&f, bytes).unwrap();
    f
}

/// Write the file's dirty pages back and drop them from the page cache.
fn evict(f: &Path) {
    let file = std::fs::File::open(f).unwrap();
    file.sync_all().unwrap();
    // SAFETY: a valid open descriptor; advice only.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0);
}

/// A buffered read of the whole file with `cache`: its phase.
fn read_with(f: &Path, cache: &str) -> Value {
    let out = storlab(&[
        "bench",
        f.to_str().unwrap(),
        "--rw=read",
        "--bs=64k",
        "--engine=psync",
        &format!("--cache={cache}"),
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(u(&v["phases"][0]["total"]["bytes"]), 4 << 20);
    v["phases"][0].clone()
}

#[test]
fn buffered_neither_pre_reads_nor_evicts_as_warm_and_cold_do() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let f = own_file(d.path());
    let total = 1024; // 4 MiB in 4 KiB pages

    // Evicted: buffered starts with nothing resident (no pre-read) ...
    evict(&f);
    let c = &read_with(&f, "buffered")["cache"];
    assert_eq!(c["mode"], "buffered", "{c}");
    assert!(c["method"].as_str().unwrap().starts_with("none"), "{c}");
    assert_eq!(u(&c["total_pages"]), total, "{c}");
    assert_eq!(u(&c["resident_pages_before"]), 0, "{c}");
    assert_eq!(u(&c["resident_pages_after"]), 0, "no pre-read: {c}");
    assert!(c["verified"].is_null(), "buffered claims no state: {c}");
    // ... where warm pre-reads every page before the window.
    evict(&f);
    let c = &read_with(&f, "warm")["cache"];
    assert_eq!(u(&c["resident_pages_after"]), total, "{c}");

    // Resident (the read above left it): buffered keeps it, and says the
    // figures may be the page cache's ...
    let c = &read_with(&f, "buffered")["cache"];
    assert_eq!(u(&c["resident_pages_before"]), total, "{c}");
    assert_eq!(u(&c["resident_pages_after"]), total, "not evicted: {c}");
    assert_eq!(c["may_be_cached"], true, "{c}");
    // ... where cold evicts it.
    let c = &read_with(&f, "cold")["cache"];
    assert_eq!(u(&c["resident_pages_after"]), 0, "{c}");
    assert_eq!(c["verified"], true, "{c}");
}

/// fio's `invalidate=0` on a buffered job is `cache = buffered` (it was
/// refused); with `direct=1` it is O_DIRECT still, as in fio.
#[test]
fn fio_invalidate_0_is_buffered() {
    let d = tempfile::tempdir().unwrap();
    for (extra, want) in [
        ("", "cold"),
        ("invalidate=0\n", "buffered"),
        ("invalidate=0\ndirect=1\n", "direct"),
    ] {
        let job = d.path().join("j.fio");
        std::fs::write(
            &job,
            format!("[j]\nrw=read\nbs=64k\nsize=1m\nioengine=psync\n{extra}"),
        )
        .unwrap();
        let out = cmd()
            .env("STORLAB_DB", d.path().join("db.sqlite"))
            .args(["bench", "--fio-job"])
            .arg(&job)
            .arg(d.path().join("scratch"))
            .args(["--no-save", "-q", "--output-format=json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra}: {}", stderr(&out));
        let v = json(&out);
        assert_eq!(v["phases"][0]["params"]["cache"], want, "{extra}");
        assert_eq!(v["phases"][0]["cache"]["mode"], want, "{extra}");
    }
}

/// `--ior` without `-B` runs buffered as IOR does, the cache left alone
/// (it was `cold`: storlab evicted before each phase, IOR does not).
#[test]
fn ior_without_b_is_buffered_and_the_mapping_says_so() {
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .arg("bench")
        .arg(d.path())
        .args(["--ior", "-a POSIX -t 64k -b 1m -e -w -r", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--cache buffered"), "{text}");
    assert!(text.contains("cache = \"buffered\""), "{text}");
    let out = cmd()
        .arg("bench")
        .arg(d.path())
        .args(["--ior", "-a POSIX -t 64k -b 1m -e -w -r"])
        .args(["--no-save", "-q", "--output-format=json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    for p in v["phases"].as_array().unwrap() {
        assert_eq!(p["params"]["cache"], "buffered");
        assert_eq!(p["cache"]["mode"], "buffered");
    }
    // The write left its pages: the read says they may be the cache's.
    assert_eq!(v["phases"][1]["cache"]["may_be_cached"], true);
}
