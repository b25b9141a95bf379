//! What the `storlab plan` commands do, from the user's choices to the
//! documents they show: `plan layout` ([`layout`] → [`LayoutDoc`]), `plan
//! search` ([`search`] → [`SearchDoc`]), `plan calibrate` ([`CalibrateChoice`] →
//! [`Fitted`]) and `plan catalog` ([`CatalogDoc`]). The CLI declares the
//! flags, reads catalog files and the store, writes the fitted entry and
//! prints; everything between is here. Each document renders as a table
//! ([`crate::render::Style::terminal`]), Markdown
//! ([`crate::render::Style::markdown`]), CSV rows ([`crate::render`]'s
//! `csv_*`) or JSON (serde).

use crate::against::{Against, against, observations};
use crate::calibrate::{Calibration, HoldOut, Like, Repeats, calibrate_with, entry_name};
use crate::catalog::{Catalog, ControllerEntry, DriveEntry, EnclosureEntry, LinkEntry};
use crate::design::{DesignReport, PLAN_SCHEMA_VERSION, evaluate};
use crate::hardware::{ControllerSpec, DriveSpec, LinkSpec};
use crate::search::{SearchResult, SearchSpec};
use crate::spec::{DesignSpec, SearchChoice};
use crate::{PlanError, render};
use serde::Serialize;
use std::fmt;
use std::path::Path;
use storlab_types::StoredRun;

/// A plan document in the forms the CLI prints: text in a table
/// [`render::Style`] (the terminal's or Markdown), CSV rows in machine
/// units, and JSON (serde).
pub trait PlanDoc: Serialize {
    fn render(&self, st: render::Style) -> String;
    fn csv(&self) -> String;
    /// JSON with its keys sorted (layout, calibrate, as those always
    /// printed) or in the document's order (search).
    const SORTED_JSON: bool = true;
}

/// `plan layout`: a design's report, and its stored runs predicted beside
/// what they measured (`--against`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutDoc {
    #[serde(flatten)]
    pub report: DesignReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<Vec<Against>>,
}

/// Evaluate the design `spec` describes (catalog files read through
/// `read`), and predict `runs`' phases for it when there are any
/// (`None`: no `--against`). An error the model raises names the layout as
/// typed, with its `--chunk`/`--stripe`.
pub fn layout<E: fmt::Display>(
    spec: &DesignSpec,
    read: impl FnMut(&Path) -> Result<String, E>,
    runs: Option<&[StoredRun]>,
) -> Result<LayoutDoc, PlanError> {
    let cat = spec.catalog(read)?;
    let design = spec.design(&cat)?;
    let report = evaluate(&design).map_err(|e| PlanError::InLayout {
        typed: spec.typed_layout(),
        error: Box::new(e),
    })?;
    let against = runs.map(|r| against(&design, r)).transpose()?;
    Ok(LayoutDoc { report, against })
}

impl LayoutDoc {
    /// The design is short of the throughput `--cores` asks for (a verdict
    /// the document shows; `--check` makes it the exit status).
    pub fn short(&self) -> bool {
        self.report.sizing.as_ref().is_some_and(|s| !s.meets)
    }
}

impl PlanDoc for LayoutDoc {
    /// The report for people, with the runs against it.
    fn render(&self, st: render::Style) -> String {
        let mut text = render::render_layout(&self.report, st);
        if let Some(m) = &self.against {
            text.push_str("\npredicted vs measured\n");
            text.push_str(&render::render_against(m, st));
        }
        text
    }

    /// CSV: one row per phase against the design with `--against`, else
    /// one row per predicted workload.
    fn csv(&self) -> String {
        match &self.against {
            Some(rows) => render::csv_against(rows),
            None => render::csv_layout(&self.report),
        }
    }
}

/// `plan search`: the Pareto-optimal designs, and the search they answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchDoc {
    pub result: SearchResult,
    pub spec: SearchSpec,
    /// Rows the table shows (JSON and CSV have all).
    pub top: usize,
}

/// Run the search `choice` describes over `cat`.
pub fn search(choice: &SearchChoice, cat: &Catalog, top: usize) -> Result<SearchDoc, PlanError> {
    let spec = choice.spec(cat)?;
    let result = crate::search::search(&spec)?;
    Ok(SearchDoc { result, spec, top })
}

