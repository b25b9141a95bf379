//! One tuning per device at a time, and every value put back: the
//! per-device lock, the state file written before the first change
//! (original values, the scratch file, each device's identity), and the
//! recovery that writes the values back — at the end, on error or signal,
//! and after a kill on the next start — only to the device they were
//! saved from.

use crate::stack::{Layer, read_kb, write_kb};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storlab_host::blockstack::{FileId, Snapshot};
use storlab_types::format_bytes;

/// What is written before the first change, and removed after the last
/// restore: enough to put every layer back after a kill.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedState {
    pub pid: u32,
    /// Layer → original read-ahead in KiB.
    pub original_kb: BTreeMap<String, (PathBuf, u64)>,
    /// The file laid out for the reads (directory targets), removed with
    /// the restore: after a kill, by the next start.
    #[serde(default)]
    pub scratch: Option<PathBuf>,
    /// Layer → what the device was when its value was saved: the recovery
    /// writes a value back only to the same device (a loop device may have
    /// been detached and attached to another image since). Older state
    /// files have none.
    #[serde(default)]
    pub identity: BTreeMap<String, Identity>,
}

/// What makes a block device the same device: its number and, for a loop
/// device, the file it holds (by file system and inode, as the kernel
/// reports them: `LOOP_GET_STATUS64`; the path only when the file cannot
/// be identified), for others the size and the serial or WWID where sysfs
/// has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// `major:minor`.
    dev: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backing: Option<Backing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size_sectors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    serial: Option<String>,
}

/// A loop device's backing file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Backing {
    /// As sysfs shows it (`… (deleted)` once unlinked).
    path: String,
    /// Device (as `st_dev` encodes it) and inode of the file the loop
    /// device holds.
    file: Option<(u64, u64)>,
}

/// The file loop device `name` holds, as `storlab_host::blockstack` finds
/// it (`LOOP_GET_STATUS64`, which names the file held even after it was
/// renamed, unlinked or replaced at its path).
fn live_loop_file(name: &str, _sys: &Path) -> Option<FileId> {
    Snapshot::read()
        .devices
        .into_iter()
        .find(|d| d.name == name)
        .and_then(|d| d.loop_backing)
        .and_then(|(_, id)| id)
}

impl Identity {
    /// The identity of the device whose sysfs directory is `sys`
    /// (`/sys/block/NAME`); none when it is gone.
    pub fn of(sys: &Path) -> Option<Identity> {
        Identity::read(sys, &live_loop_file)
    }

    /// [`Identity::of`], with `loop_file` telling the file a loop device
    /// (name, sysfs directory) holds.
    pub fn read(sys: &Path, loop_file: &dyn Fn(&str, &Path) -> Option<FileId>) -> Option<Identity> {
        let read = |f: &str| {
            std::fs::read_to_string(sys.join(f))
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        };
        let dev = read("dev")?;
        if sys.join("loop").is_dir() {
            // A detached loop device has no backing file: not the one saved.
            let path = read("loop/backing_file")?;
            let name = sys.file_name()?.to_string_lossy();
            let file =
                loop_file(&name, sys).map(|f| (rustix::fs::makedev(f.dev.0, f.dev.1), f.ino));
            return Some(Identity {
                dev,
                backing: Some(Backing { path, file }),
                size_sectors: None,
                serial: None,
            });
        }
        let serial = [
            "wwid",
            "device/wwid",
            "device/serial",
            "serial",
            "dm/uuid",
            "md/uuid",
        ]
        .into_iter()
        .find_map(read);
        Some(Identity {
            dev,
            backing: None,
            size_sectors: read("size").and_then(|s| s.parse().ok()),
            serial,
        })
    }

    /// Whether `now` is the device this identity was taken of.
    pub fn same_device(&self, now: &Identity) -> bool {
        let backing = match (&self.backing, &now.backing) {
            (None, None) => true,
            (Some(a), Some(b)) => match (a.file, b.file) {
                (Some(x), Some(y)) => x == y,
                _ => a.path == b.path,
            },
            _ => false,
        };
        self.dev == now.dev
            && backing
            && self.size_sectors == now.size_sectors
            && self.serial == now.serial
    }

    pub fn describe(&self) -> String {
        let mut s = format!("device {}", self.dev);
        if let Some(b) = &self.backing {
            s.push_str(&format!(" over {}", b.path));
            if let Some((d, i)) = b.file {
                s.push_str(&format!(" (file system {d}, inode {i})"));
            }
        }
        if let Some(n) = self.size_sectors {
            s.push_str(&format!(", {}", format_bytes(n * 512)));
        }
        if let Some(id) = &self.serial {
            s.push_str(&format!(", id {id}"));
        }
        s
    }
}

/// How a recovery tells what a device is now.
type Identify<'a> = &'a dyn Fn(&Path) -> Option<Identity>;

