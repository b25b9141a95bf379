//! `storlab plan layout`: one design, its tables or JSON.

use super::*;

#[derive(Args, Debug)]
pub(super) struct LayoutArgs {
    /// Layout: R<level>/<span>[/<drives>][,chunk=SIZE][,stripe=SIZE] or lvm(<groups>*R<level>/<span>, stripe=SIZE),
    /// e.g. R60/12/48, R6/12, R10/2/8, lvm(4*R5/6, stripe=1M)
    #[arg(value_name = "LAYOUT")]
    layout: String,
    /// Chunk (strip) size inside a group, overriding the layout's
    #[arg(long, value_name = "SIZE")]
    chunk: Option<String>,
    /// Stripe size across groups (R50/R60 or LVM), overriding the layout's
    #[arg(long, value_name = "SIZE")]
    stripe: Option<String>,
    /// Controllers the groups are spread over (needs an lvm(...) layout)
    #[arg(long, default_value_t = 1)]
    controllers: u32,
    /// File system stripe unit to check for alignment (XFS su), with --fs-sw
    #[arg(long, value_name = "SIZE", requires = "fs_sw")]
    fs_su: Option<String>,
    /// File system stripe width in units (XFS sw)
    #[arg(long, requires = "fs_su")]
    fs_sw: Option<u32>,
    #[command(flatten)]
    workloads: storlab_plan::spec::WorkloadChoice,
    /// Stored runs on this hardware (an id, latest, tag:K=V): each phase's measured
    /// throughput beside the model's prediction for that workload
    #[arg(long, value_name = "RUN", value_parser = storlab_store::RunSelector::parse)]
    against: Vec<storlab_store::RunSelector>,
    #[command(flatten)]
    db: crate::commands::common::DbArgs,
    /// Compute cores the storage must feed (required = cores x --mbps-per-core)
    #[arg(long, help_heading = "Sizing")]
    cores: Option<u32>,
    /// MB/s each core needs: 75 is a published planning figure for analytics;
    /// 25 to 135 is the range seen across workloads (25, 50, 135)
    #[arg(long, value_name = "MB/S", default_value_t = DEFAULT_MB_PER_S_PER_CORE, help_heading = "Sizing")]
    mbps_per_core: f64,
    /// Exit 1 when the design is short of what --cores needs (without it the
    /// verdict is shown and the exit status is 0)
    #[arg(long, requires = "cores", help_heading = "Sizing")]
    check: bool,
    #[command(flatten)]
    drive: DriveChoice,
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it, and
    /// [override.drive."NAME"] tables change single fields of one
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[command(flatten)]
    system: SystemChoice,
    #[command(flatten)]
    out: DocOutputArgs,
}

impl LayoutArgs {
    /// The design the arguments describe, as the plan crate takes it.
    fn spec(&self) -> storlab_plan::DesignSpec {
        storlab_plan::DesignSpec {
            layout: self.layout.clone(),
            chunk: self.chunk.clone(),
            stripe: self.stripe.clone(),
            controllers: Some(self.controllers),
            drive: self.drive.clone(),
            system: self.system.clone(),
            workloads: self.workloads.clone(),
            fs_su: self.fs_su.clone(),
            fs_sw: self.fs_sw,
            cores: self.cores,
            mbps_per_core: Some(self.mbps_per_core),
            catalogs: self.catalog.clone(),
        }
    }
}

pub(super) fn layout(a: LayoutArgs) -> Result<Reply> {
    let spec = a.spec();
    let runs = if a.against.is_empty() {
        None
    } else {
        let store = a.db.open_existing()?;
        Some(store.select(&a.against, false)?)
    };
    let doc = storlab_plan::workflow::layout(&spec, read_catalog, runs.as_deref())?;
    let failed = a.check && doc.short();
    let mut reply = Reply::doc(Shown(doc), a.out.rendering());
    if failed {
        reply.outcome = crate::Outcome::Failed;
    }
    Ok(reply)
}
