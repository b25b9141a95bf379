//! Job building: what the user gave (a job file, an fio job file, a
//! profile's job, the flags alone, or nothing: the quick check) made into
//! the phases to run, in layers: machine defaults < the job file < the
//! flags (`over`, plus a sweep point). Also where the target comes from
//! (TARGET, fio's `--filename`/`--directory`, the job file's `target`).
//!
//! The command line reads the files and prints the warnings; this module
//! reads no file of the user's and prints nothing.

use crate::{FioJobFile, JobFile, PhaseSpec, SpecError};
use std::path::{Path, PathBuf};
use storlab_types::PhaseParams;

/// Phases resolved from what the user gave, with the target they name.
#[derive(Debug, Clone)]
pub struct Job {
    pub phases: Vec<PhaseParams>,
    pub target: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// A job that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A bad option or job file.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A bad option in an fio job file (named in the message).
    #[error("in fio job file {file}")]
    InFioJob {
        file: String,
        #[source]
        source: SpecError,
    },
    /// `--directory` / `--filename` that do not name what they must.
    #[error("{0}")]
    Target(String),
    /// Job groups in a run of several processes.
    #[error("{0}")]
    Unsupported(String),
}

/// The quick all-round check's phases (before command-line overrides).
pub fn quick_phases() -> Vec<PhaseSpec> {
    let phase = |name: &str, rw: &str, bs: &str, qd: &str| {
        let mut s = crate::spec_from_pairs([
            ("rw", rw),
            ("bs", bs),
            ("iodepth", qd),
            ("size", "256M"),
            ("runtime", "3s"),
            ("time_based", "1"),
        ])
        .unwrap_or_default();
        s.name = Some(name.into());
        s
    };
    vec![
        // Its first full pass also lays the file out for the reads.
        phase("seq-write", "write", "1M", "16"),
        phase("seq-read", "read", "1M", "16"),
        phase("rand-read", "randread", "4k", "32"),
        phase("rand-write", "randwrite", "4k", "32"),
    ]
}

/// The target the user named: TARGET, or fio's `--filename` (a file or
/// device) or `--directory` (an existing directory), checked for being
/// what its flag says.
pub fn pick_target(
    target: Option<&Path>,
    filename: Option<&Path>,
    directory: Option<&Path>,
) -> Result<Option<PathBuf>, JobError> {
    if let Some(d) = directory
        && !d.is_dir()
    {
        return Err(JobError::Target(format!(
            "--directory {}: not an existing directory (use --filename for a file or device)",
            d.display()
        )));
    }
    if let Some(f) = filename
        && f.is_dir()
    {
        return Err(JobError::Target(format!(
            "--filename {}: is a directory; use --directory {} (fio's spelling) or give it as TARGET",
            f.display(),
            f.display()
        )));
    }
    Ok(target.or(filename).or(directory).map(Path::to_path_buf))
}

/// Build the phases: a job file's text (`job`: its text and the path named
/// in messages), the flags alone (when they choose a pattern), or the
/// quick check; `over` (the flags, plus a sweep point) is the top layer
/// and machine defaults the lowest.
pub fn build(
    job: Option<(&str, &Path)>,
    target: Option<&Path>,
    over: &PhaseSpec,
) -> Result<Job, JobError> {
    let mut warnings = Vec::new();
    let file = match job {
        Some((text, path)) => Some((JobFile::parse(text, path)?, text, path)),
        None => None,
    };
    let target = target.map(Path::to_path_buf).or_else(|| {
        file.as_ref()
            .and_then(|(f, ..)| f.target.clone())
            .map(PathBuf::from)
    });
    let machine = machine_defaults(over, target.as_deref(), &mut warnings);
    let phases = match &file {
        Some((jf, text, path)) => jf.phases(text, path, &machine, over)?,
        None if over.rw.is_some() || !over.group.is_empty() => {
            vec![crate::resolve_phase(&machine.overlay(over), 0)?]
        }
        None => quick_phases()
            .iter()
            .enumerate()
            .map(|(i, q)| crate::resolve_phase(&machine.overlay(q).overlay(over), i))
            .collect::<Result<_, _>>()?,
    };
    warnings.extend(bssplit_note(&phases));
    Ok(Job {
        phases,
        target,
        warnings,
    })
}

