//! `storlab tune TUNER`: find the best value of one block-layer setting for
//! the user's own device by measuring each candidate, then put everything
//! back. Each tuner is a subcommand; `readahead` is the first (the
//! scheduler, `nr_requests` and queue depth fit the same shape: find the
//! layers, remember their values in a state file, set, measure, restore).
//!
//! `readahead` sets the read-ahead of the layer that file reads go through
//! (the top of the device stack under the path: the dm or md device, or the
//! disk under a partition), runs a cold-cache streaming read (a file larger
//! than RAM by default, or the device itself, read-only), records each point
//! in the store, and restores every layer's original value at the end, on
//! Ctrl-C, on error, and — from the state file written before the first
//! change — on the next start after a kill. With `--output-format json` /
//! `--json` the result is one serializer-made document on stdout (the
//! layers and their original values, each value measured with its run id,
//! the best one, what was restored); progress stays on stderr.
//!
//! It recommends only from points it trusts: each point reads for the whole
//! `--runtime` (`--time-based`, several passes when needed); a point whose
//! eviction was not verified, that ran under 1 s, or that read a region the
//! page cache can hold more than once is flagged; the best two values are
//! read again to measure the run-to-run noise. When any point is flagged or
//! the best does not lead the next by more than that noise, the result is
//! "inconclusive" with the reasons, and no `blockdev`/udev line is given.

use crate::Outcome;
use crate::commands::common::{DbArgs, RecordArgs};
use crate::commands::outfmt::TableFormat;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use comfy_table::{Cell, CellAlignment};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use storlab_host::os::die_with_parent;
use storlab_monitor::tree::LinkKind;
use storlab_monitor::{DeviceTree, SysPaths};
use storlab_store::RunSelector;
use storlab_types::{ByteSize, StoredRun, format_bytes};

/// `storlab tune`
#[derive(Args, Debug)]
pub struct TuneCommand {
    #[command(subcommand)]
    tuner: Tuner,
}

#[derive(Subcommand, Debug)]
enum Tuner {
    /// Find the best block-device read-ahead for streaming reads under a path or of a device (root)
    Readahead(ReadaheadArgs),
}

impl TuneCommand {
    pub fn execute(self) -> Result<Outcome> {
        match self.tuner {
            Tuner::Readahead(a) => a.execute(),
        }
    }
}

/// `storlab tune readahead DEVICE-or-PATH`
#[derive(Args, Debug)]
pub struct ReadaheadArgs {
    /// A block device (read in place, read-only) or a directory on the file system to tune (a file is written there)
    target: PathBuf,
    /// Read-ahead values to try
    #[arg(long, value_delimiter = ',', default_value = "128k,512k,1m,2m,4m,8m")]
    values: Vec<ByteSize>,
    /// Size of the file read (directory targets) [default: 2× RAM, so the page cache cannot serve it]
    #[arg(long, value_name = "SIZE")]
    size: Option<ByteSize>,
    /// Time limit of each measurement
    #[arg(long, value_name = "DUR", default_value = "20s")]
    runtime: String,
    /// Concurrent streams (jobs) reading
    #[arg(long, value_name = "N", default_value_t = 1)]
    streams: u32,
    /// Where the state file (the original values) is kept
    #[arg(
        long,
        value_name = "DIR",
        env = "STORLAB_STATE_DIR",
        default_value = "/run/storlab",
        hide = true
    )]
    state_dir: PathBuf,
    /// Do not save the points in the results database
    #[arg(long)]
    no_save: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    output_format: TableFormat,
    /// Shorthand for --output-format json (each value's figures and run id, the best value, what
    /// was restored)
    #[arg(long, conflicts_with = "output_format")]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    record: RecordArgs,
}

/// One layer of the stack whose read-ahead can be set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Layer {
    /// Kernel name (`dm-0`, `vda`).
    name: String,
    /// Its `queue/read_ahead_kb` file.
    path: PathBuf,
}

/// What is written before the first change, and removed after the last
/// restore: enough to put every layer back after a kill.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedState {
    pid: u32,
    /// Layer → original read-ahead in KiB.
    original_kb: BTreeMap<String, (PathBuf, u64)>,
    /// The file laid out for the reads (directory targets), removed with
    /// the restore: after a kill, by the next start.
    #[serde(default)]
    scratch: Option<PathBuf>,
    /// Layer → what the device was when its value was saved: the recovery
    /// writes a value back only to the same device (a loop device may have
    /// been detached and attached to another image since). Older state
    /// files have none.
    #[serde(default)]
    identity: BTreeMap<String, Identity>,
}

/// What makes a block device the same device: its number and, for a loop
/// device, the backing file (by file system and inode; the path only when
/// the file cannot be looked up), for others the size and the serial or
/// WWID where sysfs has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Identity {
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
    path: String,
    /// `st_dev` and `st_ino` of the file.
    file: Option<(u64, u64)>,
}

