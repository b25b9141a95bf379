//! The io_uring engine: registered buffers and file by default, optional
//! SQPOLL, single-issuer rings with deferred task work where the kernel has
//! them. Each `submit` is one `io_uring_enter` carrying every queued entry
//! (and, when asked to wait, waiting in that same call); `reap` takes the
//! completions present at that moment (a snapshot of the completion ring).
//!
//! This module holds the engine's `unsafe` code: pushing entries that carry
//! buffer pointers, and registering the buffers. The argument for each is
//! that the engine owns the buffers ([`Slots`]) and never frees them while
//! the kernel may touch them: see `Drop`.
#![allow(unsafe_code)]

use super::{Dir, Engine, Io, QueueError, Slots};
use io_uring::{IoUring, opcode, types};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Options for the io_uring engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UringOptions {
    /// Register the slot buffers and the file with the ring.
    pub registered: bool,
    /// Kernel-side submission queue polling.
    pub sqpoll: bool,
}

/// How long dropping an engine waits for in-flight I/O before it gives up
/// and leaks the buffers (never frees memory the kernel may still write).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

/// io_uring engine. Field order matters: the ring is dropped (closed)
/// before the slots are unmapped.
pub(crate) struct UringEngine {
    ring: IoUring,
    slots: Slots,
    fd: RawFd,
    registered: bool,
    sqpoll: bool,
    /// Slots pushed to the submission ring and not yet consumed by the
    /// kernel, in ring order.
    queued: VecDeque<u32>,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("slots", &self.slots)
            .field("registered", &self.registered)
            .field("sqpoll", &self.sqpoll)
            .finish()
    }
}

/// Whether the kernel lets this process create an io_uring (it may be
/// disabled by `kernel.io_uring_disabled`, seccomp or an old kernel).
pub fn uring_available() -> Result<(), io::Error> {
    IoUring::new(2).map(drop)
}

impl UringEngine {
    /// Create a ring for `fd` over `slots`, registering both when asked
    /// (registration can be refused under a low RLIMIT_MEMLOCK; the engine
    /// then runs unregistered and [`Engine::registered`] says so). `fd` must
    /// stay open while the engine exists.
    pub fn new(fd: RawFd, mut slots: Slots, opts: UringOptions) -> io::Result<UringEngine> {
        let entries = (slots.len().max(1) as u32).next_power_of_two();
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
            let iov = slots.iovecs();
            // SAFETY: the iovecs describe the slot buffers, which this engine
            // owns and which outlive the registration: `ring` is declared
            // before `slots`, so the ring (and its registration) is dropped
            // first, and `Drop` waits for in-flight I/O before either goes.
            let ok_bufs = unsafe { ring.submitter().register_buffers(&iov) }.is_ok();
            let ok_files = ok_bufs && ring.submitter().register_files(&[fd]).is_ok();
            if ok_bufs && !ok_files {
                let _ = ring.submitter().unregister_buffers();
            }
            registered = ok_bufs && ok_files;
        }
        let depth = slots.len();
        Ok(UringEngine {
            ring,
            slots,
            fd,
            registered,
            sqpoll: opts.sqpoll,
            queued: VecDeque::with_capacity(depth),
        })
    }

    /// Move the entries the kernel consumed from `queued` to in flight.
    fn account_consumed(&mut self) -> usize {
        // With SQPOLL the kernel thread may take an entry at any moment:
        // everything pushed counts as handed over.
        let left = if self.sqpoll {
            0
        } else {
            self.ring.submission().len()
        };
        let consumed = self.queued.len().saturating_sub(left);
        for _ in 0..consumed {
            if let Some(slot) = self.queued.pop_front() {
                self.slots.submitted(slot);
            }
        }
        consumed
    }

    /// Wait (bounded) until the kernel has returned every buffer.
    fn drain(&mut self) -> bool {
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while self.slots.in_flight() + self.queued.len() > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            let ts = types::Timespec::new().nsec(100_000_000);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)
                    ) => {}
                Err(_) => return false,
            }
            self.account_consumed();
            self.reap(|_, _| {});
        }
        true
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        if !self.drain() {
            // The kernel still holds some buffers: never unmap them.
            self.slots.leak();
        }
    }
}

impl Engine for UringEngine {
    fn slots(&self) -> &Slots {
        &self.slots
    }
    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buf_mut(slot)
    }
    #[inline]
    fn queue(&mut self, io: Io) -> Result<(), QueueError> {
        self.slots.take(&io)?;
        let buf = self.slots.kernel_ptr(io.slot);
        let (slot, len, off) = (io.slot, io.len, io.offset);
        let sqe = match (io.dir, self.registered) {
            (Dir::Read, true) => opcode::ReadFixed::new(types::Fixed(0), buf, len, slot as u16)
                .offset(off)
                .build(),
            (Dir::Write, true) => opcode::WriteFixed::new(types::Fixed(0), buf, len, slot as u16)
                .offset(off)
                .build(),
            (Dir::Read, false) => opcode::Read::new(types::Fd(self.fd), buf, len)
                .offset(off)
                .build(),
            (Dir::Write, false) => opcode::Write::new(types::Fd(self.fd), buf, len)
                .offset(off)
                .build(),
        }
        .user_data(slot as u64);
        // SAFETY: the entry points into slot `slot`'s buffer, which the
        // engine owns and has marked queued: no safe accessor hands it out
        // until its completion is reaped, and `Drop` waits for that before
        // the buffer is unmapped. The ring has at least as many entries as
        // there are slots, and each slot is queued at most once, so the push
        // cannot overflow.
        let pushed = unsafe { self.ring.submission().push(&sqe) };
        if pushed.is_err() {
            // Unreachable by the argument above; keep the slot consistent.
            self.slots.completed(slot);
            return Err(QueueError::SlotBusy(slot));
        }
        self.queued.push_back(slot);
        Ok(())
    }

    #[inline]
    fn submit(&mut self, wait: usize) -> io::Result<usize> {
        loop {
            // Without `wait` the call only submits: no task work, no
            // completions posted, so its duration (the worker's bound on a
            // shared stamp's error) is the submission alone.
            let r = self.ring.submit_and_wait(wait);
            match r {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // EBUSY/EAGAIN: completions must be reaped first; the caller does.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY | libc::EAGAIN)) => break,
                Err(e) => {
                    self.account_consumed();
                    return Err(e);
                }
            }
        }
        Ok(self.account_consumed())
    }

    #[inline]
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> usize {
        let mut n = 0;
        // `completion()` snapshots the ring's tail: only completions present
        // now are handed out.
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as u32;
            self.slots.completed(slot);
            f(slot, cqe.result());
            n += 1;
        }
        n
    }

    fn has_completions(&mut self) -> bool {
        !self.ring.completion().is_empty()
    }

    fn registered(&self) -> Option<bool> {
        Some(self.registered)
    }
}
