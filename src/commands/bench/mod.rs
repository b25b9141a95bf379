//! `storlab bench`: run I/O workloads and report what the storage did.
//!
//! With no workload options it runs the newcomer's quick all-round check:
//! sequential write and read, random read and write, a few seconds each.
//!
//! [`BenchCommand::execute`] reads as its steps: build the phases (job
//! file, machine defaults, flags), check everything that can be checked
//! before any file exists (tags, database, output paths), resolve the target
//! (files created), run with signals and progress watched, save each phase
//! as it finishes, then report and make sure the results exist somewhere.
//! `live` (signals, progress), `sink` (store, fallback file) and `storlab_print::bench`
//! (the summary) are its parts; sweeps and MPI runs reuse them.

mod cluster_args;
#[cfg(feature = "mpi")]
mod mpi;
mod repeat;

pub use cluster_args::ClusterArgs;
use storlab_print::bench::render_table;
use storlab_types::RunKind;

use crate::commands::run::{
    Live, OutputFormat, RunArgs, RunDoc, Sink, check_paths, conclude, open_sink_tagged, verdict,
};
use crate::commands::signals::Signals;

use crate::Outcome;
use crate::commands::workload::WorkloadArgs;
use crate::output::Reply;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::jobspec::Source;
use storlab_bench::profiles::Profile;
use storlab_bench::{Control, PhaseSpec, ResolvedJob, RunOutcome, SafetyOptions, ior, jobspec};
use storlab_types::time::now_rfc3339;
use storlab_types::{BenchReport, MonitorTimeline, RepeatInfo};

const QUICK_HELP: &str = "\
Without --rw (and without --job), bench runs the quick all-round check of the
storage under TARGET (default ./storlab-scratch, created and removed): four
phases of 3 s each on one 256 MiB file, sequential 1 MiB write at QD 16 (its
first pass also lays the file out), sequential 1 MiB read at QD 16, random
4 KiB read at QD 32 and random 4 KiB write at QD 32; O_DIRECT where the file
system supports it (buffered with the cache evicted where it does not). It
writes for a few seconds under the current directory. Any workload flag
given (e.g. --size 1G, --engine psync) applies to all four phases.

The workload flags below are also job-file keys (with underscores) and
sweep parameters; fio's spellings are accepted (--ioengine, --direct=1,
--iodepth_batch, --norandommap, --zero_buffers, --randrepeat=0, --rwmixwrite,
--buffered, --log_avg_msec, --group_reporting, --filename, --directory, ...;
given twice, the last wins), and `--fio-job FILE.fio` runs an fio job file.
Sizes on storlab's flags follow SI/IEC (4k = 4KiB = 4096, 4kB = 4000);
inside fio job files they follow fio (kb_base: 4KiB = 4000 there).

An existing file or block device as the target is used whole (its size is
the default --size), as fio does. Each phase's result keeps the
application's own bandwidth, IOPS and latency percentiles per --log-interval
(default 1s); --steadystate stops a phase once it is flat; --repeat N runs the
whole job N times and prints mean, stddev, min and max.";

