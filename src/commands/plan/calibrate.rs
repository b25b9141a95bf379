//! `storlab plan calibrate`: fit a catalog entry to stored runs of one
//! device and write it as a user catalog file.

use super::*;
use crate::commands::common::{DbArgs, RunArgs};
use storlab_plan::workflow::CalibrateChoice;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab plan calibrate 12 13 --as my-disk --like exos-x18-18tb --hold-out 256k
  storlab plan calibrate --all --as my-ssd --like dc-s3700-800gb --hold-out alternate --repeats best
  storlab sim scenario.toml --catalog my-ssd.toml      (raid = \"R0/1\", drive = \"my-ssd\")")]
pub(super) struct CalibrateArgs {
    #[command(flatten)]
    runs: RunArgs,
    #[command(flatten)]
    choice: CalibrateChoice,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    out: super::DocOutputArgs,
}

pub(super) fn calibrate(a: CalibrateArgs) -> Result<Reply> {
    storlab_plan::calibrate::entry_name(&a.choice.name)?;
    let cat = load_catalog(&a.choice.catalogs)?;
    let plan = a.choice.prepare(&cat)?;
    let store = a.db.open_existing()?;
    let fitted = plan.fit(&a.runs.load(&store)?, &cat)?;
    let path = a.choice.output_path(&plan);
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
