//! Run labels (`--tag key=value`) and run selectors (`12`, `latest`,
//! `latest~1`, `tag:cfg=a`, `tag:cfg=a,fs=xfs`): their grammar and parsers.
//!
//! Grammar (also in `docs/store.md`):
//!
//! * tag key: 1 to 64 characters from `A-Z a-z 0-9 _ . -`, starting with a
//!   letter or digit;
//! * tag value: 1 to 256 printable characters, no comma (commas join tags in a
//!   selector), no leading or trailing space;
//! * selector: a run id (a positive integer), `latest`, `latest~N` (the N-th
//!   run before the latest), or `tag:` followed by one or more `key=value`
//!   joined by commas (runs that carry all of them).

use std::collections::BTreeMap;
use std::fmt;

/// Why a tag or a run selector was refused. The message says what is
/// allowed and gives an example.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} '{input}': {reason}")]
pub struct SelectError {
    /// `tag` or `run`.
    pub what: &'static str,
    pub input: String,
    pub reason: String,
}

fn tag_err(input: &str, reason: impl Into<String>) -> SelectError {
    SelectError {
        what: "tag",
        input: input.to_string(),
        reason: reason.into(),
    }
}

const TAG_HELP: &str = "write key=value, e.g. controller=perc5e or raid=R6/12";
const RUN_HELP: &str = "expected a run id (e.g. 12), `latest`, `latest~1` (the run before the latest), \
or `tag:key=value` (e.g. tag:cfg=a, or tag:cfg=a,fs=xfs for runs with both); `storlab runs` lists them";

/// Maximum lengths of a tag key and value, in characters.
pub const MAX_KEY_LEN: usize = 64;
pub const MAX_VALUE_LEN: usize = 256;

/// Labels of a new run that contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagConflict {
    #[error(
        "--tag {key} is given twice ({key}={first} and {key}={second}); a run has one value per key"
    )]
    Twice {
        key: String,
        first: String,
        second: String,
    },
    #[error("--design and --tag planned_as=... give two designs ({design} and {tagged}); keep one")]
    TwoDesigns { design: String, tagged: String },
}

