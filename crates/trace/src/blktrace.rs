//! blktrace's binary per-CPU files (`NAME.blktrace.N`, one per CPU, of one
//! device): a sequence of `struct blk_io_trace` (linux/blktrace_api.h:
//! magic `0x65617400 | version 7`, sequence, time in ns, sector, bytes,
//! action, pid, device, cpu, error, pdu_len: 48 bytes), each followed by
//! `pdu_len` bytes of payload. The files are merged by time holding one
//! event per file. An event stands for a request when its action is the
//! chosen one (issue `D` or queue `Q`); reads and writes are told by the
//! category bits, discards are trims, empty flushes are syncs. Offsets are
//! byte offsets on the traced device (sector × 512).

use crate::{At, BlkEvent, FileId, Op, Opener, TraceError, TraceRecord, err, read_full};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
const EVENT_LEN: usize = 48;
const TC_READ: u32 = 1 << 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
/// The most per-CPU files read (and held open) at once.
const MAX_CPUS: usize = 4096;

pub(crate) fn is_blktrace(head: &[u8]) -> bool {
    head.len() >= 4 && {
        let le = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let be = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        le & 0xffff_ff00 == MAGIC || be & 0xffff_ff00 == MAGIC
    }
}

/// The per-CPU files a path names: `NAME.blktrace.N` (all of NAME's) or a
/// `NAME` with `NAME.blktrace.0` beside it. None when it names neither.
pub(crate) fn per_cpu_files(path: &Path) -> Option<Vec<PathBuf>> {
    let name = path.file_name()?.to_str()?;
    let base = match name.rfind(".blktrace.") {
        Some(i) if name[i + 10..].bytes().all(|b| b.is_ascii_digit()) => &name[..i],
        _ => {
            let zero = path.with_file_name(format!("{name}.blktrace.0"));
            if !zero.exists() {
                return None;
            }
            name
        }
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut cpus: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().into_string().ok()?;
            let cpu = n.strip_prefix(base)?.strip_prefix(".blktrace.")?;
            if cpu.is_empty() || !cpu.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((cpu.parse().ok()?, e.path()))
        })
        .collect();
    if cpus.is_empty() {
        // A path that does not exist: the opener names it.
        return Some(vec![path.to_path_buf()]);
    }
    cpus.sort();
    Some(cpus.into_iter().map(|(_, p)| p).collect())
}

struct Event {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
}

struct CpuFile {
    path: PathBuf,
    input: BufReader<File>,
    swap: Option<bool>,
    record: u64,
    next: Option<Event>,
}

impl CpuFile {
    fn bad(&self, reason: impl Into<String>) -> TraceError {
        err(&self.path, At::Record(self.record), reason)
    }

