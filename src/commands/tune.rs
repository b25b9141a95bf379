//! `storlab tune TUNER`: find the best value of one block-layer setting for
//! the user's own device by measuring each candidate, then put everything
//! back. Each tuner is a subcommand; `readahead` is the first (the
//! scheduler, `nr_requests` and queue depth fit the same shape: find the
//! layers, remember their values in a state file, set, measure, restore).
//!
//! `readahead` sets the read-ahead of the layer that file reads go through
//! (the top of the device stack under the path: the dm or md device, or the
//! disk under a partition), runs a cold-cache streaming read (a file larger
//! than RAM by default, or the device itself, read-only), records each point
//! in the store, and restores every layer's original value at the end, on
//! Ctrl-C, on error, and — from the state file written before the first
//! change — on the next start after a kill. With `--output-format json` /
//! `--json` the result is one serializer-made document on stdout (the
//! layers and their original values, each value measured with its run id,
//! the best one, what was restored); progress stays on stderr.
//!
//! It recommends only from points it trusts: each point reads for the whole
//! `--runtime` (`--time-based`, several passes when needed); a point whose
//! eviction was not verified, that ran under 1 s, or that read a region the
//! page cache can hold more than once is flagged; the best two values are
//! read again to measure the run-to-run noise. When any point is flagged or
//! the best does not lead the next by more than that noise, the result is
//! "inconclusive" with the reasons, and no `blockdev`/udev line is given.

use crate::commands::common::{DbArgs, RecordArgs};
use crate::commands::outfmt::TableFormat;
use crate::output::Reply;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;
use storlab_store::RunSelector;
use storlab_tune::child::ReadJob;
use storlab_tune::state::scratch_file;
use storlab_tune::{Point, TuneDoc, TuneParams, Tuning};
use storlab_types::{ByteSize, StoredRun};

/// `storlab tune`
#[derive(Args, Debug)]
pub struct TuneCommand {
    #[command(subcommand)]
    tuner: Tuner,
}

#[derive(Subcommand, Debug)]
enum Tuner {
    /// Find the best block-device read-ahead for streaming reads under a path or of a device (root)
    Readahead(ReadaheadArgs),
}

impl TuneCommand {
    pub fn execute(self) -> Result<Reply> {
        match self.tuner {
            Tuner::Readahead(a) => a.execute(),
        }
    }
}

/// `storlab tune readahead DEVICE-or-PATH`
#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help(
    "Shorthand for --output-format json (each value's figures and run id, the best value, what \
     was restored)"
)))]
pub struct ReadaheadArgs {
    /// A block device (read in place, read-only) or a directory on the file system to tune (a file is written there)
    target: PathBuf,
    /// Read-ahead values to try
    #[arg(long, value_delimiter = ',', default_value = "128k,512k,1m,2m,4m,8m")]
    values: Vec<ByteSize>,
    /// Size of the file read (directory targets) [default: 2× RAM, so the page cache cannot serve it]
    #[arg(long, value_name = "SIZE")]
    size: Option<ByteSize>,
    /// Time limit of each measurement
    #[arg(long, value_name = "DUR", default_value = "20s")]
    runtime: String,
    /// Concurrent streams (jobs) reading
    #[arg(long, value_name = "N", default_value_t = 1)]
    streams: u32,
    /// Where the state file (the original values) is kept
    #[arg(
        long,
        value_name = "DIR",
        env = "STORLAB_STATE_DIR",
        default_value = "/run/storlab",
        hide = true
    )]
    state_dir: PathBuf,
    /// Do not save the points in the results database
    #[arg(long)]
    no_save: bool,
    #[command(flatten)]
    out: crate::commands::outfmt::OutputArgs<TableFormat>,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    record: RecordArgs,
}

