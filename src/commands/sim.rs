//! `storlab sim`: simulate a storage architecture described in a TOML
//! scenario (crates/sim), optionally over `--vary` values; print a table or
//! JSON, draw `--chart`, and save the points in the store as a run of kind
//! `sim` so `compare` and `report` show them beside measured runs.

use super::common::{DbArgs, RecordArgs, write_output};
use clap::{Args, ValueEnum};
use std::collections::BTreeMap;
use std::path::PathBuf;
use storlab_report::svg::{LineChart, LineSeries, XScale, fmt_tick};
use storlab_sim::{Point, Scenario, SimCatalog, Solver, SweepPoint, parse_vary, sweep};
use storlab_types::{
    BenchReport, CacheMode, CacheReport, DirStats, EngineKind, FileLayout, HostInfo, LatencyStats,
    PhaseParams, PhaseResult, RwMode, TargetInfo, ToolInfo,
};

/// Version of the JSON document `storlab sim --format json` prints.
pub const SIM_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimSolver {
    /// Bottleneck bounds plus mean value analysis: instant, for large sweeps
    Analytic,
    /// Discrete-event simulation of every request (seeded; latency percentiles)
    Des,
    /// Both, side by side
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimFormat {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct SimCommand {
    /// Scenario file (TOML): clients, network, movers, file system, arrays, workload (see docs/SIM.md
    /// and examples/sim/)
    #[arg(value_name = "SCENARIO")]
    file: PathBuf,
    /// Sweep one scenario value: clients=1,2,4 or clients=1..10000 (doubling) or clients=1..1000/1000
    /// (evenly spaced); keys: clients, movers, arrays, ports, cache, stripe_count, file_size, bs,
    /// iodepth, or any dotted path such as array.cache_rate
    #[arg(long, value_name = "KEY=VALUES")]
    vary: Option<String>,
    /// Which solver answers
    #[arg(long, value_enum, default_value_t = SimSolver::Analytic)]
    solver: SimSolver,
    /// Extra hardware catalog (TOML, plan's format; same name replaces a built-in entry); repeatable
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    /// Output format (--format is accepted too)
    #[arg(long = "output-format", alias = "format", value_enum, default_value_t = SimFormat::Table)]
    format: SimFormat,
    /// Shorthand for --output-format json
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Draw aggregate throughput vs the varied value, with the binding component marked where it
    /// changes (.svg or .png)
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
    /// Write --chart over an existing file storlab did not write
    #[arg(long)]
    force: bool,
    /// Override the scenario's seed (DES)
    #[arg(long)]
    seed: Option<u64>,
    /// Do not save the simulated points in the results database
    #[arg(long)]
    no_save: bool,
    #[command(flatten)]
    record: RecordArgs,
    #[command(flatten)]
    db: DbArgs,
}

impl SimCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let name = self.file.display().to_string();
        let text = super::common::read_input(&self.file, "scenario")?;
        let mut cat = SimCatalog::builtin();
        for c in &self.catalog {
            let t = super::common::read_input(c, "catalog")?;
            cat.extend(&c.display().to_string(), &t)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let mut scenario = Scenario::parse(&name, &text)?;
        if let Some(seed) = self.seed {
            scenario = scenario.with("seed", &seed.to_string())?;
        }
        let vary = self.vary.as_deref().map(parse_vary).transpose()?;
        let solver = match self.solver {
            SimSolver::Analytic => Solver::Analytic,
            SimSolver::Des => Solver::Des,
            SimSolver::Both => Solver::Both,
        };
        // The chart's path follows the output rules before anything runs.
        if let Some(path) = &self.chart {
            crate::commands::sweep::chart::check_path(path, &self.db.db, self.force)?;
        }
        let started = storlab_types::time::now_rfc3339();
        let points = sweep(&scenario, vary.as_ref(), &cat, solver)?;
        let finished = storlab_types::time::now_rfc3339();
        let key = vary.as_ref().map(|v| v.key.clone());

        match if self.json {
            SimFormat::Json
        } else {
            self.format
        } {
            SimFormat::Table => crate::output::print(&table(&points, key.as_deref()))?,
            SimFormat::Json => {
                let doc = serde_json::json!({
                    "schema_version": SIM_SCHEMA_VERSION,
                    "kind": "sim",
                    "scenario": points.first().map(|p| p.resolved.name.clone()),
                    "file": name,
                    "solver": solver,
                    "vary": key,
                    "points": points,
                });
                crate::output::print_json(&doc)?;
            }
        }
        if !self.no_save {
            let store = self.db.open()?;
            let mut tags = self.record.tag_map()?;
            if let Some(p) = points.first() {
                tags.entry("sim.scenario".into())
                    .or_insert_with(|| p.resolved.name.clone());
            }
            if let Some(k) = &key {
                tags.entry("sim.vary".into()).or_insert_with(|| k.clone());
            }
            let report = record(&points, &name, started, finished);
            let id = store.save_run("sim", &report, &tags, self.record.note())?;
            eprintln!(
                "storlab: saved as run {id} (kind sim) in {}",
                store.path().display()
            );
        }
        // Drawn after the run is stored: a chart that cannot be written
        // loses no result.
        if let Some(path) = &self.chart {
            let svg = chart(&points, key.as_deref().unwrap_or("clients"));
            let png = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("png"));
            let bytes = if png {
                storlab_report::svg_to_png(&svg, 2.0)?
            } else {
                svg.into_bytes()
            };
            write_output(path, &bytes)?;
            eprintln!("storlab: chart written to {}", path.display());
        }
        Ok(crate::Outcome::Ok)
    }
}

