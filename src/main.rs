//! `storlab`: the command-line front end. It parses arguments (clap), calls
//! the library crates under `crates/`, and is the only place that prints or
//! writes result files. One file per subcommand lives in `src/commands/`.
//!
//! Exit codes: 0 ok; 1 the command ran but a check or verification failed;
//! 2 bad input or a hard error. A closed output pipe is not an error.
// The clap help text lives in doc comments and uses brackets and angle
// brackets literally (`[global]` tables, `[default: ...]`,
// `R<level>/<span>[/<drives>]`): they are --help text, not intra-doc links or
// HTML, and escaping them would show in --help.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#![forbid(unsafe_code)]

mod commands;
mod output;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Measure, watch, explain, design and remember storage.
#[derive(Parser, Debug)]
#[command(name = "storlab", version, about, long_about = None, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run I/O workloads against a directory, file or block device and report what the storage did
    ///
    /// Without --rw (and without --job), bench runs a quick all-round check
    /// of the storage under TARGET: four phases of 3 s each on one 256 MiB
    /// file, in this order: sequential 1 MiB writes at queue depth 16 (the
    /// first pass also lays the file out), sequential 1 MiB reads at QD 16,
    /// random 4 KiB reads at QD 32, random 4 KiB writes at QD 32, with
    /// O_DIRECT where the file system supports it. Without TARGET it writes
    /// for a few seconds under the current directory, in ./storlab-scratch,
    /// which it creates and removes afterwards. Workload flags given with it
    /// (e.g. --size 1G, --runtime 10s, --engine psync) apply to all four
    /// phases; --rw chooses one workload of your own instead.
    Bench(Box<commands::bench::BenchCommand>),
    /// List the runs in the results database (filter by tag, target, host, date, workload)
    Runs(commands::runs::RunsCommand),
    /// Print stored runs: parameters, host, target, tags and each phase's figures
    Show(commands::show::ShowCommand),
    /// Read fio JSON output (or storlab JSON) into the results database
    Import(commands::import::ImportCommand),
    /// Exit 1 when a run is worse than a baseline run by more than a tolerance
    Check(commands::check::CheckCommand),
    /// Export stored runs as JSON, CSV or Markdown
    Export(commands::export::ExportCommand),
    /// Show runs' figures relative to a baseline run (differences within run-to-run spread marked as noise)
    Compare(commands::compare::CompareCommand),
    /// Write one self-contained HTML report with charts, or one chart as SVG/PNG
    Report(commands::report::ReportCommand),
    /// Design storage before buying it: RAID layout, capacity, reliability, predicted performance, search
    Plan(commands::plan::PlanCommand),
    /// Run a workload at every point of a parameter sweep (--vary bs=4k..4m:x2); one table, one chart
    Sweep(Box<commands::sweep::SweepCommand>),
    /// List the shipped test profiles (seq, iops, cache, sas, oltp, ...) or print one's job file
    Profiles(commands::profiles::ProfilesCommand),
    /// Measure a matrix of configurations (RAID level, chunk, file system) with setup and teardown commands; resumable
    Campaign(commands::campaign::CampaignCommand),
    /// Find the best value of a block-layer setting for this device by measuring each (readahead), then restore
    Tune(commands::tune::TuneCommand),
    /// Simulate a storage architecture at cluster scale (clients, networks, data movers, arrays) and name what binds
    Sim(Box<commands::sim::SimCommand>),
    /// Measure metadata rates as mdtest does: create, stat, read, rename, delete files or directories in a tree
    Md(Box<commands::md::MdCommand>),
    /// Run the IO500 suite on storlab's engine: io500's phases, parameters, score and INVALID rules
    Io500(Box<commands::io500::Io500Command>),
    /// Watch block devices (iostat -x figures) without double counting stacked devices
    ///
    /// As in iostat, numbers after the devices are the interval and the count
    /// (`storlab monitor 1 3`: every second, three reports), -z leaves out idle
    /// devices and -t prints the time. MB/s is iostat's 2^20 bytes/s unless
    /// --units si is given; the column headers say which (MiB/s or MB/s).
    Monitor(Box<commands::monitor::MonitorCommand>),
    /// Explain the file system and device stack under a path, with tuning advice
    Inspect(commands::inspect::InspectCommand),
    /// Read application I/O traces (fio iolog, Darshan DXT, blktrace): what they hold, and a job file derived from one
    Trace(commands::trace::TraceCommand),
    /// Replay an application's recorded I/O (fio iolog, Darshan DXT, blktrace) on the storage under test, with its timing or as fast as it goes
    Replay(commands::replay::ReplayCommand),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(commands::completions::CompletionsCommand),
    /// Print the manual page (storlab man | man -l -), or write every page with --dir
    Man(commands::man::ManCommand),
}

// What a command reports back to `main` when it ran to the end, and its
// exit code (shared with the MPI ranks' agreement on one exit code).
pub use storlab_types::outcome::Outcome;

fn main() -> ExitCode {
    // Sizes relative to the machine (`--size 2xRAM`) are parsed with the flags.
    if let Some(ram) = storlab_host::meminfo("MemTotal") {
        storlab_types::set_ram_bytes(ram);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and errors to stderr (exit 2);
            // under mpirun rank 0 does (and, in an MPMD launch, the first
            // rank of each app context), so a bad option is named once.
            if commands::run::speaks_for_its_command_line() {
                let _ = e.print();
            }
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // With no subcommand, run the newcomer's quick all-round check.
    let command = match cli.command {
        Some(c) => c,
        // `storlab bench` exactly as if typed, so every default (database,
        // environment variables) is the same.
        None => match Cli::try_parse_from(["storlab", "bench"]).map(|c| c.command) {
            Ok(Some(c)) => c,
            _ => {
                eprintln!("storlab: error: cannot build the default `storlab bench` command");
                return ExitCode::from(2);
            }
        },
    };
    let result = match command {
        Command::Bench(c) => c.execute().and_then(output::emit),
        Command::Runs(c) => c.execute().and_then(output::emit),
        Command::Show(c) => c.execute().and_then(output::emit),
        Command::Import(c) => c.execute().and_then(output::emit),
        Command::Check(c) => c.execute().and_then(output::emit),
        Command::Export(c) => c.execute().and_then(output::emit),
        Command::Compare(c) => c.execute().and_then(output::emit),
        Command::Report(c) => c.execute().and_then(output::emit),
        Command::Plan(c) => c.execute().and_then(output::emit),
        Command::Monitor(c) => c.execute().and_then(output::emit),
        Command::Sim(c) => c.execute().and_then(output::emit),
        Command::Md(c) => c.execute().and_then(output::emit),
        Command::Io500(c) => c.execute().and_then(output::emit),
        Command::Campaign(c) => c.execute().and_then(output::emit),
        Command::Sweep(c) => c.execute().and_then(output::emit),
        Command::Profiles(c) => c.execute().and_then(output::emit),
        Command::Tune(c) => c.execute().and_then(output::emit),
        Command::Inspect(c) => c.execute().and_then(output::emit),
        Command::Trace(c) => c.execute().and_then(output::emit),
        Command::Replay(c) => c.execute().and_then(output::emit),
        Command::Completions(c) => c.execute(),
        Command::Man(c) => c.execute(),
    };
    match result {
        Ok(o) => ExitCode::from(o.exit_code()),
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(Outcome::Error.exit_code())
        }
    }
}
