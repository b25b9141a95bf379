//! Crash safety of the store itself: a process saving a run phase by phase
//! is killed with SIGKILL while it writes; the database must open, pass
//! SQLite's integrity check, and hold every phase the process had reported
//! committed, with the run marked unfinished.
//!
//! The writer is this test binary re-run on its ignored `crash_writer`
//! test, so no other program is needed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use storlab_fio as fio;
use storlab_store::{RunFilter, RunStatus, Store};

const ENV: &str = "STORLAB_CRASH_TEST_DB";

/// The writer: begins a run and adds phases as fast as it can, printing
/// `STORLAB-COMMITTED N` after each commit, until it is killed.
#[test]
#[ignore = "helper process for killed_writer_loses_no_committed_phase"]
fn crash_writer() {
    let path = std::env::var(ENV).expect("run by killed_writer_loses_no_committed_phase");
    let imp = fio::parse(
        include_str!("../../fio/fixtures/fio-3.33-jobfile-clones.json"),
        None,
    )
    .unwrap();
    let mut header = imp.report.clone();
    header.phases.clear();
    let store = Store::open(std::path::Path::new(&path)).unwrap();
    let id = store
        .begin_run("bench", &header, &BTreeMap::new(), Some("crash test"))
        .unwrap();
    println!("\nSTORLAB-RUN {id}");
    for n in 1.. {
        let mut p = imp.report.phases[n % 2].clone();
        p.params.name = format!("phase-{n}");
        store.add_phase(id, &p).unwrap();
        println!("STORLAB-COMMITTED {n}");
    }
}

#[test]
fn killed_writer_loses_no_committed_phase() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "crash_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut run_id = None;
    let mut committed = 0u64;
    for line in lines.by_ref() {
        let line = line.unwrap();
        // libtest may print its own text before ours on a line.
        if let Some((_, id)) = line.split_once("STORLAB-RUN ") {
            run_id = Some(id.trim().parse::<i64>().unwrap());
        } else if let Some((_, n)) = line.split_once("STORLAB-COMMITTED ") {
            committed = n.trim().parse().unwrap();
            if committed >= 25 {
                break;
            }
        }
    }
    // SIGKILL, most likely in the middle of the next phase's transaction.
    child.kill().unwrap();
    child.wait().unwrap();
    // Lines the writer printed before it died but we had not read yet.
    for line in lines {
        let Ok(line) = line else { break };
        if let Some((_, n)) = line.split_once("STORLAB-COMMITTED ") {
            committed = n.trim().parse().unwrap_or(committed);
        }
    }
    let run_id = run_id.expect("the writer began a run");
    assert!(committed >= 25, "the writer committed {committed} phases");

    let store = Store::open_existing(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let run = store.load(run_id).unwrap();
    let n = run.report.phases.len() as u64;
    // Every phase reported committed is there (and perhaps the one whose
    // commit finished before its line was printed), in order.
    assert!(
        n >= committed && n <= committed + 1,
        "{n} phases, {committed} reported"
    );
    for (i, p) in run.report.phases.iter().enumerate() {
        assert_eq!(p.params.name, format!("phase-{}", i + 1));
    }
    assert!(run.report.interrupted);
    assert!(run.report.stop_reason.unwrap().contains("did not finish"));
    let list = store.list(&RunFilter::default()).unwrap();
    assert_eq!(list[0].status, RunStatus::Unfinished);
    assert_eq!(run.note.as_deref(), Some("crash test"));
}
