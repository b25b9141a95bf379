//! `storlab completions SHELL`: the shell completion script, generated from
//! the same clap definitions as `--help`, so it always matches this binary.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// `storlab completions bash|zsh|fish|elvish|powershell`
#[derive(Args, Debug)]
#[command(after_long_help = "Install, e.g.:\n  \
    bash: storlab completions bash > /etc/bash_completion.d/storlab\n  \
    zsh:  storlab completions zsh > \"${fpath[1]}/_storlab\"\n  \
    fish: storlab completions fish > ~/.config/fish/completions/storlab.fish")]
pub struct CompletionsCommand {
    /// The shell to complete for
    #[arg(value_enum)]
    shell: Shell,
}

impl CompletionsCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let mut cmd = crate::Cli::command();
        let mut buf = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, "storlab", &mut buf);
        crate::output::print(&String::from_utf8_lossy(&buf))?;
        Ok(crate::Outcome::Ok)
    }
}
