//! `storlab plan calibrate`: fit a catalog entry to stored runs of one
//! device and write it as a user catalog file.

use super::*;
use crate::commands::common::{DbArgs, RunArgs};
use storlab_plan::against::observations;
use storlab_plan::calibrate::Like;

#[derive(Args, Debug)]
pub(super) struct CalibrateArgs {
    #[command(flatten)]
    runs: RunArgs,
    /// Name of the catalog entry to write (use it with --drive NAME)
    #[arg(long = "as", value_name = "NAME")]
    name: String,
    /// A catalog drive: write a drive entry that takes this drive's capacity, MTBF, error
    /// rate, sector size and rebuild rate (performance runs cannot identify them), e.g.
    /// exos-x18-18tb. A catalog controller: write a controller entry with the measured
    /// read, write and IOPS limits and this controller's links and cache, e.g. perc-h800
    #[arg(long, value_name = "MODEL")]
    like: String,
    /// Leave phases of this request size out of the fit and predict them instead
    /// (repeatable), e.g. --hold-out 64k
    #[arg(long, value_name = "SIZE")]
    hold_out: Vec<String>,
    /// Where to write the entry [default: NAME.toml]; an existing file is not replaced
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Extra catalog file(s) for --like
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    out: super::OutputArgs,
}

pub(super) fn calibrate(a: CalibrateArgs) -> Result<Outcome> {
    let name = storlab_plan::calibrate::entry_name(&a.name)?;
    let cat = load_catalog(&a.catalog)?;
    let like = Like::find(&cat, &a.like)?;
    let hold_out = a
        .hold_out
        .iter()
        .map(|s| size("hold-out", s))
        .collect::<Result<Vec<_>>>()?;
    let store = a.db.open_existing()?;
    let runs = a.runs.load(&store)?;
    let mut obs = Vec::new();
    let mut skipped = Vec::new();
    for r in &runs {
        let (o, s) = observations(r);
        obs.extend(o);
        skipped.extend(s);
    }
    let cal = storlab_plan::calibrate::calibrate(name, &obs, &hold_out)?;
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let label = format!(
        "run{} {}",
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    );
    let text = like.entry(&cal, &label);
    // The entry must load as it is written.
    let mut check = cat.clone();
    check
        .extend(name, &text)
        .context("the fitted entry does not load (a bug; please report it)")?;
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{name}.toml")));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot create {} (an existing file is never replaced; remove it or give --output)",
                path.display()
            )
        })?;
    std::io::Write::write_all(&mut f, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    match a.out.format() {
        Format::Json => {
            let doc = serde_json::json!({
                "schema_version": storlab_plan::PLAN_SCHEMA_VERSION,
                "kind": "plan.calibrate",
                "calibration": cal,
                "skipped": skipped,
                "written": path.display().to_string(),
            });
            output::print_json(&doc)?;
        }
        Format::Table => output::print(&storlab_plan::render::render_calibration(
            &cal,
            &skipped,
            &path,
            like.kind(),
            table,
        ))?,
    }
    Ok(Outcome::Ok)
}
