//! fio's JSON output, as `storlab import` reads it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = storlab_fio::parse(text, Some("fuzz-host"));
});
