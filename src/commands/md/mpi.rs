//! `storlab md` launched by `mpirun` or `srun` (cargo feature `mpi`):
//! every rank works in its own tree (`-u`) or all in one shared tree,
//! phases start together at a barrier, and rank 0 prints and stores the
//! aggregate with every rank's count and rate. The run itself, rank by
//! rank, is [`storlab_cluster::md::run::run_md`]; here is the front end
//! it drives ([`MdFront`]: the store, the progress line, the signals,
//! the printing).

use super::{Live, MdCommand, Signals, Sink, emit, host, remove_run_dir, watch};
use crate::Outcome;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_cluster::md::run::{MdFront, run_md};
use storlab_cluster::step::Failed;
use storlab_md::session::final_report;
use storlab_md::{Control, MdError, MdSpec, RankPhase, Tree};
use storlab_types::RunKind;
use storlab_types::{BenchReport, PhaseResult};

/// `storlab md` under MPI: the whole run on every rank.
pub fn execute(cmd: MdCommand, spec: MdSpec, tree: Tree) -> Result<Outcome> {
    let target = cmd.target().to_path_buf();
    let flags = (cmd.run.keep, cmd.run.quiet);
    let mut front = Front {
        cmd: &cmd,
        spec: &spec,
        signals: None,
        watcher: None,
    };
    let code = storlab_cluster::mpi::launch(
        None,
        |comm| run_md(comm, (&spec, &tree), &target, flags, &mut front),
        |why| crate::output::print_error(&anyhow!("{why}")),
    )?;
    Ok(Outcome::from_exit_code(code))
}

/// The front end of one rank.
struct Front<'a> {
    cmd: &'a MdCommand,
    spec: &'a MdSpec,
    signals: Option<Signals>,
    watcher: Option<Live>,
}

impl MdFront for Front<'_> {
    /// Rank 0's store and the run's header.
    type Run = (BenchReport, Sink);

    fn prepare(&mut self, target: &Path) -> Result<(PathBuf, Self::Run), Failed> {
        prepare(self.cmd, target).map_err(Failed::of)
    }

    fn watch_signals(&mut self) -> Result<(), Failed> {
        self.signals = Some(Signals::install().map_err(Failed::of)?);
        Ok(())
    }

    fn watch_start(&mut self, control: &Arc<Control>, quiet: bool) {
        if let Some(signals) = &self.signals {
            let c = Arc::clone(control);
            self.watcher = Some(watch(c, signals.clone(), self.spec, quiet));
        }
    }

    fn watch_stop(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.stop();
        }
    }

    fn phase(&mut self, run: &mut Self::Run, phase: &PhaseResult) {
        run.1.phase(phase);
    }

    fn remove(&mut self, dir: &Path) {
        remove_run_dir(dir);
    }

    fn finish(
        &mut self,
        (header, mut sink): Self::Run,
        phases: Vec<PhaseResult>,
        ran: Result<Vec<RankPhase>, MdError>,
        control: &Control,
        (keep, why): (bool, Option<String>),
    ) -> Result<u8, Failed> {
        let ran = ran.map_err(|e| Failed::of(anyhow::Error::from(e)))?;
        let mut report = final_report(header, phases, &ran, control, keep);
        if let Some(why) = why.filter(|_| report.stop_reason.is_none()) {
            report.interrupted = true;
            report.stop_reason = Some(why);
        }
        let signal = self.signals.as_ref().and_then(Signals::received);
        let outcome = emit(report, &self.cmd.run, &mut sink, signal).map_err(Failed::of)?;
        Ok(outcome.exit_code())
    }
}

/// Rank 0's part before anything runs: paths, store, storlab's directory,
/// the run's header saved.
fn prepare(cmd: &MdCommand, target: &Path) -> Result<(PathBuf, (BenchReport, Sink))> {
    let json_out = crate::commands::run::check_paths(Some(target), &cmd.run)?;
    let mut sink = crate::commands::run::open_sink_tagged(&cmd.run, &[])?;
    sink.json_out_to(json_out);
    let (dir, info) = storlab_bench::own_run_dir(target)?;
    let header = BenchReport::new(host()?, info);
    if let Err(e) = sink.begin(RunKind::Md, &header) {
        remove_run_dir(&dir);
        return Err(e);
    }
    Ok((dir, (header, sink)))
}
