//! fio's NUMA placement (issue 27): `numa_cpu_nodes` pins each job's
//! thread to the CPUs of the nodes given (read from
//! `/sys/devices/system/node/nodeN/cpulist`, set with
//! `sched_setaffinity`), `numa_mem_policy` sets the thread's memory policy
//! with the `set_mempolicy` system call (`default`, `local`, `prefer:N`,
//! `bind:NODES`, `interleave:NODES`), as fio's `backend.c` does through
//! libnuma. Both are applied on the job's thread before its buffers are
//! mapped, so its I/O buffers follow the policy.
//!
//! A node this machine does not have is an error at run time, naming the
//! nodes it has (fio's libnuma refuses such a node string too).

use crate::options::{PhaseSpec, SpecError};
use storlab_types::fioverify::Placement;

/// fio's node list: `0`, `0-1`, `0,2-3`.
pub fn parse_nodes(v: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) if a <= b && b < 1024 => (a, b),
            _ => {
                return Err(format!(
                    "'{part}' is not a node or a range of nodes (e.g. 0-1)"
                ));
            }
        };
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("no node given".into());
    }
    Ok(out)
}

/// Resolve the two options, checked.
pub fn resolve(s: &PhaseSpec) -> Result<Placement, SpecError> {
    let cpu_nodes = match s.numa_cpu_nodes.as_deref().filter(|v| !v.trim().is_empty()) {
        Some(v) => parse_nodes(v).map_err(|m| SpecError(format!("numa_cpu_nodes={v}: {m}")))?,
        None => Vec::new(),
    };
    let (mem_policy, mem_nodes) = match s.numa_mem_policy.as_deref().map(str::trim) {
        None | Some("") => (String::new(), Vec::new()),
        Some(v) => {
            let (mode, nodes) = v.split_once(':').unwrap_or((v, ""));
            let mode = mode.trim().to_ascii_lowercase();
            let nodes = if nodes.trim().is_empty() {
                Vec::new()
            } else {
                parse_nodes(nodes).map_err(|m| SpecError(format!("numa_mem_policy={v}: {m}")))?
            };
            match mode.as_str() {
                "default" | "local" if nodes.is_empty() => {}
                "prefer" if nodes.len() == 1 => {}
                "bind" | "interleave" if !nodes.is_empty() => {}
                _ => {
                    return Err(SpecError(format!(
                        "numa_mem_policy={v}: use default, local, prefer:NODE, bind:NODES or \
                         interleave:NODES (e.g. bind:0, interleave:0-1)"
                    )));
                }
            }
            (mode, nodes)
        }
    };
    // The nodes must exist on the machine that runs the job (fio's libnuma
    // refuses such a node string too): refused before anything runs.
    check_nodes("numa_cpu_nodes", &cpu_nodes).map_err(SpecError)?;
    check_nodes("numa_mem_policy", &mem_nodes).map_err(SpecError)?;
    Ok(Placement {
        cpu_nodes,
        mem_policy,
        mem_nodes,
    })
}

