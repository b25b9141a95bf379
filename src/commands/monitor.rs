//! `storlab monitor`: per-device I/O figures over time, iostat-style, with
//! totals that count each request once however the devices are stacked.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use storlab_monitor::prometheus::{self, MetricsServer};
use storlab_monitor::sampler::now_rfc3339;
use storlab_monitor::tree::Term;
use storlab_monitor::{
    DeviceTree, Interval, Layer, LiveSource, Monitor, Selection, SysPaths, TimelineBuilder, replay,
};
use storlab_types::{CpuSample, DeviceSample};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MonitorFormat {
    /// A table, refreshed in place on a terminal
    Table,
    /// One JSON object per interval
    Jsonl,
    /// One row per device (and total) per interval
    Csv,
    /// The whole timeline as one JSON document at the end (what the store keeps)
    Json,
    /// Nothing on stdout (with --listen)
    None,
}

/// Watch block devices: MB/s, IOPS, latency and utilisation per interval,
/// with iostat -x definitions, without double counting stacked devices.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab monitor                          every device a file system sits on, each second
  storlab monitor /data --layer leaf       the physical disks under /data
  storlab monitor --tree                   how the devices are stacked
  storlab monitor vda --count 10 --output-format csv > vda.csv
  storlab monitor --listen 127.0.0.1:9464  serve Prometheus metrics on /metrics")]
pub struct MonitorCommand {
    /// Devices (vda, dm-0, vg0-data, /dev/md0) or paths (the device under their
    /// file system); none = every device
    pub targets: Vec<String>,

    /// Time between samples (e.g. 1s, 500ms, 1m)
    #[arg(long, default_value = "1s")]
    pub interval: String,

    /// Stop after this many intervals (default: until Ctrl-C, or the end of --replay)
    #[arg(long)]
    pub count: Option<u64>,

    /// Which layer of the device stack to show and total
    #[arg(long, value_enum, default_value = "top")]
    pub layer: LayerArg,

    /// Print the device stack (partitions, LVM/dm, md, loop files) and exit
    #[arg(long)]
    pub tree: bool,

    /// Output format [default: table, or none with --listen]
    #[arg(long, value_enum)]
    pub output_format: Option<MonitorFormat>,

    /// Serve the latest figures in the Prometheus text format on http://ADDR/metrics
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Read recorded diskstats snapshots from FILE instead of the kernel
    /// (format: docs/monitor.md)
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,

    /// Read sys/ and proc/ under DIR (a recorded tree) instead of /sys and /proc
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,

    /// Save the samples in the results database as a run of kind `monitor`
    /// (when the monitor stops: --count, end of --replay, or Ctrl-C)
    #[arg(long)]
    pub record: bool,

    #[command(flatten)]
    pub db: crate::commands::common::DbArgs,

    #[command(flatten)]
    pub labels: crate::commands::common::RecordArgs,
}

