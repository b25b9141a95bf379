//! `storlab replay` over a [`Comm`] (under MPI: `mpirun -np N storlab
//! replay TRACE TARGET`): trace rank r is replayed by rank r.
//!
//! In order, every rank:
//! 1. reads the trace (the first pass) and refuses together with the
//!    others when any rank cannot (rank 0 names the rank and the reason);
//! 2. agrees on one resolved job: the trace's identity (size, modification
//!    time, a digest of the first pass's figures), the map, the speed and
//!    the ranks chosen must match on every rank, or all refuse;
//! 3. refuses a trace with more ranks than the job has processes (naming
//!    both numbers) before any I/O; fewer is fine, the extra ranks idle;
//! 4. rank 0 runs its own checks (the CLI opens the store), lays the files
//!    out and broadcasts the run directory; every rank checks it sees the
//!    files (a shared file system) or all refuse;
//! 5. replays its own trace rank: the queue primed, a barrier, then all
//!    start at one common epoch;
//! 6. sends its figures to rank 0 (histograms as their recorded counts,
//!    so the merge is exact), which builds the one result of the job.
//!
//! Nothing here prints: rank 0 gets the result or the reason to show.

use crate::comm::Comm;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storlab_replay::prepare::{Layout, attach, lay_out};
use storlab_replay::run::replay_ranks;
use storlab_replay::{PathMap, Prepared, RankFigures, ReplayResult, Speed, Stop, prepare};
use storlab_trace::OpenOptions;

/// What every rank was asked to replay (each from its own command line).
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub trace: &'a Path,
    pub opts: &'a OpenOptions,
    pub map: &'a PathMap,
    pub speed: Speed,
    /// `--ranks N`: only trace ranks `0..N`.
    pub ranks: Option<u32>,
    pub target: &'a Path,
    /// `--fadvise`: the page-cache hint each replayed file gets.
    pub fadvise: storlab_replay::Fadvise,
}

/// Why a replay over several ranks ended without a result.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Refused before any I/O (bad input, disagreement): rank 0 says why.
    #[error("{0}")]
    Refused(String),
    /// The replay failed while running (rank 0 says where).
    #[error("{0}")]
    Failed(String),
    /// Another rank than 0: rank 0 reports.
    #[error("rank 0 reports the failure")]
    Quiet,
}

/// Rank 0's result: the layout (its run directory, to remove) and the
/// replay of every rank.
pub type Done = (Prepared, ReplayResult);

fn refuse<C: Comm>(comm: &C, why: String) -> Failure {
    if comm.root() {
        Failure::Refused(why)
    } else {
        Failure::Quiet
    }
}

/// The first non-empty reason of all ranks at rank 0, named by its rank
/// unless it is rank 0's own; `None` everywhere when every rank is fine.
fn agree_ok<C: Comm>(comm: &C, why: Option<String>) -> Option<String> {
    let ok = comm.all(why.is_none());
    let all = comm.gather_strings(why.as_deref().unwrap_or(""));
    if ok {
        return None;
    }
    let named = all
        .iter()
        .enumerate()
        .find(|(_, w)| !w.is_empty())
        .map(|(r, w)| {
            if r == 0 {
                w.clone()
            } else {
                format!("rank {r}: {w}")
            }
        });
    Some(named.unwrap_or_default())
}

