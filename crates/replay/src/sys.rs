//! The one system call the replay makes beyond the standard library's:
//! the page-cache hint for a replayed file (`posix_fadvise`), as fio gives
//! one when it opens a file (`fadvise_hint`, its `td_io_open_file`).
#![allow(unsafe_code)]

use crate::run::Fadvise;
use std::os::fd::RawFd;

/// Give `advice` for the whole of the open file `fd` (offset 0, length 0:
/// to its end). [`Fadvise::Normal`] makes no call: the kernel's default
/// read-ahead, what a file has when nobody advised it.
pub(crate) fn fadvise(fd: RawFd, advice: Fadvise) -> std::io::Result<()> {
    let flag = match advice {
        Fadvise::Normal => return Ok(()),
        Fadvise::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Fadvise::Random => libc::POSIX_FADV_RANDOM,
    };
    // SAFETY: no memory is passed; a bad descriptor or advice is an error
    // code, returned (not set in errno) by posix_fadvise.
    let r = unsafe { libc::posix_fadvise(fd, 0, 0, flag) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(r))
    }
}
