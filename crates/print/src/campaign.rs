//! A campaign's result as text: the comparison across cells (one row per
//! cell, run and phase direction against the baseline cell, the cells'
//! tags as columns, a row saying why for a cell's run without figures)
//! and the lines under it.

use comfy_table::{Cell as TCell, CellAlignment};
use std::path::Path;
use storlab_campaign::Campaign;
use storlab_campaign::report::{CampaignRow, Missing};

/// The comparison rows as a table: the cells' tags as columns; a cell
/// without figures is a row saying why.
pub fn comparison_table(c: &Campaign, rows: &[CampaignRow], missing: &[Missing]) -> String {
    use storlab_report::{MetricWords, Verdict};
    use storlab_types::Metric;
    let keys: Vec<String> = {
        let mut k: Vec<String> = c
            .cells
            .iter()
            .flat_map(|c| c.tags.keys().cloned())
            .collect();
        k.sort();
        k.dedup();
        k
    };
    let mut t = crate::style::result_table();
    let mut header: Vec<String> = vec!["cell".into()];
    header.extend(keys.iter().cloned());
    header.extend(["phase", "MB/s", "IOPS", "p99", "vs baseline"].map(String::from));
    t.set_header(header);
    for r in rows {
        let row = &r.row;
        let mut cells: Vec<TCell> = vec![TCell::new(r.cell)];
        cells.extend(
            keys.iter()
                .map(|k| TCell::new(r.tags.get(k).cloned().unwrap_or_default())),
        );
        cells.push(TCell::new(format!(
            "{} {}",
            row.phase,
            row.direction.as_str()
        )));
        let mut verdicts = Vec::new();
        for m in [Metric::Throughput, Metric::Iops, Metric::LatP99] {
            let ch = row.change(m);
            let v = ch
                .and_then(|c| c.value)
                .map(|v| m.format(v))
                .unwrap_or_else(|| "-".into());
            cells.push(TCell::new(v).set_alignment(CellAlignment::Right));
            if let Some(ch) = ch
                && ch.verdict != Verdict::Baseline
            {
                verdicts.push(format!("{} {}", m.name(), ch.describe()));
            }
        }
        cells.push(TCell::new(if row.is_baseline {
            "baseline".to_string()
        } else {
            verdicts.join(", ")
        }));
        t.add_row(cells);
    }
    for m in missing {
        let mut cells: Vec<TCell> = vec![TCell::new(m.cell)];
        cells.extend(
            keys.iter()
                .map(|k| TCell::new(m.tags.get(k).cloned().unwrap_or_default())),
        );
        cells.push(TCell::new(format!("run {}", m.campaign_run)));
        for _ in 0..3 {
            cells.push(TCell::new("-").set_alignment(CellAlignment::Right));
        }
        cells.push(TCell::new(format!("no figures: {}", m.reason)));
        t.add_row(cells);
    }
    format!("{t}\n")
}

/// The text result: the comparison table, the cells that did not finish,
/// the notes, where the runs and logs are, and the report written.
pub fn result_text(
    id: &str,
    c: &Campaign,
    (rows, missing): (&[CampaignRow], &[Missing]),
    (failed, notes): (&[String], &[String]),
    dir: &Path,
    report: Option<&Path>,
) -> String {
    let mut out = format!("campaign {id}\n{}", comparison_table(c, rows, missing));
    for f in failed {
        out.push_str(&format!("cell {f}\n"));
    }
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push_str(&format!(
        "Runs: storlab runs --tag campaign={id}   Logs: {}\n",
        dir.display()
    ));
    if let Some(path) = report {
        out.push_str(&format!("Report: {}\n", path.display()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use storlab_campaign::CampaignFile;
    use storlab_campaign::report::comparison_rows;
    use storlab_types::StoredRun;

    fn campaign() -> Campaign {
        let text = r#"
name = "fs"
baseline = "ext4"
[matrix]
fs = ["ext4", "xfs", "btrfs"]
[template]
name = "{fs}"
tags = { fs = "{fs}" }
target = "/mnt/{fs}"
run = [["bench", "{target}"]]
"#;
        match CampaignFile::parse(text, Path::new("c.toml")).map(|f| f.expand("x")) {
            Ok(Ok(c)) => c,
            other => panic!("{other:?}"),
        }
    }

    /// A run of the cell: the fixed write phase at `bw` bytes/s.
    fn run(id: i64, cell: &str, bw: f64) -> (String, StoredRun) {
        let mut report = fixture::bench();
        report.phases.truncate(1);
        let w = &mut report.phases[0].write;
        w.bw_bytes_per_s = bw;
        w.iops = bw / 1048576.0;
        report.phases[0].total = *w;
        report.target.path = format!("/mnt/{cell}");
        let tags = [
            ("campaign_run".to_string(), "0".to_string()),
            ("fs".to_string(), cell.to_string()),
        ]
        .into();
        let run = StoredRun {
            id,
            kind: "bench".into(),
            tags,
            note: None,
            report,
        };
        (cell.to_string(), run)
    }

    /// A fixed campaign of three cells: the baseline, a faster cell, and a
    /// cell whose run has no figures (a row saying why); then a failed
    /// cell, a note, where the runs are and the report written.
    #[test]
    fn campaign_result_of_fixed_cells() {
        let c = campaign();
        let runs = [run(1, "ext4", 500e6), run(2, "xfs", 800e6)];
        let rows = comparison_rows(&c, &runs);
        let missing = [Missing {
            cell: "btrfs",
            tags: &c.cells[2].tags,
            campaign_run: 0,
            reason: "the cell failed".into(),
        }];
        let failed = ["btrfs failed: setup exited with 1".to_string()];
        let notes = ["cell ext4 ran twice: run 1 is the latest".to_string()];
        let text = result_text(
            "c-1",
            &c,
            (&rows, &missing),
            (&failed, &notes),
            Path::new("/var/lib/storlab/campaigns/c-1"),
            Some(Path::new("report.html")),
        );
        fixture::golden("campaign.txt", &text);
    }
}
