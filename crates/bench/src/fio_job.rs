//! fio job files (`storlab bench --fio-job FILE.fio`): fio's INI format read
//! into storlab phases ([`FioJobFile`]).
//!
//! * `[global]` sections set defaults for the job sections after them (as
//!   in fio, a later `[global]` changes only the jobs that follow it);
//!   every other section is one job, which becomes one storlab phase named
//!   after it.
//! * fio starts the jobs that no `stonewall` separates together; so does
//!   storlab: such jobs become the groups of one phase (named `a+b` after
//!   its jobs), started at one epoch, each reported on its own. A job with
//!   `stonewall` (or `wait_for_previous`) starts the next phase, after
//!   every job before it has finished; `wait_for=NAME` naming a job of the
//!   current phase does the same (storlab waits for the whole phase, not
//!   only NAME). `group_reporting` reports one line per reporting group
//!   instead of one per job, as fio does; `new_group` starts a new
//!   reporting group (the concurrent jobs that no `new_group` separates
//!   are one line, their histograms merged exactly).
//! * Every option storlab supports is mapped (the table in
//!   [`map_option`]); any other option is refused by name, with its line —
//!   never ignored silently.
//! * Values follow fio: sizes by fio's `kb_base` rules (with the default
//!   `kb_base=1024`, `4k` = `4KB` = 4096 but `4KiB` = 4000; with
//!   `kb_base=1000` the SI/IEC meanings), times with fio's units (a bare
//!   `runtime` is seconds, a bare `thinktime` microseconds), and fio's
//!   defaults where they differ from storlab's: buffered I/O (`direct=0`,
//!   the page cache invalidated first, which is storlab's `cache = cold`),
//!   the `psync` engine and no end-of-job fsync.

use crate::options::{PhaseSpec, SpecError, spec_from_pairs};
use storlab_types::fio_size;

/// A fio job file turned into storlab phases.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FioJobFile {
    /// One per fio job section, in order, each fully layered over the
    /// `[global]` sections before it and fio's defaults.
    pub phases: Vec<PhaseSpec>,
    /// `filename=` (a file or device) or `directory=`, when the file names one.
    pub target: Option<String>,
    /// How fio options were mapped where the mapping is not one to one.
    pub notes: Vec<String>,
}

/// One `key[=value]` line.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    key: String,
    value: Option<String>,
    line: usize,
}

#[derive(Debug, Clone, PartialEq)]
struct Section {
    name: String,
    line: usize,
    entries: Vec<Entry>,
}

fn fail<T>(file: &str, line: usize, msg: impl std::fmt::Display) -> Result<T, SpecError> {
    Err(SpecError(format!("{file}:{line}: {msg}")))
}

/// A value without one pair of matching quotes around it: fio takes
/// `ioengine="psync"` and `bs='4k'` as `psync` and `4k`.
fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// Split the text into sections of `key[=value]` lines.
fn lex(text: &str, file: &str) -> Result<Vec<Section>, SpecError> {
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return fail(
                    file,
                    line,
                    format!("'{l}' is not a section header: write [name]"),
                );
            };
            let name = name.trim();
            if name.is_empty() {
                return fail(file, line, "a section needs a name: [global] or [jobname]");
            }
            sections.push(Section {
                name: name.to_string(),
                line,
                entries: Vec::new(),
            });
            continue;
        }
        if l.starts_with("include ") {
            return fail(
                file,
                line,
                "fio's 'include' is not supported: paste the included options into this file",
            );
        }
        let Some(sec) = sections.last_mut() else {
            return fail(
                file,
                line,
                format!("'{l}' comes before any section: put options under [global] or a [job]"),
            );
        };
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(unquote(v.trim()).to_string())),
            None => (l, None),
        };
        if key.is_empty() {
            return fail(file, line, format!("'{l}' has no option name"));
        }
        if value.as_deref().is_some_and(|v| v.contains('$')) {
            return fail(
                file,
                line,
                format!(
                    "{key}: fio's $VARIABLE expansion is not supported: write the value itself"
                ),
            );
        }
        sec.entries.push(Entry {
            key: key.to_ascii_lowercase(),
            value,
            line,
        });
    }
    Ok(sections)
}

