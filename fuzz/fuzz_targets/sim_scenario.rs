//! `storlab sim` scenario files, resolved against the built-in catalog.
//! The check is shared with the stable pass: `storlab_fuzzcheck::sim_scenario`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::sim_scenario(data));
