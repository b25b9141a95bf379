//! `storlab inspect`: what is the storage under a path, how is each layer
//! set up, and what in that setup is likely to cost performance.
//!
//! [`inspect`] resolves a path (or device) to its mount, file system and
//! device stack, reads each layer's settings from sysfs, the file system's
//! stripe geometry from its mount options or superblock, and returns an
//! [`InspectReport`] with [`Recommendation`]s that give their reasons.

use crate::Error;
use crate::tree::{Device, DeviceKind, DeviceTree, LinkKind, SysPaths};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use storlab_host::mountinfo::{self, Mount};
use storlab_types::format_bytes;

/// File system facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsInfo {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    pub mount_options: Vec<String>,
    /// Preferred I/O block size (statvfs `f_bsize`), live systems only.
    pub block_size_bytes: Option<u64>,
    pub size_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// Stripe unit (XFS `sunit`, ext4 `stride`), bytes.
    pub stripe_unit_bytes: Option<u64>,
    /// Stripe width (XFS `swidth`, ext4 `stripe_width` / `stripe=`), bytes.
    pub stripe_width_bytes: Option<u64>,
    /// Where the stripe figures came from.
    pub stripe_source: Option<String>,
    /// ext4 mounted from an ext3-format file system (no extents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ext_extents: Option<bool>,
}

/// md RAID facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MdInfo {
    pub level: String,
    pub chunk_bytes: Option<u64>,
    pub raid_disks: Option<u32>,
    /// Disks that hold data in each stripe (raid5: n−1, raid6: n−2, ...).
    pub data_disks: Option<u32>,
    pub members: Vec<String>,
}

/// device-mapper facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DmInfo {
    pub name: Option<String>,
    /// `dmsetup table` output, when dmsetup could be run.
    pub table: Option<String>,
    /// Targets in the table (`linear`, `striped`, `crypt`, ...).
    pub targets: Vec<String>,
    /// For a `striped` table: stripes and chunk size.
    pub stripes: Option<u32>,
    pub stripe_chunk_bytes: Option<u64>,
}

/// Loop device facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopInfo {
    pub backing_file: Option<PathBuf>,
    /// Direct I/O to the backing file (`loop/dio`).
    pub direct_io: Option<bool>,
    /// File system of the backing file when no block device is under it.
    pub backing_fs: Option<String>,
}

/// One layer of the device stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerInfo {
    pub device: String,
    pub kind: DeviceKind,
    /// 0 for the device under the file system, 1 for what is under it, ...
    pub depth: usize,
    /// How it sits under the layer above (`partition`, `holder`, `file`).
    pub via: Option<LinkKind>,
    pub size_bytes: u64,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size_bytes: Option<u64>,
    pub physical_block_size_bytes: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    /// The active scheduler (the one in brackets).
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    pub nr_requests: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub write_cache: Option<String>,
    pub minimum_io_size_bytes: Option<u64>,
    pub optimal_io_size_bytes: Option<u64>,
    /// Partitions: offset from the start of the disk.
    pub start_bytes: Option<u64>,
    pub md: Option<MdInfo>,
    pub dm: Option<DmInfo>,
    #[serde(rename = "loop")]
    pub loop_dev: Option<LoopInfo>,
}

/// Advice, with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// `warn` (likely costs performance or safety) or `tip`.
    pub level: String,
    /// The layer it is about (a device name, or `filesystem`).
    pub subject: String,
    pub message: String,
    pub reason: String,
    /// A command to try, if there is one.
    pub action: Option<String>,
}

/// Everything `storlab inspect` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectReport {
    pub target: String,
    pub filesystem: Option<FsInfo>,
    /// The device under the file system (or the device asked about).
    pub device: Option<String>,
    pub stack: Vec<LayerInfo>,
    pub recommendations: Vec<Recommendation>,
    /// What could not be found out, and why.
    pub notes: Vec<String>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_u64(p: &Path) -> Option<u64> {
    read(p)?.parse().ok()
}

/// Inspect what the user typed: a path, or a device (name, `/dev` node).
pub fn inspect(paths: &SysPaths, target: &str) -> Result<InspectReport, Error> {
    inspect_path(paths, Path::new(target))
}

