//! `storlab bench --repeat N`: the whole job N times, as IOR's `-i`. Each
//! repeat is a run of its own (saved as it finishes, tagged
//! `repeat_group=ID` and carrying [`RepeatInfo`]), so `compare`'s noise
//! rule sees them as replicates; at the end the mean, standard deviation,
//! min and max of each phase's figures are printed (or, with
//! `--output-format json`, one document holding every run and the summary;
//! `--json-out FILE` receives that same document).

use super::{OutputFormat, PlannedJob, RunArgs, run_once};
use crate::Outcome;
use anyhow::Result;
use comfy_table::{Cell, CellAlignment};
use serde::Serialize;
pub use storlab_bench::repeat::group_id;
use storlab_bench::repeat::{PhaseSpread, Spread, summarize};
use storlab_types::{BenchReport, RepeatInfo};

/// The summary table; each column's header names its unit.
pub fn render(group: &str, count: u32, s: &[PhaseSpread]) -> String {
    let mut t = crate::commands::common::result_table();
    t.set_header(vec![
        "phase", "figure", "n", "mean", "stddev", "stddev %", "min", "max",
    ]);
    for p in s {
        let rows: [(&str, Option<Spread>, f64); 4] = [
            ("MB/s (10^6 B/s)", p.bw_bytes_per_s, 1e6),
            ("IOPS (ops/s)", p.iops, 1.0),
            ("lat p50 (µs)", p.lat_p50_ns, 1e3),
            ("lat p99 (µs)", p.lat_p99_ns, 1e3),
        ];
        for (k, (what, sp, div)) in rows.into_iter().enumerate() {
            let Some(sp) = sp else { continue };
            let num =
                |v: f64| Cell::new(format!("{:.1}", v / div)).set_alignment(CellAlignment::Right);
            let cv = if sp.mean > 0.0 {
                format!("{:.1}", sp.stddev / sp.mean * 100.0)
            } else {
                "-".into()
            };
            t.add_row(vec![
                Cell::new(if k == 0 { p.phase.as_str() } else { "" }),
                Cell::new(what),
                Cell::new(sp.n).set_alignment(CellAlignment::Right),
                num(sp.mean),
                num(sp.stddev),
                Cell::new(cv).set_alignment(CellAlignment::Right),
                num(sp.min),
                num(sp.max),
            ]);
        }
    }
    format!(
        "{count} repeats (repeat_group={group}); stddev is the sample standard deviation (n − 1); \
         interrupted phases are left out.\n{t}\n\
         Each repeat is saved as its own run tagged repeat_group={group}: `storlab compare` uses their spread as the noise.\n"
    )
}

/// IOR's summary of the repeats (`-i N`): per operation (phase) the max,
/// min, mean and standard deviation of the bandwidth in MiB/s (2^20 B/s,
/// IOR's unit) and MB/s (10^6 B/s), and of the operations per second.
pub fn render_ior(s: &[PhaseSpread]) -> String {
    let mut t = crate::commands::common::result_table();
    t.set_header(vec![
        "Operation",
        "Max(MiB/s)",
        "Min(MiB/s)",
        "Mean(MiB/s)",
        "StdDev(MiB/s)",
        "Max(MB/s)",
        "Min(MB/s)",
        "Mean(MB/s)",
        "StdDev(MB/s)",
        "Mean(OPs/s)",
        "StdDev(OPs/s)",
        "reps",
    ]);
    let num = |v: f64| Cell::new(format!("{v:.2}")).set_alignment(CellAlignment::Right);
    for p in s {
        let (Some(bw), Some(ops)) = (p.bw_bytes_per_s, p.iops) else {
            continue;
        };
        let mut row = vec![Cell::new(&p.phase)];
        for div in [1_048_576.0, 1e6] {
            row.extend([bw.max, bw.min, bw.mean, bw.stddev].map(|v| num(v / div)));
        }
        row.extend([num(ops.mean), num(ops.stddev)]);
        row.push(Cell::new(bw.n).set_alignment(CellAlignment::Right));
        t.add_row(row);
    }
    format!(
        "Summary of all repetitions (as IOR's; StdDev is the sample standard deviation, n − 1):\n{t}\n"
    )
}

