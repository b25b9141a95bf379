//! iostat's positional arguments: `storlab monitor [DEVICE...] [INTERVAL
//! [COUNT]]`. `storlab monitor 1 3` samples every second, three times;
//! `storlab monitor sda 2` samples sda every 2 s until stopped.
//!
//! A word that starts with a digit and is not a device (or path) the caller
//! knows is a number: the first is the interval (seconds, or a duration such
//! as `500ms`), the second the count. Numbers come after the devices, as in
//! iostat; anything else is refused with a message that shows the order.

use std::ffi::OsString;
use std::time::Duration;

/// What is wrong with the positional words or `--interval`/`--count`; the
/// message shows the right order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    #[error(
        "'{number}' is read as the interval, but the device '{device}' follows it; \
         give devices first, then the interval and count, as in iostat: \
         storlab monitor {device} {number}"
    )]
    DeviceAfterNumber { number: String, device: String },
    #[error(
        "'{0}' is a third number; monitor takes at most an interval and a count \
         (storlab monitor [DEVICE...] [INTERVAL [COUNT]], e.g. storlab monitor 1 3); \
         a device with that name is not known (list them with storlab monitor --tree)"
    )]
    ThirdNumber(String),
    #[error(
        "cannot read '{word}' as the interval ({reason}); give seconds (1, 0.5) or a duration \
         (500ms), after the devices: storlab monitor [DEVICE...] [INTERVAL [COUNT]]; \
         a device with that name is not known (list them with storlab monitor --tree)"
    )]
    BadInterval { word: String, reason: String },
    #[error("interval '{0}' is zero; give 1 (second) or more, or a duration of 10ms or more")]
    ZeroInterval(String),
    #[error(
        "count '{0}' would measure nothing; give 1 or more, or leave it out to run until Ctrl-C"
    )]
    ZeroCount(String),
    #[error(
        "cannot read '{0}' as the count: give a whole number of intervals (e.g. storlab monitor 1 3)"
    )]
    BadCount(String),
    #[error(
        "the interval is given twice (--interval {0} and a number after the devices); keep one"
    )]
    IntervalTwice(String),
    /// `--interval` that is not a duration (the duration parser's words).
    #[error("{0}")]
    BadIntervalFlag(String),
    #[error("--interval {0} is too short; use 10ms or more (the kernel counts time in ms)")]
    IntervalFlagTooShort(String),
    #[error("interval {0:?} is too short; use 10ms or more (the kernel counts time in ms)")]
    TooShort(Duration),
    #[error(
        "the count is given twice (--count {0} and a second number after the devices); keep one"
    )]
    CountTwice(u64),
    #[error("--count 0 would measure nothing; give 1 or more, or leave it out to run until Ctrl-C")]
    CountFlagZero,
}

impl UsageError {
    /// The error with each word it names passed through `f`.
    fn map_words(self, f: impl Fn(String) -> String) -> UsageError {
        use UsageError as U;
        match self {
            U::DeviceAfterNumber { number, device } => U::DeviceAfterNumber {
                number: f(number),
                device: f(device),
            },
            U::ThirdNumber(w) => U::ThirdNumber(f(w)),
            U::BadInterval { word, reason } => U::BadInterval {
                word: f(word),
                reason,
            },
            U::ZeroInterval(w) => U::ZeroInterval(f(w)),
            U::ZeroCount(w) => U::ZeroCount(f(w)),
            U::BadCount(w) => U::BadCount(f(w)),
            other => other,
        }
    }
}

/// Devices, interval and count, as split by [`split`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Positional {
    /// Device names or paths, in the order given.
    pub targets: Vec<String>,
    /// The first number: time between samples.
    pub interval: Option<Duration>,
    /// The second number: how many intervals to report.
    pub count: Option<u64>,
}

/// Whether `word` is read as a number (when it is not a known device).
pub fn looks_numeric(word: &str) -> bool {
    word.as_bytes().first().is_some_and(|b| b.is_ascii_digit())
}

