//! Per-interval figures from two counter snapshots, with the definitions of
//! sysstat's `iostat -x` (`compute_ext_disk_stats` and `write_ext_stat` in
//! sysstat 12). `docs/monitor.md` lists them. With Δ the change of a counter
//! over the interval and `t` the interval in seconds:
//!
//! * `r/s = Δrd_ios / t`, `rMB/s = Δrd_sectors × 512 / t` (and w, d likewise)
//! * `rrqm/s = Δrd_merges / t`
//! * `r_await = Δrd_ticks / Δrd_ios` ms (0 when no reads completed)
//! * `rareq-sz = Δrd_sectors × 512 / Δrd_ios`
//! * `areq-sz = Δ(rd+wr+dc)_sectors × 512 / Δ(rd+wr+dc)_ios`
//! * `aqu-sz = Δtime_in_queue / (t × 1000)`
//! * `%util = Δio_ticks / (t × 1000) × 100`, at most 100
//! * `f/s = Δfl_ios / t`, `f_await = Δfl_ticks / Δfl_ios`

//!
//! Before any of that, [`check`] decides whether the counters can be turned
//! into rates at all: a counter that went backwards (a wrap or a re-created
//! device) or moved more than a device physically can makes the interval
//! flagged ([`storlab_types::SampleFlag`]) instead of a huge rate.

use crate::diskstats::Counters;
use storlab_types::{DeviceSample, SampleFlag};

/// Bytes per sector in `/proc/diskstats` (always 512, whatever the device).
pub const SECTOR: f64 = 512.0;

/// The most bytes per second any block device is taken to move (reads,
/// writes and discards together): 100 GB/s, several times the fastest
/// single device or array a host sees today.
pub const MAX_BYTES_PER_S: f64 = 100e9;

/// The most requests per second any block device is taken to complete
/// (reads, writes, discards and flushes together; and, separately, merges):
/// 100 million, tens of times the fastest NVMe device.
pub const MAX_IOS_PER_S: f64 = 100e6;

/// The most I/Os taken to be in flight on one device at once; a time
/// counter (`rd_ticks`, `time_in_queue`, ...) grows by at most this many ms
/// per ms of the interval, plus [`TICKS_SLACK_MS`].
pub const MAX_IN_FLIGHT: f64 = 1e6;

/// Slack for the time counters: the kernel adds a long request's whole
/// busy time when it completes, so one interval can hold more busy time
/// than its own length.
pub const TICKS_SLACK_MS: f64 = 600_000.0;

