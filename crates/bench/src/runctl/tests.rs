use super::*;
use storlab_types::{ExitWhat, RunControl};

fn rc(target_us: u64, window_us: u64, pct: f64, iodepth: u32) -> (RunControl, u32) {
    (
        RunControl {
            latency_target_ns: target_us * 1000,
            latency_window_ns: window_us * 1000,
            latency_percentile: pct,
            ..Default::default()
        },
        iodepth,
    )
}

/// A device whose latency is 100 µs per I/O in flight: depth d gives d ×
/// 100 µs. With a 550 µs target fio's search goes 1, 2, 4, 8 (fails at
/// its first I/O), bisects down to 6 (fails) and 5, runs a final window at
/// 5 and ends.
#[test]
fn latency_search_finds_the_deepest_depth_under_the_target() {
    let (rc, depth) = rc(550, 1000, 100.0, 32);
    let mut l = LatTarget::new(&rc, depth, 0);
    let mut now = 0u64;
    let mut depths = vec![];
    for _ in 0..200 {
        if l.done {
            break;
        }
        depths.push(l.qd);
        // One window: 10 completions, each at the depth of the moment
        // (a failure lowers the depth at once, after the I/O in flight).
        for _ in 0..10 {
            now += 100_000;
            l.completed(u64::from(l.qd) * 100_000, now);
        }
        now += 1_000_000;
        l.check(now);
        l.quiesce = false;
    }
    assert!(l.done, "the search ends: {depths:?}");
    assert_eq!(l.qd, 5, "{depths:?}");
    assert!(l.settled());
    depths.dedup();
    assert_eq!(
        &depths[..4],
        &[1, 2, 4, 8],
        "doubles until a failure: {depths:?}"
    );
    assert!(depths.iter().all(|&d| d <= 8));
    assert_eq!(*depths.last().unwrap(), 5);
}

/// latency_percentile below 100: a window passes when that share of its
/// I/Os meets the target; one slow I/O in 100 passes 99, fails 99.5.
#[test]
fn latency_percentile_judges_the_share_under_the_target() {
    for (pct, up) in [(99.0, true), (99.5, false)] {
        let (rc, depth) = rc(500, 1000, pct, 16);
        let mut l = LatTarget::new(&rc, depth, 0);
        // Get to depth 2 first.
        l.completed(100_000, 10);
        assert_eq!(l.check(2_000_000), LatStep::Up);
        assert_eq!(l.qd, 2);
        for i in 0..100 {
            l.completed(if i == 0 { 900_000 } else { 100_000 }, 2_000_000 + i);
        }
        let step = l.check(4_000_000);
        assert_eq!(step == LatStep::Up, up, "pct {pct}: {step:?}");
        assert_eq!(l.qd, if up { 4 } else { 1 }, "pct {pct}");
    }
}

/// latency_percentile=100 (fio's default): one I/O over the target at
/// depth 1 fails the job, with fio's message.
#[test]
fn latency_target_at_depth_one_fails_the_job() {
    let (rc, depth) = rc(500, 1000, 100.0, 8);
    let mut l = LatTarget::new(&rc, depth, 0);
    l.completed(600_000, 1);
    let msg = l.fatal.clone().unwrap();
    assert!(msg.contains("exceeds specified max (500000 nsec)"), "{msg}");
}

/// fio's flow: two jobs of one flow_id with weights 1 and 8 issue in the
/// ratio 1:8 when each tries to issue as often as it can.
#[test]
fn flow_keeps_the_weights_ratio() {
    let shared = Shared::default();
    let p = |w: u64| PhaseParams {
        name: format!("w{w}"),
        run_control: Some(RunControl {
            flow: w,
            ..Default::default()
        }),
        ..Default::default()
    };
    let (p1, p8) = (p(1), p(8));
    let mut a = JobCtl::of(0, &p1, &shared).unwrap();
    let mut b = JobCtl::of(1, &p8, &shared).unwrap();
    let (mut na, mut nb) = (0u64, 0u64);
    for _ in 0..9000 {
        if a.flow_wait(0).is_none() {
            na += 1;
        }
        if b.flow_wait(0).is_none() {
            nb += 1;
        }
    }
    let ratio = nb as f64 / na as f64;
    assert!((ratio - 8.0).abs() < 0.1, "{nb}:{na} = {ratio}");
    // The heavy job leaves: the light one is no longer held back.
    b.done(&AtomicBool::new(false));
    let before = na;
    for _ in 0..100 {
        if a.flow_wait(0).is_none() {
            na += 1;
        }
    }
    assert_eq!(na - before, 100);
}

