//! The process limits a job needs, checked before anything is created.
//!
//! Each job is a thread with its own stack, I/O buffers and (glibc) malloc
//! arena, and holds open files. When `ulimit -v`, `ulimit -n` or
//! `ulimit -u` cannot hold that many, a thread would fail to start part-way
//! (Rust's runtime aborts when it cannot map a new thread's signal stack),
//! so the job is refused up front with the limit and the fix named. Limits
//! come from `/proc/self/limits`, current use from `/proc/self/status`.
//!
//! The buffers are also real memory (they are filled with data, so every
//! page is touched): jobs whose buffers do not fit the memory available
//! (`MemAvailable`, and a cgroup v1 or v2 memory limit when one is set) are
//! refused too, instead of being killed by the OOM killer part-way with
//! their scratch files left behind.

use storlab_types::PhaseParams;

/// Address space one job thread takes besides its buffers: Rust's default
/// 2 MiB stack, its guard and signal stacks.
const THREAD_BYTES: u64 = (2 << 20) + (64 << 10);
/// glibc reserves 64 MiB of address space per malloc arena, up to 8 per CPU.
const ARENA_BYTES: u64 = 64 << 20;
/// Files and sockets the process has besides the jobs' data files.
const SPARE_FDS: u64 = 64;

/// A soft limit from `/proc/self/limits` (None = unlimited or unknown).
fn soft_limit(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// A `kB` figure from `/proc/self/status`, in bytes.
fn status_kb(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// Resident memory one job takes besides its I/O buffers: latency
/// histograms, the interval series, its stack in use (0.63 MiB measured:
/// 256 jobs of 4 KiB at QD 1 peaked at 158 MiB resident).
const JOB_RESIDENT_BYTES: u64 = 1 << 20;

/// One job's I/O buffers: `iodepth` × the largest block.
fn io_bytes(p: &PhaseParams) -> u64 {
    p.max_bs().saturating_mul(u64::from(p.iodepth.max(1)))
}

/// [`io_bytes`] as mapped: one mapping rounded up to 2 MiB.
fn buffer_bytes(p: &PhaseParams) -> u64 {
    io_bytes(p).div_ceil(2 << 20).saturating_mul(2 << 20)
}

/// Memory the workers of phase `p` touch: every buffer is filled (the
/// mapping's rounding is address space, not memory). A phase of job
/// groups runs every group's workers at once: their sum.
fn resident_bytes(p: &PhaseParams) -> u64 {
    if !p.groups.is_empty() {
        return p
            .groups
            .iter()
            .map(resident_bytes)
            .fold(0, u64::saturating_add);
    }
    u64::from(p.numjobs).saturating_mul(io_bytes(p).saturating_add(JOB_RESIDENT_BYTES))
}

/// Address space the workers of phase `p` need, at least.
fn phase_bytes(p: &PhaseParams, cpus: u64) -> u64 {
    let jobs = u64::from(p.numjobs);
    let buffers: u64 = if p.groups.is_empty() {
        jobs.saturating_mul(buffer_bytes(p))
    } else {
        p.groups
            .iter()
            .map(|g| u64::from(g.numjobs).saturating_mul(buffer_bytes(g)))
            .fold(0, u64::saturating_add)
    };
    let arenas = jobs.min(8 * cpus).saturating_mul(ARENA_BYTES);
    jobs.saturating_mul(THREAD_BYTES)
        .saturating_add(buffers)
        .saturating_add(arenas)
}

/// The I/O buffers of a phase in words: `--iodepth 16 x --bs 1 MiB` each,
/// or per group for a phase of job groups.
fn buffers_in_words(p: &PhaseParams) -> String {
    if p.groups.is_empty() {
        return format!(
            "{} of I/O buffers each: --iodepth {} x --bs {}",
            storlab_types::format_bytes(io_bytes(p)),
            p.iodepth,
            storlab_types::format_bytes(p.max_bs())
        );
    }
    let each: Vec<String> = p
        .groups
        .iter()
        .map(|g| {
            format!(
                "group {}: {} jobs x iodepth {} x bs {}",
                g.name,
                g.numjobs,
                g.iodepth,
                storlab_types::format_bytes(g.max_bs())
            )
        })
        .collect();
    format!("all groups at once: {}", each.join(", "))
}

/// Refuse phases the process limits or the memory available cannot hold.
/// `limits` and `status` are the texts of `/proc/self/limits` and
/// `/proc/self/status`; `available` the bytes of memory free for use.
pub(crate) fn check_with(
    phases: &[PhaseParams],
    limits: &str,
    status: &str,
    cpus: u64,
    available: Option<u64>,
) -> Result<(), String> {
    if let (Some(avail), Some(p)) = (available, phases.iter().max_by_key(|p| resident_bytes(p))) {
        let need = resident_bytes(p);
        if need > avail {
            return Err(format!(
                "phase {}: {} jobs need about {} of memory ({}, plus their statistics) but {} is \
                 available: use fewer --numjobs, a smaller --iodepth or --bs",
                p.name,
                p.numjobs,
                storlab_types::format_bytes(need),
                buffers_in_words(p),
                storlab_types::format_bytes(avail),
            ));
        }
    }
    let Some(p) = phases.iter().max_by_key(|p| p.numjobs) else {
        return Ok(());
    };
    let jobs = u64::from(p.numjobs);
    if let Some(limit) = soft_limit(limits, "Max address space") {
        let used = status_kb(status, "VmSize:").unwrap_or(0);
        let need = phases
            .iter()
            .map(|p| phase_bytes(p, cpus))
            .max()
            .unwrap_or(0);
        if used.saturating_add(need) > limit {
            return Err(format!(
                "phase {}: {jobs} jobs need about {} of address space (a thread, buffers and a malloc arena \
                 each) but `ulimit -v` allows {} and {} is in use: use fewer --numjobs, or raise the limit",
                p.name,
                storlab_types::format_bytes(need),
                storlab_types::format_bytes(limit),
                storlab_types::format_bytes(used),
            ));
        }
    }
    if let Some(limit) = soft_limit(limits, "Max open files")
        && jobs.saturating_add(SPARE_FDS) > limit
    {
        return Err(format!(
            "phase {}: {jobs} jobs need about {} open files but `ulimit -n` allows {limit}: \
             use fewer --numjobs, or raise the limit (ulimit -n {})",
            p.name,
            jobs + SPARE_FDS,
            jobs + SPARE_FDS
        ));
    }
    Ok(())
}

/// Memory free for this process: `MemAvailable`, or less when a cgroup
/// limit (v1 `memory.limit_in_bytes` or v2 `memory.max`, minus usage, the
/// tightest up the hierarchy: `storlab_host::cgroup`) is tighter.
fn available_memory() -> Option<u64> {
    let mem = storlab_host::meminfo("MemAvailable");
    match (mem, storlab_host::cgroup::memory_headroom()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// [`check_with`] on this process's limits and the memory available.
pub(crate) fn check(phases: &[PhaseParams]) -> Result<(), String> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    check_with(phases, &limits, &status, cpus, available_memory())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
Max address space         1536000000           unlimited            bytes     \n\
Max open files            1024                 4096                 files     \n";
    const STATUS: &str = "Name:\tstorlab\nVmSize:\t   40000 kB\nThreads:\t1\n";

    fn phase(numjobs: &str) -> PhaseParams {
        let spec = crate::options::spec_from_pairs([
            ("rw", "randread"),
            ("size", "4k"),
            ("numjobs", numjobs),
        ])
        .unwrap();
        crate::options::resolve_phase(&spec, 0).unwrap()
    }

    #[test]
    fn thousands_of_jobs_under_ulimit_v_are_refused_with_the_fix() {
        let e = check_with(&[phase("4096")], LIMITS, STATUS, 2, None).unwrap_err();
        assert!(e.contains("ulimit -v") && e.contains("--numjobs"), "{e}");
        assert!(check_with(&[phase("8")], LIMITS, STATUS, 2, None).is_ok());
    }

    #[test]
    fn more_jobs_than_open_files_are_refused() {
        let unlimited_as = LIMITS.replace("1536000000 ", "unlimited  ");
        let e = check_with(&[phase("2000")], &unlimited_as, STATUS, 2, None).unwrap_err();
        assert!(e.contains("ulimit -n"), "{e}");
    }

    /// The audit's case: 4096 jobs of 1 MiB x QD 16 on a 24 GiB machine
    /// were killed by the OOM killer; now refused before anything exists.
    #[test]
    fn jobs_whose_buffers_do_not_fit_in_memory_are_refused() {
        let big = |jobs: &str| {
            let spec = crate::options::spec_from_pairs([
                ("rw", "write"),
                ("bs", "1m"),
                ("iodepth", "16"),
                ("size", "4m"),
                ("numjobs", jobs),
            ])
            .unwrap();
            crate::options::resolve_phase(&spec, 0).unwrap()
        };
        let avail = Some(20u64 << 30);
        let e = check_with(&[big("4096")], "", "", 2, avail).unwrap_err();
        assert!(
            e.contains("4096 jobs") && e.contains("--numjobs") && e.contains("available"),
            "{e}"
        );
        // 16 MiB of buffers + 1 MiB each: 1,200 jobs need 19.9 GiB, 1,300 21.6 GiB.
        assert!(check_with(&[big("1200")], "", "", 2, avail).is_ok());
        assert!(check_with(&[big("1300")], "", "", 2, avail).is_err());
        assert!(
            check_with(&[big("4096")], "", "", 2, None).is_ok(),
            "unknown memory: no refusal"
        );
    }

    /// A phase of groups needs what its groups need together, not its
    /// largest block and depth times all its jobs.
    #[test]
    fn groups_are_counted_together_and_each_at_its_own_size() {
        let text = "[[phase]]\n[[phase.group]]\nname = \"small\"\nnumjobs = 64\nbs = \"4k\"\n\
                    [[phase.group]]\nname = \"big\"\nrw = \"write\"\nbs = \"4m\"\niodepth = 256\n";
        let path = std::path::Path::new("g.toml");
        let f = crate::JobFile::parse(text, path).unwrap();
        let p = f
            .phases(text, path, &Default::default(), &Default::default())
            .unwrap();
        // 64 x (4 KiB + 1 MiB) + (1 GiB + 1 MiB) = about 1.07 GiB, not
        // 65 x 1 GiB.
        assert!(check_with(&p, "", "", 2, Some(2 << 30)).is_ok());
        let e = check_with(&p, "", "", 2, Some(1 << 30)).unwrap_err();
        assert!(e.contains("group big: 1 jobs x iodepth 256"), "{e}");
        assert!(e.contains("65 jobs"), "{e}");
    }

    #[test]
    fn unlimited_or_unreadable_limits_pass() {
        assert!(check_with(&[phase("4096")], "", "", 2, None).is_ok());
        let real = check(&[phase("1")]);
        assert!(real.is_ok(), "{real:?}");
    }
}
