//! I/O engines behind one small interface, as fio's ioengines: queue I/Os on
//! numbered buffer slots, submit-and-wait, reap completions.
//!
//! * [`NullEngine`]: completes every I/O at once without touching a device.
//! * [`PsyncEngine`]: `pread`/`pwrite`, synchronous (depth 1).
//! * [`UringEngine`]: io_uring with registered buffers and files by
//!   default, optional SQPOLL; submits each I/O as it is queued (or in
//!   batches, `iodepth_batch`) and reaps every available completion per
//!   system call.
//!
//! Besides `sys.rs`, this is the only module with `unsafe`: handing buffer
//! pointers to the kernel.

use crate::sys::{self, SlotBufs};
use io_uring::{IoUring, opcode, types};
use std::io;
use std::os::fd::RawFd;

/// Direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// The operations an engine provides. Slots index the worker's buffers,
/// which stay alive and untouched while their I/O is in flight.
pub trait Engine {
    /// How many I/Os may be in flight at once.
    fn depth(&self) -> usize;
    /// Queue one I/O of `len` bytes at `offset` using slot `slot`'s buffer.
    fn queue(&mut self, slot: u32, dir: Dir, offset: u64, len: u32, bufs: &mut SlotBufs);
    /// Submit what is queued and wait until at least `min` completions are ready.
    fn submit_wait(&mut self, min: usize, bufs: &mut SlotBufs) -> io::Result<()>;
    /// Hand every ready completion to `f(slot, result)`; result is bytes
    /// transferred or a negative errno.
    fn reap<F: FnMut(u32, i32)>(&mut self, f: F);
}

/// No I/O: every request completes immediately with its full length.
#[derive(Debug)]
pub struct NullEngine {
    depth: usize,
    done: Vec<(u32, i32)>,
}

impl NullEngine {
    pub fn new(depth: usize) -> NullEngine {
        NullEngine {
            depth,
            done: Vec::with_capacity(depth),
        }
    }
}

impl Engine for NullEngine {
    fn depth(&self) -> usize {
        self.depth
    }
    fn queue(&mut self, slot: u32, _dir: Dir, _offset: u64, len: u32, _bufs: &mut SlotBufs) {
        self.done.push((slot, len as i32));
    }
    fn submit_wait(&mut self, _min: usize, _bufs: &mut SlotBufs) -> io::Result<()> {
        Ok(())
    }
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) {
        for (s, r) in self.done.drain(..) {
            f(s, r);
        }
    }
}

/// Synchronous pread/pwrite; depth is always 1.
#[derive(Debug)]
pub struct PsyncEngine {
    fd: RawFd,
    queued: Option<(u32, Dir, u64, u32)>,
    done: Option<(u32, i32)>,
}

impl PsyncEngine {
    pub fn new(fd: RawFd) -> PsyncEngine {
        PsyncEngine {
            fd,
            queued: None,
            done: None,
        }
    }
}

impl Engine for PsyncEngine {
    fn depth(&self) -> usize {
        1
    }
    fn queue(&mut self, slot: u32, dir: Dir, offset: u64, len: u32, _bufs: &mut SlotBufs) {
        debug_assert!(self.queued.is_none(), "psync has depth 1");
        self.queued = Some((slot, dir, offset, len));
    }
    fn submit_wait(&mut self, _min: usize, bufs: &mut SlotBufs) -> io::Result<()> {
        if let Some((slot, dir, offset, len)) = self.queued.take() {
            let buf = &mut bufs.slice_mut(slot as usize)[..len as usize];
            let r = match dir {
                Dir::Read => sys::pread(self.fd, buf, offset),
                Dir::Write => sys::pwrite(self.fd, buf, offset),
            };
            let res = match r {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            };
            self.done = Some((slot, res));
        }
        Ok(())
    }
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) {
        if let Some((s, r)) = self.done.take() {
            f(s, r);
        }
    }
}

/// Options for the io_uring engine.
#[derive(Debug, Clone, Copy)]
pub struct UringOptions {
    pub depth: usize,
    /// Register the slot buffers and the file with the ring.
    pub registered: bool,
    /// Kernel-side submission queue polling.
    pub sqpoll: bool,
    /// Enter the kernel to submit once this many I/Os are queued (1 = each
    /// I/O at once, as fio's default `iodepth_batch_submit=1`).
    pub batch: usize,
}

