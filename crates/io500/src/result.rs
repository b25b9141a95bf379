//! The result directory an `io500` run leaves behind, read back:
//!
//! * `result_summary.txt` (required): the version and mode, one line per
//!   phase (`[RESULT]` for scored phases, `[      ]` for the others) with its
//!   score, unit, time and `[INVALID]` mark, and the `[SCORE ]` (and, in
//!   extended mode, `[SCOREX]`) line;
//! * `result.txt` (read when present): the number of processes, and each
//!   phase's `; ERROR INVALID` reasons, so an imported run keeps io500's
//!   own words for why it is invalid.
//!
//! Formats as io500 at 02091cf writes them (`dupprintf`/`PRINT_PAIR` in
//! `main.c`).

use serde::Serialize;
use std::path::{Path, PathBuf};

/// One phase line of `result_summary.txt`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryPhase {
    pub name: String,
    /// The score in `unit` (GiB/s or kIOPS), as printed (`%f`).
    pub score: f64,
    pub unit: String,
    /// The phase's runtime in seconds, as printed (`%.3f`).
    pub time_s: f64,
    /// `[RESULT]` (counts toward the score) rather than `[      ]`.
    pub scored: bool,
    pub invalid: bool,
    /// io500's reasons from `result.txt` (`; ERROR INVALID ...`).
    pub reasons: Vec<String>,
    /// `t_start` from `result.txt` (io500's local time, no zone).
    pub started: Option<String>,
}

/// A `[SCORE ]` or `[SCOREX]` line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SummaryScore {
    pub bandwidth_gib_s: f64,
    pub md_kiops: f64,
    pub total: f64,
    pub invalid: bool,
}

/// An io500 result directory, read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultDir {
    pub dir: PathBuf,
    pub version: String,
    /// `standard` or `extended`.
    pub mode: String,
    /// MPI processes (`[run] procs` in `result.txt`), when that file is there.
    pub procs: Option<u32>,
    pub phases: Vec<SummaryPhase>,
    pub score: Option<SummaryScore>,
    pub extended_score: Option<SummaryScore>,
    /// Reasons that invalidate the whole run (`[run]` section of
    /// `result.txt`, e.g. the stonewall time).
    pub run_reasons: Vec<String>,
    /// `; START` and `; END` of `result.txt` (io500's local time, no zone).
    pub started: Option<String>,
    pub ended: Option<String>,
    /// `[global] drop-caches` of the `config.ini` io500 keeps in the
    /// directory, when it is there and readable.
    pub drop_caches: Option<bool>,
}

/// Why a result directory cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not an IO500 result directory: it has no result_summary.txt (io500 writes one at the end of every run)", dir.display())]
    NoSummary { dir: PathBuf },
    #[error("{}, line {line}: {why}: \"{text}\"", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        text: String,
        why: &'static str,
    },
    #[error("{}: the run has no [SCORE ] line; io500 did not finish, so there is no result to import", path.display())]
    Unfinished { path: PathBuf },
}

