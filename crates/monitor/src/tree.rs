//! The block-device stack, read from `/sys/block`: which device sits on
//! which, so totals can count each request once.
//!
//! Edges ("upper sits on lower") come from three places:
//!
//! * **partition**: `/sys/block/vda/vda1` — a request to `vda1` is counted
//!   by `vda1` and again by `vda`;
//! * **holder**: `/sys/block/*/slaves/` and `holders/` — device-mapper
//!   (LVM, crypt, multipath), md RAID and bcache members;
//! * **file**: `/sys/block/loopN/loop/backing_file` — a loop device over a
//!   file sits on the device under the file's file system.
//!
//! Layers: the **top** devices are those nothing is stacked on at the block
//! layer (what file systems and applications use); the **leaf** devices sit on
//! nothing (physical disks, or a loop over a file in tmpfs). A top device that
//! also holds the backing files of loop devices counts their I/O too, so the
//! top total takes those loop devices' figures out of it ("own" I/O).

use crate::Error;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use storlab_host::mountinfo::{self, Mount};

/// Where the kernel's files are. Tests point this at a recorded fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysPaths {
    /// `/sys` (the tree reads `<sysfs>/block`).
    pub sysfs: PathBuf,
    /// `/proc` (`diskstats`, `stat`, `self/mountinfo`).
    pub proc: PathBuf,
    /// The running system: files can be `stat`ed to find their device.
    /// A fixture resolves paths through its recorded mountinfo only.
    pub live: bool,
}

impl Default for SysPaths {
    fn default() -> Self {
        SysPaths::live()
    }
}

impl SysPaths {
    /// The running kernel's `/sys` and `/proc`.
    pub fn live() -> Self {
        SysPaths {
            sysfs: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
            live: true,
        }
    }
    /// A recorded tree: `<root>/sys` and `<root>/proc`.
    pub fn recorded(root: &Path) -> Self {
        SysPaths {
            sysfs: root.join("sys"),
            proc: root.join("proc"),
            live: false,
        }
    }
    /// `--sys-root DIR` as the commands take it: a recorded tree under DIR
    /// (checked to hold `sys/block`), or the live system when absent.
    pub fn from_root(root: Option<&Path>) -> Result<Self, crate::Error> {
        match root {
            None => Ok(SysPaths::live()),
            Some(r) if r.join("sys/block").is_dir() => Ok(SysPaths::recorded(r)),
            Some(r) => Err(crate::Error::NotFound(format!(
                "--sys-root {}: no sys/block under it; give the directory that holds the recorded sys/ and proc/",
                r.display()
            ))),
        }
    }
    pub fn diskstats(&self) -> PathBuf {
        self.proc.join("diskstats")
    }
    pub fn stat(&self) -> PathBuf {
        self.proc.join("stat")
    }
    pub fn mountinfo(&self) -> PathBuf {
        self.proc.join("self/mountinfo")
    }
}

/// What kind of block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Disk,
    Partition,
    Loop,
    /// device-mapper (LVM, dm-crypt, multipath, ...)
    Dm,
    /// md software RAID
    Md,
    Zram,
    Other,
}

impl DeviceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Disk => "disk",
            DeviceKind::Partition => "part",
            DeviceKind::Loop => "loop",
            DeviceKind::Dm => "dm",
            DeviceKind::Md => "md",
            DeviceKind::Zram => "zram",
            DeviceKind::Other => "other",
        }
    }
}

/// How an upper device sits on a lower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Partition,
    Holder,
    /// A loop device's backing file lives on the lower device's file system.
    File,
}

/// One edge seen from one end.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Link {
    pub device: String,
    pub kind: LinkKind,
}

/// Where a device's file system is mounted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MountRef {
    pub mount_point: PathBuf,
    pub fs_type: String,
}

