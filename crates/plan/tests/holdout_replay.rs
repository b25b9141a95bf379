//! Issue 24's calibration goal held against measurements kept from a quiet
//! window. `tests/integration/calib_holdout.rs` measures this machine's
//! disk and cannot hold the goal in CI (the same point's repeats spread by
//! 70 % and more on two loaded cores: it stays `#[ignore]`d); these are the
//! figures `scripts/calibrate-holdout.sh` measured on 2026-11-27,
//! 17:07–17:10 UTC, load average 0.3–1.2, after every other job had
//! stopped (docs/MODEL.md §8, the row "Quiet window"): storlab's bench,
//! O_DIRECT on 256 MiB files on the VM's virtio disk, bs 4k..1m × iodepth
//! 1..32, random and sequential reads and writes, three interleaved rounds
//! of 1 s, each phase's IOPS and the block layer's merge factor as that
//! run's held-out table and fits printed them (`data/quiet-holdout-2026-11-27.csv`).
//! Replayed through `plan calibrate`'s fit with `--hold-out alternate
//! --repeats median`, the held-out half must meet the goal: median |error|
//! ≤ 15 %, worst ≤ 35 % (never loosened). The fit of the day (a constant
//! host cost per request) gave median 5.5 %, worst 57.2 % on these
//! figures, as the run printed: sequential 4 KiB reads at QD 32 ran
//! 185,000 requests/s where it allowed 79,400.

use storlab_plan::calibrate::{HoldOut, Observation, Repeats, calibrate_with};

const DATA: &str = include_str!("data/quiet-holdout-2026-11-27.csv");

fn observations() -> Vec<Observation> {
    let mut out = Vec::new();
    for (i, line) in DATA.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "line {}: {line}", i + 1);
        let bytes = match f[1] {
            "4k" => 4096,
            "16k" => 16 << 10,
            "64k" => 64 << 10,
            "256k" => 256 << 10,
            "1M" => 1 << 20,
            other => panic!("line {}: size {other}", i + 1),
        };
        out.push(Observation {
            label: format!("quiet {}-{}-qd{}", f[0], f[1], f[2]),
            write: f[0].contains("write"),
            random: f[0].starts_with("rand"),
            request_bytes: bytes,
            in_flight: f[2].parse().unwrap(),
            iops: f[3].parse().unwrap(),
            merge: Some(f[4].parse().unwrap()),
        });
    }
    out
}

#[test]
fn the_quiet_windows_sweep_predicts_its_held_out_half_within_the_goal() {
    let obs = observations();
    assert_eq!(obs.len(), 360, "120 points x 3 rounds");
    let hold = HoldOut {
        sizes: Vec::new(),
        alternate: true,
    };
    let cal = calibrate_with("quiet", &obs, &hold, Repeats::Median).unwrap();
    let h = cal.held_out.expect("a held-out report");
    assert_eq!(h.points.len(), 60);
    assert_eq!(h.not_predicted, 0);
    let (median, worst) = (h.median_error.unwrap(), h.worst_error.unwrap());
    let mut pts: Vec<_> = h.points.iter().collect();
    pts.sort_by(|a, b| {
        b.error
            .unwrap_or(0.0)
            .abs()
            .total_cmp(&a.error.unwrap_or(0.0).abs())
    });
    for p in pts.iter().take(5) {
        println!(
            "{}: measured {:.0}, predicted {:.0}, {:+.1} %",
            p.label,
            p.measured_iops,
            p.predicted_iops.unwrap_or(0.0),
            100.0 * p.error.unwrap_or(0.0)
        );
    }
    println!(
        "held out: median {:.1} %, worst {:.1} %",
        100.0 * median,
        100.0 * worst
    );
    assert!(median <= 0.15, "median {median}");
    assert!(worst <= 0.35, "worst {worst}: {:?}", pts[0]);
    // The host's cost per request falls with depth in every kind fitted.
    for (dir, f) in [("read", &cal.read), ("write", &cal.write)] {
        for q in [&f.sequential_queue, &f.random_queue] {
            let q = q.as_ref().expect("a queue-depth fit");
            assert!(
                q.host_call_s.is_some_and(|c| c > 0.0),
                "{dir}: no per-call cost: {q:?}"
            );
        }
    }
}
