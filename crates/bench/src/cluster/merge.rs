//! Rank 0's arithmetic for a multi-client phase: every rank's
//! [`RankPart`] in, one aggregate [`PhaseResult`] with its
//! [`ClusterPhase`] out. Pure (no MPI), so it is tested like any function.
//!
//! Rates are bytes over windows: the aggregate's over the global window
//! (earliest first submission to latest last completion, from each rank's
//! offsets relative to the barrier it left), a node's over its ranks'
//! window, a rank's over its own. Never a sum of rates.
// The MPI build of the command line calls it between its collective
// steps; pure, so tested in every build.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storlab_types::{
    ClusterPhase, CpuStats, DepthReport, DirStats, DoneRate, FileLayout, JobResult, LatencyStats,
    NodeResult, PhaseParams, PhaseResult, RankResult, Spread, VerifyResult,
};

/// What one client rank sends rank 0 after a phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankPart {
    pub rank: u32,
    pub node: String,
    pub first_job: u32,
    /// First submission and last completion, ns after the common barrier.
    pub window: Option<(u64, u64)>,
    pub bytes_at_first_done: u64,
    /// Its own hard error (not "stopped because another rank failed").
    pub error: Option<String>,
    pub files: Vec<String>,
    pub result: PhaseResult,
    /// In a phase of groups given to ranks (`--group-ranks`): the group
    /// this rank ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Its latency histograms (read, write) as `(value, count)` buckets,
    /// so rank 0 merges them exactly ([`crate::histogram_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hists: Option<RankHists>,
}

/// A rank's latency histograms as buckets: (read, write).
pub type RankHists = (Vec<(u64, u64)>, Vec<(u64, u64)>);

/// Facts of the run every part shares.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    pub ranks: u32,
    pub clients_by: String,
    pub reorder_shift: Option<u32>,
    pub stonewall_ns: Option<u64>,
    pub wear_out: bool,
    pub clock_error_bound_ns: u64,
    /// When the first rank finished, ns after the barrier.
    pub first_done_ns: u64,
}

fn rate(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e9 / ns as f64
    }
}

