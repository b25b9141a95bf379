//! The result of a tuning as one document: what `--json` prints and the
//! table shows.

use crate::measure::{NoiseDoc, Point, Verdict, verdict};
use crate::state::{Restored, Tuning, describe_restored};
use comfy_table::{Cell, CellAlignment, Table};
use serde::Serialize;
use std::path::Path;
use storlab_types::format_bytes;

/// `tune readahead --json`.
#[derive(Debug, Serialize)]
pub struct TuneDoc<'a> {
    /// The device or directory given.
    pub target: &'a Path,
    /// The layer whose read-ahead was set (the one file reads go through).
    pub device: &'a str,
    /// Every layer under the target, top first (the first is `device`),
    /// with its original value.
    pub layers: Vec<LayerDoc<'a>>,
    /// The `tune_id` tag of the stored runs.
    pub tune_id: &'a str,
    pub runtime: &'a str,
    pub streams: u32,
    /// Each value measured, in the order tried.
    pub points: Vec<PointDoc<'a>>,
    /// The recommendation (never left set: the originals are put back);
    /// none when no measurement succeeded or the result is inconclusive.
    pub best: Option<BestDoc>,
    /// `best` or `inconclusive`, with the reasons.
    pub verdict: Verdict,
    /// The best two values measured again (none when fewer than two
    /// succeeded or the run was stopped).
    pub noise: Option<NoiseDoc>,
    /// The values put back at the end (every layer's original).
    pub restored: Vec<Restored>,
    /// Values an earlier, interrupted run had left changed, put back first.
    pub recovered_from_earlier_run: Option<Vec<Restored>>,
    /// Where the points were saved (none with --no-save); each point's
    /// `run_id` is its stored run.
    pub db: Option<&'a Path>,
}

#[derive(Debug, Serialize)]
pub struct LayerDoc<'a> {
    pub name: &'a str,
    pub path: &'a Path,
    pub original_kb: u64,
}

#[derive(Debug, Serialize)]
pub struct PointDoc<'a> {
    pub readahead_kb: u64,
    /// 10^6 bytes/s, cold-cache buffered sequential read, 1 MiB requests.
    pub mb_s: Option<f64>,
    /// Percent of the best value's MB/s.
    pub vs_best_pct: Option<f64>,
    pub cache_verified: Option<bool>,
    pub note: &'a str,
    /// Why this point cannot be recommended from (empty when it can).
    pub flags: &'a [String],
    pub run_id: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct BestDoc {
    pub readahead_kb: u64,
    pub mb_s: f64,
    /// `blockdev --setra` with the value in 512-byte sectors.
    pub set_command: String,
    /// A udev rule that keeps it across reboots.
    pub udev_rule: String,
}

/// What the front end knows of the run that the document names.
#[derive(Debug)]
pub struct TuneParams<'a> {
    pub target: &'a Path,
    pub tune_id: &'a str,
    pub runtime: &'a str,
    pub streams: u32,
    /// Where the points were saved (none with --no-save).
    pub db: Option<&'a Path>,
}

