//! Predicted vs measured: stored runs as the model's workloads
//! (`storlab plan layout ... --against RUN`), and as calibration
//! observations (`storlab plan calibrate`).

use super::*;
use serde::Serialize;
use storlab_plan::calibrate::Observation;
use storlab_types::{CacheMode, PhaseResult, RwMode, StoredRun};

/// The workload a measured phase ran, or why it cannot be modelled.
pub(super) fn phase_workload(p: &PhaseResult) -> Result<Workload, String> {
    let params = &p.params;
    let bs = match params.bs.as_slice() {
        [one] => one.bs_bytes,
        [] => return Err("no block size".to_string()),
        _ => return Err("a block-size mix (--bssplit) is not one request size".to_string()),
    };
    let pattern = match params.rw {
        RwMode::Read => Pattern::SeqRead,
        RwMode::Write => Pattern::SeqWrite,
        RwMode::RandRead => Pattern::RandRead,
        RwMode::RandWrite => Pattern::RandWrite,
        RwMode::ReadWrite | RwMode::RandRw => Pattern::Mix {
            read_pct: f64::from(params.rwmixread),
            random: params.rw.is_random(),
        },
        // Every block read, then written back: half the requests each way.
        RwMode::ReadModifyWrite => Pattern::Mix {
            read_pct: 50.0,
            random: params.rw.is_random(),
        },
    };
    Ok(Workload {
        buffered: params.cache != CacheMode::Direct,
        ..Workload::new(pattern, bs).with_concurrency(params.numjobs.max(1), params.iodepth.max(1))
    })
}

/// One phase, measured and predicted.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Against {
    pub run: i64,
    pub phase: String,
    pub workload: String,
    pub measured_bytes_per_s: f64,
    pub predicted_bytes_per_s: Option<f64>,
    /// (predicted − measured) / measured.
    pub error: Option<f64>,
    pub binding: Option<String>,
    pub explanation: String,
}

/// Every phase of `runs` against the design's prediction.
pub(super) fn against(design: &Design, runs: &[StoredRun]) -> Result<Vec<Against>> {
    let geo = design
        .layout
        .geometry(design.hardware.drive.capacity_bytes)?;
    let mut out = Vec::new();
    for run in runs {
        for p in &run.report.phases {
            let measured = p.total.bw_bytes_per_s;
            let row = match phase_workload(p) {
                Ok(w) => {
                    let pred = storlab_plan::perf::predict_geo(
                        &design.layout,
                        &geo,
                        &design.hardware,
                        &w,
                    )?;
                    Against {
                        run: run.id,
                        phase: p.params.name.clone(),
                        workload: pred.workload.clone(),
                        measured_bytes_per_s: measured,
                        predicted_bytes_per_s: Some(pred.bytes_per_s),
                        error: (measured > 0.0).then(|| (pred.bytes_per_s - measured) / measured),
                        binding: Some(pred.binding.clone()),
                        explanation: pred.explanation.clone(),
                    }
                }
                Err(why) => Against {
                    run: run.id,
                    phase: p.params.name.clone(),
                    workload: String::new(),
                    measured_bytes_per_s: measured,
                    predicted_bytes_per_s: None,
                    error: None,
                    binding: None,
                    explanation: format!("not modelled: {why}"),
                },
            };
            out.push(row);
        }
    }
    Ok(out)
}

pub(super) fn render_against(rows: &[Against]) -> String {
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(170);
    t.set_header(vec![
        "run / phase",
        "workload",
        "measured MB/s",
        "predicted MB/s",
        "error",
        "what the model thinks binds",
    ]);
    for r in rows {
        t.add_row(vec![
            format!("{} / {}", r.run, r.phase),
            r.workload.clone(),
            format!("{:.1}", r.measured_bytes_per_s / 1e6),
            r.predicted_bytes_per_s
                .map_or("-".to_string(), |p| format!("{:.1}", p / 1e6)),
            r.error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0)),
            r.explanation.clone(),
        ]);
    }
    let errs: Vec<f64> = rows.iter().filter_map(|r| r.error.map(f64::abs)).collect();
    let mut out = t.to_string();
    out.push('\n');
    if !errs.is_empty() {
        out.push_str(&format!(
            "mean absolute error {:.1}% over {} phase(s); error = (predicted - measured) / measured\n",
            errs.iter().sum::<f64>() / errs.len() as f64 * 100.0,
            errs.len()
        ));
    }
    out
}

/// A stored phase as calibration observations (one per direction with I/O).
pub(super) fn observations(run: &StoredRun) -> (Vec<Observation>, Vec<String>) {
    let mut obs = Vec::new();
    let mut skipped = Vec::new();
    for p in &run.report.phases {
        let label = format!("run {} phase {}", run.id, p.params.name);
        let w = match phase_workload(p) {
            Ok(w) => w,
            Err(why) => {
                skipped.push(format!("{label}: {why}"));
                continue;
            }
        };
        if matches!(w.pattern, Pattern::Mix { .. }) {
            skipped.push(format!(
                "{label}: a read/write mix (the fit uses pure reads and pure writes)"
            ));
            continue;
        }
        if w.buffered {
            skipped.push(format!(
                "{label}: buffered (the page cache, not the device, sets its rate); use --cache direct"
            ));
            continue;
        }
        let write = matches!(w.pattern, Pattern::SeqWrite | Pattern::RandWrite);
        let stats = if write { &p.write } else { &p.read };
        if stats.ops == 0 {
            skipped.push(format!("{label}: no I/O"));
            continue;
        }
        obs.push(Observation {
            label,
            write,
            random: w.pattern.is_random(),
            request_bytes: w.request_bytes,
            in_flight: w.streams * w.qd,
            iops: stats.iops,
        });
    }
    (obs, skipped)
}
