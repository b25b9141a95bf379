//! Resolving the target against the system, and refusing anything that
//! could lose the user's data.
//!
//! * A directory: storlab makes its own subdirectory `storlab.<pid>.<n>` in
//!   it and writes only there.
//! * A path that does not exist: storlab creates that file (O_EXCL).
//! * An existing file or a block device: read-only phases are allowed;
//!   writing needs `allow_destroy`. Anything in use is refused even then,
//!   walking the device stack upwards (`storlab_host::blockstack`): a
//!   device that is mounted, is swap, has a partition in use, has holders
//!   (md/dm stacks) or backs a loop device; a file that is a loop device's
//!   backing file (by device and inode), mounted or not, since writing it
//!   changes what the loop device presents. The refusal names the whole
//!   chain ("/srv/img backs /dev/loop3, which is mounted on /mnt/x") and
//!   what a symbolic link resolves to. Files inside a directory target are
//!   storlab's own (created `O_EXCL`), so none can be a backing file.
//!   Above all the kernel is asked: a device to be written is opened
//!   with `O_EXCL`, which fails for every device the kernel knows to be
//!   claimed (mounted file systems including btrfs, md/dm/bcache members,
//!   another program's exclusive open), and that claim is held for the whole
//!   run so nothing can mount it meanwhile.
//! * Anything else (FIFO, socket, character device) is refused before it is
//!   opened, and so is a new file on `/dev` (a mistyped device name).
//! * Sizes are multiplied with checked arithmetic: a size × numjobs that
//!   does not fit in 64 bits is refused, never wrapped past the free-space
//!   check.

use crate::sys;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use storlab_host::blockstack::{Snapshot, Use, shown};
use storlab_types::{FileLayout, PhaseParams, TargetInfo};

/// Why a target cannot be used. Each message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{0}")]
    Refused(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TargetError + '_ {
    move |source| TargetError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Kind of target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Directory,
    File,
    BlockDevice,
}

/// One data file (or the device) the phases use.
#[derive(Debug, Clone)]
pub struct DataFile {
    pub path: PathBuf,
    /// Bytes the phases need in it.
    pub size: u64,
    /// storlab created it (so it may remove it, and it must be laid out before reading).
    pub created: bool,
}

/// The target, resolved and checked.
#[derive(Debug, Clone)]
pub struct ResolvedTarget {
    pub kind: TargetKind,
    pub info: TargetInfo,
    /// Directory storlab created for its files (removed at cleanup).
    pub run_dir: Option<PathBuf>,
    /// A parent directory storlab created (the default `./storlab-scratch`).
    pub created_parent: Option<PathBuf>,
    /// Per-job files (`job0.dat`...) or the single shared file/device.
    pub files: Vec<DataFile>,
    /// Whether the phases use one shared file (or the device).
    pub shared: bool,
    /// The exclusive (`O_EXCL`) open of a block device the job writes,
    /// held until the target is dropped so nothing mounts or claims it
    /// meanwhile.
    claim: Option<std::sync::Arc<fs::File>>,
}

/// Safety switches from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct SafetyOptions {
    pub allow_destroy: bool,
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// A mount as the checks here use it, from the one mount-table parser
/// (`storlab_host::mountinfo`, which keeps non-ASCII mount points intact).
#[derive(Debug, Clone)]
struct Mount {
    dev: (u32, u32),
    mount_point: String,
    fstype: String,
    source: String,
}

fn mounts() -> Vec<Mount> {
    storlab_host::mountinfo::current()
        .into_iter()
        .map(|m| Mount {
            dev: (m.major, m.minor),
            mount_point: m.mount_point.to_string_lossy().into_owned(),
            fstype: m.fs_type,
            source: m.source,
        })
        .collect()
}

/// sysfs directory of a block device number, and of its whole disk.
fn sysfs_block(dev: (u32, u32)) -> Option<(PathBuf, PathBuf)> {
    let p = fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1)).ok()?;
    let disk = if p.join("partition").exists() {
        p.parent()?.to_path_buf()
    } else {
        p.clone()
    };
    Some((p, disk))
}