impl Identity {
    /// The identity of the device whose sysfs directory is `sys`
    /// (`/sys/block/NAME`); none when it is gone.
    fn of(sys: &Path) -> Option<Identity> {
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
            let file = std::fs::metadata(path.trim_end_matches(" (deleted)"))
                .ok()
                .map(|m| {
                    use std::os::unix::fs::MetadataExt;
                    (m.dev(), m.ino())
                });
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
    fn same_device(&self, now: &Identity) -> bool {
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

    fn describe(&self) -> String {
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

/// The sysfs directory of the device whose read-ahead file is `ra`
/// (`/sys/block/NAME/queue/read_ahead_kb` → `/sys/block/NAME`).
fn sys_dir(ra: &Path) -> Option<&Path> {
    ra.parent().and_then(Path::parent)
}

/// The state file of a tuning whose top layer is `top`.
fn state_file(dir: &Path, top: &str) -> PathBuf {
    dir.join(format!("tune-readahead.{top}.json"))
}

/// Held while a tuning may change a device's read-ahead: an exclusive
/// `flock` on `tune-readahead.NAME.lock` in the state directory, which
/// the kernel releases when the process ends however it ends (the state
/// file is for putting values back; the lock says whether a tuning runs).
struct DeviceLock {
    _file: std::fs::File,
}

/// Take the lock of device `name`, or the pid of the tuning that holds it
/// (none if it has not written its pid yet).
fn lock_device(dir: &Path, name: &str) -> Result<std::result::Result<DeviceLock, Option<u32>>> {
    use std::io::{Read, Write};
    let p = dir.join(format!("tune-readahead.{name}.lock"));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&p)
        .with_context(|| format!("cannot open the lock file {}", p.display()))?;
    let locked = storlab_host::os::try_lock_exclusive(&f)
        .with_context(|| format!("cannot lock {}", p.display()))?;
    if !locked {
        let mut pid = String::new();
        let _ = f.read_to_string(&mut pid);
        return Ok(Err(pid.trim().parse().ok()));
    }
    f.set_len(0)
        .and_then(|()| writeln!(f, "{}", std::process::id()))
        .with_context(|| format!("cannot write {}", p.display()))?;
    Ok(Ok(DeviceLock { _file: f }))
}

/// The file a directory target's reads go to.
fn scratch_file(dir: &Path) -> PathBuf {
    dir.join(format!("storlab-tune-readahead.{}.dat", std::process::id()))
}

fn read_kb(p: &Path) -> Result<u64> {
    let t = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    t.trim()
        .parse()
        .with_context(|| format!("{} holds '{}', not a number", p.display(), t.trim()))
}

fn write_kb(p: &Path, kb: u64) -> Result<()> {
    std::fs::write(p, format!("{kb}\n")).with_context(|| format!("cannot write {}", p.display()))
}

/// The read-ahead file that governs `name`: its own queue, or for a
/// partition its disk's (partitions share the disk's request queue).
fn ra_file(tree: &DeviceTree, name: &str) -> Option<PathBuf> {
    let d = tree.get(name)?;
    let own = d.sysfs_dir.join("queue/read_ahead_kb");
    if own.exists() {
        return Some(own);
    }
    let parent = d.sysfs_dir.parent()?.join("queue/read_ahead_kb");
    parent.exists().then_some(parent)
}

/// The stack under `target`, top first: the layer whose read-ahead file
/// reads use, then every layer below it.
fn layers(target: &Path) -> Result<Vec<Layer>> {
    let tree = DeviceTree::load(&SysPaths::live())?;
    let top = tree.resolve(&target.display().to_string())?;
    // The block-layer stack only: a loop device's backing file is reached
    // through a file system, whose device's read-ahead is another matter.
    let mut names: Vec<String> = Vec::new();
    let mut todo = vec![top];
    while let Some(n) = todo.pop() {
        if names.contains(&n) {
            continue;
        }
        if let Some(d) = tree.get(&n) {
            todo.extend(
                d.lowers
                    .iter()
                    .filter(|l| l.kind != LinkKind::File)
                    .map(|l| l.device.clone()),
            );
        }
        names.push(n);
    }
    // Top first, then by level from the top down.
    names.sort_by_key(|n| std::cmp::Reverse(tree.level(n)));
    let mut out: Vec<Layer> = Vec::new();
    for n in names {
        if let Some(path) = ra_file(&tree, &n)
            && !out.iter().any(|l| l.path == path)
        {
            let name = path
                .parent()
                .and_then(Path::parent)
                .and_then(|p| p.file_name())
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(n);
            out.push(Layer { name, path });
        }
    }
    if out.is_empty() {
        bail!(
            "no layer under {} has a read-ahead setting (queue/read_ahead_kb)",
            target.display()
        );
    }
    Ok(out)
}

/// A layer's read-ahead as put back.
#[derive(Debug, Clone, Serialize)]
struct Restored {
    layer: String,
    path: PathBuf,
    readahead_kb: u64,
}

fn describe_restored(r: &[Restored]) -> String {
    r.iter()
        .map(|r| format!("{} {} KiB", r.layer, r.readahead_kb))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a recovery did: the values put back, and the layers it left alone
/// because the device is no longer the one saved (each with the reason).
#[derive(Debug, Default)]
struct Recovery {
    restored: Vec<Restored>,
    dropped: Vec<String>,
}

/// Put back the values of a state file and remove it (and the scratch file
/// it names). The caller holds the lock of every layer it names. A layer
/// whose device is no longer the one saved (gone, or a loop device now over
/// another file) is not written: its value is dropped with the reason.
fn recover(state_file: &Path) -> Result<Option<Recovery>> {
    let Some(s) = read_state(state_file)? else {
        return Ok(None);
    };
    let mut out = Recovery::default();
    for (name, (path, kb)) in &s.original_kb {
        if let Some(saved) = s.identity.get(name) {
            let now = sys_dir(path).and_then(Identity::of);
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
            Ok(()) if s.pid != std::process::id() => eprintln!(
                "storlab: removed {} that an earlier, interrupted run left",
                f.display()
            ),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", f.display()));
            }
            _ => {}
        }
    }
    std::fs::remove_file(state_file)
        .with_context(|| format!("cannot remove {}", state_file.display()))?;
    Ok(Some(out))
}

fn read_state(state_file: &Path) -> Result<Option<SavedState>> {
    let text = match std::fs::read_to_string(state_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", state_file.display())),
    };
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{} is damaged; check the read-ahead values by hand, then remove it",
            state_file.display()
        )
    })
}

