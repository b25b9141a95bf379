//! fio's access patterns in storlab's engine (issue 27): skewed random
//! offsets (`random_distribution`), offset modifiers (`rw=read:-8k`,
//! `--seq-skip`), bandwidth caps per direction (`rate`, `rate_process`),
//! separate write block sizes (`bs=R,W`, `--bs-write`) and byte or I/O
//! limits (`io_size`, `number_ios`), each run through `storlab bench`
//! flags and through `--fio-job`.
//!
//! Where the I/Os land is read back from a loop device the run wrote
//! (root; skipped with a reason otherwise): which 4 KiB blocks are no
//! longer zero.

use crate::util::{LoopDev, bench_json, json, stderr, storlab, u, write};
use serde_json::Value;
use std::io::Read;

/// Which 4 KiB blocks of the first `blocks` of `dev` hold data.
fn written_blocks(dev: &std::path::Path, blocks: usize) -> Vec<bool> {
    let mut f = std::fs::File::open(dev).unwrap();
    let mut buf = vec![0u8; 4096];
    (0..blocks)
        .map(|_| {
            f.read_exact(&mut buf).unwrap();
            buf.iter().any(|&b| b != 0)
        })
        .collect()
}

/// `storlab bench DEV --allow-destroy ARGS` (psync, O_DIRECT), which must
/// succeed; its JSON.
fn bench_dev(lo: &LoopDev, args: &[&str]) -> Value {
    let dev = lo.path();
    let mut a = vec![
        "bench",
        dev.as_str(),
        "--allow-destroy",
        "--engine=psync",
        "--direct",
        "--no-save",
        "--output-format=json",
        "-q",
    ];
    a.extend_from_slice(args);
    let out = storlab(&a);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    json(&out)
}

/// The analytic number of distinct blocks `draws` zipf(θ) draws touch
/// among `n`: Σ_k 1 − (1 − p_k)^draws with p_k = k^−θ / H(n, θ).
fn zipf_distinct(n: usize, theta: f64, draws: f64) -> f64 {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
    let h: f64 = w.iter().sum();
    w.iter().map(|p| 1.0 - (1.0 - p / h).powf(draws)).sum()
}

