//! Pure: the ranks' figures for one md phase → the stored `PhaseResult`
//! (aggregate rate over the common window, latency from the merged HDR
//! histograms, one `jobs` entry per rank), and the `PhaseParams` echo.

use crate::{Item, MdSpec, Op, RankPhase, Tree};
use storlab_bench::DirCounter;
use storlab_types::{
    CacheReport, CpuStats, DirStats, EngineKind, JobResult, MdParams, PhaseParams, PhaseResult,
    RwMode,
};

/// What the latency of an md operation spans.
pub const MD_LATENCY_SPAN: &str = "each operation: from the clock reading immediately before its \
     system calls to the reading after they returned (a file create is open, write, close; a read \
     is open, read, close)";

fn rw_of(op: Op) -> RwMode {
    match op {
        Op::Stat | Op::Read => RwMode::Read,
        Op::Create | Op::Rename | Op::Delete => RwMode::Write,
    }
}

/// The parameters echoed for one phase of `spec` run by `parts`.
pub fn params(spec: &MdSpec, tree: &Tree, parts: &[RankPhase]) -> PhaseParams {
    let Some(first) = parts.first() else {
        return PhaseParams::default();
    };
    let ph = first.phase;
    let mut by_rank: Vec<(u32, u64)> = parts.iter().map(|p| (p.rank, p.items())).collect();
    by_rank.sort_unstable();
    let ranks = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    PhaseParams {
        name: ph.name(),
        rw: rw_of(ph.op),
        rwmixread: if rw_of(ph.op) == RwMode::Read { 100 } else { 0 },
        size_bytes: if ph.item == Item::File {
            spec.write_bytes
        } else {
            0
        },
        numjobs: ranks,
        iodepth: 1,
        engine: EngineKind::Psync,
        loops: 1,
        log_interval_ns: 1_000_000_000,
        md: Some(MdParams {
            op: ph.op.as_str().into(),
            item: ph.item.as_str().into(),
            items_per_rank: spec.count(ph.item),
            items_by_rank: by_rank.into_iter().map(|(_, n)| n).collect(),
            depth: spec.depth,
            branch: spec.branch,
            tree_dirs: tree.dirs(),
            unique_dir: spec.unique_dir,
            write_bytes: spec.write_bytes,
            read_bytes: spec.read_bytes,
            ranks,
            rank_shift: spec.rank_shift,
            stonewall_ns: spec.stonewall_ns,
            stonewalled: parts.iter().any(|p| p.stonewalled),
        }),
        ..PhaseParams::default()
    }
}

/// One direction's figures placed as read or write by the operation.
fn split(op: Op, s: DirStats) -> (DirStats, DirStats) {
    if rw_of(op) == RwMode::Read {
        (s, DirStats::default())
    } else {
        (DirStats::default(), s)
    }
}

/// The aggregate of every rank's part of one phase.
pub fn phase_result(
    spec: &MdSpec,
    tree: &Tree,
    parts: &[RankPhase],
    started_at: String,
) -> PhaseResult {
    let params = params(spec, tree, parts);
    let op = parts.first().map_or(Op::Create, |p| p.phase.op);
    // The window every rank agreed on (barrier to barrier); the longest
    // any rank saw, so the rate is never overstated.
    let window = parts.iter().map(|p| p.window_ns).max().unwrap_or(0);
    let mut all = DirCounter::default();
    let mut errors = std::collections::BTreeMap::new();
    let (mut user, mut sys) = (0u64, 0u64);
    let mut jobs = Vec::new();
    let mut warnings = Vec::new();
    for p in parts {
        all.merge(&p.counter);
        user += p.user_ns;
        sys += p.sys_ns;
        for (k, n) in &p.errors {
            *errors.entry(k.clone()).or_insert(0) += n;
        }
        let (read, write) = split(op, p.counter.to_stats(p.elapsed_ns));
        jobs.push(JobResult {
            job: p.rank,
            elapsed_ns: p.elapsed_ns,
            read,
            write,
            errors: p.errors.clone(),
            mean_depth: None,
        });
        if let Some(e) = &p.error {
            warnings.push(format!("rank {}: {e}", p.rank));
        }
    }
    jobs.sort_by_key(|j| j.job);
    let total = all.to_stats(window);
    let (read, write) = split(op, total);
    let items = total.ops;
    let planned: u64 = parts.iter().map(|p| p.planned).sum();
    if parts.iter().any(|p| p.stonewalled) {
        warnings.push(format!(
            "stonewalled: {items} of {planned} items were made; the later phases work on exactly these"
        ));
    }
    if window < storlab_bench::MIN_TRUSTED_NS || items < storlab_bench::MIN_TRUSTED_IOS {
        warnings.push(format!(
            "too short to trust: {items} items in {:.3} s (give more items: at least 2,000 and 1 s)",
            window as f64 / 1e9
        ));
    }
    let cpu_ns = user + sys;
    PhaseResult {
        device_stat: None,
        params,
        started_at,
        elapsed_ns: window,
        fsync_in_window: false,
        end_fsync_ns: 0,
        latency_span: MD_LATENCY_SPAN.into(),
        read,
        write,
        total,
        jobs,
        cpu: CpuStats {
            user_ns: user,
            sys_ns: sys,
            cpu_ns_per_io: if items > 0 {
                cpu_ns as f64 / items as f64
            } else {
                0.0
            },
            utilization_pct: if window > 0 {
                cpu_ns as f64 / window as f64 * 100.0
            } else {
                0.0
            },
        },
        errors,
        cache: CacheReport {
            mode: "buffered".into(),
            ..CacheReport::default()
        },
        verify: None,
        depth: None,
        interrupted: parts.iter().any(|p| p.interrupted || p.error.is_some()),
        warnings,
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
    }
}