/// The fio options of one job after layering (`[global]`s, then the job),
/// as (key, value, line) with the last setting of each key winning.
type Layered = Vec<Entry>;

fn set(acc: &mut Layered, e: &Entry) {
    if let Some(old) = acc.iter_mut().find(|o| o.key == e.key) {
        *old = e.clone();
    } else {
        acc.push(e.clone());
    }
}

/// fio's yes/no: a bare key or `=1` is on, `=0` off.
fn fio_flag(e: &Entry, file: &str) -> Result<bool, SpecError> {
    match e.value.as_deref().map(str::trim) {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(v) => fail(file, e.line, format!("{}: '{v}' is not 0 or 1", e.key)),
    }
}

fn need<'a>(e: &'a Entry, file: &str) -> Result<&'a str, SpecError> {
    match e.value.as_deref() {
        Some(v) if !v.is_empty() => Ok(v),
        _ => fail(
            file,
            e.line,
            format!("{} needs a value: {}=VALUE", e.key, e.key),
        ),
    }
}

/// What a job says besides its phase options.
#[derive(Debug, Default)]
struct JobExtras {
    stonewall: bool,
    /// `wait_for=NAME`: start once that job has finished.
    wait_for: Option<(String, usize)>,
    target: Option<(String, usize)>,
}

