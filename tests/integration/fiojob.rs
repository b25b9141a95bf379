//! fio job files as fio users write them (issue 27): fio's own example
//! files as a corpus, and the job-file features with their fio semantics
//! checked in the result, not only that the file ran.

use crate::util::{cmd, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

/// fio's example files kept in the repository (see its README.md).
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-examples")
}

/// The examples that must run today. Files not listed may run too (a
/// later feature may add some); every other file must be refused by name.
/// Keep in step with docs/FIO.md.
const RUNS: &[&str] = &[
    "1mbs_clients.fio",
    "aio-read.fio",
    "backwards-read.fio",
    "basic-verify.fio",
    "butterfly.fio",
    "cross-stripe-verify.fio",
    "disk-zone-profile.fio",
    "dedupe-global.fio",
    "enospc-pressure.fio",
    "example_latency_steadystate.fio",
    "exitwhat.fio",
    "fio-rand-RW.fio",
    "fio-rand-read.fio",
    "fio-rand-write.fio",
    "fio-seq-RW.fio",
    "fio-seq-read.fio",
    "fio-seq-write.fio",
    "fixed-rate-submission.fio",
    "flow.fio",
    "fsx.fio",
    "iometer-file-access-server.fio",
    "jesd219.fio",
    "latency-profile.fio",
    "null.fio",
    "poisson-rate-submission.fio",
    "rand-zones.fio",
    "sequence-distribution.fio",
    "sprandom.fio",
    "ssd-steadystate.fio",
    "ssd-test.fio",
    "steadystate.fio",
    "surface-scan.fio",
    "tiobench-example.fio",
    "waitfor.fio",
    "zbd-rand-write.fio",
    "zbd-rand-write-zone-reset-gc.fio",
    "zbd-seq-read.fio",
    "zipf.fio",
];

/// The examples that must run when the tests run as root: their
/// `cmdprio_class=1` (real-time I/O priority) needs CAP_SYS_ADMIN or
/// CAP_SYS_NICE, as in fio.
const ROOT_RUNS: &[&str] = &["cmdprio-bssplit.fio", "cmdprio-percentage.fio"];

fn must_run(name: &str) -> bool {
    RUNS.contains(&name) || (crate::util::is_root() && ROOT_RUNS.contains(&name))
}

/// Run `storlab bench --fio-job` on `job` (its text) in a scratch directory
/// of its own, with `args` after it; returns the output and the scratch.
fn run_job(name: &str, text: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().expect("temporary directory");
    let job = dir.path().join(name);
    std::fs::write(&job, text).expect("write the job file");
    let scratch = dir.path().join("scratch");
    let mut c = cmd();
    c.current_dir(dir.path())
        .env("STORLAB_DB", dir.path().join("results.db"))
        .arg("bench")
        .arg("--fio-job")
        .arg(&job)
        .arg(&scratch)
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run storlab")
}

/// A `zonemode=zbd` file's `zonesize=`/`bs=` line divided by 256 (as the
/// corpus script does: fio's 256 MiB zones are more than a shortened
/// --size; every ratio of the file stays).
fn zbd_scaled(l: &str) -> Option<String> {
    let (k, v) = l.split_once('=')?;
    if !matches!(k.trim(), "zonesize" | "bs") {
        return None;
    }
    let v = v.trim().to_ascii_lowercase();
    let (n, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
    let mult: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    Some(format!("{k}={}\n", n.parse::<u64>().ok()? * mult / 256))
}

/// A fio example without its filename=/directory= lines (as the corpus
/// script runs them), its `startdelay=N` (seconds) shortened as the
/// runtime is: N × 10 ms (the script's --delay-scale 0.01), a zbd file's
/// zones shortened (zbd_scaled).
fn without_targets(text: &str) -> String {
    let zbd = text.lines().any(|l| l.trim() == "zonemode=zbd");
    text.lines()
        .filter(|l| {
            let k = l.trim_start().to_ascii_lowercase();
            !(k.starts_with("filename") || k.starts_with("directory"))
        })
        .map(|l| match l.trim().strip_prefix("startdelay=") {
            Some(n) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                format!("startdelay={}ms\n", n.parse::<u64>().unwrap_or(0) * 10)
            }
            _ => zbd
                .then(|| zbd_scaled(l))
                .flatten()
                .unwrap_or(format!("{l}\n")),
        })
        .collect()
}

