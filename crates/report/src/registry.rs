//! The chart registry: every chart kind storlab draws, declared once.
//!
//! Each [`ChartKind`] carries its id, its title, when it is drawn and what it
//! shows (the `docs/report.md` table is generated from these, and a test
//! fails when the two disagree), how it draws, and why it cannot draw for
//! given runs: a typed [`CannotDraw`] whose [`Remedy`] is a command that
//! would produce the missing runs. `report --chart`'s value help, shell
//! completion, the HTML report's charts and its "not drawn, and why" list,
//! and `report --chart ID`'s error all read [`CHART_KINDS`]; the charts of
//! `sweep --chart` ([`crate::sweep_chart()`]) and `sim --chart` are declared
//! here too ([`Source`]).

use crate::charts::{
    Param, app_series_charts, by_phase_chart, cache_chart, groups_chart, is_simulated,
    latency_chart, relative_chart, resolve_baseline, scaling_chart, simulated_chart,
    timeline_charts,
};
use crate::error::ReportError;
use crate::predicted::Predicted;
use crate::{Chart, Vary};
use std::fmt;
use storlab_types::StoredRun;

/// Where a chart's data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Stored runs: `storlab report` (HTML, or one by `--chart ID`).
    Report,
    /// The points of one `storlab sweep --chart FILE` as it runs.
    Sweep,
    /// The points of one `storlab sim --chart FILE`.
    Sim,
}

/// How a report chart is drawn from the runs.
#[derive(Clone, Copy)]
pub enum Draw {
    /// From all the runs; one id.
    Runs(fn(&Input<'_>) -> Vec<Chart>),
    /// Once per run (`ID-<run id>`).
    PerRun(fn(&StoredRun) -> Vec<Chart>),
    /// Drawn by its own command from points, not from stored runs.
    Points,
    /// `storlab sim --chart`: from the simulated points and the varied key
    /// ([`sim_chart`]).
    SimPoints(fn(&[storlab_sim::SweepPoint], &str) -> String),
}

/// One kind of chart.
#[derive(Clone, Copy)]
pub struct ChartKind {
    /// The id (`throughput`), or its prefix for per-run kinds (`timeline`
    /// in `timeline-12`).
    pub id: &'static str,
    /// What the chart is called.
    pub title: &'static str,
    /// When it is drawn (the docs table's second column).
    pub drawn_when: &'static str,
    /// What it shows (the docs table's third column).
    pub shows: &'static str,
    pub source: Source,
    /// Named in the HTML report's "charts not drawn, and why" list when
    /// absent (off for kinds most runs lack by nature, e.g. `groups`).
    pub listed_when_missing: bool,
    pub draw: Draw,
    /// Why it is not drawn; `None` when that needs no note. Called only for
    /// a chart that is not drawn; `run` is the run a per-run id names.
    why: fn(&Input<'_>, Option<&StoredRun>) -> Option<CannotDraw>,
}

impl fmt::Debug for ChartKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChartKind").field("id", &self.id).finish()
    }
}

impl ChartKind {
    pub fn per_run(&self) -> bool {
        matches!(self.draw, Draw::PerRun(_))
    }
    /// The id as a user writes it: `throughput`, `timeline-<run id>`.
    pub fn id_pattern(&self) -> String {
        if self.per_run() {
            format!("{}-<run id>", self.id)
        } else {
            self.id.to_string()
        }
    }
}

/// What the report's charts are drawn from: the runs, measured and
/// simulated apart, the baseline and what is under study.
pub struct Input<'a> {
    /// Every run given.
    pub all: &'a [StoredRun],
    /// The baseline as given (indexes `all`).
    pub given_baseline: Option<usize>,
    /// The runs that were measured.
    pub measured: Vec<StoredRun>,
    /// The runs made by `storlab sim`.
    pub simulated: Vec<StoredRun>,
    /// The baseline among `measured`.
    pub baseline: Option<usize>,
    pub vary: &'a Vary,
    pub predicted: &'a [Predicted],
}

impl<'a> Input<'a> {
    pub fn new(
        runs: &'a [StoredRun],
        baseline: Option<usize>,
        vary: &'a Vary,
        predicted: &'a [Predicted],
    ) -> Self {
        // Simulated figures are drawn apart (their own chart), never beside
        // or among measured ones, and never on a jobs axis.
        let (simulated, measured): (Vec<StoredRun>, Vec<StoredRun>) =
            runs.iter().cloned().partition(is_simulated);
        let on_measured = baseline
            .and_then(|b| runs.get(b))
            .and_then(|b| measured.iter().position(|r| r.id == b.id));
        Input {
            all: runs,
            given_baseline: baseline,
            measured,
            simulated,
            baseline: on_measured,
            vary,
            predicted,
        }
    }
}