/// Where storlab differs from fio on purpose with a random `bssplit`
/// (measured in docs/PERFORMANCE.md, "bssplit: storlab vs fio"): said once
/// per job in its warnings, so the result carries it.
pub fn bssplit_note(phases: &[PhaseParams]) -> Option<String> {
    let all = phases
        .iter()
        .flat_map(|p| std::iter::once(p).chain(&p.groups));
    let mut split = all.filter(|p| p.bs.len() > 1 && p.rw.is_random());
    let p = split.next()?;
    let names = if p.random_with_replacement {
        ""
    } else {
        " (fio's random map shrinks a block to the part of it not yet done in the pass, more \
         and more as the pass fills: a 70/30 4k/50:64k/50 job averaged 21 KB per I/O in fio, 35 KB \
         in storlab, so fio reports less MB/s unless norandommap is set)"
    };
    Some(format!(
        "bssplit: every I/O has one of the split's sizes, in the split's proportions{names}; \
         random offsets are multiples of the largest size (fio's blockalign is the smallest)"
    ))
}

/// The phases of an fio job file (`text`, read from the file called
/// `name`), with `over` (the flags) on top. The target is taken from the
/// file's `filename=`/`directory=` unless one is given on the command line.
pub fn build_fio(
    text: &str,
    name: &str,
    target: Option<&Path>,
    over: &PhaseSpec,
) -> Result<Job, JobError> {
    let job = FioJobFile::parse(text, name)?;
    let mut warnings: Vec<String> = job.notes.iter().map(|n| format!("{name}: {n}")).collect();
    let target = match (target, &job.target) {
        (Some(t), Some(f)) if Path::new(f) != t => {
            warnings.push(format!(
                "{name} names the target {f}; the command line's {} is used instead",
                t.display()
            ));
            Some(t.to_path_buf())
        }
        (Some(t), _) => Some(t.to_path_buf()),
        (None, f) => f.as_ref().map(PathBuf::from),
    };
    let machine = machine_defaults(over, target.as_deref(), &mut warnings);
    let phases = job
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = crate::with_command_line(&machine.overlay(p), over);
            crate::resolve_phase(&spec, i)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| JobError::InFioJob {
            file: name.to_string(),
            source,
        })?;
    warnings.extend(bssplit_note(&phases));
    Ok(Job {
        phases,
        target,
        warnings,
    })
}

impl Job {
    /// With `on` (`--output-format fio-json`), every phase and group keeps
    /// fio's latency distribution in its result.
    pub fn keep_latency_distribution(&mut self, on: bool) {
        for p in &mut self.phases {
            p.report.latency_distribution |= on;
            for g in &mut p.groups {
                g.report.latency_distribution |= on;
            }
        }
    }

    /// Job groups under several processes run on disjoint sets of ranks
    /// (`--group-ranks`); a phase of groups without them is refused on
    /// every rank when the job is built, naming the phase, before rank 0
    /// makes any file.
    pub fn without_groups(self) -> Result<Job, JobError> {
        if let Some(ph) = self
            .phases
            .iter()
            .find(|ph| !ph.groups.is_empty() && !crate::groups::has_rank_sets(ph))
        {
            return Err(JobError::Unsupported(format!(
                "phase {}: job groups in a multi-process (MPI) run need their ranks: give each group \
                 its own set, e.g. --group-ranks 0-1,2-3 (or ranks = \"0-1\" in each group), or run \
                 the groups without mpirun",
                ph.name
            )));
        }
        Ok(self)
    }

    /// Outside a multi-process run, groups given to ranks are refused.
    pub fn without_rank_sets(self) -> Result<Job, JobError> {
        crate::groups::ranks_need_mpi(&self.phases)?;
        Ok(self)
    }
}