fn fill_device_facts(info: &mut TargetInfo, dev: (u32, u32)) {
    if let Some((p, disk)) = sysfs_block(dev) {
        if info.device.is_none() {
            info.device = p
                .file_name()
                .map(|n| format!("/dev/{}", n.to_string_lossy()));
        }
        info.device_model = read_trim(disk.join("device/model"))
            .or_else(|| read_trim(disk.join("dm/name")).map(|n| format!("device-mapper {n}")))
            .or_else(|| read_trim(disk.join("md/level")).map(|l| format!("md {l}")))
            .or_else(|| {
                read_trim(disk.join("loop/backing_file")).map(|f| format!("loop over {f}"))
            });
        info.rotational = read_trim(disk.join("queue/rotational")).map(|r| r == "1");
        info.logical_block_size_bytes =
            read_trim(disk.join("queue/logical_block_size")).and_then(|v| v.parse().ok());
        info.physical_block_size_bytes =
            read_trim(disk.join("queue/physical_block_size")).and_then(|v| v.parse().ok());
    }
}

/// File system facts for a path on it.
fn fill_fs_facts(info: &mut TargetInfo, path: &Path) {
    if let Ok(md) = fs::metadata(path) {
        let dev = storlab_host::os::dev_split(md.dev());
        if let Some(m) = mounts().into_iter().rev().find(|m| m.dev == dev) {
            info.filesystem = Some(m.fstype.clone());
            info.mount_point = Some(m.mount_point.clone());
            if m.source.starts_with("/dev/") {
                info.device = Some(m.source.clone());
            }
        }
        fill_device_facts(info, dev);
    }
    info.free_bytes_before = storlab_host::os::fs_space(path).ok().map(|s| s.avail_bytes);
}

/// Why a block device may not be written, if it may not: anything that
/// uses it, walked up the device stack (a mount, swap, a partition in use,
/// a dm/md holder, a loop device over it, and what uses those in turn).
pub fn device_in_use(rdev: u64, path: &Path) -> Option<String> {
    let used = Snapshot::read().device_use(storlab_host::os::dev_split(rdev))?;
    Some(in_use_message(&used, path))
}

/// Why an existing regular file may not be written, if it may not: it is
/// the backing file of a loop device (by device and inode, so a renamed or
/// hard-linked file is recognised), whatever is built on that.
fn file_in_use(md: &fs::Metadata, path: &Path) -> Option<String> {
    let used = Snapshot::read().file_use(storlab_host::os::dev_split(md.dev()), md.ino())?;
    Some(in_use_message(&used, path))
}

/// The refusal for something in use: the whole chain from the path the
/// user gave (and what a symbolic link resolves to) to the top, and the fix.
fn in_use_message(used: &Use, path: &Path) -> String {
    let fix = used.fix();
    let mut fix_chars = fix.chars();
    let fix = match fix_chars.next() {
        Some(c) => c.to_uppercase().chain(fix_chars).collect(),
        None => fix,
    };
    format!(
        "refusing to write: {}. {fix}: storlab never writes to a device or file that a mounted \
         file system or another device is built on, even with --allow-destroy",
        used.describe(&shown(path))
    )
}

/// Bytes a phase needs per file, given the file set: `size × numjobs` in
/// one shared file, checked (a product past 16 EiB is refused, never wrapped).
fn needs(p: &PhaseParams, shared: bool) -> Result<Vec<u64>, TargetError> {
    if shared && crate::placement::has_offsets(p) {
        // The last job's region ends last (checked in placement::check_offsets).
        let last = p.numjobs.saturating_sub(1);
        let end = crate::placement::job_base(p, last, true)
            .and_then(|b| b.checked_add(p.size_bytes))
            .unwrap_or(u64::MAX);
        Ok(vec![end])
    } else if shared {
        let total = p.size_bytes.checked_mul(u64::from(p.numjobs)).ok_or_else(|| {
            TargetError::Refused(format!(
                "phase {}: --size {} × --numjobs {} does not fit in 64 bits: use a smaller --size or --numjobs",
                p.name, p.size_bytes, p.numjobs
            ))
        })?;
        Ok(vec![total])
    } else if !p.groups.is_empty() {
        // Each group's jobs, in order, with the group's own size.
        Ok(crate::groups::job_sizes(p))
    } else {
        // fio's offsets (placement.rs): job j's file ends at its region's end.
        Ok((0..p.numjobs)
            .map(|j| crate::placement::job_base(p, j, false).unwrap_or(0) + p.size_bytes)
            .collect())
    }
}