/// [`inspect`] for a path as the OS passed it: a name that is not UTF-8 can
/// only be a path (device names in /sys/block are text), never a device.
pub fn inspect_path(paths: &SysPaths, target_path: &Path) -> Result<InspectReport, Error> {
    let tree = DeviceTree::load(paths)?;
    let mut notes = Vec::new();
    let target = target_path.to_string_lossy();
    let target = target.as_ref();
    // /dev/shm and the like are directories: only block device nodes count.
    let is_device = target_path.to_str().is_some_and(|t| {
        tree.device_by_dev_name(t).is_some() || (t.starts_with("/dev/") && !target_path.is_dir())
    }) || {
        use std::os::unix::fs::FileTypeExt;
        // A block device node outside /dev (a symlink, a mknod alias).
        paths.live && std::fs::metadata(target_path).is_ok_and(|m| m.file_type().is_block_device())
    };
    let (device, mount): (Option<String>, Option<Mount>) = if is_device {
        let dev = tree.resolve(target)?;
        // A /dev path that is not a block device (e.g. /dev/shm) falls
        // through resolve to its file system's device; that is fine.
        let m = tree
            .mounts
            .iter()
            .find(|m| tree.device_of_mount(m).as_deref() == Some(dev.as_str()))
            .cloned();
        (Some(dev), m)
    } else {
        let p = target_path;
        let canon = if paths.live {
            if !p.exists() {
                return Err(Error::NotFound(format!(
                    "'{target}' does not exist; give an existing path, or a device (see `storlab monitor --tree`)"
                )));
            }
            p.canonicalize().map_err(|e| Error::Io {
                path: p.to_path_buf(),
                err: e,
            })?
        } else {
            p.to_path_buf()
        };
        let m = mountinfo::mount_of(&tree.mounts, &canon).cloned();
        let dev = tree.device_of_path(&canon);
        if dev.is_none() {
            if let Some(m) = &m {
                notes.push(format!(
                    "{} is on {} ({}), which has no block device under it",
                    target,
                    m.mount_point.display(),
                    m.fs_type
                ));
            }
        }
        (dev, m)
    };
    let filesystem = mount.as_ref().map(|m| fs_info(paths, &tree, m, &mut notes));
    let mut stack = Vec::new();
    if let Some(d) = &device {
        walk(paths, &tree, d, 0, None, &mut stack, &mut notes);
    }
    let recommendations = recommend(filesystem.as_ref(), &stack);
    Ok(InspectReport {
        target: target.to_string(),
        filesystem,
        device,
        stack,
        recommendations,
        notes,
    })
}

fn walk(
    paths: &SysPaths,
    tree: &DeviceTree,
    name: &str,
    depth: usize,
    via: Option<LinkKind>,
    out: &mut Vec<LayerInfo>,
    notes: &mut Vec<String>,
) {
    let Some(d) = tree.get(name) else { return };
    if depth > 16 || out.iter().any(|l| l.device == name) {
        return;
    }
    out.push(layer_info(paths, tree, d, depth, via, notes));
    for l in &d.lowers {
        walk(paths, tree, &l.device, depth + 1, Some(l.kind), out, notes);
    }
}

fn layer_info(
    paths: &SysPaths,
    tree: &DeviceTree,
    d: &Device,
    depth: usize,
    via: Option<LinkKind>,
    notes: &mut Vec<String>,
) -> LayerInfo {
    // A partition has no queue/ of its own: its disk's settings apply.
    let qdir = match d.kind {
        DeviceKind::Partition => d
            .lowers
            .iter()
            .find(|l| l.kind == LinkKind::Partition)
            .and_then(|l| tree.get(&l.device))
            .map(|p| p.sysfs_dir.clone())
            .unwrap_or_else(|| d.sysfs_dir.clone()),
        _ => d.sysfs_dir.clone(),
    };
    let q = |f: &str| qdir.join("queue").join(f);
    let (scheduler, schedulers_available) = match read(&q("scheduler")) {
        Some(s) => {
            let active = s
                .split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(['[', ']']).to_string());
            let all = s
                .split_whitespace()
                .map(|w| w.trim_matches(['[', ']']).to_string())
                .collect();
            (active.or_else(|| Some(s.clone())), all)
        }
        None => (None, Vec::new()),
    };
    let model = read(&qdir.join("device/model"));
    let md = (d.kind == DeviceKind::Md).then(|| {
        let level = d.md_level.clone().unwrap_or_default();
        let raid_disks = read_u64(&d.sysfs_dir.join("md/raid_disks")).map(|n| n as u32);
        let layout = read_u64(&d.sysfs_dir.join("md/layout")).unwrap_or(0);
        let data_disks = raid_disks.and_then(|n| data_disks(&level, n, layout));
        MdInfo {
            chunk_bytes: read_u64(&d.sysfs_dir.join("md/chunk_size")).filter(|c| *c > 0),
            raid_disks,
            data_disks,
            members: d.lowers.iter().map(|l| l.device.clone()).collect(),
            level,
        }
    });
    let dm = (d.kind == DeviceKind::Dm).then(|| {
        let table = if paths.live {
            d.dm_name.as_deref().and_then(|n| dmsetup_table(n, notes))
        } else {
            // Fixtures keep `dmsetup table` output in dm/table (not a kernel file).
            read(&d.sysfs_dir.join("dm/table"))
        };
        let mut info = DmInfo {
            name: d.dm_name.clone(),
            table: table.clone(),
            targets: Vec::new(),
            stripes: None,
            stripe_chunk_bytes: None,
        };
        if let Some(t) = &table {
            parse_dm_table(t, &mut info);
        }
        info
    });
    let loop_dev = (d.kind == DeviceKind::Loop).then(|| LoopInfo {
        backing_file: d.backing_file.clone(),
        direct_io: read(&d.sysfs_dir.join("loop/dio")).map(|s| s == "1"),
        backing_fs: d.backing_fs.clone(),
    });
    LayerInfo {
        device: d.label(),
        kind: d.kind,
        depth,
        via,
        size_bytes: d.size_bytes,
        model,
        rotational: read(&q("rotational")).map(|s| s == "1"),
        logical_block_size_bytes: read_u64(&q("logical_block_size")),
        physical_block_size_bytes: read_u64(&q("physical_block_size")),
        read_ahead_kb: read_u64(&q("read_ahead_kb")),
        scheduler,
        schedulers_available,
        nr_requests: read_u64(&q("nr_requests")),
        max_sectors_kb: read_u64(&q("max_sectors_kb")),
        write_cache: read(&q("write_cache")),
        minimum_io_size_bytes: read_u64(&q("minimum_io_size")),
        optimal_io_size_bytes: read_u64(&q("optimal_io_size")),
        start_bytes: (d.kind == DeviceKind::Partition)
            .then(|| read_u64(&d.sysfs_dir.join("start")).map(|s| s * 512))
            .flatten(),
        md,
        dm,
        loop_dev,
    }
}

