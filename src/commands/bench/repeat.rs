//! `storlab bench --repeat N`: the whole job N times, as IOR's `-i`. Each
//! repeat is a run of its own (saved as it finishes, tagged
//! `repeat_group=ID` and carrying [`RepeatInfo`]), so `compare`'s noise
//! rule sees them as replicates; at the end the mean, standard deviation,
//! min and max of each phase's figures are printed (or, with
//! `--output-format json`, one document holding every run and the summary;
//! `--json-out FILE` receives that same document).

use super::{OutputFormat, PlannedJob, RunArgs, RunDoc, run_once};
use crate::Outcome;
use crate::commands::outfile::BENCH_REPEAT_DOCUMENT;
use crate::output::{Rendering, Reply};
use anyhow::Result;
pub use storlab_bench::repeat::group_id;
use storlab_bench::repeat::{SeriesDoc, summarize};
use storlab_print::repeat::{render, render_ior};
use storlab_types::{BenchReport, RepeatInfo};

/// The end of an MPI `--repeat` series on rank 0: what [`series`] makes,
/// in the format asked for.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn print_ior_summary(
    args: &RunArgs,
    group: &str,
    count: u32,
    runs: &[BenchReport],
) -> Result<()> {
    let doc = series(group, count, runs)?;
    match args.out.format() {
        OutputFormat::Table => crate::output::print(&doc.text),
        OutputFormat::Json | OutputFormat::FioJson => crate::output::print(&doc.json),
    }
}

/// A series' summary table (and IOR's), and its one JSON document with
/// every run and the summary.
fn series(group: &str, count: u32, runs: &[BenchReport]) -> Result<RunDoc> {
    let summary = summarize(runs);
    let doc = SeriesDoc::new(BENCH_REPEAT_DOCUMENT, group, count, &summary, runs);
    let table = format!("{}{}", render(group, count, &summary), render_ior(&summary));
    Ok(RunDoc::new(
        table,
        serde_json::to_string_pretty(&doc)? + "\n",
    ))
}

/// Run the planned job `count` times; stops at the first repeat that fails
/// or is interrupted and returns its outcome with the summary document.
pub fn run(
    planned: PlannedJob,
    args: &RunArgs,
    count: u32,
    extra: &dyn Fn(&BenchReport) -> Option<String>,
) -> Result<Reply> {
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
        let (o, report, doc) = run_once(planned.clone(), &each, Some(&info), extra, &signals)?;
        if print_each {
            // Each repeat's table as it finishes; the summary is the result.
            crate::output::emit(Reply::doc(doc, Rendering::Human))?;
        }
        runs.push(report);
        if o != Outcome::Ok {
            outcome = o;
            break;
        }
    }
    let doc = series(&group, count, &runs)?;
    if let Some(permit) = &json_out
        && let Err(e) = permit.write(doc.json.as_bytes())
    {
        crate::output::print_error(&e.into());
        if outcome == Outcome::Ok {
            outcome = Outcome::Error;
        }
    }
    let mut reply = Reply::doc(doc, args.out.rendering());
    reply.outcome = outcome;
    Ok(reply)
}
