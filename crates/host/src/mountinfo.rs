//! `/proc/self/mountinfo`: which file system is mounted where, on which
//! device. The one parser of the mount table: bench's device and mount
//! checks, the store's read-only test and the monitor's device tree all use
//! it. Mount points and sources are unescaped byte-wise (`\040` is a space)
//! and decoded as UTF-8, so non-ASCII paths come through intact.

use std::path::{Path, PathBuf};

/// A line of the mount table that is not a mount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse mountinfo, line {line}: {reason}")]
pub struct Error {
    pub line: usize,
    pub reason: String,
}

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_id: u64,
    pub major: u32,
    pub minor: u32,
    /// Root of the mount inside its file system (`/` unless a bind mount).
    pub root: PathBuf,
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    pub fs_type: String,
    /// What was mounted (`/dev/vda1`, `tmpfs`, ...).
    pub source: String,
    /// Per-superblock options (`rw,stripe=256`, `sunit=128,swidth=512`).
    pub super_options: String,
}

impl Mount {
    /// All options, per-mount then per-superblock.
    pub fn options(&self) -> impl Iterator<Item = &str> {
        self.mount_options
            .split(',')
            .chain(self.super_options.split(','))
            .filter(|o| !o.is_empty())
    }
    /// The value of `key=value` among the options, if present.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options()
            .find_map(|o| o.split_once('=').and_then(|(k, v)| (k == key).then_some(v)))
    }
    /// Whether a flag option (`noatime`) is present.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.options().any(|o| o == flag)
    }
}

/// Undo the kernel's octal escapes (`\040` for a space).
pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse a whole mountinfo text.
pub fn parse(text: &str) -> Result<Vec<Mount>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: &str| Error {
            line: i + 1,
            reason: reason.to_string(),
        };
        let f: Vec<&str> = line.split(' ').collect();
        let sep = f
            .iter()
            .position(|x| *x == "-")
            .ok_or_else(|| bad("no ' - ' separator"))?;
        if sep < 6 || f.len() < sep + 3 {
            return Err(bad("too few fields"));
        }
        let (maj, min) = f[2]
            .split_once(':')
            .ok_or_else(|| bad("device is not major:minor"))?;
        out.push(Mount {
            mount_id: f[0].parse().map_err(|_| bad("mount id is not a number"))?,
            major: maj.parse().map_err(|_| bad("bad major number"))?,
            minor: min.parse().map_err(|_| bad("bad minor number"))?,
            root: PathBuf::from(unescape(f[3])),
            mount_point: PathBuf::from(unescape(f[4])),
            mount_options: f[5].to_string(),
            fs_type: f[sep + 1].to_string(),
            source: unescape(f[sep + 2]),
            super_options: f.get(sep + 3).copied().unwrap_or("").to_string(),
        });
    }
    Ok(out)
}

/// The mount a path lives on: the last-mounted entry whose mount point is the
/// longest prefix of `path` (which should be absolute and canonical).
pub fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point) {
            let better = match best {
                None => true,
                // Later entries over the same point hide earlier ones.
                Some(b) => m.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len(),
            };
            if better {
                best = Some(m);
            }
        }
    }
    best
}

/// This process's mount table (`/proc/self/mountinfo`); empty when it
/// cannot be read or parsed.
pub fn current() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|t| parse(&t).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TEXT: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
40 27 7:1 / /mnt/my\\040data rw,noatime shared:5 - xfs /dev/loop1 rw,attr2,inode64,sunit=128,swidth=512,noquota
41 27 7:2 / /mnt/e rw master:1 - ext4 /dev/loop2 rw,stripe=64
";

    #[test]
    fn parses_fields_and_escapes() {
        let m = parse(TEXT).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!((m[1].major, m[1].minor), (254, 0));
        assert_eq!(m[1].fs_type, "ext4");
        assert_eq!(m[2].mount_point, Path::new("/mnt/my data"));
        assert_eq!(m[2].option("sunit"), Some("128"));
        assert_eq!(m[2].option("swidth"), Some("512"));
        assert!(m[2].has_flag("noatime"));
        assert_eq!(m[3].option("stripe"), Some("64"));
        assert_eq!(m[3].source, "/dev/loop2");
    }

    #[test]
    fn longest_prefix_wins() {
        let m = parse(TEXT).unwrap();
        let p = |s: &str| mount_of(&m, Path::new(s)).unwrap().mount_point.clone();
        assert_eq!(p("/home/x"), PathBuf::from("/"));
        assert_eq!(p("/mnt/my data/f"), PathBuf::from("/mnt/my data"));
        assert_eq!(p("/mnt/e"), PathBuf::from("/mnt/e"));
        // A path that only shares a string prefix does not match.
        assert_eq!(p("/mnt/ex"), PathBuf::from("/"));
    }

    #[test]
    fn non_ascii_mount_points_survive() {
        let t = "50 27 7:3 / /mnt/donn\\303\\251es\\040\\344\\270\\255 rw - ext4 /dev/loop3 rw\n";
        let m = parse(t).unwrap();
        assert_eq!(m[0].mount_point, Path::new("/mnt/données 中"));
        let t = "51 27 7:4 / /mnt/é rw - ext4 /dev/loop4 rw\n";
        assert_eq!(parse(t).unwrap()[0].mount_point, Path::new("/mnt/é"));
    }

    #[test]
    fn errors() {
        assert!(parse("1 2 3\n").is_err());
        assert!(parse("1 2 x / / rw - ext4 /dev/x rw\n").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse(&s);
            let _ = unescape(&s);
        }
    }
}