/// One block device and its place in the stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Device {
    /// Kernel name (`vda`, `vda1`, `dm-0`, `md127`, `loop3`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DeviceKind,
    pub size_bytes: u64,
    /// The sysfs directory of the device.
    #[serde(skip)]
    pub sysfs_dir: PathBuf,
    /// device-mapper name (`vg0-data`), from `dm/name`.
    pub dm_name: Option<String>,
    /// md RAID level (`raid5`), from `md/level`.
    pub md_level: Option<String>,
    /// Loop backing file, from `loop/backing_file`.
    pub backing_file: Option<PathBuf>,
    /// File system type under the backing file when no block device is
    /// (e.g. `tmpfs`).
    pub backing_fs: Option<String>,
    /// A loop device's `loop/dio`: whether it reaches its backing file
    /// with direct I/O (`true`: every request goes on to the device under
    /// the file as it is), or through the page cache (`false`, losetup's
    /// default: a read may be served from memory and never reach it).
    #[serde(skip)]
    pub direct_io: Option<bool>,
    /// Devices this one sits on.
    pub lowers: Vec<Link>,
    /// Devices that sit on this one.
    pub uppers: Vec<Link>,
    pub mounts: Vec<MountRef>,
}

impl Device {
    /// A human label: `dm-0 (vg0-data)`.
    pub fn label(&self) -> String {
        match &self.dm_name {
            Some(n) => format!("{} ({n})", self.name),
            None => self.name.clone(),
        }
    }
    /// Whether anything sits on it at the block layer (partitions, holders).
    pub fn has_block_uppers(&self) -> bool {
        self.uppers.iter().any(|l| l.kind != LinkKind::File)
    }
}

/// Which devices' figures to show and total (with the `clap` feature, the
/// choices of `storlab monitor --layer`, each documented by its help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// What file systems sit on (default): partitions, LVM volumes, md arrays, loop devices
    #[default]
    Top,
    /// Physical devices (what nothing else is under)
    Leaf,
    /// Every device, with a total per level of the stack
    // (level 0 = the leaves)
    All,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Top => "top",
            Layer::Leaf => "leaf",
            Layer::All => "all",
        }
    }
    pub fn parse(s: &str) -> Option<Layer> {
        match s {
            "top" => Some(Layer::Top),
            "leaf" => Some(Layer::Leaf),
            "all" => Some(Layer::All),
            _ => None,
        }
    }
}

/// One term of a total: a device's figures minus those of the loop devices
/// whose backing files it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Term {
    pub device: String,
    /// Loop devices whose backing files are on `device`: what reached
    /// `device` through them is taken out of its figures.
    pub minus: Vec<String>,
    /// Those of `minus` that read through the page cache (buffered loop
    /// devices): only their writes, discards and flushes are taken out.
    /// Their reads may have been served from memory without reaching
    /// `device`, so taking them out would drop `device`'s own reads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buffered: Vec<String>,
}

/// A total that counts each request once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TotalGroup {
    /// What it totals: `top`, `leaf`, or with `--layer all` the kinds of
    /// device on one level of the stack (`disk`, `part+loop`, `dm`; a name
    /// that two levels would share ends in `@LEVEL`).
    pub name: String,
    pub terms: Vec<Term>,
}

/// The devices to show (in order) and the totals to compute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selection {
    pub layer: Layer,
    pub devices: Vec<String>,
    pub totals: Vec<TotalGroup>,
}

/// The whole device stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceTree {
    pub devices: BTreeMap<String, Device>,
    #[serde(skip)]
    pub mounts: Vec<Mount>,
    #[serde(skip)]
    by_devnum: HashMap<(u32, u32), String>,
    #[serde(skip)]
    live: bool,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

