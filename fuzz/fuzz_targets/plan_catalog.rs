//! Plan catalog files (`storlab plan ... --catalog FILE`).
//! The check is shared with the stable pass: `storlab_fuzzcheck::plan_catalog`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::plan_catalog(data));
