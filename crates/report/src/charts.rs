//! The report's charts, built from stored runs. Each is a [`Chart`] with a
//! stable id (for `storlab report --chart ID --output-format svg|png`), a title and
//! its SVG. `docs/report.md` says what each one shows.
//!
//! Which kinds there are, when each is drawn and why one is not: the chart
//! registry, [`crate::registry`].

use crate::compare::{Verdict, compare_with};
use crate::error::ReportError;
use crate::fmt::{format_change, format_ns, run_label, tags_joined};
use crate::registry::{self, CannotDraw};
use crate::rows::Direction;
use crate::svg::{BarChart, BarSeries, LineChart, LineSeries, XScale, fmt_tick};
use std::collections::BTreeMap;
use storlab_configdiff::Vary;
use storlab_types::{CacheMode, Metric, PhaseResult, StoredRun, format_bytes};

/// One chart: a stable id, its title and the SVG document.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub svg: String,
}

/// The baseline used for `relative` bars and the comparison: the index
/// given, or else the first run when there are two or more.
pub fn resolve_baseline(runs: &[StoredRun], baseline: Option<usize>) -> Option<usize> {
    match baseline {
        Some(i) if i < runs.len() => Some(i),
        Some(_) => None,
        None if runs.len() >= 2 => Some(0),
        None => None,
    }
}

pub(crate) fn mb(v: f64) -> f64 {
    v / 1e6
}

/// The colour key of a phase: its I/O pattern and block size (`randread
/// 4 KiB`, `randrw 70% read 8 KiB`).
fn pattern_key(p: &PhaseResult) -> String {
    let q = &p.params;
    if q.rw.reads() && q.rw.writes() {
        format!("{} {}% read {}", q.rw, q.rwmixread, q.bs_human())
    } else {
        format!("{} {}", q.rw, q.bs_human())
    }
}

/// One bar per phase of each run, coloured by I/O pattern and block size
/// (one legend entry per pattern, however many phases share it).
pub(crate) fn by_phase_chart(runs: &[StoredRun], iops: bool) -> Chart {
    // Short run names: the bar label must keep its phase name whole.
    let labels = crate::fmt::short_run_labels(runs);
    let mut categories = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    // (category index, series index, value)
    let mut bars: Vec<(usize, usize, f64)> = Vec::new();
    for (r, label) in runs.iter().zip(&labels) {
        let mut seen: Vec<&str> = Vec::new();
        for p in &r.report.phases {
            let k = seen.iter().filter(|n| **n == p.params.name).count();
            seen.push(&p.params.name);
            let name = if k == 0 {
                p.params.name.clone()
            } else {
                format!("{} ({})", p.params.name, k + 1)
            };
            categories.push(format!("{label} · {name}"));
            let key = pattern_key(p);
            let si = keys.iter().position(|x| *x == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            });
            let v = if iops {
                p.total.iops
            } else {
                mb(p.total.bw_bytes_per_s)
            };
            bars.push((categories.len() - 1, si, v));
        }
    }
    let mut series: Vec<BarSeries> = keys
        .into_iter()
        .map(|name| BarSeries {
            name,
            values: vec![None; categories.len()],
            ..BarSeries::default()
        })
        .collect();
    for (ci, si, v) in bars {
        series[si].values[ci] = Some(v);
    }
    let (id, title, y_label) = if iops {
        ("iops", "IOPS by phase", "IOPS (I/O operations per second)")
    } else {
        (
            "throughput",
            "Throughput by phase",
            "Throughput (MB/s, 10^6 bytes/s)",
        )
    };
    let c = BarChart {
        title: title.to_string(),
        subtitle: Some(
            "One bar per phase of each run, coloured by I/O pattern and block size; mixed \
             read/write phases show read + write"
                .into(),
        ),
        y_label: y_label.to_string(),
        x_label: "Run · phase".to_string(),
        categories,
        series,
        log_y: false,
        y_fmt: fmt_tick,
        faded_legend: None,
    };
    Chart {
        id: id.into(),
        title: title.into(),
        svg: c.render(),
    }
}

/// Phases that ran job groups at once: per phase of each run, a bar per
/// group (its bytes over its own window) beside the aggregate (all bytes
/// over the union window), with each group's share of the phase in its
/// label and the overlap in the category.
pub(crate) fn groups_chart(runs: &[StoredRun]) -> Option<Chart> {
    let labels = crate::fmt::run_labels(runs);
    let mut categories = Vec::new();
    let mut names: Vec<String> = vec!["all groups".into()];
    // (category, series, MB/s, label)
    let mut bars: Vec<(usize, usize, f64, Option<String>)> = Vec::new();
    for (r, label) in runs.iter().zip(&labels) {
        for p in &r.report.phases {
            let Some(g) = &p.groups else {
                continue;
            };
            categories.push(format!(
                "{label} · {} ({:.0} % together)",
                p.params.name,
                g.overlap * 100.0
            ));
            let ci = categories.len() - 1;
            bars.push((ci, 0, mb(p.total.bw_bytes_per_s), None));
            for m in &g.groups {
                let si = names.iter().position(|n| *n == m.name).unwrap_or_else(|| {
                    names.push(m.name.clone());
                    names.len() - 1
                });
                let share = if p.total.bytes > 0 {
                    Some(format!(
                        "{:.0} %",
                        100.0 * m.total.bytes as f64 / p.total.bytes as f64
                    ))
                } else {
                    None
                };
                bars.push((ci, si, mb(m.total.bw_bytes_per_s), share));
            }
        }
    }
    if categories.is_empty() {
        return None;
    }
    let mut series: Vec<BarSeries> = names
        .into_iter()
        .map(|name| BarSeries {
            name,
            values: vec![None; categories.len()],
            labels: vec![None; categories.len()],
            faded: vec![false; categories.len()],
        })
        .collect();
    for (ci, si, v, l) in bars {
        series[si].values[ci] = Some(v);
        series[si].labels[ci] = l;
    }
    let c = BarChart {
        title: "Job groups: each group and the whole phase".into(),
        subtitle: Some(
            "Each group's MB/s over its own window (label: its share of the phase's bytes) beside              all groups' bytes over the phase's window; the category gives the time every group              was moving data at once"
                .into(),
        ),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        x_label: "Run · phase".into(),
        categories,
        series,
        log_y: false,
        y_fmt: fmt_tick,
        faded_legend: None,
    };
    Some(Chart {
        id: "groups".into(),
        title: "Job groups".into(),
        svg: c.render(),
    })
}

