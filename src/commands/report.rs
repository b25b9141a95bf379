//! `storlab report`: one self-contained HTML file with the runs' parameters,
//! figures, comparison and charts, or one chart as SVG or PNG.

use super::common::{DbArgs, OutputKind, RunArgs, check_output_path, load_baseline, parse_run_arg};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use storlab_store::RunSelector;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// The whole report: inline CSS and SVG, no script, no network needed to view it
    Html,
    /// One chart (--chart) as SVG (a chart that cannot be drawn for the runs says why)
    Svg,
    /// One chart (--chart) as PNG
    Png,
}

#[derive(Args, Debug)]
pub struct ReportCommand {
    #[command(flatten)]
    runs: RunArgs,
    /// Reference run for relative bars and the comparison [default: the first run]
    #[arg(long, value_name = "RUN", value_parser = parse_run_arg)]
    baseline: Option<RunSelector>,
    /// Output file [default: report.html, or chart-<ID>.svg / .png]
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// What to write (--format is the older spelling) [default: from -o's extension (.svg, .png,
    /// .html), else html]
    #[arg(long = "output-format", alias = "format", value_enum)]
    format: Option<ReportFormat>,
    /// Parameter(s) under study for the comparison and the relative chart, e.g. iodepth, bs,
    /// device (comma-separated or repeated): phases that differ there are paired and judged
    #[arg(long, value_name = "PARAM", value_parser = storlab_configdiff::Vary::parse)]
    vary: Vec<storlab_configdiff::Vary>,
    // The list of ids comes from the chart registry.
    #[arg(long, value_name = "ID", default_value = "throughput",
          help = storlab_report::registry::chart_help())]
    chart: String,
    /// PNG pixel scale (2 gives a crisp image for documents and slides)
    #[arg(long, default_value_t = 2.0)]
    scale: f32,
    /// Hold every run against this design (storlab plan layout's arguments, e.g.
    /// "R60/10/20 --drive exos-x18-18tb"), overriding the design a run was tagged with
    /// (bench --design); runs with a design get a "Predicted vs measured" section
    #[arg(long, value_name = "PLAN")]
    design: Option<String>,
    /// Overwrite an existing output file that is not storlab's earlier output of this format (never
    /// a database)
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    db: DbArgs,
}

impl ReportCommand {
    /// The format asked for, else the one `-o`'s extension names
    /// (`x.svg` writes that chart, `x.png` rasterises it), else HTML.
    fn format(&self) -> ReportFormat {
        let ext = self
            .output
            .as_ref()
            .and_then(|p| p.extension())
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let by_ext = match ext.as_deref() {
            Some("svg") => Some(ReportFormat::Svg),
            Some("png") => Some(ReportFormat::Png),
            _ => None,
        };
        self.format.or(by_ext).unwrap_or(ReportFormat::Html)
    }

    pub fn execute(mut self) -> anyhow::Result<crate::Outcome> {
        let format = self.format();
        self.format = Some(format);
        // A design given here is checked before anything is read.
        let given = match &self.design {
            Some(d) => Some((
                d.as_str(),
                storlab_plan::design_from_spec(d, |p| {
                    super::common::read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
                })?,
            )),
            None => None,
        };
        let kind = match format {
            ReportFormat::Html => OutputKind::HtmlReport,
            ReportFormat::Svg => OutputKind::SvgChart,
            ReportFormat::Png => OutputKind::PngChart,
        };
        // A file named with -o is checked before anything is read; the
        // default name (which depends on the chart) below.
        let named = match &self.output {
            Some(path) => Some(check_output_path(path, &self.db.db, self.force, kind)?),
            None => None,
        };
        let store = self.db.open_existing()?;
        let mut runs = self.runs.load(&store)?;
        let baseline = match &self.baseline {
            None => None,
            Some(sel) => {
                let (base, note) = load_baseline(&store, sel)?;
                if let Some(n) = note {
                    eprintln!("{n}");
                }
                // The baseline is part of the report: add it first if it
                // was not among the runs named.
                Some(match runs.iter().position(|r| r.id == base.id) {
                    Some(i) => i,
                    None => {
                        runs.insert(0, base);
                        0
                    }
                })
            }
        };
        let (vary, implied) =
            storlab_configdiff::implied::vary_with_implied(&self.vary, runs.iter());
        if let Some(n) = implied {
            eprintln!("{n}");
        }
        vary.check_against(runs.iter())?;
        // Designs are evaluated where they are shown: the HTML report and
        // the `predicted` chart.
        let predicted = if format == ReportFormat::Html || self.chart == "predicted" {
            predicted(&runs, given.as_ref())
        } else {
            Vec::new()
        };
        let (bytes, path, what) = match format {
            ReportFormat::Html => {
                let html = storlab_report::html_report_full(&runs, baseline, &vary, &predicted);
                let charts = storlab_report::charts_with(&runs, baseline, &vary, &predicted).len();
                (
                    html.into_bytes(),
                    self.output.unwrap_or_else(|| "report.html".into()),
                    format!("{} runs, {charts} charts", runs.len()),
                )
            }
            ReportFormat::Svg | ReportFormat::Png => {
                let chart =
                    storlab_report::chart_with(&runs, baseline, &self.chart, &vary, &predicted)?;
                let ext = if format == ReportFormat::Svg {
                    "svg"
                } else {
                    "png"
                };
                let bytes = if format == ReportFormat::Svg {
                    chart.svg.into_bytes()
                } else {
                    storlab_report::svg_to_png(&chart.svg, self.scale)?
                };
                (
                    bytes,
                    self.output
                        .unwrap_or_else(|| format!("chart-{}.{ext}", chart.id).into()),
                    format!("chart '{}': {}", chart.id, chart.title),
                )
            }
        };
        let permit = match named {
            Some(permit) => permit,
            None => check_output_path(&path, &self.db.db, self.force, kind)?,
        };
        permit.write(&bytes)?;
        crate::output::print(&format!("wrote {} ({what})\n", path.display()))?;
        Ok(crate::Outcome::Ok)
    }
}

