//! Records written before a run's words became enums (run kind, target
//! kind, cache state, monitor layer) load, use only words the enums know,
//! and are written back byte for byte.
//!
//! `fixtures/records-v1.json` is `storlab export --all` of a database that
//! storlab filled with one run of each kind and shape (null, psync cold and
//! warm, a file target, `--repeat`, `--monitor`, `md`, `sim`, `monitor
//! --record` of the recorded loop stack, fio and storlab JSON imports);
//! `one_run.json` is the report crate's golden export.

use serde::{Deserialize, Serialize};
use storlab_types::{CacheState, MonitorLayer, RunKind, StoredRun, TargetKind, ToolInfo};

/// The export document, field for field as `storlab export` writes it.
#[derive(Serialize, Deserialize)]
struct Export {
    tool: ToolInfo,
    document: String,
    schema_version: u32,
    runs: Vec<StoredRun>,
}

const DOCUMENTS: [(&str, &str); 2] = [
    ("records-v1.json", include_str!("fixtures/records-v1.json")),
    (
        "report/tests/golden/one_run.json",
        include_str!("../../report/tests/golden/one_run.json"),
    ),
];

/// `back` is `old` line for line: the same keys in the same order, the
/// same words and integers; a fraction may differ in its last digit
/// (serde_json reads floats to within an ulp without its
/// `float_roundtrip` feature, as every storlab reader always has).
fn same_text(name: &str, back: &str, old: &str) {
    let (b, o): (Vec<&str>, Vec<&str>) = (back.lines().collect(), old.lines().collect());
    assert_eq!(b.len(), o.len(), "{name}: line count");
    for (i, (b, o)) in b.iter().zip(&o).enumerate() {
        if b == o {
            continue;
        }
        let number = |l: &str| -> Option<(String, f64)> {
            let (key, v) = l.rsplit_once(": ")?;
            Some((key.to_string(), v.trim_end_matches(',').parse().ok()?))
        };
        match (number(b), number(o)) {
            (Some((kb, vb)), Some((ko, vo))) if kb == ko && vo.fract() != 0.0 => {
                assert!(
                    ((vb - vo) / vo).abs() < 1e-15,
                    "{name}:{}: {b} was {o}",
                    i + 1
                );
            }
            _ => panic!("{name}:{}: written back as {b:?}, was {o:?}", i + 1),
        }
    }
}

#[test]
fn old_records_load_and_are_written_back_identically() {
    for (name, text) in DOCUMENTS {
        let doc: Export = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!doc.runs.is_empty(), "{name}");
        let back = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        same_text(name, &back, text);
        // Each run alone, too (what the store keeps is one run's record).
        let raw: serde_json::Value = serde_json::from_str(text).unwrap();
        for (run, old) in doc.runs.iter().zip(raw["runs"].as_array().unwrap()) {
            assert_eq!(
                &serde_json::to_value(run).unwrap(),
                old,
                "{name}: run {}",
                run.id
            );
        }
    }
}

#[test]
fn old_records_hold_only_words_the_enums_know() {
    let mut kinds = std::collections::BTreeSet::new();
    for (name, text) in DOCUMENTS {
        let doc: Export = serde_json::from_str(text).unwrap();
        for run in &doc.runs {
            let r = &run.report;
            let id = run.id;
            assert!(
                RunKind::parse(run.kind.as_str()).is_some(),
                "{name} {id}: {}",
                run.kind
            );
            kinds.insert(run.kind.as_str().to_string());
            assert!(
                TargetKind::parse(r.target.kind.as_str()).is_some(),
                "{name} {id}: {}",
                r.target.kind
            );
            for p in &r.phases {
                assert!(
                    CacheState::parse(p.cache.mode.as_str()).is_some(),
                    "{name} {id}: {}",
                    p.cache.mode
                );
            }
            if let Some(m) = &r.monitor {
                assert!(
                    MonitorLayer::parse(m.layer.as_str()).is_some(),
                    "{name} {id}: {}",
                    m.layer
                );
            }
        }
    }
    // The fixture holds every kind of run the old binary made; the kinds
    // added since (IO500 imports, replays) cannot be in it.
    const NEWER: [&str; 2] = ["io500", "replay"];
    let all: std::collections::BTreeSet<String> = RunKind::KNOWN
        .iter()
        .map(|k| k.to_string())
        .filter(|k| !NEWER.contains(&k.as_str()))
        .collect();
    assert_eq!(kinds, all);
}