pub(crate) fn latency_chart(runs: &[StoredRun]) -> Option<Chart> {
    let mut cats = Vec::new();
    let mut lats = Vec::new();
    for (r, label) in runs.iter().zip(crate::fmt::run_labels(runs)) {
        for p in &r.report.phases {
            if let Some(l) = p.total.lat_ns {
                cats.push(format!("{label} · {}", p.params.name));
                lats.push(l);
            }
        }
    }
    if lats.is_empty() {
        return None;
    }
    let mut p50s: Vec<f64> = lats.iter().map(|l| l.p50 as f64).collect();
    p50s.sort_by(f64::total_cmp);
    let (unit, div) = if p50s[p50s.len() / 2] >= 1e6 {
        ("ms", 1e6)
    } else {
        ("µs", 1e3)
    };
    type Pick = fn(&storlab_types::LatencyStats) -> u64;
    let pick: [(&str, Pick); 4] = [
        ("p50", |l| l.p50),
        ("p90", |l| l.p90),
        ("p99", |l| l.p99),
        ("p99.9", |l| l.p99_9),
    ];
    let series: Vec<BarSeries> = pick
        .iter()
        .map(|(name, f)| BarSeries {
            name: (*name).to_string(),
            values: lats.iter().map(|l| Some(f(l) as f64 / div)).collect(),
            ..BarSeries::default()
        })
        .collect();
    let all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let log_y = lo > 0.0 && hi / lo > 30.0;
    let c = BarChart {
        title: "Latency percentiles".into(),
        subtitle: Some(
            "Submission to completion of each I/O, histograms merged across jobs; mixed phases: \
             reads and writes together"
                .into(),
        ),
        y_label: if log_y {
            format!("Latency ({unit}, log scale)")
        } else {
            format!("Latency ({unit})")
        },
        x_label: "Run · phase".into(),
        categories: cats,
        series,
        log_y,
        y_fmt: fmt_tick,
        faded_legend: None,
    };
    Some(Chart {
        id: "latency".into(),
        title: "Latency percentiles".into(),
        svg: c.render(),
    })
}

/// The parameters a scaling chart can put on its x axis.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    Bs,
    NumJobs,
    Size,
    IoDepth,
}

impl Param {
    const ALL: [Param; 4] = [Param::Bs, Param::NumJobs, Param::Size, Param::IoDepth];

    fn key(self) -> &'static str {
        match self {
            Param::Bs => "bs",
            Param::NumJobs => "numjobs",
            Param::Size => "size",
            Param::IoDepth => "iodepth",
        }
    }
    /// `None` for a block-size mix (it has no single x).
    fn value(self, p: &PhaseResult) -> Option<f64> {
        let q = &p.params;
        match self {
            Param::Bs => (q.bs.len() == 1).then(|| q.bs[0].bs_bytes as f64),
            Param::NumJobs => Some(f64::from(q.numjobs)),
            Param::Size => Some(q.size_bytes as f64),
            Param::IoDepth => Some(f64::from(q.iodepth)),
        }
    }
    fn show(self, v: f64) -> String {
        match self {
            Param::Bs | Param::Size => format_bytes(v as u64),
            Param::NumJobs | Param::IoDepth => format!("{v}"),
        }
    }
}