/// The job's layout, the same on every rank, or every rank refuses.
fn agreed_layout<C: Comm>(comm: &C, job: &Job) -> Result<Layout, Failure> {
    let mine = prepare(job.trace, job.opts, job.map).and_then(|mut l| {
        if let Some(n) = job.ranks {
            l.select_ranks(n)?;
        }
        Ok(l)
    });
    if let Some(why) = agree_ok(comm, mine.as_ref().err().map(ToString::to_string)) {
        return Err(refuse(comm, why));
    }
    let Ok(layout) = mine else {
        // cannot happen: agree_ok saw this rank's success
        return Err(Failure::Quiet);
    };
    let digest = layout.identity(&format!("{:?} {:?}", job.speed, job.fadvise));
    let (lo, hi) = comm.min_max(digest);
    if lo != hi {
        return Err(refuse(
            comm,
            format!(
                "the {} ranks resolved different replays (digests {lo:016x} to {hi:016x}): every rank must read \
                 the same trace (size, modification time, contents) with the same --map, --speed and --ranks; \
                 nothing was written",
                comm.size()
            ),
        ));
    }
    let need = job.ranks.unwrap_or_else(|| layout.trace_ranks());
    if need > comm.size() {
        return Err(refuse(
            comm,
            format!(
                "{}: the trace has {need} ranks, but the job has {} processes; start {need} (mpirun -np {need}) \
                 or replay its ranks 0 to N-1 with --ranks N; nothing was written",
                job.trace.display(),
                comm.size()
            ),
        ));
    }
    Ok(layout)
}

/// Rank 0 lays the files out (after `root_setup`, the CLI's own checks
/// and the store) and every rank attaches to them.
fn shared_layout<C: Comm>(
    comm: &C,
    job: &Job,
    layout: Layout,
    stop: &Stop<'_>,
    root_setup: &mut dyn FnMut() -> Result<(), String>,
) -> Result<Prepared, Failure> {
    let mut made: Option<Prepared> = None;
    let mut why = String::new();
    if comm.root() {
        match root_setup()
            .and_then(|()| lay_out(layout.clone(), job.target, stop).map_err(|e| e.to_string()))
        {
            Ok(p) => made = Some(p),
            Err(e) => why = e,
        }
    }
    let dir = comm.broadcast_string(
        &made
            .as_ref()
            .map(|p| p.run_dir.display().to_string())
            .unwrap_or_default(),
    );
    if dir.is_empty() {
        return Err(refuse(comm, why));
    }
    let prep = match made {
        Some(p) => Ok(p),
        None => attach(layout, &PathBuf::from(&dir)),
    };
    let seen = agree_ok(comm, prep.as_ref().err().map(ToString::to_string));
    match (prep, seen) {
        (Ok(p), None) => Ok(p),
        (prep, why) => {
            if let (true, Ok(p)) = (comm.root(), &prep) {
                let _ = std::fs::remove_dir_all(&p.run_dir);
            }
            Err(refuse(
                comm,
                format!(
                    "not every rank can see {dir} ({}): replay under MPI needs TARGET on a file system every \
                     node mounts at the same path",
                    why.unwrap_or_default()
                ),
            ))
        }
    }
}

/// Replay `job` with this rank's share of it. Rank 0 gets the whole
/// result, the other ranks `None`. `root_setup` runs on rank 0 only,
/// after every refusal that needs no I/O and before the files are laid
/// out.
pub fn run<C: Comm>(
    comm: &C,
    job: &Job,
    stop: &Stop<'_>,
    root_setup: &mut dyn FnMut() -> Result<(), String>,
) -> Result<Option<Done>, Failure> {
    let layout = agreed_layout(comm, job)?;
    let mut prep = shared_layout(comm, job, layout, stop, root_setup)?;
    prep.fadvise = job.fadvise;
    let all_ranks = prep.layout.ranks.clone();
    prep.layout.only_rank(comm.rank());
    let mine = if prep.layout.ranks.is_empty() {
        comm.barrier(); // the start every replaying rank waits at
        Ok(Vec::new())
    } else {
        replay_ranks(&prep, job.opts, job.speed, stop, &|| comm.barrier())
    };
    prep.layout.ranks = all_ranks;
    let stopped = comm.any(stop());
    let wire = match &mine {
        Ok(figures) => Wire::from_figures(figures, None),
        Err(e) => Wire::from_figures(&[], Some(e.to_string())),
    };
    let parts = comm.gather_bytes(&serde_json::to_vec(&wire).unwrap_or_default());
    if !comm.root() {
        return Ok(None);
    }
    let mut figures = Vec::new();
    let mut errors = Vec::new();
    for (r, bytes) in parts.iter().enumerate() {
        match serde_json::from_slice::<Wire>(bytes) {
            Ok(w) => {
                if let Some(e) = w.error {
                    errors.push(format!("rank {r}: {e}"));
                }
                figures.extend(w.ranks.into_iter().map(WireRank::into_figures));
            }
            Err(e) => errors.push(format!("rank {r}: its figures did not arrive intact ({e})")),
        }
    }
    if !errors.is_empty() {
        let _ = std::fs::remove_dir_all(&prep.run_dir);
        return Err(Failure::Failed(errors.join("; ")));
    }
    let result = ReplayResult::new(&prep, job.speed, figures, stopped);
    Ok(Some((prep, result)))
}

