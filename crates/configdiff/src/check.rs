//! `storlab check`: is a run worse than its baseline by more than a tolerance?
//!
//! Phases are paired by the rule `storlab compare` uses too
//! ([`crate::match_phases`]: same name and shape, else the only
//! phase of that shape, else the only one with the same jobs, depth and
//! cache mode). Every pair's configurations are then compared
//! ([`crate::differences`]: workload parameters, host, target,
//! device, tool version). When they differ in anything the user did not
//! name with `--vary`, the figures are not judged: the outcome is
//! [`CheckStatus::ConfigDiffers`] with the differences named, unless the
//! user allowed it (`--allow-config-diff`).
//!
//! For each direction the baseline did I/O in, four figures are compared:
//! bandwidth and IOPS (higher is better), p50 and p99 latency (lower is better).
//! A figure fails when it is worse than the baseline's by more than the
//! tolerance, in percent of the baseline's value. A baseline phase missing
//! from the run, a phase cut short, or a run that did not finish fail too:
//! a nightly check must not pass because the run broke.

use crate::{Difference, Judgement, MatchedBy, Vary, match_phases};
use serde::Serialize;
use storlab_types::{
    DirStats, Metric, PhaseResult, StoredRun, format_bytes, format_latency_ns as format_ns,
    format_rate,
};

/// What `check` compares, in order.
const CHECKED: [Metric; 4] = [
    Metric::Throughput,
    Metric::Iops,
    Metric::LatP50,
    Metric::LatP99,
];

/// A metric as the failure reasons name it.
fn metric_label(m: Metric) -> &'static str {
    match m {
        Metric::Throughput => "bandwidth",
        Metric::Iops => "IOPS",
        Metric::LatMean => "mean latency",
        Metric::LatP50 => "p50 latency",
        Metric::LatP99 => "p99 latency",
    }
}

/// A value with its unit, as the failure reasons print it.
fn format_value(m: Metric, v: f64) -> String {
    match m {
        Metric::Throughput => format_rate(v),
        Metric::Iops => format!("{v:.0}"),
        Metric::LatMean | Metric::LatP50 | Metric::LatP99 => format_ns(v),
    }
}

/// `check`'s JSON names bandwidth `bandwidth` (compare's `throughput`):
/// kept, so existing scripts read the same document.
fn check_metric_name<S: serde::Serializer>(m: &Metric, s: S) -> Result<S::Ok, S::Error> {
    match m {
        Metric::Throughput => s.serialize_str("bandwidth"),
        other => other.serialize(s),
    }
}

/// One compared figure (values in bytes/s, I/O per s or ns).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The phase as labelled in reasons: `'randread' (randread, 4 KiB)`.
    pub phase: String,
    /// `read` or `write`.
    pub direction: &'static str,
    #[serde(serialize_with = "check_metric_name")]
    pub metric: Metric,
    pub value: f64,
    pub baseline: f64,
    /// How much worse than the baseline, percent of the baseline (negative: better).
    pub worse_pct: f64,
    pub failed: bool,
}

/// Why a check fails. `Display` words it (one line) and the JSON carries
/// the same sentence.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckFailure {
    /// A baseline phase has no partner in the run.
    PhaseMissing {
        phase: String,
        baseline_run: i64,
        run: i64,
    },
    /// A phase was interrupted.
    CutShort { phase: String },
    /// The run stopped early.
    RunIncomplete { run: i64, reason: String },
    /// A baseline group has no partner in the run's phase.
    GroupMissing { phase: String, group: String },
    /// The baseline moved data in a direction the run did not.
    NoIo {
        phase: String,
        direction: &'static str,
        baseline_ops: u64,
    },
    /// A figure is worse than the baseline's by more than the tolerance.
    Worse {
        phase: String,
        direction: &'static str,
        metric: Metric,
        value: f64,
        baseline: f64,
        worse_pct: f64,
        tolerance_pct: f64,
    },
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckFailure::PhaseMissing {
                phase,
                baseline_run,
                run,
            } => write!(
                f,
                "phase {phase} of baseline run {baseline_run} is missing from run {run}"
            ),
            CheckFailure::CutShort { phase } => write!(
                f,
                "phase {phase} was cut short; its figures cover only part of the work"
            ),
            CheckFailure::RunIncomplete { run, reason } => {
                write!(f, "run {run} did not complete: {reason}")
            }
            CheckFailure::GroupMissing { phase, group } => write!(
                f,
                "phase {phase}: group '{group}' of the baseline has no partner in the run"
            ),
            CheckFailure::NoIo {
                phase,
                direction,
                baseline_ops,
            } => write!(
                f,
                "phase {phase}: no {direction}s completed, the baseline did {baseline_ops}"
            ),
            CheckFailure::Worse {
                phase,
                direction,
                metric,
                value,
                baseline,
                worse_pct,
                tolerance_pct,
            } => {
                let dir_word = if metric.higher_is_better() {
                    "below"
                } else {
                    "above"
                };
                write!(
                    f,
                    "phase {phase}: {direction} {} {} is {worse_pct:.1}% {dir_word} the baseline's {} (tolerance {tolerance_pct}%)",
                    metric_label(*metric),
                    format_value(*metric, *value),
                    format_value(*metric, *baseline),
                )
            }
        }
    }
}