/// Split positional words into devices, interval and count. `is_device`
/// says whether a word names a device or an existing path; such a word is
/// never read as a number. Errors say what is wrong and show the order.
pub fn split(words: &[String], is_device: impl Fn(&str) -> bool) -> Result<Positional, UsageError> {
    let mut out = Positional::default();
    let mut numbers: Vec<&str> = Vec::new();
    for w in words {
        let numeric = looks_numeric(w) && !is_device(w);
        if numeric {
            numbers.push(w);
            continue;
        }
        if let Some(n) = numbers.first() {
            return Err(UsageError::DeviceAfterNumber {
                number: n.to_string(),
                device: w.clone(),
            });
        }
        out.targets.push(w.clone());
    }
    match numbers.as_slice() {
        [] => {}
        [i] => out.interval = Some(interval(i)?),
        [i, c] => {
            out.interval = Some(interval(i)?);
            out.count = Some(count(c)?);
        }
        [_, _, extra, ..] => {
            return Err(UsageError::ThirdNumber(extra.to_string()));
        }
    }
    Ok(out)
}

fn interval(word: &str) -> Result<Duration, UsageError> {
    let d = storlab_types::parse_duration(word).map_err(|e| UsageError::BadInterval {
        word: word.to_string(),
        reason: e.to_string(),
    })?;
    if d.is_zero() {
        return Err(UsageError::ZeroInterval(word.to_string()));
    }
    Ok(d)
}

fn count(word: &str) -> Result<u64, UsageError> {
    match word.parse::<u64>() {
        Ok(0) => Err(UsageError::ZeroCount(word.to_string())),
        Ok(n) => Ok(n),
        Err(_) => Err(UsageError::BadCount(word.to_string())),
    }
}

/// [`split`] for words as the command line gives them (not always
/// UTF-8): a word that is not UTF-8 can only be a path (never a number or
/// a device name), so it stays a target. Returns the targets as given and
/// the interval and count.
pub fn split_os(
    words: &[OsString],
    is_device: impl Fn(&str) -> bool,
) -> Result<(Vec<OsString>, Positional), UsageError> {
    // Such a word stands in the split as a placeholder no argument can
    // spell (a NUL), taken for a device, and is put back after.
    let placeholder = |i: usize| format!("\0{i}");
    let text: Vec<String> = (words.iter().enumerate())
        .map(|(i, w)| w.to_str().map_or_else(|| placeholder(i), str::to_owned))
        .collect();
    let p = split(&text, |w| w.starts_with('\0') || is_device(w)).map_err(|e| {
        e.map_words(|mut e| {
            for (i, w) in words.iter().enumerate() {
                if w.to_str().is_none() {
                    e = e.replace(&placeholder(i), &w.to_string_lossy());
                }
            }
            e
        })
    })?;
    let targets = (p.targets.iter())
        .map(|w| {
            w.strip_prefix('\0')
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| words.get(i).cloned())
                .unwrap_or_else(|| OsString::from(w))
        })
        .collect();
    Ok((targets, p))
}

/// The devices and the interval and count of `storlab monitor`'s words:
/// iostat's trailing `INTERVAL [COUNT]` ([`split_os`]) where a word that
/// names a device of `tree` stays a device, and so does an existing path
/// that is not a number; checked against `--interval`/`--count`
/// ([`settle`]).
pub fn devices_and_pace(
    words: &[OsString],
    tree: Option<&crate::DeviceTree>,
    interval_flag: Option<&str>,
    count_flag: Option<u64>,
) -> Result<(Vec<OsString>, Duration, Option<u64>), UsageError> {
    let is_device = |w: &str| {
        tree.is_some_and(|t| t.device_by_dev_name(w).is_some())
            || (storlab_types::parse_duration(w).is_err() && std::path::Path::new(w).exists())
    };
    let (devices, p) = split_os(words, is_device)?;
    let (interval, count) = settle(&p, interval_flag, count_flag)?;
    Ok((devices, interval, count))
}

