//! A `storlab monitor` session: where each snapshot and interval goes (the
//! record file, written as each snapshot is taken; the display, which may
//! go away without ending the recording; the Prometheus server and the
//! timeline, through [`Routes`]), and the loops that take the snapshots
//! from a replay file or the kernel until the count, a stop, or the
//! display gone with nobody else taking the samples.
//!
//! The front end writes (standard output, the notices on standard error)
//! through a [`Frontend`]; nothing here prints.

use crate::routes::Routes;
use crate::{DeviceTree, Error, Interval, LiveSource, Monitor, Snapshot, replay};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storlab_types::{BenchReport, HostInfo, MonitorTimeline, TargetInfo};

/// Why the record file (`--record FILE`) could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Something is at the path already: storlab never writes over it.
    #[error(
        "--record {}: the file exists{}; --record writes only a new (or empty) file, \
         so nothing is written over: choose another name or remove it",
        path.display(),
        if *regular { "" } else { " and is not a regular file" }
    )]
    Exists { path: PathBuf, regular: bool },
    #[error("cannot read {}: {err}", path.display())]
    Stat { path: PathBuf, err: std::io::Error },
    #[error("cannot open the record file {}: {err}", path.display())]
    Open { path: PathBuf, err: std::io::Error },
    #[error(
        "cannot create the record file {}: {err}; check that its directory exists and is writable",
        path.display()
    )]
    Create { path: PathBuf, err: std::io::Error },
    /// Not even the header could be written: nothing was recorded.
    #[error(
        "cannot write the record file {}: {err}; nothing was recorded (a full or \
         read-only file system?)",
        path.display()
    )]
    Header { path: PathBuf, err: std::io::Error },
    #[error(
        "cannot write the record file {}; the samples before this one are in it: {err}",
        path.display()
    )]
    Write { path: PathBuf, err: std::io::Error },
    #[error("cannot sync the record file {}: {err}", path.display())]
    Sync { path: PathBuf, err: std::io::Error },
    /// `--record sda 1 5`: the word taken for the file name is a device or
    /// a number (`what`), so the user surely meant the database.
    #[error(
        "--record {word}: '{word}' is {what}, not a file name; --record FILE writes the samples to FILE \
         (storlab monitor --record samples.txt {word} ...), and --record after the devices and numbers \
         saves them in the results database (storlab monitor {word} ... --record)"
    )]
    NotAFileName { word: String, what: &'static str },
}

/// `--record FILE`: the snapshots in the replay format, appended and handed
/// to the kernel as each is taken, so the file is a valid replay file (for
/// `--replay FILE`) after any snapshot, whatever happens to the process or
/// to its standard output afterwards.
#[derive(Debug)]
pub struct RecordFile {
    path: PathBuf,
    file: std::fs::File,
}

impl RecordFile {
    /// Refuse a `--record` value that is surely a device or the interval
    /// taken for the file name (`--record sda 1 5` meant the database).
    pub fn check_name(path: &Path, tree: Option<&DeviceTree>) -> Result<(), RecordError> {
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
        Err(RecordError::NotAFileName {
            word: word.into_owned(),
            what,
        })
    }

