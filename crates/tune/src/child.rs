//! The child `storlab bench` runs a tuner drives: what is read (the
//! device in place, or a file laid out in a directory), the command line
//! that lays that file out, and the one that measures a value (a
//! cold-cache buffered sequential read for the whole `--runtime`), so that
//! saving and safety are bench's own; and [`measure`], which runs them
//! (each dying with the tuner) over a [`Tuning`]. The front end gives
//! storlab's own executable, the stop request and where the words go.

use crate::measure::{Measure, NoiseDoc, Point, measure_values};
use crate::state::{Tuning, scratch_file};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use storlab_host::os::die_with_parent;
use storlab_types::format_bytes;

/// The read-ahead values to try, in KiB, from the sizes given: each a
/// multiple of 4k.
pub fn values_kb(values: &[u64]) -> Result<Vec<u64>> {
    if values.is_empty() || values.iter().any(|v| *v < 4096 || v % 4096 != 0) {
        return Err(Error::BadValues);
    }
    Ok(values.iter().map(|v| v / 1024).collect())
}

/// What the measurements read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadTarget {
    /// The device, or the file laid out in the directory.
    pub path: PathBuf,
    /// What each measurement reads in all (`--size`), when known.
    pub size: Option<u64>,
    /// The file to lay out first (and remove at the end), and its size:
    /// directory targets only.
    pub lay_out: Option<(PathBuf, u64)>,
}

/// What to read under `target` (a block device or a directory): `size`
/// as given, or the device's size, or for a directory a file of twice
/// `ram` bytes, so the page cache cannot serve it.
pub fn read_target(target: &Path, size: Option<u64>, ram: u64) -> Result<ReadTarget> {
    let is_device = std::fs::metadata(target)
        .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
        .unwrap_or(false);
    if is_device {
        let size = match size {
            Some(s) => s,
            None => crate::stack::device_size(target)?,
        };
        return Ok(ReadTarget {
            path: target.to_path_buf(),
            size: Some(size),
            lay_out: None,
        });
    }
    if !target.is_dir() {
        return Err(Error::NotDeviceOrDir {
            target: target.to_path_buf(),
        });
    }
    let file = scratch_file(target);
    Ok(ReadTarget {
        path: file.clone(),
        size,
        lay_out: Some((file, size.unwrap_or(2 * ram))),
    })
}

/// The arguments of the `storlab bench` that writes `file` (`size` bytes)
/// for the reads: kept, not saved, quiet.
pub fn lay_out_args(file: &Path, size: u64) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["bench".into(), file.into()];
    for s in [
        "--rw=write",
        "--bs=1M",
        "--iodepth=4",
        "--keep",
        "--no-save",
        "-q",
    ] {
        a.push(s.into());
    }
    a.push(format!("--size={size}").into());
    a
}

/// One measurement of a tuning: what the child bench reads and how, and
/// where its run is saved.
#[derive(Debug, Clone)]
pub struct ReadJob<'a> {
    pub target: &'a Path,
    /// What all streams read together.
    pub size: Option<u64>,
    pub streams: u32,
    /// `--runtime` as the user gave it.
    pub runtime: &'a str,
    /// The tuning's id (the `tune_id` tag of every point).
    pub tune_id: &'a str,
    /// The user's own tags and note.
    pub tags: &'a BTreeMap<String, String>,
    pub note: Option<&'a str>,
    /// The database the points are saved in; none: not saved.
    pub db: Option<&'a Path>,
}

impl ReadJob<'_> {
    /// The arguments of the `storlab bench` that measures read-ahead `kb`
    /// (a `repeat` is not saved): its JSON record on stdout.
    pub fn args(&self, kb: u64, repeat: bool) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["bench".into(), self.target.into()];
        if let Some(s) = self.size {
            // Each stream reads its own part of the file or device.
            a.push(format!("--size={}", s / u64::from(self.streams.max(1))).into());
        }
        let fixed = [
            "--rw=read",
            "--bs=1M",
            "--cache=cold",
            "--drop-caches",
            "-q",
            "--output-format=json",
            "--time-based",
            "--runtime",
            self.runtime,
        ];
        a.extend(fixed.iter().map(OsString::from));
        a.push(format!("--numjobs={}", self.streams).into());
        a.push("--name".into());
        a.push(format!("ra-{kb}k").into());
        let ours = [
            "tune=readahead".to_string(),
            format!("tune_id={}", self.tune_id),
            format!("readahead_kb={kb}"),
        ];
        let tag = |a: &mut Vec<OsString>, t: String| a.extend(["--tag".into(), t.into()]);
        for t in ours {
            tag(&mut a, t);
        }
        if self.streams > 1 {
            a.push("--shared-file".into());
        }
        for (k, v) in self.tags {
            tag(&mut a, format!("{k}={v}"));
        }
        if let Some(n) = self.note {
            a.push("--note".into());
            a.push(n.into());
        }
        match self.db {
            Some(db) if !repeat => {
                a.push("--db".into());
                a.push(db.into());
            }
            _ => a.push("--no-save".into()),
        }
        a
    }
}

