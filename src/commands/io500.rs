//! `storlab io500 [CONFIG.ini] TARGET`: the IO500 suite on storlab's own
//! engine, scored as io500 scores it and stored as one run of kind `io500`.
//! Glue: the run is `storlab_io500::run`, the record and the summary
//! `storlab_io500::summary`.

use crate::Outcome;
use crate::commands::run::{Live, RunArgs, Watched, conclude};
use crate::commands::signals::Signals;
use crate::output::Reply;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use storlab_io500::run::{Job, Options, Stop};
use storlab_io500::{Config, summary};
use storlab_types::BenchReport;

const IO500_HELP: &str = "\
Runs io500's phases in io500's order with io500's parameters (ior-easy,
mdtest-easy, ior-hard with 47,008-byte strided transfers into one shared file,
mdtest-hard with 3,901-byte files in one shared directory, find, the reads,
stats and deletes), each on storlab's engine, with --np ranks as threads.
CONFIG.ini is io500's own file (the options io500 lets a site set). The score
is computed as io500 computes it; a run io500 would mark INVALID is marked
INVALID with io500's reasons. --short (small sizes where the config sets none,
a 5 s stonewall) is INVALID for, and not comparable with, the official list.

storlab works only inside its own new subdirectory of TARGET and removes it
afterwards, also after Ctrl-C or SIGTERM, unless --keep.

Example: storlab io500 --short --np 2 /scratch";

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
    /// Ranks (threads), each doing what one io500 MPI rank does
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub np: u32,
    #[command(flatten)]
    pub run: RunArgs,
}

impl Io500Command {
    pub fn execute(self) -> Result<Reply> {
        if crate::commands::run::launcher_size().is_some_and(|n| n > 1) {
            bail!(
                "storlab io500 does not run under an MPI launcher yet: run one process with --np N ranks"
            );
        }
        let (cfg_path, target) = match self.paths.as_slice() {
            [t] => (None, t.clone()),
            [c, t] => (Some(c.clone()), t.clone()),
            _ => bail!("give [CONFIG.ini] TARGET"),
        };
        let cfg = match &cfg_path {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read the io500 config {}", p.display()))?;
                Config::parse(&text).with_context(|| format!("{}", p.display()))?
            }
            None => Config::parse("")?,
        };
        let opts = Options {
            ranks: self.np,
            short: self.short,
            stonewall_s: self.stonewall.map(|d| d.as_secs().max(1)),
            keep: self.run.keep,
        };
        let job = Job::resolve(&cfg, &opts)?;
        let json_out = crate::commands::run::check_paths(Some(&target), &self.run)?;
        let mut sink = crate::commands::run::open_sink_tagged(&self.run, &[])?;
        sink.json_out_to(json_out);
        let signals = Signals::install()?;
        let (dir, info) = storlab_bench::own_run_dir(&target)?;
        let remove = |keep: bool| {
            if keep {
                return;
            }
            if let Some(n) = storlab_md::session::remove_run_dir(&dir) {
                eprintln!(
                    "storlab: warning: cannot remove {}: {}; remove it by hand",
                    n.dir.display(),
                    n.error
                );
            }
        };
        if let Err(e) = job.check_space(&target, info.free_bytes_before) {
            remove(false);
            return Err(e.into());
        }
        let mut host = storlab_host::host_info();
        if let Some(label) = &crate::commands::config::get()?.host {
            host.hostname = label.clone();
        }
        let header = BenchReport::new(host, info);
        if let Err(e) = sink.begin("io500", &header) {
            remove(false);
            return Err(e);
        }
        let stop = Stop::new(job.ranks);
        let live = Live::watch(Watch(Arc::clone(&stop)), signals.clone(), self.run.quiet);
        let ran = storlab_io500::run::run(&job, &cfg, &dir, &stop, |ph| sink.phase(ph));
        live.stop();
        remove(self.run.keep);
        let report = summary::report(header, ran, &job, &cfg);
        let (report, doc, ending) = conclude(report, &mut sink, summary::render)?;
        let mut reply = Reply::doc(doc, self.run.out.rendering());
        reply.outcome = match ending {
            Some(o) => o,
            None if signals.received().is_some() => Outcome::Interrupted,
            None if report.interrupted => Outcome::Error,
            None => Outcome::Ok,
        };
        Ok(reply)
    }
}

/// Signals → a stop of every engine of the run.
struct Watch(Arc<Stop>);

impl Watched for Watch {
    fn stopping(&self) -> bool {
        self.0.requested()
    }
    fn request_stop(&self, why: &str) {
        self.0.request(why);
    }
    fn draw(&mut self, _bar: &indicatif::ProgressBar) {}
}
