//! Sizes, durations, rates and percentages as typed on the command line.
//! The check is shared with the stable pass: `storlab_fuzzcheck::units`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::units(data));
