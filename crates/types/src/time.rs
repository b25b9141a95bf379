//! One definition of each notion of time storlab shares: the length of a
//! year (reliability maths, mission times) and RFC 3339 timestamps (records,
//! logs, CSV/JSONL output), so no two places disagree on either.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Hours in a year of 365.25 days (AFR ↔ MTBF, mission times).
pub const HOURS_PER_YEAR: f64 = 8766.0;

/// Seconds in a year of 365.25 days.
pub const SECONDS_PER_YEAR: f64 = HOURS_PER_YEAR * 3600.0;

/// `t` as RFC 3339 UTC to the second: `2026-11-25T17:05:47Z`.
pub fn rfc3339_seconds(t: SystemTime) -> String {
    shown(humantime::format_rfc3339_seconds(t))
}

/// The latest time RFC 3339 can write (9999-12-31T23:59:59.999Z), in
/// milliseconds since the Unix epoch.
pub const MAX_RFC3339_UNIX_MS: u64 = 253_402_300_799_999;

/// A humantime timestamp as text; one past year 9999 (which humantime's
/// Display refuses, and `to_string` would panic on) is named, not a panic.
fn shown(t: humantime::Rfc3339Timestamp) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    match write!(s, "{t}") {
        Ok(()) => s,
        Err(_) => "(a time after 9999-12-31)".to_string(),
    }
}

/// `t` as RFC 3339 UTC with milliseconds: `2026-11-25T17:05:47.123Z`.
pub fn rfc3339_millis(t: SystemTime) -> String {
    shown(humantime::format_rfc3339_millis(t))
}

/// Milliseconds since the Unix epoch as RFC 3339 UTC with milliseconds.
pub fn rfc3339_unix_ms(unix_ms: u64) -> String {
    rfc3339_millis(UNIX_EPOCH + Duration::from_millis(unix_ms))
}

/// Now, as RFC 3339 UTC to the second (run start and end times).
pub fn now_rfc3339() -> String {
    rfc3339_seconds(SystemTime::now())
}

/// Now, as RFC 3339 UTC with milliseconds (samples, log lines).
pub fn now_rfc3339_millis() -> String {
    rfc3339_millis(SystemTime::now())
}

/// Four hex digits' worth of salt for ids made from a time stamp (sweep
/// and campaign ids): the clock's nanoseconds mixed with the process id,
/// so two ids made in the same second, by one process or by two, differ.
pub fn id_salt() -> u16 {
    salt_of(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0),
        std::process::id(),
    )
}

/// The salt of [`id_salt`] for given nanoseconds and process id: both
/// halves of the process id folded in (the formula sweep and campaign ids
/// had, `nanos ^ pid.rotate_left(16)`, kept four digits of which the pid's
/// low half, every pid below 65536, never reached).
fn salt_of(nanos: u32, pid: u32) -> u16 {
    ((nanos ^ pid ^ (pid >> 16)) & 0xffff) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_past_year_9999_are_named_not_a_panic() {
        assert_eq!(
            rfc3339_unix_ms(MAX_RFC3339_UNIX_MS),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_unix_ms(MAX_RFC3339_UNIX_MS + 1),
            "(a time after 9999-12-31)"
        );
        assert_eq!(rfc3339_unix_ms(u64::MAX / 2), "(a time after 9999-12-31)");
    }

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339_unix_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_unix_ms(951_782_400_005), "2000-02-29T00:00:00.005Z");
        assert_eq!(
            rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(SECONDS_PER_YEAR, 31_557_600.0);
    }

    #[test]
    fn id_salts_mix_the_nanoseconds_with_the_process_id() {
        assert_eq!(salt_of(0x1234_5678, 0), 0x5678);
        assert_eq!(salt_of(0x5678, 0x0000_0001), 0x5679, "the pid's low half");
        assert_eq!(salt_of(0x5678, 0x0001_0000), 0x5679, "its high half");
        assert_ne!(
            salt_of(7, 100),
            salt_of(7, 101),
            "two processes, one moment"
        );
        assert_ne!(salt_of(7, 100), salt_of(7, 0x0001_0064), "pids 65536 apart");
        assert_ne!(salt_of(7, 100), salt_of(8, 100), "one process, two moments");
        let _ = id_salt();
    }
}

