//! The campaign file: configurations (cells) to build, measure and tear
//! down, written as a list of `[[cell]]` tables, or generated from a
//! `[matrix]` of lists and a `[template]` cell with `{name}` placeholders.
//!
//! ```toml
//! name = "fs-choice"
//! baseline = "ext4"            # optional: the cell others are compared with
//!
//! [matrix]
//! fs = ["ext4", "xfs", "btrfs"]
//!
//! [template]
//! name = "{fs}"
//! tags = { fs = "{fs}" }
//! setup = ["mkfs.{fs} /dev/loop7", "mount /dev/loop7 /mnt/t"]
//! teardown = ["umount /mnt/t"]
//! target = "/mnt/t"
//! run = [["bench", "--profile", "sas"]]
//! ```
//!
//! Every string of a cell may use the matrix variables and `{target}`; an
//! unknown placeholder is an error that names it. The values are in the
//! environment of the `setup` and `teardown` shell commands as
//! `STORLAB_MATRIX_<KEY>` (key upper-cased, other characters than letters
//! and digits as `_`), with `STORLAB_CELL` and `STORLAB_TARGET`; in those
//! commands a placeholder becomes a reference to its variable
//! (`"${STORLAB_MATRIX_KEY}"`, inside double quotes `${...}`), never the
//! value's text, so no value runs as shell code; a placeholder inside single
//! quotes is refused (the shell expands nothing there). Elsewhere (names,
//! tags, target, run words: no shell) the value is put in as it is. Matrix
//! values and targets may not hold control characters (NUL, newline, ...);
//! a matrix key needs a list. `teardown_timeout` (seconds, or a duration
//! such as "10m"; default 300 s) bounds each teardown command. Pure:
//! parsing and expansion only.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A bad campaign file: what is wrong and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct CampaignError(pub String);

/// One configuration as written (before substitution).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSpec {
    pub name: Option<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Shell commands (`sh -c`) that build the configuration.
    #[serde(default)]
    pub setup: Vec<toml::Spanned<String>>,
    /// Shell commands that take it down again (always run after setup).
    #[serde(default)]
    pub teardown: Vec<toml::Spanned<String>>,
    /// Where storlab measures (directory, file or device).
    pub target: Option<toml::Spanned<String>>,
    /// What to run: storlab command lines (`["bench", "--profile", "sas"]`,
    /// `["sweep", "--vary", "bs=4k,1m"]`, `["bench", "--job", "x.toml"]`).
    /// The target is appended unless the words contain `{target}`.
    #[serde(default)]
    pub run: Vec<Vec<String>>,
}

/// The file as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    pub name: Option<String>,
    /// Name of the cell the others are compared with (default: the first).
    pub baseline: Option<String>,
    /// Lists of values, in file order (the first key varies slowest).
    #[serde(default)]
    pub matrix: Matrix,
    pub template: Option<CellSpec>,
    #[serde(default)]
    pub cell: Vec<CellSpec>,
    /// The longest a teardown command may run: seconds, or a duration
    /// ("10m"). Default [`DEFAULT_TEARDOWN_TIMEOUT_S`].
    pub teardown_timeout: Option<toml::Spanned<toml::Value>>,
    /// The file's path and text, for `file:line` in messages.
    #[serde(skip)]
    source: Source,
}

/// Where a campaign file came from.
#[derive(Debug, Clone, Default, PartialEq)]
struct Source {
    path: String,
    text: String,
}

impl Source {
    /// `file:line` of a byte offset.
    fn at(&self, offset: usize) -> String {
        let (line, _) = storlab_types::text::line_col(&self.text, offset);
        format!("{}:{line}", self.path)
    }
}

/// The `[matrix]` table in file order, each value with its place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix(pub Vec<(String, toml::Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for Matrix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Matrix, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = Matrix;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of lists, e.g. fs = [\"ext4\", \"xfs\"]")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Matrix, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = m.next_entry::<String, toml::Spanned<toml::Value>>()? {
                    out.push(kv);
                }
                Ok(Matrix(out))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A teardown command is stopped after this long unless the file says
