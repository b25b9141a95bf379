//! `storlab man [SUBCOMMAND]`: the manual page (roff), generated from the
//! same clap definitions as `--help`: `storlab man | man -l -`, `storlab
//! man bench` for one subcommand's page, or one page per subcommand with
//! `--dir` (`storlab-bench.1`, ...) for packaging. Every page ends with
//! EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES sections.

use anyhow::{Context, bail};
use clap::{Args, CommandFactory};
use std::path::{Path, PathBuf};

/// `storlab man [SUBCOMMAND] [--dir DIR]`
#[derive(Args, Debug)]
pub struct ManCommand {
    /// The page of one subcommand (e.g. bench, report, "monitor disks"); without it, storlab.1
    #[arg(value_name = "SUBCOMMAND", num_args = 0..)]
    subcommand: Vec<String>,
    /// Write storlab.1 and one page per subcommand (storlab-bench.1, ...) into DIR instead of printing storlab.1
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    dir: Option<PathBuf>,
}

const EXIT_STATUS: &str = "\
.SH \"EXIT STATUS\"
.TP
\\fB0\\fR
Success.
.TP
\\fB1\\fR
The command ran but a check or verification failed (\\fBstorlab check\\fR worse than the baseline, \\fB--verify\\fR mismatches).
.TP
\\fB2\\fR
Bad input or a hard error: the message names the problem and the fix; nothing was left half done.
.TP
\\fB130\\fR
Stopped by a signal (Ctrl-C, SIGTERM, SIGHUP); the results so far are kept, marked interrupted.
";

const ENVIRONMENT: &str = "\
.SH ENVIRONMENT
.TP
\\fBSTORLAB_DB\\fR
The results database (as \\fB--db\\fR; the config file's \\fBdatabase\\fR is used when neither is given).
.TP
\\fBSTORLAB_STATE_DIR\\fR
Where \\fBtune\\fR keeps its state and lock files (default /run/storlab).
.TP
\\fBSTORLAB_MPI_NODE\\fR
The node name a rank reports in multi-client runs (default: the host name).
.TP
\\fBXDG_CONFIG_HOME\\fR, \\fBXDG_DATA_HOME\\fR
Where the config file and the default database are looked for.
.TP
\\fBNO_COLOR\\fR
No colours in the output.
.TP
\\fBCI\\fR
Under CI=true a test that would be skipped fails instead.
";

const FILES: &str = "\
.SH FILES
.TP
\\fI~/.config/storlab/config.toml\\fR
The user's defaults (database, host label); \\fBstorlab config\\fR shows and edits it.
.TP
\\fI~/.local/share/storlab/storlab.db\\fR
The results database (SQLite) when no other is configured.
.TP
\\fI~/.config/storlab/profiles/*.toml\\fR
User profiles beside the shipped ones (\\fBstorlab profiles\\fR).
.TP
\\fI/run/storlab/\\fR
\\fBtune\\fR's state file (the original values, restored after a kill) and per-device locks.
";

const EXAMPLES: &str = "\
.SH EXAMPLES
.nf
storlab bench /scratch                       # the quick all-round check
storlab bench /scratch --rw randread --bs 4k --iodepth 32 --size 4G
mpirun -np 8 storlab bench /scratch --ior '-t 1m -b 16m -s 4 -F -e -w -r'
storlab inspect /scratch                     # the device stack and advice
storlab runs                                 # the results history
storlab report latest~2 latest~1 latest -o report.html
storlab check latest --baseline 12           # exit 1 if worse
.fi
";

/// The subcommands with a page of their own (not `help`, not hidden).
fn pages(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// One page: clap's sections, then ours.
fn page(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.version(env!("CARGO_PKG_VERSION"))).render(&mut buf)?;
    for s in [EXIT_STATUS, ENVIRONMENT, FILES, EXAMPLES] {
        buf.extend_from_slice(s.as_bytes());
    }
    Ok(buf)
}

/// `cmd`'s page as NAME.1 in `dir`, then each visible subcommand's as
/// NAME-SUB.1.
fn write_pages(cmd: &clap::Command, name: &str, dir: &Path) -> anyhow::Result<()> {
    let file = dir.join(format!("{name}.1"));
    std::fs::write(&file, page(cmd.clone().name(name.to_string()))?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    for sub in pages(cmd) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}

impl ManCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let mut cmd = crate::Cli::command();
        cmd.build();
        if let Some(dir) = self.dir {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            write_pages(&cmd, "storlab", &dir)?;
            eprintln!(
                "man pages written to {} (man -l {}/storlab.1)",
                dir.display(),
                dir.display()
            );
            return Ok(crate::Outcome::Ok);
        }
        let mut name = String::from("storlab");
        let mut at = cmd;
        for word in &self.subcommand {
            let Some(sub) = at.find_subcommand(word).cloned() else {
                let names: Vec<&str> = pages(&at).map(|s| s.get_name()).collect();
                bail!(
                    "`{name} {word}` is not a subcommand; pages exist for: {}",
                    names.join(", ")
                );
            };
            name = format!("{name}-{}", sub.get_name());
            at = sub;
        }
        let buf = page(at.name(name))?;
        crate::output::print(&String::from_utf8_lossy(&buf))?;
        Ok(crate::Outcome::Ok)
    }
}