/// io_uring engine.
pub struct UringEngine {
    ring: IoUring,
    depth: usize,
    fd: RawFd,
    registered: bool,
    queued: usize,
    batch: usize,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("depth", &self.depth)
            .field("registered", &self.registered)
            .finish()
    }
}

/// Whether the kernel lets this process create an io_uring (it may be
/// disabled by `kernel.io_uring_disabled`, seccomp or an old kernel).
pub fn uring_available() -> Result<(), io::Error> {
    IoUring::new(2).map(drop)
}

impl UringEngine {
    /// Create a ring for `fd`, registering `bufs` and the file when asked.
    /// Returns the engine and whether registration actually took effect
    /// (it can fail under a low RLIMIT_MEMLOCK; the engine then falls back).
    pub fn new(fd: RawFd, bufs: &mut SlotBufs, opts: UringOptions) -> io::Result<UringEngine> {
        let entries = (opts.depth.max(1) as u32).next_power_of_two();
        let build = |lean: bool| {
            let mut b = IoUring::builder();
            if opts.sqpoll {
                b.setup_sqpoll(2000);
            }
            // Completion ring twice the submission ring, so it never overflows.
            b.setup_cqsize(entries * 2);
            if lean && !opts.sqpoll {
                // One thread submits and reaps: no inter-processor interrupts
                // for completions; task work runs when we wait (Linux 6.1+).
                b.setup_coop_taskrun()
                    .setup_single_issuer()
                    .setup_defer_taskrun();
            }
            b.build(entries)
        };
        // Older kernels refuse the newer flags with EINVAL: fall back.
        let ring = build(true).or_else(|_| build(false))?;
        let mut registered = false;
        if opts.registered {
            let iov = bufs.iovecs();
            // SAFETY: the buffers are owned by the worker, outlive the ring
            // (the worker drops the engine first) and are never reallocated.
            let ok_bufs = unsafe { ring.submitter().register_buffers(&iov) }.is_ok();
            let ok_files = ok_bufs && ring.submitter().register_files(&[fd]).is_ok();
            if ok_bufs && !ok_files {
                let _ = ring.submitter().unregister_buffers();
            }
            registered = ok_bufs && ok_files;
        }
        Ok(UringEngine {
            ring,
            depth: opts.depth,
            fd,
            registered,
            queued: 0,
            batch: opts.batch.max(1),
        })
    }

    /// Whether buffers and file are registered.
    pub fn registered(&self) -> bool {
        self.registered
    }
}

impl Engine for UringEngine {
    fn depth(&self) -> usize {
        self.depth
    }

    #[inline]
    fn queue(&mut self, slot: u32, dir: Dir, offset: u64, len: u32, bufs: &mut SlotBufs) {
        let buf = bufs.ptr(slot as usize);
        let sqe = match (dir, self.registered) {
            (Dir::Read, true) => opcode::ReadFixed::new(types::Fixed(0), buf, len, slot as u16)
                .offset(offset)
                .build(),
            (Dir::Write, true) => opcode::WriteFixed::new(types::Fixed(0), buf, len, slot as u16)
                .offset(offset)
                .build(),
            (Dir::Read, false) => opcode::Read::new(types::Fd(self.fd), buf, len)
                .offset(offset)
                .build(),
            (Dir::Write, false) => opcode::Write::new(types::Fd(self.fd), buf, len)
                .offset(offset)
                .build(),
        }
        .user_data(slot as u64);
        // Hand what is already queued to the kernel before adding this one,
        // so each I/O reaches the device promptly while the newest one rides
        // along with the next wait (one system call fewer per round).
        if self.queued >= self.batch {
            // Errors surface at the next wait.
            let _ = self.ring.submit();
            self.queued = 0;
        }
        // SAFETY: the slot's buffer stays valid and unaliased until its
        // completion is reaped (the worker never reuses an in-flight slot).
        // The ring has at least `depth` entries and at most `depth` I/Os are
        // in flight, so the push cannot fail.
        let pushed = unsafe { self.ring.submission().push(&sqe) };
        debug_assert!(pushed.is_ok());
        self.queued += 1;
    }

    #[inline]
    fn submit_wait(&mut self, min: usize, _bufs: &mut SlotBufs) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(min) {
                Ok(_) => {
                    self.queued = 0;
                    return Ok(());
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // EBUSY/EAGAIN: completions must be reaped first; the caller does.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => {
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) {
        for cqe in self.ring.completion() {
            f(cqe.user_data() as u32, cqe.result());
        }
    }
}
