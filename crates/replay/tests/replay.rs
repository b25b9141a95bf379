//! The replay against traces whose content is known: fio iologs written
//! here, and the real Darshan DXT logs kept in `tests/fixtures/darshan`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use storlab_replay::{PathMap, Speed, prepare, replay};
use storlab_trace::OpenOptions;

/// A fio v3 iolog: `ops` reads of 4 KiB, one every `gap_us`, at offsets
/// spread over 4 MiB, then `writes` writes at the end.
fn iolog(dir: &Path, ops: u64, gap_us: u64, writes: u64) -> PathBuf {
    let mut t = String::from(
        "fio version 3 iolog\n0 /data/app.dat add\n0 /data/out.dat add\n0 /data/app.dat open\n",
    );
    let mut ts = 0;
    for i in 0..ops {
        ts = i * gap_us;
        writeln!(
            t,
            "{ts} /data/app.dat read {} 4096",
            (i * 7919 % 1024) * 4096
        )
        .expect("string");
    }
    for i in 0..writes {
        writeln!(t, "{} /data/out.dat write {} 65536", ts + i, i * 65536).expect("string");
    }
    writeln!(t, "{} /data/app.dat close", ts + writes + 1).expect("string");
    let p = dir.join("app.iolog");
    std::fs::write(&p, t).expect("iolog written");
    p
}

fn run(trace: &Path, target: &Path, speed: Speed) -> storlab_replay::ReplayResult {
    let opts = OpenOptions::default();
    let layout = prepare(trace, &opts, &PathMap::default()).expect("trace prepared");
    let prep = storlab_replay::prepare::lay_out(layout, target, &|| false).expect("laid out");
    replay(&prep, &opts, speed, &|| false).expect("replayed")
}

#[test]
fn a_timed_iolog_replays_at_its_recorded_rate_with_every_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 250 IOPS: one read every 4 ms, 200 of them (0.8 s).
    let trace = iolog(dir.path(), 200, 4_000, 0);
    let r = run(&trace, dir.path(), Speed::Original);
    assert!(r.differences.is_empty(), "{:?}", r.differences);
    let rank = &r.ranks[0];
    assert_eq!((rank.reads, rank.bytes_read), (200, 200 * 4096));
    let (replayed, recorded) = r.rates().expect("a rate");
    assert!((recorded - 250.0).abs() < 1e-9, "{recorded}");
    // The script (scripts/replay-fidelity.sh) holds the ±1 IOPS goal on a
    // quiet machine; a loaded test machine gets ±2 %.
    assert!(
        (replayed / recorded - 1.0).abs() < 0.02,
        "{replayed} vs {recorded}"
    );
    // Recorded timing kept: the replay lasts as long as the trace.
    assert!(r.elapsed.as_secs_f64() > 0.79, "{:?}", r.elapsed);
}

#[test]
fn at_max_speed_the_order_is_kept_and_the_gaps_are_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 200, 4_000, 16);
    let r = run(&trace, dir.path(), Speed::Max);
    assert!(r.differences.is_empty(), "{:?}", r.differences);
    let rank = &r.ranks[0];
    assert_eq!((rank.writes, rank.bytes_written), (16, 16 * 65536));
    assert!(
        r.elapsed.as_secs_f64() < 0.5,
        "no think time: {:?}",
        r.elapsed
    );
    // The written file holds exactly what the trace wrote, inside storlab's
    // own directory of the target, and nothing else was written there.
    let runs: Vec<_> = std::fs::read_dir(dir.path())
        .expect("target")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    assert_eq!(runs.len(), 1, "one run directory");
    let out = runs[0].path().join("data/out.dat");
    assert_eq!(std::fs::metadata(out).expect("written").len(), 16 * 65536);
}

/// `--speed max` has no schedule, so it stamps none: no start lag is kept
/// per operation (it was, as zeros: a clock read and a histogram entry per
/// operation for nothing), while every operation's latency still is.
#[test]
fn at_max_speed_no_start_lag_is_stamped_but_every_latency_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 300, 4_000, 8);
    let r = run(&trace, dir.path(), Speed::Max);
    assert!(r.differences.is_empty(), "{:?}", r.differences);
    let rank = &r.ranks[0];
    assert_eq!((rank.reads, rank.writes), (300, 8));
    assert_eq!(rank.lag.len(), 0, "start lags stamped at --speed max");
    assert_eq!(rank.latency.len(), 308, "one latency per operation");
    // A timed replay still stamps every operation's lag.
    let r = run(&trace, dir.path(), Speed::Factor(100.0));
    assert_eq!(r.ranks[0].lag.len(), 308);
}

