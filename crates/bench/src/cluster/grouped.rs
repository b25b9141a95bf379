//! Rank 0's arithmetic for a phase of job groups run on disjoint sets of
//! ranks (`--group-ranks`): each group's ranks' parts merged into the
//! group's row (its bytes over its own window: the first submission of any
//! of its ranks to the last completion), every part into the phase's
//! aggregate (all bytes over the union window), latency histograms merged
//! exactly from each rank's buckets, and how long the groups moved data
//! together. The result has the shape of a single-node grouped phase, with
//! every rank's figures in `cluster` as any multi-client phase.

#[cfg(test)]
use super::merge::UPPER_BOUND;
use super::merge::{RankPart, RunFacts, merge};
use crate::groups::{MIN_OVERLAP, first_jobs, overlap, scaled_for_ranks};
#[cfg(test)]
use crate::latency_stats;
use crate::run::grouped::{merged_cache, overlap_warning};
use storlab_types::{CacheReport, GroupResult, PhaseGroups, PhaseParams, PhaseResult};

/// Merge the parts of grouped phase `phase` (as each rank planned it, with
/// its groups' ranks): `None` without parts.
pub fn merge_grouped(
    parts: Vec<RankPart>,
    facts: &RunFacts,
    phase: &PhaseParams,
) -> Option<PhaseResult> {
    let global = scaled_for_ranks(phase);
    let firsts = first_jobs(&global);
    let mut members = Vec::with_capacity(phase.groups.len());
    let mut windows = Vec::with_capacity(phase.groups.len());
    let mut caches: Vec<CacheReport> = Vec::new();
    for (g, gp) in global.groups.iter().enumerate() {
        let mine: Vec<RankPart> = parts
            .iter()
            .filter(|p| p.group == Some(g as u32))
            .cloned()
            .collect();
        let start = mine.iter().filter_map(|p| p.window.map(|w| w.0)).min();
        let end = mine.iter().filter_map(|p| p.window.map(|w| w.1)).max();
        let Some(m) = merge(mine.clone(), facts) else {
            continue;
        };
        windows.push(start.zip(end));
        caches.push(m.cache.clone());
        members.push(GroupResult {
            name: gp.name.clone(),
            first_job: firsts.get(g).copied().unwrap_or(0),
            params: gp.clone(),
            start_ns: start.unwrap_or(0),
            end_ns: end.unwrap_or(0),
            elapsed_ns: m.elapsed_ns,
            read: m.read,
            write: m.write,
            total: m.total,
            cpu: m.cpu,
            depth: m.depth,
            cache: m.cache,
            warnings: m
                .warnings
                .into_iter()
                .filter(|w| !w.starts_with("too short to trust"))
                .collect(),
            percentiles: m.percentiles,
            // Each rank runs its group as a phase: its checks are in the
            // phase's `verify`.
            verify: None,
        });
    }
    let mut all = merge(parts.clone(), facts)?;
    all.params = PhaseParams {
        name: phase.name.clone(),
        ..global
    };
    all.jobs.sort_by_key(|j| j.job);
    all.cache = merged_cache(&caches);
    let (fraction, all_moving_ns) = match windows.iter().copied().collect::<Option<Vec<_>>>() {
        Some(w) => overlap(&w),
        None => (0.0, 0),
    };
    if !all.interrupted && members.len() > 1 && fraction < MIN_OVERLAP {
        all.warnings.push(overlap_warning(
            &members,
            fraction,
            all_moving_ns,
            all.elapsed_ns,
        ));
    }
    all.groups = Some(PhaseGroups {
        overlap: fraction,
        all_moving_ns,
        groups: members,
        reporting: Vec::new(),
    });
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_types::{DirStats, JobResult, RwMode};

    fn phase() -> PhaseParams {
        let g = |name: &str, rw: RwMode, ranks: Vec<u32>| PhaseParams {
            name: name.into(),
            rw,
            numjobs: 1,
            ranks,
            ..Default::default()
        };
        PhaseParams {
            name: "mix".into(),
            numjobs: 2,
            groups: vec![
                g("r", RwMode::Read, vec![0, 1]),
                g("w", RwMode::Write, vec![2, 3]),
            ],
            ..Default::default()
        }
    }

    /// Rank `rank` of group `g`: `bytes` over `window`, latencies `lats`.
    fn part(rank: u32, g: u32, window: (u64, u64), bytes: u64, lats: &[u64]) -> RankPart {
        let mut h = crate::new_histogram();
        for &l in lats {
            h.record(l).unwrap();
        }
        let d = DirStats {
            bytes,
            ops: lats.len() as u64,
            lat_ns: latency_stats(&h),
            ..Default::default()
        };
        let (read, write) = if g == 0 {
            (d, DirStats::default())
        } else {
            (DirStats::default(), d)
        };
        let buckets: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        let params = phase().groups[g as usize].clone();
        RankPart {
            rank,
            node: "n".into(),
            first_job: [0, 1, 2, 3][rank as usize],
            window: Some(window),
            bytes_at_first_done: 0,
            error: None,
            files: vec![],
            result: PhaseResult {
                device_stat: None,
                params,
                started_at: String::new(),
                elapsed_ns: window.1 - window.0,
                fsync_in_window: false,
                end_fsync_ns: 0,
                latency_span: String::new(),
                read,
                write,
                total: d,
                jobs: vec![JobResult::default()],
                cpu: Default::default(),
                errors: Default::default(),
                cache: Default::default(),
                verify: None,
                depth: None,
                interrupted: false,
                warnings: vec![],
                cluster: None,
                series: None,
                groups: None,
                percentiles: None,
            },
            group: Some(g),
            hists: Some(if g == 0 {
                (buckets, vec![])
            } else {
                (vec![], buckets)
            }),
        }
    }

    #[test]
    fn each_group_is_its_ranks_and_the_phase_is_every_rank() {
        let parts = vec![
            part(3, 1, (100, 1_100), 4_000, &[900; 10]),
            part(0, 0, (0, 1_000), 1_000, &[100; 90]),
            part(1, 0, (0, 2_000), 3_000, &[1_000; 10]),
            part(2, 1, (0, 1_000), 2_000, &[500; 10]),
        ];
        let m = merge_grouped(parts, &RunFacts::default(), &phase()).unwrap();
        let g = m.groups.as_ref().unwrap();
        assert_eq!(g.groups.len(), 2);
        let (r, w) = (&g.groups[0], &g.groups[1]);
        assert_eq!((r.read.bytes, r.write.bytes), (4_000, 0));
        assert_eq!((w.read.bytes, w.write.bytes), (0, 6_000));
        // Each group over its own window; the phase over the union.
        assert_eq!((r.start_ns, r.end_ns, r.elapsed_ns), (0, 2_000, 2_000));
        assert_eq!((w.start_ns, w.end_ns, w.elapsed_ns), (0, 1_100, 1_100));
        assert_eq!(m.elapsed_ns, 2_000);
        assert_eq!(m.total.bytes, r.total.bytes + w.total.bytes);
        assert!((m.total.bw_bytes_per_s - 10_000.0 * 1e9 / 2_000.0).abs() < 1e-6);
        assert!((w.total.bw_bytes_per_s - 6_000.0 * 1e9 / 1_100.0).abs() < 1e-6);
        // The groups' windows overlap for 1,100 of 2,000 ns: a warning.
        assert!((g.overlap - 0.55).abs() < 1e-9, "{}", g.overlap);
        assert!(
            m.warnings.iter().any(|w| w.contains("55 %")),
            "{:?}",
            m.warnings
        );
        // The phase is every group's jobs in job order, named as planned.
        assert_eq!(m.params.name, "mix");
        assert_eq!(m.params.numjobs, 4);
        assert_eq!(m.params.groups[0].numjobs, 2);
        assert_eq!(w.first_job, 2);
        assert_eq!(m.cluster.as_ref().unwrap().per_rank.len(), 4);
        // Readers' percentiles from the merged histogram: 90 of 100 reads
        // took 100 ns, so p50 is 100 ns (the highest rank's p50 is 1 µs).
        let lat = r.read.lat_ns.unwrap();
        assert_eq!(lat.p50, 100, "{lat:?}");
        assert!(lat.p99 >= 999, "{lat:?}");
        let all = m.total.lat_ns.unwrap();
        assert_eq!(all.p50, 100, "{all:?}");
        assert_eq!(all.max, 1_000);
        assert!(!m.warnings.iter().any(|w| w.starts_with(UPPER_BOUND)));
    }
}
