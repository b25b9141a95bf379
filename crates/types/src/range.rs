//! The one value-list grammar of `sweep --vary` and `sim --vary`: a comma
//! list whose items are values or ranges.
//!
//! ```text
//! LIST  := ITEM ( "," ITEM )*
//! ITEM  := VALUE | FROM ".." TO [ STEP ]
//! STEP  := ":x" N     multiply by N (x2 or more): 4k..4m:x2 = 4k 8k 16k ... 4m
//!        | ":+" N     add N (1 or more; a size for sizes): 1..16:+1, 1m..3m:+1m
//!        | "/" N      N evenly spaced points, both ends included: 1..1000/5
//! ```
//!
//! `:*N` is `:xN`. TO is included when the steps land on it. A range
//! without a step is `x2` with TO always included (`1..1000` = 1 2 4 ... 512
//! 1000) where the caller allows it ([`Bare`]); a sweep asks for a step.
//! FROM, TO and N are whole numbers, or sizes (`4k`, `1MiB`) where the
//! caller reads sizes; a range needs 1 <= FROM <= TO. At most
//! [`MAX_VALUES`] values.

/// The most values one list may expand to (a guard against `1..1e9:+1`).
pub const MAX_VALUES: usize = 100_000;

/// How a range's values grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `:xN`: multiply by N.
    Mul(u64),
    /// `:+N`: add N.
    Add(u64),
    /// `/N`: N evenly spaced points from FROM to TO.
    Points(u64),
    /// No step: doubling, TO always included.
    Bare,
}

/// What a range without a step means to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bare {
    /// Doubling with TO always included (`sim --vary clients=1..1000`).
    Doubling,
    /// Refused: the range needs a step (`sweep --vary`).
    Refused,
}

/// A bad list or range: what is wrong, in words that name the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("an empty value in the list")]
    Empty,
    #[error("a range needs a step: FROM..TO:xN (multiply) or FROM..TO:+N (add), e.g. 4k..4m:x2")]
    NoStep,
    #[error("the step is xN (multiply, e.g. x2), +N (add, e.g. +1) or /N (N points)")]
    BadStep,
    #[error("the step must grow: x2 or more, +1 or more")]
    NoGrowth,
    #[error("a range runs from a positive FROM up to TO (FROM <= TO)")]
    Order,
    #[error("FROM..TO/N needs 2 <= N <= {MAX_VALUES} points")]
    Points,
    #[error("more than {MAX_VALUES} values")]
    TooMany,
    /// A number the caller's reader refused (its words).
    #[error("{0}")]
    Number(String),
}

/// One item of a list: a value as written, or a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item<'a> {
    Value(&'a str),
    Range {
        from: &'a str,
        to: &'a str,
        step: Step,
        /// The step's number as written (`2`, `1m`), empty for `Bare`.
        by: &'a str,
    },
}

/// Split one item: `4k`, `4k..4m:x2`, `1..1000/5`, `1..16`.
pub fn parse_item(item: &str) -> Result<Item<'_>, RangeError> {
    let item = item.trim();
    if item.is_empty() {
        return Err(RangeError::Empty);
    }
    let Some((from, rest)) = item.split_once("..") else {
        return Ok(Item::Value(item));
    };
    let (to, step, by) = if let Some((to, s)) = rest.split_once(':') {
        let s = s.trim();
        if let Some(n) = s.strip_prefix(['x', 'X', '*']) {
            (to, Step::Mul(0), n)
        } else if let Some(n) = s.strip_prefix('+') {
            (to, Step::Add(0), n)
        } else {
            return Err(RangeError::BadStep);
        }
    } else if let Some((to, n)) = rest.split_once('/') {
        (to, Step::Points(0), n)
    } else {
        (rest, Step::Bare, "")
    };
    Ok(Item::Range {
        from: from.trim(),
        to: to.trim(),
        step,
        by: by.trim(),
    })
}

/// The values of one range, read with `num` (whole numbers or sizes) and
/// written back with `fmt`.
pub fn expand_range(from: u64, to: u64, step: Step, out: &mut Vec<u64>) -> Result<(), RangeError> {
    if from == 0 || from > to {
        return Err(RangeError::Order);
    }
    let push = |out: &mut Vec<u64>, v: u64| {
        if out.len() >= MAX_VALUES {
            return Err(RangeError::TooMany);
        }
        out.push(v);
        Ok(())
    };
    match step {
        Step::Mul(n) if n < 2 => return Err(RangeError::NoGrowth),
        Step::Add(0) => return Err(RangeError::NoGrowth),
        Step::Points(n) if !(2..=MAX_VALUES as u64).contains(&n) => {
            return Err(RangeError::Points);
        }
        Step::Points(n) => {
            let mut last = None;
            for i in 0..n {
                let part = ((to - from) as f64 * i as f64 / (n - 1) as f64).round() as u64;
                let x = from.saturating_add(part).min(to);
                if last != Some(x) {
                    push(out, x)?;
                    last = Some(x);
                }
            }
            return Ok(());
        }
        Step::Bare => {
            let mut x = from;
            while x < to {
                push(out, x)?;
                x = x.saturating_mul(2);
            }
            return push(out, to);
        }
        Step::Mul(_) | Step::Add(_) => {}
    }
    let mut v = from;
    while v <= to {
        push(out, v)?;
        let next = match step {
            Step::Mul(n) => v.checked_mul(n),
            Step::Add(n) => v.checked_add(n),
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => break,
        }
    }
    Ok(())
}