/// Every state file in `dir` that no running tuning owns (one killed
/// before it could restore): recovered, with the locks of its layers taken
/// for the time (`held`: the layers this run has locked already). A state
/// file whose layers another tuning holds is left to it.
fn recover_stale(dir: &Path, held: &[String]) -> Result<Recovery> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
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
        }
    }
    Ok(out)
}

/// Size of a block device, from sysfs (512-byte sectors).
fn device_size(dev: &Path) -> Result<u64> {
    let real = dev
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dev.display()))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let p = format!("/sys/class/block/{name}/size");
    let sectors: u64 = std::fs::read_to_string(&p)
        .with_context(|| format!("cannot read {p}"))?
        .trim()
        .parse()
        .with_context(|| format!("{p} is not a number"))?;
    Ok(sectors * 512)
}

/// `tune readahead --json`.
#[derive(Serialize)]
struct TuneDoc<'a> {
    /// The device or directory given.
    target: &'a Path,
    /// The layer whose read-ahead was set (the one file reads go through).
    device: &'a str,
    /// Every layer under the target, top first (the first is `device`),
    /// with its original value.
    layers: Vec<LayerDoc<'a>>,
    /// The `tune_id` tag of the stored runs.
    tune_id: &'a str,
    runtime: &'a str,
    streams: u32,
    /// Each value measured, in the order tried.
    points: Vec<PointDoc<'a>>,
    /// The recommendation (never left set: the originals are put back);
    /// none when no measurement succeeded or the result is inconclusive.
    best: Option<BestDoc>,
    /// `best` or `inconclusive`, with the reasons.
    verdict: Verdict,
    /// The best two values measured again (none when fewer than two
    /// succeeded or the run was stopped).
    noise: Option<NoiseDoc>,
    /// The values put back at the end (every layer's original).
    restored: Vec<Restored>,
    /// Values an earlier, interrupted run had left changed, put back first.
    recovered_from_earlier_run: Option<Vec<Restored>>,
    /// Where the points were saved (none with --no-save); each point's
    /// `run_id` is its stored run.
    db: Option<&'a Path>,
}

#[derive(Serialize)]
struct LayerDoc<'a> {
    name: &'a str,
    path: &'a Path,
    original_kb: u64,
}

#[derive(Serialize)]
struct PointDoc<'a> {
    readahead_kb: u64,
    /// 10^6 bytes/s, cold-cache buffered sequential read, 1 MiB requests.
    mb_s: Option<f64>,
    /// Percent of the best value's MB/s.
    vs_best_pct: Option<f64>,
    cache_verified: Option<bool>,
    note: &'a str,
    /// Why this point cannot be recommended from (empty when it can).
    flags: &'a [String],
    run_id: Option<i64>,
}

#[derive(Serialize)]
struct BestDoc {
    readahead_kb: u64,
    mb_s: f64,
    /// `blockdev --setra` with the value in 512-byte sectors.
    set_command: String,
    /// A udev rule that keeps it across reboots.
    udev_rule: String,
}

/// One measured point.
struct Point {
    kb: u64,
    mbps: Option<f64>,
    note: String,
    /// The bench's own report that the page cache was emptied.
    cache_verified: Option<bool>,
    /// Why the figure cannot be trusted (eviction not verified, under
    /// 1 s, read again from the page cache); empty when it can.
    flags: Vec<String>,
}

/// The shortest measurement the tuner recommends from (the bench's own
/// "too short to trust" limit).
const MIN_POINT_NS: u64 = storlab_bench::MIN_TRUSTED_NS;

/// The best two values measured again: the run-to-run noise the best
/// value's lead must exceed.
#[derive(Serialize)]
struct NoiseDoc {
    /// Each of the two values: its first and its repeated MB/s.
    repeats: Vec<RepeatDoc>,
    /// The larger of the two values' differences between their first and
    /// repeated MB/s, in percent of the higher.
    noise_pct: f64,
    /// The best value's lead over the next (mean of its two measurements),
    /// in percent of the next.
    lead_pct: f64,
}

#[derive(Serialize)]
struct RepeatDoc {
    readahead_kb: u64,
    first_mb_s: f64,
    repeat_mb_s: Option<f64>,
    note: String,
}

/// What the points allow: a recommendation, or why none is given.
#[derive(Serialize)]
struct Verdict {
    /// `best` (a value is recommended) or `inconclusive`.
    conclusion: &'static str,
    /// Why no value is recommended (empty when one is).
    reasons: Vec<String>,
    /// The fastest value measured, recommended or not.
    fastest_kb: Option<u64>,
}

