//! The process limits a job needs, checked before anything is created.
//!
//! Each job is a thread with its own stack, I/O buffers and (glibc) malloc
//! arena, and holds open files. When `ulimit -v`, `ulimit -n` or
//! `ulimit -u` cannot hold that many, a thread would fail to start part-way
//! (Rust's runtime aborts when it cannot map a new thread's signal stack),
//! so the job is refused up front with the limit and the fix named. Limits
//! come from `/proc/self/limits`, current use from `/proc/self/status`.

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

/// Address space the workers of phase `p` need, at least.
fn phase_bytes(p: &PhaseParams, cpus: u64) -> u64 {
    let jobs = u64::from(p.numjobs);
    let max_bs = p.bs.iter().map(|b| b.bs_bytes).max().unwrap_or(4096);
    // I/O buffers live in one mapping per job, rounded up to 2 MiB.
    let buffers = max_bs
        .saturating_mul(u64::from(p.iodepth.max(1)))
        .div_ceil(2 << 20)
        .saturating_mul(2 << 20);
    let arenas = jobs.min(8 * cpus).saturating_mul(ARENA_BYTES);
    jobs.saturating_mul(THREAD_BYTES.saturating_add(buffers))
        .saturating_add(arenas)
}

/// Refuse phases the process limits cannot hold. `limits` and `status` are
/// the texts of `/proc/self/limits` and `/proc/self/status`.
pub(crate) fn check_with(
    phases: &[PhaseParams],
    limits: &str,
    status: &str,
    cpus: u64,
) -> Result<(), String> {
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

/// [`check_with`] on this process's limits.
pub(crate) fn check(phases: &[PhaseParams]) -> Result<(), String> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    check_with(phases, &limits, &status, cpus)
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
        let e = check_with(&[phase("4096")], LIMITS, STATUS, 2).unwrap_err();
        assert!(e.contains("ulimit -v") && e.contains("--numjobs"), "{e}");
        assert!(check_with(&[phase("8")], LIMITS, STATUS, 2).is_ok());
    }

    #[test]
    fn more_jobs_than_open_files_are_refused() {
        let unlimited_as = LIMITS.replace("1536000000 ", "unlimited  ");
        let e = check_with(&[phase("2000")], &unlimited_as, STATUS, 2).unwrap_err();
        assert!(e.contains("ulimit -n"), "{e}");
    }

    #[test]
    fn unlimited_or_unreadable_limits_pass() {
        assert!(check_with(&[phase("4096")], "", "", 2).is_ok());
        let real = check(&[phase("1")]);
        assert!(real.is_ok(), "{real:?}");
    }
}