/// Map one fio option into storlab (key, value) pairs; the table of every
/// fio option storlab understands. Anything else is refused by name.
// long-function: one match arm per fio option: the mapping table itself.
fn map_option(
    e: &Entry,
    kb_base: u64,
    file: &str,
    pairs: &mut Vec<(String, String)>,
    extras: &mut JobExtras,
    notes: &mut Vec<String>,
) -> Result<(), SpecError> {
    let size = |v: &str| fio_size(v, kb_base).or_else(|m| fail(file, e.line, m));
    let mut put = |k: &str, v: String| pairs.push((k.to_string(), v));
    let key = e.key.as_str();
    match key {
        // Handled by the caller or accepted because storlab already behaves so.
        "kb_base" | "description" | "thread" | "refill_buffers" | "write_bw_log"
        | "write_iops_log" | "write_lat_log" | "per_job_logs" => {}
        "name" => put("name", need(e, file)?.to_string()),
        // Access patterns (issue 27; the `dist` block): skewed random
        // offsets, offset modifiers, per-direction block sizes and rates,
        // and byte or I/O limits.
        "random_distribution" => {
            let v = need(e, file)?;
            let v = match v.strip_prefix("zoned_abs:") {
                // Zone sizes in fio's units, passed on as bytes.
                Some(zones) => {
                    let mut parts = Vec::new();
                    for z in zones.split(':').filter(|z| !z.trim().is_empty()) {
                        let (a, sz) = z.split_once('/').ok_or_else(|| {
                            SpecError(format!(
                                "{file}:{}: random_distribution={v}: zone '{z}' is not ACCESS/SIZE",
                                e.line
                            ))
                        })?;
                        parts.push(format!("{a}/{}", size(sz)?));
                    }
                    format!("zoned_abs:{}", parts.join(":"))
                }
                None => v.to_string(),
            };
            put("random_distribution", v);
        }
        "rw" | "readwrite" if e.value.as_deref().is_some_and(|v| v.contains(':')) => {
            let v = need(e, file)?;
            let (pattern, n) = v.split_once(':').unwrap_or((v, ""));
            let random =
                storlab_types::RwMode::parse(pattern.trim()).is_some_and(|m| m.is_random());
            if random {
                return fail(
                    file,
                    e.line,
                    format!(
                        "rw={v}: fio's ':N' on a random pattern (N sequential I/Os per random offset) \
                         is not supported: drop ':{n}'"
                    ),
                );
            }
            let (neg, mag) = match n.trim().strip_prefix('-') {
                Some(m) => (true, m),
                None => (false, n.trim()),
            };
            let bytes = size(mag)?;
            put("rw", pattern.trim().to_string());
            put("seq_skip", format!("{}{bytes}", if neg { "-" } else { "" }));
        }
        "bs" | "blocksize" if e.value.as_deref().is_some_and(|v| v.contains(',')) => {
            let v = need(e, file)?;
            let sides: Vec<&str> = v.split(',').map(str::trim).collect();
            if sides.len() > 3 {
                return fail(file, e.line, format!("{key}={v}: give READ,WRITE[,TRIM]"));
            }
            if sides.get(2).is_some_and(|t| !t.is_empty()) {
                notes.push(format!(
                    "{key}={v}: the trim size is not used (storlab does no trims)"
                ));
            }
            if !sides[0].is_empty() {
                put("bs", size(sides[0])?.to_string());
            }
            if let Some(w) = sides.get(1).filter(|w| !w.is_empty()) {
                put("bs_write", size(w)?.to_string());
            }
        }
        "rate" => {
            let v = need(e, file)?;
            let sides: Vec<&str> = v.split(',').map(str::trim).collect();
            if sides.len() > 3 {
                return fail(file, e.line, format!("rate={v}: give READ,WRITE[,TRIM]"));
            }
            if sides.get(2).is_some_and(|t| !t.is_empty()) {
                notes.push(format!(
                    "rate={v}: the trim cap is not used (storlab does no trims)"
                ));
            }
            let bytes = |t: &str| -> Result<String, SpecError> {
                Ok(if t.is_empty() {
                    String::new()
                } else {
                    size(t)?.to_string()
                })
            };
            let text = match sides.as_slice() {
                [both] => bytes(both)?,
                [r, w, ..] => format!("{},{}", bytes(r)?, bytes(w)?),
                [] => String::new(),
            };
            put("rate", text);
        }
        "rate_process" => put("rate_process", need(e, file)?.to_string()),
        "io_size" | "io_limit" => put("io_size", size(need(e, file)?)?.to_string()),
        "number_ios" => put("number_ios", need(e, file)?.to_string()),
        "rw" | "readwrite" => {
            let v = need(e, file)?;
            if v.contains(':') {
                return fail(
                    file,
                    e.line,
                    format!("rw={v}: fio's offset modifier (':N') is not supported"),
                );
            }
            put("rw", v.to_string());
        }
        "rwmixread" => put("rwmixread", need(e, file)?.to_string()),
        "rwmixwrite" => {
            let w: u32 = need(e, file)?
                .parse()
                .or_else(|_| fail(file, e.line, "rwmixwrite must be a whole percentage"))?;
            if w > 100 {
                return fail(file, e.line, "rwmixwrite must be from 0 to 100");
            }
            put("rwmixread", (100 - w).to_string());
        }
        "bs" | "blocksize" => {
            let v = need(e, file)?;
            if v.contains(',') {
                return fail(
                    file,
                    e.line,
                    format!(
                        "{key}={v}: separate read/write block sizes are not supported; give one size"
                    ),
                );
            }
            put("bs", size(v)?.to_string());
        }
        "bssplit" => {
            let v = need(e, file)?;
            if v.contains(',') {
                return fail(
                    file,
                    e.line,
                    format!(
                        "bssplit={v}: separate read/write splits are not supported; give one split"
                    ),
                );
            }
            let mut parts = Vec::new();
            for part in v.split(':').filter(|p| !p.trim().is_empty()) {
                let (b, pct) = part.split_once('/').ok_or_else(|| {
                    SpecError(format!(
                        "{file}:{}: bssplit={v}: '{part}' has no '/PERCENT'",
                        e.line
                    ))
                })?;
                if pct.trim().is_empty() {
                    return fail(
                        file,
                        e.line,
                        format!("bssplit={v}: every size needs its percentage ('{part}' has none)"),
                    );
                }
                parts.push(format!("{}/{}", size(b)?, pct.trim()));
            }
            put("bssplit", parts.join(":"));
        }
        "size" | "filesize" => {
            let v = need(e, file)?;
            if v.ends_with('%') {
                return fail(
                    file,
                    e.line,
                    format!("{key}={v}: a percentage of the device is not supported; give a size"),
                );
            }
            put("size", size(v)?.to_string());
        }
        "numjobs" | "iodepth" | "loops" | "nrfiles" | "rate_iops" | "fsync" => {
            let v = need(e, file)?;
            if v.contains(',') {
                return fail(
                    file,
                    e.line,
                    format!("{key}={v}: separate read/write values are not supported"),
                );
            }
            put(key, v.to_string());
        }
        "iodepth_batch" | "iodepth_batch_submit" => put("iodepth_batch", need(e, file)?.into()),
        "ioengine" => {
            let v = need(e, file)?;
            let engine = match v {
                "psync" | "pvsync" | "io_uring" | "libaio" | "null" => v,
                "sync" => {
                    notes.push(
                        "ioengine=sync runs as psync (pread/pwrite at the same offsets)".into(),
                    );
                    "psync"
                }
                _ => {
                    return fail(
                        file,
                        e.line,
                        format!(
                            "ioengine={v} is not supported: use libaio, io_uring, psync, sync or null"
                        ),
                    );
                }
            };
            put(
                "engine",
                if engine == "pvsync" { "psync" } else { engine }.into(),
            );
        }
        "direct" => put("direct", u8::from(fio_flag(e, file)?).to_string()),
        "buffered" => put("direct", u8::from(!fio_flag(e, file)?).to_string()),
        "invalidate" => {
            if !fio_flag(e, file)? {
                return fail(
                    file,
                    e.line,
                    "invalidate=0 is not supported: storlab's buffered I/O always starts cold (evicted) or warm (cache=warm)",
                );
            }
        }
        "runtime" | "ramp_time" => put(key, need(e, file)?.to_string()),
        "time_based" | "end_fsync" | "fallocate" => {
            let on = if key == "fallocate" {
                !matches!(e.value.as_deref(), Some("none" | "0"))
            } else {
                fio_flag(e, file)?
            };
            put(key, u8::from(on).to_string());
        }
        "norandommap" => put(
            "random_with_replacement",
            u8::from(fio_flag(e, file)?).to_string(),
        ),
        "randseed" => put("seed", need(e, file)?.to_string()),
        "verify" => {
            let v = e.value.as_deref().unwrap_or("crc32c");
            let on = !matches!(v, "0" | "null");
            if on {
                notes.push(format!(
                    "verify={v}: storlab checks its own per-block checksum and header"
                ));
            }
            put("verify", u8::from(on).to_string());
        }
        "zero_buffers" => {
            if fio_flag(e, file)? {
                put("buffer_pattern", "zero".into());
            }
        }
        "buffer_compress_percentage" => {
            put("buffer_pattern", format!("compressible:{}", need(e, file)?))
        }
        "sqthread_poll" => put("sqpoll", u8::from(fio_flag(e, file)?).to_string()),
        "fixedbufs" | "registerfiles" => {
            put("registered", u8::from(fio_flag(e, file)?).to_string())
        }
        "thinktime" => put("thinktime", need(e, file)?.to_string()),
        "log_avg_msec" => {
            let ms: u64 = need(e, file)?
                .parse()
                .or_else(|_| fail(file, e.line, "log_avg_msec must be a whole number of ms"))?;
            put("log_interval", format!("{ms}ms"));
        }
        "steadystate" | "ss" => put("steadystate", need(e, file)?.to_string()),
        "steadystate_duration" | "ss_dur" => put("steadystate_duration", need(e, file)?.into()),
        "steadystate_ramp_time" | "ss_ramp" => put("steadystate_ramp_time", need(e, file)?.into()),
        "stonewall" | "wait_for_previous" => extras.stonewall = fio_flag(e, file)?,
        // One line per reporting group; new_group starts the next one.
        "group_reporting" | "new_group" => put(key, u8::from(fio_flag(e, file)?).to_string()),
        "wait_for" => extras.wait_for = Some((need(e, file)?.to_string(), e.line)),
        "filename" | "directory" => {
            let v = need(e, file)?;
            if key == "filename" && v.contains(':') {
                return fail(
                    file,
                    e.line,
                    format!(
                        "filename={v}: several files (':') are not supported; use one file or a directory"
                    ),
                );
            }
            extras.target = Some((v.to_string(), e.line));
        }
        _ => {
            return fail(
                file,
                e.line,
                format!(
                    "fio option '{key}' is not supported by storlab (it would change the workload, so it is not ignored): \
                     remove it, or see `storlab bench --help` for what storlab can run"
                ),
            );
        }
    }
    Ok(())
}

