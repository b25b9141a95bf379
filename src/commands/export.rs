//! `storlab export`: stored runs as JSON, CSV or Markdown.

use super::common::{DbArgs, OutputKind, RunArgs, check_output_path};
use super::outfmt::{Format, OutputArgs};
use crate::output::{Document, Printout, Rendering, Reply};
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

impl Format for ExportFormat {
    const HELP: &'static str = "Output format (--format is the older spelling) [default: json]";
    const JSON: Self = ExportFormat::Json;
    const DEFAULT: Option<Self> = Some(ExportFormat::Json);
    fn rendering(self) -> Rendering {
        match self {
            ExportFormat::Json => Rendering::Json,
            ExportFormat::Csv => Rendering::Csv,
            ExportFormat::Md => Rendering::Markdown,
        }
    }
}

#[derive(Args, Debug)]
pub struct ExportCommand {
    #[command(flatten)]
    runs: RunArgs,
    #[command(flatten)]
    out: OutputArgs<ExportFormat>,
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
    pub fn execute(self) -> anyhow::Result<Reply> {
        let how = self.out.rendering();
        let kind = match self.out.format() {
            ExportFormat::Json => OutputKind::ExportJson,
            ExportFormat::Csv => OutputKind::ExportCsv,
            ExportFormat::Md => OutputKind::ExportMd,
        };
        // Before anything is read: never the database, a device or a file
        // that is not an earlier export of this format.
        let permit = match &self.output {
            Some(path) => Some(check_output_path(path, &self.db.db, self.force, kind)?),
            None => None,
        };
        let store = self.db.open_existing()?;
        let export = Export(self.runs.load(&store)?);
        let Some(permit) = permit else {
            return Ok(Reply::doc(export, how));
        };
        let Printout::Exact(text) = export.render(how)? else {
            anyhow::bail!("an export is written as it is rendered for programs");
        };
        permit.write(text.as_bytes())?;
        eprintln!(
            "wrote {} ({} runs)",
            permit.path().display(),
            export.0.len()
        );
        Ok(Reply::done(crate::Outcome::Ok))
    }
}

/// Stored runs as `export` writes them: every format is for programs.
struct Export(Vec<storlab_types::StoredRun>);

impl Document for Export {
    /// An export has no table of its own: the Markdown table is the one
    /// for people.
    fn human(&self) -> anyhow::Result<String> {
        self.markdown()
    }
    fn json(&self) -> anyhow::Result<String> {
        Ok(storlab_report::export_json(&self.0))
    }
    fn csv(&self) -> anyhow::Result<String> {
        Ok(storlab_report::export_csv(&self.0))
    }
    fn markdown(&self) -> anyhow::Result<String> {
        Ok(storlab_report::export_md(&self.0))
    }
}
