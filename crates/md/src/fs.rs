//! The file-system operations an md phase times, as a small trait: the
//! real one ([`Posix`]) works relative to an open directory (`openat`,
//! `statat`, `unlinkat`, ...), so a name is resolved in its own directory
//! and not walked from `/` each time; tests give their own.

use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

/// What an md phase does to the file system.
pub trait MdFs: Sync {
    /// An open directory the item operations work in.
    type Dir;
    /// Open the directory at `path`.
    fn open_dir(&self, path: &Path) -> io::Result<Self::Dir>;
    /// Make the directory `path` (the tree; its parent exists).
    fn make_dir(&self, path: &Path) -> io::Result<()>;
    /// Create the new file `name` (never an existing one) and write `data`.
    fn create(&self, dir: &Self::Dir, name: &CStr, data: &[u8]) -> io::Result<()>;
    /// Make the new directory `name`.
    fn mkdir(&self, dir: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Stat `name`.
    fn stat(&self, dir: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Open `name` and read `buf.len()` bytes; returns how many were there.
    fn read(&self, dir: &Self::Dir, name: &CStr, buf: &mut [u8]) -> io::Result<usize>;
    /// Rename `from` to `to` in the same directory.
    fn rename(&self, dir: &Self::Dir, from: &CStr, to: &CStr) -> io::Result<()>;
    /// Remove the file `name`.
    fn unlink(&self, dir: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Remove the empty directory `name`.
    fn rmdir(&self, dir: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Flush every file system's dirty data (mdtest's `-Y`: the `sync`
    /// command after a phase, inside its timing).
    fn sync(&self) {}
}

/// Write all of `data` to `fd`.
fn write_all(fd: &OwnedFd, data: &[u8]) -> io::Result<()> {
    let mut at = 0;
    while at < data.len() {
        match rustix::io::write(fd, &data[at..]) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => at += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Read `buf.len()` bytes from `fd` or up to its end; how many were read.
fn read_all(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut at = 0;
    while at < buf.len() {
        match rustix::io::read(fd, &mut buf[at..]) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(at)
}

/// The real file system, through the `*at` system calls.
#[derive(Debug, Default, Clone, Copy)]
pub struct Posix;

impl MdFs for Posix {
    type Dir = OwnedFd;

    fn open_dir(&self, path: &Path) -> io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(rustix::fs::open(path, flags, Mode::empty())?)
    }

    fn make_dir(&self, path: &Path) -> io::Result<()> {
        Ok(rustix::fs::mkdir(path, Mode::from_raw_mode(0o755))?)
    }

    fn create(&self, dir: &OwnedFd, name: &CStr, data: &[u8]) -> io::Result<()> {
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o644))?;
        write_all(&fd, data)
    }

    fn mkdir(&self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755))?)
    }

    fn stat(&self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        rustix::fs::statat(dir, name, AtFlags::empty())?;
        Ok(())
    }

    fn read(&self, dir: &OwnedFd, name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
        read_all(&fd, buf)
    }

    fn rename(&self, dir: &OwnedFd, from: &CStr, to: &CStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(dir, from, dir, to)?)
    }

    fn unlink(&self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
    }

    fn rmdir(&self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
    }

    fn sync(&self) {
        rustix::fs::sync();
    }
}

/// The real file system, every operation naming its item by its whole
/// path (`open("/d/.../file.mdtest.0.7")`, `stat`, `unlink` from `/`), as
/// mdtest does: the kernel walks every component of the path on every
/// operation (on a network file system a client may revalidate each one),
/// where [`Posix`] resolves only the name in an open directory. `storlab
/// io500` uses it so its mdtest phases do mdtest's work.
///
/// The paths are built in the directory's own buffer (`PathDir`), the
/// name copied after the directory's bytes, so an operation allocates
/// nothing (mdtest `sprintf`s into a fixed array).
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixPaths;

/// A directory [`PosixPaths`] works in: its path, and two buffers that
/// hold `path/` followed by an item's name and a NUL (two: a rename names
/// two items).
#[derive(Debug)]
pub struct PathDir {
    path: std::path::PathBuf,
    bufs: [std::cell::RefCell<Vec<u8>>; 2],
    /// Bytes of `path/` at the start of each buffer.
    len: usize,
}

impl PathDir {
    /// The directory at `path` (not opened: mdtest only names it).
    pub fn new(path: &Path) -> PathDir {
        use std::os::unix::ffi::OsStrExt;
        let dir = path.as_os_str().as_bytes();
        let slash = dir.last() != Some(&b'/');
        let len = dir.len() + usize::from(slash);
        // Room for a long item name (NAME_MAX and its NUL): a buffer
        // never grows per item.
        let buf = || {
            let mut b = Vec::with_capacity(len + 256);
            b.extend_from_slice(dir);
            if slash {
                b.push(b'/');
            }
            std::cell::RefCell::new(b)
        };
        PathDir {
            path: path.to_path_buf(),
            bufs: [buf(), buf()],
            len,
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Call `f` with the whole path of `name` (built in buffer `which`).
    fn with<R>(
        &self,
        which: usize,
        name: &CStr,
        f: impl FnOnce(&CStr) -> io::Result<R>,
    ) -> io::Result<R> {
        let mut buf = self.bufs[which].borrow_mut();
        buf.truncate(self.len);
        buf.extend_from_slice(name.to_bytes_with_nul());
        // A path has no NUL inside (the OS could not have given it) and a
        // CStr's only NUL is its last byte; an error all the same if not.
        let whole = CStr::from_bytes_with_nul(&buf)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        f(whole)
    }

    /// The capacity of the path buffers (a test checks it never grows).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.bufs[0].borrow().capacity() + self.bufs[1].borrow().capacity()
    }
}

impl MdFs for PosixPaths {
    type Dir = PathDir;