/// `storlab bench [TARGET]`
#[derive(Args, Debug)]
#[command(after_long_help = QUICK_HELP)]
pub struct BenchCommand {
    /// Directory (storlab makes its own subdirectory), new file path, or block
    /// device [default: ./storlab-scratch]
    pub target: Option<PathBuf>,
    /// TOML job file with [global] and [[phase]] tables
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// Run an fio job file: [global] and job sections, fio's option names,
    /// units (kb_base) and defaults (buffered, psync); jobs that no
    /// `stonewall` separates run together as the groups of one phase, as in
    /// fio (`stonewall`, `wait_for` start the next phase). Options storlab
    /// cannot run are refused by name. Flags given here override the file
    #[arg(long, value_name = "FILE.fio", conflicts_with = "job")]
    pub fio_job: Option<PathBuf>,
    /// fio's spelling of TARGET for a file or block device
    #[arg(long, value_name = "PATH", conflicts_with_all = ["target", "directory"])]
    pub filename: Option<PathBuf>,
    /// fio's spelling of TARGET for a directory (storlab works in its own
    /// subdirectory of it)
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    pub directory: Option<PathBuf>,
    /// Run a shipped or user profile (storlab profiles lists them; flags override its values)
    #[arg(long, value_name = "NAME", conflicts_with = "job")]
    pub profile: Option<String>,
    /// IOR's flags, translated: `--ior '-a POSIX -t 1m -b 16m -s 4 -F -e -w -r'` (-t transfer =
    /// --bs, -b block per task and -s segments = the layout and --size, -F file per process, -B
    /// O_DIRECT, -e end fsync, -w/-r phases, -z random, -Y fsync each write, -C --reorder-tasks,
    /// -D --stonewall, -O stoneWallingWearOut=1, -i --repeat, -k --keep, -o TARGET); a flag storlab
    /// cannot honour is refused by name. Flags given here override the translation
    #[arg(long, value_name = "'IOR FLAGS'", conflicts_with_all = ["job", "fio_job", "profile", "group"],
          allow_hyphen_values = true)]
    pub ior: Option<String>,
    /// Print the phases the job file, profile, flags or quick check resolve to, every value and
    /// where it came from (flag, FILE:LINE, fio default, machine, default), then stop: nothing is
    /// run, created or saved (with --ior: also how each IOR flag maps). fio's --showcmd too
    #[arg(long, visible_alias = "showcmd")]
    pub dry_run: bool,
    /// The job the --ior flags make (TOML).
    #[arg(skip)]
    ior_job: Option<String>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Run a job group: several --group options make ONE phase whose groups
    /// start together and run at once (e.g. the SAS dd test: --group
    /// 'rw=read numjobs=6 bs=1M' --group 'rw=write numjobs=3 bs=1M').
    /// OPTIONS are key=value words (job-file keys: rw, bs, bssplit, iodepth,
    /// numjobs, size, rate_iops, thinktime, cache, runtime, time_based,
    /// name, ...); what a group does not set comes from the other flags.
    /// Each group runs to its own end; the phase ends when the last does
    #[arg(long = "group", value_name = "OPTIONS", conflicts_with = "fio_job")]
    pub group: Vec<String>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Run the whole job N times (as IOR's -i): prints the mean, standard
    /// deviation, min and max of each figure; each repeat is saved as its own
    /// run tagged repeat_group=ID, so `compare` uses their spread as the noise
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Write every I/O of the run to FILE (new) as fio's iolog v3: `fio --read_iolog`, `storlab replay`
    /// (under MPI each rank writes FILE with its rank inserted: run.iolog -> run.rank0.iolog, ...)
    #[arg(long, value_name = "FILE")]
    pub write_iolog: Option<PathBuf>,
}

/// Phases resolved from what the user gave, with the target they name.
pub type PlannedJob = storlab_bench::jobspec::Job;

