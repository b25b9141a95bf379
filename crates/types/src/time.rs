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
}
