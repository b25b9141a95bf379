//! `storlab io500 [CONFIG.ini] TARGET`: the IO500 suite on storlab's own
//! engine, scored as io500 scores it and stored as one run of kind `io500`.
//! Glue: the run is `storlab_io500::run`, the record and the summary
//! `storlab_io500::summary`.

use crate::commands::run::{Live, RunArgs, Watched, conclude};
use crate::commands::signals::Signals;
use crate::output::Reply;
use anyhow::{Result, anyhow, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use storlab_cluster::step::Failed;
use storlab_io500::run::mpi::Io500Front;
use storlab_io500::run::{Job, Options, Outcome, Stop};
use storlab_io500::{Config, summary};
use storlab_types::{BenchReport, PhaseResult, RunKind, TargetInfo};

const IO500_HELP: &str = "\
Runs io500's phases in io500's order with io500's parameters (ior-easy,
mdtest-easy, ior-hard with 47,008-byte strided transfers into one shared file,
mdtest-hard with 3,901-byte files in one shared directory, find, the reads,
stats and deletes), each on storlab's engine, with --np ranks as threads (or,
under mpirun/srun and --features mpi, a rank per process; rank 0 prints).
CONFIG.ini is io500's own file (the options io500 lets a site set). The score
is computed as io500 computes it; a run io500 would mark INVALID is marked
INVALID with io500's reasons. --short (small sizes where the config sets none,
a 5 s stonewall) is INVALID for, and not comparable with, the official list.

storlab works only inside its own new subdirectory of TARGET and removes it
afterwards, also after Ctrl-C or SIGTERM, unless --keep.

Example: storlab io500 --short --np 2 /scratch (mpirun -np 2 storlab io500 ...)";

/// `storlab io500`
#[derive(Args, Debug)]
#[command(after_long_help = IO500_HELP)]
pub struct Io500Command {
    /// io500's config.ini (optional), then the directory to measure
    #[arg(value_name = "[CONFIG.ini] TARGET", num_args = 1..=2, required = true)]
    pub paths: Vec<PathBuf>,
    /// Small sizes and a 5 s stonewall: for trying things; INVALID for the official list
    #[arg(long)]
    pub short: bool,
    /// The stonewall time (io500's [debug] stonewall-time; the rules' is 300s)
    #[arg(long, value_name = "DUR", value_parser = storlab_md::job::stonewall)]
    pub stonewall: Option<Duration>,
    /// Ranks (threads), each doing what one io500 MPI rank does (under mpirun: its -np)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub np: u32,
    #[command(flatten)]
    pub run: RunArgs,
}

impl Io500Command {
    pub fn execute(self) -> Result<Reply> {
        let Some((target, cfg)) = self.paths.split_last() else {
            bail!("give [CONFIG.ini] TARGET")
        };
        let opts = Options::new(self.np, self.short, self.stonewall, self.run.keep);
        let resolve = |ranks| storlab_io500::run::resolve(cfg.first(), &opts, ranks);
        let mut front = Front(&self, Signals::install()?, None);
        let code = match crate::commands::run::launcher_size().filter(|&n| n > 1) {
            Some(n) => storlab_io500::run::mpi::launch(
                n,
                &mut front,
                |size| resolve(Some(size)),
                (target, self.run.quiet),
                |why| crate::output::print_error(&anyhow!("{why}")),
            )?,
            None => {
                storlab_io500::run::run_local(&mut front, &resolve(None)?, (target, self.run.quiet))
                    .map_err(|e| anyhow!(e))?
            }
        };
        Ok(Reply::done(crate::Outcome::from_exit_code(code)))
    }
}

/// The front end of a run (of every rank under MPI): the command, its
/// signals and its progress line.
struct Front<'a>(&'a Io500Command, Signals, Option<Live>);

type Run = (Option<BenchReport>, crate::commands::run::Sink);

impl Io500Front for Front<'_> {
    type Run = Run;

    fn open(&mut self, target: &Path) -> Result<Run, Failed> {
        let args = &self.0.run;
        let json_out = crate::commands::run::check_paths(Some(target), args).map_err(Failed::of)?;
        let mut sink = crate::commands::run::open_sink_tagged(args, &[]).map_err(Failed::of)?;
        sink.json_out_to(json_out);
        Ok((None, sink))
    }

    fn begin(&mut self, run: &mut Run, info: TargetInfo) -> Result<(), Failed> {
        let mut host = storlab_host::host_info();
        let label = crate::commands::config::get().map_err(Failed::of)?;
        host.hostname = label.host.clone().unwrap_or(host.hostname);
        let header = run.0.insert(BenchReport::new(host, info));
        run.1.begin(RunKind::Io500, header).map_err(Failed::of)
    }

    fn watch(&mut self, stop: Option<(&Arc<Stop>, bool)>) {
        self.2.take().into_iter().for_each(Live::stop);
        self.2 = stop.map(|(s, quiet)| Live::watch(Arc::clone(s), self.1.clone(), quiet));
    }

    fn phase(&mut self, run: &mut Run, phase: &PhaseResult) {
        run.1.phase(phase);
    }

    fn remove(&mut self, dir: &Path) {
        if let Some(n) = storlab_md::session::remove_run_dir(dir) {
            let (d, e) = (n.dir.display(), n.error);
            eprintln!("storlab: warning: cannot remove {d}: {e}; remove it by hand");
        }
    }

    fn finish(&mut self, run: Run, ran: Outcome, job: &Job, cfg: &Config) -> Result<u8, Failed> {
        let (header, mut sink) = run;
        let header = header.ok_or_else(|| Failed("internal error: no header".into()))?;
        let report = summary::report(header, ran, job, cfg);
        let (report, doc, end) =
            conclude(report, &mut sink, summary::render).map_err(Failed::of)?;
        let mut reply = Reply::doc(doc, self.0.run.out.rendering());
        reply.outcome = end.unwrap_or(match (self.1.received(), report.interrupted) {
            (Some(_), _) => crate::Outcome::Interrupted,
            (None, true) => crate::Outcome::Error,
            (None, false) => crate::Outcome::Ok,
        });
        // Shown here: under MPI, before rank 0's exit code lets the others
        // end (the launcher may then kill rank 0 mid-print).
        match crate::output::emit(reply) {
            Err(e) if crate::output::is_broken_pipe(&e) => Ok(0),
            r => r.map(|o| o.exit_code()).map_err(Failed::of),
        }
    }
}

/// Signals → a stop of every engine of the run.
impl Watched for Arc<Stop> {
    fn stopping(&self) -> bool {
        self.requested()
    }
    fn request_stop(&self, why: &str) {
        self.request(why);
    }
    fn draw(&mut self, _bar: &indicatif::ProgressBar) {}
}
