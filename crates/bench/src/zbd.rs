//! fio's `zonemode=zbd` emulated on an ordinary file or a non-zoned device
//! (issue 27), as fio emulates it (`zbd.c`, `init_zone_info` for a regular
//! file): zones of `zonesize` bytes from the start of the file, each with a
//! write pointer kept in memory, **every zone empty at the start** (fio
//! does not look at what the file holds). One [`Registry`] per run keeps
//! each file's zones across phases and jobs (fio's `zbd_info` is per file,
//! shared by the jobs that open it); each job places its I/O through a
//! [`ZbdJob`], which follows fio's `zbd_adjust_block`:
//!
//! * a write goes to the write pointer of a zone: the zone of the offset
//!   the job's pattern drew, or, when `max_open_zones` zones are already
//!   being written, one of those (picked by the drawn offset, as fio's
//!   `pick_random_zone_idx`); a zone that is full (or has less than a block
//!   left) is reset before it is written again, and leaves the open set when
//!   it fills;
//! * with `zone_reset_threshold`/`zone_reset_frequency`, once the bytes
//!   below the write pointers reach the threshold share of the region, the
//!   zone of every 1/frequency-th write is reset first;
//! * a read (`read_beyond_wp=0`) reads only below a write pointer: a zone
//!   without data sends it to the nearest zone with data (the next one for
//!   sequential reads); nothing written anywhere ends the job, as fio;
//! * a trim (`bs` = the zone size) resets the zone (storlab also punches
//!   the range, as its trims do); a random trim of an empty zone goes to the
//!   nearest zone with data, and none ends the job.
//!
//! Simplifications, named: the write pointer moves when an I/O is issued
//! (fio moves it when it is queued: the same for every engine's order);
//! a zone with less than a block left is reset when next chosen (fio
//! "finishes" it first, then resets it the next time: the same offsets).

use crate::engine::Dir;
use crate::options::{PhaseSpec, SpecError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use storlab_types::{BsWeight, RwMode, ZbdParams};

/// fio's `ZBD_MAX_WRITE_ZONES`: the largest `max_open_zones`.
pub const MAX_WRITE_ZONES: u32 = 4096;

fn err<T>(m: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(m.into()))
}

fn fraction(v: Option<&str>, key: &str) -> Result<f64, SpecError> {
    let Some(t) = v else { return Ok(0.0) };
    match t.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => err(format!(
            "{key} '{t}' must be a fraction from 0 to 1 (fio's range)"
        )),
    }
}