// long-function: collect points, key them into series (tags that restate x dropped), name the series, draw; each step feeds the next.
pub(crate) fn scaling_chart(runs: &[StoredRun], x: Param) -> Option<Chart> {
    struct Pt<'a> {
        run: &'a StoredRun,
        x: f64,
        y: f64,
        /// (component, value) of everything but x that tells series apart.
        key: Vec<(String, String)>,
    }
    let mut pts: Vec<Pt<'_>> = Vec::new();
    for r in runs {
        for p in &r.report.phases {
            let Some(xv) = x.value(p) else { continue };
            let q = &p.params;
            // Everything else that changes the figure: a line joins only
            // phases that differ in x alone (a rate-capped or other-engine
            // point, or another host's, is a line of its own; the target
            // path is not part of it: a campaign rebuilds one mount point
            // and tells its cells apart by tags).
            let mut key = vec![
                ("rw".to_string(), q.rw.as_str().to_string()),
                ("cache".to_string(), q.cache.as_str().to_string()),
                ("engine".to_string(), q.engine.as_str().to_string()),
                ("host".to_string(), r.report.host.hostname.clone()),
            ];
            if q.rw.reads() && q.rw.writes() {
                key.push(("rwmixread".to_string(), format!("{}%", q.rwmixread)));
            }
            if q.rate_iops > 0 {
                key.push(("rate".to_string(), format!("{} IOPS", q.rate_iops)));
            }
            if q.thinktime_ns > 0 {
                key.push((
                    "thinktime".to_string(),
                    crate::fmt::format_ns(q.thinktime_ns as f64),
                ));
            }
            for other in Param::ALL.into_iter().filter(|o| *o != x) {
                let v = other
                    .value(p)
                    .map(|v| other.show(v))
                    .unwrap_or_else(|| p.params.bs_human());
                key.push((other.key().to_string(), v));
            }
            pts.push(Pt {
                run: r,
                x: xv,
                y: mb(p.total.bw_bytes_per_s),
                key,
            });
        }
    }
    // Tags become part of the series key, except tags that merely restate x
    // (a sweep tagged `bs=4k`, `bs=64k`, ...): among the points that carry
    // the tag, one x value never goes with two tag values.
    let mut tag_vals: BTreeMap<&str, BTreeMap<u64, Vec<&str>>> = BTreeMap::new();
    for pt in &pts {
        for (k, v) in &pt.run.tags {
            let e = tag_vals
                .entry(k)
                .or_default()
                .entry(pt.x.to_bits())
                .or_default();
            if !e.contains(&v.as_str()) {
                e.push(v);
            }
        }
    }
    let restating: std::collections::HashSet<&str> = tag_vals
        .iter()
        .filter(|(_, m)| {
            let distinct: std::collections::BTreeSet<&str> =
                m.values().flatten().copied().collect();
            m.values().all(|v| v.len() == 1) && distinct.len() == m.len() && m.len() > 1
        })
        .map(|(k, _)| *k)
        .collect();
    for pt in &mut pts {
        for (k, v) in &pt.run.tags {
            // A sweep's per-point labels name the point, not a configuration.
            let per_point = matches!(k.as_str(), "sweep_point" | "sweep_params");
            if !restating.contains(k.as_str()) && !per_point {
                pt.key.push((format!("tag {k}"), v.clone()));
            }
        }
    }
    // Group into series.
    // (series key, x bits → y values)
    type Group = (Vec<(String, String)>, BTreeMap<u64, Vec<f64>>);
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: std::collections::HashMap<&[(String, String)], usize> =
        std::collections::HashMap::new();
    for pt in &pts {
        let i = *group_of.entry(&pt.key).or_insert_with(|| {
            groups.push((pt.key.clone(), BTreeMap::new()));
            groups.len() - 1
        });
        groups[i].1.entry(pt.x.to_bits()).or_default().push(pt.y);
    }
    groups.retain(|g| g.1.len() >= 2);
    if groups.is_empty() {
        return None;
    }
    // Name a series by what tells it apart from the others.
    let components: Vec<&String> = {
        let mut c: Vec<&String> = Vec::new();
        for (k, _) in &groups[0].0 {
            c.push(k);
        }
        c
    };
    let varying: Vec<&String> = components
        .into_iter()
        .filter(|k| {
            let vals: std::collections::BTreeSet<Option<&String>> = groups
                .iter()
                .map(|g| g.0.iter().find(|(kk, _)| kk == *k).map(|(_, v)| v))
                .collect();
            vals.len() > 1
        })
        .collect();
    let series: Vec<LineSeries> = groups
        .iter()
        .map(|(key, pts)| {
            let mut parts = vec![key[0].1.clone()];
            for (k, v) in key.iter().skip(1) {
                if varying.contains(&k) || k.starts_with("tag ") {
                    parts.push(format!("{}={v}", k.trim_start_matches("tag ")));
                }
            }
            let mut points: Vec<(f64, f64)> = pts
                .iter()
                .map(|(xb, ys)| {
                    (
                        f64::from_bits(*xb),
                        ys.iter().sum::<f64>() / ys.len() as f64,
                    )
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            LineSeries {
                name: parts.join(", "),
                points,
            }
        })
        .collect();
    let (id, title, x_label, x_fmt): (&str, &str, &str, fn(f64) -> String) = match x {
        Param::Bs => (
            "vs-bs",
            "Throughput vs block size",
            "Block size (bs, log scale)",
            |v| format_bytes(v as u64),
        ),
        Param::NumJobs => (
            "vs-numjobs",
            "Throughput vs number of jobs",
            "Jobs (numjobs, log scale)",
            |v| format!("{v}"),
        ),
        Param::Size => (
            "vs-size",
            "Throughput vs file size",
            "File size per job (log scale)",
            |v| format_bytes(v as u64),
        ),
        Param::IoDepth => (
            "vs-iodepth",
            "Throughput vs queue depth",
            "Queue depth per job (iodepth, log scale)",
            |v| format!("{v}"),
        ),
    };
    // On a file-size axis, mark the host's RAM: the page cache's limit.
    let ram = runs[0].report.host.mem_total_bytes;
    let x_marker =
        (x == Param::Size && ram > 0 && runs.iter().all(|r| r.report.host.mem_total_bytes == ram))
            .then(|| (ram as f64, format!("RAM {}", format_bytes(ram))));
    let c = LineChart {
        x_marker,
        x_spans: Vec::new(),
        title: title.into(),
        subtitle: Some(
            "Phases equal in everything else form one line; repeated points are averaged".into(),
        ),
        x_label: x_label.into(),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        x_scale: XScale::Log2,
        x_fmt,
        y_fmt: fmt_tick,
        y_max: None,
    };
    Some(Chart {
        id: id.into(),
        title: title.into(),
        svg: c.render(),
    })
}

/// In cache: warm (unless the engine found the pages did not stay
/// resident), or buffered with a working set under 2× RAM (the bench
/// engine's `may_be_cached`). Out of cache: everything else — direct, cold
/// and large, or warm but not resident.
fn in_cache(p: &PhaseResult) -> bool {
    (p.params.cache == CacheMode::Warm && p.cache.verified != Some(false)) || p.cache.may_be_cached
}

/// What makes two phases "equal apart from the cache": everything but the
/// cache mode, the file size (a small file stays in the page cache, a huge
/// one cannot), the phase name and the seed, on the same host and target.
fn cache_class_key(run: &StoredRun, p: &PhaseResult) -> String {
    let mut q = p.params.clone();
    q.name.clear();
    q.seed = 0;
    q.size_bytes = 0;
    q.cache = CacheMode::Direct;
    q.drop_caches = false;
    serde_json::to_string(&(
        &run.report.host.hostname,
        &run.report.target.path,
        &run.report.target.device,
        &q,
    ))
    .unwrap_or_default()
}

/// In-cache vs out-of-cache pairs: phases equal in everything but the
/// cache mode and file size ([`cache_class_key`]), with at least one
/// phase in cache and one out of it. (category, in-cache MB/s values,
/// out-of-cache MB/s values), in order of first appearance.
fn cache_pairs(runs: &[StoredRun]) -> Vec<(String, Vec<f64>, Vec<f64>)> {
    struct Class {
        ids: Vec<i64>,
        pattern: String,
        ins: Vec<f64>,
        outs: Vec<f64>,
    }
    let mut classes: Vec<(String, Class)> = Vec::new();
    for r in runs {
        for p in &r.report.phases {
            let key = cache_class_key(r, p);
            let i = match classes.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    classes.push((
                        key,
                        Class {
                            ids: Vec::new(),
                            pattern: format!(
                                "{} {} QD{}",
                                p.params.rw,
                                p.params.bs_human(),
                                p.params.iodepth
                            ),
                            ins: Vec::new(),
                            outs: Vec::new(),
                        },
                    ));
                    classes.len() - 1
                }
            };
            let c = &mut classes[i].1;
            if !c.ids.contains(&r.id) {
                c.ids.push(r.id);
            }
            let v = mb(p.total.bw_bytes_per_s);
            if in_cache(p) {
                c.ins.push(v);
            } else {
                c.outs.push(v);
            }
        }
    }
    classes
        .into_iter()
        .filter(|(_, c)| !c.ins.is_empty() && !c.outs.is_empty())
        .map(|(_, c)| {
            let ids: Vec<String> = c.ids.iter().map(|i| format!("#{i}")).collect();
            (format!("{} · {}", ids.join(" "), c.pattern), c.ins, c.outs)
        })
        .collect()
}

pub(crate) fn cache_chart(runs: &[StoredRun]) -> Option<Chart> {
    let groups = cache_pairs(runs);
    if groups.is_empty() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ins: Vec<f64> = groups.iter().map(|g| mean(&g.1)).collect();
    let outs: Vec<f64> = groups.iter().map(|g| mean(&g.2)).collect();
    let ratio_labels = ins
        .iter()
        .zip(&outs)
        .map(|(i, o)| (*o > 0.0).then(|| format!("{:.1}×", i / o)))
        .collect();
    let ram = runs
        .first()
        .map(|r| format_bytes(r.report.host.mem_total_bytes))
        .unwrap_or_default();
    let c = BarChart {
        title: "In cache vs out of cache".into(),
        subtitle: Some(format!(
            "Only phases equal in everything but cache mode and file size (same host, target, \
             pattern, block size, jobs, depth, engine, ...) are paired. In cache: warm and \
             resident, or buffered with size × jobs under 2× RAM ({ram}); out of cache: direct, \
             cold and larger, or warm but not resident; several phases on one side are averaged"
        )),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        x_label: "Runs · I/O pattern".into(),
        categories: groups.iter().map(|g| g.0.clone()).collect(),
        series: vec![
            BarSeries {
                name: "in cache".into(),
                values: ins.into_iter().map(Some).collect(),
                labels: ratio_labels,
                faded: Vec::new(),
            },
            BarSeries {
                name: "out of cache".into(),
                values: outs.into_iter().map(Some).collect(),
                ..BarSeries::default()
            },
        ],
        log_y: false,
        y_fmt: fmt_tick,
        faded_legend: None,
    };
    Some(Chart {
        id: "cache".into(),
        title: "In cache vs out of cache".into(),
        svg: c.render(),
    })
}

