//! Job groups: several different workloads run at once in one phase
//! (`[[phase.group]]` in a job file, `--group 'rw=read numjobs=6'` on the
//! command line).
//!
//! A group is a spec layered over its phase's (the group's own keys win;
//! what it does not say comes from the phase, `[global]`, the command
//! line and the machine defaults). Each group resolves like a phase, with
//! every check of a single workload, and the phase records:
//!
//! * `groups`: each group's own [`PhaseParams`], in order; group `g`'s jobs
//!   are the phase's jobs `first(g) .. first(g) + numjobs(g)`, each with its
//!   own file (the same files a phase of that many jobs would use);
//! * the phase-level fields describe the whole: `numjobs` is the sum,
//!   `size` the largest group's, `rw` `read`/`write` when every group only
//!   reads or only writes and `readwrite` otherwise, `time_based` only when
//!   every group is, `runtime` the longest.
//!
//! All groups start at one common epoch; each runs to its own end (its
//! size, loops or runtime, as fio runs the jobs of a file that no
//! `stonewall` separates) and the phase ends when the last group is done.
//! How much the groups really ran together is measured, not assumed: see
//! [`overlap`].

use crate::options::{PhaseSpec, SpecError, resolve_phase, spec_from_pairs};
use storlab_types::{FileLayout, PhaseParams};

/// Most jobs a phase runs (as `numjobs`).
const MAX_JOBS: u32 = 4096;

/// A group's spec from `--group` text: `rw=read numjobs=6 bs=1M` (keys as
/// in job files or flags, `key=value` words separated by spaces or commas;
/// a bare key is an on/off option set on, e.g. `time_based`).
pub fn parse_group_arg(text: &str) -> Result<PhaseSpec, SpecError> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return Err(SpecError(
            "--group '': give the group's options as key=value words, e.g. --group 'rw=read numjobs=6 bs=1M'"
                .into(),
        ));
    }
    let pairs: Vec<(&str, &str)> = words
        .iter()
        .map(|w| {
            let w = w.trim_start_matches('-');
            w.split_once('=').unwrap_or((w, "1"))
        })
        .collect();
    if let Some((k, _)) = pairs.iter().find(|(k, _)| *k == "group") {
        return Err(SpecError(format!(
            "--group '{text}': '{k}' cannot be used inside a group (a group holds no groups)"
        )));
    }
    spec_from_pairs(pairs.iter().copied())
        .map_err(|e| SpecError(format!("--group '{text}': {}", e.0)))
}

/// `spec` with the command line `over` on top. Groups a file defines get
/// the command line's values too (flags override the file, as everywhere);
/// groups given on the command line (`--group`) keep their own keys over
/// the other flags. `--name` names the phase, never its groups.
pub fn with_command_line(spec: &PhaseSpec, over: &PhaseSpec) -> PhaseSpec {
    let mut out = spec.overlay(over);
    if over.group.is_empty() && !out.group.is_empty() {
        let mut top = over.clone();
        top.name = None;
        out.group = out.group.iter().map(|g| g.overlay(&top)).collect();
    }
    out
}

/// Resolve a phase whose spec holds groups (see the module documentation).
pub(crate) fn resolve_grouped(s: &PhaseSpec, index: usize) -> Result<PhaseParams, SpecError> {
    let mut base = s.clone();
    base.group = Vec::new();
    base.ranks = None;
    base.group_ranks = None;
    let given_ranks = group_rank_sets(s)?;
    let mut groups: Vec<PhaseParams> = Vec::with_capacity(s.group.len());
    for (i, g) in s.group.iter().enumerate() {
        if !g.group.is_empty() {
            return Err(SpecError(format!(
                "group {}: a group cannot hold groups of its own",
                i + 1
            )));
        }
        let mut spec = base.overlay(g);
        // A group is named by its own key, else by its pattern.
        spec.name = g.name.clone();
        spec.group_over.clear();
        spec.ranks = None;
        spec.group_ranks = None;
        let mut gp = resolve_member(&spec).map_err(|e| SpecError(group_msg(i, g, &e)))?;
        let default_name = default_name(&gp, &groups);
        let name = g.name.clone().unwrap_or(default_name);
        if let Some(only) = s.group_over.get(&name) {
            // A sweep point's values for this group alone.
            let spec = spec.overlay(only);
            gp = resolve_member(&spec).map_err(|e| SpecError(group_msg(i, g, &e)))?;
        }
        gp.name = name;
        gp.ranks = given_ranks.get(i).cloned().unwrap_or_default();
        check_group(&gp).map_err(|e| SpecError(group_msg(i, g, &e)))?;
        if groups.iter().any(|o| o.name == gp.name) {
            return Err(SpecError(format!(
                "two groups are named '{}': give each group its own name (name = \"...\")",
                gp.name
            )));
        }
        groups.push(gp);
    }
    check_shares(&groups)?;
    check_rank_sets(&groups)?;
    // The first group starts the phase's first reporting group.
    if let Some(g) = groups.first_mut() {
        g.shares_report = false;
    }
    let phase_name = s
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-groups", index + 1));
    aggregate(phase_name, groups)
}

