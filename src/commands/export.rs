//! `storlab export`: stored runs as JSON, CSV or Markdown.

use super::common::{DbArgs, OutputKind, RunArgs, check_output_path, write_output};
use crate::output;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Every stored record, lossless (schema-versioned)
    Json,
    /// One row per run × phase × direction, machine units (bytes, ns, bytes/s)
    Csv,
    /// The same rows as a Markdown table in human units
    Md,
}

#[derive(Args, Debug)]
pub struct ExportCommand {
    #[command(flatten)]
    runs: RunArgs,
    /// Output format (--format is the older spelling)
    #[arg(long = "output-format", alias = "format", value_enum, default_value_t = ExportFormat::Json)]
    format: ExportFormat,
    /// Shorthand for --output-format json
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Write to this file instead of standard output
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file that is not an earlier export of this format (never a
    /// database)
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    db: DbArgs,
}

impl ExportCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let format = if self.json {
            ExportFormat::Json
        } else {
            self.format
        };
        let kind = match format {
            ExportFormat::Json => OutputKind::ExportJson,
            ExportFormat::Csv => OutputKind::ExportCsv,
            ExportFormat::Md => OutputKind::ExportMd,
        };
        if let Some(path) = &self.output {
            // Before anything is read: never the database, a device or a
            // file that is not an earlier export of this format.
            check_output_path(path, &self.db.db, self.force, kind)?;
        }
        let store = self.db.open_existing()?;
        let runs = self.runs.load(&store)?;
        let text = match format {
            ExportFormat::Json => storlab_report::export_json(&runs),
            ExportFormat::Csv => storlab_report::export_csv(&runs),
            ExportFormat::Md => storlab_report::export_md(&runs),
        };
        match &self.output {
            Some(path) => {
                write_output(path, text.as_bytes())?;
                eprintln!("wrote {} ({} runs)", path.display(), runs.len());
            }
            None => output::print(&text)?,
        }
        Ok(crate::Outcome::Ok)
    }
}