/// One process's figures as they travel to rank 0.
#[derive(Debug, Serialize, Deserialize)]
struct Wire {
    ranks: Vec<WireRank>,
    error: Option<String>,
}

/// One trace rank's figures, histograms as (value, count) pairs.
#[derive(Debug, Serialize, Deserialize)]
struct WireRank {
    rank: u32,
    reads: u64,
    writes: u64,
    syncs: u64,
    bytes_read: u64,
    bytes_written: u64,
    not_issued: u64,
    short_reads: u64,
    errors: BTreeMap<String, u64>,
    io_ns: u64,
    trace_io_ns: u64,
    traced_durations: u64,
    first_issue_ns: Option<u64>,
    last_done_ns: u64,
    last_issue_ns: u64,
    first_start_ns: Option<u64>,
    last_start_ns: u64,
    lag: Vec<(u64, u64)>,
    latency: Vec<(u64, u64)>,
    interrupted: bool,
    #[serde(default)]
    extra: storlab_replay::figures::RankExtra,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn counts(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

fn histogram(counts: &[(u64, u64)]) -> Histogram<u64> {
    // cannot fail: 3 significant figures is within hdrhistogram's range
    let mut h = Histogram::new(3).expect("3 significant figures");
    for &(v, n) in counts {
        h.saturating_record_n(v, n);
    }
    h
}

impl Wire {
    fn from_figures(figures: &[RankFigures], error: Option<String>) -> Wire {
        let ranks = figures
            .iter()
            .map(|f| WireRank {
                rank: f.rank,
                reads: f.reads,
                writes: f.writes,
                syncs: f.syncs,
                bytes_read: f.bytes_read,
                bytes_written: f.bytes_written,
                not_issued: f.not_issued,
                short_reads: f.short_reads,
                errors: f.errors.clone(),
                io_ns: f.io_ns,
                trace_io_ns: f.trace_io_ns,
                traced_durations: f.traced_durations,
                first_issue_ns: f.first_issue.map(ns),
                last_done_ns: ns(f.last_done),
                last_issue_ns: ns(f.last_issue),
                first_start_ns: f.first_start_ns,
                last_start_ns: f.last_start_ns,
                lag: counts(&f.lag),
                latency: counts(&f.latency),
                interrupted: f.interrupted,
                extra: f.extra.clone(),
            })
            .collect();
        Wire { ranks, error }
    }
}

impl WireRank {
    fn into_figures(self) -> RankFigures {
        let mut f = RankFigures::new(self.rank, histogram(&self.lag), histogram(&self.latency));
        f.reads = self.reads;
        f.writes = self.writes;
        f.syncs = self.syncs;
        f.bytes_read = self.bytes_read;
        f.bytes_written = self.bytes_written;
        f.not_issued = self.not_issued;
        f.short_reads = self.short_reads;
        f.errors = self.errors;
        f.io_ns = self.io_ns;
        f.trace_io_ns = self.trace_io_ns;
        f.traced_durations = self.traced_durations;
        f.first_issue = self.first_issue_ns.map(Duration::from_nanos);
        f.last_done = Duration::from_nanos(self.last_done_ns);
        f.last_issue = Duration::from_nanos(self.last_issue_ns);
        f.first_start_ns = self.first_start_ns;
        f.last_start_ns = self.last_start_ns;
        f.interrupted = self.interrupted;
        f.extra = self.extra;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalComm;
    use std::fmt::Write as _;

    /// A fio v3 iolog (one rank) of `n` 4 KiB reads and `n` 8 KiB writes.
    fn iolog(dir: &Path, n: u64) -> PathBuf {
        let mut t = String::from("fio version 3 iolog\n0 /app/in.dat add\n0 /app/out.dat add\n");
        for i in 0..n {
            let _ = writeln!(t, "{} /app/in.dat read {} 4096", i * 10, i * 4096);
            let _ = writeln!(t, "{} /app/out.dat write {} 8192", i * 10 + 5, i * 8192);
        }
        let p = dir.join("app.iolog");
        std::fs::write(&p, t).expect("trace");
        p
    }

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/darshan")
            .join(name)
    }

    /// 16 ranks declared, data on rank 0 only.
    fn darshan16() -> PathBuf {
        fixture("sample-dxt-simple.darshan")
    }

    fn job<'a>(
        trace: &'a Path,
        target: &'a Path,
        map: &'a PathMap,
        opts: &'a OpenOptions,
    ) -> Job<'a> {
        Job {
            trace,
            opts,
            map,
            speed: Speed::Max,
            ranks: None,
            target,
            fadvise: storlab_replay::Fadvise::Normal,
        }
    }

