//! Text from users and files (notes, tags, phase names, host names, paths)
//! made safe to show on a terminal: control characters (C0 including ESC,
//! DEL, C1) are shown escaped (`\x1b`, `\u{9b}`) so a `--note` or a job
//! file's phase name cannot clear the screen, move the cursor or retitle
//! the terminal. JSON needs none of this: its serialiser escapes them.

use std::borrow::Cow;

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !c.is_control() || keep(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// One value (a table cell, a label): every control character escaped,
/// line breaks and tabs too.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// Whole lines of text: control characters escaped except line feeds and
/// tabs, which keep the layout.
pub fn escape_controls_in_text(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(escape_controls("p\x1b[2J"), "p\\x1b[2J");
        assert_eq!(escape_controls("a\x7fb\u{9b}c"), "a\\x7fb\\u{9b}c");
        assert_eq!(escape_controls("line\nnext\t"), "line\\x0anext\\x09");
        assert_eq!(
            escape_controls_in_text("a\x1b]0;t\x07\nb\tc\r"),
            "a\\x1b]0;t\\x07\nb\tc\\x0d"
        );
        assert!(matches!(
            escape_controls("µs été ✓"),
            Cow::Borrowed("µs été ✓")
        ));
        for s in ["\x1b", "\u{85}", "\0", "x\u{9f}y"] {
            assert!(!escape_controls(s).chars().any(char::is_control), "{s:?}");
        }
    }
}

/// Line and column (both from 1; the column counts bytes, as the TOML
/// parser's spans do) of byte `offset` in `text`: where a TOML span
/// (`toml::de::Error::span`, `Spanned::span`) points, for `FILE:LINE:COL`
/// messages. An offset past the end or inside a character is moved back
/// to the character's start (never a panic).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut cut = offset.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let before = &text[..cut];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len() + 1, |i| before.len() - i);
    (line, col)
}

#[cfg(test)]
mod line_col_tests {
    use super::line_col;

    #[test]
    fn offsets_become_lines_and_columns_from_one() {
        let t = "a = 1\nbb = \"é\"\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 4), (1, 5));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 11), (2, 6));
        assert_eq!(line_col(t, 12), (2, 7));
        // Inside the two bytes of 'é': its start, not a panic.
        assert_eq!(line_col(t, 13), (2, 7));
        assert_eq!(line_col(t, 999), (3, 1));
    }
}