/// zipf:1.2 random writes over 4,096 blocks (one pass: 4,096 writes with
/// replacement) touch the number of distinct blocks the law predicts
/// (about 750), far fewer than uniform draws with replacement (63 %,
/// 2,589); zoned:100/25 writes only in the first quarter; fio's
/// `rw=write:12k` writes every fourth block. Through flags and through
/// a fio job file.
#[test]
fn writes_land_where_the_distribution_puts_them() {
    let n = 4096usize;
    let Some(lo) = LoopDev::new(16 << 20) else {
        return;
    };
    let v = bench_dev(
        &lo,
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--size=16M",
            "--random-distribution=zipf:1.2",
        ],
    );
    assert_eq!(
        v["phases"][0]["params"]["random_distribution"]["kind"],
        "zipf"
    );
    assert_eq!(u(&v["phases"][0]["write"]["ops"]), n as u64);
    let got = written_blocks(&lo.dev, n).iter().filter(|&&w| w).count() as f64;
    let want = zipf_distinct(n, 1.2, n as f64);
    // fio's generator (Gray et al.'s approximation of the law) touches
    // about 3.5 % fewer blocks than the exact law (726 against 752 in a
    // simulation of fio's zipf_next), and one pass's count spreads by
    // about ±25 (3 %): 12 % holds both with room; uniform is 3.4× off.
    assert!(
        (got / want - 1.0).abs() < 0.12,
        "zipf:1.2 wrote {got} distinct blocks, law {want:.0}"
    );
    assert!(got < 0.5 * 2589.0, "{got}: not skewed");
    drop(lo);

    // zoned: every write in the first 25 % (the uniform law inside it
    // touches 1 − e^−4 of its 1,024 blocks).
    let Some(lo) = LoopDev::new(16 << 20) else {
        return;
    };
    let job = tempfile::tempdir().unwrap();
    let f = write(
        job.path(),
        "zoned.fio",
        &format!(
            "[z]\nfilename={}\nioengine=psync\ndirect=1\nrw=randwrite\nbs=4k\nsize=16m\n\
             random_distribution=zoned:100/25\n",
            lo.path()
        ),
    );
    let out = storlab(&[
        "bench",
        "--fio-job",
        f.to_str().unwrap(),
        "--allow-destroy",
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let w = written_blocks(&lo.dev, n);
    assert!(!w[1024..].iter().any(|&b| b), "a write outside the zone");
    let inside = w[..1024].iter().filter(|&&b| b).count() as f64;
    assert!(
        (inside / (1024.0 * (1.0 - (-4.0f64).exp())) - 1.0).abs() < 0.03,
        "{inside}"
    );
    drop(lo);

    // fio's rw=write:12k with bs=4k: blocks 0, 4, 8, ... of the first MiB.
    let Some(lo) = LoopDev::new(4 << 20) else {
        return;
    };
    let v = bench_dev(
        &lo,
        &["--rw=write", "--bs=4k", "--size=1M", "--seq-skip=12k"],
    );
    assert_eq!(u(&v["phases"][0]["params"]["seq_skip_bytes"]), 12288);
    let w = written_blocks(&lo.dev, 512);
    let at: Vec<usize> = (0..512).filter(|&i| w[i]).collect();
    assert_eq!(at, (0..256).step_by(4).collect::<Vec<_>>());
}

/// A fio job file with every key of this issue runs, and each reaches the
/// phase: `rw=read:-8k`, `bs=4k,64k`, `rate`, `rate_process`, `io_size`
/// (and `io_limit`), `number_ios`, `random_distribution`.
#[test]
fn fio_job_files_with_these_keys_run() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let f = write(
        d.path(),
        "patterns.fio",
        &format!(
            "[global]\nioengine=null\nsize=1m\ndirectory={}\n\n\
             [back]\nrw=read:-8k\nbs=4k\n\n\
             [mixed]\nstonewall\nrw=randrw\nbs=4k,64k\nio_size=3m\n\n\
             [zipf]\nstonewall\nrw=randread\nrandom_distribution=zipf:1.2:0.25\nnumber_ios=100\n\n\
             [capped]\nstonewall\nrw=randread\nrate=2m\nrate_process=poisson\nio_limit=512k\n",
            data.display()
        ),
    );
    let out = storlab(&[
        "bench",
        "--fio-job",
        f.to_str().unwrap(),
        "--no-save",
        "--output-format=json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let ph = v["phases"].as_array().unwrap();
    assert_eq!(ph.len(), 4);
    // Backwards: one pass of 1 MiB.
    assert_eq!(ph[0]["params"]["seq_skip_bytes"], -8192);
    assert_eq!(u(&ph[0]["read"]["bytes"]), 1 << 20);
    // bs=4k,64k with io_size=3m: 3 MiB moved, writes at 64 KiB.
    assert_eq!(u(&ph[1]["params"]["bs_write_bytes"]), 65536);
    let moved = u(&ph[1]["read"]["bytes"]) + u(&ph[1]["write"]["bytes"]);
    assert_eq!(moved, 3 << 20);
    assert!(u(&ph[1]["write"]["bytes"]) > 8 * u(&ph[1]["read"]["bytes"]));
    // zipf with its center; number_ios ends the job.
    let dist = &ph[2]["params"]["random_distribution"];
    assert_eq!(
        (dist["theta"].as_f64(), dist["center"].as_f64()),
        (Some(1.2), Some(0.25))
    );
    assert_eq!(u(&ph[2]["read"]["ops"]), 100);
    // rate=2m is fio's 2 MiB/s; io_limit is io_size.
    assert_eq!(u(&ph[3]["params"]["rate_read_bytes_per_s"]), 2 << 20);
    assert_eq!(ph[3]["params"]["rate_process"], "poisson");
    assert_eq!(u(&ph[3]["read"]["bytes"]), 512 << 10);
}

/// The achieved rate on the null engine: each direction at its own cap
/// (`--rate 4MB,1MB` on a 50/50 mix: fio's rate_ddir lets the other
/// direction go while one is ahead), and a Poisson process at its mean
/// rate.
#[test]
fn rates_are_met_per_direction_and_as_a_poisson_process() {
    let d = tempfile::tempdir().unwrap();
    let common = [
        "--engine=null",
        "--bs=4k",
        "--size=64M",
        "--runtime=2s",
        "--time-based",
    ];
    let mut a = common.to_vec();
    a.extend(["--rw=randrw", "--rate=4MB,1MB"]);
    let v = bench_json(d.path(), &a);
    let p = &v["phases"][0];
    let rd = p["read"]["bw_bytes_per_s"].as_f64().unwrap();
    let wr = p["write"]["bw_bytes_per_s"].as_f64().unwrap();
    assert!((rd / 4e6 - 1.0).abs() < 0.05, "reads at {rd} B/s");
    assert!((wr / 1e6 - 1.0).abs() < 0.05, "writes at {wr} B/s");
    let mut a = common.to_vec();
    a.extend(["--rw=randread", "--rate-iops=500", "--rate-process=poisson"]);
    let v = bench_json(d.path(), &a);
    let iops = v["phases"][0]["read"]["iops"].as_f64().unwrap();
    // 1,000 arrivals in 2 s: the count's own spread is about 3 %.
    assert!((iops / 500.0 - 1.0).abs() < 0.12, "{iops} IOPS");
    assert_eq!(v["phases"][0]["params"]["rate_process"], "poisson");
}

/// io_size, number_ios and bs_write through flags; bad values refused
/// with the fix, exit 2, on the command line and in a job file.
#[test]
fn limits_through_flags_and_bad_values_refused() {
    let d = tempfile::tempdir().unwrap();
    let base = ["--engine=null", "--bs=4k", "--size=1M"];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        bench_json(d.path(), &a)["phases"][0].clone()
    };
    assert_eq!(
        u(&run(&["--rw=randread", "--io-size=2M"])["read"]["bytes"]),
        2 << 20
    );
    assert_eq!(
        u(&run(&["--rw=randread", "--number-ios=7"])["read"]["ops"]),
        7
    );
    // A negative skip is a value, not a flag.
    let p = run(&["--rw=read", "--seq-skip", "-8k"]);
    assert_eq!(p["params"]["seq_skip_bytes"], -8192);
    assert_eq!(u(&p["read"]["bytes"]), 1 << 20);
    let p = run(&["--rw=randwrite", "--bs-write=64k"]);
    assert_eq!(u(&p["write"]["bytes"]), 1 << 20);
    assert_eq!(u(&p["write"]["ops"]), 16);

    for (args, want) in [
        (
            vec!["--rw=randread", "--random-distribution=zipf:1"],
            "theta",
        ),
        (
            vec!["--rw=randread", "--random-distribution=zoned:60/10:30/20"],
            "add up to 90",
        ),
        (
            vec!["--rw=randread", "--random-distribution=hot"],
            "unknown law",
        ),
        (
            vec!["--rw=randread", "--seq-skip=4k"],
            "sequential patterns",
        ),
        (vec!["--rw=randread", "--rate=1m,2m,3m"], "trims"),
        (vec!["--rw=randread", "--rate-process=bursty"], "poisson"),
        (vec!["--rw=randwrite", "--bs-write=1000"], "multiple of 512"),
    ] {
        let mut a = vec!["bench", d.path().to_str().unwrap(), "--no-save"];
        a.extend(base.iter().copied());
        a.extend(args.iter().copied());
        let out = storlab(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
    // fio's rw=randread:8 (8 sequential I/Os per random offset) is named.
    let f = write(
        d.path(),
        "r.fio",
        "[j]\nioengine=null\nsize=1m\nrw=randread:8\n",
    );
    let out = storlab(&["bench", "--fio-job", f.to_str().unwrap(), "--no-save"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains("r.fio:4") && e.contains("rw=randread:8"), "{e}");
}