/// A new run's tags: `given` (`--tag`, in order), the `design` (`--design`,
/// saved as tag [`storlab_types::DESIGN_TAG`]), then `defaults` (the
/// config file's) for keys not given. One key with two values is refused.
pub fn merge_tags(
    given: &[(String, String)],
    design: Option<&str>,
    defaults: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, TagConflict> {
    let mut map = BTreeMap::new();
    for (k, v) in given {
        if let Some(old) = map.insert(k.clone(), v.clone())
            && old != *v
        {
            return Err(TagConflict::Twice {
                key: k.clone(),
                first: old,
                second: v.clone(),
            });
        }
    }
    if let Some(d) = design
        && let Some(old) = map.insert(storlab_types::DESIGN_TAG.to_string(), d.to_string())
        && old != d
    {
        return Err(TagConflict::TwoDesigns {
            design: d.to_string(),
            tagged: old,
        });
    }
    for (k, v) in defaults {
        map.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(map)
}

/// Parse one `key=value` label as typed after `--tag`.
pub fn parse_tag(input: &str) -> Result<(String, String), SelectError> {
    let Some((key, value)) = input.split_once('=') else {
        return Err(tag_err(input, format!("no '=' found; {TAG_HELP}")));
    };
    validate_key(input, key)?;
    validate_value(input, value)?;
    Ok((key.to_string(), value.to_string()))
}

fn validate_key(input: &str, key: &str) -> Result<(), SelectError> {
    if key.is_empty() {
        return Err(tag_err(input, format!("the key is empty; {TAG_HELP}")));
    }
    if key.chars().count() > MAX_KEY_LEN {
        return Err(tag_err(
            input,
            format!("the key is longer than {MAX_KEY_LEN} characters"),
        ));
    }
    if !key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
    {
        return Err(tag_err(
            input,
            "the key must start with a letter or a digit",
        ));
    }
    if let Some(bad) = key
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(tag_err(
            input,
            format!("the key may hold only letters, digits, '_', '.' and '-', not {bad:?}"),
        ));
    }
    Ok(())
}

fn validate_value(input: &str, value: &str) -> Result<(), SelectError> {
    if value.is_empty() {
        return Err(tag_err(input, format!("the value is empty; {TAG_HELP}")));
    }
    if value.chars().count() > MAX_VALUE_LEN {
        return Err(tag_err(
            input,
            format!("the value is longer than {MAX_VALUE_LEN} characters"),
        ));
    }
    if value.contains(',') {
        return Err(tag_err(
            input,
            "the value may not contain ',' (commas join several tags in `tag:a=1,b=2`)",
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(tag_err(
            input,
            "the value may not contain control characters",
        ));
    }
    if value.trim() != value {
        return Err(tag_err(
            input,
            "the value may not start or end with a space",
        ));
    }
    Ok(())
}

/// Which run(s) a command argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSelector {
    /// A run id as listed by `storlab runs`.
    Id(i64),
    /// The most recent run (`latest`), or the `back`-th run before it
    /// (`latest~back`). "Recent" means highest id: ids grow as runs are saved.
    Latest { back: u32 },
    /// Every run that carries all of these tags, oldest first.
    Tags(Vec<(String, String)>),
}

impl RunSelector {
    /// Parse a selector as typed on the command line.
    pub fn parse(input: &str) -> Result<RunSelector, SelectError> {
        let err = |reason: String| SelectError {
            what: "run",
            input: input.to_string(),
            reason,
        };
        let s = input.trim();
        if s.is_empty() {
            return Err(err(format!("it is empty; {RUN_HELP}")));
        }
        if s == "latest" {
            return Ok(RunSelector::Latest { back: 0 });
        }
        if let Some(n) = s.strip_prefix("latest~") {
            return n
                .parse::<u32>()
                .map(|back| RunSelector::Latest { back })
                .map_err(|_| {
                    err(format!(
                        "'{n}' after `latest~` is not a count of runs; {RUN_HELP}"
                    ))
                });
        }
        if let Some(body) = s.strip_prefix("tag:") {
            let mut tags: Vec<(String, String)> = Vec::new();
            for part in body.split(',') {
                let (k, v) = parse_tag(part).map_err(|e| err(e.reason))?;
                if let Some((_, old)) = tags.iter().find(|(ok, _)| *ok == k) {
                    if *old != v {
                        return Err(err(format!(
                            "tag '{k}' is asked to be both '{old}' and '{v}', which no run can be; \
                             give them as two arguments (tag:{k}={old} tag:{k}={v}) to take the runs of both"
                        )));
                    }
                    continue;
                }
                tags.push((k, v));
            }
            return Ok(RunSelector::Tags(tags));
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return match s.parse::<i64>() {
                Ok(id) if id > 0 => Ok(RunSelector::Id(id)),
                Ok(_) => Err(err(format!("run ids start at 1; {RUN_HELP}"))),
                Err(_) => Err(err(format!("the number is too large; {RUN_HELP}"))),
            };
        }
        if s.starts_with('-') && s[1..].bytes().all(|b| b.is_ascii_digit()) && s.len() > 1 {
            return Err(err(format!("run ids start at 1; {RUN_HELP}")));
        }
        Err(err(RUN_HELP.to_string()))
    }
}

impl std::str::FromStr for RunSelector {
    type Err = SelectError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunSelector::parse(s)
    }
}

impl fmt::Display for RunSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunSelector::Id(id) => write!(f, "{id}"),
            RunSelector::Latest { back: 0 } => f.write_str("latest"),
            RunSelector::Latest { back } => write!(f, "latest~{back}"),
            RunSelector::Tags(tags) => {
                f.write_str("tag:")?;
                for (i, (k, v)) in tags.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{k}={v}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tags() {
        assert_eq!(
            parse_tag("raid=R6/12").unwrap(),
            ("raid".into(), "R6/12".into())
        );
        assert_eq!(
            parse_tag("note=a=b").unwrap(),
            ("note".into(), "a=b".into())
        );
        assert_eq!(parse_tag("chunk=512 KiB").unwrap().1, "512 KiB".to_string());
        for bad in [
            "", "cfg", "=a", "cfg=", "c fg=a", "_x=1", "cfg=a,b", "cfg= a", "cfg=a\n",
        ] {
            let e = parse_tag(bad).unwrap_err();
            assert_eq!(e.what, "tag", "{bad:?}");
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }

    #[test]
    fn selectors() {
        assert_eq!(RunSelector::parse("12").unwrap(), RunSelector::Id(12));
        assert_eq!(
            RunSelector::parse("latest").unwrap(),
            RunSelector::Latest { back: 0 }
        );
        assert_eq!(
            RunSelector::parse("latest~3").unwrap(),
            RunSelector::Latest { back: 3 }
        );
        assert_eq!(
            RunSelector::parse("tag:cfg=a,fs=xfs").unwrap(),
            RunSelector::Tags(vec![
                ("cfg".into(), "a".into()),
                ("fs".into(), "xfs".into())
            ])
        );
        // A repeated identical tag is harmless; a contradictory one is refused.
        assert_eq!(
            RunSelector::parse("tag:cfg=a,cfg=a").unwrap(),
            RunSelector::Tags(vec![("cfg".into(), "a".into())])
        );
        let e = RunSelector::parse("tag:cfg=a,cfg=b").unwrap_err();
        assert!(e.reason.contains("two arguments"), "{e}");
        for bad in [
            "",
            "0",
            "-3",
            "abc",
            "latest~",
            "latest~x",
            "tag:",
            "tag:cfg",
            "tag:=a",
            "99999999999999999999",
            "Latest",
        ] {
            let e = RunSelector::parse(bad).unwrap_err();
            assert_eq!(e.what, "run", "{bad:?}");
            assert!(e.to_string().starts_with("invalid run"), "{e}");
        }
    }

    fn key() -> impl Strategy<Value = String> {
        "[A-Za-z0-9][A-Za-z0-9_.-]{0,20}"
    }
    fn value() -> impl Strategy<Value = String> {
        "[A-Za-z0-9/=:+_.-]([A-Za-z0-9/=:+_. -]{0,30}[A-Za-z0-9/=:+_.-])?"
    }
    fn selector() -> impl Strategy<Value = RunSelector> {
        prop_oneof![
            (1i64..i64::MAX).prop_map(RunSelector::Id),
            any::<u32>().prop_map(|back| RunSelector::Latest { back }),
            proptest::collection::btree_map(key(), value(), 1..4)
                .prop_map(|m| RunSelector::Tags(m.into_iter().collect())),
        ]
    }

    proptest! {
        #[test]
        fn valid_tags_round_trip(k in key(), v in value()) {
            let typed = format!("{k}={v}");
            prop_assert_eq!(parse_tag(&typed).unwrap(), (k, v));
        }

        #[test]
        fn selectors_round_trip_through_display(sel in selector()) {
            let typed = sel.to_string();
            prop_assert_eq!(RunSelector::parse(&typed).unwrap(), sel);
        }

        #[test]
        fn parsers_never_panic(s in "\\PC{0,40}") {
            let _ = parse_tag(&s);
            let _ = RunSelector::parse(&s);
        }

        #[test]
        fn any_garbage_selector_error_names_the_input(s in "[a-z!@#%^&*()]{1,12}") {
            prop_assume!(s != "latest");
            let e = RunSelector::parse(&s).unwrap_err();
            prop_assert!(e.to_string().contains(&s));
        }
    }
}