/// A time bound `storlab runs --since/--until` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    /// A date that is not one (`2026-13-45`), with the parser's reason.
    #[error("invalid time '{given}' ({reason}); {WHEN_HELP}")]
    BadDate { given: String, reason: String },
    /// Neither a date nor an age.
    #[error("invalid time '{0}'; {WHEN_HELP}")]
    Unreadable(String),
}

const WHEN_HELP: &str = "expected a date 2026-01-31, a time 2026-01-31T08:00 or \
                         2026-01-31T08:00:00Z (UTC), or an age such as 7d, 12h, 30m";

/// A time bound (`2026-01-31`, `2026-01-31T08:00`, or an age like `7d`
/// before now) as an RFC 3339 prefix (UTC) that compares correctly with
/// the stored `started_at` strings.
pub fn parse_when(s: &str) -> Result<String, WhenError> {
    let t = s.trim();
    let is_date = t.len() >= 10
        && t.as_bytes()[4] == b'-'
        && t.as_bytes()[7] == b'-'
        && t[..4].bytes().all(|b| b.is_ascii_digit());
    if is_date {
        let full = match t.len() {
            10 => format!("{t}T00:00:00Z"),
            16 => format!("{t}:00Z"),
            19 => format!("{t}Z"),
            _ => t.to_string(),
        };
        let full = full.replacen(' ', "T", 1);
        return humantime::parse_rfc3339_weak(full.trim_end_matches('Z'))
            .map(|_| full.trim_end_matches('Z').to_string())
            .map_err(|e| WhenError::BadDate {
                given: s.to_string(),
                reason: e.to_string(),
            });
    }
    let age = crate::parse_duration(t).map_err(|_| WhenError::Unreadable(s.to_string()))?;
    let when = SystemTime::now()
        .checked_sub(age)
        .unwrap_or(UNIX_EPOCH + Duration::ZERO);
    Ok(rfc3339_seconds(when).trim_end_matches('Z').to_string())
}

#[cfg(test)]
mod when_tests {
    use super::parse_when;

    #[test]
    fn time_bounds() {
        assert_eq!(parse_when("2026-01-31").unwrap(), "2026-01-31T00:00:00");
        assert_eq!(
            parse_when("2026-01-31T08:00").unwrap(),
            "2026-01-31T08:00:00"
        );
        assert_eq!(
            parse_when("2026-01-31T08:00:05Z").unwrap(),
            "2026-01-31T08:00:05"
        );
        assert!(parse_when("2026-13-45").is_err());
        assert!(
            parse_when("yesterday")
                .unwrap_err()
                .to_string()
                .contains("7d")
        );
        let week = parse_when("7d").unwrap();
        assert_eq!(week.len(), 19, "{week}");
        assert!(week < parse_when("1h").unwrap());
    }

    proptest::proptest! {
        #[test]
        fn time_bounds_never_panic(s in "\\PC{0,24}") {
            let _ = parse_when(&s);
            let _ = crate::RwMode::parse(&s);
        }

        #[test]
        fn valid_dates_give_sortable_bounds(
            y in 1970u32..2200, m in 1u32..=12, d in 1u32..=28, h in 0u32..24, min in 0u32..60
        ) {
            let day = format!("{y:04}-{m:02}-{d:02}");
            let at = format!("{day}T{h:02}:{min:02}");
            let a = parse_when(&day).unwrap();
            let b = parse_when(&at).unwrap();
            proptest::prop_assert!(a <= b, "{a} {b}");
            proptest::prop_assert!(b.starts_with(&at));
        }
    }
}
