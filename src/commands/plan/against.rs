//! Predicted vs measured printed (`storlab plan layout ... --against RUN`;
//! the rows come from `storlab_plan::against`), and stored runs as
//! calibration observations (`storlab plan calibrate`).

use super::*;
pub(super) use storlab_plan::against::{Against, against};
use storlab_plan::against::{mean_absolute_error, phase_workload};
use storlab_plan::calibrate::Observation;
use storlab_types::StoredRun;

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
            r.predicted_bytes_per_s.map_or("-".to_string(), |p| {
                format!("{}{:.1}", if r.bound { "≤ " } else { "" }, p / 1e6)
            }),
            r.error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0)),
            if r.bound {
                format!(
                    "{}; upper bound only: {}",
                    r.explanation,
                    r.unknowns.join("; ")
                )
            } else {
                r.explanation.clone()
            },
        ]);
    }
    let mut out = t.to_string();
    out.push('\n');
    if let Some((mae, n)) = mean_absolute_error(rows) {
        out.push_str(&format!(
            "mean absolute error {:.1}% over {n} phase(s); error = (predicted - measured) / measured\n",
            mae * 100.0,
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
