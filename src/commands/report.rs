//! `storlab report`: one self-contained HTML file with the runs' parameters,
//! figures, comparison and charts, or one chart as SVG or PNG.

use super::common::{DbArgs, OutputKind, RunArgs, check_output_path, read_input};
use super::outfmt::{Format, OutputArgs};
use crate::output::{Document, Printout, Rendering, Reply};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use storlab_report::ReportKind;
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

impl Format for ReportFormat {
    const HELP: &'static str = "What to write (--format is the older spelling) [default: from -o's \
                                extension (.svg, .png, .html), else html]";
    // report has no JSON form and so no --json: this is never used.
    const JSON: Self = ReportFormat::Html;
    const HAS_JSON: bool = false;
    // From -o's extension (`ReportCommand::format`).
    const DEFAULT: Option<Self> = None;
    /// What report prints is the line naming the file it wrote.
    fn rendering(self) -> Rendering {
        Rendering::Human
    }
}

#[derive(Args, Debug)]
pub struct ReportCommand {
    #[command(flatten)]
    runs: RunArgs,
    /// Reference run for relative bars and the comparison [default: the first run]
    #[arg(long, value_name = "RUN", value_parser = RunSelector::parse)]
    baseline: Option<RunSelector>,
    /// Output file [default: report.html, or chart-<ID>.svg / .png]
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs<ReportFormat>,
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

fn read_catalog(p: &std::path::Path) -> Result<String, String> {
    read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
}

impl ReportCommand {
    /// The format asked for, else the one `-o`'s extension names
    /// (`x.svg` writes that chart, `x.png` rasterises it), else HTML.
    fn format(&self) -> ReportKind {
        let chosen = self.out.chosen().map(|f| match f {
            ReportFormat::Html => ReportKind::Html,
            ReportFormat::Svg => ReportKind::Svg,
            ReportFormat::Png => ReportKind::Png,
        });
        let by_ext = self.output.as_deref().and_then(ReportKind::from_extension);
        chosen.or(by_ext).unwrap_or(ReportKind::Html)
    }

    pub fn execute(self) -> anyhow::Result<Reply> {
        let format = self.format();
        // A design given here is checked before anything is read.
        let given = match &self.design {
            Some(d) => Some((d.as_str(), storlab_plan::design_from_spec(d, read_catalog)?)),
            None => None,
        };
        let kind = match format {
            ReportKind::Html => OutputKind::HtmlReport,
            ReportKind::Svg => OutputKind::SvgChart,
            ReportKind::Png => OutputKind::PngChart,
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
                let (base, note) = store.load_baseline(sel)?;
                if let Some(n) = note {
                    eprintln!("{n}");
                }
                Some(storlab_report::include_baseline(&mut runs, base))
            }
        };
        let (vary, implied) =
            storlab_configdiff::implied::vary_with_implied(&self.vary, runs.iter());
        if let Some(n) = implied {
            eprintln!("{n}");
        }
        vary.check_against(runs.iter())?;
        // Designs are evaluated where they are shown: the HTML report and
        // the `predicted` chart. One that cannot be is a warning.
        let predicted = if format == ReportKind::Html || self.chart == "predicted" {
            let given = given.as_ref().map(|(d, design)| (*d, design));
            storlab_report::predict(&runs, given, read_catalog)
        } else {
            Vec::new()
        };
        for p in &predicted {
            if let Err(e) = &p.rows {
                crate::output::warn(&format!("run {}: design '{}': {e}", p.run, p.design));
            }
        }
        let r = storlab_report::render(
            format,
            &runs,
            baseline,
            &vary,
            &predicted,
            &self.chart,
            self.scale,
        )?;
        let (bytes, what) = (r.bytes, r.what);
        let path = self.output.unwrap_or_else(|| r.default_name.into());
        let permit = match named {
            Some(permit) => permit,
            None => check_output_path(&path, &self.db.db, self.force, kind)?,
        };
        permit.write(&bytes)?;
        let line = format!("wrote {} ({what})\n", path.display());
        Ok(Reply::doc(Wrote(line), Rendering::Human))
    }
}

/// The line that names the file `report` wrote, printed as it is.
struct Wrote(String);

impl Document for Wrote {
    fn human(&self) -> anyhow::Result<String> {
        Ok(self.0.clone())
    }
    fn json(&self) -> anyhow::Result<String> {
        Ok(self.0.clone())
    }
    fn render(&self, _: Rendering) -> anyhow::Result<Printout> {
        Ok(Printout::Exact(self.0.clone()))
    }
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

    /// report flattens the one output-format argument: every spelling it
    /// had keeps working (`--output-format`, `--format`, and the format
    /// from `-o`'s extension), and `--json`, which report never had, is
    /// not among its flags.
    #[test]
    fn report_keeps_its_format_spellings() {
        let parse = |args: &[&str]| {
            let argv = ["storlab", "report", "--all"].iter().chain(args);
            crate::Cli::try_parse_from(argv).map(|c| c.command)
        };
        let format = |args: &[&str]| match parse(args) {
            Ok(Some(crate::Command::Report(r))) => Ok(r.format()),
            other => Err(format!("{other:?}")),
        };
        use storlab_report::ReportKind::*;
        assert_eq!(format(&[]), Ok(Html));
        assert_eq!(format(&["--format", "svg"]), Ok(Svg));
        assert_eq!(format(&["--output-format", "png"]), Ok(Png));
        assert_eq!(format(&["--output-format=html", "-o", "x.svg"]), Ok(Html));
        assert_eq!(format(&["-o", "x.SVG"]), Ok(Svg));
        assert_eq!(format(&["-o", "x.png"]), Ok(Png));
        assert_eq!(format(&["-o", "x.htm"]), Ok(Html));
        let e = parse(&["--json"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
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
