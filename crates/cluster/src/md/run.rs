//! `storlab md` on every rank of a multi-client run, behind the front
//! end's store, progress line and printing ([`MdFront`]). What each rank
//! does, in order:
//!
//! 1. exchanges a digest of the job it resolved (the job, the target's
//!    real path, the storlab version) before anything is made: ranks that
//!    disagree are refused, rank 0 saying why;
//! 2. rank 0 checks the output paths, opens the store and makes storlab's
//!    own directory ([`MdFront::prepare`]); every rank checks it can see it
//!    (a shared file system);
//! 3. runs [`storlab_md::run`] with [`CommSync`] (barrier, all-gather of
//!    the create counts, agreement on errors and stops); after each
//!    measured phase every rank sends its figures, histogram included, to
//!    rank 0, which merges them exactly and saves the phase at once;
//! 4. rank 0 removes everything (unless `--keep`) and hands the run to the
//!    front end.

use super::{CommSync, gather};
use crate::comm::Comm;
use crate::step::{Failed, RankStop};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_md::{Control, MdError, MdSpec, Posix, RankPhase, Tree, record};
use storlab_types::PhaseResult;
use storlab_types::time::now_rfc3339;

/// What the front end does around a multi-client md run.
pub trait MdFront {
    /// Rank 0's run: its store and header.
    type Run;
    /// Rank 0, before anything runs: the output paths checked, the store
    /// opened, storlab's own directory made in `target`, the header saved.
    fn prepare(&mut self, target: &Path) -> Result<(PathBuf, Self::Run), Failed>;
    /// Every rank: watch for signals from now on.
    fn watch_signals(&mut self) -> Result<(), Failed>;
    /// The progress line (shown only when not `quiet`); it also turns a
    /// signal into a stop through `control`.
    fn watch_start(&mut self, control: &Arc<Control>, quiet: bool);
    fn watch_stop(&mut self);
    /// Rank 0: one merged phase, saved at once.
    fn phase(&mut self, run: &mut Self::Run, phase: &PhaseResult);
    /// Rank 0: remove storlab's directory and everything in it.
    fn remove(&mut self, dir: &Path);
    /// Rank 0: the run's report (from its merged `phases` and rank 0's own
    /// `ran`) stored, written and shown; its exit code. `ends`: whether
    /// the files are kept, and why the ranks stopped if some rank was
    /// interrupted (rank 0's reason, else the first other rank's, naming
    /// it).
    fn finish(
        &mut self,
        run: Self::Run,
        phases: Vec<PhaseResult>,
        ran: Result<Vec<RankPhase>, MdError>,
        control: &Control,
        ends: (bool, Option<String>),
    ) -> Result<u8, Failed>;
}

/// The whole md run on this rank (collective): rank 0's exit code, or
/// the step that stopped every rank.
pub fn run_md<C: Comm, F: MdFront>(
    comm: &C,
    (spec, tree): (&MdSpec, &Tree),
    target: &Path,
    (keep, quiet): (bool, bool),
    front: &mut F,
) -> Result<u8, RankStop> {
    let sync = CommSync(comm);
    let digest = storlab_md::agree::job_digest(spec, target);
    let (lo, hi) = comm.min_max(digest);
    if lo != hi {
        return Err(RankStop::at_root(
            comm,
            Failed(format!(
                "the {} ranks resolved different md jobs (job digests {lo:016x} to {hi:016x}): every rank \
                 must get the same options, target and storlab version; nothing was created",
                comm.size()
            )),
        ));
    }
    // Rank 0 checks the outputs, opens the store, makes the directory.
    let mut made = None;
    let mut why = Failed(String::new());
    if comm.root() {
        match front.prepare(target) {
            Ok(m) => made = Some(m),
            Err(e) => why = e,
        }
    }
    let signals = front.watch_signals();
    let run_dir = PathBuf::from(
        comm.broadcast_string(
            &made
                .as_ref()
                .map(|m| m.0.display().to_string())
                .unwrap_or_default(),
        ),
    );
    if run_dir.as_os_str().is_empty() {
        return Err(RankStop::at_root(comm, why));
    }
    // Every rank takes part in the check, whatever its own signals did.
    if !comm.all(signals.is_ok() && run_dir.is_dir()) {
        if let Some((dir, _)) = &made {
            front.remove(dir);
        }
        return Err(RankStop::at_root(
            comm,
            Failed(format!(
                "not every rank can see {} (or install its signal handlers): md under MPI needs TARGET on \
                 a file system every node mounts at the same path",
                run_dir.display()
            )),
        ));
    }
    let control = Arc::new(Control::new());
    front.watch_start(&control, quiet || !comm.root());
    let mut phases = Vec::new();
    let result = {
        let mut run = made.as_mut().map(|m| &mut m.1);
        storlab_md::run(&Posix, spec, &run_dir, &sync, &control, |p| {
            let parts = gather(comm, p);
            if let (Some(r), false) = (run.as_mut(), parts.is_empty()) {
                let ph = record::phase_result(spec, tree, &parts, now_rfc3339());
                front.phase(r, &ph);
                phases.push(ph);
            }
        })
    };
    front.watch_stop();
    // Collective; at rank 0, Some exactly when some rank was stopped.
    let why = comm.stop_reason(control.stop_reason());
    comm.barrier();
    let Some((dir, run)) = made else {
        return Ok(0);
    };
    let keep = keep && why.is_none();
    if !keep {
        front.remove(&dir);
    }
    front
        .finish(run, phases, result, &control, (keep, why))
        .map_err(RankStop::Report)
}
