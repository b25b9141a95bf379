//! fio's verify options beyond on/off (issue 27): `verify=NAME`,
//! `verify_pattern`, `verify_interval`, `verify_backlog`, `verify_dump`,
//! `do_verify`; and, as the one place the option table calls, the
//! resolution of the other issue-27 extras (offsets, `fill_device`, error
//! policy, priorities, NUMA placement, dedupe) into [`PhaseParams`].
//!
//! storlab checks every `verify=` variant fio has (crc32c, md5, sha*,
//! xxhash, meta, pattern, ...) with one checksum and header per unit
//! (`data.rs`): what fio's variants detect (a flipped bit, a misplaced or
//! stale block) its header and checksum detect too; the name is recorded.

use crate::data;
use crate::options::{PhaseSpec, SpecError};
use storlab_types::fioverify::VerifyOptions;
use storlab_types::{BsWeight, EngineKind, PhaseParams};

/// fio's verify names (`verify.c`, `str_verify_cb`'s table).
const METHODS: &[&str] = &[
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
    "null",
    "0",
    "1",
];

/// Whether `name` is one of fio's verify methods.
pub fn known_method(name: &str) -> bool {
    METHODS.contains(&name)
}

/// fio's `verify_pattern` value as bytes: `0xHEX` (the bytes in the order
/// written) or a quoted string. Several parts joined as fio does are not
/// supported: one part.
pub fn parse_pattern(v: &str) -> Result<Vec<u8>, String> {
    let t = v.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() % 2 != 0 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "verify_pattern {v}: give an even number of hex digits after 0x, e.g. 0xaa555aa5"
            ));
        }
        return Ok((0..hex.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
            .collect());
    }
    if let Some(s) = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
    {
        if s.is_empty() {
            return Err("verify_pattern \"\": the pattern is empty".into());
        }
        return Ok(s.as_bytes().to_vec());
    }
    Err(format!(
        "verify_pattern {v}: write it as 0xHEX (e.g. 0xaa555aa5) or a quoted string (\"abc\")"
    ))
}

/// Fill each `unit` of `buf` after its header with `pattern`, repeated
/// from the unit's start (so every unit reads the same), as fio's
/// `fill_verify_pattern` fills a block after its header.
pub fn fill_pattern(buf: &mut [u8], pattern: &[u8], unit: usize) {
    if pattern.is_empty() {
        return;
    }
    for u in buf.chunks_mut(unit.max(1)) {
        for (i, b) in u.iter_mut().enumerate().skip(data::HEADER) {
            *b = pattern[i % pattern.len()];
        }
    }
}

/// Check the units of `buf` read at `offset`: storlab's header and checksum
/// ([`data::verify`]) and, with a pattern, that every byte after each
/// header is the pattern (fio's `verify_pattern` check).
pub fn check(
    buf: &[u8],
    unit: usize,
    seed: u64,
    file: u32,
    offset: u64,
    pattern: &[u8],
) -> (u64, Option<(u64, String)>) {
    let (checked, bad) = data::verify(buf, unit, seed, file, offset);
    if bad.is_some() || pattern.is_empty() {
        return (checked, bad);
    }
    for (i, u) in buf.chunks(unit.max(1)).enumerate() {
        if let Some(at) = (data::HEADER..u.len()).find(|&k| u[k] != pattern[k % pattern.len()]) {
            let off = offset + (i * unit) as u64;
            return (
                checked,
                Some((
                    off,
                    format!(
                        "byte {at} of the unit is {:#04x}, the pattern has {:#04x} (verify_pattern)",
                        u[at],
                        pattern[at % pattern.len()]
                    ),
                )),
            );
        }
    }
    (checked, None)
}

