//! `--chart FILE.svg|FILE.png`: the sweep's points as the report crate's
//! sweep charts. x = the first varied option (its resolved value: bytes for
//! sizes), one line per value of the second (and per phase when a point
//! has several); `--vary size=… --vary bs=…` on reads gives the heat map.

use super::{PointResult, SweepTotals};
use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::Path;
use storlab_bench::{OptKind, find_option};
use storlab_report::svg::LineSeries;
use storlab_report::{HeatCell, heat_map, sweep_lines};
use storlab_types::{PhaseResult, parse_size};

/// Whether `path` names a chart format we write (true: PNG) and may be
/// written (never the database, a device or a file storlab did not write,
/// unless `force`); checked before the sweep runs.
pub fn check_path(path: &Path, db: &Path, force: bool) -> Result<bool> {
    let png = is_png(path)?;
    let kind = crate::commands::common::OutputKind::chart(png);
    crate::commands::common::check_output_path(path, db, force, kind)?;
    Ok(png)
}

fn is_png(path: &Path) -> Result<bool> {
    match path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(false),
        Some("png") => Ok(true),
        _ => bail!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ),
    }
}

/// Draw the chart and write it to `path`.
pub fn write(path: &Path, results: &[PointResult], keys: &[&str], t: &SweepTotals) -> Result<()> {
    let png = is_png(path)?;
    let svg = build(results, keys, t)?;
    let bytes = if png {
        storlab_report::svg_to_png(&svg, 2.0)?
    } else {
        svg.into_bytes()
    };
    crate::commands::common::write_output(path, &bytes)
}

/// The x value of option `key` in phase `ph` (resolved where the phase
/// records it), else from the typed value.
fn x_value(key: &str, value: &str, ph: &PhaseResult) -> Option<f64> {
    let p = &ph.params;
    match key {
        "size" => Some(p.size_bytes as f64),
        "bs" if p.bs.len() == 1 => Some(p.bs[0].bs_bytes as f64),
        "numjobs" => Some(f64::from(p.numjobs)),
        "iodepth" => Some(f64::from(p.iodepth)),
        _ => match find_option(key)?.kind {
            OptKind::Size => parse_size(value).ok().map(|b| b as f64),
            OptKind::Int => value.parse().ok(),
            _ => None,
        },
    }
}

fn build(results: &[PointResult], keys: &[&str], t: &SweepTotals) -> Result<String> {
    let Some(first) = keys.first() else {
        bail!("--chart: the sweep varies nothing");
    };
    let ok: Vec<(&PointResult, &PhaseResult)> = results
        .iter()
        .filter(|r| r.error.is_none())
        .flat_map(|r| {
            r.report
                .iter()
                .flat_map(|rep| rep.phases.iter())
                .map(move |ph| (r, ph))
        })
        .collect();
    if ok.is_empty() {
        bail!("--chart: no point of the sweep measured anything to draw");
    }
    let title = format!("storlab sweep {}", t.sweep_id);
    if keys.len() == 2 && *first == "size" && keys[1] == "bs" {
        let cells: Vec<HeatCell> = ok
            .iter()
            .filter(|(_, ph)| ph.params.rw.reads() && ph.params.bs.len() == 1)
            .map(|(_, ph)| HeatCell {
                file_bytes: ph.params.size_bytes * u64::from(ph.params.numjobs),
                record_bytes: ph.params.bs[0].bs_bytes,
                mb_per_s: ph.read.bw_bytes_per_s / 1e6,
            })
            .collect();
        if !cells.is_empty() {
            return Ok(heat_map(
                &format!("{title}: reads"),
                &cells,
                t.mem_total_bytes,
                t.page_cache_bytes,
            ));
        }
    }
    let multi_phase = ok
        .iter()
        .any(|(r, _)| r.report.as_ref().is_some_and(|rep| rep.phases.len() > 1));
    // Non-numeric x (rw=read,write): positions 1, 2, ... in the order given.
    let mut order: Vec<String> = Vec::new();
    for (r, _) in &ok {
        let v = &r.point.params[0].1;
        if !order.contains(v) {
            order.push(v.clone());
        }
    }
    let numeric = ok
        .iter()
        .all(|(r, ph)| x_value(first, &r.point.params[0].1, ph).is_some());
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    for (r, ph) in &ok {
        let v = &r.point.params[0].1;
        let x = if numeric {
            x_value(first, v, ph).unwrap_or(0.0)
        } else {
            order.iter().position(|o| o == v).unwrap_or(0) as f64 + 1.0
        };
        let mut name: Vec<String> = r.point.params[1..]
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if multi_phase {
            name.push(ph.params.name.clone());
        }
        let name = if name.is_empty() {
            "MB/s".to_string()
        } else {
            name.join(" ")
        };
        if !names.contains(&name) {
            names.push(name.clone());
        }
        series
            .entry(name)
            .or_default()
            .push((x, ph.total.bw_bytes_per_s / 1e6));
    }
    let lines: Vec<LineSeries> = names
        .into_iter()
        .map(|n| {
            let mut points = series.remove(&n).unwrap_or_default();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            LineSeries { name: n, points }
        })
        .collect();
    let is_size = numeric && find_option(first).is_some_and(|o| o.kind == OptKind::Size);
    let x_label = if numeric {
        first.to_string()
    } else {
        format!(
            "{first}: {}",
            order
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{} = {v}", i + 1))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(sweep_lines(
        &title,
        Some("throughput of each point over its measured window".into()),
        &x_label,
        is_size,
        lines,
        // The RAM is marked where x is the file size.
        (*first == "size" && t.mem_total_bytes > 0).then_some(t.mem_total_bytes as f64),
    ))
}