/// Every kept example runs or is refused by name with its file and line;
/// at least the files in RUNS run (the count docs/FIO.md gives).
#[test]
fn corpus_fio_examples_run_or_are_refused_by_name() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("the corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 43, "the corpus has 43 files");
    let (mut ran, mut table) = (Vec::new(), String::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let out = run_job(
            &name,
            &without_targets(&text),
            &["--size", "2m", "--runtime", "200ms", "--time-based"],
            // sprandom.fio reads ${FIO_BS} (its comments say to set it).
            &[("FIO_BS", "4096")],
        );
        let err = stderr(&out);
        if out.status.success() {
            ran.push(name.clone());
            table.push_str(&format!("{name}: ran\n"));
            continue;
        }
        let first = err.lines().find(|l| l.contains("error")).unwrap_or("");
        table.push_str(&format!("{name}: {first}\n"));
        assert!(!must_run(&name), "{name} must run\n{err}\n{}", stdout(&out));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: bad input is exit 2\n{err}"
        );
        // The refusal names the file and (but for a value the phase
        // refuses, which names the section) the line.
        let located = first.contains(&format!("{name}:")) || first.contains(&format!("{name}: ["));
        assert!(located, "{name}: the refusal names the file:line\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    println!("{table}");
    let expected = files
        .iter()
        .filter(|p| must_run(&p.file_name().unwrap().to_string_lossy()))
        .count();
    assert!(
        ran.len() >= expected,
        "{} of {} ran, expected at least {expected}\n{table}",
        ran.len(),
        files.len(),
    );
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_str(&stdout(out)).expect("the result as JSON")
}

/// `bsrange=4k-16k` moves fio's size set: the four multiples of 4k, a
/// quarter each, so the mean I/O is 10 KiB.
#[test]
fn bsrange_moves_fios_size_set() {
    let out = run_job(
        "r.fio",
        "[r]\nrw=randread\nbsrange=4k-16k\nsize=4m\n",
        &[
            "--runtime",
            "300ms",
            "--time-based",
            "--output-format",
            "json",
        ],
        &[],
    );
    let v = json(&out);
    let ph = &v["phases"][0];
    let bs: Vec<(u64, u64)> = ph["params"]["bs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["bs_bytes"].as_u64().unwrap(),
                b["weight"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(bs, [(4096, 25), (8192, 25), (12288, 25), (16384, 25)]);
    let (bytes, ops) = (
        ph["read"]["bytes"].as_f64().unwrap(),
        ph["read"]["ops"].as_f64().unwrap(),
    );
    assert!(ops > 200.0, "{ops} I/Os");
    let mean = bytes / ops;
    assert!(
        (mean - 10240.0).abs() < 10240.0 * 0.1,
        "mean I/O {mean} bytes, fio's bsrange=4k-16k averages 10240"
    );
}

/// randrepeat=1 (fio's default) runs the same seed every time; randrepeat=0
/// a fresh one each run, recorded and named so it can be repeated.
#[test]
fn randrepeat_repeats_or_refreshes_the_seed() {
    let seed = |text: &str| {
        let out = run_job(
            "s.fio",
            text,
            &[
                "--runtime",
                "100ms",
                "--time-based",
                "--output-format",
                "json",
            ],
            &[],
        );
        let note = stderr(&out);
        (
            json(&out)["phases"][0]["params"]["seed"].as_u64().unwrap(),
            note,
        )
    };
    let job = "[s]\nrw=randread\nsize=1m\nrandrepeat=1\n";
    assert_eq!(seed(job).0, seed(job).0);
    let job = "[s]\nrw=randread\nsize=1m\nrandrepeat=0\n";
    let ((a, note), (b, _)) = (seed(job), seed(job));
    assert_ne!(a, b, "a fresh seed per run");
    assert!(note.contains(&format!("randseed={a}")), "{note}");
    let (c, _) = seed(&format!(
        "[s]\nrw=randread\nsize=1m\nrandrepeat=0\nrandseed={a}\n"
    ));
    assert_eq!(c, a, "randseed repeats it");
}

/// `${VAR}` from the environment, fio's keywords, and `include` beside
/// the job file; an unset variable is refused naming it and the line.
#[test]
fn variables_keywords_and_include() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("jobs/common.inc"),
        "rw=randread\nbs=${BS}\n",
    )
    .unwrap();
    let job = dir.path().join("jobs/main.fio");
    std::fs::write(
        &job,
        "[global]\ninclude common.inc\n[j]\nsize=${SIZE}\nnumjobs=$ncpus/$ncpus\n",
    )
    .unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut c = cmd();
        c.current_dir(dir.path())
            .env("STORLAB_DB", dir.path().join("results.db"))
            .env_remove("BS")
            .env_remove("SIZE")
            .args(["bench", "--fio-job"])
            .arg(&job)
            .arg(dir.path().join("scratch"))
            .args([
                "--runtime",
                "100ms",
                "--time-based",
                "--output-format",
                "json",
            ]);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let v = json(&run(&[("BS", "8k"), ("SIZE", "2m")]));
    let p = &v["phases"][0]["params"];
    assert_eq!(p["rw"], "randread");
    assert_eq!(p["bs"][0]["bs_bytes"], 8192);
    assert_eq!(p["size_bytes"], 2 << 20);
    assert_eq!(p["numjobs"], 1);
    let out = run(&[("SIZE", "2m")]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("common.inc:2") && err.contains("${BS} is not set"),
        "{err}"
    );
}

/// A corpus file run as the JSON result shows it.
fn corpus_run(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(corpus_dir().join(name)).unwrap();
    json(&run_job(
        name,
        &without_targets(&text),
        &[
            "--size",
            "4m",
            "--runtime",
            "300ms",
            "--time-based",
            "--output-format",
            "json",
        ],
        &[],
    ))
}

/// Corpus files that were refused before issue 27 run with the meaning fio
/// gives them, not only to exit 0.
#[test]
fn corpus_files_run_with_fios_semantics() {
    // tiobench-example: bsrange=4k-4k is 4k; four stonewalled phases of
    // numjobs=4 (the `; comment` after it is a comment), direct.
    let v = corpus_run("tiobench-example.fio");
    let phases = v["phases"].as_array().unwrap();
    let got: Vec<(&str, &str)> = phases
        .iter()
        .map(|p| {
            (
                p["params"]["name"].as_str().unwrap(),
                p["params"]["rw"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("f1", "write"),
            ("f2", "randwrite"),
            ("f3", "read"),
            ("f4", "randread")
        ]
    );
    for p in phases {
        assert_eq!(p["params"]["numjobs"], 4);
        assert_eq!(p["params"]["bs"][0]["bs_bytes"], 4096);
        assert_eq!(p["params"]["bs"].as_array().unwrap().len(), 1);
        assert_eq!(p["params"]["cache"], "direct");
    }
    // steadystate: `threads=1` accepted; each phase judges its criterion.
    let v = corpus_run("steadystate.fio");
    let ss: Vec<(&str, &str)> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = &p["params"]["steadystate"];
            (
                s["metric"].as_str().unwrap(),
                s["criterion"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(ss, [("iops", "deviation"), ("bw", "slope")]);
    // null: gtod_reduce accepted; the null engine, random with replacement.
    let v = corpus_run("null.fio");
    let p = &v["phases"][0]["params"];
    assert_eq!(p["engine"], "null");
    assert_eq!(p["random_with_replacement"], true);
    // fixed-rate-submission: io_submit_mode=offload accepted; the rate holds.
    let v = corpus_run("fixed-rate-submission.fio");
    let ph = &v["phases"][0];
    assert_eq!(ph["params"]["rate_iops"], 1000);
    let iops = ph["read"]["iops"].as_f64().unwrap();
    assert!(
        iops > 0.0 && iops < 1150.0,
        "rate_iops=1000 gave {iops} IOPS"
    );
}
