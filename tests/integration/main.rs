//! storlab's one integration test binary: runs the real `storlab` CLI.
//! Each module covers one subcommand; tests that need root, io_uring, a loop
//! device or a Debian tool probe for it and print why they skip.

mod architecture;
mod behaviour;
mod bench;
mod bench_help;
mod calib3;
// the merge model: device counters per phase (issue 24)
mod calib4;
// the host centre: a per-call cost shared by a call's requests (issue 24)
mod cachemode;
mod calib5;
mod calib_holdout;
mod campaign;
mod charts;
mod cli;
mod cluster_flags;
mod compare;
mod design;
mod dist;
mod engine_depth;
// issue 22, fourth round: the depth's shortfall in parts that add up
mod engine4;
mod fiohabits;
mod fioout;
mod forks;
// fio job files (issue 27)
mod fiojob;
mod fiojob3;
mod fioverify;
mod granks;
mod groups;
mod groups3;
// verify inside job groups (issue 27)
mod groups_more;
mod grpverify;
mod honest;
mod inspect;
mod io500;
#[cfg(feature = "mpi")]
mod io500_mpi;
mod io500_run;
mod io500c;
#[cfg(feature = "mpi")]
mod io500c2;
mod md;
#[cfg(feature = "mpi")]
mod md_mpi;
mod mdext4;
mod model;
mod model_mech;
mod monitor;
mod monitor_totals;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
mod mpi_agree;
mod plan;
mod plan_documents;
// typical ranges beside bounds; the shipped sim examples (issue 24)
mod ranges;
mod record;
mod replay;
mod replay2;
// replay, third round (issue 26)
mod replay3;
// replay, fourth round (issue 26)
mod replay4;
mod replay5;
#[cfg(feature = "mpi")]
mod replay_mpi;
mod reports;
mod run_documents;
mod safety;
mod safety_devices;
mod safety_inputs;
mod safety_monitor;
mod safety_outputs;
mod safety_tune_campaign;
mod seams;
#[cfg(feature = "mpi")]
mod seams_mpi;
mod sim;
mod store;
mod sweep;
mod thin3;
mod thin_commands;
mod trace;
mod trim;
mod typed;
mod util;
mod vocab_bounds;
mod vocabulary;
// fio's strided zones (issue 27)
mod zbd;
mod zones;
