//! Predicted vs measured: each phase of a stored run turned into the
//! model's workload and predicted for a design, beside what was measured
//! (`storlab plan layout ... --against RUN`, and `storlab report` for runs
//! tagged with the design they were planned as).

use crate::PlanError;
use crate::calibrate::Observation;
use crate::design::Design;
use crate::perf::{Workload, predict_geo};
use serde::Serialize;
use storlab_types::Pattern;
use storlab_types::{CacheMode, PhaseResult, RwMode, StoredRun};

/// Why a measured phase cannot be modelled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotModelled {
    #[error("no block size")]
    NoBlockSize,
    #[error("a block-size mix (--bssplit) is not one request size")]
    BlockSizeMix,
    #[error("{0}")]
    Model(#[from] PlanError),
    #[error("trims (rw=trim/randtrim) are not modelled")]
    Trims,
}

/// The workload a measured phase ran, or why it cannot be modelled.
pub fn phase_workload(p: &PhaseResult) -> Result<Workload, NotModelled> {
    let params = &p.params;
    let bs = match params.bs.as_slice() {
        [one] => one.bs_bytes,
        [] => return Err(NotModelled::NoBlockSize),
        _ => return Err(NotModelled::BlockSizeMix),
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
        RwMode::Trim | RwMode::RandTrim => return Err(NotModelled::Trims),
    };
    Ok(Workload {
        buffered: params.cache != CacheMode::Direct,
        ..Workload::new(pattern, bs).with_concurrency(params.numjobs.max(1), params.iodepth.max(1))
    })
}

/// One phase, measured and predicted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Against {
    pub run: i64,
    pub phase: String,
    /// The workload as the model names it; empty when not modelled.
    pub workload: String,
    pub measured_bytes_per_s: f64,
    pub predicted_bytes_per_s: Option<f64>,
    /// Random I/O is compared in IOPS (requests per second) at its queue
    /// depth: `random` says so, the IOPS figures are measured and
    /// predicted, `jobs` x `iodepth` what was kept in flight.
    #[serde(default)]
    pub random: bool,
    pub measured_iops: f64,
    pub predicted_iops: Option<f64>,
    pub jobs: u32,
    pub iodepth: u32,
    /// (predicted − measured) / measured; `None` when not modelled or
    /// nothing was measured.
    pub error: Option<f64>,
    /// The part the model thinks binds.
    pub binding: Option<String>,
    /// The binding effect in one line, or why the phase is not modelled.
    pub explanation: String,
    /// The prediction is an upper bound: a part on the path has no
    /// published limit for this workload (`unknowns` says which).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bound: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknowns: Vec<String>,
}

/// The error of a prediction, as every comparison of `storlab plan`
/// reports it: (predicted − measured) / measured, positive when the model
/// promises more than was measured; none when nothing was measured.
pub fn relative_error(predicted: f64, measured: f64) -> Option<f64> {
    (measured > 0.0).then(|| (predicted - measured) / measured)
}

/// The mean of the absolute errors, and how many there are; none for none.
pub fn mean_abs(errors: impl IntoIterator<Item = f64>) -> Option<(f64, usize)> {
    let (sum, n) = errors
        .into_iter()
        .fold((0.0, 0usize), |(s, n), e| (s + e.abs(), n + 1));
    (n > 0).then(|| (sum / n as f64, n))
}

/// Every phase of `runs` against the design's prediction. A phase the model
/// cannot take (a block-size mix, a zero request size) is a row that says
/// why, not an error for the run.
pub fn against(design: &Design, runs: &[StoredRun]) -> Result<Vec<Against>, PlanError> {
    let geo = design
        .layout
        .geometry(design.hardware.drive.capacity_bytes)?;
    let mut out = Vec::new();
    for run in runs {
        for p in &run.report.phases {
            let measured = p.total.bw_bytes_per_s;
            let predicted = phase_workload(p)
                .and_then(|w| Ok(predict_geo(&design.layout, &geo, &design.hardware, &w)?));
            let (jobs, iodepth) = (p.params.numjobs.max(1), p.params.iodepth.max(1));
            let random = p.params.rw.is_random();
            let row = match predicted {
                Ok(pred) => Against {
                    run: run.id,
                    phase: p.params.name.clone(),
                    workload: pred.workload.clone(),
                    measured_bytes_per_s: measured,
                    predicted_bytes_per_s: Some(pred.bytes_per_s),
                    random,
                    measured_iops: p.total.iops,
                    predicted_iops: Some(pred.iops),
                    jobs,
                    iodepth,
                    error: relative_error(pred.bytes_per_s, measured),
                    binding: Some(pred.binding.clone()),
                    explanation: pred.explanation.clone(),
                    bound: pred.bound,
                    unknowns: pred.unknowns.clone(),
                },
                Err(why) => Against {
                    run: run.id,
                    phase: p.params.name.clone(),
                    workload: String::new(),
                    measured_bytes_per_s: measured,
                    predicted_bytes_per_s: None,
                    random,
                    measured_iops: p.total.iops,
                    predicted_iops: None,
                    jobs,
                    iodepth,
                    error: None,
                    binding: None,
                    explanation: format!("not modelled: {why}"),
                    bound: false,
                    unknowns: Vec::new(),
                },
            };
            out.push(row);
        }
    }
    Ok(out)
}

/// Mean absolute error over the rows that have one, and how many those are.
pub fn mean_absolute_error(rows: &[Against]) -> Option<(f64, usize)> {
    mean_abs(rows.iter().filter_map(|r| r.error))
}

/// A stored run's phases as calibration observations (one per phase with
/// I/O, in its direction), and the phases left out with why.
pub fn observations(run: &StoredRun) -> (Vec<Observation>, Vec<String>) {
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
            merge: p.device_stat.as_ref().and_then(|d| d.merge_factor(write)),
        });
    }
    (obs, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_predicted_minus_measured_over_measured() {
        // The model promises 250 where 200 was measured: +25 %; 90 where
        // 100 was: -10 %.
        assert_eq!(relative_error(250.0, 200.0), Some(0.25));
        assert_eq!(relative_error(90.0, 100.0), Some(-0.1));
        assert_eq!(relative_error(90.0, 0.0), None, "nothing measured");
        let (m, n) = mean_abs([0.25, -0.1]).unwrap();
        assert!((m - 0.175).abs() < 1e-12 && n == 2, "{m} {n}");
        assert_eq!(mean_abs([]), None);
    }
}
