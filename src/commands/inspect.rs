//! `storlab inspect` (in progress).
use clap::Args;

#[derive(Args, Debug)]
pub struct InspectCommand {}

impl InspectCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        anyhow::bail!("inspect is not built yet")
    }
}