/// Each group's MPI ranks (`--group-ranks 0-5,6-8` for the phase, else
/// each group's own `ranks = "0-5"`), in group order; empty when none is
/// given. Every group has a set or none has.
fn group_rank_sets(s: &PhaseSpec) -> Result<Vec<Vec<u32>>, SpecError> {
    if let Some(text) = s.group_ranks.as_deref() {
        let sets: Vec<&str> = text.split(',').map(str::trim).collect();
        if sets.len() != s.group.len() {
            return Err(SpecError(format!(
                "group_ranks {text}: {} rank set(s) for {} group(s): give one set per group, in group order, \
                 separated by ',' (e.g. --group-ranks 0-5,6-8 for two groups)",
                sets.len(),
                s.group.len()
            )));
        }
        return sets
            .iter()
            .map(|t| parse_rank_set(t).map_err(|e| SpecError(format!("group_ranks {text}: {e}"))))
            .collect();
    }
    let own: Vec<Option<&str>> = s.group.iter().map(|g| g.ranks.as_deref()).collect();
    if own.iter().all(Option::is_none) {
        return Ok(Vec::new());
    }
    own.iter()
        .zip(&s.group)
        .enumerate()
        .map(|(i, (r, g))| match r {
            Some(t) => {
                parse_rank_set(t).map_err(|e| SpecError(group_msg(i, g, &format!("ranks {t}: {e}"))))
            }
            None => Err(SpecError(group_msg(
                i,
                g,
                "has no ranks while another group has: give every group its ranks (ranks = \"0-5\"), \
                 or none",
            ))),
        })
        .collect()
}

/// `0-5`, `3`, `0-1:4:6-7` (ranges and ranks separated by ':'): the ranks,
/// sorted, each once.
pub fn parse_rank_set(text: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    let num = |t: &str| {
        t.trim().parse::<u32>().map_err(|_| {
            format!("'{t}' is not a rank: give ranks as 0-5 or 0:2:4-5 (whole numbers from 0)")
        })
    };
    for part in text.split(':').map(str::trim) {
        if part.is_empty() {
            return Err(format!(
                "an empty rank set in '{text}': give ranks as 0-5 or 0:2:4-5"
            ));
        }
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("rank range {part} runs backwards: write {b}-{a}"));
                }
                if b - a >= 1 << 20 {
                    return Err(format!("rank range {part} is too large"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// No rank runs two groups.
fn check_rank_sets(groups: &[PhaseParams]) -> Result<(), SpecError> {
    if let Some(g) = groups
        .iter()
        .find(|g| !g.ranks.is_empty() && (!g.files.is_empty() || g.files_of.is_some()))
    {
        return Err(SpecError(format!(
            "group '{}': files and files_of are not supported with group ranks (--group-ranks) yet: \
             each rank's jobs use files of their own; drop files/files_of, or run without mpirun",
            g.name
        )));
    }
    for (i, a) in groups.iter().enumerate() {
        for b in &groups[i + 1..] {
            if let Some(r) = a.ranks.iter().find(|r| b.ranks.contains(r)) {
                return Err(SpecError(format!(
                    "rank {r} is given to groups '{}' and '{}': each rank runs one group; give the groups \
                     disjoint rank sets (e.g. --group-ranks 0-1,2-3)",
                    a.name, b.name
                )));
            }
        }
    }
    Ok(())
}

/// Whether phase `p` gives its groups to MPI ranks.
pub fn has_rank_sets(p: &PhaseParams) -> bool {
    p.groups.iter().any(|g| !g.ranks.is_empty())
}

/// Rank sets mean nothing without MPI: refused, naming the phase.
pub fn ranks_need_mpi(phases: &[PhaseParams]) -> Result<(), SpecError> {
    match phases.iter().find(|p| has_rank_sets(p)) {
        Some(p) => Err(SpecError(format!(
            "phase {}: --group-ranks (ranks = ...) gives job groups to MPI ranks, but this is not a \
             multi-client run: launch it with mpirun -np N (an MPI build), or drop --group-ranks to run \
             every group here",
            p.name
        ))),
        None => Ok(()),
    }
}

/// Why a job's rank sets do not fit the ranks `mpirun` launched
/// ([`check_ranks_fit`]); the front end prints it as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RanksDontFit {
    /// A group names a rank at or above the number launched.
    #[error(
        "phase {phase}: group rank {rank} does not exist: {launched} ranks were launched (0-{last}); \
         the groups' ranks are {sets}: launch more ranks (mpirun -np) or give ranks below {launched}",
        last = launched.saturating_sub(1)
    )]
    NoSuchRank {
        phase: String,
        rank: u32,
        launched: u32,
        /// Each group's ranks, `name: 0-5, ...`.
        sets: String,
    },
    /// Ranks that were launched but belong to no group.
    #[error(
        "phase {phase}: {missing} of the {launched} ranks launched in no group: every rank runs one \
         group; the groups' ranks are {sets}: give the missing ranks to a group or launch fewer ranks"
    )]
    Unassigned {
        phase: String,
        /// The ranks in no group, as `rank 5` / `ranks 4-5`.
        missing: String,
        launched: u32,
        sets: String,
    },
}