    /// Create the record file: a new file, or an empty regular file (made
    /// by `mktemp`, say). Anything else is refused: storlab never writes
    /// over a file it did not create.
    pub fn create(path: &Path) -> Result<RecordFile, RecordError> {
        let fresh = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path);
        let fresh_made = fresh.is_ok();
        let p = || path.to_path_buf();
        let file = match fresh {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let md =
                    std::fs::metadata(path).map_err(|err| RecordError::Stat { path: p(), err })?;
                if !md.is_file() || md.len() > 0 {
                    return Err(RecordError::Exists {
                        path: p(),
                        regular: md.is_file(),
                    });
                }
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(|err| RecordError::Open { path: p(), err })?
            }
            Err(err) => return Err(RecordError::Create { path: p(), err }),
        };
        let mut r = RecordFile { path: p(), file };
        let header = "# storlab monitor --record: /proc/diskstats snapshots, one after another \
             (docs/monitor.md); read back with: storlab monitor --replay FILE\n";
        if let Err(err) = r.file.write_all(header.as_bytes()) {
            // Nothing was recorded: the (new or empty) file is left empty
            // of storlab's bytes, and removed if storlab made it, so no
            // empty record is taken for one.
            if fresh_made {
                let _ = std::fs::remove_file(path);
            }
            return Err(RecordError::Header { path: p(), err });
        }
        Ok(r)
    }

    /// Append one snapshot: one write of the whole snapshot, unbuffered,
    /// so it is in the file (the page cache) before the next is taken.
    pub fn append(&mut self, s: &Snapshot) -> Result<(), RecordError> {
        (self.file.write_all(replay::format(s).as_bytes())).map_err(|err| RecordError::Write {
            path: self.path.clone(),
            err,
        })
    }

    /// Make the file durable (at the end: one fsync, not one per sample).
    pub fn close(self) -> Result<(), RecordError> {
        (self.file.sync_all()).map_err(|err| RecordError::Sync {
            path: self.path.clone(),
            err,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What the session tells the user, worded by the front end.
#[derive(Debug)]
pub enum Notice<'a> {
    /// Standard output failed (`err`) while others (`consumers`: "--record
    /// FILE", "--listen") still take the samples, until `ends`.
    DisplayLost {
        err: &'a std::io::Error,
        consumers: &'a [String],
        ends: &'a str,
    },
    /// The replay is over; `--listen` serves its last interval until stopped.
    ServingAfterReplay,
}

impl std::fmt::Display for Notice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::DisplayLost {
                err,
                consumers,
                ends,
            } => {
                if err.kind() == std::io::ErrorKind::BrokenPipe {
                    write!(f, "standard output was closed")?;
                } else {
                    write!(f, "cannot write to standard output ({err})")?;
                }
                write!(
                    f,
                    ": nothing more is shown; sampling goes on for {} until {ends}",
                    consumers.join(" and ")
                )
            }
            Notice::ServingAfterReplay => {
                write!(
                    f,
                    "replay finished; still serving the last interval (Ctrl-C to stop)"
                )
            }
        }
    }
}

/// Who takes the samples besides the display, as [`Notice::DisplayLost`]
/// names them: the record file, the results database (`--record` alone),
/// the Prometheus server.
pub fn consumers(record: Option<&RecordFile>, to_db: bool, serving: bool) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(r) = record {
        v.push(format!("--record {}", r.path().display()));
    }
    if to_db {
        v.push("--record (the results database)".to_string());
    }
    if serving {
        v.push("--listen".to_string());
    }
    v
}

/// How the monitor ends, in words: after `count` intervals, at the end of
/// a replay, or at a signal.
pub fn ends(count: Option<u64>, replaying: bool) -> String {
    match count {
        Some(c) => format!("{c} intervals are done (--count) or a signal"),
        None if replaying => "the end of the replay or a signal".to_string(),
        None => "Ctrl-C or a signal".to_string(),
    }
}

/// The device tree the session shows, or none for replayed samples
/// without `--sys-root`: the local /sys says nothing about another
/// machine's devices.
pub fn device_tree(
    paths: &crate::SysPaths,
    replaying: bool,
    sys_root: bool,
) -> Result<Option<DeviceTree>, Error> {
    if replaying && !sys_root {
        return Ok(None);
    }
    DeviceTree::load(paths).map(Some)
}

/// Where the snapshots come from: the replay file read and checked (a last
/// snapshot cut off is left out, with a `note`), or the kernel with its
/// first snapshot taken.
pub fn open_source(
    replay: Option<&Path>,
    paths: &crate::SysPaths,
    selection: Option<&crate::Selection>,
    note: &mut dyn FnMut(String),
) -> Result<Source, Error> {
    Ok(match replay {
        Some(file) => {
            let mut cut = |line| {
                note(format!(
                    "{}:{line}: the last snapshot is incomplete (the recording was cut off \
                     while writing it); it is left out",
                    file.display()
                ))
            };
            Source::Replay(file.to_path_buf(), replay::load(file, selection, &mut cut)?)
        }
        None => {
            let mut live = LiveSource::new(paths.clone());
            let first = live.snapshot()?;
            Source::Live(live, first)
        }
    })
}

/// What the front end gives the session: standard output and standard error.
pub trait Frontend {
    /// Write the display's text (standard output).
    fn show(&mut self, text: &str) -> std::io::Result<()>;
    /// Tell the user something (standard error).
    fn notice(&mut self, notice: Notice<'_>);
}

/// Where the snapshots come from.
#[derive(Debug)]
pub enum Source {
    /// A replay file and its snapshots.
    Replay(PathBuf, Vec<Snapshot>),
    /// The kernel, and the first snapshot already taken.
    Live(LiveSource, Snapshot),
}

/// When the session stops besides a stop request: after `count` intervals
/// (`None`: at the end of a replay, or never live); `interval` apart live.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub interval: Duration,
    pub count: Option<u64>,
}

