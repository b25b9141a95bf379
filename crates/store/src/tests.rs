//! Store tests on real SQLite files in temporary directories.

use super::*;
use crate::testdata::{phase, report, tags, timeline};
use storlab_types::RwMode;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("storlab.db");
    (dir, path)
}

fn two_phases() -> Vec<PhaseResult> {
    vec![
        phase("seqwrite", RwMode::Write, 1 << 20, 500e6, 2_000_000),
        phase("randread", RwMode::RandRead, 4096, 40e6, 300_000),
    ]
}

#[test]
fn a_run_saved_phase_by_phase_loads_back_whole() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), schema::LATEST);
    let mut fin = report("2026-11-21T08:00:00Z", "node1", "/scratch", two_phases());
    fin.monitor = Some(timeline());
    let mut header = fin.clone();
    header.phases.clear();
    header.monitor = None;
    let t = tags(&[("controller", "perc5e"), ("raid", "R6/12")]);
    let id = store
        .begin_run("bench", &header, &t, Some("first try"))
        .unwrap();
    assert_eq!(store.add_phase(id, &fin.phases[0]).unwrap(), 0);
    assert_eq!(store.add_phase(id, &fin.phases[1]).unwrap(), 1);
    store
        .add_monitor(id, fin.monitor.as_ref().unwrap())
        .unwrap();
    store.finish_run(id, &fin).unwrap();

    let run = store.load(id).unwrap();
    assert_eq!(run.id, id);
    assert_eq!(run.kind, "bench");
    assert_eq!(run.tags, t);
    assert_eq!(run.note.as_deref(), Some("first try"));
    assert_eq!(run.report, fin);
    // finish_run does not duplicate what add_phase/add_monitor stored.
    assert_eq!(store.load_monitors(id).unwrap().len(), 1);
    assert!(matches!(
        store.add_phase(id, &fin.phases[0]),
        Err(StoreError::AlreadyFinished(_))
    ));

    // Reopening the file finds the same run.
    drop(store);
    let again = Store::open_existing(&path).unwrap();
    assert_eq!(again.load(id).unwrap().report, fin);
}

#[test]
fn an_unfinished_run_loads_as_interrupted_with_its_finished_phases() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let header = report("2026-11-21T08:00:00Z", "node1", "/scratch", vec![]);
    let id = store
        .begin_run("bench", &header, &BTreeMap::new(), None)
        .unwrap();
    let phases = two_phases();
    store.add_phase(id, &phases[0]).unwrap();
    // storlab dies here: no finish_run. A new process opens the file.
    drop(store);
    let store = Store::open_existing(&path).unwrap();
    let run = store.load(id).unwrap();
    assert!(run.report.interrupted);
    assert_eq!(run.report.phases, vec![phases[0].clone()]);
    let list = store.list(&RunFilter::default()).unwrap();
    // This process (the writer) is alive: the run is in progress.
    assert_eq!(list[0].status, RunStatus::Running);
    assert!(
        run.report
            .stop_reason
            .unwrap()
            .contains("still in progress")
    );
    assert_eq!(list[0].phases, 1);

    // The writer dies: a process that has exited stands in for it.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    // (Through a writing connection: the reader above is read-only.)
    Store::open(&path)
        .unwrap()
        .conn
        .execute(
            "UPDATE runs SET writer_pid = ?1 WHERE id = ?2",
            params![dead_pid, id],
        )
        .unwrap();
    let list = store.list(&RunFilter::default()).unwrap();
    assert_eq!(list[0].status, RunStatus::Unfinished);
    let run = store.load(id).unwrap();
    assert!(run.report.interrupted);
    assert!(run.report.stop_reason.unwrap().contains("did not finish"));
    assert_eq!(run.report.phases, vec![phases[0].clone()]);
}