/// Where the part of each file a phase uses starts: 0 unless fio's offsets
/// leave a hole before it (never allocated, never written).
fn starts(p: &PhaseParams, shared: bool) -> Vec<u64> {
    if !crate::placement::has_offsets(p) || !p.groups.is_empty() {
        return Vec::new();
    }
    if shared {
        vec![p.offset_bytes]
    } else {
        (0..p.numjobs)
            .map(|j| crate::placement::job_base(p, j, false).unwrap_or(0))
            .collect()
    }
}

/// Sum of sizes, checked.
fn total_of(sizes: &[u64]) -> Result<u64, TargetError> {
    sizes
        .iter()
        .try_fold(0u64, |a, &b| a.checked_add(b))
        .ok_or_else(|| {
            TargetError::Refused(
            "the files the job needs add up to more than 16 EiB: use a smaller --size or --numjobs"
                .into(),
        )
        })
}

/// Claim a block device for writing the way the kernel understands:
/// `open(O_EXCL)` on a block device fails with EBUSY while a file system is
/// mounted on it, it is an md/dm/bcache member, or another program holds it
/// exclusively.
fn claim_device(path: &Path) -> Result<fs::File, TargetError> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EBUSY) {
                TargetError::Refused(format!(
                    "refusing to write to {}: the kernel reports it in use (a mounted file system, \
                     a RAID/LVM/bcache member, or another program holds it exclusively); \
                     unmount or release it first; storlab never writes to a device in use",
                    shown(path)
                ))
            } else {
                io_err(path)(e)
            }
        })
}

/// Whether `dir` lies on `/dev` (devtmpfs): a new file there is RAM, not
/// the disk the user meant (a mistyped device name). `/dev/shm` is a
/// deliberate tmpfs and allowed.
fn on_dev(dir: &Path) -> bool {
    let Ok(c) = fs::canonicalize(dir) else {
        return false;
    };
    if c.starts_with("/dev/shm") {
        return false;
    }
    if c.starts_with("/dev") {
        return true;
    }
    fs::metadata(&c).is_ok_and(|md| {
        let dev = storlab_host::os::dev_split(md.dev());
        mounts()
            .iter()
            .rev()
            .find(|m| m.dev == dev)
            .is_some_and(|m| m.fstype == "devtmpfs")
    })
}

