//! What a fio job file reads besides its own text: the environment
//! (`${VAR}`), fio's keywords (`$pagesize`, `$mb_memory`, `$ncpus`), the
//! files it includes (`include FILE`) and, for `randrepeat=0`, a fresh
//! seed. [`JobSource`] hides them so tests give fixed ones; [`System`] is
//! the real machine.
//!
//! The expansion rules are fio's (`options.c`: `fio_option_dup_subs`, then
//! `fio_keyword_replace` and `bc_calc`), applied to the value right of `=`:
//!
//! * `${NAME}` is replaced by the environment variable NAME. fio puts the
//!   empty string in place of an unset variable; storlab refuses it, naming
//!   it (a size or target silently empty is a different workload). A
//!   variable set to the empty string expands to the empty string, as in fio.
//! * `$pagesize` (the page size in bytes), `$mb_memory` (the machine's
//!   memory in MiB) and `$ncpus` (the CPUs configured,
//!   `sysconf(_SC_NPROCESSORS_CONF)`, fio's `cpus_configured`) are
//!   replaced by their values, after the environment (so a variable may hold
//!   a keyword); when one was replaced and the value holds `+ - * /`, it is
//!   computed as fio's `bc` does (whole numbers; `size=8*$mb_memory`).
//! * Any other `$` is refused: fio expands only `${NAME}`, so `$NAME` would
//!   reach fio unexpanded; the message says to write `${NAME}`.

use std::path::{Path, PathBuf};

/// The outside world a job file may read.
pub trait JobSource {
    /// The environment variable `name`, if set.
    fn var(&self, name: &str) -> Option<String>;
    /// The value of one of fio's keywords.
    fn keyword(&self, kw: Keyword) -> u64;
    /// The text of an included file.
    fn read(&self, path: &Path) -> std::io::Result<String>;
    /// Whether `path` names an existing file (fio tries an include's name
    /// as given, from the current directory, before the including file's
    /// directory).
    fn exists(&self, path: &Path) -> bool;
    /// One name per file, to find include cycles (`a` and `./a` are one).
    fn identity(&self, path: &Path) -> PathBuf;
    /// A seed for `randrepeat=0` (fio: a fresh random sequence each run),
    /// below 2^63 (job files and the store hold seeds as signed integers).
    fn fresh_seed(&self) -> u64;
}

/// fio's reserved keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    /// `$pagesize`
    PageSize,
    /// `$mb_memory`
    MbMemory,
    /// `$ncpus`
    Ncpus,
}

/// Every keyword with its spelling, in fio's order.
const KEYWORDS: [(&str, Keyword); 3] = [
    ("$pagesize", Keyword::PageSize),
    ("$mb_memory", Keyword::MbMemory),
    ("$ncpus", Keyword::Ncpus),
];

/// The largest file `include` reads: options, not data (a device or
/// `/dev/zero` named by mistake is refused, not read forever).
const MAX_INCLUDE_BYTES: u64 = 1 << 20;

/// This machine: the process environment, `sysconf`, the file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct System;

/// The CPUs configured, as glibc's `sysconf(_SC_NPROCESSORS_CONF)` counts
/// them (the `cpuN` directories of sysfs), else the CPUs this process may use.
fn cpus_configured() -> u64 {
    let from_sysfs = std::fs::read_dir("/sys/devices/system/cpu").map(|d| {
        d.filter_map(Result::ok)
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.strip_prefix("cpu")
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            })
            .count()
    });
    match from_sysfs {
        Ok(n) if n > 0 => n as u64,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
    }
}

impl JobSource for System {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
    fn keyword(&self, kw: Keyword) -> u64 {
        match kw {
            Keyword::PageSize => storlab_host::os::page_size(),
            // fio: _SC_PHYS_PAGES x the page size, which is MemTotal.
            Keyword::MbMemory => storlab_host::meminfo("MemTotal").unwrap_or(0) >> 20,
            Keyword::Ncpus => cpus_configured(),
        }
    }
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_file() || meta.len() > MAX_INCLUDE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "not a job file (an include must be a regular file of at most {} KiB)",
                    MAX_INCLUDE_BYTES >> 10
                ),
            ));
        }
        std::fs::read_to_string(path)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn identity(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }
    fn fresh_seed(&self) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        // RandomState's keys come from the operating system's randomness.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.finish() >> 1
    }
}

