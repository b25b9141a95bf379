//! `storlab monitor`: per-device I/O figures over time, iostat-style, with
//! totals that count each request once however the devices are stacked.

mod output;

pub use output::MonitorFormat;

use crate::output::{Rendered, Rendering, Reply, Shown};
use anyhow::Context;
use clap::Args;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use storlab_monitor::display::Units;
use storlab_monitor::prometheus::MetricsServer;
use storlab_monitor::sampler::now_rfc3339;
use storlab_monitor::session::{self, Frontend, Notice, Session, Setup};
use storlab_monitor::{DeviceTree, Layer, SysPaths, positional};
use storlab_types::RunKind;

/// Watch block devices: MB/s, IOPS, latency and utilisation per interval,
/// with iostat -x definitions, without double counting stacked devices.
#[derive(Args, Debug)]
#[command(override_usage = "storlab monitor [OPTIONS] [DEVICE|PATH]... [INTERVAL [COUNT]]")]
#[command(after_help = "Examples:
  storlab monitor                          every device a file system sits on, each second
  storlab monitor 1 3                      as iostat: every second, three times
  storlab monitor sda nvme0n1 2 -z -t      two disks every 2 s, idle ones hidden, with the time
  storlab monitor /data --layer leaf       the physical disks under /data
  storlab monitor --tree                   how the devices are stacked
  storlab monitor vda --count 10 --output-format csv > vda.csv
  storlab monitor --listen 127.0.0.1:9464  serve Prometheus metrics on /metrics
  storlab monitor --record r.txt 1 60       60 s written to r.txt as taken (--replay r.txt reads it)

An interval whose counters went backwards (a wrap, a re-created device) or moved more than a
device can (over 100 GB/s or 100 M requests/s) shows `reset` or `impossible` instead of figures.")]
#[command(mut_arg("json", |a| a.help(
    "Shorthand for --output-format json (the whole timeline as one document at the end)"
)))]
pub struct MonitorCommand {
    /// Devices (vda, dm-0, vg0-data, /dev/md0) or paths (the device under their
    /// file system), none = every device; then, as in iostat, the interval in
    /// seconds and the count (`storlab monitor sda 1 3`)
    #[arg(value_name = "DEVICE|PATH|INTERVAL|COUNT")]
    pub targets: Vec<OsString>,

    /// Time between samples (e.g. 1s, 500ms, 1m) [default: 1s]
    #[arg(long)]
    pub interval: Option<String>,

    /// Stop after this many intervals (default: until Ctrl-C, or the end of --replay)
    #[arg(long)]
    pub count: Option<u64>,

    /// Leave out devices that completed no I/O in the interval (iostat -z) from
    /// the table, CSV and JSON lines; totals, --record and --listen keep them
    #[arg(short = 'z', long = "hide-idle")]
    pub hide_idle: bool,

    /// Print the wall-clock time (RFC 3339, UTC) above each table (iostat -t);
    /// CSV and JSONL always carry it
    #[arg(short = 't', long = "timestamps")]
    pub timestamps: bool,

    /// Unit of the MB/s and request-size columns of the table and CSV
    #[arg(long, value_enum, default_value = "iec")]
    pub units: Units,

    /// Scroll (print each table below the last) instead of redrawing in place;
    /// the default when stdout is not a terminal
    #[arg(long)]
    pub no_clear: bool,

    /// Which layer of the device stack to show and total
    #[arg(long, value_enum, default_value = "top")]
    pub layer: Layer,

    /// Print the device stack (partitions, LVM/dm, md, loop files) and exit
    #[arg(long)]
    pub tree: bool,

    #[command(flatten)]
    pub out: crate::commands::outfmt::OutputArgs<MonitorFormat>,

    /// Serve the latest figures in the Prometheus text format on http://ADDR/metrics
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Read recorded diskstats snapshots from FILE instead of the kernel: each snapshot is a line
    /// `@ SECONDS` followed by /proc/diskstats verbatim (optionally /proc/stat's cpu line); record
    /// one with --record FILE, or without storlab: while :; do echo "@ $(date +%s.%N)"; cat
    /// /proc/diskstats; head -1 /proc/stat; sleep 1; done > samples.txt. A damaged line is refused
    /// as FILE:LINE
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,

    /// Read sys/ and proc/ under DIR (a recorded tree) instead of /sys and /proc
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,

    /// With FILE: write every snapshot to FILE as it is taken (the --replay
    /// format; a new or empty file), so FILE is complete whatever happens to
    /// standard output or the process. Alone: save the samples in the
    /// results database as a run of kind `monitor` when the monitor stops
    /// (--count, end of --replay, or a signal). Either way a closed or full
    /// standard output ends the display, not the recording. Write FILE right
    /// after --record (`--record samples.txt sda 1 5`), or the devices first
    /// (`sda 1 5 --record`) to save in the database
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub record: Option<Option<PathBuf>>,

    #[command(flatten)]
    pub db: crate::commands::common::DbArgs,

    #[command(flatten)]
    pub labels: crate::commands::common::RecordArgs,
}

