//! `storlab replay TRACE TARGET`: an application's recorded I/O (fio iolog,
//! Darshan DXT, blktrace) issued again on the storage under test, rank by
//! rank, with its recorded timing or as fast as it goes
//! (`storlab_replay`), stored as a run of kind `replay`.
//!
//! Started by an MPI launcher with several processes (`mpirun -np N
//! storlab replay ...`, build feature `mpi`), trace rank r is replayed by
//! MPI rank r (`storlab_cluster::replay`): rank 0 lays out, gathers,
//! stores and prints; the other ranks stay quiet and exit with its code.

use super::common::{DbArgs, RecordArgs};
use super::outfmt::{OutputArgs, TableFormat};
use super::signals::{Signals, signal_name};
use crate::output::{self, Document, Reply};
use clap::Args;
use std::path::PathBuf;
use storlab_replay::{Fadvise, PathMap, ReplayResult, Speed, prepare, replay};
use storlab_trace::OpenOptions;

#[derive(Args, Debug)]
pub struct ReplayCommand {
    /// The trace: a fio iolog (v2 or v3), a Darshan log with DXT data (.darshan) or a blktrace per-CPU file
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// A directory (storlab lays the traced files out in its own subdirectory), or a block device
    #[arg(value_name = "TARGET")]
    target: PathBuf,
    /// original (each operation at its recorded start), max (as fast as each rank's order allows) or a factor (2 = twice as fast)
    #[arg(long, value_name = "SPEED", default_value = "original")]
    speed: String,
    /// Where traced files go under TARGET: FROM=TO replaces a path prefix (repeatable; with --map every traced file needs a rule)
    #[arg(long = "map", value_name = "FROM=TO")]
    maps: Vec<String>,
    /// Replay only the trace's ranks 0 to N-1 (as threads; under MPI, by MPI ranks 0 to N-1); N above the trace's ranks is refused
    #[arg(long, value_name = "N")]
    ranks: Option<u32>,
    /// Page-cache hint for each replayed file: normal (none: the kernel's read-ahead, as recorded), sequential (what fio's read_iolog gives) or random (no read-ahead)
    #[arg(long, value_name = "HINT", default_value = "normal", value_parser = Fadvise::parse)]
    fadvise: Fadvise,
    /// Keep the laid-out files afterwards
    #[arg(long)]
    keep: bool,
    /// Let a trace that writes replay onto a block device TARGET (destroys its contents)
    #[arg(long)]
    allow_destroy: bool,
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
        if let Some(n) = crate::commands::run::launcher_size()
            && n > 1
        {
            return self.execute_mpi(speed, &map, &tags, &opts);
        }
        // Every refusal comes before the store or the target is touched.
        let mut layout = prepare(&self.trace, &opts, &map)?;
        if let Some(n) = self.ranks {
            layout.select_ranks(n)?;
        }
        let place = storlab_replay::prepare::place(layout, &self.target, self.allow_destroy)?;
        let store = self.db.open()?;
        let signals = Signals::install()?;
        let mut prep = place.lay_out(&self.target, &|| signals.requested())?;
        prep.fadvise = self.fadvise;
        let done = replay(&prep, &opts, speed, &|| signals.requested());
        self.remove(&prep);
        let result = done?;
        self.reply(&store, &tags, &prep, result, &signals)
    }

    /// Remove the laid-out files unless `--keep`.
    fn remove(&self, prep: &storlab_replay::Prepared) {
        if let Err(e) = prep.remove(self.keep) {
            output::warn(&e);
        }
    }

    /// Store the replay and show it.
    fn reply(
        &self,
        store: &storlab_store::Store,
        tags: &std::collections::BTreeMap<String, String>,
        prep: &storlab_replay::Prepared,
        result: ReplayResult,
        signals: &Signals,
    ) -> anyhow::Result<Reply> {
        let mut report = result.to_report(prep, storlab_host::host_info());
        report.target.kept = self.keep;
        if let Some(sig) = signals.received() {
            report.stop_reason = Some(format!("interrupted by {}", signal_name(sig)));
        }
        // A replay the store cannot take is kept whole in a file, never lost.
        let run_id = match store.save_run(
            storlab_types::RunKind::Replay,
            &report,
            tags,
            self.record.note(),
        ) {
            Ok(id) => id,
            Err(e) => {
                let json = output::json_text(&report)?;
                return match super::run::write_fallback(&json) {
                    Ok(p) => Err(anyhow::anyhow!(
                        "{e:#}: the replay's full record is in {} (storlab import it later)",
                        p.display()
                    )),
                    Err(f) => Err(anyhow::anyhow!(
                        "{e:#}; the replay's record could not be kept either: {f:#}"
                    )),
                };
            }
        };
        let interrupted = result.interrupted;
        let mut reply = Reply::doc(
            Replayed {
                run_id,
                trace: self.trace.display().to_string(),
                result,
                report,
            },
            self.out.rendering(),
        );
        if interrupted {
            reply.outcome = crate::Outcome::Interrupted;
        }
        Ok(reply)
    }
}

#[cfg(not(feature = "mpi"))]
impl ReplayCommand {
    fn execute_mpi(
        self,
        _: Speed,
        _: &PathMap,
        _: &std::collections::BTreeMap<String, String>,
        _: &OpenOptions,
    ) -> anyhow::Result<Reply> {
        anyhow::bail!(
            "storlab replay was started by an MPI launcher with several processes, but this build has no MPI \
             support: build with `cargo build --release --features mpi`, or run one process (ranks as threads)"
        )
    }
}

#[cfg(feature = "mpi")]
impl ReplayCommand {
    /// Under MPI: this process replays its own trace rank; rank 0 stores
    /// and prints, every rank exits with rank 0's code.
    fn execute_mpi(
        self,
        speed: Speed,
        map: &PathMap,
        tags: &std::collections::BTreeMap<String, String>,
        opts: &OpenOptions,
    ) -> anyhow::Result<Reply> {
        use storlab_cluster::replay::{Failure, Job, run};
        use storlab_cluster::step::{Failed, RankStop};
        let signals = Signals::install()?;
        let job = Job {
            trace: &self.trace,
            opts,
            map,
            speed,
            ranks: self.ranks,
            target: &self.target,
            fadvise: self.fadvise,
        };
        let mut shown = None;
        let code = storlab_cluster::mpi::launch(
            None,
            |comm| {
                let mut store = None;
                let done = run(comm, &job, &|| signals.requested(), &mut || {
                    storlab_replay::prepare::check_target(&self.target)
                        .map_err(|e| e.to_string())?;
                    store = Some(self.db.open().map_err(|e| format!("{e:#}"))?);
                    Ok(())
                });
                match (done, &store) {
                    (Ok(Some((prep, result))), Some(store)) => {
                        self.remove(&prep);
                        let reply = self
                            .reply(store, tags, &prep, result, &signals)
                            .map_err(|e| RankStop::Report(Failed::of(e)))?;
                        let code = reply.outcome.exit_code();
                        shown = Some(reply);
                        Ok(code)
                    }
                    (Ok(_), _) => Ok(crate::Outcome::Ok.exit_code()),
                    (Err(Failure::Quiet), _) => Err(RankStop::Quiet),
                    (Err(e), _) => Err(RankStop::Report(Failed::of(e))),
                }
            },
            |why| output::print_error(&anyhow::anyhow!("{why}")),
        )?;
        // Only rank 0 has something to show; every rank exits with its code.
        Ok(shown.unwrap_or_else(|| Reply::done(crate::Outcome::from_exit_code(code))))
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
