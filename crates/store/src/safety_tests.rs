//! The store's promises under concurrency and odd files (issue 9): first
//! use by many processes at once, read-only opens that change nothing,
//! empty and corrupt files named as such.

use super::*;
use crate::testdata::{phase, report};
use storlab_types::RwMode;

fn one_run() -> BenchReport {
    report(
        "2026-01-10T08:00:00Z",
        "node",
        "/mnt/x",
        vec![phase("randread", RwMode::RandRead, 4096, 40e6, 300_000)],
    )
}

#[test]
fn sixteen_concurrent_first_users_of_a_new_file_all_succeed() {
    for round in 0..3 {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(format!("fresh-{round}.db"));
        let barrier = std::sync::Barrier::new(16);
        let errors: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..16)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let st = Store::open(&path).map_err(|e| e.to_string())?;
                        for _ in 0..3 {
                            st.save_run("fio-import", &one_run(), &BTreeMap::new(), None)
                                .map_err(|e| e.to_string())?;
                        }
                        Ok::<(), String>(())
                    })
                })
                .collect();
            hs.into_iter()
                .filter_map(|h| h.join().unwrap().err())
                .collect()
        });
        assert!(errors.is_empty(), "round {round}: {errors:?}");
        let st = Store::open_existing(&path).unwrap();
        assert_eq!(st.list(&RunFilter::default()).unwrap().len(), 48);
    }
}

#[test]
fn reading_an_empty_file_names_it_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let e = Store::open_existing(&path).unwrap_err();
    assert!(matches!(e, StoreError::Empty { .. }), "{e}");
    assert!(e.to_string().contains("empty"), "{e}");
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        0,
        "no schema written"
    );
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "no -wal/-shm files left: {names:?}");
}

#[test]
fn reading_never_modifies_the_file() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("r.db");
    {
        let st = Store::open(&path).unwrap();
        st.save_run("bench", &one_run(), &BTreeMap::new(), None)
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let st = Store::open_existing(&path).unwrap();
    assert_eq!(st.list(&RunFilter::default()).unwrap().len(), 1);
    assert!(st.load(1).is_ok());
    // A read-only connection cannot write, even by mistake.
    assert!(
        st.save_run("bench", &one_run(), &BTreeMap::new(), None)
            .is_err()
    );
    drop(st);
    assert_eq!(std::fs::read(&path).unwrap(), before, "file unchanged");
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "no -wal/-shm files left: {names:?}");
}

#[test]
fn corrupt_pages_point_to_sqlite_recover() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("c.db");
    {
        let st = Store::open(&path).unwrap();
        for _ in 0..40 {
            st.save_run("bench", &one_run(), &BTreeMap::new(), None)
                .unwrap();
        }
    }
    // Overwrite every page after the first two with garbage.
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4 * 4096, "{}", bytes.len());
    for (i, b) in bytes.iter_mut().enumerate().skip(2 * 4096) {
        *b = (i as u8).wrapping_mul(31) ^ 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let msg = match Store::open_existing(&path) {
        Err(e) => e.to_string(),
        Ok(st) => match st.list(&RunFilter::default()) {
            Err(e) => e.to_string(),
            Ok(r) => match st.select(&[], true) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("corrupt file read without error ({} runs)", r.len()),
            },
        },
    };
    assert!(msg.contains(".recover") && msg.contains("corrupt"), "{msg}");
}