impl MonitorCommand {
    pub fn execute(mut self) -> anyhow::Result<Reply> {
        let layer = self.layer;
        let paths = SysPaths::from_root(self.sys_root.as_deref())?;
        let replaying = self.replay.is_some();
        let tree = session::device_tree(&paths, replaying, self.sys_root.is_some())
            .context("reading the device tree")?;
        let (words, interval_flag) = (&self.targets, self.interval.as_deref());
        let (targets, interval, count) =
            positional::devices_and_pace(words, tree.as_ref(), interval_flag, self.count)?;
        (self.targets, self.count) = (targets, count);
        let format = self.out.chosen().unwrap_or(if self.listen.is_some() {
            MonitorFormat::None
        } else {
            MonitorFormat::Table
        });

        if self.tree {
            let tree = tree.context(
                "--tree needs a device tree: drop --replay, or add --sys-root DIR with the recorded sys/ and proc/",
            )?;
            let how = match format {
                MonitorFormat::Json | MonitorFormat::Jsonl => Rendering::Json,
                _ => Rendering::Human,
            };
            return Ok(Reply::doc(Shown::new(tree, DeviceTree::render), how));
        }

        if tree.is_none() {
            eprintln!(
                "storlab: note: no device tree for replayed samples (add --sys-root DIR with the recorded sys/ and proc/); \
                 showing every device as it is, without totals"
            );
        }
        let selection = session::selection(tree.as_ref(), &self.targets, layer)?;

        let server = self.start_server()?;

        // The whole timeline is kept in memory only when it is wanted, so a
        // long-running exporter (--listen) does not grow without bound.
        let to_db = matches!(self.record, Some(None));
        let keep_timeline = to_db || format == MonitorFormat::Json;
        let tags = self.labels.tag_map()?;
        let store = if to_db { Some(self.db.open()?) } else { None };
        // What is replayed, or the first live snapshot, is read before the
        // record file is created: a bad replay file leaves nothing behind.
        let mut note = |n: String| eprintln!("storlab: note: {n}");
        let source = session::open_source(
            self.replay.as_deref(),
            &paths,
            selection.as_ref(),
            &mut note,
        )?;
        // The handlers come after the source is read: a replay from a FIFO
        // waits for its writer in open(2), and until then Ctrl-C or SIGTERM
        // must end the process as usual (nothing is made yet); with the
        // handlers in place they only set a flag and the wait went on for
        // ever. SIGHUP (terminal closed) too: --record keeps what was sampled.
        let signals = crate::commands::signals::Signals::install()?;
        let setup = Setup {
            formatter: output::formatter(&self, format, layer, selection.as_ref()),
            server,
            keep_timeline,
            to_db,
            record: self.record.clone().flatten(),
            interval,
            layer,
            count: self.count,
            replaying,
        };
        let (mut session, pace) = Session::start(setup, selection, tree.as_ref())?;
        session.run(source, pace, &|| signals.requested(), &mut Terminal)?;
        // Everything sampled, as the record the store keeps (`--record`
        // hands this to the store), saved before the JSON document is
        // printed: a failing standard output loses nothing.
        let done = session.finish(now_rfc3339())?;
        if let Some(store) = store {
            let targets = self.targets_text();
            let host = storlab_host::host_info();
            let report =
                session::monitor_record(done.timeline.clone(), &targets, host, now_rfc3339());
            let id = store.save_run(RunKind::Monitor, &report, &tags, self.labels.note())?;
            eprintln!(
                "storlab: saved as run {id} in {} (storlab show {id})",
                self.db.db.display()
            );
        }
        done.display_result()?;
        // Ctrl-C is how a monitor is normally stopped: not an error.
        Ok(if format == MonitorFormat::Json && done.display_ok() {
            let json = crate::output::json_text(&done.timeline)?;
            Reply::doc(Rendered::same(json), Rendering::Json)
        } else {
            Reply::done(crate::Outcome::Ok)
        })
    }

    /// `--listen`: the Prometheus server, started.
    fn start_server(&self) -> anyhow::Result<Option<MetricsServer>> {
        Ok(match &self.listen {
            Some(addr) => {
                let s = MetricsServer::start(addr)?;
                eprintln!(
                    "storlab: serving Prometheus metrics on http://{}/metrics",
                    s.local_addr()
                );
                if let Some(w) = s.exposure_warning() {
                    crate::output::warn(&w.to_string());
                }
                Some(s)
            }
            None => None,
        })
    }

    /// The device words as text (a name that is not UTF-8 shown lossily).
    fn targets_text(&self) -> Vec<String> {
        (self.targets.iter())
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    }
}

/// Standard output and standard error, for the session.
struct Terminal;

impl Frontend for Terminal {
    fn show(&mut self, text: &str) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    }

    fn notice(&mut self, notice: Notice<'_>) {
        // Not eprintln!: stderr may be broken too, and that must not end
        // the recording either.
        let _ = writeln!(std::io::stderr(), "storlab: {notice}");
    }
}
