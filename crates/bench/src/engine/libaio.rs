//! The libaio engine: Linux native AIO (`io_setup`, `io_submit`,
//! `io_getevents`, `io_destroy`) through the raw system calls, as fio's
//! `ioengine=libaio` uses them through libaio. Each `submit` is one
//! `io_submit` carrying every queued I/O; with `wait > 0` it is followed by
//! one `io_getevents` that blocks until that many completions are ready
//! (libaio has no single call doing both, fio makes the same two calls).
//! Without `wait` only `io_submit` is made: its duration is then the
//! submission alone (the worker's bound on a shared stamp's error), and the
//! completions are fetched by the next waiting call.
//!
//! As with fio, native AIO is asynchronous only with O_DIRECT; buffered
//! I/O completes inside `io_submit`.
//!
//! This module holds the engine's `unsafe` code: the AIO system calls, whose
//! control blocks carry pointers into the slot buffers. The argument for
//! each is that the engine owns the buffers ([`Slots`]) and never frees them
//! while the kernel may touch them: see `Drop`.
#![allow(unsafe_code)]

use super::{Dir, Engine, Io, QueueError, Slots};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// `struct iocb` (include/uapi/linux/aio_abi.h), little-endian field order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `aio_reqprio` holds an I/O priority (include/uapi/linux/aio_abi.h).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

#[cfg(not(target_endian = "little"))]
compile_error!("the libaio engine's struct iocb layout assumes a little-endian target");

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

/// How long dropping an engine waits for in-flight I/O.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Linux native AIO engine. Field order matters: the context is destroyed
/// (in `Drop`, which waits for every I/O) before the slots are unmapped.
pub(crate) struct LibaioEngine {
    ctx: libc::c_ulong,
    fd: RawFd,
    /// One control block per slot (the kernel copies it in `io_submit`).
    iocbs: Vec<Iocb>,
    /// Slots queued and not yet taken by `io_submit`, in order.
    queued: VecDeque<u32>,
    /// Completions fetched by `io_getevents`, not yet reaped.
    ready: VecDeque<(u32, i32)>,
    events: Vec<IoEvent>,
    /// `io_submit`'s pointer array, reused (no allocation per submit).
    ptrs: Vec<*mut Iocb>,
    slots: Slots,
    /// Each slot's command priority (`set_ioprio`; prio.rs).
    ioprio: Vec<u16>,
}

impl std::fmt::Debug for LibaioEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibaioEngine")
            .field("slots", &self.slots)
            .finish()
    }
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

impl LibaioEngine {
    /// An AIO context for `fd` over `slots`. `fd` must stay open while the
    /// engine exists.
    pub fn new(fd: RawFd, slots: Slots) -> io::Result<LibaioEngine> {
        let depth = slots.len().max(1);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup(2) writes the new context id to `ctx`, a valid
        // local; nr_events is a small positive count.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            return Err(last_err());
        }
        Ok(LibaioEngine {
            ctx,
            fd,
            iocbs: vec![Iocb::default(); depth],
            queued: VecDeque::with_capacity(depth),
            ready: VecDeque::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            ptrs: Vec::with_capacity(depth),
            slots,
            ioprio: vec![0; depth],
        })
    }

    /// Fetch completions: at least `min` (blocking), at most the number of
    /// slots; `timeout` bounds the wait (None = until `min` arrive).
    fn get_events(&mut self, min: usize, timeout: Option<Duration>) -> io::Result<usize> {
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `events` has room for `events.len()` entries, which is the
        // `nr` passed; `tsp` is null or points to a local timespec.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                min as libc::c_long,
                self.events.len() as libc::c_long,
                self.events.as_mut_ptr(),
                tsp,
            )
        };
        if r < 0 {
            return Err(last_err());
        }
        let n = r as usize;
        for ev in &self.events[..n] {
            let slot = ev.data as u32;
            let res = i32::try_from(ev.res).unwrap_or(-libc::EIO);
            self.ready.push_back((slot, res));
        }
        Ok(n)
    }

    /// Wait (bounded) until the kernel has returned every buffer.
    fn drain(&mut self) -> bool {
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while self.slots.in_flight() > self.ready.len() {
            if Instant::now() >= deadline {
                return false;
            }
            match self.get_events(1, Some(Duration::from_millis(100))) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => return false,
            }
        }
        self.reap(|_, _| {});
        true
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        let drained = self.drain();
        // SAFETY: io_destroy(2) on the context this engine created; it
        // cancels what is outstanding and blocks until every I/O is done.
        let destroyed = unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) } == 0;
        if !drained && !destroyed {
            // The kernel may still hold some buffers: never unmap them.
            self.slots.leak();
        }
    }
}

