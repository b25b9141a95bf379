//! `storlab check`: exit 1 when a run is worse than its baseline by more
//! than a tolerance (for nightly jobs that watch storage over time).

use super::common::{DbArgs, parse_run_arg};
use crate::output;
use clap::Args;
use storlab_store::{RunSelector, check};

#[derive(Args, Debug)]
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
    /// Print the result as JSON (every compared figure, failures, notes) instead of text
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

fn parse_tolerance(s: &str) -> Result<f64, String> {
    storlab_types::parse_percent(s).map_err(|e| e.to_string())
}

impl CheckCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
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
        let mut failed = false;
        let mut reports = Vec::new();
        for id in ids {
            let run = store.load(id)?;
            let report = check::check(&run, &baseline, self.tolerance)?;
            failed |= !report.passed();
            if self.json {
                reports.push(report);
                continue;
            }
            let compared = report.findings.len();
            if report.passed() {
                out += &format!(
                    "ok: run {id} is within {}% of baseline run {base_id} ({compared} figures compared)\n",
                    self.tolerance
                );
            } else {
                out += &format!(
                    "FAILED: run {id} vs baseline run {base_id}, tolerance {}%: {} problem{}\n",
                    self.tolerance,
                    report.failures.len(),
                    if report.failures.len() == 1 { "" } else { "s" }
                );
                for f in &report.failures {
                    out += &format!("  {f}\n");
                }
            }
            for n in &report.notes {
                out += &format!("  note: {n}\n");
            }
        }
        if self.json {
            out = serde_json::to_string_pretty(&serde_json::json!({
                "passed": !failed,
                "checks": reports,
            }))? + "\n";
        }
        output::print(&out)?;
        Ok(if failed {
            crate::Outcome::Failed
        } else {
            crate::Outcome::Ok
        })
    }
}
