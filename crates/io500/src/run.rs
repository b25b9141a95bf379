//! `storlab io500`: IO500's phases, in IO500's order and with IO500's
//! parameters, each on storlab's own engine: the IOR phases through
//! `storlab_bench` (jobs made from IOR's own flags by
//! `storlab_bench::ior`), the mdtest phases through `storlab_md`, find as
//! pfind does it. Ranks are threads of this process (`--np`).
//!
//! The shape, as io500 (02091cf) runs it (see [`crate::plan`]):
//! ior-easy-write (a file per rank, stonewalled with wear-out),
//! mdtest-easy-write (empty files, a directory per rank, stonewalled with
//! wear-out), the timestamp, ior-hard-write (47,008-byte transfers into one
//! shared file, strided), mdtest-hard-write (3,901-byte files in one shared
//! directory), find, ior-easy-read (exactly what was written),
//! mdtest-easy-stat (exactly the files made), ior-hard-read,
//! mdtest-hard-stat, mdtest-easy-delete, mdtest-hard-read,
//! mdtest-hard-delete, ior-rnd4K-easy-read (not scored). One phase runs at
//! a time; a phase's ranks run concurrently.
//!
//! Everything is made inside the directory the caller hands over
//! (storlab's own subdirectory of the target): `datafiles/` (io500's
//! datadir) and `results/timestampfile`.

mod find;
mod ior;
mod md;
pub mod mpi;
pub mod reorder;
mod sync;

pub use find::{
    FindCount, find as pfind, find_on_ranks as pfind_on_ranks, matches as pfind_matches,
};

use crate::config::Config;
use crate::phases::{self, ScoreGroup};
pub use crate::summary::{SHORT_WARNING, phase_score};
use crate::validity::{self, Reason};
use md::Which;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use storlab_md::Op;
use storlab_types::{DirStats, EngineKind, PhaseParams, PhaseResult, RwMode};

/// Sizes `--short` uses where the config sets none: a few seconds of
/// work on a small scratch area.
pub mod short {
    /// ior-easy's block per rank.
    pub const IOR_EASY_BLOCK: u64 = 256 << 20;
    /// ior-hard's segments (47,008 bytes each per rank).
    pub const IOR_HARD_SEGMENTS: u64 = 2_000;
    /// mdtest-easy's files per rank.
    pub const MDTEST_EASY_FILES: u64 = 50_000;
    /// mdtest-hard's files per rank.
    pub const MDTEST_HARD_FILES: u64 = 20_000;
    /// The stonewall time, seconds.
    pub const STONEWALL_S: u64 = 5;
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Ranks (threads), each doing what one io500 MPI rank does.
    pub ranks: u32,
    /// `--short`: small sizes where the config sets none, 5 s stonewall.
    pub short: bool,
    /// `--stonewall`: overrides `[debug] stonewall-time`.
    pub stonewall_s: Option<u64>,
    /// `--keep`: leave the files the phases made (the caller keeps its
    /// directory too).
    pub keep: bool,
}

impl Options {
    /// `--np`, `--short`, `--stonewall` (whole seconds, at least 1),
    /// `--keep`.
    pub fn new(ranks: u32, short: bool, stonewall: Option<Duration>, keep: bool) -> Options {
        Options {
            ranks,
            short,
            stonewall_s: stonewall.map(|d| d.as_secs().max(1)),
            keep,
        }
    }
}

/// What the run does, resolved from the config and the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub ranks: u32,
    pub stonewall_s: u64,
    pub easy_transfer: u64,
    pub easy_block: u64,
    pub file_per_proc: bool,
    pub hard_segments: u64,
    pub md_easy_files: u64,
    pub md_hard_files: u64,
    pub short: bool,
    pub keep: bool,
    /// Which of the phases that write much run (the free-space check
    /// counts only these): ior-easy-write, ior-hard-write,
    /// mdtest-hard-write.
    pub writes: [bool; 3],
}