/// The zbd parameters of a phase, checked as fio checks them
/// (`init_zone_info`, `zbd_verify_bs`, `zbd_setup_files`). `bs` are the
/// phase's block sizes, `size` each job's region.
pub fn resolve(
    s: &PhaseSpec,
    rw: RwMode,
    bs: &[BsWeight],
    size: u64,
) -> Result<ZbdParams, SpecError> {
    let zone_size = s.zonesize.map_or(0, |b| b.0);
    if zone_size == 0 {
        return err(
            "zonemode zbd needs --zonesize (fio: the zone size is mandatory for a file or a \
             non-zoned device), e.g. zonesize=256m",
        );
    }
    if zone_size < 512 {
        return err("zonemode zbd: the zone size must be at least 512 bytes (as in fio)");
    }
    let zone_capacity = match s.zonecapacity.map_or(0, |b| b.0) {
        0 => zone_size,
        c if c > zone_size => {
            return err(format!(
                "zonecapacity {c} is larger than the zone size {zone_size} (fio refuses it too)"
            ));
        }
        c => c,
    };
    if s.zonerange.is_some_and(|b| b.0 != 0) || s.zoneskip.is_some_and(|b| b.0 != 0) {
        return err(
            "zonemode zbd with zonerange or zoneskip is not supported: drop them (zbd zones are \
             the zone size)",
        );
    }
    if s.verify.is_some_and(|f| f.0) {
        return err(
            "zonemode zbd with verify is not supported (a zone reset discards what verify would \
             check): drop verify, or verify without zonemode zbd",
        );
    }
    if rw == RwMode::ReadModifyWrite {
        return err(
            "zonemode zbd with rmw is not supported (a zone is written only at its write pointer)",
        );
    }
    if s.stride.is_some_and(|b| b.0 != 0) {
        return err("zonemode zbd with an interleaved --stride is not supported: drop the stride");
    }
    let max_bs = bs.iter().map(|b| b.bs_bytes).max().unwrap_or(0);
    let write_bs = s.bs_write.map_or(max_bs, |b| b.0.max(max_bs));
    if rw.trims() {
        if bs.len() != 1 || bs[0].bs_bytes != zone_size {
            return err(format!(
                "zonemode zbd: a trim resets one zone, so its block size must be the zone size \
                 ({zone_size} bytes), one size (fio refuses another: trim block size is not the \
                 zone size)"
            ));
        }
    } else if rw.writes() && write_bs > zone_capacity {
        return err(format!(
            "zonemode zbd: a write of {write_bs} bytes does not fit in a zone of {zone_capacity} \
             writable bytes (fio fails it: I/O buflen exceeds zone size): use a smaller bs or a \
             larger zonesize"
        ));
    }
    if size < zone_size {
        return err(format!(
            "zonemode zbd: each job's region ({size} bytes, --size) is smaller than one zone \
             ({zone_size} bytes): fio refuses it too (io_size must be at least one zone); give a \
             --size of at least one zone or a smaller zonesize"
        ));
    }
    let max_open_zones = s.max_open_zones.unwrap_or(0);
    let job_max_open_zones = s.job_max_open_zones.unwrap_or(0);
    for (k, v) in [
        ("max_open_zones", max_open_zones),
        ("job_max_open_zones", job_max_open_zones),
    ] {
        if v > MAX_WRITE_ZONES {
            return err(format!(
                "{k} {v} is larger than fio's limit of {MAX_WRITE_ZONES}"
            ));
        }
    }
    if job_max_open_zones > 0 && max_open_zones == 0 && rw.writes() && !rw.trims() {
        return err(
            "job_max_open_zones needs max_open_zones (fio: it cannot be used without a global \
             open zones limit)",
        );
    }
    Ok(ZbdParams {
        zone_size,
        zone_capacity,
        max_open_zones,
        job_max_open_zones,
        reset_threshold: fraction(s.zone_reset_threshold.as_deref(), "zone_reset_threshold")?,
        reset_frequency: fraction(s.zone_reset_frequency.as_deref(), "zone_reset_frequency")?,
        read_beyond_wp: s.read_beyond_wp.is_some_and(|f| f.0),
        zone_resets: 0,
    })
}

/// The zones of one file: write pointers (bytes written in each zone;
/// absent = empty), the zones being written, the resets.
#[derive(Debug, Default)]
pub struct FileZones {
    zone_size: u64,
    capacity: u64,
    /// Bytes below the write pointer of each zone written since the start.
    wp: HashMap<u64, u64>,
    /// Zones being written (fio's `write_zones`), with the job that opened
    /// each; tracked only under a `max_open_zones` limit.
    open: Vec<(u64, u32)>,
    /// fio's `wp_valid_data_bytes`: bytes below every write pointer.
    valid: u64,
    /// fio's `write_cnt`: writes left before the next threshold reset.
    write_cnt: u32,
    /// Zone resets (fio's `nr_zone_resets`).
    resets: u64,
}

impl FileZones {
    fn used(&self, z: u64) -> u64 {
        self.wp.get(&z).copied().unwrap_or(0)
    }

    fn remainder(&self, z: u64) -> u64 {
        self.capacity.saturating_sub(self.used(z))
    }

    fn close(&mut self, z: u64) {
        self.open.retain(|&(o, _)| o != z);
    }

    /// fio's `__zbd_reset_zone` (and `zbd_write_zone_put` for a trim):
    /// counted only when the zone held data.
    fn reset(&mut self, z: u64) {
        if let Some(d) = self.wp.remove(&z) {
            self.valid = self.valid.saturating_sub(d);
            if d > 0 {
                self.resets += 1;
            }
        }
    }
}