/// otherwise.
pub const DEFAULT_TEARDOWN_TIMEOUT_S: u64 = 300;

fn default_teardown_timeout() -> u64 {
    DEFAULT_TEARDOWN_TIMEOUT_S
}

/// One configuration, every placeholder substituted.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cell {
    pub name: String,
    /// The matrix values this cell was made from (none for a `[[cell]]`
    /// written out; older saved campaigns have none either).
    #[serde(default)]
    pub matrix: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    pub target: String,
    /// storlab argument vectors, target inserted.
    pub run: Vec<Vec<String>>,
}

/// The expanded campaign.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Campaign {
    pub name: String,
    pub baseline: String,
    pub cells: Vec<Cell>,
    /// The longest one teardown command may run, in seconds.
    #[serde(default = "default_teardown_timeout")]
    pub teardown_timeout_s: u64,
}

/// The environment variable a matrix key is passed in.
pub fn matrix_env(key: &str) -> String {
    let k: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("STORLAB_MATRIX_{k}")
}

/// At most this many cells: a matrix is a product and grows fast.
pub const MAX_CELLS: usize = 10_000;

/// Substitute `{var}` in `s`; `{{` and `}}` stand for braces.
pub fn substitute(s: &str, vars: &BTreeMap<String, String>) -> Result<String, CampaignError> {
    substitute_as(s, vars)
}

/// The environment variable a placeholder of a shell command reads:
/// `STORLAB_TARGET` for `{target}`, `STORLAB_MATRIX_<KEY>` for a matrix key.
fn placeholder_env(key: &str) -> String {
    if key == "target" {
        "STORLAB_TARGET".into()
    } else {
        matrix_env(key)
    }
}

