//! `storlab show`: print stored runs with their parameters and figures.

use super::common::{DbArgs, RunArgs};
use super::outfmt::{OutputArgs, TextFormat};
use crate::output::{self, Document, Reply};
use clap::Args;
use storlab_types::StoredRun;

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (the stored records, a list of runs)")))]
pub struct ShowCommand {
    #[command(flatten)]
    runs: RunArgs,
    #[command(flatten)]
    out: OutputArgs<TextFormat>,
    #[command(flatten)]
    db: DbArgs,
}

impl ShowCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let store = self.db.open_existing()?;
        let runs = self.runs.load(&store)?;
        Ok(Reply::doc(Shown(runs), self.out.rendering()))
    }
}

/// The stored runs, as `show` prints them: each run's header and phase
/// table, or the records as a JSON list.
struct Shown(Vec<StoredRun>);

impl Document for Shown {
    fn human(&self) -> anyhow::Result<String> {
        let text: Vec<String> = self.0.iter().map(storlab_print::show::render).collect();
        Ok(text.join("\n"))
    }
    fn json(&self) -> anyhow::Result<String> {
        output::json_text(&self.0)
    }
}