/// Data disks per stripe of an md array.
pub fn data_disks(level: &str, n: u32, layout: u64) -> Option<u32> {
    match level {
        "raid0" => Some(n),
        "raid4" | "raid5" => n.checked_sub(1),
        "raid6" => n.checked_sub(2),
        "raid10" => {
            let near = (layout & 0xff).max(1) as u32;
            let far = ((layout >> 8) & 0xff).max(1) as u32;
            Some((n / (near * far)).max(1))
        }
        _ => None,
    }
}

fn dmsetup_table(name: &str, notes: &mut Vec<String>) -> Option<String> {
    match std::process::Command::new("dmsetup")
        .args(["table", name])
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => {
            notes.push(format!(
                "`dmsetup table {name}` failed ({}); run as root for the dm table",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            None
        }
        Err(_) => {
            notes.push("dmsetup is not installed (Debian: dmsetup); dm tables not shown".into());
            None
        }
    }
}

/// Read targets and striping from `dmsetup table` lines
/// (`START LEN striped STRIPES CHUNK_SECTORS DEV OFF ...`).
pub fn parse_dm_table(table: &str, info: &mut DmInfo) {
    for line in table.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 {
            continue;
        }
        if !info.targets.iter().any(|t| t == f[2]) {
            info.targets.push(f[2].to_string());
        }
        if f[2] == "striped" && f.len() >= 5 {
            info.stripes = f[3].parse().ok();
            info.stripe_chunk_bytes = f[4].parse::<u64>().ok().map(|s| s * 512);
        }
    }
}

fn fs_info(paths: &SysPaths, tree: &DeviceTree, m: &Mount, notes: &mut Vec<String>) -> FsInfo {
    let mut fs = FsInfo {
        mount_point: m.mount_point.clone(),
        fs_type: m.fs_type.clone(),
        source: m.source.clone(),
        mount_options: m.options().fold(Vec::new(), |mut v: Vec<String>, o| {
            if !v.iter().any(|x| x == o) {
                v.push(o.to_string());
            }
            v
        }),
        block_size_bytes: None,
        size_bytes: None,
        free_bytes: None,
        stripe_unit_bytes: None,
        stripe_width_bytes: None,
        stripe_source: None,
        ext_extents: None,
    };
    if paths.live {
        if let Ok(storlab_host::os::FsSpace {
            block_size: bsize,
            total_bytes: size,
            avail_bytes: free,
        }) = storlab_host::os::fs_space(&m.mount_point)
        {
            fs.block_size_bytes = Some(bsize);
            fs.size_bytes = Some(size);
            fs.free_bytes = Some(free);
        }
    }
    let dev_node = tree
        .device_of_mount(m)
        .map(|n| PathBuf::from("/dev").join(n))
        .filter(|_| paths.live);
    match m.fs_type.as_str() {
        "xfs" => {
            // XFS shows sunit/swidth (512-byte units) among its mount options when set.
            if let (Some(su), Some(sw)) = (m.option("sunit"), m.option("swidth")) {
                fs.stripe_unit_bytes = su.parse::<u64>().ok().map(|v| v * 512);
                fs.stripe_width_bytes = sw.parse::<u64>().ok().map(|v| v * 512);
                fs.stripe_source = Some("mount options (sunit/swidth)".into());
            } else if let Some(dev) = &dev_node {
                match read_superblock(dev, 0, 512) {
                    Ok(sb) => {
                        if let Some((bs, su, sw)) = parse_xfs_superblock(&sb) {
                            fs.block_size_bytes.get_or_insert(bs);
                            if su > 0 {
                                fs.stripe_unit_bytes = Some(su * bs);
                                fs.stripe_width_bytes = Some(sw * bs);
                            }
                            fs.stripe_source = Some("XFS superblock".into());
                        }
                    }
                    Err(e) => notes.push(format!(
                        "XFS stripe geometry unknown: cannot read the superblock of {} ({e}); run as root, or see `xfs_info {}`",
                        dev.display(),
                        m.mount_point.display()
                    )),
                }
            }
        }
        "ext2" | "ext3" | "ext4" => {
            let mut from_sb = false;
            if let Some(dev) = &dev_node {
                match read_superblock(dev, 1024, 1024) {
                    Ok(sb) => {
                        if let Some(e) = parse_ext_superblock(&sb) {
                            from_sb = true;
                            fs.ext_extents = Some(e.extents);
                            if e.stride > 0 {
                                fs.stripe_unit_bytes = Some(e.stride * e.block_size);
                            }
                            if e.stripe_width > 0 {
                                fs.stripe_width_bytes = Some(e.stripe_width * e.block_size);
                            }
                            if e.stride > 0 || e.stripe_width > 0 {
                                fs.stripe_source = Some("ext superblock (stride, stripe_width)".into());
                            }
                            fs.block_size_bytes.get_or_insert(e.block_size);
                        }
                    }
                    Err(e) => notes.push(format!(
                        "ext stripe geometry unknown: cannot read the superblock of {} ({e}); run as root, or see `dumpe2fs -h {}`",
                        dev.display(),
                        dev.display()
                    )),
                }
            }
            // stripe= (in file system blocks) overrides the superblock.
            if let Some(s) = m.option("stripe").and_then(|s| s.parse::<u64>().ok()) {
                let bs = fs.block_size_bytes.unwrap_or(4096);
                fs.stripe_width_bytes = Some(s * bs);
                fs.stripe_source = Some(if from_sb {
                    "mount option stripe= (overrides the superblock)".into()
                } else {
                    format!("mount option stripe= ({bs}-byte blocks assumed)")
                });
            }
        }
        _ => {}
    }
    fs
}

