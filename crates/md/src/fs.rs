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
        let mut at = 0;
        while at < data.len() {
            match rustix::io::write(&fd, &data[at..]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => at += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
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
        let mut at = 0;
        while at < buf.len() {
            match rustix::io::read(&fd, &mut buf[at..]) {
                Ok(0) => break,
                Ok(n) => at += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(at)
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
