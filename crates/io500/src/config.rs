//! IO500's `config.ini`, read with io500's own rules (`src/ini-parse.c` at
//! 02091cf), so a file io500 accepts is accepted here and a file it refuses
//! is refused with the same reason, plus the line and what to write:
//!
//! * `[section]` names one of io500's phases (case does not matter);
//! * `key = value` names one of that section's options; a value stops at
//!   the first `#` or `;`, trailing blanks are dropped, and an empty value
//!   leaves the option at its default;
//! * integers, non-negative integers, booleans (`true`/`false`/`1`/`0`, any
//!   case) and floats are checked by type;
//! * blank lines and lines starting with `#` or `;` are comments; anything
//!   else is an error.
//!
//! The option table below was generated from the `option[]` arrays of
//! io500's `src/phase_*.c`, in io500's phase order.

use crate::validity::Reason;
use std::collections::BTreeMap;

/// An option's value type (`INI_*` in io500).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    UInt,
    Bool,
    Float,
}

/// One option of a section, with io500's default.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    pub default: Option<&'static str>,
}

/// A section of `config.ini`: one of io500's phases.
#[derive(Debug, Clone, Copy)]
pub struct Section {
    pub name: &'static str,
    pub options: &'static [Opt],
}

pub const SECTIONS: &[Section] = &[
    Section {
        name: "global",
        options: &[
            Opt {
                name: "datadir",
                kind: Kind::Str,
                default: Some("./datafiles"),
            },
            Opt {
                name: "timestamp-datadir",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "resultdir",
                kind: Kind::Str,
                default: Some("./results"),
            },
            Opt {
                name: "timestamp-resultdir",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "api",
                kind: Kind::Str,
                default: Some("POSIX"),
            },
            Opt {
                name: "drop-caches",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "drop-caches-cmd",
                kind: Kind::Str,
                default: Some("sudo -n bash -c \"echo 3 > /proc/sys/vm/drop_caches\""),
            },
            Opt {
                name: "io-buffers-on-gpu",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "verbosity",
                kind: Kind::UInt,
                default: Some("1"),
            },
            Opt {
                name: "scc",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "dataPacketType",
                kind: Kind::Str,
                default: Some("timestamp"),
            },
        ],
    },
    Section {
        name: "debug",
        options: &[
            Opt {
                name: "stonewall-time",
                kind: Kind::Int,
                default: Some("300"),
            },
            Opt {
                name: "pause-dir",
                kind: Kind::Str,
                default: None,
            },
        ],
    },
    Section {
        name: "ior-easy",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "transferSize",
                kind: Kind::Str,
                default: Some("2m"),
            },
            Opt {
                name: "blockSize",
                kind: Kind::Str,
                default: Some("9920000m"),
            },
            Opt {
                name: "filePerProc",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "uniqueDir",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "verbosity",
                kind: Kind::Int,
                default: None,
            },
        ],
    },
    Section {
        name: "ior-easy-write",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-easy",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "n",
                kind: Kind::UInt,
                default: Some("1000000"),
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-easy-write",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdworkbench",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "waitingTime",
                kind: Kind::Float,
                default: Some("0.0"),
            },
            Opt {
                name: "precreatePerSet",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "filesPerProc",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "verbosity",
                kind: Kind::Int,
                default: None,
            },
        ],
    },
    Section {
        name: "mdworkbench-create",
        options: &[Opt {
            name: "run",
            kind: Kind::Bool,
            default: Some("TRUE"),
        }],
    },
    Section {
        name: "timestamp",
        options: &[],
    },
    Section {
        name: "find-easy",
        options: &[
            Opt {
                name: "external-script",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "external-mpi-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "external-extra-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "nproc",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "pfind-queue-length",
                kind: Kind::Int,
                default: Some("10000"),
            },
            Opt {
                name: "pfind-steal-next",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "pfind-parallelize-single-dir-access-using-hashing",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
        ],
    },
    Section {
        name: "ior-hard",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "segmentCount",
                kind: Kind::Int,
                default: Some("10000000"),
            },
            Opt {
                name: "collective",
                kind: Kind::Bool,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "verbosity",
                kind: Kind::Int,
                default: None,
            },
        ],
    },
    Section {
        name: "ior-hard-write",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "collective",
                kind: Kind::Bool,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-hard",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "n",
                kind: Kind::UInt,
                default: Some("1000000"),
            },
            Opt {
                name: "files-per-dir",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-hard-write",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "find",
        options: &[
            Opt {
                name: "external-script",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "external-mpi-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "external-extra-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "nproc",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "pfind-queue-length",
                kind: Kind::Int,
                default: Some("10000"),
            },
            Opt {
                name: "pfind-steal-next",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "pfind-parallelize-single-dir-access-using-hashing",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
        ],
    },
    Section {
        name: "find-hard",
        options: &[
            Opt {
                name: "external-script",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "external-mpi-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "external-extra-args",
                kind: Kind::Str,
                default: Some(""),
            },
            Opt {
                name: "nproc",
                kind: Kind::UInt,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
            Opt {
                name: "pfind-queue-length",
                kind: Kind::Int,
                default: Some("10000"),
            },
            Opt {
                name: "pfind-steal-next",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
            Opt {
                name: "pfind-parallelize-single-dir-access-using-hashing",
                kind: Kind::Bool,
                default: Some("FALSE"),
            },
        ],
    },
    Section {
        name: "mdworkbench-bench",
        options: &[Opt {
            name: "run",
            kind: Kind::Bool,
            default: Some("TRUE"),
        }],
    },
    Section {
        name: "ior-easy-read",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-easy-stat",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "ior-hard-read",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "collective",
                kind: Kind::Bool,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-hard-stat",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdworkbench-delete",
        options: &[Opt {
            name: "run",
            kind: Kind::Bool,
            default: Some("TRUE"),
        }],
    },
    Section {
        name: "mdtest-easy-delete",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-hard-read",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "mdtest-hard-delete",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
    Section {
        name: "ior-rnd4K-easy-read",
        options: &[
            Opt {
                name: "API",
                kind: Kind::Str,
                default: None,
            },
            Opt {
                name: "run",
                kind: Kind::Bool,
                default: Some("TRUE"),
            },
        ],
    },
];

/// Why a `config.ini` cannot be read (io500's wording, with the line and
/// the fix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("line {line}: unknown section [{name}]; IO500's sections are {known}")]
    UnknownSection {
        line: usize,
        name: String,
        known: String,
    },
    #[error(
        "line {line}: \"{name}\" is set outside a section; put it under [global] or a phase's [section]"
    )]
    OutsideSection { line: usize, name: String },
    #[error(
        "section [{section}] line {line}: unknown option \"{name}\" with value \"{value}\"; [{section}] takes {known}"
    )]
    UnknownOption {
        section: String,
        line: usize,
        name: String,
        value: String,
        known: String,
    },
    #[error(
        "section [{section}] line {line}: option {name} expects {expects}, received \"{value}\""
    )]
    BadValue {
        section: String,
        line: usize,
        name: String,
        value: String,
        expects: &'static str,
    },
    #[error(
        "line {line}: unexpected content \"{text}\"; a line is `[section]`, `key = value` or a comment starting with # or ;"
    )]
    Unexpected { line: usize, text: String },
}