fn read_superblock(dev: &Path, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(dev)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}

/// (block size, sunit, swidth) in bytes, blocks, blocks, from the first 512
/// bytes of an XFS device; `None` if the magic is not `XFSB`.
pub fn parse_xfs_superblock(sb: &[u8]) -> Option<(u64, u64, u64)> {
    if sb.len() < 192 || &sb[0..4] != b"XFSB" {
        return None;
    }
    let be = |o: usize| u32::from_be_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]) as u64;
    Some((be(4), be(184), be(188)))
}

/// ext2/3/4 superblock facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtSuper {
    pub block_size: u64,
    /// `s_raid_stride`, blocks.
    pub stride: u64,
    /// `s_raid_stripe_width`, blocks.
    pub stripe_width: u64,
    /// The extents feature (ext4 format).
    pub extents: bool,
}

/// Parse the 1024-byte ext superblock (which starts 1024 bytes into the device).
pub fn parse_ext_superblock(sb: &[u8]) -> Option<ExtSuper> {
    if sb.len() < 0x174 {
        return None;
    }
    let le16 = |o: usize| u16::from_le_bytes([sb[o], sb[o + 1]]) as u64;
    let le32 = |o: usize| u32::from_le_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]) as u64;
    if le16(0x38) != 0xEF53 {
        return None;
    }
    let log = le32(0x18);
    if log > 16 {
        return None;
    }
    Some(ExtSuper {
        block_size: 1024 << log,
        stride: le16(0x164),
        stripe_width: le32(0x170),
        extents: le32(0x60) & 0x40 != 0,
    })
}

fn kib(b: u64) -> String {
    storlab_types::format_bytes(b)
}

/// The RAID geometry under the file system: (what, chunk bytes, data disks).
fn raid_geometry(stack: &[LayerInfo]) -> Option<(String, u64, u32)> {
    for l in stack {
        if let Some(md) = &l.md {
            if let (Some(c), Some(n)) = (md.chunk_bytes, md.data_disks) {
                if md.level != "raid1" {
                    return Some((format!("{} ({})", l.device, md.level), c, n));
                }
            }
        }
        if let Some(dm) = &l.dm {
            if let (Some(c), Some(n)) = (dm.stripe_chunk_bytes, dm.stripes) {
                return Some((format!("{} (dm striped)", l.device), c, n));
            }
        }
    }
    None
}

