//! The sweeper: what every sweep (`storlab sweep`, a campaign's sweep
//! runs) shares besides running a point — the points a sweep still has to
//! run and the ones already stored, the tags of each point's run, the time
//! left, the bookkeeping of a point that failed or was stopped, and the
//! sweep's result document. The points come from [`crate::expand_sweep`]
//! (the `--vary` lists in the one range grammar); running a point is the
//! engine's ([`crate::run_with_layout`]), and running the points in
//! order is [`runner`]'s (behind the front end's store and live line);
//! storing and printing are the front end's.

use crate::jobspec::{Job, JobError};
use crate::profiles::Profile;
use crate::{PhaseSpec, SpecError, SweepPoint, Vary, spec_from_pairs, split_group_key};
use std::collections::BTreeMap;
use std::path::Path;
use storlab_types::{BenchReport, CacheMode, PhaseParams, PhaseResult};

pub mod drive;
pub mod resume;
pub mod runner;

pub use drive::{Before, Driven, OnFailure, Outcome, Points, Silent, drive};
pub use runner::{
    PointInfo, PointSink, Progress, Saved, StoreError, SweepError, SweepEvent, SweepRun,
    run_points, sweep_line,
};

/// Tags the sweep sets on every point's run; `--tag` may not use them.
pub const RESERVED_TAGS: [&str; 3] = ["sweep", "sweep_point", "sweep_params"];

/// Why `storlab sweep` does not start (nothing is made first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Started as `n` processes by mpirun/srun: each would run the whole
    /// sweep on the same storage at once.
    #[error(
        "storlab sweep was started as {0} processes by an MPI launcher: each would run the whole \
         sweep on the same storage at once; run the sweep without mpirun/srun, or measure \
         many clients with `mpirun -np {0} storlab bench ... --clients 1,2,4` (one run per client count)"
    )]
    UnderLauncher(u32),
    #[error(
        "--monitor is not available for sweeps: run `storlab monitor` beside the sweep instead"
    )]
    Monitor,
    #[error("--resume reads the stored points: drop --no-save")]
    ResumeUnsaved,
    #[error(
        "nothing to sweep: add --vary OPTION=VALUES (e.g. --vary bs=4k,64k,1m) or a --profile with a sweep"
    )]
    Nothing,
    /// `--tag` with a key the sweep sets itself.
    #[error("--tag {0}=...: {0} is set by the sweep itself; use another key")]
    ReservedTag(&'static str),
}

/// What became of one point.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub point: SweepPoint,
    /// Its run in the store.
    pub run_id: Option<i64>,
    /// What it measured (this time, or as stored by an earlier attempt).
    pub report: Option<BenchReport>,
    /// Why it failed.
    pub error: Option<String>,
    /// Taken from the store (`--resume`), not run now.
    pub resumed: bool,
}

/// Totals of a sweep.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SweepTotals {
    pub sweep_id: String,
    pub points: usize,
    pub failed: usize,
    pub wall_ns: u64,
    /// Sum of the measured windows of the phases run now.
    pub measured_ns: u64,
    pub layout_bytes: u64,
    pub layout_ns: u64,
    pub interrupted: bool,
    pub mem_total_bytes: u64,
    /// Memory the page cache could use when the sweep started (MemAvailable).
    pub page_cache_bytes: Option<u64>,
}

/// A point's run tags: the user's, then the sweep's id, the point's index
/// and its parameters (`bs=4k,numjobs=2`).
pub fn point_tags(
    user: &BTreeMap<String, String>,
    sweep_id: &str,
    point: &SweepPoint,
) -> BTreeMap<String, String> {
    let mut tags = user.clone();
    tags.insert("sweep".into(), sweep_id.to_string());
    tags.insert("sweep_point".into(), point.index.to_string());
    tags.insert("sweep_params".into(), point.label());
    tags
}

/// The first `--tag` key the sweep sets itself.
pub fn reserved_tag(user: &BTreeMap<String, String>) -> Option<&'static str> {
    RESERVED_TAGS
        .iter()
        .copied()
        .find(|k| user.contains_key(*k))
}