/// Everything a monitor does with its snapshots and intervals.
#[derive(Debug)]
pub struct Session {
    shown: Shown,
    monitor: Monitor,
    record: Option<RecordFile>,
}

/// The routes of each interval and the display.
#[derive(Debug)]
struct Shown {
    routes: Routes,
    /// Why standard output failed; from then on nothing more is shown.
    display_failed: Option<std::io::Error>,
    /// Who else takes the samples (`--record FILE`, `--record`, `--listen`),
    /// named for the notice when the display goes away; empty = nobody, so
    /// a closed standard output ends the monitor.
    consumers: Vec<String>,
    /// How the monitor ends, for that notice.
    ends: String,
}

impl Shown {
    /// Hand one interval to the routes and the display. Returns whether
    /// to go on: `false` once standard output failed and nothing else
    /// takes the samples.
    fn interval(
        &mut self,
        i: &Interval,
        first_wall: Option<String>,
        ui: &mut dyn Frontend,
    ) -> bool {
        let display = self.display_failed.is_none();
        let shown = match self.routes.interval(i, first_wall, display) {
            Ok(text) if text.is_empty() => Ok(()),
            Ok(text) => ui.show(&text),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        };
        if let Err(err) = shown {
            if !self.consumers.is_empty() {
                ui.notice(Notice::DisplayLost {
                    err: &err,
                    consumers: &self.consumers,
                    ends: &self.ends,
                });
            }
            self.display_failed = Some(err);
        }
        self.display_failed.is_none() || !self.consumers.is_empty()
    }
}

/// A session at its end.
#[derive(Debug)]
pub struct Finished {
    /// Every interval, as the record the store keeps (empty when none was kept).
    pub timeline: MonitorTimeline,
    /// Why standard output failed, if it did.
    display_failed: Option<std::io::Error>,
    record: Option<PathBuf>,
    consumers: Vec<String>,
}

/// What a session is made of, as the flags give it.
#[derive(Debug)]
pub struct Setup {
    /// How each interval is shown (table, CSV, JSON lines, nothing).
    pub formatter: crate::display::Formatter,
    /// `--listen`'s server, started.
    pub server: Option<crate::prometheus::MetricsServer>,
    /// Keep every interval for the record at the end (`--record` to the
    /// database, or the JSON document).
    pub keep_timeline: bool,
    /// `--record` alone: the samples go to the results database.
    pub to_db: bool,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    pub interval: Duration,
    pub layer: crate::Layer,
    /// `--count`, and whether the samples are replayed (how it ends).
    pub count: Option<u64>,
    pub replaying: bool,
}

impl Session {
    /// A session of `setup` over `selection`: the record file checked
    /// (`tree`: a device's name is no file name) and created, the routes,
    /// and who else takes the samples when the display goes away.
    pub fn start(
        setup: Setup,
        selection: Option<crate::Selection>,
        tree: Option<&DeviceTree>,
    ) -> Result<(Session, Pace), Error> {
        let record = match &setup.record {
            Some(path) => {
                RecordFile::check_name(path, tree)?;
                Some(RecordFile::create(path)?)
            }
            None => None,
        };
        let serving = setup.server.is_some();
        let consumers = consumers(record.as_ref(), setup.to_db, serving);
        let routes = Routes::new(
            setup.formatter,
            setup.server,
            setup.keep_timeline,
            (setup.interval, setup.layer),
            selection.as_ref().map(|s| s.devices.clone()),
        );
        let ends = ends(setup.count, setup.replaying);
        let monitor = Monitor::new(selection);
        let session = Session::new(routes, monitor, record, consumers, ends);
        let pace = Pace {
            interval: setup.interval,
            count: setup.count,
        };
        Ok((session, pace))
    }

    pub fn new(
        routes: Routes,
        monitor: Monitor,
        record: Option<RecordFile>,
        consumers: Vec<String>,
        ends: String,
    ) -> Session {
        Session {
            shown: Shown {
                routes,
                display_failed: None,
                consumers,
                ends,
            },
            monitor,
            record,
        }
    }

