//! Design strings (`storlab bench --design`, tag `planned_as`): the
//! canonical form parses back to the same design, and resolving it never
//! panics. The check is shared with the stable pass: `storlab_fuzzcheck::design`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::design(data));
