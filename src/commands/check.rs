//! `storlab check`: exit 1 when a run is worse than its baseline by more
//! than a tolerance (for nightly jobs that watch storage over time), and 2
//! when the two runs' configurations differ so that no verdict is possible.

use super::common::DbArgs;
use super::outfmt::TextFormat;
use crate::output::{Rendered, Reply};
use clap::Args;
use storlab_configdiff::Vary;
use storlab_configdiff::check;
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
    #[arg(value_name = "RUN", value_parser = RunSelector::parse)]
    run: RunSelector,
    /// The reference run; when a tag matches several runs, the latest of them
    #[arg(long, value_name = "RUN", value_parser = RunSelector::parse)]
    baseline: RunSelector,
    /// How much worse than the baseline a figure may be, in percent of the baseline
    #[arg(long, value_name = "PERCENT", default_value = "10%", value_parser = storlab_types::parse_percent)]
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

impl CheckCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let store = self.db.open_existing()?;
        let (baseline, preamble) = store.load_baseline(&self.baseline)?;
        let preamble = preamble.map(|c| c.to_string());
        let base_id = baseline.id;
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
        let runs: Vec<_> = ids
            .into_iter()
            .map(|id| store.load(id))
            .collect::<Result<_, _>>()?;
        // What the two runs' sweep tags say was varied is under study.
        let note = |id, n| eprintln!("run {id}: {n}");
        let vary = (&self.vary[..], self.allow_config_diff);
        let summary = check::check_each(&runs, &baseline, self.tolerance, vary, note)?;
        let outcome = summary.worst().into();
        // Which baseline was taken when a tag named several, then each
        // run's verdict (text), or the verdicts as one JSON document.
        let head = preamble.map(|p| format!("{p}\n")).unwrap_or_default();
        let json = crate::output::json_text(&summary.json())?;
        let doc = Rendered::new(head + &summary.text(), json);
        Ok(Reply::doc(doc, self.out.rendering()).with_outcome(outcome))
    }
}
