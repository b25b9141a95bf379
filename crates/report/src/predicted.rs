//! Predicted beside measured, for runs that carry a design (`storlab bench
//! --design "R60/10/20 --drive ..."`, saved as tag `planned_as=...`): each
//! phase's figure from `storlab plan`'s model next to what was measured,
//! the error and what the model thinks binds. [`predict`] evaluates each
//! run's design through the plan crate; this module lays the rows out as an
//! HTML table and a bar chart.

use crate::charts::Chart;
use crate::fmt::{format_change, mb_per_s, xml_escape as esc};
use crate::html::{num, table, txt, wrap};
use crate::svg::{BarChart, BarSeries, fmt_tick};
use storlab_plan::against::{Against, mean_absolute_error};
use storlab_plan::{Design, PlanError};
use storlab_types::DESIGN_TAG;
use storlab_types::StoredRun;

/// One run's design and its phases predicted, or why the design could not
/// be evaluated.
#[derive(Debug, Clone)]
pub struct Predicted {
    pub run: i64,
    /// The design as tagged: `storlab plan layout`'s arguments.
    pub design: String,
    /// The rows, or why the design could not be evaluated: a typed
    /// warning the CLI words (`run N: design '...': ...`) and the report
    /// shows.
    pub rows: Result<Vec<Against>, PlanError>,
}

/// Each run that carries a design (tag `planned_as=...`, or `given` for
/// all), its phases predicted by `storlab plan`'s model. The given design
/// was checked already; a stored tag that no longer reads (the catalog
/// changed) comes back as an `Err` row, shown as such in the report. `read`
/// gives a catalog file's text (the crate reads no files).
pub fn predict(
    runs: &[StoredRun],
    given: Option<(&str, &Design)>,
    mut read: impl FnMut(&std::path::Path) -> Result<String, String>,
) -> Vec<Predicted> {
    let mut out = Vec::new();
    for run in runs {
        let (spec, evaluated) = match (given, run.tags.get(DESIGN_TAG)) {
            (Some((d, design)), _) => (d.to_string(), Ok(design.clone())),
            (None, Some(tag)) => (
                tag.clone(),
                storlab_plan::design_from_spec(tag, &mut read).map_err(PlanError::inner),
            ),
            (None, None) => continue,
        };
        let rows =
            evaluated.and_then(|d| storlab_plan::against::against(&d, std::slice::from_ref(run)));
        out.push(Predicted {
            run: run.id,
            design: spec,
            rows,
        });
    }
    out
}

/// The run by id, host and target (its tags include the design, shown
/// apart); an unknown host is `?`, as everywhere in the report.
fn label_of(runs: &[StoredRun], id: i64) -> String {
    match runs.iter().find(|r| r.id == id) {
        Some(r) => {
            let host = match r.report.host.hostname.as_str() {
                "" => "?",
                h => h,
            };
            format!("Run #{id} on {host} ({})", r.report.target.path)
        }
        None => format!("Run #{id}"),
    }
}