pub(crate) fn relative_chart(runs: &[StoredRun], baseline: usize, vary: &Vary) -> Option<Chart> {
    let base = &runs[baseline];
    let cmp = compare_with(runs, base, vary);
    let others: Vec<(i64, String)> = {
        let mut v: Vec<(i64, String)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in cmp.rows.iter().filter(|r| !r.is_baseline) {
            if seen.insert(r.run_id) {
                v.push((r.run_id, r.run_label.clone()));
            }
        }
        // In the order the runs were given.
        let order: std::collections::HashMap<i64, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id, i))
            .rev()
            .collect();
        v.sort_by_key(|(id, _)| order.get(id).copied());
        v
    };
    if others.is_empty() {
        return None;
    }
    let mut cats: Vec<(String, Direction)> = Vec::new();
    for r in &cmp.rows {
        let k = (r.baseline_phase.clone(), r.direction);
        if !cats.contains(&k) {
            cats.push(k);
        }
    }
    // (run id, baseline phase, direction) → the first such row.
    let mut index: std::collections::HashMap<(i64, &str, Direction), &crate::CompareRow> =
        std::collections::HashMap::new();
    for r in &cmp.rows {
        index
            .entry((r.run_id, r.baseline_phase.as_str(), r.direction))
            .or_insert(r);
    }
    let series =
        others
            .iter()
            .map(|(id, label)| {
                let mut s = BarSeries {
                    name: label.clone(),
                    ..BarSeries::default()
                };
                for (phase, dir) in &cats {
                    let ch = index
                        .get(&(*id, phase.as_str(), *dir))
                        .and_then(|r| r.change(Metric::Throughput));
                    let pct = ch.and_then(|c| c.change_pct);
                    s.values.push(pct);
                    s.labels.push(pct.map(format_change));
                    s.faded.push(ch.is_some_and(|c| {
                        matches!(c.verdict, Verdict::Noise | Verdict::ConfigDiffers)
                    }));
                }
                s
            })
            .collect();
    let title = format!("Throughput relative to baseline {}", cmp.baseline_label);
    let c = BarChart {
        title: title.clone(),
        subtitle: Some(
            "(run − baseline) / baseline per matching phase; pale dashed bars are within the \
             measured spread (noise) or compare phases whose configurations differ (not judged)"
                .into(),
        ),
        y_label: "Change vs baseline (%)".into(),
        x_label: "Baseline phase (direction)".into(),
        categories: cats
            .iter()
            .map(|(p, d)| format!("{p} ({})", d.as_str()))
            .collect(),
        series,
        log_y: false,
        y_fmt: |v| format!("{}{} %", if v > 0.0 { "+" } else { "" }, fmt_tick(v)),
        faded_legend: Some(if cmp.blocking_keys().is_empty() {
            "within noise".into()
        } else {
            format!(
                "within noise, or not judged: configuration differs ({})",
                cmp.blocking_keys().join(", ")
            )
        }),
    };
    Some(Chart {
        id: "relative".into(),
        title,
        svg: c.render(),
    })
}

/// Where each phase's measured window lies on a run's device timeline, in
/// seconds since the timeline's start: (start, end, label). Phase start
/// times are recorded to the millisecond (to the second in older records,
/// whose bands are that much less exact); phases the timeline does not
/// overlap are left out.
fn phase_spans(run: &StoredRun, m: &storlab_types::MonitorTimeline) -> Vec<(f64, f64, String)> {
    run.report
        .phases
        .iter()
        .filter_map(|p| {
            let (start, end) = phase_window(p, m)?;
            Some((start.max(0.0), end, p.params.name.clone()))
        })
        .collect()
}

/// A phase's measured window on the timeline's axis (seconds since its
/// start), when the two overlap.
fn phase_window(p: &PhaseResult, m: &storlab_types::MonitorTimeline) -> Option<(f64, f64)> {
    let t0 = crate::fmt::rfc3339_seconds(&m.started_at)?;
    let start = crate::fmt::rfc3339_seconds(&p.started_at)? - t0 + p.params.ramp_ns as f64 / 1e9;
    let end = start + p.elapsed_ns as f64 / 1e9;
    let last = m.samples.iter().map(|s| s.t_ns).max().unwrap_or(0) as f64 / 1e9;
    (end > 0.0 && start < last + m.interval_ns as f64 / 1e9).then_some((start, end))
}

/// PLUG-IN POINT for the application's own time series: the phase's
/// read and write MB/s as (seconds since the timeline's start, read, write)
/// points, given where its measured window starts on that axis.
///
/// Uses the per-interval series of the phase when the record carries one
/// (`PhaseResult::series`, see [`app_interval_points`]); otherwise the
/// phase's mean over its whole window, drawn flat from its start to its
/// end (what every record has).
fn app_rate_points(p: &PhaseResult, window_start_s: f64) -> Vec<(f64, f64, f64)> {
    if let Some(points) = app_interval_points(p, window_start_s) {
        return points;
    }
    let end = window_start_s + p.elapsed_ns as f64 / 1e9;
    let (r, w) = (mb(p.read.bw_bytes_per_s), mb(p.write.bw_bytes_per_s));
    vec![(window_start_s, r, w), (end, r, w)]
}

/// Whether a series point covers enough of its interval to be drawn: the
/// first and last intervals of a phase may be cut short, and a rate over a
/// few milliseconds at a phase's edge is a spike or a drop that says nothing
/// (points under a quarter of the interval are left out of the charts; the
/// record keeps them).
fn whole_enough(pt: &storlab_types::SeriesPoint, interval_ns: u64) -> bool {
    pt.span_ns.saturating_mul(4) >= interval_ns
}

/// The per-interval points of a phase's own time series
/// (`PhaseResult::series`, `bench --log-interval`), each at the end of its
/// interval as the device samples are; `None` when the record has none
/// (imports, records made before it existed).
fn app_interval_points(p: &PhaseResult, window_start_s: f64) -> Option<Vec<(f64, f64, f64)>> {
    let series = p.series.as_ref().filter(|s| !s.points.is_empty())?;
    Some(
        series
            .points
            .iter()
            .filter(|pt| whole_enough(pt, series.interval_ns))
            .map(|pt| {
                (
                    window_start_s + pt.t_ns as f64 / 1e9,
                    mb(pt.read.bw_bytes_per_s),
                    mb(pt.write.bw_bytes_per_s),
                )
            })
            .collect(),
    )
}