/// The fastest value measured and its MB/s.
pub fn fastest(points: &[Point]) -> Option<(u64, f64)> {
    points
        .iter()
        .filter_map(|p| p.mbps.map(|m| (p.kb, m)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

impl<'a> TuneDoc<'a> {
    /// The document of a finished tuning: `ids` the stored run of each
    /// point (in order), `restored` what was put back at the end.
    pub fn new(
        p: TuneParams<'a>,
        tuning: &'a Tuning,
        (points, noise): (&'a [Point], Option<NoiseDoc>),
        ids: &[Option<i64>],
        restored: &[Restored],
    ) -> TuneDoc<'a> {
        let best = fastest(points);
        let verdict = verdict(points, noise.as_ref(), best.map(|b| b.0));
        let top = tuning.top();
        let recovered = &tuning.earlier.restored;
        TuneDoc {
            target: p.target,
            device: &top.name,
            layers: tuning
                .stack
                .iter()
                .map(|l| LayerDoc {
                    name: &l.name,
                    path: &l.path,
                    // Every layer's value was saved before the first change.
                    original_kb: tuning.original_kb(&l.name).unwrap_or_default(),
                })
                .collect(),
            tune_id: p.tune_id,
            runtime: p.runtime,
            streams: p.streams,
            points: points
                .iter()
                .zip(ids.iter().chain(std::iter::repeat(&None)))
                .map(|(p, id)| PointDoc {
                    readahead_kb: p.kb,
                    mb_s: p.mbps,
                    vs_best_pct: match (p.mbps, best) {
                        (Some(m), Some((_, b))) if b > 0.0 => Some(m / b * 100.0),
                        _ => None,
                    },
                    cache_verified: p.cache_verified,
                    note: &p.note,
                    flags: &p.flags,
                    run_id: *id,
                })
                .collect(),
            best: best
                .filter(|_| verdict.reasons.is_empty())
                .map(|(kb, m)| BestDoc {
                    readahead_kb: kb,
                    mb_s: m,
                    set_command: format!("blockdev --setra {} /dev/{}", kb * 2, top.name),
                    udev_rule: format!(
                        "ACTION==\"add|change\", KERNEL==\"{}\", ATTR{{queue/read_ahead_kb}}=\"{kb}\"",
                        top.name
                    ),
                }),
            verdict,
            noise,
            restored: restored.to_vec(),
            recovered_from_earlier_run: (!recovered.is_empty()).then(|| recovered.clone()),
            db: p.db,
        }
    }
}

impl TuneDoc<'_> {
    /// The table and the advice, from the same document `--json` prints;
    /// `t`: the table to fill (the front end's style).
    pub fn render_text(&self, mut t: Table) -> String {
        let doc = self;
        t.set_header(vec!["read-ahead", "MB/s", "vs best", "note"]);
        for p in &doc.points {
            t.add_row(vec![
                Cell::new(format_bytes(p.readahead_kb * 1024)),
                Cell::new(p.mb_s.map_or_else(|| "-".into(), |m| format!("{m:.1}")))
                    .set_alignment(CellAlignment::Right),
                Cell::new(
                    p.vs_best_pct
                        .map_or_else(|| "-".into(), |v| format!("{v:.0} %")),
                )
                .set_alignment(CellAlignment::Right),
                Cell::new(p.note),
            ]);
        }
        let mut out = format!(
            "read-ahead of {} (under {}; layers: {})\n{t}\n",
            doc.device,
            doc.target.display(),
            doc.layers
                .iter()
                .map(|l| format!("{} {} KiB", l.name, l.original_kb))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push_str("MB/s = 10^6 bytes/s: cold-cache buffered sequential read, 1 MiB requests.\n");
        if let Some(n) = &doc.noise {
            out.push_str(&format!(
            "Run-to-run noise (best two read again): {:.1} %; the fastest leads the next by {:.1} %.\n",
            n.noise_pct, n.lead_pct
        ));
        }
        if doc.verdict.conclusion == "inconclusive" {
            out.push_str(&format!(
                "Inconclusive: no read-ahead is recommended{}:\n",
                doc.verdict
                    .fastest_kb
                    .map(|kb| format!(" (fastest measured: {})", format_bytes(kb * 1024)))
                    .unwrap_or_default()
            ));
            for r in &doc.verdict.reasons {
                out.push_str(&format!("  - {r}\n"));
            }
        }
        if let Some(b) = &doc.best {
            out.push_str(&format!(
            "Best: {} ({:.1} MB/s). To set it now: {}\n\
             To keep it across reboots, a udev rule (e.g. /etc/udev/rules.d/60-storlab-readahead.rules):\n  {}\n",
            format_bytes(b.readahead_kb * 1024),
            b.mb_s,
            b.set_command,
            b.udev_rule,
        ));
        }
        out.push_str(&format!("Restored: {}\n", describe_restored(&doc.restored)));
        out
    }
}
/// The stored run of each point, in order: from the tuning's `runs` (id
/// and `readahead_kb` tag), the first unused run (lowest id) of the
/// point's value; none when there is none.
pub fn run_ids(points: &[Point], mut runs: Vec<(i64, Option<String>)>) -> Vec<Option<i64>> {
    runs.sort_by_key(|r| r.0);
    points
        .iter()
        .map(|p| {
            let kb = p.kb.to_string();
            let i = runs.iter().position(|r| r.1.as_deref() == Some(&kb))?;
            Some(runs.remove(i).0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_point_gets_the_first_unused_run_of_its_value() {
        let p = |kb| Point::failed(kb, String::new());
        // 512 measured twice (the noise repeat is not saved, but a value
        // may be given twice), 1024 once, 2048 never saved.
        let points = [p(512), p(1024), p(512), p(2048)];
        let runs = vec![
            (7, Some("512".to_string())),
            (3, Some("512".to_string())),
            (5, Some("1024".to_string())),
            (9, None),
        ];
        assert_eq!(run_ids(&points, runs), [Some(3), Some(5), Some(7), None]);
    }
}