impl ReadaheadArgs {
    pub fn execute(self) -> Result<Outcome> {
        if !storlab_host::os::is_root() {
            bail!(
                "tune readahead sets /sys/block/*/queue/read_ahead_kb and drops the page cache: run it as root \
                 (nothing was changed)"
            );
        }
        if self.values.is_empty() || self.values.iter().any(|v| v.0 < 4096 || v.0 % 4096 != 0) {
            bail!("--values: give read-ahead sizes that are multiples of 4k, e.g. 128k,1m,4m");
        }
        // Tags, note and design as every child bench will save them, checked
        // before anything is changed (a bad --design must not cost N runs).
        let tags = self.record.tag_map()?;
        std::fs::create_dir_all(&self.state_dir)
            .with_context(|| format!("cannot create {}", self.state_dir.display()))?;
        let stack = layers(&self.target)?;
        // One tuning per device at a time: every layer's lock before
        // anything is read back or changed.
        let mut locks = Vec::new();
        for l in &stack {
            match lock_device(&self.state_dir, &l.name)? {
                Ok(lock) => locks.push(lock),
                Err(pid) => bail!(
                    "another storlab tune is running on /dev/{} (pid {}); wait for it to finish, \
                     or stop it (kill {}) and it puts the read-ahead back (nothing was changed)",
                    l.name,
                    pid.map_or_else(|| "unknown".to_string(), |p| p.to_string()),
                    pid.map_or_else(|| "PID".to_string(), |p| p.to_string()),
                ),
            }
        }
        let held: Vec<String> = stack.iter().map(|l| l.name.clone()).collect();
        let earlier = recover_stale(&self.state_dir, &held)?;
        for d in &earlier.dropped {
            eprintln!(
                "storlab: warning: an earlier, interrupted tune saved a read-ahead that is no longer \
                 valid; dropped it: {d}"
            );
        }
        let recovered = (!earlier.restored.is_empty()).then_some(earlier.restored);
        if let Some(r) = &recovered {
            eprintln!(
                "storlab: restored the read-ahead an earlier, interrupted run left changed: {}",
                describe_restored(r)
            );
        }
        let state_file = state_file(&self.state_dir, &stack[0].name);
        let mut saved = SavedState {
            pid: std::process::id(),
            original_kb: BTreeMap::new(),
            scratch: self.target.is_dir().then(|| scratch_file(&self.target)),
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
        // Written (and synced) before anything changes.
        let tmp = state_file.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(&saved)?)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot sync {}", tmp.display()))?;
        std::fs::rename(&tmp, &state_file)
            .with_context(|| format!("cannot rename {tmp:?} to {}", state_file.display()))?;
        let stop = crate::commands::bench::Signals::install()?;
        // Unique per tuning: two started within one second differ by pid.
        let tune_id = format!(
            "readahead-{}-{}",
            storlab_types::time::now_rfc3339(),
            std::process::id()
        );
        let result = self.measure(&stack[0], &stop, &tune_id, &tags);
        // Restore on every path: success, error and signal.
        let restore = recover(&state_file);
        drop(locks);
        let (points, noise) = result?;
        let restore = restore?.unwrap_or_default();
        for d in &restore.dropped {
            crate::output::warn(&d.to_string());
        }
        let restored = restore.restored;
        let doc = self.outcome(
            &stack,
            &saved,
            (&points, noise),
            &restored,
            recovered.as_deref(),
            &tune_id,
        );
        if self.is_json() {
            crate::output::print_json(&doc)?;
        } else {
            crate::output::print(&render(&doc))?;
        }
        Ok(if stop.requested() {
            Outcome::Interrupted
        } else if points.iter().all(|p| p.mbps.is_none()) {
            Outcome::Error
        } else {
            Outcome::Ok
        })
    }

