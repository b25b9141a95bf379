//! `storlab import`: read fio JSON output (or storlab JSON) into the store.

use super::common::{DbArgs, RecordArgs};
use super::outfmt::{OutputArgs, TextFormat};
use crate::output::{self, Document, Reply};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use storlab_fio as fio;

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (file, run id and database of each import)")))]
pub struct ImportCommand {
    /// fio JSON output files (`fio --output-format=json`), or storlab JSON documents
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Host the fio run was on (fio's JSON does not record it)
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    #[command(flatten)]
    record: RecordArgs,
    #[command(flatten)]
    out: OutputArgs<TextFormat>,
    #[command(flatten)]
    db: DbArgs,
}

impl ImportCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
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
        let mut imported = Vec::new();
        for (path, imp) in parsed {
            let run_id = store.save_run(imp.kind, &imp.report, &tags, self.record.note())?;
            imported.push(Imported {
                file: path.display().to_string(),
                run_id,
                tool: imp.report.tool.name.clone(),
                tool_version: imp.report.tool.version.clone(),
                phases: imp
                    .report
                    .phases
                    .iter()
                    .map(|p| p.params.name.clone())
                    .collect(),
            });
        }
        let doc = Imports {
            database: store.path().display().to_string(),
            imported,
        };
        Ok(Reply::doc(doc, self.out.rendering()))
    }
}

/// What `import` saved: each file's run, and the database.
#[derive(Serialize)]
struct Imports {
    database: String,
    imported: Vec<Imported>,
}

/// One imported file (keys in the order the JSON has always had them).
#[derive(Serialize)]
struct Imported {
    file: String,
    phases: Vec<String>,
    run_id: i64,
    tool: String,
    tool_version: String,
}

impl Document for Imports {
    fn human(&self) -> anyhow::Result<String> {
        let mut out = String::new();
        for i in &self.imported {
            let n = i.phases.len();
            out += &format!(
                "imported {} as run {}: {} {}, {n} phase{} ({})\n",
                i.file,
                i.run_id,
                i.tool,
                i.tool_version,
                if n == 1 { "" } else { "s" },
                i.phases.join(", ")
            );
        }
        out += &format!(
            "saved in {} (storlab runs, storlab show ID)\n",
            self.database
        );
        Ok(out)
    }
    fn json(&self) -> anyhow::Result<String> {
        output::json_text(self)
    }
}