/// The zones of every file of a run (file index → zones), kept across
/// phases as fio keeps a file's zone information across its jobs.
#[derive(Debug, Default)]
pub struct Registry {
    files: Mutex<HashMap<u32, Arc<Mutex<FileZones>>>>,
}

impl Registry {
    /// File `file`'s zones, created empty the first time (or again when a
    /// phase asks for other zones).
    fn file(&self, file: u32, p: &ZbdParams) -> Arc<Mutex<FileZones>> {
        let mut g = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let z = g.entry(file).or_default().clone();
        {
            let mut f = z.lock().unwrap_or_else(|e| e.into_inner());
            if f.zone_size != p.zone_size || f.capacity != p.zone_capacity {
                *f = FileZones {
                    zone_size: p.zone_size,
                    capacity: p.zone_capacity,
                    ..FileZones::default()
                };
            }
        }
        z
    }

    /// Zone resets so far over every file.
    pub fn resets(&self) -> u64 {
        let g = self.files.lock().unwrap_or_else(|e| e.into_inner());
        g.values()
            .map(|f| f.lock().unwrap_or_else(|e| e.into_inner()).resets)
            .sum()
    }
}

/// Where one I/O goes once placed in a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    pub dir: Dir,
    pub len: u64,
    pub offset: u64,
    pub wrapped: bool,
}

/// One job's view of its file's zones: the zones inside its region
/// `[first, end)` (fio's `min_zone`..`max_zone`: the region rounded in to
/// whole zones).
#[derive(Debug)]
pub(crate) struct ZbdJob {
    p: ZbdParams,
    zones: Arc<Mutex<FileZones>>,
    job: u32,
    first: u64,
    end: u64,
    /// The region's bytes (fio's `io_size`, for the threshold).
    region: u64,
    random: bool,
    trims: bool,
    /// A mixed pattern: reads wait for a first write (fio's
    /// `zbd_adjust_ddir`).
    mixed_reads: bool,
    wrote: bool,
    min_bs: u64,
    /// Sequential reads: the next offset (fio's `last_pos`).
    cursor: u64,
}

impl ZbdJob {
    /// The job over the physical region `[base, base + size)` of file
    /// `file`; an error when no whole zone lies in it.
    pub(crate) fn new(
        reg: &Registry,
        p: &ZbdParams,
        rw: RwMode,
        min_bs: u64,
        (job, file): (u32, u32),
        (base, size): (u64, u64),
    ) -> Result<ZbdJob, String> {
        let zs = p.zone_size;
        let reads_only = !rw.writes();
        let first = if reads_only {
            base / zs
        } else {
            base.div_ceil(zs)
        };
        let end = (base + size) / zs;
        if end <= first {
            return Err(format!(
                "zonemode zbd: the region {base}..{} holds no whole zone of {zs} bytes (fio: \
                 io_size must be at least one zone): align offset to the zone size",
                base + size
            ));
        }
        let zones = reg.file(file, p);
        zones.lock().unwrap_or_else(|e| e.into_inner()).write_cnt = write_cnt(p.reset_frequency);
        Ok(ZbdJob {
            p: p.clone(),
            zones,
            job,
            first,
            end,
            region: (end - first) * zs,
            random: rw.is_random(),
            trims: rw.trims(),
            mixed_reads: rw.reads() && rw.writes(),
            wrote: false,
            min_bs: min_bs.max(1),
            cursor: first * zs,
        })
    }

    fn zone_of(&self, off: u64) -> u64 {
        (off / self.p.zone_size).clamp(self.first, self.end - 1)
    }

