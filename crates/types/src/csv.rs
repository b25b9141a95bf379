//! The one CSV writer (RFC 4180 quoting) behind `export --format csv` and
//! `monitor --output-format csv`.

/// One field: quoted when it holds a comma, a quote or a line break, with
/// quotes doubled.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One record: the fields quoted as needed and joined by commas (no line
/// ending).
pub fn row<I, S>(fields: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    fields
        .into_iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(row(["a", "b,c", ""]), "a,\"b,c\",");
    }

    proptest::proptest! {
        #[test]
        fn a_quoted_field_reads_back(s in "\\PC{0,40}") {
            let f = field(&s);
            let back = if f.starts_with('"') {
                f[1..f.len() - 1].replace("\"\"", "\"")
            } else {
                f.clone()
            };
            proptest::prop_assert_eq!(back, s);
        }
    }
}
