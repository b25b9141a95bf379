//! Who uses a block device or a file, walking the device stack upwards:
//! the facts bench needs before it writes a device or an existing file.
//!
//! A block device is in use when a file system on it is mounted, it is
//! swap, it has holders (dm, md, bcache: `/sys/class/block/X/holders`),
//! one of its partitions is in use, or it is the backing device of a loop
//! device. A regular file is in use when it is a loop device's backing
//! file, matched by device and inode: `LOOP_GET_STATUS64` reports those of
//! the file the loop device holds open (they survive a rename), and when
//! the ioctl cannot be used, `stat` of `loop/backing_file` does. The kernel
//! reports none of the loop cases as busy (an exclusive open of the
//! backing device succeeds), which is why they are walked here.
//!
//! The walk is recursive (a file backing `loop3`, which backs `loop4`,
//! which is mounted) and yields the whole chain, so a refusal can name it:
//! "/srv/img backs /dev/loop3, which backs /dev/loop4, which is mounted on
//! /mnt/x (ext4)". A chain that ends in a mount is preferred to one that
//! ends in swap, and both to one that ends at a device nothing mounts
//! (still in use: it is claimed by the device above).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// How deep the walk goes (a stack is never this tall; a cycle stops here).
const MAX_DEPTH: usize = 16;

/// A device number (major, minor).
pub type DevNum = (u32, u32);

/// The identity of a loop device's backing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    /// Device of the file system holding the file.
    pub dev: DevNum,
    pub ino: u64,
    /// The device number it stands for, when the backing file is a block
    /// device node (a loop device over another device); None otherwise.
    pub rdev: Option<DevNum>,
}

/// One block device (a whole disk, a partition, a dm/md/loop device).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDev {
    /// Kernel name: `sda1`, `loop3`, `dm-0`.
    pub name: String,
    pub dev: DevNum,
    /// The whole disk of a partition.
    pub parent: Option<String>,
    /// Kernel names of the devices built on this one (`holders/`).
    pub holders: Vec<String>,
    /// A device-mapper device's name (`vg-lv`, from `dm/name`).
    pub dm_name: Option<String>,
    /// A loop device's backing file: its path as sysfs shows it, and its
    /// identity when known.
    pub loop_backing: Option<(String, Option<FileId>)>,
}

/// A mount, as far as the walk needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountRef {
    pub dev: DevNum,
    /// The kernel name of the device the mount's source resolves to
    /// (btrfs reports an anonymous device number, so numbers alone miss it).
    pub source_name: Option<String>,
    pub mount_point: String,
    pub fs_type: String,
}

/// One step up the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A partition of the device below (`/dev/sda1`).
    Partition(String),
    /// A device that holds the one below (`/dev/dm-0`).
    HeldBy(String),
    /// A loop device whose backing file or device is the one below.
    Backs(String),
}

/// Where a chain ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Top {
    Mounted {
        mount_point: String,
        fs_type: String,
    },
    Swap,
    /// A device nothing mounts, but which the last step claims.
    Claimed,
}

/// How something is used: the steps up the stack and what is at the top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub steps: Vec<Step>,
    pub top: Top,
}

impl Use {
    fn rank(&self) -> u8 {
        match self.top {
            Top::Mounted { .. } => 0,
            Top::Swap => 1,
            Top::Claimed => 2,
        }
    }

    /// The chain in words, starting from `subject` (the path the user
    /// gave): "/srv/img backs /dev/loop3, which is mounted on /mnt/x (ext4)".
    pub fn describe(&self, subject: &str) -> String {
        let mut s = subject.to_string();
        for (i, step) in self.steps.iter().enumerate() {
            s.push_str(if i == 0 { " " } else { ", which " });
            match step {
                Step::Partition(p) => s.push_str(&format!("has its partition {p}")),
                Step::HeldBy(h) => s.push_str(&format!("is held by {h}")),
                Step::Backs(l) => s.push_str(&format!("backs {l}")),
            }
        }
        match &self.top {
            Top::Mounted {
                mount_point,
                fs_type,
            } => s.push_str(&format!(", which is mounted on {mount_point} ({fs_type})")),
            Top::Swap => s.push_str(", which is in use as swap"),
            Top::Claimed => {}
        }
        s
    }

