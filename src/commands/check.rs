//! `storlab check`: exit 1 when a run is worse than its baseline by more
//! than a tolerance (for nightly jobs that watch storage over time), and 2
//! when the two runs' configurations differ so that no verdict is possible.

use super::common::{DbArgs, parse_run_arg};
use super::outfmt::TextFormat;
use crate::output;
use clap::Args;
use storlab_configdiff::Vary;
use storlab_configdiff::check;
use storlab_configdiff::check::{CheckOptions, CheckStatus};
use storlab_configdiff::implied::vary_with_implied;
use storlab_store::RunSelector;

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 every figure within the tolerance; 1 a figure worse than \
the tolerance, a phase missing or cut short; 2 the configurations differ (a parameter, host, \
target, device or tool version) and neither --vary nor --allow-config-diff covers it, or bad \
input.

Examples:
  storlab check latest --baseline tag:nightly=ref
  storlab check latest --baseline 12 --vary iodepth      # the queue depth is under study
  storlab check latest --baseline 12 --allow-config-diff # judge anyway, list the differences"
)]
pub struct CheckCommand {
    /// Run(s) to check: an id, latest, latest~1 or tag:KEY=VALUE
    #[arg(value_name = "RUN", value_parser = parse_run_arg)]
    run: RunSelector,
    /// The reference run; when a tag matches several runs, the latest of them
    #[arg(long, value_name = "RUN", value_parser = parse_run_arg)]
    baseline: RunSelector,
    /// How much worse than the baseline a figure may be, in percent of the baseline
    #[arg(long, value_name = "PERCENT", default_value = "10%", value_parser = parse_tolerance)]
    tolerance: f64,
    /// Parameter(s) under study, e.g. iodepth, bs, numjobs, cache, kernel, device, host, target,
    /// tool (comma-separated or repeated): a difference there is judged, not refused
    #[arg(long, value_name = "PARAM", value_parser = Vary::parse)]
    vary: Vec<Vary>,
    /// Judge the figures even when the configurations differ (the differences are still listed)
    #[arg(long)]
    allow_config_diff: bool,
    #[command(flatten)]
    out: crate::commands::outfmt::OutputArgs<TextFormat>,
    #[command(flatten)]
    db: DbArgs,
}

fn parse_tolerance(s: &str) -> Result<f64, String> {
    storlab_types::parse_percent(s).map_err(|e| e.to_string())
}

impl CheckCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let json = self.out.format() == TextFormat::Json;
        let store = self.db.open_existing()?;
        let base_ids = store.resolve(std::slice::from_ref(&self.baseline), false)?;
        let Some(&base_id) = base_ids.last() else {
            anyhow::bail!("no run matches the baseline {}", self.baseline);
        };
        let baseline = store.load(base_id)?;
        let mut out = String::new();
        if base_ids.len() > 1 {
            out += &format!(
                "baseline: run {base_id}, the latest of {} runs matching {}\n",
                base_ids.len(),
                self.baseline
            );
        }
        let ids: Vec<i64> = store
            .resolve(std::slice::from_ref(&self.run), false)?
            .into_iter()
            .filter(|id| *id != base_id)
            .collect();
        if ids.is_empty() {
            anyhow::bail!(
                "'{}' names only the baseline run {base_id} itself; name another run to check",
                self.run
            );
        }
        let mut worst = CheckStatus::Passed;
        let mut reports = Vec::new();
        for id in ids {
            let run = store.load(id)?;
            // What the two runs' sweep tags say was varied is under study.
            let (vary, note) = vary_with_implied(&self.vary, [&run, &baseline]);
            if let Some(n) = note {
                eprintln!("run {id}: {n}");
            }
            let opts = CheckOptions {
                vary,
                allow_config_diff: self.allow_config_diff,
            };
            opts.vary.check_against([&run, &baseline])?;
            let report = check::check_with(&run, &baseline, self.tolerance, &opts)?;
            worst = match (worst, report.status()) {
                (CheckStatus::ConfigDiffers, _) | (_, CheckStatus::ConfigDiffers) => {
                    CheckStatus::ConfigDiffers
                }
                (CheckStatus::Failed, _) | (_, CheckStatus::Failed) => CheckStatus::Failed,
                _ => CheckStatus::Passed,
            };
            if !json {
                out += &render(&report, self.tolerance);
            }
            reports.push(report);
        }
        if json {
            out = serde_json::to_string_pretty(&serde_json::json!({
                "passed": worst == CheckStatus::Passed,
                "status": worst,
                "checks": reports,
            }))? + "\n";
        }
        output::print(&out)?;
        Ok(match worst {
            CheckStatus::Passed => crate::Outcome::Ok,
            CheckStatus::Failed => crate::Outcome::Failed,
            CheckStatus::ConfigDiffers => crate::Outcome::Error,
        })
    }
}

/// The text result of one run's check.
fn render(report: &check::CheckReport, tolerance: f64) -> String {
    let (id, base_id) = (report.run_id, report.baseline_id);
    let mut out = String::new();
    let compared = report.findings.len();
    match report.status() {
        CheckStatus::Passed => {
            out += &format!(
                "ok: run {id} is within {tolerance}% of baseline run {base_id} ({compared} figures compared)\n"
            );
        }
        CheckStatus::Failed => {
            out += &format!(
                "FAILED: run {id} vs baseline run {base_id}, tolerance {tolerance}%: {} problem{}\n",
                report.failures.len(),
                if report.failures.len() == 1 { "" } else { "s" }
            );
        }
        CheckStatus::ConfigDiffers => {
            let keys = report.blocking_keys();
            out += &format!(
                "CONFIGURATION DIFFERS: run {id} vs baseline run {base_id}: {}; the figures are not \
                 judged. If that is what you are studying, say so with --vary {}; to judge them \
                 anyway, --allow-config-diff\n",
                keys.join(", "),
                keys.join(",")
            );
        }
    }
    for f in &report.failures {
        out += &format!("  {f}\n");
    }
    for c in &report.config {
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
    for n in &report.notes {
        out += &format!("  note: {n}\n");
    }
    out
}