/// The job names of a phase: its groups', or its own.
fn job_names(p: &PhaseSpec) -> Vec<String> {
    if p.group.is_empty() {
        p.name.iter().cloned().collect()
    } else {
        p.group.iter().filter_map(|g| g.name.clone()).collect()
    }
}

/// Whether a job's `wait_for=NAME` makes it wait for a job of the phase
/// being built (then it starts the next phase, as `stonewall` does: storlab
/// phases start together, so it waits for the whole phase). A job of an
/// earlier phase has finished already; an unknown name is refused.
fn waits_for_current(
    phases: &[PhaseSpec],
    extras: &JobExtras,
    file: &str,
    section: &str,
) -> Result<bool, SpecError> {
    let Some((name, line)) = &extras.wait_for else {
        return Ok(false);
    };
    if phases.last().is_some_and(|p| job_names(p).contains(name)) {
        return Ok(true);
    }
    if phases.iter().any(|p| job_names(p).contains(name)) {
        return Ok(false);
    }
    fail(
        file,
        *line,
        format!("[{section}]: wait_for={name}: no job before it is named {name}"),
    )
}

/// Add a job: after a `stonewall` (or `wait_for` a job of the current
/// phase), or as the first job, it starts a new phase; otherwise fio runs
/// it at the same time as the jobs before it, so it joins their phase as
/// one more group (the phase is named after its jobs, `a+b`).
fn place_job(out: &mut FioJobFile, spec: PhaseSpec, waits: bool) {
    match out.phases.last_mut() {
        Some(last) if !waits => {
            if last.group.is_empty() {
                let first = std::mem::take(last);
                last.name = first.name.clone();
                last.group.push(first);
            }
            if let (Some(n), Some(j)) = (&mut last.name, &spec.name) {
                n.push('+');
                n.push_str(j);
            }
            last.group.push(spec);
        }
        _ => out.phases.push(spec),
    }
}

