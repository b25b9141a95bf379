//! Sizes, durations, rates and percentages as typed on the command line.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    use storlab_types::{parse_duration, parse_percent, parse_rate, parse_size};
    if let Ok(v) = parse_size(text) {
        // A parsed size is exact: formatting it and parsing again agrees.
        assert_eq!(parse_size(&v.to_string()).ok(), Some(v));
    }
    let _ = parse_duration(text);
    let _ = parse_rate(text);
    if let Ok(p) = parse_percent(text) {
        assert!((0.0..=100.0).contains(&p));
    }
});
