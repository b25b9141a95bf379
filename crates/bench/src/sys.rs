//! The thin system layer: the raw Linux calls of the bench engine and the
//! memory they are given, each `unsafe` block with its SAFETY argument. The
//! only other module allowed `unsafe` is `engine/uring.rs` (handing buffers
//! to io_uring); the crate denies it everywhere else.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::ptr::NonNull;

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A heap buffer aligned for O_DIRECT (to `align` bytes, a power of two).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocate `len` zeroed bytes aligned to `align` (a power of two).
    pub fn new(len: usize, align: usize) -> io::Result<AlignedBuf> {
        let layout = std::alloc::Layout::from_size_align(len.max(1), align.max(1))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: layout has non-zero size (len.max(1)).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Ok(AlignedBuf { ptr, len, layout })
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for `len` initialised (zeroed) bytes owned by
        // self (the layout is at least that long), and &mut self guarantees
        // exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and not freed before.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The I/O buffers of one worker: `n` slots of `slot_size` bytes in one
/// anonymous mapping aligned to 2 MiB. For large blocks the mapping asks for
/// transparent huge pages, so a 1 MiB buffer is a few physically contiguous
/// segments instead of 256 scattered pages (a device with 254 segments per
/// request would otherwise split every 1 MiB I/O in two).
pub(crate) struct SlotBufs {
    map: NonNull<u8>,
    map_len: usize,
    base: *mut u8,
    slot_size: usize,
    n: usize,
    /// Never unmap: the kernel may still hold some slot (see `leak`).
    leaked: bool,
}

// SAFETY: SlotBufs owns its mapping exclusively, like Vec<u8>.
unsafe impl Send for SlotBufs {}

const HUGE: usize = 2 << 20;

impl SlotBufs {
    /// `n` zeroed buffers of at least `size` bytes, each 4 KiB aligned.
    pub fn new(n: usize, size: usize) -> io::Result<SlotBufs> {
        let slot_size = size.max(1).div_ceil(4096) * 4096;
        let total = (n.max(1) * slot_size).div_ceil(HUGE) * HUGE;
        let map_len = total + HUGE;
        // SAFETY: an anonymous private mapping with no address hint; the
        // result is checked for MAP_FAILED before use.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let offset = (HUGE - (map as usize % HUGE)) % HUGE;
        // SAFETY: offset < HUGE and the mapping is total + HUGE bytes long.
        let base = unsafe { map.cast::<u8>().add(offset) };
        if slot_size >= 64 << 10 {
            // SAFETY: the range lies inside our mapping; advice only.
            unsafe { libc::madvise(base.cast(), total, libc::MADV_HUGEPAGE) };
        }
        let map =
            NonNull::new(map.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(SlotBufs {
            map,
            map_len,
            base,
            slot_size,
            n: n.max(1),
            leaked: false,
        })
    }
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }
    /// Raw pointer to slot `i` (for the kernel). Crate-private: only an
    /// engine that owns these buffers hands pointers out, for I/O it tracks.
    pub(crate) fn ptr(&mut self, i: usize) -> *mut u8 {
        assert!(i < self.n);
        // SAFETY: i < n, so the slot lies inside the mapping.
        unsafe { self.base.add(i * self.slot_size) }
    }
    pub fn slice(&self, i: usize) -> &[u8] {
        assert!(i < self.n);
        // SAFETY: the slot is inside the mapping, initialised (zero-filled
        // by mmap), and borrowed immutably through &self.
        unsafe { std::slice::from_raw_parts(self.base.add(i * self.slot_size), self.slot_size) }
    }
    pub fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.n);
        // SAFETY: as above; &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(i * self.slot_size), self.slot_size) }
    }
    /// Keep the mapping forever (when the kernel may still write into it).
    pub(crate) fn leak(&mut self) {
        self.leaked = true;
    }
    /// One iovec per slot, for registering with io_uring.
    pub(crate) fn iovecs(&mut self) -> Vec<libc::iovec> {
        (0..self.n)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.slot_size,
            })
            .collect()
    }
}

