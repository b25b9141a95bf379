//! `storlab compare`: each run's figures relative to a baseline run, with
//! differences inside the measured run-to-run spread marked as noise.

use super::common::{DbArgs, RunArgs, load_baseline, parse_run_arg};
use crate::output;
use clap::Args;
use storlab_store::RunSelector;

#[derive(Args, Debug)]
pub struct CompareCommand {
    #[command(flatten)]
    runs: RunArgs,
    /// The reference run; when a tag matches several runs, the latest of them
    #[arg(long, value_name = "RUN", value_parser = parse_run_arg)]
    baseline: RunSelector,
    /// Print the comparison as JSON instead of a table
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

impl CompareCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let store = self.db.open_existing()?;
        let runs = self.runs.load(&store)?;
        let (baseline, note) = load_baseline(&store, &self.baseline)?;
        let cmp = storlab_report::compare(&runs, &baseline);
        if self.json {
            output::print(&(serde_json::to_string_pretty(&cmp)? + "\n"))?;
        } else {
            if let Some(n) = note {
                eprintln!("{n}");
            }
            output::print(&storlab_report::render_comparison(&cmp))?;
        }
        Ok(crate::Outcome::Ok)
    }
}