/// Resolve `target` (None = `./storlab-scratch`) for `phases`, checking safety
/// and free space, and create the files storlab owns (pre-allocated).
pub fn resolve(
    target: Option<&Path>,
    phases: &[PhaseParams],
    safety: SafetyOptions,
) -> Result<ResolvedTarget, TargetError> {
    let writes = phases.iter().any(|p| p.rw.writes());
    let any_shared = phases.iter().any(|p| p.layout != FileLayout::PerJob);
    let default_dir = PathBuf::from("storlab-scratch");
    let given = target.map(Path::to_path_buf);
    let path = given.clone().unwrap_or_else(|| default_dir.clone());
    let meta = fs::metadata(&path);
    // Bytes the phases need in a single shared file or device.
    let mut need = 0u64;
    for p in phases {
        need = need.max(total_of(&needs(p, true)?)?);
    }
    let mut info = TargetInfo {
        path: path.display().to_string(),
        ..Default::default()
    };

    match meta {
        Ok(md) if md.file_type().is_block_device() => {
            info.kind = "block_device".into();
            let f = fs::File::open(&path).map_err(io_err(&path))?;
            let dev_size = sys::block_device_size(&f).map_err(io_err(&path))?;
            let mut claim = None;
            if writes {
                // In use is refused first: --allow-destroy would not help.
                if let Some(why) = device_in_use(md.rdev(), &path) {
                    return Err(TargetError::Refused(why));
                }
                if !safety.allow_destroy {
                    return Err(TargetError::Refused(format!(
                        "{} is a block device and the job writes to it: everything on it would be destroyed. \
                         Pass --allow-destroy if that is what you want, or run read-only phases (--rw read/randread)",
                        path.display()
                    )));
                }
                claim = Some(std::sync::Arc::new(claim_device(&path)?));
            }
            if need > dev_size {
                return Err(TargetError::Refused(format!(
                    "{} holds {} bytes but the job needs {need} (size × numjobs): use a smaller --size",
                    path.display(),
                    dev_size
                )));
            }
            info.device = Some(path.display().to_string());
            fill_device_facts(&mut info, storlab_host::os::dev_split(md.rdev()));
            info.files = vec![path.display().to_string()];
            let mut t = single_file(TargetKind::BlockDevice, info, path.clone(), need, false);
            t.claim = claim;
            Ok(t)
        }
        Ok(md) if md.is_file() => {
            info.kind = "file".into();
            if writes && let Some(why) = file_in_use(&md, &path) {
                return Err(TargetError::Refused(why));
            }
            if writes && !safety.allow_destroy {
                return Err(TargetError::Refused(format!(
                    "{} already exists and the job writes to it: its contents would be destroyed. \
                     Pass --allow-destroy to overwrite it, or give a directory or a new file name",
                    path.display()
                )));
            }
            if !writes && need > md.len() {
                return Err(TargetError::Refused(format!(
                    "{} is {} bytes but the job reads {need} (size × numjobs): use a smaller --size",
                    path.display(),
                    md.len()
                )));
            }
            fill_fs_facts(&mut info, &path);
            if writes && need > md.len() {
                check_space(&path, need - md.len(), &info)?;
            }
            info.files = vec![path.display().to_string()];
            Ok(single_file(TargetKind::File, info, path, need, false))
        }
        Ok(md) if md.is_dir() => {
            if on_dev(&path) {
                return Err(TargetError::Refused(format!(
                    "{} is on /dev (RAM, not a disk): give a block device, or a directory elsewhere",
                    path.display()
                )));
            }
            info.kind = "directory".into();
            make_in_dir(&path, None, phases, any_shared, info)
        }
        Ok(md) => Err(TargetError::Refused(format!(
            "{} is {}, not a directory, a regular file or a block device: give a directory, a new file name or a disk",
            path.display(),
            kind_name(&md)
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if given.is_none() {
                // The default scratch directory: create it, remove it afterwards if empty.
                fs::create_dir(&path).map_err(io_err(&path))?;
                info.kind = "directory".into();
                return make_in_dir(&path, Some(path.clone()), phases, any_shared, info);
            }
            // A new file: storlab creates it, all jobs share it.
            info.kind = "file".into();
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err(TargetError::Refused(format!(
                    "{} does not exist and its directory {} does not either: create the directory first",
                    path.display(),
                    parent.display()
                )));
            }
            if on_dev(parent) {
                return Err(TargetError::Refused(format!(
                    "{} does not exist, and a new file on /dev would live in RAM, not on a disk: \
                     check the device name (lsblk lists them), or give a directory or file elsewhere",
                    path.display()
                )));
            }
            fill_fs_facts(&mut info, parent);
            if phases.iter().any(crate::placement::has_offsets) {
                // fio's offsets leave holes around the jobs' regions: the
                // file is sparse and only the regions need space.
                let regions = phases
                    .iter()
                    .map(|p| p.size_bytes.saturating_mul(u64::from(p.numjobs)))
                    .max()
                    .unwrap_or(0);
                check_space(parent, regions.min(need), &info)?;
                create_file(&path, need, false, 0)?;
            } else {
                check_space(parent, need, &info)?;
                create_file(&path, need, phases.iter().all(|p| p.fallocate), 0)?;
            }
            info.files = vec![path.display().to_string()];
            info.created_by_storlab = true;
            Ok(single_file(TargetKind::File, info, path, need, true))
        }
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// A target that is one file or device shared by all jobs.
fn single_file(
    kind: TargetKind,
    info: TargetInfo,
    path: PathBuf,
    size: u64,
    created: bool,
) -> ResolvedTarget {
    ResolvedTarget {
        kind,
        info,
        run_dir: None,
        created_parent: None,
        files: vec![DataFile {
            path,
            size,
            created,
        }],
        shared: true,
        claim: None,
    }
}

/// What kind of file `md` describes, for messages.
fn kind_name(md: &fs::Metadata) -> &'static str {
    let t = md.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

fn check_space(dir: &Path, need: u64, info: &TargetInfo) -> Result<(), TargetError> {
    let free = storlab_host::os::fs_space(dir)
        .map_err(io_err(dir))?
        .avail_bytes;
    // Keep a margin: 1 % of the need plus 16 MiB for metadata.
    let want = need.saturating_add(need / 100).saturating_add(16 << 20);
    if free < want {
        return Err(TargetError::Refused(format!(
            "not enough free space on {} ({}): the job needs {} and {} is free. Use a smaller --size or --numjobs, or another TARGET",
            info.mount_point
                .as_deref()
                .unwrap_or("the target file system"),
            dir.display(),
            storlab_types::format_bytes(want),
            storlab_types::format_bytes(free)
        )));
    }
    Ok(())
}

/// Create a new file (never an existing one), pre-allocated from `from`
/// (0 but where fio's offsets leave a hole) unless `preallocate` is off.
fn create_file(path: &Path, size: u64, preallocate: bool, from: u64) -> Result<(), TargetError> {
    let flags = sys::OpenFlags {
        write: true,
        create_new: true,
        direct: false,
    };
    let f = sys::open(path, flags).map_err(io_err(path))?;
    // fallocate of nothing is EINVAL (the empty slot of a job that reads
    // another group's or existing files).
    if !preallocate || size == 0 {
        return f.set_len(size).map_err(io_err(path));
    }
    let allocated = if from == 0 {
        sys::fallocate(&f, size)
    } else {
        f.set_len(size)
            .and_then(|()| sys::fallocate_range(&f, from, size.saturating_sub(from)))
    };
    match allocated {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            f.set_len(size).map_err(io_err(path))
        }
        Err(e) => {
            drop(f);
            let _ = fs::remove_file(path);
            Err(TargetError::Io {
                path: path.to_path_buf(),
                source: e,
            })
        }
    }
}

fn make_in_dir(
    dir: &Path,
    created_parent: Option<PathBuf>,
    phases: &[PhaseParams],
    shared: bool,
    mut info: TargetInfo,
) -> Result<ResolvedTarget, TargetError> {
    fill_fs_facts(&mut info, dir);
    // Files: one per job (max numjobs over phases), or one shared file if any
    // phase shares. A file's size is the most any phase needs of it.
    let mut sizes: Vec<u64> = Vec::new();
    let mut from: Vec<u64> = Vec::new();
    for p in phases {
        let st = starts(p, shared);
        for (i, n) in needs(p, shared)?.into_iter().enumerate() {
            if sizes.len() <= i {
                sizes.push(0);
                from.push(u64::MAX);
            }
            sizes[i] = sizes[i].max(n);
            from[i] = from[i].min(st.get(i).copied().unwrap_or(0));
        }
    }
    // What is allocated: each file from where its first region starts.
    let used: Vec<u64> = sizes
        .iter()
        .zip(&from)
        .map(|(s, f)| s.saturating_sub(*f))
        .collect();
    let total = match total_of(&used) {
        Ok(t) => t,
        Err(e) => {
            if let Some(p) = &created_parent {
                let _ = fs::remove_dir(p);
            }
            return Err(e);
        }
    };
    let cleanup_parent = |e| {
        if let Some(p) = &created_parent {
            let _ = fs::remove_dir(p);
        }
        e
    };
    check_space(dir, total, &info).map_err(cleanup_parent)?;
    let run_dir = fresh_run_dir(dir).map_err(cleanup_parent)?;
    let mut files = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let path = run_dir.join(if shared {
            "shared.dat".to_string()
        } else {
            format!("job{i}.dat")
        });
        let start = from.get(i).copied().unwrap_or(0);
        if let Err(e) = create_file(&path, *size, phases.iter().all(|p| p.fallocate), start) {
            for f in &files {
                let f: &DataFile = f;
                let _ = fs::remove_file(&f.path);
            }
            let _ = fs::remove_dir(&run_dir);
            return Err(cleanup_parent(e));
        }
        files.push(DataFile {
            path,
            size: *size,
            created: true,
        });
    }
    info.files = files.iter().map(|f| f.path.display().to_string()).collect();
    info.created_by_storlab = true;
    Ok(ResolvedTarget {
        kind: TargetKind::Directory,
        info,
        run_dir: Some(run_dir),
        created_parent,
        files,
        shared,
        claim: None,
    })
}

/// A fresh subdirectory `storlab.<pid>.<n>` of `dir` that nobody else uses.
fn fresh_run_dir(dir: &Path) -> Result<PathBuf, TargetError> {
    for n in 0..1000u32 {
        let cand = dir.join(format!("storlab.{}.{n}", std::process::id()));
        match fs::create_dir(&cand) {
            Ok(()) => return Ok(cand),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(dir)(e)),
        }
    }
    Err(TargetError::Refused(format!(
        "cannot make a run directory in {}",
        dir.display()
    )))
}

