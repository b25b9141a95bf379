//! Design search: enumerate layouts (level, span, groups, aggregation,
//! controllers, chunk) for a drive model and a range of drive counts, keep
//! the ones that meet the constraints, and return the Pareto-optimal ones
//! (no other design is at least as good on every objective and better on
//! one) with their trade-offs spelled out.

use crate::PlanError;
use crate::design::{Cost, cost};
use crate::hardware::Hardware;
use crate::layout::{Aggregation, GroupLevel, Layout};
use crate::perf::{PartKind, Quick, Workload, part_name, quick};
use crate::reliability::{self, ReliabilityInputs};
use serde::Serialize;

/// Which layouts to consider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchSpace {
    /// Total drives (without hot spares), inclusive.
    pub min_drives: u32,
    pub max_drives: u32,
    /// Group RAID levels to try.
    pub levels: Vec<GroupLevel>,
    /// Drives per group, inclusive; `None` = the level's usual range
    /// (R1: 2-3, R5: 3-16, R6: 4-24, R0: 1-16).
    pub spans: Option<(u32, u32)>,
    /// Chunk sizes to try.
    pub chunks: Vec<u64>,
    /// Try 1..=max_controllers controllers (LVM across them).
    pub max_controllers: u32,
    /// Also try LVM striping where the controller could stripe (R50/R60).
    pub try_lvm: bool,
    /// Hot spares added to every design (counted for cost and the
    /// controller's drive limit, not for capacity).
    pub hot_spares: u32,
    /// Only layouts of this shape, e.g. `R60/12/x` or `lvm(x*R6/10,
    /// stripe=2M)`: its level, span, aggregation, chunk and stripe are
    /// kept, the number of groups (when `x`) comes from the drive range.
    pub template: Option<Layout>,
}

/// What a design must achieve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Constraints {
    pub min_usable_bytes: Option<u64>,
    pub min_mttdl_hours: Option<f64>,
    pub max_loss_probability: Option<f64>,
    pub min_throughput_bytes_per_s: Option<f64>,
    pub min_iops: Option<f64>,
    pub max_cost: Option<f64>,
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchSpec {
    pub hardware: Hardware,
    pub space: SearchSpace,
    pub constraints: Constraints,
    /// Throughput objective (e.g. sequential write 1 MiB).
    pub throughput_workload: Workload,
    /// IOPS objective (e.g. random write 4 KiB).
    pub iops_workload: Workload,
    pub reliability: ReliabilityInputs,
}

/// One evaluated design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub layout: String,
    pub controllers: u32,
    pub drives: u32,
    pub groups: u32,
    pub usable_bytes: u64,
    pub volume_mttdl_hours: f64,
    pub loss_probability: f64,
    pub throughput_bytes_per_s: f64,
    pub throughput_binding: String,
    pub iops: f64,
    pub iops_binding: String,
    pub cost: Option<Cost>,
    /// Best at, and what it gives up.
    pub tradeoff: String,
    /// Designs of another shape whose objectives tie with this one's
    /// (within [`TRIVIAL`] on every objective): the same trade-off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ties: Vec<String>,
}

/// Differences that do not count, per objective (usable capacity, MTTDL,
/// throughput, IOPS, cost), as a fraction of the larger value: a design
/// ahead of another by no more than this on every objective where it is
/// ahead, and behind somewhere by more, is left out as differing only
/// trivially; two designs within it on every objective tie. The model's
/// MTTDL rests on rated MTBFs and error rates, so 10 % of it is noise;
/// capacity and cost are exact, 1 %; throughput and IOPS, 2 %.
pub const TRIVIAL: [f64; 5] = [0.01, 0.10, 0.02, 0.02, 0.01];

/// How near two objective values must be to count as the same: model
/// noise only (0.1 %), for the strict front the trivial pruning is
/// measured against.
const NOISE: [f64; 5] = [1e-3; 5];

/// A feasible design before its strings are formatted.
#[derive(Debug, Clone)]
struct Raw {
    layout: Layout,
    controllers: u32,
    usable: u64,
    mttdl: f64,
    p_loss: f64,
    t: Bound,
    i: Bound,
    cost: Option<Cost>,
    obj: [f64; 5],
}

/// The part of a [`Quick`] prediction the search keeps.
#[derive(Debug, Clone, Copy)]
struct Bound {
    bytes_per_s: f64,
    iops: f64,
    binding: PartKind,
}

