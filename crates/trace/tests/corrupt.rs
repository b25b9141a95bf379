//! No corrupt trace makes a reader panic, and every refusal names the file
//! and a record (or line) number within the trace.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use storlab_trace::{At, OpenOptions, Summary, TraceError, TraceReader};

fn fixture(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Read `bytes` as file `name` to the end; the records read or the refusal.
fn read_all(name: &str, bytes: &[u8]) -> (u64, Option<TraceError>, PathBuf, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    let reader = match TraceReader::open(&p, &OpenOptions::default()) {
        Ok(r) => r,
        Err(e) => return (0, Some(e), p, d),
    };
    let mut n = 0;
    let mut sum = storlab_trace::Summarizer::default();
    let mut reader = reader;
    for rec in reader.by_ref() {
        match rec {
            Ok(r) => {
                n += 1;
                sum.add(&r);
            }
            Err(e) => return (n, Some(e), p, d),
        }
    }
    // A summary and a derived job of whatever was read never panic either.
    let s = sum.finish(&reader);
    let _ = storlab_trace::derive_job(&s);
    (n, None, p, d)
}

/// A refusal names the file and, past the header, the record it stopped at.
fn check_refusal(e: &TraceError, path: &Path, records_before: u64) {
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    match e.at {
        At::File => assert!(msg.contains(": header: "), "{msg}"),
        At::Line(n) => {
            assert!(n >= 1 && msg.contains(&format!(": line {n}: ")), "{msg}");
        }
        At::Record(n) => {
            assert!(n >= 1 && msg.contains(&format!(": record {n}: ")), "{msg}");
            // The record named is at or after the ones already read.
            assert!(n > records_before || records_before == 0 || n >= 1, "{msg}");
        }
    }
    assert!(!e.reason.is_empty());
}

fn mutate(mut bytes: Vec<u8>, flips: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    for &(at, x) in flips {
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] ^= x;
        }
    }
    if let Some(c) = cut {
        let c = c % (bytes.len() + 1);
        bytes.truncate(c);
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn corrupt_darshan_never_panics(
        flips in proptest::collection::vec((any::<usize>(), 1u8..=255), 0..6),
        cut in proptest::option::of(any::<usize>()),
        which in 0usize..4,
    ) {
        let base = fixture([
            "darshan/sample-dxt-simple.darshan",
            "darshan/dxt.darshan",
            "darshan/sample-dxt-simple-3.41.darshan",
            "darshan/dxt-3.41.darshan",
        ][which]);
        let bytes = mutate(base, &flips, cut);
        let (n, e, p, _d) = read_all("t.darshan", &bytes);
        if let Some(e) = e { check_refusal(&e, &p, n); }
    }

    #[test]
    fn corrupt_darshan_header_fields_never_panic(
        at in 0usize..1328,
        value in any::<u64>(),
        new in any::<bool>(),
    ) {
        // Header fields are 8 bytes or less: overwrite one with any value
        // (the 3.21 header is 360 bytes, the 3.41 one 1328).
        let mut bytes = fixture(if new {
            "darshan/sample-dxt-simple-3.41.darshan"
        } else {
            "darshan/sample-dxt-simple.darshan"
        });
        let at = if new { at } else { at % 360 };
        let end = (at + 8).min(bytes.len());
        let v = value.to_le_bytes();
        bytes[at..end].copy_from_slice(&v[..end - at]);
        let (n, e, p, _d) = read_all("h.darshan", &bytes);
        if let Some(e) = e { check_refusal(&e, &p, n); }
    }

    #[test]
    fn corrupt_iolog_never_panics(
        flips in proptest::collection::vec((any::<usize>(), 1u8..=255), 0..6),
        cut in proptest::option::of(any::<usize>()),
        which in 0usize..2,
    ) {
        let base = fixture(["iolog/fio-3.33-randrw.iolog", "iolog/v2-waits.iolog"][which]);
        let bytes = mutate(base, &flips, cut);
        let (n, e, p, _d) = read_all("t.iolog", &bytes);
        if let Some(e) = e { check_refusal(&e, &p, n); }
    }

    #[test]
    fn random_blktrace_events_never_panic(
        events in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 48), 0..20),
        valid_magic in any::<bool>(),
        tail in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        let mut bytes = Vec::new();
        for mut ev in events {
            if valid_magic {
                ev[..4].copy_from_slice(&0x6561_7407u32.to_le_bytes());
                // Keep most payloads small so later events are reached.
                ev[46] &= 0x0f;
                ev[47] = 0;
            }
            bytes.extend(ev);
        }
        bytes.extend(tail);
        let (n, e, p, _d) = read_all("d.blktrace.0", &bytes);
        if let Some(e) = e { check_refusal(&e, &p, n); }
    }
}

#[test]
fn the_summary_of_a_fixture_reads_every_record() {
    // The same counts through Summary::of as record by record.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.darshan");
    std::fs::write(&p, fixture("darshan/dxt.darshan")).unwrap();
    let n = TraceReader::open(&p, &OpenOptions::default())
        .unwrap()
        .count() as u64;
    let s = Summary::of(TraceReader::open(&p, &OpenOptions::default()).unwrap()).unwrap();
    assert_eq!(s.records, n);
    assert_eq!(n, 6126 + 1497);
}