    /// What the user can do about it.
    pub fn fix(&self) -> String {
        let loops: Vec<&str> = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Backs(l) => Some(l.as_str()),
                _ => None,
            })
            .collect();
        let mut todo = match &self.top {
            Top::Mounted { mount_point, .. } => vec![format!("unmount {mount_point}")],
            Top::Swap => vec!["swapoff it".to_string()],
            Top::Claimed => Vec::new(),
        };
        if self.steps.iter().any(|s| matches!(s, Step::HeldBy(_))) {
            todo.push("remove the device built on it (dmsetup remove, mdadm --stop)".into());
        }
        // Detach the topmost loop device first.
        for l in loops.iter().rev() {
            todo.push(format!("detach {l} (losetup -d {l})"));
        }
        if todo.is_empty() {
            "release it first".into()
        } else {
            format!("{} first", todo.join(", then "))
        }
    }
}

/// The block devices, mounts and swap areas of the system at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub devices: Vec<BlockDev>,
    pub mounts: Vec<MountRef>,
    /// Kernel names of devices in use as swap.
    pub swaps: Vec<String>,
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn parse_devnum(s: &str) -> Option<DevNum> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn dir_names(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The kernel name of the block device a path resolves to (`/dev/loop3`,
/// `/dev/disk/by-id/...`), if it is one.
fn block_name_of(path: &Path) -> Option<String> {
    let md = fs::metadata(path).ok()?;
    use std::os::unix::fs::FileTypeExt;
    if !md.file_type().is_block_device() {
        return None;
    }
    let dev = crate::os::dev_split(md.rdev());
    let p = fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1)).ok()?;
    Some(p.file_name()?.to_string_lossy().into_owned())
}

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The kernel's encoding of a device number in `loop_info64`
/// (`huge_encode_dev`).
fn decode_dev(d: u64) -> DevNum {
    let major = ((d >> 8) & 0xfff) as u32;
    let minor = ((d & 0xff) | ((d >> 12) & 0xfff00)) as u32;
    (major, minor)
}

