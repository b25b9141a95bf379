//! `storlab bench` (work in progress).
use clap::Args;

#[derive(Args, Debug, Default)]
pub struct BenchCommand {}

impl BenchCommand {
    pub fn quick_default() -> Self {
        Self::default()
    }
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        anyhow::bail!("bench is not built yet")
    }
}