impl Job {
    /// The job `cfg` and `opts` describe (io500's defaults where the
    /// config sets nothing, the short sizes under `--short`).
    pub fn resolve(cfg: &Config, opts: &Options) -> Result<Job, RunError> {
        let bad = |m: String| Err(RunError::Setup(m));
        if opts.ranks == 0 {
            return bad("--np 0 runs nothing: give --np 1 or more".into());
        }
        let short_or = |set: bool, v: u64, s: u64| if opts.short && !set { s } else { v };
        let (t, b) = cfg.ior_easy_sizes().unwrap_or((2 << 20, 9_920_000 << 20));
        let easy_block = short_or(
            cfg.is_set("ior-easy", "blockSize"),
            b,
            short::IOR_EASY_BLOCK,
        );
        if t == 0 || easy_block % t != 0 {
            return bad(format!(
                "[ior-easy] blockSize {easy_block} is not a multiple of transferSize {t}: fix config.ini"
            ));
        }
        let stonewall_s = opts.stonewall_s.unwrap_or(short_or(
            cfg.is_set("debug", "stonewall-time"),
            cfg.stonewall_seconds(),
            short::STONEWALL_S,
        ));
        if stonewall_s == 0 {
            return bad(
                "a stonewall of 0 s stops every write before it starts: give e.g. --stonewall 5s"
                    .into(),
            );
        }
        Ok(Job {
            ranks: opts.ranks,
            stonewall_s,
            easy_transfer: t,
            easy_block,
            file_per_proc: cfg
                .get("ior-easy", "filePerProc")
                .is_some_and(|v| v.starts_with('T')),
            hard_segments: short_or(
                cfg.is_set("ior-hard", "segmentCount"),
                cfg.ior_hard_segments().unwrap_or(10_000_000),
                short::IOR_HARD_SEGMENTS,
            ),
            md_easy_files: short_or(
                cfg.is_set("mdtest-easy", "n"),
                cfg.files_per_proc("mdtest-easy").unwrap_or(1_000_000),
                short::MDTEST_EASY_FILES,
            ),
            md_hard_files: short_or(
                cfg.is_set("mdtest-hard", "n"),
                cfg.files_per_proc("mdtest-hard").unwrap_or(1_000_000),
                short::MDTEST_HARD_FILES,
            ),
            short: opts.short,
            keep: opts.keep,
            writes: ["ior-easy-write", "ior-hard-write", "mdtest-hard-write"].map(|p| cfg.runs(p)),
        })
    }

    /// Bytes the phases that run may write at most (the free-space check).
    pub fn max_bytes(&self) -> u64 {
        let r = u64::from(self.ranks);
        let easy = self.easy_block.saturating_mul(r);
        let hard = crate::phases::fixed::IOR_HARD_TRANSFER
            .saturating_mul(self.hard_segments)
            .saturating_mul(r);
        let md = crate::phases::fixed::MDTEST_HARD_FILE_SIZE
            .saturating_mul(self.md_hard_files)
            .saturating_mul(r);
        [easy, hard, md]
            .into_iter()
            .zip(self.writes)
            .filter(|&(_, runs)| runs)
            .fold(0u64, |a, (b, _)| a.saturating_add(b))
    }

    /// io500's phases fit in `free` bytes (the target's free space before
    /// anything is written; None when unknown): the refusal names the
    /// sizes and the fix.
    pub fn check_space(&self, target: &Path, free: Option<u64>) -> Result<(), RunError> {
        match free {
            Some(free) if free < self.max_bytes() => Err(RunError::NoSpace {
                target: target.display().to_string(),
                need: self.max_bytes(),
                free,
            }),
            _ => Ok(()),
        }
    }

    /// Why every run of this job is INVALID (io500's reasons: the config's,
    /// and the stonewall time against the rules').
    pub fn run_reasons(&self, cfg: &Config) -> Vec<Reason> {
        let mut out: Vec<Reason> = cfg
            .invalid_reasons()
            .into_iter()
            .filter(|r| !matches!(r, Reason::StonewallTime { .. }))
            .collect();
        let required = cfg.minimum_seconds();
        if self.stonewall_s != required {
            out.insert(
                0,
                Reason::StonewallTime {
                    configured: self.stonewall_s,
                    required,
                },
            );
        }
        out
    }
}

