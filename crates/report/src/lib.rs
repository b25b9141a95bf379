//! `storlab-report`: turns stored runs into things people read — exports
//! (JSON, CSV, Markdown), comparisons against a baseline, SVG/PNG charts and
//! one self-contained HTML report.
//!
//! Everything here is a pure function over `&[StoredRun]` (the records
//! `crates/store` loads) that returns text or bytes; nothing is printed or
//! written to disk — the CLI does that.
//!
//! * [`export_json`], [`export_csv`], [`export_md`]: one row per run × phase
//!   × direction ([`rows::Row`]); JSON is the full, lossless records.
//! * [`compare()`] → [`Comparison`], the main type of this crate, and
//!   [`render_comparison`]: each run's figures relative to a baseline, with
//!   changes inside the measured run-to-run spread marked as noise (the rule
//!   is documented in [`compare`](mod@compare) and `docs/report.md`).
//! * [`charts()`] → [`Chart`]s (SVG with titles, axis units and legends) and
//!   [`chart`] for one by id; [`svg_to_png`] for a PNG of one.
//! * [`registry`]: every chart kind declared once ([`CHART_KINDS`]: id,
//!   title, how it draws, why it cannot — a typed [`CannotDraw`] with a
//!   [`Remedy`] command).
//! * [`sweep_charts`]: a sweep's MB/s lines and the IOzone-style heat map.
//! * [`html_report`]: one self-contained HTML file (inline CSS and SVG, no
//!   script, no network) with parameters, host facts, results, the
//!   comparison, every chart and every warning; [`html_report_full`] adds
//!   [`predicted`]: runs tagged with a design, predicted beside measured.
//! * [`written`]: what `storlab report` writes ([`render`]: the HTML report
//!   or one chart as SVG or PNG).
#![forbid(unsafe_code)]

pub mod charts;
pub mod clients_chart;
pub mod compare;
pub mod error;
pub mod export;
pub mod fmt;
pub mod html;
mod io500_chart;
pub mod png;
pub mod predicted;
pub mod registry;
pub mod replay_chart;
pub mod rows;
pub mod signature;
pub mod sim_chart;
pub mod svg;
pub mod sweep_chart;
pub mod sweep_charts;
pub mod written;

pub use charts::{Chart, chart, chart_with, charts, charts_with, resolve_baseline, why_not};
pub use compare::{
    COMPARED, Change, CompareRow, Comparison, DEFAULT_NOISE_PCT, MetricWords, Spread, SpreadSource,
    Verdict, compare, compare_with, comparison_footer, render_comparison,
};
pub use error::ReportError;
pub use export::{
    CSV_COLUMNS, EXPORT_DOCUMENT, ExportDocument, export_csv, export_json, export_md,
};
pub use html::{html_report, html_report_full};
pub use png::{chart_file, svg_to_png};
pub use predicted::{Predicted, predict, predicted_chart};
pub use registry::{CHART_KINDS, CannotDraw, ChartKind, Remedy, Source, SweepParam};
pub use rows::{Direction, Row, rows};
pub use signature::{is_csv_export, is_html_report, is_md_export, is_png_chart, is_svg_chart};
pub use storlab_configdiff::{Difference, Judgement, Vary};
pub use sweep_chart::{AxisValue, SweepChartInfo, SweepChartPoint, sweep_chart};
pub use sweep_charts::{HeatCell, heat_map, sweep_lines};
pub use written::{Rendered, ReportKind, include_baseline, render};

#[cfg(test)]
pub(crate) use storlab_testkit::fixtures as testdata;