impl Serialize for CheckFailure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Something a check says beside its findings; `Display` words it, and the
/// JSON carries the same sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckNote {
    /// A phase was paired with a baseline phase of another name.
    #[error("phase {phase} compared with baseline phase {baseline_phase} ({})", .by.note().unwrap_or("by name"))]
    MatchedBy {
        phase: String,
        baseline_phase: String,
        by: MatchedBy,
    },
    /// A phase of the run has no baseline partner.
    #[error("phase {phase} has no partner in baseline run {baseline_run}: not checked")]
    NoPartner { phase: String, baseline_run: i64 },
}

impl Serialize for CheckNote {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The outcome of checking one run against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub run_id: i64,
    pub baseline_id: i64,
    pub tolerance_pct: f64,
    pub findings: Vec<Finding>,
    /// Why the check fails, one entry per reason (`Display` words it).
    pub failures: Vec<CheckFailure>,
    /// What was not compared, and how phases were matched when not by name.
    pub notes: Vec<CheckNote>,
    /// Each phase pair whose configurations differ, and how.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigDiff>,
    /// Whether configurations differ in something not under study (`--vary`)
    /// and the user did not allow it: the figures were not judged.
    pub config_differs: bool,
}

/// How one phase pair's configurations differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigDiff {
    pub phase: String,
    pub baseline_phase: String,
    /// Differences in parameters named with `--vary`.
    pub under_study: Vec<Difference>,
    /// Every other difference.
    pub other: Vec<Difference>,
}

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    /// Worse than the tolerance allows, or a phase is missing or cut short.
    Failed,
    /// The configurations differ: no verdict (exit 2 in the CLI).
    ConfigDiffers,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.status() == CheckStatus::Passed
    }

    pub fn status(&self) -> CheckStatus {
        if self.config_differs {
            CheckStatus::ConfigDiffers
        } else if self.failures.is_empty() {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        }
    }

    /// The `--vary` keys that would make the differences the subject of the
    /// check, in first-seen order.
    pub fn blocking_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for c in &self.config {
            for d in &c.other {
                if !keys.contains(&d.key) {
                    keys.push(d.key.clone());
                }
            }
        }
        keys
    }
}

impl CheckStatus {
    /// The worse of two outcomes: a configuration difference outranks a
    /// failure, which outranks a pass.
    pub fn worst(self, other: CheckStatus) -> CheckStatus {
        match (self, other) {
            (CheckStatus::ConfigDiffers, _) | (_, CheckStatus::ConfigDiffers) => {
                CheckStatus::ConfigDiffers
            }
            (CheckStatus::Failed, _) | (_, CheckStatus::Failed) => CheckStatus::Failed,
            _ => CheckStatus::Passed,
        }
    }
}

/// Every run's check against one baseline, as `storlab check` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSummary {
    /// The tolerance in percent of the baseline.
    pub tolerance: f64,
    pub reports: Vec<CheckReport>,
}

