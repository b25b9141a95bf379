//! `--vary` lists and ranges (`sweep --vary`, `sim --vary`): one grammar.
//! The check is shared with the stable pass: `storlab_fuzzcheck::vary`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::vary(data));
