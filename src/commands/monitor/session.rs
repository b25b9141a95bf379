//! Where each snapshot and interval of `storlab monitor` goes: the record
//! file (`--record FILE`, written as each snapshot is taken), the display on
//! standard output (which may go away without ending the recording), the
//! Prometheus server (`--listen`) and the timeline kept for `--record` (the
//! results database) and `--output-format json`.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use storlab_monitor::routes::Routes;
use storlab_monitor::{Interval, Snapshot, replay};

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
    /// Create the record file: a new file, or an empty regular file (made
    /// by `mktemp`, say). Anything else is refused: storlab never writes
    /// over a file it did not create.
    pub fn create(path: &Path) -> anyhow::Result<RecordFile> {
        let fresh = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path);
        let fresh_made = fresh.is_ok();
        let file = match fresh {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let md = std::fs::metadata(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                if !md.is_file() || md.len() > 0 {
                    anyhow::bail!(
                        "--record {}: the file exists{}; --record writes only a new (or empty) file, \
                         so nothing is written over: choose another name or remove it",
                        path.display(),
                        if md.is_file() {
                            ""
                        } else {
                            " and is not a regular file"
                        }
                    );
                }
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .with_context(|| format!("cannot open the record file {}", path.display()))?
            }
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot create the record file {}: {e}; check that its directory exists and is writable",
                    path.display()
                ));
            }
        };
        let mut r = RecordFile {
            path: path.to_path_buf(),
            file,
        };
        let header = "# storlab monitor --record: /proc/diskstats snapshots, one after another \
             (docs/monitor.md); read back with: storlab monitor --replay FILE\n";
        if let Err(e) = r.file.write_all(header.as_bytes()) {
            // Nothing was recorded: the (new or empty) file is left empty
            // of storlab's bytes, and removed if storlab made it, so no
            // empty record is taken for one.
            if fresh_made {
                let _ = std::fs::remove_file(path);
            }
            anyhow::bail!(
                "cannot write the record file {}: {e}; nothing was recorded (a full or \
                 read-only file system?)",
                path.display()
            );
        }
        Ok(r)
    }

    fn write(&mut self, text: &str) -> anyhow::Result<()> {
        // One write of the whole snapshot, unbuffered: it is in the file
        // (the page cache) before the next sample is taken.
        self.file.write_all(text.as_bytes()).with_context(|| {
            format!(
                "cannot write the record file {}; the samples before this one are in it",
                self.path.display()
            )
        })
    }

    /// Append one snapshot.
    pub fn append(&mut self, s: &Snapshot) -> anyhow::Result<()> {
        self.write(&replay::format(s))
    }

    /// Make the file durable (at the end: one fsync, not one per sample).
    pub fn close(self) -> anyhow::Result<()> {
        self.file
            .sync_all()
            .with_context(|| format!("cannot sync the record file {}", self.path.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Why a write to standard output failed: the I/O error behind `e` (a
/// display only fails by writing), else its message.
fn stdout_io_error(e: &anyhow::Error) -> std::io::Error {
    e.chain()
        .find_map(|c| {
            c.downcast_ref::<std::io::Error>()
                .map(|io| std::io::Error::new(io.kind(), io.to_string()))
        })
        .unwrap_or_else(|| {
            let text = format!("{e:#}");
            let text = text
                .strip_prefix("cannot write to standard output: ")
                .unwrap_or(&text);
            std::io::Error::other(text.to_string())
        })
}

/// Everything but the record file (which the sampling loop writes as each
/// snapshot is taken, apart from this): the routes of each interval
/// (`storlab_monitor::routes`) and the display on standard output.
pub struct Session {
    routes: Routes,
    /// Why standard output failed; from then on nothing more is shown.
    display_failed: Option<std::io::Error>,
    /// Who else takes the samples (`--record FILE`, `--record`, `--listen`),
    /// named for the message when the display goes away; empty = nobody, so
    /// a closed standard output ends the monitor.
    consumers: Vec<String>,
    /// How the monitor ends, for that message.
    ends: String,
}

impl Session {
    pub fn new(routes: Routes, consumers: Vec<String>, ends: String) -> Session {
        Session {
            routes,
            display_failed: None,
            consumers,
            ends,
        }
    }

    /// Intervals handled.
    pub fn done(&self) -> u64 {
        self.routes.done
    }

    pub fn serving(&self) -> bool {
        self.routes.serving()
    }

    /// Hand one interval to the server, the timeline and the display.
    /// Returns whether to go on: `false` once standard output failed and
    /// nothing else takes the samples.
    pub fn interval(&mut self, i: &Interval, first_wall: Option<String>) -> bool {
        let display = self.display_failed.is_none();
        let shown = match self.routes.interval(i, first_wall, display) {
            Ok(text) if text.is_empty() => Ok(()),
            Ok(text) => crate::output::print(&text),
            Err(e) => Err(e.into()),
        };
        if let Err(e) = shown {
            self.display_lost(e);
        }
        self.display_failed.is_none() || !self.consumers.is_empty()
    }

    /// Print the whole timeline as one JSON document (`--output-format
    /// json`), unless the display has already failed.
    pub fn print_json(&mut self, doc: &storlab_types::MonitorTimeline) {
        if self.display_failed.is_none()
            && let Err(e) = crate::output::print_json(doc)
        {
            self.display_lost(e);
        }
    }

    /// Standard output failed: remember why, and say once on stderr what
    /// goes on.
    fn display_lost(&mut self, e: anyhow::Error) {
        let io = stdout_io_error(&e);
        if !self.consumers.is_empty() {
            let why = if io.kind() == std::io::ErrorKind::BrokenPipe {
                "standard output was closed".to_string()
            } else {
                format!("cannot write to standard output ({io})")
            };
            // Not eprintln!: stderr may be broken too, and that must not
            // end the recording either.
            let _ = writeln!(
                std::io::stderr(),
                "storlab: {why}: nothing more is shown; sampling goes on for {} until {}",
                self.consumers.join(" and "),
                self.ends
            );
        }
        self.display_failed = Some(io);
    }

    /// The timeline of every interval (empty when none was kept).
    pub fn timeline(&mut self, started_at: String) -> storlab_types::MonitorTimeline {
        self.routes.timeline(started_at)
    }

    /// At the very end: the display's failure as the command's error
    /// (exit 2), after everything else was kept. A closed pipe is not an
    /// error (`storlab monitor ... | head`).
    pub fn display_result(&self, record: Option<&Path>) -> anyhow::Result<()> {
        match &self.display_failed {
            Some(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                let kept = match record {
                    Some(p) => format!("; every sample is in the record file {}", p.display()),
                    None if !self.consumers.is_empty() => {
                        format!("; every sample went to {}", self.consumers.join(" and "))
                    }
                    None => String::new(),
                };
                anyhow::bail!(
                    "cannot write to standard output: {io}: the display stopped after that{kept}"
                )
            }
            _ => Ok(()),
        }
    }
}
