//! The page-cache hint for a replayed file (`posix_fadvise`), as fio gives
//! one when it opens a file (`fadvise_hint`, its `td_io_open_file`); the
//! system call itself is bench's.

use crate::run::Fadvise;
use std::os::fd::RawFd;

/// Give `advice` for the whole of the open file `fd`. [`Fadvise::Normal`]
/// makes no call: the kernel's default read-ahead, what a file has when
/// nobody advised it.
pub(crate) fn fadvise(fd: RawFd, advice: Fadvise) -> std::io::Result<()> {
    let flag = match advice {
        Fadvise::Normal => return Ok(()),
        Fadvise::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Fadvise::Random => libc::POSIX_FADV_RANDOM,
    };
    storlab_bench::fadvise_whole_file(fd, flag)
}