impl Serialize for SearchDoc {
    /// The search's JSON is its result.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.result.serialize(s)
    }
}

impl SearchDoc {
    /// Why nothing was found, when nothing was: the designs evaluated and
    /// rejected by reason, and what to relax.
    pub fn none_found(&self) -> Option<String> {
        let r = &self.result;
        if !r.pareto.is_empty() {
            return None;
        }
        let why: Vec<String> = r.rejected.iter().map(|(k, v)| format!("{v} {k}")).collect();
        Some(format!(
            "no design meets the constraints ({} evaluated; rejected: {}); relax a constraint or widen --drives/--levels/--spans",
            r.evaluated,
            if why.is_empty() {
                "none".to_string()
            } else {
                why.join(", ")
            }
        ))
    }
}

impl PlanDoc for SearchDoc {
    const SORTED_JSON: bool = false;
    fn render(&self, st: render::Style) -> String {
        render::render_search(&self.result, &self.spec, self.top, st)
    }
    fn csv(&self) -> String {
        render::csv_search(&self.result)
    }
}

/// `plan calibrate`'s fit: the calibration, the phases left out, and the
/// catalog entry to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub name: String,
    pub calibration: Calibration,
    pub skipped: Vec<String>,
    /// The entry (TOML), checked to load.
    pub entry: String,
    /// `drive` or `controller`: the flag the entry is used with.
    pub kind: &'static str,
}

/// What `storlab plan calibrate` is asked (with the `clap` feature, its
/// flags; the runs and the store are the CLI's).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CalibrateChoice {
    /// Name of the catalog entry to write (use it with --drive NAME)
    #[cfg_attr(feature = "clap", arg(long = "as", value_name = "NAME"))]
    pub name: String,
    /// A catalog drive: write a drive entry that takes this drive's capacity, MTBF, error
    /// rate, sector size and rebuild rate (performance runs cannot identify them), e.g.
    /// exos-x18-18tb. A catalog controller: write a controller entry with the measured
    /// read, write and IOPS limits and this controller's links and cache, e.g. perc-h800
    #[cfg_attr(feature = "clap", arg(long, value_name = "MODEL"))]
    pub like: String,
    /// Leave points out of the fit and predict them instead, printing measured, predicted and
    /// error per held-out point and the median and worst error: SIZE holds out every phase of
    /// that request size (repeatable), e.g. --hold-out 64k; `alternate` holds out alternate
    /// points of each direction and pattern's block size x queue depth grid (a checkerboard:
    /// size index + depth index odd), e.g. a sweep of bs 4k..1m and iodepth 1..32
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE|alternate"))]
    pub hold_out: Vec<String>,
    /// How repeated runs of one point count: their median, or the fastest (on a machine
    /// other programs share, they only ever slow a run down)
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "median"))]
    pub repeats: Repeats,
    /// Where to write the entry [default: NAME.toml]; an existing file is not replaced
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub output: Option<std::path::PathBuf>,
    /// Extra catalog file(s) for --like
    #[cfg_attr(feature = "clap", arg(long = "catalog", value_name = "FILE"))]
    pub catalogs: Vec<std::path::PathBuf>,
}

/// A calibration checked before any run is read: the entry's name, what
/// it is modelled on, the held-out sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub name: String,
    pub like: Like,
    pub hold_out: HoldOut,
    pub repeats: Repeats,
}

impl CalibrateChoice {
    /// Check the name, `--like` (in `cat`) and the held-out sizes.
    pub fn prepare(&self, cat: &Catalog) -> Result<Prepared, PlanError> {
        let name = entry_name(&self.name)?.to_string();
        let like = Like::find(cat, &self.like)?;
        let mut hold_out = HoldOut::default();
        for s in &self.hold_out {
            if s.trim().eq_ignore_ascii_case("alternate") {
                hold_out.alternate = true;
                continue;
            }
            let b = storlab_types::parse_size(s).map_err(|e| {
                PlanError::Design(format!(
                    "--hold-out: {e}; give a request size (e.g. 64k) or `alternate`"
                ))
            })?;
            hold_out.sizes.push(b);
        }
        Ok(Prepared {
            name,
            like,
            hold_out,
            repeats: self.repeats,
        })
    }

