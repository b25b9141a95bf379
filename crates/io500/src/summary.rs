//! A finished io500 run as the stored record and as text: the phases with
//! io500's INVALID reasons as warnings (the words `storlab import` uses for
//! a real io500's), the run's reasons, `--short` marked as not comparable,
//! and the summary io500 prints (`[RESULT]` per phase, `[SCORE ]`).

#[cfg(feature = "run")]
use crate::config::Config;
use crate::phases::{self, ScoreGroup};
use crate::record::score_of;
#[cfg(feature = "run")]
use crate::run::{Job, Outcome};
use std::fmt::Write as _;
use storlab_types::{BenchReport, PhaseResult};

const GIB: f64 = (1u64 << 30) as f64;

/// The warning every `--short` run carries.
pub const SHORT_WARNING: &str = "storlab io500 --short: small sizes and a short stonewall; the score is INVALID \
     and not comparable with the official IO500 list";

/// A phase's score in io500's unit (GiB/s or kIOPS).
pub fn phase_score(p: &PhaseResult) -> f64 {
    match phases::find(&p.params.name).map(|d| d.group) {
        Some(ScoreGroup::Bw) => p.total.bw_bytes_per_s / GIB,
        Some(ScoreGroup::None) if phases::unit(&p.params.name) == "GiB/s" => {
            p.total.bw_bytes_per_s / GIB
        }
        _ => p.total.iops / 1000.0,
    }
}

/// The run's record: `header` (host, target, start) with the phases and
/// the run's warnings.
#[cfg(feature = "run")]
pub fn report(mut header: BenchReport, outcome: Outcome, job: &Job, cfg: &Config) -> BenchReport {
    header.phases = outcome.phases;
    for r in job.run_reasons(cfg) {
        header.warnings.push(format!("io500: INVALID run: {r}"));
    }
    if job.short {
        header.warnings.push(SHORT_WARNING.into());
    }
    let missing: Vec<&str> = crate::run::phase_names()
        .into_iter()
        .filter(|n| {
            phases::find(n).is_some_and(|p| p.group != ScoreGroup::None && !p.dummy)
                && cfg.runs(n)
                && !header.phases.iter().any(|p| p.params.name == *n)
        })
        .collect();
    if !missing.is_empty() {
        header.warnings.push(format!(
            "io500: INVALID run: phases not run: {}",
            missing.join(", ")
        ));
    }
    if let Some(why) = &outcome.failed {
        header
            .warnings
            .push(format!("io500: INVALID run: failed: {why}"));
    }
    if let Some(why) = outcome.failed.or(outcome.stop_reason) {
        header.interrupted = true;
        header.stop_reason = Some(why);
    }
    header.finish();
    header
}

/// io500's reasons this run (or a phase of it) is INVALID; empty when valid.
pub fn invalid_reasons(report: &BenchReport) -> Vec<String> {
    let mut out: Vec<String> = report
        .warnings
        .iter()
        .filter(|w| w.starts_with("io500: INVALID") || w.starts_with("io500 marked"))
        .cloned()
        .collect();
    for p in &report.phases {
        for w in p
            .warnings
            .iter()
            .filter(|w| w.starts_with("io500: INVALID"))
        {
            out.push(format!("{}: {w}", p.params.name));
        }
    }
    out
}

/// The summary as io500 prints it: a line per phase (score in its unit,
/// time, `[INVALID]`), then bandwidth, IOPS and the total score, computed
/// as io500 does.
pub fn render(report: &BenchReport) -> String {
    let mut s = String::new();
    for p in &report.phases {
        let bad = p.warnings.iter().any(|w| w.starts_with("io500: INVALID"));
        let _ = writeln!(
            s,
            "[RESULT] {:>20} {:>15.6} {:<5} : time {:8.3} seconds{}",
            p.params.name,
            phase_score(p),
            phases::unit(&p.params.name),
            p.elapsed_ns as f64 / 1e9,
            if bad { " [INVALID]" } else { "" }
        );
    }
    let sc = score_of(report, false);
    let invalid = !invalid_reasons(report).is_empty();
    let _ = writeln!(
        s,
        "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {:.6} kiops : TOTAL {:.6}{}",
        sc.bandwidth_gib_s,
        sc.md_kiops,
        sc.total,
        if invalid { " [INVALID]" } else { "" }
    );
    for w in &report.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if let Some(why) = &report.stop_reason {
        let _ = writeln!(s, "stopped: {why}");
    }
    s
}