/// fio's check_min_rate: nothing in the first 2 s, then each ratecycle
/// the rate since the last check must reach rate_min; the message is
/// fio's.
#[test]
fn rate_min_fails_below_the_minimum_after_the_settle_period() {
    let shared = Shared::default();
    let p = PhaseParams {
        name: "slow".into(),
        run_control: Some(RunControl {
            rate_min_read: 1024,
            ratecycle_ns: 1_000_000_000,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut c = JobCtl::of(0, &p, &shared).unwrap();
    c.started(0);
    const S: u64 = 1_000_000_000;
    // 512 B/s: below the minimum, but fio lets the first 2 s settle.
    let mut t = 0;
    while t < 2 * S {
        t += S / 4;
        c.completed(true, 128, 1, t);
        assert_eq!(c.check_rate(t), Ok(()), "at {t}");
    }
    // The first check only records; the next, a cycle later, judges.
    let mut failed = None;
    while t < 5 * S && failed.is_none() {
        t += S / 4;
        c.completed(true, 128, 1, t);
        failed = c.check_rate(t).err();
    }
    let msg = failed.expect("below rate_min");
    assert_eq!(msg, "slow: rate_min=1024B/s not met, got 512B/s");
    assert!(t >= 3 * S);
    // At 2048 B/s it never fails.
    let mut c = JobCtl::of(0, &p, &shared).unwrap();
    c.started(0);
    for i in 1..=40u64 {
        c.completed(true, 512, 1, i * S / 4);
        assert_eq!(c.check_rate(i * S / 4), Ok(()));
    }
}

/// exit_what=group stops the jobs of the ending job's reporting group
/// (fio's groupid: new_group starts one), not the others.
#[test]
fn exitall_group_stops_its_reporting_group_only() {
    let shared = Shared::default();
    let on = Some(RunControl {
        exitall: true,
        ..Default::default()
    });
    let g0 = PhaseParams {
        run_control: on,
        ..Default::default()
    };
    // Shares g0's reporting group (no new_group between them).
    let g1 = PhaseParams {
        run_control: on,
        shares_report: true,
        ..Default::default()
    };
    // A reporting group of its own.
    let g2 = PhaseParams {
        run_control: on,
        ..Default::default()
    };
    let a = JobCtl::of(0, &g0, &shared).unwrap();
    let mut b = JobCtl::of(1, &g1, &shared).unwrap();
    let mut c = JobCtl::of(2, &g2, &shared).unwrap();
    let stop = AtomicBool::new(false);
    assert!(!b.stopped_by_group());
    a.done(&stop);
    assert!(b.stopped_by_group(), "same reporting group");
    assert!(!c.stopped_by_group(), "its own reporting group");
    assert!(!stop.load(Ordering::Relaxed));
    assert_eq!(shared.run_ended(), None);
    // exit_what=stonewall stops the phase; all ends the run.
    let s = PhaseParams {
        run_control: Some(RunControl {
            exitall: true,
            exit_what: ExitWhat::Stonewall,
            ..Default::default()
        }),
        ..Default::default()
    };
    JobCtl::of(3, &s, &shared).unwrap().done(&stop);
    assert!(stop.load(Ordering::Relaxed));
    assert_eq!(shared.run_ended(), None);
    let all = PhaseParams {
        name: "slow2".into(),
        run_control: Some(RunControl {
            exitall: true,
            exit_what: ExitWhat::All,
            ..Default::default()
        }),
        ..Default::default()
    };
    JobCtl::of(4, &all, &shared).unwrap().done(&stop);
    assert!(shared.run_ended().unwrap().contains("slow2"));
    let _ = &mut c;
}

#[test]
fn resolve_reads_fios_units() {
    let spec =
        |pairs: &[(&str, &str)]| crate::options::spec_from_pairs(pairs.iter().copied()).unwrap();
    assert_eq!(resolve(&spec(&[("rw", "read")])).unwrap(), None);
    let r = resolve(&spec(&[
        ("startdelay", "4"),
        ("flow_sleep", "1000"),
        ("latency_target", "500000"),
        ("latency_window", "5000000"),
        ("latency_percentile", "99.9"),
        ("ratemin", "1024"),
        ("exit_what", "stonewall"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(
        r.startdelay_ns, 4_000_000_000,
        "a bare startdelay is seconds"
    );
    assert_eq!(
        r.flow_sleep_ns, 1_000_000,
        "a bare flow_sleep is microseconds"
    );
    assert_eq!(r.latency_target_ns, 500_000_000, "microseconds: 500 ms");
    assert_eq!(r.latency_window_ns, 5_000_000_000);
    assert_eq!(r.latency_percentile, 99.9);
    assert_eq!((r.rate_min_read, r.rate_min_write), (1024, 1024));
    assert_eq!(r.ratecycle_ns, 1_000_000_000);
    assert_eq!(r.exit_what, ExitWhat::Stonewall);
    let e = resolve(&spec(&[("exit_what", "some")])).unwrap_err();
    assert!(e.0.contains("group, stonewall or all"), "{e}");
    let e = resolve(&spec(&[("startdelay", "1-5")])).unwrap_err();
    assert!(e.0.contains("range"), "{e}");
}