/// A parameter a scaling chart (`vs-…`) puts on its x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepParam {
    Bs,
    NumJobs,
    Size,
    IoDepth,
}

impl SweepParam {
    pub const ALL: [SweepParam; 4] = [
        SweepParam::Bs,
        SweepParam::NumJobs,
        SweepParam::Size,
        SweepParam::IoDepth,
    ];
    /// The option's name (as `sweep --vary` and `bench` spell it).
    pub fn key(self) -> &'static str {
        match self {
            SweepParam::Bs => "bs",
            SweepParam::NumJobs => "numjobs",
            SweepParam::Size => "size",
            SweepParam::IoDepth => "iodepth",
        }
    }
    /// Example values for a sweep over it.
    fn values(self) -> &'static str {
        match self {
            SweepParam::Bs => "4k,64k,1m",
            SweepParam::NumJobs => "1,2,4,8",
            SweepParam::Size => "256m,1g,4g",
            SweepParam::IoDepth => "1,4,16,64",
        }
    }
}

/// A command that would produce the runs a chart lacks. [`Remedy::argv`]
/// is the command line after the launcher, with `TARGET` where the user's
/// directory or device goes; a test parses each through the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// `storlab sweep --vary KEY=VALUES TARGET`
    Sweep(SweepParam),
    /// A multi-client run at several client counts (MPI build).
    Clients,
    /// A run with a device timeline.
    Monitor,
    /// A run with its own per-interval figures.
    LogInterval,
    /// A phase of job groups (the SAS dd test).
    Groups,
    /// The in-cache vs out-of-cache profile.
    CacheProfile,
    /// Runs held against a design.
    Design,
}

impl Remedy {
    /// Every remedy (a test parses each through the CLI).
    pub fn all() -> Vec<Remedy> {
        let mut v: Vec<Remedy> = SweepParam::ALL.into_iter().map(Remedy::Sweep).collect();
        v.extend([
            Remedy::Clients,
            Remedy::Monitor,
            Remedy::LogInterval,
            Remedy::Groups,
            Remedy::CacheProfile,
            Remedy::Design,
        ]);
        // A new remedy must be added above: this match is exhaustive.
        for r in &v {
            match r {
                Remedy::Sweep(_)
                | Remedy::Clients
                | Remedy::Monitor
                | Remedy::LogInterval
                | Remedy::Groups
                | Remedy::CacheProfile
                | Remedy::Design => {}
            }
        }
        v
    }

    /// The launcher the command runs under, if any.
    pub fn launcher(self) -> Option<&'static str> {
        match self {
            Remedy::Clients => Some("mpirun -np 4"),
            _ => None,
        }
    }

    /// The storlab command line, `storlab` first; `TARGET` is a placeholder.
    pub fn argv(self) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        match self {
            Remedy::Sweep(p) => {
                let vary = format!("{}={}", p.key(), p.values());
                s(&["storlab", "sweep", "--vary", &vary, "TARGET"])
            }
            Remedy::Clients => s(&["storlab", "bench", "TARGET", "--clients", "1,2,4"]),
            Remedy::Monitor => s(&["storlab", "bench", "TARGET", "--monitor"]),
            Remedy::LogInterval => s(&["storlab", "bench", "TARGET", "--log-interval", "1s"]),
            Remedy::Groups => s(&[
                "storlab",
                "bench",
                "TARGET",
                "--group",
                "rw=read numjobs=6 bs=1M",
                "--group",
                "rw=write numjobs=3 bs=1M",
            ]),
            Remedy::CacheProfile => s(&["storlab", "bench", "TARGET", "--profile", "cache"]),
            Remedy::Design => s(&[
                "storlab",
                "bench",
                "TARGET",
                "--design",
                "R60/10/20 --drive exos-x18-18tb",
            ]),
        }
    }
}

impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.launcher() {
            write!(f, "{l} ")?;
        }
        let words: Vec<String> = self
            .argv()
            .into_iter()
            .map(|w| if w.contains(' ') { format!("'{w}'") } else { w })
            .collect();
        f.write_str(&words.join(" "))
    }
}

/// Why a chart cannot be drawn for given runs. Its text names the missing
/// runs and, through [`CannotDraw::remedy`], a command that would make them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CannotDraw {
    NoRuns,
    AllSimulated,
    NoSimulatedRuns,
    BaselineNotAmongRuns,
    NoPairedRun,
    NoLatency,
    NoGroups,
    NoScalingPair(SweepParam),
    NoCachePair,
    /// No phase was measured by several clients.
    NoMultiClientRuns,
    /// Multi-client phases, but each configuration at one client count.
    OneClientCount,
    NoDesign,
    NothingPredicted,
    NotARunId {
        kind: &'static str,
        text: String,
    },
    RunNotAmongRuns(i64),
    NoSeries {
        run: i64,
        latency: bool,
    },
    NoTimeline(i64),
    EmptyTimeline(i64),
    /// A chart of `storlab sweep --chart` or `sim --chart`, drawn from
    /// their points as they run, not from stored runs.
    DrawnByItsCommand(Source),
    /// `sweep --chart`: nothing varied.
    SweepVariesNothing,
    /// `sweep --chart`: every point failed.
    NoSweepPointMeasured,
}

