//! Comparison against a baseline run: each run's figures, phase by phase,
//! relative to the baseline's ("+112 %"), with differences that lie within
//! the measured spread marked as noise rather than wins or losses.
//!
//! # The noise rule
//!
//! A change counts as better or worse only when its size exceeds the
//! *spread* of that figure, chosen in this order:
//!
//! 1. **Replicates.** Phases whose configuration is identical to the
//!    baseline's phase or to the compared phase (same tags, host, target path
//!    and phase parameters apart from name and seed), across all the runs
//!    given, are repeated measurements. When either side has two or more, the
//!    spread is the larger of the two sides' `(max − min) / min` of the figure:
//!    the largest change seen between two runs of one configuration, so two
//!    replicates never count as a win over each other.
//! 2. **Jobs.** Otherwise, when a phase ran two or more jobs, the
//!    coefficient of variation (stddev / mean) of the per-job figures is a
//!    within-run spread; the larger of the two phases' is used, but never less
//!    than the default below (a single run cannot show run-to-run variation,
//!    so it must not look *more* certain than the default).
//! 3. **Default.** Otherwise [`DEFAULT_NOISE_PCT`] (5 %).
//!
//! `|change| <= spread` is [`Verdict::Noise`]. For throughput and IOPS higher
//! is better; for latency lower is better.
//!
//! # Configurations first
//!
//! Phases are paired by the rule `storlab check` uses too
//! ([`storlab_configdiff::match_phases`]), and every way the pair's
//! configurations differ is listed (workload parameters, host, target,
//! device, tool version). A change is called better, worse or noise only
//! when nothing differs but the parameters the user put under study
//! ([`compare_with`] and `--vary`); otherwise the verdict is
//! [`Verdict::ConfigDiffers`] and the differences are named.

use crate::fmt::{format_change, format_iops, format_ns, mb_per_s};
use crate::rows::Direction;
use serde::Serialize;
use std::collections::HashMap;
use storlab_configdiff::{Judgement, Vary, match_groups, match_phases};
use storlab_types::{DirStats, GroupResult, Metric, PhaseResult, RwMode, StoredRun};

/// Spread assumed when nothing better was measured, in percent.
pub const DEFAULT_NOISE_PCT: f64 = 5.0;

/// The figures a comparison shows, in column order.
pub const COMPARED: [Metric; 4] = [
    Metric::Throughput,
    Metric::Iops,
    Metric::LatMean,
    Metric::LatP99,
];

/// How a comparison words a [`Metric`]: its column heading and its value
/// with a unit.
pub trait MetricWords {
    /// The column heading: `MB/s`, `IOPS`, `lat mean`, `lat p99`.
    fn name(self) -> &'static str;
    /// The value for people, with its unit.
    fn format(self, v: f64) -> String;
}

impl MetricWords for Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "MB/s",
            Metric::Iops => "IOPS",
            Metric::LatMean => "lat mean",
            Metric::LatP50 => "lat p50",
            Metric::LatP99 => "lat p99",
        }
    }

    fn format(self, v: f64) -> String {
        match self {
            Metric::Throughput => format!("{} MB/s", mb_per_s(v)),
            Metric::Iops => format_iops(v),
            Metric::LatMean | Metric::LatP50 | Metric::LatP99 => format_ns(v),
        }
    }
}

/// Where a spread came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SpreadSource {
    /// `(max − min) / min` over this many runs of the same configuration.
    Replicates { runs: usize },
    /// Coefficient of variation between this many jobs of one run.
    Jobs { jobs: usize },
    /// [`DEFAULT_NOISE_PCT`]: nothing better was measured.
    Default,
}

/// The size a change must exceed to count, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub pct: f64,
    pub source: SpreadSource,
}

impl Spread {
    /// `5 % (default)`, `3.1 % (3 runs)`, `7.2 % (4 jobs)`.
    pub fn describe(&self) -> String {
        let what = match self.source {
            SpreadSource::Replicates { runs } => format!("{runs} runs"),
            SpreadSource::Jobs { jobs } => format!("{jobs} jobs"),
            SpreadSource::Default => "default".to_string(),
        };
        let pct = if self.pct >= 10.0 {
            format!("{:.0} %", self.pct)
        } else {
            format!("{:.1} %", self.pct)
        };
        format!("{pct} ({what})")
    }
}