/// The job of config file `cfg` (None: io500's defaults) and `opts`;
/// `launched`: the ranks of an MPI launch (they replace `--np`).
pub fn resolve(
    cfg: Option<&std::path::PathBuf>,
    opts: &Options,
    launched: Option<u32>,
) -> Result<(Job, Config), RunError> {
    let bad = |m: String| RunError::Setup(m);
    let cfg = match cfg {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| bad(format!("cannot read the io500 config {}: {e}", p.display())))?;
            Config::parse(&text).map_err(|e| bad(format!("{}: {e}", p.display())))?
        }
        None => Config::parse("").map_err(|e| bad(e.to_string()))?,
    };
    let mut opts = opts.clone();
    if let Some(n) = launched {
        if opts.ranks != 1 {
            return Err(bad(format!(
                "--np {} under an MPI launcher: the ranks are the launcher's (mpirun -np {n}); drop --np",
                opts.ranks
            )));
        }
        opts.ranks = n;
    }
    Ok((Job::resolve(&cfg, &opts)?, cfg))
}

/// The run in this process (ranks as threads), behind the front end:
/// storlab's directory made, the phases run and saved one by one, the
/// directory removed (unless `--keep`), the run scored and shown; its
/// exit code.
pub fn run_local<F: mpi::Io500Front>(
    front: &mut F,
    (job, cfg): &(Job, Config),
    (target, quiet): (&Path, bool),
) -> Result<u8, storlab_cluster::step::Failed> {
    let (dir, mut rec) = mpi::prepare(front, target, job)?;
    let stop = Stop::new(job.ranks);
    front.watch(Some((&stop, quiet)));
    let ran = run(job, cfg, &dir, &stop, |ph| front.phase(&mut rec, ph));
    front.watch(None);
    if !job.keep {
        front.remove(&dir);
    }
    front.finish(rec, ran, job, cfg)
}

/// Why a run could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The job cannot run (exit 2 before anything is made).
    #[error("{0}")]
    Setup(String),
    /// Something failed on the way.
    #[error("{0}")]
    Io(String),
    /// The phases may write more than the target has free.
    #[error(
        "not enough free space on {target}: io500's phases may write {} and {} is free; \
         use --short or smaller sizes in config.ini ([ior-easy] blockSize, [ior-hard] segmentCount)",
        storlab_types::format_bytes(*need),
        storlab_types::format_bytes(*free)
    )]
    NoSpace {
        target: String,
        need: u64,
        free: u64,
    },
}

/// Stops a run: set from a signal handler's thread, seen by every engine.
#[derive(Debug)]
pub struct Stop {
    easy: Arc<storlab_bench::Control>,
    hard: Arc<storlab_bench::Control>,
    md: Arc<storlab_md::Control>,
    flag: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl Stop {
    /// A stop for a run of `ranks` ranks.
    pub fn new(ranks: u32) -> Arc<Stop> {
        let jobs = ranks as usize;
        Arc::new(Stop {
            easy: Arc::new(storlab_bench::Control::new(jobs)),
            hard: Arc::new(storlab_bench::Control::new(jobs)),
            md: Arc::new(storlab_md::Control::new()),
            flag: AtomicBool::new(false),
            reason: Mutex::new(None),
        })
    }

    /// Stop the run at once, saying why (the first reason is kept).
    pub fn request(&self, why: &str) {
        if let Ok(mut r) = self.reason.lock() {
            r.get_or_insert_with(|| why.to_string());
        }
        self.flag.store(true, Ordering::SeqCst);
        self.easy.request_stop(why);
        self.hard.request_stop(why);
        self.md.request_stop(why);
    }

    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    pub fn reason(&self) -> Option<String> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The phases run, in io500's order, with io500's INVALID reasons as
    /// warnings.
    pub phases: Vec<PhaseResult>,
    /// Why it stopped before the end.
    pub stop_reason: Option<String>,
    /// Why the run failed (a phase or its setup could not go on): the run
    /// is recorded INVALID with this reason, the phases done before it
    /// kept.
    pub failed: Option<String>,
}

/// The io500 phases storlab runs, in order (the standard run, with the
/// timestamp find's `-newer` compares with).
pub fn phase_names() -> Vec<&'static str> {
    standard().map(|p| p.name).collect()
}

fn standard() -> impl Iterator<Item = &'static phases::Phase> {
    phases::PHASES
        .iter()
        .filter(|p| !p.optional && (!p.dummy || p.name == "timestamp"))
}