impl CannotDraw {
    /// The command that would produce what is missing.
    pub fn remedy(&self) -> Option<Remedy> {
        Some(match self {
            CannotDraw::NoGroups => Remedy::Groups,
            CannotDraw::NoScalingPair(p) => Remedy::Sweep(*p),
            CannotDraw::NoCachePair => Remedy::CacheProfile,
            CannotDraw::NoMultiClientRuns | CannotDraw::OneClientCount => Remedy::Clients,
            CannotDraw::NoDesign => Remedy::Design,
            CannotDraw::NoSeries { .. } => Remedy::LogInterval,
            CannotDraw::NoTimeline(_) => Remedy::Monitor,
            _ => return None,
        })
    }
}

impl fmt::Display for CannotDraw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let remedy = self.remedy().map(|r| r.to_string()).unwrap_or_default();
        match self {
            CannotDraw::NoRuns => write!(f, "there are no runs"),
            CannotDraw::AllSimulated => {
                write!(f, "every run is simulated: see the 'simulated' chart")
            }
            CannotDraw::NoSimulatedRuns => write!(f, "no run was made by storlab sim"),
            CannotDraw::BaselineNotAmongRuns => {
                write!(f, "the baseline asked for is not among these runs")
            }
            CannotDraw::NoPairedRun => write!(
                f,
                "it needs a baseline and at least one other run with a phase paired to it (same \
                 name and shape, or --vary)"
            ),
            CannotDraw::NoLatency => write!(f, "no phase has latency figures"),
            CannotDraw::NoGroups => write!(
                f,
                "no phase ran job groups (storlab bench --group, [[phase.group]] in a job file, or \
                 an fio job file's concurrent jobs), e.g. {remedy}"
            ),
            CannotDraw::NoScalingPair(p) => write!(
                f,
                "no two phases are equal in everything but {} (same pattern, cache mode, the other \
                 sizes and depths, tags); run a sweep over it, e.g. {remedy}",
                p.key()
            ),
            CannotDraw::NoCachePair => write!(
                f,
                "no phase in cache has a partner out of cache that is equal in everything but \
                 cache mode and file size (same host, target, pattern, block size, jobs, depth, \
                 engine); run both on one target, e.g. a small warm file and a large cold one: \
                 {remedy}"
            ),
            CannotDraw::NoMultiClientRuns => write!(
                f,
                "no phase was measured by several clients; run one workload at two or more client \
                 counts with an MPI build of storlab (one stored run per count), e.g. {remedy}"
            ),
            CannotDraw::OneClientCount => write!(
                f,
                "each configuration of the multi-client runs was measured at one client count \
                 only; it needs two or more counts of one configuration, e.g. {remedy}"
            ),
            CannotDraw::NoDesign => write!(
                f,
                "no run has a design: tag runs with bench --design \"LAYOUT --drive ...\" (e.g. \
                 {remedy}), or pass report --design"
            ),
            CannotDraw::NothingPredicted => write!(
                f,
                "the model predicts none of the phases of these runs' designs (the report says \
                 why for each)"
            ),
            CannotDraw::NotARunId { kind, text } => {
                write!(f, "'{text}' is not a run id (write {kind}-12)")
            }
            CannotDraw::RunNotAmongRuns(n) => {
                write!(f, "run {n} is not among the runs of this report")
            }
            CannotDraw::NoSeries { run, latency } => write!(
                f,
                "run {run} has no per-interval series of its own figures (storlab bench records \
                 one per phase, --log-interval; imported fio results have none){}; e.g. {remedy}",
                if *latency {
                    ", or no latency in it"
                } else {
                    ""
                }
            ),
            CannotDraw::NoTimeline(n) => write!(
                f,
                "run {n} has no device timeline; record one with storlab bench --monitor, e.g. \
                 {remedy}"
            ),
            CannotDraw::EmptyTimeline(n) => write!(f, "run {n}'s device timeline has no samples"),
            CannotDraw::DrawnByItsCommand(Source::Sim) => write!(
                f,
                "it is drawn by storlab sim --chart FILE.svg from the simulated points; stored \
                 simulated runs are drawn in the 'simulated' chart"
            ),
            CannotDraw::DrawnByItsCommand(_) => write!(
                f,
                "it is drawn by storlab sweep --chart FILE.svg as the sweep runs; from the stored \
                 points of a sweep, the vs-<option> charts draw the same lines"
            ),
            CannotDraw::SweepVariesNothing => write!(f, "the sweep varies nothing"),
            CannotDraw::NoSweepPointMeasured => {
                write!(f, "no point of the sweep measured anything to draw")
            }
        }
    }
}