/// Every point in order: a point already stored (`stored`, by its label)
/// is taken as it is; the others are planned with `plan`, and a point that
/// cannot be planned is failed alone (its error kept). Returns the results
/// and the planned points to run, each with its place in the results.
pub fn plan_points<P, E: std::fmt::Display>(
    points: Vec<SweepPoint>,
    stored: &BTreeMap<String, (i64, BenchReport)>,
    mut plan: impl FnMut(&SweepPoint) -> Result<P, E>,
) -> (Vec<PointResult>, Vec<(usize, P)>) {
    let mut results: Vec<PointResult> = Vec::new();
    let mut todo = Vec::new();
    for point in points {
        if let Some((id, report)) = stored.get(&point.label()) {
            results.push(PointResult {
                point,
                run_id: Some(*id),
                report: Some(report.clone()),
                error: None,
                resumed: true,
            });
            continue;
        }
        let error = match plan(&point) {
            Ok(p) => {
                todo.push((results.len(), p));
                None
            }
            Err(e) => Some(format!("{e:#}")),
        };
        results.push(PointResult {
            point,
            run_id: None,
            report: None,
            error,
            resumed: false,
        });
    }
    (results, todo)
}

/// A point's top layer: `base` (the workload flags) with the point's
/// values on top, each `group.NAME.KEY` value over that group alone; a
/// sweep without a job file (`job` false) measures one phase of reads
/// unless told otherwise. Also the groups the point names.
pub fn point_spec<'a>(
    base: &PhaseSpec,
    point: &'a SweepPoint,
    job: bool,
) -> Result<(PhaseSpec, Vec<&'a str>), SpecError> {
    let pairs = point
        .params
        .iter()
        .filter(|(k, _)| split_group_key(k).is_none())
        .map(|(k, v)| (*k, v.as_str()));
    let mut over = base.overlay(&spec_from_pairs(pairs)?);
    let mut groups = Vec::new();
    for (k, v) in &point.params {
        if let Some((name, key)) = split_group_key(k) {
            let one = spec_from_pairs([(key, v.as_str())])?;
            let entry = over.group_over.entry(name.to_string()).or_default();
            *entry = entry.overlay(&one);
            groups.push(name);
        }
    }
    if !job && over.rw.is_none() {
        over.rw = Some(storlab_types::RwMode::Read);
    }
    Ok((over, groups))
}

/// The options a sweep varies: `vary` (each `--vary` as typed), then the
/// profile's sweep for options neither `--vary` nor a workload flag
/// (`flags`) sets; and whether the lists are zipped (`--zip`, or the
/// profile's choice when no `--vary` is given).
pub fn varies(
    vary: &[String],
    zip: bool,
    profile: Option<&Profile>,
    flags: &PhaseSpec,
) -> Result<(Vec<Vary>, bool), SpecError> {
    let mut varies: Vec<Vary> = vary
        .iter()
        .map(|v| Vary::parse(v))
        .collect::<Result<_, _>>()?;
    let mut zip = zip;
    if let Some(p) = profile {
        let set = toml::Table::try_from(flags).unwrap_or_default();
        let from_profile: Vec<Vary> = p
            .meta
            .vary
            .iter()
            .map(|v| Vary::parse(v))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|v| !varies.iter().any(|w| w.key == v.key) && !set.contains_key(v.key))
            .collect();
        if vary.is_empty() {
            zip |= p.meta.zip;
        }
        varies.extend(from_profile);
    }
    Ok((varies, zip))
}

/// Why a point could not be planned (it fails alone).
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Job(#[from] JobError),
    /// What the whole sweep's preparation would refuse.
    #[error("io_uring is not available here ({0}); use --engine psync")]
    NoUring(std::io::Error),
}

/// A point's phases: the job file (`job`: its text and path) or the
/// workload flags (`flags`), then the point's values on top, on `target`.
pub fn plan_point(
    flags: &PhaseSpec,
    point: &SweepPoint,
    job: Option<(&str, &Path)>,
    target: Option<&Path>,
) -> Result<Job, PointError> {
    let (over, groups_varied) = point_spec(flags, point, job.is_some())?;
    let planned = crate::jobspec::build(job, target, &over)?;
    missing_group(&planned.phases, &groups_varied)?;
    if planned
        .phases
        .iter()
        .any(|p| p.engine == storlab_types::EngineKind::IoUring)
        && let Err(e) = crate::uring_available()
    {
        return Err(PointError::NoUring(e));
    }
    Ok(planned)
}