impl MonitorCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let interval = storlab_types::parse_duration(&self.interval)?;
        if interval < Duration::from_millis(10) {
            bail!(
                "--interval {} is too short; use 10ms or more (the kernel counts time in ms)",
                self.interval
            );
        }
        if self.count == Some(0) {
            bail!(
                "--count 0 would measure nothing; give 1 or more, or leave it out to run until Ctrl-C"
            );
        }
        let layer: Layer = self.layer.into();
        let paths = SysPaths::from_root(self.sys_root.as_deref())?;
        // With a replay file from another machine, the local /sys says
        // nothing about its devices: a tree only comes with --sys-root.
        let tree = if self.replay.is_some() && self.sys_root.is_none() {
            None
        } else {
            Some(DeviceTree::load(&paths).context("reading the device tree")?)
        };
        let format = self.output_format.unwrap_or(if self.listen.is_some() {
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

        let selection = match &tree {
            Some(t) => {
                let names = self
                    .targets
                    .iter()
                    .map(|s| t.resolve(s))
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
                    devices: self.targets.clone(),
                    totals: Vec::new(),
                })
            }
        };
        if let Some(sel) = &selection {
            if sel.devices.is_empty() {
                bail!("no devices to monitor at layer {}", layer.as_str());
            }
        }

        let stop = Arc::new(AtomicBool::new(false));
        // SIGHUP (terminal closed) too: --record keeps what was sampled.
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, stop.clone())
                .context("installing the Ctrl-C handler")?;
        }
        let server = match &self.listen {
            Some(addr) => {
                let s = MetricsServer::start(addr)?;
                eprintln!(
                    "storlab: serving Prometheus metrics on http://{}/metrics",
                    s.local_addr()
                );
                if let Some(w) = s.exposure_warning() {
                    eprintln!("storlab: warning: {w}");
                }
                Some(s)
            }
            None => None,
        };

        // The whole timeline is kept in memory only when it is wanted, so a
        // long-running exporter (--listen) does not grow without bound.
        let keep_timeline = self.record || format == MonitorFormat::Json;
        let tags = self.labels.tag_map()?;
        let store = if self.record {
            Some(self.db.open()?)
        } else {
            None
        };
        let mut out = Output::new(format, layer, selection.as_ref());
        let mut mon = Monitor::new(selection.clone());
        let mut builder: Option<TimelineBuilder> = None;
        let mut done: u64 = 0;
        let mut handle =
            |i: Interval, wall: Option<String>, out: &mut Output| -> anyhow::Result<()> {
                if let Some(s) = &server {
                    s.update(prometheus::render(&i, layer.as_str()));
                }
                if !keep_timeline {
                    return out.interval(&i);
                }
                builder
                    .get_or_insert_with(|| {
                        TimelineBuilder::new(
                            wall.unwrap_or_default(),
                            interval,
                            layer,
                            selection
                                .as_ref()
                                .map(|s| s.devices.clone())
                                .unwrap_or_else(|| {
                                    i.devices.iter().map(|d| d.device.clone()).collect()
                                }),
                        )
                    })
                    .add(&i);
                out.interval(&i)
            };

        match &self.replay {
            Some(file) => {
                let text = replay::read_file(file)
                    .with_context(|| format!("reading the replay file {}", file.display()))?;
                let snaps = replay::parse(&text)
                    .with_context(|| format!("in the replay file {}", file.display()))?;
                if let Some(sel) = &selection {
                    let missing: Vec<&String> = sel
                        .devices
                        .iter()
                        .filter(|d| !snaps.iter().any(|s| s.disks.iter().any(|x| &x.name == *d)))
                        .collect();
                    if !missing.is_empty() && missing.len() == sel.devices.len() {
                        let mut have: Vec<&str> = snaps
                            .first()
                            .map(|s| s.disks.iter().map(|d| d.name.as_str()).collect())
                            .unwrap_or_default();
                        have.truncate(20);
                        bail!(
                            "the replay file {} has no samples of {}; it has: {}",
                            file.display(),
                            missing
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                            have.join(" ")
                        );
                    }
                }
                if snaps.len() < 2 {
                    bail!(
                        "the replay file {} has {} snapshot(s); at least 2 are needed for one interval",
                        file.display(),
                        snaps.len()
                    );
                }
                let mut first_wall = None;
                for s in snaps {
                    if stop.load(Ordering::Relaxed) || self.count.is_some_and(|c| done >= c) {
                        break;
                    }
                    let wall = s.wall.clone();
                    first_wall.get_or_insert(wall);
                    if let Some(i) = mon
                        .push(s)
                        .with_context(|| format!("in the replay file {}", file.display()))?
                    {
                        handle(i, first_wall.clone().flatten(), &mut out)?;
                        done += 1;
                    }
                }
                // With --count the run ends at the count, served or not.
                if server.is_some() && self.count.is_none() && !stop.load(Ordering::Relaxed) {
                    eprintln!(
                        "storlab: replay finished; still serving the last interval (Ctrl-C to stop)"
                    );
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
            None => {
                let mut source = LiveSource::new(paths.clone());
                let first = source.snapshot()?;
                let wall = first.wall.clone();
                mon.push(first)?;
                let start = Instant::now();
                let mut k: u32 = 1;
                loop {
                    let deadline = start + interval * k;
                    while !stop.load(Ordering::Relaxed) {
                        let now = Instant::now();
                        if now >= deadline {
                            break;
                        }
                        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Some(i) = mon.push(source.snapshot()?)? {
                        handle(i, wall.clone(), &mut out)?;
                        done += 1;
                    }
                    if self.count.is_some_and(|c| done >= c) {
                        break;
                    }
                    k += 1;
                }
            }
        }
        // Everything sampled, as the record the store keeps (`--record`
        // hands this to the store).
        let timeline = builder.map(|b| b.finish()).unwrap_or_else(|| {
            TimelineBuilder::new(now_rfc3339(), interval, layer, Vec::new()).finish()
        });
        if format == MonitorFormat::Json {
            crate::output::print(&(serde_json::to_string_pretty(&timeline)? + "\n"))?;
        }
        if let Some(store) = store {
            let host = storlab_bench::host_info();
            let what = if self.targets.is_empty() {
                "all devices".to_string()
            } else {
                self.targets.join(" ")
            };
            let report = storlab_types::BenchReport {
                schema_version: storlab_types::SCHEMA_VERSION,
                tool: storlab_types::ToolInfo {
                    name: "storlab".into(),
                    version: storlab_types::STORLAB_VERSION.into(),
                },
                command_line: std::env::args().collect(),
                started_at: timeline.started_at.clone(),
                finished_at: now_rfc3339(),
                interrupted: false,
                stop_reason: None,
                host,
                target: storlab_types::TargetInfo {
                    path: what,
                    kind: "devices".into(),
                    files: timeline.devices.clone(),
                    ..Default::default()
                },
                phases: Vec::new(),
                warnings: Vec::new(),
                monitor: Some(timeline),
            };
            let id = store.save_run("monitor", &report, &tags, self.labels.note())?;
            eprintln!(
                "storlab: saved as run {id} in {} (storlab show {id})",
                self.db.db.display()
            );
        }
        // Ctrl-C is how a monitor is normally stopped: not an error.
        Ok(crate::Outcome::Ok)
    }
}

/// Writes each interval in the chosen format.
struct Output {
    format: MonitorFormat,
    layer: Layer,
    tty: bool,
    header_done: bool,
    /// Total rows' explanation (which devices, what is taken out).
    totals_note: String,
}

const CSV_FIELDS: &str = "t_s,interval_s,kind,device,r_per_s,w_per_s,r_mb_per_s,w_mb_per_s,rrqm_per_s,wrqm_per_s,\
r_await_ms,w_await_ms,r_areq_sz_kib,w_areq_sz_kib,areq_sz_kib,aqu_sz,util_pct,d_per_s,d_mb_per_s,drqm_per_s,d_await_ms,\
d_areq_sz_kib,f_per_s,f_await_ms,cpu_user_pct,cpu_nice_pct,cpu_system_pct,cpu_iowait_pct,cpu_steal_pct,cpu_idle_pct";

fn describe_terms(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| {
            if t.minus.is_empty() {
                t.device.clone()
            } else {
                format!("({} - {})", t.device, t.minus.join(" - "))
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

impl Output {
    fn new(format: MonitorFormat, layer: Layer, sel: Option<&Selection>) -> Self {
        let totals_note = sel
            .map(|s| {
                s.totals
                    .iter()
                    .map(|g| format!("{} = {}", g.name, describe_terms(&g.terms)))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Output {
            format,
            layer,
            tty: std::io::stdout().is_terminal(),
            header_done: false,
            totals_note,
        }
    }

    fn interval(&mut self, i: &Interval) -> anyhow::Result<()> {
        match self.format {
            MonitorFormat::None | MonitorFormat::Json => Ok(()),
            MonitorFormat::Jsonl => {
                let v = serde_json::json!({
                    "t_ns": i.t_ns,
                    "interval_ns": i.interval_ns,
                    "layer": self.layer.as_str(),
                    "devices": i.devices,
                    "totals": i.totals,
                    "cpu": i.cpu,
                });
                crate::output::print(&(serde_json::to_string(&v)? + "\n"))
            }
            MonitorFormat::Csv => {
                let mut s = String::new();
                if !self.header_done {
                    s.push_str(CSV_FIELDS);
                    s.push('\n');
                    self.header_done = true;
                }
                for (kind, d) in i
                    .devices
                    .iter()
                    .map(|d| ("device", d))
                    .chain(i.totals.iter().map(|d| ("total", d)))
                {
                    s.push_str(&csv_row(i, kind, d));
                }
                crate::output::print(&s)
            }
            MonitorFormat::Table => {
                let mut s = String::new();
                if self.tty {
                    // Home and clear: the table is redrawn in place.
                    s.push_str("\x1b[H\x1b[2J");
                }
                s.push_str(&table(i, self.layer));
                // How the totals were formed: every refresh on a terminal,
                // once otherwise.
                if (self.tty || !self.header_done) && !self.totals_note.is_empty() {
                    s.push_str(&self.totals_note);
                    s.push('\n');
                }
                self.header_done = true;
                if !self.tty {
                    s.push('\n');
                }
                crate::output::print(&s)
            }
        }
    }
}

fn csv_row(i: &Interval, kind: &str, d: &DeviceSample) -> String {
    let c = i.cpu.clone().unwrap_or_default();
    let mb = |x: f64| x / 1e6;
    let kib = |x: f64| x / 1024.0;
    let cpu = |x: f64| {
        if i.cpu.is_some() {
            format!("{x:.2}")
        } else {
            String::new()
        }
    };
    let dev = if d.device.contains([',', '"']) {
        format!("\"{}\"", d.device.replace('"', "\"\""))
    } else {
        d.device.clone()
    };
    format!(
        "{:.3},{:.3},{kind},{dev},{:.2},{:.2},{:.3},{:.3},{:.2},{:.2},{:.3},{:.3},{:.2},{:.2},{:.2},{:.3},{:.2},{:.2},{:.3},{:.2},{:.3},{:.2},{:.2},{:.3},{},{},{},{},{},{}\n",
        i.t_ns as f64 / 1e9,
        i.interval_ns as f64 / 1e9,
        d.r_per_s,
        d.w_per_s,
        mb(d.r_bytes_per_s),
        mb(d.w_bytes_per_s),
        d.rrqm_per_s,
        d.wrqm_per_s,
        d.r_await_ms,
        d.w_await_ms,
        kib(d.r_areq_sz_bytes),
        kib(d.w_areq_sz_bytes),
        kib(d.areq_sz_bytes),
        d.aqu_sz,
        d.util_pct,
        d.d_per_s,
        mb(d.d_bytes_per_s),
        d.drqm_per_s,
        d.d_await_ms,
        kib(d.d_areq_sz_bytes),
        d.f_per_s,
        d.f_await_ms,
        cpu(c.user_pct),
        cpu(c.nice_pct),
        cpu(c.system_pct),
        cpu(c.iowait_pct),
        cpu(c.steal_pct),
        cpu(c.idle_pct),
    )
}

fn table(i: &Interval, layer: Layer) -> String {
    let mut s = format!(
        "storlab monitor  layer {}  t={:.1}s  interval {:.2}s  (MB = 10^6 bytes, areq-sz in KiB)\n",
        layer.as_str(),
        i.t_ns as f64 / 1e9,
        i.interval_ns as f64 / 1e9
    );
    if let Some(c) = &i.cpu {
        s.push_str(&cpu_line(c));
    }
    s.push_str(&format!(
        "{:<16} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
        "Device",
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "rrqm/s",
        "wrqm/s",
        "r_await",
        "w_await",
        "areq-sz",
        "aqu-sz",
        "%util",
        "d/s",
        "f/s"
    ));
    let row = |name: &str, d: &DeviceSample| {
        format!(
            "{:<16} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7.2} {:>6.1} {:>8.2} {:>8.2}\n",
            name,
            d.r_per_s,
            d.w_per_s,
            d.r_bytes_per_s / 1e6,
            d.w_bytes_per_s / 1e6,
            d.rrqm_per_s,
            d.wrqm_per_s,
            d.r_await_ms,
            d.w_await_ms,
            d.areq_sz_bytes / 1024.0,
            d.aqu_sz,
            d.util_pct,
            d.d_per_s,
            d.f_per_s
        )
    };
    for d in &i.devices {
        s.push_str(&row(&d.device, d));
    }
    for d in &i.totals {
        s.push_str(&row(&format!("= {}", d.device), d));
    }
    s
}

fn cpu_line(c: &CpuSample) -> String {
    format!(
        "cpu  %user {:.1}  %nice {:.1}  %system {:.1}  %iowait {:.1}  %steal {:.1}  %idle {:.1}\n",
        c.user_pct, c.nice_pct, c.system_pct, c.iowait_pct, c.steal_pct, c.idle_pct
    )
}
