//! fio's JSON output, as `storlab import` reads it.
//! The check is shared with the stable pass: `storlab_fuzzcheck::fio_json`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::fio_json(data));