/// The end of an MPI `--repeat` series on rank 0: the summary table and
/// IOR's, or one JSON document with every run and the summary.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn print_ior_summary(
    args: &RunArgs,
    group: &str,
    count: u32,
    runs: &[BenchReport],
) -> Result<()> {
    let summary = summarize(runs);
    match args.out.format() {
        OutputFormat::Table => crate::output::print(&format!(
            "{}{}",
            render(group, count, &summary),
            render_ior(&summary)
        )),
        OutputFormat::Json => crate::output::print_json(&serde_json::json!({
            "tool": {"name": "storlab", "version": storlab_types::STORLAB_VERSION},
            "document": crate::commands::outfile::BENCH_REPEAT_DOCUMENT,
            "schema_version": storlab_types::SCHEMA_VERSION,
            "repeat_group": group,
            "count": count,
            "summary": summary,
            "runs": runs,
        })),
    }
}

/// Run the planned job `count` times; stops at the first repeat that fails
/// or is interrupted and returns its outcome.
pub fn run(
    planned: PlannedJob,
    args: &RunArgs,
    count: u32,
    extra: &dyn Fn(&BenchReport) -> Option<String>,
) -> Result<Outcome> {
    // The output rules for --json-out, checked once before anything runs;
    // each repeat then leaves it alone: the one document of every repeat
    // is written once, at the end.
    let json_out = super::check_paths(planned.target.as_deref(), args)?;
    let each = RunArgs {
        json_out: None,
        ..args.clone()
    };
    let group = group_id();
    let mut runs = Vec::new();
    let mut outcome = Outcome::Ok;
    let print_each = args.out.format() == OutputFormat::Table;
    // One set of handlers for every repeat: a Ctrl-C between two repeats
    // stops the series instead of being forgotten by the next repeat's.
    let signals = super::Signals::install()?;
    for index in 1..=count {
        if let Some(sig) = signals.received() {
            eprintln!("storlab: stopped before repeat {index} of {count} by signal {sig}");
            outcome = Outcome::Interrupted;
            break;
        }
        let info = RepeatInfo {
            group: group.clone(),
            index,
            count,
        };
        if print_each {
            crate::output::print(&format!("Repeat {index} of {count}\n"))?;
        }
        let (o, report) = run_once(
            planned.clone(),
            &each,
            Some(&info),
            print_each,
            extra,
            &signals,
        )?;
        runs.extend(report);
        if o != Outcome::Ok {
            outcome = o;
            break;
        }
    }
    let summary = summarize(&runs);
    #[derive(Serialize)]
    struct Doc<'a> {
        tool: storlab_types::ToolInfo,
        document: &'a str,
        schema_version: u32,
        repeat_group: &'a str,
        count: u32,
        summary: &'a [PhaseSpread],
        runs: &'a [BenchReport],
    }
    let doc = Doc {
        // What wrote it: how --json-out knows the file is its own next time.
        tool: storlab_types::ToolInfo::storlab(),
        document: crate::commands::outfile::BENCH_REPEAT_DOCUMENT,
        schema_version: storlab_types::SCHEMA_VERSION,
        repeat_group: &group,
        count,
        summary: &summary,
        runs: &runs,
    };
    let json = serde_json::to_string_pretty(&doc)? + "\n";
    if let Some(permit) = &json_out {
        if let Err(e) = permit.write(json.as_bytes()) {
            crate::output::print_error(&e);
            if outcome == Outcome::Ok {
                outcome = Outcome::Error;
            }
        }
    }
    match args.out.format() {
        OutputFormat::Table => crate::output::print(&format!(
            "{}{}",
            render(&group, count, &summary),
            render_ior(&summary)
        ))?,
        OutputFormat::Json => crate::output::print(&json)?,
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IOR's summary: MiB/s and MB/s of the same rates, and ops/s.
    #[test]
    fn ior_summary_gives_mib_and_mb_and_ops() {
        let sp = |v: &[f64]| Spread::of(v);
        let s = [PhaseSpread {
            phase: "write".into(),
            bw_bytes_per_s: sp(&[1_048_576.0 * 100.0, 1_048_576.0 * 200.0]),
            iops: sp(&[100.0, 200.0]),
            lat_p50_ns: None,
            lat_p99_ns: None,
        }];
        let t = render_ior(&s);
        // Max 200 MiB/s = 209.72 MB/s; mean 150 MiB/s; ops 150.
        for want in [
            "write", "200.00", "100.00", "150.00", "209.72", "157.29", "70.71",
        ] {
            assert!(t.contains(want), "{want}: {t}");
        }
    }
}