/// `value` with `${NAME}` and fio's keywords expanded (see the module
/// documentation); the error says what is wrong and what to write.
pub fn expand(value: &str, src: &dyn JobSource) -> Result<String, String> {
    // Pass 1: the environment.
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let inner = &rest[i + 2..];
        let Some(end) = inner.find('}') else {
            return Err("'${' has no closing '}': write ${NAME}".into());
        };
        let name = &inner[..end];
        if name.is_empty() {
            return Err("'${}' names no variable: write ${NAME}".into());
        }
        match src.var(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!(
                    "${{{name}}} is not set in the environment (fio would put an empty value \
                     here): export {name}=VALUE before running, or write the value itself"
                ));
            }
        }
        rest = &inner[end + 1..];
    }
    out.push_str(rest);
    // Pass 2: fio's keywords.
    let mut done = String::with_capacity(out.len());
    let mut rest = out.as_str();
    let mut calc = false;
    while let Some(i) = rest.find('$') {
        done.push_str(&rest[..i]);
        let at = &rest[i..];
        if let Some((word, kw)) = KEYWORDS.iter().find(|(w, _)| at.starts_with(w)) {
            done.push_str(&src.keyword(*kw).to_string());
            calc = true;
            rest = &at[word.len()..];
            continue;
        }
        let name: String = at[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        return Err(if name.is_empty() {
            "a '$' that starts no variable: fio expands ${NAME} and $pagesize, $mb_memory, $ncpus"
                .into()
        } else {
            format!(
                "${name}: fio expands only ${{NAME}} from the environment (and its keywords \
                 $pagesize, $mb_memory, $ncpus): write ${{{name}}}"
            )
        });
    }
    done.push_str(rest);
    if calc && done.contains(['+', '-', '*', '/']) {
        let v = arithmetic(&done).map_err(|e| format!("'{done}': {e}"))?;
        return Ok(v.to_string());
    }
    Ok(done)
}

/// Whole-number arithmetic as fio's `bc` call does it: `+ - * /` with the
/// usual precedence, parentheses, division truncating.
fn arithmetic(s: &str) -> Result<u64, String> {
    let toks: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser { toks, at: 0 };
    let v = p.sum(0)?;
    if p.at != p.toks.len() {
        return Err(format!(
            "only whole numbers with + - * / and parentheses can be computed (at '{}')",
            p.toks[p.at..].iter().collect::<String>()
        ));
    }
    u64::try_from(v).map_err(|_| "the result is negative".to_string())
}