    /// Where the entry goes: `--output`, else `NAME.toml`.
    pub fn output_path(&self, p: &Prepared) -> std::path::PathBuf {
        self.output
            .clone()
            .unwrap_or_else(|| format!("{}.toml", p.name).into())
    }
}

impl Prepared {
    /// Fit the entry to the phases of `runs` (the held-out sizes are
    /// predicted, not fitted); the entry is checked to load into `cat`.
    pub fn fit(&self, runs: &[StoredRun], cat: &Catalog) -> Result<Fitted, PlanError> {
        let mut obs = Vec::new();
        let mut skipped = Vec::new();
        for r in runs {
            let (o, s) = observations(r);
            obs.extend(o);
            skipped.extend(s);
        }
        let cal = calibrate_with(&self.name, &obs, &self.hold_out, self.repeats)?;
        let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
        let label = format!(
            "run{} {}",
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        );
        let entry = self.like.entry(&cal, &label);
        // The entry must load as it is written.
        cat.clone().extend(&self.name, &entry).map_err(|e| {
            PlanError::Design(format!(
                "the fitted entry does not load (a bug; please report it): {e}"
            ))
        })?;
        Ok(Fitted {
            name: self.name.clone(),
            calibration: cal,
            skipped,
            entry,
            kind: self.like.kind(),
        })
    }
}

/// `plan calibrate`'s document: the fit and the file it was written to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrateDoc {
    pub schema_version: u32,
    pub kind: &'static str,
    pub calibration: Calibration,
    pub skipped: Vec<String>,
    pub written: String,
    #[serde(skip)]
    pub entry_kind: &'static str,
}

impl Fitted {
    /// The document of the fit, written to `path`.
    pub fn written_to(self, path: &Path) -> CalibrateDoc {
        CalibrateDoc {
            schema_version: PLAN_SCHEMA_VERSION,
            kind: "plan.calibrate",
            calibration: self.calibration,
            skipped: self.skipped,
            written: path.display().to_string(),
            entry_kind: self.kind,
        }
    }
}

impl PlanDoc for CalibrateDoc {
    fn render(&self, st: render::Style) -> String {
        let mut text = render::render_calibration(
            &self.calibration,
            &self.skipped,
            Path::new(&self.written),
            self.entry_kind,
            st,
        );
        text.push_str(&crate::calibrate::render_knee_and_held_out(
            &self.calibration,
            st,
        ));
        text
    }

    fn csv(&self) -> String {
        render::csv_calibration(&self.calibration)
    }
}

/// An entry as the catalog file wrote it, and as the model reads it
/// (`None`: it does not resolve).
#[derive(Debug, Clone, Serialize)]
pub struct Listed<'a, E, R> {
    pub entry: &'a E,
    pub resolved: Option<R>,
}

/// `plan catalog --json`: every entry with what it resolves to.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogDoc<'a> {
    pub schema_version: u32,
    pub kind: &'static str,
    pub drives: Vec<Listed<'a, DriveEntry, DriveSpec>>,
    pub controllers: Vec<Listed<'a, ControllerEntry, ControllerSpec>>,
    pub enclosures: Vec<&'a EnclosureEntry>,
    pub links: Vec<Listed<'a, LinkEntry, LinkSpec>>,
}

impl<'a> CatalogDoc<'a> {
    pub fn new(cat: &'a Catalog) -> CatalogDoc<'a> {
        CatalogDoc {
            schema_version: PLAN_SCHEMA_VERSION,
            kind: "plan.catalog",
            drives: cat
                .drives()
                .map(|d| Listed {
                    entry: d,
                    resolved: cat.drive(d.name.get_ref()).ok(),
                })
                .collect(),
            controllers: cat
                .controllers()
                .map(|c| Listed {
                    entry: c,
                    resolved: cat.controller(c.name.get_ref()).ok(),
                })
                .collect(),
            enclosures: cat.enclosures().collect(),
            links: cat
                .links()
                .map(|l| Listed {
                    entry: l,
                    resolved: cat.link(l.name.get_ref()).ok(),
                })
                .collect(),
        }
    }
}
