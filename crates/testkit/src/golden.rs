//! Golden files: output compared with a file committed beside the tests.
//!
//! One variable regenerates every golden file of the workspace:
//!
//! ```sh
//! STORLAB_UPDATE_GOLDEN=1 cargo test --workspace --test golden
//! git diff '*/golden/*'      # review, then commit
//! ```
//!
//! With the variable set, [`check`] and [`check_with`] write the actual
//! output to the file and pass; without it they compare.

use std::path::Path;

/// The variable that makes the golden checks write instead of compare.
pub const UPDATE_VAR: &str = "STORLAB_UPDATE_GOLDEN";

/// Whether this run regenerates the golden files.
pub fn updating() -> bool {
    std::env::var_os(UPDATE_VAR).is_some()
}

/// How to regenerate, for the failure messages.
fn how_to_update() -> String {
    format!(
        "if the change is intended: {UPDATE_VAR}=1 cargo test (the same test), then review git diff"
    )
}

/// Compare `actual` with the file at `path` byte for byte (or write it when
/// [`updating`]). A mismatch is an error naming the file, the first line
/// that differs (both versions of it) and how to regenerate.
pub fn check(path: &Path, actual: &str) -> Result<(), String> {
    check_with(path, actual, |expected, actual| {
        if expected == actual {
            return Ok(());
        }
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        Err(format!(
            "differs at line {}:\n  expected: {:?}\n  actual:   {:?}",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line),
        ))
    })
}

/// [`check`] with a comparison of one's own (for example numbers within a
/// tolerance): `same(expected, actual)` says why they differ, if they do.
/// The file is written as `actual` when [`updating`].
pub fn check_with(
    path: &Path,
    actual: &str,
    same: impl FnOnce(&str, &str) -> Result<(), String>,
) -> Result<(), String> {
    if updating() {
        return std::fs::write(path, actual)
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e}; run with {UPDATE_VAR}=1 to create it",
            path.display()
        )
    })?;
    same(&expected, actual).map_err(|why| format!("{}: {why}\n{}", path.display(), how_to_update()))
}

/// [`check`], panicking with its message: the one-file form for a test.
#[track_caller]
pub fn assert_golden(path: &Path, actual: &str) {
    if let Err(e) = check(path, actual) {
        panic!("{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_names_the_file_the_line_and_both_versions() {
        if updating() {
            return; // the comparison is what this test is about
        }
        let d = std::env::temp_dir().join(format!("storlab-golden-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("g.txt");
        std::fs::write(&p, "a\nb\nc\n").unwrap();
        assert_eq!(check(&p, "a\nb\nc\n"), Ok(()));
        let e = check(&p, "a\nB\nc\n").unwrap_err();
        assert!(e.contains("g.txt: differs at line 2"), "{e}");
        assert!(e.contains("expected: Some(\"b\")") && e.contains("actual:   Some(\"B\")"));
        assert!(e.contains(UPDATE_VAR), "{e}");
        // A shorter actual: the first line past its end.
        let e = check(&p, "a\nb\n").unwrap_err();
        assert!(e.contains("differs at line 3"), "{e}");
        let e = check(&d.join("missing.txt"), "x").unwrap_err();
        assert!(e.contains("cannot read") && e.contains(UPDATE_VAR), "{e}");
        let e = check_with(&p, "anything", |_, _| Err("not close".into())).unwrap_err();
        assert!(e.contains("g.txt: not close"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