impl From<Quick> for Bound {
    fn from(q: Quick) -> Self {
        Bound {
            bytes_per_s: q.bytes_per_s,
            iops: q.iops,
            binding: q.binding,
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    pub schema_version: u32,
    pub kind: &'static str,
    pub throughput_workload: String,
    pub iops_workload: String,
    pub evaluated: usize,
    pub feasible: usize,
    /// Designs rejected, by reason.
    pub rejected: std::collections::BTreeMap<String, usize>,
    /// Pareto-optimal designs, most usable capacity first.
    pub pareto: Vec<Candidate>,
    /// Pareto-optimal designs left out because another one is as good
    /// within [`TRIVIAL`] on every objective and clearly better on one.
    pub pruned_trivial: usize,
}

fn default_spans(l: GroupLevel) -> (u32, u32) {
    match l {
        GroupLevel::R0 => (1, 16),
        GroupLevel::R1 => (2, 3),
        GroupLevel::R5 => (3, 16),
        GroupLevel::R6 => (4, 24),
    }
}

/// Objectives, all "more is better".
fn objectives(c: &Candidate) -> [f64; 5] {
    [
        c.usable_bytes as f64,
        c.volume_mttdl_hours,
        c.throughput_bytes_per_s,
        c.iops,
        c.cost.as_ref().map_or(0.0, |k| -k.total),
    ]
}

/// `a` is at least as good as `b` on every objective and better on one,
/// differences within `tol` (a fraction per objective) not counting.
fn dominates(a: &[f64; 5], b: &[f64; 5], tol: &[f64; 5]) -> bool {
    let mut better = false;
    for i in 0..5 {
        let t = tol[i] * a[i].abs().max(b[i].abs());
        if a[i] < b[i] - t {
            return false;
        }
        if a[i] > b[i] + t {
            better = true;
        }
    }
    better
}

fn equal(a: &[f64; 5], b: &[f64; 5], tol: &[f64; 5]) -> bool {
    a.iter()
        .zip(b)
        .zip(tol)
        .all(|((x, y), t)| (x - y).abs() <= t * x.abs().max(y.abs()))
}

/// Run the search.
// long-function: candidate enumeration over levels, spans, chunks and aggregation in one nest.
pub fn search(spec: &SearchSpec) -> Result<SearchResult, PlanError> {
    let s = &spec.space;
    if s.min_drives == 0 || s.min_drives > s.max_drives {
        return Err(PlanError::invalid(
            "drive count",
            format!(
                "{}..{} is empty; give a count (48) or a range (24..96)",
                s.min_drives, s.max_drives
            ),
        ));
    }
    if s.max_drives > 100_000 {
        return Err(PlanError::invalid(
            "drive count",
            "more than 100000 drives; split the system",
        ));
    }
    if s.levels.is_empty() || s.chunks.is_empty() {
        return Err(PlanError::invalid(
            "search",
            "needs at least one level and one chunk size",
        ));
    }
    let drive_cap = spec.hardware.drive.capacity_bytes;
    let mut evaluated = 0usize;
    let mut rejected: std::collections::BTreeMap<String, usize> = Default::default();
    let mut reject = |why: &str, n: usize| *rejected.entry(why.to_string()).or_default() += n;
    let mut feasible: Vec<Raw> = Vec::new();
    let c = &spec.constraints;
    let mut hw = spec.hardware.clone();
    // The default chunk first, so that it is the one kept when another
    // chunk size changes nothing.
    let mut chunks = s.chunks.clone();
    chunks.sort_by_key(|&c| c != crate::layout::DEFAULT_CHUNK);
    let t = s.template;
    let levels = t.map_or_else(|| s.levels.clone(), |t| vec![t.level]);
    if let Some(t) = t {
        chunks = vec![t.chunk_bytes];
        if let Some(g) = t.groups {
            let d = g * t.span;
            if d < s.min_drives || d > s.max_drives {
                return Err(PlanError::invalid(
                    "search",
                    format!(
                        "layout {t} has {d} drives, outside --drives {}..{}; write x for the total (e.g. {})",
                        s.min_drives,
                        s.max_drives,
                        Layout { groups: None, ..t }
                    ),
                ));
            }
        }
    }
    for &level in &levels {
        let (lo, hi) = match t {
            Some(t) => (t.span, t.span),
            None => s.spans.unwrap_or_else(|| default_spans(level)),
        };
        for span in lo.max(level.min_span())..=hi.min(64) {
            let (first, last) = match t.and_then(|t| t.groups) {
                Some(g) => (g, g),
                None => (s.min_drives.div_ceil(span).max(1), s.max_drives / span),
            };
            for groups in first..=last {
                let mut aggs: Vec<(Aggregation, u32)> = Vec::new();
                if groups == 1 {
                    aggs.push((Aggregation::Single, 1));
                } else {
                    // Striping RAID 0 groups on one controller is just a
                    // wider RAID 0; across controllers it is a design.
                    if level != GroupLevel::R0 {
                        aggs.push((Aggregation::Controller, 1));
                    }
                    let from = if s.try_lvm && level != GroupLevel::R0 {
                        1
                    } else {
                        2
                    };
                    for k in from..=s.max_controllers.min(groups) {
                        aggs.push((Aggregation::Lvm, k));
                    }
                }
                if let Some(t) = t {
                    aggs.retain(|&(a, _)| {
                        a == t.aggregation || (groups == 1 && a == Aggregation::Single)
                    });
                }
                // Reliability and capacity do not depend on chunk or aggregation.
                let parity = level.parity(span);
                let usable = u64::from(span - parity) * u64::from(groups) * drive_cap;
                if c.min_usable_bytes.is_some_and(|m| usable < m) {
                    evaluated += aggs.len() * s.chunks.len();
                    reject(
                        "usable capacity under --min-usable",
                        aggs.len() * s.chunks.len(),
                    );
                    continue;
                }
                let rel = reliability::evaluate(span, parity, groups, &spec.reliability)?;
                if c.min_mttdl_hours
                    .is_some_and(|m| rel.volume_mttdl_hours < m)
                    || c.max_loss_probability
                        .is_some_and(|m| rel.volume_loss_probability > m)
                {
                    evaluated += aggs.len() * s.chunks.len();
                    reject(
                        "reliability under --min-mttdl / over --max-loss",
                        aggs.len() * s.chunks.len(),
                    );
                    continue;
                }
                for &(aggregation, k) in &aggs {
                    hw.controllers = k;
                    let drives = span * groups + s.hot_spares;
                    if hw
                        .controller
                        .max_drives
                        .is_some_and(|m| drives.div_ceil(k) > m)
                    {
                        evaluated += s.chunks.len();
                        reject(
                            "over the controller's drive limit (raise --max-controllers)",
                            s.chunks.len(),
                        );
                        continue;
                    }
                    let price = cost(&hw, drives, usable);
                    let neg_cost = price.as_ref().map_or(0.0, |k| -k.total);
                    if let (Some(max), Some(p)) = (c.max_cost, &price) {
                        if p.total > max {
                            evaluated += s.chunks.len();
                            reject("cost over --max-cost", s.chunks.len());
                            continue;
                        }
                    }
                    for &chunk in &chunks {
                        evaluated += 1;
                        let layout = Layout {
                            chunk_bytes: chunk,
                            stripe_bytes: t.and_then(|t| t.stripe_bytes),
                            ..Layout::new(level, span, groups, aggregation)
                        };
                        let geo = layout.geometry_unnamed(drive_cap)?;
                        let t = quick(&layout, &geo, &hw, &spec.throughput_workload)?;
                        let i = quick(&layout, &geo, &hw, &spec.iops_workload)?;
                        if c.min_throughput_bytes_per_s
                            .is_some_and(|m| t.bytes_per_s < m)
                            || c.min_iops.is_some_and(|m| i.iops < m)
                        {
                            reject(
                                "throughput under --min-throughput / IOPS under --min-iops",
                                1,
                            );
                            continue;
                        }
                        let obj = [
                            usable as f64,
                            rel.volume_mttdl_hours,
                            t.bytes_per_s,
                            i.iops,
                            neg_cost,
                        ];
                        feasible.push(Raw {
                            layout,
                            controllers: k,
                            usable,
                            mttdl: rel.volume_mttdl_hours,
                            p_loss: rel.volume_loss_probability,
                            t: t.into(),
                            i: i.into(),
                            cost: price.clone(),
                            obj,
                        });
                    }
                }
            }
        }
    }
    let n_feasible = feasible.len();
    let name = |k: PartKind, r: &Raw, geo: &crate::Geometry| {
        let mut h = spec.hardware.clone();
        h.controllers = r.controllers;
        part_name(k, geo, &h)
    };
    let strict = pareto(&feasible, &NOISE).len();
    let kept = pareto(&feasible, &TRIVIAL);
    let pruned_trivial = strict.saturating_sub(kept.len());
    let mut front: Vec<Candidate> = kept
        .into_iter()
        .map(|(r, ties)| {
            let geo = r.layout.geometry(drive_cap)?;
            let ties = ties
                .iter()
                .map(|t| {
                    let g = t.layout.geometry(drive_cap)?;
                    Ok(if t.controllers > 1 {
                        format!("{} on {} controllers", g.notation, t.controllers)
                    } else {
                        g.notation
                    })
                })
                .collect::<Result<Vec<_>, PlanError>>()?;
            Ok(Candidate {
                layout: geo.notation.clone(),
                controllers: r.controllers,
                drives: geo.drives,
                groups: geo.groups,
                usable_bytes: r.usable,
                volume_mttdl_hours: r.mttdl,
                loss_probability: r.p_loss,
                throughput_bytes_per_s: r.t.bytes_per_s,
                throughput_binding: name(r.t.binding, r, &geo),
                iops: r.i.iops,
                iops_binding: name(r.i.binding, r, &geo),
                cost: r.cost.clone(),
                tradeoff: String::new(),
                ties,
            })
        })
        .collect::<Result<_, PlanError>>()?;
    front.sort_by(|a, b| {
        b.usable_bytes
            .cmp(&a.usable_bytes)
            .then(b.volume_mttdl_hours.total_cmp(&a.volume_mttdl_hours))
    });
    explain(&mut front);
    Ok(SearchResult {
        schema_version: crate::design::PLAN_SCHEMA_VERSION,
        kind: "plan.search",
        throughput_workload: spec.throughput_workload.label(),
        iops_workload: spec.iops_workload.label(),
        evaluated,
        feasible: n_feasible,
        rejected,
        pareto: front,
        pruned_trivial,
    })
}

/// The non-dominated designs, differences within `tol` not counting, each
/// with the designs of another shape that tie with it. Sorting by the
/// objectives (descending, lexicographic) first means a design is mostly
/// dominated by one already kept; the objectives of the front sit in one
/// contiguous vector.
fn pareto<'a>(all: &'a [Raw], tol: &[f64; 5]) -> Vec<(&'a Raw, Vec<&'a Raw>)> {
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| {
        all[b]
            .obj
            .iter()
            .zip(all[a].obj.iter())
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut front: Vec<[f64; 5]> = Vec::new();
    let mut keep: Vec<(usize, Vec<usize>)> = Vec::new();
    // Neighbours in the sorted order are mostly beaten by the same design:
    // try the last one that beat a candidate first.
    let mut last_hit = 0usize;
    for idx in order {
        let o = all[idx].obj;
        let beaten = |f: &[f64; 5]| dominates(f, &o, tol);
        let ties = |f: &[f64; 5]| !dominates(&o, f, tol) && equal(f, &o, tol);
        if front.get(last_hit).is_some_and(beaten) {
            continue;
        }
        if let Some(j) = front.iter().rposition(beaten) {
            last_hit = j;
            continue;
        }
        // The same trade-off as one already kept: a tie, named with it
        // unless only the chunk size differs (that is the same design).
        if let Some(j) = front.iter().rposition(ties) {
            let (k, t) = &mut keep[j];
            if !same_shape(&all[*k], &all[idx])
                && !t.iter().any(|&x| same_shape(&all[x], &all[idx]))
            {
                t.push(idx);
            }
            continue;
        }
        let mut j = 0;
        while j < front.len() {
            if dominates(&o, &front[j], tol) {
                front.swap_remove(j);
                keep.swap_remove(j);
            } else {
                j += 1;
            }
        }
        front.push(o);
        keep.push((idx, Vec::new()));
    }
    keep.sort_unstable_by_key(|(i, _)| *i);
    keep.into_iter()
        .map(|(i, t)| (&all[i], t.into_iter().map(|x| &all[x]).collect()))
        .collect()
}

/// The same layout but for its chunk size, on as many controllers.
fn same_shape(a: &Raw, b: &Raw) -> bool {
    Layout {
        chunk_bytes: b.layout.chunk_bytes,
        ..a.layout
    } == b.layout
        && a.controllers == b.controllers
}

fn explain(front: &mut [Candidate]) {
    if front.is_empty() {
        return;
    }
    let names = [
        "most usable capacity",
        "most reliable",
        "highest throughput",
        "most IOPS",
        "cheapest",
    ];
    let objs: Vec<[f64; 5]> = front.iter().map(objectives).collect();
    let mut best = [f64::NEG_INFINITY; 5];
    for o in &objs {
        for i in 0..5 {
            best[i] = best[i].max(o[i]);
        }
    }
    let has_cost = front.iter().all(|c| c.cost.is_some());
    for (c, o) in front.iter_mut().zip(&objs) {
        let mut good: Vec<String> = Vec::new();
        for i in 0..if has_cost { 5 } else { 4 } {
            if (o[i] - best[i]).abs() <= 1e-3 * best[i].abs() {
                good.push(names[i].to_string());
            }
        }
        let mut gives: Vec<String> = Vec::new();
        if o[0] < best[0] * 0.999 {
            gives.push(format!(
                "{:.0}% of the best capacity",
                o[0] / best[0] * 100.0
            ));
        }
        if o[1] < best[1] * 0.999 {
            gives.push(format!("MTTDL {} below the best", factor(best[1] / o[1])));
        }
        if o[2] < best[2] * 0.999 {
            gives.push(format!(
                "{:.0}% of the best throughput",
                o[2] / best[2] * 100.0
            ));
        }
        if o[3] < best[3] * 0.999 {
            gives.push(format!("{:.0}% of the best IOPS", o[3] / best[3] * 100.0));
        }
        if has_cost && o[4] < best[4] - 1e-3 * best[4].abs() {
            gives.push(format!(
                "{:.0}% dearer than the cheapest",
                (o[4] / best[4] - 1.0) * 100.0
            ));
        }
        c.tradeoff = match (good.is_empty(), gives.is_empty()) {
            (false, true) => format!("best on every objective: {}", good.join(", ")),
            (false, false) => format!("{}; gives up: {}", good.join(", "), gives.join(", ")),
            (true, _) => format!("a balance: {}", gives.join(", ")),
        };
        if !c.ties.is_empty() {
            c.tradeoff
                .push_str(&format!("; ties with {}", c.ties.join(", ")));
        }
    }
}

fn factor(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}x")
    } else {
        format!("{x:.1}x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use storlab_types::Pattern;

    fn spec(min: u32, max: u32) -> SearchSpec {
        let cat = Catalog::builtin();
        let drive = cat.drive("constellation-es3-4tb").unwrap();
        SearchSpec {
            reliability: ReliabilityInputs {
                drive_mtbf_hours: drive.mtbf_hours,
                drive_capacity_bytes: drive.capacity_bytes,
                ber_per_bit: drive.ber_per_bit,
                sector_bytes: drive.sector_bytes,
                rebuild_hours: drive.rebuild_hours(),
                replace_delay_hours: 0.0,
                mission_hours: 5.0 * crate::reliability::HOURS_PER_YEAR,
                fleet: 1,
            },
            hardware: Hardware {
                drive,
                controller: cat.controller("megaraid-9361-8i").unwrap(),
                controllers: 1,
                enclosure: Some(cat.enclosure("jbod-2u24-sas12").unwrap()),
                host_bytes_per_s: None,
            },
            space: SearchSpace {
                min_drives: min,
                max_drives: max,
                levels: vec![GroupLevel::R1, GroupLevel::R5, GroupLevel::R6],
                spans: None,
                chunks: vec![64 << 10, 256 << 10, 1 << 20],
                max_controllers: 2,
                try_lvm: true,
                hot_spares: 0,
                template: None,
            },
            constraints: Constraints::default(),
            throughput_workload: Workload::new(Pattern::SeqWrite, 1 << 20),
            iops_workload: Workload::new(Pattern::RandWrite, 4096),
        }
    }

    #[test]
    fn front_is_non_dominated_and_meets_constraints() {
        let mut s = spec(24, 48);
        s.constraints.min_usable_bytes = Some(60_000_000_000_000);
        let r = search(&s).unwrap();
        assert!(!r.pareto.is_empty());
        assert!(r.feasible >= r.pareto.len());
        for a in &r.pareto {
            assert!(a.usable_bytes >= 60_000_000_000_000);
            assert!(!a.tradeoff.is_empty());
            for b in &r.pareto {
                assert!(
                    !dominates(&objectives(b), &objectives(a), &TRIVIAL),
                    "{} dominated by {}",
                    a.layout,
                    b.layout
                );
            }
        }
        // R5 with 48 drives in one group is not a sensible design; the
        // widest RAID 5 in the default range is 16.
        assert!(r.pareto.iter().all(|c| !c.layout.starts_with("R5/48")));
    }

    #[test]
    fn a_template_fixes_level_span_and_aggregation() {
        let mut s = spec(24, 96);
        s.space.template = Some("R60/12/x,chunk=128k".parse().unwrap());
        let r = search(&s).unwrap();
        assert!(!r.pareto.is_empty());
        for c in &r.pareto {
            assert!(c.layout.starts_with("R60/12/"), "{}", c.layout);
            assert!(c.layout.ends_with(",chunk=128k"), "{}", c.layout);
            assert_eq!(c.controllers, 1);
        }
        // 24..96 drives in groups of 12: 2 to 8 groups were evaluated.
        assert_eq!(r.evaluated, 7);
        s.space.template = Some("lvm(x*R6/10, stripe=2M)".parse().unwrap());
        let r = search(&s).unwrap();
        assert!(
            r.pareto
                .iter()
                .all(|c| c.layout.starts_with("lvm(") && c.layout.contains("stripe=2m"))
        );
        s.space.template = Some("R6/12".parse().unwrap());
        assert!(search(&s).is_err());
    }

    #[test]
    fn chunk_size_and_raid_level_rank_for_sequential_work() {
        // Same drives, same capacity and reliability: the per-command
        // overhead makes the biggest chunk the fastest for streaming, so
        // the front keeps it; RAID 5 and RAID 6 of 10 differ.
        let mut s = spec(10, 10);
        s.space.levels = vec![GroupLevel::R5, GroupLevel::R6];
        s.space.spans = Some((10, 10));
        s.space.max_controllers = 1;
        let r = search(&s).unwrap();
        let r6: Vec<_> = r
            .pareto
            .iter()
            .filter(|c| c.layout.starts_with("R6"))
            .collect();
        assert_eq!(r6.len(), 1, "{:?}", r.pareto);
        assert!(r6[0].layout.contains("chunk=1m"), "{}", r6[0].layout);
        let r5 = r
            .pareto
            .iter()
            .find(|c| c.layout.starts_with("R5"))
            .unwrap();
        assert!(r5.throughput_bytes_per_s > r6[0].throughput_bytes_per_s * 1.05);
        // The chunks differ by more than the 0.1 % the front calls a tie.
        let mut h = s.hardware.clone();
        h.controllers = 1;
        let t = |c: &str| {
            let l: Layout = format!("R6/10,chunk={c}").parse().unwrap();
            crate::perf::predict(&l, &h, &s.throughput_workload)
                .unwrap()
                .bytes_per_s
        };
        assert!(t("64k") < t("256k") && t("256k") < t("1m"));
    }

    #[test]
    fn impossible_constraints_give_an_empty_front() {
        let mut s = spec(12, 24);
        s.constraints.min_usable_bytes = Some(10_000_000_000_000_000);
        let r = search(&s).unwrap();
        assert!(r.pareto.is_empty());
        assert_eq!(r.feasible, 0);
    }

    fn raw(obj: [f64; 5]) -> Raw {
        let b = Bound {
            bytes_per_s: 0.0,
            iops: 0.0,
            binding: PartKind::Drives,
        };
        Raw {
            layout: Layout::new(GroupLevel::R6, 10, 1, Aggregation::Single),
            controllers: 1,
            usable: 0,
            mttdl: 0.0,
            p_loss: 0.0,
            t: b,
            i: b,
            cost: None,
            obj,
        }
    }

    proptest::proptest! {
        /// The fast front equals the brute-force definition: nothing kept
        /// is beaten by anything, and everything dropped is beaten by (or
        /// ties with) something kept.
        #[test]
        fn pareto_matches_brute_force(v in proptest::collection::vec(
            proptest::array::uniform5(0u8..6), 0..80)) {
            let all: Vec<Raw> = v.iter().map(|a| raw(a.map(f64::from))).collect();
            let front: Vec<&Raw> = pareto(&all, &NOISE).into_iter().map(|(f, _)| f).collect();
            for f in &front {
                for a in &all {
                    proptest::prop_assert!(!dominates(&a.obj, &f.obj, &NOISE));
                }
            }
            for a in &all {
                proptest::prop_assert!(front.iter().any(|f| dominates(&f.obj, &a.obj, &NOISE) || equal(&f.obj, &a.obj, &NOISE)));
            }
            for (i, f) in front.iter().enumerate() {
                for g in &front[i + 1..] {
                    proptest::prop_assert!(!equal(&f.obj, &g.obj, &NOISE));
                }
            }
        }
    }

    #[test]
    fn bad_ranges_are_errors() {
        assert!(search(&spec(10, 5)).is_err());
        assert!(search(&spec(0, 5)).is_err());
    }
}