    /// Place an I/O the pattern drew (`dir`, `len` at physical `hint`,
    /// `wrapped` when it starts a pass); None ends the job (fio's
    /// `io_u_eof`: nothing to read or trim, or no zone to write).
    pub(crate) fn place(&mut self, dir: Dir, len: u64, hint: u64, wrapped: bool) -> Option<Placed> {
        let zones = Arc::clone(&self.zones);
        let mut f = zones.lock().unwrap_or_else(|e| e.into_inner());
        if self.trims {
            return self.trim(&mut f, hint, wrapped);
        }
        let dir = if dir == Dir::Read && self.mixed_reads && !self.wrote && !self.p.read_beyond_wp {
            Dir::Write
        } else {
            dir
        };
        match dir {
            Dir::Write => self.write(&mut f, len, hint, wrapped),
            Dir::Read if self.p.read_beyond_wp => Some(Placed {
                dir,
                len,
                offset: hint,
                wrapped,
            }),
            Dir::Read => self.read(&f, len, hint, wrapped),
        }
    }

    /// The zone a write goes to (fio's `zbd_convert_to_write_zone`).
    fn write_zone(&self, f: &mut FileZones, hint: u64) -> Option<u64> {
        let zb = self.zone_of(hint);
        let limited = f_limit(&self.p) > 0;
        if !limited {
            return Some(zb);
        }
        let mine = |f: &FileZones| f.open.iter().filter(|o| o.1 == self.job).count() as u32;
        let can_open = |f: &FileZones| {
            (f.open.len() as u32) < self.p.max_open_zones.max(1)
                && (self.p.job_max_open_zones == 0 || mine(f) < self.p.job_max_open_zones)
        };
        if f.open.iter().any(|o| o.0 == zb) {
            if f.remainder(zb) >= self.min_bs {
                return Some(zb);
            }
            f.close(zb);
        }
        if can_open(f) {
            f.open.push((zb, self.job));
            return Some(zb);
        }
        // Every open slot is taken: one of the open zones of this job's
        // range, picked by the drawn offset (fio's pick_random_zone_idx).
        let n = f.open.len() as u64;
        let start = (hint.saturating_sub(self.first * self.p.zone_size)) * n / self.region.max(1);
        for i in 0..n {
            let z = f.open[((start + i) % n) as usize].0;
            if (self.first..self.end).contains(&z) {
                if f.remainder(z) >= self.min_bs {
                    return Some(z);
                }
                // Less than a block left: finish it, open the drawn zone.
                f.close(z);
                f.open.push((zb, self.job));
                return Some(zb);
            }
        }
        None
    }

    fn write(&mut self, f: &mut FileZones, len: u64, hint: u64, wrapped: bool) -> Option<Placed> {
        let z = self.write_zone(f, hint)?;
        // fio: past the threshold, every 1/frequency-th write resets its
        // zone first.
        let mut reset = false;
        if self.p.reset_frequency > 0.0
            && f.valid as f64 >= self.region as f64 * self.p.reset_threshold
        {
            f.write_cnt = f.write_cnt.saturating_sub(1);
            if f.write_cnt == 0 {
                f.write_cnt = write_cnt(self.p.reset_frequency);
                reset = true;
            }
        }
        if reset || f.remainder(z) < self.min_bs {
            f.reset(z);
        }
        let used = f.used(z);
        let len = len.min(f.capacity - used) / self.min_bs * self.min_bs;
        let offset = z * self.p.zone_size + used;
        f.wp.insert(z, used + len);
        f.valid += len;
        if used + len >= f.capacity {
            f.close(z);
        }
        self.wrote = true;
        Some(Placed {
            dir: Dir::Write,
            len,
            offset,
            wrapped,
        })
    }

    /// The nearest zone after `z` (and, for random I/O, before it) with at
    /// least `min` bytes below its write pointer (fio's `zbd_find_zone`).
    fn find(&self, f: &FileZones, z: u64, min: u64) -> Option<u64> {
        let mut d = 1;
        loop {
            let up = z + d;
            let down = z.checked_sub(d).filter(|&x| x >= self.first);
            if up >= self.end && (down.is_none() || !self.random) {
                return None;
            }
            if up < self.end && f.used(up) >= min {
                return Some(up);
            }
            if self.random
                && let Some(x) = down
                && f.used(x) >= min
            {
                return Some(x);
            }
            d += 1;
        }
    }