/// The unit every phase of a job is written and checked in: the phases'
/// `verify_interval` where given (all must agree), else storlab's unit for
/// the smallest block size.
pub fn unit_for(phases: &[PhaseParams], min_bs: u64) -> Result<usize, String> {
    let mut given = phases
        .iter()
        .filter(|p| p.verify_opts.interval > 0)
        .map(|p| (p.name.as_str(), p.verify_opts.interval));
    let Some((name, interval)) = given.next() else {
        return Ok(data::unit_size(min_bs));
    };
    if let Some((other, i2)) = given.find(|&(_, i)| i != interval) {
        return Err(format!(
            "phases {name} and {other} give different verify_interval ({interval} and {i2}): the \
             phases of one run write and check the same units, give one verify_interval"
        ));
    }
    Ok(interval as usize)
}

/// Where a dump of the unit at `offset` of `data_file` goes: the current
/// directory (never the target's: a run directory is removed after the
/// run, and a device's directory is /dev), `NAME.OFFSET.received`.
pub fn dump_path(data_file: &std::path::Path, offset: u64) -> std::path::PathBuf {
    let name = data_file
        .file_name()
        .map_or_else(|| "data".into(), |n| n.to_string_lossy().into_owned());
    std::path::PathBuf::from(format!("{name}.{offset}.received"))
}

/// fio's `verify_dump`: keep the bad unit at `bad` (a byte offset of the
/// file) of `buf` (read at `offset`) as it was read ([`dump_path`]), so
/// the corruption can be looked at after the run. The dump is a new file:
/// a file of that name already there (the user's, or an earlier run's
/// dump) is never written over, and that dump is skipped. A failed dump is
/// ignored: the mismatch is reported either way.
pub fn dump(data_file: &std::path::Path, bad: u64, buf: &[u8], offset: u64, unit: usize) {
    dump_in(std::path::Path::new("."), data_file, bad, buf, offset, unit);
}

/// [`dump`] into `dir` (the current directory for a run).
fn dump_in(
    dir: &std::path::Path,
    data_file: &std::path::Path,
    bad: u64,
    buf: &[u8],
    offset: u64,
    unit: usize,
) {
    use std::io::Write;
    let from = bad.saturating_sub(offset) as usize;
    if let Some(u) = buf.get(from..(from + unit).min(buf.len())) {
        let new = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(dump_path(data_file, bad)));
        if let Ok(mut f) = new {
            let _ = f.write_all(u);
        }
    }
}

/// fio's `verify_backlog=N`: after every N completed writes, the job reads
/// those blocks back (synchronously, on its own thread, inside the
/// window: fio's writes wait for them too) and checks them. The reads
/// are not counted as the phase's reads.
pub(crate) struct Backlog {
    every: usize,
    written: Vec<(u64, u32)>,
    buf: crate::sys::AlignedBuf,
}

impl std::fmt::Debug for Backlog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backlog")
            .field("every", &self.every)
            .field("written", &self.written.len())
            .finish()
    }
}

/// What a backlog check found: units checked, and the bad ones.
pub(crate) type Checked = (u64, Vec<(u64, String)>);

impl Backlog {
    /// The backlog of a writing phase with `verify_backlog` (None without).
    pub(crate) fn of(p: &PhaseParams) -> Option<Backlog> {
        let n = p.verify_opts.backlog;
        if !p.verify || n == 0 || !p.rw.writes() || p.verify_opts.no_check {
            return None;
        }
        let buf = crate::sys::AlignedBuf::new(p.max_bs().max(4096) as usize, 4096).ok()?;
        Some(Backlog {
            every: n.min(1 << 20) as usize,
            written: Vec::new(),
            buf,
        })
    }

    /// Note a completed write of `len` bytes at `offset`; every `every`
    /// writes, read them back from `fd` and check them (`unit`, `seed`,
    /// `file`, `pattern` as [`check`]).
    pub(crate) fn wrote(
        &mut self,
        offset: u64,
        len: u32,
        fd: i32,
        (unit, seed, file, pattern): (usize, u64, u32, &[u8]),
    ) -> Option<Checked> {
        self.written.push((offset, len));
        if self.written.len() < self.every {
            return None;
        }
        let mut out: Checked = (0, Vec::new());
        for (off, len) in self.written.drain(..) {
            let b = &mut self.buf.as_mut_slice()[..len as usize];
            match crate::sys::pread(fd, b, off) {
                Ok(n) if n == len as usize => {
                    let (c, bad) = check(b, unit, seed, file, off, pattern);
                    out.0 += c;
                    out.1.extend(bad);
                }
                Ok(n) => out
                    .1
                    .push((off, format!("verify_backlog: read back {n} of {len} bytes"))),
                Err(e) => out
                    .1
                    .push((off, format!("verify_backlog: read back failed: {e}"))),
            }
        }
        Some(out)
    }
}