impl FioJobFile {
    /// Read a fio job file's text; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<FioJobFile, SpecError> {
        let sections = lex(text, file)?;
        let mut global: Layered = Vec::new();
        let mut out = FioJobFile::default();
        let mut target: Option<(String, usize)> = None;
        for sec in &sections {
            if sec.name == "global" {
                for e in &sec.entries {
                    set(&mut global, e);
                }
                continue;
            }
            let mut opts = global.clone();
            for e in &sec.entries {
                set(&mut opts, e);
            }
            let kb_base = match opts.iter().find(|e| e.key == "kb_base") {
                None => 1024,
                Some(e) => match need(e, file)? {
                    "1024" => 1024,
                    "1000" => 1000,
                    v => return fail(file, e.line, format!("kb_base={v}: use 1024 or 1000")),
                },
            };
            // fio's defaults where they differ from storlab's.
            let mut pairs: Vec<(String, String)> = vec![
                ("name".into(), sec.name.clone()),
                ("engine".into(), "psync".into()),
                ("direct".into(), "0".into()),
                ("end_fsync".into(), "0".into()),
                // fio's jobs share a reporting group until new_group.
                ("new_group".into(), "0".into()),
            ];
            let mut extras = JobExtras::default();
            for e in &opts {
                map_option(e, kb_base, file, &mut pairs, &mut extras, &mut out.notes)?;
            }
            let waits = waits_for_current(&out.phases, &extras, file, &sec.name)?;
            if let Some((t, line)) = extras.target {
                match &target {
                    Some((old, _)) if *old != t => {
                        return fail(
                            file,
                            line,
                            format!(
                                "[{}] names target {t} but an earlier job names {old}: storlab runs one job file on one target",
                                sec.name
                            ),
                        );
                    }
                    _ => target = Some((t, line)),
                }
            }
            // The phase name from `name=` wins over the section's.
            let spec = spec_from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .map_err(|e| SpecError(format!("{file}: [{}]: {}", sec.name, e.0)))?;
            place_job(&mut out, spec, extras.stonewall || waits);
        }
        if out.phases.is_empty() {
            return Err(SpecError(format!(
                "{file}: no job sections: add at least one [jobname] section"
            )));
        }
        out.target = target.map(|t| t.0);
        out.notes.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::resolve_phase;
    use proptest::prelude::*;
    use storlab_types::{CacheMode, EngineKind, RwMode};

