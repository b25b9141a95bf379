//! One module per subcommand: each defines `<Sub>Command` (clap args) and
//! `fn execute(self) -> anyhow::Result<crate::Outcome>`.

pub mod bench;
pub mod inspect;
pub mod monitor;
pub mod plan;
