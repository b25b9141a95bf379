//! `storlab plan search`: the Pareto-optimal designs for a drive model and count.

use super::*;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ThroughputOf {
    SeqRead,
    SeqWrite,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum IopsOf {
    RandRead,
    RandWrite,
}

#[derive(Args, Debug)]
pub(super) struct SearchArgs {
    /// Total drives (not counting hot spares): a count (48) or a range (24..96)
    #[arg(long, value_name = "N|MIN..MAX", required_unless_present = "layout")]
    drives: Option<String>,
    /// Only layouts of this shape; x is filled in from --drives, e.g. R60/12/x or
    /// 'lvm(x*R6/10, stripe=2M)' (fixes level, span, aggregation, chunk, stripe)
    #[arg(long, value_name = "LAYOUT", conflicts_with_all = ["levels", "spans", "chunks"])]
    layout: Option<String>,
    /// RAID levels to try: r0 r1/r10 r5/r50 r6/r60 (a level covers single groups and
    /// groups striped by the controller or LVM)
    #[arg(long, value_delimiter = ',', default_value = "r10,r5,r6")]
    levels: Vec<String>,
    /// Drives per group to try, e.g. 6..16 (default: R1 2-3, R5 3-16, R6 4-24)
    #[arg(long, value_name = "MIN..MAX")]
    spans: Option<String>,
    /// Chunk sizes to try
    #[arg(long, value_delimiter = ',', default_value = "64k,256k,1M")]
    chunks: Vec<String>,
    /// Try 1 to this many controllers (groups spread over them with LVM)
    #[arg(long, default_value_t = 1)]
    max_controllers: u32,
    /// Do not try LVM striping where the controller can stripe itself (R50/R60/R10)
    #[arg(long)]
    no_lvm: bool,
    /// Minimum usable capacity, e.g. 200TB
    #[arg(long, value_name = "SIZE", help_heading = "Constraints")]
    min_usable: Option<String>,
    /// Minimum volume MTTDL, e.g. 10000y
    #[arg(long, value_name = "DURATION", help_heading = "Constraints")]
    min_mttdl: Option<String>,
    /// Maximum probability of data loss over the mission; designs above it are left
    /// out (100% keeps every design)
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "1%",
        help_heading = "Constraints"
    )]
    max_loss: String,
    /// Minimum throughput of the throughput workload, e.g. 2GB/s
    #[arg(long, value_name = "RATE", help_heading = "Constraints")]
    min_throughput: Option<String>,
    /// Minimum IOPS of the IOPS workload
    #[arg(long, help_heading = "Constraints")]
    min_iops: Option<f64>,
    /// Maximum cost (needs prices in the catalog)
    #[arg(long, help_heading = "Constraints")]
    max_cost: Option<f64>,
    /// Throughput objective
    #[arg(
        long,
        value_enum,
        default_value = "seq-write",
        help_heading = "Objectives"
    )]
    throughput_of: ThroughputOf,
    /// IOPS objective
    #[arg(
        long,
        value_enum,
        default_value = "rand-write",
        help_heading = "Objectives"
    )]
    iops_of: IopsOf,
    /// Request size of the throughput objective
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1M",
        help_heading = "Objectives"
    )]
    seq_size: String,
    /// Request size of the IOPS objective
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4k",
        help_heading = "Objectives"
    )]
    random_size: String,
    #[command(flatten)]
    concurrency: ConcurrencyArgs,
    /// Show at most this many Pareto-optimal designs in the table (JSON has all)
    #[arg(long, default_value_t = 25)]
    top: usize,
    #[command(flatten)]
    drive: DriveArgs,
    #[command(flatten)]
    system: SystemArgs,
}

impl SearchArgs {
    /// The search the flags describe, as the plan crate takes it.
    fn choice(&self) -> storlab_plan::spec::SearchChoice {
        storlab_plan::spec::SearchChoice {
            drives: self.drives.clone(),
            layout: self.layout.clone(),
            levels: self.levels.clone(),
            spans: self.spans.clone(),
            chunks: self.chunks.clone(),
            max_controllers: self.max_controllers,
            no_lvm: self.no_lvm,
            min_usable: self.min_usable.clone(),
            min_mttdl: self.min_mttdl.clone(),
            max_loss: self.max_loss.clone(),
            min_throughput: self.min_throughput.clone(),
            min_iops: self.min_iops,
            max_cost: self.max_cost,
            throughput_of_writes: self.throughput_of == ThroughputOf::SeqWrite,
            iops_of_writes: self.iops_of == IopsOf::RandWrite,
            seq_size: self.seq_size.clone(),
            random_size: self.random_size.clone(),
            streams: self.concurrency.streams,
            qd: self.concurrency.qd,
            drive: self.drive.choice(),
            system: self.system.choice(),
        }
    }
}

impl PlanDoc for storlab_plan::workflow::SearchDoc {
    const SORTED: bool = false;
    fn text(&self, st: Style) -> String {
        self.render(st)
    }
    fn rows(&self) -> String {
        self.csv()
    }
}

pub(super) fn search(a: SearchArgs) -> Result<Reply> {
    let cat = load_catalog(&a.drive.catalog)?;
    let doc = storlab_plan::workflow::search(&a.choice(), &cat, a.top)?;
    let none = doc.none_found();
    let mut reply = Reply::doc(Shown(doc), a.system.out.rendering());
    if let Some(why) = none {
        eprintln!("storlab: {why}");
        reply.outcome = crate::Outcome::Failed;
    }
    Ok(reply)
}
