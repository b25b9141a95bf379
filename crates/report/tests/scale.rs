//! How long reports take for many runs (docs/PERFORMANCE.md, `## report`).
//! Ignored by default; run with
//! `cargo test --release -p storlab-report --test scale -- --ignored --nocapture`.

use storlab_testkit::fixtures as testdata;

use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn report_time_grows_gently_with_runs() {
    let base = testdata::all_runs();
    for n in [13usize, 130, 520, 2080] {
        let runs: Vec<_> = (0..n)
            .map(|i| {
                let mut r = base[i % base.len()].clone();
                r.id = i as i64 + 1;
                r.tags.insert("rep".into(), (i / base.len()).to_string());
                r
            })
            .collect();
        let time = |f: &dyn Fn() -> usize| {
            let mut t = Vec::new();
            let mut size = 0;
            for _ in 0..5 {
                let s = Instant::now();
                size = f();
                t.push(s.elapsed());
            }
            (median(t), size)
        };
        let (html, html_len) = time(&|| storlab_report::html_report(&runs, Some(0)).len());
        let (cmp, rows) = time(&|| storlab_report::compare(&runs, &runs[0]).rows.len());
        let (csv, csv_len) = time(&|| storlab_report::export_csv(&runs).len());
        eprintln!(
            "{n:>5} runs: html_report {html:>10.2?} ({} KiB), compare {cmp:>10.2?} ({rows} rows), \
             export_csv {csv:>10.2?} ({} KiB)",
            html_len / 1024,
            csv_len / 1024
        );
        // Every phase of every run is compared (the mixed run's phase has no
        // counterpart in the baseline and is listed as not compared).
        assert!(rows >= n);
        assert!(html_len > n * 1000);
    }
}