    fn open_dir(&self, path: &Path) -> io::Result<PathDir> {
        // As mdtest: the directory is not opened, only named.
        rustix::fs::stat(path)?;
        Ok(PathDir::new(path))
    }

    fn make_dir(&self, path: &Path) -> io::Result<()> {
        Posix.make_dir(path)
    }

    fn create(&self, dir: &PathDir, name: &CStr, data: &[u8]) -> io::Result<()> {
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
        let fd = dir.with(0, name, |p| {
            Ok(rustix::fs::open(p, flags, Mode::from_raw_mode(0o644))?)
        })?;
        if data.is_empty() {
            return Ok(());
        }
        // mdtest's POSIX backend seeks to the transfer's offset before
        // every write (`POSIX_Xfer`: `lseek` + `write`), as mdtest-hard's
        // `-w 3901` does once per file.
        rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))?;
        write_all(&fd, data)
    }

    fn mkdir(&self, dir: &PathDir, name: &CStr) -> io::Result<()> {
        dir.with(0, name, |p| {
            Ok(rustix::fs::mkdir(p, Mode::from_raw_mode(0o755))?)
        })
    }

    fn stat(&self, dir: &PathDir, name: &CStr) -> io::Result<()> {
        dir.with(0, name, |p| {
            rustix::fs::stat(p)?;
            Ok(())
        })
    }

    fn read(&self, dir: &PathDir, name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        let fd = dir.with(0, name, |p| Ok(rustix::fs::open(p, flags, Mode::empty())?))?;
        if buf.is_empty() {
            return Ok(0);
        }
        // As mdtest's `-e 3901`: `lseek` to the offset, then `read`.
        rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))?;
        read_all(&fd, buf)
    }

    fn rename(&self, dir: &PathDir, from: &CStr, to: &CStr) -> io::Result<()> {
        dir.with(0, from, |a| {
            dir.with(1, to, |b| Ok(rustix::fs::rename(a, b)?))
        })
    }

    fn unlink(&self, dir: &PathDir, name: &CStr) -> io::Result<()> {
        dir.with(0, name, |p| Ok(rustix::fs::unlink(p)?))
    }

    fn rmdir(&self, dir: &PathDir, name: &CStr) -> io::Result<()> {
        dir.with(0, name, |p| Ok(rustix::fs::rmdir(p)?))
    }

    fn sync(&self) {
        rustix::fs::sync();
    }
}

/// The name of an I/O error's errno (`ENOENT`), as the records count
/// errors; the error's text when it has no errno.
pub fn errno_name(e: &io::Error) -> String {
    let Some(n) = e.raw_os_error() else {
        return format!("{:?}", e.kind());
    };
    let name = match n {
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EIO => "EIO",
        libc::EMLINK => "EMLINK",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ESTALE => "ESTALE",
        libc::EINTR => "EINTR",
        _ => return format!("errno {n}"),
    };
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    /// mdtest `sprintf`s each path into a fixed array; `PosixPaths` builds
    /// it in the directory's buffers, which never grow: a create, stat,
    /// read, rename and delete of a file make no new path (the old code
    /// joined a `PathBuf` per operation), and each names the whole path.
    #[test]
    fn whole_path_operations_reuse_the_directorys_buffers() {
        let d = tempfile::tempdir().unwrap();
        let fs = PosixPaths;
        let dir = fs.open_dir(d.path()).unwrap();
        let cap = dir.capacity();
        let mut names = crate::names::NameBuf::default();
        let mut renamed = crate::names::NameBuf::default();
        let data = vec![7u8; 3901];
        let mut buf = vec![0u8; 3901];
        // Warm up (the name buffers grow once to the longest name).
        fs.create(&dir, names.name("file", 0, 1_000_000, false), &data)
            .unwrap();
        fs.unlink(&dir, names.name("file", 0, 1_000_000, false))
            .unwrap();
        for i in 0..200 {
            fs.create(&dir, names.name("file", 0, i, false), &data)
                .unwrap();
            fs.stat(&dir, names.name("file", 0, i, false)).unwrap();
            assert_eq!(
                fs.read(&dir, names.name("file", 0, i, false), &mut buf)
                    .unwrap(),
                3901
            );
            fs.rename(
                &dir,
                names.name("file", 0, i, false),
                renamed.name("file", 0, i, true),
            )
            .unwrap();
        }
        assert!(d.path().join("file.mdtest.0.199.mv").exists());
        for i in 0..200 {
            fs.unlink(&dir, renamed.name("file", 0, i, true)).unwrap();
        }
        assert_eq!(dir.capacity(), cap, "the path buffers never grow");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_whole_path_is_the_directory_then_the_name() {
        let dir = PathDir::new(Path::new("/a/b"));
        let p = dir
            .with(0, c"file.mdtest.3.7", |p| Ok(p.to_bytes().to_vec()))
            .unwrap();
        assert_eq!(p, b"/a/b/file.mdtest.3.7");
        let slash = PathDir::new(Path::new("/a/b/"));
        let p = slash.with(1, c"x", |p| Ok(p.to_bytes().to_vec())).unwrap();
        assert_eq!(p, b"/a/b/x");
        assert_eq!(slash.path(), Path::new("/a/b/"));
    }
}
