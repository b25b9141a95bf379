//! `storlab bench` launched by `mpirun` or `srun` (cargo feature `mpi`):
//! every rank runs the job on its node, phases start together, rank 0
//! prints and stores the aggregate. The run itself, rank by rank, is
//! [`storlab_cluster::bench::run::run_bench`]; here are the flags it reads
//! and the front end it drives ([`BenchFront`]: the store, the live line,
//! the signals, the printing).
//!
//! A panic on the thread that calls MPI would leave the other ranks
//! waiting in a collective step for ever: under MPI a panic hook prints it
//! (rank-tagged) and calls `MPI_Abort`, so `mpirun` ends every rank.
//! Panics on worker threads are already a phase error every rank agrees on.

use super::cluster_args::ClientsBy;
use super::{BenchCommand, Live, OutputFormat, Signals, Sink};
use crate::Outcome;
use crate::commands::outfile::Permit;
use anyhow::{Result, anyhow};
use std::path::Path;
use std::sync::Arc;
use storlab_bench::Control;
use storlab_cluster::bench::run::{BenchFront, ClusterRun, run_bench};
use storlab_cluster::bench::{Ranks, SyncOptions};
use storlab_cluster::step::Failed;
use storlab_print::bench::render_table;
use storlab_print::cluster::render_cluster;
use storlab_types::RunKind;
use storlab_types::{BenchReport, CacheMode, PhaseResult, RepeatInfo};

/// Whether this process was started by an MPI launcher.
pub fn launched() -> bool {
    storlab_cluster::launched()
}

/// The exit code of every rank when one panicked (a hard error).
const PANIC_EXIT: i32 = 2;

/// `storlab bench` under MPI: the whole run on every rank.
pub fn execute(cmd: BenchCommand, planned: Result<super::PlannedJob>) -> Result<Outcome> {
    let run = cluster_run(&cmd);
    let mut front = Front {
        cmd: &cmd,
        signals: None,
        json_out: None,
    };
    let code = storlab_cluster::mpi::launch(
        Some(PANIC_EXIT),
        |comm| {
            let node = storlab_cluster::mpi::node_name();
            let mem_here = storlab_host::host_info().mem_total_bytes;
            let world = Ranks::exchange(comm, &node, mem_here);
            run_bench(&world, planned.map_err(Failed::of), &run, &mut front)
        },
        |why| crate::output::print_error(&anyhow!("{why}")),
    )?;
    Ok(Outcome::from_exit_code(code))
}

/// The run-level flags, as the ranks' run reads them.
fn cluster_run(cmd: &BenchCommand) -> ClusterRun {
    let by = cmd.cluster.clients_by.unwrap_or_default();
    ClusterRun {
        clients: cmd.cluster.clients.clone().map(|c| c.0),
        by_node: matches!(by, ClientsBy::Node),
        sync: SyncOptions {
            reorder: cmd.cluster.reorder_tasks,
            stonewall: cmd.cluster.stonewall,
            wear_out: cmd.cluster.stonewall_wear_out,
            clients_by: by.as_str().into(),
        },
        repeat: cmd.repeat,
        keep: cmd.run.keep,
        allow_destroy: cmd.run.allow_destroy,
        monitor: cmd.run.monitor,
        quiet: cmd.run.quiet,
        host_label: crate::commands::config::get()
            .ok()
            .and_then(|c| c.host.clone()),
        tags: cmd.run.record.tags.clone(),
        note: cmd.run.record.note.clone(),
        design: cmd.run.record.design.clone(),
        iolog: cmd.write_iolog.clone(),
    }
}

/// The front end of one rank: the command's flags, its signals and rank
/// 0's `--json-out` permit.
struct Front<'a> {
    cmd: &'a BenchCommand,
    signals: Option<Signals>,
    json_out: Option<Permit>,
}

impl Front<'_> {
    fn table(&self) -> bool {
        matches!(self.cmd.run.out.format(), OutputFormat::Table)
    }
}

