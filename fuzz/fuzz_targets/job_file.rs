//! TOML job files (`storlab bench --job FILE`), resolved into phases.
//! The check is shared with the stable pass: `storlab_fuzzcheck::job_file`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::job_file(data));