/// The sysfs directory of the device whose read-ahead file is `ra`
/// (`/sys/block/NAME/queue/read_ahead_kb` → `/sys/block/NAME`).
pub fn sys_dir(ra: &Path) -> Option<&Path> {
    ra.parent().and_then(Path::parent)
}

/// The state file of a tuning whose top layer is `top`.
pub fn state_file(dir: &Path, top: &str) -> PathBuf {
    dir.join(format!("tune-readahead.{top}.json"))
}

/// The file a directory target's reads go to.
pub fn scratch_file(dir: &Path) -> PathBuf {
    dir.join(format!("storlab-tune-readahead.{}.dat", std::process::id()))
}

/// Held while a tuning may change a device's read-ahead: an exclusive
/// `flock` on `tune-readahead.NAME.lock` in the state directory, which
/// the kernel releases when the process ends however it ends (the state
/// file is for putting values back; the lock says whether a tuning runs).
#[derive(Debug)]
pub struct DeviceLock {
    _file: std::fs::File,
}

/// Take the lock of device `name`, or the pid of the tuning that holds it
/// (none if it has not written its pid yet).
pub fn lock_device(dir: &Path, name: &str) -> Result<std::result::Result<DeviceLock, Option<u32>>> {
    use rustix::fs::{FlockOperation, flock};
    use std::io::{Read, Write};
    let p = dir.join(format!("tune-readahead.{name}.lock"));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&p)
        .map_err(Error::io(format!(
            "cannot open the lock file {}",
            p.display()
        )))?;
    if let Err(e) = flock(&f, FlockOperation::NonBlockingLockExclusive) {
        if e == rustix::io::Errno::WOULDBLOCK {
            let mut pid = String::new();
            let _ = f.read_to_string(&mut pid);
            return Ok(Err(pid.trim().parse().ok()));
        }
        return Err(Error::Io {
            what: format!("cannot lock {}", p.display()),
            source: e.into(),
        });
    }
    f.set_len(0)
        .and_then(|()| writeln!(f, "{}", std::process::id()))
        .map_err(Error::io(format!("cannot write {}", p.display())))?;
    Ok(Ok(DeviceLock { _file: f }))
}

/// A layer's read-ahead as put back.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub layer: String,
    pub path: PathBuf,
    pub readahead_kb: u64,
}

/// `dm-0 4096 KiB, vda 128 KiB`.
pub fn describe_restored(r: &[Restored]) -> String {
    r.iter()
        .map(|r| format!("{} {} KiB", r.layer, r.readahead_kb))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a recovery did: the values put back, the layers it left alone
/// because the device is no longer the one saved (each with the reason),
/// and the scratch files an earlier, interrupted run left that it removed.
#[derive(Debug, Default)]
pub struct Recovery {
    pub restored: Vec<Restored>,
    pub dropped: Vec<String>,
    pub removed_scratch: Vec<PathBuf>,
}

impl Recovery {
    /// What this recovery did, in words for standard error (the front end
    /// adds `storlab: `).
    pub fn notes(&self) -> Vec<String> {
        let removed = self.removed_scratch.iter().map(|f| {
            format!(
                "removed {} that an earlier, interrupted run left",
                f.display()
            )
        });
        let dropped = self.dropped.iter().map(|d| {
            format!(
                "warning: an earlier, interrupted tune saved a read-ahead that is no longer \
                 valid; dropped it: {d}"
            )
        });
        let restored = (!self.restored.is_empty()).then(|| {
            format!(
                "restored the read-ahead an earlier, interrupted run left changed: {}",
                describe_restored(&self.restored)
            )
        });
        removed.chain(dropped).chain(restored).collect()
    }
}

/// Put back the values of a state file and remove it (and the scratch file
/// it names). The caller holds the lock of every layer it names. A layer
/// whose device is no longer the one saved (gone, or a loop device now over
/// another file) is not written: its value is dropped with the reason.
pub fn recover(state_file: &Path) -> Result<Option<Recovery>> {
    recover_with(state_file, &|sys: &Path| Identity::of(sys))
}

/// [`recover`], with `identify` telling what a device is now.
pub fn recover_with(state_file: &Path, identify: Identify) -> Result<Option<Recovery>> {
    let Some(s) = read_state(state_file)? else {
        return Ok(None);
    };
    let mut out = Recovery::default();
    for (name, (path, kb)) in &s.original_kb {
        if let Some(saved) = s.identity.get(name) {
            let now = sys_dir(path).and_then(identify);
            if !now.as_ref().is_some_and(|n| saved.same_device(n)) {
                out.dropped.push(format!(
                    "{name}: not putting back {kb} KiB, {name} is no longer the device it was saved from \
                     (then: {}; now: {})",
                    saved.describe(),
                    now.map_or_else(|| "gone".to_string(), |n| n.describe())
                ));
                continue;
            }
        }
        write_kb(path, *kb)?;
        out.restored.push(Restored {
            layer: name.clone(),
            path: path.clone(),
            readahead_kb: *kb,
        });
    }
    if let Some(f) = &s.scratch {
        match std::fs::remove_file(f) {
            Ok(()) if s.pid != std::process::id() => out.removed_scratch.push(f.clone()),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::Io {
                    what: format!("cannot remove {}", f.display()),
                    source: e,
                });
            }
            _ => {}
        }
    }
    std::fs::remove_file(state_file)
        .map_err(Error::io(format!("cannot remove {}", state_file.display())))?;
    Ok(Some(out))
}

