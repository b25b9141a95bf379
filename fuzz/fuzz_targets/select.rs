//! Run selectors (`12`, `latest~2`, `tag:a=1,b=2`) and `--tag KEY=VALUE`.
//! The check is shared with the stable pass: `storlab_fuzzcheck::select`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::select(data));