    fn read(&mut self, f: &FileZones, len: u64, hint: u64, wrapped: bool) -> Option<Placed> {
        let zs = self.p.zone_size;
        let mut wrapped = wrapped;
        let hint = if self.random { hint } else { self.cursor };
        let orig = self.zone_of(hint);
        let mut z = orig;
        let mut off = hint;
        let used = f.used(z);
        if used < self.min_bs || (!self.random && hint + self.min_bs > z * zs + used) {
            z = match self.find(f, z, self.min_bs) {
                Some(n) => n,
                None if self.random => return None,
                // Sequential: past the last written zone, a new pass from
                // the first zone with data.
                None => {
                    wrapped = true;
                    if f.used(self.first) >= self.min_bs {
                        self.first
                    } else {
                        self.find(f, self.first, self.min_bs)?
                    }
                }
            };
            off = z * zs;
        }
        let range = f.used(z);
        let start = z * zs;
        if range <= len {
            off = start;
        } else if self.random {
            off = start + (hint - orig * zs) % (range - len) / self.min_bs * self.min_bs;
        }
        let len = len.min(start + range - off) / self.min_bs * self.min_bs;
        self.cursor = off + len;
        Some(Placed {
            dir: Dir::Read,
            len,
            offset: off,
            wrapped,
        })
    }

    fn trim(&mut self, f: &mut FileZones, hint: u64, wrapped: bool) -> Option<Placed> {
        let mut z = self.zone_of(hint);
        if self.random && f.used(z) == 0 {
            z = self.find(f, z, 1)?;
        }
        f.reset(z);
        f.close(z);
        Some(Placed {
            dir: Dir::Write,
            len: self.p.zone_size,
            offset: z * self.p.zone_size,
            wrapped,
        })
    }
}

/// The job's zones for a worker of a zbd phase (None for other phases):
/// its region must be contiguous and its target no real zoned device.
pub(crate) fn for_job(
    reg: &Registry,
    plan: &crate::worker::WorkerPlan,
    p: &storlab_types::PhaseParams,
) -> Result<Option<ZbdJob>, String> {
    let Some(z) = &p.zbd else { return Ok(None) };
    if let Some(model) = zoned_model(&plan.path) {
        return Err(format!(
            "{} is a zoned block device ({model}): storlab emulates zonemode=zbd on ordinary \
             files and devices only; real zoned devices are not supported",
            plan.path.display()
        ));
    }
    let crate::offsets::RegionMap::Contiguous { base } = plan.region else {
        return Err("zonemode zbd needs each job's region in one piece (no stride)".into());
    };
    let min_bs =
        p.bs.iter()
            .map(|b| b.bs_bytes)
            .chain(p.bs_write_bytes)
            .min()
            .unwrap_or(512);
    ZbdJob::new(
        reg,
        z,
        p.rw,
        min_bs,
        (plan.job, plan.file_id),
        (base, plan.size),
    )
    .map(Some)
}

/// fio tracks open zones only under a limit.
fn f_limit(p: &ZbdParams) -> u32 {
    p.max_open_zones.max(p.job_max_open_zones)
}

/// fio's `_zbd_reset_write_cnt`: 1/frequency writes (truncated), or never.
fn write_cnt(freq: f64) -> u32 {
    if freq > 0.0 {
        (1.0 / freq).min(f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    }
}

/// Whether `dev` (a block device path) is a real zoned device
/// (`/sys/block/X/queue/zoned` other than `none`): storlab does not drive
/// those.
pub fn zoned_model(dev: &std::path::Path) -> Option<String> {
    let name = std::fs::canonicalize(dev).ok()?;
    let name = name.file_name()?.to_string_lossy().into_owned();
    let mut p = std::path::PathBuf::from(format!("/sys/class/block/{name}"));
    if p.join("partition").exists() {
        p = std::fs::canonicalize(&p).ok()?.parent()?.to_path_buf();
    }
    let m = std::fs::read_to_string(p.join("queue/zoned")).ok()?;
    let m = m.trim();
    (m != "none" && !m.is_empty()).then(|| m.to_string())
}

#[cfg(test)]
mod tests;
