//! Darshan logs (darshan-util's `darshan-logutils.c`, `darshan-dxt-logutils.c`,
//! `include/darshan-log-format.h`), format versions 3.10, 3.20, 3.21 and 3.41.
//!
//! Layout: an uncompressed header (version string, magic 6567223,
//! compression type, partial flag, the name map and 16 module maps, each
//! `{off, len}` in compressed bytes, then 16 module versions; 64 of each
//! from 3.41, where the partial flag also grew to 64 bits), then
//! compressed regions: the job record, the name records (`u64 id` +
//! NUL-terminated name), one region per module. A region is one or more
//! zlib streams back to back (or raw bytes). A DXT region is a sequence of
//! `dxt_file_record` (id, rank, shared flag, 64-byte host name, write
//! count, read count: 104 bytes) each followed by its write segments, then
//! its read segments: `offset, length: i64; start, end: f64 seconds from
//! the job start` (+ a `u64` pthread id from DXT_POSIX version 2 and
//! DXT_MPIIO version 3). Byte order follows the magic number.
//!
//! Only the region being read is held, streamed through the decompressor;
//! the name table is read whole (it grows with files, not records).

use crate::{At, DxtModule, FileId, Op, TraceError, TraceRecord, err, read_full, secs_to_ns};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Take};
use std::path::{Path, PathBuf};

const MAGIC: i64 = 6567223;
/// The longest header (3.41).
const MAX_HEADER_LEN: usize = 1328;

/// Where a format version keeps things.
struct Layout {
    header_len: usize,
    /// Offset of the name map; the module maps follow it.
    name_map_at: usize,
    mods: usize,
    /// Offset of nprocs in the (decompressed) job record.
    nprocs_at: usize,
    dxt_posix: usize,
    dxt_mpiio: usize,
}

impl Layout {
    fn of(version: &str) -> Option<Layout> {
        // Before 3.20 there was no H5D module, before 3.41 no PNETCDF_VAR:
        // the DXT modules' indexes moved up as they came.
        let old = |dxt_posix| Layout {
            header_len: 360,
            name_map_at: 24,
            mods: 16,
            nprocs_at: 24,
            dxt_posix,
            dxt_mpiio: dxt_posix + 1,
        };
        Some(match version {
            "3.10" => old(8),
            "3.20" | "3.21" => old(9),
            // The job record gained start and end nanoseconds.
            "3.41" => Layout {
                header_len: MAX_HEADER_LEN,
                name_map_at: 32,
                mods: 64,
                nprocs_at: 40,
                dxt_posix: 10,
                dxt_mpiio: 11,
            },
            _ => return None,
        })
    }
}
const FILE_RECORD_LEN: usize = 104;
/// The biggest name region read (the names of some millions of files).
const MAX_NAMES_LEN: u64 = 1 << 30;

pub(crate) fn looks_like(head: &[u8]) -> bool {
    head.len() >= 2 && head[0].is_ascii_digit() && head[1] == b'.'
}

#[derive(Clone, Copy)]
struct Endian {
    swap: bool,
}

impl Endian {
    fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        if self.swap {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        }
    }
    fn i64(self, b: &[u8]) -> i64 {
        self.u64(b) as i64
    }
    fn f64(self, b: &[u8]) -> f64 {
        f64::from_bits(self.u64(b))
    }
    fn u32(self, b: &[u8]) -> u32 {
        let mut a = [0u8; 4];
        a.copy_from_slice(&b[..4]);
        if self.swap {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }
}

/// A region's bytes, decompressed as they are read.
enum Region {
    Raw(Take<BufReader<File>>),
    Zlib(Option<flate2::bufread::ZlibDecoder<BufReader<Take<File>>>>),
}

impl Read for Region {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Region::Raw(r) => r.read(buf),
            Region::Zlib(slot) => loop {
                let Some(dec) = slot.as_mut() else {
                    return Ok(0);
                };
                let n = dec.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                // End of one zlib stream: another may follow in the region.
                let Some(dec) = slot.take() else {
                    return Ok(0);
                };
                let mut input = dec.into_inner();
                if input.fill_buf()?.is_empty() {
                    return Ok(0);
                }
                *slot = Some(flate2::bufread::ZlibDecoder::new(input));
            },
        }
    }
}