pub(crate) fn timeline_charts(run: &StoredRun) -> Vec<Chart> {
    let Some(m) = &run.report.monitor else {
        return Vec::new();
    };
    if m.samples.is_empty() {
        return Vec::new();
    }
    let secs = |t: u64| t as f64 / 1e9;
    let mut devices: Vec<&str> = m.devices.iter().map(String::as_str).collect();
    for s in &m.samples {
        if !devices.contains(&s.device.as_str()) {
            devices.push(&s.device);
        }
    }
    let spans = phase_spans(run, m);
    let mut bw = Vec::new();
    let mut util = Vec::new();
    // The application's own MB/s first, beside the devices'.
    let (mut app_r, mut app_w) = (Vec::new(), Vec::new());
    for p in &run.report.phases {
        let Some((at, _)) = phase_window(p, m) else {
            continue;
        };
        let pts = app_rate_points(p, at);
        if p.params.rw.reads() {
            app_r.extend(pts.iter().map(|(t, r, _)| (*t, *r)));
            app_r.push((at, f64::NAN));
        }
        if p.params.rw.writes() {
            app_w.extend(pts.iter().map(|(t, _, w)| (*t, *w)));
            app_w.push((at, f64::NAN));
        }
    }
    let has_app = !app_r.is_empty() || !app_w.is_empty();
    if !app_r.is_empty() {
        bw.push(LineSeries {
            name: "storlab read (app)".into(),
            points: app_r,
        });
    }
    if !app_w.is_empty() {
        bw.push(LineSeries {
            name: "storlab write (app)".into(),
            points: app_w,
        });
    }
    for d in &devices {
        let samples: Vec<_> = m.samples.iter().filter(|s| s.device == *d).collect();
        if samples.is_empty() {
            continue;
        }
        bw.push(LineSeries {
            name: format!("{d} read"),
            points: samples
                .iter()
                .map(|s| (secs(s.t_ns), mb(s.r_bytes_per_s)))
                .collect(),
        });
        bw.push(LineSeries {
            name: format!("{d} write"),
            points: samples
                .iter()
                .map(|s| (secs(s.t_ns), mb(s.w_bytes_per_s)))
                .collect(),
        });
        util.push(LineSeries {
            name: (*d).to_string(),
            points: samples.iter().map(|s| (secs(s.t_ns), s.util_pct)).collect(),
        });
    }
    // Once-counted layer totals (a request through dm-0 and sda counts once);
    // with a single device they would only hide its lines.
    let mut layers: Vec<&str> = Vec::new();
    for s in m.totals.iter().filter(|_| devices.len() > 1) {
        if !layers.contains(&s.device.as_str()) {
            layers.push(&s.device);
        }
    }
    for layer in layers {
        let samples: Vec<_> = m.totals.iter().filter(|s| s.device == layer).collect();
        bw.push(LineSeries {
            name: format!("{layer} total read"),
            points: samples
                .iter()
                .map(|s| (secs(s.t_ns), mb(s.r_bytes_per_s)))
                .collect(),
        });
        bw.push(LineSeries {
            name: format!("{layer} total write"),
            points: samples
                .iter()
                .map(|s| (secs(s.t_ns), mb(s.w_bytes_per_s)))
                .collect(),
        });
    }
    let label = run_label(run);
    let sub = format!(
        "Sampled every {} from {} ({} devices), iostat -x definitions; shaded: each phase's \
         measured window, placed by its recorded start time{}",
        format_ns(m.interval_ns as f64),
        m.started_at,
        m.layer,
        if has_app {
            "; \"(app)\": storlab's own MB/s, per interval where recorded, else the phase mean"
        } else {
            ""
        }
    );
    let t_bw = format!("Device throughput over time, run {label}");
    let t_util = format!("Device utilisation over time, run {label}");
    vec![
        Chart {
            id: format!("timeline-{}", run.id),
            title: t_bw.clone(),
            svg: LineChart {
                title: t_bw,
                subtitle: Some(sub.clone()),
                x_label: "Time since start (s)".into(),
                y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
                series: bw,
                x_scale: XScale::Linear,
                x_fmt: fmt_tick,
                y_fmt: fmt_tick,
                y_max: None,
                x_marker: None,
                x_spans: spans.clone(),
            }
            .render(),
        },
        Chart {
            id: format!("util-{}", run.id),
            title: t_util.clone(),
            svg: LineChart {
                title: t_util,
                subtitle: Some(sub),
                x_label: "Time since start (s)".into(),
                y_label: "Utilisation (% of time busy)".into(),
                series: util,
                x_scale: XScale::Linear,
                x_fmt: fmt_tick,
                y_fmt: fmt_tick,
                y_max: Some(100.0),
                x_marker: None,
                x_spans: spans,
            }
            .render(),
        },
    ]
}

/// The application's own per-interval figures of a run (`PhaseResult::series`,
/// `bench --log-interval`): MB/s and latency percentiles over time, phases
/// placed by their start times and marked as bands. They show steady
/// state, SLC-cache cliffs and garbage-collection stalls. Empty when no
/// phase recorded a series.
pub(crate) fn app_series_charts(run: &StoredRun) -> Vec<Chart> {
    let with: Vec<&PhaseResult> = run
        .report
        .phases
        .iter()
        .filter(|p| p.series.as_ref().is_some_and(|s| !s.points.is_empty()))
        .collect();
    if with.is_empty() {
        return Vec::new();
    }
    let t0 = crate::fmt::rfc3339_seconds(&run.report.started_at);
    // Where each phase's window starts on the time axis: its recorded start
    // (to the second) after the run's, plus its ramp; without times, end
    // to end. Never before the previous phase's end.
    let mut starts = Vec::new();
    let mut next = 0.0;
    for p in &with {
        let at = match (t0, crate::fmt::rfc3339_seconds(&p.started_at)) {
            (Some(a), Some(b)) if b >= a => b - a + p.params.ramp_ns as f64 / 1e9,
            _ => next,
        };
        let at = f64::max(at, next);
        next = at + p.elapsed_ns as f64 / 1e9;
        starts.push(at);
    }
    let (mut rd, mut wr) = (Vec::new(), Vec::new());
    let mut lat: [Vec<(f64, f64)>; 3] = Default::default();
    let mut spans = Vec::new();
    let mut p50s = Vec::new();
    for (p, &at) in with.iter().zip(&starts) {
        let Some(series) = &p.series else { continue };
        spans.push((at, at + p.elapsed_ns as f64 / 1e9, p.params.name.clone()));
        for pt in series
            .points
            .iter()
            .filter(|pt| whole_enough(pt, series.interval_ns))
        {
            let t = at + pt.t_ns as f64 / 1e9;
            if p.params.rw.reads() {
                rd.push((t, mb(pt.read.bw_bytes_per_s)));
            }
            if p.params.rw.writes() {
                wr.push((t, mb(pt.write.bw_bytes_per_s)));
            }
            if let Some(l) = pt.total.lat_ns {
                lat[0].push((t, l.p50 as f64));
                lat[1].push((t, l.p99 as f64));
                lat[2].push((t, l.p99_9 as f64));
                p50s.push(l.p50 as f64);
            }
        }
        // Break the lines between phases.
        for v in [&mut rd, &mut wr].into_iter().chain(lat.iter_mut()) {
            if v.last().is_some_and(|x| x.1.is_finite()) {
                v.push((at, f64::NAN));
            }
        }
    }
    let label = run_label(run);
    let interval = with
        .iter()
        .filter_map(|p| p.series.as_ref())
        .map(|s| s.interval_ns)
        .next()
        .unwrap_or(0);
    let sub = format!(
        "storlab's own figures per {} interval (each point at the end of its interval; a \
         phase's edge intervals under a quarter of that are left out); shaded: each phase's \
         measured window",
        format_ns(interval as f64)
    );
    let mut bw = Vec::new();
    if !rd.is_empty() {
        bw.push(LineSeries {
            name: "read".into(),
            points: rd,
        });
    }
    if !wr.is_empty() {
        bw.push(LineSeries {
            name: "write".into(),
            points: wr,
        });
    }
    let t_bw = format!("Application throughput over time, run {label}");
    let mut out = vec![Chart {
        id: format!("app-{}", run.id),
        title: t_bw.clone(),
        svg: LineChart {
            title: t_bw,
            subtitle: Some(sub.clone()),
            x_label: "Time since the run started (s)".into(),
            y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
            series: bw,
            x_scale: XScale::Linear,
            x_fmt: fmt_tick,
            y_fmt: fmt_tick,
            y_max: None,
            x_marker: None,
            x_spans: spans.clone(),
        }
        .render(),
    }];
    if !p50s.is_empty() {
        p50s.sort_by(f64::total_cmp);
        let (unit, div) = if p50s[p50s.len() / 2] >= 1e6 {
            ("ms", 1e6)
        } else {
            ("µs", 1e3)
        };
        let series = ["p50", "p99", "p99.9"]
            .iter()
            .zip(lat)
            .map(|(n, pts)| LineSeries {
                name: (*n).to_string(),
                points: pts.into_iter().map(|(t, v)| (t, v / div)).collect(),
            })
            .collect();
        let t_lat = format!("Application latency over time, run {label}");
        out.push(Chart {
            id: format!("applat-{}", run.id),
            title: t_lat.clone(),
            svg: LineChart {
                title: t_lat,
                subtitle: Some(format!(
                    "{sub}; submission to completion of the I/Os completed in each interval, \
                     reads and writes together"
                )),
                x_label: "Time since the run started (s)".into(),
                y_label: format!("Latency ({unit})"),
                series,
                x_scale: XScale::Linear,
                x_fmt: fmt_tick,
                y_fmt: fmt_tick,
                y_max: None,
                x_marker: None,
                x_spans: spans,
            }
            .render(),
        });
    }
    out
}