/// Recommendations from the facts, each with its reason.
// long-function: one rule per recommendation, each a few lines.
pub fn recommend(fs: Option<&FsInfo>, stack: &[LayerInfo]) -> Vec<Recommendation> {
    let mut out = Vec::new();
    let mut rec =
        |level: &str, subject: &str, message: String, reason: String, action: Option<String>| {
            out.push(Recommendation {
                level: level.into(),
                subject: subject.into(),
                message,
                reason,
                action,
            })
        };
    let raid = raid_geometry(stack);
    // The stack is in depth-first order: a layer is a leaf when the next
    // one is not below it.
    let leaves: Vec<&LayerInfo> = stack
        .iter()
        .enumerate()
        .filter(|(i, l)| stack.get(i + 1).is_none_or(|n| n.depth <= l.depth))
        .map(|(_, l)| l)
        .collect();
    let any_rotational = stack.iter().any(|l| l.rotational == Some(true));

    // Read-ahead of the device the file system reads through.
    if let Some(top) = stack.first() {
        if let Some(ra) = top.read_ahead_kb {
            let stripe_kb = raid.as_ref().map(|(_, c, n)| c * u64::from(*n) / 1024);
            let low = match stripe_kb {
                Some(s) => ra < s.max(1024),
                None => any_rotational && ra < 1024,
            };
            if low {
                let why = match &raid {
                    Some((what, c, n)) => format!(
                        "streaming reads from {what} keep every disk busy only when read-ahead spans at least a full stripe ({} chunk × {n} data disks = {}) and 1 MiB; in published tuning studies a 4 MiB read-ahead did best",
                        kib(*c),
                        kib(c * u64::from(*n))
                    ),
                    None => "rotational disks stream best with large read-ahead; in published tuning studies a 4 MiB read-ahead did best".into(),
                };
                rec(
                    "warn",
                    &top.device,
                    format!(
                        "read-ahead {ra} KiB on {} is low for streaming reads",
                        top.device
                    ),
                    why,
                    Some(format!(
                        "storlab tune readahead {}",
                        fs.map(|f| f.mount_point.display().to_string())
                            .unwrap_or_else(|| format!(
                                "/dev/{}",
                                top.device.split(' ').next().unwrap_or(&top.device)
                            ))
                    )),
                );
            }
        }
    }

    if let Some(fs) = fs {
        // Stripe geometry vs the RAID.
        if let Some((what, chunk, n)) = &raid {
            let want_w = chunk * u64::from(*n);
            match (fs.stripe_unit_bytes, fs.stripe_width_bytes) {
                (su, Some(sw)) if sw != want_w || su.is_some_and(|s| s != *chunk) => rec(
                    "warn",
                    "filesystem",
                    format!(
                        "{} stripe width {} (unit {}) does not match {what}: chunk {} × {n} data disks = {}",
                        fs.fs_type,
                        kib(sw),
                        su.map(kib).unwrap_or_else(|| "not set".into()),
                        kib(*chunk),
                        kib(want_w)
                    ),
                    "allocations and write-back aligned to the wrong stripe turn full-stripe writes into read-modify-write on parity RAID".into(),
                    Some(match fs.fs_type.as_str() {
                        "xfs" => format!("mount -o sunit={},swidth={} (512-byte units), or mkfs.xfs -d su={}k,sw={n}", chunk / 512, want_w / 512, chunk / 1024),
                        _ => format!("tune2fs -E stride={},stripe_width={} (for 4 KiB blocks)", chunk / 4096, want_w / 4096),
                    }),
                ),
                (_, None) if matches!(fs.fs_type.as_str(), "xfs" | "ext4" | "ext3") => rec(
                    "tip",
                    "filesystem",
                    format!("{} has no stripe geometry but sits on {what} (chunk {} × {n})", fs.fs_type, kib(*chunk)),
                    "without it the file system cannot align allocations to full stripes".into(),
                    Some(match fs.fs_type.as_str() {
                        "xfs" => format!("mkfs.xfs -d su={}k,sw={n} (new file systems), or mount -o sunit={},swidth={}", chunk / 1024, chunk / 512, want_w / 512),
                        _ => format!("tune2fs -E stride={},stripe_width={} (for 4 KiB blocks)", chunk / 4096, want_w / 4096),
                    }),
                ),
                _ => {}
            }
        }
        if fs.fs_type == "ext3" || fs.ext_extents == Some(false) && fs.fs_type == "ext4" {
            rec(
                "warn",
                "filesystem",
                format!("{} is an ext3-format file system", fs.mount_point.display()),
                "ext3 (block-mapped, no extents or delayed allocation) is about half as fast as ext4 and XFS for sequential analytics workloads".into(),
                Some("move the data to XFS or ext4 (a new mkfs; tune2fs -O extents only affects new files)".into()),
            );
        }
        let has = |o: &str| fs.mount_options.iter().any(|x| x == o);
        if has("sync") {
            rec(
                "warn",
                "filesystem",
                "mounted with 'sync'".into(),
                "every write waits for the device; streaming writes slow down many times".into(),
                Some("remount without sync unless the application needs it".into()),
            );
        }
        if has("nobarrier") || has("barrier=0") {
            rec("warn", "filesystem", "write barriers are off".into(), "a power loss can corrupt the file system unless the write cache is battery- or flash-backed".into(), None);
        }
        if has("discard") && matches!(fs.fs_type.as_str(), "ext4" | "xfs") {
            rec("tip", "filesystem", "online discard ('discard') is on".into(), "every delete sends discards synchronously, which slows deletes and can stall I/O on some devices".into(), Some("mount without discard and run fstrim periodically (fstrim.timer)".into()));
        }
        if !has("noatime")
            && !has("relatime")
            && !has("lazytime")
            && matches!(fs.fs_type.as_str(), "ext4" | "xfs" | "ext3" | "btrfs")
        {
            rec(
                "tip",
                "filesystem",
                "access times are written on every read ('atime')".into(),
                "each read of a file turns into a metadata write".into(),
                Some("mount -o remount,noatime (or relatime)".into()),
            );
        }
    }

    for l in stack {
        if let Some(lp) = &l.loop_dev {
            if lp.direct_io == Some(false) && lp.backing_file.is_some() {
                rec(
                    "tip",
                    &l.device,
                    format!("{} goes through the page cache of its backing file", l.device),
                    "buffered loop devices cache every block twice (the loop device's and the file's) and report I/O as done before it reaches the disk".into(),
                    Some(format!("losetup --direct-io=on /dev/{}", l.device)),
                );
            }
        }
        if l.kind == DeviceKind::Partition {
            if let Some(start) = l.start_bytes {
                let align = l
                    .physical_block_size_bytes
                    .unwrap_or(512)
                    .max(l.optimal_io_size_bytes.unwrap_or(0))
                    .max(4096);
                if start % align != 0 {
                    rec(
                        "warn",
                        &l.device,
                        format!("{} starts at byte {start}, not a multiple of {align}", l.device),
                        "a misaligned partition splits I/Os across physical blocks or RAID chunks".into(),
                        Some("recreate the partition starting at 1 MiB (the default of current partitioning tools)".into()),
                    );
                }
            }
        }
    }
    for l in &leaves {
        match (l.rotational, l.scheduler.as_deref()) {
            (Some(true), Some("none")) => rec(
                "tip",
                &l.device,
                format!("rotational {} uses the 'none' I/O scheduler", l.device),
                "without sorting and merging, concurrent streams make the disk seek".into(),
                Some(format!(
                    "echo mq-deadline > /sys/block/{}/queue/scheduler",
                    l.device
                )),
            ),
            (Some(false), Some("bfq")) => rec(
                "tip",
                &l.device,
                format!("SSD {} uses the 'bfq' I/O scheduler", l.device),
                "bfq's per-process fairness costs CPU and throughput on fast devices".into(),
                Some(format!(
                    "echo none > /sys/block/{}/queue/scheduler",
                    l.device
                )),
            ),
            _ => {}
        }
        if l.rotational == Some(true) && l.write_cache.as_deref() == Some("write through") {
            rec("tip", &l.device, format!("{} has its write cache off (write through)", l.device), "each write waits for the platter; safe, but streaming writes are slower unless a battery-backed controller caches them".into(), None);
        }
    }
    if let (Some(top), Some((_, chunk, n))) = (stack.first(), &raid) {
        if let Some(m) = top.max_sectors_kb {
            let w = chunk * u64::from(*n);
            if m * 1024 < w {
                rec(
                    "tip",
                    &top.device,
                    format!(
                        "max_sectors_kb {m} on {} is below the full stripe ({})",
                        top.device,
                        kib(w)
                    ),
                    "full-stripe writes are split into several requests".into(),
                    Some(format!(
                        "raise /sys/block/{}/queue/max_sectors_kb (up to max_hw_sectors_kb)",
                        top.device.split(' ').next().unwrap_or(&top.device)
                    )),
                );
            }
        }
    }
    out
}

