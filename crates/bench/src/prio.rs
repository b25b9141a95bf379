//! fio's I/O priorities (issue 27): `prioclass`/`prio` (the job's
//! priority: `ioprio_set` on the job's thread, as fio's `backend.c`, and
//! in every command of libaio/io_uring), and `cmdprio_percentage`,
//! `cmdprio_class`, `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit` (a share
//! of the commands with another priority: io_uring's `sqe.ioprio`,
//! libaio's `aio_reqprio` with `IOCB_FLAG_IOPRIO`), drawn per I/O as fio's
//! `cmdprio.c` does: one draw 0..99 per I/O, compared with the cumulative
//! percentages of the rules for its direction and size.

use crate::offsets::Rng;
use crate::options::{PhaseSpec, SpecError};
use crate::stats::DirCounter;
use storlab_types::PrioLatency;
use storlab_types::fioverify::{CmdPrioRule, PrioOptions, ioprio_value};
use storlab_types::{EngineKind, parse_size};

fn err<T>(m: String) -> Result<T, SpecError> {
    Err(SpecError(m))
}

/// `R[,W]` as two values (one value for both), each parsed by `f`.
fn per_dir<T: Copy>(
    key: &str,
    v: Option<&str>,
    default: T,
    f: impl Fn(&str) -> Option<T>,
) -> Result<[T; 2], SpecError> {
    let Some(v) = v.filter(|v| !v.trim().is_empty()) else {
        return Ok([default; 2]);
    };
    let sides: Vec<&str> = v.split(',').map(str::trim).collect();
    let parse = |t: &str| {
        if t.is_empty() {
            Ok(default)
        } else {
            f(t).ok_or_else(|| SpecError(format!("{key}={v}: '{t}' is out of range")))
        }
    };
    match sides.as_slice() {
        [one] => {
            let x = parse(one)?;
            Ok([x, x])
        }
        [r, w] => Ok([parse(r)?, parse(w)?]),
        _ => err(format!("{key}={v}: give READ[,WRITE]")),
    }
}

fn class_of(t: &str) -> Option<u8> {
    t.parse().ok().filter(|c| (1..=3).contains(c))
}

fn level_of(t: &str) -> Option<u8> {
    t.parse().ok().filter(|l| *l <= 7)
}

fn hint_of(t: &str) -> Option<u16> {
    t.parse().ok().filter(|h| *h < 1024)
}

/// One direction of `cmdprio_bssplit`: `BS/PCT[/CLASS/LEVEL[/HINT]]:...`;
/// entries without their own class and level take `default`'s.
fn bssplit_side(side: &str, default: (u8, u8, u16)) -> Result<Vec<CmdPrioRule>, String> {
    let mut out = Vec::new();
    for part in side.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let f: Vec<&str> = part.split('/').map(str::trim).collect();
        if f.len() != 2 && f.len() != 4 && f.len() != 5 {
            return Err(format!(
                "cmdprio_bssplit entry '{part}': give BS/PCT or BS/PCT/CLASS/LEVEL[/HINT]"
            ));
        }
        let bs = parse_size(f[0]).map_err(|e| format!("cmdprio_bssplit entry '{part}': {e}"))?;
        let pct: u8 =
            f[1].parse().ok().filter(|p| *p <= 100).ok_or_else(|| {
                format!("cmdprio_bssplit entry '{part}': a percentage from 0 to 100")
            })?;
        let (mut class, mut level, mut hint) = default;
        if f.len() >= 4 {
            class = class_of(f[2])
                .ok_or_else(|| format!("cmdprio_bssplit entry '{part}': class 1, 2 or 3"))?;
            level = level_of(f[3])
                .ok_or_else(|| format!("cmdprio_bssplit entry '{part}': level 0 to 7"))?;
            hint = 0;
        }
        if f.len() == 5 {
            hint = hint_of(f[4])
                .ok_or_else(|| format!("cmdprio_bssplit entry '{part}': hint 0 to 1023"))?;
        }
        if pct > 0 {
            out.push(CmdPrioRule {
                bs,
                pct,
                ioprio: ioprio_value(class, level, hint),
            });
        }
    }
    // fio: each size's percentages add up to at most 100.
    let mut sizes: Vec<u64> = out.iter().map(|r| r.bs).collect();
    sizes.dedup();
    for bs in sizes {
        let sum: u32 = out
            .iter()
            .filter(|r| r.bs == bs)
            .map(|r| u32::from(r.pct))
            .sum();
        if sum > 100 {
            return Err(format!(
                "cmdprio_bssplit: the percentages of size {bs} add up to {sum}, more than 100"
            ));
        }
    }
    Ok(out)
}