/// Every chart that applies to these runs, in report order (the registry,
/// [`crate::registry::CHART_KINDS`], says when each is drawn). `baseline`
/// indexes `runs`; `None` means the first run when there are two or more
/// ([`resolve_baseline`]).
pub fn charts(runs: &[StoredRun], baseline: Option<usize>) -> Vec<Chart> {
    charts_with(runs, baseline, &Vary::default(), &[])
}

/// [`charts`] with parameters under study (`--vary`) for the `relative`
/// chart's comparison, and the runs' designs predicted (the `predicted`
/// chart).
pub fn charts_with(
    runs: &[StoredRun],
    baseline: Option<usize>,
    vary: &Vary,
    predicted: &[crate::predicted::Predicted],
) -> Vec<Chart> {
    registry::draw_all(&registry::Input::new(runs, baseline, vary, predicted))
}

/// A run made by `storlab sim`, not measured.
pub fn is_simulated(r: &StoredRun) -> bool {
    r.report.target.kind == "simulation"
}

/// The simulated runs' throughput by phase, titled and hatched as such.
pub(crate) fn simulated_chart(sim: &[StoredRun]) -> Chart {
    let c = by_phase_chart(sim, false);
    let title = "Simulated throughput (storlab sim, not measured)";
    Chart {
        id: "simulated".into(),
        title: title.into(),
        svg: c.svg.replacen("Throughput by phase", title, 1).replacen(
            "One bar per phase of each run,",
            "Simulated by storlab sim (a model, not a measurement): one bar per simulated point,",
            1,
        ),
    }
}

/// One chart by id, for `--output-format svg|png`. When it cannot be drawn the
/// error says why ([`why_not`]) and lists the ids these runs do have.
pub fn chart(runs: &[StoredRun], baseline: Option<usize>, id: &str) -> Result<Chart, ReportError> {
    chart_with(runs, baseline, id, &Vary::default(), &[])
}

/// [`chart`] with parameters under study (`--vary`) and the runs' designs
/// predicted.
pub fn chart_with(
    runs: &[StoredRun],
    baseline: Option<usize>,
    id: &str,
    vary: &Vary,
    predicted: &[crate::predicted::Predicted],
) -> Result<Chart, ReportError> {
    registry::draw_one(&registry::Input::new(runs, baseline, vary, predicted), id)
}

/// Why the chart `id` is not among [`charts`] for these runs; `None` when
/// it is drawn, `id` names no chart kind, or its absence needs no note.
pub fn why_not(runs: &[StoredRun], baseline: Option<usize>, id: &str) -> Option<CannotDraw> {
    let vary = Vary::default();
    let input = registry::Input::new(runs, baseline, &vary, &[]);
    registry::why_not_drawn(&input, &registry::draw_all(&input), id)
}