/// The exit code of a check: 0 passed, 1 failed, 2 the configurations
/// differ.
impl From<CheckStatus> for storlab_types::outcome::Outcome {
    fn from(s: CheckStatus) -> Self {
        match s {
            CheckStatus::Passed => Self::Ok,
            CheckStatus::Failed => Self::Failed,
            CheckStatus::ConfigDiffers => Self::Error,
        }
    }
}

impl CheckSummary {
    /// The worst outcome of all the checks (passed when there are none).
    pub fn worst(&self) -> CheckStatus {
        self.reports
            .iter()
            .fold(CheckStatus::Passed, |w, r| w.worst(r.status()))
    }

    /// The text result: each run's verdict, failures, differences and notes.
    pub fn text(&self) -> String {
        self.reports
            .iter()
            .map(|r| r.text(self.tolerance))
            .collect()
    }

    /// The JSON document: the overall verdict and every check.
    pub fn json(&self) -> serde_json::Value {
        let worst = self.worst();
        serde_json::json!({
            "passed": worst == CheckStatus::Passed,
            "status": worst,
            "checks": self.reports,
        })
    }
}

impl CheckReport {
    /// The text result of this run's check at `tolerance` percent.
    pub fn text(&self, tolerance: f64) -> String {
        let (id, base_id) = (self.run_id, self.baseline_id);
        let mut out = String::new();
        let compared = self.findings.len();
        match self.status() {
            CheckStatus::Passed => {
                out += &format!(
                    "ok: run {id} is within {tolerance}% of baseline run {base_id} ({compared} figures compared)\n"
                );
            }
            CheckStatus::Failed => {
                out += &format!(
                    "FAILED: run {id} vs baseline run {base_id}, tolerance {tolerance}%: {} problem{}\n",
                    self.failures.len(),
                    if self.failures.len() == 1 { "" } else { "s" }
                );
            }
            CheckStatus::ConfigDiffers => {
                let keys = self.blocking_keys();
                out += &format!(
                    "CONFIGURATION DIFFERS: run {id} vs baseline run {base_id}: {}; the figures are not \
                     judged. If that is what you are studying, say so with --vary {}; to judge them \
                     anyway, --allow-config-diff\n",
                    keys.join(", "),
                    keys.join(",")
                );
            }
        }
        for f in &self.failures {
            out += &format!("  {f}\n");
        }
        for c in &self.config {
            let mut parts: Vec<String> = c
                .under_study
                .iter()
                .map(|d| format!("{} [under study]", d.describe()))
                .collect();
            parts.extend(c.other.iter().map(|d| d.describe()));
            out += &format!(
                "  differs: phase {} vs baseline {}: {}\n",
                c.phase,
                c.baseline_phase,
                parts.join(", ")
            );
        }
        for n in &self.notes {
            out += &format!("  note: {n}\n");
        }
        out
    }
}

/// What the user declared about configuration differences.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Parameters under study (`--vary iodepth`): a difference there is
    /// what the check is about.
    pub vary: Vary,
    /// Judge the figures even when other parameters differ
    /// (`--allow-config-diff`); the differences are still listed.
    pub allow_config_diff: bool,
}

/// Why nothing could be checked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    #[error(
        "run {run} and baseline run {baseline} have no phase in common (phases match by name, \
         I/O pattern and block size): nothing to check; choose a baseline that ran the same \
         workload, or name the parameter under study (e.g. --vary bs)"
    )]
    NothingInCommon { run: i64, baseline: i64 },
    #[error("invalid tolerance {0}%: give a percentage from 0 to 100, e.g. --tolerance 10%")]
    BadTolerance(f64),
    /// A parameter under study that the runs cannot be compared along.
    #[error(transparent)]
    Vary(#[from] crate::VaryError),
}

/// `storlab check`: each of `runs` against `baseline`, with what the
/// pair's sweep tags imply is under study added to `vary` (`note` is told
/// which run it was implied for), each checked as [`check_with`] does.
pub fn check_each(
    runs: &[StoredRun],
    baseline: &StoredRun,
    tolerance: f64,
    (vary, allow_config_diff): (&[Vary], bool),
    mut note: impl FnMut(i64, crate::implied::Implied),
) -> Result<CheckSummary, CheckError> {
    let mut reports = Vec::new();
    for run in runs {
        let (vary, implied) = crate::implied::vary_with_implied(vary, [run, baseline]);
        if let Some(n) = implied {
            note(run.id, n);
        }
        vary.check_against([run, baseline])?;
        let opts = CheckOptions {
            vary,
            allow_config_diff,
        };
        reports.push(check_with(run, baseline, tolerance, &opts)?);
    }
    Ok(CheckSummary { tolerance, reports })
}

