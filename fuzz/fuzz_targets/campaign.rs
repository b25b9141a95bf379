//! Campaign files (`storlab campaign FILE`), expanded into cells.
//! The check is shared with the stable pass: `storlab_fuzzcheck::campaign`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::campaign(data));
