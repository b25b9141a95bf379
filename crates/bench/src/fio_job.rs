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
//!   [`map_option`] and [`map_job_option`]); any other option is refused by
//!   name, with its `file:line` and what to write instead ([`refusal`]) —
//!   never ignored silently.
//! * As in fio, a line ends at its first `;` or `#`; `${VAR}` and fio's
//!   keywords (`$ncpus`, ...) are expanded in values and `include FILE`
//!   reads options in place ([`source`]); options apply in file order, so
//!   the last setting wins, except `filename=`, which fio adds as one more
//!   file (refused when it names a second file). See docs/FIO.md.
//! * Values follow fio: sizes by fio's `kb_base` rules (with the default
//!   `kb_base=1024`, `4k` = `4KB` = 4096 but `4KiB` = 4000; with
//!   `kb_base=1000` the SI/IEC meanings), times with fio's units (a bare
//!   `runtime` is seconds, a bare `thinktime` microseconds), and fio's
//!   defaults where they differ from storlab's: buffered I/O (`direct=0`,
//!   the page cache invalidated first, which is storlab's `cache = cold`;
//!   `invalidate=0` is `cache = buffered`),
//!   the `psync` engine and no end-of-job fsync.

mod bsrange;
mod fioverify;
mod source;

pub use source::{JobSource, Keyword, System};

use crate::options::{PhaseSpec, SpecError, spec_from_pairs};
use source::expand;
use std::path::{Path, PathBuf};
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
    /// The file the line is in: the job file or one it includes.
    file: String,
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

/// The text of a line without fio's comments: fio cuts every line at its
/// first `;` or `#` (`strip_blank_end` in `parse.c`), so `numjobs=4 ; four
/// threads` is `numjobs=4`.
fn strip_comment(raw: &str) -> &str {
    raw.find([';', '#']).map_or(raw, |i| &raw[..i]).trim()
}

/// How deep `include`s may nest (a cycle is refused before this).
const MAX_INCLUDE_DEPTH: usize = 16;

/// The file an `include NAME` line names, as fio finds it
/// (`__parse_jobs_ini`): NAME as given (from the current directory) when
/// it exists, else NAME in the including file's directory.
fn include_path(name: &str, from: &str, src: &dyn JobSource) -> PathBuf {
    let given = Path::new(name);
    if given.is_absolute() || src.exists(given) {
        return given.to_path_buf();
    }
    match Path::new(from).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(given),
        _ => given.to_path_buf(),
    }
}

/// Split the text into sections of `key[=value]` lines, reading `include`d
/// files in place and expanding `${VAR}` and fio's keywords in values.
fn lex(text: &str, file: &str, src: &dyn JobSource) -> Result<Vec<Section>, SpecError> {
    let mut sections = Vec::new();
    let mut stack = vec![src.identity(Path::new(file))];
    lex_into(text, file, src, &mut sections, &mut stack)?;
    Ok(sections)
}

/// One file's lines into `sections`; `stack` holds the files being read
/// (the first is the job file), so an include cycle is found. As in fio,
/// an included file holds options only, read into the section of its
/// `include` line.
fn lex_into(
    text: &str,
    file: &str,
    src: &dyn JobSource,
    sections: &mut Vec<Section>,
    stack: &mut Vec<PathBuf>,
) -> Result<(), SpecError> {
    let nested = stack.len() > 1;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = strip_comment(raw);
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            if nested {
                return fail(
                    file,
                    line,
                    format!(
                        "'{l}': an included file holds options only, no sections (fio refuses \
                         it too): move the section into the including file"
                    ),
                );
            }
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
        if let Some(name) = l
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            include(name.trim(), file, line, src, sections, stack)?;
            continue;
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
        let value = match value {
            Some(v) if v.contains('$') => {
                Some(expand(&v, src).or_else(|m| fail(file, line, format!("{key}={v}: {m}")))?)
            }
            v => v,
        };
        if let Some(v) = value.as_deref().filter(|v| v.starts_with('('))
            && !matches!(key, "description" | "name")
        {
            return fail(
                file,
                line,
                format!(
                    "{key}={v}: fio's arithmetic in parentheses is not supported: write the result \
                     (mind that fio counts a bare number in a time expression in microseconds)"
                ),
            );
        }
        sec.entries.push(Entry {
            key: key.to_ascii_lowercase(),
            value,
            line,
            file: file.to_string(),
        });
    }
    Ok(())
}

/// Read the file an `include` line names into the current section.
fn include(
    name: &str,
    file: &str,
    line: usize,
    src: &dyn JobSource,
    sections: &mut Vec<Section>,
    stack: &mut Vec<PathBuf>,
) -> Result<(), SpecError> {
    if name.is_empty() {
        return fail(file, line, "include needs a file: include FILE");
    }
    if sections.is_empty() {
        return fail(
            file,
            line,
            format!("include {name} comes before any section: put it under [global] or a [job]"),
        );
    }
    let path = include_path(name, file, src);
    let id = src.identity(&path);
    if stack.contains(&id) {
        return fail(
            file,
            line,
            format!(
                "include {name}: {} is already being read (an include cycle): remove this include",
                path.display()
            ),
        );
    }
    if stack.len() > MAX_INCLUDE_DEPTH {
        return fail(
            file,
            line,
            format!("include {name}: includes nest more than {MAX_INCLUDE_DEPTH} deep"),
        );
    }
    let text = src.read(&path).or_else(|e| {
        fail(
            file,
            line,
            format!("include {name}: cannot read {}: {e}", path.display()),
        )
    })?;
    stack.push(id);
    let shown = path.display().to_string();
    lex_into(&text, &shown, src, sections, stack)?;
    stack.pop();
    Ok(())
}

/// The fio options of one job after layering (`[global]`s, then the job),
/// as (key, value, line) with the last setting of each key winning.
type Layered = Vec<Entry>;