/// For a job that makes its own files and directories (`storlab md`): check
/// that `dir` is an existing directory storlab may work in (not a file, a
/// device, or a place on `/dev`), and create storlab's own subdirectory
/// `storlab.<pid>.<n>` in it. Returns that subdirectory and the target facts
/// (file system, device, free space); everything the job makes goes inside.
pub fn own_run_dir(dir: &Path) -> Result<(PathBuf, TargetInfo), TargetError> {
    let md = fs::metadata(dir).map_err(io_err(dir))?;
    if !md.is_dir() {
        return Err(TargetError::Refused(format!(
            "{} is not a directory: give a directory (storlab works in its own subdirectory of it)",
            dir.display()
        )));
    }
    if on_dev(dir) {
        return Err(TargetError::Refused(format!(
            "{} is on /dev (RAM, not a disk): give a directory on the file system to measure \
             (/dev/shm is allowed for a tmpfs)",
            dir.display()
        )));
    }
    let mut info = TargetInfo {
        path: dir.display().to_string(),
        kind: "directory".into(),
        ..Default::default()
    };
    fill_fs_facts(&mut info, dir);
    let run_dir = fresh_run_dir(dir)?;
    info.files = vec![run_dir.display().to_string()];
    info.created_by_storlab = true;
    Ok((run_dir, info))
}

