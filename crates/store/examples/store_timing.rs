//! Time the store operations a benchmark and the reading commands pay for:
//! committing one phase (what `bench` adds between phases), loading a run,
//! listing many runs, and parsing a fio JSON file.
//!
//! `cargo run --release -p storlab-store --example store_timing [DIR]`
//! (DIR: where to put the temporary database; default the system temp dir).

use std::collections::BTreeMap;
use std::time::Instant;
use storlab_fio as fio;
use storlab_store::{RunFilter, Store};

fn median_us(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::tempdir_in(base)?;
    let path = dir.path().join("timing.db");
    let store = Store::open(&path)?;
    let text = include_str!("../../fio/fixtures/fio-3.33-jobfile-clones.json");

    let mut parse = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let imp = fio::parse(text, None)?;
        parse.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(imp);
    }
    let imp = fio::parse(text, None)?;
    let mut header = imp.report.clone();
    header.phases.clear();
    let phase = imp.report.phases[1].clone();

    let id = store.begin_run("bench", &header, &BTreeMap::new(), None)?;
    let mut commit = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        store.add_phase(id, &phase)?;
        commit.push(t.elapsed().as_secs_f64() * 1e6);
    }
    store.finish_run(id, &header)?;

    let mut load = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        std::hint::black_box(store.load(id)?);
        load.push(t.elapsed().as_secs_f64() * 1e6);
    }

    for _ in 0..999 {
        store.save_run("fio-import", &imp.report, &BTreeMap::new(), None)?;
    }
    let mut list = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let runs = store.list(&RunFilter::default())?;
        list.push(t.elapsed().as_secs_f64() * 1e6);
        assert_eq!(runs.len(), 1000);
    }
    println!("database: {}", path.display());
    println!(
        "fio JSON parse (2 jobs, 3 entries): median {:.0} µs",
        median_us(parse)
    );
    println!(
        "add_phase commit (synchronous=FULL): median {:.0} µs",
        median_us(commit)
    );
    println!("load a 200-phase run: median {:.0} µs", median_us(load));
    println!("list 1000 runs: median {:.0} µs", median_us(list));
    Ok(())
}
