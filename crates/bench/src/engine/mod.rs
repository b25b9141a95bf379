//! I/O engines behind one small interface, as fio's ioengines: queue I/Os on
//! numbered buffer slots, submit (optionally waiting in the same call), reap
//! completions.
//!
//! * [`NullEngine`]: no device; completes each I/O at once, or after a fixed
//!   synthetic service time (to test the measurement pipeline against known
//!   answers).
//! * [`PsyncEngine`]: `pread`/`pwrite`, synchronous (depth 1).
//! * [`UringEngine`]: io_uring with registered buffers and files by
//!   default, optional SQPOLL.
//! * [`LibaioEngine`]: Linux native AIO (`io_submit`/`io_getevents`), as
//!   fio's `libaio`.
//!
//! # Ownership (why this is sound)
//!
//! An engine **owns** its I/O buffers ([`Slots`]). While the kernel may read
//! or write a slot's buffer (from [`Engine::submit`] until the completion is
//! handed out by [`Engine::reap`]), the slot is marked in flight and
//! [`Engine::buf`]/[`Engine::buf_mut`] refuse it, so safe code can never
//! alias memory the kernel is using. Dropping an engine first waits for
//! every in-flight I/O (the io_uring engine's `Drop`), then frees the
//! buffers; if the kernel does not give them back in time, the buffers are
//! leaked rather than freed under it. The only `unsafe` code is in `sys.rs`,
//! `engine/uring.rs` and `engine/libaio.rs`, each block with its SAFETY
//! argument.

mod libaio;
mod null;
mod psync;
mod uring;

pub(crate) use libaio::LibaioEngine;
pub use libaio::libaio_available;
pub(crate) use null::NullEngine;
pub(crate) use psync::PsyncEngine;
pub use uring::uring_available;
pub(crate) use uring::{UringEngine, UringOptions};

use crate::sys::SlotBufs;
use std::io;

/// Direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    Read,
    Write,
}

/// One I/O request on a slot's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Io {
    pub slot: u32,
    pub dir: Dir,
    pub offset: u64,
    pub len: u32,
}

/// A request the engine cannot take: a bug in the caller, reported as an
/// error instead of undefined behaviour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum QueueError {
    #[error("slot {0} is not free (its I/O is still queued or in flight)")]
    SlotBusy(u32),
    #[error("slot {0} does not exist")]
    NoSuchSlot(u32),
    #[error("an I/O of {len} bytes does not fit slot {slot} ({size} bytes)")]
    TooLong { slot: u32, len: u32, size: usize },
}

/// The operations every engine provides. Generic (not object-safe) so the
/// worker's loop is monomorphised per engine.
pub(crate) trait Engine {
    /// The engine's buffers (every engine owns a [`Slots`]); shared access
    /// only, so no caller can change a slot's state behind the engine.
    fn slots(&self) -> &Slots;
    /// How many I/Os may be queued or in flight at once (= slots).
    fn depth(&self) -> usize {
        self.slots().len()
    }
    /// The buffer of a free slot (e.g. data a read brought in).
    ///
    /// # Panics
    /// If the slot is queued or in flight: the kernel may be using it.
    fn buf(&self, slot: u32) -> &[u8] {
        self.slots().buf(slot)
    }
    /// The buffer of a free slot, to prepare a write.
    ///
    /// # Panics
    /// If the slot is queued or in flight.
    fn buf_mut(&mut self, slot: u32) -> &mut [u8];
    /// Queue one I/O on a free slot. It reaches the kernel at the next
    /// [`Engine::submit`].
    fn queue(&mut self, io: Io) -> Result<(), QueueError>;
    /// Hand every queued I/O to the kernel in one system call and, when
    /// `wait > 0`, wait in that same call until at least `wait` completions
    /// are ready. Returns how many I/Os were handed over. An engine whose
    /// completions are synthetic (the null engine) may return sooner, with
    /// fewer ready, so the caller notices a stop or its deadline.
    fn submit(&mut self, wait: usize) -> io::Result<usize>;
    /// Hand each completion that is ready *now* to `f(slot, result)`:
    /// bytes transferred, or a negative errno. The slot is free again when
    /// `f` is called. Returns the number reaped.
    fn reap<F: FnMut(u32, i32)>(&mut self, f: F) -> usize;
    /// Whether a completion is ready to reap now (no system call).
    fn has_completions(&mut self) -> bool;
    /// Give up the I/Os in flight that have not completed, handing each
    /// freed slot to `f`; returns how many. Only synthetic I/O can be given
    /// up (the null engine's service time): a real engine's I/O belongs to
    /// the kernel until it completes, so by default none is.
    fn abandon<F: FnMut(u32)>(&mut self, _f: F) -> usize {
        0
    }
    /// I/Os handed to the kernel whose completion has not been reaped.
    fn in_flight(&self) -> usize {
        self.slots().in_flight()
    }
    /// Whether io_uring buffer/file registration took effect (None for
    /// engines without registration).
    fn registered(&self) -> Option<bool> {
        None
    }
    /// fio's per-command priority (prio.rs): the Linux ioprio value the
    /// next I/O queued on `slot` carries (libaio's `aio_reqprio`, io_uring's
    /// `sqe.ioprio`; 0 = the thread's). Engines without one ignore it.
    fn set_ioprio(&mut self, _slot: u32, _ioprio: u16) {}
}

