//! `storlab import`: read fio JSON output (or storlab JSON) into the store.

use super::common::{DbArgs, RecordArgs};
use crate::output;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use storlab_fio as fio;

#[derive(Args, Debug)]
pub struct ImportCommand {
    /// fio JSON output files (`fio --output-format=json`), or storlab JSON documents
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Host the fio run was on (fio's JSON does not record it)
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    #[command(flatten)]
    record: RecordArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = super::outfmt::TextFormat::Text)]
    output_format: super::outfmt::TextFormat,
    /// Shorthand for --output-format json (file, run id and database of each import)
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

impl ImportCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let tags = self.record.tag_map()?;
        // Read every file before saving any, so a bad file saves nothing.
        let mut parsed = Vec::new();
        for path in &self.files {
            let text = super::common::read_input_bytes(path, "")?;
            let text = String::from_utf8_lossy(&text);
            let imported = fio::parse(&text, self.host.as_deref())
                .with_context(|| format!("cannot import {}", path.display()))?;
            parsed.push((path, imported));
        }
        let store = self.db.open()?;
        let mut out = String::new();
        let mut saved = Vec::new();
        for (path, imp) in parsed {
            let id = store.save_run(imp.kind, &imp.report, &tags, self.record.note())?;
            let names: Vec<&str> = imp
                .report
                .phases
                .iter()
                .map(|p| p.params.name.as_str())
                .collect();
            out += &format!(
                "imported {} as run {id}: {} {}, {} phase{} ({})\n",
                path.display(),
                imp.report.tool.name,
                imp.report.tool.version,
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            );
            saved.push(serde_json::json!({
                "file": path.display().to_string(),
                "run_id": id,
                "tool": imp.report.tool.name,
                "tool_version": imp.report.tool.version,
                "phases": names,
            }));
        }
        let db = store.path().display().to_string();
        if self.json || self.output_format == super::outfmt::TextFormat::Json {
            out = serde_json::to_string_pretty(&serde_json::json!({
                "database": db,
                "imported": saved,
            }))? + "\n";
        } else {
            out += &format!("saved in {db} (storlab runs, storlab show ID)\n");
        }
        output::print(&out)?;
        Ok(crate::Outcome::Ok)
    }
}