fn mb(v: f64) -> String {
    format!("{:.1}", v / 1e6)
}

fn solved(p: &SweepPoint) -> Vec<&Point> {
    p.analytic.iter().chain(p.des.iter()).collect()
}

/// The table: one row per point and solver; a column per component.
fn table(points: &[SweepPoint], key: Option<&str>) -> String {
    let mut comps: Vec<String> = Vec::new();
    for c in storlab_sim::model::COMPONENTS {
        if points
            .iter()
            .flat_map(solved)
            .any(|s| s.utilisation.iter().any(|u| u.component == c))
        {
            comps.push(c.to_string());
        }
    }
    let des = points.iter().any(|p| p.des.is_some());
    let mut t = crate::commands::common::list_table();
    let mut head: Vec<String> = Vec::new();
    if let Some(k) = key {
        head.push(k.to_string());
    }
    let show_clients = key != Some("clients");
    if show_clients {
        head.push("clients".into());
    }
    head.extend(
        ["solver", "aggregate MB/s", "per client MB/s", "binding"]
            .iter()
            .map(|s| s.to_string()),
    );
    head.push("mean lat ms".into());
    if des {
        head.push("p99 ms".into());
        head.push("client p99 ms (best-worst)".into());
    }
    head.extend(comps.iter().map(|c| format!("{c} %")));
    t.set_header(head);
    for p in points {
        for s in solved(p) {
            let mut row: Vec<String> = Vec::new();
            if key.is_some() {
                row.push(p.value.clone().unwrap_or_default());
            }
            if show_clients {
                row.push(s.clients.to_string());
            }
            row.push(s.solver.clone());
            // An upper bound (a part without a published limit could bind
            // below it) is shown as one.
            let le = if s.bound { "≤ " } else { "" };
            row.push(format!("{le}{}", mb(s.aggregate_bytes_per_s)));
            row.push(format!("{le}{:.2}", s.per_client_bytes_per_s / 1e6));
            row.push(s.binding.clone());
            row.push(format!("{:.2}", s.mean_latency_ns / 1e6));
            if des {
                let ms = |v: u64| format!("{:.2}", v as f64 / 1e6);
                row.push(s.p99_latency_ns.map_or("-".into(), ms));
                row.push(match (s.best_client_p99_ns, s.worst_client_p99_ns) {
                    (Some(b), Some(w)) => format!("{}-{}", ms(b), ms(w)),
                    _ => "-".into(),
                });
            }
            for c in &comps {
                row.push(
                    s.utilisation
                        .iter()
                        .find(|u| &u.component == c)
                        .map_or("-".into(), |u| format!("{:.0}", u.pct)),
                );
            }
            t.add_row(row);
        }
    }
    let mut out = String::new();
    if let Some(p) = points.first() {
        out += &format!(
            "{}: {} {} {} × {} (MB = 10^6 bytes; utilisation of the busiest instance)\n",
            p.resolved.name,
            p.resolved.workload.pattern.as_str(),
            match p.resolved.workload.sharing {
                storlab_sim::scenario::Sharing::NN => "N-N",
                storlab_sim::scenario::Sharing::N1 => "N-1",
            },
            storlab_types::format_bytes(p.resolved.workload.file_size_bytes),
            storlab_types::format_bytes(p.resolved.workload.bs_bytes),
        );
    }
    out += &t.to_string();
    out.push('\n');
    let mut unknowns: Vec<&String> = points
        .iter()
        .flat_map(solved)
        .flat_map(|s| s.unknowns.iter())
        .collect();
    unknowns.sort();
    unknowns.dedup();
    for u in unknowns {
        out += &format!("upper bound only (≤): {u}\n");
    }
    out
}

/// The x value of a point: the varied value as a number (sizes in bytes),
/// or its position.
fn x_of(p: &SweepPoint, i: usize) -> f64 {
    let v = p.value.as_deref().unwrap_or("");
    v.parse::<f64>()
        .ok()
        .or_else(|| storlab_types::parse_size(v).ok().map(|b| b as f64))
        .unwrap_or_else(|| {
            if p.value.is_none() {
                f64::from(p.resolved.clients)
            } else {
                (i + 1) as f64
            }
        })
}