/// A group the point varies (`group.NAME.KEY`) that no planned phase has.
pub fn missing_group(phases: &[PhaseParams], varied: &[&str]) -> Result<(), SpecError> {
    let Some(name) = varied.iter().find(|n| {
        !phases
            .iter()
            .any(|p| p.groups.iter().any(|g| g.name == **n))
    }) else {
        return Ok(());
    };
    let names: Vec<&str> = phases
        .iter()
        .flat_map(|p| p.groups.iter().map(|g| g.name.as_str()))
        .collect();
    Err(SpecError(format!(
        "--vary group.{name}.…: no job group is named '{name}' (the groups here: {})",
        if names.is_empty() {
            "none; groups come from the job file or profile".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// The words after `sweep` of a stored point's command line, without
/// `--resume` (the sweep as first typed), or none when it is no sweep's.
pub fn resume_words(command_line: &[String]) -> Option<Vec<String>> {
    let at = command_line.iter().position(|a| a == "sweep")?;
    let mut args = Vec::new();
    let mut rest = command_line[at + 1..].iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--resume" => {
                rest.next();
            }
            x if x.starts_with("--resume=") => {}
            _ => args.push(a.clone()),
        }
    }
    Some(args)
}

/// Why a point that ran is a failure: its stop reason (not a signal: a
/// stopped sweep is interrupted, not failed), blocks that failed
/// verification, or a record that could not be stored.
pub fn point_error(
    report: &BenchReport,
    stop_reason: Option<&str>,
    signalled: bool,
    save_failures: &[String],
) -> Option<String> {
    let error = match (stop_reason, signalled) {
        (_, true) => None,
        (Some(r), false) => Some(r.to_string()),
        (None, false) if report.verify_mismatches() > 0 => Some(format!(
            "{} block(s) failed verification",
            report.verify_mismatches()
        )),
        (None, false) => None,
    };
    // A point whose record could not be stored is not a success: the
    // sweep goes on, and ends non-zero (--resume runs it again).
    error.or_else(|| {
        (!save_failures.is_empty()).then(|| format!("not saved: {}", save_failures.join("; ")))
    })
}

/// `sw-20261125T171500-4f2a`: sortable, and unique enough per host.
pub fn new_sweep_id() -> String {
    let t = storlab_types::time::now_rfc3339();
    let stamp: String = t
        .trim_end_matches('Z')
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    format!("sw-{stamp}-{:04x}", storlab_types::time::id_salt())
}

/// Planned seconds of a point, when every phase is time-bound.
pub fn planned_secs(phases: &[PhaseParams]) -> Option<f64> {
    phases
        .iter()
        .map(|ph| {
            ph.runtime_ns
                .filter(|_| ph.time_based)
                .map(|r| (r + ph.ramp_ns) as f64 / 1e9)
        })
        .sum()
}

/// Time left for the points still to run: the mean wall time of those run
/// so far, or their planned runtimes before any has run.
pub fn time_left(walls: &[f64], planned: &[Option<f64>]) -> Option<f64> {
    if walls.is_empty() {
        planned.iter().copied().sum()
    } else {
        Some(walls.iter().sum::<f64>() / walls.len() as f64 * planned.len() as f64)
    }
}

pub fn fmt_secs(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Whether a phase's figures may come from the page cache rather than the
/// device: storlab's own cache check said so, or it read buffered from a
/// working set smaller than the RAM that was pre-read (`warm`), left as an
/// earlier write left it (`buffered`) or read more than once (a time-based phase repeats its passes).
pub fn looks_cached(ph: &PhaseResult, mem_total: u64) -> bool {
    let p = &ph.params;
    let working_set = p.size_bytes.saturating_mul(u64::from(p.numjobs));
    let fits = mem_total > 0 && working_set < mem_total;
    let reread = match p.cache {
        CacheMode::Direct => false,
        CacheMode::Warm | CacheMode::Buffered => true,
        CacheMode::Cold => p.time_based,
    };
    ph.cache.may_be_cached || (p.rw.reads() && fits && reread)
}

/// The sweep as JSON: totals and one entry per point (its parameters, run,
/// error and each phase's main figures).
pub fn json_document(
    results: &[PointResult],
    t: &SweepTotals,
    document_kind: &str,
) -> serde_json::Value {
    let points: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let params: serde_json::Map<String, serde_json::Value> = r
                .point
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            let mem = r
                .report
                .as_ref()
                .map_or(t.mem_total_bytes, |rep| rep.host.mem_total_bytes);
            let phases: Vec<serde_json::Value> = r
                .report
                .iter()
                .flat_map(|rep| rep.phases.iter())
                .map(|ph| {
                    let mut v = phase_json(ph, mem);
                    if let Some(g) = &ph.groups {
                        v["overlap"] = serde_json::json!(g.overlap);
                        v["groups"] = g
                            .groups
                            .iter()
                            .map(|g| {
                                serde_json::json!({
                                    "name": g.name,
                                    "rw": g.params.rw.as_str(),
                                    "numjobs": g.params.numjobs,
                                    "iodepth": g.params.iodepth,
                                    "bw_bytes_per_s": g.total.bw_bytes_per_s,
                                    "iops": g.total.iops,
                                    "lat_p50_ns": g.total.lat_ns.map(|l| l.p50),
                                    "lat_p99_ns": g.total.lat_ns.map(|l| l.p99),
                                    "elapsed_ns": g.elapsed_ns,
                                })
                            })
                            .collect();
                    }
                    v
                })
                .collect();
            serde_json::json!({
                "index": r.point.index,
                "params": params,
                "run_id": r.run_id,
                "resumed": r.resumed,
                "error": r.error,
                "phases": phases,
            })
        })
        .collect();
    document(points, t, document_kind)
}

/// One phase's main figures in the sweep document.
fn phase_json(ph: &PhaseResult, mem: u64) -> serde_json::Value {
    serde_json::json!({
        "name": ph.params.name,
        "rw": ph.params.rw.as_str(),
        "bw_bytes_per_s": ph.total.bw_bytes_per_s,
        "iops": ph.total.iops,
        "lat_p50_ns": ph.total.lat_ns.map(|l| l.p50),
        "lat_p99_ns": ph.total.lat_ns.map(|l| l.p99),
        "elapsed_ns": ph.elapsed_ns,
        "cpu_utilization_pct": ph.cpu.utilization_pct,
        "cpu_ns_per_io": ph.cpu.cpu_ns_per_io,
        "cache_mode": ph.cache.mode,
        "may_be_cached": looks_cached(ph, mem),
    })
}

/// The sweep document around its points.
fn document(points: Vec<serde_json::Value>, t: &SweepTotals, kind: &str) -> serde_json::Value {
    serde_json::json!({
        // What wrote it (and how `--json-out` knows the file is storlab's
        // when the sweep is run again).
        "tool": {"name": "storlab", "version": storlab_types::STORLAB_VERSION},
        "document": kind,
        "sweep_id": t.sweep_id,
        "points": points,
        "failed": t.failed,
        "interrupted": t.interrupted,
        "wall_ns": t.wall_ns,
        "measured_ns": t.measured_ns,
        "outside_measured_ns": t.wall_ns.saturating_sub(t.measured_ns),
        "layout_bytes": t.layout_bytes,
        "layout_ns": t.layout_ns,
        "mem_total_bytes": t.mem_total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> BenchReport {
        BenchReport {
            schema_version: storlab_types::SCHEMA_VERSION,
            tool: Default::default(),
            command_line: Vec::new(),
            started_at: String::new(),
            finished_at: String::new(),
            interrupted: false,
            stop_reason: None,
            host: Default::default(),
            target: Default::default(),
            phases: Vec::new(),
            warnings: Vec::new(),
            monitor: None,
            repeat: None,
            replay: None,
        }
    }

    #[test]
    fn ids_and_times() {
        let id = new_sweep_id();
        assert!(id.starts_with("sw-") && id.len() > 10, "{id}");
        assert!(!id.contains([' ', '=', ',']), "{id}");
        assert_eq!(fmt_secs(42.4), "42s");
        assert_eq!(fmt_secs(125.0), "2m05s");
        assert_eq!(fmt_secs(7260.0), "2h01m");
        assert_eq!(time_left(&[], &[Some(2.0), Some(3.0)]), Some(5.0));
        assert_eq!(time_left(&[], &[Some(2.0), None]), None);
        assert_eq!(time_left(&[4.0, 6.0], &[None, None, None]), Some(15.0));
    }

    #[test]
    fn stored_points_are_kept_and_unplannable_ones_fail_alone() {
        let v = |s: &str| crate::Vary::parse(s).unwrap();
        let points = crate::expand_sweep(&[v("bs=4k,8k,16k")], false).unwrap();
        let mut stored = BTreeMap::new();
        stored.insert("bs=8k".to_string(), (7, report()));
        let (results, todo) = plan_points(points, &stored, |p| {
            if p.label() == "bs=16k" {
                Err("too big")
            } else {
                Ok(p.index)
            }
        });
        assert_eq!(todo, [(0, 0)]);
        assert!(results[1].resumed && results[1].run_id == Some(7));
        assert_eq!(results[2].error.as_deref(), Some("too big"));
        let tags = point_tags(&BTreeMap::new(), "sw-1", &results[2].point);
        assert_eq!(tags["sweep_params"], "bs=16k");
        assert_eq!(tags["sweep_point"], "2");
        let mut user = BTreeMap::new();
        user.insert("sweep".to_string(), "x".to_string());
        assert_eq!(reserved_tag(&user), Some("sweep"));
    }

    #[test]
    fn a_point_is_the_top_layer_and_its_groups_are_named() {
        let v = |s: &str| crate::Vary::parse(s).unwrap();
        let points = crate::expand_sweep(&[v("bs=8k"), v("group.w.numjobs=2")], false).unwrap();
        let base = spec_from_pairs([("bs", "4k"), ("iodepth", "4")]).unwrap();
        let (over, groups) = point_spec(&base, &points[0], false).unwrap();
        assert_eq!(over.bs.map(|b| b.0), Some(8192));
        assert_eq!(over.iodepth, Some(4));
        assert_eq!(
            over.rw,
            Some(storlab_types::RwMode::Read),
            "one phase of reads"
        );
        assert_eq!(over.group_over["w"].numjobs, Some(2));
        assert_eq!(groups, ["w"]);
        assert_eq!(point_spec(&base, &points[0], true).unwrap().0.rw, None);
        let e = missing_group(&[], &groups).unwrap_err().0;
        assert!(
            e.contains("no job group is named 'w'") && e.contains("none;"),
            "{e}"
        );
        assert!(missing_group(&[], &[]).is_ok());
    }

    #[test]
    fn a_profile_sweep_yields_to_the_command_line() {
        storlab_types::set_ram_bytes(8 << 30);
        let shipped = |name: &str, text: &str| Profile::parse(name, "shipped", text).unwrap();
        let iops = shipped("iops", include_str!("../../../profiles/iops.toml"));
        let cache = shipped("cache", include_str!("../../../profiles/cache.toml"));
        let none = PhaseSpec::default();
        let keys = |vary: &[&str], zip: bool, p: Option<&Profile>, flags: &PhaseSpec| {
            let vary: Vec<String> = vary.iter().map(|v| v.to_string()).collect();
            let (v, zip) = varies(&vary, zip, p, flags).unwrap();
            (v.iter().map(|v| v.key).collect::<Vec<_>>(), zip)
        };
        assert_eq!(keys(&["bs=4k,8k"], false, None, &none).0, ["bs"]);
        assert_eq!(keys(&[], false, Some(&iops), &none).0, ["iodepth"]);
        // --vary first, then the profile's options not set otherwise.
        assert_eq!(
            keys(&["bs=4k,8k"], false, Some(&iops), &none).0,
            ["bs", "iodepth"]
        );
        // A fixed --iodepth replaces the profile's iodepth sweep.
        let qd = spec_from_pairs([("iodepth", "4")]).unwrap();
        assert_eq!(keys(&["bs=4k,8k"], false, Some(&iops), &qd).0, ["bs"]);
        let size = spec_from_pairs([("size", "1g")]).unwrap();
        assert_eq!(keys(&[], false, Some(&cache), &size).0, ["bs"]);
        assert!(keys(&["bs=4k"], true, None, &none).1);
    }

    #[test]
    fn resume_words_drop_the_resume_flag() {
        let line: Vec<String> = [
            "storlab",
            "sweep",
            "/t",
            "--resume",
            "sw-1",
            "--vary",
            "bs=4k",
            "--resume=x",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(resume_words(&line).unwrap(), ["/t", "--vary", "bs=4k"]);
        assert_eq!(
            resume_words(&["storlab".to_string(), "bench".to_string()]),
            None
        );
    }

    #[test]
    fn a_signal_is_no_failure_but_a_lost_record_is() {
        let r = report();
        assert_eq!(point_error(&r, Some("stopped"), true, &[]), None);
        assert_eq!(
            point_error(&r, Some("ENOSPC"), false, &[]).as_deref(),
            Some("ENOSPC")
        );
        assert_eq!(
            point_error(&r, None, false, &["db locked".into()]).as_deref(),
            Some("not saved: db locked")
        );
        assert_eq!(point_error(&r, None, false, &[]), None);
    }
}
