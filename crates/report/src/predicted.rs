//! Predicted beside measured, for runs that carry a design (`storlab bench
//! --design "R6/10/20 --drive ..."`, saved as tag `planned_as=...`): each
//! phase's figure from `storlab plan`'s model next to what was measured,
//! the error and what the model thinks binds. The CLI evaluates the design
//! (it owns the parsing of `storlab plan layout`'s arguments); this module
//! lays the rows out as an HTML table and a bar chart.

use crate::charts::Chart;
use crate::fmt::{format_change, xml_escape as esc};
use crate::svg::{BarChart, BarSeries, fmt_tick};
use storlab_plan::against::{Against, mean_absolute_error};
use storlab_types::StoredRun;

/// One run's design and its phases predicted, or why the design could not
/// be evaluated.
#[derive(Debug, Clone)]
pub struct Predicted {
    pub run: i64,
    /// The design as tagged: `storlab plan layout`'s arguments.
    pub design: String,
    pub rows: Result<Vec<Against>, String>,
}

fn mb(v: f64) -> String {
    format!("{:.1}", v / 1e6)
}

/// The run by id and host (its tags include the design, shown apart).
fn label_of(runs: &[StoredRun], id: i64) -> String {
    match runs.iter().find(|r| r.id == id) {
        Some(r) => format!(
            "Run #{id} on {} ({})",
            r.report.host.hostname, r.report.target.path
        ),
        None => format!("Run #{id}"),
    }
}

/// The HTML section: per run, its design, a table of phases and the mean
/// absolute error.
pub(crate) fn predicted_section(runs: &[StoredRun], predicted: &[Predicted]) -> String {
    let mut s = String::from(
        "<p>Each phase's throughput as <code>storlab plan</code>'s model predicts it for the \
         design the run was tagged with, beside what was measured. Error = (predicted − \
         measured) / measured; the last column is the effect the model thinks binds. The model \
         is a bound: a large positive error means something it does not know about limits this \
         hardware (see docs/MODEL.md, or fit the device with <code>storlab plan \
         calibrate</code>).</p>\n",
    );
    for p in predicted {
        s.push_str(&format!(
            "<h3>{} — design <code>{}</code></h3>\n",
            esc(&label_of(runs, p.run)),
            esc(&p.design)
        ));
        let rows = match &p.rows {
            Ok(rows) => rows,
            Err(e) => {
                s.push_str(&format!(
                    "<p class=\"warn\">The design could not be evaluated: {}</p>\n",
                    esc(e)
                ));
                continue;
            }
        };
        s.push_str(
            "<div class=\"scroll\"><table><thead><tr><th>phase</th><th>workload as modelled</th>\
             <th>measured MB/s</th><th>predicted MB/s</th><th>error</th>\
             <th>what the model thinks binds</th></tr></thead><tbody>\n",
        );
        for r in rows {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"wrap\">{}</td></tr>\n",
                esc(&r.phase),
                esc(&r.workload),
                mb(r.measured_bytes_per_s),
                r.predicted_bytes_per_s.map_or("-".into(), mb),
                r.error.map_or("-".into(), |e| format_change(e * 100.0)),
                esc(&r.explanation)
            ));
        }
        s.push_str("</tbody></table></div>\n");
        if let Some((mae, n)) = mean_absolute_error(rows) {
            s.push_str(&format!(
                "<p>Mean absolute error {:.1} % over {n} phase(s).</p>\n",
                mae * 100.0
            ));
        }
    }
    if let Some(c) = predicted_chart(predicted) {
        s.push_str(&crate::html::figure(&c));
    }
    s
}

/// Measured and predicted bars for every modelled phase; `None` when no
/// phase could be modelled.
pub fn predicted_chart(predicted: &[Predicted]) -> Option<Chart> {
    let mut categories = Vec::new();
    let mut measured = Vec::new();
    let mut model = Vec::new();
    let mut labels = Vec::new();
    for p in predicted {
        let Ok(rows) = &p.rows else { continue };
        for r in rows {
            let Some(pred) = r.predicted_bytes_per_s else {
                continue;
            };
            categories.push(format!("#{} · {}", p.run, r.phase));
            measured.push(Some(r.measured_bytes_per_s / 1e6));
            model.push(Some(pred / 1e6));
            labels.push(r.error.map(|e| format_change(e * 100.0)));
        }
    }
    if categories.is_empty() {
        return None;
    }
    let n = categories.len();
    let c = BarChart {
        title: "Predicted vs measured".into(),
        subtitle: Some(
            "Each phase's measured throughput beside storlab plan's prediction for the run's \
             design; the label over the prediction is its error"
                .into(),
        ),
        y_label: "Throughput (MB/s, 10^6 bytes/s)".into(),
        x_label: "Run · phase".into(),
        categories,
        series: vec![
            BarSeries {
                name: "measured".into(),
                values: measured,
                ..BarSeries::default()
            },
            BarSeries {
                name: "predicted (storlab plan)".into(),
                values: model,
                labels,
                faded: vec![false; n],
            },
        ],
        log_y: false,
        y_fmt: fmt_tick,
        faded_legend: None,
    };
    Some(Chart {
        id: "predicted".into(),
        title: "Predicted vs measured".into(),
        svg: c.render(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: &str, measured: f64, predicted: Option<f64>) -> Against {
        Against {
            run: 7,
            phase: phase.into(),
            workload: "sequential read 1 MiB (1 x QD4)".into(),
            measured_bytes_per_s: measured,
            predicted_bytes_per_s: predicted,
            error: predicted.map(|p| (p - measured) / measured),
            binding: predicted.map(|_| "drives".into()),
            explanation: if predicted.is_some() {
                "bound by the drives".into()
            } else {
                "not modelled: a block-size mix (--bssplit) is not one request size".into()
            },
        }
    }

    #[test]
    fn rows_errors_and_the_mean_are_shown_and_escaped() {
        let p = vec![
            Predicted {
                run: 7,
                design: "lvm(2*R5/6, stripe=1M) --drive <x>".into(),
                rows: Ok(vec![
                    row("seq-read", 200e6, Some(250e6)),
                    row("mix", 100e6, None),
                    row("seq-write", 100e6, Some(90e6)),
                ]),
            },
            Predicted {
                run: 8,
                design: "R9/3".into(),
                rows: Err("invalid layout 'R9/3'".into()),
            },
        ];
        let s = predicted_section(&[], &p);
        assert!(
            s.contains("<code>lvm(2*R5/6, stripe=1M) --drive &lt;x&gt;</code>"),
            "{s}"
        );
        assert!(s.contains("+25 %") && s.contains("-10 %"), "{s}");
        // The mean is over the two modelled phases: (25 + 10) / 2.
        assert!(
            s.contains("Mean absolute error 17.5 % over 2 phase(s)"),
            "{s}"
        );
        assert!(s.contains("not modelled: a block-size mix"), "{s}");
        assert!(
            s.contains("could not be evaluated: invalid layout &#39;R9/3&#39;"),
            "{s}"
        );
        // The chart has the two modelled phases only.
        let c = predicted_chart(&p).unwrap();
        assert!(
            c.svg.contains("#7 · seq-read") && !c.svg.contains("#7 · mix"),
            "{}",
            c.svg
        );
        assert!(predicted_chart(&p[1..]).is_none());
    }
}