/// What a change means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// This row is the baseline itself.
    Baseline,
    Better,
    Worse,
    /// Within the spread: neither a win nor a loss.
    Noise,
    /// No figure to compare (no I/O in one of the two, or a zero baseline).
    NotComparable,
    /// The configurations differ in something not under study: the change
    /// is shown but not judged.
    ConfigDiffers,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Baseline => "baseline",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "noise",
            Verdict::NotComparable => "n/a",
            Verdict::ConfigDiffers => "configuration differs",
        }
    }
}

/// One figure of one row against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub metric: Metric,
    pub baseline: Option<f64>,
    pub value: Option<f64>,
    /// `(value − baseline) / baseline × 100`; `None` when not comparable.
    pub change_pct: Option<f64>,
    pub spread: Spread,
    pub verdict: Verdict,
}

impl Change {
    /// `+112 % better`, `-1.8 % noise`, `baseline`, `n/a`.
    pub fn describe(&self) -> String {
        match (self.verdict, self.change_pct) {
            (Verdict::Baseline, _) => "baseline".into(),
            (v, Some(c)) => format!("{} {}", format_change(c), v.as_str()),
            (_, None) => "n/a".into(),
        }
    }
}

/// One run × phase × direction against the matching baseline phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub run_id: i64,
    pub run_label: String,
    pub is_baseline: bool,
    pub phase: String,
    pub rw: RwMode,
    pub direction: Direction,
    /// Name of the baseline phase it was matched with.
    pub baseline_phase: String,
    /// Everything that differs from the baseline phase, for people:
    /// `iodepth 1 (base 32)`, `kernel 6.5 (base 6.1)`, a parameter under
    /// study marked `[under study]`, and a cut-short phase.
    pub differs: Vec<String>,
    /// The same differences, structured and split by `--vary`.
    pub config: Judgement,
    pub changes: Vec<Change>,
}

impl CompareRow {
    pub fn change(&self, m: Metric) -> Option<&Change> {
        self.changes.iter().find(|c| c.metric == m)
    }
}

/// Result of [`compare`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub baseline_id: i64,
    pub baseline_label: String,
    /// Grouped by baseline phase (in the baseline's order) and direction;
    /// in each group the baseline row comes first, then the runs in the order
    /// given.
    pub rows: Vec<CompareRow>,
    /// Phases that had no counterpart in the baseline, one sentence each.
    pub unmatched: Vec<String>,
    /// The parameters under study (`--vary`).
    pub vary: Vec<String>,
}

impl Comparison {
    /// Keys of the differences that kept a verdict from being given, in
    /// first-seen order (for a `--vary` hint).
    pub fn blocking_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for r in &self.rows {
            for k in r.config.blocking_keys() {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys
    }
}

#[derive(Clone, Copy)]
struct PhaseRef<'a> {
    run: &'a StoredRun,
    phase: &'a PhaseResult,
}

/// Phases whose configuration is identical (same labels, host, target and
/// phase parameters, ignoring the phase name and the random seed) share a
/// key; [`Replicates`] groups the phases given by it.
fn config_key(r: PhaseRef<'_>) -> String {
    let mut params = r.phase.params.clone();
    params.name.clear();
    params.seed = 0;
    // Serialising plain data cannot fail; an empty key would only merge
    // nothing with nothing.
    serde_json::to_string(&(
        &r.run.tags,
        &r.run.report.host.hostname,
        &r.run.report.target.path,
        &params,
    ))
    .unwrap_or_default()
}

/// Every phase given, grouped by [`config_key`].
struct Replicates<'a> {
    groups: HashMap<String, Vec<PhaseRef<'a>>>,
}

