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
use storlab_types::{BsWeight, FileLayout, PhaseParams, RwMode};

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
        let mut gp = resolve_phase(&spec, i).map_err(|e| SpecError(group_msg(i, g, &e.0)))?;
        let default_name = default_name(&gp, &groups);
        let name = g.name.clone().unwrap_or(default_name);
        if let Some(only) = s.group_over.get(&name) {
            // A sweep point's values for this group alone.
            let spec = spec.overlay(only);
            gp = resolve_phase(&spec, i).map_err(|e| SpecError(group_msg(i, g, &e.0)))?;
        }
        gp.name = name;
        check_group(&gp).map_err(|e| SpecError(group_msg(i, g, &e)))?;
        if groups.iter().any(|o| o.name == gp.name) {
            return Err(SpecError(format!(
                "two groups are named '{}': give each group its own name (name = \"...\")",
                gp.name
            )));
        }
        groups.push(gp);
    }
    let phase_name = s
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-groups", index + 1));
    aggregate(phase_name, groups)
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
    if g.verify {
        return Err(
            "verify is not supported inside groups: run the verified workload as its own phase"
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
    let reads = groups.iter().any(|g| g.rw.reads());
    let writes = groups.iter().any(|g| g.rw.writes());
    let rw = match (reads, writes) {
        (true, false) => RwMode::Read,
        (false, true) => RwMode::Write,
        _ => RwMode::ReadWrite,
    };
    // Bytes each direction moves in one pass, for the phase's read share.
    let read_jobs: u64 = groups
        .iter()
        .filter(|g| g.rw.reads() && !g.rw.writes())
        .map(|g| u64::from(g.numjobs))
        .sum();
    let mut bs: Vec<BsWeight> = Vec::new();
    for g in &groups {
        for b in &g.bs {
            let w = b.weight.saturating_mul(g.numjobs);
            match bs.iter_mut().find(|x| x.bs_bytes == b.bs_bytes) {
                Some(x) => x.weight += w,
                None => bs.push(BsWeight {
                    bs_bytes: b.bs_bytes,
                    weight: w,
                }),
            }
        }
    }
    let sum: u64 = bs.iter().map(|b| u64::from(b.weight)).sum::<u64>().max(1);
    for b in &mut bs {
        b.weight = ((u64::from(b.weight) * 100 + sum / 2) / sum) as u32;
    }
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
        groups: groups.clone(),
        ..first.clone()
    })
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
            ("verify = true", "verify"),
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