/// State of one buffer slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    Queued,
    InFlight,
}

/// The buffers of one engine and what each is doing. Every engine keeps
/// its slots here, so the rule "no access while the kernel holds it" is
/// written once.
pub(crate) struct Slots {
    bufs: SlotBufs,
    state: Vec<SlotState>,
    in_flight: usize,
}

impl std::fmt::Debug for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots")
            .field("n", &self.state.len())
            .field("slot_size", &self.bufs.slot_size())
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl Slots {
    /// `n` buffers of at least `size` bytes, 4 KiB aligned.
    pub fn new(n: usize, size: usize) -> io::Result<Slots> {
        let bufs = SlotBufs::new(n, size)?;
        let n = bufs.len();
        Ok(Slots {
            bufs,
            state: vec![SlotState::Free; n],
            in_flight: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.state.len()
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn assert_free(&self, slot: u32) {
        let s = self.state.get(slot as usize).copied();
        assert!(
            s == Some(SlotState::Free),
            "slot {slot} is {s:?}: its buffer belongs to the kernel until the I/O is reaped"
        );
    }

    pub fn buf(&self, slot: u32) -> &[u8] {
        self.assert_free(slot);
        self.bufs.slice(slot as usize)
    }

    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        self.assert_free(slot);
        self.bufs.slice_mut(slot as usize)
    }

    /// Check that `io` may be queued, and mark its slot queued.
    pub fn take(&mut self, io: &Io) -> Result<(), QueueError> {
        match self.state.get(io.slot as usize) {
            None => return Err(QueueError::NoSuchSlot(io.slot)),
            Some(SlotState::Free) => {}
            Some(_) => return Err(QueueError::SlotBusy(io.slot)),
        }
        if io.len as usize > self.bufs.slot_size() {
            return Err(QueueError::TooLong {
                slot: io.slot,
                len: io.len,
                size: self.bufs.slot_size(),
            });
        }
        self.state[io.slot as usize] = SlotState::Queued;
        Ok(())
    }

    /// A queued slot was handed to the kernel.
    pub fn submitted(&mut self, slot: u32) {
        debug_assert_eq!(self.state[slot as usize], SlotState::Queued);
        self.state[slot as usize] = SlotState::InFlight;
        self.in_flight += 1;
    }

    /// The kernel is done with a slot.
    pub fn completed(&mut self, slot: u32) {
        if let Some(s) = self.state.get_mut(slot as usize)
            && *s == SlotState::InFlight
        {
            *s = SlotState::Free;
            self.in_flight -= 1;
        }
    }

    /// Raw pointer to a queued slot's buffer, for the kernel. Only engines
    /// call this, for an I/O they are about to submit.
    pub fn kernel_ptr(&mut self, slot: u32) -> *mut u8 {
        debug_assert_eq!(self.state[slot as usize], SlotState::Queued);
        self.bufs.ptr(slot as usize)
    }

    /// One iovec per slot, for registering with io_uring.
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        self.bufs.iovecs()
    }

    /// Never free the buffers: the kernel may still write into them.
    pub fn leak(&mut self) {
        self.bufs.leak();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(slot: u32, len: u32) -> Io {
        Io {
            slot,
            dir: Dir::Read,
            offset: 0,
            len,
        }
    }

    #[test]
    fn a_slot_is_unusable_while_the_kernel_holds_it() {
        let mut s = Slots::new(2, 4096).unwrap();
        s.take(&io(0, 4096)).unwrap();
        assert_eq!(s.take(&io(0, 4096)), Err(QueueError::SlotBusy(0)));
        assert_eq!(s.take(&io(5, 4096)), Err(QueueError::NoSuchSlot(5)));
        assert!(matches!(
            s.take(&io(1, 8192)),
            Err(QueueError::TooLong { .. })
        ));
        s.submitted(0);
        assert_eq!(s.in_flight(), 1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.buf_mut(0).len()));
        assert!(r.is_err(), "an in-flight buffer must not be handed out");
        s.completed(0);
        assert_eq!(s.in_flight(), 0);
        assert_eq!(s.buf_mut(0).len(), 4096);
        // A stray completion for a free slot changes nothing.
        s.completed(0);
        assert_eq!(s.in_flight(), 0);
    }
}