/// Each run that carries a design (tag `planned_as=...`, or `given` for all),
/// its phases predicted by `storlab plan`'s model. The given design was
/// checked already; a stored tag that no longer reads (the catalog changed)
/// is shown as such in the report.
fn predicted(
    runs: &[storlab_types::StoredRun],
    given: Option<&(&str, storlab_plan::Design)>,
) -> Vec<storlab_report::Predicted> {
    use super::common::DESIGN_TAG;
    let mut out = Vec::new();
    for run in runs {
        let (spec, evaluated) = match (given, run.tags.get(DESIGN_TAG)) {
            (Some((d, design)), _) => (d.to_string(), Ok(design.clone())),
            (None, Some(tag)) => (
                tag.clone(),
                storlab_plan::design_from_spec(tag, |p| {
                    super::common::read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
                })
                .map_err(|e| anyhow::Error::from(e.inner())),
            ),
            (None, None) => continue,
        };
        let rows = evaluated
            .and_then(|d| {
                Ok(storlab_plan::against::against(
                    &d,
                    std::slice::from_ref(run),
                )?)
            })
            .map_err(|e| format!("{e:#}"));
        if let Err(e) = &rows {
            crate::output::warn(&format!("run {}: design '{spec}': {e}", run.id));
        }
        out.push(storlab_report::Predicted {
            run: run.id,
            design: spec,
            rows,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// Every remedy a "cannot be drawn" message names is a storlab command
    /// line that the real CLI parses, with its TARGET where the target goes
    /// and, for a sweep, `--vary` values sweep accepts. The old hint
    /// `storlab sweep iodepth=...` parsed, but as a target path.
    #[test]
    fn every_chart_remedy_parses_as_a_storlab_command() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_string_lossy().into_owned();
        let remedies = storlab_report::Remedy::all();
        assert!(remedies.len() >= 10, "{remedies:?}");
        for r in remedies {
            let argv: Vec<String> = r
                .argv()
                .into_iter()
                .map(|w| if w == "TARGET" { target.clone() } else { w })
                .collect();
            assert_eq!(argv[0], "storlab", "{r}");
            assert!(argv.contains(&target), "{r} names no TARGET");
            let cli = crate::Cli::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("`{r}` does not parse: {e}"));
            match cli.command {
                Some(crate::Command::Sweep(s)) => {
                    assert_eq!(
                        s.target.as_deref(),
                        Some(dir.path()),
                        "`{r}`: sweep reads its target elsewhere"
                    );
                    assert!(!s.vary.is_empty(), "`{r}` varies nothing");
                    for v in &s.vary {
                        storlab_bench::Vary::parse(v)
                            .unwrap_or_else(|e| panic!("`{r}`: --vary {v}: {e:?}"));
                    }
                }
                Some(crate::Command::Bench(b)) => {
                    assert_eq!(b.target.as_deref(), Some(dir.path()), "`{r}`");
                }
                other => panic!("`{r}` runs {other:?}, not bench or sweep"),
            }
        }
    }

    /// `report --chart`'s help lists the registry's report charts.
    #[test]
    fn the_chart_help_is_the_registry() {
        let cmd = <crate::Cli as clap::CommandFactory>::command();
        let report = cmd.find_subcommand("report").unwrap();
        let arg = report
            .get_arguments()
            .find(|a| a.get_long() == Some("chart"))
            .unwrap();
        let help = arg.get_help().unwrap().to_string();
        for id in storlab_report::registry::report_chart_ids() {
            assert!(help.contains(&id), "{id} missing: {help}");
        }
    }
}
