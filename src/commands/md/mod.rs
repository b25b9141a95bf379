//! `storlab md TARGET`: metadata performance, as mdtest measures it. Every
//! rank creates, stats, reads, renames and deletes its files or directories
//! in a tree inside storlab's own subdirectory of TARGET; each operation is
//! a phase (items per second, HDR latency percentiles, CPU per operation),
//! saved as a run of kind `md`.
//!
//! [`MdCommand::execute`] reads as its steps: the job from the flags
//! (mdtest's spellings too), every check before anything is made, signals
//! watched, storlab's own directory made, the phases run (each saved as it
//! finishes), everything removed (unless `--keep`), then the table or JSON.
//! `storlab_md::record` turns the ranks' figures into the stored phase,
//! `storlab_print::md` renders the table.

#[cfg(feature = "mpi")]
mod mpi;

use crate::Outcome;
use crate::commands::run::{Live, RunArgs, Sink, Watched, conclude};
use crate::commands::signals::Signals;
use crate::output::Reply;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storlab_md::session::LiveLine;
use storlab_md::session::SessionError;
use storlab_md::{Control, MdSpec, Op, Posix};
use storlab_types::BenchReport;
use storlab_types::RunKind;

const MD_HELP: &str = "\
mdtest's options are accepted where they map cleanly: -n N (items per rank:
N files and N directories; with -F files only, with -D directories only),
-z DEPTH, -b BRANCH, -u (a directory per rank), -w BYTES (written to each
file), -e BYTES (read from each file), -C/-T/-E/-r (create/stat/read/remove
only; together, each of them), -U (add the rename phase), -N SHIFT (stat and read the items of rank
r+SHIFT, defeating client caches under MPI), -W SECONDS (stonewall the
create phase) and -d DIR (the TARGET).

A stonewalled create records how many items each rank really made, and the
later phases stat, read and delete exactly those: no phase ever looks for an
item that was never made, and a failed operation (ENOENT, ENOSPC, ...) stops
the run with exit 2; it is never counted as an item done.

storlab works only inside its own new subdirectory of TARGET
(storlab.<pid>.<n>) and removes it afterwards, also after Ctrl-C, SIGTERM or
SIGHUP, unless --keep. Names are generated, not stored: a million files take
no more memory than ten.

Example: storlab md /scratch --files 100000 --depth 2 --branch 10 --ops create,stat,delete";

/// `storlab md TARGET`
#[derive(Args, Debug)]
#[command(after_long_help = MD_HELP)]
pub struct MdCommand {
    /// Directory to measure (storlab makes its own subdirectory in it and removes it afterwards)
    #[arg(value_name = "TARGET", required_unless_present = "dir")]
    pub target: Option<PathBuf>,
    /// mdtest's spelling of TARGET
    #[arg(short = 'd', value_name = "DIR", conflicts_with = "target")]
    pub dir: Option<PathBuf>,
    /// Files each rank creates (and stats, reads, deletes)
    #[arg(long, value_name = "N", conflicts_with = "items")]
    pub files: Option<u64>,
    /// Directories each rank creates (and stats, renames, deletes)
    #[arg(long, value_name = "N", conflicts_with = "items")]
    pub dirs: Option<u64>,
    /// mdtest's -n: N files and N directories per rank (-F: files only, -D: directories only)
    #[arg(short = 'n', value_name = "N")]
    pub items: Option<u64>,
    /// With -n: files only (mdtest's -F)
    #[arg(short = 'F', conflicts_with = "dirs_only")]
    pub files_only: bool,
    /// With -n: directories only (mdtest's -D)
    #[arg(short = 'D')]
    pub dirs_only: bool,
    /// Levels of directories below the top of the tree (mdtest's -z)
    #[arg(long, short = 'z', value_name = "L", default_value_t = 0)]
    pub depth: u32,
    /// Subdirectories in each directory of the tree (mdtest's -b)
    #[arg(long, short = 'b', value_name = "B", default_value_t = 1)]
    pub branch: u32,
    /// Every rank works in its own tree (mdtest's -u)
    #[arg(long, short = 'u', conflicts_with = "shared_dir")]
    pub unique_dir: bool,
    /// All ranks work in one shared tree (the default, as in mdtest)
    #[arg(long)]
    pub shared_dir: bool,
    /// Bytes written to each file when it is created (mdtest's -w), e.g. 4k
    #[arg(long, short = 'w', value_name = "BYTES", value_parser = storlab_types::parse_size)]
    pub size: Option<u64>,
    /// Bytes read from each file by the read phase (mdtest's -e) [default: --size]
    #[arg(long, short = 'e', value_name = "BYTES", value_parser = storlab_types::parse_size)]
    pub read_bytes: Option<u64>,
    /// Operations to measure, each its own phase: create,stat,read,rename,delete
    /// [default: create,stat,read,delete]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = Op::from_word,
          conflicts_with_all = ["create_only", "stat_only", "read_only", "remove_only"])]
    pub ops: Vec<Op>,
    /// Create only (mdtest's -C; with -T, -E, -r: each of those)
    #[arg(short = 'C')]
    pub create_only: bool,
    /// Stat only (mdtest's -T)
    #[arg(short = 'T')]
    pub stat_only: bool,
    /// Read only (mdtest's -E)
    #[arg(short = 'E')]
    pub read_only: bool,
    /// Remove only (mdtest's -r)
    #[arg(short = 'r')]
    pub remove_only: bool,
    /// Add the rename phase (mdtest's -U)
    #[arg(short = 'U', conflicts_with = "ops")]
    pub rename: bool,
    /// Stat and read the items of rank (r + SHIFT) mod ranks (mdtest's -N)
    #[arg(long, short = 'N', value_name = "SHIFT", default_value_t = 0)]
    pub rank_shift: u32,
    /// Stop each create phase after this long (mdtest's -W; a bare number is seconds); the later
    /// phases work on exactly the items made
    #[arg(long, short = 'W', value_name = "DUR", value_parser = storlab_md::job::stonewall)]
    pub stonewall: Option<Duration>,
    #[command(flatten)]
    pub run: RunArgs,
}