fn spread(v: &[f64]) -> Spread {
    if v.is_empty() {
        return Spread::default();
    }
    Spread {
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        mean: v.iter().sum::<f64>() / v.len() as f64,
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// Latency over several ranks: min, max, mean and standard deviation are
/// exact (pooled); percentiles cannot be merged from summaries, so each is
/// the highest of the ranks' (an upper bound, said in a warning).
pub fn merge_latency(parts: &[(u64, LatencyStats)]) -> Option<LatencyStats> {
    let n: u64 = parts.iter().map(|p| p.0).sum();
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let mean = parts.iter().map(|(k, l)| *k as f64 * l.mean).sum::<f64>() / nf;
    let var = parts
        .iter()
        .map(|(k, l)| *k as f64 * (l.stddev * l.stddev + (l.mean - mean).powi(2)))
        .sum::<f64>()
        / nf;
    let with = parts.iter().filter(|p| p.0 > 0).map(|p| p.1);
    let hi = |f: fn(&LatencyStats) -> u64| with.clone().map(|l| f(&l)).max().unwrap_or(0);
    Some(LatencyStats {
        min: with.clone().map(|l| l.min).min().unwrap_or(0),
        mean,
        stddev: var.sqrt(),
        max: hi(|l| l.max),
        p50: hi(|l| l.p50),
        p90: hi(|l| l.p90),
        p99: hi(|l| l.p99),
        p99_9: hi(|l| l.p99_9),
        p99_99: hi(|l| l.p99_99),
    })
}

fn merge_dir(ds: &[&DirStats], window_ns: u64) -> DirStats {
    let bytes = ds.iter().map(|d| d.bytes).sum();
    let ops = ds.iter().map(|d| d.ops).sum();
    let lats: Vec<(u64, LatencyStats)> = ds
        .iter()
        .filter_map(|d| d.lat_ns.map(|l| (d.ops, l)))
        .collect();
    DirStats {
        bytes,
        ops,
        bw_bytes_per_s: rate(bytes, window_ns),
        iops: rate(ops, window_ns),
        lat_ns: merge_latency(&lats),
    }
}

/// IOR's names for the phase's pattern: layout, transfer, block, segments.
pub fn ior_terms(p: &storlab_types::PhaseParams) -> (&'static str, u64, u64, u64) {
    let transfer = p.max_bs();
    match p.layout {
        FileLayout::PerJob => ("n-n", transfer, p.size_bytes, 1),
        FileLayout::SharedRegions => ("n-1-segmented", transfer, p.size_bytes, 1),
        FileLayout::SharedInterleaved { stride_bytes } => (
            "n-1-strided",
            transfer,
            stride_bytes,
            p.size_bytes.div_ceil(stride_bytes.max(1)),
        ),
    }
}

/// What the parts add up to, figure by figure.
#[derive(Default)]
struct Folded {
    jobs: Vec<JobResult>,
    errors: BTreeMap<String, u64>,
    /// The other ranks' warnings, each once with the ranks that gave it.
    others: Vec<(String, Vec<u32>)>,
    verify: Option<VerifyResult>,
    depth: Option<DepthReport>,
    user_ns: u64,
    sys_ns: u64,
    per_rank: Vec<RankResult>,
    /// Per node: ranks, bytes, earliest start and latest end.
    nodes: BTreeMap<String, (u32, u64, u64, u64)>,
}

/// Every per-rank figure added up in one pass, in rank order (`parts`
/// sorted, not empty).
fn fold(parts: &[RankPart]) -> Folded {
    let mut f = Folded::default();
    for part in parts {
        let r = &part.result;
        for j in &r.jobs {
            let mut j = j.clone();
            j.job += part.first_job;
            f.jobs.push(j);
        }
        for (k, v) in &r.errors {
            *f.errors.entry(k.clone()).or_default() += v;
        }
        if part.rank != parts[0].rank {
            for w in &r.warnings {
                match f.others.iter_mut().find(|(t, _)| t == w) {
                    Some((_, ranks)) => ranks.push(part.rank),
                    None => f.others.push((w.clone(), vec![part.rank])),
                }
            }
        }
        if let Some(v) = &r.verify {
            let m = f.verify.get_or_insert_with(VerifyResult::default);
            m.blocks_checked += v.blocks_checked;
            m.mismatches += v.mismatches;
            for x in &v.first_mismatches {
                if m.first_mismatches.len() < 8 {
                    m.first_mismatches.push(x.clone());
                }
            }
        }
        if let Some(d) = &r.depth {
            let m = f.depth.get_or_insert_with(DepthReport::default);
            m.requested += d.requested;
            m.achieved += d.achieved;
            m.stamp_error_ns = m.stamp_error_ns.max(d.stamp_error_ns);
        }
        f.user_ns += r.cpu.user_ns;
        f.sys_ns += r.cpu.sys_ns;
        let (s, e) = part.window.unwrap_or((0, 0));
        f.per_rank.push(RankResult {
            rank: part.rank,
            node: part.node.clone(),
            first_job: part.first_job,
            start_ns: s,
            end_ns: e,
            total: r.total,
            bytes_at_first_done: part.bytes_at_first_done,
            files: part.files.clone(),
            error: part.error.clone(),
        });
        let n = f
            .nodes
            .entry(part.node.clone())
            .or_insert((0, 0, u64::MAX, 0));
        n.0 += 1;
        n.1 += r.total.bytes;
        if part.window.is_some() {
            n.2 = n.2.min(s);
            n.3 = n.3.max(e);
        }
    }
    f
}

/// The multi-client figures of the merged phase: windows, first and last
/// done, per rank and per node, IOR's terms.
fn cluster_phase(
    clients: u32,
    facts: &RunFacts,
    params: &PhaseParams,
    (start, window_ns): (Option<u64>, u64),
    total_bytes: u64,
    per_rank: Vec<RankResult>,
    nodes: BTreeMap<String, (u32, u64, u64, u64)>,
) -> ClusterPhase {
    let rank_rates: Vec<f64> = per_rank
        .iter()
        .map(|r| rate(r.total.bytes, r.end_ns.saturating_sub(r.start_ns)))
        .collect();
    let slowest_rank = per_rank
        .iter()
        .zip(&rank_rates)
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(r, _)| r.rank);
    let per_node: Vec<NodeResult> = nodes
        .into_iter()
        .map(|(node, (ranks, bytes, s, e))| NodeResult {
            node,
            ranks,
            bytes,
            bw_bytes_per_s: if s == u64::MAX {
                0.0
            } else {
                rate(bytes, e.saturating_sub(s))
            },
        })
        .collect();
    let node_rates: Vec<f64> = per_node.iter().map(|n| n.bw_bytes_per_s).collect();
    let first_elapsed = start.map_or(0, |s| facts.first_done_ns.saturating_sub(s));
    let first_bytes: u64 = per_rank.iter().map(|r| r.bytes_at_first_done).sum();
    let (layout, transfer, block, segments) = ior_terms(params);
    ClusterPhase {
        clients,
        ranks: facts.ranks,
        nodes: per_node.len() as u32,
        clients_by: facts.clients_by.clone(),
        layout: layout.into(),
        transfer_bytes: transfer,
        block_bytes: block,
        segments,
        reorder_shift: facts
            .reorder_shift
            .filter(|_| params.rw.reads() && !params.rw.writes()),
        stonewall_ns: facts.stonewall_ns,
        stonewall_wear_out: facts.wear_out,
        window_ns,
        clock_error_bound_ns: facts.clock_error_bound_ns,
        first_done: DoneRate {
            elapsed_ns: first_elapsed,
            bytes: first_bytes,
            bw_bytes_per_s: rate(first_bytes, first_elapsed),
        },
        last_done: DoneRate {
            elapsed_ns: window_ns,
            bytes: total_bytes,
            bw_bytes_per_s: rate(total_bytes, window_ns),
        },
        per_rank,
        per_node,
        rank_bw_bytes_per_s: spread(&rank_rates),
        node_bw_bytes_per_s: spread(&node_rates),
        slowest_rank,
    }
}

/// Combine the client ranks' parts (rank order) into one phase.
pub fn merge(mut parts: Vec<RankPart>, facts: &RunFacts) -> Option<PhaseResult> {
    parts.sort_by_key(|p| p.rank);
    let base = parts.first()?.result.clone();
    let start = parts.iter().filter_map(|p| p.window.map(|w| w.0)).min();
    let end = parts.iter().filter_map(|p| p.window.map(|w| w.1)).max();
    let window_ns = match (start, end) {
        (Some(s), Some(e)) => e.saturating_sub(s),
        _ => 0,
    };
    let results: Vec<&PhaseResult> = parts.iter().map(|p| &p.result).collect();
    let read = merge_dir(
        &results.iter().map(|r| &r.read).collect::<Vec<_>>(),
        window_ns,
    );
    let write = merge_dir(
        &results.iter().map(|r| &r.write).collect::<Vec<_>>(),
        window_ns,
    );
    let total = merge_dir(
        &results.iter().map(|r| &r.total).collect::<Vec<_>>(),
        window_ns,
    );
    let f = fold(&parts);
    let (jobs, errors, verify, mut depth) = (f.jobs, f.errors, f.verify, f.depth);
    let (user_ns, sys_ns) = (f.user_ns, f.sys_ns);
    let mut warnings = rank_warnings(parts[0].rank, &base.warnings, f.others);
    if let Some(d) = &mut depth {
        d.littles_law_depth = total
            .lat_ns
            .map(|l| total.iops * l.mean / 1e9)
            .unwrap_or(0.0);
    }
    if parts.len() > 1 && total.lat_ns.is_some() {
        warnings.push(
            "latency percentiles of the aggregate are the highest of the ranks' (an upper bound; \
             min, mean, stddev and max are exact); each rank's own are in cluster.per_rank"
                .into(),
        );
    }
    let cluster = cluster_phase(
        parts.len() as u32,
        facts,
        &base.params,
        (start, window_ns),
        total.bytes,
        f.per_rank,
        f.nodes,
    );
    let cpu_ns = user_ns + sys_ns;
    let interrupted = results.iter().any(|r| r.interrupted);
    let mut params = base.params.clone();
    // The aggregate is one phase of every client's jobs.
    params.numjobs = base.params.numjobs * parts.len() as u32;
    Some(PhaseResult {
        params,
        elapsed_ns: window_ns,
        end_fsync_ns: results.iter().map(|r| r.end_fsync_ns).max().unwrap_or(0),
        read,
        write,
        total,
        jobs,
        cpu: CpuStats {
            user_ns,
            sys_ns,
            cpu_ns_per_io: if total.ops > 0 {
                cpu_ns as f64 / total.ops as f64
            } else {
                0.0
            },
            utilization_pct: if window_ns > 0 {
                cpu_ns as f64 * 100.0 / window_ns as f64
            } else {
                0.0
            },
        },
        errors,
        verify,
        depth,
        interrupted,
        warnings,
        cluster: Some(cluster),
        ..base
    })
    .map(|mut m| {
        exact_percentiles(&mut m, &parts);
        m
    })
}

/// The start of the warning an aggregate carries when its percentiles are
/// only the highest of the ranks'.
pub(crate) const UPPER_BOUND: &str =
    "latency percentiles of the aggregate are the highest of the ranks'";

/// When every rank sent its latency histograms (`RankPart::hists`), the
/// aggregate's percentiles are those of the merged histogram — exact, not
/// the highest of the ranks' — and the upper-bound warning goes. Min, mean,
/// stddev and max stay the pooled ones, which are exact already.
fn exact_percentiles(m: &mut PhaseResult, parts: &[RankPart]) {
    let Some(h) = parts
        .iter()
        .map(|p| p.hists.as_ref())
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let read = crate::histogram_of(h.iter().map(|x| x.0.as_slice()));
    let write = crate::histogram_of(h.iter().map(|x| x.1.as_slice()));
    let total = crate::histogram_of(h.iter().flat_map(|x| [x.0.as_slice(), x.1.as_slice()]));
    for (d, h) in [
        (&mut m.read, &read),
        (&mut m.write, &write),
        (&mut m.total, &total),
    ] {
        if let (Some(l), Some(e)) = (d.lat_ns.as_mut(), crate::latency_stats(h)) {
            (l.p50, l.p90, l.p99, l.p99_9, l.p99_99) = (e.p50, e.p90, e.p99, e.p99_9, e.p99_99);
        }
    }
    m.warnings.retain(|w| !w.starts_with(UPPER_BOUND));
}

/// Bytes moved by `t` from progress samples `(t_ns, bytes)` (increasing),
/// linearly interpolated; all of them once `t` is past the last sample.
pub fn bytes_at(samples: &[(u64, u64)], t: u64) -> u64 {
    let mut prev = (0u64, 0u64);
    for &(ts, b) in samples {
        if ts >= t {
            let span = ts.saturating_sub(prev.0);
            if span == 0 {
                return b;
            }
            let frac = (t - prev.0) as f64 / span as f64;
            return prev.1 + ((b.saturating_sub(prev.1)) as f64 * frac) as u64;
        }
        prev = (ts, b);
    }
    prev.1
}

/// Every rank's warning once: "too short to trust: …: ranks 1–3"; one
/// the first rank (`first`, whose figures are `base`) gave too names it
/// with the others ("ranks 0–3"); one only it gave stays as it is.
fn rank_warnings(first: u32, base: &[String], others: Vec<(String, Vec<u32>)>) -> Vec<String> {
    let mut out: Vec<String> = base
        .iter()
        .map(|w| match others.iter().find(|(t, _)| t == w) {
            Some((_, ranks)) => {
                let mut all = ranks.clone();
                all.push(first);
                format!("{w}: {}", rank_list(&all))
            }
            None => w.clone(),
        })
        .collect();
    out.extend(
        others
            .into_iter()
            .filter(|(w, _)| !base.contains(w))
            .map(|(w, ranks)| format!("{w}: {}", rank_list(&ranks))),
    );
    out
}

/// `rank 2`, `ranks 1–3`, `ranks 1, 3, 5–7`.
pub fn rank_list(ranks: &[u32]) -> String {
    let mut r = ranks.to_vec();
    r.sort_unstable();
    r.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for x in r.iter().copied() {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == x => *end = x,
            _ => runs.push((x, x)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a}, {b}"),
            _ => format!("{a}–{b}"),
        })
        .collect();
    let word = if r.len() == 1 { "rank" } else { "ranks" };
    format!("{word} {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(mean: f64, stddev: f64, min: u64, max: u64, p99: u64) -> LatencyStats {
        LatencyStats {
            min,
            mean,
            stddev,
            max,
            p50: min,
            p90: p99,
            p99,
            p99_9: max,
            p99_99: max,
        }
    }

    /// Three ranks with one warning give one line naming them; one rank
    /// 0 has too names rank 0 with them; rank 0's alone stays as it is.
    /// One rank's part: `bytes` written over `window` on `node`.
    fn part(rank: u32, node: &str, window: (u64, u64), bytes: u64) -> RankPart {
        let total = DirStats {
            bytes,
            ops: bytes / 4096,
            ..Default::default()
        };
        RankPart {
            rank,
            node: node.into(),
            first_job: rank * 2,
            window: Some(window),
            bytes_at_first_done: bytes / 2,
            error: None,
            files: vec![format!("f{rank}")],
            result: PhaseResult {
                device_stat: None,
                params: PhaseParams {
                    name: "w".into(),
                    numjobs: 2,
                    size_bytes: 1 << 20,
                    ..Default::default()
                },
                started_at: String::new(),
                elapsed_ns: window.1 - window.0,
                fsync_in_window: false,
                end_fsync_ns: 0,
                latency_span: String::new(),
                read: DirStats::default(),
                write: total,
                total,
                jobs: vec![
                    JobResult::default(),
                    JobResult {
                        job: 1,
                        ..Default::default()
                    },
                ],
                cpu: CpuStats {
                    user_ns: 10,
                    sys_ns: 5,
                    ..Default::default()
                },
                errors: BTreeMap::new(),
                cache: Default::default(),
                verify: None,
                depth: None,
                interrupted: false,
                warnings: vec![format!("only on rank {rank}")],
                cluster: None,
                percentiles: None,
                series: None,
                groups: None,
            },
            group: None,
            hists: None,
        }
    }

    #[test]
    fn ranks_merge_over_the_global_window_per_node_and_per_rank() {
        let facts = RunFacts {
            ranks: 3,
            clients_by: "rank".into(),
            first_done_ns: 1_000,
            ..Default::default()
        };
        // Given out of order: merged in rank order.
        let parts = vec![
            part(2, "b", (500, 2_500), 8_000),
            part(0, "a", (0, 2_000), 4_000),
            part(1, "a", (100, 1_000), 4_000),
        ];
        let m = merge(parts, &facts).unwrap();
        // The global window: earliest start to latest end, never a sum of rates.
        assert_eq!(m.elapsed_ns, 2_500);
        assert_eq!(m.total.bytes, 16_000);
        assert!((m.total.bw_bytes_per_s - 16_000.0 * 1e9 / 2_500.0).abs() < 1e-6);
        assert_eq!(m.params.numjobs, 6);
        let jobs: Vec<u32> = m.jobs.iter().map(|j| j.job).collect();
        assert_eq!(jobs, [0, 1, 2, 3, 4, 5]);
        assert_eq!((m.cpu.user_ns, m.cpu.sys_ns), (30, 15));
        let c = m.cluster.unwrap();
        assert_eq!((c.clients, c.ranks, c.nodes), (3, 3, 2));
        let nodes: Vec<(&str, u32, u64)> = c
            .per_node
            .iter()
            .map(|n| (n.node.as_str(), n.ranks, n.bytes))
            .collect();
        assert_eq!(nodes, [("a", 2, 8_000), ("b", 1, 8_000)]);
        // Node a moved its 8000 bytes over 0..2000, node b over 500..2500.
        assert!((c.per_node[0].bw_bytes_per_s - 8_000.0 * 1e9 / 2_000.0).abs() < 1e-6);
        assert_eq!(c.first_done.elapsed_ns, 1_000);
        assert_eq!(c.first_done.bytes, 8_000);
        assert_eq!(c.last_done.bytes, 16_000);
        // Rank 1: 4000 B in 900 ns; rank 0: 4000 in 2000; rank 2: 8000 in 2000.
        assert_eq!(c.slowest_rank, Some(0));
        assert_eq!(
            c.per_rank.iter().map(|r| r.rank).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        // Rank 0's warnings as they are, the others' named with their ranks.
        assert_eq!(m.warnings[0], "only on rank 0");
        assert!(
            m.warnings.iter().any(|w| w == "only on rank 1: rank 1"),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn other_ranks_warnings_are_printed_once_with_their_ranks() {
        let short = "too short to trust: the phase lasted under 1 s".to_string();
        let base = vec!["shared".to_string(), "rank 0's own".to_string()];
        let w = rank_warnings(
            0,
            &base,
            vec![
                (short.clone(), vec![3, 1, 2]),
                ("shared".into(), vec![3, 2, 1]),
                ("odd".into(), vec![5, 1, 7, 6]),
            ],
        );
        assert_eq!(
            w,
            [
                "shared: ranks 0–3".to_string(),
                "rank 0's own".to_string(),
                format!("{short}: ranks 1–3"),
                "odd: ranks 1, 5–7".to_string()
            ]
        );
        assert_eq!(rank_list(&[4]), "rank 4");
        assert_eq!(rank_list(&[4, 5]), "ranks 4, 5");
    }

    /// Rank 0's 1,000 writes take 100 µs, rank 1's take 1 ms. The highest
    /// of the ranks' medians is 1 ms; the median of all 2,000 is 100 µs.
    /// With the ranks' histograms the aggregate's percentiles are the
    /// merged ones and the upper-bound warning goes; without, both stay.
    #[test]
    fn percentiles_merge_exactly_when_every_rank_sends_its_histograms() {
        let facts = RunFacts {
            ranks: 2,
            ..Default::default()
        };
        let ranked = |rank: u32, ns: u64, hists: bool| {
            let mut p = part(rank, "a", (0, 1_000_000_000), 1000 * 4096);
            let l = lat(ns as f64, 0.0, ns, ns, ns);
            p.result.write.lat_ns = Some(l);
            p.result.total.lat_ns = Some(l);
            p.hists = hists.then(|| (vec![], vec![(ns, 1000)]));
            p
        };
        let m = merge(
            vec![ranked(0, 100_000, true), ranked(1, 1_000_000, true)],
            &facts,
        )
        .unwrap();
        let w = m.write.lat_ns.unwrap();
        assert!((99_000..=101_000).contains(&w.p50), "{w:?}");
        assert!((990_000..=1_010_000).contains(&w.p99), "{w:?}");
        assert_eq!(m.total.lat_ns.unwrap().p50, w.p50);
        assert!((w.mean - 550_000.0).abs() < 1.0, "pooled mean kept: {w:?}");
        assert!(!m.warnings.iter().any(|x| x.starts_with(UPPER_BOUND)));
        // One rank without its histograms: the upper bound, said so.
        let m = merge(
            vec![ranked(0, 100_000, true), ranked(1, 1_000_000, false)],
            &facts,
        )
        .unwrap();
        assert_eq!(m.write.lat_ns.unwrap().p50, 1_000_000);
        assert!(m.warnings.iter().any(|x| x.starts_with(UPPER_BOUND)));
    }

    #[test]
    fn pooled_latency_is_exact_for_mean_and_stddev() {
        // Two groups {1,3} and {5,7}: mean 4, population stddev sqrt(5).
        let m = merge_latency(&[(2, lat(2.0, 1.0, 1, 3, 3)), (2, lat(6.0, 1.0, 5, 7, 7))]).unwrap();
        assert!((m.mean - 4.0).abs() < 1e-9);
        assert!((m.stddev - 5f64.sqrt()).abs() < 1e-9);
        assert_eq!((m.min, m.max, m.p99), (1, 7, 7));
        assert!(merge_latency(&[]).is_none());
    }

    #[test]
    fn interpolated_bytes() {
        let s = [(10, 100), (20, 300)];
        assert_eq!(bytes_at(&s, 5), 50);
        assert_eq!(bytes_at(&s, 15), 200);
        assert_eq!(bytes_at(&s, 25), 300);
        assert_eq!(bytes_at(&[], 25), 0);
    }

    proptest::proptest! {
        #[test]
        fn bytes_at_is_monotone_and_bounded(
            steps in proptest::collection::vec((1u64..1000, 0u64..1000), 0..20),
            t1 in 0u64..30_000, t2 in 0u64..30_000,
        ) {
            let mut s = Vec::new();
            let (mut t, mut b) = (0, 0);
            for (dt, db) in steps { t += dt; b += db; s.push((t, b)); }
            let (a, c) = (t1.min(t2), t1.max(t2));
            proptest::prop_assert!(bytes_at(&s, a) <= bytes_at(&s, c));
            proptest::prop_assert!(bytes_at(&s, c) <= b);
        }
    }
}