fn throughput(i: &Input<'_>) -> Vec<Chart> {
    if i.measured.is_empty() {
        return Vec::new();
    }
    vec![by_phase_chart(&i.measured, false)]
}
fn iops(i: &Input<'_>) -> Vec<Chart> {
    if i.measured.is_empty() {
        return Vec::new();
    }
    vec![by_phase_chart(&i.measured, true)]
}
fn relative(i: &Input<'_>) -> Vec<Chart> {
    resolve_baseline(&i.measured, i.baseline)
        .and_then(|b| relative_chart(&i.measured, b, i.vary))
        .into_iter()
        .collect()
}
fn latency(i: &Input<'_>) -> Vec<Chart> {
    latency_chart(&i.measured).into_iter().collect()
}
fn groups(i: &Input<'_>) -> Vec<Chart> {
    groups_chart(&i.measured).into_iter().collect()
}
fn vs_bs(i: &Input<'_>) -> Vec<Chart> {
    scaling_chart(&i.measured, Param::Bs).into_iter().collect()
}
fn vs_numjobs(i: &Input<'_>) -> Vec<Chart> {
    scaling_chart(&i.measured, Param::NumJobs)
        .into_iter()
        .collect()
}
fn vs_size(i: &Input<'_>) -> Vec<Chart> {
    scaling_chart(&i.measured, Param::Size)
        .into_iter()
        .collect()
}
fn vs_iodepth(i: &Input<'_>) -> Vec<Chart> {
    scaling_chart(&i.measured, Param::IoDepth)
        .into_iter()
        .collect()
}
fn cache(i: &Input<'_>) -> Vec<Chart> {
    cache_chart(&i.measured).into_iter().collect()
}
fn clients(i: &Input<'_>) -> Vec<Chart> {
    crate::clients_chart::clients_chart(&i.measured)
        .into_iter()
        .collect()
}
fn app(r: &StoredRun) -> Vec<Chart> {
    let mut v = app_series_charts(r);
    v.retain(|c| c.id.starts_with("app-"));
    v
}
fn applat(r: &StoredRun) -> Vec<Chart> {
    let mut v = app_series_charts(r);
    v.retain(|c| c.id.starts_with("applat-"));
    v
}
fn timeline(r: &StoredRun) -> Vec<Chart> {
    let mut v = timeline_charts(r);
    v.retain(|c| c.id.starts_with("timeline-"));
    v
}
fn util(r: &StoredRun) -> Vec<Chart> {
    let mut v = timeline_charts(r);
    v.retain(|c| c.id.starts_with("util-"));
    v
}
fn simulated(i: &Input<'_>) -> Vec<Chart> {
    if i.simulated.is_empty() {
        return Vec::new();
    }
    vec![simulated_chart(&i.simulated)]
}
fn predicted(i: &Input<'_>) -> Vec<Chart> {
    crate::predicted::predicted_chart(i.predicted)
        .into_iter()
        .collect()
}

fn why_by_phase(i: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(if !i.all.is_empty() && i.all.iter().all(is_simulated) {
        CannotDraw::AllSimulated
    } else {
        CannotDraw::NoRuns
    })
}
fn why_relative(i: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(match i.given_baseline {
        Some(b) if b >= i.all.len() => CannotDraw::BaselineNotAmongRuns,
        _ => CannotDraw::NoPairedRun,
    })
}
fn why_latency(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoLatency)
}
fn why_groups(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoGroups)
}
fn why_bs(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoScalingPair(SweepParam::Bs))
}
fn why_numjobs(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoScalingPair(SweepParam::NumJobs))
}
fn why_size(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoScalingPair(SweepParam::Size))
}
fn why_iodepth(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoScalingPair(SweepParam::IoDepth))
}
fn why_cache(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoCachePair)
}
fn why_clients(i: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    let multi = i
        .measured
        .iter()
        .flat_map(|r| &r.report.phases)
        .any(|p| p.cluster.is_some());
    Some(if multi {
        CannotDraw::OneClientCount
    } else {
        CannotDraw::NoMultiClientRuns
    })
}
fn why_series(latency: bool, r: &StoredRun) -> CannotDraw {
    CannotDraw::NoSeries { run: r.id, latency }
}
fn why_app(_: &Input<'_>, r: Option<&StoredRun>) -> Option<CannotDraw> {
    r.map(|r| why_series(false, r))
}
fn why_applat(_: &Input<'_>, r: Option<&StoredRun>) -> Option<CannotDraw> {
    r.map(|r| why_series(true, r))
}
fn why_timeline(_: &Input<'_>, r: Option<&StoredRun>) -> Option<CannotDraw> {
    r.map(|r| {
        if r.report.monitor.is_none() {
            CannotDraw::NoTimeline(r.id)
        } else {
            CannotDraw::EmptyTimeline(r.id)
        }
    })
}
fn why_simulated(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(CannotDraw::NoSimulatedRuns)
}
fn why_predicted(i: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    Some(if i.predicted.is_empty() {
        CannotDraw::NoDesign
    } else {
        CannotDraw::NothingPredicted
    })
}
fn why_points(_: &Input<'_>, _: Option<&StoredRun>) -> Option<CannotDraw> {
    None
}

