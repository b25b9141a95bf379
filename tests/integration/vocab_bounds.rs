//! The parameter vocabulary's bounds and choices (issue 21 step 3): a value
//! outside them is refused the same way — the parameter, what it takes and
//! an example, exit code 2 — whether it comes as a flag, a job-file key, a
//! `sweep --vary` value or a `--group` word.

use crate::util::{stderr, storlab};

/// Runs `args` and checks exit code 2 and the vocabulary's message.
fn refused(what: &str, args: &[&str], want: &str) {
    let out = storlab(args);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{what}: {e}");
    assert!(e.contains(want), "{what}: {e}\n(want: {want})");
    assert!(!e.contains("panicked"), "{what}: {e}");
}

#[test]
fn a_value_outside_the_vocabulary_is_refused_alike_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (key, value, want) in [
        (
            "iodepth",
            "4097",
            "invalid iodepth 4097: from 1 to 4096 (e.g. iodepth=1)",
        ),
        (
            "numjobs",
            "0",
            "invalid numjobs 0: from 1 to 4096 (e.g. numjobs=1)",
        ),
        (
            "rwmixread",
            "101",
            "invalid rwmixread 101: from 0 to 100 (e.g. rwmixread=0)",
        ),
        (
            "bs",
            "128m",
            "invalid bs 134217728: from 512 to 67108864 (e.g. bs=512)",
        ),
        (
            "engine",
            "nope",
            "invalid engine 'nope': one of io_uring, libaio, psync, null (e.g. engine=io_uring)",
        ),
    ] {
        let flag = format!("--{key}={value}");
        refused(
            &flag,
            &["bench", d, "--rw", "read", &flag, "--no-save"],
            want,
        );
        let job = dir.path().join(format!("{key}.toml"));
        // Whole numbers as TOML integers, sizes and words as strings.
        let toml_value = match value.parse::<u64>() {
            Ok(n) => n.to_string(),
            Err(_) => format!("{value:?}"),
        };
        let text = format!("[[phase]]\nrw = \"read\"\n{key} = {toml_value}\n");
        std::fs::write(&job, text).unwrap();
        let job = job.to_str().unwrap();
        refused(job, &["bench", d, "--job", job, "--no-save"], want);
        let vary = format!("{key}={value}");
        refused(
            &vary,
            &["sweep", d, "-q", "--vary", &vary, "--no-save"],
            want,
        );
        let group = format!("rw=read {key}={value}");
        refused(&group, &["bench", d, "--group", &group, "--no-save"], want);
    }
}
