//! The psync engine: `pread(2)`/`pwrite(2)`, one I/O at a time. Submitting
//! is doing: the I/O is complete when `submit` returns.

use super::{Dir, Engine, Io, QueueError, Slots};
use crate::sys;
use std::io;
use std::os::fd::RawFd;

/// Synchronous pread/pwrite; depth 1.
#[derive(Debug)]
pub(crate) struct PsyncEngine {
    fd: RawFd,
    slots: Slots,
    queued: Option<Io>,
    done: Option<(u32, i32)>,
}

impl PsyncEngine {
    /// `slots` should hold one buffer (psync has depth 1); `fd` must stay
    /// open while the engine is used.
    pub fn new(fd: RawFd, slots: Slots) -> PsyncEngine {
        PsyncEngine {
            fd,
            slots,
            queued: None,
            done: None,
        }
    }
}

impl Engine for PsyncEngine {
    fn slots(&self) -> &Slots {
        &self.slots
    }
    fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buf_mut(slot)
    }
    fn depth(&self) -> usize {
        1
    }
    fn queue(&mut self, io: Io) -> Result<(), QueueError> {
        if self.queued.is_some() || self.done.is_some() {
            return Err(QueueError::SlotBusy(io.slot));
        }
        self.slots.take(&io)?;
        self.queued = Some(io);
        Ok(())
    }
    fn submit(&mut self, _wait: usize) -> io::Result<usize> {
        let Some(io) = self.queued.take() else {
            return Ok(0);
        };
        self.slots.submitted(io.slot);
        // The slot is marked in flight but this thread is the only one
        // touching it, synchronously: the kernel is done when the call returns.
        self.slots.completed(io.slot);
        let buf = &mut self.slots.buf_mut(io.slot)[..io.len as usize];
        let r = match io.dir {
            Dir::Read => sys::pread(self.fd, buf, io.offset),
            Dir::Write => sys::pwrite(self.fd, buf, io.offset),
        };
        let res = match r {
            Ok(n) => i32::try_from(n).unwrap_or(i32::MAX),
            Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
        };
        self.done = Some((io.slot, res));
        Ok(1)
    }
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> usize {
        match self.done.take() {
            Some((s, r)) => {
                f(s, r);
                1
            }
            None => 0,
        }
    }
    fn has_completions(&mut self) -> bool {
        self.done.is_some()
    }
    fn in_flight(&self) -> usize {
        usize::from(self.done.is_some())
    }
}