/// Under `mpirun -np N`: every phase's rank sets cover ranks `0..N`
/// exactly (disjointness was checked when the job was resolved).
pub fn check_ranks_fit(phases: &[PhaseParams], n: u32) -> Result<(), RanksDontFit> {
    for p in phases.iter().filter(|p| has_rank_sets(p)) {
        let sets = p
            .groups
            .iter()
            .map(|g| format!("{}: {}", g.name, rank_text(&g.ranks)))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(&rank) = p.groups.iter().flat_map(|g| &g.ranks).find(|&&r| r >= n) {
            return Err(RanksDontFit::NoSuchRank {
                phase: p.name.clone(),
                rank,
                launched: n,
                sets,
            });
        }
        let missing: Vec<u32> = (0..n)
            .filter(|r| !p.groups.iter().any(|g| g.ranks.contains(r)))
            .collect();
        if !missing.is_empty() {
            return Err(RanksDontFit::Unassigned {
                phase: p.name.clone(),
                missing: crate::cluster::merge::rank_list(&missing),
                launched: n,
                sets,
            });
        }
    }
    Ok(())
}

/// `0-5`, `0-1:4` (the form `ranks` takes).
pub fn rank_text(ranks: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, e)) if *e + 1 == r => *e = r,
            _ => runs.push((r, r)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// The phase rank 0 prepares files for under `mpirun`: each group's jobs
/// times its ranks (group `g`'s rank `i` of its set runs jobs
/// `first(g) + i·numjobs(g) ..`).
pub fn scaled_for_ranks(p: &PhaseParams) -> PhaseParams {
    let mut out = p.clone();
    for g in &mut out.groups {
        g.numjobs *= g.ranks.len().max(1) as u32;
    }
    out.numjobs = out.groups.iter().map(|g| g.numjobs).sum();
    out
}

/// Under `mpirun` with rank sets: the group `rank` runs in phase `p`
/// (as given, per rank), and the global index of its first job.
pub fn rank_group(p: &PhaseParams, rank: u32) -> Option<(usize, u32)> {
    let global = scaled_for_ranks(p);
    let firsts = first_jobs(&global);
    p.groups.iter().enumerate().find_map(|(g, gp)| {
        let i = gp.ranks.iter().position(|&r| r == rank)? as u32;
        Some((g, firsts[g] + i * gp.numjobs))
    })
}

/// One group's parameters: its spec resolved as a phase, then its file
/// set (`files`: existing files, expanded and checked now, before any I/O;
/// `files_of`: another group's files, checked once every group is known).
fn resolve_member(spec: &PhaseSpec) -> Result<PhaseParams, String> {
    let mut plain = spec.clone();
    plain.files = None;
    plain.files_of = None;
    let existing = match spec.files.as_deref() {
        Some(text) => expand_files(text)?,
        None => Vec::new(),
    };
    if !existing.is_empty() && spec.size.is_none() {
        // Without a size, each job reads as much as the smallest file
        // holds, in whole blocks (dd reads a whole file).
        let smallest = existing.iter().map(|f| f.1).min().unwrap_or(0);
        plain.size = Some(storlab_types::ByteSize(smallest));
        let probe = resolve_phase(&plain, 0).map_err(|e| format!("files: {}", e.0))?;
        let bs = probe.max_bs().max(1);
        plain.size = Some(storlab_types::ByteSize(smallest / bs * bs));
    }
    let mut gp = resolve_phase(&plain, 0).map_err(|e| e.0)?;
    if !existing.is_empty() {
        if gp.rw.writes() {
            return Err(format!(
                "files={}: existing files are only read (storlab never writes a file it did not create): \
                 drop files= so the group writes new files of its own, or make it rw=read/randread",
                spec.files.as_deref().unwrap_or_default()
            ));
        }
        for (path, len) in &existing {
            if *len < gp.size_bytes {
                return Err(format!(
                    "files: {path} holds {len} bytes but the group reads {} per job: \
                     use size={len} or less (or leave size out to read the smallest file's length)",
                    gp.size_bytes
                ));
            }
        }
        gp.files = existing.into_iter().map(|f| f.0).collect();
    }
    // fio's jobs without new_group share their reporting group.
    gp.shares_report = spec.new_group.is_some_and(|f| !f.0);
    if let Some(of) = &spec.files_of {
        if !gp.files.is_empty() {
            return Err(
                "files and files_of both given: a group uses existing files or another group's, not both"
                    .into(),
            );
        }
        gp.files_of = Some(of.clone());
    }
    Ok(gp)
}

/// `files = "PATHS"`: paths or globs separated by ':' (fio's separator),
/// relative to the current directory; each an existing regular file or
/// block device, as (absolute path, bytes). A glob is in the file name
/// (`/data/in/*.dat`), matched sorted; one that matches nothing, or a
/// path that does not exist, is refused: no group writes it.
pub(crate) fn expand_files(text: &str) -> Result<Vec<(String, u64)>, String> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let path = std::path::Path::new(part);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => p.to_path_buf(),
            None => std::path::PathBuf::from("."),
        };
        if parent.to_string_lossy().contains(['*', '?', '[']) {
            return Err(format!(
                "files={part}: a glob may only be in the file name, not in a directory ({})",
                parent.display()
            ));
        }
        let found: Vec<std::path::PathBuf> = if name.contains(['*', '?', '[']) {
            let entries = std::fs::read_dir(&parent).map_err(|e| {
                format!(
                    "files={part}: cannot list {} ({e}): give an existing directory",
                    parent.display()
                )
            })?;
            let mut m: Vec<std::path::PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_str().is_some_and(|n| glob_match(name, n)))
                .map(|e| e.path())
                .collect();
            m.sort();
            if m.is_empty() {
                return Err(format!(
                    "files={part} matches no file, and no group writes it: a group reads only files that exist \
                     (lay them out first, or let the group read new files of its own: drop files=)"
                ));
            }
            m
        } else {
            vec![path.to_path_buf()]
        };
        for f in found {
            let md = std::fs::metadata(&f).map_err(|e| {
                format!(
                    "files: {} cannot be read ({e}), and no group writes it: a group reads only files that exist \
                     (check the path, or drop files= so the group reads new files of its own)",
                    f.display()
                )
            })?;
            let len = if md.is_file() {
                md.len()
            } else if std::os::unix::fs::FileTypeExt::is_block_device(&md.file_type()) {
                let dev =
                    std::fs::File::open(&f).map_err(|e| format!("files: {}: {e}", f.display()))?;
                crate::sys::block_device_size(&dev)
                    .map_err(|e| format!("files: {}: {e}", f.display()))?
            } else {
                return Err(format!(
                    "files: {} is not a regular file or a block device: name files to read",
                    f.display()
                ));
            };
            let abs =
                std::fs::canonicalize(&f).map_err(|e| format!("files: {}: {e}", f.display()))?;
            let abs = abs.display().to_string();
            if !out.iter().any(|o| o.0 == abs) {
                out.push((abs, len));
            }
        }
    }
    if out.is_empty() {
        return Err("files is empty: give paths or globs separated by ':'".into());
    }
    Ok(out)
}