/// What the user gave to build a job from: the text of a job file (TOML,
/// a profile's or `--ior`'s) or an fio job file, with the name messages
/// and `--dry-run` show, or the flags alone, or nothing (the quick check).
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Quick,
    Flags,
    Toml { text: String, name: String },
    Fio { text: String, name: String },
}

/// What a command line names a job with (the first given wins, in this
/// order): `--ior`'s translated job, an fio job file, a profile (its job
/// text and file), a TOML job file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    pub ior: Option<&'a str>,
    pub fio: Option<&'a Path>,
    pub profile: Option<(&'a str, &'a Path)>,
    pub job: Option<&'a Path>,
}

impl Source {
    /// The source of what was given; with nothing, the flags
    /// ([`Source::of_flags`]). A file is read with `read` (the front end's
    /// input rules; `what` names it: `job file`, `fio job file`).
    pub fn pick<E>(
        given: Given<'_>,
        flags: &PhaseSpec,
        read: impl Fn(&Path, &str) -> Result<String, E>,
    ) -> Result<Source, E> {
        let name = |p: &Path| p.display().to_string();
        Ok(match given {
            Given { ior: Some(t), .. } => Source::Toml {
                text: t.to_string(),
                name: "--ior".into(),
            },
            Given { fio: Some(f), .. } => Source::Fio {
                text: read(f, "fio job file")?,
                name: name(f),
            },
            Given {
                profile: Some((text, path)),
                ..
            } => Source::Toml {
                text: text.to_string(),
                name: name(path),
            },
            Given { job: Some(j), .. } => Source::Toml {
                text: read(j, "job file")?,
                name: name(j),
            },
            _ => Source::of_flags(flags),
        })
    }

    /// No job file: the flags alone when they choose a pattern or give
    /// groups, else the quick check.
    pub fn of_flags(over: &PhaseSpec) -> Source {
        if over.rw.is_some() || !over.group.is_empty() {
            Source::Flags
        } else {
            Source::Quick
        }
    }

    /// The job: [`build`] or [`build_fio`] of this source.
    pub fn build(&self, target: Option<&Path>, over: &PhaseSpec) -> Result<Job, JobError> {
        match self {
            Source::Quick | Source::Flags => build(None, target, over),
            Source::Toml { text, name } => build(Some((text, Path::new(name))), target, over),
            Source::Fio { text, name } => build_fio(text, name, target, over),
        }
    }

    /// `bench --dry-run`: the text and the JSON document of every phase
    /// of `job` (built from this source) with its values and their sources.
    pub fn dry_run(&self, job: &Job, over: &PhaseSpec) -> Result<(String, String), JobError> {
        let phases = explain(self, job, job.target.as_deref(), over)?;
        let table = render_explained(&phases, job.target.as_deref());
        let doc = serde_json::json!({ "dry_run": true, "phases": phases });
        Ok((table, format!("{doc:#}")))
    }
}

/// One option of a phase as a dry run shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sourced {
    pub key: String,
    pub value: String,
    /// `flag`, `FILE:LINE` (or `FILE`), `fio default`, `quick check`,
    /// `machine` or `default`.
    pub source: String,
}

/// A phase as a dry run shows it: every option, its value and where the
/// value came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExplainedPhase {
    pub name: String,
    pub options: Vec<Sourced>,
    /// Job groups of the phase: their names and the options each sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<(String, Vec<Sourced>)>,
}

