//! `storlab man`: the manual page (roff), generated from the same clap
//! definitions as `--help`: `storlab man | man -l -`, or one page per
//! subcommand with `--dir` (`storlab-bench.1`, ...) for packaging.

use anyhow::Context;
use clap::{Args, CommandFactory};
use std::path::PathBuf;

/// `storlab man [--dir DIR]`
#[derive(Args, Debug)]
pub struct ManCommand {
    /// Write storlab.1 and one page per subcommand (storlab-bench.1, ...) into DIR instead of printing storlab.1
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

impl ManCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let cmd = crate::Cli::command();
        match self.dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                clap_mangen::generate_to(cmd, &dir)
                    .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
                eprintln!(
                    "man pages written to {} (man -l {}/storlab.1)",
                    dir.display(),
                    dir.display()
                );
            }
            None => {
                let mut buf = Vec::new();
                clap_mangen::Man::new(cmd).render(&mut buf)?;
                crate::output::print(&String::from_utf8_lossy(&buf))?;
            }
        }
        Ok(crate::Outcome::Ok)
    }
}
