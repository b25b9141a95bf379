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
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixPaths;

fn whole(dir: &Path, name: &CStr) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    dir.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
}

impl MdFs for PosixPaths {
    type Dir = std::path::PathBuf;

    fn open_dir(&self, path: &Path) -> io::Result<std::path::PathBuf> {
        // As mdtest: the directory is not opened, only named.
        rustix::fs::stat(path)?;
        Ok(path.to_path_buf())
    }

    fn make_dir(&self, path: &Path) -> io::Result<()> {
        Posix.make_dir(path)
    }

    fn create(&self, dir: &std::path::PathBuf, name: &CStr, data: &[u8]) -> io::Result<()> {
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(whole(dir, name), flags, Mode::from_raw_mode(0o644))?;
        write_all(&fd, data)
    }

    fn mkdir(&self, dir: &std::path::PathBuf, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::mkdir(
            whole(dir, name),
            Mode::from_raw_mode(0o755),
        )?)
    }

    fn stat(&self, dir: &std::path::PathBuf, name: &CStr) -> io::Result<()> {
        rustix::fs::stat(whole(dir, name))?;
        Ok(())
    }

    fn read(&self, dir: &std::path::PathBuf, name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(whole(dir, name), flags, Mode::empty())?;
        read_all(&fd, buf)
    }

    fn rename(&self, dir: &std::path::PathBuf, from: &CStr, to: &CStr) -> io::Result<()> {
        Ok(rustix::fs::rename(whole(dir, from), whole(dir, to))?)
    }

    fn unlink(&self, dir: &std::path::PathBuf, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlink(whole(dir, name))?)
    }

    fn rmdir(&self, dir: &std::path::PathBuf, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::rmdir(whole(dir, name))?)
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