impl BenchCommand {
    pub fn execute(mut self) -> Result<Reply> {
        if let Some(refused) = self.workload.refusal_in(Some("bench")) {
            return refused.map(Reply::done);
        }
        if let Some(flags) = self.ior.clone() {
            let t = ior::translate(&flags)?;
            self.apply_ior(t);
        }
        if self.dry_run {
            return self.dry_run();
        }
        let fio_json = self.run.out.take_fio_json();
        if fio_json && (self.repeat > 1 || crate::commands::run::launcher_rank().is_some()) {
            anyhow::bail!(
                "--output-format fio-json is not available with --repeat or under MPI yet: use --output-format json"
            );
        }
        #[cfg(feature = "mpi")]
        if mpi::launched() {
            let planned = self.plan().and_then(|(p, _)| Ok(p.without_groups()?));
            return mpi::execute(self, planned).map(Reply::done);
        }
        self.cluster.reject_outside_mpi()?;
        #[cfg(not(feature = "mpi"))]
        if crate::commands::run::launcher_rank().is_some() {
            eprintln!(
                "storlab: warning: started by an MPI launcher, but this storlab was built without MPI: \
                 each process runs on its own (rebuild with --features mpi for one multi-client run)"
            );
        }
        let (planned, profile) = self.plan()?;
        let mut planned = planned.without_rank_sets()?;
        planned.keep_latency_distribution(fio_json);
        let extra = |r: &BenchReport| {
            profile
                .as_ref()
                .and_then(|p| storlab_bench::profiles::per_core_figures(p, r))
        };
        let iolog = storlab_bench::iolog::Recording::maybe(self.write_iolog.as_deref())?;
        self.run.iolog = iolog.as_ref().map(storlab_bench::iolog::Recording::sink);
        let reply = if self.repeat > 1 {
            repeat::run(planned, &self.run, self.repeat, &extra)
        } else {
            // Signals are watched from before the first scratch file exists: a
            // SIGHUP/SIGTERM during layout stops the run and cleans up like Ctrl-C.
            let signals = Signals::install()?;
            let (outcome, report, mut doc) = run_once(planned, &self.run, None, &extra, &signals)?;
            if fio_json {
                doc.json = format!("{:#}\n", storlab_print::fiojson::render(&report));
            }
            let mut reply = Reply::doc(doc, self.run.out.rendering());
            reply.outcome = outcome;
            Ok(reply)
        };
        self.run.iolog = None;
        storlab_bench::iolog::Recording::end(iolog)?;
        reply
    }

    /// `--dry-run`: the phases with every value and its source; nothing runs.
    fn dry_run(&self) -> Result<Reply> {
        let (planned, _, source, over) = self.plan_from()?;
        let (table, json) = source.dry_run(&planned, &over)?;
        let ior = self.ior.as_deref().map(ior::translate).transpose()?;
        let ior = ior.map(|t| ior::render(&t) + "\n").unwrap_or_default();
        let doc = RunDoc::new(ior + &table, json + "\n");
        Ok(Reply::doc(doc, self.run.out.rendering()))
    }

    /// The run-level part of an IOR translation (flags given as storlab's
    /// own win); the phases are planned from its job.
    fn apply_ior(&mut self, t: ior::IorTranslation) {
        if self.repeat == 1
            && let Some(n) = t.repeat
        {
            self.repeat = n;
        }
        self.run.keep |= t.keep;
        if self.cluster.stonewall.is_none() {
            self.cluster.stonewall = t.stonewall;
        }
        self.cluster.stonewall_wear_out |= t.wear_out;
        self.cluster.reorder_tasks |= t.reorder_tasks;
        self.ior_job = Some(t.job_toml);
    }

    /// The phases from the job file, fio job file, profile or flags, and
    /// the profile used.
    fn plan(&self) -> Result<(PlannedJob, Option<storlab_bench::profiles::Profile>)> {
        self.plan_from().map(|(job, profile, ..)| (job, profile))
    }

    /// [`Self::plan`], with what the job was built from and the flags' layer.
    fn plan_from(&self) -> Result<(PlannedJob, Option<Profile>, Source, PhaseSpec)> {
        let (t, f, d) = (&self.target, &self.filename, &self.directory);
        let target = jobspec::pick_target(t.as_deref(), f.as_deref(), d.as_deref())?;
        let profile = match &self.profile {
            Some(name) => Some(crate::commands::workload::find_profile(name)?),
            None => None,
        };
        let mut spec = self.workload.spec()?.clone();
        let groups = self.group.iter().map(|g| storlab_bench::parse_group_arg(g));
        spec.group = groups.collect::<Result<_, _>>()?;
        let profile_path = profile.as_ref().map(Profile::job_path);
        let given = jobspec::Given {
            ior: self.ior_job.as_deref(),
            fio: self.fio_job.as_deref(),
            profile: (profile.as_ref().zip(profile_path.as_deref()))
                .map(|(p, path)| (p.job_text.as_str(), path)),
            job: self.job.as_deref(),
        };
        let read = |p: &Path, what: &str| crate::commands::common::read_input(p, what);
        let source = Source::pick(given, &spec, read)?;
        let planned = source.build(target.as_deref(), &spec)?;
        Ok((planned, profile, source, spec))
    }
}

