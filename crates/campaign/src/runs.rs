//! A campaign's runs in the results database: a cell's finished runs, and
//! whether the cell is done (the state says so and its runs are stored).

use crate::spec::Cell;
use crate::state::{CellState, CellStatus};
use storlab_store::{RunSelector, Store};
use storlab_types::StoredRun;

/// The campaign's finished runs of one cell, oldest first.
pub fn stored(store: &Store, id: &str, cell: &str) -> Vec<StoredRun> {
    let sel = RunSelector::Tags(vec![
        ("campaign".into(), id.into()),
        ("cell".into(), cell.into()),
    ]);
    let runs = match store.select(&[sel], false) {
        Ok(r) => r,
        Err(_) => return Vec::new(),
    };
    runs.into_iter()
        .filter(|r| !r.report.interrupted && !r.report.finished_at.is_empty())
        .collect()
}

/// Whether every run of `cell` has a finished result in the store.
pub fn all_runs_stored(store: &Store, id: &str, cell: &Cell) -> bool {
    let runs = stored(store, id, &cell.name);
    (0..cell.run.len()).all(|i| {
        let i = i.to_string();
        runs.iter()
            .any(|r| r.tags.get("campaign_run").map(String::as_str) == Some(i.as_str()))
    })
}

/// A cell counts as finished only when it ended so and its results are in
/// the store.
pub fn finished(store: &Store, id: &str, cell: &Cell, st: Option<&CellState>) -> bool {
    let Some(st) = st else { return false };
    if st.status != CellStatus::Finished {
        return false;
    }
    stored(store, id, &cell.name).len() >= st.stored_runs.max(cell.run.len())
}
