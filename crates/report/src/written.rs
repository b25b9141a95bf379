//! What `storlab report` writes: the whole HTML report, or one chart as
//! SVG or PNG, made from the runs in one call ([`render`]); the CLI checks
//! the path and writes the bytes.

use crate::error::ReportError;
use crate::predicted::Predicted;
use crate::{Vary, chart_with, charts_with, html_report_full, svg_to_png};
use std::path::Path;
use storlab_types::StoredRun;

/// What `storlab report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// The whole report (HTML).
    Html,
    /// One chart as SVG.
    Svg,
    /// One chart as PNG.
    Png,
}

impl ReportKind {
    /// The kind a file name's extension names (`x.svg`, `x.PNG`); HTML and
    /// any other extension give none (the caller's default applies).
    pub fn from_extension(path: &Path) -> Option<ReportKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(ReportKind::Svg),
            "png" => Some(ReportKind::Png),
            _ => None,
        }
    }
}

/// A report or chart ready to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub bytes: Vec<u8>,
    /// The file name when none was given: `report.html`, `chart-<ID>.svg`.
    pub default_name: String,
    /// What it holds, for the line that names the file written
    /// (`3 runs, 7 charts`, `chart 'throughput': ...`).
    pub what: String,
}

/// The report or chart `kind` of `runs`: the HTML report with every chart
/// that applies, or chart `chart` (an id of the registry) as SVG or as a
/// PNG at `scale`.
pub fn render(
    kind: ReportKind,
    runs: &[StoredRun],
    baseline: Option<usize>,
    vary: &Vary,
    predicted: &[Predicted],
    chart: &str,
    scale: f32,
) -> Result<Rendered, ReportError> {
    if kind == ReportKind::Html {
        let html = html_report_full(runs, baseline, vary, predicted);
        let charts = charts_with(runs, baseline, vary, predicted).len();
        return Ok(Rendered {
            bytes: html.into_bytes(),
            default_name: "report.html".into(),
            what: format!("{} runs, {charts} charts", runs.len()),
        });
    }
    let chart = chart_with(runs, baseline, chart, vary, predicted)?;
    let (ext, bytes) = if kind == ReportKind::Svg {
        ("svg", chart.svg.into_bytes())
    } else {
        ("png", svg_to_png(&chart.svg, scale)?)
    };
    Ok(Rendered {
        bytes,
        default_name: format!("chart-{}.{ext}", chart.id),
        what: format!("chart '{}': {}", chart.id, chart.title),
    })
}

/// Put the baseline among the runs of a report: its index there, the run
/// added first when it was not among the runs named.
pub fn include_baseline(runs: &mut Vec<StoredRun>, base: StoredRun) -> usize {
    match runs.iter().position(|r| r.id == base.id) {
        Some(i) => i,
        None => {
            runs.insert(0, base);
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_the_kind() {
        let k = |p: &str| ReportKind::from_extension(Path::new(p));
        assert_eq!(k("x.svg"), Some(ReportKind::Svg));
        assert_eq!(k("dir.d/x.PNG"), Some(ReportKind::Png));
        assert_eq!(k("x.html"), None);
        assert_eq!(k("svg"), None);
    }
}