/// Run `job` inside `dir` (storlab's own, empty directory). `on_phase`
/// gets each phase as it finishes. A failure does not lose the phases
/// done before it: the outcome carries them and the reason
/// ([`Outcome::failed`]), so the stored run can be finished as failed.
pub fn run(
    job: &Job,
    cfg: &Config,
    dir: &Path,
    stop: &Stop,
    on_phase: impl FnMut(&PhaseResult),
) -> Outcome {
    let mut out = Outcome::default();
    if let Err(e) = run_phases(job, cfg, dir, stop, on_phase, &mut out) {
        out.failed = Some(e.to_string());
    }
    if out.stop_reason.is_none() && stop.requested() {
        out.stop_reason = stop.reason();
    }
    out
}

fn run_phases(
    job: &Job,
    cfg: &Config,
    dir: &Path,
    stop: &Stop,
    on_phase: impl FnMut(&PhaseResult),
    out: &mut Outcome,
) -> Result<(), RunError> {
    let data = dir.join("datafiles");
    let res = dir.join("results");
    make_dirs(&data, &res)?;
    let (easy, hard) = ior_jobs(job, cfg);
    let specs = md_specs(job);
    let mut easy_job = ior::Stepper::start(
        &easy,
        &data.join("ior-easy"),
        Arc::clone(&stop.easy),
        job.keep,
    )?;
    let mut hard_job = match ior::Stepper::start(
        &hard,
        &data.join("ior-hard"),
        Arc::clone(&stop.hard),
        job.keep,
    ) {
        Ok(h) => h,
        Err(e) => {
            easy_job.close();
            return Err(e);
        }
    };
    let r = std::thread::scope(|s| -> Result<(), RunError> {
        let mut ranks = md::MdRanks::start(s, job.ranks, specs.clone(), &data, &stop.md);
        let mut threads = Threads {
            job,
            easy: &mut easy_job,
            hard: &mut hard_job,
            md: &ranks,
            data: &data,
            stamp: res.join("timestampfile"),
            stamp_ctime_s: 0,
        };
        let r = drive(&mut threads, job, cfg, stop, out, on_phase);
        ranks.close();
        r
    });
    easy_job.close();
    hard_job.close();
    r
}

/// `datafiles/` with ior-easy's and ior-hard's directories, and `results/`.
fn make_dirs(data: &Path, res: &Path) -> Result<(), RunError> {
    for d in [data, res, &data.join("ior-easy"), &data.join("ior-hard")] {
        std::fs::create_dir_all(d)
            .map_err(|e| RunError::Io(format!("cannot make {}: {e}", d.display())))?;
    }
    Ok(())
}

/// ior-easy's and ior-hard's IOR jobs for `job.ranks` ranks.
fn ior_jobs(job: &Job, cfg: &Config) -> (ior::IorJob, ior::IorJob) {
    let easy = ior::IorJob {
        easy: true,
        ranks: job.ranks,
        transfer: job.easy_transfer,
        block: job.easy_block,
        segments: 1,
        file_per_proc: job.file_per_proc,
        stonewall_s: job.stonewall_s,
        rnd4k: cfg.runs("ior-rnd4K-easy-read"),
    };
    let hard = ior::IorJob {
        easy: false,
        ranks: job.ranks,
        transfer: phases::fixed::IOR_HARD_TRANSFER,
        block: phases::fixed::IOR_HARD_TRANSFER,
        segments: job.hard_segments,
        file_per_proc: false,
        stonewall_s: job.stonewall_s,
        rnd4k: false,
    };
    (easy, hard)
}

/// mdtest-easy's and mdtest-hard's specs.
fn md_specs(job: &Job) -> [storlab_md::MdSpec; 2] {
    let stonewall = Duration::from_secs(job.stonewall_s);
    [
        md::spec(Which::Easy, job.md_easy_files, stonewall),
        md::spec(Which::Hard, job.md_hard_files, stonewall),
    ]
}

/// One phase as the ranks ran it.
pub(crate) struct Ran {
    /// The phase's figures over every rank (None on an MPI rank other
    /// than 0, and when the phase's engine stopped before it finished).
    pub result: Option<PhaseResult>,
    /// The run stops after this phase (every rank agrees).
    pub stopped: bool,
}

impl Ran {
    /// A phase the ranks of one process ran: it stops the run when its
    /// engine stopped (no result) or it was interrupted.
    fn local(r: Option<PhaseResult>) -> Ran {
        Ran {
            stopped: r.as_ref().is_none_or(|r| r.interrupted),
            result: r,
        }
    }
}

