//! One module per subcommand: each defines `<Sub>Command` (clap args) and
//! `fn execute(self) -> anyhow::Result<crate::Outcome>`.

pub mod bench;
pub mod campaign;
pub mod check;
pub mod common;
pub mod compare;
pub mod completions;
pub mod config;
pub mod export;
pub mod import;
pub mod inspect;
pub mod io500;
pub mod man;
pub mod md;
pub mod monitor;
pub mod outfile;
pub mod outfmt;
pub mod plan;
pub mod profiles;
pub mod replay;
pub mod report;
pub mod run;
pub mod runs;
pub mod show;
pub mod signals;
pub mod sim;
pub mod sweep;
pub mod trace;
pub mod tune;
pub mod workload;