/// Resolve the priority options, checked.
pub fn resolve(s: &PhaseSpec, engine: EngineKind) -> Result<PrioOptions, SpecError> {
    let job = match (s.prioclass, s.prio) {
        (None, None) => 0,
        (c, l) => {
            // fio's ioprio_value: no class is best-effort; its level defaults to 0.
            let class = c.unwrap_or(2);
            let level = l.unwrap_or(0);
            if !(1..=3).contains(&class) {
                return err(format!(
                    "prioclass {class}: 1 (realtime), 2 (best-effort) or 3 (idle)"
                ));
            }
            if level > 7 {
                return err(format!("prio {level}: a level from 0 (highest) to 7"));
            }
            ioprio_value(class as u8, level as u8, 0)
        }
    };
    let classes = per_dir("cmdprio_class", s.cmdprio_class.as_deref(), 1, class_of)?;
    let levels = per_dir("cmdprio", s.cmdprio.as_deref(), 0, level_of)?;
    let hints = per_dir("cmdprio_hint", s.cmdprio_hint.as_deref(), 0, hint_of)?;
    let pcts = per_dir(
        "cmdprio_percentage",
        s.cmdprio_percentage.as_deref(),
        0u8,
        |t| t.parse().ok().filter(|p: &u8| *p <= 100),
    )?;
    let split = s
        .cmdprio_bssplit
        .as_deref()
        .filter(|v| !v.trim().is_empty());
    if split.is_some() && pcts != [0, 0] {
        return err(
            "cmdprio_percentage and cmdprio_bssplit are exclusive (as in fio): give one".into(),
        );
    }
    let mut rules: [Vec<CmdPrioRule>; 2] = Default::default();
    if let Some(v) = split {
        let sides: Vec<&str> = v.split(',').collect();
        if sides.len() > 2 {
            return err(format!("cmdprio_bssplit={v}: give READS[,WRITES]"));
        }
        for d in 0..2 {
            // One split given: it applies to reads and writes, as in fio.
            let side = sides.get(d).copied().unwrap_or(sides[0]);
            rules[d] = bssplit_side(side, (classes[d], levels[d], hints[d])).map_err(SpecError)?;
        }
    } else {
        for d in 0..2 {
            if pcts[d] > 0 {
                rules[d] = vec![CmdPrioRule {
                    bs: 0,
                    pct: pcts[d],
                    ioprio: ioprio_value(classes[d], levels[d], hints[d]),
                }];
            }
        }
    }
    let [read, write] = rules;
    if (!read.is_empty() || !write.is_empty())
        && !matches!(engine, EngineKind::Libaio | EngineKind::IoUring)
    {
        return err(format!(
            "cmdprio_percentage and cmdprio_bssplit set a priority per command, which only the \
             libaio and io_uring engines carry (as in fio): use --engine libaio or io_uring, not {}",
            engine.as_str()
        ));
    }
    Ok(PrioOptions {
        job,
        read,
        write,
        log_prio: s.log_prio.is_some_and(|f| f.0),
    })
}

/// Picks each I/O's priority (fio's `fio_cmdprio_set_ioprio`) and keeps
/// the latency of each priority apart (fio's `clat_prio`).
#[derive(Debug)]
pub(crate) struct Picker {
    rng: Rng,
    /// The priority of the I/O each slot carries.
    slot_prio: Vec<u16>,
    pub(crate) lat: PrioLat,
}

/// Latency per (direction, priority) of one job, or merged.
#[derive(Debug, Default)]
pub(crate) struct PrioLat {
    /// (is_read, ioprio, counter).
    pub(crate) by: Vec<(bool, u16, DirCounter)>,
}

impl PrioLat {
    fn counter(&mut self, is_read: bool, prio: u16) -> &mut DirCounter {
        let i = match self
            .by
            .iter()
            .position(|(r, p, _)| *r == is_read && *p == prio)
        {
            Some(i) => i,
            None => {
                self.by.push((is_read, prio, DirCounter::default()));
                self.by.len() - 1
            }
        };
        &mut self.by[i].2
    }

    pub(crate) fn merge(&mut self, o: &PrioLat) {
        for (r, p, c) in &o.by {
            self.counter(*r, *p).merge(c);
        }
    }
}

/// The per-priority latencies of a phase's jobs, as the result keeps them;
/// empty when no job drew priorities.
pub(crate) fn by_prio<'a>(jobs: impl Iterator<Item = &'a PrioLat>) -> Vec<PrioLatency> {
    let mut all = PrioLat::default();
    for j in jobs {
        all.merge(j);
    }
    all.by.sort_by_key(|(r, p, _)| (!*r, *p));
    all.by
        .iter()
        .filter(|(_, _, c)| c.ops > 0)
        .map(|(r, p, c)| {
            let (class, level, _) = storlab_types::fioverify::ioprio_parts(*p);
            PrioLatency {
                dir: if *r { "read" } else { "write" }.into(),
                ioprio: *p,
                class,
                level,
                ios: c.ops,
                mean_ns: c.hist.mean(),
                percentiles: [50.0, 90.0, 99.0, 99.9]
                    .iter()
                    .map(|&q| (q, c.hist.value_at_quantile(q / 100.0)))
                    .collect(),
            }
        })
        .collect()
}

