//! Exporters: pure functions from stored runs to text (hyperfine's model).
//!
//! * [`export_json`]: the full records, lossless, schema-versioned; it reads
//!   back as [`ExportDocument`].
//! * [`export_csv`]: one row per run × phase × direction, machine units
//!   (bytes, ns, bytes/s), RFC 4180 quoting.
//! * [`export_md`]: the same rows as a Markdown table in human units (MB/s,
//!   µs/ms), to paste into a ticket or a wiki.

use crate::fmt::{bs_machine, format_iops, format_ns, mb_per_s, tags_joined};
use crate::rows::{Row, rows};
use serde::{Deserialize, Serialize};
use storlab_types::{SCHEMA_VERSION, STORLAB_VERSION, StoredRun, ToolInfo};

/// The `document` name of [`export_json`]'s output: with `tool.name ==
/// "storlab"` it is how `export -o` knows a file is its own earlier output.
pub const EXPORT_DOCUMENT: &str = "export";

/// What [`export_json`] writes: what wrote it, the schema version and the
/// runs, complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    /// `storlab` and its version (absent in older exports).
    #[serde(default)]
    pub tool: Option<ToolInfo>,
    /// [`EXPORT_DOCUMENT`] (absent in older exports).
    #[serde(default)]
    pub document: Option<String>,
    pub schema_version: u32,
    pub runs: Vec<StoredRun>,
}

/// The runs as one pretty-printed JSON document ([`ExportDocument`]),
/// ending in a newline. Nothing is summarised away: every parameter, host
/// fact, per-job figure, warning and monitor sample is kept.
pub fn export_json(runs: &[StoredRun]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        tool: ToolInfo,
        document: &'a str,
        schema_version: u32,
        runs: &'a [StoredRun],
    }
    let doc = Doc {
        tool: ToolInfo {
            name: "storlab".into(),
            version: STORLAB_VERSION.into(),
        },
        document: EXPORT_DOCUMENT,
        schema_version: SCHEMA_VERSION,
        runs,
    };
    // Serialising plain data with string keys cannot fail; a NaN or
    // infinite figure becomes `null` (serde_json's rule), never invalid JSON.
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

/// Column names of [`export_csv`], in order. Units are in the names.
pub const CSV_COLUMNS: [&str; 33] = [
    "run_id",
    "kind",
    "run_started_at",
    "host",
    "target",
    "filesystem",
    "device",
    "phase",
    "rw",
    "rwmixread_pct",
    "direction",
    "bs_bytes",
    "size_bytes",
    "numjobs",
    "iodepth",
    "engine",
    "cache",
    "elapsed_ns",
    "fsync_in_window",
    "bytes",
    "ops",
    "bw_bytes_per_s",
    "iops",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_max_ns",
    "errors",
    "interrupted",
    "tags",
    "note",
];

fn opt_u64(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn csv_row(r: &Row<'_>) -> Vec<String> {
    let rep = &r.run.report;
    let p = r.params();
    let lat = r.stats.lat_ns;
    let errors: u64 = r.phase.errors.values().sum();
    vec![
        r.run.id.to_string(),
        r.run.kind.to_string(),
        rep.started_at.clone(),
        rep.host.hostname.clone(),
        rep.target.path.clone(),
        rep.target.filesystem.clone().unwrap_or_default(),
        rep.target.device.clone().unwrap_or_default(),
        r.label(),
        p.rw.as_str().to_string(),
        p.rw.read_pct(p.rwmixread).to_string(),
        r.direction.as_str().to_string(),
        bs_machine(p),
        p.size_bytes.to_string(),
        p.numjobs.to_string(),
        p.iodepth.to_string(),
        p.engine.as_str().to_string(),
        p.cache.as_str().to_string(),
        r.elapsed_ns().to_string(),
        r.phase.fsync_in_window.to_string(),
        r.stats.bytes.to_string(),
        r.stats.ops.to_string(),
        format!("{:.1}", r.stats.bw_bytes_per_s),
        format!("{:.1}", r.stats.iops),
        lat.map(|l| format!("{:.1}", l.mean)).unwrap_or_default(),
        opt_u64(lat.map(|l| l.p50)),
        opt_u64(lat.map(|l| l.p90)),
        opt_u64(lat.map(|l| l.p99)),
        opt_u64(lat.map(|l| l.p99_9)),
        opt_u64(lat.map(|l| l.max)),
        errors.to_string(),
        (r.phase.interrupted || rep.interrupted).to_string(),
        tags_joined(&r.run.tags, ";"),
        r.run.note.clone().unwrap_or_default(),
    ]
}

/// One CSV line per run × phase × direction (see [`CSV_COLUMNS`]), with a
/// header line; a phase of job groups also has a line per group ×
/// direction, its `phase` written `PHASE/GROUP`, with the group's own
/// parameters, window and figures. Figures are in machine units (bytes, ns, bytes/s); tags are
/// `key=value` joined by `;`; a latency cell is empty when the direction
/// completed no I/O.
pub fn export_csv(runs: &[StoredRun]) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for r in rows(runs) {
        out.push_str(&storlab_types::csv::row(csv_row(&r)));
        out.push('\n');
    }
    out
}