/// Shell-style match of one file name: `*` any run, `?` one character,
/// `[abc]`/`[a-z]` one of a set (`[!...]` none of it). A leading `.` is
/// matched only by a pattern that starts with `.`.
fn glob_match(pat: &str, name: &str) -> bool {
    if name.starts_with('.') && !pat.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|k| glob_at(&p[1..], &n[k..])),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(2).position(|&c| c == ']').map(|i| i + 2) else {
                return n.first() == Some(&'[') && glob_at(&p[1..], &n[1..]);
            };
            let Some(&c) = n.first() else {
                return false;
            };
            let set = &p[1..close];
            let (neg, set) = match set.first() {
                Some('!') | Some('^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != neg && glob_at(&p[close + 1..], &n[1..])
        }
        Some(&c) => n.first() == Some(&c) && glob_at(&p[1..], &n[1..]),
    }
}

/// `files_of` names a group of the phase that holds files of its own;
/// two groups that both write may not share files (they would write the
/// same regions: there is no shared-file mode for groups).
fn check_shares(groups: &[PhaseParams]) -> Result<(), SpecError> {
    for g in groups {
        let Some(of) = &g.files_of else {
            continue;
        };
        let Some(owner) = groups.iter().find(|o| &o.name == of) else {
            let names: Vec<&str> = groups.iter().map(|o| o.name.as_str()).collect();
            return Err(SpecError(format!(
                "group '{}': files_of={of}: no group of this phase is named {of} (the groups are: {})",
                g.name,
                names.join(", ")
            )));
        };
        if owner.name == g.name || owner.files_of.is_some() {
            return Err(SpecError(format!(
                "group '{}': files_of={of}: name a group that has files of its own (not itself, \
                 not one that uses another group's files)",
                g.name
            )));
        }
        if !owner.files.is_empty() {
            // Its files are the user's, read in place: a writer may never
            // touch them, and a reader names them itself.
            return Err(SpecError(format!(
                "group '{}': files_of={of}: '{of}' reads existing files (files = ...), which storlab \
                 never writes; {}",
                g.name,
                if g.rw.writes() {
                    "give this writing group its own files (drop files_of)"
                } else {
                    "give this group the same files = ... to read them too"
                }
            )));
        }
        if g.rw.writes() && owner.rw.writes() {
            return Err(SpecError(format!(
                "groups '{}' and '{of}' would both write the same files (files_of={of}), the same regions \
                 at once: groups have no shared-file mode; give each writing group its own files \
                 (drop files_of) or make '{}' read",
                g.name, g.name
            )));
        }
    }
    Ok(())
}

/// Where job `j` of grouped phase `p` does its I/O.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JobFiles {
    /// Its own file (or region), as in a phase without groups.
    Own,
    /// An existing file, read in place.
    Existing(String),
    /// The file of the phase's job `k` (a `files_of` group).
    Of(u32),
}

/// Job `j` of grouped phase `p`: which file it uses (see [`JobFiles`]).
pub(crate) fn job_files(p: &PhaseParams, j: u32) -> JobFiles {
    let firsts = first_jobs(p);
    let Some((g, first)) = p
        .groups
        .iter()
        .zip(firsts.iter().copied())
        .find(|(g, f)| (*f..*f + g.numjobs).contains(&j))
    else {
        return JobFiles::Own;
    };
    let k = j - first;
    if !g.files.is_empty() {
        return JobFiles::Existing(g.files[k as usize % g.files.len()].clone());
    }
    if let Some(of) = &g.files_of
        && let Some((o, ofirst)) = p
            .groups
            .iter()
            .zip(firsts.iter().copied())
            .find(|(o, _)| &o.name == of)
        && o.numjobs > 0
    {
        return JobFiles::Of(ofirst + k % o.numjobs);
    }
    JobFiles::Own
}