/// Every phase of a job with every value and its source: what
/// `bench --dry-run` prints. `job` is the job already built from the same
/// inputs (so the dry run fails exactly where a run would).
pub fn explain(
    given: &Source,
    job: &Job,
    target: Option<&Path>,
    over: &PhaseSpec,
) -> Result<Vec<ExplainedPhase>, JobError> {
    let mut ignored = Vec::new();
    let machine = machine_defaults(over, target, &mut ignored);
    let (files, name, text): (Vec<PhaseSpec>, &str, &str) = match given {
        Source::Quick => (quick_phases(), "quick check", ""),
        Source::Flags => (vec![PhaseSpec::default()], "", ""),
        Source::Toml { text, name } => {
            let jf = JobFile::parse(text, Path::new(name))?;
            let specs = jf.specs(text, &PhaseSpec::default(), &PhaseSpec::default());
            (specs.into_iter().map(|s| s.0).collect(), name, text)
        }
        Source::Fio { text, name } => (FioJobFile::parse(text, name)?.phases, name, text),
    };
    let mut out = Vec::new();
    for (i, (file, resolved)) in files.iter().zip(&job.phases).enumerate() {
        let spec = crate::with_command_line(&machine.overlay(file), over);
        let lines = |key: &str| match given {
            Source::Toml { .. } => toml_line(text, i, key),
            Source::Fio { .. } => fio_line(text, &job_names(file), key),
            _ => None,
        };
        let source = |key: &str| -> String {
            if is_set(over, key) {
                "flag".into()
            } else if is_set(file, key) {
                match (given, lines(key)) {
                    (Source::Quick, _) => name.into(),
                    (Source::Fio { .. }, None) => "fio default".into(),
                    (_, Some(l)) => format!("{name}:{l}"),
                    (_, None) => name.into(),
                }
            } else if is_set(&machine, key) {
                "machine".into()
            } else {
                "default".into()
            }
        };
        let values = json_fields(&spec);
        let options = crate::OPTIONS
            .iter()
            .map(|o| Sourced {
                key: o.key.to_string(),
                value: values
                    .get(o.key)
                    .map(json_text)
                    .unwrap_or_else(|| shown_default(o)),
                source: source(o.key),
            })
            .collect();
        let groups = spec
            .group
            .iter()
            .map(|g| {
                let set = json_fields(g)
                    .iter()
                    .map(|(k, v)| Sourced {
                        key: k.clone(),
                        value: json_text(v),
                        source: if over.group.is_empty() {
                            source(k)
                        } else {
                            "flag".into()
                        },
                    })
                    .collect();
                (g.name.clone().unwrap_or_default(), set)
            })
            .collect();
        out.push(ExplainedPhase {
            name: resolved.name.clone(),
            options,
            groups,
        });
    }
    Ok(out)
}

/// The dry run as text: per phase, one line per option.
pub fn render_explained(phases: &[ExplainedPhase], target: Option<&Path>) -> String {
    let mut out =
        String::from("Dry run: nothing is run, no file is created and nothing is saved.\n");
    out.push_str(&format!(
        "Target: {}\n",
        target.map_or_else(
            || "./storlab-scratch (default)".to_string(),
            |t| t.display().to_string()
        )
    ));
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    out.push_str(&format!("Phases: {}\n", names.join(", ")));
    let width = crate::OPTIONS
        .iter()
        .map(|o| o.key.len())
        .max()
        .unwrap_or(10);
    for (i, ph) in phases.iter().enumerate() {
        out.push_str(&format!("\nPhase {}: {}\n", i + 1, ph.name));
        let vw = ph
            .options
            .iter()
            .map(|s| s.value.len())
            .max()
            .unwrap_or(4)
            .min(40);
        for s in &ph.options {
            out.push_str(&format!(
                "  {:width$}  {:vw$}  {}\n",
                s.key, s.value, s.source
            ));
        }
        for (name, set) in &ph.groups {
            out.push_str(&format!("  group {name}:\n"));
            for s in set {
                out.push_str(&format!(
                    "    {:width$}  {}  {}\n",
                    s.key, s.value, s.source
                ));
            }
        }
    }
    out
}

/// The default the table shows, or what decides it.
fn shown_default(o: &crate::OptDef) -> String {
    if o.default.is_empty() {
        "(none)".into()
    } else {
        o.default.into()
    }
}