/// Why the change of counters from `prev` to `cur` over `interval_ns`
/// cannot be a measurement: `None` when it can, else the flag and what was
/// wrong (the counter and its values). `in_flight` is a gauge and is not
/// checked.
///
/// * **reset**: a cumulative counter went down: the device was re-created
///   and counts from 0 again, or a wrap (a ms counter, which the kernel
///   prints as 32 bits, that went down from a 32-bit value is taken as a
///   wrap and counted across it when the wrapped change is within the
///   time bound below; then it is no reset);
/// * **impossible**: a counter jumped to exactly 2^32−1 or 2^64−1 (the
///   value of an unset or corrupted counter), or the interval's bytes
///   exceed [`MAX_BYTES_PER_S`] × t, its requests or its merges
///   [`MAX_IOS_PER_S`] × t, or a time counter [`MAX_IN_FLIGHT`] × the
///   interval's ms + [`TICKS_SLACK_MS`].
pub fn check(prev: &Counters, cur: &Counters, interval_ns: u64) -> Option<(SampleFlag, String)> {
    let fields = |c: &Counters| {
        [
            ("rd_ios", c.rd_ios),
            ("rd_merges", c.rd_merges),
            ("rd_sectors", c.rd_sectors),
            ("rd_ticks", c.rd_ticks),
            ("wr_ios", c.wr_ios),
            ("wr_merges", c.wr_merges),
            ("wr_sectors", c.wr_sectors),
            ("wr_ticks", c.wr_ticks),
            ("io_ticks", c.io_ticks),
            ("time_in_queue", c.time_in_queue),
            ("dc_ios", c.dc_ios),
            ("dc_merges", c.dc_merges),
            ("dc_sectors", c.dc_sectors),
            ("dc_ticks", c.dc_ticks),
            ("fl_ios", c.fl_ios),
            ("fl_ticks", c.fl_ticks),
        ]
    };
    let (old, new) = (fields(prev), fields(cur));
    let t = interval_ns as f64 / 1e9;
    let max_ticks = MAX_IN_FLIGHT * t * 1000.0 + TICKS_SLACK_MS;
    for ((name, a), (_, b)) in old.iter().zip(new.iter()) {
        // The kernel prints the ms counters as 32-bit numbers: one that
        // went down from a 32-bit value by a plausible wrap is counted
        // across the wrap (`time_in_queue` at queue depth 1000 wraps every
        // 72 minutes). Anything else that went down is a reset.
        let wrapped = name.ends_with("_ticks") || *name == "time_in_queue";
        if b < a
            && !(wrapped
                && *a <= u64::from(u32::MAX)
                && crate::diskstats::counter_delta(*a, *b) as f64 <= max_ticks)
        {
            return Some((
                SampleFlag::Reset,
                format!(
                    "{name} went backwards ({a} -> {b}): the counter wrapped or the device was re-created"
                ),
            ));
        }
    }
    for ((name, a), (_, b)) in old.iter().zip(new.iter()) {
        if b != a && (*b == u64::from(u32::MAX) || *b == u64::MAX) {
            return Some((
                SampleFlag::Impossible,
                format!(
                    "{name} jumped from {a} to {b}, the {} sentinel of an unset or corrupted counter",
                    if *b == u64::MAX { "2^64-1" } else { "2^32-1" }
                ),
            ));
        }
    }
    let d = cur.delta(prev);
    let sectors = d.rd_sectors as f64 + d.wr_sectors as f64 + d.dc_sectors as f64;
    if sectors * SECTOR > MAX_BYTES_PER_S * t {
        return Some((
            SampleFlag::Impossible,
            format!(
                "{sectors} sectors ({:.3e} bytes) in {t:.3} s is beyond {:.0} GB/s, more than a block device can move",
                sectors * SECTOR,
                MAX_BYTES_PER_S / 1e9
            ),
        ));
    }
    let ios = d.rd_ios as f64 + d.wr_ios as f64 + d.dc_ios as f64 + d.fl_ios as f64;
    let merges = d.rd_merges as f64 + d.wr_merges as f64 + d.dc_merges as f64;
    for (what, n) in [("requests", ios), ("merges", merges)] {
        if n > MAX_IOS_PER_S * t {
            return Some((
                SampleFlag::Impossible,
                format!(
                    "{n} {what} in {t:.3} s is beyond {:.0} million per second, more than a block device can complete",
                    MAX_IOS_PER_S / 1e6
                ),
            ));
        }
    }
    for (name, v) in [
        ("rd_ticks", d.rd_ticks),
        ("wr_ticks", d.wr_ticks),
        ("io_ticks", d.io_ticks),
        ("time_in_queue", d.time_in_queue),
        ("dc_ticks", d.dc_ticks),
        ("fl_ticks", d.fl_ticks),
    ] {
        if v as f64 > max_ticks {
            return Some((
                SampleFlag::Impossible,
                format!(
                    "{name} grew by {v} ms in {t:.3} s, more than {:.0e} I/Os in flight could add",
                    MAX_IN_FLIGHT
                ),
            ));
        }
    }
    None
}

/// The sample of a flagged interval: every figure 0 (not a measurement),
/// the flag and its reason set.
pub fn flagged_sample(device: &str, t_ns: u64, flag: SampleFlag, detail: &str) -> DeviceSample {
    DeviceSample {
        t_ns,
        device: device.to_string(),
        flag: Some(flag),
        flag_detail: Some(detail.to_string()),
        ..DeviceSample::default()
    }
}

