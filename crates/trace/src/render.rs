//! [`Summary`] as the text `storlab trace summary` prints (the JSON form is
//! the serialized [`Summary`]).

use crate::Summary;
use comfy_table::{Table, presets};
use storlab_types::text::escape_controls;

/// A borderless table (storlab's listing style).
fn list_table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t
}

/// The table's text without the padding at line ends, newline-terminated.
fn trim_table(table: &str) -> String {
    table
        .lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect()
}

/// Bytes with an IEC unit, e.g. `12.5 MiB (13107200 B)`.
fn bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {} ({b} B)", units[u])
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// What a trace holds, as `storlab trace summary` prints it: the totals,
/// then tables per rank, per file (most bytes first, the first 20),
/// request sizes and concurrency over time (the bins with activity; the
/// JSON has them all).
pub fn render_text(s: &Summary) -> String {
    let mut out = String::new();
    out += &format!("trace     {}\n", s.trace);
    out += &format!("format    {}\n", s.format.describe());
    out += &format!(
        "records   {}  ({})\n",
        s.records,
        s.ops
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let declared = s
        .declared_ranks
        .map(|n| format!(" of {n} declared"))
        .unwrap_or_default();
    out += &format!("ranks     {}{declared}\n", s.ranks.len());
    out += &format!("files     {}\n", s.files.len());
    out += &format!("read      {}\n", bytes(s.bytes_read));
    out += &format!("written   {}\n", bytes(s.bytes_written));
    out += &format!("duration  {}\n", ms(s.duration_ns));
    out += &format!(
        "access    {:.1} % sequential ({} sequential, {} random reads and writes)\n",
        s.sequential_share * 100.0,
        s.sequential_ops,
        s.random_ops
    );
    out += "\nper rank\n";
    let mut t = list_table();
    t.set_header([
        "rank",
        "reads",
        "writes",
        "bytes read",
        "bytes written",
        "other ops",
    ]);
    for r in &s.ranks {
        t.add_row([
            r.rank.to_string(),
            r.reads.to_string(),
            r.writes.to_string(),
            r.bytes_read.to_string(),
            r.bytes_written.to_string(),
            r.other_ops.to_string(),
        ]);
    }
    out += &trim_table(&t.to_string());
    out += "\nfiles (most bytes first, first 20)\n";
    let mut t = list_table();
    t.set_header([
        "file",
        "ranks",
        "reads",
        "writes",
        "bytes read",
        "bytes written",
        "extent",
    ]);
    for f in s.files.iter().take(20) {
        t.add_row([
            escape_controls(&f.name).into_owned(),
            f.ranks.to_string(),
            f.reads.to_string(),
            f.writes.to_string(),
            f.bytes_read.to_string(),
            f.bytes_written.to_string(),
            f.extent_bytes.to_string(),
        ]);
    }
    out += &trim_table(&t.to_string());
    out += "\nrequest sizes\n";
    let mut t = list_table();
    t.set_header(["size (bytes)", "reads", "writes"]);
    for b in &s.size_histogram {
        t.add_row([
            format!("{}..{}", b.min_bytes, b.max_bytes),
            b.reads.to_string(),
            b.writes.to_string(),
        ]);
    }
    out += &trim_table(&t.to_string());
    if !s.concurrency.is_empty() {
        let w = s.concurrency[0].end_ns - s.concurrency[0].start_ns;
        out += &format!("\nconcurrency over time (bins of {})\n", ms(w));
        let mut t = list_table();
        t.set_header(["from", "ops started", "mean in flight"]);
        // Only the bins with activity (the JSON has them all).
        for b in s
            .concurrency
            .iter()
            .filter(|b| b.ops_started > 0 || b.mean_in_flight.is_some_and(|m| m > 0.0))
        {
            t.add_row([
                ms(b.start_ns),
                b.ops_started.to_string(),
                b.mean_in_flight
                    .map_or("-".to_string(), |m| format!("{m:.2}")),
            ]);
        }
        out += &trim_table(&t.to_string());
        if !s.completion_times {
            out += "(the trace records no completion times, so operations in flight are unknown)\n";
        }
    }
    out
}
