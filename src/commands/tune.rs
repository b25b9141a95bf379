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

/// The state file of an earlier run that did not finish: put its values
/// back. Refuses while that run is still alive.
fn recover(state_file: &Path) -> Result<Option<Vec<Restored>>> {
    let text = match std::fs::read_to_string(state_file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", state_file.display())),
    };
    let s: SavedState = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is damaged; check the read-ahead values by hand, then remove it",
            state_file.display()
        )
    })?;
    if s.pid != std::process::id() && Path::new(&format!("/proc/{}", s.pid)).exists() {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", s.pid)).unwrap_or_default();
        if comm.trim() == "storlab" {
            bail!(
                "another storlab tune (pid {}) is changing these settings; wait for it to finish",
                s.pid
            );
        }
    }
    let mut restored = Vec::new();
    for (name, (path, kb)) in &s.original_kb {
        write_kb(path, *kb)?;
        restored.push(Restored {
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
    std::fs::remove_file(state_file)?;
    Ok(Some(restored))
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
    /// The fastest value (never left set: the originals are put back);
    /// none when no measurement succeeded.
    best: Option<BestDoc>,
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
}

impl ReadaheadArgs {
    pub fn execute(self) -> Result<Outcome> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
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
        let state_file = self.state_dir.join("tune-readahead.json");
        std::fs::create_dir_all(&self.state_dir)
            .with_context(|| format!("cannot create {}", self.state_dir.display()))?;
        let recovered = recover(&state_file)?;
        if let Some(r) = &recovered {
            eprintln!(
                "storlab: restored the read-ahead an earlier, interrupted run left changed: {}",
                describe_restored(r)
            );
        }
        let stack = layers(&self.target)?;
        let mut saved = SavedState {
            pid: std::process::id(),
            original_kb: BTreeMap::new(),
            scratch: self.target.is_dir().then(|| scratch_file(&self.target)),
        };
        for l in &stack {
            saved
                .original_kb
                .insert(l.name.clone(), (l.path.clone(), read_kb(&l.path)?));
        }
        // Written (and synced) before anything changes.
        let tmp = state_file.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&saved)?)?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, &state_file)?;
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
        let points = result?;
        let restored = restore?.unwrap_or_default();
        let doc = self.outcome(
            &stack,
            &saved,
            &points,
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
    ) -> Result<Vec<Point>> {
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
                None => 2 * storlab_bench::host_info().mem_total_bytes,
            };
            let file = scratch_file(&self.target);
            eprintln!(
                "laying out {} ({}) for the reads",
                file.display(),
                format_bytes(size)
            );
            let status = Command::new(&exe)
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
                });
                continue;
            }
            eprintln!(
                "read-ahead {} on {}: streaming read",
                format_bytes(v.0),
                top.name
            );
            points.push(self.one_point(&exe, &read_target, size_arg, kb, tune_id, tags));
        }
        if let Some(f) = scratch {
            let _ = std::fs::remove_file(f);
        }
        Ok(points)
    }

    /// A cold-cache buffered sequential read of `target` (a child storlab
    /// bench, so saving and safety are bench's own).
    fn one_point(
        &self,
        exe: &Path,
        target: &Path,
        size: Option<u64>,
        kb: u64,
        tune_id: &str,
        tags: &BTreeMap<String, String>,
    ) -> Point {
        let mut c = Command::new(exe);
        c.arg("bench").arg(target);
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
        .args(["--output-format=json", "--runtime", &self.runtime])
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
        if self.no_save {
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
        let note = match (out.status.success(), cache_ok) {
            (false, _) => format!("bench exited with {}", out.status),
            (true, Some(false)) => "cache eviction not verified".into(),
            _ => String::new(),
        };
        Point {
            kb,
            mbps,
            note,
            cache_verified: cache_ok,
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
        points: &'a [Point],
        restored: &[Restored],
        recovered: Option<&[Restored]>,
        tune_id: &'a str,
    ) -> TuneDoc<'a> {
        let best = points
            .iter()
            .filter_map(|p| p.mbps.map(|m| (p.kb, m)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
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
                    run_id: *id,
                })
                .collect(),
            best: best.map(|(kb, m)| BestDoc {
                readahead_kb: kb,
                mb_s: m,
                set_command: format!("blockdev --setra {} /dev/{}", kb * 2, top.name),
                udev_rule: format!(
                    "ACTION==\"add|change\", KERNEL==\"{}\", ATTR{{queue/read_ahead_kb}}=\"{kb}\"",
                    top.name
                ),
            }),
            restored: restored.to_vec(),
            recovered_from_earlier_run: recovered.map(<[Restored]>::to_vec),
            db: (!self.no_save).then_some(self.db.db.as_path()),
        }
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
        };
        std::fs::write(&state, serde_json::to_string(&saved).unwrap()).unwrap();
        assert!(recover(&state).unwrap().is_some_and(|r| r.is_empty()));
        assert!(!scratch.exists() && !state.exists());
        // A state file of an older storlab (no scratch field) still loads.
        std::fs::write(&state, r#"{"pid": 4294967295, "original_kb": {}}"#).unwrap();
        assert!(recover(&state).unwrap().is_some_and(|r| r.is_empty()));
    }
}
