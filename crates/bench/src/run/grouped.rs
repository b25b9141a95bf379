//! One phase of job groups (see `groups.rs`): every group's files laid out
//! and put in its cache state, then every group's workers released at one
//! common epoch; each group's figures over its own window, the phase's
//! over the union window (histograms merged, never averaged), and how
//! long the groups really moved data together.

use super::{
    AfterWorker, describe_io_error, layout, prepare_cache, run_workers_with, summarize, too_short,
};
use crate::cluster::PhaseSync;
use crate::groups::{JobFiles, MIN_OVERLAP, first_jobs, job_files, overlap};
use crate::offsets::RegionMap;
use crate::run::{LayoutState, RunOutcome};
use crate::series::SeriesCollector;
use crate::worker::{WorkerOut, WorkerPlan};
use crate::{Control, ResolvedJob};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use storlab_types::{
    CacheMode, CacheReport, CpuStats, GroupResult, GroupVerify, PhaseGroups, PhaseParams,
    PhaseResult, VerifyMismatch, VerifyResult,
};

/// Where job `j` of a grouped phase does its I/O: (file index, region).
fn own_place(job: &ResolvedJob, p: &PhaseParams, j: u32) -> (usize, RegionMap) {
    if job.target.shared {
        // One file or device: each job its own region of the largest size.
        (
            0,
            RegionMap::Contiguous {
                base: u64::from(j) * p.size_bytes,
            },
        )
    } else {
        (j as usize, RegionMap::Contiguous { base: 0 })
    }
}

/// Every job's (file index, region), in job order: its own file, an
/// existing file its group reads (`files`), or another group's job's
/// (`files_of`).
fn places(job: &ResolvedJob, p: &PhaseParams) -> Result<Vec<(usize, RegionMap)>, String> {
    (0..p.numjobs)
        .map(|j| match job_files(p, j) {
            JobFiles::Own => Ok(own_place(job, p, j)),
            JobFiles::Of(k) => Ok(own_place(job, p, k)),
            JobFiles::Existing(path) => job
                .target
                .files
                .iter()
                .position(|f| f.path.as_os_str() == path.as_str())
                .map(|i| (i, RegionMap::Contiguous { base: 0 }))
                .ok_or_else(|| {
                    format!("phase {}: {path} was not prepared (internal error)", p.name)
                }),
        })
        .collect()
}

/// A phase of groups given to processes (`--group-ranks`): this
/// process's group as an ordinary phase (the group's parameters, named
/// after the phase) and its share of the phase's jobs.
pub(super) fn on_ranks(
    sync: Option<&dyn PhaseSync>,
    index: usize,
    p: &PhaseParams,
) -> Option<(PhaseParams, crate::Share)> {
    if p.groups.is_empty() {
        return None;
    }
    let (g, share) = sync?.group_share(index, p)?;
    let mut local = p.groups.get(g)?.clone();
    local.name = p.name.clone();
    Some((local, share))
}

/// Run grouped phase `p` of the run loop and hand its result over; false
/// when the run must stop (the reason is in `outcome`). Groups are not
/// run by several processes yet.
pub(super) fn hand_over(
    job: &ResolvedJob,
    p: &PhaseParams,
    control: &Control,
    laid_out: &mut LayoutState,
    sync: Option<&dyn PhaseSync>,
    outcome: &mut RunOutcome,
    on_phase: &mut impl FnMut(&PhaseResult),
) -> bool {
    let ran = match sync {
        Some(_) => Err(
            "job groups are not supported in multi-process (MPI) runs yet: \
                        run each group's workload as its own phase"
                .to_string(),
        ),
        None => run_grouped(job, p, control, laid_out),
    };
    let result = match ran {
        Ok(r) => r,
        Err(why) => {
            outcome.stop_reason = Some(why);
            return false;
        }
    };
    on_phase(&result);
    let fatal = result.interrupted;
    let first_warning = result.warnings.first().cloned();
    outcome.phases.push(result);
    if fatal {
        outcome.stop_reason = control.reason().or(first_warning);
        return false;
    }
    true
}