impl Drop for SlotBufs {
    fn drop(&mut self) {
        if self.leaked {
            return;
        }
        // SAFETY: unmapping exactly the mapping made in new(), once; the
        // owning engine has waited for every I/O on it (or set `leaked`).
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}

/// How to open a data file.
#[derive(Debug, Clone, Copy)]
pub struct OpenFlags {
    pub write: bool,
    pub create_new: bool,
    pub direct: bool,
}

/// Open a file with optional O_DIRECT; `create_new` fails if it exists
/// (O_EXCL), which is how storlab guarantees it only writes files it created.
pub fn open(path: &Path, f: OpenFlags) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(f.write || f.create_new);
    if f.create_new {
        o.create_new(true).mode(0o600);
    }
    let mut custom = libc::O_CLOEXEC;
    if f.direct {
        custom |= libc::O_DIRECT;
    }
    o.custom_flags(custom);
    o.open(path)
}

/// pread(2) into `buf`; returns bytes read.
pub fn pread(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    // SAFETY: buf is a valid writable slice of buf.len() bytes for the call's duration.
    let r = unsafe {
        libc::pread(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            offset as libc::off_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// pwrite(2) from `buf`; returns bytes written.
pub fn pwrite(fd: RawFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    // SAFETY: buf is a valid readable slice of buf.len() bytes for the call's duration.
    let r = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), offset as libc::off_t) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// fsync(2).
pub fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: fsync takes only a descriptor; an invalid one yields EBADF.
    cvt(unsafe { libc::fsync(fd) }).map(|_| ())
}

/// sync(2): write every dirty page of every file system back.
pub fn sync() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file: ask the kernel to
/// drop its clean cached pages.
pub fn fadvise_dontneed(fd: RawFd) -> io::Result<()> {
    fadvise_whole_file(fd, libc::POSIX_FADV_DONTNEED)
}

/// posix_fadvise(`advice`) over the whole of the open file `fd` (offset 0,
/// length 0: to its end), e.g. `libc::POSIX_FADV_SEQUENTIAL`.
pub fn fadvise_whole_file(fd: RawFd, advice: libc::c_int) -> io::Result<()> {
    // SAFETY: no memory is passed; a bad descriptor or advice is an error
    // code, returned (not set in errno) by posix_fadvise.
    let r = unsafe { libc::posix_fadvise(fd, 0, 0, advice) };
    if r != 0 {
        Err(io::Error::from_raw_os_error(r))
    } else {
        Ok(())
    }
}

/// Count the pages of the first `len` bytes of `file` resident in the page
/// cache (mmap + mincore). Returns (resident, total).
pub fn resident_pages(file: &File, len: u64) -> io::Result<(u64, u64)> {
    let page = storlab_host::os::page_size();
    if len == 0 {
        return Ok((0, 0));
    }
    let mut resident = 0u64;
    let mut total = 0u64;
    // Map in chunks of 1 GiB so huge files do not need a huge vector.
    const CHUNK: u64 = 1 << 30;
    let mut off = 0u64;
    while off < len {
        let this = (len - off).min(CHUNK) as usize;
        // SAFETY: we map a read-only shared view of a file we hold open; the
        // mapping is only passed to mincore and unmapped before returning.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                this,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                off as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let pages = this.div_ceil(page as usize);
        let mut vec = vec![0u8; pages];
        // SAFETY: addr/this is the mapping made above; vec has one byte per page.
        let r = unsafe { libc::mincore(addr, this, vec.as_mut_ptr()) };
        let err = io::Error::last_os_error();
        // SAFETY: unmapping exactly the mapping made above.
        unsafe { libc::munmap(addr, this) };
        if r != 0 {
            return Err(err);
        }
        resident += vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
        total += pages as u64;
        off += this as u64;
    }
    Ok((resident, total))
}

/// Pre-allocate `len` bytes (fallocate mode 0). Fails with ENOSPC up front if
/// the file system cannot hold it; EOPNOTSUPP where unsupported.
pub fn fallocate(file: &File, len: u64) -> io::Result<()> {
    fallocate_range(file, 0, len)
}

/// Size in bytes of a block device (ioctl BLKGETSIZE64).
pub fn block_device_size(file: &File) -> io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer we pass.
    cvt(unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) })?;
    Ok(size)
}