/// A read `config.ini`: the values set in it, by section and option
/// (canonical names, io500's spelling); everything else has io500's
/// default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    set: BTreeMap<(&'static str, &'static str), String>,
}

fn section(name: &str) -> Option<&'static Section> {
    SECTIONS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

fn is_name_char(c: char, extra: &str) -> bool {
    c.is_ascii_alphanumeric() || extra.contains(c)
}

/// `[name]` with an optional trailing comment, io500's section pattern.
fn section_line(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('[')?;
    let close = rest.find(']')?;
    let name = rest[..close].trim();
    let tail = &rest[close + 1..];
    let tail_ok = tail.trim().is_empty() || {
        let t = tail.trim_start();
        tail.len() > t.len() && (t.starts_with('#') || t.starts_with(';'))
    };
    (!name.is_empty() && name.chars().all(|c| is_name_char(c, "_-")) && tail_ok).then_some(name)
}

/// `key = value`, the value cut at the first `#` or `;` and trimmed.
fn option_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| is_name_char(c, "_.-")) {
        return None;
    }
    let value = value.split(['#', ';']).next().unwrap_or("").trim();
    Some((key, value))
}

fn checked(kind: Kind, value: &str) -> Result<String, &'static str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match kind {
        Kind::Str => Ok(value.to_string()),
        Kind::Int if digits(value.strip_prefix('-').unwrap_or(value)) => Ok(value.to_string()),
        Kind::Int => Err("integer"),
        Kind::UInt if digits(value) => Ok(value.to_string()),
        Kind::UInt => Err("integer >= 0"),
        Kind::Bool if value.eq_ignore_ascii_case("true") || value == "1" => Ok("TRUE".into()),
        Kind::Bool if value.eq_ignore_ascii_case("false") || value == "0" => Ok("FALSE".into()),
        Kind::Bool => Err("bool (true|false)"),
        Kind::Float
            if !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"e.+-".contains(&b))
                && value.parse::<f64>().is_ok() =>
        {
            Ok(value.to_string())
        }
        Kind::Float => Err("float"),
    }
}

