//! An io500 result directory as a storlab run record, so `storlab import`
//! brings a site's IO500 history into the store, beside storlab's own runs.
//!
//! Each phase of `result_summary.txt` becomes a stored phase of the same
//! name: an IOR phase's GiB/s is its bandwidth (write phases in `write`,
//! read phases in `read`), an mdtest or find phase's kIOPS its operation
//! rate (creates and deletes in `write`, stats, reads and find in `read`).
//! io500 keeps no byte or operation counts, so they are derived from the
//! printed rate and time (rate × time; io500 prints the rate to 6 decimals
//! and the time to the millisecond) and the record says so. io500's reasons
//! for INVALID become warnings of the phase and the run. The score is not
//! stored: it is recomputed from the phases' rates with [`crate::score()`],
//! exactly as io500 computes it.

use crate::phases::{self, ScoreGroup};
use crate::result::{ResultDir, SummaryPhase};
use storlab_types::{
    BenchReport, CacheMode, CacheReport, CacheState, DirStats, EngineKind, HostInfo, PhaseParams,
    PhaseResult, RwMode, TargetInfo, TargetKind, ToolInfo,
};

const GIB: f64 = (1u64 << 30) as f64;

/// What the record says about where its counts come from.
pub const DERIVED_SPAN: &str = "io500 result: rate and time as io500 printed them; bytes and \
     operations are rate × time; no latency is recorded";

/// `2026-11-27 06:23:28` (io500's local time, no zone) as RFC 3339, read as
/// UTC (io500 does not say which zone it wrote).
fn rfc3339(local: &str) -> String {
    match local.split_once(' ') {
        Some((d, t)) if d.len() == 10 && t.len() == 8 => format!("{d}T{t}Z"),
        _ => String::new(),
    }
}

fn direction(name: &str) -> RwMode {
    let write = name.ends_with("-write") || name.ends_with("-delete") || name.ends_with("-create");
    if write { RwMode::Write } else { RwMode::Read }
}

fn dir_stats(p: &SummaryPhase) -> DirStats {
    let (rate, unit_scale) = if phases::unit(&p.name) == "GiB/s" {
        (p.score * GIB, true)
    } else {
        (p.score * 1000.0, false)
    };
    let amount = (rate * p.time_s).round().max(0.0) as u64;
    if unit_scale {
        DirStats {
            bytes: amount,
            bw_bytes_per_s: rate,
            ..DirStats::default()
        }
    } else {
        DirStats {
            ops: amount,
            iops: rate,
            ..DirStats::default()
        }
    }
}

/// IOR's and mdtest's POSIX API is buffered `pread`/`pwrite`; the page
/// cache is dropped before each phase only with `drop-caches = TRUE`
/// (not verified), and otherwise not controlled (`buffered`, as fio's
/// `invalidate=0`).
fn cache(drop_caches: Option<bool>) -> (CacheMode, CacheReport) {
    let dropped = drop_caches == Some(true);
    let report = CacheReport {
        mode: CacheState::Buffered,
        method: dropped.then(|| {
            "io500 drop-caches: the drop-caches-cmd before each phase, not verified".into()
        }),
        ..CacheReport::default()
    };
    (
        if dropped {
            CacheMode::Cold
        } else {
            CacheMode::Buffered
        },
        report,
    )
}

fn phase(p: &SummaryPhase, procs: u32, drop_caches: Option<bool>) -> PhaseResult {
    let (cache_mode, cache_report) = cache(drop_caches);
    let rw = direction(&p.name);
    let stats = dir_stats(p);
    let mut warnings: Vec<String> = p
        .reasons
        .iter()
        .map(|r| format!("io500: INVALID: {r}"))
        .collect();
    if p.invalid && p.reasons.is_empty() {
        warnings.push("io500: INVALID (result.txt gives no reason)".into());
    }
    if !p.scored {
        warnings.push("io500: this phase does not count toward the score".into());
    }
    let (read, write) = match rw {
        RwMode::Write => (DirStats::default(), stats),
        _ => (stats, DirStats::default()),
    };
    PhaseResult {
        device_stat: None,
        params: PhaseParams {
            name: p.name.clone(),
            rw,
            rwmixread: if rw == RwMode::Read { 100 } else { 0 },
            numjobs: procs,
            iodepth: 1,
            engine: EngineKind::Psync,
            cache: cache_mode,
            loops: 1,
            ..PhaseParams::default()
        },
        started_at: p.started.as_deref().map(rfc3339).unwrap_or_default(),
        elapsed_ns: (p.time_s * 1e9).round().max(0.0) as u64,
        latency_span: DERIVED_SPAN.into(),
        read,
        write,
        total: stats,
        jobs: Vec::new(),
        cpu: storlab_types::CpuStats::default(),
        errors: Default::default(),
        cache: cache_report,
        verify: None,
        depth: None,
        interrupted: false,
        warnings,
        cluster: None,
        series: None,
        groups: None,
        fsync_in_window: false,
        end_fsync_ns: 0,
        percentiles: None,
    }
}