/// Short description of a run for captions: `#3 enclosure=sas on stor01`.
pub fn run_caption(run: &StoredRun) -> String {
    let tags = tags_joined(&run.tags, ", ");
    if tags.is_empty() {
        format!("#{} on {}", run.id, run.report.host.hostname)
    } else {
        format!("#{} {} on {}", run.id, tags, run.report.host.hostname)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{all_runs, compare_runs};

    fn ids(c: &[Chart]) -> Vec<&str> {
        c.iter().map(|c| c.id.as_str()).collect()
    }

    /// Simulated runs (storlab sim) get a chart of their own, titled as
    /// such, and are left out of every measured chart (a jobs axis
    /// included); they were drawn among the measured bars and on the
    /// vs-numjobs axis as if they were jobs.
    #[test]
    fn simulated_runs_are_drawn_apart_and_marked() {
        let mut runs = all_runs();
        let measured = ids(&charts(&runs, Some(0))).len();
        let mut sim = runs[0].clone();
        sim.id = 99;
        sim.report.target.kind = "simulation".into();
        sim.tags.insert("scenario".into(), "sim-only-label".into());
        runs.push(sim);
        let c = charts(&runs, Some(0));
        assert_eq!(c.len(), measured + 1, "{:?}", ids(&c));
        let s = c
            .iter()
            .find(|c| c.id == "simulated")
            .expect("a simulated chart");
        assert!(
            s.svg
                .contains("Simulated throughput (storlab sim, not measured)")
        );
        assert!(s.svg.contains("#99"), "the simulated run's bars");
        for other in c.iter().filter(|c| c.id != "simulated") {
            assert!(
                !other.svg.contains("sim-only-label"),
                "{} has the simulated run",
                other.id
            );
        }
    }

    #[test]
    fn all_chart_kinds_appear_for_the_full_fixture() {
        let runs = all_runs();
        let c = charts(&runs, Some(0));
        assert_eq!(
            ids(&c),
            vec![
                "throughput",
                "iops",
                "relative",
                "latency",
                "vs-bs",
                "vs-numjobs",
                "vs-size",
                "cache",
                "timeline-12",
                "util-12"
            ]
        );
        for ch in &c {
            assert!(ch.svg.contains("<title>"), "{} has no title", ch.id);
            assert!(
                ch.svg.matches("<text").count() > 5,
                "{} has few labels",
                ch.id
            );
        }
    }

    #[test]
    fn sweeps_become_lines_over_their_parameter() {
        let runs = all_runs();
        let bs = chart(&runs, None, "vs-bs").unwrap();
        // The four block sizes of the sweep are the ticks, and the line is
        // named by its pattern (the `bs=` tags restate x and are dropped).
        for t in [">4 KiB<", ">64 KiB<", ">1 MiB<", ">4 MiB<"] {
            assert!(bs.svg.contains(t), "missing {t}");
        }
        assert!(bs.svg.contains("sweep=bs"), "{}", bs.svg);
        assert!(!bs.svg.contains("bs=4k"));
        let jobs = chart(&runs, None, "vs-numjobs").unwrap();
        assert_eq!(jobs.svg.matches("<polyline").count(), 1, "{}", jobs.svg);
        assert_eq!(jobs.svg.matches("<circle").count(), 3);
    }

    /// A line joins phases that differ in x alone: a rate-capped point or
    /// one from another engine or host is not on the uncapped line.
    #[test]
    fn lines_do_not_join_points_of_other_configurations() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        let at = |id: i64, qd: u32, mb: f64| {
            let mut ph = phase(&Spec::new("rr", RwMode::RandRead, 4096, mb));
            ph.params.iodepth = qd;
            run(id, &[], vec![ph])
        };
        let mut runs = vec![at(1, 1, 50.0), at(2, 4, 150.0), at(3, 32, 8.0)];
        runs[2].report.phases[0].params.rate_iops = 2000;
        // The capped QD 32 point is alone in its configuration: one line of two points.
        let c = chart(&runs, None, "vs-iodepth").unwrap();
        assert_eq!(c.svg.matches("<polyline").count(), 1, "{}", c.svg);
        assert_eq!(c.svg.matches("<circle").count(), 2, "{}", c.svg);
        // Another host's QD 32: not the same line either.
        runs[2].report.phases[0].params.rate_iops = 0;
        runs[2].report.host.hostname = "other".into();
        let c = chart(&runs, None, "vs-iodepth").unwrap();
        assert_eq!(c.svg.matches("<circle").count(), 2, "{}", c.svg);
        // The same host and no cap: three points on one line.
        runs[2].report.host.hostname = runs[0].report.host.hostname.clone();
        let c = chart(&runs, None, "vs-iodepth").unwrap();
        assert_eq!(c.svg.matches("<circle").count(), 3, "{}", c.svg);
    }

    #[test]
    fn a_two_option_sweep_gives_one_line_per_second_value() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        let mut runs = Vec::new();
        let mut n = 0;
        for (bs, bs_tag) in [(4096u64, "4k"), (65536, "64k")] {
            for jobs in [1u32, 2] {
                let params = format!("bs={bs_tag},numjobs={jobs}");
                let point = n.to_string();
                let tags = [
                    ("sweep", "sw-1"),
                    ("sweep_point", point.as_str()),
                    ("sweep_params", params.as_str()),
                ];
                let mb = 100.0 * f64::from(jobs) * bs as f64 / 4096.0;
                let ph = phase(&Spec::new("1-read", RwMode::Read, bs, mb).jobs(jobs));
                runs.push(run(n + 1, &tags, vec![ph]));
                n += 1;
            }
        }
        let c = chart(&runs, None, "vs-bs").unwrap();
        assert_eq!(c.svg.matches("<polyline").count(), 2, "{}", c.svg);
        assert!(!c.svg.contains("sweep_point"), "{}", c.svg);
    }

    #[test]
    fn relative_bars_of_differing_configurations_are_not_judged() {
        let mut runs = compare_runs();
        for p in &mut runs[2].report.phases {
            p.params.iodepth = 64;
        }
        let c = chart(&runs, Some(0), "relative").unwrap();
        assert!(
            c.svg
                .contains("not judged: configuration differs (iodepth)"),
            "{}",
            c.svg
        );
        // The SAS run's +112 % is drawn pale, not as a win.
        assert!(c.svg.matches("fill-opacity=\"0.3\"").count() >= 3);
    }

    #[test]
    fn relative_bars_mark_noise() {
        let runs = compare_runs();
        let c = chart(&runs, Some(0), "relative").unwrap();
        assert!(c.title.contains("#1 enclosure=scsi"));
        assert!(c.svg.contains(">+112 %<"), "{}", c.svg);
        assert!(c.svg.contains("within noise"));
        assert!(c.svg.contains("fill-opacity=\"0.3\""));
    }

    /// A phase of two groups gets the `groups` chart: a bar per group and
    /// one for the whole phase, the shares in the labels.
    #[test]
    fn groups_get_their_chart() {
        use storlab_types::{GroupResult, PhaseGroups};
        let mut runs = compare_runs();
        assert!(charts(&runs, None).iter().all(|c| c.id != "groups"));
        let e = chart(&runs, None, "groups").unwrap_err().to_string();
        assert!(e.contains("no phase ran job groups"), "{e}");
        let p = &mut runs[0].report.phases[0];
        let half = |name: &str| GroupResult {
            name: name.into(),
            total: storlab_types::DirStats {
                bytes: p.total.bytes / 2,
                bw_bytes_per_s: p.total.bw_bytes_per_s / 2.0,
                ..Default::default()
            },
            ..Default::default()
        };
        p.groups = Some(PhaseGroups {
            reporting: Vec::new(),
            overlap: 0.96,
            all_moving_ns: 1,
            groups: vec![half("dd-read"), half("dd-write")],
        });
        let c = chart(&runs, None, "groups").unwrap();
        for text in [
            ">dd-read<",
            ">dd-write<",
            ">all groups<",
            "96 % together",
            ">50 %<",
        ] {
            assert!(c.svg.contains(text), "{text} missing: {}", c.svg);
        }
    }

    #[test]
    fn charts_that_cannot_be_drawn_say_why() {
        let runs = compare_runs();
        let e = chart(&runs, None, "timeline-1").unwrap_err().to_string();
        assert!(
            e.contains("no device timeline") && e.contains("--monitor"),
            "{e}"
        );
        let e = chart(&runs, None, "vs-iodepth").unwrap_err().to_string();
        assert!(e.contains("equal in everything but iodepth"), "{e}");
        let e = chart(&runs, None, "cache").unwrap_err().to_string();
        assert!(e.contains("cache mode and file size"), "{e}");
        let e = chart(&runs[..1], None, "relative").unwrap_err().to_string();
        assert!(e.contains("baseline"), "{e}");
        assert!(why_not(&runs, None, "throughput").is_none());
        assert!(why_not(&runs, None, "pie").is_none());
    }

    #[test]
    fn missing_chart_names_the_alternatives() {
        let runs = compare_runs();
        let e = chart(&runs, None, "timeline-1").unwrap_err().to_string();
        assert!(e.contains("timeline-1") && e.contains("throughput"), "{e}");
        assert!(chart(&[], None, "throughput").is_err());
        assert!(charts(&runs[..1], None).iter().all(|c| c.id != "relative"));
    }

    #[test]
    fn repeated_phase_names_are_all_drawn() {
        let mut runs = compare_runs();
        let again = runs[0].report.phases[1].clone();
        runs[0].report.phases.push(again);
        let c = chart(&runs, None, "throughput").unwrap();
        assert!(c.svg.contains(" · seqread (2)</text>"), "{}", c.svg);
        // 3 runs × 3 phases + the repeat, each a bar with a tooltip; one
        // legend swatch per pattern and block size (3), and the background.
        assert_eq!(c.svg.matches("<rect").count() - 1 - 3, 10);
        for k in [">write 1 MiB<", ">read 1 MiB<", ">randread 4 KiB<"] {
            assert!(c.svg.contains(k), "legend {k}");
        }
    }

    #[test]
    fn timeline_shows_devices_and_once_counted_totals() {
        let runs = all_runs();
        let c = chart(&runs, None, "timeline-12").unwrap();
        for name in [
            "sdb read",
            "sdc write",
            "leaf total read",
            "leaf total write",
        ] {
            assert!(c.svg.contains(&format!(">{name}</text>")), "missing {name}");
        }
        // 2 devices × read/write, the layer total's read/write, and the
        // application's own read and write MB/s (the mixed phase) beside them.
        assert_eq!(c.svg.matches("<polyline").count(), 8);
        for name in ["storlab read (app)", "storlab write (app)"] {
            assert!(c.svg.contains(&format!(">{name}</text>")), "missing {name}");
        }
        // The phase's measured window is a labelled band.
        assert_eq!(c.svg.matches("fill-opacity=\"0.07\"").count(), 1);
        let run = &runs[11];
        let spans = phase_spans(run, run.report.monitor.as_ref().unwrap());
        assert_eq!(spans.len(), 1);
        let (a, b, _) = &spans[0];
        let secs = run.report.phases[0].elapsed_ns as f64 / 1e9;
        assert!((b - a - secs).abs() < 1e-6, "{spans:?}");
        let u = chart(&runs, None, "util-12").unwrap();
        assert_eq!(u.svg.matches("<polyline").count(), 2);
        assert!(u.svg.contains(">100</text>"), "util axis ends at 100 %");
    }

    #[test]
    fn single_device_timeline_has_no_redundant_total() {
        let mut runs = all_runs();
        let m = runs[11].report.monitor.as_mut().unwrap();
        m.samples.retain(|s| s.device == "sdb");
        m.devices.retain(|d| d == "sdb");
        let c = chart(&runs, None, "timeline-12").unwrap();
        // sdb read and write, and the application's read and write.
        assert_eq!(c.svg.matches("<polyline").count(), 4);
        assert!(!c.svg.contains("total"));
    }

    #[test]
    fn cache_pairs_only_phases_equal_apart_from_the_cache() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        // QD 1 buffered small file vs QD 32 direct: nothing to pair.
        let a = run(
            1,
            &[],
            vec![phase(
                &Spec::new("small", RwMode::RandRead, 4096, 900.0)
                    .qd(1)
                    .cache(CacheMode::Warm, true),
            )],
        );
        let b = run(
            2,
            &[],
            vec![phase(
                &Spec::new("big", RwMode::RandRead, 4096, 90.0)
                    .qd(32)
                    .cache(CacheMode::Direct, false),
            )],
        );
        let runs = vec![a.clone(), b];
        assert!(cache_pairs(&runs).is_empty());
        assert!(charts(&runs, None).iter().all(|c| c.id != "cache"));
        // The same depth out of cache pairs with it.
        let c = run(
            3,
            &[],
            vec![phase(
                &Spec::new("big", RwMode::RandRead, 4096, 100.0)
                    .qd(1)
                    .cache(CacheMode::Direct, false),
            )],
        );
        let pairs = cache_pairs(&[a, c]);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].0, "#1 #3 · randread 4 KiB QD1");
        assert!((pairs[0].1[0] - 900.0).abs() < 0.01 && (pairs[0].2[0] - 100.0).abs() < 0.01);
    }

    /// Run 12's phase with its own figures per second: 30 points, the last
    /// ten after an SLC-cache-like cliff at a third of the rate.
    fn with_series() -> Vec<StoredRun> {
        let mut runs = all_runs();
        let p = &mut runs[11].report.phases[0];
        let mut points = Vec::new();
        for i in 1..=30u64 {
            let f = if i > 20 { 1.0 / 3.0 } else { 1.0 };
            let mut pt = storlab_types::SeriesPoint {
                t_ns: i * 1_000_000_000,
                span_ns: 1_000_000_000,
                ..Default::default()
            };
            pt.read.bw_bytes_per_s = p.read.bw_bytes_per_s * f;
            pt.write.bw_bytes_per_s = p.write.bw_bytes_per_s * f;
            pt.total.lat_ns = p.total.lat_ns.map(|mut l| {
                l.p50 = (l.p50 as f64 / f) as u64;
                l
            });
            points.push(pt);
        }
        p.series = Some(storlab_types::PhaseSeries {
            interval_ns: 1_000_000_000,
            points,
            ..Default::default()
        });
        runs
    }

    #[test]
    fn the_applications_own_series_is_charted_and_beside_the_devices() {
        let runs = with_series();
        let ids: Vec<String> = charts(&runs, None).into_iter().map(|c| c.id).collect();
        assert!(ids.contains(&"app-12".to_string()) && ids.contains(&"applat-12".to_string()));
        let app = chart(&runs, None, "app-12").unwrap();
        // One point per interval and direction, each with a tooltip.
        assert_eq!(app.svg.matches("<title>read:").count(), 30, "{}", app.svg);
        assert_eq!(app.svg.matches("<title>write:").count(), 30);
        assert!(app.svg.contains("fill-opacity=\"0.07\""), "phase band");
        let lat = chart(&runs, None, "applat-12").unwrap();
        assert_eq!(lat.svg.matches("<title>p99.9:").count(), 30);
        // The device timeline draws the same 30 points as the app's line.
        let tl = chart(&runs, None, "timeline-12").unwrap();
        assert_eq!(tl.svg.matches("<title>storlab read (app):").count(), 30);
        // Without a series it says why.
        let e = chart(&all_runs(), None, "app-12").unwrap_err().to_string();
        assert!(e.contains("no per-interval series"), "{e}");
    }

    #[test]
    fn baseline_resolution() {
        let runs = compare_runs();
        assert_eq!(resolve_baseline(&runs, None), Some(0));
        assert_eq!(resolve_baseline(&runs, Some(2)), Some(2));
        assert_eq!(resolve_baseline(&runs, Some(7)), None);
        assert_eq!(resolve_baseline(&runs[..1], None), None);
    }
}