fn parse_devnum(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn dir_names(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn new_device(name: &str, dir: &Path, kind: DeviceKind) -> Option<Device> {
    let (major, minor) = parse_devnum(&read_trim(&dir.join("dev"))?)?;
    let size_bytes = read_trim(&dir.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0)
        * 512;
    Some(Device {
        name: name.to_string(),
        major,
        minor,
        kind,
        size_bytes,
        sysfs_dir: dir.to_path_buf(),
        dm_name: None,
        md_level: None,
        backing_file: None,
        backing_fs: None,
        direct_io: None,
        lowers: Vec::new(),
        uppers: Vec::new(),
        mounts: Vec::new(),
    })
}

impl DeviceTree {
    /// Read the tree from `<sysfs>/block` and `<proc>/self/mountinfo`.
    pub fn load(paths: &SysPaths) -> Result<DeviceTree, Error> {
        let block = paths.sysfs.join("block");
        let entries = std::fs::read_dir(&block).map_err(|e| Error::Io {
            path: block.clone(),
            err: e,
        })?;
        let mut devices = BTreeMap::new();
        let mut edges: BTreeSet<(String, String, LinkKind)> = BTreeSet::new();
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let dir = block.join(&name);
            let kind = if dir.join("dm").is_dir() {
                DeviceKind::Dm
            } else if dir.join("md").is_dir() {
                DeviceKind::Md
            } else if dir.join("loop").is_dir() || name.starts_with("loop") {
                DeviceKind::Loop
            } else if name.starts_with("zram") {
                DeviceKind::Zram
            } else {
                DeviceKind::Disk
            };
            let Some(mut dev) = new_device(&name, &dir, kind) else {
                continue;
            };
            dev.dm_name = read_trim(&dir.join("dm/name"));
            dev.md_level = read_trim(&dir.join("md/level"));
            dev.backing_file = read_trim(&dir.join("loop/backing_file"))
                .filter(|s| !s.is_empty())
                .map(PathBuf::from);
            dev.direct_io = read_trim(&dir.join("loop/dio")).map(|s| s == "1");
            for s in dir_names(&dir.join("slaves")) {
                edges.insert((name.clone(), s, LinkKind::Holder));
            }
            for h in dir_names(&dir.join("holders")) {
                edges.insert((h, name.clone(), LinkKind::Holder));
            }
            for sub in dir_names(&dir) {
                let pdir = dir.join(&sub);
                if !pdir.join("partition").is_file() {
                    continue;
                }
                if let Some(part) = new_device(&sub, &pdir, DeviceKind::Partition) {
                    edges.insert((sub.clone(), name.clone(), LinkKind::Partition));
                    for h in dir_names(&pdir.join("holders")) {
                        edges.insert((h, sub.clone(), LinkKind::Holder));
                    }
                    devices.insert(sub.clone(), part);
                }
            }
            devices.insert(name, dev);
        }
        let mounts = match std::fs::read_to_string(paths.mountinfo()) {
            Ok(t) => mountinfo::parse(&t)?,
            Err(_) => Vec::new(),
        };
        let by_devnum = devices
            .values()
            .map(|d: &Device| ((d.major, d.minor), d.name.clone()))
            .collect();
        let mut tree = DeviceTree {
            devices,
            mounts,
            by_devnum,
            live: paths.live,
        };
        // Loop backing files: the device under the file's file system.
        let loops: Vec<(String, PathBuf)> = tree
            .devices
            .values()
            .filter_map(|d| d.backing_file.clone().map(|f| (d.name.clone(), f)))
            .collect();
        for (name, file) in loops {
            let clean = PathBuf::from(
                file.to_string_lossy()
                    .trim_end_matches(" (deleted)")
                    .to_string(),
            );
            match tree.device_of_path(&clean) {
                Some(lower) if lower != name => {
                    edges.insert((name, lower, LinkKind::File));
                }
                _ => {
                    let fs = mountinfo::mount_of(&tree.mounts, &clean).map(|m| m.fs_type.clone());
                    if let Some(d) = tree.devices.get_mut(&name) {
                        d.backing_fs = fs;
                    }
                }
            }
        }
        for (upper, lower, kind) in edges {
            if !(tree.devices.contains_key(&upper) && tree.devices.contains_key(&lower)) {
                continue;
            }
            if let Some(d) = tree.devices.get_mut(&upper) {
                d.lowers.push(Link {
                    device: lower.clone(),
                    kind,
                });
            }
            if let Some(d) = tree.devices.get_mut(&lower) {
                d.uppers.push(Link {
                    device: upper.clone(),
                    kind,
                });
            }
        }
        let mounts = tree.mounts.clone();
        for m in &mounts {
            if let Some(name) = tree.device_of_mount(m) {
                if let Some(d) = tree.devices.get_mut(&name) {
                    if !d.mounts.iter().any(|r| r.mount_point == m.mount_point) {
                        d.mounts.push(MountRef {
                            mount_point: m.mount_point.clone(),
                            fs_type: m.fs_type.clone(),
                        });
                    }
                }
            }
        }
        Ok(tree)
    }

    pub fn get(&self, name: &str) -> Option<&Device> {
        self.devices.get(name)
    }

    /// The device with this major:minor number.
    pub fn by_devnum(&self, major: u32, minor: u32) -> Option<&Device> {
        self.by_devnum
            .get(&(major, minor))
            .and_then(|n| self.devices.get(n))
    }

    /// The block device a mount sits on: by its major:minor, or (btrfs and
    /// others report an anonymous 0:N) by its `/dev/...` source.
    pub fn device_of_mount(&self, m: &Mount) -> Option<String> {
        if let Some(d) = self.by_devnum(m.major, m.minor) {
            return Some(d.name.clone());
        }
        let src = m.source.strip_prefix("/dev/")?;
        self.device_by_dev_name(src)
    }

    /// `vda`, `mapper/vg0-data`, `md/home`, `vg0-data` → kernel name.
    pub fn device_by_dev_name(&self, s: &str) -> Option<String> {
        if self.devices.contains_key(s) {
            return Some(s.to_string());
        }
        let tail = s
            .strip_prefix("mapper/")
            .or_else(|| s.strip_prefix("md/"))
            .unwrap_or(s);
        if let Some(d) = self
            .devices
            .values()
            .find(|d| d.dm_name.as_deref() == Some(tail))
        {
            return Some(d.name.clone());
        }
        s.strip_prefix("md/")
            .and_then(|n| self.devices.contains_key(n).then(|| n.to_string()))
    }

    /// The block device under the file system that holds `path`: `stat` on
    /// a live system, the mount table otherwise (or when `stat` fails).
    pub fn device_of_path(&self, path: &Path) -> Option<String> {
        if self.live {
            if let Some((maj, min)) = stat_dev(path) {
                if let Some(d) = self.by_devnum(maj, min) {
                    return Some(d.name.clone());
                }
            }
        }
        let m = mountinfo::mount_of(&self.mounts, path)?;
        self.device_of_mount(m)
    }

    /// Resolve what the user typed: a kernel name (`vda1`, `dm-0`), a
    /// device-mapper name, a `/dev/...` node, or a path (the device under
    /// its file system).
    pub fn resolve(&self, target: &str) -> Result<String, Error> {
        if let Some(n) = self.device_by_dev_name(target) {
            return Ok(n);
        }
        let p = Path::new(target);
        if let Some(rest) = target.strip_prefix("/dev/") {
            if self.live {
                if let Some((maj, min)) = stat_rdev(p) {
                    if let Some(d) = self.by_devnum(maj, min) {
                        return Ok(d.name.clone());
                    }
                }
            }
            if let Some(n) = self.device_by_dev_name(rest) {
                return Ok(n);
            }
        }
        if self.live {
            return self.resolve_live_path(p);
        }
        if target.starts_with('/') {
            if let Some(n) = self.device_of_path(p) {
                return Ok(n);
            }
        }
        Err(Error::NotFound(format!(
            "'{target}' is not a device of the recorded tree and no recorded mount holds it"
        )))
    }

    /// [`resolve`](Self::resolve) for a path given as the OS passed it: a
    /// name that is not UTF-8 can only be a path (never a device name in
    /// /sys/block), so it goes straight to the device under its file system.
    pub fn resolve_path(&self, target: &Path) -> Result<String, Error> {
        match target.to_str() {
            Some(t) => self.resolve(t),
            None if self.live => self.resolve_live_path(target),
            None => self.device_of_path(target).ok_or_else(|| {
                Error::NotFound(format!(
                    "'{}' is not a device of the recorded tree and no recorded mount holds it",
                    target.display()
                ))
            }),
        }
    }

    /// The device under an existing path's file system (live trees only).
    fn resolve_live_path(&self, p: &Path) -> Result<String, Error> {
        let target = p.display();
        if !p.exists() {
            return Err(Error::NotFound(format!(
                "'{target}' is neither a block device the kernel lists in /sys/block nor an existing path; \
                 run `storlab monitor --tree` to see the devices"
            )));
        }
        let canon = p.canonicalize().map_err(|e| Error::Io {
            path: p.to_path_buf(),
            err: e,
        })?;
        // A block device node anywhere (a symlink to /dev/loop5, a node
        // made with mknod elsewhere) is that device, not a path on the file
        // system that holds the node.
        if let Some((maj, min)) = stat_rdev(&canon)
            && let Some(d) = self.by_devnum(maj, min)
        {
            return Ok(d.name.clone());
        }
        if let Some(n) = self.device_of_path(&canon) {
            return Ok(n);
        }
        let fs = mountinfo::mount_of(&self.mounts, &canon)
            .map(|m| format!("{} on {}", m.fs_type, m.mount_point.display()))
            .unwrap_or_else(|| "an unknown file system".into());
        Err(Error::NotFound(format!(
            "'{target}' is on {fs}, which has no block device under it (e.g. tmpfs, NFS, overlay); \
             name a device instead (see `storlab monitor --tree`)"
        )))
    }

    /// Devices worth showing: those with a size (not unattached loop
    /// devices or unused zram).
    pub fn active(&self) -> impl Iterator<Item = &Device> {
        self.devices.values().filter(|d| d.size_bytes > 0)
    }

    /// `roots` and everything under them (through every kind of edge).
    pub fn closure(&self, roots: &[String]) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = roots.to_vec();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            if let Some(d) = self.devices.get(&n) {
                stack.extend(d.lowers.iter().map(|l| l.device.clone()));
            }
        }
        seen
    }

    /// Level of a device: 0 when it sits on nothing, else one more than the
    /// highest of its lowers.
    pub fn level(&self, name: &str) -> usize {
        fn go(t: &DeviceTree, n: &str, depth: usize) -> usize {
            // A cycle cannot happen in sysfs; the depth bound guards fixtures.
            if depth > 64 {
                return 0;
            }
            t.devices
                .get(n)
                .map(|d| {
                    d.lowers
                        .iter()
                        .map(|l| 1 + go(t, &l.device, depth + 1))
                        .max()
                        .unwrap_or(0)
                })
                .unwrap_or(0)
        }
        go(self, name, 0)
    }

    /// The devices to show for `layer`, and totals that count each request
    /// once. `targets` (kernel names, already resolved) limit the scope to
    /// them and what lies under them; empty means every active device.
    pub fn select(&self, targets: &[String], layer: Layer) -> Selection {
        let roots: Vec<String> = if targets.is_empty() {
            self.active().map(|d| d.name.clone()).collect()
        } else {
            targets.to_vec()
        };
        let scope = self.closure(&roots);
        let is_root = |n: &String| roots.contains(n);
        let in_scope = |n: &String| scope.contains(n);
        let dev = |n: &String| self.devices.get(n);
        let tops: Vec<String> = scope
            .iter()
            .filter(|n| {
                dev(n).is_some_and(|d| {
                    // Nothing on it at the block layer; and either asked for
                    // (a mounted file system holding loop files) or not
                    // merely under a loop device that was asked for.
                    let ups = |file: bool| {
                        d.uppers
                            .iter()
                            .any(|u| (u.kind == LinkKind::File) == file && in_scope(&u.device))
                    };
                    !ups(false) && (is_root(n) || !ups(true))
                })
            })
            .cloned()
            .collect();
        let leaves: Vec<String> = scope
            .iter()
            .filter(|n| dev(n).is_some_and(|d| d.lowers.is_empty()))
            .cloned()
            .collect();
        let term_own = |n: &String| {
            let loops: Vec<&String> = dev(n)
                .map(|d| {
                    (d.uppers.iter())
                        .filter(|u| u.kind == LinkKind::File && in_scope(&u.device))
                        .map(|u| &u.device)
                        .collect()
                })
                .unwrap_or_default();
            Term {
                device: n.clone(),
                minus: loops.iter().map(|l| (*l).clone()).collect(),
                buffered: (loops.into_iter())
                    .filter(|l| dev(l).is_some_and(|d| d.direct_io != Some(true)))
                    .cloned()
                    .collect(),
            }
        };
        let plain = |n: &String| Term {
            device: n.clone(),
            ..Term::default()
        };
        match layer {
            Layer::Top => Selection {
                layer,
                totals: vec![TotalGroup {
                    name: "top".into(),
                    terms: tops.iter().map(term_own).collect(),
                }],
                devices: tops,
            },
            Layer::Leaf => Selection {
                layer,
                totals: vec![TotalGroup {
                    name: "leaf".into(),
                    terms: leaves.iter().map(plain).collect(),
                }],
                devices: leaves,
            },
            Layer::All => {
                let mut by_level: BTreeMap<usize, Vec<String>> = BTreeMap::new();
                for n in &scope {
                    by_level.entry(self.level(n)).or_default().push(n.clone());
                }
                let mut devices = Vec::new();
                let mut totals = Vec::new();
                let named = self.level_names(&by_level);
                for ((_, names), name) in by_level.iter().rev().zip(named) {
                    devices.extend(names.iter().cloned());
                    totals.push(TotalGroup {
                        name,
                        terms: names.iter().map(plain).collect(),
                    });
                }
                Selection {
                    layer,
                    devices,
                    totals,
                }
            }
        }
    }

    /// The names of the per-level totals of `--layer all`, highest level
    /// first: what is on the level (`disk`, `part+loop`, `dm`, `md`), with
    /// `@LEVEL` added where two levels hold the same kinds (a loop device on
    /// a loop device: `loop@3`, `loop@2`).
    fn level_names(&self, by_level: &BTreeMap<usize, Vec<String>>) -> Vec<String> {
        let kinds: Vec<(usize, String)> = (by_level.iter().rev())
            .map(|(lvl, names)| {
                let set: BTreeSet<DeviceKind> = (names.iter())
                    .filter_map(|n| self.devices.get(n).map(|d| d.kind))
                    .collect();
                let words: Vec<&str> = set.iter().map(|k| k.as_str()).collect();
                (*lvl, words.join("+"))
            })
            .collect();
        (kinds.iter())
            .map(|(lvl, k)| {
                if kinds.iter().filter(|(_, o)| o == k).count() > 1 {
                    format!("{k}@{lvl}")
                } else {
                    k.clone()
                }
            })
            .collect()
    }

    /// The tree as text, like `lsblk`: physical devices first, what sits on
    /// them indented below. A device on several lowers appears under each.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let roots: Vec<&Device> = self.active().filter(|d| d.lowers.is_empty()).collect();
        for r in roots {
            self.render_node(&mut out, r, "", "", None, 0);
        }
        out
    }

    fn render_node(
        &self,
        out: &mut String,
        d: &Device,
        first: &str,
        rest: &str,
        via: Option<LinkKind>,
        depth: usize,
    ) {
        let mut what = vec![d.kind.as_str().to_string()];
        if let Some(l) = &d.md_level {
            what.push(l.clone());
        }
        if let Some(f) = &d.backing_file {
            what.push(format!("file {}", f.display()));
            if let Some(fs) = &d.backing_fs {
                what.push(format!("on {fs}"));
            }
        }
        for m in &d.mounts {
            what.push(format!("{} on {}", m.fs_type, m.mount_point.display()));
        }
        if via == Some(LinkKind::File) {
            what.push("(via a file)".into());
        }
        let name = format!("{first}{}", d.label());
        out.push_str(&format!(
            "{name:<32} {:>8} {:>10}  {}\n",
            format!("{}:{}", d.major, d.minor),
            storlab_types::format_bytes(d.size_bytes),
            what.join(", ")
        ));
        if depth > 32 {
            return;
        }
        let ups: Vec<&Link> = d.uppers.iter().collect();
        for (i, u) in ups.iter().enumerate() {
            let Some(ud) = self.devices.get(&u.device) else {
                continue;
            };
            let last = i + 1 == ups.len();
            let (f, r) = if last {
                ("└─", "  ")
            } else {
                ("├─", "│ ")
            };
            self.render_node(
                out,
                ud,
                &format!("{rest}{f}"),
                &format!("{rest}{r}"),
                Some(u.kind),
                depth + 1,
            );
        }
    }
}