/// A Markdown table cell: backslashes and pipes escaped, line breaks as
/// spaces, other control characters shown escaped (`\x1b`).
fn md_cell(s: &str) -> String {
    let s = s
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ");
    storlab_types::text::escape_controls(&s).into_owned()
}

/// The same rows as [`export_csv`] as a Markdown table in human units,
/// followed by one line per run with its note and warnings, and a legend of
/// the units.
pub fn export_md(runs: &[StoredRun]) -> String {
    let header = [
        "Run",
        "Tags",
        "Phase",
        "RW",
        "Dir",
        "BS",
        "Size/job",
        "Jobs",
        "QD",
        "Cache",
        "MB/s",
        "IOPS",
        "Lat mean",
        "Lat p99",
        "Lat p99.9",
    ];
    // Right-align numbers.
    let align = [
        "---:", "---", "---", "---", "---", "---:", "---:", "---:", "---:", "---", "---:", "---:",
        "---:", "---:", "---:",
    ];
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in rows(runs) {
        let p = r.params();
        let lat = r.stats.lat_ns;
        let lat_cell = |f: fn(&storlab_types::LatencyStats) -> f64| {
            lat.map(|l| format_ns(f(&l))).unwrap_or_else(|| "–".into())
        };
        let mut phase = r.label();
        if r.phase.interrupted {
            phase.push_str(" (interrupted)");
        }
        let cells = [
            r.run.id.to_string(),
            tags_joined(&r.run.tags, ", "),
            phase,
            p.rw.as_str().to_string(),
            r.direction.as_str().to_string(),
            p.bs_human(),
            storlab_types::format_bytes(p.size_bytes),
            p.numjobs.to_string(),
            p.iodepth.to_string(),
            p.cache.as_str().to_string(),
            mb_per_s(r.stats.bw_bytes_per_s),
            format_iops(r.stats.iops),
            lat_cell(|l| l.mean),
            lat_cell(|l| l.p99 as f64),
            lat_cell(|l| l.p99_9 as f64),
        ];
        let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let mut notes = String::new();
    for run in runs {
        let mut bits = Vec::new();
        if let Some(n) = &run.note {
            bits.push(md_cell(n));
        }
        for w in &run.report.warnings {
            bits.push(format!("warning: {}", md_cell(w)));
        }
        for ph in &run.report.phases {
            for w in &ph.warnings {
                bits.push(format!(
                    "warning ({}): {}",
                    md_cell(&ph.params.name),
                    md_cell(w)
                ));
            }
        }
        if !bits.is_empty() {
            notes.push_str(&format!("- Run {}: {}\n", run.id, bits.join("; ")));
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&notes);
    }
    out.push_str(
        "\nMB/s = 10^6 bytes/s. IOPS = I/O operations per second. Latency spans submission to \
         completion of each I/O. Size/job = bytes each job covers. QD = iodepth per job.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_cells_cannot_break_the_table() {
        assert_eq!(md_cell("a|b\nc"), "a\\|b c");
        // A backslash before a pipe cannot un-escape it.
        assert_eq!(md_cell("a\\|b"), "a\\\\\\|b");
    }

    #[test]
    fn empty_input_gives_headers_only() {
        assert_eq!(export_csv(&[]).lines().count(), 1);
        let md = export_md(&[]);
        assert!(md.starts_with("| Run |"));
        let doc: ExportDocument = serde_json::from_str(&export_json(&[])).unwrap();
        assert!(doc.runs.is_empty());
        assert_eq!(doc.schema_version, SCHEMA_VERSION);
    }
}