fn label(p: &PhaseResult) -> String {
    let bs: Vec<String> = p
        .params
        .bs
        .iter()
        .map(|b| format_bytes(b.bs_bytes))
        .collect();
    format!("'{}' ({}, {})", p.params.name, p.params.rw, bs.join("+"))
}

/// Check `run` against `baseline` with a tolerance in percent, with no
/// parameter under study and configuration differences not allowed.
pub fn check(
    run: &StoredRun,
    baseline: &StoredRun,
    tolerance_pct: f64,
) -> Result<CheckReport, CheckError> {
    check_with(run, baseline, tolerance_pct, &CheckOptions::default())
}

/// Check `run` against `baseline` (see the module docs).
pub fn check_with(
    run: &StoredRun,
    baseline: &StoredRun,
    tolerance_pct: f64,
    opts: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    if !(0.0..=100.0).contains(&tolerance_pct) {
        return Err(CheckError::BadTolerance(tolerance_pct));
    }
    let mut out = CheckReport {
        run_id: run.id,
        baseline_id: baseline.id,
        tolerance_pct,
        findings: vec![],
        failures: vec![],
        notes: vec![],
        config: vec![],
        config_differs: false,
    };
    let phases = &run.report.phases;
    let base_phases = &baseline.report.phases;
    let m = match_phases(phases, base_phases, &opts.vary);
    for &bi in &m.unmatched_baseline {
        out.failures.push(CheckFailure::PhaseMissing {
            phase: label(&base_phases[bi]),
            baseline_run: baseline.id,
            run: run.id,
        });
    }
    for pair in &m.pairs {
        let (p, bp) = (&phases[pair.phase], &base_phases[pair.baseline_phase]);
        if pair.by.note().is_some() {
            out.notes.push(CheckNote::MatchedBy {
                phase: label(p),
                baseline_phase: label(bp),
                by: pair.by,
            });
        }
        if p.interrupted {
            out.failures
                .push(CheckFailure::CutShort { phase: label(p) });
        }
        let j = Judgement::new(
            crate::differences(&run.report, p, &baseline.report, bp),
            &opts.vary,
        );
        let blocked = !j.comparable() && !opts.allow_config_diff;
        if j.all().next().is_some() {
            out.config.push(ConfigDiff {
                phase: label(p),
                baseline_phase: label(bp),
                under_study: j.under_study.clone(),
                other: j.other.clone(),
            });
        }
        out.config_differs |= blocked;
        compare_phase(p, bp, tolerance_pct, !blocked, &mut out);
        compare_groups(p, bp, tolerance_pct, !blocked, &opts.vary, &mut out);
    }
    for &i in &m.unmatched {
        out.notes.push(CheckNote::NoPartner {
            phase: label(&phases[i]),
            baseline_run: baseline.id,
        });
    }
    crate::io500_score::check(run, baseline, tolerance_pct, !out.config_differs, &mut out);
    if m.pairs.is_empty() {
        return Err(CheckError::NothingInCommon {
            run: run.id,
            baseline: baseline.id,
        });
    }
    if run.report.interrupted {
        out.failures.push(CheckFailure::RunIncomplete {
            run: run.id,
            reason: run
                .report
                .stop_reason
                .as_deref()
                .unwrap_or("stopped early")
                .to_string(),
        });
    }
    Ok(out)
}

/// Compare the figures of a pair; with `judge` false (the configurations
/// differ) they are recorded but never fail.
fn compare_phase(p: &PhaseResult, bp: &PhaseResult, tol: f64, judge: bool, out: &mut CheckReport) {
    let dirs = [("read", &p.read, &bp.read), ("write", &p.write, &bp.write)];
    compare_dirs(&label(p), dirs, tol, judge, out);
}

