//! Where a run's results go, and the promise that they never vanish: the
//! store (the run header first, each phase as it finishes, the full record
//! at the end), the `--json-out` file, and, when any of those fails, a
//! fallback JSON file in the working directory, named loudly, with a
//! non-zero exit.

use crate::commands::outfile::Permit;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storlab_store::{RunSink, Store};
use storlab_types::BenchReport;

/// The store side of a run ([`storlab_store::RunSink`]: header, phases,
/// record, what could not be saved) and the `--json-out` file's permit.
pub struct Sink {
    rec: RunSink,
    /// The `--json-out` file's permit, from the check made before the run.
    json_out: Option<Permit>,
}

impl std::ops::Deref for Sink {
    type Target = RunSink;
    fn deref(&self) -> &RunSink {
        &self.rec
    }
}

impl std::ops::DerefMut for Sink {
    fn deref_mut(&mut self) -> &mut RunSink {
        &mut self.rec
    }
}

impl Sink {
    /// `store` None when the user asked not to save (`--no-save`).
    pub fn new(
        store: Option<Store>,
        db_path: &Path,
        tags: BTreeMap<String, String>,
        note: Option<String>,
    ) -> Sink {
        Sink {
            rec: RunSink::new(store, db_path, tags, note),
            json_out: None,
        }
    }

    /// Save the run header (of run kind `kind`).
    pub fn begin(
        &mut self,
        kind: impl Into<storlab_types::RunKind>,
        header: &BenchReport,
    ) -> Result<()> {
        Ok(self.rec.begin(kind, header)?)
    }

    /// Write the run's JSON document to `--json-out` at the end, under the
    /// permit its check before the run gave ([`super::check_paths`]).
    pub fn json_out_to(&mut self, permit: Option<Permit>) {
        self.json_out = permit;
    }

    /// The `--json-out` file's permit, if there is one.
    pub fn json_out(&self) -> Option<&Permit> {
        self.json_out.as_ref()
    }
}

/// A finished run's result as `main` shows it: the table (with what
/// follows it: a profile's figures, where the run was saved) or the JSON
/// record.
pub type RunDoc = crate::output::Rendered;

/// The end of every run (bench and md): save the whole record, write
/// `--json-out`, build the document (`table` renders the record; where it
/// was saved is added), and say on stderr what [`report_ending`] says.
/// Returns the record as saved (with what could not be saved among its
/// warnings), the document, and `Some(Outcome::Error)` when the results
/// are not all where the user asked.
pub fn conclude(
    mut report: BenchReport,
    sink: &mut Sink,
    table: impl FnOnce(&BenchReport) -> String,
) -> Result<(BenchReport, RunDoc, Option<crate::Outcome>)> {
    let saved = sink.finish(&report);
    report.warnings.extend(sink.failures.iter().cloned());
    let json = serde_json::to_string_pretty(&report).context("cannot serialise the results")?;
    let mut lost = !sink.failures.is_empty();
    // A --json-out the user asked for and did not get is an error too, even
    // when the store kept the run.
    let mut json_out_failed = false;
    if let Some(permit) = sink.json_out()
        && let Err(e) = permit.write(format!("{json}\n").as_bytes())
    {
        crate::output::print_error(&e.into());
        lost |= saved.is_none();
        json_out_failed = true;
    }
    let mut text = table(&report);
    if let Some(id) = saved {
        text.push_str(&format!(
            "Saved as run {id} in {} (storlab show {id}).\n",
            sink.db_path().display()
        ));
    }
    let ending = report_ending(&report, &json, lost, json_out_failed);
    Ok((report, RunDoc::new(text, json + "\n"), ending))
}

/// What every run prints after its summary, in one place for bench and md:
/// the run's and each phase's warnings, why it stopped early, and, when
/// the store lost a phase, the fallback file holding the whole record (a
/// result that cannot be saved is never silent). `Some(Outcome::Error)`
/// when the run must end with an error: a lost record or a `--json-out`
/// that could not be written.
fn report_ending(
    report: &BenchReport,
    json: &str,
    lost: bool,
    json_out_failed: bool,
) -> Option<crate::Outcome> {
    for w in &report.warnings {
        crate::output::warn(w);
    }
    for ph in &report.phases {
        for w in &ph.warnings {
            crate::output::warn(&format!("{}: {w}", ph.params.name));
        }
    }
    if let Some(reason) = &report.stop_reason {
        eprintln!("storlab: stopped early: {reason}");
    }
    if lost {
        match write_fallback(json) {
            Ok(p) => eprintln!(
                "storlab: error: the results could not all be saved; the full record is in {}",
                p.display()
            ),
            Err(e) => eprintln!("storlab: error: the results could not be saved: {e:#}"),
        }
        return Some(crate::Outcome::Error);
    }
    json_out_failed.then_some(crate::Outcome::Error)
}

/// Write `json` where nothing is lost ([`storlab_bench::write_fallback`]).
pub fn write_fallback(json: &str) -> Result<PathBuf> {
    Ok(storlab_bench::write_fallback(json)?)
}