#[test]
fn a_factor_scales_the_recorded_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 100, 4_000, 0);
    let r = run(&trace, dir.path(), Speed::Factor(4.0));
    let secs = r.elapsed.as_secs_f64();
    assert!((0.09..0.3).contains(&secs), "0.4 s of trace at 4x: {secs}");
}

fn darshan(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/darshan")
        .join(name)
}

#[test]
fn a_real_darshan_dxt_log_replays_every_ranks_bytes_and_operations_exactly() {
    for name in ["sample-dxt-simple.darshan", "dxt.darshan"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let trace = darshan(name);
        let opts = OpenOptions::default();
        let layout = prepare(&trace, &opts, &PathMap::default()).expect("prepared");
        let want = layout.summary.ranks.clone();
        let prep =
            storlab_replay::prepare::lay_out(layout, dir.path(), &|| false).expect("laid out");
        let r = replay(&prep, &opts, Speed::Max, &|| false).expect("replayed");
        assert!(r.differences.is_empty(), "{name}: {:?}", r.differences);
        for t in want.iter().filter(|t| t.reads + t.writes > 0) {
            let got = r
                .ranks
                .iter()
                .find(|r| r.rank == t.rank)
                .expect("rank replayed");
            assert_eq!(
                (got.reads, got.writes, got.bytes_read, got.bytes_written),
                (t.reads, t.writes, t.bytes_read, t.bytes_written),
                "{name} rank {}",
                t.rank
            );
        }
    }
}

#[test]
fn a_map_that_leaves_a_file_out_is_refused_before_any_io() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 4, 10, 1);
    let map = PathMap::parse(["/data/app.dat=app.dat"]).expect("rule");
    let e = prepare(&trace, &OpenOptions::default(), &map).expect_err("out.dat unmapped");
    assert!(e.to_string().contains("/data/out.dat"), "{e}");
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .collect();
    assert_eq!(made.len(), 1, "only the trace itself");
}

#[test]
fn the_run_record_counts_what_was_moved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 50, 100, 4);
    let opts = OpenOptions::default();
    let layout = prepare(&trace, &opts, &PathMap::default()).expect("prepared");
    let prep = storlab_replay::prepare::lay_out(layout, dir.path(), &|| false).expect("laid out");
    let r = replay(&prep, &opts, Speed::Original, &|| false).expect("replayed");
    let rec = r.to_report(&prep, storlab_types::HostInfo::default());
    let p = &rec.phases[0];
    assert_eq!(p.read.bytes, 50 * 4096);
    assert_eq!(p.write.bytes, 4 * 65536);
    assert_eq!(p.total.ops, 54);
    // rate × window = bytes, the identity every phase keeps
    let implied = p.total.bw_bytes_per_s * p.elapsed_ns as f64 / 1e9;
    assert!((implied - p.total.bytes as f64).abs() < 1.0);
    assert!(
        p.warnings.iter().any(|w| w.starts_with("start lag")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn a_layout_stopped_or_failed_midway_leaves_nothing_in_the_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = iolog(dir.path(), 50, 100, 4);
    let target = dir.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let opts = OpenOptions::default();
    let layout = prepare(&trace, &opts, &PathMap::default()).expect("prepared");
    // A signal during the fill of the read file.
    let e = storlab_replay::prepare::lay_out(layout, &target, &|| true).expect_err("stopped");
    assert!(matches!(e, storlab_replay::PrepareError::Stopped), "{e}");
    let left: Vec<_> = std::fs::read_dir(&target).expect("dir").collect();
    assert!(left.is_empty(), "the run directory is removed: {left:?}");
    // A file and a directory of one name in the trace: the second cannot be
    // made, and what was made before it is removed too.
    let clash = dir.path().join("clash.iolog");
    std::fs::write(
        &clash,
        "fio version 3 iolog\n0 /d/a add\n0 /d/a/b add\n1 /d/a read 0 4096\n2 /d/a/b write 0 4096\n",
    )
    .expect("written");
    let layout = prepare(&clash, &opts, &PathMap::default()).expect("prepared");
    assert!(storlab_replay::prepare::lay_out(layout, &target, &|| false).is_err());
    let left: Vec<_> = std::fs::read_dir(&target).expect("dir").collect();
    assert!(
        left.is_empty(),
        "nothing left after a failed layout: {left:?}"
    );
}