const SCALING_SHOWS: &str = "throughput vs the parameter (log₂ axis, ticks at the values run). One \
line per group of phases equal in everything else (pattern, cache mode, engine, read share of a \
mix, rate cap, think time, host, the other three parameters, tags): a rate-capped point or another \
host's is never on the same line; tags that only restate x (`bs=4k`, `bs=64k`, ...) and a sweep's \
per-point labels (`sweep_point`, `sweep_params`) are ignored, so the points of one `storlab sweep` \
(tag `sweep=ID`) line up as one series per value of the other varied options. Repeats at one x are \
averaged";

/// Every chart kind, in the order the report draws them (per-run kinds are
/// drawn run by run, each run's in this order).
pub static CHART_KINDS: &[ChartKind] = &[
    ChartKind {
        id: "throughput",
        title: "Throughput by phase",
        drawn_when: "always",
        shows: "total MB/s of every phase, one bar per run × phase, coloured by I/O pattern and \
                block size (one legend entry per pattern)",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(throughput),
        why: why_by_phase,
    },
    ChartKind {
        id: "iops",
        title: "IOPS by phase",
        drawn_when: "always",
        shows: "the same for IOPS",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(iops),
        why: why_by_phase,
    },
    ChartKind {
        id: "relative",
        title: "Throughput relative to baseline",
        drawn_when: "a baseline and another run exist",
        shows: "throughput change vs the baseline per matching phase, one bar per run, labelled \
                `+112 %`; pale dashed bars are within the noise",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(relative),
        why: why_relative,
    },
    ChartKind {
        id: "latency",
        title: "Latency percentiles",
        drawn_when: "any phase has latency",
        shows: "p50 / p90 / p99 / p99.9 per run × phase, in µs or ms; log scale when they span \
                more than 30×",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(latency),
        why: why_latency,
    },
    ChartKind {
        id: "groups",
        title: "Job groups",
        drawn_when: "a phase ran job groups at once",
        shows: "per such phase of each run: a bar per group (its MB/s over its own window, \
                labelled with its share of the phase's bytes) beside `all groups` (all bytes over \
                the phase's window); the category gives the fraction of the phase during which \
                every group moved data. (Not in the HTML report's \"not drawn\" list, which would \
                name it for every run without groups.)",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::Runs(groups),
        why: why_groups,
    },
    ChartKind {
        id: "io500",
        title: "IO500: phases and score",
        drawn_when: "an io500 run (`storlab io500`, or imported)",
        shows: "each io500 phase (GiB/s, kIOPS) and the bandwidth, IOPS and total scores, one \
                series per run; INVALID runs pale (not in the \"not drawn\" list)",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::Runs(crate::io500_chart::io500),
        why: |_, _| None,
    },
    ChartKind {
        id: "vs-bs",
        title: "Throughput vs block size",
        drawn_when: "otherwise-equal phases differ in block size",
        shows: SCALING_SHOWS,
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(vs_bs),
        why: why_bs,
    },
    ChartKind {
        id: "vs-numjobs",
        title: "Throughput vs number of jobs",
        drawn_when: "otherwise-equal phases differ in numjobs",
        shows: "the same against the number of jobs",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(vs_numjobs),
        why: why_numjobs,
    },
    ChartKind {
        id: "vs-size",
        title: "Throughput vs file size",
        drawn_when: "otherwise-equal phases differ in file size",
        shows: "the same against the file size per job; marks the host's RAM",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(vs_size),
        why: why_size,
    },
    ChartKind {
        id: "vs-iodepth",
        title: "Throughput vs queue depth",
        drawn_when: "otherwise-equal phases differ in iodepth",
        shows: "the same against the queue depth per job",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(vs_iodepth),
        why: why_iodepth,
    },
    ChartKind {
        id: "cache",
        title: "In cache vs out of cache",
        drawn_when: "phases equal in everything but cache mode and file size (same host, target, \
                     pattern, block size, jobs, depth, engine, ...) are both in and out of cache",
        shows: "in cache vs out of cache side by side per such group, with the ratio over the bar; \
                a QD 1 buffered phase is never pooled with QD 32 direct ones. In cache = `warm` \
                and resident, or buffered with size × jobs under 2× RAM (`may_be_cached`); out of \
                cache = `direct`, `cold` and larger, or `warm` but not resident",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(cache),
        why: why_cache,
    },
    ChartKind {
        id: "clients",
        title: "Aggregate throughput vs clients",
        drawn_when: "some configuration was measured at two or more client counts (`mpirun ... \
                     storlab bench --clients 1,2,4`)",
        shows: "aggregate MB/s against the number of clients, one line per configuration \
                (pattern, block size, file layout, cache mode, jobs per client, tags other than \
                `clients`), with the slowest and the fastest client's own rate beside it",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::Runs(clients),
        why: why_clients,
    },
    ChartKind {
        id: "app",
        title: "Application throughput over time",
        drawn_when: "a phase of the run recorded its own per-interval series \
                     (`PhaseResult.series`, `bench --log-interval`)",
        shows: "storlab's own read and write MB/s per interval over the run, phases as labelled \
                bands; edge intervals under a quarter of the interval are left out (their rates \
                over a few ms say nothing)",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::PerRun(app),
        why: why_app,
    },
    ChartKind {
        id: "applat",
        title: "Application latency over time",
        drawn_when: "the same, with latency",
        shows: "p50 / p99 / p99.9 of the I/Os completed in each interval",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::PerRun(applat),
        why: why_applat,
    },
    ChartKind {
        id: "timeline",
        title: "Device throughput over time",
        drawn_when: "the run has a device timeline (`report.monitor`, `bench --monitor`)",
        shows: "read and write MB/s per device over time, storlab's own read/write MB/s beside \
                them (`(app)`: per interval when the record has `PhaseResult.series`, else the \
                phase mean over its window), each phase's measured window as a labelled band \
                (phase start times are recorded to the millisecond), and with two or more devices \
                each layer's once-counted total",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::PerRun(timeline),
        why: why_timeline,
    },
    ChartKind {
        id: "util",
        title: "Device utilisation over time",
        drawn_when: "the same",
        shows: "%util per device over time (0–100 %)",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::PerRun(util),
        why: why_timeline,
    },
    ChartKind {
        id: "replay",
        title: "Replay: bytes/s over time, recorded vs replayed",
        drawn_when: "a replay run (`storlab replay`, kind `replay`)",
        shows: "the replay's read + write MB/s per interval beside the trace's own (the series it                 stored: `BenchReport.replay`), by the operations' issue time / recorded start",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::PerRun(crate::replay_chart::replay_timeline),
        why: why_points,
    },
    ChartKind {
        id: "simulated",
        title: "Simulated throughput (storlab sim, not measured)",
        drawn_when: "some runs were made by `storlab sim`",
        shows: "the simulated runs' throughput by phase, titled and marked as simulated; they are \
                never drawn among measured bars or on a measured axis such as jobs",
        source: Source::Report,
        listed_when_missing: false,
        draw: Draw::Runs(simulated),
        why: why_simulated,
    },
    ChartKind {
        id: "predicted",
        title: "Predicted vs measured",
        drawn_when: "a run carries a design (`bench --design`, tag `planned_as`) or `report \
                     --design` is given",
        shows: "each modelled phase's measured MB/s beside `storlab plan`'s prediction, the error \
                over the bar",
        source: Source::Report,
        listed_when_missing: true,
        draw: Draw::Runs(predicted),
        why: why_predicted,
    },
    ChartKind {
        id: "sweep",
        title: "storlab sweep ID",
        drawn_when: "`storlab sweep --chart FILE.svg` (or `.png`)",
        shows: "MB/s of each point against the first varied option (its resolved value: bytes for \
                sizes), one line per value of the second (and per phase when a point has \
                several); non-numeric values are placed 1, 2, ... in the order given",
        source: Source::Sweep,
        listed_when_missing: false,
        draw: Draw::Points,
        why: why_points,
    },
    ChartKind {
        id: "heat-map",
        title: "storlab sweep ID: reads",
        drawn_when: "`storlab sweep --vary size=… --vary bs=… --chart FILE` with read phases",
        shows: "the IOzone-style heat map: file size × record size, log colour scale, the page \
                cache and the RAM marked as lines between rows",
        source: Source::Sweep,
        listed_when_missing: false,
        draw: Draw::Points,
        why: why_points,
    },
    ChartKind {
        id: "sim",
        title: "Simulated throughput vs the varied value",
        drawn_when: "`storlab sim --chart FILE.svg` (or `.png`)",
        shows: "aggregate simulated MB/s against the varied value, one line per solver, cut where \
                the binding component changes and each piece named for what binds it",
        source: Source::Sim,
        listed_when_missing: false,
        draw: Draw::SimPoints(crate::sim_chart::throughput),
        why: why_points,
    },
];

