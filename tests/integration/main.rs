//! storlab's one integration test binary: runs the real `storlab` CLI.
//! Each module covers one subcommand; tests that need root, io_uring, a loop
//! device or a Debian tool probe for it and print why they skip.

mod bench;
mod campaign;
mod cli;
mod cluster_flags;
mod honest;
mod inspect;
mod monitor;
#[cfg(feature = "mpi")]
mod mpi;
mod plan;
mod reports;
mod store;
mod util;
