//! [`Comm`] over rsmpi (feature `mpi`): MPI is initialised once per
//! process ([`Mpi::init`]) and finalised when [`Mpi::finish`] runs.
//!
//! A panic on the thread that calls MPI would leave the other ranks
//! waiting in a collective step for ever: [`Mpi::abort_on_panic`] installs
//! a hook that prints it (rank-tagged) and calls `MPI_Abort`, so `mpirun`
//! ends every rank. Panics on worker threads are only printed (their join
//! turns them into a phase error every rank agrees on).

use crate::comm::Comm;
use crate::step::{Failed, RankStop};
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::io::Write;

/// MPI could not be started.
#[derive(Debug, thiserror::Error)]
#[error("MPI could not be initialised (already initialised?)")]
pub struct InitError;

/// MPI, initialised: the world communicator and the universe that
/// finalises MPI when dropped (after the communicator).
pub struct Mpi {
    comm: MpiComm,
    universe: Universe,
    hooked: bool,
}

/// The world communicator.
pub struct MpiComm {
    comm: SimpleCommunicator,
    rank: u32,
    size: u32,
}

impl Mpi {
    /// `MPI_Init_thread` with `MPI_THREAD_FUNNELED` (only the calling
    /// thread talks to MPI).
    pub fn init() -> Result<Mpi, InitError> {
        let (universe, _) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or(InitError)?;
        let comm = universe.world();
        let rank = comm.rank() as u32;
        let size = comm.size() as u32;
        Ok(Mpi {
            comm: MpiComm { comm, rank, size },
            universe,
            hooked: false,
        })
    }

    /// The world communicator.
    pub fn comm(&self) -> &MpiComm {
        &self.comm
    }

    /// From now until [`Mpi::finish`], a panic on this thread ends the
    /// whole job with `MPI_Abort(exit_code)`.
    pub fn abort_on_panic(&mut self, node: &str, exit_code: i32) {
        install_panic_abort(self.comm.rank, node, exit_code);
        self.hooked = true;
    }

    /// `MPI_Finalize` (the default panic hook again first: no `MPI_Abort`
    /// once MPI is finalised).
    pub fn finish(self) {
        let Mpi {
            comm,
            universe,
            hooked,
        } = self;
        drop(comm);
        if hooked {
            drop(std::panic::take_hook());
        }
        drop(universe);
    }
}

/// One MPI job from this process's side, for bench and md alike: MPI
/// up (with `abort_on_panic`, a panic on this thread ends every rank with
/// that exit code), `body` on the world communicator, rank 0's error
/// handed to `report` before the broadcast of its exit code releases the
/// others ([`crate::step::end`]), MPI finalised. Every rank returns rank
/// 0's exit code.
pub fn launch(
    abort_on_panic: Option<i32>,
    body: impl FnOnce(&MpiComm) -> Result<u8, RankStop>,
    report: impl FnOnce(&Failed),
) -> Result<u8, InitError> {
    let mut mpi = Mpi::init()?;
    if let Some(code) = abort_on_panic {
        mpi.abort_on_panic(&node_name(), code);
    }
    let r = body(mpi.comm());
    let code = crate::step::end(mpi.comm(), r, report);
    mpi.finish(); // the default panic hook again, then MPI_Finalize
    Ok(code)
}

/// This node's name: `STORLAB_MPI_NODE` (so tests can pretend to be
/// several nodes), else MPI's processor name.
pub fn node_name() -> String {
    std::env::var("STORLAB_MPI_NODE")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| mpi::environment::processor_name().ok())
        .unwrap_or_else(|| "?".into())
}

impl Comm for MpiComm {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn barrier(&self) {
        self.comm.barrier();
    }
    fn broadcast_u64(&self, value: u64) -> u64 {
        let mut v = value;
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v
    }
    fn broadcast_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let root = self.comm.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.root() {
            bytes.to_vec()
        } else {
            vec![0u8; usize::try_from(len).unwrap_or(0)]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }
    fn all_gather_u64(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; values.len() * self.size as usize];
        self.comm.all_gather_into(values, &mut out[..]);
        out
    }
    fn gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        if !self.root() {
            self.comm.process_at_rank(0).send(bytes);
            return Vec::new();
        }
        let mut out = vec![bytes.to_vec()];
        for r in 1..self.size {
            let (b, _) = self.comm.process_at_rank(r as i32).receive_vec::<u8>();
            out.push(b);
        }
        out
    }
    fn max_u64(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; values.len()];
        self.comm
            .all_reduce_into(values, &mut out[..], SystemOperation::max());
        out
    }
    fn min_u64(&self, value: u64) -> u64 {
        let mut out = 0u64;
        self.comm
            .all_reduce_into(&value, &mut out, SystemOperation::min());
        out
    }
}

fn install_panic_abort(rank: u32, node: &str, exit_code: i32) {
    let main = std::thread::current().id();
    let node = node.to_string();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let on_main = thread.id() == main;
        let name = thread.name().unwrap_or("unnamed").to_string();
        // Written without eprintln!, which would panic again (an abort
        // without MPI_Abort) if stderr were gone.
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "storlab: rank {rank} on {node}: internal error: panic in thread {name}{at}: {what}"
        );
        if on_main && mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            let _ = writeln!(
                err,
                "storlab: rank {rank} on {node}: aborting every rank (MPI_Abort) so the job does not hang; \
                 please report this bug"
            );
            SimpleCommunicator::world().abort(exit_code);
        }
    }));
}