/// `storlab sim --chart`'s SVG, drawn by the registry's `sim` kind from
/// the simulated points swept over `key`.
pub fn sim_chart(points: &[storlab_sim::SweepPoint], key: &str) -> String {
    let draw = CHART_KINDS.iter().find_map(|k| match k.draw {
        Draw::SimPoints(f) if k.source == Source::Sim => Some(f),
        _ => None,
    });
    draw.unwrap_or(crate::sim_chart::throughput)(points, key)
}

/// The report's chart kinds (those `report --chart` draws).
pub fn report_kinds() -> impl Iterator<Item = &'static ChartKind> {
    CHART_KINDS.iter().filter(|k| k.source == Source::Report)
}

/// The kind an id names, and for a per-run id the run id part.
fn kind_of(id: &str) -> Option<(&'static ChartKind, Option<&str>)> {
    if let Some(k) = report_kinds().find(|k| !k.per_run() && k.id == id) {
        return Some((k, None));
    }
    let (prefix, rest) = id.split_once('-')?;
    report_kinds()
        .find(|k| k.per_run() && k.id == prefix)
        .map(|k| (k, Some(rest)))
}

/// The ids `report --chart` takes, as a user writes them.
pub fn report_chart_ids() -> Vec<String> {
    report_kinds().map(ChartKind::id_pattern).collect()
}

