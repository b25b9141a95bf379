//! RAID layout notation (`R60/12/48`, `lvm(4*R6/10, stripe=2M)`) and its
//! geometry; the first line of the input is the drive size in bytes.
//! The check is shared with the stable pass: `storlab_fuzzcheck::layout`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| storlab_fuzzcheck::layout(data));