/// What a verify pass over one job's region found: units checked, bad
/// units counted (the first few listed with the reason).
#[derive(Debug, Default)]
pub(crate) struct PassOut {
    pub checked: u64,
    pub bad_count: u64,
    pub bad: Vec<(u64, String)>,
}

impl PassOut {
    fn note(&mut self, offset: u64, why: String) {
        self.bad_count += 1;
        if self.bad.len() < crate::worker::MAX_REPORTED_MISMATCHES {
            self.bad.push((offset, why));
        }
    }
}

/// Where a verify pass reads: the job's file, its index among the run's
/// files (written into every unit's header), and the bytes `from..to`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PassRegion<'a> {
    pub path: &'a std::path::Path,
    pub file_id: u32,
    pub from: u64,
    pub to: u64,
}

/// fio's `do_verify` for one job, run on the job's thread after its
/// writes end (the other jobs of the phase keep running): the file is
/// synced and its cached pages dropped (as fio's do_verify does, so the
/// reads come from the storage), then every unit of the region is read
/// back and checked ([`check`] with `p`'s seed and pattern). With
/// `verify_fatal` the pass ends at its first mismatch; `verify_dump`
/// keeps each bad unit ([`dump`]). `stop` (Ctrl-C) ends it early.
pub(crate) fn verify_pass(
    r: PassRegion<'_>,
    unit: usize,
    p: &PhaseParams,
    direct: bool,
    stop: &std::sync::atomic::AtomicBool,
) -> PassOut {
    use std::os::fd::AsRawFd;
    let mut out = PassOut::default();
    let unit = unit.max(1);
    let flags = crate::sys::OpenFlags {
        write: false,
        create_new: false,
        direct,
    };
    let file = match crate::sys::open(r.path, flags) {
        Ok(f) => f,
        Err(e) => {
            out.note(r.from, format!("cannot open for the verify pass: {e}"));
            return out;
        }
    };
    let fd = file.as_raw_fd();
    if !direct {
        // Written back first: dirty pages cannot be dropped.
        let _ = crate::sys::fsync(fd);
        let _ = crate::sys::fadvise_dontneed(fd);
    }
    // Whole units per read, 4 KiB-aligned for O_DIRECT.
    let mut chunk = unit * ((1 << 20) / unit).max(1);
    if chunk % 4096 != 0 {
        chunk = unit * 4096;
    }
    let mut buf = match crate::sys::AlignedBuf::new(chunk, 4096) {
        Ok(b) => b,
        Err(e) => {
            out.note(r.from, format!("cannot allocate a verify buffer: {e}"));
            return out;
        }
    };
    let pattern = &p.verify_opts.pattern;
    let mut off = r.from;
    while off < r.to && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let n = ((r.to - off) as usize).min(chunk);
        let b = &mut buf.as_mut_slice()[..n];
        let got = match crate::sys::pread(fd, b, off) {
            Ok(0) => {
                out.note(
                    off,
                    format!("the file ends at {off} bytes, {} expected", r.to),
                );
                break;
            }
            Ok(g) => g,
            Err(e) => {
                out.note(off, format!("read error during the verify pass: {e}"));
                break;
            }
        };
        for (i, u) in b[..got].chunks(unit).enumerate() {
            let uoff = off + (i * unit) as u64;
            let (c, bad) = check(u, unit, p.seed, r.file_id, uoff, pattern);
            out.checked += c;
            if let Some((at, why)) = bad {
                if p.verify_opts.dump {
                    dump(r.path, at, u, uoff, unit);
                }
                out.note(at, why);
                if p.verify_opts.fatal {
                    return out;
                }
            }
        }
        off += got as u64;
    }
    out
}

