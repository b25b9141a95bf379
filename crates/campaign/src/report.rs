//! What a campaign prints at the end, as data: the comparison across cells
//! (one row per cell, run and phase direction against the baseline cell,
//! and a row saying why for a cell's run without figures), the `--json`
//! documents (the plan of `--dry-run`, the result) and their text forms
//! (the comparison table and the result text are `storlab_print::campaign`).

use crate::spec::{Campaign, Cell, matrix_env};
use crate::state::{CellStatus, Dir, State};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storlab_report::CompareRow;
use storlab_types::StoredRun;

/// `--dry-run --json`: the campaign as it would run.
#[derive(Serialize)]
pub struct PlanDoc<'a> {
    /// The id the campaign would get (its directory's name).
    pub id: &'a str,
    /// The directory it would make (nothing is written by a dry run).
    pub dir: &'a Path,
    pub dry_run: bool,
    pub name: &'a str,
    pub baseline: &'a str,
    /// The longest one teardown command may run (`teardown_timeout`).
    pub teardown_timeout_s: u64,
    pub cells: Vec<PlannedCell<'a>>,
}

impl<'a> PlanDoc<'a> {
    /// The plan of campaign `c` under `id` in `dir`.
    pub fn new(id: &'a str, dir: &'a Dir, c: &'a Campaign) -> PlanDoc<'a> {
        PlanDoc {
            id,
            dir: &dir.path,
            dry_run: true,
            name: &c.name,
            baseline: &c.baseline,
            teardown_timeout_s: c.teardown_timeout_s,
            cells: c
                .cells
                .iter()
                .map(|cell| PlannedCell {
                    cell,
                    log: dir.log(&cell.name),
                })
                .collect(),
        }
    }
}

/// One planned cell: name, matrix values, tags, target, setup, run
/// (storlab argument vectors), teardown, and the log it would write.
#[derive(Serialize)]
pub struct PlannedCell<'a> {
    #[serde(flatten)]
    pub cell: &'a Cell,
    pub log: PathBuf,
}

/// `--json` after a campaign: every cell and the comparison.
#[derive(Serialize)]
pub struct ResultDoc<'a> {
    pub id: &'a str,
    pub dir: &'a Path,
    pub name: &'a str,
    pub baseline: &'a str,
    pub cells: Vec<CellDoc<'a>>,
    /// The rows of the comparison table, in its order.
    pub comparison: &'a [CampaignRow<'a>],
    /// Each cell and run that has no row in `comparison`, and why.
    pub missing: &'a [Missing<'a>],
    /// A cell's run stored more than once (by an older storlab's resume):
    /// which one was compared.
    pub notes: &'a [String],
    /// The HTML report written (`--report`).
    pub report: Option<&'a Path>,
}

/// One cell of a finished (or stopped) campaign.
#[derive(Serialize)]
pub struct CellDoc<'a> {
    #[serde(flatten)]
    pub cell: &'a Cell,
    /// finished, failed or interrupted.
    pub status: Option<CellStatus>,
    pub reason: Option<String>,
    /// Its finished runs in the results database, oldest first.
    pub run_ids: Vec<i64>,
    pub log: PathBuf,
}

/// One row of the comparison: a cell's run, phase and direction against
/// the baseline cell's (figures in base units: bytes/s, IO/s, ns).
#[derive(Serialize)]
pub struct CampaignRow<'a> {
    pub cell: &'a str,
    /// The cell's tags (the table's columns).
    pub tags: &'a BTreeMap<String, String>,
    /// Which of the cell's runs (its `run` list, from 0) this row is from.
    pub campaign_run: usize,
    #[serde(flatten)]
    pub row: CompareRow,
}