struct FileRec {
    rank: u32,
    file: FileId,
    writes: u64,
    reads: u64,
}

pub(crate) struct Reader {
    path: PathBuf,
    version: String,
    module: DxtModule,
    partial: bool,
    nprocs: u32,
    files: Vec<String>,
    ids: HashMap<u64, FileId>,
    region: Region,
    seg_len: usize,
    current: Option<FileRec>,
    endian: Endian,
    record: u64,
}

fn region_reader(
    path: &Path,
    file: &File,
    comp: u8,
    off: u64,
    len: u64,
    what: &str,
) -> Result<Region, TraceError> {
    let mut f = file
        .try_clone()
        .map_err(|e| err(path, At::File, format!("cannot read the {what}: {e}")))?;
    f.seek(SeekFrom::Start(off))
        .map_err(|e| err(path, At::File, format!("cannot seek to the {what}: {e}")))?;
    Ok(match comp {
        0 => Region::Zlib(Some(flate2::bufread::ZlibDecoder::new(BufReader::new(
            f.take(len),
        )))),
        _ => Region::Raw(BufReader::new(f).take(len)),
    })
}

impl Reader {
    pub(crate) fn new(
        path: &Path,
        mut file: File,
        want: Option<DxtModule>,
    ) -> Result<Reader, TraceError> {
        let hdr_err = |r: String| err(path, At::File, r);
        let mut head = [0u8; MAX_HEADER_LEN];
        let n =
            read_full(&mut file, &mut head).map_err(|e| hdr_err(format!("cannot read: {e}")))?;
        let vlen = head[..8].iter().position(|&b| b == 0).unwrap_or(8);
        let version = String::from_utf8_lossy(&head[..vlen]).into_owned();
        let layout = match Layout::of(&version) {
            Some(l) => l,
            None => {
                let v = &version;
                return Err(hdr_err(format!(
                    "Darshan log format {v:?} is not one storlab reads: it reads 3.10, 3.20, \
                     3.21 and 3.41 (Darshan 3.1 and later); other versions are refused rather \
                     than misread"
                )));
            }
        };
        let (dxt_posix, dxt_mpiio) = (layout.dxt_posix, layout.dxt_mpiio);
        let header_len = layout.header_len;
        if n < header_len {
            return Err(hdr_err(format!(
                "truncated: the header is {header_len} bytes, the file has {n}"
            )));
        }
        let le = Endian { swap: false };
        let endian = if le.i64(&head[8..]) == MAGIC {
            le
        } else if (Endian { swap: true }).i64(&head[8..]) == MAGIC {
            Endian { swap: true }
        } else {
            return Err(hdr_err(
                "bad magic number: not a Darshan log, or a corrupt one".into(),
            ));
        };
        let comp = head[16];
        // The partial flag: a bit per module (u32 at 20 before 3.41, u64 at 24).
        let partial_flags = if layout.mods == 64 {
            endian.u64(&head[24..])
        } else {
            u64::from(endian.u32(&head[20..]))
        };
        match comp {
            0 | 2 => {}
            1 => {
                return Err(hdr_err(
                    "the log is bzip2-compressed, which storlab does not read; convert it to zlib \
                     with `darshan-convert` (the default compression)"
                        .into(),
                ));
            }
            c => {
                return Err(hdr_err(format!(
                    "unknown compression type {c} in the header"
                )));
            }
        }
        let map = |i: usize| {
            let at = layout.name_map_at + 16 * i;
            (endian.u64(&head[at..]), endian.u64(&head[at + 8..]))
        };
        let name_map = map(0);
        let mod_map = |m: usize| map(1 + m);
        let vers_at = layout.name_map_at + 16 * (1 + layout.mods);
        let mod_ver = |m: usize| endian.u32(&head[vers_at + 4 * m..]);
        let file_len = file
            .metadata()
            .map_err(|e| hdr_err(format!("cannot read: {e}")))?
            .len();
        for (what, (off, len)) in [("name map", name_map)]
            .into_iter()
            .chain((0..layout.mods).map(|m| ("module map", mod_map(m))))
        {
            if len > 0
                && off
                    .checked_add(len)
                    .is_none_or(|end| end > file_len || off < header_len as u64)
            {
                return Err(hdr_err(format!(
                    "truncated or corrupt: the {what} points at bytes {off}..{} of a {file_len}-byte file",
                    off.saturating_add(len)
                )));
            }
        }
        let posix = mod_map(dxt_posix).1 > 0;
        let mpiio = mod_map(dxt_mpiio).1 > 0;
        let module = match want {
            Some(m) => m,
            None if posix => DxtModule::Posix,
            None if mpiio => DxtModule::Mpiio,
            None => {
                return Err(hdr_err(
                    "the log holds no DXT_POSIX or DXT_MPIIO data: run the application with \
                     DXT tracing on (DXT_ENABLE_IO_TRACE=1) to record its operations"
                        .into(),
                ));
            }
        };
        let (idx, present) = match module {
            DxtModule::Posix => (dxt_posix, posix),
            DxtModule::Mpiio => (dxt_mpiio, mpiio),
        };
        if !present {
            return Err(hdr_err(format!("the log holds no {} data", module.name())));
        }
        let ver = mod_ver(idx);
        let seg_len = match (module, ver) {
            (DxtModule::Posix, 1) | (DxtModule::Mpiio, 2) => 32,
            (DxtModule::Posix, 2) | (DxtModule::Mpiio, 3) => 40,
            (m, v) => {
                return Err(hdr_err(format!(
                    "{} module version {v} is not one storlab reads (DXT_POSIX 1-2, DXT_MPIIO 2-3)",
                    m.name()
                )));
            }
        };
        let nprocs = read_nprocs(path, &file, comp, &layout, name_map.0, file_len, endian)?;
        let (names, ids) = read_names(path, &file, comp, name_map, endian)?;
        let (off, len) = mod_map(idx);
        let region = region_reader(path, &file, comp, off, len, "DXT region")?;
        Ok(Reader {
            path: path.to_path_buf(),
            version,
            module,
            partial: partial_flags & (1u64 << idx) != 0,
            nprocs,
            files: names,
            ids,
            region,
            seg_len,
            current: None,
            endian,
            record: 0,
        })
    }

