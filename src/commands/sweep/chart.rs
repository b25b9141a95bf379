//! `--chart FILE.svg|FILE.png`: the sweep's points drawn by the report
//! crate's sweep chart ([`storlab_report::sweep_chart`], registry kinds
//! `sweep` and `heat-map`); this file only gathers the points and writes
//! the file.

use super::{PointResult, SweepTotals};
use crate::commands::outfile::Permit;
use anyhow::{Result, bail};
use storlab_bench::{OptKind, find_option};
use storlab_report::{AxisValue, SweepChartInfo, SweepChartPoint};

/// Draw the chart and write it under its permit.
pub fn write(
    permit: &Permit,
    results: &[PointResult],
    keys: &[&str],
    t: &SweepTotals,
) -> Result<()> {
    let png = crate::commands::outfile::chart_is_png(permit.path())?;
    let bytes = storlab_report::chart_file(build(results, keys, t)?, png)?;
    Ok(permit.write(&bytes)?)
}

/// How the first varied option's values read on the x axis.
fn axis(key: &str) -> Option<AxisValue> {
    Some(match find_option(key)?.kind {
        OptKind::Size => AxisValue::Size,
        OptKind::Int => AxisValue::Int,
        _ => AxisValue::Other,
    })
}

fn build(results: &[PointResult], keys: &[&str], t: &SweepTotals) -> Result<String> {
    let points: Vec<SweepChartPoint<'_>> = results
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| {
            r.report.as_ref().map(|rep| SweepChartPoint {
                params: &r.point.params,
                phases: &rep.phases,
            })
        })
        .collect();
    let info = SweepChartInfo {
        sweep_id: &t.sweep_id,
        mem_total_bytes: t.mem_total_bytes,
        page_cache_bytes: t.page_cache_bytes,
    };
    match storlab_report::sweep_chart(&points, keys, keys.first().and_then(|k| axis(k)), info) {
        Ok(svg) => Ok(svg),
        Err(why) => bail!("--chart: {why}"),
    }
}