/// Bytes each job's own file needs in grouped phase `p`: the group's size;
/// nothing for a job that reads existing files or uses another group's
/// (whose file is made as large as the largest of its users needs).
pub(crate) fn job_sizes(p: &PhaseParams) -> Vec<u64> {
    let mut sizes: Vec<u64> = p
        .groups
        .iter()
        .flat_map(|g| std::iter::repeat_n(g.size_bytes, g.numjobs as usize))
        .collect();
    let mut at = 0u32;
    for g in &p.groups {
        for j in at..at + g.numjobs {
            match job_files(p, j) {
                JobFiles::Own => {}
                JobFiles::Existing(_) => sizes[j as usize] = 0,
                JobFiles::Of(k) => {
                    sizes[j as usize] = 0;
                    sizes[k as usize] = sizes[k as usize].max(g.size_bytes);
                }
            }
        }
        at += g.numjobs;
    }
    sizes
}

/// The existing files the groups of `phases` read, each once with its
/// current size, appended to the target's files (never created, so never
/// laid out, written or removed).
pub(crate) fn add_existing(
    target: &mut crate::ResolvedTarget,
    phases: &[PhaseParams],
) -> Result<(), String> {
    for g in phases.iter().flat_map(|p| &p.groups) {
        for f in &g.files {
            let path = std::path::PathBuf::from(f);
            if target.files.iter().any(|t| t.path == path) {
                continue;
            }
            let md = std::fs::metadata(&path).map_err(|e| {
                format!(
                    "group {}: files: {f} cannot be read ({e}): it exists no more",
                    g.name
                )
            })?;
            let size = if md.is_file() { md.len() } else { g.size_bytes };
            target.files.push(crate::target::DataFile {
                path,
                size,
                created: false,
            });
            target.info.files.push(f.clone());
        }
    }
    Ok(())
}

/// An unnamed group's name: its pattern, `read`, then `read-2`, ...
fn default_name(gp: &PhaseParams, before: &[PhaseParams]) -> String {
    let base = gp.rw.as_str();
    let same = before
        .iter()
        .filter(|o| o.name == base || o.name.starts_with(&format!("{base}-")))
        .count();
    if same > 0 {
        format!("{base}-{}", same + 1)
    } else {
        base.to_string()
    }
}

fn group_msg(i: usize, g: &PhaseSpec, msg: &str) -> String {
    match &g.name {
        Some(n) => format!("group {} ('{n}'): {msg}", i + 1),
        None => format!("group {}: {msg}", i + 1),
    }
}

/// What a group cannot do (yet): each is refused by name, before any I/O.
fn check_group(g: &PhaseParams) -> Result<(), String> {
    if g.layout != FileLayout::PerJob {
        return Err(
            "shared_file/stride are not supported inside groups: each group's jobs use their own files \
             (drop shared_file, or run the shared-file workload as its own phase)"
                .into(),
        );
    }
    if g.steadystate.is_some() {
        return Err(
            "steadystate is not supported inside groups (one group's steadiness cannot end the \
             others): drop it, or run the workload as its own phase"
                .into(),
        );
    }
    Ok(())
}

/// The phase-level parameters of a grouped phase (see the module docs).
fn aggregate(name: String, groups: Vec<PhaseParams>) -> Result<PhaseParams, SpecError> {
    let Some(first) = groups.first() else {
        return Err(SpecError(
            "a phase with groups needs at least one group".into(),
        ));
    };
    let total: u64 = groups.iter().map(|g| u64::from(g.numjobs)).sum();
    if total > u64::from(MAX_JOBS) {
        return Err(SpecError(format!(
            "the groups of phase {name} run {total} jobs together; at most {MAX_JOBS}: use fewer numjobs"
        )));
    }
    for g in &groups {
        if g.ramp_ns != first.ramp_ns || g.log_interval_ns != first.log_interval_ns {
            return Err(SpecError(format!(
                "group '{}' has its own ramp_time or log_interval: the groups of a phase share them \
                 (set them on the phase, not in a group)",
                g.name
            )));
        }
    }
    let (rw, read_jobs, bs) = storlab_types::group_mix(&groups);
    Ok(PhaseParams {
        name,
        rw,
        rwmixread: ((read_jobs * 100) / total.max(1)) as u8,
        bs,
        size_bytes: groups.iter().map(|g| g.size_bytes).max().unwrap_or(0),
        numjobs: total as u32,
        iodepth: groups.iter().map(|g| g.iodepth).max().unwrap_or(1),
        runtime_ns: groups.iter().filter_map(|g| g.runtime_ns).max(),
        time_based: groups.iter().all(|g| g.time_based),
        end_fsync: groups.iter().any(|g| g.rw.writes() && g.end_fsync),
        fallocate: groups.iter().all(|g| g.fallocate),
        iodepth_batch: 1,
        loops: groups.iter().map(|g| g.loops).max().unwrap_or(1),
        files: Vec::new(),
        files_of: None,
        group_reporting: groups.iter().any(|g| g.group_reporting),
        shares_report: false,
        groups: groups.clone(),
        ..first.clone()
    })
}

