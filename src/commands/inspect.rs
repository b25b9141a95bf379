//! `storlab inspect`: the file system and device stack under a path, each
//! layer's performance settings, and recommendations with their reasons.

use crate::commands::outfmt::{OutputArgs, TextFormat};
use crate::output::{Rendering, Reply, Shown};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use storlab_monitor::SysPaths;
use storlab_monitor::inspect::{inspect_path, render_text};

/// Explain the storage under a path or device: file system, stripe
/// geometry, each layer's settings (read-ahead, scheduler, RAID chunk, ...)
/// and what to change, with reasons.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab inspect /data
  storlab inspect /dev/md0 --output-format json")]
pub struct InspectCommand {
    /// A path (the file system holding it) or a device (vda, dm-0, /dev/mapper/vg0-data)
    pub target: PathBuf,

    #[command(flatten)]
    pub out: OutputArgs<TextFormat>,

    /// Read sys/ and proc/ under DIR (a recorded tree) instead of /sys and /proc
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
}

impl InspectCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        let paths = SysPaths::from_root(self.sys_root.as_deref())?;
        let report = inspect_path(&paths, &self.target)
            .with_context(|| format!("inspecting {}", self.target.display()))?;
        let how = match self.out.format() {
            TextFormat::Json => Rendering::Json,
            TextFormat::Text => Rendering::Human,
        };
        Ok(Reply::doc(Shown::new(report, render_text), how))
    }
}
