//! Errors of the report crate; each says what the user can do about it.

/// What can go wrong turning runs into a chart or an image.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no runs to report on; pick runs by id, `latest`, `tag:key=value` or `--all`")]
    NoRuns,
    #[error(
        "no chart '{id}' for these runs; the charts they have are: {}",
        available.join(", ")
    )]
    NoSuchChart { id: String, available: Vec<String> },
    #[error(
        "chart '{id}' cannot be drawn for these runs: {why}; the charts they have are: {}",
        available.join(", ")
    )]
    NotDrawn {
        id: String,
        why: crate::registry::CannotDraw,
        available: Vec<String>,
    },
    #[error("cannot render the chart as PNG: {0}; use --output-format svg instead")]
    Png(String),
}
