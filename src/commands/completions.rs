//! `storlab completions SHELL`: the shell completion script, generated from
//! the same clap definitions as `--help`, so it always matches this binary.
//! Options whose values are free text to clap but a fixed set to storlab
//! (`--rw`, `--engine`, `--cache`, `--rate-process`, ..., `--chart`) are
//! given their values from the tables the parsers use (the bench option
//! table's words, the chart registry), for the completion script only.

use clap::builder::PossibleValuesParser;
use clap::{Args, Command, CommandFactory};
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
        let mut cmd = with_values(crate::Cli::command());
        let mut buf = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, "storlab", &mut buf);
        crate::output::print(&String::from_utf8_lossy(&buf))?;
        Ok(crate::Outcome::Ok)
    }
}

/// The values completion offers for an option, by its long name: the
/// report's charts, or the words of a bench option.
fn values_of(long: &str) -> Option<Vec<&'static str>> {
    if long == "chart" {
        let kinds = storlab_report::registry::report_kinds();
        return Some(kinds.filter(|k| !k.per_run()).map(|k| k.id).collect());
    }
    let words = storlab_bench::find_option(long)?.choices;
    (!words.is_empty()).then(|| words.to_vec())
}

/// `cmd` and every subcommand with those options' values attached.
fn with_values(mut cmd: Command) -> Command {
    let ids: Vec<(String, Vec<&'static str>)> = cmd
        .get_arguments()
        .filter_map(|a| Some((a.get_id().to_string(), values_of(a.get_long()?)?)))
        .collect();
    for (id, values) in ids {
        cmd = cmd.mut_arg(id, |a| a.value_parser(PossibleValuesParser::new(values)));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, with_values);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bash script offers the values of --rw, --engine, --cache,
    /// --rate-process, --unified-rw-reporting, --fallocate and --chart (it
    /// offered none of the last four's words: the first three were a
    /// hand-kept list).
    #[test]
    fn completion_offers_the_values_of_rw_engine_cache_and_chart() {
        let mut cmd = with_values(crate::Cli::command());
        let mut buf = Vec::new();
        clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, "storlab", &mut buf);
        let script = String::from_utf8(buf).unwrap();
        for words in [
            "randread", "rmw", "io_uring", "libaio", "cold", "warm", "vs-bs", "clients", "poisson",
            "mixed", "native",
        ] {
            assert!(script.contains(words), "{words}");
        }
    }
}