    pub(crate) fn partial(&self) -> bool {
        self.partial
    }
    pub(crate) fn version(&self) -> &str {
        &self.version
    }
    pub(crate) fn module(&self) -> DxtModule {
        self.module
    }
    pub(crate) fn nprocs(&self) -> u32 {
        self.nprocs
    }
    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    fn bad(&self, reason: impl Into<String>) -> TraceError {
        err(&self.path, At::Record(self.record), reason)
    }

    /// Read exactly `buf`; Ok(false) at a clean end of the region (when
    /// `end_ok`), an error naming the record when it stops part-way.
    fn read_exact(&mut self, buf: &mut [u8], end_ok: bool, what: &str) -> Result<bool, TraceError> {
        let n = read_full(&mut self.region, buf).map_err(|e| {
            self.bad(format!(
                "corrupt {} data (cannot decompress: {e})",
                self.module.name()
            ))
        })?;
        if n == 0 && end_ok {
            return Ok(false);
        }
        if n < buf.len() {
            return Err(self.bad(format!(
                "truncated: the {} region ends inside a {what} ({n} of {} bytes)",
                self.module.name(),
                buf.len()
            )));
        }
        Ok(true)
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if let Some(cur) = &mut self.current {
                let op = if cur.writes > 0 {
                    cur.writes -= 1;
                    Op::Write
                } else if cur.reads > 0 {
                    cur.reads -= 1;
                    Op::Read
                } else {
                    self.current = None;
                    continue;
                };
                let (rank, file) = (cur.rank, cur.file);
                self.record += 1;
                let mut seg = [0u8; 40];
                let len = self.seg_len;
                self.read_exact(&mut seg[..len], false, "segment")?;
                let e = self.endian;
                let (offset, length) = (e.i64(&seg[0..]), e.i64(&seg[8..]));
                let (start, end) = (e.f64(&seg[16..]), e.f64(&seg[24..]));
                let offset = u64::try_from(offset)
                    .map_err(|_| self.bad(format!("negative offset {offset}")))?;
                let length = u64::try_from(length)
                    .map_err(|_| self.bad(format!("negative length {length}")))?;
                if offset.checked_add(length).is_none() {
                    return Err(self.bad("offset + length is beyond 2^64 bytes"));
                }
                let (Some(start_ns), Some(end_ns)) = (secs_to_ns(start), secs_to_ns(end)) else {
                    return Err(self.bad(format!(
                        "times {start}..{end} s are not times from the job start"
                    )));
                };
                if end_ns < start_ns {
                    return Err(self.bad(format!(
                        "the operation ends ({end} s) before it starts ({start} s)"
                    )));
                }
                return Ok(Some(TraceRecord {
                    rank,
                    file,
                    op,
                    offset,
                    length,
                    start_ns,
                    end_ns: Some(end_ns),
                }));
            }
            let mut fr = [0u8; FILE_RECORD_LEN];
            self.record += 1;
            if !self.read_exact(&mut fr, true, "file record")? {
                return Ok(None);
            }
            let e = self.endian;
            let id = e.u64(&fr[0..]);
            let rank = e.i64(&fr[8..]);
            let writes = e.i64(&fr[88..]);
            let reads = e.i64(&fr[96..]);
            let rank = u32::try_from(rank)
                .ok()
                .filter(|&r| r < self.nprocs)
                .ok_or_else(|| {
                    self.bad(format!(
                        "rank {rank} is not one of the job's {} processes",
                        self.nprocs
                    ))
                })?;
            let (Ok(writes), Ok(reads)) = (u64::try_from(writes), u64::try_from(reads)) else {
                return Err(self.bad(format!(
                    "corrupt file record: {writes} writes, {reads} reads"
                )));
            };
            let file = *self.ids.get(&id).ok_or_else(|| {
                self.bad(format!(
                    "file record {id} has no name in the log's name records"
                ))
            })?;
            self.current = Some(FileRec {
                rank,
                file,
                writes,
                reads,
            });
        }
    }
}