impl<'a> Replicates<'a> {
    fn new(all: &[PhaseRef<'a>]) -> Self {
        let mut groups: HashMap<String, Vec<PhaseRef<'a>>> = HashMap::new();
        for r in all {
            groups.entry(config_key(*r)).or_default().push(*r);
        }
        Replicates { groups }
    }

    /// `(max − min) / min` in percent of the figure over the phases with
    /// the configuration of `of`, and how many there are; `None` below two.
    fn spread(&self, of: PhaseRef<'_>, dir: Direction, m: Metric) -> Option<(f64, usize)> {
        let values: Vec<f64> = self
            .groups
            .get(&config_key(of))?
            .iter()
            .filter_map(|r| m.value(dir.stats(r.phase)))
            .collect();
        if values.len() < 2 {
            return None;
        }
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if min <= 0.0 {
            return None;
        }
        Some(((max - min) / min * 100.0, values.len()))
    }
}

fn job_cv(phase: &PhaseResult, dir: Direction, m: Metric) -> Option<(f64, usize)> {
    let values: Vec<f64> = phase
        .jobs
        .iter()
        .filter_map(|j| dir.job_stats(j))
        .filter_map(|s| m.value(s))
        .collect();
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((var.sqrt() / mean * 100.0, values.len()))
}

fn spread_for(
    reps: &Replicates<'_>,
    base: PhaseRef<'_>,
    run: PhaseRef<'_>,
    dir: Direction,
    m: Metric,
) -> Spread {
    let reps = [reps.spread(base, dir, m), reps.spread(run, dir, m)];
    if let Some((pct, runs)) = reps
        .iter()
        .flatten()
        .copied()
        .max_by(|a, b| a.0.total_cmp(&b.0))
    {
        return Spread {
            pct,
            source: SpreadSource::Replicates { runs },
        };
    }
    let jobs = [job_cv(base.phase, dir, m), job_cv(run.phase, dir, m)];
    let widest = jobs
        .iter()
        .flatten()
        .copied()
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((pct, n)) = widest.filter(|(pct, _)| *pct > DEFAULT_NOISE_PCT) {
        return Spread {
            pct,
            source: SpreadSource::Jobs { jobs: n },
        };
    }
    Spread {
        pct: DEFAULT_NOISE_PCT,
        source: SpreadSource::Default,
    }
}

/// Everything that differs between a phase and its baseline phase, for
/// people, and whether either was cut short (its figures cover only part
/// of the work).
fn differences(phase: &PhaseResult, base: &PhaseResult, j: &Judgement) -> Vec<String> {
    let mut d = Vec::new();
    if phase.interrupted {
        d.push("interrupted (partial figures)".to_string());
    }
    if base.interrupted {
        d.push("baseline interrupted (partial figures)".to_string());
    }
    d.extend(
        j.under_study
            .iter()
            .map(|x| format!("{} [under study]", x.describe())),
    );
    d.extend(j.other.iter().map(|x| x.describe()));
    d
}

/// [`compare_with`] with no parameter under study: a change is judged only
/// between phases whose configurations match.
pub fn compare(runs: &[StoredRun], baseline: &StoredRun) -> Comparison {
    compare_with(runs, baseline, &Vary::default())
}

/// Compare every run's phases with the baseline's (see the module docs for
/// matching, configurations and the noise rule). The baseline may or may
/// not be among `runs`; it is listed once, first in each group. Runs given
/// twice are listed once.
pub fn compare_with(runs: &[StoredRun], baseline: &StoredRun, vary: &Vary) -> Comparison {
    // Every phase of every run given, for the replicate rule.
    let mut all_runs: Vec<&StoredRun> = vec![baseline];
    for r in runs {
        if !all_runs.iter().any(|x| x.id == r.id) {
            all_runs.push(r);
        }
    }
    let all: Vec<PhaseRef<'_>> = all_runs
        .iter()
        .flat_map(|run| {
            run.report
                .phases
                .iter()
                .map(move |phase| PhaseRef { run, phase })
        })
        .collect();
    let reps = Replicates::new(&all);
    let labels = crate::fmt::run_labels_of(&all_runs);

    // (baseline phase index, 0 or 1 + baseline group index, direction,
    // run order, phase index) → row
    let mut keyed: Vec<(RowKey, CompareRow)> = Vec::new();
    let mut unmatched = Vec::new();
    for (order, run) in all_runs.iter().enumerate() {
        let is_baseline = order == 0;
        let m = match_phases(&run.report.phases, &baseline.report.phases, vary);
        for &i in &m.unmatched {
            let phase = &run.report.phases[i];
            unmatched.push(format!(
                "run #{} phase '{}' ({}, {}): the baseline (#{}) has no phase of that name and \
                 shape, and no single phase with that I/O pattern and block size{}",
                run.id,
                phase.params.name,
                phase.params.rw,
                phase.params.bs_human(),
                baseline.id,
                if vary.is_empty() {
                    " (name the parameter under study, e.g. --vary bs, to pair different ones)"
                } else {
                    ""
                }
            ));
        }
        for pair in &m.pairs {
            let phase = &run.report.phases[pair.phase];
            let pi = pair.phase;
            let bp = &baseline.report.phases[pair.baseline_phase];
            let bpi = pair.baseline_phase;
            let base_ref = PhaseRef {
                run: baseline,
                phase: bp,
            };
            let run_ref = PhaseRef { run, phase };
            let config = if is_baseline {
                Judgement::default()
            } else {
                Judgement::new(
                    storlab_configdiff::differences(&run.report, phase, &baseline.report, bp),
                    vary,
                )
            };
            let base_dirs = Direction::of_phase(bp);
            for dir in Direction::of_phase(phase) {
                if !base_dirs.contains(&dir) {
                    continue;
                }
                let spread = |m| spread_for(&reps, base_ref, run_ref, dir, m);
                keyed.push((
                    (bpi, 0, dir, order, pi),
                    CompareRow {
                        run_id: run.id,
                        run_label: labels[order].clone(),
                        is_baseline,
                        phase: phase.params.name.clone(),
                        rw: phase.params.rw,
                        direction: dir,
                        baseline_phase: bp.params.name.clone(),
                        differs: differences(phase, bp, &config),
                        config: config.clone(),
                        changes: changes_for(
                            dir.stats(bp),
                            dir.stats(phase),
                            spread,
                            is_baseline,
                            &config,
                        ),
                    },
                ));
            }
            // A phase of job groups: each group against its baseline
            // partner (by name and shape), over its own window; the noise
            // is its phase's.
            let (Some(gs), Some(bgs)) = (&phase.groups, &bp.groups) else {
                continue;
            };
            let params = |g: &[GroupResult]| g.iter().map(|x| x.params.clone()).collect::<Vec<_>>();
            let gm = match_groups(&params(&gs.groups), &params(&bgs.groups), vary);
            for gp in &gm.pairs {
                let (g, bg) = (&gs.groups[gp.phase], &bgs.groups[gp.baseline_phase]);
                for dir in group_dirs(g) {
                    if !group_dirs(bg).contains(&dir) {
                        continue;
                    }
                    let spread = |m| spread_for(&reps, base_ref, run_ref, dir, m);
                    keyed.push((
                        (bpi, 1 + gp.baseline_phase, dir, order, pi),
                        CompareRow {
                            run_id: run.id,
                            run_label: labels[order].clone(),
                            is_baseline,
                            phase: format!("{}/{}", phase.params.name, g.name),
                            rw: g.params.rw,
                            direction: dir,
                            baseline_phase: format!("{}/{}", bp.params.name, bg.name),
                            differs: differences(phase, bp, &config),
                            config: config.clone(),
                            changes: changes_for(
                                group_stats(bg, dir),
                                group_stats(g, dir),
                                spread,
                                is_baseline,
                                &config,
                            ),
                        },
                    ));
                }
            }
        }
    }
    keyed.sort_by_key(|a| a.0);
    Comparison {
        baseline_id: baseline.id,
        baseline_label: labels[0].clone(),
        rows: keyed.into_iter().map(|(_, r)| r).collect(),
        unmatched,
        vary: vary.keys().map(str::to_string).collect(),
    }
}

/// Where a row sorts: (baseline phase, 0 for the phase or 1 + baseline
/// group, direction, run order, phase index).
type RowKey = (usize, usize, Direction, usize, usize);

/// The figures of one row against its baseline row.
fn changes_for(
    base: &DirStats,
    this: &DirStats,
    spread: impl Fn(Metric) -> Spread,
    is_baseline: bool,
    config: &Judgement,
) -> Vec<Change> {
    COMPARED
        .iter()
        .map(|&m| {
            let b = m.value(base);
            let v = m.value(this);
            let spread = spread(m);
            let change_pct = match (b, v) {
                (Some(b), Some(v)) if b > 0.0 => Some((v - b) / b * 100.0),
                _ => None,
            };
            let verdict = if is_baseline {
                Verdict::Baseline
            } else {
                match change_pct {
                    None => Verdict::NotComparable,
                    Some(_) if !config.comparable() => Verdict::ConfigDiffers,
                    Some(c) if c.abs() <= spread.pct => Verdict::Noise,
                    Some(c) if (c > 0.0) == m.higher_is_better() => Verdict::Better,
                    Some(_) => Verdict::Worse,
                }
            };
            Change {
                metric: m,
                baseline: b,
                value: v,
                change_pct: if is_baseline { Some(0.0) } else { change_pct },
                spread,
                verdict,
            }
        })
        .collect()
}

/// The directions a group reports (as a phase's).
fn group_dirs(g: &GroupResult) -> Vec<Direction> {
    let rw = g.params.rw;
    let mut v = Vec::new();
    if rw.reads() {
        v.push(Direction::Read);
    }
    if rw.writes() {
        v.push(Direction::Write);
    }
    if rw.reads() && rw.writes() {
        v.push(Direction::Total);
    }
    v
}

fn group_stats(g: &GroupResult, dir: Direction) -> &DirStats {
    match dir {
        Direction::Read => &g.read,
        Direction::Write => &g.write,
        Direction::Total => &g.total,
    }
}

/// Lay out a plain-text table: columns padded to their widest cell,
/// `right[i]` right-aligns column i.
pub(crate) fn text_table(headers: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i > 0 {
                s.push_str("  ");
            }
            if right.get(i).copied().unwrap_or(false) {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if i + 1 < n {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        // No trailing blanks when the last cells are empty.
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(headers.to_vec());
    let rule: Vec<String> = w.iter().map(|&x| "-".repeat(x)).collect();
    out.push_str(&line(rule.iter().map(String::as_str).collect()));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// The comparison as a plain-text table for a terminal, with a header line
/// naming the baseline and a footer explaining the noise rule.
pub fn render_comparison(c: &Comparison) -> String {
    let headers = [
        "Phase",
        "Dir",
        "Run",
        "MB/s",
        "vs base",
        "IOPS",
        "vs base",
        "lat p99",
        "vs base",
        "noise ±",
        "differs from baseline",
    ];
    let right = [
        false, false, false, true, true, true, true, true, true, false, false,
    ];
    let mut rows = Vec::new();
    for r in &c.rows {
        // Names and labels come from users and files: escaped for the terminal.
        let mut cells = vec![
            storlab_types::text::escape_controls(&r.phase).into_owned(),
            r.direction.as_str().to_string(),
            storlab_types::text::escape_controls(&r.run_label).into_owned(),
        ];
        for m in [Metric::Throughput, Metric::Iops, Metric::LatP99] {
            match r.change(m) {
                Some(ch) => {
                    let v = ch.value.map(|v| match m {
                        Metric::Throughput => mb_per_s(v),
                        _ => m.format(v),
                    });
                    cells.push(v.unwrap_or_else(|| "–".into()));
                    cells.push(ch.describe());
                }
                None => {
                    cells.push("–".into());
                    cells.push("n/a".into());
                }
            }
        }
        cells.push(
            r.change(Metric::Throughput)
                .map(|ch| {
                    if r.is_baseline {
                        String::new()
                    } else {
                        ch.spread.describe()
                    }
                })
                .unwrap_or_default(),
        );
        cells.push(r.differs.join(", "));
        rows.push(cells);
    }
    let mut out = format!("Baseline: {}\n\n", c.baseline_label);
    out.push_str(&text_table(&headers, &rows, &right));
    for u in &c.unmatched {
        out.push_str(&format!("not compared: {u}\n"));
    }
    out.push_str(&comparison_footer(c));
    out
}

/// What the verdicts mean, and which `--vary` would turn "configuration differs"
/// into verdicts.
pub fn comparison_footer(c: &Comparison) -> String {
    let mut out = String::from(
        "\nA change is judged only when the two phases' configurations match (every workload \
         parameter, host, target, device and tool version), apart from parameters named with \
         --vary",
    );
    if !c.vary.is_empty() {
        out.push_str(&format!(" (here: {})", c.vary.join(", ")));
    }
    out.push_str(
        ". It counts as better or worse only when it exceeds the noise: the spread of that \
         figure over repeated runs of the same configuration, else the spread between jobs of \
         one run (at least 5 %), else 5 %. \"noise ±\" shows it for MB/s. MB/s = 10^6 \
         bytes/s; lower latency is better.\n",
    );
    let keys = c.blocking_keys();
    if !keys.is_empty() {
        out.push_str(&format!(
            "\"configuration differs\": the two runs differ in {}, so no change is called better \
             or worse. If that is what you are studying, say so: --vary {}.\n",
            keys.join(", "),
            keys.join(",")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{Spec, compare_runs, phase, run};
    use storlab_types::RwMode;

    fn find<'a>(c: &'a Comparison, id: i64, phase: &str, dir: Direction) -> &'a CompareRow {
        c.rows
            .iter()
            .find(|r| r.run_id == id && r.phase == phase && r.direction == dir)
            .unwrap_or_else(|| panic!("no row for #{id} {phase} {dir}"))
    }

    #[test]
    fn sas_against_scsi_baseline() {
        let runs = compare_runs();
        let c = compare(&runs, &runs[0]);
        assert_eq!(c.baseline_id, 1);
        assert!(c.unmatched.is_empty());
        // 3 runs × 3 single-direction phases.
        assert_eq!(c.rows.len(), 9);
        // Grouped by phase, baseline first.
        assert!(c.rows[0].is_baseline && c.rows[0].phase == "seqwrite");
        assert_eq!(c.rows[3].phase, "seqread");

        let w = find(&c, 3, "seqwrite", Direction::Write);
        let ch = w.change(Metric::Throughput).unwrap();
        let expected = (874.6 - 412.3) / 412.3 * 100.0;
        assert!((ch.change_pct.unwrap() - expected).abs() < 0.1, "{ch:?}");
        assert_eq!(ch.verdict, Verdict::Better);
        assert!(matches!(
            ch.spread.source,
            SpreadSource::Replicates { runs: 2 }
        ));
        // Latency went down with the faster enclosure: better too.
        assert_eq!(w.change(Metric::LatP99).unwrap().verdict, Verdict::Better);

        // 88.5 vs 88.0 MB/s is inside the two SCSI runs' spread (86.9..88.0).
        let rr = find(&c, 3, "randread", Direction::Read);
        let ch = rr.change(Metric::Throughput).unwrap();
        assert_eq!(ch.verdict, Verdict::Noise, "{ch:?}");
        let spread = (88.0 - 86.9) / 86.9 * 100.0;
        assert!((ch.spread.pct - spread).abs() < 0.05, "{ch:?}");

        // The second SCSI run differs from the first by exactly the spread: noise.
        let again = find(&c, 2, "seqread", Direction::Read);
        assert_eq!(
            again.change(Metric::Throughput).unwrap().verdict,
            Verdict::Noise
        );
    }

    /// A phase of a reader group and a writer group (writer named `w`).
    fn grouped(read_mb: f64, write_mb: f64, w: &'static str) -> PhaseResult {
        use storlab_types::PhaseGroups;
        let r = phase(&Spec::new("dd-read", RwMode::Read, 1 << 20, read_mb).jobs(6));
        let wr = phase(&Spec::new(w, RwMode::Write, 1 << 20, write_mb).jobs(3));
        let mut p = phase(&Spec::new(
            "dd",
            RwMode::ReadWrite,
            1 << 20,
            read_mb + write_mb,
        ));
        p.params.groups = vec![r.params.clone(), wr.params.clone()];
        let member = |x: &PhaseResult, first| GroupResult {
            name: x.params.name.clone(),
            first_job: first,
            params: x.params.clone(),
            elapsed_ns: x.elapsed_ns,
            read: x.read,
            write: x.write,
            total: x.total,
            ..Default::default()
        };
        p.groups = Some(PhaseGroups {
            reporting: Vec::new(),
            overlap: 1.0,
            all_moving_ns: 1,
            groups: vec![member(&r, 0), member(&wr, 6)],
        });
        p
    }

    /// Groups get rows of their own, paired with the baseline's by name
    /// and shape (not position), after their phase's rows.
    #[test]
    fn groups_are_compared_pair_by_pair() {
        let base = run(1, &[("cfg", "a")], vec![grouped(300.0, 200.0, "dd-write")]);
        let new = run(2, &[("cfg", "a")], vec![grouped(300.0, 100.0, "backup")]);
        let c = compare(std::slice::from_ref(&new), &base);
        let w = find(&c, 2, "dd/backup", Direction::Write);
        assert_eq!(w.baseline_phase, "dd/dd-write");
        let ch = w.change(Metric::Throughput).unwrap();
        assert!((ch.change_pct.unwrap() + 50.0).abs() < 0.1, "{ch:?}");
        assert_eq!(ch.verdict, Verdict::Worse);
        let r = find(&c, 2, "dd/dd-read", Direction::Read);
        assert_eq!(
            r.change(Metric::Throughput).unwrap().verdict,
            Verdict::Noise
        );
        // The phase's own rows come first, then its groups'.
        let first_group = c.rows.iter().position(|r| r.phase.contains('/')).unwrap();
        assert!(c.rows[..first_group].iter().all(|r| r.phase == "dd"));
        let text = render_comparison(&c);
        assert!(text.contains("dd/backup"), "{text}");
    }

    #[test]
    fn single_runs_use_the_default_threshold() {
        let a = run(
            10,
            &[("cfg", "a")],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 1000.0))],
        );
        let small = run(
            11,
            &[("cfg", "b")],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 1030.0))],
        );
        let big = run(
            12,
            &[("cfg", "c")],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 900.0))],
        );
        let c = compare(&[small, big], &a);
        let s = find(&c, 11, "seq", Direction::Read)
            .change(Metric::Throughput)
            .unwrap();
        // The fixture's per-job spread is under 5 %, so the default applies.
        assert_eq!(s.spread.source, SpreadSource::Default);
        assert_eq!(s.verdict, Verdict::Noise);
        let b = find(&c, 12, "seq", Direction::Read)
            .change(Metric::Throughput)
            .unwrap();
        assert_eq!(b.verdict, Verdict::Worse);
        assert_eq!(b.describe(), "-10 % worse");
    }

    #[test]
    fn wide_job_spread_widens_the_noise() {
        let a = run(
            1,
            &[],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 1000.0))],
        );
        let mut b = run(
            2,
            &[],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 1100.0))],
        );
        b.tags.insert("cfg".into(), "unfair".into());
        // One job got far less than the others.
        b.report.phases[0].jobs[0].read.bw_bytes_per_s *= 0.5;
        let c = compare(&[b], &a);
        let ch = find(&c, 2, "seq", Direction::Read)
            .change(Metric::Throughput)
            .unwrap();
        assert!(matches!(ch.spread.source, SpreadSource::Jobs { jobs: 4 }));
        assert!(ch.spread.pct > 10.0);
        assert_eq!(ch.verdict, Verdict::Noise);
    }

    #[test]
    fn mixed_phases_and_unmatched_phases() {
        let a = run(
            1,
            &[],
            vec![phase(
                &Spec::new("oltp", RwMode::RandRw, 8192, 100.0).mix(70),
            )],
        );
        let b = run(
            2,
            &[("x", "y")],
            vec![
                // Different name, same pattern: matched by pattern.
                phase(&Spec::new("oltp-2", RwMode::RandRw, 8192, 150.0).mix(70)),
                phase(&Spec::new("seqwrite", RwMode::Write, 1 << 20, 400.0)),
            ],
        );
        let c = compare(&[b], &a);
        let dirs: Vec<Direction> = c
            .rows
            .iter()
            .filter(|r| r.run_id == 2)
            .map(|r| r.direction)
            .collect();
        assert_eq!(
            dirs,
            vec![Direction::Read, Direction::Write, Direction::Total]
        );
        assert_eq!(c.rows[1].baseline_phase, "oltp");
        assert_eq!(c.unmatched.len(), 1);
        assert!(c.unmatched[0].contains("seqwrite"), "{:?}", c.unmatched);
    }

    #[test]
    fn zero_baseline_is_not_comparable() {
        let mut a = run(
            1,
            &[],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 500.0))],
        );
        a.report.phases[0].read = DirStats::default();
        let b = run(
            2,
            &[("b", "1")],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 500.0))],
        );
        let c = compare(&[b], &a);
        let r = find(&c, 2, "seq", Direction::Read);
        assert_eq!(
            r.change(Metric::Throughput).unwrap().verdict,
            Verdict::NotComparable
        );
        assert_eq!(r.change(Metric::LatP99).unwrap().describe(), "n/a");
        let table = render_comparison(&c);
        assert!(table.contains("n/a"));
    }

    #[test]
    fn interrupted_phases_are_flagged() {
        let a = run(
            1,
            &[],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 500.0))],
        );
        let mut b = run(
            2,
            &[("b", "1")],
            vec![phase(&Spec::new("seq", RwMode::Read, 1 << 20, 450.0))],
        );
        b.report.phases[0].interrupted = true;
        let c = compare(&[b], &a);
        let r = find(&c, 2, "seq", Direction::Read);
        assert_eq!(r.differs, vec!["interrupted (partial figures)".to_string()]);
        assert!(render_comparison(&c).contains("interrupted (partial figures)"));
    }

    #[test]
    fn differing_configurations_get_no_verdict_unless_under_study() {
        let base = run(
            1,
            &[],
            vec![phase(
                &Spec::new("rr", RwMode::RandRead, 4096, 100.0).qd(32),
            )],
        );
        let mut qd1 = run(
            2,
            &[],
            vec![phase(&Spec::new("rr", RwMode::RandRead, 4096, 21.5).qd(1))],
        );
        qd1.report.host.kernel = "6.12.0".into();
        let c = compare(std::slice::from_ref(&qd1), &base);
        let r = find(&c, 2, "rr", Direction::Read);
        for ch in &r.changes {
            assert_eq!(ch.verdict, Verdict::ConfigDiffers, "{ch:?}");
        }
        assert!(
            r.differs
                .iter()
                .any(|d| d.starts_with("iodepth 1 (base 32)"))
        );
        assert!(r.differs.iter().any(|d| d.starts_with("kernel 6.12.0")));
        assert_eq!(c.blocking_keys(), vec!["iodepth", "kernel"]);
        let text = render_comparison(&c);
        assert!(text.contains("-79 % configuration differs"), "{text}");
        assert!(text.contains("--vary iodepth,kernel"), "{text}");
        // Both under study: a verdict, and the differences stay listed.
        let vary = Vary::parse("qd,kernel").unwrap();
        let c = compare_with(std::slice::from_ref(&qd1), &base, &vary);
        let r = find(&c, 2, "rr", Direction::Read);
        assert_eq!(
            r.change(Metric::Throughput).unwrap().verdict,
            Verdict::Worse
        );
        assert_eq!(r.config.under_study.len(), 2);
        assert!(r.differs[0].ends_with("[under study]"));
        // A different block size is not paired at all.
        let big = run(
            3,
            &[],
            vec![phase(
                &Spec::new("rr", RwMode::RandRead, 1 << 20, 900.0).qd(32),
            )],
        );
        let c = compare(&[big], &base);
        assert!(c.rows.iter().all(|r| r.is_baseline));
        assert_eq!(c.unmatched.len(), 1);
    }

    #[test]
    fn table_lines_up() {
        let t = text_table(
            &["a", "bb"],
            &[
                vec!["xxx".into(), "1".into()],
                vec!["y".into(), "22".into()],
            ],
            &[false, true],
        );
        assert_eq!(t, "a    bb\n---  --\nxxx   1\ny    22\n");
    }
}