/// Resolve the issue-27 extras of spec `s` onto `p` (the rest of the
/// phase's parameters): checked, every value and combination.
pub fn resolve_extras(
    s: &PhaseSpec,
    bs: &[BsWeight],
    engine: EngineKind,
    verify: bool,
    mut p: PhaseParams,
) -> Result<PhaseParams, SpecError> {
    p.offset_bytes = s.offset.map_or(0, |b| b.0);
    p.offset_increment_bytes = s.offset_increment.map_or(0, |b| b.0);
    p.fill_device = s.fill_device.is_some_and(|f| f.0);
    p.verify_opts = resolve_verify(s, bs, verify)?;
    p.error_policy = crate::errors::resolve(s)?;
    p.prio = crate::prio::resolve(s, engine)?;
    p.placement = crate::placement::resolve(s)?;
    p.dedupe = crate::dedupe::resolve(s, verify)?;
    Ok(p)
}

fn resolve_verify(
    s: &PhaseSpec,
    bs: &[BsWeight],
    verify: bool,
) -> Result<VerifyOptions, SpecError> {
    let method = s.verify_method.clone().unwrap_or_default();
    if !method.is_empty() && !known_method(&method) {
        return Err(SpecError(format!(
            "verify_method {method}: not one of fio's verify methods (crc32c, md5, sha256, xxhash, \
             meta, pattern, ...)"
        )));
    }
    let pattern = match s.verify_pattern.as_deref().filter(|v| !v.trim().is_empty()) {
        Some(v) => parse_pattern(v).map_err(SpecError)?,
        None => Vec::new(),
    };
    let interval = s.verify_interval.map_or(0, |b| b.0);
    if interval > 0 {
        if interval < 64 || interval % 8 != 0 {
            return Err(SpecError(format!(
                "verify_interval {interval}: at least 64 bytes and a multiple of 8 (a unit holds a \
                 32-byte header)"
            )));
        }
        if let Some(b) = bs.iter().find(|b| b.bs_bytes % interval != 0) {
            return Err(SpecError(format!(
                "verify_interval {interval} does not divide the block size {}: give a divisor",
                b.bs_bytes
            )));
        }
    }
    let v = VerifyOptions {
        method,
        backlog: s.verify_backlog.unwrap_or(0),
        dump: s.verify_dump.is_some_and(|f| f.0),
        pattern,
        interval,
        no_check: s.do_verify.is_some_and(|f| !f.0),
        fatal: s.verify_fatal.is_some_and(|f| f.0),
        async_threads: s.verify_async.unwrap_or(0),
    };
    if !verify && (v.backlog > 0 || v.dump || !v.pattern.is_empty() || v.interval > 0 || v.fatal) {
        return Err(SpecError(
            "verify_backlog, verify_dump, verify_pattern, verify_interval and verify_fatal need \
             verify: add --verify (fio's verify=crc32c or another method)"
                .into(),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {

    /// A dump never writes over a file that is already there (the user's,
    /// or an earlier run's dump): the first dump is made, a second of the
    /// same name leaves the first as it was.
    #[test]
    fn a_dump_never_writes_over_an_existing_file() {
        let d = tempfile::tempdir().unwrap();
        let data = std::path::Path::new("/x/data.0");
        let name = d.path().join(dump_path(data, 4096));
        std::fs::write(&name, b"the user's").unwrap();
        dump_in(d.path(), data, 4096, &[7u8; 8192], 4096, 4096);
        assert_eq!(std::fs::read(&name).unwrap(), b"the user's");
        dump_in(d.path(), data, 0, &[7u8; 8192], 0, 4096);
        let made = d.path().join(dump_path(data, 0));
        assert_eq!(std::fs::read(&made).unwrap(), vec![7u8; 4096]);
    }

    use super::*;

    #[test]
    fn patterns_parse_as_fio_writes_them() {
        assert_eq!(
            parse_pattern("0xaa555aa5").unwrap(),
            vec![0xaa, 0x55, 0x5a, 0xa5]
        );
        assert_eq!(parse_pattern("\"ab\"").unwrap(), b"ab".to_vec());
        assert!(parse_pattern("0xabc").is_err());
        assert!(parse_pattern("12").unwrap_err().contains("0xHEX"));
    }

    #[test]
    fn a_pattern_unit_checks_and_a_changed_byte_is_found() {
        let unit = 512;
        let pat = [0xaa, 0x55, 0x5a, 0xa5];
        let mut buf = vec![0u8; 2 * unit];
        let mut g = data::DataGen::new(storlab_types::BufferPattern::Random, unit, 7, true, 1);
        g.set_pattern(pat.to_vec());
        g.fill(&mut buf, 0, 4096, true);
        // After each header: the pattern from the unit's byte 32 on.
        assert_eq!(&buf[32..36], &pat);
        assert_eq!(&buf[unit + 32..unit + 36], &pat);
        assert_eq!(check(&buf, unit, 7, 0, 4096, &pat), (2, None));
        // Another pattern with a valid checksum is still a mismatch.
        let other = [1u8, 2, 3, 4];
        let (_, bad) = check(&buf, unit, 7, 0, 4096, &other);
        assert!(bad.unwrap().1.contains("verify_pattern"));
        // A flipped byte fails the checksum.
        buf[unit + 100] ^= 1;
        let (_, bad) = check(&buf, unit, 7, 0, 4096, &pat);
        assert_eq!(bad.unwrap().0, 4096 + unit as u64);
    }

    /// A file of four valid 4 KiB units with units 1 and 3 changed: the
    /// pass finds both (by offset); with verify_fatal it ends at unit 1;
    /// a region past the file's end is a mismatch, never a silent pass.
    #[test]
    fn the_verify_pass_finds_changed_units_and_stops_at_the_first_with_verify_fatal() {
        let unit = 4096;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f");
        let mut buf = vec![0u8; 4 * unit];
        let mut g = data::DataGen::new(storlab_types::BufferPattern::Random, unit, 7, true, 1);
        g.fill(&mut buf, 0, 0, true);
        buf[unit + 100] ^= 1;
        buf[3 * unit + 7] ^= 0x80;
        std::fs::write(&path, &buf).unwrap();
        let mut p = PhaseParams {
            seed: 7,
            verify: true,
            ..Default::default()
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let region = PassRegion {
            path: &path,
            file_id: 0,
            from: 0,
            to: 4 * unit as u64,
        };
        let got = verify_pass(region, unit, &p, false, &stop);
        assert_eq!(got.bad_count, 2, "{got:?}");
        let at: Vec<u64> = got.bad.iter().map(|b| b.0).collect();
        assert_eq!(at, vec![unit as u64, 3 * unit as u64]);
        assert!(got.checked >= 2, "{got:?}");
        p.verify_opts.fatal = true;
        let got = verify_pass(region, unit, &p, false, &stop);
        assert_eq!(got.bad_count, 1, "{got:?}");
        assert_eq!(got.bad[0].0, unit as u64);
        // Another file id or seed is another run's data: every unit fails.
        p.verify_opts.fatal = false;
        let other = PassRegion {
            file_id: 1,
            ..region
        };
        assert_eq!(verify_pass(other, unit, &p, false, &stop).bad_count, 4);
        let past = PassRegion {
            to: 6 * unit as u64,
            ..region
        };
        let got = verify_pass(past, unit, &p, false, &stop);
        assert!(got.bad.iter().any(|b| b.1.contains("ends at")), "{got:?}");
    }

    #[test]
    fn verify_interval_must_agree_and_divide() {
        let mut a = PhaseParams {
            name: "a".into(),
            ..Default::default()
        };
        a.verify_opts.interval = 512;
        let mut b = a.clone();
        b.name = "b".into();
        assert_eq!(unit_for(&[a.clone(), b.clone()], 65536), Ok(512));
        b.verify_opts.interval = 1024;
        assert!(
            unit_for(&[a, b], 65536)
                .unwrap_err()
                .contains("one verify_interval")
        );
        assert_eq!(unit_for(&[], 65536), Ok(4096));
    }
}