/// Run planned phases to the end, as one of `--repeat N` (tagged and
/// labelled as such) or alone; returns how it ended, the record and the
/// document to show. `signals` is installed once per command, so a signal
/// between two repeats is not lost.
fn run_once(
    planned: PlannedJob,
    args: &RunArgs,
    repeat: Option<&RepeatInfo>,
    extra: &dyn Fn(&BenchReport) -> Option<String>,
    signals: &Signals,
) -> Result<(Outcome, BenchReport, RunDoc)> {
    let started_at = now_rfc3339();
    let mut warnings = planned.warnings;
    // Everything checkable is checked before any file is created.
    let json_out = check_paths(planned.target.as_deref(), args)?;
    let mut sink = open_sink(args, repeat)?;
    sink.json_out_to(json_out);
    let host_label = crate::commands::config::get()?.host.clone();
    let safety = SafetyOptions {
        allow_destroy: args.allow_destroy,
    };
    let mut job = storlab_bench::prepare(planned.target.as_deref(), planned.phases, safety)?;
    if let Some(label) = &host_label {
        // The site's name for this host, as the config file says.
        job.host.hostname = label.clone();
    }
    warnings.extend(job.warnings.iter().cloned());
    let modes: Vec<_> = job.phases.iter().map(|p| p.cache).collect();
    if let Some(f) = job.target.files.first() {
        let found = storlab_monitor::page_cache::page_cache_only(&f.path, &modes);
        warnings.extend(found.map(|w| w.to_string()));
    }
    let header = job.header(started_at, warnings, repeat.cloned());
    if let Err(e) = sink.begin(RunKind::Bench, &header) {
        job.target.cleanup();
        return Err(e);
    }
    let (outcome, monitor, signal) = measure(&job, args, &mut sink, signals.clone());
    let report = job.finish_record(header, outcome, monitor, args.keep);
    let (report, doc, ending) = conclude(report, &mut sink, |r| {
        let mut text = render_table(r);
        text.extend(extra(r));
        text
    })?;
    Ok((verdict(&report, ending, signal), report, doc))
}

/// Open the store and check the labels (or nothing, with `--no-save`).
fn open_sink(args: &RunArgs, repeat: Option<&RepeatInfo>) -> Result<Sink> {
    let extra: Vec<(&str, String)> = repeat
        .map(|r| ("repeat_group", r.group.clone()))
        .into_iter()
        .collect();
    open_sink_tagged(args, &extra)
}

/// Run the phases with signals, progress and the device sampler watched.
/// Returns the outcome, the device timeline and the signal that stopped it.
fn measure(
    job: &ResolvedJob,
    args: &RunArgs,
    sink: &mut Sink,
    signals: Signals,
) -> (RunOutcome, Option<MonitorTimeline>, Option<i32>) {
    let control = Arc::new(Control::new(job.max_jobs()));
    if let Some(sink) = &args.iolog {
        control.record_iolog(Arc::clone(sink));
    }
    let names = job.phases.iter().map(|p| p.name.clone()).collect();
    let live = Live::start(Arc::clone(&control), signals.clone(), args.quiet, names);
    let mut notes = Vec::new();
    let mut warn = |w: storlab_monitor::sampler::RunSampling| notes.push(w.to_string());
    let at = &job.target.files[0].path;
    let sampler = (args.monitor)
        .then(|| storlab_monitor::sampler::sample_run(at, args.monitor_interval))
        .and_then(|s| s.map_err(&mut warn).ok());
    let mut outcome = storlab_bench::run(job, &control, |phase| sink.phase(phase));
    let monitor = sampler.and_then(|h| h.stop_run().map_err(&mut warn).ok());
    live.stop();
    outcome.warnings.extend(notes);
    (outcome, monitor, signals.received())
}
