//! The chart of one `storlab sweep --chart FILE` (registry kinds `sweep`
//! and `heat-map`): the sweep's points as [`sweep_lines`] or [`heat_map`].
//! x = the first varied option (its resolved value: bytes for sizes), one
//! line per value of the second (and per phase when a point has several);
//! `--vary size=… --vary bs=…` on reads gives the heat map.

use crate::registry::CannotDraw;
use crate::svg::LineSeries;
use crate::sweep_charts::{HeatCell, heat_map, sweep_lines};
use std::collections::BTreeMap;
use storlab_types::{PhaseResult, parse_size};

/// How the values of a varied option read as numbers on the x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisValue {
    /// A size (`4k`): bytes, and the axis is labelled in bytes.
    Size,
    /// A whole number.
    Int,
    /// Not a number (`rw=read,write`): placed 1, 2, ... in the order given.
    Other,
}

/// One measured point of a sweep: its `(option, value)` pairs in `--vary`
/// order, and the phases it ran.
#[derive(Debug, Clone, Copy)]
pub struct SweepChartPoint<'a> {
    pub params: &'a [(&'a str, String)],
    pub phases: &'a [PhaseResult],
}

/// What the chart says about the sweep as a whole.
#[derive(Debug, Clone, Copy)]
pub struct SweepChartInfo<'a> {
    pub sweep_id: &'a str,
    /// The host's RAM (0: unknown), marked on a file-size axis.
    pub mem_total_bytes: u64,
    /// Memory the page cache could use when the sweep started.
    pub page_cache_bytes: Option<u64>,
}

/// The x value of option `key` in phase `ph` (resolved where the phase
/// records it), else from the typed value.
fn x_value(key: &str, value: &str, ph: &PhaseResult, axis: AxisValue) -> Option<f64> {
    let p = &ph.params;
    match key {
        "size" => Some(p.size_bytes as f64),
        "bs" if p.bs.len() == 1 => Some(p.bs[0].bs_bytes as f64),
        "numjobs" => Some(f64::from(p.numjobs)),
        "iodepth" => Some(f64::from(p.iodepth)),
        _ => match axis {
            AxisValue::Size => parse_size(value).ok().map(|b| b as f64),
            AxisValue::Int => value.parse().ok(),
            AxisValue::Other => None,
        },
    }
}

/// The sweep's chart as SVG. `points` are the points that measured
/// (failed ones left out); `keys` the options varied, in order; `axis`
/// how the first one's values read (`None`: not a known option).
pub fn sweep_chart(
    points: &[SweepChartPoint<'_>],
    keys: &[&str],
    axis: Option<AxisValue>,
    info: SweepChartInfo<'_>,
) -> Result<String, CannotDraw> {
    let Some(first) = keys.first() else {
        return Err(CannotDraw::SweepVariesNothing);
    };
    let ok: Vec<(&SweepChartPoint<'_>, &PhaseResult)> = points
        .iter()
        .flat_map(|r| r.phases.iter().map(move |ph| (r, ph)))
        .collect();
    if ok.is_empty() {
        return Err(CannotDraw::NoSweepPointMeasured);
    }
    let title = format!("storlab sweep {}", info.sweep_id);
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
                info.mem_total_bytes,
                info.page_cache_bytes,
            ));
        }
    }
    let axis_kind = axis.unwrap_or(AxisValue::Other);
    let x_of =
        |r: &SweepChartPoint<'_>, ph: &PhaseResult| x_value(first, &r.params[0].1, ph, axis_kind);
    let multi_phase = ok.iter().any(|(r, _)| r.phases.len() > 1);
    // Non-numeric x (rw=read,write): positions 1, 2, ... in the order given.
    let mut order: Vec<String> = Vec::new();
    for (r, _) in &ok {
        let v = &r.params[0].1;
        if !order.contains(v) {
            order.push(v.clone());
        }
    }
    let numeric = ok.iter().all(|(r, ph)| x_of(r, ph).is_some());
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    for (r, ph) in &ok {
        let v = &r.params[0].1;
        let x = if numeric {
            x_of(r, ph).unwrap_or(0.0)
        } else {
            order.iter().position(|o| o == v).unwrap_or(0) as f64 + 1.0
        };
        let mut name: Vec<String> = r.params[1..]
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
    let is_size = numeric && axis == Some(AxisValue::Size);
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
        (*first == "size" && info.mem_total_bytes > 0).then_some(info.mem_total_bytes as f64),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{Spec, phase};
    use storlab_types::RwMode;

    fn params(v: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        v.iter().map(|(k, v)| (*k, (*v).to_string())).collect()
    }

    const INFO: SweepChartInfo<'static> = SweepChartInfo {
        sweep_id: "sw-1",
        mem_total_bytes: 0,
        page_cache_bytes: None,
    };

    #[test]
    fn nothing_to_draw_is_a_typed_reason() {
        assert_eq!(
            sweep_chart(&[], &[], Some(AxisValue::Size), INFO),
            Err(CannotDraw::SweepVariesNothing)
        );
        assert_eq!(
            sweep_chart(&[], &["bs"], Some(AxisValue::Size), INFO),
            Err(CannotDraw::NoSweepPointMeasured)
        );
    }

    #[test]
    fn a_second_option_gives_one_line_per_value_and_non_numbers_are_positions() {
        let p1 = params(&[("rw", "read"), ("numjobs", "1")]);
        let p2 = params(&[("rw", "write"), ("numjobs", "1")]);
        let p3 = params(&[("rw", "read"), ("numjobs", "2")]);
        let ph = |rw| vec![phase(&Spec::new("p", rw, 4096, 100.0))];
        let (a, b, c) = (ph(RwMode::Read), ph(RwMode::Write), ph(RwMode::Read));
        let pts = [
            SweepChartPoint {
                params: &p1,
                phases: &a,
            },
            SweepChartPoint {
                params: &p2,
                phases: &b,
            },
            SweepChartPoint {
                params: &p3,
                phases: &c,
            },
        ];
        let svg = sweep_chart(&pts, &["rw", "numjobs"], Some(AxisValue::Other), INFO).unwrap();
        assert!(svg.contains("rw: 1 = read, 2 = write"), "{svg}");
        assert!(
            svg.contains(">numjobs=1<") && svg.contains(">numjobs=2<"),
            "{svg}"
        );
        assert!(svg.contains("storlab sweep sw-1"));
    }
}
