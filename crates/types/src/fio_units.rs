//! fio's size grammar, the one both of storlab's fio readers use: the job
//! file reader (`bench --fio-job`, `--blocksize` and the other fio
//! spellings of bench's flags) and the JSON importer (`storlab import`).
//!
//! The rules are fio's own (`parse.c`, `__get_mult_bytes`): a number with an
//! optional unit `k`, `m`, `g`, `t`, `p` (any case), optionally followed by
//! `b` or `i`, or by `ib`. With the default `kb_base=1024`, `4k` = `4KB` =
//! `4Ki` = 4096 and `4KiB` = 4000 (fio reads the `iB` form as the *opposite*
//! of `kb_base`); with `kb_base=1000` the SI/IEC meanings: `4k` = `4KB` =
//! 4000 and `4KiB` = 4096. storlab's own flags use SI/IEC sizes
//! ([`crate::parse_size`]); only fio's spellings use this grammar.
//!
//! Unlike fio, a fraction is accepted when it gives a whole number of bytes
//! (`1.5k` = 1536; fio's `strtoll` would stop at the dot) and anything else
//! after the number is refused rather than ignored.

use crate::ParseError;

const HELP: &str =
    "expected a number with an optional k, m, g, t, p suffix (fio's units), e.g. 4k, 1m, 10g";

fn invalid(input: &str, reason: impl Into<String>) -> ParseError {
    ParseError {
        what: "size",
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// A size in fio's notation under `kb_base` (1024 or 1000; any other value
/// is read as 1024, fio's default): `4k`, `4KB`, `1m`, `10g`, `4KiB`, `512`.
/// See the module documentation for the rules.
pub fn fio_size(input: &str, kb_base: u64) -> Result<u64, ParseError> {
    let kb_base: u64 = if kb_base == 1000 { 1000 } else { 1024 };
    let s = input.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = (&s[..end], s[end..].trim().to_ascii_lowercase());
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return Err(invalid(input, HELP));
    }
    let opposite: u64 = if kb_base == 1000 { 1024 } else { 1000 };
    let unknown = |u: &str| invalid(input, format!("unknown unit '{u}'; {HELP}"));
    let (pow, mult) = match unit.as_str() {
        "" | "b" => (0, 1u64),
        u => {
            let pow = match u.as_bytes()[0] {
                b'k' => 1,
                b'm' => 2,
                b'g' => 3,
                b't' => 4,
                b'p' => 5,
                _ => return Err(unknown(u)),
            };
            match &u[1..] {
                "ib" => (pow, opposite),
                "" | "b" | "i" => (pow, kb_base),
                _ => return Err(unknown(u)),
            }
        }
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if frac.len() > 12 || int.len() > 20 {
        return Err(invalid(input, "too many digits"));
    }
    let scale = 10u128.pow(frac.len() as u32);
    let digits: u128 = format!("{int}{frac}")
        .parse()
        .map_err(|_| invalid(input, HELP))?;
    let total = (0..pow)
        .try_fold(digits, |acc, _| acc.checked_mul(u128::from(mult)))
        .ok_or_else(|| invalid(input, "too large"))?;
    if total % scale != 0 {
        return Err(invalid(input, "not a whole number of bytes"));
    }
    u64::try_from(total / scale).map_err(|_| invalid(input, "too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// fio's documented cases (HOWTO, "Parameter types": with `kb_base=1024`
    /// `1k`/`1KB` = 1024 and `1KiB` = 1000; `kb_base=1000` swaps them) and
    /// the suffix spellings `__get_mult_bytes` accepts.
    #[test]
    fn fios_documented_cases() {
        let cases: [(&str, u64, u64); 22] = [
            ("10k", 1024, 10240),
            ("10K", 1024, 10240),
            ("10KiB", 1024, 10000),
            ("10kib", 1024, 10000),
            ("10KB", 1024, 10240),
            ("10kb", 1024, 10240),
            ("10Ki", 1024, 10240),
            ("10k", 1000, 10000),
            ("10KB", 1000, 10000),
            ("10KiB", 1000, 10240),
            ("1m", 1024, 1 << 20),
            ("1MiB", 1024, 1_000_000),
            ("1MiB", 1000, 1 << 20),
            ("1M", 1000, 1_000_000),
            ("1g", 1024, 1 << 30),
            ("1GiB", 1024, 1_000_000_000),
            ("1t", 1024, 1 << 40),
            ("1p", 1024, 1 << 50),
            ("4096", 1024, 4096),
            ("4096b", 1000, 4096),
            (" 1.5k ", 1024, 1536),
            ("4k", 999, 4096),
        ];
        for (text, base, want) in cases {
            assert_eq!(fio_size(text, base), Ok(want), "{text} kb_base={base}");
        }
    }

    #[test]
    fn refusals_say_why_in_the_cli_words() {
        let e = |s: &str| fio_size(s, 1024).unwrap_err().to_string();
        assert_eq!(
            e("4x"),
            format!("invalid size '4x': unknown unit 'x'; {HELP}")
        );
        assert_eq!(e(""), format!("invalid size '': {HELP}"));
        assert_eq!(
            e("50%"),
            format!("invalid size '50%': unknown unit '%'; {HELP}")
        );
        assert_eq!(
            e("1.3k"),
            "invalid size '1.3k': not a whole number of bytes"
        );
        assert_eq!(e("99999999p"), "invalid size '99999999p': too large");
        assert!(e("1..2k").contains(HELP));
        assert!(e("4kx").contains("unknown unit 'kx'"));
    }

    proptest! {
        #[test]
        fn matches_by_hand(n in 0u64..100_000, unit in 0usize..6, base in prop_oneof![Just(1000u64), Just(1024u64)]) {
            let (suffix, pow, iec) = [("", 0, false), ("k", 1, false), ("KB", 1, false), ("KiB", 1, true), ("m", 2, false), ("MiB", 2, true)][unit];
            let mult = if iec { if base == 1024 { 1000 } else { 1024 } } else { base };
            prop_assert_eq!(fio_size(&format!("{n}{suffix}"), base), Ok(n * mult.pow(pow)));
        }

        #[test]
        fn never_panics(s in "\\PC{0,16}") {
            let _ = fio_size(&s, 1024);
        }
    }
}
