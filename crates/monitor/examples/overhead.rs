//! CPU cost of one monitoring interval with many devices: parse a synthetic
//! `/proc/diskstats` of N devices, compute every device's iostat figures and
//! a layer total, and render the Prometheus text — what `storlab monitor`
//! does each interval apart from the kernel's read of /proc/diskstats.
//!
//! ```sh
//! cargo run --release -p storlab-monitor --example overhead -- 1000 600
//! cargo run --release -p storlab-monitor --example overhead -- 1000 300 big-replay.txt
//! ```
//! Arguments: devices (1000), intervals (600), and optionally a file to
//! write the same snapshots to, in the replay format, for timing
//! `storlab monitor --replay FILE`.

#![forbid(unsafe_code)]

use std::time::Instant;
use storlab_monitor::diskstats::{Counters, DiskStat, Layout, format_line};
use storlab_monitor::tree::{Layer, Selection, Term, TotalGroup};
use storlab_monitor::{Monitor, Snapshot, diskstats, prometheus, replay};

fn cpu_ns() -> u64 {
    let (user, sys) = storlab_host::os::cpu_time(false);
    u64::try_from((user + sys).as_nanos()).unwrap_or(u64::MAX)
}

/// Diskstats text of `n` devices at step `k` (counters grow each step).
fn synth(n: usize, k: u64) -> String {
    let mut s = String::with_capacity(n * 100);
    for i in 0..n {
        let g = k * (i as u64 % 97 + 1);
        let d = DiskStat {
            major: 8 + (i / 16) as u32,
            minor: (i % 16) as u32 * 16,
            name: format!("sd{}", i),
            layout: Layout::Fields20,
            counters: Counters {
                rd_ios: 1000 + 40 * g,
                rd_merges: 3 * g,
                rd_sectors: 8000 + 2048 * g,
                rd_ticks: 500 + 20 * g,
                wr_ios: 900 + 30 * g,
                wr_merges: 5 * g,
                wr_sectors: 7000 + 1024 * g,
                wr_ticks: 700 + 25 * g,
                in_flight: i as u64 % 4,
                io_ticks: 400 + 500 * k,
                time_in_queue: 1500 + 45 * g,
                dc_ios: g,
                dc_merges: 0,
                dc_sectors: 64 * g,
                dc_ticks: g,
                fl_ios: 2 * g,
                fl_ticks: g,
            },
        };
        s.push_str(&format_line(&d));
        s.push('\n');
    }
    s
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let intervals: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(600);
    let texts: Vec<String> = (0..=intervals).map(|k| synth(n, k)).collect();
    if let Some(path) = args.get(3) {
        let mut out = String::new();
        for (k, t) in texts.iter().enumerate() {
            out.push_str(&replay::format(&Snapshot {
                t_ns: 1_000_000_000 * k as u64,
                wall: None,
                disks: diskstats::parse(t).unwrap(),
                cpu: None,
            }));
        }
        std::fs::write(path, out).unwrap();
        eprintln!("wrote {} snapshots of {n} devices to {path}", intervals + 1);
    }
    let names: Vec<String> = (0..n).map(|i| format!("sd{i}")).collect();
    let sel = Selection {
        layer: Layer::Top,
        devices: names.clone(),
        totals: vec![TotalGroup {
            name: "top".into(),
            terms: names
                .iter()
                .map(|d| Term {
                    device: d.clone(),
                    minus: vec![],
                    ..Default::default()
                })
                .collect(),
        }],
    };
    let mut mon = Monitor::new(Some(sel));
    let (c0, w0) = (cpu_ns(), Instant::now());
    let (mut t_parse, mut t_rates, mut t_render) = (0u64, 0u64, 0u64);
    let mut bytes = 0usize;
    for (k, t) in texts.iter().enumerate() {
        let a = cpu_ns();
        let disks = diskstats::parse(t).unwrap();
        let b = cpu_ns();
        let snap = Snapshot {
            t_ns: 1_000_000_000 * k as u64,
            wall: None,
            disks,
            cpu: None,
        };
        let interval = mon.push(snap).unwrap();
        let c = cpu_ns();
        if let Some(i) = interval {
            bytes += prometheus::render(&i, "top").len();
        }
        let d = cpu_ns();
        t_parse += b - a;
        t_rates += c - b;
        t_render += d - c;
    }
    let cpu = cpu_ns() - c0;
    let wall = w0.elapsed();
    let k = (intervals + 1) as f64;
    let per = cpu as f64 / k;
    println!(
        "devices {n}, intervals {intervals}: CPU {:.3} ms per interval (parse {:.3}, rates+totals {:.3}, \
         Prometheus text {:.3}; wall {:.3} ms); at a 1 s interval that is {:.3} % of one core \
         ({} bytes of metrics per interval)",
        per / 1e6,
        t_parse as f64 / k / 1e6,
        t_rates as f64 / k / 1e6,
        t_render as f64 / k / 1e6,
        wall.as_secs_f64() * 1e3 / k,
        per / 1e9 * 100.0,
        bytes / intervals.max(1) as usize
    );
}