/// `dir` as a run record: tool `io500` at its version, one phase per line of
/// `result_summary.txt`, io500's reasons for INVALID as warnings. `host` is
/// the machine the run was on (io500 does not record it).
pub fn to_report(dir: &ResultDir, host: Option<&str>) -> BenchReport {
    let procs = dir.procs.unwrap_or(0);
    let mut warnings: Vec<String> = dir
        .run_reasons
        .iter()
        .map(|r| format!("io500: INVALID run: {r}"))
        .collect();
    if let Some(s) = dir.score.filter(|s| s.invalid) {
        warnings.push(format!(
            "io500 marked this run INVALID: its score ({:.6}) is not comparable with the official list",
            s.total
        ));
    }
    if dir.started.is_some() {
        warnings.push("io500 writes local times without a zone; they are stored as UTC".into());
    }
    if dir.drop_caches != Some(true) {
        warnings.push(
            "io500 ran buffered (POSIX API) without drop-caches: the page cache was not controlled, so reads may have been served from memory"
                .into(),
        );
    }
    // The timestamp line is io500's bookkeeping, not a measurement.
    let phases: Vec<PhaseResult> = dir
        .phases
        .iter()
        .filter(|p| phases::find(&p.name).is_none_or(|d| !d.dummy))
        .map(|p| phase(p, procs, dir.drop_caches))
        .collect();
    let mut report = BenchReport::imported(
        ToolInfo {
            name: "io500".into(),
            version: dir.version.clone(),
        },
        vec!["io500".into(), format!("--mode={}", dir.mode)],
        (
            dir.started.as_deref().map(rfc3339).unwrap_or_default(),
            dir.ended.as_deref().map(rfc3339).unwrap_or_default(),
        ),
        HostInfo {
            hostname: host.unwrap_or("").into(),
            ..HostInfo::default()
        },
        TargetInfo {
            path: dir.dir.display().to_string(),
            kind: TargetKind::Directory,
            ..TargetInfo::default()
        },
    );
    report.phases = phases;
    report.warnings = warnings;
    report
}

/// The score of a stored io500 run, from its phases' rates (the same
/// arithmetic as io500; phases are found by name).
pub fn score_of(report: &BenchReport, extended: bool) -> crate::Scores {
    let figures: Vec<(String, f64)> = report
        .phases
        .iter()
        .filter_map(|p| {
            let def = phases::find(&p.params.name)?;
            let f = match def.group {
                ScoreGroup::Bw => p.total.bw_bytes_per_s / GIB,
                ScoreGroup::Md => p.total.iops / 1000.0,
                ScoreGroup::None => return None,
            };
            Some((p.params.name.clone(), f))
        })
        .collect();
    crate::score(figures.iter().map(|(n, f)| (n.as_str(), *f)), extended)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture() -> ResultDir {
        ResultDir::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/io500-run"))
            .expect("fixture")
    }

    #[test]
    fn the_record_keeps_every_phase_with_its_rate_direction_and_reasons() {
        let dir = fixture();
        let r = to_report(&dir, Some("node1"));
        assert_eq!(r.tool.name, "io500");
        assert_eq!(
            r.phases.len(),
            dir.phases.len() - 1,
            "all but io500's timestamp line"
        );
        assert!(r.phases.iter().all(|p| p.params.name != "timestamp"));
        assert_eq!(r.phases[0].params.engine, EngineKind::Psync);
        assert_eq!(
            r.phases[0].params.cache,
            CacheMode::Buffered,
            "drop-caches = FALSE"
        );
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("page cache was not controlled"))
        );
        let w = &r.phases[0];
        assert_eq!(w.params.name, "ior-easy-write");
        assert_eq!(w.params.rw, RwMode::Write);
        assert_eq!(w.params.numjobs, 2);
        assert!((w.write.bw_bytes_per_s / GIB - 0.608249).abs() < 1e-12);
        // bytes = rate × time, the identity every storlab phase keeps.
        let implied = w.write.bw_bytes_per_s * w.elapsed_ns as f64 / 1e9;
        assert!((w.write.bytes as f64 - implied).abs() <= 1.0);
        assert_eq!(
            w.warnings.len(),
            3,
            "io500's three reasons: {:?}",
            w.warnings
        );
        let stat = r
            .phases
            .iter()
            .find(|p| p.params.name == "mdtest-easy-stat")
            .expect("phase");
        assert_eq!(stat.params.rw, RwMode::Read);
        assert!((stat.read.iops - 216_555.652).abs() < 1e-6);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("INVALID run: stonewall-time 1s != 300s"))
        );
        assert_eq!(r.started_at, "2026-11-27T06:23:28Z");
    }

    #[test]
    fn the_score_recomputed_from_the_stored_phases_is_io500s() {
        let dir = fixture();
        let s = score_of(&to_report(&dir, None), false);
        let io500 = dir.score.expect("finished");
        assert!(
            ((s.total - io500.total) / io500.total).abs() < 5e-6,
            "{} vs {}",
            s.total,
            io500.total
        );
        assert!(((s.bandwidth_gib_s - io500.bandwidth_gib_s) / io500.bandwidth_gib_s).abs() < 5e-6);
        assert!(((s.md_kiops - io500.md_kiops) / io500.md_kiops).abs() < 5e-6);
    }
}
