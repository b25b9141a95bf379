//! The one error type of the plan crate. Every message names the problem and
//! says what the user can do about it.

/// What went wrong while planning.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A layout such as `R60/12/48` could not be read.
    #[error(
        "invalid layout '{input}': {reason}\n  form: R<level>/<span>[/<drives>|/x][,chunk=<size>][,stripe=<size>]  or  lvm(<groups>*R<level>/<span>[, stripe=<size>][, chunk=<size>])\n  levels: R0 R1 R5 R6 R10 R50 R60\n  examples: R60/12/48  R6/12  R5/6,chunk=128k  R10/2/8  R60/12/x  lvm(4*R5/6, stripe=1M)"
    )]
    Notation { input: String, reason: String },

    /// A value on the command line or in a catalog entry is out of range.
    #[error("invalid {what}: {reason}")]
    Invalid { what: String, reason: String },

    /// A name that is not in the catalog.
    #[error("unknown {kind} '{name}'{}; list them with `storlab plan catalog`{}",
        if suggestions.is_empty() { String::new() } else { format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" or ")) },
        if extra.is_empty() { String::new() } else { format!(" {extra}") })]
    Unknown {
        kind: &'static str,
        name: String,
        suggestions: Vec<String>,
        extra: String,
    },

    /// A design (`--design`, tag `planned_as`) or one of its values that is
    /// refused, worded in full.
    #[error("{0}")]
    Design(String),

    /// A design string that does not read as `storlab plan layout`'s arguments.
    #[error(
        "design '{spec}': {reason}; it takes storlab plan layout's arguments (see storlab plan layout --help)"
    )]
    DesignSyntax { spec: String, reason: String },

    /// A design string whose values the model refuses.
    #[error("design '{spec}': {error}")]
    InDesign { spec: String, error: Box<PlanError> },

    /// The model refused the layout as the user typed it (with its
    /// `--chunk` / `--stripe`).
    #[error("{typed}: {error}")]
    InLayout {
        typed: String,
        error: Box<PlanError>,
    },

    /// A catalog file that is not valid TOML or has unknown keys.
    #[error("{file}:{line}:{column}: {message}")]
    Catalog {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
}

/// A value that does not read as what a flag or key takes: the reason in
/// words, for the caller to name the flag (`--chunk`, `--levels`, a
/// catalog key).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

impl BadValue {
    /// The reason, from any error.
    pub fn of(e: impl std::fmt::Display) -> BadValue {
        BadValue(e.to_string())
    }
}

impl PlanError {
    /// The error without the design string that names where it is (for a
    /// caller that names the design itself).
    pub fn inner(self) -> PlanError {
        match self {
            PlanError::InDesign { error, .. } => *error,
            e => e,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        PlanError::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// Levenshtein edit distance (for "did you mean").
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The known names closest to `name` (at most 3), for "did you mean".
pub fn suggest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lname = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .map(|k| {
            let d = edit_distance(name, k);
            // A known name that contains what was typed is a good guess too.
            let d = if k.to_lowercase().contains(&lname) && !lname.is_empty() {
                d.min(1)
            } else {
                d
            };
            (d, k)
        })
        .collect();
    scored.sort();
    let limit = (name.chars().count() / 3).max(2);
    scored
        .into_iter()
        .filter(|(d, _)| *d <= limit)
        .take(3)
        .map(|(_, k)| k.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "SAME"), 0);
    }

    #[test]
    fn suggestions() {
        let known = ["exos-x18-18tb", "exos-x16-16tb", "cheetah-15k7-600gb"];
        assert_eq!(suggest("exos-x18-18t", known)[0], "exos-x18-18tb");
        assert!(suggest("zzzzzzzzzzzzzzzzzzzz", known).is_empty());
    }
}