    /// Lay out the file (directory targets), then one cold-cache streaming
    /// read per value.
    fn measure(
        &self,
        top: &Layer,
        stop: &crate::commands::bench::Signals,
        tune_id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(Vec<Point>, Option<NoiseDoc>)> {
        let exe = std::env::current_exe().context("cannot find storlab itself")?;
        let is_device = std::fs::metadata(&self.target)
            .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
            .unwrap_or(false);
        let mut scratch = None;
        let mut size_arg = self.size.map(|s| s.0);
        let read_target = if is_device {
            if size_arg.is_none() {
                size_arg = Some(device_size(&self.target)?);
            }
            self.target.clone()
        } else {
            if !self.target.is_dir() {
                bail!(
                    "{} is neither a block device nor a directory",
                    self.target.display()
                );
            }
            let size = match self.size {
                Some(s) => s.0,
                None => 2 * storlab_host::host_info().mem_total_bytes,
            };
            let file = scratch_file(&self.target);
            eprintln!(
                "laying out {} ({}) for the reads",
                file.display(),
                format_bytes(size)
            );
            let mut c = Command::new(&exe);
            // A kill -9 of the tuner ends the bench too (it removes its file).
            let status = die_with_parent(&mut c)
                .arg("bench")
                .arg(&file)
                .args([
                    "--rw=write",
                    "--bs=1M",
                    "--iodepth=4",
                    "--keep",
                    "--no-save",
                    "-q",
                ])
                .arg(format!("--size={size}"))
                .stdout(Stdio::null())
                .status()
                .context("cannot run storlab bench")?;
            scratch = Some(file.clone());
            if !status.success() {
                let _ = std::fs::remove_file(&file);
                bail!("laying out {} failed ({status})", file.display());
            }
            file
        };
        let mut points = Vec::new();
        for v in &self.values {
            if stop.requested() {
                break;
            }
            let kb = v.0 / 1024;
            if let Err(e) = write_kb(&top.path, kb) {
                points.push(Point {
                    kb,
                    mbps: None,
                    note: format!("{e:#}"),
                    cache_verified: None,
                    flags: Vec::new(),
                });
                continue;
            }
            eprintln!(
                "read-ahead {} on {}: streaming read",
                format_bytes(v.0),
                top.name
            );
            points.push(self.one_point(&exe, &read_target, size_arg, kb, tune_id, tags, false));
        }
        let noise = if stop.requested() {
            None
        } else {
            self.repeat_best_two(&exe, top, &read_target, size_arg, &points, tune_id, tags)
        };
        if let Some(f) = scratch {
            let _ = std::fs::remove_file(f);
        }
        Ok((points, noise))
    }

    /// The run-to-run noise: the best two values read again, unsaved (the
    /// stored points stay one per value).
    #[allow(clippy::too_many_arguments)]
    fn repeat_best_two(
        &self,
        exe: &Path,
        top: &Layer,
        target: &Path,
        size: Option<u64>,
        points: &[Point],
        tune_id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Option<NoiseDoc> {
        let mut ok: Vec<(u64, f64)> = points
            .iter()
            .filter_map(|p| p.mbps.map(|m| (p.kb, m)))
            .collect();
        ok.sort_by(|a, b| b.1.total_cmp(&a.1));
        if ok.len() < 2 {
            return None;
        }
        let mut repeats = Vec::new();
        for &(kb, first) in &ok[..2] {
            eprintln!(
                "read-ahead {} on {}: streaming read again (run-to-run noise)",
                format_bytes(kb * 1024),
                top.name
            );
            let again = match write_kb(&top.path, kb) {
                Ok(()) => self.one_point(exe, target, size, kb, tune_id, tags, true),
                Err(e) => Point {
                    kb,
                    mbps: None,
                    note: format!("{e:#}"),
                    cache_verified: None,
                    flags: Vec::new(),
                },
            };
            repeats.push(RepeatDoc {
                readahead_kb: kb,
                first_mb_s: first,
                repeat_mb_s: again.mbps,
                note: again.note,
            });
        }
        Some(noise_of(repeats))
    }

    /// A cold-cache buffered sequential read of `target` for the whole
    /// `--runtime` (several passes when it is read sooner: a child storlab
    /// bench, so saving and safety are bench's own); `repeat` runs are not
    /// saved.
    #[allow(clippy::too_many_arguments)]
    fn one_point(
        &self,
        exe: &Path,
        target: &Path,
        size: Option<u64>,
        kb: u64,
        tune_id: &str,
        tags: &BTreeMap<String, String>,
        repeat: bool,
    ) -> Point {
        let mut c = Command::new(exe);
        // A kill -9 of the tuner ends the bench too.
        die_with_parent(&mut c).arg("bench").arg(target);
        if let Some(s) = size {
            // Each stream reads its own part of the file or device.
            c.arg(format!("--size={}", s / u64::from(self.streams.max(1))));
        }
        c.args([
            "--rw=read",
            "--bs=1M",
            "--cache=cold",
            "--drop-caches",
            "-q",
        ])
        .args([
            "--output-format=json",
            "--time-based",
            "--runtime",
            &self.runtime,
        ])
        .arg(format!("--numjobs={}", self.streams))
        .arg("--name")
        .arg(format!("ra-{kb}k"))
        .args(["--tag", "tune=readahead", "--tag"])
        .arg(format!("tune_id={tune_id}"))
        .arg("--tag")
        .arg(format!("readahead_kb={kb}"));
        if self.streams > 1 {
            c.arg("--shared-file");
        }
        for (k, v) in tags {
            c.arg("--tag").arg(format!("{k}={v}"));
        }
        if let Some(n) = self.record.note() {
            c.arg("--note").arg(n);
        }
        if self.no_save || repeat {
            c.arg("--no-save");
        } else {
            c.arg("--db").arg(&self.db.db);
        }
        let out = match c.stderr(Stdio::inherit()).output() {
            Ok(o) => o,
            Err(e) => {
                return Point {
                    kb,
                    mbps: None,
                    note: format!("cannot run storlab bench: {e}"),
                    cache_verified: None,
                    flags: Vec::new(),
                };
            }
        };
        let json: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
        let mbps = json
            .as_ref()
            .and_then(|j| j["phases"][0]["read"]["bw_bytes_per_s"].as_f64())
            .map(|b| b / 1e6);
        let cache_ok = json
            .as_ref()
            .and_then(|j| j["phases"][0]["cache"]["verified"].as_bool());
        let flags = match &json {
            Some(j) if out.status.success() && mbps.is_some() => point_flags(&j["phases"][0], size),
            _ => Vec::new(),
        };
        let note = if out.status.success() {
            flags.join("; ")
        } else {
            format!("bench exited with {}", out.status)
        };
        Point {
            kb,
            mbps,
            note,
            cache_verified: cache_ok,
            flags,
        }
    }

    fn is_json(&self) -> bool {
        self.json || self.output_format == TableFormat::Json
    }

    /// The stored run of each point (by its `tune_id` and `readahead_kb`
    /// tags, in order); none with `--no-save` or when nothing was stored.
    fn run_ids(&self, points: &[Point], tune_id: &str) -> Vec<Option<i64>> {
        let mut runs: Vec<StoredRun> = if self.no_save {
            Vec::new()
        } else {
            self.db
                .open_existing()
                .and_then(|st| {
                    Ok(st.select(
                        &[RunSelector::Tags(vec![("tune_id".into(), tune_id.into())])],
                        false,
                    )?)
                })
                .unwrap_or_default()
        };
        runs.sort_by_key(|r| r.id);
        points
            .iter()
            .map(|p| {
                let kb = p.kb.to_string();
                let i = runs
                    .iter()
                    .position(|r| r.tags.get("readahead_kb") == Some(&kb))?;
                Some(runs.remove(i).id)
            })
            .collect()
    }

    /// The tuning as one document: what `--json` prints and the table shows.
    fn outcome<'a>(
        &'a self,
        stack: &'a [Layer],
        saved: &SavedState,
        (points, noise): (&'a [Point], Option<NoiseDoc>),
        restored: &[Restored],
        recovered: Option<&[Restored]>,
        tune_id: &'a str,
    ) -> TuneDoc<'a> {
        let best = points
            .iter()
            .filter_map(|p| p.mbps.map(|m| (p.kb, m)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let verdict = verdict(points, noise.as_ref(), best.map(|b| b.0));
        // The table shows no run ids: the store is read for JSON only.
        let ids = if self.is_json() {
            self.run_ids(points, tune_id)
        } else {
            vec![None; points.len()]
        };
        let top = &stack[0];
        TuneDoc {
            target: &self.target,
            device: &top.name,
            layers: stack
                .iter()
                .map(|l| LayerDoc {
                    name: &l.name,
                    path: &l.path,
                    // Every layer's value was read into `saved` first.
                    original_kb: saved.original_kb[&l.name].1,
                })
                .collect(),
            tune_id,
            runtime: &self.runtime,
            streams: self.streams,
            points: points
                .iter()
                .zip(&ids)
                .map(|(p, id)| PointDoc {
                    readahead_kb: p.kb,
                    mb_s: p.mbps,
                    vs_best_pct: match (p.mbps, best) {
                        (Some(m), Some((_, b))) if b > 0.0 => Some(m / b * 100.0),
                        _ => None,
                    },
                    cache_verified: p.cache_verified,
                    note: &p.note,
                    flags: &p.flags,
                    run_id: *id,
                })
                .collect(),
            best: best.filter(|_| verdict.reasons.is_empty()).map(|(kb, m)| BestDoc {
                readahead_kb: kb,
                mb_s: m,
                set_command: format!("blockdev --setra {} /dev/{}", kb * 2, top.name),
                udev_rule: format!(
                    "ACTION==\"add|change\", KERNEL==\"{}\", ATTR{{queue/read_ahead_kb}}=\"{kb}\"",
                    top.name
                ),
            }),
            verdict,
            noise,
            restored: restored.to_vec(),
            recovered_from_earlier_run: recovered.map(<[Restored]>::to_vec),
            db: (!self.no_save).then_some(self.db.db.as_path()),
        }
    }
}

/// Why one bench phase's figure cannot be recommended from: its eviction
/// was not verified, it lasted under 1 s, or it read its region more than
/// once with the page cache able to hold it (`size`: the region read).
fn point_flags(phase: &serde_json::Value, size: Option<u64>) -> Vec<String> {
    let mut flags = Vec::new();
    if phase["cache"]["verified"].as_bool() != Some(true) {
        flags.push("cache eviction not verified".to_string());
    }
    let elapsed = phase["elapsed_ns"].as_u64().unwrap_or(0);
    if elapsed < MIN_POINT_NS {
        flags.push(format!("ran {:.2} s, under 1 s", elapsed as f64 / 1e9));
    }
    let read = phase["read"]["bytes"].as_u64().unwrap_or(0);
    if phase["cache"]["may_be_cached"].as_bool() == Some(true) && size.is_some_and(|s| read > s) {
        flags.push("read again from the page cache (region under 2× RAM)".to_string());
    }
    flags
}

/// The noise of the repeated best two and the lead of the faster.
fn noise_of(repeats: Vec<RepeatDoc>) -> NoiseDoc {
    let mean = |r: &RepeatDoc| {
        r.repeat_mb_s
            .map_or(r.first_mb_s, |x| (x + r.first_mb_s) / 2.0)
    };
    let noise_pct = repeats
        .iter()
        .map(|r| match r.repeat_mb_s {
            Some(x) if x.max(r.first_mb_s) > 0.0 => {
                (x - r.first_mb_s).abs() / x.max(r.first_mb_s) * 100.0
            }
            // A repeat that failed measured no noise: nothing is known.
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max);
    let lead_pct = match repeats.as_slice() {
        [a, b] if mean(b) > 0.0 => (mean(a) - mean(b)) / mean(b) * 100.0,
        _ => 0.0,
    };
    NoiseDoc {
        repeats,
        noise_pct,
        lead_pct,
    }
}

/// A recommendation only from trusted points whose best is clearly ahead
/// of the next (beyond the noise measured by repeating the two).
fn verdict(points: &[Point], noise: Option<&NoiseDoc>, fastest_kb: Option<u64>) -> Verdict {
    let mut reasons = Vec::new();
    let flagged = points.iter().filter(|p| !p.flags.is_empty()).count();
    if flagged > 0 {
        reasons.push(format!(
            "{flagged} of {} point(s) cannot be trusted (see their notes): give a longer --runtime, \
             a larger --size, or a device or file over 2× RAM",
            points.len(),
        ));
    }
    let measured = points.iter().filter(|p| p.mbps.is_some()).count();
    match noise {
        _ if measured == 0 => reasons.push("no value was measured".into()),
        None if measured < 2 => {
            reasons.push("only one value was measured: there is nothing to compare it with".into())
        }
        None => reasons.push("the run stopped before the best two were read again".into()),
        Some(n) => {
            if let Some(r) = n.repeats.iter().find(|r| r.repeat_mb_s.is_none()) {
                reasons.push(format!(
                    "reading {} again failed ({}): the noise is unknown",
                    format_bytes(r.readahead_kb * 1024),
                    r.note
                ));
            } else if let Some(r) = n.repeats.iter().find(|r| !r.note.is_empty())
                && flagged == 0
            {
                reasons.push(format!(
                    "reading {} again cannot be trusted ({})",
                    format_bytes(r.readahead_kb * 1024),
                    r.note
                ));
            } else if n.lead_pct <= n.noise_pct {
                reasons.push(format!(
                    "the fastest leads the next by {:.1} %, not more than the run-to-run noise \
                     ({:.1} %): the difference is not measured",
                    n.lead_pct, n.noise_pct
                ));
            }
        }
    }
    Verdict {
        conclusion: if reasons.is_empty() {
            "best"
        } else {
            "inconclusive"
        },
        reasons,
        fastest_kb,
    }
}

/// The table and the advice, from the same document `--json` prints.
fn render(doc: &TuneDoc) -> String {
    let mut t = crate::commands::common::result_table();
    t.set_header(vec!["read-ahead", "MB/s", "vs best", "note"]);
    for p in &doc.points {
        t.add_row(vec![
            Cell::new(format_bytes(p.readahead_kb * 1024)),
            Cell::new(p.mb_s.map_or_else(|| "-".into(), |m| format!("{m:.1}")))
                .set_alignment(CellAlignment::Right),
            Cell::new(
                p.vs_best_pct
                    .map_or_else(|| "-".into(), |v| format!("{v:.0} %")),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(p.note),
        ]);
    }
    let mut out = format!(
        "read-ahead of {} (under {}; layers: {})\n{t}\n",
        doc.device,
        doc.target.display(),
        doc.layers
            .iter()
            .map(|l| format!("{} {} KiB", l.name, l.original_kb))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str("MB/s = 10^6 bytes/s: cold-cache buffered sequential read, 1 MiB requests.\n");
    if let Some(n) = &doc.noise {
        out.push_str(&format!(
            "Run-to-run noise (best two read again): {:.1} %; the fastest leads the next by {:.1} %.\n",
            n.noise_pct, n.lead_pct
        ));
    }
    if doc.verdict.conclusion == "inconclusive" {
        out.push_str(&format!(
            "Inconclusive: no read-ahead is recommended{}:\n",
            doc.verdict
                .fastest_kb
                .map(|kb| format!(" (fastest measured: {})", format_bytes(kb * 1024)))
                .unwrap_or_default()
        ));
        for r in &doc.verdict.reasons {
            out.push_str(&format!("  - {r}\n"));
        }
    }
    if let Some(b) = &doc.best {
        out.push_str(&format!(
            "Best: {} ({:.1} MB/s). To set it now: {}\n\
             To keep it across reboots, a udev rule (e.g. /etc/udev/rules.d/60-storlab-readahead.rules):\n  {}\n",
            format_bytes(b.readahead_kb * 1024),
            b.mb_s,
            b.set_command,
            b.udev_rule,
        ));
    }
    out.push_str(&format!("Restored: {}\n", describe_restored(&doc.restored)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(kb: u64, mbps: f64, flags: &[&str]) -> Point {
        Point {
            kb,
            mbps: Some(mbps),
            note: flags.join("; "),
            cache_verified: Some(true),
            flags: flags.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn rep(kb: u64, first: f64, again: f64) -> RepeatDoc {
        RepeatDoc {
            readahead_kb: kb,
            first_mb_s: first,
            repeat_mb_s: Some(again),
            note: String::new(),
        }
    }

    /// Trusted points and a lead beyond the noise: a recommendation. A
    /// lead within the noise, or one flagged point, or one value only:
    /// inconclusive, each with its reason.
    #[test]
    fn a_value_is_recommended_only_when_trusted_and_ahead_beyond_the_noise() {
        let points = [
            pt(128, 100.0, &[]),
            pt(1024, 200.0, &[]),
            pt(4096, 150.0, &[]),
        ];
        let clear = noise_of(vec![rep(1024, 200.0, 196.0), rep(4096, 150.0, 152.0)]);
        assert!(clear.noise_pct < 2.1 && clear.lead_pct > 30.0);
        let v = verdict(&points, Some(&clear), Some(1024));
        assert_eq!(
            (v.conclusion, v.reasons.len()),
            ("best", 0),
            "{:?}",
            v.reasons
        );

        let close = noise_of(vec![rep(1024, 200.0, 150.0), rep(4096, 150.0, 148.0)]);
        let v = verdict(&points, Some(&close), Some(1024));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("run-to-run noise"), "{:?}", v.reasons);

        let flagged = [
            pt(128, 100.0, &[]),
            pt(1024, 200.0, &["ran 0.40 s, under 1 s"]),
        ];
        let v = verdict(&flagged, Some(&clear), Some(1024));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("1 of 2 point(s)"), "{:?}", v.reasons);

        let v = verdict(&points[..1], None, Some(128));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("only one value"), "{:?}", v.reasons);
    }

    /// A phase's own figures flag it: unverified eviction, under 1 s, a
    /// region read more than once that the page cache can hold.
    #[test]
    fn a_point_is_flagged_from_its_phase_figures() {
        let ok = serde_json::json!({"elapsed_ns": 3_000_000_000u64,
            "cache": {"verified": true, "may_be_cached": false}, "read": {"bytes": 1u64 << 30}});
        assert!(point_flags(&ok, Some(1 << 30)).is_empty());
        let bad = serde_json::json!({"elapsed_ns": 400_000_000u64,
            "cache": {"verified": false, "may_be_cached": true}, "read": {"bytes": 3u64 << 20}});
        let f = point_flags(&bad, Some(1 << 20));
        assert_eq!(f.len(), 3, "{f:?}");
    }

    /// A run killed while its scratch file existed: the next start's
    /// recovery removes the file with the state (and restores the values).
    #[test]
    fn recovery_removes_the_scratch_file_a_killed_run_left() {
        let d = tempfile::tempdir().unwrap();
        let scratch = d.path().join("storlab-tune-readahead.1.dat");
        std::fs::write(&scratch, b"data").unwrap();
        let state = d.path().join("tune-readahead.json");
        let saved = SavedState {
            pid: u32::MAX, // no such process
            original_kb: BTreeMap::new(),
            scratch: Some(scratch.clone()),
            identity: BTreeMap::new(),
        };
        std::fs::write(&state, serde_json::to_string(&saved).unwrap()).unwrap();
        assert!(
            recover(&state)
                .unwrap()
                .is_some_and(|r| r.restored.is_empty())
        );
        assert!(!scratch.exists() && !state.exists());
        // A state file of an older storlab (no scratch field) still loads.
        std::fs::write(&state, r#"{"pid": 4294967295, "original_kb": {}}"#).unwrap();
        assert!(
            recover(&state)
                .unwrap()
                .is_some_and(|r| r.restored.is_empty())
        );
    }

    /// A fake `/sys/block/loop3` over `image`, read-ahead `kb`.
    fn fake_loop(sys: &Path, image: &Path, kb: u64) -> PathBuf {
        let dir = sys.join("loop3");
        std::fs::create_dir_all(dir.join("loop")).unwrap();
        std::fs::create_dir_all(dir.join("queue")).unwrap();
        std::fs::write(dir.join("dev"), "7:3\n").unwrap();
        std::fs::write(
            dir.join("loop/backing_file"),
            format!("{}\n", image.display()),
        )
        .unwrap();
        let ra = dir.join("queue/read_ahead_kb");
        std::fs::write(&ra, format!("{kb}\n")).unwrap();
        ra
    }

    /// The state saved for `ra` (its identity as now) with `kb` as the
    /// original value.
    fn save(state: &Path, ra: &Path, kb: u64) {
        let saved = SavedState {
            pid: u32::MAX,
            original_kb: [("loop3".to_string(), (ra.to_path_buf(), kb))].into(),
            scratch: None,
            identity: [(
                "loop3".to_string(),
                Identity::of(sys_dir(ra).unwrap()).unwrap(),
            )]
            .into(),
        };
        std::fs::write(state, serde_json::to_string(&saved).unwrap()).unwrap();
    }

    /// A loop device detached and attached to another image since the
    /// state was saved: the old value is not written to it; the same
    /// device (same image) gets its value back.
    #[test]
    fn recovery_writes_only_to_the_device_it_saved() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.img"), d.path().join("b.img"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let state = d.path().join("tune-readahead.loop3.json");
        let ra = fake_loop(d.path(), &a, 8192);
        save(&state, &ra, 256);
        // Re-attached to b.img: left alone, and the state is dropped.
        fake_loop(d.path(), &b, 128);
        let r = recover(&state).unwrap().unwrap();
        assert!(r.restored.is_empty(), "{r:?}");
        assert!(
            r.dropped.len() == 1 && r.dropped[0].contains("b.img"),
            "{r:?}"
        );
        assert_eq!(read_kb(&ra).unwrap(), 128);
        assert!(!state.exists());
        // Detached (no backing file): left alone too.
        save(&state, &fake_loop(d.path(), &a, 8192), 256);
        std::fs::remove_file(d.path().join("loop3/loop/backing_file")).unwrap();
        let r = recover(&state).unwrap().unwrap();
        assert!(
            r.restored.is_empty() && r.dropped[0].contains("gone"),
            "{r:?}"
        );
        assert_eq!(read_kb(&ra).unwrap(), 8192);
        // The same image: restored.
        save(&state, &fake_loop(d.path(), &a, 8192), 256);
        let r = recover(&state).unwrap().unwrap();
        assert!(r.dropped.is_empty(), "{r:?}");
        assert_eq!(read_kb(&ra).unwrap(), 256);
    }

    /// The lock of a device is exclusive while held (by another open file
    /// description, as another process would hold it) and names its pid.
    #[test]
    fn a_device_lock_is_exclusive_and_names_its_holder() {
        let d = tempfile::tempdir().unwrap();
        let held = lock_device(d.path(), "loop3").unwrap().unwrap();
        assert_eq!(
            lock_device(d.path(), "loop3").unwrap().err(),
            Some(Some(std::process::id()))
        );
        assert!(lock_device(d.path(), "loop4").unwrap().is_ok());
        drop(held);
        assert!(lock_device(d.path(), "loop3").unwrap().is_ok());
    }
}