/// Expand a whole list: values are kept as written (the caller checks
/// them), ranges are read with `num` and their values written with `fmt`.
/// `bare` says what a range without a step means.
pub fn expand_list<E: std::fmt::Display>(
    list: &str,
    bare: Bare,
    num: impl Fn(&str) -> Result<u64, E>,
    fmt: impl Fn(u64) -> String,
) -> Result<Vec<String>, RangeError> {
    let mut values = Vec::new();
    for raw in list.split(',') {
        match parse_item(raw)? {
            Item::Value(v) => values.push(v.to_string()),
            Item::Range { from, to, step, by } => {
                let n = |s: &str| num(s).map_err(|e| RangeError::Number(e.to_string()));
                let step = match step {
                    Step::Bare if bare == Bare::Refused => return Err(RangeError::NoStep),
                    Step::Bare => Step::Bare,
                    Step::Mul(_) => Step::Mul(n(by)?),
                    Step::Add(_) => Step::Add(n(by)?),
                    Step::Points(_) => Step::Points(by.parse().map_err(|_| {
                        RangeError::Number(format!("'{by}' is not a whole number of points"))
                    })?),
                };
                let (lo, hi) = (n(from)?, n(to)?);
                let mut out = Vec::new();
                expand_range(lo, hi, step, &mut out)?;
                values.extend(out.into_iter().map(&fmt));
            }
        }
        if values.len() > MAX_VALUES {
            return Err(RangeError::TooMany);
        }
    }
    Ok(values)
}

/// Text that is not a whole number (what [`whole`] refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a whole number")]
pub struct NotWhole(pub String);

/// Whole numbers: `expand_list(list, bare, whole, u64::to_string)`.
pub fn whole(s: &str) -> Result<u64, NotWhole> {
    s.trim().parse().map_err(|_| NotWhole(s.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ints(s: &str, bare: Bare) -> Result<Vec<u64>, RangeError> {
        Ok(expand_list(s, bare, whole, |v| v.to_string())?
            .iter()
            .map(|v| v.parse().unwrap())
            .collect())
    }

    #[test]
    fn every_form() {
        let d = Bare::Doubling;
        assert_eq!(ints("1,2,4", d).unwrap(), [1, 2, 4]);
        assert_eq!(ints("1..16:x2", d).unwrap(), [1, 2, 4, 8, 16]);
        assert_eq!(ints("1..16:*4", d).unwrap(), [1, 4, 16]);
        assert_eq!(ints("1..4:+1", d).unwrap(), [1, 2, 3, 4]);
        assert_eq!(ints("1..6:x4", d).unwrap(), [1, 4], "TO need not be hit");
        assert_eq!(
            ints("1..1000", d).unwrap(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]
        );
        assert_eq!(ints("1..1000/5", d).unwrap(), [1, 251, 501, 750, 1000]);
        assert_eq!(ints("1..2/5", d).unwrap(), [1, 2], "no repeats");
        assert_eq!(ints("3,1..4:+2,9", d).unwrap(), [3, 1, 3, 9], "mixed");
        assert_eq!(ints("1..16", Bare::Refused), Err(RangeError::NoStep));
        assert_eq!(ints("1..16:x1", d), Err(RangeError::NoGrowth));
        assert_eq!(ints("1..16:+0", d), Err(RangeError::NoGrowth));
        assert_eq!(ints("1..16:y2", d), Err(RangeError::BadStep));
        assert_eq!(ints("16..1:x2", d), Err(RangeError::Order));
        assert_eq!(ints("0..1:x2", d), Err(RangeError::Order));
        assert_eq!(ints("1..9/1", d), Err(RangeError::Points));
        assert_eq!(ints("1,,2", d), Err(RangeError::Empty));
        assert_eq!(ints("1..1000000:+1", d), Err(RangeError::TooMany));
        assert!(matches!(ints("1..x:+1", d), Err(RangeError::Number(m)) if m.contains("'x'")));
    }

    proptest! {
        #[test]
        fn never_panics(s in "[0-9kmx.,:+/*]{0,24}", refuse: bool) {
            let bare = if refuse { Bare::Refused } else { Bare::Doubling };
            let _ = expand_list(&s, bare, whole, |v| v.to_string());
        }

        #[test]
        fn ranges_rise_within_bounds(lo in 1u64..5000, span in 0u64..50_000, n in 1u64..9, form in 0u8..4) {
            let hi = lo + span;
            let s = match form {
                0 => format!("{lo}..{hi}:x{}", n + 1),
                1 => format!("{lo}..{hi}:+{n}"),
                2 => format!("{lo}..{hi}/{}", n + 1),
                _ => format!("{lo}..{hi}"),
            };
            if let Ok(v) = ints(&s, Bare::Doubling) {
                prop_assert_eq!(v[0], lo);
                prop_assert!(v.windows(2).all(|w| w[0] < w[1]), "{:?}", v);
                prop_assert!(*v.last().unwrap() <= hi);
                if form >= 2 {
                    prop_assert_eq!(*v.last().unwrap(), hi, "points and bare ranges end at TO");
                }
            }
        }
    }
}