/// fio applies a job's options in order, so an option given twice takes
/// its last value, and of two options that set one thing (`direct` and
/// `buffered`, `bs` and `blocksize`, `rwmixread` and `rwmixwrite`) the
/// later line wins: the setting moves to where it was given last.
fn set(acc: &mut Layered, e: &Entry) {
    acc.retain(|o| o.key != e.key);
    acc.push(e.clone());
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
    /// `wait_for=NAME`: start once that job has finished (name, file, line).
    wait_for: Option<(String, String, usize)>,
    /// `filename=`/`directory=` (value, file, line).
    target: Option<(String, String, usize)>,
    /// `randrepeat`, when given.
    randrepeat: Option<bool>,
    /// `exitall`: where it was given.
    exitall: Option<(String, usize)>,
    /// `blockalign` in bytes, where it was given.
    blockalign: Option<(u64, String, usize)>,
    /// `invalidate=0`: buffered I/O leaves the page cache as it is.
    keep_cache: bool,
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
        "kb_base" | "description" | "thread" | "refill_buffers" => {}
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
        // Strided zones (the `zones` block) and fio's zoned block device
        // mode emulated on the file (the `zbd` block, zbd.rs); `z` sizes
        // are resolved before (zone_units).
        "zonemode" => {
            let v = need(e, file)?;
            let n = "zonemode=zbd: storlab emulates the zones on its file as fio does on a regular \
                     file: every zone starts empty, so reads (read_beyond_wp=0) read only what this \
                     run wrote below the write pointers (nothing, in a file that only reads)";
            if v == "zbd" && !notes.iter().any(|x| x == n) {
                notes.push(n.into());
            }
            put("zonemode", v.to_string());
        }
        "zonesize" | "zonerange" | "zoneskip" | "zonecapacity" => {
            put(key, size(need(e, file)?)?.to_string())
        }
        "max_open_zones"
        | "job_max_open_zones"
        | "zone_reset_threshold"
        | "zone_reset_frequency" => put(key, need(e, file)?.to_string()),
        "read_beyond_wp" | "ignore_zone_limits" => {
            put(key, u8::from(fio_flag(e, file)?).to_string())
        }
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
            let mut v = need(e, file)?;
            if let Some((reads, writes)) = v.split_once(',') {
                // fio's READS,WRITES: writes of one size (`1m/100`, cmdprio-bssplit.fio)
                // are storlab's bs_write; a split of writes is not supported.
                let w = writes.trim().trim_end_matches(':');
                let one = w.strip_suffix("/100").unwrap_or(w);
                if one.contains([':', '/', ',']) || one.is_empty() {
                    return fail(
                        file,
                        e.line,
                        format!(
                            "bssplit={v}: a split of the writes is not supported; give the writes \
                             one size (READS,SIZE/100) or one split for both"
                        ),
                    );
                }
                put("bs_write", size(one)?.to_string());
                v = reads;
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
            let split = parts.join(":");
            crate::options::parse_bssplit(&split).or_else(|m| fail(file, e.line, m))?;
            put("bssplit", split);
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
        // fio's default evicts the file's pages before the job (storlab's
        // `cache = cold`); `invalidate=0` leaves them (`cache = buffered`).
        "invalidate" => extras.keep_cache = !fio_flag(e, file)?,
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
        "steadystate" | "ss" => {
            // Checked here so that a refusal names the line.
            let v = need(e, file)?;
            crate::options::parse_steadystate(v).or_else(|m| fail(file, e.line, m))?;
            put("steadystate", v.to_string())
        }
        "steadystate_duration" | "ss_dur" => put("steadystate_duration", need(e, file)?.into()),
        "steadystate_ramp_time" | "ss_ramp" => put("steadystate_ramp_time", need(e, file)?.into()),
        // Reporting-only options: what is shown, never the workload.
        "percentile_list" | "unified_rw_reporting" => put(key, need(e, file)?.to_string()),
        "lat_percentiles" | "clat_percentiles" | "slat_percentiles" => {
            let on = fio_flag(e, file)?;
            if key != "slat_percentiles" {
                put(key, u8::from(on).to_string());
            }
            if on && key != "lat_percentiles" {
                let n = format!(
                    "{key}: storlab's latency percentiles span submission to completion (fio's lat, as with \
                     lat_percentiles=1); fio's {} leaves out the {}",
                    &key[..key.len() - 12],
                    if key == "clat_percentiles" {
                        "submission"
                    } else {
                        "completion"
                    }
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        "write_bw_log" | "write_iops_log" | "write_lat_log" | "write_hist_log" | "per_job_logs"
        | "log_hist_msec" => {
            let n = format!(
                "{key}: no fio log file is written; storlab keeps its own bandwidth, IOPS and latency \
                 series per log_avg_msec (default 1 s) in the result (JSON phases[].series; storlab show ID --json)"
            );
            if key != "per_job_logs" && !notes.contains(&n) {
                notes.push(n);
            }
        }
        // fio's offset column in its logs (disk-zone-profile.fio plots it).
        "log_offset" => {
            if fio_flag(e, file)? {
                notes.push(
                    "log_offset: storlab's series are per interval, without offsets; \
                     --write-iolog FILE records the offset of every I/O (fio's iolog v3)"
                        .into(),
                );
            }
        }
        "stonewall" | "wait_for_previous" => extras.stonewall = fio_flag(e, file)?,
        // One line per reporting group; new_group starts the next one.
        "group_reporting" | "new_group" => put(key, u8::from(fio_flag(e, file)?).to_string()),
        "wait_for" => {
            extras.wait_for = Some((need(e, file)?.to_string(), file.to_string(), e.line))
        }
        "filename" | "directory" => {
            let v = need(e, file)?;
            if v.contains(':') {
                let what = if key == "filename" {
                    "several files (':') are not supported; use one file or a directory"
                } else {
                    "several directories (':', fio spreads the clones over them) are not \
                     supported; use one directory"
                };
                return fail(file, e.line, format!("{key}={v}: {what}"));
            }
            extras.target = Some((v.to_string(), file.to_string(), e.line));
        }
        _ => {
            if fioverify::map(e, kb_base, file, pairs, notes)? {
                return Ok(());
            }
            if map_job_option(e, kb_base, file, pairs, extras, notes)? {
                return Ok(());
            }
            let why = refusal(key).unwrap_or(
                "storlab has no equivalent and does not skip options silently: remove it (docs/FIO.md \
                 lists what storlab maps; `storlab bench --help` what it can run)",
            );
            return fail(
                file,
                e.line,
                format!("fio option '{key}' is not supported: {why}"),
            );
        }
    }
    Ok(())
}

/// fio's `z` unit (`offset=524z`, `size=128z`): that many zones of
/// `zonesize` (fio's `zbd_recalc_options_with_zone_granularity`, after
/// every option is read, so the order of the lines does not matter), for
/// the options fio allows it on.
fn zone_units(opts: &mut [Entry], kb_base: u64) -> Result<(), SpecError> {
    let zone = match opts.iter().find(|e| e.key == "zonesize") {
        Some(e) => fio_size(need(e, &e.file)?, kb_base).or_else(|m| fail(&e.file, e.line, m))?,
        None => 0,
    };
    for e in opts.iter_mut() {
        let zoned = matches!(
            e.key.as_str(),
            "size" | "io_size" | "io_limit" | "offset" | "offset_increment" | "zoneskip"
        );
        let Some(v) = e.value.as_deref().filter(|_| zoned) else {
            continue;
        };
        let Some(n) = v.trim().strip_suffix(['z', 'Z']) else {
            continue;
        };
        let what = format!("{}={v}", e.key);
        let Ok(n) = n.trim().parse::<u64>() else {
            return fail(
                &e.file,
                e.line,
                format!("{what}: the z unit counts whole zones (e.g. 128z)"),
            );
        };
        if zone == 0 {
            return fail(
                &e.file,
                e.line,
                format!("{what}: the z unit counts zones of zonesize: give zonesize="),
            );
        }
        let Some(bytes) = n.checked_mul(zone) else {
            return fail(&e.file, e.line, format!("{what}: too large"));
        };
        e.value = Some(bytes.to_string());
    }
    Ok(())
}

/// The fio options mapped besides [`map_option`]'s table: job-file
/// features and options whose fio meaning storlab already has. `Ok(false)`
/// when `e` is none of them.
fn map_job_option(
    e: &Entry,
    kb_base: u64,
    file: &str,
    pairs: &mut Vec<(String, String)>,
    extras: &mut JobExtras,
    notes: &mut Vec<String>,
) -> Result<bool, SpecError> {
    let key = e.key.as_str();
    let refuse = |v: &str, why: &str| -> Result<bool, SpecError> {
        fail(file, e.line, format!("{key}={v}: {why}"))
    };
    match key {
        "randrepeat" => extras.randrepeat = Some(fio_flag(e, file)?),
        // fio reads it as the tiobench profile's option, a no-op without
        // `profile=tiobench`.
        "threads" => notes.push(
            "threads= is an option of fio's tiobench profile, which fio ignores without \
             profile=tiobench; so does storlab (its jobs are threads, as with fio's `thread`)"
                .into(),
        ),
        // fio creates the file when the job opens it instead of at setup:
        // a matter of when, not what; storlab lays its files out first.
        "create_on_open" => notes.push(
            "create_on_open: storlab lays out each job's file before the timed phase (the file \
             exists when the job opens it)"
                .into(),
        ),
        "timeout" => pairs.push(("runtime".into(), need(e, file)?.to_string())),
        "bsrange" | "blocksize_range" => {
            let v = need(e, file)?;
            match bsrange_pair(v, kb_base) {
                Ok(p) => pairs.push(p),
                Err(m) => return refuse(v, &m),
            }
        }
        "gtod_reduce" => {
            if fio_flag(e, file)? {
                notes.push(
                    "gtod_reduce: storlab times every I/O anyway (fio would report no latencies; \
                     storlab's figures include its clock reads)"
                        .into(),
                );
            }
        }
        "io_submit_mode" => match need(e, file)? {
            "inline" => {}
            "offload" => notes.push(
                "io_submit_mode=offload: storlab submits from each job's own thread (fio's \
                 inline mode); the I/O stream and the rate limit are the same, only the \
                 submitting thread differs"
                    .into(),
            ),
            v => return refuse(v, "fio's submit modes are inline and offload"),
        },
        "random_generator" => match need(e, file)? {
            g @ ("tausworthe" | "lfsr" | "tausworthe64") => notes.push(format!(
                "random_generator={g}: storlab draws offsets from its own generator (xoshiro256++); \
                 without norandommap every block is visited once per pass, as fio's random map or \
                 lfsr guarantee, in a different order"
            )),
            v => return refuse(v, "fio's generators are tausworthe, lfsr and tausworthe64"),
        },
        "blockalign" | "ba" => {
            let v = need(e, file)?;
            if v.contains(',') {
                return refuse(v, "separate read/write alignments are not supported: give one");
            }
            let a = fio_size(v, kb_base).or_else(|m| fail(file, e.line, m))?;
            extras.blockalign = Some((a, file.to_string(), e.line));
        }
        "exitall" => {
            if fio_flag(e, file)? {
                extras.exitall = Some((file.to_string(), e.line));
            }
        }
        // fio's run-control options (issue 27; runctl.rs has fio's
        // algorithms): a late start, jobs stopping or pacing each other,
        // a minimum rate, the latency-target search.
        "startdelay" | "exit_what" | "flow" | "flow_id" | "flow_sleep" | "latency_target"
        | "latency_window" | "latency_percentile" | "rate_iops_min" => {
            pairs.push((key.to_string(), need(e, file)?.to_string()))
        }
        // fio: FIO_OPT_SOFT_DEPRECATED, accepted and ignored.
        "flow_watermark" => notes.push(
            "flow_watermark: deprecated in fio, which ignores it (its flow control reads flow, \
             flow_id and flow_sleep); so does storlab"
                .into(),
        ),
        // fio's SanDisk preconditioning (offsets/sprandom.rs).
        "sprandom" => pairs.push((key.into(), u8::from(fio_flag(e, file)?).to_string())),
        "spr_num_regions" | "spr_op" => pairs.push((key.into(), need(e, file)?.to_string())),
        "random_sequence_stride" => pairs.push((
            key.into(),
            u8::from(fio_flag(e, file)?).to_string(),
        )),
        "ratecycle" | "rate_cycle" => pairs.push(("ratecycle".into(), need(e, file)?.into())),
        "latency_run" => pairs.push((key.into(), u8::from(fio_flag(e, file)?).to_string())),
        "ratemin" | "rate_min" => {
            // fio's sizes per direction, as `rate`.
            let v = need(e, file)?;
            let mut sides = Vec::new();
            for t in v.split(',').take(2).map(str::trim) {
                sides.push(if t.is_empty() {
                    String::new()
                } else {
                    fio_size(t, kb_base)
                        .or_else(|m| fail(file, e.line, m))?
                        .to_string()
                });
            }
            pairs.push(("rate_min".into(), sides.join(",")));
        }
        "steadystate_check_interval" | "ss_interval" => {
            let v = need(e, file)?;
            notes.push(format!(
                "{key}={v}: storlab judges steady state on its time series, sampled every {v} \
                 (its log_interval)"
            ));
            pairs.push(("log_interval".into(), v.to_string()));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `bsrange=MIN-MAX` (or `MIN:MAX`) as storlab's `bs` or exact `bssplit`.
fn bsrange_pair(v: &str, kb_base: u64) -> Result<(String, String), String> {
    if v.contains(',') {
        return Err("separate read/write ranges are not supported: give one range, MIN-MAX".into());
    }
    let Some((lo, hi)) = v.split_once(['-', ':']) else {
        return Err("expected a range MIN-MAX, e.g. 4k-64k".into());
    };
    let (mut lo, mut hi) = (
        fio_size(lo, kb_base).map_err(|e| e.to_string())?,
        fio_size(hi, kb_base).map_err(|e| e.to_string())?,
    );
    if lo > hi {
        // fio swaps a reversed range.
        std::mem::swap(&mut lo, &mut hi);
    }
    if lo == 0 {
        return Err("the smallest block size must be more than 0".into());
    }
    if lo == hi {
        return Ok(("bs".into(), lo.to_string()));
    }
    bsrange::as_bssplit(lo, hi).map(|s| ("bssplit".into(), s))
}

/// Why a fio option storlab cannot honour is refused, and what to write
/// instead.
fn refusal(key: &str) -> Option<&'static str> {
    Some(match key {
        "atomic" => {
            "atomic writes (RWF_ATOMIC) are not supported: remove atomic; storlab's verify checks \
             every block it wrote"
        }
        "cpus_allowed" | "cpumask" | "cpus_allowed_policy" => {
            "storlab does not place its threads itself: run it under `numactl \
             --cpunodebind=N --membind=N` (or taskset) instead and remove this option"
        }
        "verify_offset" | "verify_state_save" | "verify_write_sequence" => {
            "storlab writes and checks its own self-checking blocks (a header and a checksum per \
             unit, checked on every read): keep verify=… and remove this option"
        }
        "offset_align" => {
            "storlab's regions start at offset + N × offset_increment exactly: remove it"
        }
        "create_fsync" | "create_only" | "pre_read" => {
            "storlab lays out each job's file before the timed phase: remove it"
        }
        "spr_cs" => {
            "sprandom with a device cache size (spr_cs, which defers the re-writes past the \
             cache) is not supported: remove spr_cs (fio's default 0)"
        }
        "bs_unaligned" | "bsu" => "storlab's block sizes are multiples of 512 bytes: remove it",
        "profile" => "fio's built-in profiles are not supported: write the jobs out",
        _ => return None,
    })
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
    section: &str,
) -> Result<bool, SpecError> {
    let Some((name, file, line)) = &extras.wait_for else {
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

/// `filename=` is the one option fio does not replace when it is given
/// again: each adds one more file to the job (`str_filename_cb` calls
/// `add_file`, and a job starts with its `[global]`s' files), so a job
/// whose `[global]` names one file and which names another runs on both.
/// storlab runs one file per job file: two different names are refused.
fn one_file<'a>(files: impl Iterator<Item = &'a Entry>, job: &str) -> Result<(), SpecError> {
    let mut first: Option<&Entry> = None;
    for e in files {
        match first {
            None => first = Some(e),
            Some(f) if f.value != e.value => {
                return fail(
                    &e.file,
                    e.line,
                    format!(
                        "[{job}]: filename={} after filename={} ({}:{}): fio adds each filename= \
                         as one more file of the job, so it would run on both; storlab runs one \
                         file: keep one filename= (or give the target on the command line)",
                        e.value.as_deref().unwrap_or(""),
                        f.value.as_deref().unwrap_or(""),
                        f.file,
                        f.line
                    ),
                );
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `invalidate=0` on a buffered job (fio's O_DIRECT ignores it): storlab's
/// `cache = buffered` in place of `direct = 0` (`cache = cold`).
fn keep_cache(extras: &JobExtras, pairs: &mut Vec<(String, String)>) {
    let direct = pairs.iter().rev().find(|(k, _)| k == "direct");
    if !extras.keep_cache || direct.is_none_or(|(_, v)| v != "0") {
        return;
    }
    pairs.retain(|(k, _)| k != "direct");
    pairs.push(("cache".into(), "buffered".into()));
}

/// Of the storlab options that are one setting spelled two ways
/// ([`crate::options::PAIRED`]: `bs` and `bssplit`, ...), keep the one
/// mapped last: fio applies options in order, so `bssplit=...` then `bs=8k`
/// is 8k for every I/O (fio's min and max block size become 8k).
fn last_of_paired(pairs: &mut Vec<(String, String)>) {
    for (a, b) in crate::options::PAIRED {
        let last = |k: &str| pairs.iter().rposition(|(p, _)| p == k);
        if let (Some(ia), Some(ib)) = (last(a), last(b)) {
            let drop = if ia < ib { *a } else { *b };
            pairs.retain(|(p, _)| p != drop);
        }
    }
}

/// `blockalign=N` (fio: random offsets on N-byte boundaries; the default
/// is the smallest block size): storlab puts random offsets on multiples
/// of the phase's largest block size, so every offset is on an N boundary
/// when that size is a multiple of N (fewer offsets than fio draws from,
/// all of them aligned as asked). Otherwise refused.
fn check_blockalign(
    extras: &JobExtras,
    pairs: &[(String, String)],
    notes: &mut Vec<String>,
) -> Result<(), SpecError> {
    let Some((align, file, line)) = &extras.blockalign else {
        return Ok(());
    };
    let sizes = |v: &str| -> Vec<u64> {
        v.split(':')
            .filter_map(|p| p.split('/').next()?.trim().parse().ok())
            .collect()
    };
    let max = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "bs" || k == "bssplit")
        .map_or(vec![4096], |(_, v)| sizes(v))
        .into_iter()
        .max()
        .unwrap_or(4096);
    if *align == 0 || max % align != 0 {
        return fail(
            file,
            *line,
            format!(
                "blockalign={align}: storlab aligns random offsets to the largest block size \
                 ({max} bytes), which is no multiple of {align}: remove blockalign, or make the \
                 largest block size a multiple of it"
            ),
        );
    }
    notes.push(format!(
        "blockalign={align}: random offsets are aligned to the largest block size, {max} bytes \
         (a multiple of {align}; fio also uses the boundaries in between)"
    ));
    Ok(())
}

/// `randrepeat=0`: a fresh seed unless `randseed` gives one (fio:
/// "randseed: if not set, the random sequence depends on randrepeat"); the
/// seed is recorded with the result, and the note says how to repeat it.
/// `randrepeat=1` (fio's default) is storlab's default: a fixed seed.
fn apply_randrepeat(
    extras: &JobExtras,
    pairs: &mut Vec<(String, String)>,
    src: &dyn JobSource,
    job: &str,
    notes: &mut Vec<String>,
) {
    if extras.randrepeat == Some(false) && !pairs.iter().any(|(k, _)| k == "seed") {
        let seed = src.fresh_seed();
        pairs.push(("seed".into(), seed.to_string()));
        notes.push(format!(
            "[{job}] randrepeat=0: a fresh seed, {seed} (recorded with the result as `seed`; \
             randseed={seed} repeats this run's offsets)"
        ));
    }
}

/// `exitall` is global in fio (`exitall_on_terminate`): once any job sets
/// it, every job that ends stops the jobs its `exit_what` names. So every
/// job of the file gets it (runctl.rs stops the others).
fn apply_exitall(out: &mut FioJobFile) {
    for p in &mut out.phases {
        p.exitall = Some(crate::options::Flag(true));
        for g in &mut p.group {
            g.exitall = Some(crate::options::Flag(true));
        }
    }
}

impl FioJobFile {
    /// Read a fio job file's text; `file` names it in messages and is where
    /// `include`s are looked for; `${VAR}` comes from this process's
    /// environment.
    pub fn parse(text: &str, file: &str) -> Result<FioJobFile, SpecError> {
        Self::parse_with(text, file, &System)
    }

    /// [`FioJobFile::parse`] with the environment, included files and
    /// keywords taken from `src`.
    pub fn parse_with(
        text: &str,
        file: &str,
        src: &dyn JobSource,
    ) -> Result<FioJobFile, SpecError> {
        let sections = lex(text, file, src)?;
        let mut global: Layered = Vec::new();
        let mut out = FioJobFile::default();
        let mut target: Option<(String, usize)> = None;
        let mut exitall = false;
        // Every filename= a job inherits: fio adds each as one more file.
        let mut global_files: Vec<&Entry> = Vec::new();
        for sec in &sections {
            let files = sec.entries.iter().filter(|e| e.key == "filename");
            if sec.name == "global" {
                for e in &sec.entries {
                    set(&mut global, e);
                }
                global_files.extend(files);
                continue;
            }
            one_file(global_files.iter().copied().chain(files), &sec.name)?;
            let mut opts = global.clone();
            for e in &sec.entries {
                set(&mut opts, e);
            }
            let kb_base = match opts.iter().find(|e| e.key == "kb_base") {
                None => 1024,
                Some(e) => match need(e, &e.file)? {
                    "1024" => 1024,
                    "1000" => 1000,
                    v => return fail(&e.file, e.line, format!("kb_base={v}: use 1024 or 1000")),
                },
            };
            zone_units(&mut opts, kb_base)?;
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
                map_option(e, kb_base, &e.file, &mut pairs, &mut extras, &mut out.notes)?;
            }
            last_of_paired(&mut pairs);
            keep_cache(&extras, &mut pairs);
            check_blockalign(&extras, &pairs, &mut out.notes)?;
            apply_randrepeat(&extras, &mut pairs, src, &sec.name, &mut out.notes);
            let waits = waits_for_current(&out.phases, &extras, &sec.name)?;
            if let Some((t, tfile, line)) = extras.target {
                match &target {
                    Some((old, _)) if *old != t => {
                        return fail(
                            &tfile,
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
            let new_phase = extras.stonewall || waits || out.phases.is_empty();
            // placement.rs places no offsets in job groups: say so at the
            // line (fio's zbd examples give offset=524z to concurrent jobs).
            if !new_phase
                && let Some(e) = opts.iter().find(|e| {
                    matches!(e.key.as_str(), "offset" | "offset_increment")
                        && e.value.as_deref().is_some_and(|v| v.trim() != "0")
                })
            {
                return fail(
                    &e.file,
                    e.line,
                    format!(
                        "{}: storlab places no offsets for jobs that run together with other \
                         jobs (job groups), and [{}] runs with the job before it: run it as its \
                         own phase (stonewall) or drop the offset",
                        e.key, sec.name
                    ),
                );
            }
            place_job(&mut out, spec, new_phase);
            exitall |= extras.exitall.is_some();
        }
        if out.phases.is_empty() {
            return Err(SpecError(format!(
                "{file}: no job sections: add at least one [jobname] section"
            )));
        }
        if exitall {
            apply_exitall(&mut out);
        }
        out.target = target.map(|t| t.0);
        out.notes.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::source::tests::{Fake, fake};
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
        let e = FioJobFile::parse("[j]\nrw=read\natomic=1\n", "z.fio")
            .unwrap_err()
            .0;
        assert!(e.contains("z.fio:3") && e.contains("'atomic'"), "{e}");
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
            // This process's environment: DEV set runs, unset is refused.
            .map_or_else(|e| e.0, |_| String::new());
        assert!(
            e.is_empty() || e.contains("c.fio:2: filename=${DEV}: ${DEV} is not set"),
            "{e}"
        );
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

    fn phase0(text: &str, src: &Fake) -> storlab_types::PhaseParams {
        let f = FioJobFile::parse_with(text, "t.fio", src).unwrap();
        resolve_phase(&f.phases[0], 0).unwrap()
    }

    fn refused(text: &str) -> String {
        FioJobFile::parse_with(text, "t.fio", &fake(&[]))
            .unwrap_err()
            .0
    }

    /// fio applies options in order: the last of two settings wins, also
    /// when two spellings set one thing (these were misread before: the
    /// first spelling's position decided).
    #[test]
    fn an_option_given_twice_takes_its_last_value() {
        let f = fake(&[]);
        let p = phase0("[j]\nsize=1m\nbs=4k\nblocksize=8k\nbs=16k\n", &f);
        assert_eq!(p.bs[0].bs_bytes, 16384);
        let p = phase0("[j]\nsize=1m\ndirect=1\nbuffered=1\ndirect=1\n", &f);
        assert_eq!(p.cache, CacheMode::Direct);
        let p = phase0(
            "[j]\nsize=1m\nrwmixwrite=30\nrwmixread=60\nrwmixwrite=10\n",
            &f,
        );
        assert_eq!(p.rwmixread, 90);
        // bs after bssplit: every I/O 8k (fio's min = max block size).
        let p = phase0("[j]\nsize=1m\nbssplit=4k/50:64k/50\nbs=8k\n", &f);
        assert_eq!(p.bs.len(), 1);
        assert_eq!(p.bs[0].bs_bytes, 8192);
        let p = phase0("[global]\nbs=8k\n[j]\nsize=1m\nbssplit=4k/50:64k/50\n", &f);
        assert_eq!(p.bs.len(), 2, "the job's bssplit over the global bs");
        let p = phase0("[global]\nrw=write\nrw=read\n[j]\nsize=1m\n", &f);
        assert_eq!(p.rw, RwMode::Read);
        // filename= is the exception: fio adds one more file each time
        // (fio 3.33 wrote both /tmp/a and /tmp/b for this job).
        let e = refused("[global]\nfilename=/tmp/a\n[j]\nfilename=/tmp/b\n");
        assert!(
            e.contains("t.fio:4") && e.contains("t.fio:2") && e.contains("both"),
            "{e}"
        );
        let e = refused("[j]\nfilename=/tmp/a\nsize=1m\nfilename=/tmp/b\n");
        assert!(e.contains("t.fio:4"), "{e}");
        let same = "[global]\nfilename=/tmp/a\n[j]\nfilename=/tmp/a\nsize=1m\n";
        let got = FioJobFile::parse_with(same, "t.fio", &f).unwrap();
        assert_eq!(got.target.as_deref(), Some("/tmp/a"));
    }

    /// `${VAR}` from the environment and fio's keywords (refused before:
    /// "$VARIABLE expansion is not supported").
    /// fio's `rw=trim|randtrim` map to storlab's trim phases (refused as an
    /// unknown pattern before), and `create_on_open` is accepted with a note.
    #[test]
    fn trims_map_and_create_on_open_is_a_note() {
        let f = fake(&[]);
        assert_eq!(phase0("[j]\nsize=1m\nrw=trim\n", &f).rw, RwMode::Trim);
        let text = "[j]\nsize=1m\nrw=randtrim\ncreate_on_open=1\n";
        let got = FioJobFile::parse_with(text, "t.fio", &f).unwrap();
        let p = resolve_phase(&got.phases[0], 0).unwrap();
        assert_eq!(p.rw, RwMode::RandTrim);
        assert!(p.rw.is_random() && p.rw.writes() && p.rw.trims());
        assert!(
            got.notes.iter().any(|n| n.contains("create_on_open")),
            "{:?}",
            got.notes
        );
    }

    #[test]
    fn environment_variables_and_keywords_expand() {
        let f = fake(&[("SIZE", "2m"), ("RW", "randread"), ("QD", "8")]);
        let p = phase0(
            "[global]\nsize=${SIZE}\n[j]\nrw=${RW}\niodepth=${QD}\nnumjobs=$ncpus/4\n",
            &f,
        );
        assert_eq!(p.size_bytes, 2 << 20);
        assert_eq!(p.rw, RwMode::RandRead);
        assert_eq!(p.iodepth, 8);
        assert_eq!(p.numjobs, 2, "the fake has 8 CPUs");
        let p = phase0("[j]\nsize=$mb_memory*1024\nbs=$pagesize\n", &f);
        assert_eq!((p.size_bytes, p.bs[0].bs_bytes), (2048 * 1024, 4096));
        let e = refused("[j]\nsize=1m\nbs=${BS}\n");
        assert!(
            e.contains("t.fio:3") && e.contains("${BS} is not set"),
            "{e}"
        );
        assert!(e.contains("export BS="), "{e}");
        let e = refused("[j]\nsize=$SIZE\n");
        assert!(e.contains("t.fio:2") && e.contains("write ${SIZE}"), "{e}");
    }

    /// `include FILE` reads options into the including section, found as
    /// fio finds it (as given, else beside the including file); cycles and
    /// sections in an included file are refused with the line.
    #[test]
    fn include_reads_options_in_place() {
        let mut f = fake(&[("BS", "8k")]);
        f.files.insert(
            "jobs/common.inc".into(),
            "size=1m\nbs=${BS}\ninclude deeper.inc\n".into(),
        );
        f.files.insert(
            "jobs/deeper.inc".into(),
            "iodepth=4 ; from two levels down\n".into(),
        );
        let text = "[global]\ninclude common.inc\n[j]\nrw=randread\nbs=4k\n";
        let got = FioJobFile::parse_with(text, "jobs/main.fio", &f).unwrap();
        let p = resolve_phase(&got.phases[0], 0).unwrap();
        assert_eq!((p.size_bytes, p.iodepth), (1 << 20, 4));
        assert_eq!(
            p.bs[0].bs_bytes, 4096,
            "the job's bs over the included global one"
        );
        // An option after the include wins over it, one before loses.
        let text = "[j]\nbs=64k\ninclude common.inc\n";
        let got = FioJobFile::parse_with(text, "jobs/main.fio", &f).unwrap();
        assert_eq!(
            resolve_phase(&got.phases[0], 0).unwrap().bs[0].bs_bytes,
            8192
        );
        // Errors name the included file's own line.
        f.files
            .insert("jobs/bad.inc".into(), "size=1m\natomic=1\n".into());
        let e = FioJobFile::parse_with("[j]\ninclude bad.inc\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(
            e.contains("jobs/bad.inc:2") && e.contains("'atomic'"),
            "{e}"
        );
        f.files
            .insert("jobs/a.inc".into(), "include b.inc\n".into());
        f.files
            .insert("jobs/b.inc".into(), "include ./a.inc\n".into());
        let e = FioJobFile::parse_with("[j]\ninclude a.inc\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(
            e.contains("jobs/b.inc:1") && e.contains("include cycle"),
            "{e}"
        );
        let e = FioJobFile::parse_with("[j]\ninclude m.fio\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(e.contains("include cycle"), "{e}");
        f.files.insert("jobs/sec.inc".into(), "[other]\n".into());
        let e = FioJobFile::parse_with("[j]\ninclude sec.inc\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(
            e.contains("jobs/sec.inc:1") && e.contains("no sections"),
            "{e}"
        );
        let e = FioJobFile::parse_with("[j]\ninclude gone.inc\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(
            e.contains("jobs/m.fio:2") && e.contains("jobs/gone.inc"),
            "{e}"
        );
        let e = FioJobFile::parse_with("include a.inc\n[j]\n", "jobs/m.fio", &f)
            .unwrap_err()
            .0;
        assert!(e.contains("before any section"), "{e}");
    }

    /// randrepeat=1 (fio's default) keeps storlab's fixed seed; randrepeat=0
    /// draws a fresh one, recorded and named in a note; randseed wins.
    #[test]
    fn randrepeat_fixes_or_draws_the_seed() {
        let mut f = fake(&[]);
        f.seed = 987_654_321;
        let fixed = phase0("[j]\nsize=1m\nrw=randread\n", &f).seed;
        assert_eq!(phase0("[j]\nsize=1m\nrandrepeat=1\n", &f).seed, fixed);
        let text = "[j]\nsize=1m\nrw=randread\nrandrepeat=0\n";
        let got = FioJobFile::parse_with(text, "t.fio", &f).unwrap();
        assert_eq!(resolve_phase(&got.phases[0], 0).unwrap().seed, 987_654_321);
        assert!(
            got.notes.iter().any(|n| n.contains("randseed=987654321")),
            "{:?}",
            got.notes
        );
        let p = phase0("[j]\nsize=1m\nrandrepeat=0\nrandseed=42\n", &f);
        assert_eq!(p.seed, 42);
        // The real source: two fresh seeds differ, and any is a valid seed.
        assert_ne!(System.fresh_seed(), System.fresh_seed());
        for _ in 0..64 {
            let got = FioJobFile::parse_with(text, "t.fio", &System).unwrap();
            resolve_phase(&got.phases[0], 0).unwrap();
        }
    }

    /// The offsets a job draws, as the worker seeds them from the phase's
    /// seed (worker.rs: `IoGen::new`, job 0).
    fn first_offsets(p: &storlab_types::PhaseParams) -> Vec<u64> {
        let mut rng = crate::offsets::Rng::new(p.seed);
        let mut g = crate::offsets::OffsetGen::new(true, false, p.size_bytes, p.max_bs(), p.seed);
        (0..32).map(|_| g.next(p.max_bs(), &mut rng).0).collect()
    }

    /// randrepeat's semantics on the offsets: the same every run with
    /// randrepeat=1, different with randrepeat=0 (a fresh seed each parse).
    #[test]
    fn randrepeat_repeats_the_offsets_or_not() {
        let text = "[j]\nsize=64m\nrw=randread\nrandrepeat=1\n";
        let run = || {
            let f = FioJobFile::parse_with(text, "t.fio", &System).unwrap();
            first_offsets(&resolve_phase(&f.phases[0], 0).unwrap())
        };
        assert_eq!(run(), run());
        let text = "[j]\nsize=64m\nrw=randread\nrandrepeat=0\n";
        let run = || {
            let f = FioJobFile::parse_with(text, "t.fio", &System).unwrap();
            first_offsets(&resolve_phase(&f.phases[0], 0).unwrap())
        };
        assert_ne!(run(), run(), "fresh seeds draw other offsets");
    }

    /// bsrange: the sizes fio draws, each with its share (bsrange.rs
    /// derives them from fio's get_next_buflen); refused before.
    #[test]
    fn bsrange_maps_to_fios_size_set() {
        let f = fake(&[]);
        let p = phase0("[j]\nsize=1m\nbsrange=4k-16k\n", &f);
        let got: Vec<(u64, u32)> = p.bs.iter().map(|b| (b.bs_bytes, b.weight)).collect();
        assert_eq!(got, [(4096, 25), (8192, 25), (12288, 25), (16384, 25)]);
        let p = phase0("[j]\nsize=1m\nblocksize_range=16k:4k\n", &f);
        assert_eq!(p.bs.len(), 4, "reversed and ':' as fio reads them");
        let p = phase0("[j]\nsize=1m\nbsrange=4k-4k\n", &f);
        assert_eq!((p.bs.len(), p.bs[0].bs_bytes), (1, 4096));
        let e = refused("[j]\nsize=1m\nbsrange=4k-12k\n");
        assert!(
            e.contains("t.fio:3") && e.contains("bssplit=4096/34:8192/33:12288/33"),
            "{e}"
        );
        let e = refused("[j]\nbsrange=4k-8k,16k-32k\n");
        assert!(e.contains("read/write"), "{e}");
    }

    /// fio's units: `kb` is kb_base, `KiB` the opposite (fio's parse.c).
    #[test]
    fn fio_kb_units_in_job_files() {
        let f = fake(&[]);
        for (bs, want) in [("4kb", 4096), ("4KB", 4096), ("4k", 4096), ("8KiB", 8000)] {
            let text = format!("[j]\nsize=1m\nbs={bs}\n");
            let f = FioJobFile::parse_with(&text, "t.fio", &f).unwrap();
            // 8000 is no multiple of 512: the phase refuses it, but the
            // reader read it as fio does.
            assert_eq!(f.phases[0].bs.map(|b| b.0), Some(want), "{bs}");
        }
        let p = phase0("[global]\nkb_base=1000\n[j]\nsize=1m\nbs=4KiB\n", &f);
        assert_eq!(p.bs[0].bs_bytes, 4096);
    }

    /// Options storlab already honours, accepted with fio's meaning; and
    /// fio's inline comments.
    #[test]
    fn honoured_options_and_inline_comments() {
        let f = fake(&[]);
        let text = "[global]\nthreads=1\nthread\ngtod_reduce=1\nio_submit_mode=offload\n\
                    random_generator=lfsr\ncontinue_on_error=none\nexitall\n\
                    [j]\nsize=1m ; the size\nnumjobs=1\t; one\ntimeout=5 # seconds\n\
                    ss=iops:10%\nss_dur=10\nsteadystate_check_interval=2\n";
        let got = FioJobFile::parse_with(text, "t.fio", &f).unwrap();
        let p = resolve_phase(&got.phases[0], 0).unwrap();
        assert_eq!(p.size_bytes, 1 << 20);
        assert_eq!(p.runtime_ns, Some(5_000_000_000), "timeout is runtime");
        assert_eq!(p.log_interval_ns, 2_000_000_000);
        for want in ["gtod_reduce", "offload", "lfsr", "tiobench"] {
            assert!(
                got.notes.iter().any(|n| n.contains(want)),
                "{want}: {:?}",
                got.notes
            );
        }
        let e = refused("[j]\ncontinue_on_error=sometimes\n");
        assert!(e.contains("none, read, write, io, verify or all"), "{e}");
        let e = refused("[j]\nio_submit_mode=fast\n");
        assert!(e.contains("inline and offload"), "{e}");
        // exitall is global in fio: every job of the file gets it, also
        // the concurrent ones (issue 27: storlab stops them as fio does).
        let got = FioJobFile::parse_with(
            "[a]\nsize=1m\n[b]\nsize=1m\nexitall\n[c]\nstonewall\nsize=1m\n",
            "t.fio",
            &f,
        )
        .unwrap();
        let on = Some(crate::options::Flag(true));
        assert_eq!(
            got.phases[0].group[0].exitall, on,
            "a, before the exitall line"
        );
        assert_eq!(got.phases[0].group[1].exitall, on);
        assert_eq!(got.phases[1].exitall, on, "c, in the next phase");
        let got = FioJobFile::parse_with(
            "[j]\nsize=1m\nbssplit=512/50:64k/50\nblockalign=4k\n",
            "t.fio",
            &f,
        )
        .unwrap();
        assert!(
            got.notes.iter().any(|n| n.contains("65536")),
            "{:?}",
            got.notes
        );
        let e = refused("[j]\nsize=1m\nbs=4k\nblockalign=64k\n");
        assert!(e.contains("t.fio:4") && e.contains("no multiple"), "{e}");
        // fio's latency criteria (issue 27).
        let got = FioJobFile::parse_with("[j]\nsize=1m\nss=lat:5%\n", "t.fio", &f).unwrap();
        let ss = resolve_phase(&got.phases[0], 0)
            .unwrap()
            .steadystate
            .unwrap();
        assert_eq!(ss.metric, storlab_types::SteadyMetric::Lat);
        assert_eq!(ss.criterion, storlab_types::SteadyCriterion::Deviation);
        let e = refused("[j]\nsize=1m\nss=clat:5%\n");
        assert!(e.contains("t.fio:3") && e.contains("'clat:5%'"), "{e}");
        let e = refused("[j]\nsize=1m\nbssplit=4k/50:8k/40\n");
        assert!(e.contains("t.fio:3") && e.contains("90, not 100"), "{e}");
        let e = refused("[j]\natomic=1\n");
        assert!(e.contains("atomic writes") && e.contains("remove"), "{e}");
        let e = refused("[j]\ndirectory=/a:/b\n");
        assert!(
            e.contains("t.fio:2") && e.contains("several directories"),
            "{e}"
        );
        let e = refused("[j]\nsize=(8*1024)k\n");
        assert!(
            e.contains("t.fio:2") && e.contains("write the result"),
            "{e}"
        );
        let e = refused("[j]\ncpus_allowed=0\n");
        assert!(e.contains("numactl"), "{e}");
        // issue 27's options are checked where they are read.
        let e = refused("[j]\nnuma_cpu_nodes=1-0\n");
        assert!(e.contains("t.fio:2") && e.contains("range of nodes"), "{e}");
        let e = refused("[j]\ncmdprio_bssplit=4k/60/1/0:4k/50/2/0\n");
        assert!(e.contains("t.fio:2") && e.contains("more than 100"), "{e}");
    }

    proptest! {
        /// `${...}`, `$words`, and `include` lines never panic the reader.
        #[test]
        fn expansion_and_include_never_panic(
            s in "(\\[[a-z]{0,4}\\]\n|[a-z_]{1,8}=([a-zA-Z0-9]|\\$\\{[A-Z]{0,3}\\}?|\\$[a-z_]{0,10}|[-+*/()])*\n|include [a-z./]{0,8}\n){0,10}"
        ) {
            let mut f = fake(&[("A", "1"), ("AB", "$ncpus"), ("ABC", "")]);
            f.files.insert("x".into(), "include x\nsize=${A}\n".into());
            f.files.insert("y.inc".into(), s.clone());
            let _ = FioJobFile::parse_with(&s, "y.inc", &f);
            let _ = FioJobFile::parse_with(&s, "p.fio", &f);
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panic(s in "(\\[[a-z]{0,6}\\]\n|[a-z_]{1,12}(=[0-9a-zA-Z%:/.,]{0,8})?\n|;.*\n){0,12}") {
            let _ = FioJobFile::parse(&s, "p.fio");
        }
    }
}
