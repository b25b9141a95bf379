//! A run's store side: the run header first, each phase as it finishes,
//! the full record at the end; what could not be saved is kept, worded,
//! for the front end to report (a result that cannot be saved is never
//! silent).

use crate::{Store, StoreError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storlab_types::{BenchReport, PhaseResult};

/// The run could not be started in the database.
#[derive(Debug, thiserror::Error)]
#[error("cannot start a run in {}", db.display())]
pub struct BeginError {
    db: PathBuf,
    #[source]
    source: Box<StoreError>,
}

/// The store side of a run. Opened (and the tags checked) before any file
/// is created, so a bad tag or an unusable database never leaves scratch
/// files behind.
pub struct RunSink {
    store: Option<Store>,
    db_path: PathBuf,
    run_id: Option<i64>,
    tags: BTreeMap<String, String>,
    note: Option<String>,
    /// What could not be saved, in order.
    pub failures: Vec<String>,
}

impl RunSink {
    /// `store` None when the user asked not to save (`--no-save`).
    pub fn new(
        store: Option<Store>,
        db_path: &Path,
        tags: BTreeMap<String, String>,
        note: Option<String>,
    ) -> RunSink {
        RunSink {
            store,
            db_path: db_path.to_path_buf(),
            run_id: None,
            tags,
            note,
            failures: Vec::new(),
        }
    }

    /// Save the run header (of run kind `kind`).
    pub fn begin(
        &mut self,
        kind: impl Into<storlab_types::RunKind>,
        header: &BenchReport,
    ) -> Result<(), BeginError> {
        if let Some(st) = &self.store {
            let id = st
                .begin_run(kind, header, &self.tags, self.note.as_deref())
                .map_err(|source| BeginError {
                    db: self.db_path.clone(),
                    source: Box::new(source),
                })?;
            self.run_id = Some(id);
        }
        Ok(())
    }

    /// Save one finished phase; a failure is kept and reported at the end.
    pub fn phase(&mut self, phase: &PhaseResult) {
        if let (Some(st), Some(id)) = (&self.store, self.run_id)
            && let Err(e) = st.add_phase(id, phase)
        {
            self.failures.push(format!(
                "phase {} could not be saved to {}: {e}",
                phase.params.name,
                self.db_path.display()
            ));
        }
    }

    /// Save the whole record. Returns the run id when everything was saved.
    pub fn finish(&mut self, report: &BenchReport) -> Option<i64> {
        let (Some(st), Some(id)) = (&self.store, self.run_id) else {
            return None;
        };
        match st.finish_run(id, report) {
            Ok(()) if self.failures.is_empty() => Some(id),
            Ok(()) => None,
            Err(e) => {
                self.failures.push(format!(
                    "the run could not be saved to {}: {e}",
                    self.db_path.display()
                ));
                None
            }
        }
    }

    /// The run's id in the store, once begun.
    pub fn run_id(&self) -> Option<i64> {
        self.run_id
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> BenchReport {
        storlab_testkit::json_records::report("h", "6.1", "/t", "vda", "storlab", "0")
    }

    /// A saved run gets its id; with no store (`--no-save`) nothing is
    /// saved and nothing fails.
    #[test]
    fn saves_a_run_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let mut sink = RunSink::new(Some(Store::open(&db).unwrap()), &db, BTreeMap::new(), None);
        sink.begin("bench", &header()).unwrap();
        let id = sink.run_id().unwrap();
        assert_eq!(sink.finish(&header()), Some(id));
        assert!(sink.failures.is_empty());
        let mut none = RunSink::new(None, &db, BTreeMap::new(), None);
        none.begin("bench", &header()).unwrap();
        assert_eq!(none.finish(&header()), None);
        assert!(none.failures.is_empty());
    }

    /// A run that cannot be finished (here: finished twice) is not
    /// reported as saved, and says why, naming the database.
    #[test]
    fn a_failed_finish_is_kept_and_worded() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let mut sink = RunSink::new(Some(Store::open(&db).unwrap()), &db, BTreeMap::new(), None);
        sink.begin("bench", &header()).unwrap();
        assert!(sink.finish(&header()).is_some());
        assert_eq!(sink.finish(&header()), None);
        assert_eq!(sink.failures.len(), 1);
        assert!(
            sink.failures[0].contains("could not be saved to"),
            "{:?}",
            sink.failures
        );
        assert!(sink.failures[0].contains("s.db"), "{:?}", sink.failures);
    }
}