/// Exactly one run per cell and run index: the latest finished one when
/// there are more (an older storlab's resume ran a cell again after a kill
/// in its teardown), with a note saying which was taken.
pub fn latest_of_each(runs: Vec<(String, StoredRun)>) -> (Vec<(String, StoredRun)>, Vec<String>) {
    let mut out: Vec<(String, StoredRun)> = Vec::new();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (cell, r) in runs {
        let Some(entry) = r.tags.get("campaign_run").cloned() else {
            out.push((cell, r));
            continue;
        };
        *counts.entry((cell.clone(), entry.clone())).or_default() += 1;
        let same = out
            .iter()
            .position(|(c, o)| *c == cell && o.tags.get("campaign_run") == Some(&entry));
        match same {
            Some(i) => {
                let o = &out[i].1;
                if (r.report.finished_at.as_str(), r.id) > (o.report.finished_at.as_str(), o.id) {
                    out[i] = (cell, r);
                }
            }
            None => out.push((cell, r)),
        }
    }
    let mut notes = Vec::new();
    for ((cell, entry), n) in counts {
        if n > 1
            && let Some((_, r)) = out
                .iter()
                .find(|(c, o)| *c == cell && o.tags.get("campaign_run") == Some(&entry))
        {
            notes.push(format!(
                "cell {cell} run {entry}: {n} finished runs are stored; the comparison takes the latest, run {}",
                r.id
            ));
        }
    }
    (out, notes)
}

/// `--dry-run`: every cell with its expanded commands.
pub fn describe(id: &str, c: &Campaign) -> String {
    let mut s = format!(
        "campaign {} ({id}): {} cells, baseline {}, teardown commands stopped after {} s\n",
        c.name,
        c.cells.len(),
        c.baseline,
        c.teardown_timeout_s
    );
    for (i, cell) in c.cells.iter().enumerate() {
        let tags: Vec<String> = cell.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!(
            "\n[{}] {}  {}\n  target: {}\n",
            i + 1,
            cell.name,
            tags.join(" "),
            cell.target
        ));
        if !cell.setup.is_empty() || !cell.teardown.is_empty() {
            // The commands below read the values from these variables.
            let env: Vec<String> = cell
                .matrix
                .iter()
                .map(|(k, v)| (matrix_env(k), v))
                .chain([("STORLAB_TARGET".to_string(), &cell.target)])
                .map(|(k, v)| {
                    let q = shlex::try_quote(v)
                        .map(|q| q.into_owned())
                        .unwrap_or_else(|_| format!("{v:?}"));
                    format!("{k}={q}")
                })
                .collect();
            s.push_str(&format!("  env:      {}\n", env.join(" ")));
        }
        for cmd in &cell.setup {
            s.push_str(&format!("  setup:    {cmd}\n"));
        }
        for r in &cell.run {
            s.push_str(&format!("  run:      storlab {}\n", r.join(" ")));
        }
        for cmd in &cell.teardown {
            s.push_str(&format!("  teardown: {cmd}\n"));
        }
    }
    s
}

/// One row per cell, run and phase direction: each figure and its change
/// against the baseline cell's matching phase, noise marked as `compare`
/// marks it.
pub fn comparison_rows<'a>(c: &'a Campaign, runs: &[(String, StoredRun)]) -> Vec<CampaignRow<'a>> {
    let mut rows = Vec::new();
    let entries: usize = c.cells.iter().map(|c| c.run.len()).max().unwrap_or(0);
    for entry in 0..entries {
        let of_entry = |cell: &str| -> Vec<&StoredRun> {
            runs.iter()
                .filter(|(n, r)| {
                    n == cell
                        && r.tags.get("campaign_run").map(String::as_str)
                            == Some(&entry.to_string())
                })
                .map(|(_, r)| r)
                .collect()
        };
        let base = of_entry(&c.baseline);
        let [base] = base.as_slice() else { continue };
        let mut set: Vec<StoredRun> = Vec::new();
        let mut cell_of = BTreeMap::new();
        for cell in &c.cells {
            if let [r] = of_entry(&cell.name).as_slice() {
                cell_of.insert(r.id, cell);
                set.push((*r).clone());
            }
        }
        // The campaign's matrix is what is under study: its cells rebuild
        // the storage (file system, RAID level, device), so the target and
        // device facts are judged, and so are the workload parameters its
        // cells differ in; anything else that differs (host, tool) still
        // withholds a verdict.
        let mut studied: Vec<String> = vec!["target".into(), "device".into()];
        let shapes = storlab_configdiff::Vary::parse("bs,rw,rwmixread").unwrap_or_default();
        for r in &set {
            let m =
                storlab_configdiff::match_phases(&r.report.phases, &base.report.phases, &shapes);
            for pair in &m.pairs {
                for d in storlab_configdiff::phase_differences(
                    &r.report.phases[pair.phase].params,
                    &base.report.phases[pair.baseline_phase].params,
                ) {
                    if !studied.contains(&d.key) {
                        studied.push(d.key);
                    }
                }
            }
        }
        let vary = storlab_configdiff::Vary::from_list(&studied).unwrap_or_default();
        let cmp = storlab_report::compare_with(&set, base, &vary);
        for row in cmp.rows {
            let Some(cell) = cell_of.get(&row.run_id) else {
                continue;
            };
            rows.push(CampaignRow {
                cell: &cell.name,
                tags: &cell.tags,
                campaign_run: entry,
                row,
            });
        }
    }
    rows
}