fn read(path: &Path) -> Result<String, ResultError> {
    std::fs::read_to_string(path).map_err(|source| ResultError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// `<name> <score> <unit> : time <t> seconds [INVALID]`, after the tag.
fn phase_line(rest: &str, scored: bool) -> Option<SummaryPhase> {
    let (left, right) = rest.split_once(':')?;
    let mut words = left.split_whitespace();
    let name = words.next()?.to_string();
    let score = words.next()?.parse().ok()?;
    let unit = words.next()?.to_string();
    let mut r = right.split_whitespace();
    (r.next()? == "time").then_some(())?;
    let time_s = r.next()?.parse().ok()?;
    (r.next()? == "seconds").then_some(())?;
    let invalid = match r.next() {
        None => false,
        Some("[INVALID]") => true,
        Some(_) => return None,
    };
    Some(SummaryPhase {
        name,
        score,
        unit,
        time_s,
        scored,
        invalid,
        reasons: Vec::new(),
        started: None,
    })
}

/// `Bandwidth X GiB/s : IOPS Y kiops : TOTAL Z [INVALID]`.
fn score_line(rest: &str) -> Option<SummaryScore> {
    let w: Vec<&str> = rest.split_whitespace().collect();
    match w.as_slice() {
        [
            "Bandwidth",
            bw,
            "GiB/s",
            ":",
            "IOPS",
            md,
            "kiops",
            ":",
            "TOTAL",
            total,
            tail @ ..,
        ] => Some(SummaryScore {
            bandwidth_gib_s: bw.parse().ok()?,
            md_kiops: md.parse().ok()?,
            total: total.parse().ok()?,
            invalid: match tail {
                [] => false,
                ["[INVALID]"] => true,
                _ => return None,
            },
        }),
        _ => None,
    }
}

impl ResultDir {
    /// Read the result directory `dir`.
    pub fn read(dir: &Path) -> Result<ResultDir, ResultError> {
        let path = dir.join("result_summary.txt");
        if !path.is_file() {
            return Err(ResultError::NoSummary {
                dir: dir.to_path_buf(),
            });
        }
        let mut out = Self::parse_summary(&read(&path)?, &path)?;
        out.dir = dir.to_path_buf();
        let details = dir.join("result.txt");
        if details.is_file() {
            out.add_details(&read(&details)?);
        }
        let config = dir.join("config.ini");
        if config.is_file()
            && let Ok(cfg) = crate::Config::parse(&read(&config)?)
        {
            out.drop_caches = cfg.get("global", "drop-caches").map(|v| v.starts_with('T'));
        }
        Ok(out)
    }

    /// Read `result_summary.txt`'s text (`path` names it in errors).
    pub fn parse_summary(text: &str, path: &Path) -> Result<ResultDir, ResultError> {
        let bad = |line: usize, text: &str, why| ResultError::Line {
            path: path.to_path_buf(),
            line,
            text: text.to_string(),
            why,
        };
        let mut out = ResultDir {
            dir: PathBuf::new(),
            version: String::new(),
            mode: String::new(),
            procs: None,
            phases: Vec::new(),
            score: None,
            extended_score: None,
            run_reasons: Vec::new(),
            started: None,
            ended: None,
            drop_caches: None,
        };
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if let Some(rest) = line.strip_prefix("IO500 version ") {
                let (v, mode) = rest.split_once(' ').unwrap_or((rest, ""));
                out.version = v.to_string();
                out.mode = mode.trim_matches(|c| c == '(' || c == ')').to_string();
            } else if let Some(rest) = line.strip_prefix("[RESULT]") {
                out.phases
                    .push(phase_line(rest, true).ok_or_else(|| bad(n, line, "not a phase line"))?);
            } else if let Some(rest) = line.strip_prefix("[      ]") {
                out.phases
                    .push(phase_line(rest, false).ok_or_else(|| bad(n, line, "not a phase line"))?);
            } else if let Some(rest) = line.strip_prefix("[SCORE ]") {
                out.score = Some(score_line(rest).ok_or_else(|| bad(n, line, "not a score line"))?);
            } else if let Some(rest) = line.strip_prefix("[SCOREX]") {
                out.extended_score =
                    Some(score_line(rest).ok_or_else(|| bad(n, line, "not a score line"))?);
            } else if !line.trim().is_empty() {
                return Err(bad(
                    n,
                    line,
                    "not a line io500 writes to result_summary.txt",
                ));
            }
        }
        if out.version.is_empty() {
            return Err(bad(
                1,
                text.lines().next().unwrap_or(""),
                "no \"IO500 version\" line",
            ));
        }
        if out.score.is_none() {
            return Err(ResultError::Unfinished {
                path: path.to_path_buf(),
            });
        }
        Ok(out)
    }

    /// Add what `result.txt` says beyond the summary: the process count and
    /// each phase's reasons for INVALID.
    fn add_details(&mut self, text: &str) {
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
            } else if let Some(reason) = line.strip_prefix("; ERROR INVALID ") {
                let reason = reason.trim().to_string();
                match self.phases.iter_mut().find(|p| p.name == section) {
                    Some(p) => p.reasons.push(reason),
                    None => self.run_reasons.push(reason),
                }
            } else if let Some(t) = line.strip_prefix("; START ") {
                self.started = Some(t.trim().to_string());
            } else if let Some(t) = line.strip_prefix("; END ") {
                self.ended = Some(t.trim().to_string());
            } else if let Some((k, v)) = line.split_once('=') {
                let (k, v) = (k.trim(), v.trim());
                if section == "run" && k == "procs" {
                    self.procs = v.parse().ok();
                } else if k == "t_start"
                    && let Some(p) = self.phases.iter_mut().find(|p| p.name == section)
                {
                    p.started = Some(v.to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/io500-run")
    }

    #[test]
    fn a_real_io500_result_directory_reads_back_whole() {
        let r = ResultDir::read(&fixture()).expect("the fixture is io500's own output");
        assert_eq!(r.version, "02091cf");
        assert_eq!(r.mode, "standard");
        assert_eq!(r.procs, Some(2));
        assert_eq!(r.phases.len(), 14);
        let first = &r.phases[0];
        assert_eq!(first.name, "ior-easy-write");
        assert_eq!(first.score, 0.608249);
        assert!(first.invalid && first.scored);
        assert_eq!(first.reasons.len(), 3, "{:?}", first.reasons);
        let rnd = r
            .phases
            .iter()
            .find(|p| p.name == "ior-rnd4K-easy-read")
            .expect("listed");
        assert!(!rnd.scored && !rnd.invalid);
        let score = r.score.expect("finished");
        assert!(score.invalid);
        assert_eq!(r.run_reasons, ["stonewall-time 1s != 300s"]);
        assert_eq!(r.started.as_deref(), Some("2026-11-27 06:23:28"));
        assert_eq!(r.ended.as_deref(), Some("2026-11-27 06:23:41"));
        assert_eq!(first.started.as_deref(), Some("2026-11-27 06:23:28"));
    }

    #[test]
    fn the_score_arithmetic_agrees_with_io500s_to_six_significant_digits() {
        let r = ResultDir::read(&fixture()).expect("fixture");
        let s = crate::score(r.phases.iter().map(|p| (p.name.as_str(), p.score)), false);
        let io500 = r.score.expect("finished");
        for (ours, theirs) in [
            (s.bandwidth_gib_s, io500.bandwidth_gib_s),
            (s.md_kiops, io500.md_kiops),
            (s.total, io500.total),
        ] {
            // io500 prints %f: 6 decimals; the inputs are rounded the same way.
            assert!(
                ((ours - theirs) / theirs).abs() < 5e-6,
                "{ours} vs {theirs}"
            );
        }
    }

    #[test]
    fn a_directory_without_a_summary_or_with_a_cut_summary_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = ResultDir::read(dir.path()).expect_err("empty dir");
        assert!(e.to_string().contains("no result_summary.txt"), "{e}");
        let cut = "IO500 version 02091cf (standard)\n[RESULT]       ior-easy-write        0.608249 GiB/s : time 0.292 seconds\n";
        let e = ResultDir::parse_summary(cut, Path::new("x")).expect_err("no score");
        assert!(e.to_string().contains("did not finish"), "{e}");
        let garbage = "IO500 version 02091cf (standard)\n[RESULT] ior-easy-write fast\n";
        let e = ResultDir::parse_summary(garbage, Path::new("x")).expect_err("bad line");
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
