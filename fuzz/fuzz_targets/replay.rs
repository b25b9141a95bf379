//! `storlab monitor --replay` files (diskstats snapshots).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = storlab_monitor::replay::parse(text);
});