/// A cell's run that has no figures in the comparison, and why.
#[derive(Serialize)]
pub struct Missing<'a> {
    pub cell: &'a str,
    pub tags: &'a BTreeMap<String, String>,
    /// Which of the cell's runs (its `run` list, from 0).
    pub campaign_run: usize,
    pub reason: String,
}

/// Every cell's run without a row in the comparison, with the reason: the
/// cell failed, was interrupted or never ran, its run stored nothing, or
/// the baseline has no figures to compare with.
pub fn missing_rows<'a>(
    c: &'a Campaign,
    state: &State,
    runs: &[(String, StoredRun)],
    rows: &[CampaignRow],
    id: &str,
) -> Vec<Missing<'a>> {
    let has_run = |cell: &str, entry: usize| {
        runs.iter().any(|(n, r)| {
            n == cell && r.tags.get("campaign_run").map(String::as_str) == Some(&entry.to_string())
        })
    };
    let why_none = |cell: &str, entry: usize| match state.cells.get(cell) {
        None => {
            format!("not run yet (the campaign stopped before it; storlab campaign --resume {id})")
        }
        Some(s) if s.status == CellStatus::Finished => {
            format!("no finished run {entry} of this cell is in the results database")
        }
        Some(s) => format!(
            "{}: {}",
            s.status.word(),
            s.reason
                .as_deref()
                .unwrap_or("its teardown runs first on --resume")
        ),
    };
    let mut out = Vec::new();
    for cell in &c.cells {
        for entry in 0..cell.run.len() {
            if rows
                .iter()
                .any(|r| r.cell == cell.name && r.campaign_run == entry)
            {
                continue;
            }
            let reason = if !has_run(&cell.name, entry) {
                why_none(&cell.name, entry)
            } else if !has_run(&c.baseline, entry) {
                format!(
                    "no comparison: the baseline cell {} has no figures for run {entry} ({})",
                    c.baseline,
                    why_none(&c.baseline, entry)
                )
            } else {
                "its run has no phase that matches the baseline's".to_string()
            };
            out.push(Missing {
                cell: &cell.name,
                tags: &cell.tags,
                campaign_run: entry,
                reason,
            });
        }
    }
    out
}

/// Every cell that did not finish: `NAME STATUS: REASON`.
pub fn failed_cells(c: &Campaign, state: &State) -> Vec<String> {
    c.cells
        .iter()
        .filter_map(|cell| match state.cells.get(&cell.name) {
            Some(s) if s.status != CellStatus::Finished => Some(format!(
                "{} {}: {}",
                cell.name,
                s.status.word(),
                s.reason
                    .as_deref()
                    .unwrap_or("its teardown runs first on --resume")
            )),
            _ => None,
        })
        .collect()
}

/// Each cell of the `--json` result: its status, its compared runs, its log.
pub fn cell_docs<'a>(
    c: &'a Campaign,
    state: &State,
    runs: &[(String, StoredRun)],
    dir: &Dir,
) -> Vec<CellDoc<'a>> {
    c.cells
        .iter()
        .map(|cell| {
            let st = state.cells.get(&cell.name);
            CellDoc {
                cell,
                status: st.map(|s| s.status.clone()),
                reason: st.and_then(|s| s.reason.clone()),
                run_ids: runs
                    .iter()
                    .filter(|(n, _)| *n == cell.name)
                    .map(|(_, r)| r.id)
                    .collect(),
                log: dir.log(&cell.name),
            }
        })
        .collect()
}
