//! `storlab monitor --replay` files (diskstats snapshots).
//! The check is shared with the stable pass: `storlab_fuzzcheck::replay`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::replay(data));
