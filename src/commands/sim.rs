//! `storlab sim`: simulate a storage architecture described in a TOML
//! scenario (crates/sim), optionally over `--vary` values; print a table or
//! JSON, draw `--chart`, and save the points in the store as a run of kind
//! `sim` so `compare` and `report` show them beside measured runs.

use super::common::{DbArgs, RecordArgs};
use super::outfile::{chart_is_png, check_chart_path};
use super::outfmt::{OutputArgs, TableFormat};
use crate::output::{Rendered, Reply};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use storlab_sim::{Scenario, SimCatalog, Solver, parse_vary, sweep};
use storlab_types::RunKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimSolver {
    /// Bottleneck bounds plus mean value analysis: instant, for large sweeps
    Analytic,
    /// Discrete-event simulation of every request (seeded; latency percentiles)
    Des,
    /// Both, side by side
    Both,
}

#[derive(Args, Debug)]
pub struct SimCommand {
    /// Scenario file (TOML): clients, network, movers, file system, arrays, workload (see docs/SIM.md
    /// and examples/sim/)
    #[arg(value_name = "SCENARIO")]
    file: PathBuf,
    // The keys come from the parameter registry (storlab_sim::vary_help).
    #[arg(long, value_name = "KEY=VALUES", help = storlab_sim::scenario::vary_help())]
    vary: Option<String>,
    /// Which solver answers
    #[arg(long, value_enum, default_value_t = SimSolver::Analytic)]
    solver: SimSolver,
    /// Extra hardware catalog (TOML, plan's format; same name replaces a built-in entry); repeatable
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[command(flatten)]
    out: OutputArgs<TableFormat>,
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
    pub fn execute(self) -> anyhow::Result<Reply> {
        let name = self.file.display().to_string();
        let text = super::common::read_input(&self.file, "scenario")?;
        let cat = SimCatalog::with_files(&self.catalog, |c| {
            super::common::read_input(c, "catalog").map_err(|e| format!("{e:#}"))
        })?;
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
        let chart_permit = match &self.chart {
            Some(path) => Some(check_chart_path(path, &self.db.db, self.force)?),
            None => None,
        };
        let started = storlab_types::time::now_rfc3339();
        let points = sweep(&scenario, vary.as_ref(), &cat, solver)?;
        let finished = storlab_types::time::now_rfc3339();
        let key = vary.as_ref().map(|v| v.key.clone());
        // The listing (`storlab_print::sim`) or the JSON document.
        let doc = Rendered::new(
            storlab_print::sim::render(&points, key.as_deref()),
            crate::output::json_text(&storlab_sim::document(
                &points,
                &name,
                solver,
                key.as_deref(),
            ))?,
        );
        if !self.no_save {
            let store = self.db.open()?;
            let mut tags = self.record.tag_map()?;
            for (k, v) in storlab_sim::record::tags(&points, key.as_deref()) {
                tags.entry(k).or_insert(v);
            }
            let command_line = storlab_types::command_line();
            let report = storlab_sim::record(&points, &name, command_line, started, finished);
            let id = store.save_run(RunKind::Sim, &report, &tags, self.record.note())?;
            eprintln!(
                "storlab: saved as run {id} (kind sim) in {}",
                store.path().display()
            );
        }
        // Drawn after the run is stored: a chart that cannot be written
        // loses no result. The report crate's chart registry draws it.
        if let Some(permit) = &chart_permit {
            let path = permit.path();
            let key = key.as_deref().unwrap_or("clients");
            let svg = storlab_report::registry::sim_chart(&points, key);
            permit.write(&storlab_report::chart_file(svg, chart_is_png(path)?)?)?;
            eprintln!("storlab: chart written to {}", path.display());
        }
        Ok(Reply::doc(doc, self.out.rendering()))
    }
}