impl ResolvedTarget {
    /// The target another process resolved and created (an MPI rank 0 for
    /// its peers): the same files, nothing of them this process may remove.
    pub fn from_peer(
        kind: TargetKind,
        info: TargetInfo,
        files: Vec<DataFile>,
        shared: bool,
    ) -> ResolvedTarget {
        ResolvedTarget {
            kind,
            info,
            run_dir: None,
            created_parent: None,
            files,
            shared,
            claim: None,
        }
    }

    /// Remove every file and directory storlab created. Safe to call twice.
    pub fn cleanup(&self) {
        for f in &self.files {
            if f.created {
                let _ = fs::remove_file(&f.path);
            }
        }
        if let Some(d) = &self.run_dir {
            let _ = fs::remove_dir(d);
        }
        if let Some(d) = &self.created_parent {
            let _ = fs::remove_dir(d); // only if empty
        }
    }
}

/// Whether O_DIRECT works where `target` (None = `./storlab-scratch`) would
/// put its data: opens the device or file, or creates and removes a probe
/// file in the directory. Used to choose the default cache mode.
pub fn probe_direct(target: Option<&Path>) -> bool {
    let path = target
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = match fs::metadata(&path) {
        Ok(md) if md.is_dir() => path,
        // Never open a FIFO (it blocks) or a character device: resolve()
        // refuses them with a clear message.
        Ok(md) if !md.is_file() && !md.file_type().is_block_device() => return false,
        Ok(_) => {
            return sys::open(
                &path,
                sys::OpenFlags {
                    write: false,
                    create_new: false,
                    direct: true,
                },
            )
            .is_ok();
        }
        Err(_) => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let probe = dir.join(format!(".storlab-direct-probe.{}", std::process::id()));
    match sys::open(
        &probe,
        sys::OpenFlags {
            write: true,
            create_new: true,
            direct: true,
        },
    ) {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            true
        }
        // Never remove a file that was there before us.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(_) => {
            let _ = fs::remove_file(&probe);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(pairs: &[(&str, &str)]) -> PhaseParams {
        let spec = crate::options::spec_from_pairs(pairs.iter().copied()).unwrap();
        crate::options::resolve_phase(&spec, 0).unwrap()
    }

    #[test]
    fn size_times_numjobs_overflow_is_refused_not_wrapped() {
        // 6148914691236519936 × 3 wraps to 0 in 64 bits.
        let mut p = phase(&[("rw", "write"), ("size", "1M"), ("numjobs", "3")]);
        p.size_bytes = 6_148_914_691_236_519_936;
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("new.dat");
        for layout in [FileLayout::PerJob, FileLayout::SharedRegions] {
            p.layout = layout;
            let e = resolve(
                Some(&target),
                std::slice::from_ref(&p),
                SafetyOptions::default(),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("64 bits") || e.contains("16 EiB"), "{e}");
            let e = resolve(
                Some(d.path()),
                std::slice::from_ref(&p),
                SafetyOptions::default(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("64 bits") || e.contains("16 EiB") || e.contains("free space"),
                "{e}"
            );
        }
        assert!(!target.exists());
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "nothing created"
        );
    }

    #[test]
    fn fifo_target_is_refused_without_opening_it() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils)");
        // probe_direct must not block on the FIFO (a reader waits for a writer).
        assert!(!probe_direct(Some(&fifo)));
        let p = phase(&[("rw", "read"), ("size", "1M")]);
        let e = resolve(Some(&fifo), &[p], SafetyOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("FIFO"), "{e}");
        let p = phase(&[("rw", "read"), ("size", "1M")]);
        let e = resolve(Some(Path::new("/dev/null")), &[p], SafetyOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
    }

    #[test]
    fn new_file_on_dev_is_refused() {
        let p = phase(&[("rw", "write"), ("size", "1M")]);
        let typo = Path::new("/dev/storlab-no-such-disk-xyz");
        let e = resolve(Some(typo), &[p], SafetyOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev"), "{e}");
        assert!(!typo.exists());
    }

    #[test]
    fn own_run_dir_makes_a_fresh_subdirectory_and_refuses_files_and_dev() {
        let d = tempfile::tempdir().unwrap();
        let (a, info) = own_run_dir(d.path()).unwrap();
        let (b, _) = own_run_dir(d.path()).unwrap();
        let pid = std::process::id();
        assert_eq!(a, d.path().join(format!("storlab.{pid}.0")));
        assert_eq!(b, d.path().join(format!("storlab.{pid}.1")));
        assert!(a.is_dir() && b.is_dir());
        assert!(info.created_by_storlab);
        assert_eq!(info.kind, "directory");
        let f = d.path().join("f");
        fs::write(&f, b"x").unwrap();
        let e = own_run_dir(&f).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = own_run_dir(Path::new("/dev")).unwrap_err().to_string();
        assert!(e.contains("/dev"), "{e}");
    }

    #[test]
    fn host_facts_are_filled() {
        let h = storlab_host::host_info();
        assert!(!h.kernel.is_empty());
        assert!(h.cpu_count >= 1);
        assert!(h.mem_total_bytes > 0);
        assert!(h.page_size_bytes >= 4096);
    }
}