/// The job record's number of processes (its 4th i64 before 3.41, its 6th
/// from 3.41: start and end nanoseconds came in between).
fn read_nprocs(
    path: &Path,
    file: &File,
    comp: u8,
    layout: &Layout,
    name_map_off: u64,
    file_len: u64,
    endian: Endian,
) -> Result<u32, TraceError> {
    let hdr_err = |r: String| err(path, At::File, r);
    let job_off = layout.header_len as u64;
    let job_end = if name_map_off > 0 {
        name_map_off
    } else {
        file_len
    };
    let mut job = region_reader(
        path,
        file,
        comp,
        job_off,
        job_end.saturating_sub(job_off),
        "job record",
    )?;
    let mut jb = [0u8; 48];
    let got =
        read_full(&mut job, &mut jb).map_err(|e| hdr_err(format!("corrupt job record: {e}")))?;
    if got < layout.nprocs_at + 8 {
        return Err(hdr_err("truncated job record".into()));
    }
    let nprocs = endian.i64(&jb[layout.nprocs_at..]);
    u32::try_from(nprocs)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| hdr_err(format!("corrupt job record: {nprocs} processes")))
}

fn read_names(
    path: &Path,
    file: &File,
    comp: u8,
    (off, len): (u64, u64),
    endian: Endian,
) -> Result<(Vec<String>, HashMap<u64, FileId>), TraceError> {
    let mut names = Vec::new();
    let mut ids = HashMap::new();
    if len == 0 {
        return Ok((names, ids));
    }
    let region = region_reader(path, file, comp, off, len, "name records")?;
    let mut buf = Vec::new();
    region
        .take(MAX_NAMES_LEN)
        .read_to_end(&mut buf)
        .map_err(|e| {
            err(
                path,
                At::File,
                format!("corrupt name records (cannot decompress: {e})"),
            )
        })?;
    let mut rest = &buf[..];
    let mut n = 0u64;
    while !rest.is_empty() {
        n += 1;
        let bad = |r: &str| err(path, At::File, format!("name record {n}: {r}"));
        if rest.len() < 9 {
            return Err(bad("truncated"));
        }
        let id = endian.u64(rest);
        let end = rest[8..]
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| bad("the name has no terminating NUL (truncated)"))?;
        let name = String::from_utf8_lossy(&rest[8..8 + end]).into_owned();
        rest = &rest[8 + end + 1..];
        if let std::collections::hash_map::Entry::Vacant(v) = ids.entry(id) {
            let fid = FileId::try_from(names.len()).map_err(|_| bad("more than 2^32 names"))?;
            v.insert(fid);
            names.push(name);
        }
    }
    Ok((names, ids))
}