fn json_fields(s: &PhaseSpec) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(mut m)) => {
            m.remove("group");
            m
        }
        _ => serde_json::Map::new(),
    }
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_set(s: &PhaseSpec, key: &str) -> bool {
    json_fields(s).contains_key(key)
}

/// The job names of a phase of an fio file: its own or its groups'.
fn job_names(p: &PhaseSpec) -> Vec<String> {
    if p.group.is_empty() {
        p.name.iter().cloned().collect()
    } else {
        p.group.iter().filter_map(|g| g.name.clone()).collect()
    }
}

/// The names a key is written under in job files: its own, its aliases,
/// and the fio options that set it another way.
fn spellings(key: &str) -> Vec<String> {
    let mut v = vec![key.to_string()];
    if let Some(o) = crate::find_option(key) {
        v.extend(o.aliases.iter().map(|a| a.to_string()));
    }
    let more: &[&str] = match key {
        "direct" | "cache" => &["direct", "buffered"],
        "rwmixread" => &["rwmixwrite"],
        "size" => &["filesize"],
        "log_interval" => &["log_avg_msec"],
        "buffer_pattern" => &["zero_buffers", "buffer_compress_percentage"],
        "rw" => &["readwrite"],
        _ => &[],
    };
    v.extend(more.iter().map(|m| m.to_string()));
    v
}

/// The key of a `key = value` / `key=value` / bare `key` line.
fn line_key(l: &str) -> String {
    let l = l.trim();
    l.split('=')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The line of an fio file that set `key` for the jobs `names`: the last
/// one in a `[global]` section before the job or in the job's section.
fn fio_line(text: &str, names: &[String], key: &str) -> Option<usize> {
    if key == "name" {
        // A job is named by its section header.
        let header = format!("[{}]", names.first()?);
        return text.lines().position(|l| l.trim() == header).map(|i| i + 1);
    }
    let names_of = spellings(key);
    let mut section = String::new();
    let mut found = None;
    let mut last_job_end = false;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if let Some(h) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if names.iter().any(|n| n == &section) && !names.iter().any(|n| n == h.trim()) {
                last_job_end = true;
            }
            if last_job_end {
                break;
            }
            section = h.trim().to_string();
            continue;
        }
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        let in_scope = section == "global" || names.iter().any(|n| n == &section);
        if in_scope && names_of.contains(&line_key(l)) {
            found = Some(i + 1);
        }
    }
    found
}

/// The line of a TOML job file that set `key` for phase `index`: in its
/// `[[phase]]` table, else in `[global]`.
fn toml_line(text: &str, index: usize, key: &str) -> Option<usize> {
    let names_of = spellings(key);
    let (mut table, mut phase, mut in_global, mut in_phase) = (String::new(), 0usize, None, None);
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') {
            table = l.to_string();
            if l == "[[phase]]" {
                phase += 1;
            }
            continue;
        }
        if !names_of.contains(&line_key(l)) || l.starts_with('#') {
            continue;
        }
        if table == "[global]" {
            in_global = Some(i + 1);
        } else if table == "[[phase]]" && phase == index + 1 {
            in_phase = Some(i + 1);
        }
    }
    in_phase.or(in_global)
}

/// Defaults that depend on this machine: the lowest layer, so the job file
/// or a flag that chooses wins wherever it is set.
pub fn machine_defaults(
    over: &PhaseSpec,
    target: Option<&Path>,
    warnings: &mut Vec<String>,
) -> PhaseSpec {
    let mut machine = PhaseSpec::default();
    if let Some(size) = target.and_then(existing_size) {
        // As fio: an existing file or a block device is used whole unless
        // --size says otherwise.
        machine.size = Some(storlab_types::ByteSize(size));
    }
    if over.engine.is_none()
        && let Err(e) = crate::uring_available()
    {
        warnings.push(format!(
            "io_uring is not available ({e}); psync is the default engine"
        ));
        machine.engine = Some(storlab_types::EngineKind::Psync);
    }
    if over.cache.is_none() && over.direct.is_none() && !crate::probe_direct(target) {
        warnings.push(
            "the target does not support O_DIRECT; the default cache mode is cold (buffered, pages evicted before each phase)"
                .into(),
        );
        machine.cache = Some(storlab_types::CacheMode::Cold);
    }
    machine
}