/// Run grouped phase `p`; an error (files missing, layout failed) stops
/// the run with its reason.
pub(super) fn run_grouped(
    job: &ResolvedJob,
    p: &PhaseParams,
    control: &Control,
    laid_out: &mut LayoutState,
) -> Result<PhaseResult, String> {
    let firsts = first_jobs(p);
    let need = if job.target.shared {
        1
    } else {
        p.numjobs as usize
    };
    if job.target.files.len() < need || control.jobs.len() < p.numjobs as usize {
        return Err(format!(
            "phase {}: its groups run {} jobs but {} file(s) were prepared (internal error)",
            p.name,
            p.numjobs,
            job.target.files.len()
        ));
    }
    let places = places(job, p)?;
    let place = |j: u32| places[j as usize];
    lay_out_groups(job, p, &firsts, &place, control, laid_out)?;
    if control.stop.load(Ordering::Relaxed) {
        return Err(control.reason().unwrap_or_else(|| "stopped".into()));
    }
    let caches: Vec<CacheReport> = p
        .groups
        .iter()
        .zip(&firsts)
        .map(|(g, &first)| {
            let mut files: Vec<usize> = (first..first + g.numjobs).map(|j| place(j).0).collect();
            files.dedup();
            prepare_cache(job, g, &files, control)
        })
        .collect();
    let mut plans = Vec::with_capacity(p.numjobs as usize);
    let mut params = Vec::with_capacity(p.numjobs as usize);
    for (g, &first) in p.groups.iter().zip(&firsts) {
        for j in first..first + g.numjobs {
            let (file, region) = place(j);
            plans.push(WorkerPlan {
                job: j,
                path: job.target.files[file].path.clone(),
                file_id: file as u32,
                region,
                size: g.size_bytes,
                unit: job.unit,
            });
            params.push(g);
        }
    }
    let started_at = storlab_types::time::now_rfc3339_millis();
    control.reset_progress();
    let series = SeriesCollector::new(p.log_interval_ns, p.ramp_ns, p.numjobs, None);
    let cpu: Vec<(AtomicU64, AtomicU64)> = (0..plans.len())
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    // A verifying group's jobs each check what they wrote once their
    // writes end, on their own threads, while the other groups run on.
    let passes: Vec<Mutex<Pass>> = plans.iter().map(|_| Mutex::new(Pass::None)).collect();
    let after = |i: usize, out: &mut WorkerOut| {
        if let (Some(plan), Some(g), Some(slot)) = (plans.get(i), params.get(i), passes.get(i)) {
            let pass = verify_after_writes(job, plan, g, control, out);
            if let Ok(mut s) = slot.lock() {
                *s = pass;
            }
        }
    };
    let hooks: (_, Option<&AfterWorker<'_>>) = (Some(cpu.as_slice()), Some(&after));
    let (outs, cpu_window) = run_workers_with(&plans, &params, p, control, &series, None, hooks);
    let passes: Vec<Pass> = passes
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let mut members = Vec::with_capacity(p.groups.len());
    let mut windows = Vec::with_capacity(p.groups.len());
    let mut group_warnings = Vec::new();
    for ((g, &first), cache) in p.groups.iter().zip(&firsts).zip(&caches) {
        let range = first as usize..(first + g.numjobs) as usize;
        let mine: &[WorkerOut] = outs.get(range.clone()).unwrap_or(&[]);
        let thread_cpu = cpu.get(range).unwrap_or(&[]);
        let (mut member, window) = group_result(g, first, mine, thread_cpu, cache, &started_at);
        member.verify = group_verify(g, first, mine, &plans, &passes);
        group_warnings.extend(
            member
                .warnings
                .iter()
                .map(|w| format!("group {}: {w}", member.name)),
        );
        windows.push(window);
        members.push(member);
    }
    let cache = merged_cache(&caches);
    let mut result = summarize(p, started_at, &outs, cpu_window, cache, control);
    let (fraction, all_moving_ns) = match windows.iter().copied().collect::<Option<Vec<_>>>() {
        Some(w) => overlap(&w),
        None => (0.0, 0),
    };
    // The aggregate's own warnings were for one workload; the groups'
    // (named) replace them, keeping the reason a phase stopped.
    let fatal = outs.iter().any(|o| o.fatal.is_some());
    let stopped: Vec<String> = result
        .warnings
        .iter()
        .take(usize::from(fatal))
        .cloned()
        .collect();
    let mut warnings = stopped.clone();
    warnings.extend(
        group_warnings
            .into_iter()
            .filter(|w| !stopped.iter().any(|f| w.ends_with(f.as_str()))),
    );
    if !result.interrupted {
        warnings.extend(too_short(result.elapsed_ns, result.total.ops).map(String::from));
        if p.groups.len() > 1 && fraction < MIN_OVERLAP {
            warnings.push(overlap_warning(
                &members,
                fraction,
                all_moving_ns,
                result.elapsed_ns,
            ));
        }
    }
    result.warnings = warnings;
    let start = outs.iter().filter_map(|o| o.window_start_ns).min();
    if let Some(s) = start {
        result.series = Some(series.points(s, s + result.elapsed_ns));
    }
    let mut reporting = reporting_groups(p, &firsts, &outs, &cpu, &caches, &result.started_at);
    if !reporting.is_empty() {
        let sets = crate::groups::reporting_sets(p);
        for (r, set) in reporting.iter_mut().zip(sets) {
            r.verify = merged_verify(members.get(set).unwrap_or(&[]));
        }
    }
    // The phase's verification is its groups' (the run fails on a mismatch).
    if let Some(v) = merged_verify(&members) {
        result.verify = Some(v.checked);
    }
    result.groups = Some(PhaseGroups {
        overlap: fraction,
        all_moving_ns,
        groups: members,
        reporting,
    });
    Ok(result)
}

/// Lay out what the reading groups read (never read holes), only what is
/// not laid out yet.
fn lay_out_groups(
    job: &ResolvedJob,
    p: &PhaseParams,
    firsts: &[u32],
    place: &impl Fn(u32) -> (usize, RegionMap),
    control: &Control,
    laid_out: &mut LayoutState,
) -> Result<(), String> {
    for (g, &first) in p.groups.iter().zip(firsts) {
        // Readers never read holes; a verifier's pass checks every unit of
        // its region, so what it did not write holds checkable data.
        let mut ranges = Vec::new();
        if !g.rw.reads() && !g.verify {
            continue;
        }
        for j in first..first + g.numjobs {
            let (f, region) = place(j);
            let base = match region {
                RegionMap::Contiguous { base } => base,
                _ => 0,
            };
            let size = job.target.files[f].size;
            let end = (base + g.size_bytes).min(size);
            let from = base.max(laid_out.done[f]);
            if from < end {
                ranges.push((f, from, end));
            }
        }
        if ranges.is_empty() {
            continue;
        }
        let t0 = Instant::now();
        let r = layout(job, g, &ranges, control);
        laid_out.ns += t0.elapsed().as_nanos() as u64;
        r.map_err(|e| describe_io_error("laying out files", &e))?;
        if control.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        for (f, from, to) in ranges {
            laid_out.bytes += to - from;
            // What is laid out is tracked from the start of each file.
            if from <= laid_out.done[f] {
                laid_out.done[f] = laid_out.done[f].max(to);
            }
        }
    }
    Ok(())
}

/// What the verify pass after a job's writes did.
#[derive(Debug, Clone, PartialEq)]
enum Pass {
    /// None was due: the group does not verify, writes nothing, or has
    /// `do_verify=0`.
    None,
    /// It ran and checked this many units.
    Ran(u64),
    /// It was due and did not run, for this reason.
    NotRun(String),
}

/// fio's `do_verify` for job `plan` of a verifying group `g` once its
/// writes ended: its region read back and checked on the job's thread
/// (the other groups keep running), the findings added to `out` (not to
/// its I/O figures: verification is not benchmark I/O). It does not run
/// after an error, a stop (Ctrl-C) or a `verify_fatal` mismatch, and says
/// so. A job that another job's `exitall` stopped still checks what it
/// wrote (fio skips the verify of a job it terminates; checking it
/// cannot hide a mismatch).
fn verify_after_writes(
    job: &ResolvedJob,
    plan: &WorkerPlan,
    g: &PhaseParams,
    control: &Control,
    out: &mut WorkerOut,
) -> Pass {
    if !g.verify || g.verify_opts.no_check || !g.rw.writes() {
        return Pass::None;
    }
    if let Some(f) = &out.fatal {
        return Pass::NotRun(format!("the job stopped on an error ({f})"));
    }
    if control.stop.load(Ordering::Relaxed) {
        return Pass::NotRun("the run was stopped".into());
    }
    if g.verify_opts.fatal && out.verify_bad_count > 0 {
        return Pass::NotRun("the job stopped at its first mismatch (verify_fatal)".into());
    }
    let Some(df) = job.target.files.get(plan.file_id as usize) else {
        return Pass::NotRun("its file was not prepared (internal error)".into());
    };
    let base = match plan.region {
        RegionMap::Contiguous { base } => base,
        _ => 0,
    };
    let region = crate::verify::PassRegion {
        path: &plan.path,
        file_id: plan.file_id,
        from: base,
        to: (base + plan.size).min(df.size),
    };
    let direct =
        g.cache == CacheMode::Direct && job.target.kind != crate::target::TargetKind::BlockDevice;
    let got = crate::verify::verify_pass(region, plan.unit, g, direct, &control.stop);
    out.verify_checked += got.checked;
    out.verify_bad_count += got.bad_count;
    let room = crate::worker::MAX_REPORTED_MISMATCHES.saturating_sub(out.verify_bad.len());
    out.verify_bad.extend(got.bad.into_iter().take(room));
    if control.stop.load(Ordering::Relaxed) {
        return Pass::NotRun(format!(
            "the run was stopped during the pass ({} units checked)",
            got.checked
        ));
    }
    Pass::Ran(got.checked)
}

/// Group `g`'s verification from its jobs' results (`outs`, jobs
/// `first..`): every unit checked inline and by the pass, each mismatch
/// named by its file; None when the group does not verify.
fn group_verify(
    g: &PhaseParams,
    first: u32,
    outs: &[WorkerOut],
    plans: &[WorkerPlan],
    passes: &[Pass],
) -> Option<GroupVerify> {
    if !g.verify {
        return None;
    }
    let mut v = GroupVerify::default();
    let mut not_run = Vec::new();
    let mut ran = false;
    for (k, o) in outs.iter().enumerate() {
        let j = first as usize + k;
        v.checked.blocks_checked += o.verify_checked;
        v.checked.mismatches += o.verify_bad_count;
        let file = plans
            .get(j)
            .map_or_else(|| format!("job {j}"), |p| p.path.display().to_string());
        for (off, why) in &o.verify_bad {
            if v.checked.first_mismatches.len() < crate::worker::MAX_REPORTED_MISMATCHES {
                v.checked.first_mismatches.push(VerifyMismatch {
                    file: file.clone(),
                    offset_bytes: *off,
                    reason: why.clone(),
                });
            }
        }
        match passes.get(j) {
            Some(Pass::Ran(n)) => {
                ran = true;
                v.pass_blocks_checked += n;
            }
            Some(Pass::NotRun(why)) => not_run.push(format!("job {j}: {why}")),
            _ => {}
        }
    }
    v.pass = if !not_run.is_empty() {
        format!("not run: {}", not_run.join("; "))
    } else if ran {
        "ran".into()
    } else {
        "none".into()
    };
    Some(v)
}

/// Several groups' verification as one (a reporting group, the phase):
/// None when none of them verifies.
fn merged_verify(members: &[GroupResult]) -> Option<GroupVerify> {
    let vs: Vec<&GroupVerify> = members.iter().filter_map(|m| m.verify.as_ref()).collect();
    if vs.is_empty() {
        return None;
    }
    let mut out = GroupVerify::default();
    let mut checked = VerifyResult::default();
    for v in &vs {
        checked.blocks_checked += v.checked.blocks_checked;
        checked.mismatches += v.checked.mismatches;
        for m in &v.checked.first_mismatches {
            if checked.first_mismatches.len() < crate::worker::MAX_REPORTED_MISMATCHES {
                checked.first_mismatches.push(m.clone());
            }
        }
        out.pass_blocks_checked += v.pass_blocks_checked;
    }
    out.checked = checked;
    let mut passes: Vec<&str> = vs.iter().map(|v| v.pass.as_str()).collect();
    passes.dedup();
    out.pass = passes.join("; ");
    Some(out)
}

/// With `group_reporting`: one result per reporting group (the groups up
/// to the next `new_group`), each over its own window with its jobs'
/// histograms merged; nothing when every group reports on its own.
fn reporting_groups(
    p: &PhaseParams,
    firsts: &[u32],
    outs: &[WorkerOut],
    cpu: &[(AtomicU64, AtomicU64)],
    caches: &[CacheReport],
    started_at: &str,
) -> Vec<GroupResult> {
    let sets = crate::groups::reporting_sets(p);
    if !p.group_reporting || sets.len() == p.groups.len() {
        return Vec::new();
    }
    sets.iter()
        .filter_map(|set| {
            let members = p.groups.get(set.clone())?;
            let params = crate::groups::merged_params(members)?;
            let first = *firsts.get(set.start)?;
            let range = first as usize..(first + params.numjobs) as usize;
            let cache = merged_cache(caches.get(set.clone())?);
            let (r, _) = group_result(
                &params,
                first,
                outs.get(range.clone())?,
                cpu.get(range)?,
                &cache,
                started_at,
            );
            Some(r)
        })
        .collect()
}

/// One group's figures over its own window, and that window.
fn group_result(
    g: &PhaseParams,
    first: u32,
    outs: &[WorkerOut],
    thread_cpu: &[(AtomicU64, AtomicU64)],
    cache: &CacheReport,
    started_at: &str,
) -> (GroupResult, Option<(u64, u64)>) {
    // A scratch control: the group's summary must not set the run's stop
    // reason or last window (the phase's summary does).
    let scratch = Control::new(0);
    let r = summarize(
        g,
        started_at.to_string(),
        outs,
        (Duration::ZERO, Duration::ZERO),
        cache.clone(),
        &scratch,
    );
    let start = outs.iter().filter_map(|o| o.window_start_ns).min();
    let end = outs.iter().filter_map(|o| o.window_end_ns).max();
    let user: u64 = thread_cpu.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
    let sys: u64 = thread_cpu.iter().map(|c| c.1.load(Ordering::Relaxed)).sum();
    let ops = r.total.ops;
    let cpu = CpuStats {
        user_ns: user,
        sys_ns: sys,
        cpu_ns_per_io: if ops > 0 {
            (user + sys) as f64 / ops as f64
        } else {
            0.0
        },
        utilization_pct: if r.elapsed_ns > 0 {
            (user + sys) as f64 * 100.0 / r.elapsed_ns as f64
        } else {
            0.0
        },
    };
    let member = GroupResult {
        name: g.name.clone(),
        first_job: first,
        params: g.clone(),
        start_ns: start.unwrap_or(0),
        end_ns: end.unwrap_or(0),
        elapsed_ns: r.elapsed_ns,
        read: r.read,
        write: r.write,
        total: r.total,
        cpu,
        depth: r.depth,
        cache: cache.clone(),
        warnings: r
            .warnings
            .into_iter()
            .filter(|w| !w.starts_with("too short to trust"))
            .collect(),
        percentiles: r.percentiles,
        verify: None,
    };
    (member, start.zip(end))
}

/// The phase's cache report from its groups': pages summed, verified only
/// when every group's state was reached.
pub(crate) fn merged_cache(caches: &[CacheReport]) -> CacheReport {
    let mut out = CacheReport::default();
    let mut modes: Vec<&str> = caches.iter().map(|c| c.mode.as_str()).collect();
    modes.dedup();
    out.mode = if modes.len() == 1 {
        modes[0].into()
    } else {
        "mixed".into()
    };
    let mut methods: Vec<String> = caches.iter().filter_map(|c| c.method.clone()).collect();
    methods.dedup();
    out.method = (!methods.is_empty()).then(|| methods.join("; "));
    let sum = |f: fn(&CacheReport) -> Option<u64>| -> Option<u64> {
        caches.iter().filter_map(f).reduce(|a, b| a + b)
    };
    out.resident_pages_before = sum(|c| c.resident_pages_before);
    out.resident_pages_after = sum(|c| c.resident_pages_after);
    out.total_pages = sum(|c| c.total_pages);
    out.verified = caches
        .iter()
        .filter_map(|c| c.verified)
        .reduce(|a, b| a && b);
    out.may_be_cached = caches.iter().any(|c| c.may_be_cached);
    out
}

pub(crate) fn overlap_warning(
    members: &[GroupResult],
    fraction: f64,
    all_ns: u64,
    union_ns: u64,
) -> String {
    let first_done = members
        .iter()
        .min_by_key(|m| if m.elapsed_ns == 0 { 0 } else { m.end_ns })
        .map(|m| m.name.as_str())
        .unwrap_or("?");
    format!(
        "the groups moved data together for only {:.0} % of the phase ({:.2} s of {:.2} s): group {first_done} \
         finished first and left the others alone; give the groups one runtime (time_based) to measure each \
         under the others' load",
        fraction * 100.0,
        all_ns as f64 / 1e9,
        union_ns as f64 / 1e9
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SafetyOptions, prepare};

    fn grouped(text: &str) -> PhaseParams {
        let path = std::path::Path::new("g.toml");
        let f = crate::JobFile::parse(text, path).unwrap();
        f.phases(text, path, &Default::default(), &Default::default())
            .unwrap()
            .remove(0)
    }

    /// Two groups on the null engine: each group's bytes are its jobs'
    /// bytes, the phase's are the sum, every job's file is its group's.
    #[test]
    fn groups_run_together_and_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let p = grouped(
            "[global]\nengine = \"null\"\ncache = \"cold\"\n[[phase]]\nname = \"mix\"\n\
             [[phase.group]]\nname = \"r\"\nrw = \"read\"\nnumjobs = 2\nsize = \"256k\"\nbs = \"4k\"\n\
             [[phase.group]]\nname = \"w\"\nrw = \"write\"\nnumjobs = 1\nsize = \"512k\"\nbs = \"64k\"\n",
        );
        let job = prepare(Some(dir.path()), vec![p], SafetyOptions::default()).unwrap();
        let sizes: Vec<u64> = job.target.files.iter().map(|f| f.size).collect();
        assert_eq!(sizes, [256 << 10, 256 << 10, 512 << 10]);
        let control = Control::new(3);
        let out = crate::run(&job, &control, |_| {});
        job.target.cleanup();
        assert_eq!(out.stop_reason, None);
        let ph = &out.phases[0];
        let g = ph.groups.as_ref().unwrap();
        assert_eq!(g.groups.len(), 2);
        assert_eq!(g.groups[0].read.bytes, 2 * (256 << 10));
        assert_eq!(g.groups[0].write.bytes, 0);
        assert_eq!(g.groups[1].write.bytes, 512 << 10);
        assert_eq!(g.groups[1].first_job, 2);
        assert_eq!(ph.read.bytes, g.groups[0].read.bytes);
        assert_eq!(ph.write.bytes, g.groups[1].write.bytes);
        assert_eq!(ph.jobs.len(), 3);
        assert_eq!(ph.jobs[2].write.bytes, 512 << 10);
        assert!(ph.elapsed_ns >= g.groups[0].elapsed_ns.max(g.groups[1].elapsed_ns));
        assert!((0.0..=1.0).contains(&g.overlap));
    }

    #[test]
    fn merged_cache_sums_pages_and_says_mixed() {
        let a = CacheReport {
            mode: "cold".into(),
            total_pages: Some(10),
            verified: Some(true),
            ..Default::default()
        };
        let b = CacheReport {
            mode: "direct".into(),
            total_pages: Some(5),
            verified: Some(false),
            ..Default::default()
        };
        let m = merged_cache(&[a.clone(), b]);
        assert_eq!(m.mode, "mixed");
        assert_eq!(m.total_pages, Some(15));
        assert_eq!(m.verified, Some(false));
        assert_eq!(merged_cache(&[a.clone(), a]).mode, "cold");
    }
}
