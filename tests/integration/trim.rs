//! fio's `rw=trim|randtrim` (issue 27): a hole punched in storlab's own
//! file, a discard on a block device only with `--allow-destroy`.

use crate::util::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const JOB: &str = "[global]\nsize=1m\nbs=64k\nioengine=psync\n\
                   [fill]\nrw=write\n\
                   [punch]\nstonewall\nrw=randtrim\nnumber_ios=4\n";

/// The one data file storlab kept under `dir`.
fn data_file(dir: &Path) -> std::path::PathBuf {
    let mut found = Vec::new();
    for run in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(run.unwrap().path()).unwrap() {
            found.push(f.unwrap().path());
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// After a randtrim phase on a file storlab wrote, the trimmed blocks read
/// back as zeros, the file's allocated blocks dropped by exactly the
/// trimmed bytes, its size is kept, and the record counts the trims.
#[test]
fn randtrim_punches_holes_that_read_zeros_and_free_blocks() {
    let d = tempfile::tempdir().unwrap();
    let job = write(d.path(), "t.fio", JOB);
    let target = d.path().join("scratch");
    std::fs::create_dir(&target).unwrap();
    let out = storlab(&[
        "bench",
        &s(&target),
        "--fio-job",
        &s(&job),
        "--keep",
        "--no-save",
        "--output-format",
        "json",
        "-q",
    ]);
    if stderr(&out).contains("EOPNOTSUPP") {
        skip("randtrim", "the temporary file system cannot punch holes");
        return;
    }
    let v = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let punch = phase(&v, "punch");
    assert_eq!(punch["params"]["rw"], "randtrim");
    assert_eq!(u(&punch["write"]["ops"]), 4, "{punch}");
    assert_eq!(u(&punch["write"]["bytes"]), 4 << 16, "{punch}");
    assert_eq!(u(&punch["read"]["ops"]), 0);
    let f = data_file(&target);
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!(m.len(), 1 << 20, "the size is kept");
    // st_blocks counts 512-byte units: the 1 MiB written less 256 KiB trimmed.
    assert_eq!(m.blocks() * 512, (1 << 20) - (4 << 16), "{}", f.display());
    let bytes = std::fs::read(&f).unwrap();
    let zero = bytes
        .chunks(64 << 10)
        .filter(|c| c.iter().all(|&b| b == 0))
        .count();
    assert_eq!(zero, 4, "exactly the four trimmed blocks read as zeros");
}

/// A trim destroys data as a write does: on a block device it is refused
/// without `--allow-destroy` (exit 2, naming the flag), and with it the
/// device's range is discarded (a loop device then reads zeros there).
#[test]
fn randtrim_on_a_device_needs_allow_destroy() {
    let Some(lo) = LoopDev::new(4 << 20) else {
        return;
    };
    let dev = lo.path();
    std::fs::write(&dev, vec![0x5au8; 2 << 20]).unwrap();
    let args = [
        "bench",
        &dev,
        "--rw=randtrim",
        "--size=1M",
        "--bs=64k",
        "--engine=psync",
        "--no-save",
        "-q",
    ];
    let out = storlab(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-destroy"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let kept = std::fs::read(&dev).unwrap();
    assert!(
        kept[..2 << 20].iter().all(|&b| b == 0x5a),
        "refused, untouched"
    );
    let mut with = args.to_vec();
    with.push("--allow-destroy");
    let out = storlab(&with);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = std::fs::read(&dev).unwrap();
    assert!(after[..1 << 20].iter().all(|&b| b == 0), "discarded");
    let beyond = &after[1 << 20..2 << 20];
    assert!(beyond.iter().all(|&b| b == 0x5a), "beyond --size: kept");
}

/// A trim phase with verify is refused before anything is written: every
/// trimmed block reads back as zeros, which verify would count as
/// mismatches.
#[test]
fn a_trim_phase_with_verify_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let out = storlab(&[
        "bench",
        &s(d.path()),
        "--rw",
        "randtrim",
        "--verify",
        "--size",
        "1m",
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("verify cannot check a randtrim phase"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing is written: {left:?}");
}
