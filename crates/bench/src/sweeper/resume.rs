//! `--resume ID`: which stored runs of a sweep count as its finished
//! points, and which stored command line says how the sweep was first run.
//! The front end reads the store; the decisions are here.

use super::resume_words;
use std::collections::BTreeMap;
use std::path::PathBuf;
use storlab_types::BenchReport;

/// `--resume ID` found no run tagged `sweep=ID`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--resume {id}: no runs tagged sweep={id} in {} (the sweep id is printed at its start; \
     storlab runs --tag sweep=ID)",
    db.display()
)]
pub struct NoSuchSweep {
    pub id: String,
    /// The results database searched.
    pub db: PathBuf,
}

/// A stored run of a sweep, as the store lists it.
#[derive(Debug, Clone, Copy)]
pub struct StoredRun<'a> {
    pub id: i64,
    /// The run ended (its status is `finished`).
    pub finished: bool,
    pub tags: &'a BTreeMap<String, String>,
}

/// The points of a sweep already stored in full: of `runs`, the finished
/// ones with a `sweep_params` label whose record (`load`ed) was not
/// interrupted and has phases; label → (run, record).
pub fn finished_points<'a, E>(
    runs: impl IntoIterator<Item = StoredRun<'a>>,
    mut load: impl FnMut(i64) -> Result<BenchReport, E>,
) -> Result<BTreeMap<String, (i64, BenchReport)>, E> {
    let mut out = BTreeMap::new();
    for r in runs.into_iter().filter(|r| r.finished) {
        let Some(label) = r.tags.get("sweep_params") else {
            continue;
        };
        let report = load(r.id)?;
        if !report.interrupted && !report.phases.is_empty() {
            out.insert(label.clone(), (r.id, report));
        }
    }
    Ok(out)
}

/// The first of `runs` whose command line (`line_of`) is a sweep's that
/// `parse` accepts (the words after `sweep`, without `--resume`): the run,
/// the note that says so, and what `parse` made of it.
pub fn first_resumable<T, E>(
    id: &str,
    runs: impl IntoIterator<Item = i64>,
    mut line_of: impl FnMut(i64) -> Result<Vec<String>, E>,
    mut parse: impl FnMut(Vec<String>) -> Option<T>,
) -> Result<Option<(String, T)>, E> {
    for run in runs {
        let line = line_of(run)?;
        let Some(parsed) = resume_words(&line).and_then(&mut parse) else {
            continue;
        };
        let from = line.iter().position(|a| a == "sweep").unwrap_or(0);
        let note = format!(
            "resuming sweep {id} as run {run}: storlab {}",
            line[from..].join(" ")
        );
        return Ok(Some((note, parsed)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_testkit::records;
    use storlab_types::RwMode;

    fn report(interrupted: bool, phases: usize) -> BenchReport {
        let phase = || records::phase("p", RwMode::Read, 4096, 1e6, 100);
        let mut r = records::report("2026-01-01T00:00:00Z", "h", "/t", vec![]);
        r.phases = (0..phases).map(|_| phase()).collect();
        r.interrupted = interrupted;
        r
    }

    /// Only finished, labelled, whole runs are points already done.
    #[test]
    fn a_point_is_stored_when_finished_whole_and_labelled() {
        let labelled = |l: &str| BTreeMap::from([("sweep_params".to_string(), l.to_string())]);
        let (a, b, c, d) = (
            labelled("bs=4k"),
            labelled("bs=8k"),
            labelled("bs=16k"),
            BTreeMap::new(),
        );
        let runs = [
            StoredRun {
                id: 1,
                finished: true,
                tags: &a,
            },
            StoredRun {
                id: 2,
                finished: false,
                tags: &b,
            },
            StoredRun {
                id: 3,
                finished: true,
                tags: &c,
            },
            StoredRun {
                id: 4,
                finished: true,
                tags: &d,
            },
        ];
        let got = finished_points(runs, |id| {
            Ok::<_, ()>(match id {
                1 => report(false, 1),
                3 => report(true, 1),
                _ => report(false, 0),
            })
        })
        .unwrap();
        assert_eq!(got.keys().collect::<Vec<_>>(), ["bs=4k"]);
        assert_eq!(got["bs=4k"].0, 1);
    }

    /// The first run whose line parses is the one resumed; a line that is
    /// no sweep's, or that the parser refuses, is passed over.
    #[test]
    fn the_first_parsable_sweep_line_is_resumed() {
        let lines = |id: i64| -> Result<Vec<String>, ()> {
            Ok(match id {
                1 => vec!["storlab".into(), "bench".into(), "x".into()],
                2 => vec!["storlab".into(), "sweep".into(), "--bad".into()],
                _ => [
                    "/bin/storlab",
                    "sweep",
                    "d",
                    "--vary",
                    "bs=4k",
                    "--resume",
                    "sw-1",
                ]
                .map(String::from)
                .to_vec(),
            })
        };
        let parse = |words: Vec<String>| (!words.contains(&"--bad".to_string())).then_some(words);
        let (note, words) = first_resumable("sw-1", [1, 2, 3], lines, parse)
            .unwrap()
            .unwrap();
        assert_eq!(words, ["d", "--vary", "bs=4k"]);
        assert_eq!(
            note,
            "resuming sweep sw-1 as run 3: storlab sweep d --vary bs=4k --resume sw-1"
        );
        assert!(
            first_resumable("sw-1", [1, 2], lines, parse)
                .unwrap()
                .is_none()
        );
    }
}