/// The calling thread's scheduler counters from `/proc/thread-self/schedstat`:
/// (ns on a CPU, ns runnable but waiting for a CPU). None where the kernel
/// does not provide them (`CONFIG_SCHED_INFO` off).
pub fn thread_sched() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_schedstat(&s)
}

fn parse_schedstat(s: &str) -> Option<(u64, u64)> {
    let mut it = s.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// Name of an errno value (`ENOSPC`), for error counts by kind.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EINVAL => "EINVAL",
        libc::EAGAIN => "EAGAIN",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::EINTR => "EINTR",
        libc::ENOMEM => "ENOMEM",
        libc::EROFS => "EROFS",
        libc::EDQUOT => "EDQUOT",
        libc::EFBIG => "EFBIG",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ECANCELED => "ECANCELED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EILSEQ => "EILSEQ",
        libc::ENODATA => "ENODATA",
        _ => return format!("errno_{errno}"),
    };
    name.to_string()
}

// --- issue 27 (fioverify): the system calls of prio.rs and placement.rs ---

/// Allocate `len` bytes of `file` from `offset` (fio's offsets leave the
/// bytes before a region a hole).
pub fn fallocate_range(file: &File, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: no memory is passed.
    cvt(unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            0,
            offset as libc::off_t,
            len as libc::off_t,
        )
    })
    .map(|_| ())
}

/// `ioprio_set(IOPRIO_WHO_PROCESS, 0, ioprio)`: on Linux, who 0 is the
/// calling thread.
pub fn ioprio_set(ioprio: u16) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(ioprio),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
/// The calling thread's I/O priority (`ioprio_get`).
pub fn ioprio_get() -> io::Result<u16> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_get takes two integers and touches no memory.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0 as libc::c_long) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as u16)
}

/// Pin the calling thread to `cpus` (`sched_setaffinity`).
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it
    // for indices below CPU_SETSIZE (checked), and sched_setaffinity reads
    // it for its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
/// The CPUs the calling thread may run on (`sched_getaffinity`).
pub fn affinity() -> io::Result<Vec<u32>> {
    // SAFETY: as in set_affinity; sched_getaffinity fills the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect())
    }
}

/// The calling thread's memory policy (`set_mempolicy(mode, nodemask)`;
/// modes of linux/mempolicy.h), nodes below 1024.
pub fn set_mempolicy(mode: i32, nodes: &[u32]) -> io::Result<()> {
    let mut mask = [0u64; 16];
    for &n in nodes.iter().filter(|&&n| n < 1024) {
        mask[(n / 64) as usize] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null::<u64>(), 0)
    } else {
        (mask.as_ptr(), 64 * mask.len() as libc::c_ulong)
    };
    // SAFETY: `mask` outlives the call and holds `maxnode` bits.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            libc::c_long::from(mode),
            ptr,
            maxnode,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// --- issue 27 (trim): fio's trims, as fio's os_trim does them on Linux ---