/// The size of an existing regular file or block device (None otherwise,
/// or when it is empty or cannot be opened).
fn existing_size(path: &Path) -> Option<u64> {
    use std::io::Seek;
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok()?;
    let size = if meta.file_type().is_block_device() {
        std::fs::File::open(path)
            .ok()?
            .seek(std::io::SeekFrom::End(0))
            .ok()?
    } else if meta.is_file() {
        meta.len()
    } else {
        return None;
    };
    (size > 0).then_some(size)
}

#[cfg(test)]
mod tests {
    /// `--ior` wins over an fio job file, which wins over a profile, which
    /// wins over a job file; files are read through the front end's reader
    /// and named as given; nothing given is the flags' source.
    #[test]
    fn the_first_source_given_wins() {
        let read = |p: &Path, what: &str| Ok::<_, String>(format!("{what} {}", p.display()));
        let (f, j, prof) = (Path::new("a.fio"), Path::new("b.toml"), Path::new("p.toml"));
        let all = Given {
            ior: Some("[global]"),
            fio: Some(f),
            profile: Some(("[[phase]]", prof)),
            job: Some(j),
        };
        let flags = PhaseSpec::default();
        let pick = |g| Source::pick(g, &flags, read).unwrap();
        let toml = |text: &str, name: &str| Source::Toml {
            text: text.into(),
            name: name.into(),
        };
        assert_eq!(pick(all), toml("[global]", "--ior"));
        let no_ior = Given { ior: None, ..all };
        let fio = Source::Fio {
            text: "fio job file a.fio".into(),
            name: "a.fio".into(),
        };
        assert_eq!(pick(no_ior), fio);
        let profile = Given {
            fio: None,
            ..no_ior
        };
        assert_eq!(pick(profile), toml("[[phase]]", "p.toml"));
        let job = Given {
            profile: None,
            ..profile
        };
        assert_eq!(pick(job), toml("job file b.toml", "b.toml"));
        assert_eq!(pick(Given::default()), Source::Quick);
        let refused = Source::pick(no_ior, &flags, |_, _| Err("unreadable"));
        assert_eq!(refused, Err("unreadable"));
    }

    use super::*;

    fn flags(pairs: &[(&str, &str)]) -> PhaseSpec {
        crate::spec_from_pairs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn nothing_given_is_the_quick_check_with_the_flags_on_every_phase() {
        let job = build(None, None, &flags(&[("engine", "psync"), ("size", "1M")])).unwrap();
        let names: Vec<&str> = job.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["seq-write", "seq-read", "rand-read", "rand-write"]);
        assert!(job.phases.iter().all(|p| p.size_bytes == 1 << 20));
        assert!(job.target.is_none());
    }

    #[test]
    fn a_pattern_flag_makes_one_phase_and_the_job_file_beats_machine_defaults() {
        let job = build(None, None, &flags(&[("rw", "read"), ("engine", "psync")])).unwrap();
        assert_eq!(job.phases.len(), 1);
        let text =
            "target = \"/tmp/from-the-file\"\n[global]\nbs = \"64k\"\n[[phase]]\nrw = \"write\"\n";
        let job = build(
            Some((text, Path::new("j.toml"))),
            None,
            &flags(&[("engine", "psync")]),
        )
        .unwrap();
        assert_eq!(job.phases[0].max_bs(), 64 << 10);
        assert_eq!(job.target.as_deref(), Some(Path::new("/tmp/from-the-file")));
        // The command line's target wins over the file's.
        let job = build(
            Some((text, Path::new("j.toml"))),
            Some(Path::new("/tmp/given")),
            &flags(&[("engine", "psync"), ("bs", "8k")]),
        )
        .unwrap();
        assert_eq!(job.target.as_deref(), Some(Path::new("/tmp/given")));
        assert_eq!(job.phases[0].max_bs(), 8 << 10);
    }