struct Parser {
    toks: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.toks.get(self.at).copied()
    }
    fn sum(&mut self, depth: u32) -> Result<i128, String> {
        let mut v = self.product(depth)?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product(depth)?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("too large")?;
        }
        Ok(v)
    }
    fn product(&mut self, depth: u32) -> Result<i128, String> {
        let mut v = self.atom(depth)?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            let r = self.atom(depth)?;
            v = if op == '*' {
                v.checked_mul(r).ok_or("too large")?
            } else if r == 0 {
                return Err("division by zero".into());
            } else {
                v.checked_div(r).ok_or("too large")?
            };
        }
        Ok(v)
    }
    fn atom(&mut self, depth: u32) -> Result<i128, String> {
        if depth > 32 {
            return Err("too many parentheses".into());
        }
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let v = self.sum(depth + 1)?;
                if self.peek() != Some(')') {
                    return Err("a '(' has no ')'".into());
                }
                self.at += 1;
                Ok(v)
            }
            Some('-') => {
                self.at += 1;
                Ok(self.atom(depth + 1)?.checked_neg().ok_or("too large")?)
            }
            _ => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                let digits: String = self.toks[start..self.at].iter().collect();
                if digits.is_empty() {
                    return Err("a number is missing".into());
                }
                digits.parse().map_err(|_| "too large".to_string())
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A fixed world for tests: variables, files, keywords and seed.
    #[derive(Default)]
    pub(crate) struct Fake {
        pub vars: BTreeMap<String, String>,
        pub files: BTreeMap<PathBuf, String>,
        pub seed: u64,
    }

    impl JobSource for Fake {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn keyword(&self, kw: Keyword) -> u64 {
            match kw {
                Keyword::PageSize => 4096,
                Keyword::MbMemory => 2048,
                Keyword::Ncpus => 8,
            }
        }
        fn read(&self, path: &Path) -> std::io::Result<String> {
            self.files
                .get(&self.identity(path))
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
        fn exists(&self, path: &Path) -> bool {
            self.files.contains_key(&self.identity(path))
        }
        fn identity(&self, path: &Path) -> PathBuf {
            // `./a` and `a` are one file.
            path.components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect()
        }
        fn fresh_seed(&self) -> u64 {
            self.seed
        }
    }

    pub(crate) fn fake(vars: &[(&str, &str)]) -> Fake {
        Fake {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Fake::default()
        }
    }

    #[test]
    fn variables_and_keywords_expand_as_fio_documents() {
        let f = fake(&[("SIZE", "64m"), ("EMPTY", ""), ("KW", "$ncpus")]);
        assert_eq!(expand("${SIZE}", &f).unwrap(), "64m");
        assert_eq!(expand("a${SIZE}b${SIZE}", &f).unwrap(), "a64mb64m");
        assert_eq!(
            expand("x${EMPTY}y", &f).unwrap(),
            "xy",
            "set but empty: empty"
        );
        assert_eq!(expand("$pagesize", &f).unwrap(), "4096");
        assert_eq!(expand("8*$mb_memory", &f).unwrap(), "16384", "fio's bc");
        assert_eq!(expand("($ncpus+1)/2", &f).unwrap(), "4");
        assert_eq!(
            expand("${KW}", &f).unwrap(),
            "8",
            "keywords after variables"
        );
        assert_eq!(
            expand("4k-64k", &f).unwrap(),
            "4k-64k",
            "no keyword: no math"
        );
        let e = expand("${NOPE}", &f).unwrap_err();
        assert!(
            e.contains("${NOPE} is not set") && e.contains("export NOPE="),
            "{e}"
        );
        let e = expand("$SIZE", &f).unwrap_err();
        assert!(e.contains("write ${SIZE}"), "{e}");
        assert!(expand("${SIZE", &f).unwrap_err().contains("closing"));
        assert!(expand("${}", &f).unwrap_err().contains("no variable"));
        assert!(expand("$ncpus/0", &f).unwrap_err().contains("division"));
        assert!(expand("$ncpus-9", &f).unwrap_err().contains("negative"));
        let min = "-(-170141183460469231731687303715884105727-1)+$ncpus";
        assert!(expand(min, &f).unwrap_err().contains("too large"));
        let div = "(-170141183460469231731687303715884105727-1)/-1+$ncpus";
        assert!(expand(div, &f).unwrap_err().contains("too large"));
        assert!(
            expand("$ncpusk*2", &f)
                .unwrap_err()
                .contains("whole numbers")
        );
    }

    proptest::proptest! {
        /// Any arithmetic fio's bc would be handed, with numbers up to
        /// 40 digits: a value or an error, never a panic (overflow).
        #[test]
        fn arithmetic_never_panics(e in "[-+*/()]{0,3}([0-9]{1,40}[-+*/()]{1,3}){0,6}") {
            let f = fake(&[]);
            let _ = expand(&format!("{e}$ncpus"), &f);
            let _ = expand(&format!("$ncpus{e}"), &f);
        }
    }

    #[test]
    fn only_regular_files_are_included() {
        let e = System.read(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        assert!(System.read(dir.path()).is_err());
        let big = dir.path().join("big.inc");
        std::fs::write(&big, vec![b'a'; (MAX_INCLUDE_BYTES + 1) as usize]).unwrap();
        assert!(System.read(&big).is_err());
        let ok = dir.path().join("ok.inc");
        std::fs::write(&ok, "bs=4k\n").unwrap();
        assert_eq!(System.read(&ok).unwrap(), "bs=4k\n");
    }
}