#[test]
fn finish_run_adds_phases_not_yet_saved() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let mut fin = report("2026-11-21T08:00:00Z", "n", "/t", two_phases());
    fin.interrupted = true;
    fin.stop_reason = Some("Ctrl-C".into());
    let id = store
        .begin_run(
            "bench",
            &report("2026-11-21T08:00:00Z", "n", "/t", vec![]),
            &BTreeMap::new(),
            None,
        )
        .unwrap();
    store.add_phase(id, &fin.phases[0]).unwrap();
    store.finish_run(id, &fin).unwrap();
    let run = store.load(id).unwrap();
    assert_eq!(run.report, fin);
    assert_eq!(
        store.list(&RunFilter::default()).unwrap()[0].status,
        RunStatus::Interrupted
    );
}

fn three_runs(store: &Store) -> [i64; 3] {
    let a = store
        .save_run(
            "bench",
            &report("2026-01-10T08:00:00Z", "node1", "/mnt/sas", two_phases()),
            &tags(&[("cfg", "a"), ("fs", "xfs")]),
            None,
        )
        .unwrap();
    let b = store
        .save_run(
            "bench",
            &report(
                "2026-02-10T08:00:00Z",
                "node2",
                "/mnt/scsi",
                vec![phase("seq", RwMode::Read, 1 << 20, 900e6, 1_000_000)],
            ),
            &tags(&[("cfg", "b"), ("fs", "xfs")]),
            Some("scsi enclosure"),
        )
        .unwrap();
    let c = store
        .save_run(
            "fio-import",
            &report("2026-03-10T08:00:00Z", "node1", "/mnt/sas", two_phases()),
            &tags(&[("cfg", "a"), ("fs", "ext4")]),
            None,
        )
        .unwrap();
    [a, b, c]
}

#[test]
fn list_filters_by_tag_target_host_date_workload_and_kind() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let [a, b, c] = three_runs(&store);
    let ids = |f: RunFilter| -> Vec<i64> { store.list(&f).unwrap().iter().map(|s| s.id).collect() };
    assert_eq!(ids(RunFilter::default()), vec![a, b, c]);
    assert_eq!(
        ids(RunFilter {
            tags: vec![("cfg".into(), "a".into())],
            ..Default::default()
        }),
        vec![a, c]
    );
    assert_eq!(
        ids(RunFilter {
            tags: vec![("cfg".into(), "a".into()), ("fs".into(), "xfs".into())],
            ..Default::default()
        }),
        vec![a]
    );
    assert_eq!(
        ids(RunFilter {
            target: Some("scsi".into()),
            ..Default::default()
        }),
        vec![b]
    );
    assert_eq!(
        ids(RunFilter {
            host: Some("node1".into()),
            ..Default::default()
        }),
        vec![a, c]
    );
    assert_eq!(
        ids(RunFilter {
            since: Some("2026-02-01".into()),
            until: Some("2026-03-01".into()),
            ..Default::default()
        }),
        vec![b]
    );
    assert_eq!(
        ids(RunFilter {
            rw: Some("randread".into()),
            ..Default::default()
        }),
        vec![a, c]
    );
    assert_eq!(
        ids(RunFilter {
            kind: Some("fio-import".into()),
            ..Default::default()
        }),
        vec![c]
    );
    assert_eq!(
        ids(RunFilter {
            limit: Some(2),
            ..Default::default()
        }),
        vec![b, c]
    );
    let s = &store.list(&RunFilter::default()).unwrap()[0];
    assert_eq!(
        s.workloads,
        vec!["write".to_string(), "randread".to_string()]
    );
    assert_eq!(s.block_sizes, vec![1 << 20, 4096]);
    assert_eq!(s.phases, 2);
    assert_eq!(s.status, RunStatus::Finished);
}

