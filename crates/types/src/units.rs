//! Sizes, durations, rates and percentages: parsing and formatting.
//!
//! Size suffixes follow fio's convention for the short forms and the SI/IEC
//! standards for the long ones, so that nothing is ambiguous:
//!
//! | typed | meaning |
//! |---|---|
//! | `4096`, `4096b`, `4096B` | bytes |
//! | `4k`, `4K`, `4Ki`, `4KiB` | 4 × 1024 (binary, as fio's `bs=4k`) |
//! | `4kB`, `4KB` | 4 × 1000 (decimal, as drive makers' "2 TB") |
//!
//! and likewise `m`/`M`/`MiB` vs `MB`, `g`, `t`, `p`. Fractions are allowed
//! when they give a whole number of bytes (`1.5k` = 1536).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Why a value could not be parsed. The message names the value, says what
/// is allowed and gives an example.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} '{input}': {reason}")]
pub struct ParseError {
    /// What kind of value was expected ("size", "duration", ...).
    pub what: &'static str,
    /// The text as typed.
    pub input: String,
    /// What is wrong and what is allowed instead.
    pub reason: String,
}

impl ParseError {
    fn new(what: &'static str, input: &str, reason: impl Into<String>) -> Self {
        ParseError {
            what,
            input: input.to_string(),
            reason: reason.into(),
        }
    }
}

const SIZE_HELP: &str = "expected a number of bytes with an optional unit, e.g. 4096, 4k, 64KiB, 1M, 10GB \
(k/K/KiB = 1024, kB/KB = 1000; likewise m, g, t, p)";