/// `percentiles` with the per-priority latencies added (made when there
/// were none).
pub(crate) fn with_prio(
    percentiles: Option<storlab_types::CustomPercentiles>,
    by: Vec<PrioLatency>,
) -> Option<storlab_types::CustomPercentiles> {
    if by.is_empty() {
        return percentiles;
    }
    let mut c = percentiles.unwrap_or_default();
    c.by_prio = by;
    Some(c)
}

impl Picker {
    /// A picker for a phase with per-command rules; None without (then
    /// every I/O carries the job's priority and nothing is drawn).
    pub(crate) fn of(p: &PrioOptions, seed: u64, depth: usize) -> Option<Picker> {
        (!p.read.is_empty() || !p.write.is_empty()).then(|| Picker {
            rng: Rng::new(seed ^ 0x5052_494F),
            slot_prio: vec![0; depth],
            lat: PrioLat::default(),
        })
    }

    /// Draw the priority of the I/O `slot` carries next.
    pub(crate) fn assign(&mut self, p: &PrioOptions, slot: u32, is_read: bool, len: u64) -> u16 {
        let v = self.pick(p, is_read, len);
        if let Some(s) = self.slot_prio.get_mut(slot as usize) {
            *s = v;
        }
        v
    }

    /// Count a completed I/O of `slot` under its priority.
    pub(crate) fn record(&mut self, slot: u32, is_read: bool, bytes: u64, lat_ns: u64) {
        let prio = self.slot_prio.get(slot as usize).copied().unwrap_or(0);
        self.lat.counter(is_read, prio).record(bytes, lat_ns);
    }

    /// The priority of an I/O of `len` bytes (reads when `is_read`).
    pub(crate) fn pick(&mut self, p: &PrioOptions, is_read: bool, len: u64) -> u16 {
        let rules = if is_read { &p.read } else { &p.write };
        let mine = rules.iter().filter(|r| r.bs == 0 || r.bs == len);
        let total: u32 = mine.clone().map(|r| u32::from(r.pct)).sum();
        if total == 0 {
            return p.job;
        }
        let r = self.rng.below(100) as u32;
        if r >= total {
            return p.job;
        }
        let mut acc = 0;
        for rule in mine {
            acc += u32::from(rule.pct);
            if r < acc {
                return rule.ioprio;
            }
        }
        p.job
    }
}

/// Set the calling thread's I/O priority (fio's `prio`/`prioclass`).
pub(crate) fn set_thread_ioprio(ioprio: u16) -> std::io::Result<()> {
    crate::sys::ioprio_set(ioprio)
}

