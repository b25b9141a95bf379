//! `storlab import`: read fio JSON output, storlab JSON or an IO500 result
//! directory into the store.

use super::common::{DbArgs, RecordArgs};
use super::outfmt::{OutputArgs, TextFormat};
use crate::output::{Reply, Shown};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use storlab_fio as fio;
use storlab_print::import::{Imported, Imports};

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (file, run id and database of each import)")))]
pub struct ImportCommand {
    /// fio JSON output files (`fio --output-format=json`), storlab JSON documents, or IO500 result directories (the one holding result_summary.txt)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Host the fio or IO500 run was on (neither records it)
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
            if path.is_dir() {
                let dir = storlab_io500::ResultDir::read(path)
                    .with_context(|| format!("cannot import {}", path.display()))?;
                let report = storlab_io500::record::to_report(&dir, self.host.as_deref());
                parsed.push((
                    path,
                    fio::Imported {
                        kind: "io500",
                        report,
                    },
                ));
                continue;
            }
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
            imported.push(Imported::saved(
                path.display().to_string(),
                run_id,
                &imp.report,
            ));
        }
        let doc = Imports {
            database: store.path().display().to_string(),
            imported,
        };
        Ok(Reply::doc(
            Shown::new(doc, Imports::text),
            self.out.rendering(),
        ))
    }
}
