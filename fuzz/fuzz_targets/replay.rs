//! `storlab monitor --replay` files (diskstats snapshots): never a panic,
//! and a file that parses never yields a rate beyond the physical bound
//! (`rates::check`: 100 GB/s, 100 M requests or merges per second).
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_monitor::rates::{MAX_BYTES_PER_S, MAX_IOS_PER_S};

fuzz_target!(|text: &str| {
    let Ok(snaps) = storlab_monitor::replay::parse(text) else {
        return;
    };
    let mut m = storlab_monitor::Monitor::new(None);
    for s in snaps {
        // Times increase in a parsed file, so push never fails.
        let i = m.push(s).unwrap();
        for d in i.iter().flat_map(|i| i.devices.iter()) {
            let bytes = d.r_bytes_per_s + d.w_bytes_per_s + d.d_bytes_per_s;
            assert!(bytes <= MAX_BYTES_PER_S * (1.0 + 1e-9), "{d:?}");
            let ios = d.r_per_s + d.w_per_s + d.d_per_s + d.f_per_s;
            assert!(ios <= MAX_IOS_PER_S * (1.0 + 1e-9), "{d:?}");
            let merges = d.rrqm_per_s + d.wrqm_per_s + d.drqm_per_s;
            assert!(merges <= MAX_IOS_PER_S * (1.0 + 1e-9), "{d:?}");
        }
    }
});