/// Split "12.5GiB" into ("12.5", "GiB").
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// Parse a decimal number without exponent, keeping it exact as a ratio
/// numerator/10^scale so `1.5k` gives exactly 1536.
fn parse_decimal(num: &str) -> Option<(u128, u32)> {
    let num = num.replace('_', "");
    if num.is_empty() || num == "." {
        return None;
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if frac.contains('.') || frac.len() > 18 {
        return None;
    }
    let digits = format!("{int}{frac}");
    let value: u128 = digits.parse().ok()?;
    Some((value, frac.len() as u32))
}

fn size_multiplier(unit: &str) -> Option<u128> {
    let u = unit.trim();
    if u.is_empty() || u == "b" || u == "B" {
        return Some(1);
    }
    let mut chars = u.chars();
    let first = chars.next()?;
    let rest: String = chars.collect();
    let power = match first.to_ascii_lowercase() {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        'e' => 6,
        _ => return None,
    };
    let base: u128 = match rest.as_str() {
        "" | "i" | "iB" | "ib" => 1024,
        "B" => 1000,
        "b" => return None, // bits are not bytes; refuse rather than guess
        _ => return None,
    };
    Some(base.pow(power))
}

/// This machine's RAM in bytes, for sizes relative to it (`2xRAM`); 0 = not
/// known. Set once by the program at start ([`set_ram_bytes`]); this crate
/// does no I/O itself.
static RAM_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Tell the size parser how much RAM this machine has, so `--size 2xRAM`
/// means the same thing (twice the memory) on every host.
pub fn set_ram_bytes(bytes: u64) {
    RAM_BYTES.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// The RAM size given to [`set_ram_bytes`], if any.
pub fn ram_bytes() -> Option<u64> {
    match RAM_BYTES.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// Parse a size relative to the machine's memory: `2xRAM`, `0.25xRAM`,
/// `1.5xram` (`ram` bytes of RAM). Returns None when `input` is not of
/// that form; the result is rounded down to a whole 4 KiB.
pub fn parse_relative_size(input: &str, ram: Option<u64>) -> Option<Result<u64, ParseError>> {
    let s = input.trim();
    let lower = s.to_ascii_lowercase();
    let factor = lower.strip_suffix("xram")?.trim();
    let help = "expected a factor of the machine's RAM, e.g. 2xRAM or 0.25xRAM";
    let Some((value, scale)) = parse_decimal(factor) else {
        return Some(Err(ParseError::new("size", input, help)));
    };
    let Some(ram) = ram else {
        return Some(Err(ParseError::new(
            "size",
            input,
            "the machine's RAM size is not known here; give an absolute size such as 16G",
        )));
    };
    let bytes = u128::from(ram)
        .checked_mul(value)
        .map(|b| b / 10u128.pow(scale));
    Some(
        match bytes.and_then(|b| u64::try_from(b / 4096 * 4096).ok()) {
            Some(0) => Err(ParseError::new("size", input, "is less than 4 KiB")),
            Some(b) => Ok(b),
            None => Err(ParseError::new("size", input, "too large")),
        },
    )
}

/// Parse a byte size such as `4k`, `64KiB`, `10GB`, `1.5M`, or one
/// relative to the RAM ([`set_ram_bytes`]): `2xRAM`, `0.25xRAM`.
pub fn parse_size(input: &str) -> Result<u64, ParseError> {
    if let Some(r) = parse_relative_size(input, ram_bytes()) {
        return r;
    }
    let s = input.trim();
    let (num, unit) = split_number(s);
    let (value, scale) =
        parse_decimal(num).ok_or_else(|| ParseError::new("size", input, SIZE_HELP))?;
    let mult = size_multiplier(unit).ok_or_else(|| {
        ParseError::new("size", input, format!("unknown unit '{unit}'; {SIZE_HELP}"))
    })?;
    let denom = 10u128.pow(scale);
    let total = value
        .checked_mul(mult)
        .ok_or_else(|| ParseError::new("size", input, "too large"))?;
    if total % denom != 0 {
        return Err(ParseError::new(
            "size",
            input,
            "is not a whole number of bytes; use a smaller unit",
        ));
    }
    u64::try_from(total / denom)
        .map_err(|_| ParseError::new("size", input, "too large (over 2^64 bytes)"))
}

const DURATION_HELP: &str = "expected a number with a unit: ns, us, ms, s, m (minutes), h, d, e.g. 500ms, 30s, 5m, 12h; a bare number is seconds";

/// Parse a duration such as `30s`, `500ms`, `5m`, `12h`, `1.5h`, `600000h`.
/// A bare number is seconds, as in fio's `runtime=`.
pub fn parse_duration(input: &str) -> Result<Duration, ParseError> {
    let s = input.trim();
    let (num, unit) = split_number(s);
    let (value, scale) =
        parse_decimal(num).ok_or_else(|| ParseError::new("duration", input, DURATION_HELP))?;
    let unit_ns: u128 = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1_000_000_000,
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "m" | "min" | "mins" => 60_000_000_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        "y" | "yr" | "year" | "years" => 365 * 86_400_000_000_000,
        other => {
            return Err(ParseError::new(
                "duration",
                input,
                format!("unknown unit '{other}'; {DURATION_HELP}"),
            ));
        }
    };
    let ns = value
        .checked_mul(unit_ns)
        .ok_or_else(|| ParseError::new("duration", input, "too large"))?
        / 10u128.pow(scale);
    let ns = u64::try_from(ns).map_err(|_| ParseError::new("duration", input, "too large"))?;
    Ok(Duration::from_nanos(ns))
}

/// Parse a rate such as `50MB/s`, `1.2GiB/s`, `200M/s`: bytes per second.
pub fn parse_rate(input: &str) -> Result<f64, ParseError> {
    let s = input.trim();
    let body = s
        .strip_suffix("/s")
        .or_else(|| s.strip_suffix("ps"))
        .ok_or_else(|| {
            ParseError::new(
                "rate",
                input,
                "expected a size per second, e.g. 50MB/s or 1GiB/s",
            )
        })?;
    parse_size(body)
        .map(|b| b as f64)
        .map_err(|e| ParseError::new("rate", input, e.reason))
}

/// Parse a percentage `50`, `50%`, `1.5%`; returns the number (50.0, 1.5).
pub fn parse_percent(input: &str) -> Result<f64, ParseError> {
    let s = input.trim();
    let body = s.strip_suffix('%').unwrap_or(s).trim();
    let v: f64 = body.parse().map_err(|_| {
        ParseError::new(
            "percentage",
            input,
            "expected a number from 0 to 100, e.g. 70 or 1.5%",
        )
    })?;
    if !(0.0..=100.0).contains(&v) || v.is_nan() {
        return Err(ParseError::new(
            "percentage",
            input,
            "must be from 0 to 100",
        ));
    }
    Ok(v)
}

/// A number of bytes that parses from and prints as a human size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_size(s).map(ByteSize)
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0))
    }
}

