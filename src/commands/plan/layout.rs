//! `storlab plan layout`: one design, its tables or JSON.

use super::*;

/// What `storlab plan layout --help` says about the performance model.
pub(super) const MODEL_HELP: &str = "\
The performance model: for each workload, what one request costs every part, and what
each part could deliver alone; the smallest is the prediction, the part that binds.
  drives        seek + half a revolution (random) or the zone-average media rate
                (streaming), plus a per-command overhead (0.1 ms on disks unless the
                catalog or a calibration says otherwise): bigger chunks stream faster
  RAID work     full-stripe writes cost (D+P)/D; partial stripes read-modify-write or
                reconstruct-write, whichever is cheaper; 'full-stripe (cache)' = a
                write-back cache gathers a sequential stream into full stripes
  controller    throughput, IOPS, read path and write path (parity engine, cache,
                cache mirroring) where the catalog gives them; RAID 6 computes P and Q
  links         per direction (full duplex; a parallel SCSI bus is shared), after
                protocol efficiency (iSCSI reads about 0.88 of the line rate, writes less)
  concurrency   Little's law: at most (--streams x --qd) / latency of one request
  buffered      --mix-buffered: reads reach the device as 128 KiB read-ahead windows,
                writes as 512 KiB write-back requests, two streams on every spindle
Compare with your own runs: --against RUN. Fit a device to them: storlab plan calibrate.";

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
    /// Request size of the sequential workloads
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1M",
        help_heading = "Workloads"
    )]
    seq_size: String,
    /// Request size of the random workloads
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4k",
        help_heading = "Workloads"
    )]
    random_size: String,
    /// Read share of the mixed workload
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "70",
        help_heading = "Workloads"
    )]
    mix_read: String,
    /// Request size of the mixed workload
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "64k",
        help_heading = "Workloads"
    )]
    mix_size: String,
    /// The mixed workload is sequential (e.g. SAS analytics: 8k, 50/50), not random
    #[arg(long, help_heading = "Workloads")]
    mix_sequential: bool,
    /// The mixed workload goes through the page cache: sequential reads reach the
    /// device as 128 KiB read-ahead windows, writes as 512 KiB write-back requests
    #[arg(long, help_heading = "Workloads")]
    mix_buffered: bool,
    #[command(flatten)]
    concurrency: ConcurrencyArgs,
    /// Stored runs on this hardware (an id, latest, tag:K=V): each phase's measured
    /// throughput beside the model's prediction for that workload
    #[arg(long, value_name = "RUN", value_parser = crate::commands::common::parse_run_arg)]
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
    drive: DriveArgs,
    #[command(flatten)]
    system: SystemArgs,
}

impl LayoutArgs {
    /// The design the arguments describe, as the plan crate takes it.
    fn spec(&self) -> storlab_plan::DesignSpec {
        storlab_plan::DesignSpec {
            layout: self.layout.clone(),
            chunk: self.chunk.clone(),
            stripe: self.stripe.clone(),
            controllers: Some(self.controllers),
            drive: self.drive.choice(),
            system: self.system.choice(),
            workloads: storlab_plan::spec::WorkloadChoice {
                seq_size: Some(self.seq_size.clone()),
                random_size: Some(self.random_size.clone()),
                mix_read: Some(self.mix_read.clone()),
                mix_size: Some(self.mix_size.clone()),
                mix_sequential: self.mix_sequential,
                mix_buffered: self.mix_buffered,
                streams: Some(self.concurrency.streams),
                qd: Some(self.concurrency.qd),
            },
            fs_su: self.fs_su.clone(),
            fs_sw: self.fs_sw,
            cores: self.cores,
            mbps_per_core: Some(self.mbps_per_core),
            catalogs: self.drive.catalog.clone(),
        }
    }
}

impl PlanDoc for storlab_plan::workflow::LayoutDoc {
    fn text(&self, st: Style) -> String {
        self.render(st)
    }
    fn rows(&self) -> String {
        self.csv()
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
    let mut reply = Reply::doc(Shown(doc), a.system.out.rendering());
    if failed {
        reply.outcome = crate::Outcome::Failed;
    }
    Ok(reply)
}