/// The reporting groups of grouped phase `p` (fio's `new_group`): ranges
/// of its groups, a new one at the first group and at each group that does
/// not share the report of the one before.
pub(crate) fn reporting_sets(p: &PhaseParams) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, g) in p.groups.iter().enumerate() {
        match out.last_mut() {
            Some(last) if g.shares_report => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The parameters of several groups reported as one (a reporting group):
/// the phase-level summary of just those groups, named `a+b`.
pub(crate) fn merged_params(members: &[PhaseParams]) -> Option<PhaseParams> {
    let name = members
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    let mut p = aggregate(name, members.to_vec()).ok()?;
    p.groups = Vec::new();
    Some(p)
}

/// Every group of each phase (a phase without groups as itself): what the
/// engine checks before it starts (engines, block sizes, cache modes).
pub(crate) fn flatten(phases: &[PhaseParams]) -> Vec<PhaseParams> {
    phases
        .iter()
        .flat_map(|p| {
            if p.groups.is_empty() {
                vec![p.clone()]
            } else {
                p.groups.clone()
            }
        })
        .collect()
}

/// The phase's job index of each group's first job.
pub(crate) fn first_jobs(p: &PhaseParams) -> Vec<u32> {
    let mut at = 0;
    p.groups
        .iter()
        .map(|g| {
            let f = at;
            at += g.numjobs;
            f
        })
        .collect()
}

/// How much the groups ran together: given each group's window
/// `(start, end)` (ns on one clock), the time every group was moving data
/// at once (the windows' intersection) and its fraction of the union
/// window (first start to last end). One group overlaps itself fully; a
/// window of zero length leaves nothing in common.
pub fn overlap(windows: &[(u64, u64)]) -> (f64, u64) {
    let (Some(first), Some(last)) = (
        windows.iter().map(|w| w.0).min(),
        windows.iter().map(|w| w.1).max(),
    ) else {
        return (0.0, 0);
    };
    let union = last.saturating_sub(first);
    let common_start = windows.iter().map(|w| w.0).max().unwrap_or(first);
    let common_end = windows.iter().map(|w| w.1).min().unwrap_or(last);
    let all = common_end.saturating_sub(common_start);
    if union == 0 {
        return (0.0, 0);
    }
    (all as f64 / union as f64, all)
}

/// Below this overlap a grouped phase carries a warning.
pub const MIN_OVERLAP: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::JobFile;
    use std::path::Path;
    use storlab_types::RwMode;

    fn phases(text: &str) -> Result<Vec<PhaseParams>, SpecError> {
        let path = Path::new("job.toml");
        let f = JobFile::parse(text, path)?;
        f.phases(text, path, &PhaseSpec::default(), &PhaseSpec::default())
    }

    #[test]
    fn a_phase_of_groups_layers_each_group_over_the_phase() {
        let ph = phases(
            r#"
[global]
bs = "1M"
size = "64M"
cache = "cold"
[[phase]]
name = "sas-dd"
[[phase.group]]
name = "readers"
rw = "read"
numjobs = 6
[[phase.group]]
rw = "write"
numjobs = 3
bs = "64k"
"#,
        )
        .unwrap();
        assert_eq!(ph.len(), 1);
        let p = &ph[0];
        assert_eq!(p.name, "sas-dd");
        assert_eq!(p.numjobs, 9);
        assert_eq!(p.rw, RwMode::ReadWrite);
        assert_eq!(p.groups.len(), 2);
        assert_eq!(p.groups[0].name, "readers");
        assert_eq!(p.groups[0].numjobs, 6);
        assert_eq!(p.groups[0].max_bs(), 1 << 20);
        assert_eq!(p.groups[1].name, "write");
        assert_eq!(p.groups[1].max_bs(), 64 << 10);
        assert_eq!(p.groups[1].size_bytes, 64 << 20);
        assert_eq!(first_jobs(p), vec![0, 6]);
        assert_eq!(flatten(&ph).len(), 2);
        let mix: u32 = p.bs.iter().map(|b| b.weight).sum();
        assert!((99..=101).contains(&mix), "{:?}", p.bs);
    }

    #[test]
    fn flags_override_a_files_groups_but_not_their_own() {
        let text = "[[phase]]\n[[phase.group]]\nrw = \"read\"\nnumjobs = 6\nengine = \"psync\"\n";
        let path = Path::new("job.toml");
        let f = JobFile::parse(text, path).unwrap();
        let cli = spec_from_pairs([("engine", "null"), ("name", "x")]).unwrap();
        let ph = f.phases(text, path, &PhaseSpec::default(), &cli).unwrap();
        assert_eq!(ph[0].groups[0].engine, storlab_types::EngineKind::Null);
        assert_eq!(ph[0].groups[0].name, "read", "--name names the phase");
        assert_eq!(ph[0].name, "x");
        // --group: the group's keys beat the other flags.
        let mut cli = spec_from_pairs([("engine", "null"), ("numjobs", "2")]).unwrap();
        cli.group = vec![parse_group_arg("rw=write numjobs=3").unwrap()];
        let p = resolve_phase(&PhaseSpec::default().overlay(&cli), 0).unwrap();
        assert_eq!(p.groups[0].numjobs, 3);
        assert_eq!(p.groups[0].engine, storlab_types::EngineKind::Null);
    }

    #[test]
    fn group_args_parse_and_bad_ones_name_the_group() {
        let g = parse_group_arg("rw=read numjobs=6,bs=1M time_based").unwrap();
        assert_eq!(g.numjobs, Some(6));
        assert_eq!(g.rw, Some(storlab_types::RwMode::Read));
        assert!(g.time_based.is_some());
        let e = parse_group_arg("rw=read colour=blue").unwrap_err().0;
        assert!(e.contains("colour") && e.contains("--group"), "{e}");
        let e = parse_group_arg("  ").unwrap_err().0;
        assert!(e.contains("key=value"), "{e}");
        // A group's own bad word is pointed at where it stands (line 5).
        let e = phases(
            "[[phase]]\n[[phase.group]]\nrw = \"read\"\n[[phase.group]]\nrw = \"sideways\"\n",
        )
        .unwrap_err()
        .0;
        assert!(e.starts_with("job.toml:5:6: invalid rw 'sideways'"), "{e}");
    }

    #[test]
    fn what_groups_cannot_do_is_refused_by_name() {
        for (key, word) in [
            ("shared_file = true", "shared_file"),
            ("steadystate = \"bw:5%\"\nruntime = \"10s\"", "steadystate"),
        ] {
            let text = format!("[[phase]]\n[[phase.group]]\nrw = \"write\"\n{key}\n");
            let e = phases(&text).unwrap_err().0;
            assert!(e.contains(word), "{key}: {e}");
        }
        let e = phases(
            "[[phase]]\n[[phase.group]]\nname = \"a\"\n[[phase.group]]\nname = \"a\"\nrw = \"write\"\n",
        )
        .unwrap_err()
        .0;
        assert!(e.contains("two groups are named 'a'"), "{e}");
        let e = phases(
            "[[phase]]\n[[phase.group]]\nramp_time = \"1s\"\n[[phase.group]]\nrw = \"write\"\n",
        )
        .unwrap_err()
        .0;
        assert!(e.contains("ramp_time"), "{e}");
        let e =
            phases("[[phase]]\n[[phase.group]]\nnumjobs = 4000\n[[phase.group]]\nnumjobs = 100\n")
                .unwrap_err()
                .0;
        assert!(e.contains("4100 jobs"), "{e}");
    }

    #[test]
    fn unnamed_groups_of_one_pattern_get_distinct_names() {
        let ph =
            phases("[[phase]]\n[[phase.group]]\nrw = \"read\"\n[[phase.group]]\nrw = \"read\"\n")
                .unwrap();
        let names: Vec<&str> = ph[0].groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["read", "read-2"]);
        assert_eq!(ph[0].rw, RwMode::Read);
    }

    #[test]
    fn globs_match_file_names_as_the_shell_does() {
        assert!(glob_match("*.dat", "f1.dat"));
        assert!(!glob_match("*.dat", "f1.dat.bak"));
        assert!(glob_match("f?.dat", "f1.dat"));
        assert!(!glob_match("f?.dat", "f10.dat"));
        assert!(glob_match("f[0-2].dat", "f2.dat"));
        assert!(!glob_match("f[!0-2].dat", "f2.dat"));
        assert!(
            !glob_match("*", ".hidden"),
            "a leading dot is not matched by *"
        );
        assert!(glob_match("[", "["));
    }

    #[test]
    fn files_of_a_group_that_reads_existing_files_is_refused() {
        // Before, a writer given files_of such a group wrote a storlab slot
        // and a reader read one, not the files named: neither had the
        // shape the file set said.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.dat"), vec![0u8; 1 << 20]).unwrap();
        let a = format!("{}/a.dat", dir.path().display());
        for rw in ["write", "read"] {
            let text = format!(
                "[[phase]]\n[[phase.group]]\nname = \"r\"\nfiles = \"{a}\"\n\
                 [[phase.group]]\nname = \"x\"\nrw = \"{rw}\"\nsize = \"64k\"\nfiles_of = \"r\"\n"
            );
            let e = phases(&text).expect_err(rw).to_string();
            assert!(e.contains("reads existing files"), "{rw}: {e}");
        }
    }

    #[test]
    fn file_sets_resolve_and_size_their_slots() {
        let dir = tempfile::tempdir().unwrap();
        for (n, len) in [("b.dat", 300_000usize), ("a.dat", 200_000)] {
            std::fs::write(dir.path().join(n), vec![0u8; len]).unwrap();
        }
        let glob = format!("{}/*.dat", dir.path().display());
        let text = format!(
            "[[phase]]\n[[phase.group]]\nname = \"w\"\nrw = \"write\"\nnumjobs = 2\nsize = \"1m\"\n\
             [[phase.group]]\nname = \"r\"\nnumjobs = 3\nbs = \"64k\"\nfiles = \"{glob}\"\n\
             [[phase.group]]\nname = \"of\"\nnumjobs = 3\nsize = \"2m\"\nfiles_of = \"w\"\n"
        );
        let p = phases(&text).unwrap().remove(0);
        let r = &p.groups[1];
        assert_eq!(r.files.len(), 2);
        assert!(r.files[0].ends_with("/a.dat"), "sorted: {:?}", r.files);
        // The smallest file (200,000 bytes) in whole 64 KiB blocks.
        assert_eq!(r.size_bytes, 3 * 65536);
        assert_eq!(job_files(&p, 4), JobFiles::Existing(r.files[0].clone()));
        assert_eq!(job_files(&p, 5), JobFiles::Of(0));
        assert_eq!(job_files(&p, 7), JobFiles::Of(0), "round-robin");
        assert_eq!(job_files(&p, 1), JobFiles::Own);
        // The writer's files grow to what their readers need; the other
        // groups' own slots need nothing.
        assert_eq!(job_sizes(&p), vec![2 << 20, 2 << 20, 0, 0, 0, 0, 0, 0]);
        assert!(
            p.files.is_empty() && p.files_of.is_none(),
            "the phase has none"
        );
    }

    #[test]
    fn rank_sets_parse_and_place_each_rank_among_all_jobs() {
        assert_eq!(parse_rank_set("0-2").unwrap(), [0, 1, 2]);
        assert_eq!(parse_rank_set("5:0-1:1").unwrap(), [0, 1, 5]);
        for (bad, said) in [("3-1", "backwards"), ("a", "not a rank"), ("0::1", "empty")] {
            let e = parse_rank_set(bad).unwrap_err();
            assert!(e.contains(said), "{bad}: {e}");
        }
        assert_eq!(rank_text(&[0, 1, 2, 5, 7, 8]), "0-2:5:7-8");
        let text = "[[phase]]\ngroup_ranks = \"0:2,1:3-4\"\n\
                    [[phase.group]]\nrw = \"write\"\nnumjobs = 2\n\
                    [[phase.group]]\nrw = \"read\"\n";
        let p = phases(text).unwrap().remove(0);
        assert_eq!(p.groups[0].ranks, [0, 2]);
        assert_eq!(p.groups[1].ranks, [1, 3, 4]);
        // Rank 0 prepares 2 ranks × 2 writer jobs, then 3 × 1 reader job.
        let global = scaled_for_ranks(&p);
        assert_eq!(global.numjobs, 7);
        assert_eq!(first_jobs(&global), [0, 4]);
        assert_eq!(rank_group(&p, 0), Some((0, 0)));
        assert_eq!(rank_group(&p, 2), Some((0, 2)));
        assert_eq!(rank_group(&p, 1), Some((1, 4)));
        assert_eq!(rank_group(&p, 4), Some((1, 6)));
        assert_eq!(rank_group(&p, 5), None);
        assert!(check_ranks_fit(std::slice::from_ref(&p), 5).is_ok());
        let e = check_ranks_fit(std::slice::from_ref(&p), 4).unwrap_err();
        assert!(
            matches!(
                e,
                RanksDontFit::NoSuchRank {
                    rank: 4,
                    launched: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("group rank 4 does not exist"), "{e}");
        let e = check_ranks_fit(std::slice::from_ref(&p), 6).unwrap_err();
        assert!(
            matches!(e, RanksDontFit::Unassigned { launched: 6, .. }),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("rank 5 of the 6 ranks launched in no group"),
            "{e}"
        );
        assert!(ranks_need_mpi(std::slice::from_ref(&p)).is_err());
    }

    #[test]
    fn rank_sets_that_cannot_be_run_are_refused_when_resolved() {
        for (text, said) in [
            (
                "[[phase]]\ngroup_ranks = \"0-1,1-2\"\n[[phase.group]]\n[[phase.group]]\nrw = \"write\"\n",
                "rank 1 is given to groups",
            ),
            (
                "[[phase]]\ngroup_ranks = \"0-1\"\n[[phase.group]]\n[[phase.group]]\nrw = \"write\"\n",
                "1 rank set(s) for 2 group(s)",
            ),
            (
                "[[phase]]\n[[phase.group]]\nranks = \"0\"\n[[phase.group]]\nrw = \"write\"\n",
                "has no ranks while another group has",
            ),
            (
                "[[phase]]\ngroup_ranks = \"0\"\nrw = \"read\"\n",
                "use them with groups",
            ),
        ] {
            let e = phases(text).unwrap_err().0;
            assert!(e.contains(said), "{text}: {e}");
        }
    }

    #[test]
    fn overlap_is_the_intersection_over_the_union() {
        assert_eq!(overlap(&[(0, 100), (0, 100)]), (1.0, 100));
        let (f, all) = overlap(&[(0, 100), (10, 60)]);
        assert_eq!(all, 50);
        assert!((f - 0.5).abs() < 1e-12);
        // Disjoint windows: never together.
        assert_eq!(overlap(&[(0, 10), (20, 30)]), (0.0, 0));
        assert_eq!(overlap(&[]), (0.0, 0));
        assert_eq!(overlap(&[(5, 5)]), (0.0, 0));
    }
}
