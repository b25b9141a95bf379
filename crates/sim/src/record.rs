//! The sim→record mapping: simulated points as a stored run of kind `sim`
//! (one phase per point and solver), so `compare` and `report` show them
//! beside measured runs.

use crate::model::Point;
use crate::sweep::SweepPoint;
use std::collections::BTreeMap;
use storlab_types::{
    BenchReport, CacheMode, CacheReport, DirStats, EngineKind, FileLayout, HostInfo, LatencyStats,
    PhaseParams, PhaseResult, RwMode, TargetInfo,
};

/// The store's record: one phase per point and solver, with `numjobs` =
/// clients so `report`'s vs-numjobs chart puts simulated beside measured.
pub fn record(
    points: &[SweepPoint],
    file: &str,
    command_line: Vec<String>,
    started: String,
    finished: String,
) -> BenchReport {
    let mut phases = Vec::new();
    for p in points {
        for s in p.solved() {
            phases.push(phase(p, s, &started));
        }
    }
    let name = points
        .first()
        .map_or_else(|| "scenario".into(), |p| p.resolved.name.clone());
    BenchReport {
        command_line,
        started_at: started,
        finished_at: finished,
        phases,
        warnings: vec!["simulated by storlab sim, not measured".into()],
        ..BenchReport::new(
            HostInfo {
                hostname: format!("sim:{name}"),
                os: "simulation".into(),
                ..HostInfo::default()
            },
            TargetInfo {
                path: file.to_string(),
                kind: "simulation".into(),
                ..TargetInfo::default()
            },
        )
    }
}

fn phase(p: &SweepPoint, s: &Point, started: &str) -> PhaseResult {
    let r = &p.resolved;
    let w = &r.workload;
    let rw = match w.pattern {
        crate::scenario::Pattern::SeqRead => RwMode::Read,
        crate::scenario::Pattern::SeqWrite => RwMode::Write,
        crate::scenario::Pattern::RandRead => RwMode::RandRead,
        crate::scenario::Pattern::RandWrite => RwMode::RandWrite,
        // A scenario names one direction (`from_fio_word`); a mix is
        // recorded as fio's mixed modes.
        crate::scenario::Pattern::Mix { random: false, .. } => RwMode::ReadWrite,
        crate::scenario::Pattern::Mix { random: true, .. } => RwMode::RandRw,
    };
    let per_client = match w.sharing {
        crate::scenario::Sharing::NN => w.file_size_bytes,
        crate::scenario::Sharing::N1 => w.file_size_bytes / u64::from(r.streams()),
    };
    let total_bytes = per_client * u64::from(r.streams());
    let elapsed_ns = s
        .simulated_ns
        .unwrap_or_else(|| (total_bytes as f64 / s.aggregate_bytes_per_s * 1e9) as u64);
    let ops = total_bytes.div_ceil(w.bs_bytes);
    let lat = LatencyStats {
        mean: s.mean_latency_ns,
        p50: s.p50_latency_ns.unwrap_or(0),
        p99: s.p99_latency_ns.unwrap_or(0),
        ..LatencyStats::default()
    };
    let stats = DirStats {
        bytes: total_bytes,
        ops,
        bw_bytes_per_s: s.aggregate_bytes_per_s,
        iops: s.aggregate_bytes_per_s / w.bs_bytes as f64,
        lat_ns: s.latency_ns.or(s.p50_latency_ns.map(|_| lat)),
    };
    // A mix splits bytes, operations and rate by its read share.
    let rf = w.pattern.read_fraction();
    let share = |f: f64| DirStats {
        bytes: (stats.bytes as f64 * f).round() as u64,
        ops: (stats.ops as f64 * f).round() as u64,
        bw_bytes_per_s: stats.bw_bytes_per_s * f,
        iops: stats.iops * f,
        lat_ns: stats.lat_ns,
    };
    let (read, write) = if rf >= 1.0 {
        (stats, DirStats::default())
    } else if rf <= 0.0 {
        (DirStats::default(), stats)
    } else {
        (share(rf), share(1.0 - rf))
    };
    let label = match (&p.key, &p.value) {
        (Some(k), Some(v)) => format!("sim {} {k}={v}", s.solver),
        _ => format!("sim {} clients={}", s.solver, r.clients),
    };
    let utils: Vec<String> = s
        .utilisation
        .iter()
        .map(|u| format!("{} {:.0}%", u.component, u.pct))
        .collect();
    PhaseResult {
        device_stat: None,
        params: PhaseParams {
            name: label,
            rw,
            rwmixread: (rf * 100.0).round() as u8,
            bs: vec![storlab_types::BsWeight {
                bs_bytes: w.bs_bytes,
                weight: 100,
            }],
            size_bytes: per_client,
            numjobs: r.streams(),
            iodepth: w.iodepth,
            engine: EngineKind::Null,
            cache: if w.warm {
                CacheMode::Warm
            } else {
                CacheMode::Direct
            },
            layout: match w.sharing {
                crate::scenario::Sharing::NN => FileLayout::PerJob,
                crate::scenario::Sharing::N1 => FileLayout::SharedRegions,
            },
            buffer_pattern: storlab_types::BufferPattern::Random,
            seed: r.seed,
            iodepth_batch: 1,
            fallocate: true,
            log_interval_ns: 1_000_000_000,
            loops: 1,
            ..Default::default()
        },
        started_at: started.to_string(),
        elapsed_ns,
        fsync_in_window: false,
        end_fsync_ns: 0,
        latency_span: "simulated: request issue to completion".into(),
        read,
        write,
        total: stats,
        jobs: Vec::new(),
        cpu: Default::default(),
        errors: BTreeMap::new(),
        cache: CacheReport {
            mode: if w.warm { "warm" } else { "direct" }.into(),
            method: Some(format!("simulated ({})", s.solver)),
            ..CacheReport::default()
        },
        verify: None,
        depth: None,
        series: None,
        cluster: None,
        groups: None,
        interrupted: false,
        warnings: vec![format!(
            "simulated ({}), not measured: bound by {}; utilisation: {}",
            s.solver,
            s.binding,
            utils.join(", ")
        )],
        percentiles: None,
    }
}

/// The tags a saved sim run gets unless the user gave them: the scenario's
/// name (`sim.scenario`) and the varied key (`sim.vary`).
pub fn tags(points: &[SweepPoint], key: Option<&str>) -> Vec<(String, String)> {
    let scenario = points.first().map(|p| p.resolved.name.clone());
    let scenario = scenario.map(|n| ("sim.scenario".to_string(), n));
    let vary = key.map(|k| ("sim.vary".to_string(), k.to_string()));
    scenario.into_iter().chain(vary).collect()
}

/// Version of the JSON document `storlab sim --output-format json` prints.
pub const SIM_SCHEMA_VERSION: u32 = 1;

/// The JSON document `storlab sim --output-format json` prints: the
/// scenario, the file it came from, the solver, the varied key and every
/// point.
pub fn document(
    points: &[SweepPoint],
    file: &str,
    solver: crate::Solver,
    key: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({
        "schema_version": SIM_SCHEMA_VERSION,
        "kind": "sim",
        "scenario": points.first().map(|p| p.resolved.name.clone()),
        "file": file,
        "solver": solver,
        "vary": key,
        "points": points,
    })
}