impl BenchFront for Front<'_> {
    type Sink = Sink;
    type Live = Option<Live>;

    fn check_outputs(&mut self, target: Option<&Path>) -> Result<(), Failed> {
        self.json_out = super::check_paths(target, &self.cmd.run).map_err(Failed::of)?;
        Ok(())
    }

    fn watch_signals(&mut self) -> Result<(), Failed> {
        self.signals = Some(Signals::install().map_err(Failed::of)?);
        Ok(())
    }

    fn open_sink(&mut self, extra: &[(&str, String)]) -> Result<Sink, Failed> {
        let mut sink = super::open_sink_tagged(&self.cmd.run, extra).map_err(Failed::of)?;
        sink.json_out_to(self.json_out.clone());
        Ok(sink)
    }

    fn begin(&mut self, sink: &mut Sink, header: &BenchReport) -> Result<(), Failed> {
        sink.begin(RunKind::Bench, header).map_err(Failed::of)
    }

    fn phase(&mut self, sink: &mut Sink, phase: &PhaseResult) {
        sink.phase(phase);
    }

    fn live_start(
        &mut self,
        control: &Arc<Control>,
        phases: Vec<String>,
        quiet: bool,
    ) -> Option<Live> {
        let signals = self.signals.clone()?;
        Some(Live::start(Arc::clone(control), signals, quiet, phases))
    }

    fn live_stop(&mut self, live: Option<Live>) {
        if let Some(live) = live {
            live.stop();
        }
    }

    fn cache_warnings(&self, file: &Path, modes: &[CacheMode]) -> Vec<String> {
        let found = storlab_monitor::page_cache::page_cache_only(file, modes);
        found.map(|w| w.to_string()).into_iter().collect()
    }

    fn repeat_starts(&mut self, i: &RepeatInfo) {
        if self.table() {
            let _ = crate::output::print(&format!("Repeat {} of {}\n", i.index, i.count));
        }
    }

    fn emit(
        &mut self,
        report: BenchReport,
        mut sink: Sink,
        repeat: Option<&RepeatInfo>,
    ) -> (u8, Option<i64>) {
        // Under --repeat with JSON output, the one document comes at the end.
        let print = repeat.is_none() || self.table();
        let signal = self.signals.as_ref().and_then(Signals::received);
        match emit_cluster(report, &self.cmd.run, &mut sink, signal, print) {
            Ok((out, id)) => (out.exit_code(), id),
            Err(e) => {
                crate::output::print_error(&e);
                (Outcome::Error.exit_code(), None)
            }
        }
    }

    fn repeats_done(&mut self, group: &str, count: u32, reports: &[BenchReport]) {
        let _ = super::repeat::print_ior_summary(&self.cmd.run, group, count, reports);
    }

    fn iologs_written(&mut self, files: &[std::path::PathBuf]) {
        eprintln!("storlab: {}", storlab_cluster::bench::iolog::written(files));
    }

    fn counts_done(&mut self, runs: &[(BenchReport, Option<i64>)]) {
        let rows = storlab_print::cluster::clients_rows(runs);
        let _ = crate::output::print(&format!(
            "Clients (one stored run per count):\n{}",
            storlab_print::cluster::render_clients(&rows)
        ));
    }
}

/// The usual output of a run with the cluster table after it, then the
/// warnings (every rank's, each once, naming the ranks): never between
/// the two tables.
fn emit_cluster(
    report: BenchReport,
    args: &super::RunArgs,
    sink: &mut Sink,
    signal: Option<i32>,
    print: bool,
) -> Result<(Outcome, Option<i64>)> {
    // -q: one screen, whatever the number of ranks.
    let quiet = args.quiet && matches!(args.out.format(), OutputFormat::Table);
    let summary = (print && quiet).then(|| storlab_print::cluster::render_quiet(&report));
    let flags = (signal, print && !quiet);
    let table = |r: &BenchReport| format!("{}{}", render_table(r), render_cluster(r));
    let (out, _) = crate::commands::run::emit(report, args, sink, flags, table)?;
    if let Some(text) = summary {
        let saved = sink
            .run_id()
            .map(|id| format!("Saved as run {id} (storlab show {id}).\n"))
            .unwrap_or_default();
        crate::output::print(&format!("{text}{saved}"))?;
    }
    Ok((out, sink.run_id()))
}
