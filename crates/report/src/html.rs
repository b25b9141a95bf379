//! The self-contained HTML report: one file, inline CSS and SVG, no script
//! and no network reference, readable offline in any browser and printable.

use crate::charts::{resolve_baseline, run_caption};
use crate::compare::{Comparison, MetricWords, Verdict};
use crate::fmt::{format_iops, format_ns, mb_per_s, run_label, tags_joined, xml_escape as esc};
use crate::rows::rows;
use storlab_types::{
    BufferPattern, FileLayout, HostInfo, Metric, PhaseResult, STORLAB_VERSION, StoredRun,
    format_bytes,
};

const CSS: &str = "
:root { color-scheme: light; }
body { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif;
  margin: 0 auto; padding: 1.5rem 2rem 3rem; max-width: 1400px; color: #222; background: #fff;
  font-size: 14px; line-height: 1.45; }
h1 { font-size: 1.7rem; margin: 0 0 .3rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; border-bottom: 2px solid #4e79a7; padding-bottom: .2rem; }
p.lead { color: #555; margin: 0 0 1rem; }
nav a { margin-right: 1rem; color: #4e79a7; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: .4rem 0 1rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top;
  white-space: nowrap; }
th { background: #f2f5f9; }
td.wrap { white-space: normal; min-width: 14em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.base td { background: #f7f7f7; font-style: italic; }
td.better { color: #1b7a2f; font-weight: bold; }
td.worse { color: #b3261e; font-weight: bold; }
td.noise { color: #777; }
td.config { color: #8a5a00; }
figure { margin: 1rem 0 2rem; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 12px; margin-top: .3rem; }
ul.warn li { color: #8a5a00; }
.note { color: #555; font-size: 12px; }
/* Printing (to paper or PDF for an acceptance document): landscape pages,
   every column kept — tables take the page width and their cells wrap
   (a path or model name wider than its cell breaks, other words never)
   — the header row repeated on each page, sections flowing one after
   another (a one-run report is a few pages, not one per section), words
   broken only where one alone is wider than its cell, charts at full
   width and never split. */
@page { size: A4 landscape; margin: 10mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10px; }
  nav { display: none; }
  h2 { break-before: auto; break-after: avoid; margin-top: 1rem; }
  .scroll { overflow: visible; }
  table { width: 100%; font-size: 8.5px; }
  th, td { white-space: normal; padding: .15rem .25rem; }
  th { overflow-wrap: normal; word-break: normal; hyphens: none; }
  td { overflow-wrap: break-word; word-break: normal; hyphens: none; }
  td.num { white-space: nowrap; overflow-wrap: normal; }
  td.wrap { min-width: 0; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
  figure { break-inside: avoid; margin: .5rem 0 1rem; }
  figure svg { width: 100%; max-width: 100%; height: auto; max-height: 85mm; border: none; }
  th, tr.base td { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
";

pub(crate) fn table(head: &[&str], rows: &[Vec<(String, &str)>]) -> String {
    let mut s = String::from("<div class=\"scroll\"><table><thead><tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for (cell, class) in r {
            if class.is_empty() {
                s.push_str(&format!("<td>{}</td>", esc(cell)));
            } else {
                s.push_str(&format!("<td class=\"{class}\">{}</td>", esc(cell)));
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// A chart as a figure with its caption and the command that draws it alone.
pub(crate) fn figure(c: &crate::charts::Chart) -> String {
    format!(
        "<figure id=\"chart-{id}\">\n{}<figcaption>{} — chart id <code>{id}</code> \
         (storlab report --chart {id} --output-format svg|png)</figcaption>\n</figure>\n",
        c.svg,
        esc(&c.title),
        id = esc(&c.id),
    )
}

pub(crate) fn txt(s: impl Into<String>) -> (String, &'static str) {
    (s.into(), "")
}

pub(crate) fn num(s: impl Into<String>) -> (String, &'static str) {
    (s.into(), "num")
}

/// Free text that may wrap (notes, cache state).
pub(crate) fn wrap(s: impl Into<String>) -> (String, &'static str) {
    (s.into(), "wrap")
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "–".into())
}

fn runs_section(runs: &[StoredRun]) -> String {
    let rows: Vec<_> = runs
        .iter()
        .map(|r| {
            let rep = &r.report;
            let status = if rep.interrupted {
                format!(
                    "interrupted{}",
                    rep.stop_reason
                        .as_ref()
                        .map(|s| format!(": {s}"))
                        .unwrap_or_default()
                )
            } else {
                "complete".into()
            };
            vec![
                num(r.id.to_string()),
                txt(r.kind.as_str()),
                txt(&rep.started_at),
                txt(tags_joined(&r.tags, ", ")),
                wrap(r.note.clone().unwrap_or_default()),
                txt(&rep.host.hostname),
                txt(&rep.target.path),
                txt(opt(&rep.target.filesystem)),
                txt(format!(
                    "{}{}",
                    opt(&rep.target.device),
                    rep.target
                        .device_model
                        .as_ref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default()
                )),
                txt(match rep.target.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "–",
                }),
                txt(format!("{} {}", rep.tool.name, rep.tool.version)),
                txt(status),
            ]
        })
        .collect();
    table(
        &[
            "Run",
            "Kind",
            "Started (UTC)",
            "Tags",
            "Note",
            "Host",
            "Target",
            "File system",
            "Device",
            "Media",
            "Tool",
            "Status",
        ],
        &rows,
    )
}

/// A host figure, or "–" when the record has none (0).
fn known(v: u64, show: impl Fn(u64) -> String) -> String {
    if v == 0 { "–".into() } else { show(v) }
}

fn hosts_section(runs: &[StoredRun]) -> String {
    let mut hosts: Vec<(&HostInfo, Vec<i64>)> = Vec::new();
    for r in runs {
        match hosts.iter_mut().find(|(h, _)| **h == r.report.host) {
            Some((_, ids)) => ids.push(r.id),
            None => hosts.push((&r.report.host, vec![r.id])),
        }
    }
    let rows: Vec<_> = hosts
        .iter()
        .map(|(h, ids)| {
            vec![
                txt(&h.hostname),
                txt(&h.os),
                txt(&h.kernel),
                txt(&h.arch),
                txt(&h.cpu_model),
                // Zero = not recorded (fio imports, simulated runs).
                num(known(h.cpu_count.into(), |n| n.to_string())),
                num(known(h.mem_total_bytes, format_bytes)),
                num(known(h.page_size_bytes, format_bytes)),
                txt(ids
                    .iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")),
            ]
        })
        .collect();
    table(
        &[
            "Host",
            "OS",
            "Kernel",
            "Arch",
            "CPU",
            "CPUs",
            "RAM",
            "Page size",
            "Runs",
        ],
        &rows,
    )
}

fn layout(l: &FileLayout) -> String {
    match l {
        FileLayout::PerJob => "file per job".into(),
        FileLayout::SharedRegions => "shared file, regions".into(),
        FileLayout::SharedInterleaved { stride_bytes } => {
            format!("shared file, interleaved {}", format_bytes(*stride_bytes))
        }
    }
}

fn pattern(b: &BufferPattern) -> String {
    match b {
        BufferPattern::Random => "random (incompressible)".into(),
        BufferPattern::Zero => "zeros".into(),
        BufferPattern::Ior => "IOR's fixed data packets".into(),
        BufferPattern::Compressible { pct } => format!("{pct} % compressible"),
    }
}

fn dur(ns: Option<u64>) -> String {
    ns.map(|n| format_ns(n as f64))
        .unwrap_or_else(|| "–".into())
}

fn params_section(runs: &[StoredRun]) -> String {
    let mut rows = Vec::new();
    let labels = crate::fmt::run_labels(runs);
    for (r, label) in runs.iter().zip(&labels) {
        for p in &r.report.phases {
            let q = &p.params;
            let fsync = match (q.end_fsync, q.fsync_every) {
                (_, n) if n > 0 => format!("every {n} writes"),
                (true, _) if p.fsync_in_window => "at end, timed".into(),
                (true, _) => "at end, not timed".into(),
                (false, _) => "none".into(),
            };
            rows.push(vec![
                txt(label),
                txt(&q.name),
                txt(q.rw.as_str()),
                num(if q.rw.reads() && q.rw.writes() {
                    format!("{} % read", q.rwmixread)
                } else {
                    "–".into()
                }),
                num(q.bs_human()),
                num(format_bytes(q.size_bytes)),
                num(q.numjobs.to_string()),
                num(q.iodepth.to_string()),
                txt(q.engine.as_str()),
                txt(q.cache.as_str()),
                num(dur(q.runtime_ns)),
                // No ramp is "–", not "0 ns".
                num(dur((q.ramp_ns > 0).then_some(q.ramp_ns))),
                txt(fsync),
                txt(layout(&q.layout)),
                txt(pattern(&q.buffer_pattern)),
                txt(if q.rw.is_random() {
                    if q.random_with_replacement {
                        "with replacement"
                    } else {
                        "full-coverage permutation"
                    }
                } else {
                    "–"
                }),
                txt(if q.verify { "yes" } else { "no" }),
            ]);
        }
    }
    table(
        &[
            "Run", "Phase", "RW", "Mix", "BS", "Size/job", "Jobs", "QD", "Engine", "Cache",
            "Runtime", "Ramp", "fsync", "Layout", "Data", "Offsets", "Verify",
        ],
        &rows,
    )
}

fn cache_state(p: &PhaseResult) -> String {
    let c = &p.cache;
    let mut s = c.mode.to_string();
    if let Some(m) = &c.method {
        s.push_str(&format!(" ({m})"));
    }
    match c.verified {
        Some(true) => s.push_str(", verified"),
        Some(false) => s.push_str(", NOT verified"),
        None => {}
    }
    if c.may_be_cached {
        s.push_str(", may be cached");
    }
    s
}

fn results_section(runs: &[StoredRun]) -> String {
    let labels: std::collections::HashMap<i64, String> = runs
        .iter()
        .map(|r| r.id)
        .zip(crate::fmt::run_labels(runs))
        .collect();
    let rows: Vec<_> = rows(runs)
        .iter()
        .map(|r| {
            let l = r.stats.lat_ns;
            let lat = |f: fn(&storlab_types::LatencyStats) -> f64| {
                l.map(|l| format_ns(f(&l))).unwrap_or_else(|| "–".into())
            };
            vec![
                txt(labels.get(&r.run.id).cloned().unwrap_or_default()),
                txt(if r.phase.interrupted {
                    format!("{} (interrupted)", r.label())
                } else {
                    r.label()
                }),
                txt(r.direction.as_str()),
                num(mb_per_s(r.stats.bw_bytes_per_s)),
                num(format_iops(r.stats.iops)),
                num(lat(|l| l.mean)),
                num(lat(|l| l.p50 as f64)),
                num(lat(|l| l.p90 as f64)),
                num(lat(|l| l.p99 as f64)),
                num(lat(|l| l.p99_9 as f64)),
                num(lat(|l| l.max as f64)),
                num(format_bytes(r.stats.bytes)),
                num(format_ns(r.elapsed_ns() as f64)),
                wrap(cache_state(r.phase)),
            ]
        })
        .collect();
    table(
        &[
            "Run",
            "Phase",
            "Dir",
            "MB/s",
            "IOPS",
            "Lat mean",
            "Lat p50",
            "Lat p90",
            "Lat p99",
            "Lat p99.9",
            "Lat max",
            "Moved",
            "Elapsed",
            "Cache",
        ],
        &rows,
    )
}

fn comparison_section(c: &Comparison) -> String {
    let mut s = String::from("<div class=\"scroll\"><table><thead><tr>");
    for h in [
        "Phase",
        "Dir",
        "Run",
        "MB/s",
        "vs base",
        "IOPS",
        "vs base",
        "Lat p99",
        "vs base",
        "Noise ± (MB/s)",
        "Differs from baseline",
    ] {
        s.push_str(&format!("<th>{h}</th>"));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in &c.rows {
        s.push_str(if r.is_baseline {
            "<tr class=\"base\">"
        } else {
            "<tr>"
        });
        s.push_str(&format!(
            "<td>{}</td><td>{}</td><td>{}</td>",
            esc(&r.phase),
            r.direction.as_str(),
            esc(&r.run_label)
        ));
        for m in [Metric::Throughput, Metric::Iops, Metric::LatP99] {
            let ch = r.change(m);
            let v = ch
                .and_then(|c| c.value)
                .map(|v| match m {
                    Metric::Throughput => mb_per_s(v),
                    _ => m.format(v),
                })
                .unwrap_or_else(|| "–".into());
            let (d, class) = match ch {
                Some(c) => (
                    c.describe(),
                    match c.verdict {
                        Verdict::Better => "num better",
                        Verdict::Worse => "num worse",
                        Verdict::Noise => "num noise",
                        Verdict::ConfigDiffers => "num config",
                        _ => "num",
                    },
                ),
                None => ("n/a".into(), "num"),
            };
            s.push_str(&format!(
                "<td class=\"num\">{}</td><td class=\"{class}\">{}</td>",
                esc(&v),
                esc(&d)
            ));
        }
        let spread = if r.is_baseline {
            String::new()
        } else {
            r.change(Metric::Throughput)
                .map(|c| c.spread.describe())
                .unwrap_or_default()
        };
        s.push_str(&format!(
            "<td>{}</td><td class=\"wrap\">{}</td></tr>\n",
            esc(&spread),
            esc(&r.differs.join(", "))
        ));
    }
    s.push_str("</tbody></table></div>\n");
    if !c.unmatched.is_empty() {
        s.push_str("<p class=\"note\">Not compared:</p><ul>");
        for u in &c.unmatched {
            s.push_str(&format!("<li>{}</li>", esc(u)));
        }
        s.push_str("</ul>\n");
    }
    s.push_str(&format!(
        "<p class=\"note\">{}</p>\n",
        esc(crate::compare::comparison_footer(c).trim())
    ));
    s
}

fn warnings(runs: &[StoredRun]) -> Vec<String> {
    let mut w = Vec::new();
    for r in runs {
        let l = run_label(r);
        if r.report.interrupted {
            w.push(format!(
                "{l}: the run was interrupted{}; its phases hold what was measured",
                r.report
                    .stop_reason
                    .as_ref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ));
        }
        for x in &r.report.warnings {
            w.push(format!("{l}: {x}"));
        }
        for p in &r.report.phases {
            let n = &p.params.name;
            for x in &p.warnings {
                w.push(format!("{l} · {n}: {x}"));
            }
            let errors: u64 = p.errors.values().sum();
            if errors > 0 {
                w.push(format!("{l} · {n}: {errors} I/O errors"));
            }
            if let Some(v) = p.verify.as_ref().filter(|v| v.mismatches > 0) {
                w.push(format!(
                    "{l} · {n}: {} of {} verified blocks did not match",
                    v.mismatches, v.blocks_checked
                ));
            }
        }
    }
    w
}

/// The whole report as one HTML document: runs and their labels, host
/// facts, every phase's parameters and figures, the comparison against the
/// baseline, all charts ([`crate::charts()`]) and every warning the runs
/// carry. `baseline` indexes `runs`; `None` means the first run when there
/// are two or more (the report says which run it is). The output depends
/// only on the runs: no clock, no network, no script.
pub fn html_report(runs: &[StoredRun], baseline: Option<usize>) -> String {
    html_report_full(runs, baseline, &storlab_configdiff::Vary::default(), &[])
}

/// [`html_report`] with parameters under study (`--vary`: the comparison
/// and the relative chart pair and judge phases that differ in them) and
/// the runs' designs predicted beside what they measured (a "Predicted vs
/// measured" section and chart when `predicted` is not empty).
pub fn html_report_full(
    runs: &[StoredRun],
    baseline: Option<usize>,
    vary: &storlab_configdiff::Vary,
    predicted: &[crate::predicted::Predicted],
) -> String {
    let base = resolve_baseline(runs, baseline);
    let mut s = String::new();
    let title = match runs.len() {
        0 => "storlab report (no runs)".to_string(),
        1 => format!("storlab report: run {}", run_caption(&runs[0])),
        n => format!("storlab report: {n} runs"),
    };
    s.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"storlab {STORLAB_VERSION}\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    ));
    s.push_str(&format!("<h1>{}</h1>\n", esc(&title)));
    let (first, last) = (
        runs.iter().map(|r| r.report.started_at.as_str()).min(),
        runs.iter().map(|r| r.report.started_at.as_str()).max(),
    );
    if let (Some(a), Some(b)) = (first, last) {
        s.push_str(&format!(
            "<p class=\"lead\">Runs started from {} to {} (UTC). Produced by storlab {}. MB/s = \
             10<sup>6</sup> bytes/s; latency spans submission to completion of each I/O.</p>\n",
            esc(a),
            esc(b),
            STORLAB_VERSION
        ));
    }
    s.push_str(
        "<nav><a href=\"#runs\">Runs</a><a href=\"#hosts\">Hosts</a><a href=\"#params\">\
         Parameters</a><a href=\"#results\">Results</a>",
    );
    // In the order of the sections.
    if !predicted.is_empty() {
        s.push_str("<a href=\"#predicted\">Predicted</a>");
    }
    s.push_str(
        "<a href=\"#comparison\">Comparison</a><a href=\"#charts\">Charts</a>\
         <a href=\"#warnings\">Warnings</a></nav>\n",
    );
    s.push_str("<h2 id=\"runs\">Runs</h2>\n");
    s.push_str(&runs_section(runs));
    s.push_str("<h2 id=\"hosts\">Hosts</h2>\n");
    s.push_str(&hosts_section(runs));
    s.push_str("<h2 id=\"params\">Phase parameters</h2>\n");
    s.push_str(&params_section(runs));
    s.push_str("<h2 id=\"results\">Results</h2>\n");
    s.push_str(&results_section(runs));
    if !predicted.is_empty() {
        s.push_str("<h2 id=\"predicted\">Predicted vs measured</h2>\n");
        s.push_str(&crate::predicted::predicted_section(runs, predicted));
    }

    s.push_str("<h2 id=\"comparison\">Comparison with the baseline</h2>\n");
    match base {
        Some(b) => {
            let chosen = if baseline.is_some() {
                "chosen"
            } else {
                "the first run given; choose another with --baseline"
            };
            s.push_str(&format!(
                "<p>Baseline: <strong>{}</strong> ({chosen}).</p>\n",
                esc(&run_caption(&runs[b]))
            ));
            s.push_str(&comparison_section(&crate::compare::compare_with(runs, &runs[b], vary)));
        }
        None if baseline.is_some() => s.push_str(
            "<p class=\"note\">The baseline asked for is not among these runs; no comparison.</p>\n",
        ),
        None => s.push_str("<p class=\"note\">A comparison needs two or more runs.</p>\n"),
    }

    s.push_str("<h2 id=\"charts\">Charts</h2>\n");
    let input = crate::registry::Input::new(runs, baseline, vary, predicted);
    let drawn = crate::registry::draw_all(&input);
    for c in &drawn {
        s.push_str(&figure(c));
    }

    let not_drawn: Vec<String> = crate::registry::not_drawn_listed(&input, &drawn)
        .into_iter()
        .map(|(k, why)| format!("{k}: {why}"))
        .collect();
    if !not_drawn.is_empty() && !runs.is_empty() {
        s.push_str(
            "<p class=\"note\">Charts not drawn for these runs, and why:</p><ul class=\"note\">",
        );
        for x in not_drawn {
            s.push_str(&format!("<li>{}</li>", esc(&x)));
        }
        s.push_str("</ul>\n");
    }

    s.push_str("<h2 id=\"warnings\">Warnings</h2>\n");
    let w = warnings(runs);
    if w.is_empty() {
        s.push_str(
            "<p>None: no run or phase recorded a warning, an error or an interruption.</p>\n",
        );
    } else {
        s.push_str("<ul class=\"warn\">");
        for x in w {
            s.push_str(&format!("<li>{}</li>", esc(&x)));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{all_runs, compare_runs};

    /// The "charts not drawn" list said "predicted: no run has a design"
    /// under the predicted chart it had just drawn: its reasons were
    /// worked out without the designs.
    #[test]
    fn a_drawn_predicted_chart_is_not_listed_as_missing() {
        let runs = compare_runs();
        let pred = crate::predicted::Predicted {
            run: runs[0].id,
            design: "R0/1 --drive dc-s3700-800gb".into(),
            rows: Ok(vec![storlab_plan::against::Against {
                run: runs[0].id,
                phase: runs[0].report.phases[0].params.name.clone(),
                workload: "sequential read 1 MiB (1 x QD4)".into(),
                measured_bytes_per_s: 400e6,
                predicted_bytes_per_s: Some(500e6),
                error: Some(0.25),
                binding: Some("drives".into()),
                explanation: "bound by the drives".into(),
                bound: false,
                unknowns: Vec::new(),
                ..Default::default()
            }]),
        };
        let vary = storlab_configdiff::Vary::default();
        let html = html_report_full(&runs, None, &vary, std::slice::from_ref(&pred));
        let drawn = crate::charts::charts_with(&runs, None, &vary, std::slice::from_ref(&pred));
        assert!(drawn.iter().any(|c| c.id == "predicted"));
        assert!(
            !html.contains("predicted: no run has a design"),
            "listed as not drawn"
        );
        // Without designs it is listed, with the command that tags runs.
        let html = html_report_full(&runs, None, &vary, &[]);
        assert!(
            html.contains("<li>predicted: no run has a design"),
            "not listed"
        );
    }

    #[test]
    fn host_figures_not_recorded_show_as_a_dash() {
        let mut runs = all_runs();
        runs.truncate(1);
        runs[0].report.host.cpu_count = 0;
        runs[0].report.host.mem_total_bytes = 0;
        runs[0].report.host.page_size_bytes = 0;
        let h = hosts_section(&runs);
        assert_eq!(h.matches(">–<").count(), 3, "{h}");
        assert!(!h.contains(">0 B<") && !h.contains(">0<"), "{h}");
    }

    #[test]
    fn report_is_self_contained() {
        let html = html_report(&all_runs(), Some(0));
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</html>"));
        let lower = html.to_lowercase();
        for banned in [
            "<script", "<link", "<iframe", "<img", "@import", "url(", "src=",
        ] {
            assert!(!lower.contains(banned), "found {banned}");
        }
        // The only URLs are SVG namespace declarations.
        let urls = lower.matches("http://").count() + lower.matches("https://").count();
        assert_eq!(
            urls,
            lower
                .matches("xmlns=\"http://www.w3.org/2000/svg\"")
                .count()
        );
        assert_eq!(html.matches("<figure").count(), 10);
        assert_eq!(html.matches("<svg").count(), 10);
    }

    #[test]
    fn report_has_parameters_hosts_and_comparison() {
        let runs = compare_runs();
        let html = html_report(&runs, Some(0));
        assert!(html.contains("AMD EPYC 7313 16-Core Processor"));
        assert!(html.contains("128 GiB"));
        assert!(html.contains("PERC H740P"));
        assert!(html.contains("new SAS enclosure, same 12 disks, R6/12"));
        assert!(html.contains("<td class=\"num better\">+112 % better</td>"));
        assert!(html.contains("<td class=\"num noise\">"));
        assert!(html.contains("Baseline: <strong>#1 enclosure=scsi on stor01</strong> (chosen)"));
        // Default baseline is said to be a default.
        let html = html_report(&runs, None);
        assert!(html.contains("the first run given"));
    }

    #[test]
    fn the_comparison_names_configuration_differences() {
        let mut runs = compare_runs();
        for p in &mut runs[2].report.phases {
            p.params.iodepth = 1;
        }
        let html = html_report(&runs, Some(0));
        assert!(html.contains("<td class=\"num config\">"), "not judged");
        assert!(
            !html.contains("+112 % better"),
            "no verdict across configurations"
        );
        assert!(html.contains("iodepth 1 (base 8)"));
        assert!(html.contains("--vary iodepth"));
        let vary = storlab_configdiff::Vary::parse("iodepth").unwrap();
        let html = html_report_full(&runs, Some(0), &vary, &[]);
        assert!(html.contains("+112 % better"));
        assert!(html.contains("[under study]"));
    }

    #[test]
    fn user_text_is_escaped() {
        let mut runs = compare_runs();
        runs[0].note = Some("<script>alert(1)</script>".into());
        runs[1]
            .tags
            .insert("x\"><b>".into(), "<img src=x onerror=alert(1)>".into());
        runs[2].report.phases[0].params.name = "</svg><script>".into();
        let html = html_report(&runs, Some(0));
        let lower = html.to_lowercase();
        assert!(!lower.contains("<script"), "unescaped script");
        assert!(!lower.contains("<img"), "unescaped img");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn warnings_are_listed() {
        let mut runs = all_runs();
        runs[0].report.interrupted = true;
        runs[0].report.stop_reason = Some("Ctrl-C".into());
        runs[1].report.phases[0].errors.insert("EIO".into(), 3);
        let html = html_report(&runs, None);
        assert!(html.contains("the run was interrupted (Ctrl-C)"));
        assert!(html.contains("3 I/O errors"));
        // The fixture's warm 192 GiB phase could not stay resident.
        assert!(html.contains("stayed resident"));
        assert!(html.contains("NOT verified"));
    }

    #[test]
    fn empty_and_single() {
        let html = html_report(&[], None);
        assert!(html.contains("no runs"));
        let one = &compare_runs()[..1];
        let html = html_report(one, None);
        assert!(html.contains("A comparison needs two or more runs"));
        let html = html_report(one, Some(5));
        assert!(html.contains("not among these runs"));
    }
}