/// Throughput vs the varied value; each solver's line is cut where its
/// binding component changes, each piece named for what binds it.
fn chart(points: &[SweepPoint], key: &str) -> String {
    let mut series: Vec<LineSeries> = Vec::new();
    let mut marker: Option<(f64, String)> = None;
    for which in ["analytic", "des"] {
        let mut cur: Option<LineSeries> = None;
        let mut last_binding: Option<String> = None;
        for (i, p) in points.iter().enumerate() {
            let s = if which == "analytic" {
                p.analytic.as_ref()
            } else {
                p.des.as_ref()
            };
            let Some(s) = s else { continue };
            let x = x_of(p, i);
            let y = s.aggregate_bytes_per_s / 1e6;
            if last_binding.as_deref() != Some(s.binding.as_str()) {
                if let Some(prev) = &last_binding
                    && marker.is_none()
                {
                    marker = Some((x, format!("{prev} → {}", s.binding)));
                }
                // The new piece starts from the last point of the one
                // before, so the line stays continuous.
                let joint = cur.as_ref().and_then(|c| c.points.last().copied());
                series.extend(cur.take());
                cur = Some(LineSeries {
                    name: format!("{which}: bound by {}", s.binding),
                    points: joint.into_iter().collect(),
                });
                last_binding = Some(s.binding.clone());
            }
            if let Some(c) = cur.as_mut() {
                c.points.push((x, y));
            }
        }
        series.extend(cur);
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    let log = lo > 0.0 && hi / lo >= 8.0;
    // Values written as sizes (file_size=64MiB,...) get size ticks.
    let sizes = points.iter().any(|p| {
        p.value
            .as_deref()
            .is_some_and(|v| v.parse::<f64>().is_err() && storlab_types::parse_size(v).is_ok())
    });
    let name = points
        .first()
        .map_or_else(String::new, |p| p.resolved.name.clone());
    LineChart {
        title: format!("Simulated throughput vs {key}: {name}"),
        subtitle: Some(
            "storlab sim (simulated, not measured); each line piece is named for the component that binds it"
                .into(),
        ),
        x_label: if log { format!("{key} (log scale)") } else { key.to_string() },
        y_label: "Aggregate throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        x_scale: if log { XScale::Log2 } else { XScale::Linear },
        x_fmt: if sizes {
            |v| storlab_types::format_bytes(v as u64)
        } else {
            fmt_tick
        },
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: marker,
        x_spans: Vec::new(),
    }
    .render()
}

/// The store's record: one phase per point and solver, with `numjobs` =
/// clients so `report`'s vs-numjobs chart puts simulated beside measured.
fn record(points: &[SweepPoint], file: &str, started: String, finished: String) -> BenchReport {
    let mut phases = Vec::new();
    for p in points {
        for s in solved(p) {
            phases.push(phase(p, s, &started));
        }
    }
    let name = points
        .first()
        .map_or_else(|| "scenario".into(), |p| p.resolved.name.clone());
    BenchReport {
        schema_version: storlab_types::SCHEMA_VERSION,
        tool: ToolInfo {
            name: "storlab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: crate::command_line(),
        started_at: started,
        finished_at: finished,
        interrupted: false,
        stop_reason: None,
        host: HostInfo {
            hostname: format!("sim:{name}"),
            os: "simulation".into(),
            ..HostInfo::default()
        },
        target: TargetInfo {
            path: file.to_string(),
            kind: "simulation".into(),
            ..TargetInfo::default()
        },
        phases,
        warnings: vec!["simulated by storlab sim, not measured".into()],
        monitor: None,
        repeat: None,
    }
}

fn phase(p: &SweepPoint, s: &Point, started: &str) -> PhaseResult {
    let r = &p.resolved;
    let w = &r.workload;
    let rw = match w.pattern {
        storlab_sim::scenario::Pattern::Read => RwMode::Read,
        storlab_sim::scenario::Pattern::Write => RwMode::Write,
        storlab_sim::scenario::Pattern::RandRead => RwMode::RandRead,
        storlab_sim::scenario::Pattern::RandWrite => RwMode::RandWrite,
    };
    let per_client = match w.sharing {
        storlab_sim::scenario::Sharing::NN => w.file_size_bytes,
        storlab_sim::scenario::Sharing::N1 => w.file_size_bytes / u64::from(r.clients),
    };
    let total_bytes = per_client * u64::from(r.clients);
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
    let (read, write) = if rw.writes() {
        (DirStats::default(), stats)
    } else {
        (stats, DirStats::default())
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
        params: PhaseParams {
            name: label,
            rw,
            rwmixread: if rw.writes() { 0 } else { 100 },
            bs: vec![storlab_types::BsWeight {
                bs_bytes: w.bs_bytes,
                weight: 100,
            }],
            size_bytes: per_client,
            numjobs: r.clients,
            iodepth: w.iodepth,
            engine: EngineKind::Null,
            cache: if w.warm {
                CacheMode::Warm
            } else {
                CacheMode::Direct
            },
            layout: match w.sharing {
                storlab_sim::scenario::Sharing::NN => FileLayout::PerJob,
                storlab_sim::scenario::Sharing::N1 => FileLayout::SharedRegions,
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
    }
}
