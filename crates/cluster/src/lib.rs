//! `storlab-cluster`: the communicator layer of multi-client runs.
//!
//! One [`Comm`] (rank, size, barrier, broadcast, all-gather, gather to
//! rank 0, any/all) with two implementations: `mpi::MpiComm` over rsmpi
//! (feature `mpi`) and [`local::LocalComm`] (ranks as threads of one
//! process, or one rank alone) for tests. On it sit what bench and md
//! need from their ranks:
//!
//! - [`bench`](mod@bench): [`bench::Ranks`] (the communicator with every rank's node
//!   and RAM), [`bench::ClusterSync`] (bench's `PhaseSync`: the phase start
//!   barriers, the 20 ms reductions, the per-phase gather and merge at rank
//!   0), the target message rank 0 broadcasts, each rank's local job;
//! - [`md`]: [`md::CommSync`] (md's `RankSync` over any `Comm`) and the
//!   exact gather of each rank's phase figures to rank 0;
//! - [`replay`]: `storlab replay` with one trace rank per rank (the job
//!   agreed, the files laid out by rank 0, one start, the figures merged);
//! - [`bench::run`] and [`md::run`]: the whole multi-client run of each on
//!   every rank, behind the front end's store, live line and printing
//!   (`BenchFront`, `MdFront`); [`step`]: a failed collective step (rank 0
//!   says why) and every rank's end with rank 0's exit code.
//!
//! The front end decides that it runs under a launcher, opens the store,
//! prints; everything between ranks is here. Nothing here prints except
//! the MPI panic hook, which must write before `MPI_Abort`.
#![forbid(unsafe_code)]

pub mod bench;
pub mod comm;
pub mod local;
pub mod md;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod replay;
pub mod step;

pub use comm::Comm;
pub use local::LocalComm;

/// Whether this process was started by an MPI launcher (`mpirun`, `srun`,
/// a PMI/PMIx process manager).
pub fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "PMI_SIZE",
        "PMI_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}
