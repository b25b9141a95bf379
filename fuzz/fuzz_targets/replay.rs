//! `storlab monitor --replay` files (diskstats snapshots): never a panic,
//! and a file that parses never yields a rate beyond the physical bound
//! (`rates::check`: 100 GB/s, 100 M requests or merges per second).
//! The check is shared with the stable pass: `storlab_fuzzcheck::replay`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::replay(data));