/// The HTML section: per run, its design, a table of phases and the mean
/// absolute error.
pub(crate) fn predicted_section(runs: &[StoredRun], predicted: &[Predicted]) -> String {
    let mut s = String::from(
        "<p>Each phase's throughput as <code>storlab plan</code>'s model predicts it for the \
         run's design (its <code>planned_as</code> tag, or <code>report --design</code>), beside \
         what was measured. Error = (predicted − \
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
                    esc(&e.to_string())
                ));
                continue;
            }
        };
        let cells: Vec<_> = rows
            .iter()
            .map(|r| {
                vec![
                    txt(r.phase.as_str()),
                    txt(r.workload.as_str()),
                    num(mb_per_s(r.measured_bytes_per_s)),
                    // An upper bound is shown as one, with what is unknown.
                    num(r.predicted_bytes_per_s.map_or("–".into(), |v| {
                        format!("{}{}", if r.bound { "≤ " } else { "" }, mb_per_s(v))
                    })),
                    num(r
                        .error
                        .map_or("–".into(), |e| format!("{:+.1} %", e * 100.0))),
                    wrap(if r.bound {
                        format!(
                            "{}; upper bound only: {}",
                            r.explanation,
                            r.unknowns.join("; ")
                        )
                    } else {
                        r.explanation.clone()
                    }),
                ]
            })
            .collect();
        s.push_str(&table(
            &[
                "phase",
                "workload as modelled",
                "measured MB/s",
                "predicted MB/s",
                "error",
                "what the model thinks binds",
            ],
            &cells,
        ));
        if let Some((mae, n)) = mean_absolute_error(rows) {
            s.push_str(&format!(
                "<p>Mean absolute error {:.1} % over {n} phase(s).</p>\n",
                mae * 100.0
            ));
        }
    }
    s.push_str(
        "<p>The chart <code>predicted</code> (under Charts) sets the two side by side.</p>\n",
    );
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
            measured.push(Some(crate::charts::mb(r.measured_bytes_per_s)));
            model.push(Some(crate::charts::mb(pred)));
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
            error: predicted.and_then(|p| storlab_plan::against::relative_error(p, measured)),
            binding: predicted.map(|_| "drives".into()),
            explanation: if predicted.is_some() {
                "bound by the drives".into()
            } else {
                "not modelled: a block-size mix (--bssplit) is not one request size".into()
            },
            bound: false,
            unknowns: Vec::new(),
            ..Default::default()
        }
    }

    /// A one-controller design from the built-in catalog, with the
    /// defaults `plan layout` applies.
    fn test_design(layout: &str, drive: &str, controller: &str) -> storlab_plan::Design {
        let cat = storlab_plan::catalog::Catalog::builtin();
        storlab_plan::Design {
            layout: layout.parse().unwrap(),
            hardware: storlab_plan::hardware::Hardware {
                drive: cat.drive(drive).unwrap(),
                controller: cat.controller(controller).unwrap(),
                controllers: 1,
                enclosure: None,
                host_bytes_per_s: None,
            },
            hot_spares: 0,
            replace_delay_hours: 24.0,
            mission_hours: 43_800.0,
            fleet: 1,
            workloads: Vec::new(),
            fs_stripe: None,
            sizing: None,
        }
    }

    /// The model's figure for a one-SSD design is its data sheet (500 MB/s
    /// read, 460 written): measured 400 and 500 give +25 % and -8 %, and a
    /// block-size mix is a row that says why it is not modelled.
    #[test]
    fn phases_of_a_run_are_held_against_the_designs_figures() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        let design = test_design("R0/1", "dc-s3700-800gb", "hba-9300-8i-md");
        let mut mix = phase(&Spec::new("mix", RwMode::Read, 1 << 20, 100.0));
        mix.params.bs.push(mix.params.bs[0]);
        let r = run(
            3,
            &[],
            vec![
                phase(&Spec::new("read", RwMode::Read, 1 << 20, 400.0)),
                phase(&Spec::new("write", RwMode::Write, 1 << 20, 500.0)),
                mix,
            ],
        );
        let rows = storlab_plan::against::against(&design, std::slice::from_ref(&r)).unwrap();
        // (The test phases' byte counts are whole, so within 1e-4.)
        let near = |a: Option<f64>, b: f64, tol: f64| a.is_some_and(|a| (a - b).abs() < tol);
        assert!(near(rows[0].predicted_bytes_per_s, 500e6, 1.0), "{rows:?}");
        assert!(near(rows[0].error, 0.25, 1e-4), "{rows:?}");
        assert!(near(rows[1].predicted_bytes_per_s, 460e6, 1.0), "{rows:?}");
        assert!(near(rows[1].error, -0.08, 1e-4), "{rows:?}");
        assert!(rows[2].error.is_none() && rows[2].explanation.contains("--bssplit"));
        let (mae, n) = storlab_plan::against::mean_absolute_error(&rows).unwrap();
        assert!((mae - 0.165).abs() < 1e-4 && n == 2, "{mae}");
        let s = predicted_section(
            std::slice::from_ref(&r),
            &[Predicted {
                run: 3,
                design: "R0/1 --drive dc-s3700-800gb".into(),
                rows: Ok(rows),
            }],
        );
        assert!(s.contains("+25.0 %") && s.contains("-8.0 %"), "{s}");
    }

    /// A design whose controller names its write path without a figure
    /// (EqualLogic PS4000: mirrored write cache) is a bound for the write
    /// phase, and the report says so; the read phase stays a prediction.
    #[test]
    fn an_unpublished_write_path_is_shown_as_an_upper_bound() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        let design = test_design("R5/8", "cheetah-15k5-300gb", "equallogic-ps4000");
        let r = run(
            4,
            &[],
            vec![
                phase(&Spec::new("read", RwMode::Read, 1 << 20, 100.0)),
                phase(&Spec::new("write", RwMode::Write, 1 << 20, 100.0)),
            ],
        );
        let rows = storlab_plan::against::against(&design, std::slice::from_ref(&r)).unwrap();
        assert!(!rows[0].bound && rows[1].bound, "{rows:?}");
        let s = predicted_section(
            std::slice::from_ref(&r),
            &[Predicted {
                run: 4,
                design: "R5/8 --controller equallogic-ps4000".into(),
                rows: Ok(rows.clone()),
            }],
        );
        let w = rows[1].predicted_bytes_per_s.unwrap();
        assert!(s.contains(&format!("≤ {}", mb_per_s(w))), "{s}");
        assert!(
            s.contains("upper bound only: the controller&#39;s write path"),
            "{s}"
        );
        assert_eq!(s.matches('≤').count(), 1, "{s}");
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
                rows: Err(PlanError::Design("invalid layout 'R9/3'".into())),
            },
        ];
        let s = predicted_section(&[], &p);
        assert!(
            s.contains("<code>lvm(2*R5/6, stripe=1M) --drive &lt;x&gt;</code>"),
            "{s}"
        );
        assert!(s.contains("+25.0 %") && s.contains("-10.0 %"), "{s}");
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