/// The front end's side of the child runs: storlab's own executable, the
/// stop request, and where the progress lines go (standard error).
pub struct Front<'a> {
    pub exe: &'a Path,
    pub stopped: &'a dyn Fn() -> bool,
    pub say: &'a mut dyn FnMut(&str),
}

/// Lay out the file (directory targets), then one cold-cache streaming
/// read per value and the best two again ([`measure_values`]), each a
/// child `storlab bench`; the file is removed at the end. `job`'s target
/// and size are the user's (a device or directory, `--size`); what is
/// read is [`read_target`]'s.
pub fn measure(
    tuning: &Tuning,
    values: &[u64],
    job: ReadJob<'_>,
    ram: u64,
    front: Front<'_>,
) -> Result<(Vec<Point>, Option<NoiseDoc>)> {
    let read = read_target(job.target, job.size, ram)?;
    if let Some((file, size)) = &read.lay_out {
        lay_out(front.exe, file, *size, &mut *front.say)?;
    }
    let mut child = Child {
        front,
        job: ReadJob {
            target: &read.path,
            size: read.size,
            ..job
        },
        top: &tuning.top().name,
    };
    let out = measure_values(tuning.top(), values, &mut child);
    if let Some((file, _)) = read.lay_out {
        let _ = std::fs::remove_file(file);
    }
    Ok(out)
}

/// Write the file the reads of a directory target go to.
fn lay_out(exe: &Path, file: &Path, size: u64, say: &mut dyn FnMut(&str)) -> Result<()> {
    say(&format!(
        "laying out {} ({}) for the reads",
        file.display(),
        format_bytes(size)
    ));
    let mut c = Command::new(exe);
    // A kill -9 of the tuner ends the bench too (it removes its file).
    let status = die_with_parent(&mut c)
        .args(lay_out_args(file, size))
        .stdout(Stdio::null())
        .status()
        .map_err(Error::io("cannot run storlab bench"))?;
    if !status.success() {
        let _ = std::fs::remove_file(file);
        return Err(Error::LayOut {
            file: file.to_path_buf(),
            status: status.to_string(),
        });
    }
    Ok(())
}

/// One measurement: a child `storlab bench` ([`ReadJob`]).
struct Child<'f, 'j> {
    front: Front<'f>,
    job: ReadJob<'j>,
    top: &'j str,
}

impl Measure for Child<'_, '_> {
    fn stopped(&self) -> bool {
        (self.front.stopped)()
    }

    fn announce(&mut self, kb: u64, repeat: bool) {
        let what = if repeat {
            "streaming read again (run-to-run noise)"
        } else {
            "streaming read"
        };
        let top = self.top;
        (self.front.say)(&format!(
            "read-ahead {} on {top}: {what}",
            format_bytes(kb * 1024)
        ));
    }

    /// `repeat` runs are not saved.
    fn point(&mut self, kb: u64, repeat: bool) -> Point {
        let mut c = Command::new(self.front.exe);
        // A kill -9 of the tuner ends the bench too.
        die_with_parent(&mut c).args(self.job.args(kb, repeat));
        match c.stderr(Stdio::inherit()).output() {
            Ok(o) => {
                let failure = (!o.status.success()).then(|| o.status.to_string());
                Point::from_bench(kb, &o.stdout, failure, self.job.size)
            }
            Err(e) => Point::failed(kb, format!("cannot run storlab bench: {e}")),
        }
    }
}

/// A new tuning's id from the time it began and the process: two started
/// within one second differ by pid.
pub fn tune_id(now: &str, pid: u32) -> String {
    format!("readahead-{now}-{pid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_must_be_multiples_of_4k() {
        assert_eq!(values_kb(&[131072, 4 << 20]).unwrap(), [128, 4096]);
        assert!(values_kb(&[]).is_err());
        assert!(values_kb(&[2048]).is_err());
        assert!(values_kb(&[4096 + 512]).is_err());
    }

    #[test]
    fn a_point_reads_each_streams_share_and_only_the_first_reading_is_saved() {
        let tags = BTreeMap::from([("site".to_string(), "a".to_string())]);
        let job = ReadJob {
            target: Path::new("/dev/x"),
            size: Some(4 << 20),
            streams: 2,
            runtime: "5s",
            tune_id: "t1",
            tags: &tags,
            note: Some("n"),
            db: Some(Path::new("/d.db")),
        };
        let words = |v: Vec<OsString>| -> Vec<String> {
            v.into_iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        let a = words(job.args(512, false));
        assert_eq!(a[..3], ["bench", "/dev/x", "--size=2097152"]);
        for w in [
            "--shared-file",
            "readahead_kb=512",
            "site=a",
            "ra-512k",
            "/d.db",
        ] {
            assert!(a.iter().any(|x| x == w), "{w} in {a:?}");
        }
        let again = words(job.args(512, true));
        assert!(again.iter().any(|x| x == "--no-save"));
        assert!(!again.iter().any(|x| x == "--db"));
    }
}
