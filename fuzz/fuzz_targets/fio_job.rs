//! fio job files (`storlab bench --fio-job FILE.fio`), resolved into phases.
//! The check is shared with the stable pass: `storlab_fuzzcheck::fio_job`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::fio_job(data));
