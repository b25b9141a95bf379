//! `storlab runs`: list the runs in the results database.

use super::common::DbArgs;
use super::outfmt::{OutputArgs, TableFormat};
use crate::output::{Rendered, Reply};
use clap::Args;
use storlab_store::{RunFilter, RunSummary};

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (one object per run)")))]
pub struct RunsCommand {
    /// Only runs with this tag (repeatable: runs with all of them)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = storlab_store::parse_tag)]
    tags: Vec<(String, String)>,
    /// Only runs whose target path contains this text
    #[arg(long, value_name = "TEXT")]
    target: Option<String>,
    /// Only runs whose host name contains this text
    #[arg(long, value_name = "TEXT")]
    host: Option<String>,
    /// Only runs started at or after this time: 2026-01-31, 2026-01-31T08:00 (UTC), or an age like 7d, 12h
    #[arg(long, value_name = "WHEN", value_parser = storlab_types::time::parse_when)]
    since: Option<String>,
    /// Only runs started before this time (same forms as --since)
    #[arg(long, value_name = "WHEN", value_parser = storlab_types::time::parse_when)]
    until: Option<String>,
    /// Only runs with a phase of this I/O pattern: read, write, randread, randwrite, readwrite, randrw
    #[arg(long, alias = "workload", value_name = "PATTERN", value_parser = parse_rw)]
    rw: Option<String>,
    /// Only runs of this kind: bench, fio-import, import, monitor, ...
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Show only the most recent N runs
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    #[command(flatten)]
    out: OutputArgs<TableFormat>,
    #[command(flatten)]
    db: DbArgs,
}

/// An I/O pattern, refused as the option table refuses it (naming every
/// pattern: the list here had left out rmw).
fn parse_rw(s: &str) -> Result<String, storlab_bench::SpecError> {
    let rw = storlab_bench::parse_choice::<storlab_types::RwMode>(s)?;
    Ok(rw.as_str().to_string())
}

impl RunsCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        // A broken config file is named first (it may name the database).
        crate::commands::config::get()?;
        let how = self.out.rendering();
        // No database yet is an empty history, not an error.
        if !self.db.db.exists() {
            let note = format!(
                "no runs yet: there is no results database at {} (`storlab bench` creates it)",
                self.db.db.display()
            );
            return listing(&[], note).map(|doc| Reply::doc(doc, how));
        }
        let store = self.db.open_existing()?;
        let filter = RunFilter {
            tags: self.tags,
            target: self.target,
            host: self.host,
            since: self.since,
            until: self.until,
            rw: self.rw,
            kind: self.kind,
            limit: self.limit,
        };
        let runs = store.list(&filter)?;
        let what = if filter == RunFilter::default() {
            "no runs yet"
        } else {
            "no run matches these filters"
        };
        let note = format!("{}: {what}", store.path().display());
        listing(&runs, note).map(|doc| Reply::doc(doc, how))
    }
}

/// The runs `storlab runs` found: a table (or, when there are none, `note`
/// on stderr saying why) or a JSON list with one object per run.
fn listing(runs: &[RunSummary], note: String) -> anyhow::Result<Rendered> {
    let v: Vec<serde_json::Value> = runs.iter().map(RunSummary::to_json).collect();
    let mut doc = Rendered::new(String::new(), crate::output::json_text(&v)?);
    if runs.is_empty() {
        doc.note = Some(note);
    } else {
        doc.text = storlab_print::runs::render(runs);
    }
    Ok(doc)
}