    /// Read the next event into `next` (None at the end of the file).
    fn advance(&mut self) -> Result<(), TraceError> {
        self.next = None;
        let mut b = [0u8; EVENT_LEN];
        self.record += 1;
        let n = read_full(&mut self.input, &mut b)
            .map_err(|e| self.bad(format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        if n < EVENT_LEN {
            return Err(self.bad(format!(
                "truncated: the file ends inside an event ({n} of {EVENT_LEN} bytes)"
            )));
        }
        let le = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let swap = match self.swap {
            Some(s) => s,
            None => {
                let s = le & 0xffff_ff00 != MAGIC;
                self.swap = Some(s);
                s
            }
        };
        let u32_at = |i: usize| {
            let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            if swap {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            if swap {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }
        };
        let u16_at = |i: usize| {
            let a = [b[i], b[i + 1]];
            if swap {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            }
        };
        let magic = u32_at(0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(self.bad(format!(
                "bad magic {magic:#x}: not a blktrace event (corrupt or misaligned)"
            )));
        }
        if magic & 0xff != VERSION {
            return Err(self.bad(format!(
                "blktrace event version {} is not one storlab reads (version 7, blktrace 1.x)",
                magic & 0xff
            )));
        }
        let pdu_len = u16_at(46);
        let mut pdu = [0u8; 256];
        let mut left = usize::from(pdu_len);
        while left > 0 {
            let k = left.min(pdu.len());
            let got = read_full(&mut self.input, &mut pdu[..k])
                .map_err(|e| self.bad(format!("cannot read: {e}")))?;
            if got < k {
                return Err(self.bad(format!(
                    "truncated: the file ends inside an event's {pdu_len}-byte payload"
                )));
            }
            left -= k;
        }
        self.next = Some(Event {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
        });
        Ok(())
    }
}

pub(crate) struct Reader {
    cpus: Vec<CpuFile>,
    want: u32,
    device: Option<u32>,
    files: Vec<String>,
}

impl Reader {
    pub(crate) fn open(
        path: &Path,
        paths: Vec<PathBuf>,
        event: BlkEvent,
        opener: &mut Opener<'_>,
    ) -> Result<Reader, TraceError> {
        if paths.len() > MAX_CPUS {
            return Err(err(
                path,
                At::File,
                format!("more than {MAX_CPUS} per-CPU files"),
            ));
        }
        let mut cpus = Vec::new();
        for p in paths {
            let f = opener(&p).map_err(|r| err(&p, At::File, r.to_string()))?;
            let mut c = CpuFile {
                path: p,
                input: BufReader::new(f),
                swap: None,
                record: 0,
                next: None,
            };
            c.advance()?;
            cpus.push(c);
        }
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = match base.rfind(".blktrace.") {
            Some(i) => base[..i].to_string(),
            None => base,
        };
        Ok(Reader {
            cpus,
            want: match event {
                BlkEvent::Issue => TA_ISSUE,
                BlkEvent::Queue => TA_QUEUE,
            },
            device: None,
            files: vec![base],
        })
    }

    pub(crate) fn cpus(&self) -> u32 {
        u32::try_from(self.cpus.len()).unwrap_or(u32::MAX)
    }

    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            // The earliest pending event of all CPUs.
            let Some(i) = (0..self.cpus.len())
                .filter(|&i| self.cpus[i].next.is_some())
                .min_by_key(|&i| self.cpus[i].next.as_ref().map_or(u64::MAX, |e| e.time))
            else {
                return Ok(None);
            };
            let cpu = &mut self.cpus[i];
            let Some(ev) = cpu.next.take() else {
                return Ok(None);
            };
            let at = cpu.record;
            let path = cpu.path.clone();
            cpu.advance()?;
            let cat = ev.action >> 16;
            if cat & TC_NOTIFY != 0 || ev.action & 0xff != self.want {
                continue;
            }
            match self.device {
                None => self.device = Some(ev.device),
                Some(d) if d != ev.device => {
                    return Err(err(
                        &path,
                        At::Record(at),
                        format!(
                            "event of device {}:{} in a trace of device {}:{}; a trace holds one device's events",
                            ev.device >> 20,
                            ev.device & 0xfffff,
                            d >> 20,
                            d & 0xfffff
                        ),
                    ));
                }
                Some(_) => {}
            }
            let op = if cat & TC_DISCARD != 0 {
                Op::Trim
            } else if ev.bytes == 0 && cat & TC_FLUSH != 0 {
                Op::Fsync
            } else if ev.bytes == 0 {
                continue;
            } else if cat & TC_WRITE != 0 {
                Op::Write
            } else if cat & TC_READ != 0 || cat & TC_WRITE == 0 {
                Op::Read
            } else {
                continue;
            };
            let offset = ev.sector.checked_mul(512).ok_or_else(|| {
                err(
                    &path,
                    At::Record(at),
                    format!("sector {} is beyond 2^64 bytes", ev.sector),
                )
            })?;
            let length = if op == Op::Fsync {
                0
            } else {
                u64::from(ev.bytes)
            };
            return Ok(Some(TraceRecord {
                rank: 0,
                file: 0 as FileId,
                op,
                offset: if op == Op::Fsync { 0 } else { offset },
                length,
                start_ns: ev.time,
                end_ns: None,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time: u64, sector: u64, bytes: u32, action: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(MAGIC | VERSION).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&sector.to_le_bytes());
        b.extend_from_slice(&bytes.to_le_bytes());
        b.extend_from_slice(&action.to_le_bytes());
        b.extend_from_slice(&[0u8; 12]);
        b.extend_from_slice(&[0u8; 2]);
        b.extend_from_slice(&0u16.to_le_bytes());
        b
    }

    #[test]
    fn per_cpu_files_merge_by_time_and_pick_the_event() {
        let d = tempfile::tempdir().unwrap();
        let issue_w = TA_ISSUE | (TC_WRITE | (1 << 6)) << 16;
        let queue_r = TA_QUEUE | (TC_READ | (1 << 4)) << 16;
        let issue_r = TA_ISSUE | (TC_READ | (1 << 6)) << 16;
        let mut c0 = event(10, 8, 4096, issue_w);
        c0.extend(event(30, 16, 512, issue_r));
        let mut c1 = event(5, 0, 4096, queue_r);
        c1.extend(event(20, 100, 8192, issue_r));
        std::fs::write(d.path().join("sda.blktrace.0"), c0).unwrap();
        std::fs::write(d.path().join("sda.blktrace.1"), c1).unwrap();
        let recs: Vec<_> =
            crate::TraceReader::open(&d.path().join("sda.blktrace.1"), &Default::default())
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        let got: Vec<_> = recs
            .iter()
            .map(|r| (r.start_ns, r.op, r.offset, r.length))
            .collect();
        assert_eq!(
            got,
            [
                (10, Op::Write, 4096, 4096),
                (20, Op::Read, 51200, 8192),
                (30, Op::Read, 8192, 512)
            ]
        );
        let opts = crate::OpenOptions {
            blk_event: BlkEvent::Queue,
            ..Default::default()
        };
        let q: Vec<_> = crate::TraceReader::open(&d.path().join("sda"), &opts)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(q.len(), 1);
        assert_eq!((q[0].start_ns, q[0].op), (5, Op::Read));
    }

    #[test]
    fn truncated_and_foreign_events_are_refused_with_their_number() {
        let d = tempfile::tempdir().unwrap();
        let issue_r = TA_ISSUE | (TC_READ | (1 << 6)) << 16;
        let mut b = event(1, 0, 512, issue_r);
        b.extend(event(2, 0, 512, issue_r));
        b.truncate(EVENT_LEN + 20);
        let p = d.path().join("x.blktrace.0");
        std::fs::write(&p, &b).unwrap();
        let e = crate::TraceReader::open(&p, &Default::default())
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err();
        assert_eq!(e.at, At::Record(2), "{e}");
        assert!(
            e.to_string().contains("x.blktrace.0") && e.to_string().contains("truncated"),
            "{e}"
        );
        let mut v = event(1, 0, 512, issue_r);
        v[0] = 0x06;
        std::fs::write(&p, &v).unwrap();
        let e = crate::TraceReader::open(&p, &Default::default()).unwrap_err();
        assert!(e.to_string().contains("version 6"), "{e}");
    }
}
