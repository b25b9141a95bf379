//! `storlab show`: print stored runs with their parameters and figures.

use super::common::{DbArgs, RunArgs};
use super::outfmt::{OutputArgs, TextFormat};
use crate::output::{Reply, Shown};
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
        // Each run's header and phase table, or the records as a JSON list.
        let text = |runs: &Vec<StoredRun>| {
            let text: Vec<String> = runs.iter().map(storlab_print::show::render).collect();
            text.join("\n")
        };
        Ok(Reply::doc(Shown::new(runs, text), self.out.rendering()))
    }
}