/// How the ranks run io500's phases: ranks as threads of this process
/// ([`Threads`]) or one MPI rank per process ([`mpi`]). Every call is
/// collective under MPI.
pub(crate) trait Ranks {
    /// Whether a stop was asked for (`here`: on this rank; under MPI, on
    /// any rank).
    fn stop_requested(&self, here: bool) -> bool;
    /// Why the run stops, on rank 0: `here` (this rank's reason) or,
    /// under MPI, the first reason another rank was given, naming that
    /// rank (a batch system's signal reaches the ranks at different
    /// moments). Collective under MPI.
    fn stop_reason(&self, here: Option<String>) -> Option<String>;
    /// Run phase `name` (the timestamp included) on every rank.
    fn phase(&mut self, name: &str) -> Result<Ran, RunError>;
}

/// io500's phases in io500's order on `ranks`: each phase marked with
/// io500's checks and handed to `on_phase` (on rank 0) as it finishes.
pub(crate) fn drive(
    ranks: &mut impl Ranks,
    job: &Job,
    cfg: &Config,
    stop: &Stop,
    out: &mut Outcome,
    mut on_phase: impl FnMut(&PhaseResult),
) -> Result<(), RunError> {
    for p in standard() {
        if ranks.stop_requested(stop.requested()) {
            out.stop_reason = ranks.stop_reason(stop.reason());
            break;
        }
        let name = p.name;
        if name != "timestamp" && !cfg.runs(name) {
            continue;
        }
        let ran = ranks
            .phase(name)
            .map_err(|e| RunError::Io(format!("{name}: {e}")))?;
        if let Some(mut r) = ran.result.filter(|_| name != "timestamp") {
            r.params.name = name.to_string();
            mark(&mut r, p, job, cfg);
            on_phase(&r);
            out.phases.push(r);
        }
        if ran.stopped {
            out.stop_reason = ranks
                .stop_reason(stop.reason())
                .or_else(|| Some(format!("{name} stopped before it finished")));
            break;
        }
    }
    Ok(())
}

/// Ranks as threads of this process: each IOR job one bench job of
/// `ranks` jobs, mdtest a thread per rank, find `ranks` walkers.
struct Threads<'a> {
    job: &'a Job,
    easy: &'a mut ior::Stepper,
    hard: &'a mut ior::Stepper,
    md: &'a md::MdRanks,
    data: &'a Path,
    stamp: std::path::PathBuf,
    /// The timestamp file's ctime, seconds (pfind's `-newer`).
    stamp_ctime_s: i64,
}

impl Ranks for Threads<'_> {
    fn stop_requested(&self, here: bool) -> bool {
        here
    }

    fn stop_reason(&self, here: Option<String>) -> Option<String> {
        here
    }

    fn phase(&mut self, name: &str) -> Result<Ran, RunError> {
        self.one(name).map(Ran::local)
    }
}

impl Threads<'_> {
    /// Run phase `name`: its result, None when its engine stopped.
    fn one(&mut self, name: &str) -> Result<Option<PhaseResult>, RunError> {
        let md = |which: Which, op: Op| -> Result<Option<PhaseResult>, RunError> {
            let started = storlab_types::time::now_rfc3339();
            let (parts, _stop) = self.md.step(which, op).map_err(RunError::Io)?;
            let spec = &self.md.specs[which as usize];
            let tree = spec.check().map_err(|e| RunError::Setup(e.to_string()))?;
            Ok(Some(storlab_md::record::phase_result(
                spec, &tree, &parts, started,
            )))
        };
        match name {
            "ior-easy-write" | "ior-easy-read" | "ior-rnd4K-easy-read" => Ok(self.easy.next(name)),
            "ior-hard-write" | "ior-hard-read" => Ok(self.hard.next(name)),
            "mdtest-easy-write" => md(Which::Easy, Op::Create),
            "mdtest-easy-stat" => md(Which::Easy, Op::Stat),
            "mdtest-easy-delete" => md(Which::Easy, Op::Delete),
            "mdtest-hard-write" => md(Which::Hard, Op::Create),
            "mdtest-hard-stat" => md(Which::Hard, Op::Stat),
            "mdtest-hard-read" => md(Which::Hard, Op::Read),
            "mdtest-hard-delete" => md(Which::Hard, Op::Delete),
            "timestamp" => {
                self.stamp_ctime_s = timestamp(&self.stamp)?;
                Ok(Some(blank(PhaseParams::default())))
            }
            "find" => {
                let started = storlab_types::time::now_rfc3339();
                let flag = AtomicBool::new(false);
                let c = find::find(self.data, self.stamp_ctime_s, self.job.ranks, &flag);
                Ok(Some(find_result(&c, self.job.ranks, started)))
            }
            other => Err(unknown(other)),
        }
    }
}