#[test]
fn selectors_resolve_to_runs() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let [a, b, c] = three_runs(&store);
    let sel = |s: &str| RunSelector::parse(s).unwrap();
    assert_eq!(store.resolve(&[sel("latest")], false).unwrap(), vec![c]);
    assert_eq!(store.resolve(&[sel("latest~2")], false).unwrap(), vec![a]);
    assert_eq!(
        store.resolve(&[sel(&b.to_string())], false).unwrap(),
        vec![b]
    );
    assert_eq!(
        store.resolve(&[sel("tag:cfg=a")], false).unwrap(),
        vec![a, c]
    );
    assert_eq!(
        store.resolve(&[sel("tag:cfg=a,fs=ext4")], false).unwrap(),
        vec![c]
    );
    // Several selectors: their runs in the order given, no duplicates.
    assert_eq!(
        store
            .resolve(&[sel("tag:cfg=b"), sel("tag:fs=xfs"), sel("latest")], false)
            .unwrap(),
        vec![b, a, c]
    );
    assert_eq!(store.resolve(&[], true).unwrap(), vec![a, b, c]);
    for (s, needle) in [
        ("99", "'99'"),
        ("latest~5", "holds 3 runs"),
        ("tag:cfg=zzz", "tags"),
    ] {
        let e = store.resolve(&[sel(s)], false).unwrap_err();
        assert!(matches!(e, StoreError::NoMatch { .. }), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
    let runs = store.select(&[sel("tag:fs=xfs")], false).unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b]);
    assert_eq!(runs[1].note.as_deref(), Some("scsi enclosure"));
}

#[test]
fn a_version_1_database_is_upgraded_on_open() {
    let (_d, path) = temp_db();
    // Write the file exactly as a storlab with schema v1 did, by hand.
    let p = phase("randread", RwMode::RandRead, 4096, 40e6, 321_000);
    let r = report("2026-01-10T08:00:00Z", "old-node", "/mnt/old", vec![]);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.pragma_update(None, "application_id", schema::APPLICATION_ID)
            .unwrap();
        conn.execute(
            "INSERT INTO runs (kind, status, started_at, finished_at, host, target, tool, tool_version, note, report_json) \
             VALUES ('bench', 'finished', ?1, ?1, 'old-node', '/mnt/old', 'storlab', '0.0.1', 'from v1', ?2)",
            params![r.started_at, serde_json::to_string(&r).unwrap()],
        )
        .unwrap();
        conn.execute("INSERT INTO run_tags VALUES (1, 'cfg', 'old')", [])
            .unwrap();
        conn.execute(
            "INSERT INTO phases VALUES (1, 0, 'randread', 'randread', 4096, 1, 4, 'psync', 'direct', 67108864, \
             2000000000, 40000000.0, 9765.6, 0, ?1)",
            [serde_json::to_string(&p).unwrap()],
        )
        .unwrap();
        let cols: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('phases')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(cols, 15, "the hand-made file has the v1 phases table");
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), schema::LATEST);
    // The v2 column was filled from the JSON saved by v1.
    let p99: i64 = store
        .conn
        .query_row(
            "SELECT read_lat_p99_ns FROM phases WHERE run_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(p99, 321_000);
    let run = store.load(1).unwrap();
    assert_eq!(run.report.phases, vec![p.clone()]);
    assert_eq!(run.tags, tags(&[("cfg", "old")]));
    assert_eq!(run.note.as_deref(), Some("from v1"));
    // And the upgraded file takes v2 records (device timelines).
    let id = store
        .begin_run("bench", &r, &BTreeMap::new(), None)
        .unwrap();
    store.add_monitor(id, &timeline()).unwrap();
    assert_eq!(store.load(id).unwrap().report.monitor, Some(timeline()));
}

#[test]
fn a_database_from_a_newer_storlab_is_refused() {
    let (_d, path) = temp_db();
    Store::open(&path).unwrap();
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", schema::LATEST + 1)
            .unwrap();
    }
    let e = Store::open(&path).unwrap_err();
    assert!(
        matches!(e, StoreError::TooNew { found, .. } if found == schema::LATEST + 1),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("newer storlab") && msg.contains("upgrade storlab"),
        "{msg}"
    );
    // Refusing did not touch the file.
    let conn = Connection::open(&path).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, schema::LATEST + 1);
}