// The text report.

fn opt<T: std::fmt::Display>(label: &str, v: &Option<T>) -> Option<String> {
    v.as_ref().map(|v| format!("{label} {v}"))
}

fn layer_line(l: &LayerInfo) -> String {
    let mut parts: Vec<String> = vec![l.kind.as_str().to_string(), format_bytes(l.size_bytes)];
    if let Some(m) = &l.model {
        parts.push(format!("model {m}"));
    }
    if let Some(r) = l.rotational {
        parts.push(if r { "rotational" } else { "non-rotational" }.into());
    }
    if let (Some(lb), Some(pb)) = (l.logical_block_size_bytes, l.physical_block_size_bytes) {
        parts.push(format!("blocks {lb}/{pb} B (logical/physical)"));
    }
    parts.extend(opt("read_ahead_kb", &l.read_ahead_kb));
    parts.extend(opt("scheduler", &l.scheduler));
    parts.extend(opt("nr_requests", &l.nr_requests));
    parts.extend(opt("max_sectors_kb", &l.max_sectors_kb));
    parts.extend(opt("write cache", &l.write_cache));
    if let Some(s) = l.start_bytes {
        parts.push(format!("starts at {}", format_bytes(s)));
    }
    if let Some(md) = &l.md {
        let mut s = md.level.clone();
        if let Some(c) = md.chunk_bytes {
            let _ = write!(s, ", chunk {}", format_bytes(c));
        }
        if let Some(n) = md.raid_disks {
            let _ = write!(s, ", {n} disks");
        }
        if let Some(d) = md.data_disks {
            let _ = write!(s, " ({d} with data per stripe)");
        }
        let _ = write!(s, ", members {}", md.members.join(" "));
        parts.push(s);
    }
    if let Some(dm) = &l.dm {
        if let Some(t) = &dm.table {
            parts.push(format!("table: {}", t.replace('\n', "; ")));
        }
        if let (Some(n), Some(c)) = (dm.stripes, dm.stripe_chunk_bytes) {
            parts.push(format!("{n} stripes of {}", format_bytes(c)));
        }
    }
    if let Some(lp) = &l.loop_dev {
        if let Some(f) = &lp.backing_file {
            parts.push(format!("backing file {}", f.display()));
        }
        if let Some(fs) = &lp.backing_fs {
            parts.push(format!("on {fs}"));
        }
        if let Some(d) = lp.direct_io {
            parts.push(format!("direct I/O {}", if d { "on" } else { "off" }));
        }
    }
    parts.join(", ")
}