/// The `report --chart` help text, from the registry.
pub fn chart_help() -> String {
    format!(
        "Chart for --output-format svg|png: {} (those that apply to the runs; one that cannot be \
         drawn says why)",
        report_chart_ids().join(", ")
    )
}

/// The `docs/report.md` table of chart kinds (between its
/// `<!-- chart-kinds -->` markers; a test keeps the two equal).
pub fn docs_table() -> String {
    let mut s = String::from("| id | drawn when | what it shows |\n|---|---|---|\n");
    for k in CHART_KINDS {
        let id = match k.source {
            Source::Report => format!("`{}`", k.id_pattern()),
            Source::Sweep => format!("sweep: `{}`", k.id),
            Source::Sim => format!("sim: `{}`", k.id),
        };
        s.push_str(&format!("| {id} | {} | {} |\n", k.drawn_when, k.shows));
    }
    s
}

/// Every chart that applies to `i`, in report order.
pub fn draw_all(i: &Input<'_>) -> Vec<Chart> {
    let mut out = Vec::new();
    let mut per_run_done = false;
    for k in report_kinds() {
        match k.draw {
            Draw::Runs(f) => out.extend(f(i)),
            Draw::PerRun(_) if per_run_done => {}
            Draw::PerRun(_) => {
                // Per-run kinds are drawn run by run.
                per_run_done = true;
                for r in &i.measured {
                    for pk in report_kinds() {
                        if let Draw::PerRun(f) = pk.draw {
                            out.extend(f(r));
                        }
                    }
                }
            }
            Draw::Points | Draw::SimPoints(_) => {}
        }
    }
    out
}

/// Why chart `id` is not among `drawn`; `None` when it is, when `id` names
/// no report chart, or when its absence needs no note.
pub fn why_not_drawn(i: &Input<'_>, drawn: &[Chart], id: &str) -> Option<CannotDraw> {
    if drawn.iter().any(|c| c.id == id) {
        return None;
    }
    if let Some(k) = CHART_KINDS
        .iter()
        .find(|k| k.source != Source::Report && k.id == id)
    {
        return Some(CannotDraw::DrawnByItsCommand(k.source));
    }
    let (kind, run) = kind_of(id)?;
    let run = match run {
        None => None,
        Some(text) => {
            let Ok(n) = text.parse::<i64>() else {
                return Some(CannotDraw::NotARunId {
                    kind: kind.id,
                    text: text.to_string(),
                });
            };
            match i.all.iter().find(|r| r.id == n) {
                None => return Some(CannotDraw::RunNotAmongRuns(n)),
                Some(r) => Some(r),
            }
        }
    };
    (kind.why)(i, run)
}

/// One chart by id from `i`; when it cannot be drawn the error says why and
/// lists the ids these runs do have.
pub fn draw_one(i: &Input<'_>, id: &str) -> Result<Chart, ReportError> {
    if i.all.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let all = draw_all(i);
    let available: Vec<String> = all.iter().map(|c| c.id.clone()).collect();
    if let Some(why) = why_not_drawn(i, &all, id) {
        return Err(ReportError::NotDrawn {
            id: id.to_string(),
            why,
            available,
        });
    }
    match all.into_iter().find(|c| c.id == id) {
        Some(c) => Ok(c),
        None => Err(ReportError::NoSuchChart {
            id: id.to_string(),
            available,
        }),
    }
}

