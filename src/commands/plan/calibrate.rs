//! `storlab plan calibrate`: fit a catalog entry to stored runs of one
//! device and write it as a user catalog file.

use super::*;
use crate::commands::common::{DbArgs, RunArgs};
use storlab_plan::workflow::{CalibrateDoc, fit};

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
    out: super::DocOutputArgs,
}

impl PlanDoc for CalibrateDoc {
    fn text(&self, st: Style) -> String {
        self.render(st)
    }
    fn rows(&self) -> String {
        self.csv()
    }
}

pub(super) fn calibrate(a: CalibrateArgs) -> Result<Reply> {
    storlab_plan::calibrate::entry_name(&a.name)?;
    let cat = load_catalog(&a.catalog)?;
    storlab_plan::calibrate::Like::find(&cat, &a.like)?;
    let hold_out = a
        .hold_out
        .iter()
        .map(|s| size("hold-out", s))
        .collect::<Result<Vec<_>>>()?;
    let store = a.db.open_existing()?;
    let runs = a.runs.load(&store)?;
    let fitted = fit(&a.name, &a.like, &hold_out, &runs, &cat)?;
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.toml", fitted.name)));
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
    std::io::Write::write_all(&mut f, fitted.entry.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Reply::doc(
        Shown(fitted.written_to(&path)),
        a.out.rendering(),
    ))
}