/// The NUMA nodes this machine has (`/sys/devices/system/node/online`).
pub fn online_nodes() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/node/online")
        .ok()
        .and_then(|t| parse_nodes(t.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

/// The CPUs of node `n` (its `cpulist`).
fn node_cpus(n: u32) -> Result<Vec<u32>, String> {
    let path = format!("/sys/devices/system/node/node{n}/cpulist");
    let t = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    if t.trim().is_empty() {
        return Ok(Vec::new());
    }
    parse_nodes(t.trim()).map_err(|e| format!("{path}: {e}"))
}

fn check_nodes(what: &str, nodes: &[u32]) -> Result<(), String> {
    let online = online_nodes();
    if let Some(n) = nodes.iter().find(|n| !online.contains(n)) {
        return Err(format!(
            "{what}: NUMA node {n} does not exist on this machine (nodes: {}); give nodes it has",
            online
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    Ok(())
}

/// The CPUs of `nodes`.
pub fn cpus_of(nodes: &[u32]) -> Result<Vec<u32>, String> {
    check_nodes("numa_cpu_nodes", nodes)?;
    let mut cpus = Vec::new();
    for &n in nodes {
        cpus.extend(node_cpus(n)?);
    }
    if cpus.is_empty() {
        return Err("numa_cpu_nodes: the nodes given have no CPUs".into());
    }
    Ok(cpus)
}

/// Pin the calling thread to `cpus`.
pub fn pin_thread(cpus: &[u32]) -> std::io::Result<()> {
    crate::sys::set_affinity(cpus)
}

#[cfg(test)]
/// The CPUs the calling thread may run on.
pub fn thread_cpus() -> std::io::Result<Vec<u32>> {
    crate::sys::affinity()
}

/// The calling thread's memory policy (`set_mempolicy`).
fn set_mempolicy(mode: &str, nodes: &[u32]) -> Result<(), String> {
    // linux/mempolicy.h
    let m = match mode {
        "default" => 0,
        "prefer" => 1,
        "bind" => 2,
        "interleave" => 3,
        "local" => 4,
        _ => return Err(format!("numa_mem_policy {mode}: unknown mode")),
    };
    check_nodes("numa_mem_policy", nodes)?;
    crate::sys::set_mempolicy(m, nodes)
        .map_err(|e| format!("numa_mem_policy: set_mempolicy({mode}) failed: {e}"))
}

/// Apply `p` to the calling thread (a job's worker, before it maps its
/// buffers). Nothing to do, and nothing done, when nothing is set.
pub fn apply(p: &Placement) -> Result<(), String> {
    if !p.cpu_nodes.is_empty() {
        let cpus = cpus_of(&p.cpu_nodes)?;
        pin_thread(&cpus).map_err(|e| format!("numa_cpu_nodes: sched_setaffinity failed: {e}"))?;
    }
    if !p.mem_policy.is_empty() {
        set_mempolicy(&p.mem_policy, &p.mem_nodes)?;
    }
    Ok(())
}

/// Where job `n`'s region starts in its file or device (fio's `offset` +
/// n × `offset_increment`, n counting the job's clones from 0). In one
/// shared file without an increment each job keeps a region of its own
/// after the offset (storlab's shared-file rule). None past 16 EiB.
pub fn job_base(p: &storlab_types::PhaseParams, n: u32, shared: bool) -> Option<u64> {
    let step = if p.offset_increment_bytes > 0 {
        p.offset_increment_bytes
    } else if shared {
        p.size_bytes
    } else {
        0
    };
    u64::from(n).checked_mul(step)?.checked_add(p.offset_bytes)
}

/// Whether `p` places its regions with fio's offsets.
pub fn has_offsets(p: &storlab_types::PhaseParams) -> bool {
    p.offset_bytes > 0 || p.offset_increment_bytes > 0
}

/// The part of file `f` phase `p` uses, (start, end): `(0, region)` as
/// before without offsets; with them, job f's region of its own file, or
/// from the offset to the last job's end in a shared file.
pub fn file_range(
    p: &storlab_types::PhaseParams,
    f: usize,
    shared: bool,
    total_jobs: u32,
    region: u64,
) -> (u64, u64) {
    if !has_offsets(p) {
        return (0, region);
    }
    let n = if shared {
        total_jobs.saturating_sub(1)
    } else {
        f as u32
    };
    let start = if shared {
        p.offset_bytes
    } else {
        job_base(p, n, false).unwrap_or(u64::MAX)
    };
    let end = job_base(p, n, shared)
        .and_then(|b| b.checked_add(p.size_bytes))
        .unwrap_or(u64::MAX);
    (start, end)
}

/// The parts of file `f` phase `p` uses, in order: [`file_range`]'s span,
/// but in a shared file with `offset_increment` each job's region apart
/// (the holes between them are never laid out, written or checked).
pub fn file_ranges(
    p: &storlab_types::PhaseParams,
    f: usize,
    shared: bool,
    total_jobs: u32,
    region: u64,
) -> Vec<(u64, u64)> {
    if !(shared && has_offsets(p)) {
        return vec![file_range(p, f, shared, total_jobs, region)];
    }
    let mut out: Vec<(u64, u64)> = Vec::new();
    for n in 0..total_jobs {
        let Some(b) = job_base(p, n, true) else {
            break;
        };
        let e = b.saturating_add(p.size_bytes);
        match out.last_mut() {
            // Adjacent or overlapping regions are one range.
            Some(last) if b <= last.1 => last.1 = last.1.max(e),
            _ => out.push((b, e)),
        }
    }
    out
}

/// Offsets that storlab cannot place: in job groups (jobs of different
/// workloads run together) and with an interleaved stride.
pub fn check_offsets(phases: &[storlab_types::PhaseParams]) -> Result<(), String> {
    for p in phases {
        if p.groups.iter().any(has_offsets) {
            return Err(format!(
                "phase {}: offset and offset_increment are not supported for jobs that run \
                 together with other jobs (job groups): run the job as its own phase (stonewall)",
                p.name
            ));
        }
        if has_offsets(p)
            && matches!(
                p.layout,
                storlab_types::FileLayout::SharedInterleaved { .. }
            )
        {
            return Err(format!(
                "phase {}: offset/offset_increment with an interleaved stride: drop one of them",
                p.name
            ));
        }
        for n in 0..p.numjobs {
            if job_base(p, n, true)
                .and_then(|b| b.checked_add(p.size_bytes))
                .is_none()
            {
                return Err(format!(
                    "phase {}: offset + {n} × offset_increment + size is past 16 EiB: use smaller \
                     offsets",
                    p.name
                ));
            }
        }
    }
    Ok(())
}

/// fio's `fill_device` on a block device or an existing file: each such
/// phase's regions reach the target's end (fio writes until ENOSPC, the
/// device's end), from the phase's offset: `size` becomes what is left
/// after the last job's start, over the jobs, in whole blocks. A directory
/// or a new file has no end but the size given (storlab checks the free
/// space first and never fills a file system it was not told to).
pub fn fill_to_end(phases: &mut [storlab_types::PhaseParams], target: Option<&std::path::Path>) {
    use std::os::unix::fs::FileTypeExt;
    let Some(path) = target.filter(|_| phases.iter().any(|p| p.fill_device)) else {
        return;
    };
    let Ok(md) = std::fs::metadata(path) else {
        return;
    };
    let end = if md.file_type().is_block_device() {
        match std::fs::File::open(path).and_then(|f| crate::sys::block_device_size(&f)) {
            Ok(n) => n,
            Err(_) => return,
        }
    } else if md.is_file() {
        md.len()
    } else {
        return;
    };
    for p in phases
        .iter_mut()
        .filter(|p| p.fill_device && p.groups.is_empty())
    {
        let bs = p.max_bs().max(1);
        let jobs = u64::from(p.numjobs.max(1));
        let size = if p.offset_increment_bytes > 0 {
            let last = p
                .offset_bytes
                .saturating_add((jobs - 1).saturating_mul(p.offset_increment_bytes));
            end.saturating_sub(last)
        } else {
            end.saturating_sub(p.offset_bytes) / jobs
        } / bs
            * bs;
        if size > 0 {
            p.size_bytes = size;
        }
    }
}

/// Prepare a job's thread: its NUMA placement and its I/O priority
/// (fio's `prio`/`prioclass`, set with ioprio_set as fio's backend.c
/// does). Costs nothing when neither is set.
pub fn prepare_thread(p: &storlab_types::PhaseParams) -> Result<(), String> {
    if !p.placement.is_default() {
        apply(&p.placement)?;
    }
    if p.prio.job != 0 {
        crate::prio::set_thread_ioprio(p.prio.job).map_err(|e| {
            format!("prio/prioclass: ioprio_set failed: {e} (the realtime class needs root)")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_lists_parse_as_fio_writes_them() {
        assert_eq!(parse_nodes("0"), Ok(vec![0]));
        assert_eq!(parse_nodes("0-1"), Ok(vec![0, 1]));
        assert_eq!(parse_nodes("3,0-1"), Ok(vec![0, 1, 3]));
        assert!(parse_nodes("1-0").is_err());
        let s = PhaseSpec {
            numa_mem_policy: Some("interleave:0".into()),
            ..Default::default()
        };
        let p = resolve(&s).unwrap();
        assert_eq!(
            (p.mem_policy.as_str(), p.mem_nodes),
            ("interleave", vec![0])
        );
        // A node this machine lacks is refused before anything runs.
        let missing = online_nodes().iter().max().copied().unwrap_or(0) + 1;
        let s = PhaseSpec {
            numa_cpu_nodes: Some(format!("0-{missing}")),
            ..Default::default()
        };
        let e = resolve(&s).unwrap_err().0;
        assert!(e.contains("does not exist on this machine"), "{e}");
        let s = PhaseSpec {
            numa_mem_policy: Some("bind".into()),
            ..Default::default()
        };
        assert!(resolve(&s).unwrap_err().0.contains("bind:NODES"));
    }

    #[test]
    fn numa_cpu_nodes_pins_the_thread_to_the_nodes_cpus() {
        // Node 0 exists on every Linux machine; pin to its CPUs on a thread
        // of our own, then check what the kernel says the thread may use.
        let want = cpus_of(&[0]).unwrap();
        let got = std::thread::spawn(|| {
            // First narrow to one CPU, so the pinning below visibly widens
            // or keeps it to exactly node 0's CPUs.
            pin_thread(&[0]).unwrap();
            assert_eq!(thread_cpus().unwrap(), vec![0]);
            apply(&Placement {
                cpu_nodes: vec![0],
                mem_policy: "bind".into(),
                mem_nodes: vec![0],
            })
            .unwrap();
            thread_cpus().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(got, want);
        // A node the machine lacks is named.
        let missing = online_nodes().iter().max().copied().unwrap_or(0) + 1;
        let e = apply(&Placement {
            cpu_nodes: vec![missing],
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains(&format!("node {missing} does not exist")), "{e}");
    }
}