/// A phase of job groups: each baseline group against its partner in the
/// run (by name and shape), over each group's own window. A baseline group
/// missing from the run fails, as a missing phase does.
fn compare_groups(
    p: &PhaseResult,
    bp: &PhaseResult,
    tol: f64,
    judge: bool,
    vary: &Vary,
    out: &mut CheckReport,
) {
    let Some(bgroups) = &bp.groups else {
        return;
    };
    let groups = p.groups.as_ref().map_or(&[][..], |g| g.groups.as_slice());
    let params = |gs: &[storlab_types::GroupResult]| -> Vec<storlab_types::PhaseParams> {
        gs.iter().map(|g| g.params.clone()).collect()
    };
    let m = crate::match_groups(&params(groups), &params(&bgroups.groups), vary);
    for &bi in &m.unmatched_baseline {
        if judge {
            out.failures.push(CheckFailure::GroupMissing {
                phase: label(p),
                group: bgroups.groups[bi].name.clone(),
            });
        }
    }
    for pair in &m.pairs {
        let (g, bg) = (&groups[pair.phase], &bgroups.groups[pair.baseline_phase]);
        let name = format!("{} group '{}'", label(p), bg.name);
        let dirs = [("read", &g.read, &bg.read), ("write", &g.write, &bg.write)];
        compare_dirs(&name, dirs, tol, judge, out);
    }
}