/// Trim `len` bytes of `file` from `offset`, as fio's `os_trim`: on a block
/// device the `BLKDISCARD` ioctl (the device forgets the range: its data is
/// destroyed), on a file a hole punched with
/// `fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)` (the range reads
/// back as zeros, its blocks are freed, the size is kept). The caller decides
/// whether the target may be trimmed at all (docs/SAFETY.md: a device only
/// with `--allow-destroy`, a file only if storlab made it).
pub fn trim(fd: RawFd, offset: u64, len: u64, block_device: bool) -> io::Result<()> {
    if block_device {
        // _IO(0x12, 119)
        const BLKDISCARD: libc::c_ulong = 0x1277;
        let range: [u64; 2] = [offset, len];
        // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer
        // we pass; `range` lives across the call.
        cvt(unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }).map(|_| ())
    } else {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: no memory is passed.
        cvt(unsafe { libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t) })
            .map(|_| ())
    }
}

/// Whether the open file `fd` is a block device (`fstat` of the descriptor
/// itself: what was opened, not what a path names now).
pub fn is_block_device_fd(fd: RawFd) -> bool {
    // SAFETY: an all-zero `stat` is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat buffer for the call.
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    ok && (st.st_mode & libc::S_IFMT) == libc::S_IFBLK
}

/// `CLOCK_MONOTONIC` in nanoseconds, through the C library (glibc's vDSO
/// call, which valgrind understands; rustix's own vDSO parser faults under
/// valgrind's memcheck), the clock the null engine's absolute deadlines
/// are on.
pub(crate) fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; CLOCK_MONOTONIC always
    // exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptors_kind_is_read_from_the_descriptor() {
        let f = tempfile::tempfile().unwrap();
        assert!(!is_block_device_fd(f.as_raw_fd()));
        assert!(!is_block_device_fd(-1), "a bad descriptor is no device");
    }

    #[test]
    fn schedstat_is_parsed_and_counts_this_threads_cpu() {
        assert_eq!(parse_schedstat("1200 340 5\n"), Some((1200, 340)));
        assert_eq!(parse_schedstat("1200\n"), None);
        assert_eq!(parse_schedstat("x y z"), None);
        let Some((cpu0, _)) = thread_sched() else {
            storlab_testkit::skip("thread_sched", "no /proc/thread-self/schedstat");
            return;
        };
        // Spin for 20 ms of this thread's CPU time: the counter must move.
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let (cpu1, _) = thread_sched().unwrap();
        assert!(cpu1 > cpu0, "{cpu0} -> {cpu1}");
    }

    /// fio's trim on a file: the punched range reads back as zeros, the
    /// file's allocated blocks drop by the trimmed bytes, its size is kept.
    #[test]
    fn trim_on_a_file_punches_a_hole_that_reads_zeros_and_frees_blocks() {
        use std::io::Write;
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(&vec![0xa5u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let before = f.metadata().unwrap().blocks();
        // Two 64 KiB holes, as a randtrim phase makes them.
        for off in [128 << 10, 512 << 10] {
            if let Err(e) = trim(f.as_raw_fd(), off, 64 << 10, false) {
                if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                    storlab_testkit::skip("trim", "the temp file system cannot punch holes");
                    return;
                }
                panic!("punch hole: {e}");
            }
        }
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), 1 << 20, "the size is kept (FALLOC_FL_KEEP_SIZE)");
        // st_blocks counts 512-byte units: 128 KiB trimmed is 256 of them.
        assert_eq!(before - m.blocks(), 256, "{before} -> {}", m.blocks());
        let mut buf = vec![0u8; 1 << 20];
        let n = pread(f.as_raw_fd(), &mut buf, 0).unwrap();
        assert_eq!(n, 1 << 20);
        for (i, b) in buf.iter().enumerate() {
            let hole = (128 << 10..192 << 10).contains(&i) || (512 << 10..576 << 10).contains(&i);
            assert_eq!(*b, if hole { 0 } else { 0xa5 }, "byte {i}");
        }
    }

    /// BLKDISCARD is refused on what is not a block device (the caller's
    /// choice of call is checked by the kernel, never guessed).
    #[test]
    fn trim_as_a_device_on_a_file_is_refused_by_the_kernel() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(1 << 20).unwrap();
        assert!(trim(f.as_raw_fd(), 0, 4096, true).is_err());
    }
}