impl ReadaheadArgs {
    pub fn execute(self) -> Result<Reply> {
        if !storlab_host::os::is_root() {
            bail!(
                "tune readahead sets /sys/block/*/queue/read_ahead_kb and drops the page cache: run it as root \
                 (nothing was changed)"
            );
        }
        let sizes: Vec<u64> = self.values.iter().map(|v| v.0).collect();
        let values = storlab_tune::child::values_kb(&sizes)?;
        // Tags, note and design as every child bench will save them, checked
        // before anything is changed (a bad --design must not cost N runs).
        let tags = self.record.tag_map()?;
        let scratch = self.target.is_dir().then(|| scratch_file(&self.target));
        // Every layer locked, what a killed run left put back, the
        // originals saved: before anything changes.
        let mut tuning = Tuning::begin(&self.state_dir, &self.target, scratch)?;
        for note in tuning.earlier.notes() {
            eprintln!("storlab: {note}");
        }
        let stop = crate::commands::signals::Signals::install()?;
        let now = storlab_types::time::now_rfc3339();
        let tune_id = storlab_tune::child::tune_id(&now, std::process::id());
        let result = self.measure(&tuning, &values, &stop, &tune_id, &tags);
        // Restore on every path: success, error and signal.
        let restore = tuning.finish();
        let (points, noise) = result?;
        let restore = restore?;
        for d in &restore.dropped {
            crate::output::warn(&d.to_string());
        }
        // The table shows no run ids: the store is read for JSON only.
        let ids = if self.out.format() == TableFormat::Json {
            self.run_ids(&points, &tune_id)
        } else {
            Vec::new()
        };
        let params = TuneParams {
            target: &self.target,
            tune_id: &tune_id,
            runtime: &self.runtime,
            streams: self.streams,
            db: (!self.no_save).then_some(self.db.db.as_path()),
        };
        let doc = TuneDoc::new(params, &tuning, (&points, noise), &ids, &restore.restored);
        let doc = crate::output::Rendered::new(
            doc.render_text(crate::commands::common::result_table()),
            crate::output::json_text(&doc)?,
        );
        let mut reply = Reply::doc(doc, self.out.rendering());
        reply.outcome = storlab_tune::measure::outcome(&points, stop.requested());
        Ok(reply)
    }

    /// One cold-cache streaming read per value, and the best two again:
    /// child benches run by [`storlab_tune::child::measure`].
    fn measure(
        &self,
        tuning: &Tuning,
        values: &[u64],
        stop: &crate::commands::signals::Signals,
        tune_id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(Vec<Point>, Option<storlab_tune::NoiseDoc>)> {
        let exe = std::env::current_exe().context("cannot find storlab itself")?;
        let job = ReadJob {
            target: &self.target,
            size: self.size.map(|s| s.0),
            streams: self.streams,
            runtime: &self.runtime,
            tune_id,
            tags,
            note: self.record.note(),
            db: (!self.no_save).then_some(self.db.db.as_path()),
        };
        let front = storlab_tune::child::Front {
            exe: &exe,
            stopped: &|| stop.requested(),
            say: &mut |line| eprintln!("{line}"),
        };
        let ram = storlab_host::host_info().mem_total_bytes;
        Ok(storlab_tune::child::measure(
            tuning, values, job, ram, front,
        )?)
    }

    /// The stored run of each point ([`storlab_tune::doc::run_ids`]); none
    /// with `--no-save` or when nothing was stored.
    fn run_ids(&self, points: &[Point], tune_id: &str) -> Vec<Option<i64>> {
        let runs: Vec<StoredRun> = if self.no_save {
            Vec::new()
        } else {
            self.db
                .open_existing()
                .and_then(|st| {
                    Ok(st.select(
                        &[RunSelector::Tags(vec![("tune_id".into(), tune_id.into())])],
                        false,
                    )?)
                })
                .unwrap_or_default()
        };
        let runs = runs.into_iter().map(|r| {
            let kb = r.tags.get("readahead_kb").cloned();
            (r.id, kb)
        });
        storlab_tune::doc::run_ids(points, runs.collect())
    }
}