    /// Take every snapshot of `source` until the count, a stop request, or
    /// the display gone with nobody else taking the samples.
    pub fn run(
        &mut self,
        source: Source,
        pace: Pace,
        stop: &dyn Fn() -> bool,
        ui: &mut dyn Frontend,
    ) -> Result<(), Error> {
        match source {
            Source::Replay(file, snaps) => self.run_replay(&file, snaps, pace, stop, ui),
            Source::Live(live, first) => self.run_live(live, first, pace, stop, ui),
        }
    }

    /// Hand each replayed snapshot to the record file and the routes; with
    /// `--listen`, serve the last interval until stopped.
    fn run_replay(
        &mut self,
        file: &Path,
        snaps: Vec<Snapshot>,
        pace: Pace,
        stop: &dyn Fn() -> bool,
        ui: &mut dyn Frontend,
    ) -> Result<(), Error> {
        let mut first_wall = None;
        for s in snaps {
            if stop() || pace.count.is_some_and(|c| self.shown.routes.done >= c) {
                break;
            }
            let wall = s.wall.clone();
            first_wall.get_or_insert(wall);
            if let Some(r) = self.record.as_mut() {
                r.append(&s)?;
            }
            let pushed = self.monitor.push(s).map_err(|e| Error::Replay {
                file: file.to_path_buf(),
                what: crate::ReplayError::Data(Box::new(e)),
            })?;
            if let Some(i) = pushed
                && !self.shown.interval(&i, first_wall.clone().flatten(), ui)
            {
                break;
            }
        }
        // With --count the run ends at the count, served or not.
        if self.shown.routes.serving() && pace.count.is_none() && !stop() {
            ui.notice(Notice::ServingAfterReplay);
            while !stop() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// Sample the kernel every `pace.interval`.
    fn run_live(
        &mut self,
        mut source: LiveSource,
        first: Snapshot,
        pace: Pace,
        stop: &dyn Fn() -> bool,
        ui: &mut dyn Frontend,
    ) -> Result<(), Error> {
        let wall = first.wall.clone();
        let (shown, monitor, record) = (&mut self.shown, &mut self.monitor, &mut self.record);
        if let Some(r) = record.as_mut() {
            r.append(&first)?;
        }
        monitor.push(first)?;
        crate::sampler::sampling_loop(
            &mut source,
            monitor,
            pace.interval,
            false,
            |deadline| {
                while !stop() {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
                }
                stop()
            },
            // Recorded as taken, before anything is shown.
            |snap| match record.as_mut() {
                Some(r) => r.append(snap).map_err(Error::from),
                None => Ok(()),
            },
            |i| {
                let go_on = shown.interval(&i, wall.clone(), ui);
                Ok::<bool, Error>(go_on && pace.count.is_none_or(|c| shown.routes.done < c))
            },
        )
    }

    /// The end: the record file made durable, the timeline of every
    /// interval (started at `started_at` when none was kept).
    pub fn finish(mut self, started_at: String) -> Result<Finished, Error> {
        let record = self.record.as_ref().map(|r| r.path().to_path_buf());
        if let Some(r) = self.record.take() {
            r.close()?;
        }
        Ok(Finished {
            timeline: self.shown.routes.timeline(started_at),
            display_failed: self.shown.display_failed,
            record,
            consumers: self.shown.consumers,
        })
    }
}

impl Finished {
    /// The display's failure as the command's error, after everything
    /// else was kept. A closed pipe is not an error (`storlab monitor ...
    /// | head`).
    pub fn display_result(&self) -> Result<(), Error> {
        match &self.display_failed {
            Some(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                let kept = match &self.record {
                    Some(p) => format!("; every sample is in the record file {}", p.display()),
                    None if !self.consumers.is_empty() => {
                        format!("; every sample went to {}", self.consumers.join(" and "))
                    }
                    None => String::new(),
                };
                Err(Error::Display {
                    err: std::io::Error::new(io.kind(), io.to_string()),
                    kept,
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether standard output still takes the result.
    pub fn display_ok(&self) -> bool {
        self.display_failed.is_none()
    }
}

/// The record the store keeps for `monitor --record` (no file): a run of
/// kind `monitor` on `targets` (none: every device), `timeline` in it.
pub fn monitor_record(
    timeline: MonitorTimeline,
    targets: &[String],
    host: HostInfo,
    finished_at: String,
) -> BenchReport {
    let what = if targets.is_empty() {
        "all devices".to_string()
    } else {
        targets.join(" ")
    };
    let target = TargetInfo {
        path: what,
        kind: "devices".into(),
        files: timeline.devices.clone(),
        ..Default::default()
    };
    BenchReport {
        started_at: timeline.started_at.clone(),
        finished_at,
        monitor: Some(timeline),
        ..BenchReport::new(host, target)
    }
}

/// The devices and totals shown: those named in `targets` (devices or
/// paths), at `layer`, with totals that count each request once; with no
/// tree (a replay from elsewhere), the devices as named and no totals
/// (`None`: every device as it comes).
pub fn selection(
    tree: Option<&DeviceTree>,
    targets: &[std::ffi::OsString],
    layer: crate::Layer,
) -> Result<Option<crate::Selection>, Error> {
    let selection = match tree {
        Some(t) => {
            let names = (targets.iter())
                .map(|s| t.resolve_path(Path::new(s)))
                .collect::<Result<Vec<_>, _>>()?;
            Some(t.select(&names, layer))
        }
        None => (!targets.is_empty()).then(|| crate::Selection {
            layer,
            devices: targets
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect(),
            totals: Vec::new(),
        }),
    };
    match selection {
        Some(sel) if sel.devices.is_empty() => Err(Error::NoDevices(layer)),
        s => Ok(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{Formatter, Kind, Units};
    use crate::{Layer, SysPaths};

    /// A standard output that fails (a closed pipe) after `ok` writes.
    #[derive(Default)]
    struct Pipe {
        ok: usize,
        shown: usize,
        lost: Vec<String>,
    }

    impl Frontend for Pipe {
        fn show(&mut self, _: &str) -> std::io::Result<()> {
            if self.shown == self.ok {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.shown += 1;
            Ok(())
        }
        fn notice(&mut self, n: Notice<'_>) {
            if let Notice::DisplayLost { consumers, .. } = n {
                self.lost.push(consumers.join(" and "));
            }
        }
    }

    /// The recorded loop stack's 5 intervals, with `consumers` taking the
    /// samples besides a display that closes after its first interval.
    fn replay(consumers: Vec<String>) -> (Finished, Pipe) {
        let root =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/monitor/loopstack");
        let tree = DeviceTree::load(&SysPaths::recorded(&root)).unwrap();
        let sel = tree.select(&[], Layer::Top);
        let snaps =
            replay::parse(&std::fs::read_to_string(root.join("replay.txt")).unwrap()).unwrap();
        let fmt = Formatter::new(
            Kind::Csv,
            Units::Iec,
            (false, false),
            Layer::Top,
            Some(&sel),
        );
        let interval = (Duration::from_millis(500), Layer::Top);
        let routes = Routes::new(fmt, None, true, interval, Some(sel.devices.clone()));
        let monitor = Monitor::new(Some(sel));
        let mut s = Session::new(routes, monitor, None, consumers, "the end".into());
        let pace = Pace {
            interval: interval.0,
            count: None,
        };
        let mut pipe = Pipe {
            ok: 1,
            ..Pipe::default()
        };
        let source = Source::Replay(root.join("replay.txt"), snaps);
        s.run(source, pace, &|| false, &mut pipe).unwrap();
        (s.finish(String::new()).unwrap(), pipe)
    }

    /// A closed standard output ends the display, not the recording: with
    /// someone else taking the samples every interval is kept (and the
    /// user told once); with nobody, the monitor ends at once. A closed
    /// pipe is not an error either way.
    #[test]
    fn a_closed_display_ends_the_monitor_only_when_nobody_else_takes_the_samples() {
        let (done, pipe) = replay(vec!["--listen".into()]);
        assert_eq!(pipe.lost, ["--listen"]);
        assert_eq!(done.timeline.totals.len(), 5, "every interval kept");
        assert!(!done.display_ok());
        assert!(done.display_result().is_ok(), "a closed pipe is no error");
        let (done, pipe) = replay(Vec::new());
        assert!(pipe.lost.is_empty());
        assert_eq!(done.timeline.totals.len(), 2, "stopped at the failed write");
    }

    #[test]
    fn a_record_name_that_is_a_device_or_a_number_is_refused() {
        let root =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/monitor/loopstack");
        let tree = DeviceTree::load(&SysPaths::recorded(&root)).unwrap();
        for (word, what) in [("vda", "a device"), ("5", "a number")] {
            let e = RecordFile::check_name(Path::new(word), Some(&tree)).unwrap_err();
            assert!(
                e.to_string().contains(&format!("'{word}' is {what}")),
                "{e}"
            );
        }
        assert!(RecordFile::check_name(Path::new("samples.txt"), Some(&tree)).is_ok());
    }
}
