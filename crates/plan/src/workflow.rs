//! What the `storlab plan` commands do, from the user's choices to the
//! documents they show: `plan layout` ([`layout`] → [`LayoutDoc`]), `plan
//! search` ([`search`] → [`SearchDoc`]), `plan calibrate` ([`fit`] →
//! [`Fitted`]) and `plan catalog` ([`CatalogDoc`]). The CLI declares the
//! flags, reads catalog files and the store, writes the fitted entry and
//! prints; everything between is here. Each document renders as a table
//! ([`crate::render::Style::terminal`]), Markdown
//! ([`crate::render::Style::markdown`]), CSV rows ([`crate::render`]'s
//! `csv_*`) or JSON (serde).

use crate::against::{Against, against, observations};
use crate::calibrate::{Calibration, Like, calibrate, entry_name};
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

    /// The report for people, with the runs against it.
    pub fn render(&self, st: render::Style) -> String {
        let mut text = render::render_layout(&self.report, st);
        if let Some(m) = &self.against {
            text.push_str("\npredicted vs measured\n");
            text.push_str(&render::render_against(m, st));
        }
        text
    }

    /// CSV: one row per phase against the design with `--against`, else
    /// one row per predicted workload.
    pub fn csv(&self) -> String {
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

    pub fn render(&self, st: render::Style) -> String {
        render::render_search(&self.result, &self.spec, self.top, st)
    }

    pub fn csv(&self) -> String {
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

/// Fit an entry called `name`, modelled on the catalog's `like`, to the
/// phases of `runs`; phases of the `hold_out` sizes are predicted, not
/// fitted.
pub fn fit(
    name: &str,
    like: &str,
    hold_out: &[u64],
    runs: &[StoredRun],
    cat: &Catalog,
) -> Result<Fitted, PlanError> {
    let name = entry_name(name)?;
    let like = Like::find(cat, like)?;
    let mut obs = Vec::new();
    let mut skipped = Vec::new();
    for r in runs {
        let (o, s) = observations(r);
        obs.extend(o);
        skipped.extend(s);
    }
    let cal = calibrate(name, &obs, hold_out)?;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let label = format!(
        "run{} {}",
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    );
    let entry = like.entry(&cal, &label);
    // The entry must load as it is written.
    cat.clone().extend(name, &entry).map_err(|e| {
        PlanError::Design(format!(
            "the fitted entry does not load (a bug; please report it): {e}"
        ))
    })?;
    Ok(Fitted {
        name: name.to_string(),
        calibration: cal,
        skipped,
        entry,
        kind: like.kind(),
    })
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

impl CalibrateDoc {
    pub fn render(&self, st: render::Style) -> String {
        render::render_calibration(
            &self.calibration,
            &self.skipped,
            Path::new(&self.written),
            self.entry_kind,
            st,
        )
    }

    pub fn csv(&self) -> String {
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