/// The figures of one interval. `delta` is the change of the counters
/// (see [`Counters::delta`]), `interval_ns` the time between the snapshots.
pub fn device_sample(device: &str, t_ns: u64, delta: &Counters, interval_ns: u64) -> DeviceSample {
    let t = interval_ns as f64 / 1e9;
    let per_s = |x: u64| if t > 0.0 { x as f64 / t } else { 0.0 };
    let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    let d = delta;
    let all_ios = d.rd_ios + d.wr_ios + d.dc_ios;
    let all_sectors = d.rd_sectors + d.wr_sectors + d.dc_sectors;
    let ms = t * 1000.0;
    DeviceSample {
        t_ns,
        device: device.to_string(),
        r_per_s: per_s(d.rd_ios),
        w_per_s: per_s(d.wr_ios),
        r_bytes_per_s: per_s(d.rd_sectors) * SECTOR,
        w_bytes_per_s: per_s(d.wr_sectors) * SECTOR,
        rrqm_per_s: per_s(d.rd_merges),
        wrqm_per_s: per_s(d.wr_merges),
        r_await_ms: ratio(d.rd_ticks, d.rd_ios),
        w_await_ms: ratio(d.wr_ticks, d.wr_ios),
        areq_sz_bytes: ratio(all_sectors, all_ios) * SECTOR,
        aqu_sz: if ms > 0.0 {
            d.time_in_queue as f64 / ms
        } else {
            0.0
        },
        util_pct: if ms > 0.0 {
            (d.io_ticks as f64 / ms * 100.0).min(100.0)
        } else {
            0.0
        },
        d_per_s: per_s(d.dc_ios),
        d_bytes_per_s: per_s(d.dc_sectors) * SECTOR,
        d_await_ms: ratio(d.dc_ticks, d.dc_ios),
        f_per_s: per_s(d.fl_ios),
        f_await_ms: ratio(d.fl_ticks, d.fl_ios),
        r_areq_sz_bytes: ratio(d.rd_sectors, d.rd_ios) * SECTOR,
        w_areq_sz_bytes: ratio(d.wr_sectors, d.wr_ios) * SECTOR,
        drqm_per_s: per_s(d.dc_merges),
        d_areq_sz_bytes: ratio(d.dc_sectors, d.dc_ios) * SECTOR,
        flag: None,
        flag_detail: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diskstats::parse_line;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }

    /// Two snapshots 2 s apart, worked by hand.
    #[test]
    fn hand_computed() {
        let a = parse_line(
            "8 0 sda 1000 10 80000 500 2000 100 160000 4000 0 1000 4500 10 1 800 20 50 5",
            1,
        )
        .unwrap();
        let b = parse_line(
            "8 0 sda 1400 30 160000 1300 2600 160 208000 5800 3 2500 9100 14 2 1600 28 60 8",
            1,
        )
        .unwrap();
        let d = b.counters.delta(&a.counters);
        let s = device_sample("sda", 5, &d, 2_000_000_000);
        // reads: 400 in 2 s, 80000 sectors = 40 960 000 bytes
        close(s.r_per_s, 200.0);
        close(s.r_bytes_per_s, 20_480_000.0);
        close(s.rrqm_per_s, 10.0);
        close(s.r_await_ms, 800.0 / 400.0);
        close(s.r_areq_sz_bytes, 80000.0 * 512.0 / 400.0);
        // writes: 600, 48000 sectors, 1800 ms, 60 merges
        close(s.w_per_s, 300.0);
        close(s.w_bytes_per_s, 48000.0 * 512.0 / 2.0);
        close(s.wrqm_per_s, 30.0);
        close(s.w_await_ms, 3.0);
        close(s.w_areq_sz_bytes, 48000.0 * 512.0 / 600.0);
        // discards: 4, 800 sectors, 8 ms, 1 merge
        close(s.d_per_s, 2.0);
        close(s.d_bytes_per_s, 800.0 * 512.0 / 2.0);
        close(s.d_await_ms, 2.0);
        close(s.drqm_per_s, 0.5);
        close(s.d_areq_sz_bytes, 800.0 * 512.0 / 4.0);
        // flushes: 10 in 2 s, 3 ms
        close(s.f_per_s, 5.0);
        close(s.f_await_ms, 0.3);
        // all: 1004 ios, 128800 sectors
        close(s.areq_sz_bytes, 128_800.0 * 512.0 / 1004.0);
        // queue: 4600 weighted ms over 2000 ms; busy 1500 of 2000 ms
        close(s.aqu_sz, 2.3);
        close(s.util_pct, 75.0);
        assert_eq!(s.device, "sda");
        assert_eq!(s.t_ns, 5);
    }

    #[test]
    fn idle_and_saturated() {
        let z = Counters::default();
        let s = device_sample("x", 0, &z, 1_000_000_000);
        assert_eq!(s.r_await_ms, 0.0);
        assert_eq!(s.areq_sz_bytes, 0.0);
        let busy = Counters {
            io_ticks: 1020,
            ..z
        };
        // io_ticks can exceed the interval by a tick; %util is capped.
        close(device_sample("x", 0, &busy, 1_000_000_000).util_pct, 100.0);
        // No time passed: nothing divides by zero.
        let s = device_sample("x", 0, &busy, 0);
        assert_eq!(s.util_pct, 0.0);
        assert!(s.r_per_s.is_finite());
    }

    fn flag_of(prev: &Counters, cur: &Counters, ns: u64) -> Option<SampleFlag> {
        check(prev, cur, ns).map(|(f, _)| f)
    }

    /// Synthetic counters: the flag decides, never a huge rate.
    #[test]
    fn backwards_and_impossible_counters_are_flagged() {
        let a = Counters {
            rd_ios: 1000,
            rd_merges: 10,
            rd_sectors: 80_000,
            rd_ticks: 500,
            io_ticks: 900,
            time_in_queue: 1200,
            ..Counters::default()
        };
        let sec = 1_000_000_000;
        // Ordinary growth: no flag.
        let ok = Counters {
            rd_ios: 2000,
            rd_sectors: 160_000,
            ..a
        };
        assert_eq!(check(&a, &ok, sec), None);
        // Backwards (a wrap or a re-created device): reset, naming the counter.
        let back = Counters { rd_ios: 3, ..a };
        let (f, why) = check(&a, &back, sec).unwrap();
        assert_eq!(f, SampleFlag::Reset);
        assert!(why.contains("rd_ios") && why.contains("1000 -> 3"), "{why}");
        // A ms counter (32 bits in /proc/diskstats) wrapping: counted across
        // the wrap, no flag; the same drop with a wrapped change beyond the
        // time bound is a reset.
        let near = Counters {
            time_in_queue: u64::from(u32::MAX) - 100,
            ..a
        };
        let wrapped = Counters {
            time_in_queue: 50,
            ..a
        };
        assert_eq!(check(&near, &wrapped, sec), None);
        assert_eq!(wrapped.delta(&near).time_in_queue, 151);
        let dropped = Counters { rd_ticks: 10, ..a };
        assert_eq!(flag_of(&a, &dropped, sec), Some(SampleFlag::Reset));
        // Counts, sectors and merges are 64-bit: going down is a reset.
        let big = Counters {
            wr_sectors: u64::from(u32::MAX) - 10,
            ..a
        };
        let small = Counters { wr_sectors: 5, ..a };
        assert_eq!(flag_of(&big, &small, sec), Some(SampleFlag::Reset));
        // A jump to a sentinel, even over a long interval.
        for v in [u64::from(u32::MAX), u64::MAX] {
            let j = Counters { rd_merges: v, ..a };
            assert_eq!(flag_of(&a, &j, 3600 * sec), Some(SampleFlag::Impossible));
        }
        // The same value as before is no jump.
        let stuck = Counters {
            wr_ticks: u64::from(u32::MAX),
            ..a
        };
        assert_eq!(check(&stuck, &stuck, sec), None);
        // Bytes: 100 GB/s is the bound, exactly.
        let bound = (MAX_BYTES_PER_S / SECTOR) as u64; // sectors per second
        let at = Counters {
            wr_sectors: bound,
            ..a
        };
        assert_eq!(check(&a, &at, sec), None);
        let over = Counters {
            wr_sectors: bound + 1,
            ..a
        };
        let (f, why) = check(&a, &over, sec).unwrap();
        assert_eq!(f, SampleFlag::Impossible);
        assert!(why.contains("GB/s"), "{why}");
        // ... and scales with the interval: half the time, half the bytes.
        assert_eq!(flag_of(&a, &at, sec / 2), Some(SampleFlag::Impossible));
        // Requests: 100 M per second, all kinds together.
        let ios = Counters {
            rd_ios: a.rd_ios + 60_000_000,
            fl_ios: 40_000_001,
            ..a
        };
        assert_eq!(flag_of(&a, &ios, sec), Some(SampleFlag::Impossible));
        let merges = Counters {
            rd_merges: a.rd_merges + 100_000_001,
            ..a
        };
        assert_eq!(flag_of(&a, &merges, sec), Some(SampleFlag::Impossible));
        // Time counters: a million I/Os in flight for the whole interval.
        let q = Counters {
            time_in_queue: a.time_in_queue + 1_000_000_000 + 600_001,
            ..a
        };
        assert_eq!(flag_of(&a, &q, sec), Some(SampleFlag::Impossible));
        let q = Counters {
            time_in_queue: a.time_in_queue + 1_000_000_000,
            ..a
        };
        assert_eq!(check(&a, &q, sec), None);
    }

    #[test]
    fn flagged_samples_carry_no_figures() {
        let s = flagged_sample("vda", 7, SampleFlag::Reset, "rd_ios went backwards");
        assert_eq!(s.flag, Some(SampleFlag::Reset));
        assert_eq!(s.r_per_s, 0.0);
        assert_eq!(s.t_ns, 7);
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["flag"], "reset");
        // Unflagged samples keep today's JSON (no flag field at all).
        let plain = device_sample("vda", 7, &Counters::default(), 1_000_000_000);
        assert!(serde_json::to_value(&plain).unwrap().get("flag").is_none());
    }
}
