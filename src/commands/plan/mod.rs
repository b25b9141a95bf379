//! `storlab plan`: design storage before buying it. A thin front end over
//! `storlab-plan`: reads catalog files, turns flags into a design, prints
//! tables or JSON.

use crate::output::{Document, Rendering, Reply};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use storlab_plan::catalog::Catalog;
use storlab_plan::design::DEFAULT_MB_PER_S_PER_CORE;
use storlab_plan::render::Style;
use storlab_plan::spec::{DriveChoice, SystemChoice};
use storlab_plan::workflow::PlanDoc;
mod calibrate;
mod catalog;
mod layout;
mod search;

use calibrate::{CalibrateArgs, calibrate};
use catalog::{CatalogArgs, catalog};
use layout::{LayoutArgs, layout};
use search::{SearchArgs, search};

/// Design a storage system: RAID layout, capacity, reliability, predicted performance.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab plan layout R60/12/48 --drive exos-x18-18tb
  storlab plan layout 'lvm(4*R6/10, stripe=2M)' --controllers 2 --cores 64
  storlab plan search --drive constellation-es3-4tb --drives 24..96 --min-usable 150TB
  storlab plan search --layout R60/12/x --drives 24..240 --min-usable 500TB
  storlab plan catalog
  storlab plan layout R6/12 --drive exos-x18-18tb --against latest
  storlab plan calibrate 12 13 --as my-disk --like exos-x18-18tb --hold-out 64k")]
pub struct PlanCommand {
    #[command(subcommand)]
    action: PlanAction,
}

#[derive(Subcommand, Debug)]
enum PlanAction {
    /// Capacity, reliability and predicted performance of one layout (e.g. R60/12/48)
    #[command(after_long_help = storlab_plan::render::MODEL_HELP)]
    Layout(Box<LayoutArgs>),
    /// Enumerate layouts for a drive model and count and print the Pareto-optimal ones
    Search(Box<SearchArgs>),
    /// List the hardware catalog (drives, controllers, enclosures, links) with sources
    Catalog(CatalogArgs),
    /// Fit a catalog entry (streaming rate, per-command overhead, IOPS, the concurrency knee
    /// from a queue-depth sweep; reads and writes apart) to stored runs of one device and
    /// write it as a catalog file (docs/MODEL.md §8)
    Calibrate(Box<CalibrateArgs>),
}

/// `--output-format table|json`, with `--json` as its shorthand (`plan
/// catalog`).
pub(super) type OutputArgs = super::outfmt::OutputArgs<super::outfmt::TableFormat>;

/// `--output-format table|json|md|csv` (`plan layout`, `search`,
/// `calibrate`): Markdown tables for a document, CSV rows in machine units.
pub(super) type DocOutputArgs = super::outfmt::OutputArgs<Format>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    // Plain comments: values with help switch --help to clap's long layout.
    Table,
    Json,
    // Markdown tables in human units.
    #[value(alias = "markdown")]
    Md,
    // Rows in machine units.
    Csv,
}

impl super::outfmt::Format for Format {
    const HELP: &'static str =
        "Output format (md: Markdown tables; csv: rows in machine units) [default: table]";
    const JSON: Self = Format::Json;
    const DEFAULT: Option<Self> = Some(Format::Table);
    fn rendering(self) -> Rendering {
        match self {
            Format::Table => Rendering::Human,
            Format::Json => Rendering::Json,
            Format::Md => Rendering::Markdown,
            Format::Csv => Rendering::Csv,
        }
    }
}

/// A plan document as the front end shows it: the terminal's table style
/// or Markdown, CSV rows, JSON.
pub(super) struct Shown<T>(pub T);

impl<T: PlanDoc> Document for Shown<T> {
    fn human(&self) -> Result<String> {
        Ok(self.0.render(Style::terminal(table)))
    }
    fn json(&self) -> Result<String> {
        if T::SORTED_JSON {
            crate::output::json_text(&serde_json::to_value(&self.0)?)
        } else {
            crate::output::json_text(&self.0)
        }
    }
    fn markdown(&self) -> Result<String> {
        Ok(self.0.render(Style::markdown()))
    }
    fn csv(&self) -> Result<String> {
        Ok(self.0.csv())
    }
}

pub(super) fn load_catalog(files: &[PathBuf]) -> Result<Catalog> {
    Ok(storlab_plan::spec::catalog_with(files, read_catalog)?)
}

/// A catalog file's text, for the plan crate (which reads no files).
pub(super) fn read_catalog(p: &std::path::Path) -> std::result::Result<String, String> {
    crate::commands::common::read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
}

impl PlanCommand {
    pub fn execute(self) -> Result<Reply> {
        match self.action {
            PlanAction::Layout(a) => layout(*a),
            PlanAction::Search(a) => search(*a),
            PlanAction::Catalog(a) => catalog(a),
            PlanAction::Calibrate(a) => calibrate(*a),
        }
    }
}

pub(super) fn table() -> comfy_table::Table {
    crate::commands::common::result_table()
}
