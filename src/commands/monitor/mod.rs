//! `storlab monitor`: per-device I/O figures over time, iostat-style, with
//! totals that count each request once however the devices are stacked.

mod output;
mod session;

pub use output::{MonitorFormat, Units};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use output::Style;
use session::{RecordFile, Session};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use storlab_monitor::prometheus::MetricsServer;
use storlab_monitor::routes::Routes;
use storlab_monitor::sampler::now_rfc3339;
use storlab_monitor::{
    DeviceTree, Layer, LiveSource, Monitor, Selection, Snapshot, SysPaths, positional, replay,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayerArg {
    /// What file systems sit on (default): partitions, LVM volumes, md arrays, loop devices
    Top,
    /// Physical devices (what nothing else is under)
    Leaf,
    /// Every device, with a total per level of the stack
    All,
}

impl From<LayerArg> for Layer {
    fn from(l: LayerArg) -> Layer {
        match l {
            LayerArg::Top => Layer::Top,
            LayerArg::Leaf => Layer::Leaf,
            LayerArg::All => Layer::All,
        }
    }
}

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
    pub layer: LayerArg,

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
    pub fn execute(mut self) -> anyhow::Result<crate::Outcome> {
        let layer: Layer = self.layer.into();
        let paths = SysPaths::from_root(self.sys_root.as_deref())?;
        // With a replay file from another machine, the local /sys says
        // nothing about its devices: a tree only comes with --sys-root.
        let tree = if self.replay.is_some() && self.sys_root.is_none() {
            None
        } else {
            Some(DeviceTree::load(&paths).context("reading the device tree")?)
        };
        let interval = self.interval_and_count(tree.as_ref())?;
        let format = self.out.chosen().unwrap_or(if self.listen.is_some() {
            MonitorFormat::None
        } else {
            MonitorFormat::Table
        });

        if self.tree {
            let tree = tree.context(
                "--tree needs a device tree: drop --replay, or add --sys-root DIR with the recorded sys/ and proc/",
            )?;
            let text = match format {
                MonitorFormat::Json | MonitorFormat::Jsonl => {
                    serde_json::to_string_pretty(&tree)? + "\n"
                }
                _ => tree.render(),
            };
            crate::output::print(&text)?;
            return Ok(crate::Outcome::Ok);
        }

        let selection = self.select(tree.as_ref(), layer)?;

        let server = self.start_server()?;

        // The whole timeline is kept in memory only when it is wanted, so a
        // long-running exporter (--listen) does not grow without bound.
        let to_db = matches!(self.record, Some(None));
        let keep_timeline = to_db || format == MonitorFormat::Json;
        let tags = self.labels.tag_map()?;
        let store = if to_db { Some(self.db.open()?) } else { None };
        // What is replayed, or the first live snapshot, is read before the
        // record file is created: a bad replay file leaves nothing behind.
        let source = match &self.replay {
            Some(file) => Source::Replay(file.clone(), load_replay(file, selection.as_ref())?),
            None => {
                let mut live = LiveSource::new(paths.clone());
                let first = live.snapshot()?;
                Source::Live(live, first)
            }
        };
        // The handlers come after the source is read: a replay from a FIFO
        // waits for its writer in open(2), and until then Ctrl-C or SIGTERM
        // must end the process as usual (nothing is made yet); with the
        // handlers in place they only set a flag and the wait went on for
        // ever. SIGHUP (terminal closed) too: --record keeps what was sampled.
        let stop = Arc::new(AtomicBool::new(false));
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, stop.clone())
                .context("installing the Ctrl-C handler")?;
        }
        let mut record = match &self.record {
            Some(Some(path)) => {
                self.check_record_path(path, tree.as_ref())?;
                Some(RecordFile::create(path)?)
            }
            _ => None,
        };
        let style = Style {
            format,
            units: self.units,
            hide_idle: self.hide_idle,
            timestamps: self.timestamps,
            no_clear: self.no_clear,
        };
        let serving = server.is_some();
        let routes = Routes::new(
            output::formatter(style, layer, selection.as_ref()),
            server,
            keep_timeline,
            (interval, layer),
            selection.as_ref().map(|s| s.devices.clone()),
        );
        let mut session = Session::new(
            routes,
            self.consumers(record.as_ref(), serving),
            match self.count {
                Some(c) => format!("{c} intervals are done (--count) or a signal"),
                None if self.replay.is_some() => "the end of the replay or a signal".to_string(),
                None => "Ctrl-C or a signal".to_string(),
            },
        );
        let mut mon = Monitor::new(selection.clone());

        match source {
            Source::Replay(file, snaps) => {
                self.run_replay(&file, snaps, &stop, &mut record, &mut session, &mut mon)?
            }
            Source::Live(source, first) => {
                let loop_ = (&mut session, &mut mon, &mut record);
                self.run_live(source, first, interval, &stop, loop_)?
            }
        }
        let record_path = record.as_ref().map(|r| r.path().to_path_buf());
        if let Some(r) = record {
            r.close()?;
        }
        // Everything sampled, as the record the store keeps (`--record`
        // hands this to the store), saved before the JSON document is
        // printed: a failing standard output loses nothing.
        let timeline = session.timeline(now_rfc3339());
        let json = (format == MonitorFormat::Json).then(|| timeline.clone());
        if let Some(store) = store {
            self.save_run(&store, timeline, &tags)?;
        }
        if let Some(doc) = json {
            session.print_json(&doc);
        }
        session.display_result(record_path.as_deref())?;
        // Ctrl-C is how a monitor is normally stopped: not an error.
        Ok(crate::Outcome::Ok)
    }

    /// The devices and totals shown: those named (at `layer`), or every
    /// device as it is when there is no tree (a replay from elsewhere).
    fn select(&self, tree: Option<&DeviceTree>, layer: Layer) -> anyhow::Result<Option<Selection>> {
        let selection = match tree {
            Some(t) => {
                let names = self
                    .targets
                    .iter()
                    .map(|s| t.resolve_path(Path::new(s)))
                    .collect::<Result<Vec<_>, _>>()?;
                Some(t.select(&names, layer))
            }
            None => {
                eprintln!(
                    "storlab: note: no device tree for replayed samples (add --sys-root DIR with the recorded sys/ and proc/); \
                     showing every device as it is, without totals"
                );
                (!self.targets.is_empty()).then(|| Selection {
                    layer,
                    devices: self.targets_text(),
                    totals: Vec::new(),
                })
            }
        };
        if let Some(sel) = &selection {
            if sel.devices.is_empty() {
                bail!("no devices to monitor at layer {}", layer.as_str());
            }
        }
        Ok(selection)
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

    /// Hand each replayed snapshot to the record file and the session;
    /// with `--listen`, serve the last interval until stopped.
    fn run_replay(
        &self,
        file: &Path,
        snaps: Vec<Snapshot>,
        stop: &AtomicBool,
        record: &mut Option<RecordFile>,
        session: &mut Session,
        mon: &mut Monitor,
    ) -> anyhow::Result<()> {
        let mut first_wall = None;
        for s in snaps {
            if stop.load(Ordering::Relaxed) || self.count.is_some_and(|c| session.done() >= c) {
                break;
            }
            let wall = s.wall.clone();
            first_wall.get_or_insert(wall);
            if let Some(r) = record.as_mut() {
                r.append(&s)?;
            }
            if let Some(i) = mon
                .push(s)
                .with_context(|| format!("in the replay file {}", file.display()))?
                && !session.interval(&i, first_wall.clone().flatten())
            {
                break;
            }
        }
        // With --count the run ends at the count, served or not.
        if session.serving() && self.count.is_none() && !stop.load(Ordering::Relaxed) {
            eprintln!("storlab: replay finished; still serving the last interval (Ctrl-C to stop)");
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// Sample the kernel every `interval` until the count, a stop, or the
    /// display gone with nobody else taking the samples.
    fn run_live(
        &self,
        mut source: LiveSource,
        first: Snapshot,
        interval: Duration,
        stop: &AtomicBool,
        (session, mon, record): (&mut Session, &mut Monitor, &mut Option<RecordFile>),
    ) -> anyhow::Result<()> {
        let wall = first.wall.clone();
        if let Some(r) = record.as_mut() {
            r.append(&first)?;
        }
        mon.push(first)?;
        let count = self.count;
        storlab_monitor::sampler::sampling_loop(
            &mut source,
            mon,
            interval,
            false,
            |deadline| {
                while !stop.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
                }
                stop.load(Ordering::Relaxed)
            },
            // Recorded as taken, before anything is shown.
            |snap| match record.as_mut() {
                Some(r) => r.append(snap),
                None => Ok(()),
            },
            |i| {
                let go_on = session.interval(&i, wall.clone());
                Ok::<bool, anyhow::Error>(go_on && count.is_none_or(|c| session.done() < c))
            },
        )?;
        Ok(())
    }

    /// `--record` (no file): the timeline saved as a run of kind `monitor`.
    fn save_run(
        &self,
        store: &storlab_store::Store,
        timeline: storlab_types::MonitorTimeline,
        tags: &std::collections::BTreeMap<String, String>,
    ) -> anyhow::Result<()> {
        let host = storlab_host::host_info();
        let what = if self.targets.is_empty() {
            "all devices".to_string()
        } else {
            self.targets_text().join(" ")
        };
        let target = storlab_types::TargetInfo {
            path: what,
            kind: "devices".into(),
            files: timeline.devices.clone(),
            ..Default::default()
        };
        let report = storlab_types::BenchReport {
            started_at: timeline.started_at.clone(),
            finished_at: now_rfc3339(),
            monitor: Some(timeline),
            ..storlab_types::BenchReport::new(host, target)
        };
        let id = store.save_run("monitor", &report, tags, self.labels.note())?;
        eprintln!(
            "storlab: saved as run {id} in {} (storlab show {id})",
            self.db.db.display()
        );
        Ok(())
    }

    /// Refuse a `--record` value that is surely a device or the interval
    /// taken for the file name (`--record sda 1 5` meant the database).
    fn check_record_path(&self, path: &Path, tree: Option<&DeviceTree>) -> anyhow::Result<()> {
        if path.exists() {
            return Ok(());
        }
        let word = path.to_string_lossy();
        let what = if tree.is_some_and(|t| t.device_by_dev_name(&word).is_some()) {
            "a device"
        } else if storlab_types::parse_duration(&word).is_ok() {
            "a number (an interval or a count)"
        } else {
            return Ok(());
        };
        bail!(
            "--record {word}: '{word}' is {what}, not a file name; --record FILE writes the samples to FILE \
             (storlab monitor --record samples.txt {word} ...), and --record after the devices and numbers \
             saves them in the results database (storlab monitor {word} ... --record)"
        )
    }

    /// Who takes the samples besides the display, as the message names them.
    fn consumers(&self, record: Option<&RecordFile>, serving: bool) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(r) = record {
            v.push(format!("--record {}", r.path().display()));
        }
        if matches!(self.record, Some(None)) {
            v.push("--record (the results database)".to_string());
        }
        if serving {
            v.push("--listen".to_string());
        }
        v
    }

    /// The device words as text (a name that is not UTF-8 shown lossily).
    fn targets_text(&self) -> Vec<String> {
        (self.targets.iter())
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    }

    /// Read iostat's trailing `INTERVAL [COUNT]` out of the positional words
    /// (a word that names a device stays a device, and so does an existing
    /// path that is not a number), check them against `--interval`/`--count`,
    /// and return the interval.
    fn interval_and_count(&mut self, tree: Option<&DeviceTree>) -> anyhow::Result<Duration> {
        let is_device = |w: &str| {
            tree.is_some_and(|t| t.device_by_dev_name(w).is_some())
                || (storlab_types::parse_duration(w).is_err() && Path::new(w).exists())
        };
        let (targets, p) =
            positional::split_os(&self.targets, is_device).map_err(anyhow::Error::msg)?;
        self.targets = targets;
        let (interval, count) = positional::settle(&p, self.interval.as_deref(), self.count)
            .map_err(anyhow::Error::msg)?;
        self.count = count;
        Ok(interval)
    }
}

/// Where the snapshots come from.
enum Source {
    /// A replay file and its snapshots.
    Replay(PathBuf, Vec<Snapshot>),
    /// The kernel, and the first snapshot already taken.
    Live(LiveSource, Snapshot),
}

/// Read and check a replay file (`storlab_monitor::replay::load`), with a
/// note when its last snapshot was cut off.
fn load_replay(file: &Path, selection: Option<&Selection>) -> anyhow::Result<Vec<Snapshot>> {
    Ok(replay::load(file, selection, &mut |line| {
        eprintln!(
            "storlab: note: {}:{line}: the last snapshot is incomplete (the recording was cut off \
             while writing it); it is left out",
            file.display()
        )
    })?)
}