/// The interval and the count, from the positional numbers of `p` and
/// the flags (`--interval`, `--count`): each given once, the interval 10 ms
/// or more (the kernel counts time in ms), 1 s when none is given; the
/// count not zero.
pub fn settle(
    p: &Positional,
    interval_flag: Option<&str>,
    count_flag: Option<u64>,
) -> Result<(Duration, Option<u64>), UsageError> {
    let interval = match (p.interval, interval_flag) {
        (Some(_), Some(flag)) => {
            return Err(UsageError::IntervalTwice(flag.to_string()));
        }
        (Some(d), None) => d,
        (None, Some(flag)) => {
            let d = storlab_types::parse_duration(flag)
                .map_err(|e| UsageError::BadIntervalFlag(e.to_string()))?;
            if d < Duration::from_millis(10) {
                return Err(UsageError::IntervalFlagTooShort(flag.to_string()));
            }
            d
        }
        (None, None) => Duration::from_secs(1),
    };
    if interval < Duration::from_millis(10) {
        return Err(UsageError::TooShort(interval));
    }
    let count = match (p.count, count_flag) {
        (Some(_), Some(flag)) => {
            return Err(UsageError::CountTwice(flag));
        }
        (Some(c), None) => Some(c),
        (None, c) => c,
    };
    if count == Some(0) {
        return Err(UsageError::CountFlagZero);
    }
    Ok((interval, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn w(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn iostat_forms() {
        let p = split(&w(&["1", "3"]), none).unwrap();
        assert_eq!(p.targets, Vec::<String>::new());
        assert_eq!(p.interval, Some(Duration::from_secs(1)));
        assert_eq!(p.count, Some(3));
        let p = split(&w(&["sda", "dm-0", "2"]), none).unwrap();
        assert_eq!(p.targets, w(&["sda", "dm-0"]));
        assert_eq!(p.interval, Some(Duration::from_secs(2)));
        assert_eq!(p.count, None);
        let p = split(&w(&["nvme0n1", "0.5", "10"]), none).unwrap();
        assert_eq!(p.interval, Some(Duration::from_millis(500)));
        assert_eq!(p.count, Some(10));
        let p = split(&w(&["500ms"]), none).unwrap();
        assert_eq!(p.interval, Some(Duration::from_millis(500)));
        assert_eq!(split(&w(&[]), none).unwrap(), Positional::default());
    }

    #[test]
    fn a_device_named_like_a_number_stays_a_device() {
        let p = split(&w(&["0", "1", "2"]), |s| s == "0").unwrap();
        assert_eq!(p.targets, w(&["0"]));
        assert_eq!(p.interval, Some(Duration::from_secs(1)));
        assert_eq!(p.count, Some(2));
    }

    #[test]
    fn mistakes_are_named() {
        let e = split(&w(&["1", "sda"]), none).unwrap_err().to_string();
        assert!(e.contains("storlab monitor sda 1"), "{e}");
        let e = split(&w(&["1", "2", "3"]), none).unwrap_err().to_string();
        assert!(e.contains("third number"), "{e}");
        let e = split(&w(&["1", "0"]), none).unwrap_err().to_string();
        assert!(e.contains("give 1 or more"), "{e}");
        let e = split(&w(&["1", "2.5"]), none).unwrap_err().to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = split(&w(&["0"]), none).unwrap_err().to_string();
        assert!(e.contains("zero"), "{e}");
        let e = split(&w(&["2x"]), none).unwrap_err().to_string();
        assert!(e.contains("cannot read '2x' as the interval"), "{e}");
    }

    fn device() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9_-]{0,12}"
    }

    proptest! {
        /// What iostat users type is read back exactly.
        #[test]
        fn round_trip(
            devs in proptest::collection::vec(device(), 0..5),
            interval in proptest::option::of(1u64..100_000),
            count in 1u64..1_000_000,
            with_count: bool,
        ) {
            let mut words = devs.clone();
            let count = (interval.is_some() && with_count).then_some(count);
            if let Some(i) = interval {
                words.push(format!("{}.{:03}", i / 1000, i % 1000));
            }
            if let Some(c) = count {
                words.push(c.to_string());
            }
            let p = split(&words, none).unwrap();
            prop_assert_eq!(p.targets, devs);
            prop_assert_eq!(p.interval, interval.map(Duration::from_millis));
            prop_assert_eq!(p.count, count);
        }

        /// Any words: no panic; on success the devices are the words in
        /// order, followed by at most two numbers.
        #[test]
        fn any_words(words in proptest::collection::vec("[0-9a-z./_-]{0,8}", 0..6)) {
            if let Ok(p) = split(&words, none) {
                let used = p.targets.len()
                    + usize::from(p.interval.is_some())
                    + usize::from(p.count.is_some());
                prop_assert_eq!(used, words.len());
                prop_assert_eq!(&words[..p.targets.len()], &p.targets[..]);
                prop_assert!(p.targets.iter().all(|t| !looks_numeric(t)));
                prop_assert!(p.count.is_none() || p.interval.is_some());
                prop_assert!(p.interval.is_none_or(|d| !d.is_zero()));
                prop_assert!(p.count != Some(0));
            }
        }

        /// A number before a device is refused, never silently reordered.
        #[test]
        fn number_before_device(n in 1u32..1000, dev in device()) {
            let words = vec![n.to_string(), dev];
            prop_assert!(split(&words, none).is_err());
        }
    }

    /// The interval and count come once each, from the numbers or the
    /// flags; 1 s by default; a too-short interval or a zero count is
    /// refused with the fix.
    #[test]
    fn flags_and_numbers_settle_into_one_interval_and_count() {
        let p = split(&w(&["sda", "2", "5"]), none).unwrap();
        assert_eq!(
            settle(&p, None, None),
            Ok((Duration::from_secs(2), Some(5)))
        );
        let e = settle(&p, Some("1s"), None).unwrap_err().to_string();
        assert!(e.contains("interval is given twice"), "{e}");
        let e = settle(&p, None, Some(3)).unwrap_err().to_string();
        assert!(e.contains("count is given twice"), "{e}");
        let bare = split(&w(&["sda"]), none).unwrap();
        assert_eq!(
            settle(&bare, None, None),
            Ok((Duration::from_secs(1), None))
        );
        assert_eq!(
            settle(&bare, Some("500ms"), Some(4)),
            Ok((Duration::from_millis(500), Some(4)))
        );
        let e = settle(&bare, Some("5ms"), None).unwrap_err().to_string();
        assert!(e.contains("use 10ms or more"), "{e}");
        let e = settle(&bare, None, Some(0)).unwrap_err().to_string();
        assert!(e.contains("--count 0 would measure nothing"), "{e}");
        assert!(settle(&bare, Some("soon"), None).is_err());
    }

    /// A word that is not UTF-8 stays a target, in its own bytes, and is
    /// named as given in an error.
    #[test]
    fn words_that_are_not_utf8_stay_targets() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(b"/mnt/\xff".to_vec());
        let words = [odd.clone(), OsString::from("2"), OsString::from("3")];
        let (targets, p) = split_os(&words, |_| false).unwrap();
        assert_eq!(targets, std::slice::from_ref(&odd));
        assert_eq!(
            (p.interval, p.count),
            (Some(Duration::from_secs(2)), Some(3))
        );
        let words = [OsString::from("2"), odd];
        let e = split_os(&words, |_| false).unwrap_err().to_string();
        assert!(e.contains("the device '/mnt/\u{fffd}' follows it"), "{e}");
    }
}

#[cfg(test)]
mod devices_and_pace_tests {
    use super::*;

    /// An existing path stays a device (it names the file system under
    /// it), the numbers after it are the interval and count; a flag
    /// given too is refused as iostat's order would be ambiguous.
    #[test]
    fn paths_stay_devices_and_numbers_pace_the_monitor() {
        let words: Vec<OsString> = ["/", "2", "3"].iter().map(OsString::from).collect();
        let (devices, interval, count) = devices_and_pace(&words, None, None, None).unwrap();
        assert_eq!(devices, [OsString::from("/")]);
        assert_eq!((interval, count), (Duration::from_secs(2), Some(3)));
        assert!(devices_and_pace(&words, None, Some("1s"), None).is_err());
        let (devices, interval, count) = devices_and_pace(&[], None, None, None).unwrap();
        assert!(devices.is_empty() && count.is_none());
        assert_eq!(interval, Duration::from_secs(1));
    }
}