impl Engine for LibaioEngine {
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
        self.iocbs[io.slot as usize] = Iocb {
            aio_data: u64::from(io.slot),
            aio_lio_opcode: match io.dir {
                Dir::Read => IOCB_CMD_PREAD,
                Dir::Write => IOCB_CMD_PWRITE,
            },
            aio_fildes: self.fd as u32,
            aio_buf: buf as u64,
            aio_nbytes: u64::from(io.len),
            aio_offset: io.offset as i64,
            // fio's cmdprio: the priority rides with IOCB_FLAG_IOPRIO.
            aio_reqprio: self.ioprio.get(io.slot as usize).copied().unwrap_or(0) as i16,
            aio_flags: if self.ioprio.get(io.slot as usize).copied().unwrap_or(0) != 0 {
                IOCB_FLAG_IOPRIO
            } else {
                0
            },
            ..Iocb::default()
        };
        self.queued.push_back(io.slot);
        Ok(())
    }

    #[inline]
    fn submit(&mut self, wait: usize) -> io::Result<usize> {
        let mut taken = 0;
        if !self.queued.is_empty() {
            // The control blocks never move (`iocbs` is never resized), so
            // pointers into it stay valid for the call.
            let iocbs = self.iocbs.as_mut_ptr();
            self.ptrs.clear();
            self.ptrs
                .extend(self.queued.iter().map(|&s| iocbs.wrapping_add(s as usize)));
            let ptrs = &mut self.ptrs;
            let r = loop {
                // SAFETY: each pointer is to this engine's control block for
                // a queued slot, whose buffer pointer and length lie inside
                // that slot's buffer. The engine owns the buffers and marks
                // the slots in flight until their completion is reaped, and
                // `Drop` waits for (or destroys the context over) every I/O
                // before the buffers are unmapped.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_io_submit,
                        self.ctx,
                        ptrs.len() as libc::c_long,
                        ptrs.as_mut_ptr(),
                    )
                };
                if r < 0 && last_err().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break r;
            };
            if r < 0 {
                let e = last_err();
                // EAGAIN: out of resources for now; completions must be
                // reaped first (the caller does), nothing was taken.
                if e.raw_os_error() != Some(libc::EAGAIN) {
                    return Err(e);
                }
            } else {
                taken = r as usize;
                for _ in 0..taken {
                    if let Some(slot) = self.queued.pop_front() {
                        self.slots.submitted(slot);
                    }
                }
            }
        }
        let outstanding = self.slots.in_flight().saturating_sub(self.ready.len());
        let min = wait.min(outstanding);
        if min > 0 {
            // Block for `min`, taking every completion ready by then.
            loop {
                match self.get_events(min, None) {
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(taken)
    }

    #[inline]
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> usize {
        let n = self.ready.len();
        while let Some((slot, res)) = self.ready.pop_front() {
            self.slots.completed(slot);
            f(slot, res);
        }
        n
    }

    fn has_completions(&mut self) -> bool {
        !self.ready.is_empty()
    }

    fn in_flight(&self) -> usize {
        self.slots.in_flight()
    }
    fn set_ioprio(&mut self, slot: u32, ioprio: u16) {
        if let Some(p) = self.ioprio.get_mut(slot as usize) {
            *p = ioprio;
        }
    }
}

/// Whether this kernel offers native AIO (it may be compiled out or
/// limited by `fs.aio-max-nr`).
pub fn libaio_available() -> io::Result<()> {
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: as in `LibaioEngine::new`; the context is destroyed at once.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, 1 as libc::c_long, &mut ctx) };
    if r < 0 {
        return Err(last_err());
    }
    // SAFETY: destroying the context just created, with no I/O in it.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn reads_and_writes_a_file_at_depth() {
        if let Err(e) = libaio_available() {
            storlab_testkit::skip("libaio engine", &format!("no native AIO here: {e}"));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = std::fs::OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        f.set_len(64 * 4096).unwrap();
        let fd = f.as_raw_fd();
        let mut e = LibaioEngine::new(fd, Slots::new(8, 4096).unwrap()).unwrap();
        // Write 64 blocks, each filled with its index, 8 in flight at a time.
        let mut next = 0u32;
        let mut done = 0;
        while done < 64 {
            while next < 64 {
                let Some(slot) =
                    (0..8).find(|&s| e.slots.state[s as usize] == super::super::SlotState::Free)
                else {
                    break;
                };
                e.buf_mut(slot).fill(next as u8);
                e.queue(Io {
                    slot,
                    dir: Dir::Write,
                    offset: u64::from(next) * 4096,
                    len: 4096,
                })
                .unwrap();
                next += 1;
            }
            e.submit(1).unwrap();
            done += e.reap(|_, res| assert_eq!(res, 4096));
        }
        assert_eq!(e.in_flight(), 0);
        let on_disk = std::fs::read(&path).unwrap();
        for (i, block) in on_disk.chunks(4096).enumerate() {
            assert!(block.iter().all(|&b| b == i as u8), "block {i}");
        }
        // Read one back through the engine.
        e.queue(Io {
            slot: 3,
            dir: Dir::Read,
            offset: 10 * 4096,
            len: 4096,
        })
        .unwrap();
        assert_eq!(e.submit(1).unwrap(), 1);
        let mut got = None;
        e.reap(|s, r| got = Some((s, r)));
        assert_eq!(got, Some((3, 4096)));
        assert!(e.buf(3).iter().all(|&b| b == 10));
    }
}