/// Device and inode of the file loop device `name` holds, from
/// `LOOP_GET_STATUS64` on `/dev/<name>`. Not for an autoclear device: its
/// last close would detach it.
fn loop_status(name: &str, sys_dir: &Path) -> Option<FileId> {
    if read_trim(&sys_dir.join("loop/autoclear")).as_deref() == Some("1") {
        return None;
    }
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(format!("/dev/{name}"))
        .ok()?;
    // A block device node whose number is not this loop device's (a
    // renamed node) would answer for another device.
    let md = f.metadata().ok()?;
    let want = parse_devnum(&read_trim(&sys_dir.join("dev"))?)?;
    if crate::os::dev_split(md.rdev()) != want {
        return None;
    }
    // SAFETY: LoopInfo64 is plain integers and byte arrays, for which all
    // zeroes is a valid value.
    #[allow(unsafe_code)]
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64` (the
    // layout above, 232 bytes) through the pointer, which points at a
    // live, writable value of that type; the fd is open for the call.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            LOOP_GET_STATUS64,
            &mut info as *mut LoopInfo64,
        )
    };
    if r != 0 {
        return None;
    }
    let rdev = decode_dev(info.lo_rdevice);
    Some(FileId {
        dev: decode_dev(info.lo_device),
        ino: info.lo_inode,
        rdev: (info.lo_rdevice != 0).then_some(rdev),
    })
}

/// The identity of a path by `stat` (the fallback for a loop device's
/// backing file).
pub fn file_id(path: &Path) -> Option<FileId> {
    let md = fs::metadata(path).ok()?;
    use std::os::unix::fs::FileTypeExt;
    Some(FileId {
        dev: crate::os::dev_split(md.dev()),
        ino: md.ino(),
        rdev: md
            .file_type()
            .is_block_device()
            .then(|| crate::os::dev_split(md.rdev())),
    })
}

impl Snapshot {
    /// The system now: `/sys/class/block`, `/proc/self/mountinfo`,
    /// `/proc/swaps`.
    pub fn read() -> Snapshot {
        let mut devices = Vec::new();
        for name in dir_names(Path::new("/sys/class/block")) {
            let Ok(dir) = fs::canonicalize(Path::new("/sys/class/block").join(&name)) else {
                continue;
            };
            let Some(dev) = read_trim(&dir.join("dev")).and_then(|d| parse_devnum(&d)) else {
                continue;
            };
            let parent = if dir.join("partition").exists() {
                dir.parent()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
            } else {
                None
            };
            let loop_backing = read_trim(&dir.join("loop/backing_file")).map(|path| {
                let id = loop_status(&name, &dir).or_else(|| {
                    let p = path.strip_suffix(" (deleted)").unwrap_or(&path);
                    file_id(Path::new(p))
                });
                (path, id)
            });
            devices.push(BlockDev {
                holders: dir_names(&dir.join("holders")),
                dm_name: read_trim(&dir.join("dm/name")),
                name,
                dev,
                parent,
                loop_backing,
            });
        }
        let mounts = crate::mountinfo::current()
            .into_iter()
            .map(|m| MountRef {
                dev: (m.major, m.minor),
                source_name: if m.source.starts_with("/dev/") {
                    block_name_of(Path::new(&m.source))
                } else {
                    None
                },
                mount_point: m.mount_point.to_string_lossy().into_owned(),
                fs_type: m.fs_type,
            })
            .collect();
        let swaps = fs::read_to_string("/proc/swaps")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .filter_map(|p| block_name_of(Path::new(p)))
            .collect();
        Snapshot {
            devices,
            mounts,
            swaps,
        }
    }

    fn by_name(&self, name: &str) -> Option<&BlockDev> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// How the block device `dev` is used, if it is (including a file
    /// system mounted on it directly).
    pub fn device_use(&self, dev: DevNum) -> Option<Use> {
        let d = self.devices.iter().find(|d| d.dev == dev)?;
        self.walk(&d.name, 0)
    }

    /// How the file with identity (`dev`, `ino`) is used, if it is: the
    /// loop devices it backs, and what uses them.
    pub fn file_use(&self, dev: DevNum, ino: u64) -> Option<Use> {
        let loops = self.devices.iter().filter(|l| {
            l.loop_backing
                .as_ref()
                .and_then(|b| b.1)
                .is_some_and(|id| id.rdev.is_none() && id.dev == dev && id.ino == ino)
        });
        best(loops.map(|l| self.above(Step::Backs(format!("/dev/{}", l.name)), &l.name, 1)))
    }

    /// The best chain from device `name` (mounted, swap, or what is built
    /// on it).
    fn walk(&self, name: &str, depth: usize) -> Option<Use> {
        let d = self.by_name(name)?;
        if let Some(m) = self
            .mounts
            .iter()
            .rev()
            .find(|m| m.dev == d.dev || m.source_name.as_deref() == Some(name))
        {
            return Some(Use {
                steps: Vec::new(),
                top: Top::Mounted {
                    mount_point: m.mount_point.clone(),
                    fs_type: m.fs_type.clone(),
                },
            });
        }
        if self.swaps.iter().any(|s| s == name) {
            return Some(Use {
                steps: Vec::new(),
                top: Top::Swap,
            });
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        let parts = self
            .devices
            .iter()
            .filter(|p| p.parent.as_deref() == Some(name))
            .filter_map(|p| {
                let mut u = self.walk(&p.name, depth + 1)?;
                u.steps
                    .insert(0, Step::Partition(format!("/dev/{}", p.name)));
                Some(u)
            });
        let holders = d.holders.iter().map(|h| {
            let shown = match self.by_name(h).and_then(|d| d.dm_name.as_deref()) {
                Some(dm) => format!("/dev/{h} (/dev/mapper/{dm})"),
                None => format!("/dev/{h}"),
            };
            self.above(Step::HeldBy(shown), h, depth + 1)
        });
        let loops = self
            .devices
            .iter()
            .filter(|l| {
                l.loop_backing
                    .as_ref()
                    .and_then(|b| b.1)
                    .is_some_and(|id| id.rdev == Some(d.dev))
            })
            .map(|l| self.above(Step::Backs(format!("/dev/{}", l.name)), &l.name, depth + 1));
        best(parts.chain(holders).chain(loops))
    }

    /// `step` up to device `name`, then whatever uses it; the step alone
    /// (claimed) when nothing does.
    fn above(&self, step: Step, name: &str, depth: usize) -> Use {
        let mut u = self.walk(name, depth).unwrap_or(Use {
            steps: Vec::new(),
            top: Top::Claimed,
        });
        u.steps.insert(0, step);
        u
    }
}

/// The chain that ends highest (a mount before swap before a claim).
fn best(uses: impl Iterator<Item = Use>) -> Option<Use> {
    let mut out: Option<Use> = None;
    for u in uses {
        if out.as_ref().is_none_or(|o| u.rank() < o.rank()) {
            out = Some(u);
        }
    }
    out
}

/// A path for messages: `link -> /dev/loop3` when `path` is a symbolic
/// link, so the user sees both what they typed and what it is.
pub fn shown(path: &Path) -> String {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match fs::canonicalize(path) {
        Ok(real) if is_link => format!("{} -> {}", path.display(), real.display()),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, n: DevNum) -> BlockDev {
        BlockDev {
            name: name.into(),
            dev: n,
            parent: None,
            holders: Vec::new(),
            dm_name: None,
            loop_backing: None,
        }
    }

    fn backed_by(mut d: BlockDev, path: &str, id: FileId) -> BlockDev {
        d.loop_backing = Some((path.into(), Some(id)));
        d
    }

    fn mount(n: DevNum, at: &str) -> MountRef {
        MountRef {
            dev: n,
            source_name: None,
            mount_point: at.into(),
            fs_type: "ext4".into(),
        }
    }

    const IMG: FileId = FileId {
        dev: (254, 0),
        ino: 1234,
        rdev: None,
    };

    fn on_dev(n: DevNum) -> FileId {
        FileId {
            dev: (0, 5),
            ino: 99,
            rdev: Some(n),
        }
    }

    #[test]
    fn a_file_backing_a_mounted_loop_names_the_chain() {
        let s = Snapshot {
            devices: vec![backed_by(dev("loop3", (7, 3)), "/srv/img", IMG)],
            mounts: vec![mount((7, 3), "/mnt/x")],
            swaps: vec![],
        };
        let u = s.file_use((254, 0), 1234).unwrap();
        assert_eq!(
            u.describe("/srv/img"),
            "/srv/img backs /dev/loop3, which is mounted on /mnt/x (ext4)"
        );
        assert!(u.fix().contains("unmount /mnt/x") && u.fix().contains("losetup -d /dev/loop3"));
        assert_eq!(s.file_use((254, 0), 1235), None, "another inode");
        assert_eq!(s.file_use((254, 1), 1234), None, "another file system");
    }

    #[test]
    fn chains_are_followed_recursively_through_loops_and_holders() {
        // img -> loop3 -> loop4 (mounted); sdb -> dm-0 (mounted via its source path).
        let mut sdb = dev("sdb", (8, 16));
        sdb.holders = vec!["dm-0".into()];
        let s = Snapshot {
            devices: vec![
                backed_by(dev("loop3", (7, 3)), "/srv/img", IMG),
                backed_by(dev("loop4", (7, 4)), "/dev/loop3", on_dev((7, 3))),
                sdb,
                BlockDev {
                    dm_name: Some("vg-data".into()),
                    ..dev("dm-0", (253, 0))
                },
            ],
            mounts: vec![
                mount((7, 4), "/mnt/y"),
                MountRef {
                    dev: (0, 77),
                    source_name: Some("dm-0".into()),
                    mount_point: "/data".into(),
                    fs_type: "btrfs".into(),
                },
            ],
            swaps: vec![],
        };
        let u = s.file_use((254, 0), 1234).unwrap();
        assert_eq!(
            u.describe("/srv/img"),
            "/srv/img backs /dev/loop3, which backs /dev/loop4, which is mounted on /mnt/y (ext4)"
        );
        let u = s.device_use((7, 3)).unwrap();
        assert_eq!(
            u.describe("/dev/loop3"),
            "/dev/loop3 backs /dev/loop4, which is mounted on /mnt/y (ext4)"
        );
        let u = s.device_use((8, 16)).unwrap();
        assert_eq!(
            u.describe("/dev/sdb"),
            "/dev/sdb is held by /dev/dm-0 (/dev/mapper/vg-data), which is mounted on /data (btrfs)"
        );
        assert!(u.fix().contains("dmsetup"));
        assert_eq!(s.device_use((7, 4)).unwrap().steps, vec![]);
        assert_eq!(s.device_use((253, 1)), None, "unknown device");
    }

    #[test]
    fn an_unmounted_stack_is_still_claimed_and_a_free_device_is_free() {
        let mut sda = dev("sda", (8, 0));
        sda.holders = vec![];
        let mut sda1 = dev("sda1", (8, 1));
        sda1.parent = Some("sda".into());
        sda1.holders = vec!["md0".into()];
        let s = Snapshot {
            devices: vec![
                backed_by(dev("loop3", (7, 3)), "/srv/img", IMG),
                dev("loop5", (7, 5)),
                backed_by(dev("loop6", (7, 6)), "/dev/loop5", on_dev((7, 5))),
                sda,
                sda1,
                dev("md0", (9, 0)),
                dev("loop7", (7, 7)),
            ],
            mounts: vec![],
            swaps: vec!["loop7".into()],
        };
        let u = s.file_use((254, 0), 1234).unwrap();
        assert_eq!(u.top, Top::Claimed);
        assert_eq!(u.describe("/srv/img"), "/srv/img backs /dev/loop3");
        assert!(u.fix().contains("losetup -d /dev/loop3"), "{}", u.fix());
        let u = s.device_use((7, 5)).unwrap();
        assert_eq!(u.describe("/dev/loop5"), "/dev/loop5 backs /dev/loop6");
        let u = s.device_use((8, 0)).unwrap();
        assert_eq!(
            u.describe("/dev/sda"),
            "/dev/sda has its partition /dev/sda1, which is held by /dev/md0"
        );
        let u = s.device_use((7, 7)).unwrap();
        assert_eq!(u.top, Top::Swap);
        assert!(u.describe("/dev/loop7").contains("swap"));
        // Nothing above: free to write.
        assert_eq!(s.device_use((7, 6)), None);
        assert_eq!(s.device_use((9, 0)), None);
    }

    #[test]
    fn a_mount_is_preferred_to_a_claim_and_cycles_end() {
        // loop1 backs loop2 (unmounted) and loop3 (mounted): the mount is named.
        // loop8 and loop9 back each other (impossible, but the walk must end).
        let s = Snapshot {
            devices: vec![
                dev("loop1", (7, 1)),
                backed_by(dev("loop2", (7, 2)), "/dev/loop1", on_dev((7, 1))),
                backed_by(dev("loop3", (7, 3)), "/dev/loop1", on_dev((7, 1))),
                backed_by(dev("loop8", (7, 8)), "/dev/loop9", on_dev((7, 9))),
                backed_by(dev("loop9", (7, 9)), "/dev/loop8", on_dev((7, 8))),
            ],
            mounts: vec![mount((7, 3), "/mnt/z")],
            swaps: vec![],
        };
        let u = s.device_use((7, 1)).unwrap();
        assert!(
            u.describe("/dev/loop1")
                .ends_with("backs /dev/loop3, which is mounted on /mnt/z (ext4)"),
            "{}",
            u.describe("/dev/loop1")
        );
        assert!(s.device_use((7, 8)).is_some());
    }

    #[test]
    fn kernel_device_numbers_decode() {
        // huge_encode_dev(MKDEV(7, 3)) and MKDEV(259, 300000).
        assert_eq!(decode_dev((7 << 8) | 3), (7, 3));
        let (ma, mi) = (259u64, 300_000u64);
        let enc = (mi & 0xff) | (ma << 8) | ((mi & !0xff) << 12);
        assert_eq!(decode_dev(enc), (259, 300_000));
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }

    #[test]
    fn symlinks_are_shown_with_what_they_point_at() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        fs::write(&f, b"x").unwrap();
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        let real = fs::canonicalize(&f).unwrap();
        assert_eq!(shown(&l), format!("{} -> {}", l.display(), real.display()));
        assert_eq!(shown(&f), f.display().to_string());
    }

    #[test]
    fn this_system_is_read() {
        let s = Snapshot::read();
        // Every device has a name and a number; a partition's disk exists.
        for d in &s.devices {
            assert!(!d.name.is_empty());
            if let Some(p) = &d.parent {
                assert!(s.by_name(p).is_some(), "{p}");
            }
        }
    }
}