    const FILE: &str = "\
; a typical site file
[global]
ioengine=libaio
direct=1
size=64m
bs=4k
filename=/dev/nvme0n1
group_reporting

[seq-write]
rw=write
bs=1m
iodepth=16

[rand-read]
stonewall
rw=randread
iodepth=32
runtime=30
time_based
";

    #[test]
    fn global_sections_stonewall_and_fio_units() {
        let f = FioJobFile::parse(FILE, "site.fio").unwrap();
        assert_eq!(f.target.as_deref(), Some("/dev/nvme0n1"));
        assert_eq!(f.phases.len(), 2);
        let w = resolve_phase(&f.phases[0], 0).unwrap();
        assert_eq!(w.name, "seq-write");
        assert_eq!(w.rw, RwMode::Write);
        assert_eq!(w.bs[0].bs_bytes, 1 << 20);
        assert_eq!(w.size_bytes, 64 << 20);
        assert_eq!(w.engine, EngineKind::Libaio);
        assert_eq!(w.cache, CacheMode::Direct);
        assert!(!w.end_fsync, "fio's default end_fsync=0");
        let r = resolve_phase(&f.phases[1], 1).unwrap();
        assert_eq!(r.bs[0].bs_bytes, 4096, "from [global]");
        assert_eq!(r.iodepth, 32);
        assert_eq!(r.runtime_ns, Some(30_000_000_000));
        assert!(r.time_based);
    }

