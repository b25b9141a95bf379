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
