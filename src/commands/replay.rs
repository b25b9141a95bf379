//! `storlab replay TRACE TARGET`: an application's recorded I/O (fio iolog,
//! Darshan DXT, blktrace) issued again on the storage under test, rank by
//! rank, with its recorded timing or as fast as it goes
//! (`storlab_replay`), stored as a run of kind `replay`.

use super::common::{DbArgs, RecordArgs};
use super::outfmt::{OutputArgs, TableFormat};
use super::signals::{Signals, signal_name};
use crate::output::{self, Document, Reply};
use clap::Args;
use std::path::PathBuf;
use storlab_replay::{PathMap, ReplayResult, Speed, prepare, replay};
use storlab_trace::OpenOptions;

#[derive(Args, Debug)]
pub struct ReplayCommand {
    /// The trace: a fio iolog (v2 or v3), a Darshan log with DXT data (.darshan) or a blktrace per-CPU file
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// A directory: storlab makes its own subdirectory in it and lays the traced files out there
    #[arg(value_name = "TARGET")]
    target: PathBuf,
    /// original (each operation at its recorded start), max (as fast as each rank's order allows) or a factor (2 = twice as fast)
    #[arg(long, value_name = "SPEED", default_value = "original")]
    speed: String,
    /// Where traced files go under TARGET: FROM=TO replaces a path prefix (repeatable; with --map every traced file needs a rule)
    #[arg(long = "map", value_name = "FROM=TO")]
    maps: Vec<String>,
    /// Keep the laid-out files afterwards
    #[arg(long)]
    keep: bool,
    #[command(flatten)]
    record: RecordArgs,
    #[command(flatten)]
    out: OutputArgs<TableFormat>,
    #[command(flatten)]
    db: DbArgs,
}

impl ReplayCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let speed = Speed::parse(&self.speed)?;
        let map = PathMap::parse(self.maps.iter().map(String::as_str))?;
        let tags = self.record.tag_map()?;
        let opts = OpenOptions::default();
        // Every refusal comes before the store or the target is touched.
        let layout = prepare(&self.trace, &opts, &map)?;
        let store = self.db.open()?;
        let signals = Signals::install()?;
        let prep = storlab_replay::prepare::lay_out(layout, &self.target)?;
        let done = replay(&prep, &opts, speed, &|| signals.requested());
        if !self.keep {
            if let Err(e) = std::fs::remove_dir_all(&prep.run_dir) {
                output::warn(&format!("could not remove {}: {e}", prep.run_dir.display()));
            }
        }
        let result = done?;
        let mut report = result.to_report(&prep, storlab_host::host_info());
        report.target.kept = self.keep;
        if let Some(sig) = signals.received() {
            report.stop_reason = Some(format!("interrupted by {}", signal_name(sig)));
        }
        let run_id = store.save_run("replay", &report, &tags, self.record.note())?;
        let outcome = if result.interrupted {
            crate::Outcome::Interrupted
        } else {
            crate::Outcome::Ok
        };
        let mut reply = Reply::doc(
            Replayed {
                run_id,
                trace: self.trace.display().to_string(),
                result,
                report,
            },
            self.out.rendering(),
        );
        reply.outcome = outcome;
        Ok(reply)
    }
}

/// The replay as `storlab replay` shows it.
struct Replayed {
    run_id: i64,
    trace: String,
    result: ReplayResult,
    report: storlab_types::BenchReport,
}

impl Document for Replayed {
    fn human(&self) -> anyhow::Result<String> {
        Ok(storlab_replay::result::render(
            &self.result,
            &self.trace,
            self.run_id,
        ))
    }
    fn json(&self) -> anyhow::Result<String> {
        output::json_text(&self.report)
    }
}