#[test]
fn files_that_are_not_storlab_databases_are_refused() {
    let (d, path) = temp_db();
    std::fs::write(&path, b"this is a text file, not a database, padded to look big enough ............................................................").unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(e.to_string().contains("not an SQLite file"), "{e}");

    let other = d.path().join("other.sqlite");
    {
        let conn = Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
    }
    let e = Store::open(&other).unwrap_err();
    assert!(e.to_string().contains("another program"), "{e}");

    let e = Store::open(Path::new("")).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = Store::open(&d.path().join("no/such/dir/x.db")).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");

    let missing = d.path().join("missing.db");
    let e = Store::open_existing(&missing).unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
    assert!(
        !missing.exists(),
        "a read-only open must not create the file"
    );
}

#[test]
fn the_database_uses_wal_and_readers_do_not_wait_for_a_writer() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let [a, _, _] = three_runs(&store);
    let mode: String = store
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");

    // Another process is in the middle of writing a run (write transaction open).
    let mut writer = Connection::open(&path).unwrap();
    let tx = writer
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .unwrap();
    tx.execute(
        "INSERT INTO runs (kind, status, started_at, host, target, tool, tool_version, report_json) \
         VALUES ('bench', 'running', '2026-04-01T00:00:00Z', 'h', '/t', 'storlab', '0', '{}')",
        [],
    )
    .unwrap();
    // A reader with a short busy timeout still reads at once, and sees only
    // committed runs.
    let reader = Store::open_existing(&path).unwrap();
    reader.conn.busy_timeout(Duration::from_millis(50)).unwrap();
    let t0 = std::time::Instant::now();
    assert_eq!(reader.list(&RunFilter::default()).unwrap().len(), 3);
    assert_eq!(reader.load(a).unwrap().report.phases.len(), 2);
    assert!(t0.elapsed() < Duration::from_secs(2));
    tx.commit().unwrap();
    assert_eq!(reader.list(&RunFilter::default()).unwrap().len(), 4);
}

#[test]
fn a_reader_follows_a_run_while_it_writes_phase_by_phase() {
    let (_d, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let header = report("2026-11-21T08:00:00Z", "n", "/t", vec![]);
    let id = store
        .begin_run("bench", &header, &BTreeMap::new(), None)
        .unwrap();
    const N: usize = 40;
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let store = Store::open(&writer_path).unwrap();
        for i in 0..N {
            let p = phase(&format!("p{i}"), RwMode::Write, 4096, 1e6 + i as f64, 1000);
            store.add_phase(id, &p).unwrap();
        }
        let mut fin = report("2026-11-21T08:00:00Z", "n", "/t", vec![]);
        fin.finished_at = "2026-11-21T09:00:00Z".into();
        store.finish_run(id, &fin).unwrap();
    });
    let reader = Store::open_existing(&path).unwrap();
    let mut seen = 0;
    let mut reads = 0;
    loop {
        let run = reader.load(id).unwrap();
        let n = run.report.phases.len();
        assert!(n >= seen, "phases went from {seen} to {n}");
        for (i, p) in run.report.phases.iter().enumerate() {
            assert_eq!(p.params.name, format!("p{i}"), "phases come back in order");
        }
        seen = n;
        reads += 1;
        if !run.report.interrupted {
            assert_eq!(n, N);
            break;
        }
    }
    writer.join().unwrap();
    assert!(reads >= 1);
}

