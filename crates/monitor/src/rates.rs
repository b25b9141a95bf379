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

use crate::diskstats::Counters;
use storlab_types::DeviceSample;

/// Bytes per sector in `/proc/diskstats` (always 512, whatever the device).
pub const SECTOR: f64 = 512.0;

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
}