impl serde::Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ByteSize {
    /// Accepts a number of bytes or a string such as "4k".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as 4096, \"4k\", \"1MiB\" or \"10GB\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteSize, E> {
                parse_size(v).map(ByteSize).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Format bytes with a binary unit: `4 KiB`, `1.50 MiB`, `512 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// Nanoseconds as a human latency: `850 ns`, `85.2 µs`, `2.10 ms`, `1.50 s`
/// (`n/a` for a value that is not finite).
pub fn format_latency_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".to_string();
    }
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Format a rate in decimal megabytes per second (10^6), the unit storage
/// vendors and fio's `MB/s` use: `1234.5 MB/s`.
pub fn format_rate(bytes_per_s: f64) -> String {
    format!("{:.1} MB/s", bytes_per_s / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("4kB").unwrap(), 4000);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("10GB").unwrap(), 10_000_000_000);
        assert_eq!(parse_size("2TB").unwrap(), 2_000_000_000_000);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size(" 8 KiB ").unwrap(), 8192);
        assert_eq!(parse_size("512b").unwrap(), 512);
    }

    #[test]
    fn bad_sizes_explain() {
        for bad in [
            "",
            "k",
            "4x",
            "-4k",
            "4kb",
            "1.1",
            "4 apples",
            "1..2k",
            "99999999999999999999E",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.to_string().contains("invalid size"), "{bad}: {e}");
        }
        assert!(
            parse_size("4x")
                .unwrap_err()
                .to_string()
                .contains("e.g. 4096, 4k")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(
            parse_duration("600000h").unwrap(),
            Duration::from_secs(600_000 * 3600)
        );
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert!(parse_duration("5 fortnights").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn rates_and_percents() {
        assert_eq!(parse_rate("50MB/s").unwrap(), 50e6);
        assert_eq!(parse_rate("1GiB/s").unwrap(), 1073741824.0);
        assert!(parse_rate("50MB").is_err());
        assert_eq!(parse_percent("1.5%").unwrap(), 1.5);
        assert_eq!(parse_percent("70").unwrap(), 70.0);
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("abc").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536 * 1024), "1.50 MiB");
        assert_eq!(format_rate(123_456_789.0), "123.5 MB/s");
        assert_eq!(format_latency_ns(850.0), "850 ns");
        assert_eq!(format_latency_ns(12_300.0), "12.3 µs");
        assert_eq!(format_latency_ns(4_560_000.0), "4.56 ms");
        assert_eq!(format_latency_ns(1.5e9), "1.50 s");
        assert_eq!(format_latency_ns(f64::NAN), "n/a");
    }

    #[test]
    fn bytesize_serde() {
        let b: ByteSize = serde_json::from_str("\"64k\"").unwrap();
        assert_eq!(b, ByteSize(65536));
        let b: ByteSize = serde_json::from_str("4096").unwrap();
        assert_eq!(b, ByteSize(4096));
        assert!(serde_json::from_str::<ByteSize>("\"4q\"").is_err());
        assert!(serde_json::from_str::<ByteSize>("-1").is_err());
    }

    #[test]
    fn sizes_relative_to_ram() {
        let ram = Some(8u64 << 30);
        assert_eq!(parse_relative_size("2xRAM", ram), Some(Ok(16 << 30)));
        assert_eq!(parse_relative_size("0.25xram", ram), Some(Ok(2 << 30)));
        assert_eq!(parse_relative_size(" 1.5XRAM ", ram), Some(Ok(12 << 30)));
        assert_eq!(parse_relative_size("4k", ram), None);
        // Rounded down to 4 KiB.
        assert_eq!(parse_relative_size("0.5xRAM", Some(10_000)), Some(Ok(4096)));
        assert!(
            parse_relative_size("0.1xRAM", Some(10_000))
                .unwrap()
                .is_err()
        );
        assert!(parse_relative_size("axRAM", ram).unwrap().is_err());
        let e = parse_relative_size("2xRAM", None).unwrap().unwrap_err();
        assert!(e.to_string().contains("absolute size"), "{e}");
    }

    proptest! {
        #[test]
        fn relative_sizes_never_panic(f in "[0-9._]{0,12}", ram in proptest::option::of(any::<u64>())) {
            if let Some(Ok(b)) = parse_relative_size(&format!("{f}xRAM"), ram) {
                prop_assert_eq!(b % 4096, 0);
            }
        }

        #[test]
        fn parse_size_never_panics(s in "\\PC{0,24}") {
            let _ = parse_size(&s);
            let _ = parse_duration(&s);
            let _ = parse_rate(&s);
            let _ = parse_percent(&s);
        }

        #[test]
        fn size_round_trips_binary_units(n in 0u64..1_000_000, unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("k", 1024), ("M", 1 << 20), ("GiB", 1 << 30)][unit];
            prop_assert_eq!(parse_size(&format!("{n}{suffix}")).unwrap(), n * mult);
        }

        #[test]
        fn duration_ms_round_trips(n in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format!("{n}ms")).unwrap(), Duration::from_millis(n));
        }
    }
}
