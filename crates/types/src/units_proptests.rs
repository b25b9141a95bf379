//! Property tests of the size and duration parsers at their extremes
//! (issue 9): every value either parses exactly or is refused with a
//! message naming the input; nothing wraps, nothing panics.

use crate::units::*;
use proptest::prelude::*;
use std::time::Duration;

const UNITS: &[(&str, u128)] = &[
    ("", 1),
    ("k", 1 << 10),
    ("KiB", 1 << 10),
    ("kB", 1000),
    ("M", 1 << 20),
    ("MB", 1_000_000),
    ("G", 1 << 30),
    ("T", 1 << 40),
    ("P", 1 << 50),
    ("E", 1 << 60),
    ("EiB", 1 << 60),
    ("EB", 1_000_000_000_000_000_000),
];

const DURATIONS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
    ("y", 365 * 86_400_000_000_000),
];

proptest! {
    #[test]
    fn sizes_parse_exactly_or_are_refused_never_wrapped(n in any::<u64>(), u in 0usize..UNITS.len()) {
        let (suffix, mult) = UNITS[u];
        let text = format!("{n}{suffix}");
        let exact = u128::from(n) * mult;
        match parse_size(&text) {
            Ok(v) => prop_assert_eq!(u128::from(v), exact),
            Err(e) => {
                prop_assert!(exact > u128::from(u64::MAX), "{text}: {e}");
                prop_assert!(e.to_string().contains(&text), "{e}");
            }
        }
    }

    #[test]
    fn huge_and_odd_numbers_never_panic(digits in "[0-9]{15,60}", frac in "[0-9]{0,25}", u in 0usize..UNITS.len()) {
        let text = format!("{digits}.{frac}{}", UNITS[u].0);
        if let Err(e) = parse_size(&text) {
            prop_assert!(e.to_string().contains(text.trim()), "{e}");
        }
        let _ = parse_duration(&text);
        let _ = parse_rate(&format!("{text}/s"));
    }

    #[test]
    fn durations_parse_exactly_or_are_refused(n in any::<u64>(), u in 0usize..DURATIONS.len()) {
        let (suffix, unit_ns) = DURATIONS[u];
        let text = format!("{n}{suffix}");
        let exact = u128::from(n) * unit_ns;
        match parse_duration(&text) {
            Ok(d) => prop_assert_eq!(d, Duration::from_nanos(u64::try_from(exact).unwrap())),
            Err(e) => {
                prop_assert!(exact > u128::from(u64::MAX), "{text}: {e}");
                prop_assert!(e.to_string().contains(&text), "{e}");
            }
        }
    }

    #[test]
    fn percentages_stay_in_range(s in "-?[0-9]{0,6}(\\.[0-9]{0,6})?%?|NaN|inf|-inf") {
        if let Ok(v) = parse_percent(&s) {
            prop_assert!((0.0..=100.0).contains(&v), "{s} -> {v}");
        }
    }
}