fn read_state(state_file: &Path) -> Result<Option<SavedState>> {
    let text = match std::fs::read_to_string(state_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::Io {
                what: format!("cannot read {}", state_file.display()),
                source: e,
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| Error::DamagedState {
            path: state_file.to_path_buf(),
            source,
        })
}

/// Every state file in `dir` that no running tuning owns (one killed
/// before it could restore): recovered, with the locks of its layers taken
/// for the time (`held`: the layers this run has locked already). A state
/// file whose layers another tuning holds is left to it.
fn recover_stale(dir: &Path, held: &[String]) -> Result<Recovery> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(Error::io(format!("cannot read {}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("tune-readahead") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    let mut out = Recovery::default();
    'files: for f in files {
        let Some(s) = read_state(&f)? else { continue };
        let mut locks = Vec::new();
        for name in s.original_kb.keys().filter(|n| !held.contains(n)) {
            match lock_device(dir, name)? {
                Ok(l) => locks.push(l),
                // A tuning that runs now owns it.
                Err(_) => continue 'files,
            }
        }
        if let Some(r) = recover(&f)? {
            out.restored.extend(r.restored);
            out.dropped.extend(r.dropped);
            out.removed_scratch.extend(r.removed_scratch);
        }
    }
    Ok(out)
}

/// A tuning under way: every layer locked, the original values saved in
/// the state file. [`Tuning::finish`] puts them back; a kill leaves the
/// state file for the next start to recover.
#[derive(Debug)]
pub struct Tuning {
    /// The layers, top first.
    pub stack: Vec<Layer>,
    /// What the state file holds.
    pub saved: SavedState,
    /// What an earlier, interrupted run had left changed and this start
    /// put back (or dropped).
    pub earlier: Recovery,
    state_file: PathBuf,
    locks: Vec<DeviceLock>,
}

impl Tuning {
    /// Find the layers under `target`, lock every one (one tuning per
    /// device), recover what earlier, killed runs left in `state_dir`, then
    /// save every layer's value and identity in the state file (written and
    /// synced before anything changes). `scratch`: the file the reads will
    /// use, removed with the restore.
    pub fn begin(state_dir: &Path, target: &Path, scratch: Option<PathBuf>) -> Result<Tuning> {
        std::fs::create_dir_all(state_dir)
            .map_err(Error::io(format!("cannot create {}", state_dir.display())))?;
        let stack = crate::stack::layers(target)?;
        let mut locks = Vec::new();
        for l in &stack {
            match lock_device(state_dir, &l.name)? {
                Ok(lock) => locks.push(lock),
                Err(pid) => {
                    return Err(Error::Busy {
                        device: l.name.clone(),
                        pid,
                    });
                }
            }
        }
        let held: Vec<String> = stack.iter().map(|l| l.name.clone()).collect();
        let earlier = recover_stale(state_dir, &held)?;
        let state_file = state_file(state_dir, &stack[0].name);
        let mut saved = SavedState {
            pid: std::process::id(),
            original_kb: BTreeMap::new(),
            scratch,
            identity: BTreeMap::new(),
        };
        for l in &stack {
            saved
                .original_kb
                .insert(l.name.clone(), (l.path.clone(), read_kb(&l.path)?));
            if let Some(id) = sys_dir(&l.path).and_then(Identity::of) {
                saved.identity.insert(l.name.clone(), id);
            }
        }
        write_synced(&state_file, &serde_json::to_string_pretty(&saved)?)?;
        Ok(Tuning {
            stack,
            saved,
            earlier,
            state_file,
            locks,
        })
    }

    /// The top layer: the one file reads go through, whose value is set.
    pub fn top(&self) -> &Layer {
        &self.stack[0]
    }

    /// Each layer's original value in KiB.
    pub fn original_kb(&self, layer: &str) -> Option<u64> {
        self.saved.original_kb.get(layer).map(|(_, kb)| *kb)
    }

    /// Put every value back and remove the state file, then release the
    /// locks: called on every path (success, error, signal).
    pub fn finish(&mut self) -> Result<Recovery> {
        let r = recover(&self.state_file);
        self.locks.clear();
        Ok(r?.unwrap_or_default())
    }
}

/// Write `text` to `path` through a synced temporary file and a rename.
fn write_synced(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(Error::io(format!("cannot write {}", tmp.display())))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(Error::io(format!("cannot sync {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(Error::io(format!(
        "cannot rename {tmp:?} to {}",
        path.display()
    )))
}

#[cfg(test)]
mod tests;