/// major:minor of the file system holding `path`.
fn stat_dev(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    Some(storlab_host::os::dev_split(md.dev()))
}

/// major:minor of a block device node.
fn stat_rdev(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).ok()?;
    md.file_type()
        .is_block_device()
        .then(|| storlab_host::os::dev_split(md.rdev()))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn fixture(name: &str) -> SysPaths {
        SysPaths::recorded(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/monitor")
                .join(name),
        )
    }

    fn lowers(t: &DeviceTree, n: &str) -> Vec<(String, LinkKind)> {
        t.get(n)
            .unwrap()
            .lowers
            .iter()
            .map(|l| (l.device.clone(), l.kind))
            .collect()
    }

    /// Recorded on a real 6.18 kernel (see loopstack/KERNEL).
    #[test]
    fn loop_stack_from_a_real_kernel() {
        let t = DeviceTree::load(&fixture("loopstack")).unwrap();
        assert_eq!(t.get("loop0p1").unwrap().kind, DeviceKind::Partition);
        assert_eq!(
            lowers(&t, "loop0p1"),
            [("loop0".into(), LinkKind::Partition)]
        );
        assert_eq!(lowers(&t, "loop1"), [("loop0p1".into(), LinkKind::File)]);
        assert_eq!(lowers(&t, "loop2"), [("loop1".into(), LinkKind::File)]);
        assert_eq!(lowers(&t, "loop3"), [("vda".into(), LinkKind::File)]);
        // loop0's file is in tmpfs: nothing under it.
        assert!(lowers(&t, "loop0").is_empty());
        assert_eq!(t.get("loop0").unwrap().backing_fs.as_deref(), Some("tmpfs"));
        assert_eq!(t.get("loop1").unwrap().mounts[0].fs_type, "xfs");
        assert_eq!(t.level("loop2"), 3);
        // Unattached loop devices have no size and are not shown.
        assert!(t.active().all(|d| d.name != "loop5"));

        let r = |s: &str| t.resolve(s).unwrap();
        assert_eq!(r("/tmp/storlab-fx/mnt2/c.img"), "loop1");
        assert_eq!(r("/tmp/storlab-fx/mnt1"), "loop0p1");
        assert_eq!(r("/dev/loop0p2"), "loop0p2");
        assert_eq!(r("vda"), "vda");
        assert!(t.resolve("sdz").is_err());

        let text = t.render();
        assert!(text.contains("loop0p1"), "{text}");
        assert!(text.contains("(via a file)"), "{text}");
    }

    #[test]
    fn layers_count_each_request_once() {
        let t = DeviceTree::load(&fixture("loopstack")).unwrap();
        let top = t.select(&[], Layer::Top);
        let mut tops = top.devices.clone();
        tops.sort();
        assert_eq!(
            tops,
            ["loop0p1", "loop0p2", "loop1", "loop2", "loop3", "vda"]
        );
        let terms = &top.totals[0].terms;
        let minus = |n: &str| terms.iter().find(|x| x.device == n).unwrap().minus.clone();
        assert_eq!(minus("vda"), ["loop3"]);
        assert_eq!(minus("loop0p1"), ["loop1"]);
        assert_eq!(minus("loop1"), ["loop2"]);
        assert!(minus("loop2").is_empty());
        let leaf = t.select(&[], Layer::Leaf);
        assert_eq!(leaf.devices, ["loop0", "vda"]);
        // Scoped to one path: the device under it and what lies below.
        let s = t.select(&["loop1".into()], Layer::Leaf);
        assert_eq!(s.devices, ["loop0"]);
        let s = t.select(&["loop1".into()], Layer::Top);
        assert_eq!(s.devices, ["loop1"]);
        let all = t.select(&["loop2".into()], Layer::All);
        assert_eq!(all.devices, ["loop2", "loop1", "loop0p1", "loop0"]);
        assert_eq!(
            all.totals
                .iter()
                .map(|g| g.name.as_str())
                .collect::<Vec<_>>(),
            ["loop@3", "loop@2", "part", "loop@0"]
        );
    }

    /// Hand-made md RAID-5 + LVM tree (the test VM's kernel has no dm/md).
    #[test]
    fn md_and_lvm_tree() {
        let t = DeviceTree::load(&fixture("md-lvm")).unwrap();
        assert_eq!(t.get("md0").unwrap().kind, DeviceKind::Md);
        assert_eq!(t.get("md0").unwrap().md_level.as_deref(), Some("raid5"));
        assert_eq!(t.get("dm-0").unwrap().label(), "dm-0 (vg0-data)");
        assert_eq!(lowers(&t, "dm-0"), [("md0".into(), LinkKind::Holder)]);
        let mut md: Vec<String> = lowers(&t, "md0").into_iter().map(|l| l.0).collect();
        md.sort();
        assert_eq!(md, ["sda1", "sdb1", "sdc1", "sdd1"]);
        assert_eq!(t.resolve("/data/x").unwrap(), "dm-0");
        assert_eq!(t.resolve("/dev/mapper/vg0-scratch").unwrap(), "dm-1");
        assert_eq!(t.resolve("vg0-data").unwrap(), "dm-0");
        let top = t.select(&[], Layer::Top);
        assert_eq!(top.devices, ["dm-0", "dm-1", "dm-2", "nvme0n1"]);
        let leaf = t.select(
            &["/data".to_string()].map(|s| t.resolve(&s).unwrap()),
            Layer::Leaf,
        );
        assert_eq!(leaf.devices, ["sda", "sdb", "sdc", "sdd"]);
        assert_eq!(t.level("dm-0"), 3);
        // md0 appears under each member in the rendered tree.
        assert_eq!(t.render().matches("md0").count(), 4);
    }
}