/// Compare each direction's figures of one pair of phases or groups.
fn compare_dirs(
    phase: &str,
    dirs: [(&'static str, &DirStats, &DirStats); 2],
    tol: f64,
    judge: bool,
    out: &mut CheckReport,
) {
    let phase = phase.to_string();
    for (direction, d, bd) in dirs {
        if bd.ops == 0 {
            continue;
        }
        if d.ops == 0 {
            if judge {
                out.failures.push(CheckFailure::NoIo {
                    phase: phase.clone(),
                    direction,
                    baseline_ops: bd.ops,
                });
            }
            continue;
        }
        for metric in CHECKED {
            let (Some(v), Some(b)) = (metric.value(d), metric.value(bd)) else {
                continue;
            };
            if b <= 0.0 || !b.is_finite() || !v.is_finite() {
                continue;
            }
            let worse_pct = if metric.higher_is_better() {
                (b - v) / b * 100.0
            } else {
                (v - b) / b * 100.0
            };
            // A hair of slack so that "exactly at the tolerance" passes
            // despite floating point.
            let failed = judge && worse_pct > tol + 1e-9;
            if failed {
                out.failures.push(CheckFailure::Worse {
                    phase: phase.clone(),
                    direction,
                    metric,
                    value: v,
                    baseline: b,
                    worse_pct,
                    tolerance_pct: tol,
                });
            }
            out.findings.push(Finding {
                phase: phase.clone(),
                direction,
                metric,
                value: v,
                baseline: b,
                worse_pct,
                failed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store_testdata::{phase, report};
    use proptest::prelude::*;
    use storlab_types::RwMode;

    /// A check exits 0 when it passed, 1 when a figure is worse, 2 when no
    /// verdict is possible.
    #[test]
    fn a_checks_status_is_its_exit_code() {
        use storlab_types::outcome::Outcome;
        assert_eq!(Outcome::from(CheckStatus::Passed).exit_code(), 0);
        assert_eq!(Outcome::from(CheckStatus::Failed).exit_code(), 1);
        assert_eq!(Outcome::from(CheckStatus::ConfigDiffers).exit_code(), 2);
    }

    /// One `Metric` for check and compare; check's JSON keeps its own
    /// names (`bandwidth`, `lat_p50`), as before the merge.
    #[test]
    fn check_json_keeps_its_metric_names() {
        let names: Vec<String> = CHECKED
            .iter()
            .map(|&metric| {
                let f = Finding {
                    phase: "p".into(),
                    direction: "read",
                    metric,
                    value: 1.0,
                    baseline: 1.0,
                    worse_pct: 0.0,
                    failed: false,
                };
                serde_json::to_value(&f).unwrap()["metric"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["bandwidth", "iops", "lat_p50", "lat_p99"]);
    }

    fn failure_texts(c: &CheckReport) -> Vec<String> {
        c.failures.iter().map(ToString::to_string).collect()
    }

    fn run(id: i64, phases: Vec<PhaseResult>) -> StoredRun {
        StoredRun {
            id,
            kind: "bench".into(),
            tags: Default::default(),
            note: None,
            report: report("2026-11-21T08:00:00Z", "n", "/t", phases),
        }
    }

    fn base() -> StoredRun {
        run(
            1,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 500e6, 2_000_000),
                phase("randread", RwMode::RandRead, 4096, 40e6, 400_000),
            ],
        )
    }

    /// `check` over several runs: one report each, in order; a run whose
    /// sweep tags (with the baseline's) imply a parameter under study is
    /// named in a note, the other is not.
    #[test]
    fn check_each_checks_every_run_with_what_its_sweep_implies() {
        let mut plain = base();
        plain.id = 3;
        let mut swept = base();
        swept.id = 2;
        let sweep = [("sweep", "s1"), ("sweep_params", "bs=4k")];
        for (k, v) in sweep {
            swept.tags.insert(k.into(), v.into());
        }
        let mut b = base();
        b.tags = swept.tags.clone();
        b.tags.insert("sweep_params".into(), "bs=64k".into());
        let mut notes = Vec::new();
        let runs = [swept, plain];
        let s = check_each(&runs, &b, 10.0, (&[], false), |id, n| {
            notes.push((id, n.to_string()))
        })
        .unwrap();
        assert_eq!(s.reports.len(), 2);
        assert_eq!(s.tolerance, 10.0);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].0, 2);
        assert!(notes[0].1.contains("bs"), "{notes:?}");
    }

    /// A phase of a reader group and a writer group, with these MB/s.
    fn grouped(read_mb: f64, write_mb: f64, writer: &str) -> PhaseResult {
        use storlab_types::{GroupResult, PhaseGroups};
        let r = phase("dd-read", RwMode::Read, 1 << 20, read_mb * 1e6, 900_000);
        let w = phase(writer, RwMode::Write, 1 << 20, write_mb * 1e6, 800_000);
        let mut p = phase(
            "dd",
            RwMode::Read,
            1 << 20,
            (read_mb + write_mb) * 1e6,
            900_000,
        );
        p.params.groups = vec![r.params.clone(), w.params.clone()];
        let member = |x: &PhaseResult, first| GroupResult {
            name: x.params.name.clone(),
            first_job: first,
            params: x.params.clone(),
            read: x.read,
            write: x.write,
            total: x.total,
            ..Default::default()
        };
        p.groups = Some(PhaseGroups {
            reporting: Vec::new(),
            overlap: 1.0,
            all_moving_ns: 1,
            groups: vec![member(&r, 0), member(&w, 1)],
        });
        p
    }

    /// A group slower than its baseline partner fails even when the phase's
    /// aggregate does not (the readers took the writers' share).
    #[test]
    fn groups_are_checked_pair_by_pair() {
        let b = run(1, vec![grouped(300.0, 200.0, "dd-write")]);
        let same = check(&run(2, vec![grouped(300.0, 200.0, "dd-write")]), &b, 10.0).unwrap();
        assert!(same.passed(), "{:?}", same.failures);
        assert!(
            same.findings
                .iter()
                .any(|f| f.phase.contains("group 'dd-write'"))
        );
        let r = run(2, vec![grouped(400.0, 100.0, "dd-write")]);
        let c = check(&r, &b, 10.0).unwrap();
        assert!(!c.passed());
        assert!(
            failure_texts(&c)
                .iter()
                .any(|f| f.contains("group 'dd-write'")
                    && f.contains("write bandwidth 100.0 MB/s is 50.0% below")),
            "{:#?}",
            c.failures
        );
        // Paired by shape when renamed (a note-free pair, same figures).
        let renamed = check(&run(2, vec![grouped(300.0, 200.0, "backup")]), &b, 10.0).unwrap();
        assert!(
            renamed
                .findings
                .iter()
                .any(|f| f.phase.contains("group 'dd-write'"))
        );
        assert!(renamed.passed(), "{:?}", renamed.failures);
        // A group's own parameter that differs is named, and blocks a verdict.
        let mut deeper = grouped(300.0, 200.0, "dd-write");
        deeper.params.groups[1].iodepth = 8;
        if let Some(g) = &mut deeper.groups {
            g.groups[1].params.iodepth = 8;
        }
        let c = check(&run(2, vec![deeper]), &b, 10.0).unwrap();
        assert!(c.config_differs);
        assert!(
            c.config
                .iter()
                .any(|c| c.other.iter().any(|d| d.key == "group.dd-write.iodepth")),
            "{:#?}",
            c.config
        );
        // A baseline group missing from the run fails (when comparable).
        let mut missing = grouped(300.0, 200.0, "dd-write");
        if let Some(g) = &mut missing.groups {
            g.groups.pop();
        }
        missing.params.groups.pop();
        let c = check_with(
            &run(2, vec![missing]),
            &b,
            10.0,
            &CheckOptions {
                allow_config_diff: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            failure_texts(&c)
                .iter()
                .any(|f| f.contains("group 'dd-write' of the baseline has no partner")),
            "{:#?}",
            c.failures
        );
    }

    #[test]
    fn identical_runs_pass() {
        let b = base();
        let r = check(&run(2, b.report.phases.clone()), &b, 10.0).unwrap();
        assert!(r.passed(), "{:?}", r.failures);
        assert_eq!(r.findings.len(), 8);
        assert!(r.findings.iter().all(|f| f.worse_pct == 0.0));
    }

    #[test]
    fn a_slower_phase_fails_with_one_line_per_figure() {
        let b = base();
        // randread: 20 % less bandwidth (so 20 % fewer IOPS) and p99 up 50 %.
        let r = run(
            2,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 495e6, 2_000_000),
                phase("randread", RwMode::RandRead, 4096, 32e6, 600_000),
            ],
        );
        let c = check(&r, &b, 10.0).unwrap();
        assert!(!c.passed());
        assert_eq!(c.failures.len(), 4, "{:#?}", c.failures);
        // The JSON carries each failure as the sentence it prints as.
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json["failures"],
            serde_json::Value::from(failure_texts(&c)),
            "{json}"
        );
        assert!(c.failures[0].to_string().contains("'randread' (randread, 4 KiB): read bandwidth 32.0 MB/s is 20.0% below the baseline's 40.0 MB/s (tolerance 10%)"), "{}", c.failures[0]);
        assert!(
            failure_texts(&c)
                .iter()
                .any(|f| f.contains("p99 latency 600.0 µs is 50.0% above the baseline's 400.0 µs")),
            "{:#?}",
            c.failures
        );
        // The same run passes with a looser tolerance.
        assert!(check(&r, &b, 60.0).unwrap().passed());
    }

    #[test]
    fn faster_is_never_a_failure() {
        let b = base();
        let r = run(
            2,
            vec![
                phase("seqwrite", RwMode::Write, 1 << 20, 900e6, 1_000_000),
                phase("randread", RwMode::RandRead, 4096, 80e6, 100_000),
            ],
        );
        let c = check(&r, &b, 0.0).unwrap();
        assert!(c.passed(), "{:?}", c.failures);
        assert!(c.findings.iter().all(|f| f.worse_pct < 0.0));
    }

    #[test]
    fn missing_cut_short_and_unfinished_fail() {
        let b = base();
        let mut p = phase("seqwrite", RwMode::Write, 1 << 20, 500e6, 2_000_000);
        p.interrupted = true;
        let mut r = run(2, vec![p]);
        r.report.interrupted = true;
        r.report.stop_reason = Some("Ctrl-C".into());
        let c = check(&r, &b, 10.0).unwrap();
        assert!(
            failure_texts(&c)
                .iter()
                .any(|f| f.contains("'randread'") && f.contains("missing from run 2"))
        );
        assert!(failure_texts(&c).iter().any(|f| f.contains("cut short")));
        assert!(
            failure_texts(&c)
                .iter()
                .any(|f| f.contains("did not complete: Ctrl-C"))
        );
    }

    #[test]
    fn phases_match_by_shape_when_names_differ_and_nothing_in_common_is_an_error() {
        let b = base();
        let r = run(
            2,
            vec![phase("job1", RwMode::RandRead, 4096, 40e6, 400_000)],
        );
        let c = check(&r, &b, 10.0).unwrap();
        assert!(c.notes.iter().any(|n| {
            let n = n.to_string();
            n.contains("'job1'") && n.contains("'randread'")
        }));
        let json = serde_json::to_value(&c).unwrap();
        assert!(
            json["notes"][0]
                .as_str()
                .is_some_and(|n| n.starts_with("phase 'job1'") && n.contains("same I/O pattern")),
            "{json}"
        );
        assert_eq!(
            c.failures.len(),
            1,
            "only seqwrite is missing: {:?}",
            c.failures
        );
        let other = run(3, vec![phase("x", RwMode::Read, 8192, 1e6, 1)]);
        assert_eq!(
            check(&other, &b, 10.0).unwrap_err(),
            CheckError::NothingInCommon {
                run: 3,
                baseline: 1
            }
        );
        assert!(check(&r, &b, 120.0).is_err());
    }

    #[test]
    fn a_different_queue_depth_is_a_config_difference_not_a_regression() {
        let b = run(
            1,
            vec![phase("randread", RwMode::RandRead, 4096, 40e6, 400_000)],
        );
        let mut p = phase("randread", RwMode::RandRead, 4096, 8.6e6, 100_000);
        p.params.iodepth = 1;
        let r = run(2, vec![p]);
        let c = check(&r, &b, 10.0).unwrap();
        assert_eq!(c.status(), CheckStatus::ConfigDiffers);
        assert!(c.failures.is_empty(), "not judged: {:?}", c.failures);
        assert_eq!(c.blocking_keys(), vec!["iodepth".to_string()]);
        assert_eq!(c.config[0].other[0].describe(), "iodepth 1 (base 4)");
        // The depth under study: judged, and 78.5 % below is a failure.
        let opts = CheckOptions {
            vary: Vary::parse("qd").unwrap(),
            ..Default::default()
        };
        let c = check_with(&r, &b, 10.0, &opts).unwrap();
        assert_eq!(c.status(), CheckStatus::Failed);
        assert_eq!(c.config[0].under_study.len(), 1);
        assert!(c.config[0].other.is_empty());
        // Allowed: judged too, differences still listed.
        let opts = CheckOptions {
            allow_config_diff: true,
            ..Default::default()
        };
        let c = check_with(&r, &b, 10.0, &opts).unwrap();
        assert_eq!(c.status(), CheckStatus::Failed);
        assert_eq!(c.config[0].other.len(), 1);
    }

    #[test]
    fn another_host_or_block_size_is_never_silently_compared() {
        let b = base();
        let mut r = run(2, b.report.phases.clone());
        r.report.host.hostname = "other".into();
        let c = check(&r, &b, 10.0).unwrap();
        assert_eq!(c.status(), CheckStatus::ConfigDiffers);
        assert!(c.config.iter().all(|d| d.other[0].key == "host"));
        // A 1 MiB phase never stands in for a 4 KiB one.
        let r = run(
            3,
            vec![phase("randread", RwMode::RandRead, 1 << 20, 40e6, 1)],
        );
        assert!(check(&r, &b, 10.0).is_err());
        let opts = CheckOptions {
            vary: Vary::parse("bs").unwrap(),
            ..Default::default()
        };
        let c = check_with(&r, &b, 10.0, &opts).unwrap();
        assert_eq!(c.config[0].under_study[0].key, "bs");
    }

    proptest! {
        #[test]
        fn fails_exactly_when_worse_than_tolerance(
            base_bw in 1e6f64..1e10, ratio in 0.1f64..2.0, tol in 0.0f64..50.0
        ) {
            let b = run(1, vec![phase("p", RwMode::Read, 4096, base_bw, 1000)]);
            let r = run(2, vec![phase("p", RwMode::Read, 4096, base_bw * ratio, 1000)]);
            let c = check(&r, &b, tol).unwrap();
            let worse = (1.0 - ratio) * 100.0;
            // bandwidth and IOPS move together here; latency is unchanged.
            if worse > tol + 1e-6 {
                prop_assert!(!c.passed());
            } else if worse < tol - 1e-6 {
                prop_assert!(c.passed(), "{:?}", c.failures);
            }
        }
    }
}