    #[test]
    fn an_existing_file_is_used_whole() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, vec![0u8; 12288]).unwrap();
        let job = build(
            None,
            Some(&f),
            &flags(&[("rw", "read"), ("engine", "psync")]),
        )
        .unwrap();
        assert_eq!(job.phases[0].size_bytes, 12288);
        let job = build(
            None,
            Some(&f),
            &flags(&[("rw", "read"), ("engine", "psync"), ("size", "4k")]),
        )
        .unwrap();
        assert_eq!(job.phases[0].size_bytes, 4096);
    }

    #[test]
    fn fio_spellings_of_the_target_are_checked() {
        let d = tempfile::tempdir().unwrap();
        let e = pick_target(None, Some(d.path()), None).unwrap_err();
        assert!(
            e.to_string().contains("is a directory; use --directory"),
            "{e}"
        );
        let missing = d.path().join("nope");
        let e = pick_target(None, None, Some(&missing)).unwrap_err();
        assert!(e.to_string().contains("not an existing directory"), "{e}");
        assert_eq!(
            pick_target(None, None, Some(d.path())).unwrap().as_deref(),
            Some(d.path())
        );
    }

    #[test]
    fn a_bad_fio_job_names_its_file() {
        let text = "[j]\nrw=read\nbs=0\n";
        let e = build_fio(text, "x.fio", None, &PhaseSpec::default()).unwrap_err();
        let chain = format!(
            "{e}: {}",
            std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        // Refused while reading the file (the vocabulary's bound on bs),
        // naming the file, its section and the value.
        assert!(
            chain.starts_with("x.fio: [j]: invalid bs 0: from 512"),
            "{chain}"
        );
    }

    /// A random bssplit phase says how storlab differs from fio; a single
    /// block size or a sequential split says nothing.
    #[test]
    fn a_random_bssplit_job_carries_the_note() {
        let f = |pairs: &[(&str, &str)]| build(None, None, &flags(pairs)).unwrap().warnings;
        let w = f(&[
            ("rw", "randrw"),
            ("bssplit", "4k/50:64k/50"),
            ("engine", "psync"),
        ]);
        assert!(
            w.iter().any(|w| w.contains("fio's random map shrinks")),
            "{w:?}"
        );
        let w = f(&[
            ("rw", "randrw"),
            ("bssplit", "4k/50:64k/50"),
            ("engine", "psync"),
            ("random_with_replacement", "1"),
        ]);
        let n: Vec<_> = w.iter().filter(|w| w.starts_with("bssplit:")).collect();
        assert!(n.len() == 1 && !n[0].contains("random map"), "{w:?}");
        for pairs in [
            &[("rw", "randrw"), ("bs", "4k"), ("engine", "psync")][..],
            &[
                ("rw", "write"),
                ("bssplit", "4k/50:64k/50"),
                ("engine", "psync"),
            ],
        ] {
            assert!(
                !f(pairs).iter().any(|w| w.starts_with("bssplit:")),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn groups_are_refused_across_processes() {
        let mut over = flags(&[("engine", "psync")]);
        over.group = vec![crate::parse_group_arg("rw=read numjobs=2").unwrap()];
        let job = build(None, None, &over).unwrap();
        let e = job.without_groups().unwrap_err().to_string();
        assert!(
            e.contains("need their ranks") && e.contains("--group-ranks"),
            "{e}"
        );
        // With rank sets they are run by the ranks, and refused alone.
        over.group_ranks = Some("0-1".into());
        let job = build(None, None, &over).unwrap();
        assert_eq!(job.phases[0].groups[0].ranks, [0, 1]);
        let e = job.clone().without_rank_sets().unwrap_err().to_string();
        assert!(e.contains("not a multi-client run"), "{e}");
        assert!(job.without_groups().is_ok());
    }
}