fn names<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

impl Config {
    /// Read a `config.ini`'s text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let mut cfg = Config::default();
        let mut current: Option<&'static Section> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
                continue;
            }
            if let Some(name) = section_line(raw) {
                current = Some(section(name).ok_or_else(|| ConfigError::UnknownSection {
                    line,
                    name: name.to_string(),
                    known: names(SECTIONS.iter().map(|s| s.name)),
                })?);
                continue;
            }
            let Some((key, value)) = option_line(raw) else {
                return Err(ConfigError::Unexpected {
                    line,
                    text: trimmed.to_string(),
                });
            };
            if value.is_empty() {
                continue;
            }
            let Some(sec) = current else {
                return Err(ConfigError::OutsideSection {
                    line,
                    name: key.to_string(),
                });
            };
            let Some(opt) = sec
                .options
                .iter()
                .find(|o| o.name.eq_ignore_ascii_case(key))
            else {
                return Err(ConfigError::UnknownOption {
                    section: sec.name.to_string(),
                    line,
                    name: key.to_string(),
                    value: value.to_string(),
                    known: names(sec.options.iter().map(|o| o.name)),
                });
            };
            let v = checked(opt.kind, value).map_err(|expects| ConfigError::BadValue {
                section: sec.name.to_string(),
                line,
                name: opt.name.to_string(),
                value: value.to_string(),
                expects,
            })?;
            cfg.set.insert((sec.name, opt.name), v);
        }
        Ok(cfg)
    }

    /// The value of `option` in `section`: as set, else io500's default.
    /// `None` for an option that is unset and has no default, or a name
    /// io500 does not know.
    pub fn get(&self, section_name: &str, option: &str) -> Option<&str> {
        let sec = section(section_name)?;
        let opt = sec
            .options
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(option))?;
        self.set
            .get(&(sec.name, opt.name))
            .map(String::as_str)
            .or(opt.default)
    }

    /// Whether `option` was set in the file (not defaulted).
    pub fn is_set(&self, section_name: &str, option: &str) -> bool {
        section(section_name)
            .and_then(|s| {
                s.options
                    .iter()
                    .find(|o| o.name.eq_ignore_ascii_case(option))
                    .map(|o| (s.name, o.name))
            })
            .is_some_and(|k| self.set.contains_key(&k))
    }

    fn flag(&self, section_name: &str, option: &str) -> bool {
        self.get(section_name, option)
            .is_some_and(|v| v.starts_with('T'))
    }

    fn number(&self, section_name: &str, option: &str) -> Option<u64> {
        self.get(section_name, option).and_then(|v| v.parse().ok())
    }

    /// `[debug] stonewall-time`, seconds.
    pub fn stonewall_seconds(&self) -> u64 {
        self.number("debug", "stonewall-time")
            .unwrap_or(crate::phases::fixed::STONEWALL_SECONDS)
    }

    /// The minimum write-phase runtime of the rules: 300 s, or 30 s under
    /// `[global] scc`.
    pub fn minimum_seconds(&self) -> u64 {
        if self.flag("global", "scc") {
            crate::phases::fixed::SCC_STONEWALL_SECONDS
        } else {
            crate::phases::fixed::STONEWALL_SECONDS
        }
    }

    /// Whether a phase runs (`run = TRUE`, io500's default): its own
    /// section and, as io500 checks both (`d.run == 0 || o.run == 0`), the
    /// section of the workload it belongs to (`[ior-hard] run = FALSE`
    /// skips ior-hard-write and ior-hard-read; ior-rnd4K-easy-read belongs
    /// to ior-easy).
    pub fn runs(&self, phase: &str) -> bool {
        let own = |s: &str| self.get(s, "run").is_none_or(|v| v.starts_with('T'));
        let parent = if phase == "ior-rnd4K-easy-read" {
            Some("ior-easy")
        } else {
            ["ior-easy", "ior-hard", "mdtest-easy", "mdtest-hard"]
                .into_iter()
                .find(|w| phase.strip_prefix(w).is_some_and(|r| r.starts_with('-')))
        };
        own(phase) && parent.is_none_or(own)
    }

    /// `[mdtest-easy] n` / `[mdtest-hard] n`: files per process.
    pub fn files_per_proc(&self, phase: &str) -> Option<u64> {
        self.number(phase, "n")
    }

    /// `[ior-hard] segmentCount`.
    pub fn ior_hard_segments(&self) -> Option<u64> {
        self.number("ior-hard", "segmentCount")
    }

    /// `[ior-easy] transferSize` and `blockSize` in bytes (IOR's size
    /// syntax: a number with an optional k, m, g, t suffix, powers of 1024).
    pub fn ior_easy_sizes(&self) -> Option<(u64, u64)> {
        Some((
            ior_size(self.get("ior-easy", "transferSize")?)?,
            ior_size(self.get("ior-easy", "blockSize")?)?,
        ))
    }

    /// The settings that make every run with this file INVALID (io500's
    /// `validate` functions).
    pub fn invalid_reasons(&self) -> Vec<Reason> {
        let mut out = Vec::new();
        let (configured, required) = (self.stonewall_seconds(), self.minimum_seconds());
        if configured != required {
            out.push(Reason::StonewallTime {
                configured,
                required,
            });
        }
        if self.get("debug", "pause-dir").is_some() {
            out.push(Reason::PauseDir);
        }
        if self.get("mdtest-hard", "files-per-dir").is_some() {
            out.push(Reason::FilesPerDir);
        }
        out
    }
}

/// IOR's size syntax (`string-to-bytes` in IOR's `utilities.c`): digits
/// with an optional `k`, `m`, `g`, `t` or `p` suffix (either case), powers
/// of 1024.
pub fn ior_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1u64 << 10),
        'm' | 'M' => (&t[..t.len() - 1], 1 << 20),
        'g' | 'G' => (&t[..t.len() - 1], 1 << 30),
        't' | 'T' => (&t[..t.len() - 1], 1 << 40),
        'p' | 'P' => (&t[..t.len() - 1], 1 << 50),
        _ => (t, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests;
