//! `storlab compare`: each run's figures relative to a baseline run, with
//! differences inside the measured run-to-run spread marked as noise, and
//! no verdict where the configurations differ (unless under study, `--vary`).

use super::common::{DbArgs, RunArgs};
use super::outfmt::TableFormat;
use crate::output::{Reply, Shown};
use clap::Args;
use storlab_configdiff::Vary;
use storlab_configdiff::implied::vary_with_implied;
use storlab_store::RunSelector;

#[derive(Args, Debug)]
#[command(
    after_help = "A change is called better or worse only when the two phases' \
configurations match: every workload parameter, the host, target, device and tool version. \
Otherwise the verdict is \"configuration differs\" and the differences are listed; name the parameter \
you are studying with --vary (e.g. --vary iodepth) to have it judged.

Examples:
  storlab compare tag:controller=sas --baseline tag:controller=scsi --vary device
  storlab compare 14 15 16 --baseline 13 --vary bs"
)]
pub struct CompareCommand {
    #[command(flatten)]
    runs: RunArgs,
    /// The reference run; when a tag matches several runs, the latest of them
    #[arg(long, value_name = "RUN", value_parser = RunSelector::parse)]
    baseline: RunSelector,
    /// Parameter(s) under study, e.g. iodepth, bs, numjobs, cache, kernel, device, host, target,
    /// tool (comma-separated or repeated): phases that differ there are paired and judged
    #[arg(long, value_name = "PARAM", value_parser = Vary::parse)]
    vary: Vec<Vary>,
    #[command(flatten)]
    out: crate::commands::outfmt::OutputArgs<TableFormat>,
    #[command(flatten)]
    db: DbArgs,
}

impl CompareCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let store = self.db.open_existing()?;
        let runs = self.runs.load(&store)?;
        let (baseline, note) = store.load_baseline(&self.baseline)?;
        let note = note.map(|c| c.to_string());
        let (vary, implied) = vary_with_implied(&self.vary, runs.iter().chain([&baseline]));
        if let Some(n) = implied {
            eprintln!("{n}");
        }
        vary.check_against(runs.iter().chain([&baseline]))?;
        let cmp = storlab_report::compare_with(&runs, &baseline, &vary);
        // A table for people (after a note on which baseline a tag chose),
        // or the serializer-made document.
        let doc = Shown::new(cmp, storlab_report::render_comparison).with_note(note);
        Ok(Reply::doc(doc, self.out.rendering()))
    }
}