    /// Jobs no `stonewall` separates run together: one phase of groups
    /// (this file was refused before: "fio would run this job at the same
    /// time as the one before").
    #[test]
    fn concurrent_jobs_become_groups_and_stonewall_starts_a_phase() {
        let text = "[global]\nsize=1m\nbs=4k\n\
                    [reader]\nrw=randread\n\
                    [writer]\nrw=write\nnew_group\n\
                    [after]\nstonewall\nrw=read\n\
                    [tail]\nwait_for=after\nrw=write\n\
                    [beside]\nwait_for=writer\nrw=read\n";
        let f = FioJobFile::parse(text, "mix.fio").unwrap();
        assert_eq!(f.phases.len(), 3, "{:?}", f.phases);
        let p = resolve_phase(&f.phases[0], 0).unwrap();
        assert_eq!(p.name, "reader+writer");
        let names: Vec<&str> = p.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["reader", "writer"]);
        assert_eq!(p.groups[0].rw, RwMode::RandRead);
        assert_eq!(p.groups[1].rw, RwMode::Write);
        assert_eq!(
            p.groups[1].engine,
            EngineKind::Psync,
            "fio's default per job"
        );
        assert_eq!(p.numjobs, 2);
        // [after] stonewalls: a phase of its own. [tail] waits for [after],
        // a job of the current phase: the next phase. [beside] waits for
        // [writer], finished two phases ago: it runs beside [tail].
        let a = resolve_phase(&f.phases[1], 1).unwrap();
        assert_eq!(a.name, "after");
        assert!(a.groups.is_empty());
        let t = resolve_phase(&f.phases[2], 2).unwrap();
        assert_eq!(t.name, "tail+beside");
        assert_eq!(t.groups.len(), 2);
    }

    /// `group_reporting` and `new_group` are honoured: the jobs no
    /// `new_group` separates share a reporting group.
    #[test]
    fn group_reporting_and_new_group_map_to_reporting_groups() {
        let text = "[global]\nsize=1m\ngroup_reporting\n[a]\nrw=read\n[b]\nrw=read\n\
                    [c]\nnew_group\nrw=write\n[d]\nrw=write\n";
        let f = FioJobFile::parse(text, "g.fio").unwrap();
        let p = resolve_phase(&f.phases[0], 0).unwrap();
        assert!(p.group_reporting);
        let shares: Vec<bool> = p.groups.iter().map(|g| g.shares_report).collect();
        assert_eq!(shares, [false, true, false, true]);
        let sets = crate::groups::reporting_sets(&p);
        assert_eq!(sets, vec![0..2, 2..4]);
        let m = crate::groups::merged_params(&p.groups[0..2]).unwrap();
        assert_eq!((m.name.as_str(), m.numjobs), ("a+b", 2));
        // Without group_reporting nothing is merged in the report.
        let f = FioJobFile::parse(&text.replace("group_reporting\n", ""), "g.fio").unwrap();
        assert!(!resolve_phase(&f.phases[0], 0).unwrap().group_reporting);
    }

    #[test]
    fn fio_defaults_are_buffered_psync() {
        let f = FioJobFile::parse("[j]\nrw=read\nsize=1m\n", "x.fio").unwrap();
        let p = resolve_phase(&f.phases[0], 0).unwrap();
        assert_eq!(p.engine, EngineKind::Psync);
        assert_eq!(p.cache, CacheMode::Cold);
        let f = FioJobFile::parse("[global]\nkb_base=1000\n[j]\nsize=1m\nbs=4KiB\n", "x").unwrap();
        let p = resolve_phase(&f.phases[0], 0).unwrap();
        assert_eq!(p.size_bytes, 1_000_000 / 4096 * 4096);
        assert_eq!(p.bs[0].bs_bytes, 4096);
    }

    #[test]
    fn quoted_values_are_read_as_fio_reads_them() {
        let quoted = FioJobFile::parse(
            "[global]\nioengine=\"psync\"\n[j]\nrw = 'randread'\nbs='4k'\nsize=\"1m\"\n",
            "q.fio",
        )
        .unwrap();
        let plain = FioJobFile::parse(
            "[global]\nioengine=psync\n[j]\nrw=randread\nbs=4k\nsize=1m\n",
            "p.fio",
        )
        .unwrap();
        assert_eq!(quoted.phases, plain.phases);
        // Only a matching pair is removed.
        assert_eq!(unquote("\"4k'"), "\"4k'");
        assert_eq!(unquote("\""), "\"");
        assert_eq!(unquote("''"), "");
    }

    #[test]
    fn refusals_name_the_option_and_line() {
        let e = FioJobFile::parse("[j]\nrw=read\nzonemode=zbd\n", "z.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("z.fio:3") && e.contains("'zonemode'"), "{e}");
        let e = FioJobFile::parse("[a]\nrw=read\n[b]\nwait_for=zz\n", "c.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("c.fio:4") && e.contains("wait_for=zz"), "{e}");
        let e = FioJobFile::parse("size=1m\n", "c.fio").unwrap_err().0;
        assert!(e.contains("before any section"), "{e}");
        let e = FioJobFile::parse("[global]\nsize=1m\n", "c.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("no job sections"), "{e}");
        // bs=R,W runs now (issue 27): reads at 4k, writes at 8k.
        let f = FioJobFile::parse("[j]\nbs=4k,8k\n", "c.fio").unwrap();
        assert_eq!(f.phases[0].bs_write.map(|b| b.0), Some(8192));
        let e = FioJobFile::parse("[j]\nfilename=${DEV}\n", "c.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("$VARIABLE"), "{e}");
        let e = FioJobFile::parse("[j]\nioengine=posixaio\n", "c.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("ioengine=posixaio"), "{e}");
    }

    #[test]
    fn mapped_options() {
        let f = FioJobFile::parse(
            "[j]\nrw=randrw\nrwmixwrite=30\nbssplit=4k/50:64k/50\nnorandommap\nbuffered=0\n\
             log_avg_msec=500\nss=iops_slope:1%\nss_dur=10s\nthinktime=10\nloops=2\nsize=1m\n",
            "m.fio",
        )
        .unwrap();
        let p = resolve_phase(&f.phases[0], 0).unwrap();
        assert_eq!(p.rwmixread, 70);
        assert_eq!(p.bs.len(), 2);
        assert_eq!(p.bs[1].bs_bytes, 65536);
        assert!(p.random_with_replacement);
        assert_eq!(p.cache, CacheMode::Direct);
        assert_eq!(p.log_interval_ns, 500_000_000);
        assert_eq!(p.steadystate.unwrap().window_ns, 10_000_000_000);
        assert_eq!(p.thinktime_ns, 10_000, "a bare thinktime is microseconds");
        assert_eq!(p.loops, 2);
    }

    proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panic(s in "(\\[[a-z]{0,6}\\]\n|[a-z_]{1,12}(=[0-9a-zA-Z%:/.,]{0,8})?\n|;.*\n){0,12}") {
            let _ = FioJobFile::parse(&s, "p.fio");
        }
    }
}