fn unknown(phase: &str) -> RunError {
    RunError::Setup(format!("io500 phase {phase} is not run by storlab"))
}

/// Write the timestamp file find's `-newer` compares with: its ctime, s.
fn timestamp(stamp: &Path) -> Result<i64, RunError> {
    std::fs::write(stamp, b"")
        .map_err(|e| RunError::Io(format!("cannot write {}: {e}", stamp.display())))?;
    std::fs::metadata(stamp)
        .map(|m| std::os::unix::fs::MetadataExt::ctime(&m))
        .map_err(|e| RunError::Io(format!("cannot stat {}: {e}", stamp.display())))
}

/// The find phase as a stored phase: files looked at per second.
fn find_result(c: &FindCount, ranks: u32, started_at: String) -> PhaseResult {
    let secs = (c.elapsed_ns as f64 / 1e9).max(1e-9);
    let stats = DirStats {
        ops: c.total,
        iops: c.total as f64 / secs,
        ..DirStats::default()
    };
    let mut warnings = vec![format!(
        "find: {} of {} files matched (-newer timestamp -size 3901c -name *01*)",
        c.found, c.total
    )];
    if c.errors > 0 {
        warnings.push(format!("find: {} entries could not be read", c.errors));
    }
    let mut r = blank(PhaseParams {
        name: "find".into(),
        rw: RwMode::Read,
        rwmixread: 100,
        numjobs: ranks,
        iodepth: 1,
        engine: EngineKind::Psync,
        ..PhaseParams::default()
    });
    r.started_at = started_at;
    r.elapsed_ns = c.elapsed_ns;
    r.read = stats;
    r.total = stats;
    r.warnings = warnings;
    if c.errors > 0 {
        r.errors.insert("unreadable".into(), c.errors);
    }
    r
}

/// A phase with nothing measured yet.
fn blank(params: PhaseParams) -> PhaseResult {
    PhaseResult {
        device_stat: None,
        params,
        started_at: String::new(),
        elapsed_ns: 0,
        latency_span: String::new(),
        read: DirStats::default(),
        write: DirStats::default(),
        total: DirStats::default(),
        jobs: Vec::new(),
        cpu: storlab_types::CpuStats::default(),
        errors: Default::default(),
        cache: storlab_types::CacheReport::default(),
        verify: None,
        depth: None,
        interrupted: false,
        warnings: Vec::new(),
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
        fsync_in_window: false,
        end_fsync_ns: 0,
    }
}

/// io500's checks after a phase, as warnings of the phase (the words
/// `storlab import` uses for a real io500's reasons).
fn mark(r: &mut PhaseResult, p: &phases::Phase, job: &Job, cfg: &Config) {
    // IOR's read check (`-R`) counts a bad transfer as an error, which
    // invalidates the run as any I/O error does.
    let mismatches = r.verify.as_ref().map_or(0, |v| v.mismatches);
    let errors: u64 = r.errors.values().sum::<u64>() + mismatches;
    let mut reasons = validity::check_phase(
        p,
        r.elapsed_ns as f64 / 1e9,
        phase_score(r),
        job.stonewall_s,
        cfg.minimum_seconds(),
        errors,
    );
    // pfind's score is the files looked at; finding none is its own reason.
    if p.name == "find" && r.warnings.iter().any(|w| w.starts_with("find: 0 of")) {
        reasons.push(Reason::FindFoundNothing);
    }
    for reason in reasons {
        r.warnings.push(format!("io500: INVALID: {reason}"));
    }
    if p.group == ScoreGroup::None {
        r.warnings
            .push("io500: this phase does not count toward the score".into());
    }
}

#[cfg(test)]
mod tests;