#[cfg(test)]
/// The calling thread's I/O priority.
pub(crate) fn thread_ioprio() -> std::io::Result<u16> {
    crate::sys::ioprio_get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_types::fioverify::ioprio_parts;

    fn spec(pairs: &[(&str, &str)]) -> PhaseSpec {
        crate::options::spec_from_pairs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn cmdprio_percentage_holds_its_share() {
        // cmdprio-percentage.fio: prioclass=3, cmdprio_percentage=20, cmdprio_class=1
        let s = spec(&[
            ("prioclass", "3"),
            ("cmdprio_percentage", "20"),
            ("cmdprio_class", "1"),
        ]);
        let p = resolve(&s, EngineKind::Libaio).unwrap();
        assert_eq!(ioprio_parts(p.job), (3, 0, 0));
        let mut k = Picker::of(&p, 1, 1).unwrap();
        let n = 100_000;
        let rt = (0..n)
            .filter(|_| ioprio_parts(k.pick(&p, true, 131072)).0 == 1)
            .count();
        let share = rt as f64 / n as f64;
        assert!((share - 0.20).abs() < 0.01, "{share}");
    }

    #[test]
    fn cmdprio_bssplit_splits_by_size_as_fio() {
        // cmdprio-bssplit.fio's [cmdprio-adv-def] job.
        let s = spec(&[
            ("prioclass", "2"),
            ("prio", "7"),
            ("cmdprio_bssplit", "64k/25/1/1:64k/75/3/2:1024k/0,1024k/0"),
        ]);
        let p = resolve(&s, EngineKind::IoUring).unwrap();
        let mut k = Picker::of(&p, 3, 1).unwrap();
        let n = 40_000;
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..n {
            *counts
                .entry(ioprio_parts(k.pick(&p, true, 65536)))
                .or_insert(0) += 1;
        }
        let share = |c| f64::from(counts.get(&c).copied().unwrap_or(0)) / f64::from(n);
        assert!((share((1, 1, 0)) - 0.25).abs() < 0.015, "{counts:?}");
        assert!((share((3, 2, 0)) - 0.75).abs() < 0.015, "{counts:?}");
        // 1 MiB reads and every write: the job's default, class 2 level 7.
        assert_eq!(ioprio_parts(k.pick(&p, true, 1 << 20)), (2, 7, 0));
        assert_eq!(ioprio_parts(k.pick(&p, false, 1 << 20)), (2, 7, 0));
        // Hints: 1M/10/2/0/1.
        let s = spec(&[("cmdprio_bssplit", "1M/10/2/0/1:1M/90/2/0/0")]);
        let p = resolve(&s, EngineKind::IoUring).unwrap();
        assert_eq!(ioprio_parts(p.read[0].ioprio), (2, 0, 1));
    }

    #[test]
    fn cmdprio_needs_an_async_engine_and_one_form() {
        let s = spec(&[("cmdprio_percentage", "20")]);
        assert!(
            resolve(&s, EngineKind::Psync)
                .unwrap_err()
                .0
                .contains("libaio")
        );
        let s = spec(&[("cmdprio_percentage", "20"), ("cmdprio_bssplit", "4k/10")]);
        assert!(
            resolve(&s, EngineKind::Libaio)
                .unwrap_err()
                .0
                .contains("exclusive")
        );
        let s = spec(&[("cmdprio_bssplit", "4k/60/1/0:4k/50/2/0")]);
        assert!(
            resolve(&s, EngineKind::Libaio)
                .unwrap_err()
                .0
                .contains("more than 100")
        );
    }

    #[test]
    fn the_job_priority_reaches_the_kernel() {
        // ioprio_set on this thread, read back with ioprio_get.
        let got = std::thread::spawn(|| {
            let v = ioprio_value(3, 0, 0);
            set_thread_ioprio(v).and_then(|()| thread_ioprio())
        })
        .join()
        .unwrap();
        match got {
            Ok(v) => assert_eq!(ioprio_parts(v).0, 3),
            Err(e) => panic!("ioprio_set/ioprio_get failed: {e}"),
        }
    }

    /// One 4 KiB read through `e` of a file of its own, carrying `ioprio`:
    /// the submission's error or the completion's result.
    fn read_with_prio<E: crate::engine::Engine>(e: &mut E, ioprio: u16) -> i32 {
        use crate::engine::{Dir, Io};
        e.set_ioprio(0, ioprio);
        e.queue(Io {
            slot: 0,
            dir: Dir::Read,
            offset: 0,
            len: 4096,
        })
        .unwrap();
        if let Err(err) = e.submit(1) {
            return -err.raw_os_error().unwrap_or(0);
        }
        let mut res = i32::MIN;
        while e.reap(|_, r| res = r) == 0 {
            e.submit(1).unwrap();
        }
        res
    }

    /// The priority a command carries reaches the kernel: the kernel checks
    /// it (`ioprio_check_cap`) and refuses a class that does not exist with
    /// EINVAL, which it can only do if the engine handed it over (io_uring's
    /// `sqe.ioprio`, libaio's `aio_reqprio` with IOCB_FLAG_IOPRIO). A valid
    /// idle-class priority reads normally.
    #[test]
    fn a_commands_priority_reaches_the_kernel_through_io_uring_and_libaio() {
        use crate::engine::{LibaioEngine, Slots, UringEngine, UringOptions};
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let fd = f.as_raw_fd();
        let bogus = 7 << 13; // class 7: no such class
        let idle = ioprio_value(3, 0, 0);
        match crate::engine::uring_available() {
            Ok(()) => {
                let opts = UringOptions {
                    registered: false,
                    sqpoll: false,
                };
                let mut e = UringEngine::new(fd, Slots::new(1, 4096).unwrap(), opts).unwrap();
                assert_eq!(read_with_prio(&mut e, bogus), -libc::EINVAL, "io_uring");
                assert_eq!(read_with_prio(&mut e, idle), 4096, "io_uring");
                assert_eq!(read_with_prio(&mut e, 0), 4096, "io_uring");
            }
            Err(e) => storlab_testkit::skip("io_uring priorities", &format!("no io_uring: {e}")),
        }
        match crate::engine::libaio_available() {
            Ok(()) => {
                // io_submit refuses the control block: a fresh engine each.
                let new = || LibaioEngine::new(fd, Slots::new(1, 4096).unwrap()).unwrap();
                assert_eq!(read_with_prio(&mut new(), bogus), -libc::EINVAL, "libaio");
                assert_eq!(read_with_prio(&mut new(), idle), 4096, "libaio");
            }
            Err(e) => storlab_testkit::skip("libaio priorities", &format!("no native AIO: {e}")),
        }
    }
}