/// The report chart kinds not drawn for `i` that the HTML report names,
/// each with why: (`id`, reason).
pub fn not_drawn_listed(i: &Input<'_>, drawn: &[Chart]) -> Vec<(&'static str, CannotDraw)> {
    report_kinds()
        .filter(|k| k.listed_when_missing && !k.per_run())
        .filter_map(|k| why_not_drawn(i, drawn, k.id).map(|w| (k.id, w)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{all_runs, compare_runs};

    fn input(runs: &[StoredRun]) -> Input<'_> {
        static NO_VARY: std::sync::OnceLock<Vary> = std::sync::OnceLock::new();
        Input::new(runs, None, NO_VARY.get_or_init(Vary::default), &[])
    }

    /// `docs/report.md`'s chart table is the registry's: edit the registry
    /// and paste `docs_table()` between the markers.
    #[test]
    fn the_docs_table_is_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report.md");
        let doc = std::fs::read_to_string(path).expect("docs/report.md");
        let (_, rest) = doc
            .split_once("<!-- chart-kinds: begin -->\n")
            .expect("the begin marker in docs/report.md");
        let (table, _) = rest
            .split_once("<!-- chart-kinds: end -->")
            .expect("the end marker in docs/report.md");
        if std::env::var_os("STORLAB_UPDATE_GOLDEN").is_some() {
            let at = doc.len() - rest.len();
            let new = format!("{}{}{}", &doc[..at], docs_table(), &rest[table.len()..]);
            std::fs::write(path, new).expect("write docs/report.md");
            return;
        }
        for line in docs_table().lines() {
            assert_eq!(line.matches('|').count(), 4, "a cell holds a '|': {line}");
        }
        assert_eq!(
            table,
            docs_table(),
            "docs/report.md's chart table differs from the registry; \
             STORLAB_UPDATE_GOLDEN=1 cargo test -p storlab-report docs_table rewrites it"
        );
    }

    /// Every id a report chart can have is a registered kind (the fixtures
    /// draw all of them but clients, groups, simulated and predicted, which
    /// their own tests draw), and ids are unique.
    #[test]
    fn every_drawn_chart_is_registered() {
        let mut runs = all_runs();
        runs.extend(compare_runs());
        for c in draw_all(&input(&runs)) {
            assert!(kind_of(&c.id).is_some(), "{} is not in the registry", c.id);
        }
        let mut ids: Vec<&str> = CHART_KINDS.iter().map(|k| k.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CHART_KINDS.len(), "ids are unique");
    }

    /// `report --chart clients` said "no chart 'clients'" (it was missing
    /// from the list of kinds that say why); now it says why and what to run.
    #[test]
    fn clients_says_why_and_what_to_run() {
        let runs = compare_runs();
        let e = crate::chart(&runs, None, "clients")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be drawn"), "{e}");
        assert!(
            e.contains("mpirun -np 4 storlab bench TARGET --clients 1,2,4"),
            "{e}"
        );
        assert_eq!(
            why_not_drawn(&input(&runs), &[], "clients"),
            Some(CannotDraw::NoMultiClientRuns)
        );
    }

    /// The scaling hint named `storlab sweep iodepth=...`, which sweep reads
    /// as a target path; now it names `--vary`.
    #[test]
    fn scaling_hints_name_sweep_vary() {
        let runs = compare_runs();
        let e = crate::chart(&runs, None, "vs-iodepth")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("storlab sweep --vary iodepth=1,4,16,64 TARGET"),
            "{e}"
        );
        assert!(!e.contains("sweep iodepth="), "{e}");
    }

    /// A sweep's or sim's own chart asked of `report` names the command
    /// that draws it, not "no chart".
    #[test]
    fn sweep_and_sim_charts_name_their_command() {
        let runs = compare_runs();
        for (id, says) in [
            ("sweep", "storlab sweep --chart"),
            ("heat-map", "storlab sweep --chart"),
            ("sim", "storlab sim --chart"),
        ] {
            let e = crate::chart(&runs, None, id).unwrap_err().to_string();
            assert!(
                e.contains("cannot be drawn") && e.contains(says),
                "{id}: {e}"
            );
        }
    }

    #[test]
    fn the_chart_help_lists_every_report_kind() {
        let h = chart_help();
        for k in report_kinds() {
            assert!(h.contains(&k.id_pattern()), "{} missing: {h}", k.id);
        }
        assert!(
            !h.contains("heat-map"),
            "a sweep chart is not a report chart"
        );
    }
}