impl MdCommand {
    /// The job the flags describe (checked): [`storlab_md::job::build`].
    pub fn spec(&self) -> Result<(MdSpec, storlab_md::Tree)> {
        let flags = storlab_md::job::MdFlags {
            files: self.files,
            dirs: self.dirs,
            items: self.items,
            files_only: self.files_only,
            dirs_only: self.dirs_only,
            depth: self.depth,
            branch: self.branch,
            unique_dir: self.unique_dir,
            size: self.size,
            read_bytes: self.read_bytes,
            ops: self.ops.clone(),
            create_only: self.create_only,
            stat_only: self.stat_only,
            read_only: self.read_only,
            remove_only: self.remove_only,
            rename: self.rename,
            rank_shift: self.rank_shift,
            stonewall_ns: self
                .stonewall
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            allow_destroy: self.run.allow_destroy,
            monitor: self.run.monitor,
        };
        Ok(storlab_md::job::build(&flags)?)
    }

    fn target(&self) -> &Path {
        self.target
            .as_deref()
            .or(self.dir.as_deref())
            .unwrap_or(Path::new("."))
    }

    pub fn execute(self) -> Result<Reply> {
        let (spec, tree) = self.spec()?;
        if crate::commands::run::launcher_size().is_some_and(|n| n > 1) {
            #[cfg(feature = "mpi")]
            return mpi::execute(self, spec, tree).map(Reply::done);
            #[cfg(not(feature = "mpi"))]
            anyhow::bail!(
                "storlab md was started by an MPI launcher with several processes, but this build has no MPI support: \
                 build with `cargo build --release --features mpi`, or run one process"
            );
        }
        let target = self.target().to_path_buf();
        // Everything checkable is checked before anything is made.
        let json_out = crate::commands::run::check_paths(Some(&target), &self.run)?;
        let sink = std::cell::RefCell::new(crate::commands::run::open_sink_tagged(&self.run, &[])?);
        sink.borrow_mut().json_out_to(json_out);
        let signals = Signals::install()?;
        let host = host()?;
        let control = Arc::new(Control::new());
        let quiet = self.run.quiet;
        let begin = |header: &BenchReport| {
            sink.borrow_mut().begin(RunKind::Md, header)?;
            let watcher = watch(Arc::clone(&control), signals.clone(), &spec, quiet);
            Ok::<_, anyhow::Error>(move || watcher.stop())
        };
        let ran = storlab_md::session::run_solo(
            &Posix,
            &spec,
            &tree,
            &target,
            host,
            &control,
            self.run.keep,
            begin,
            |ph| sink.borrow_mut().phase(ph),
        );
        let ran = match ran {
            Ok(ran) => ran,
            Err(SessionError::Begin(e)) => return Err(e),
            Err(e) => return Err(e.into()),
        };
        for n in &ran.not_removed {
            warn_not_removed(n);
        }
        let (report, doc, ending) = conclude(
            ran.report,
            &mut sink.into_inner(),
            storlab_print::md::render,
        )?;
        let mut reply = Reply::doc(doc, self.run.out.rendering());
        reply.outcome = crate::commands::run::verdict(&report, ending, signals.received());
        Ok(reply)
    }
}

/// Remove storlab's own directory and everything the run made in it.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn remove_run_dir(dir: &Path) {
    if let Some(n) = storlab_md::session::remove_run_dir(dir) {
        warn_not_removed(&n);
    }
}

fn warn_not_removed(n: &storlab_md::session::NotRemoved) {
    eprintln!("storlab: warning: {n}");
}

/// The host the run's record names: this machine, under the configured label.
fn host() -> Result<storlab_types::HostInfo> {
    let mut host = storlab_host::host_info();
    if let Some(label) = &crate::commands::config::get()?.host {
        host.hostname = label.clone();
    }
    Ok(host)
}

/// Save, write and print the results of an MPI run on rank 0; make sure
/// they exist somewhere; the exit code.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn emit(
    report: BenchReport,
    args: &RunArgs,
    sink: &mut Sink,
    signal: Option<i32>,
) -> Result<Outcome> {
    let md = storlab_print::md::render;
    Ok(crate::commands::run::emit(report, args, sink, (signal, true), md)?.0)
}

/// The watcher of an md run: signals → stop requests, and the progress
/// line ([`LiveLine`]: items done and the rate), on the shared [`Live`].
fn watch(control: Arc<Control>, signals: Signals, spec: &MdSpec, quiet: bool) -> Live {
    let line = LiveLine::new(spec);
    Live::watch(Progress { control, line }, signals, quiet)
}

/// What an md run's watcher watches and draws.
struct Progress {
    control: Arc<Control>,
    line: LiveLine,
}

impl Watched for Progress {
    fn stopping(&self) -> bool {
        self.control.stop.load(Ordering::Relaxed)
    }
    fn request_stop(&self, why: &str) {
        self.control.request_stop(why);
    }
    fn draw(&mut self, b: &indicatif::ProgressBar) {
        let shown = self.line.look(&self.control, Instant::now());
        b.set_prefix(shown.prefix);
        b.set_length(shown.length);
        b.set_position(shown.position);
        b.set_message(shown.message);
    }
}