/// The report as `storlab inspect` prints it: the file system, the device
/// stack (one line per layer, indented by depth), the recommendations with
/// their reasons, and the notes.
pub fn render_text(r: &InspectReport) -> String {
    let mut s = format!("{}\n", r.target);
    match &r.filesystem {
        Some(fs) => {
            let _ = writeln!(
                s,
                "  file system   {} on {} ({})",
                fs.fs_type,
                fs.mount_point.display(),
                fs.source
            );
            let _ = writeln!(s, "  options       {}", fs.mount_options.join(","));
            let mut sizes = Vec::new();
            sizes.extend(opt("block size", &fs.block_size_bytes));
            if let (Some(t), Some(f)) = (fs.size_bytes, fs.free_bytes) {
                sizes.push(format!(
                    "size {}, free {}",
                    format_bytes(t),
                    format_bytes(f)
                ));
            }
            if !sizes.is_empty() {
                let _ = writeln!(s, "                {}", sizes.join(", "));
            }
            match (fs.stripe_unit_bytes, fs.stripe_width_bytes) {
                (None, None) => {
                    let _ = writeln!(s, "  stripe        not set");
                }
                (u, w) => {
                    let _ = writeln!(
                        s,
                        "  stripe        unit {}, width {}  (from {})",
                        u.map(format_bytes).unwrap_or_else(|| "-".into()),
                        w.map(format_bytes).unwrap_or_else(|| "-".into()),
                        fs.stripe_source.as_deref().unwrap_or("?")
                    );
                }
            }
        }
        None => {
            let _ = writeln!(s, "  file system   (none mounted)");
        }
    }
    if r.stack.is_empty() {
        let _ = writeln!(s, "  device stack  (no block device)");
    } else {
        let _ = writeln!(s, "  device stack");
    }
    for l in &r.stack {
        let via = match l.via {
            Some(LinkKind::File) => " (via a file)",
            _ => "",
        };
        let _ = writeln!(
            s,
            "    {}{}{via}: {}",
            "  ".repeat(l.depth),
            l.device,
            layer_line(l)
        );
    }
    if r.recommendations.is_empty() {
        let _ = writeln!(s, "  recommendations: none");
    } else {
        let _ = writeln!(s, "  recommendations");
    }
    for x in &r.recommendations {
        let _ = writeln!(s, "    [{}] {}", x.level, x.message);
        let _ = writeln!(s, "           why: {}", x.reason);
        if let Some(a) = &x.action {
            let _ = writeln!(s, "           try: {a}");
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> SysPaths {
        SysPaths::recorded(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/monitor")
                .join(name),
        )
    }

    #[test]
    fn md_lvm_stack_and_advice() {
        let r = inspect(&fixture("md-lvm"), "/data/results").unwrap();
        let fs = r.filesystem.as_ref().unwrap();
        assert_eq!(fs.fs_type, "xfs");
        assert_eq!(fs.stripe_unit_bytes, Some(512 * 1024));
        assert_eq!(fs.stripe_width_bytes, Some(3 * 512 * 1024));
        assert_eq!(r.device.as_deref(), Some("dm-0"));
        let names: Vec<&str> = r.stack.iter().map(|l| l.device.as_str()).collect();
        assert_eq!(names[0], "dm-0 (vg0-data)");
        assert_eq!(names[1], "md0");
        let md = r.stack[1].md.as_ref().unwrap();
        assert_eq!(
            (md.chunk_bytes, md.raid_disks, md.data_disks),
            (Some(524288), Some(4), Some(3))
        );
        // Partitions take their queue settings from their disk.
        let sda1 = r.stack.iter().find(|l| l.device == "sda1").unwrap();
        assert_eq!(sda1.rotational, Some(true));
        assert_eq!(sda1.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(sda1.start_bytes, Some(2048 * 512));
        assert_eq!(sda1.model.as_deref(), Some("ST1000NM0033-9ZM"));
        // Read-ahead 128 KiB on a RAID-5: the tune advice, with the stripe in the reason.
        let ra = r
            .recommendations
            .iter()
            .find(|x| x.message.contains("read-ahead"))
            .unwrap();
        assert!(ra.reason.contains("1.50 MiB"), "{}", ra.reason);
        assert!(
            ra.action
                .as_deref()
                .unwrap()
                .starts_with("storlab tune readahead")
        );
        // XFS geometry matches: no stripe warning.
        assert!(
            !r.recommendations
                .iter()
                .any(|x| x.message.contains("stripe width"))
        );

        let s = inspect(&fixture("md-lvm"), "/scratch").unwrap();
        // ext4 stripe=256 blocks = 1 MiB, not 1.5 MiB.
        assert!(
            s.recommendations
                .iter()
                .any(|x| x.message.contains("does not match")),
            "{:#?}",
            s.recommendations
        );
        // read-ahead 6 MiB there: no read-ahead advice.
        assert!(
            !s.recommendations
                .iter()
                .any(|x| x.message.contains("read-ahead"))
        );

        let root = inspect(&fixture("md-lvm"), "/etc").unwrap();
        assert!(
            root.recommendations
                .iter()
                .any(|x| x.reason.contains("about half as fast"))
        );
        let fast = inspect(&fixture("md-lvm"), "/fast").unwrap();
        let dm = fast.stack[0].dm.as_ref().unwrap();
        assert_eq!((dm.stripes, dm.stripe_chunk_bytes), (Some(2), Some(65536)));
        assert_eq!(dm.targets, ["striped"]);
        // XFS su=64k sw=2 matches the dm stripe: no geometry advice.
        assert!(
            !fast
                .recommendations
                .iter()
                .any(|x| x.subject == "filesystem" && x.message.contains("stripe"))
        );
        let dev = inspect(&fixture("md-lvm"), "/dev/mapper/vg0-data").unwrap();
        assert_eq!(dev.filesystem.unwrap().mount_point, PathBuf::from("/data"));
    }

    #[test]
    fn recorded_loop_stack() {
        let r = inspect(&fixture("loopstack"), "/tmp/storlab-fx/mnt2").unwrap();
        let names: Vec<&str> = r.stack.iter().map(|l| l.device.as_str()).collect();
        assert_eq!(names, ["loop1", "loop0p1", "loop0"]);
        assert_eq!(r.stack[0].via, None);
        assert_eq!(r.stack[1].via, Some(LinkKind::File));
        let lp = r.stack[0].loop_dev.as_ref().unwrap();
        assert_eq!(lp.direct_io, Some(true));
        let fs = r.filesystem.unwrap();
        assert_eq!(
            (fs.stripe_unit_bytes, fs.stripe_width_bytes),
            (Some(65536), Some(262144))
        );
        // loop0 is buffered over tmpfs.
        assert!(r.recommendations.iter().any(|x| x.subject == "loop0"
            && x.action.as_deref() == Some("losetup --direct-io=on /dev/loop0")));
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(b in proptest::collection::vec(0u8..=255, 0..1100), t in "\\PC{0,200}") {
            let _ = parse_xfs_superblock(&b);
            let _ = parse_ext_superblock(&b);
            let mut dm = DmInfo { name: None, table: None, targets: vec![], stripes: None, stripe_chunk_bytes: None };
            parse_dm_table(&t, &mut dm);
        }
    }

    #[test]
    fn superblocks_and_tables() {
        let mut xfs = vec![0u8; 512];
        xfs[0..4].copy_from_slice(b"XFSB");
        xfs[4..8].copy_from_slice(&4096u32.to_be_bytes());
        xfs[184..188].copy_from_slice(&16u32.to_be_bytes());
        xfs[188..192].copy_from_slice(&64u32.to_be_bytes());
        assert_eq!(parse_xfs_superblock(&xfs), Some((4096, 16, 64)));
        assert_eq!(parse_xfs_superblock(&xfs[..100]), None);
        let mut ext = vec![0u8; 1024];
        ext[0x38..0x3a].copy_from_slice(&0xEF53u16.to_le_bytes());
        ext[0x18..0x1c].copy_from_slice(&2u32.to_le_bytes());
        ext[0x60..0x64].copy_from_slice(&0x40u32.to_le_bytes());
        ext[0x164..0x166].copy_from_slice(&16u16.to_le_bytes());
        ext[0x170..0x174].copy_from_slice(&64u32.to_le_bytes());
        assert_eq!(
            parse_ext_superblock(&ext),
            Some(ExtSuper {
                block_size: 4096,
                stride: 16,
                stripe_width: 64,
                extents: true
            })
        );
        ext[0x38] = 0;
        assert_eq!(parse_ext_superblock(&ext), None);
        let mut dm = DmInfo {
            name: None,
            table: None,
            targets: vec![],
            stripes: None,
            stripe_chunk_bytes: None,
        };
        parse_dm_table(
            "0 2097152 striped 4 128 8:0 0 8:16 0 8:32 0 8:48 0\n",
            &mut dm,
        );
        assert_eq!((dm.stripes, dm.stripe_chunk_bytes), (Some(4), Some(65536)));
        assert_eq!(dm.targets, ["striped"]);
        assert_eq!(data_disks("raid6", 8, 0), Some(6));
        assert_eq!(data_disks("raid10", 4, 0x102), Some(2));
        assert_eq!(data_disks("raid1", 2, 0), None);
    }
}