/// Put the shell command `s` together: each `{var}` becomes a reference to
/// the environment variable that holds its value (`"${STORLAB_MATRIX_KEY}"`
/// bare, `${STORLAB_MATRIX_KEY}` inside double quotes). The value itself
/// never enters the command's text, so no value can run as shell code. A
/// placeholder inside single quotes (where the shell expands nothing) is
/// refused; `at` is its file and line. The quotes are tracked by a small
/// scanner: single quotes, double quotes and backslash escapes.
pub fn substitute_shell(
    s: &str,
    vars: &BTreeMap<String, String>,
    at: &str,
) -> Result<String, CampaignError> {
    #[derive(PartialEq)]
    enum Q {
        None,
        Single,
        Double,
    }
    let mut q = Q::None;
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '}' if s[i + 1..].starts_with(c) => {
                out.push(c);
                chars.next();
            }
            '}' => {
                return Err(CampaignError(format!(
                    "{at}: unmatched '}}' in \"{s}\" (write '}}}}' for a literal brace)"
                )));
            }
            '{' => {
                let close = s[i..].find('}').ok_or_else(|| {
                    CampaignError(format!(
                        "{at}: unclosed '{{' in \"{s}\" (write '{{{{' for a literal brace)"
                    ))
                })?;
                let key = &s[i + 1..i + close];
                // An unknown key is named as everywhere else.
                substitute(&s[i..=i + close], vars)
                    .map_err(|e| CampaignError(format!("{at}: {}", e.0)))?;
                let env = placeholder_env(key);
                match q {
                    Q::Single => {
                        return Err(CampaignError(format!(
                            "{at}: {{{key}}} is inside single quotes in \"{s}\", where the shell \
                             expands nothing: use double quotes (\"...{{{key}}}...\")"
                        )));
                    }
                    Q::Double => out.push_str(&format!("${{{env}}}")),
                    Q::None => out.push_str(&format!("\"${{{env}}}\"")),
                }
                while chars.peek().is_some_and(|&(j, _)| j <= i + close) {
                    chars.next();
                }
            }
            '\\' if q != Q::Single => {
                out.push(c);
                // The escaped character, unless it is a brace (placeholders
                // and `{{` are read as they are anywhere).
                if let Some(&(_, n)) = chars.peek()
                    && n != '{'
                    && n != '}'
                {
                    out.push(n);
                    chars.next();
                }
            }
            '\'' if q == Q::None => {
                q = Q::Single;
                out.push(c);
            }
            '\'' if q == Q::Single => {
                q = Q::None;
                out.push(c);
            }
            '"' if q == Q::None => {
                q = Q::Double;
                out.push(c);
            }
            '"' if q == Q::Double => {
                q = Q::None;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

fn substitute_as(s: &str, vars: &BTreeMap<String, String>) -> Result<String, CampaignError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(tail.as_bytes()[0] as char);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return Err(CampaignError(format!(
                "unmatched '}}' in \"{s}\" (write '}}}}' for a literal brace)"
            )));
        }
        let close = tail.find('}').ok_or_else(|| {
            CampaignError(format!(
                "unclosed '{{' in \"{s}\" (write '{{{{' for a literal brace)"
            ))
        })?;
        let key = &tail[1..close];
        let v = vars.get(key).ok_or_else(|| {
            let known: Vec<&str> = vars.keys().map(String::as_str).collect();
            CampaignError(format!(
                "unknown placeholder {{{key}}} in \"{s}\": the placeholders are {}",
                if known.is_empty() {
                    "none (add a [matrix])".to_string()
                } else {
                    known
                        .iter()
                        .map(|k| format!("{{{k}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ))
        })?;
        out.push_str(v);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A matrix value as text: strings as they are, numbers and booleans as
/// TOML writes them.
fn value_text(k: &str, v: &toml::Value) -> Result<String, CampaignError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
            Ok(v.to_string())
        }
        _ => Err(CampaignError(format!(
            "matrix key {k}: values must be strings or numbers, e.g. {k} = [\"64k\", \"256k\"]"
        ))),
    }
}

/// The first control character of `s` (NUL, newline, tab, ...).
fn control_char(s: &str) -> Option<char> {
    s.chars().find(|c| c.is_control())
}

/// The matrix as a list of variable assignments (cartesian product, in the
/// file's key order, the first key varying slowest).
fn product(matrix: &Matrix, src: &Source) -> Result<Vec<BTreeMap<String, String>>, CampaignError> {
    let mut out = vec![BTreeMap::new()];
    let mut envs: BTreeMap<String, &str> = BTreeMap::new();
    for (k, spanned) in &matrix.0 {
        let at = src.at(spanned.span().start);
        let values: Vec<String> = match spanned.get_ref() {
            toml::Value::Array(a) => a
                .iter()
                .map(|v| value_text(k, v))
                .collect::<Result<_, _>>()
                .map_err(|e| CampaignError(format!("{at}: {}", e.0)))?,
            one => {
                return Err(CampaignError(format!(
                    "{at}: matrix key {k} has one value, not a list: write {k} = [{}]",
                    one
                )));
            }
        };
        if values.is_empty() {
            return Err(CampaignError(format!("{at}: matrix key {k} has no values")));
        }
        if let Some((v, c)) = values.iter().find_map(|v| control_char(v).map(|c| (v, c))) {
            return Err(CampaignError(format!(
                "{at}: matrix key {k}: the value {v:?} holds a control character (U+{:04X}); \
                 matrix values go into shell commands, names and tags: remove it",
                u32::from(c)
            )));
        }
        if let Some(other) = envs.insert(matrix_env(k), k) {
            return Err(CampaignError(format!(
                "{at}: matrix keys {other} and {k} would both be passed as {}: rename one",
                matrix_env(k)
            )));
        }
        let mut next = Vec::new();
        for base in &out {
            for v in &values {
                let mut m = base.clone();
                m.insert(k.clone(), v.clone());
                next.push(m);
            }
            if next.len() > MAX_CELLS {
                return Err(CampaignError(format!(
                    "the matrix makes more than {MAX_CELLS} cells: split the campaign"
                )));
            }
        }
        out = next;
    }
    Ok(out)
}

fn expand_cell(
    spec: &CellSpec,
    vars: &BTreeMap<String, String>,
    index: usize,
    src: &Source,
) -> Result<Cell, CampaignError> {
    let target_raw = spec.target.clone().ok_or_else(|| {
        CampaignError(format!(
            "cell {} has no target: add target = \"/mnt/x\" (the directory, file or device to measure)",
            index + 1
        ))
    })?;
    let target = substitute(target_raw.get_ref(), vars)?;
    if let Some(c) = control_char(&target) {
        return Err(CampaignError(format!(
            "{}: the target {target:?} holds a control character (U+{:04X}): no path has one; remove it",
            src.at(target_raw.span().start),
            u32::from(c)
        )));
    }
    // The matrix values of this cell (its name, and `matrix` in the JSON).
    let matrix: BTreeMap<String, String> = vars
        .iter()
        .filter(|(k, _)| *k != "target")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut vars = vars.clone();
    vars.insert("target".into(), target.clone());
    let sub = |s: &String| substitute(s, &vars);
    let from_matrix: Vec<String> = matrix.iter().map(|(k, v)| format!("{k}-{v}")).collect();
    let name = match &spec.name {
        Some(n) => sub(n)?,
        None if !from_matrix.is_empty() => from_matrix.join("_"),
        None => format!("cell{}", index + 1),
    };
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '/' || c == ',') {
        return Err(CampaignError(format!(
            "cell name \"{name}\" must be one word without '/' or ',' (it names the cell's log and tag)"
        )));
    }
    let mut tags = BTreeMap::new();
    for (k, v) in &spec.tags {
        tags.insert(sub(k)?, sub(v)?);
    }
    if spec.run.is_empty() {
        return Err(CampaignError(format!(
            "cell {name} runs nothing: add run = [[\"bench\", \"--profile\", \"sas\"]] or a job file"
        )));
    }
    let mut run = Vec::new();
    for words in &spec.run {
        let first = words.first().map(String::as_str).unwrap_or("");
        if !matches!(first, "bench" | "sweep") {
            return Err(CampaignError(format!(
                "cell {name}: a run must start with bench or sweep, not \"{first}\""
            )));
        }
        let uses_target = words.iter().any(|w| w.contains("{target}"));
        let mut w: Vec<String> = words.iter().map(sub).collect::<Result<_, _>>()?;
        if !uses_target {
            w.insert(1, target.clone());
        }
        run.push(w);
    }
    Ok(Cell {
        name,
        matrix,
        tags,
        setup: spec
            .setup
            .iter()
            .map(|c| substitute_shell(c.get_ref(), &vars, &src.at(c.span().start)))
            .collect::<Result<_, _>>()?,
        teardown: spec
            .teardown
            .iter()
            .map(|c| substitute_shell(c.get_ref(), &vars, &src.at(c.span().start)))
            .collect::<Result<_, _>>()?,
        target,
        run,
    })
}

impl CampaignFile {
    /// Parse TOML; errors quote the file, line and column.
    pub fn parse(text: &str, path: &Path) -> Result<CampaignFile, CampaignError> {
        let mut f: CampaignFile = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let before = &text[..s.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before
                        .rfind('\n')
                        .map_or(before.len() + 1, |i| before.len() - i);
                    format!("{}:{line}:{col}", path.display())
                })
                .unwrap_or_else(|| path.display().to_string());
            CampaignError(format!("{at}: {}", e.message()))
        })?;
        f.source = Source {
            path: path.display().to_string(),
            text: text.to_string(),
        };
        Ok(f)
    }

    /// `teardown_timeout` in seconds (the default when not given).
    fn teardown_timeout_s(&self) -> Result<u64, CampaignError> {
        let Some(t) = &self.teardown_timeout else {
            return Ok(DEFAULT_TEARDOWN_TIMEOUT_S);
        };
        let at = self.source.at(t.span().start);
        let secs = match t.get_ref() {
            toml::Value::Integer(n) => u64::try_from(*n).ok(),
            toml::Value::String(s) => storlab_types::units::parse_duration(s)
                .ok()
                .map(|d| d.as_secs()),
            _ => None,
        };
        match secs {
            Some(s) if s > 0 => Ok(s),
            _ => Err(CampaignError(format!(
                "{at}: teardown_timeout = {}: give seconds (300) or a duration (\"10m\"), more than 0",
                t.get_ref()
            ))),
        }
    }

    /// Expand the matrix and substitute every placeholder.
    pub fn expand(&self, default_name: &str) -> Result<Campaign, CampaignError> {
        let mut cells = Vec::new();
        let teardown_timeout_s = self.teardown_timeout_s()?;
        if let Some(t) = &self.template {
            for vars in product(&self.matrix, &self.source)? {
                cells.push(expand_cell(t, &vars, cells.len(), &self.source)?);
            }
        } else if !self.matrix.0.is_empty() {
            return Err(CampaignError(
                "a [matrix] needs a [template] cell to fill in".into(),
            ));
        }
        let none = BTreeMap::new();
        for c in &self.cell {
            cells.push(expand_cell(c, &none, cells.len(), &self.source)?);
        }
        if cells.is_empty() {
            return Err(CampaignError(
                "the campaign has no cells: add [[cell]] tables, or a [matrix] and a [template]"
                    .into(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in &cells {
            if !seen.insert(c.name.clone()) {
                return Err(CampaignError(format!(
                    "two cells are named {}: give the template a name with every matrix variable, e.g. name = \"{{fs}}-{{chunk}}\"",
                    c.name
                )));
            }
        }
        let baseline = match &self.baseline {
            Some(b) if seen.contains(b) => b.clone(),
            Some(b) => {
                return Err(CampaignError(format!(
                    "baseline {b} is not a cell: the cells are {}",
                    cells
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            None => cells[0].name.clone(),
        };
        Ok(Campaign {
            name: self
                .name
                .clone()
                .unwrap_or_else(|| default_name.to_string()),
            baseline,
            cells,
            teardown_timeout_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn placeholders() {
        let v = vars(&[("fs", "xfs"), ("chunk", "64k")]);
        assert_eq!(
            substitute("mkfs.{fs} -d su={chunk}", &v).unwrap(),
            "mkfs.xfs -d su=64k"
        );
        assert_eq!(
            substitute("awk '{{print $1}}'", &v).unwrap(),
            "awk '{print $1}'"
        );
        let e = substitute("mkfs.{fss}", &v).unwrap_err().0;
        assert!(e.contains("{fss}") && e.contains("{chunk}, {fs}"), "{e}");
        assert!(substitute("a {fs", &v).is_err());
        assert!(substitute("a } b", &v).is_err());
    }

    #[test]
    fn matrix_expands_to_every_combination() {
        let text = r#"
name = "t"
baseline = "ext4-256k"
[matrix]
fs = ["ext4", "xfs"]
chunk = ["64k", "256k"]
[template]
name = "{fs}-{chunk}"
tags = { fs = "{fs}", chunk = "{chunk}" }
setup = ["mkfs.{fs} /dev/x", "mount /dev/x {target}"]
teardown = ["umount {target}"]
target = "/mnt/{fs}"
run = [["bench", "--job", "j.toml"], ["sweep", "{target}", "--vary", "bs=4k,1m"]]
"#;
        let c = CampaignFile::parse(text, Path::new("c.toml"))
            .unwrap()
            .expand("x")
            .unwrap();
        assert_eq!(c.cells.len(), 4);
        let names: Vec<&str> = c.cells.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ext4-64k", "ext4-256k", "xfs-64k", "xfs-256k"]);
        assert_eq!(c.baseline, "ext4-256k");
        let x = &c.cells[3];
        assert_eq!(x.setup[0], "mkfs.\"${STORLAB_MATRIX_FS}\" /dev/x");
        assert_eq!(x.setup[1], "mount /dev/x \"${STORLAB_TARGET}\"");
        assert_eq!(x.tags["chunk"], "256k");
        assert_eq!(x.run[0], ["bench", "/mnt/xfs", "--job", "j.toml"]);
        assert_eq!(x.run[1], ["sweep", "/mnt/xfs", "--vary", "bs=4k,1m"]);
    }

    #[test]
    fn mistakes_are_named() {
        let bad = |text: &str| {
            CampaignFile::parse(text, Path::new("c.toml"))
                .and_then(|f| f.expand("x"))
                .unwrap_err()
                .0
        };
        assert!(bad("[[cell]]\ntarget = \"/t\"\n").contains("runs nothing"));
        assert!(bad("[[cell]]\nrun = [[\"bench\"]]\n").contains("no target"));
        assert!(
            bad("[[cell]]\ntarget=\"/t\"\nrun = [[\"rm\", \"-rf\"]]\n").contains("bench or sweep")
        );
        assert!(bad("[[cell]]\ntarget=\"/t\"\nsetpu = []\n").starts_with("c.toml:3:1"));
        assert!(bad("").contains("no cells"));
        assert!(
            bad("baseline=\"zz\"\n[[cell]]\ntarget=\"/t\"\nrun=[[\"bench\"]]\n")
                .contains("not a cell")
        );
        let twice = "[matrix]\nfs=[\"a\",\"b\"]\n[template]\nname=\"same\"\ntarget=\"/t\"\nrun=[[\"bench\"]]\n";
        assert!(bad(twice).contains("two cells are named same"));
        assert!(
            bad("[matrix]\nfs=[]\n[template]\ntarget=\"/t\"\nrun=[[\"bench\"]]\n")
                .contains("no values")
        );
    }

    #[test]
    fn shipped_examples_expand() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/campaigns");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let c = CampaignFile::parse(&text, &path)
                .unwrap()
                .expand("x")
                .unwrap();
            assert!(!c.cells.is_empty(), "{}", path.display());
            n += 1;
        }
        assert!(n >= 1);
    }

    fn expand(text: &str) -> Result<Campaign, CampaignError> {
        CampaignFile::parse(text, Path::new("c.toml")).and_then(|f| f.expand("x"))
    }

    /// A scalar where a list belongs was taken as a one-value list without
    /// a word; control characters (NUL, newline) in values and targets went
    /// on into shell commands and paths. Each is refused with file:line.
    #[test]
    fn scalar_matrix_values_and_control_characters_are_refused_with_file_and_line() {
        let tail = "[template]\ntarget = \"/t/{fs}\"\nrun = [[\"bench\"]]\n";
        let e = expand(&format!("[matrix]\nfs = \"ext4\"\n{tail}"))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("c.toml:2:") && e.contains("fs") && e.contains("not a list"),
            "{e}"
        );
        let e = expand(&format!(
            "[matrix]\nchunk = [\"64k\"]\nfs = [\"ext4\", \"a\\nb\"]\n{tail}"
        ))
        .unwrap_err()
        .0;
        assert!(
            e.starts_with("c.toml:3:") && e.contains("matrix key fs") && e.contains("control"),
            "{e}"
        );
        let e = expand(&format!("[matrix]\nfs = [\"a\\u0000b\"]\n{tail}"))
            .unwrap_err()
            .0;
        assert!(e.contains("U+0000"), "{e}");
        let e = expand("[[cell]]\nrun = [[\"bench\"]]\ntarget = \"/mnt/\\u0000x\"\n")
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("c.toml:3") && e.contains("target") && e.contains("U+0000"),
            "{e}"
        );
        let e = expand(&format!("[matrix]\na-b = [\"1\"]\na_b = [\"2\"]\n{tail}"))
            .unwrap_err()
            .0;
        assert!(e.contains("STORLAB_MATRIX_A_B"), "{e}");
    }

    /// In setup and teardown a placeholder is a reference to the
    /// environment variable holding the value, never the value's text (a
    /// quoted word was spliced in, and inside "..." or '...' the value ran
    /// as shell code); elsewhere the value is put in as it is.
    #[test]
    fn matrix_values_never_enter_shell_commands_only_their_variables() {
        let text = "[matrix]\nv = [\"x; touch /tmp/owned $(id) `id` 'q'\"]\n[template]\nname = \"one\"\n\
             tags = { v = \"{v}\" }\nsetup = [\"echo {v} > {target}/out\", \"echo \\\"dq {v}\\\" 'lit{{x}}' \\\\'{v}\"]\n\
             target = \"/t/{v}\"\nrun = [[\"bench\", \"--name\", \"{v}\"]]\n";
        let cell = &expand(text).unwrap().cells[0];
        let v = "x; touch /tmp/owned $(id) `id` 'q'";
        assert_eq!(
            cell.setup[0],
            "echo \"${STORLAB_MATRIX_V}\" > \"${STORLAB_TARGET}\"/out"
        );
        assert_eq!(
            cell.setup[1],
            "echo \"dq ${STORLAB_MATRIX_V}\" 'lit{x}' \\'\"${STORLAB_MATRIX_V}\""
        );
        assert_eq!(cell.tags["v"], v);
        assert_eq!(cell.target, format!("/t/{v}"));
        assert_eq!(cell.run[0], ["bench", &format!("/t/{v}"), "--name", v]);
        assert_eq!(matrix_env("fs"), "STORLAB_MATRIX_FS");
        assert_eq!(matrix_env("raid-level"), "STORLAB_MATRIX_RAID_LEVEL");
        // Inside single quotes the shell expands nothing: refused, with
        // file:line and the fix.
        for sq in ["echo 'sq {v}'", "echo \"a\" 'b {target}'", "echo $'{v}'"] {
            let text = format!(
                "[matrix]\nv = [\"a\"]\n[template]\ntarget = \"/t\"\nrun = [[\"bench\"]]\n\
                 teardown = [\"true\",\n  {sq:?}]\n"
            );
            let e = expand(&text).unwrap_err().0;
            assert!(
                e.starts_with("c.toml:7:")
                    && e.contains("single quotes")
                    && e.contains("double quotes"),
                "{sq}: {e}"
            );
        }
        let e =
            expand("[[cell]]\ntarget = \"/t\"\nrun = [[\"bench\"]]\nsetup = [\"echo {nope}\"]\n")
                .unwrap_err()
                .0;
        assert!(e.starts_with("c.toml:4:") && e.contains("{nope}"), "{e}");
    }

    #[test]
    fn teardown_timeout_takes_seconds_or_a_duration() {
        let cell = "[[cell]]\ntarget = \"/t\"\nrun = [[\"bench\"]]\n";
        assert_eq!(
            expand(cell).unwrap().teardown_timeout_s,
            DEFAULT_TEARDOWN_TIMEOUT_S
        );
        let t = |v: &str| expand(&format!("teardown_timeout = {v}\n{cell}"));
        assert_eq!(t("30").unwrap().teardown_timeout_s, 30);
        assert_eq!(t("\"10m\"").unwrap().teardown_timeout_s, 600);
        for bad in ["0", "-5", "\"soon\"", "[1]"] {
            let e = t(bad).unwrap_err().0;
            assert!(
                e.starts_with("c.toml:1") && e.contains("teardown_timeout"),
                "{bad}: {e}"
            );
        }
        // A campaign saved before the key existed gets the default.
        let old: Campaign =
            serde_json::from_str(r#"{"name": "n", "baseline": "a", "cells": []}"#).unwrap();
        assert_eq!(old.teardown_timeout_s, DEFAULT_TEARDOWN_TIMEOUT_S);
    }

    proptest! {
        #[test]
        fn substitution_never_panics(s in "\\PC{0,40}", k in "[a-z]{1,4}", v in "\\PC{0,8}") {
            let _ = substitute(&s, &vars(&[(&k, &v)]));
            let _ = substitute_shell(&s, &vars(&[(&k, &v)]), "c.toml:1");
        }

        #[test]
        fn campaign_parser_never_panics(text in "\\PC{0,200}") {
            if let Ok(f) = CampaignFile::parse(&text, Path::new("c.toml")) {
                let _ = f.expand("x");
            }
        }
    }
}