    #[test]
    fn each_rank_replays_its_own_trace_rank_and_rank_0_gets_them_all_exactly() {
        let d = tempfile::tempdir().expect("tempdir");
        let (map, opts) = (PathMap::default(), OpenOptions::default());
        let trace = fixture("dxt-4ranks-3.41.darshan");
        let j = job(&trace, d.path(), &map, &opts);
        let out = LocalComm::run(4, |c| {
            run(&c, &j, &|| false, &mut || Ok(())).map_err(|e| e.to_string())
        });
        let mut out = out.into_iter();
        let (prep, result) = out
            .next()
            .expect("rank 0")
            .expect("rank 0 replayed")
            .expect("rank 0 has the result");
        assert!(
            out.all(|r| matches!(r, Ok(None))),
            "only rank 0 has a result"
        );
        let ranks: Vec<u32> = result.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
        for t in prep.layout.summary.ranks.iter().filter(|t| t.rank < 4) {
            let r = result
                .ranks
                .iter()
                .find(|r| r.rank == t.rank)
                .expect("rank replayed");
            assert_eq!((r.reads, r.writes), (t.reads, t.writes), "rank {}", t.rank);
            assert_eq!(
                (r.bytes_read, r.bytes_written),
                (t.bytes_read, t.bytes_written)
            );
            assert_eq!(
                r.latency.len(),
                r.reads + r.writes + r.syncs,
                "histogram kept whole"
            );
        }
        assert!(result.differences.is_empty(), "{:?}", result.differences);
        let _ = std::fs::remove_dir_all(&prep.run_dir);
    }