/// A phase of two job groups (several workloads at once).
fn grouped_phase() -> PhaseResult {
    use storlab_types::{DirStats, GroupResult, LatencyStats, PhaseGroups};
    let mut p = phase("mix", RwMode::ReadWrite, 1 << 20, 300e6, 900_000);
    let member = |name: &str, rw: RwMode, first: u32, n: u32, read: u64, write: u64| {
        let mut gp = phase(name, rw, 1 << 20, 0.0, 0).params;
        gp.numjobs = n;
        let d = |bytes: u64| DirStats {
            bytes,
            ops: bytes >> 20,
            bw_bytes_per_s: bytes as f64,
            iops: (bytes >> 20) as f64,
            lat_ns: (bytes > 0).then_some(LatencyStats {
                p99: 700_000 + u64::from(first),
                ..Default::default()
            }),
        };
        GroupResult {
            name: name.into(),
            first_job: first,
            params: gp,
            elapsed_ns: 1_000_000_000,
            end_ns: 1_000_000_000,
            read: d(read),
            write: d(write),
            total: d(read + write),
            ..Default::default()
        }
    };
    p.groups = Some(PhaseGroups {
        reporting: Vec::new(),
        overlap: 0.97,
        all_moving_ns: 970_000_000,
        groups: vec![
            member("dd-read", RwMode::Read, 0, 6, 6 << 30, 0),
            member("dd-write", RwMode::Write, 6, 3, 0, 3 << 30),
        ],
    });
    p
}

/// (gseq, name, rw, numjobs, read bytes, write bytes, read p99) per row.
type GroupRow = (i64, String, String, i64, i64, i64, Option<i64>);

fn group_rows(store: &Store, run: i64) -> Vec<GroupRow> {
    let mut st = store
        .conn
        .prepare(
            "SELECT gseq, name, rw, numjobs, read_bytes, write_bytes, read_lat_p99_ns \
             FROM phase_groups WHERE run_id = ?1 ORDER BY seq, gseq",
        )
        .unwrap();
    st.query_map([run], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Schema v4: a phase's groups are rows of their own, filled from the JSON
/// for a v3 file (which kept them only inside `phase_json`); a v3 file's
/// ordinary phases load unchanged, and new runs get their rows on save.
#[test]
fn a_version_3_database_gets_group_rows_from_its_json() {
    let (_d, path) = temp_db();
    let g = grouped_phase();
    let plain = phase("randread", RwMode::RandRead, 4096, 40e6, 321_000);
    let r = report("2026-11-20T08:00:00Z", "node", "/mnt/a", vec![]);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
        for m in &schema::MIGRATIONS[..3] {
            conn.execute_batch(m).unwrap();
        }
        conn.pragma_update(None, "user_version", 3).unwrap();
        conn.pragma_update(None, "application_id", schema::APPLICATION_ID)
            .unwrap();
        conn.execute(
            "INSERT INTO runs (kind, status, started_at, finished_at, host, target, tool, tool_version, note, report_json) \
             VALUES ('bench', 'finished', ?1, ?1, 'node', '/mnt/a', 'storlab', '0.0.3', NULL, ?2)",
            params![r.started_at, serde_json::to_string(&r).unwrap()],
        )
        .unwrap();
        for (seq, p) in [&plain, &g].into_iter().enumerate() {
            conn.execute(
                "INSERT INTO phases (run_id, seq, name, rw, bs_bytes, numjobs, iodepth, engine, cache, \
                 size_bytes, elapsed_ns, bw_bytes_per_s, iops, interrupted, phase_json) \
                 VALUES (1, ?1, ?2, 'read', 4096, 1, 1, 'psync', 'direct', 1, 1, 1.0, 1.0, 0, ?3)",
                params![seq as i64, p.params.name, serde_json::to_string(p).unwrap()],
            )
            .unwrap();
        }
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), schema::LATEST);
    let want = vec![
        (
            0,
            "dd-read".into(),
            "read".into(),
            6,
            6 << 30,
            0,
            Some(700_000),
        ),
        (1, "dd-write".into(), "write".into(), 3, 0, 3 << 30, None),
    ];
    assert_eq!(group_rows(&store, 1), want);
    let run = store.load(1).unwrap();
    assert_eq!(run.report.phases, vec![plain.clone(), g.clone()]);
    assert!(
        run.report.phases[0].groups.is_none(),
        "an old phase has none"
    );
    // A new run's groups get their rows as the phase is saved.
    let id = store
        .begin_run("bench", &r, &BTreeMap::new(), None)
        .unwrap();
    store.add_phase(id, &g).unwrap();
    assert_eq!(group_rows(&store, id), want);
    assert_eq!(store.load(id).unwrap().report.phases, vec![g]);
}
