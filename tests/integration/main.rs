//! storlab's one integration test binary: runs the real `storlab` CLI.
//! Each module covers one subcommand; tests that need root, io_uring, a loop
//! device or a Debian tool probe for it and print why they skip.

mod bench;
mod campaign;
mod cli;
mod honest;
mod inspect;
mod monitor;
mod plan;
mod reports;
mod sim;
mod store;
mod util;