    #[test]
    fn with_ranks_n_only_trace_ranks_below_n_are_replayed_and_the_rest_named() {
        let d = tempfile::tempdir().expect("tempdir");
        let (map, opts) = (PathMap::default(), OpenOptions::default());
        let trace = fixture("dxt-4ranks-3.41.darshan");
        let mut j = job(&trace, d.path(), &map, &opts);
        j.ranks = Some(2);
        let out = LocalComm::run(3, |c| {
            run(&c, &j, &|| false, &mut || Ok(())).map_err(|e| e.to_string())
        });
        let (prep, result) = out[0]
            .as_ref()
            .expect("ok")
            .as_ref()
            .expect("rank 0 result");
        let ranks: Vec<u32> = result.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [0, 1], "rank 2 of the job idles");
        assert_eq!(result.differences.len(), 2, "{:?}", result.differences);
        assert!(
            result
                .differences
                .iter()
                .all(|d| d.contains("not replayed"))
        );
        let _ = std::fs::remove_dir_all(&prep.run_dir);
    }

    #[test]
    fn a_trace_with_more_ranks_than_processes_is_refused_naming_both_before_any_io() {
        let d = tempfile::tempdir().expect("tempdir");
        let (map, opts) = (PathMap::default(), OpenOptions::default());
        let trace = darshan16();
        let j = job(&trace, d.path(), &map, &opts);
        let out = LocalComm::run(4, |c| run(&c, &j, &|| false, &mut || Ok(())));
        match &out[0] {
            Err(Failure::Refused(why)) => {
                assert!(
                    why.contains("16 ranks") && why.contains("4 processes"),
                    "{why}"
                );
            }
            other => panic!("rank 0 should refuse: {other:?}"),
        }
        assert!(out[1..].iter().all(|r| matches!(r, Err(Failure::Quiet))));
        assert_eq!(
            std::fs::read_dir(d.path()).expect("dir").count(),
            0,
            "nothing laid out"
        );
    }

    #[test]
    fn ranks_that_resolve_different_jobs_all_refuse_before_any_io() {
        let d = tempfile::tempdir().expect("tempdir");
        let trace = iolog(d.path(), 8);
        let target = d.path().join("t");
        std::fs::create_dir(&target).expect("target");
        let opts = OpenOptions::default();
        let out = LocalComm::run(2, |c| {
            // Rank 1 was given another --map.
            let map = if c.rank() == 1 {
                PathMap::parse(["/app=other"]).expect("rule")
            } else {
                PathMap::default()
            };
            run(
                &c,
                &job(&trace, &target, &map, &opts),
                &|| false,
                &mut || Ok(()),
            )
        });
        match &out[0] {
            Err(Failure::Refused(why)) => assert!(why.contains("different replays"), "{why}"),
            other => panic!("rank 0 should refuse: {other:?}"),
        }
        assert!(matches!(out[1], Err(Failure::Quiet)));
        assert_eq!(std::fs::read_dir(&target).expect("dir").count(), 0);
    }

    #[test]
    fn a_rank_that_cannot_read_the_trace_makes_every_rank_refuse_and_rank_0_names_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let trace = iolog(d.path(), 8);
        let missing = d.path().join("gone.iolog");
        let (map, opts) = (PathMap::default(), OpenOptions::default());
        let out = LocalComm::run(3, |c| {
            let t = if c.rank() == 2 { &missing } else { &trace };
            run(
                &c,
                &job(t, d.path(), &map, &opts),
                &|| false,
                &mut || Ok(()),
            )
        });
        match &out[0] {
            Err(Failure::Refused(why)) => assert!(why.starts_with("rank 2:"), "{why}"),
            other => panic!("rank 0 should refuse: {other:?}"),
        }
    }

    #[test]
    fn a_one_rank_trace_on_three_processes_leaves_two_idle_and_counts_exactly() {
        let d = tempfile::tempdir().expect("tempdir");
        let trace = iolog(d.path(), 50);
        let target = d.path().join("t");
        std::fs::create_dir(&target).expect("target");
        let (map, opts) = (PathMap::default(), OpenOptions::default());
        let mut setups = 0;
        let out = LocalComm::run(3, |c| {
            let mut calls = 0;
            let r = run(
                &c,
                &job(&trace, &target, &map, &opts),
                &|| false,
                &mut || {
                    calls += 1;
                    Ok(())
                },
            );
            (
                r.map(|d| d.map(|(p, res)| (p.run_dir, res)))
                    .map_err(|e| e.to_string()),
                calls,
            )
        });
        for (r, calls) in &out[1..] {
            assert!(matches!(r, Ok(None)));
            assert_eq!(*calls, 0, "root_setup runs on rank 0 only");
        }
        setups += out[0].1;
        assert_eq!(setups, 1);
        let (dir, res) = out[0].0.as_ref().expect("ok").as_ref().expect("result");
        assert_eq!(res.ranks.len(), 1);
        let r = &res.ranks[0];
        assert_eq!(
            (r.reads, r.writes, r.bytes_read, r.bytes_written),
            (50, 50, 50 * 4096, 50 * 8192)
        );
        assert!(res.differences.is_empty(), "{:?}", res.differences);
        let _ = std::fs::remove_dir_all(dir);
    }
}
