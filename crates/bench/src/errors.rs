//! fio's error tolerance (issue 27): `continue_on_error`, `ignore_error`,
//! `error_dump`. As fio's `td_error.c`: an error's kind is `verify` for
//! EILSEQ (a verify mismatch), else `read` or `write` by direction; it is
//! non-fatal when `continue_on_error` names its kind and its errno is in
//! that kind's list (`ignore_error`, default EIO and EILSEQ). A non-fatal
//! error is counted (`PhaseResult::errors`, keyed `KIND:ERRNO`) and the
//! job goes on; any other error stops the phase as before.

use crate::options::{PhaseSpec, SpecError};
use storlab_types::fioverify::ErrorPolicy;

/// fio's default list of non-fatal errors.
const DEFAULT_NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// The errnos fio's ignore_error may name (fio takes any symbol its libc
/// knows; these are the ones I/O returns).
const NAMES: &[(&str, i32)] = &[
    ("EIO", libc::EIO),
    ("ENOSPC", libc::ENOSPC),
    ("EDQUOT", libc::EDQUOT),
    ("EILSEQ", libc::EILSEQ),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EINVAL", libc::EINVAL),
    ("EFBIG", libc::EFBIG),
    ("EROFS", libc::EROFS),
    ("ENODATA", libc::ENODATA),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ENXIO", libc::ENXIO),
    ("ENODEV", libc::ENODEV),
    ("EBUSY", libc::EBUSY),
    ("EINTR", libc::EINTR),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ECANCELED", libc::ECANCELED),
    ("EPERM", libc::EPERM),
    ("EACCES", libc::EACCES),
];

fn errno_of(word: &str) -> Result<i32, String> {
    let w = word.trim();
    if let Ok(n) = w.parse::<i32>() {
        if n > 0 {
            return Ok(n);
        }
    }
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(w))
        .map(|&(_, e)| e)
        .ok_or_else(|| {
            format!(
                "ignore_error: '{w}' is not an errno storlab knows: give a name such as ENOSPC or \
                 EIO, or the number"
            )
        })
}

/// Resolve the three options, checked.
pub fn resolve(s: &PhaseSpec) -> Result<ErrorPolicy, SpecError> {
    let kinds: Vec<String> = match s
        .continue_on_error
        .as_deref()
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("" | "none" | "0" | "false") => Vec::new(),
        Some("read") => vec!["read".into()],
        Some("write") => vec!["write".into()],
        Some("io") => vec!["read".into(), "write".into()],
        Some("verify") => vec!["verify".into()],
        Some("all" | "1" | "true") => vec!["read".into(), "write".into(), "verify".into()],
        Some(other) => {
            return Err(SpecError(format!(
                "continue_on_error={other}: use none, read, write, io, verify or all"
            )));
        }
    };
    let mut lists: [Vec<i32>; 3] = Default::default();
    if let Some(v) = s.ignore_error.as_deref() {
        let sides: Vec<&str> = v.split(',').collect();
        if sides.len() > 3 {
            return Err(SpecError(format!(
                "ignore_error={v}: give READ,WRITE,VERIFY lists (errors separated by ':')"
            )));
        }
        for (list, side) in lists.iter_mut().zip(&sides) {
            for w in side.split(':').filter(|w| !w.trim().is_empty()) {
                list.push(errno_of(w).map_err(SpecError)?);
            }
        }
    }
    let [ignore_read, ignore_write, ignore_verify] = lists;
    Ok(ErrorPolicy {
        continue_on: kinds,
        ignore_read,
        ignore_write,
        ignore_verify,
        no_dump: s.error_dump.is_some_and(|f| !f.0),
    })
}

/// The kind of an error (fio's `td_error_type`).
pub fn kind(is_read: bool, errno: i32) -> &'static str {
    if errno == libc::EILSEQ {
        "verify"
    } else if is_read {
        "read"
    } else {
        "write"
    }
}

/// Whether an error of direction `is_read` with `errno` lets the job go on
/// (fio's `td_non_fatal_error`).
pub fn non_fatal(p: &ErrorPolicy, is_read: bool, errno: i32) -> bool {
    let k = kind(is_read, errno);
    if !p.continue_on.iter().any(|c| c == k) {
        return false;
    }
    let list = match k {
        "read" => &p.ignore_read,
        "write" => &p.ignore_write,
        _ => &p.ignore_verify,
    };
    if list.is_empty() {
        DEFAULT_NON_FATAL.contains(&errno)
    } else {
        list.contains(&errno)
    }
}

/// The key a non-fatal error is counted under: `write:ENOSPC`.
pub fn count_key(is_read: bool, errno: i32) -> String {
    format!("{}:{}", kind(is_read, errno), crate::sys::errno_name(errno))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(coe: &str, ignore: Option<&str>) -> ErrorPolicy {
        let s = PhaseSpec {
            continue_on_error: Some(coe.into()),
            ignore_error: ignore.map(String::from),
            ..Default::default()
        };
        resolve(&s).unwrap()
    }

    #[test]
    fn fios_rules_decide_what_continues() {
        // enospc-pressure.fio: continue_on_error=write, ignore_error=,ENOSPC
        let p = policy("write", Some(",ENOSPC"));
        assert!(non_fatal(&p, false, libc::ENOSPC));
        // The write list replaces the default: EIO on a write now stops.
        assert!(!non_fatal(&p, false, libc::EIO));
        // Reads are not continued, whatever the error.
        assert!(!non_fatal(&p, true, libc::EIO));
        // The default list: EIO and EILSEQ.
        let p = policy("io", None);
        assert!(non_fatal(&p, true, libc::EIO));
        assert!(non_fatal(&p, false, libc::EIO));
        assert!(!non_fatal(&p, false, libc::ENOSPC));
        // EILSEQ is a verify error: `io` does not cover it, `all` does.
        assert!(!non_fatal(&p, true, libc::EILSEQ));
        assert!(non_fatal(&policy("all", None), true, libc::EILSEQ));
        assert!(!non_fatal(&policy("none", None), true, libc::EIO));
        assert_eq!(count_key(false, libc::ENOSPC), "write:ENOSPC");
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let s = PhaseSpec {
            continue_on_error: Some("sometimes".into()),
            ..Default::default()
        };
        assert!(resolve(&s).unwrap_err().0.contains("none, read, write"));
        let s = PhaseSpec {
            ignore_error: Some("EWHAT".into()),
            ..Default::default()
        };
        assert!(resolve(&s).unwrap_err().0.contains("EWHAT"));
        let p = policy("read", Some("EAGAIN,ENOSPC:122"));
        assert_eq!(p.ignore_read, vec![libc::EAGAIN]);
        assert_eq!(p.ignore_write, vec![libc::ENOSPC, 122]);
    }
}
