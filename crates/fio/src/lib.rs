//! Reading fio's JSON output (`fio --output-format=json`, also `json+`) into
//! a [`BenchReport`], so a site's years of fio results sit in the store next
//! to storlab runs.
//!
//! Mapping (details in `docs/store.md`):
//!
//! * the jobs fio ran together (consecutive jobs of one `groupid`: fio
//!   starts the jobs no `stonewall` separates at once, and a `stonewall`
//!   starts a new group) become the groups of one phase named `a+b`, as
//!   `storlab bench --fio-job` runs that file, so `compare` pairs them;
//!   a job alone in its groupid becomes a phase;
//! * clones of a job reported separately
//!   (`numjobs=N` without `group_reporting`) are merged into one phase with
//!   one [`JobResult`] per clone: bytes and I/Os add up, the window is the
//!   longest clone's, so the phase rate is total bytes / that window; latency
//!   histograms (json+ `bins`) merge exactly, percentiles alone do not (the
//!   worst clone's are kept, with a warning);
//! * options come from `global options` overridden by `job options`, read
//!   with fio's own units by the grammar fio job files use too
//!   ([`storlab_types::fio_size`]: `4k` = 4096 but `4KiB` = 4000 under the
//!   default `kb_base=1024`, `kb_base=1000` honoured; times in seconds
//!   unless suffixed);
//! * figures: fio 3.x keys (`io_bytes`, `bw_bytes`, `*_ns`) and fio 2.x keys
//!   (`io_bytes` in KiB, `bw` in KiB/s, latencies in µs) are both read;
//! * latency: fio's total latency `lat` (submission to completion, what
//!   storlab measures) when fio recorded its percentiles (`lat_percentiles=1`),
//!   otherwise its completion latency `clat`; the phase's `latency_span` says
//!   which.
//!
//! Text before the JSON document (fio prints warnings there) is skipped.
//! A storlab JSON document (`storlab bench --output-format json`) is
//! accepted too. Anything else is refused with [`ImportError`].
#![forbid(unsafe_code)]

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use storlab_types::{
    BenchReport, BsWeight, BufferPattern, CacheMode, CacheReport, CpuStats, DirStats, EngineKind,
    FileLayout, GroupResult, HostInfo, JobResult, LatencyStats, PhaseGroups, PhaseParams,
    PhaseResult, RunKind, RwMode, TargetInfo, ToolInfo, fio_size,
};

/// Run kind of an imported fio result.
pub const FIO_KIND: RunKind = RunKind::FioImport;
/// Run kind of an imported storlab JSON document.
pub const STORLAB_KIND: RunKind = RunKind::Import;

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error(
        "no JSON document found ({detail}); import reads the output of \
         `fio --output-format=json ...` (or `storlab bench --output-format json`)"
    )]
    NoJson { detail: String },
    #[error(
        "this is JSON, but not fio's output: {reason}; produce one with \
         `fio --output-format=json --output=result.json JOBFILE`"
    )]
    NotFio { reason: String },
    #[error("the fio output has no job that can be imported: {reason}")]
    NoJobs { reason: String },
    #[error("the storlab JSON document cannot be read: {0}")]
    BadStorlab(String),
    /// A field storlab reads has the wrong type (`"total_ios": "abc"`):
    /// refused rather than read as 0, which would store made-up figures.
    #[error(
        "{path}: expected {expected}, got {got}; is this fio's unmodified \
         `--output-format=json` output?"
    )]
    WrongType {
        /// Where the field is, e.g. `jobs[0].read.total_ios`.
        path: String,
        /// What fio writes there, e.g. "a number (fio's count of I/Os)".
        expected: &'static str,
        /// What the file has instead.
        got: String,
    },
}

/// A fio job that cannot become a storlab phase (it is left out, and named
/// in the record's warnings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkippedJob {
    /// `rw=trim` and the like: fio reports trims under their own key.
    #[error(
        "job '{job}': rw={rw} (storlab imports read/write patterns only: fio reports trims apart)"
    )]
    UnsupportedRw { job: String, rw: String },
}

/// What [`parse`] found: the run kind to store it under and its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// [`FIO_KIND`] or [`STORLAB_KIND`].
    pub kind: RunKind,
    pub report: BenchReport,
}

/// Read fio's JSON output (or a storlab JSON document) from `text`.
/// `hostname` names the machine the fio run was on, which fio's JSON
/// does not record outside client/server mode.
pub fn parse(text: &str, hostname: Option<&str>) -> Result<Imported, ImportError> {
    let doc = find_document(text)?;
    if doc.contains_key("schema_version") && doc.contains_key("phases") {
        let report: BenchReport = serde_json::from_value(Value::Object(doc))
            .map_err(|e| ImportError::BadStorlab(e.to_string()))?;
        return Ok(Imported {
            kind: STORLAB_KIND,
            report,
        });
    }
    let report = parse_fio(&doc, hostname)?;
    Ok(Imported {
        kind: FIO_KIND,
        report,
    })
}

/// The first JSON object in `text` that starts a line.
fn find_document(text: &str) -> Result<Map<String, Value>, ImportError> {
    let mut first_error = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset + (line.len() - line.trim_start().len());
        offset += line.len();
        if !text[start..].starts_with('{') {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(map))) => return Ok(map),
            Some(Err(e)) if first_error.is_none() => first_error = Some(e.to_string()),
            _ => {}
        }
    }
    Err(ImportError::NoJson {
        detail: match first_error {
            Some(e) => format!("the text that looks like JSON does not parse: {e}"),
            None if text.trim().is_empty() => "the file is empty".into(),
            None => "no line starts with '{'".into(),
        },
    })
}

/// The fields of one direction (`read`, `write`, ...) that hold a figure.
const DIR_NUMBERS: [&str; 6] = ["io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime"];
/// The fields of a job entry that hold a figure.
const JOB_NUMBERS: [&str; 6] = [
    "groupid",
    "error",
    "job_runtime",
    "usr_cpu",
    "sys_cpu",
    "total_err",
];
/// The per-direction blocks of a fio 3.x / 2.x job entry.
const DIRECTIONS: [&str; 5] = ["read", "write", "trim", "sync", "mixed"];
/// The latency blocks of a direction.
const LATENCIES: [&str; 6] = ["lat_ns", "clat_ns", "slat_ns", "lat", "clat", "slat"];

/// `base.key`, or `base["key"]` when the key is not a plain word.
fn json_path(base: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{base}.{key}")
    } else {
        format!("{base}[{key:?}]")
    }
}

/// A JSON value as an error message shows it.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("the string {:?}...", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn wrong(path: String, expected: &'static str, v: &Value) -> ImportError {
    ImportError::WrongType {
        path,
        expected,
        got: describe(v),
    }
}

/// A figure: a finite number that is not negative (fio 2.x writes some as
/// strings of digits, which are accepted).
fn check_figure(v: &Value, path: String) -> Result<(), ImportError> {
    let ok = match v {
        Value::Number(n) => n.as_f64().is_some_and(|x| x.is_finite() && x >= 0.0),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .is_ok_and(|x| x.is_finite() && x >= 0.0),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(wrong(
            path,
            "a number that is neither negative nor out of range",
            v,
        ))
    }
}

fn object_at<'a>(
    v: &'a Value,
    path: &str,
    expected: &'static str,
) -> Result<&'a Map<String, Value>, ImportError> {
    v.as_object()
        .ok_or_else(|| wrong(path.to_string(), expected, v))
}

/// Every field the import reads has the type fio writes, or the document
/// is refused naming the field's JSON path (`jobs[0].read.total_ios`):
/// a field of the wrong type was read as 0 (or skipped) before.
fn check_types(doc: &Map<String, Value>) -> Result<(), ImportError> {
    for key in ["timestamp", "timestamp_ms"] {
        if let Some(v) = doc.get(key) {
            check_figure(v, key.to_string())?;
        }
    }
    if let Some(v) = doc.get("fio version").filter(|v| !v.is_string()) {
        return Err(wrong(
            "[\"fio version\"]".into(),
            "a string (e.g. \"fio-3.33\")",
            v,
        ));
    }
    if let Some(v) = doc.get("global options") {
        object_at(v, "[\"global options\"]", "an object of fio options")?;
    }
    for list in ["jobs", "client_stats"] {
        let Some(jobs) = doc.get(list).and_then(Value::as_array) else {
            continue;
        };
        for (i, job) in jobs.iter().enumerate() {
            let path = format!("{list}[{i}]");
            let job = object_at(job, &path, "an object (one fio job's results)")?;
            check_job(job, &path)?;
        }
    }
    Ok(())
}

fn check_job(job: &Map<String, Value>, path: &str) -> Result<(), ImportError> {
    for key in ["jobname", "hostname"] {
        if let Some(v) = job.get(key).filter(|v| !v.is_string()) {
            return Err(wrong(json_path(path, key), "a string", v));
        }
    }
    if let Some(v) = job.get("job options") {
        object_at(
            v,
            &json_path(path, "job options"),
            "an object of fio options",
        )?;
    }
    for key in JOB_NUMBERS {
        if let Some(v) = job.get(key) {
            check_figure(v, json_path(path, key))?;
        }
    }
    for dir in DIRECTIONS {
        let Some(v) = job.get(dir) else { continue };
        let dpath = json_path(path, dir);
        let d = object_at(v, &dpath, "an object (fio's figures for one direction)")?;
        for key in DIR_NUMBERS.iter().chain(&["total_ios"]) {
            if let Some(v) = d.get(*key) {
                check_figure(v, json_path(&dpath, key))?;
            }
        }
        for lat in LATENCIES {
            if let Some(v) = d.get(lat) {
                check_latency(v, &json_path(&dpath, lat))?;
            }
        }
    }
    Ok(())
}

fn check_latency(v: &Value, path: &str) -> Result<(), ImportError> {
    let l = object_at(v, path, "an object (fio's latency statistics)")?;
    for key in ["N", "min", "max", "mean", "stddev"] {
        if let Some(v) = l.get(key) {
            check_figure(v, json_path(path, key))?;
        }
    }
    for (table, what) in [
        ("percentile", "an object of percentile: latency"),
        ("bins", "an object of latency: count"),
    ] {
        let Some(v) = l.get(table) else { continue };
        let tpath = json_path(path, table);
        for (k, v) in object_at(v, &tpath, what)? {
            let kpath = json_path(&tpath, k);
            if k.trim().parse::<f64>().map_or(true, |x| !x.is_finite()) {
                return Err(ImportError::WrongType {
                    path: kpath,
                    expected: "a number as the key (a percentile or a latency)",
                    got: format!("the key {k:?}"),
                });
            }
            check_figure(v, kpath)?;
        }
    }
    Ok(())
}

fn f64_of(v: Option<&Value>) -> Option<f64> {
    v.and_then(|v| {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    })
    .filter(|x| x.is_finite())
}

fn u64_of(v: Option<&Value>) -> Option<u64> {
    f64_of(v).filter(|x| *x >= 0.0).map(|x| x.round() as u64)
}

/// fio's time units: seconds unless suffixed (`us`, `ms`, `s`, `m`, `h`, `d`).
fn fio_time_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: f64 = num.parse().ok()?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1e9,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => return None,
    };
    let v = num * mult;
    (v.is_finite() && v < u64::MAX as f64).then_some(v.round() as u64)
}

/// A boolean fio option: present without a value, or non-zero.
fn fio_bool(v: Option<&String>) -> bool {
    v.is_some_and(|v| {
        let v = v.trim();
        v.is_empty() || (v != "0" && !v.eq_ignore_ascii_case("false"))
    })
}

struct Opts {
    map: BTreeMap<String, String>,
    kb_base: u64,
}

impl Opts {
    fn get(&self, k: &str) -> Option<&String> {
        self.map.get(k)
    }
    fn size(&self, k: &str) -> Option<u64> {
        self.get(k).and_then(|v| fio_size(v, self.kb_base).ok())
    }
    fn num<T: std::str::FromStr>(&self, k: &str) -> Option<T> {
        self.get(k).and_then(|v| v.trim().parse().ok())
    }
}

fn options_of(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Units of a fio document: fio 3.x reports bytes and nanoseconds, fio 2.x
/// KiB and microseconds.
#[derive(Clone, Copy, PartialEq)]
enum Era {
    V3,
    V2,
}

fn era_of(dir: &Map<String, Value>) -> Era {
    if dir.contains_key("io_kbytes") || dir.contains_key("clat_ns") || dir.contains_key("bw_bytes")
    {
        Era::V3
    } else {
        Era::V2
    }
}

/// One latency block (`clat_ns`, `lat_ns`, or 2.x `clat`, `lat`).
#[derive(Clone, Default)]
struct Lat {
    n: u64,
    min: f64,
    max: f64,
    mean: f64,
    stddev: f64,
    /// (percent, ns), sorted by percent.
    pct: Vec<(f64, f64)>,
    /// fio's latency histogram (`--output-format=json+`): (bucket value
    /// in ns, count), sorted by value. Lets separate histograms merge exactly.
    bins: Option<Vec<(f64, u64)>>,
}

/// fio's default `percentile_list`.
const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Percentiles from a histogram the way fio computes them: the value of the
/// first bucket at which the running count reaches `p/100 × total`.
fn pct_from_bins(bins: &[(f64, u64)], wants: &[f64]) -> Vec<(f64, f64)> {
    let total: u64 = bins.iter().map(|b| b.1).fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
    let mut out = Vec::new();
    if total == 0 {
        return out;
    }
    for &p in wants {
        let need = p / 100.0 * total as f64;
        let mut sum = 0u64;
        for &(v, c) in bins {
            sum += c;
            if sum as f64 >= need {
                out.push((p, v));
                break;
            }
        }
    }
    out
}

/// Merge latency summaries of separate fio entries (clones of a job, or the
/// read and write sides of a phase). With histograms (json+) percentiles
/// are exact; without, the worst input's are kept (an upper bound) and
/// `warnings` says so.
fn merge_lats(lats: &[&Lat], warnings: &mut Vec<String>, what: &str) -> Option<Lat> {
    match lats {
        [] => return None,
        [one] => return Some((*one).clone()),
        _ => {}
    }
    let n: u64 = lats.iter().map(|l| l.n).fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
    let w = |l: &Lat| {
        if n > 0 {
            l.n as f64 / n as f64
        } else {
            1.0 / lats.len() as f64
        }
    };
    let mean: f64 = lats.iter().map(|l| w(l) * l.mean).sum();
    // Pooled variance: within-part variance plus the spread of the means.
    let var: f64 = lats
        .iter()
        .map(|l| w(l) * (l.stddev * l.stddev + (l.mean - mean).powi(2)))
        .sum();
    let bins = if lats.iter().all(|l| l.bins.is_some()) {
        let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
        for l in lats {
            for &(v, c) in l.bins.as_deref().unwrap_or_default() {
                *merged.entry(v.round() as u64).or_insert(0) += c;
            }
        }
        Some(
            merged
                .into_iter()
                .map(|(v, c)| (v as f64, c))
                .collect::<Vec<_>>(),
        )
    } else {
        None
    };
    let pct = match &bins {
        Some(b) => pct_from_bins(b, &FIO_PERCENTILES),
        None => {
            let mut pct: Vec<(f64, f64)> = Vec::new();
            for l in lats {
                for &(p, v) in &l.pct {
                    match pct.iter_mut().find(|(q, _)| (q - p).abs() < 1e-9) {
                        Some(e) => e.1 = e.1.max(v),
                        None => pct.push((p, v)),
                    }
                }
            }
            pct.sort_by(|a, b| a.0.total_cmp(&b.0));
            warnings.push(format!(
                "{what} latency percentiles are the worst of {} parts that fio reported separately \
                 (an upper bound); fio's --output-format=json+ histograms would merge exactly",
                lats.len()
            ));
            pct
        }
    };
    Some(Lat {
        n,
        min: lats.iter().map(|l| l.min).fold(f64::INFINITY, f64::min),
        max: lats.iter().map(|l| l.max).fold(0.0, f64::max),
        mean,
        stddev: var.sqrt(),
        pct,
        bins,
    })
}

fn lat_of(dir: &Map<String, Value>, name: &str, era: Era) -> Option<Lat> {
    let (key, scale) = match era {
        Era::V3 => (format!("{name}_ns"), 1.0),
        Era::V2 => (name.to_string(), 1000.0),
    };
    let o = dir.get(&key)?.as_object()?;
    let mut pct: Vec<(f64, f64)> = o
        .get("percentile")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()? * scale)))
                // fio 2.x pads the list with "0.00": 0 entries.
                .filter(|(k, _)| *k > 0.0)
                .collect()
        })
        .unwrap_or_default();
    pct.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = o.get("bins").and_then(Value::as_object).map(|b| {
        let mut v: Vec<(f64, u64)> = b
            .iter()
            .filter_map(|(k, c)| Some((k.parse::<f64>().ok()? * scale, c.as_u64()?)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    });
    Some(Lat {
        n: u64_of(o.get("N")).unwrap_or(0),
        min: f64_of(o.get("min")).unwrap_or(0.0) * scale,
        max: f64_of(o.get("max")).unwrap_or(0.0) * scale,
        mean: f64_of(o.get("mean")).unwrap_or(0.0) * scale,
        stddev: f64_of(o.get("stddev")).unwrap_or(0.0) * scale,
        pct,
        bins,
    })
}

/// One direction (`read`/`write`) of one fio job entry.
#[derive(Clone, Default)]
struct Dir {
    bytes: u64,
    ops: u64,
    bw: f64,
    iops: f64,
    runtime_ns: u64,
    lat: Option<Lat>,
}

fn dir_of(job: &Map<String, Value>, name: &str, use_lat: bool, warnings: &mut Vec<String>) -> Dir {
    let Some(d) = job.get(name).and_then(Value::as_object) else {
        return Dir::default();
    };
    let era = era_of(d);
    let kib = |v: Option<u64>| v.map(|x| x.saturating_mul(1024));
    let (bytes, bw) = match era {
        Era::V3 => (
            u64_of(d.get("io_bytes")).unwrap_or(0),
            f64_of(d.get("bw_bytes")).or_else(|| f64_of(d.get("bw")).map(|b| b * 1024.0)),
        ),
        Era::V2 => (
            kib(u64_of(d.get("io_bytes"))).unwrap_or(0),
            f64_of(d.get("bw")).map(|b| b * 1024.0),
        ),
    };
    let runtime_ns = u64_of(d.get("runtime"))
        .unwrap_or(0)
        .saturating_mul(1_000_000);
    let secs = runtime_ns as f64 / 1e9;
    let iops = f64_of(d.get("iops")).unwrap_or(0.0);
    let ops = u64_of(d.get("total_ios")).unwrap_or_else(|| (iops * secs).round() as u64);
    let bw = bw.unwrap_or(if secs > 0.0 { bytes as f64 / secs } else { 0.0 });
    let lat = if use_lat {
        lat_of(d, "lat", era)
    } else {
        lat_of(d, "clat", era)
    };
    if ops > 0 && lat.as_ref().is_some_and(|l| l.pct.is_empty()) {
        warnings.push(format!(
            "fio recorded no {name} latency percentiles (clat_percentiles=0?): percentiles show the maximum"
        ));
    }
    Dir {
        bytes,
        ops,
        bw,
        iops,
        runtime_ns,
        lat: lat.filter(|_| ops > 0),
    }
}

/// Merge clones of one job: counts add up, the window is the longest.
fn merge_dirs(dirs: &[Dir], warnings: &mut Vec<String>, what: &str) -> Dir {
    if dirs.len() == 1 {
        return dirs[0].clone();
    }
    let bytes: u64 = dirs.iter().map(|d| d.bytes).fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
    let ops: u64 = dirs.iter().map(|d| d.ops).fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
    let runtime_ns = dirs.iter().map(|d| d.runtime_ns).max().unwrap_or(0);
    let secs = runtime_ns as f64 / 1e9;
    let lats: Vec<&Lat> = dirs.iter().filter_map(|d| d.lat.as_ref()).collect();
    let lat = merge_lats(&lats, warnings, &format!("{what} (clones)"));
    Dir {
        bytes,
        ops,
        bw: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
        iops: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        runtime_ns,
        lat,
    }
}

fn latency_stats(l: &Lat, dir: &str, warnings: &mut Vec<String>) -> LatencyStats {
    let mut pick = |want: f64, label: &str| -> u64 {
        if let Some(&(_, v)) = l.pct.iter().find(|(p, _)| (p - want).abs() < 1e-6) {
            return v.round() as u64;
        }
        match l.pct.iter().find(|(p, _)| *p > want) {
            Some(&(p, v)) => {
                warnings.push(format!(
                    "fio did not report the {dir} {label}; it shows fio's p{p} (an upper bound)"
                ));
                v.round() as u64
            }
            None => l.max.round() as u64,
        }
    };
    LatencyStats {
        min: l.min.round() as u64,
        mean: l.mean,
        stddev: l.stddev,
        max: l.max.round() as u64,
        p50: pick(50.0, "p50"),
        p90: pick(90.0, "p90"),
        p99: pick(99.0, "p99"),
        p99_9: pick(99.9, "p99.9"),
        p99_99: pick(99.99, "p99.99"),
    }
}

fn dir_stats(d: &Dir, name: &str, warnings: &mut Vec<String>) -> DirStats {
    DirStats {
        bytes: d.bytes,
        ops: d.ops,
        bw_bytes_per_s: d.bw,
        iops: d.iops,
        lat_ns: d.lat.as_ref().map(|l| latency_stats(l, name, warnings)),
    }
}

fn rw_of(opts: &Opts, job: &str) -> Result<(RwMode, u8), SkippedJob> {
    let raw = opts
        .get("rw")
        .or_else(|| opts.get("readwrite"))
        .map(String::as_str)
        .unwrap_or("read");
    // `rw=randread:8` adds an offset modifier after a colon.
    let base = raw.split(':').next().unwrap_or(raw).trim();
    // fio reports trims under their own "trim" key, which storlab's record
    // has no place for (a storlab trim phase counts its trims as writes):
    // importing one would store zeros, so the job is left out, named.
    let rw = RwMode::parse(base)
        .filter(|rw| !rw.trims())
        .ok_or_else(|| SkippedJob::UnsupportedRw {
            job: job.to_string(),
            rw: raw.to_string(),
        })?;
    let mix = match (opts.num::<u8>("rwmixread"), opts.num::<u8>("rwmixwrite")) {
        (Some(r), _) => r,
        (None, Some(w)) => 100u8.saturating_sub(w),
        (None, None) => 50,
    };
    Ok((rw, mix.min(100)))
}

fn bs_of(opts: &Opts, warnings: &mut Vec<String>) -> Vec<BsWeight> {
    if let Some(split) = opts.get("bssplit") {
        // `4k/50:64k/50`, optionally `read,write` lists: take the read list.
        let first = split.split(',').next().unwrap_or(split);
        let mut out: Vec<BsWeight> = Vec::new();
        let mut missing = 0;
        for part in first.split(':').filter(|p| !p.trim().is_empty()) {
            let (bs, w) = part.split_once('/').unwrap_or((part, ""));
            let Ok(bs) = fio_size(bs, opts.kb_base) else {
                continue;
            };
            let weight = w.trim().parse::<u32>().unwrap_or(0);
            if weight == 0 {
                missing += 1;
            }
            out.push(BsWeight {
                bs_bytes: bs,
                weight,
            });
        }
        if let Some(share) = 100u32
            .saturating_sub(out.iter().map(|b| b.weight).sum())
            .checked_div(missing)
        {
            // fio shares what is left of 100 % among entries with no weight.
            for b in out.iter_mut().filter(|b| b.weight == 0) {
                b.weight = share;
            }
        }
        if !out.is_empty() {
            return out;
        }
        warnings.push(format!(
            "bssplit={split} could not be read; block size shown as bs"
        ));
    }
    let raw = opts
        .get("bs")
        .or_else(|| opts.get("blocksize"))
        .map(String::as_str);
    let bs = match raw {
        None => 4096,
        Some(v) => {
            // `bs=4k,64k` gives read,write sizes; a range `4k-64k` its bounds.
            let first = v.split(',').next().unwrap_or(v);
            let first = first.split('-').next().unwrap_or(first);
            fio_size(first, opts.kb_base).unwrap_or_else(|_| {
                warnings.push(format!(
                    "bs={v} could not be read; 4 KiB (fio's default) shown"
                ));
                4096
            })
        }
    };
    if raw.is_some_and(|v| v.contains(',') || v.contains('-')) {
        warnings.push(format!(
            "fio bs={} names several sizes; the first is shown",
            raw.unwrap_or_default()
        ));
    }
    vec![BsWeight {
        bs_bytes: bs,
        weight: 100,
    }]
}

fn engine_of(opts: &Opts, warnings: &mut Vec<String>) -> EngineKind {
    let raw = opts.get("ioengine").map(String::as_str).unwrap_or("psync");
    match raw {
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => EngineKind::Psync,
        "io_uring" => EngineKind::IoUring,
        "null" => EngineKind::Null,
        "libaio" => EngineKind::Libaio,
        "posixaio" | "io_uring_cmd" | "windowsaio" | "solarisaio" => {
            warnings.push(format!(
                "fio ioengine={raw} is recorded as io_uring, the closest storlab engine \
                 (asynchronous, iodepth honoured)"
            ));
            EngineKind::IoUring
        }
        other => {
            warnings.push(format!(
                "fio ioengine={other} is recorded as psync, the closest storlab engine"
            ));
            EngineKind::Psync
        }
    }
}

fn rfc3339(unix_ms: u64) -> String {
    storlab_types::time::rfc3339_unix_ms(unix_ms)
}

/// The per-job part of a phase: each fio job entry's figures, and the
/// phase's CPU time and errors summed over them.
struct Jobs {
    per_job: Vec<JobResult>,
    reads: Vec<Dir>,
    writes: Vec<Dir>,
    user_ns: u64,
    sys_ns: u64,
    errors: BTreeMap<String, u64>,
}

fn jobs_of(entries: &[&Map<String, Value>], use_lat: bool, warnings: &mut Vec<String>) -> Jobs {
    let mut per_job = Vec::new();
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    let (mut user_ns, mut sys_ns) = (0u64, 0u64);
    let mut errors = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let mut w = Vec::new();
        let r = dir_of(e, "read", use_lat, &mut w);
        let wr = dir_of(e, "write", use_lat, &mut w);
        // unified_rw_reporting puts both directions under "mixed".
        let mixed = dir_of(e, "mixed", use_lat, &mut w);
        let (r, wr) = if mixed.ops > 0 && r.ops == 0 && wr.ops == 0 {
            warnings.push(
                "fio reported reads and writes together (unified_rw_reporting): shown as reads"
                    .into(),
            );
            (mixed, wr)
        } else {
            (r, wr)
        };
        for x in w {
            if !warnings.contains(&x) {
                warnings.push(x);
            }
        }
        let job_ns = u64_of(e.get("job_runtime"))
            .map(|ms| ms * 1_000_000)
            .unwrap_or_else(|| r.runtime_ns.max(wr.runtime_ns));
        let cpu = |k: &str| f64_of(e.get(k)).unwrap_or(0.0) / 100.0 * job_ns as f64;
        user_ns += cpu("usr_cpu") as u64;
        sys_ns += cpu("sys_cpu") as u64;
        let mut job_errors = BTreeMap::new();
        let code = u64_of(e.get("error")).unwrap_or(0);
        if code != 0 {
            job_errors.insert(format!("fio_error_{code}"), 1);
            *errors.entry(format!("fio_error_{code}")).or_insert(0) += 1;
        }
        if let Some(n) = u64_of(e.get("total_err")).filter(|n| *n > 0) {
            job_errors.insert("io_errors".into(), n);
            *errors.entry("io_errors".into()).or_insert(0) += n;
        }
        let mut jw = Vec::new();
        per_job.push(JobResult {
            job: i as u32,
            elapsed_ns: job_ns,
            read: dir_stats(&r, "read", &mut jw),
            write: dir_stats(&wr, "write", &mut jw),
            errors: job_errors,
            mean_depth: None,
        });
        reads.push(r);
        writes.push(wr);
    }
    Jobs {
        per_job,
        reads,
        writes,
        user_ns,
        sys_ns,
        errors,
    }
}

/// A phase's total over both directions: one direction's figures when only
/// it moved; else the sums, and latency only where both directions have
/// histograms to merge.
fn total_of(
    read: &Dir,
    write: &Dir,
    read_s: DirStats,
    write_s: DirStats,
    warnings: &mut Vec<String>,
) -> DirStats {
    match (read.ops > 0, write.ops > 0) {
        (true, false) => read_s,
        (false, true) => write_s,
        _ => {
            let secs = read.runtime_ns.max(write.runtime_ns) as f64 / 1e9;
            let bytes = read.bytes + write.bytes;
            let ops = read.ops + write.ops;
            // Read and write latency merge exactly only from histograms.
            let both: Vec<&Lat> = [&read.lat, &write.lat]
                .into_iter()
                .flatten()
                .filter(|l| l.bins.is_some())
                .collect();
            let lat_ns = if both.len() == 2 {
                merge_lats(&both, warnings, "total").map(|l| latency_stats(&l, "total", warnings))
            } else {
                if ops > 0 {
                    warnings.push(
                        "fio reports read and write latency separately; the phase total has none \
                         (fio's --output-format=json+ histograms would give it)"
                            .into(),
                    );
                }
                None
            };
            DirStats {
                bytes,
                ops,
                bw_bytes_per_s: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
                iops: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
                lat_ns,
            }
        }
    }
}

/// fio's cache options as a cache mode: O_DIRECT, else invalidated (cold,
/// not verified), else buffered (the page cache as fio found it); and
/// whether the I/O was direct.
fn cache_of(opts: &Opts) -> (bool, CacheMode, Option<String>) {
    let direct =
        fio_bool(opts.get("direct")) || opts.get("buffered").is_some_and(|b| b.trim() == "0");
    let invalidate = opts.get("invalidate").is_none_or(|v| fio_bool(Some(v)));
    let (cache, method) = if direct {
        (
            CacheMode::Direct,
            Some("fio direct=1 (O_DIRECT)".to_string()),
        )
    } else if invalidate {
        (
            CacheMode::Cold,
            Some("fio invalidate=1: posix_fadvise(DONTNEED) before the job, not verified".into()),
        )
    } else {
        (
            CacheMode::Buffered,
            Some("fio invalidate=0: the page cache as fio found it".into()),
        )
    };
    (direct, cache, method)
}

/// What `phase_of` worked out before the parameters are filled in.
struct Fixed {
    name: String,
    rw: RwMode,
    rwmixread: u8,
    bs: Vec<BsWeight>,
    size_bytes: u64,
    engine: EngineKind,
    cache: CacheMode,
    buffer_pattern: BufferPattern,
}

/// The phase's parameters: fio's job options, one field after another.
fn params_of(opts: &Opts, entries: usize, f: Fixed) -> PhaseParams {
    let Fixed {
        name,
        rw,
        rwmixread,
        bs,
        size_bytes,
        engine,
        cache,
        buffer_pattern,
    } = f;
    PhaseParams {
        name,
        rw,
        rwmixread: rw.read_pct(rwmixread),
        bs,
        size_bytes,
        numjobs: opts.num::<u32>("numjobs").unwrap_or(1).max(entries as u32),
        iodepth: opts.num::<u32>("iodepth").unwrap_or(1),
        engine,
        cache,
        runtime_ns: opts.get("runtime").and_then(|v| fio_time_ns(v)),
        time_based: fio_bool(opts.get("time_based")),
        ramp_ns: opts
            .get("ramp_time")
            .and_then(|v| fio_time_ns(v))
            .unwrap_or(0),
        fsync_every: opts.num::<u32>("fsync").unwrap_or(0),
        end_fsync: fio_bool(opts.get("end_fsync")),
        layout: FileLayout::PerJob,
        buffer_pattern,
        random_with_replacement: fio_bool(opts.get("norandommap")),
        verify: opts
            .get("verify")
            .is_some_and(|v| !matches!(v.trim(), "0" | "null" | "")),
        seed: opts.num::<u64>("randseed").unwrap_or(0),
        sqpoll: fio_bool(opts.get("sqthread_poll")),
        registered: fio_bool(opts.get("fixedbufs")) || fio_bool(opts.get("registerfiles")),
        // `rate_iops=R[,W]`: the read cap (or the only one).
        rate_iops: opts
            .get("rate_iops")
            .and_then(|v| v.split(',').find(|x| !x.trim().is_empty()))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        // fio pre-allocates new files unless `fallocate=none` (or 0).
        fallocate: opts
            .get("fallocate")
            .is_none_or(|v| !matches!(v.trim(), "none" | "0" | "false")),
        // fio's `iodepth_batch_submit` (alias `iodepth_batch`), default 1.
        iodepth_batch: opts
            .num::<u32>("iodepth_batch_submit")
            .or_else(|| opts.num::<u32>("iodepth_batch"))
            .filter(|b| *b > 0)
            .unwrap_or(1),
        log_interval_ns: 1_000_000_000,
        loops: 1,
        ..Default::default()
    }
}

/// Turn one group of fio job entries (a job and its clones) into a phase.
fn phase_of(
    entries: &[&Map<String, Value>],
    global: &BTreeMap<String, String>,
    started_ms: u64,
) -> Result<PhaseResult, SkippedJob> {
    let first = entries[0];
    let name = first
        .get("jobname")
        .and_then(Value::as_str)
        .unwrap_or("job")
        .to_string();
    let mut map = global.clone();
    map.extend(options_of(first.get("job options")));
    let kb_base = match map.get("kb_base").map(String::as_str) {
        Some("1000") => 1000,
        _ => 1024,
    };
    let opts = Opts { map, kb_base };
    let mut warnings = Vec::new();
    let (rw, rwmixread) = rw_of(&opts, &name)?;
    let use_lat = fio_bool(opts.get("lat_percentiles"))
        || entries.iter().any(|e| {
            ["read", "write"].iter().any(|d| {
                e.get(*d)
                    .and_then(|d| d.get("lat_ns").or_else(|| d.get("lat")))
                    .and_then(|l| l.get("percentile"))
                    .and_then(Value::as_object)
                    .is_some_and(|p| p.iter().any(|(_, v)| v.as_f64().unwrap_or(0.0) > 0.0))
            })
        });
    let Jobs {
        per_job,
        reads,
        writes,
        user_ns,
        sys_ns,
        errors,
    } = jobs_of(entries, use_lat, &mut warnings);
    let read = merge_dirs(&reads, &mut warnings, "read");
    let write = merge_dirs(&writes, &mut warnings, "write");
    let elapsed_ns = per_job
        .iter()
        .map(|j| j.elapsed_ns)
        .max()
        .unwrap_or(0)
        .max(read.runtime_ns)
        .max(write.runtime_ns);
    let read_s = dir_stats(&read, "read", &mut warnings);
    let write_s = dir_stats(&write, "write", &mut warnings);
    let total = total_of(&read, &write, read_s, write_s, &mut warnings);
    let (direct, cache, method) = cache_of(&opts);
    let size_bytes = match opts.get("size") {
        Some(s) => fio_size(s, kb_base).unwrap_or_else(|_| {
            warnings.push(format!(
                "fio size={s} is relative; size_bytes shows 0 (unknown)"
            ));
            0
        }),
        None => opts.size("filesize").unwrap_or(0),
    };
    let buffer_pattern = if fio_bool(opts.get("zero_buffers")) {
        BufferPattern::Zero
    } else if let Some(pct) = opts
        .num::<u8>("buffer_compress_percentage")
        .filter(|p| *p > 0)
    {
        BufferPattern::Compressible { pct: pct.min(100) }
    } else {
        BufferPattern::Random
    };
    let ops = read.ops.saturating_add(write.ops);
    let cpu_ns = user_ns.saturating_add(sys_ns);
    let bs = bs_of(&opts, &mut warnings);
    let engine = engine_of(&opts, &mut warnings);
    let interrupted = !errors.is_empty();
    let mut phase = PhaseResult {
        device_stat: None,
        params: params_of(
            &opts,
            entries.len(),
            Fixed {
                name,
                rw,
                rwmixread,
                bs,
                size_bytes,
                engine,
                cache,
                buffer_pattern,
            },
        ),
        started_at: rfc3339(started_ms),
        elapsed_ns,
        fsync_in_window: fio_bool(opts.get("end_fsync")),
        end_fsync_ns: 0,
        latency_span: if use_lat {
            "fio lat: submission to completion".into()
        } else {
            "fio clat: completion latency, from submission to the device to completion \
             (excludes fio's submission latency slat)"
                .into()
        },
        read: read_s,
        write: write_s,
        total,
        jobs: per_job,
        cpu: CpuStats {
            user_ns,
            sys_ns,
            cpu_ns_per_io: if ops > 0 {
                cpu_ns as f64 / ops as f64
            } else {
                0.0
            },
            utilization_pct: if elapsed_ns > 0 {
                cpu_ns as f64 / elapsed_ns as f64 * 100.0
            } else {
                0.0
            },
        },
        errors,
        cache: CacheReport {
            mode: cache.as_str().into(),
            method,
            verified: None,
            may_be_cached: !direct,
            ..Default::default()
        },
        verify: None,
        depth: None,
        interrupted,
        warnings,
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
    };
    known_options(&opts, entries.len(), &mut phase);
    Ok(phase)
}

/// The options storlab knows besides those [`params_of`] reads, so
/// `compare` against a storlab run of the same job finds no difference
/// that is not there. fio 3.33 leaves an option given without a value
/// (`time_based`, `group_reporting`, `norandommap`) out of its JSON (later
/// versions write it as ""): `time_based` is then read from the figures
/// (a job that ran to its `runtime`, or moved more than its size, was time
/// based for what was measured) and `group_reporting` from the clones
/// reported as one; the record's warnings say so.
fn known_options(opts: &Opts, entries: usize, ph: &mut PhaseResult) {
    let p = &mut ph.params;
    if let Some(ms) = opts.num::<u64>("log_avg_msec").filter(|ms| *ms > 0) {
        p.log_interval_ns = ms.saturating_mul(1_000_000);
    }
    if let Some(loops) = opts.num::<u32>("loops").filter(|l| *l > 0) {
        p.loops = loops;
    }
    // fio: a bare thinktime is microseconds.
    if let Some(t) = opts.get("thinktime").map(|t| t.trim()) {
        p.thinktime_ns = match t.parse::<u64>() {
            Ok(us) => us.saturating_mul(1000),
            Err(_) => fio_time_ns(t).unwrap_or(0),
        };
    }
    if let Some(list) = opts.get("percentile_list") {
        p.report.percentile_list = list
            .split(':')
            .filter_map(|v| v.trim().trim_end_matches('%').parse::<f64>().ok())
            .filter(|v| (0.0..=100.0).contains(v))
            .collect();
    }
    if let Some(u) = opts.get("unified_rw_reporting") {
        p.report.unified_rw_reporting = match u.trim() {
            "1" | "mixed" => "mixed".into(),
            "2" | "both" => "both".into(),
            _ => String::new(),
        };
    }
    let mut inferred = Vec::new();
    match opts.get("group_reporting") {
        Some(v) => p.group_reporting = fio_bool(Some(v)),
        None if entries == 1 && p.numjobs > 1 => {
            p.group_reporting = true;
            inferred.push("group_reporting (its clones are reported as one)");
        }
        None => {}
    }
    if opts.get("time_based").is_none()
        && let Some(runtime) = p.runtime_ns
    {
        let moved = ph.read.bytes.saturating_add(ph.write.bytes) / u64::from(p.numjobs.max(1));
        let passes = u64::from(p.loops.max(1));
        let to_the_end = ph.elapsed_ns >= runtime / 100 * 99;
        if to_the_end || (p.size_bytes > 0 && moved > p.size_bytes.saturating_mul(passes)) {
            p.time_based = true;
            inferred.push("time_based (the job ran to its runtime)");
        }
    }
    if !inferred.is_empty() {
        ph.warnings.push(format!(
            "fio's JSON leaves out options given without a value (fio 3.33 does): {} inferred from \
             the figures; norandommap and other such options cannot be, so give them a value \
             (norandommap=1) in the job file for an exact record",
            inferred.join(", ")
        ));
    }
}

/// A job entry of fio's document.
type Entry<'a> = &'a Map<String, Value>;

/// fio's version and its job entries (the aggregate "All clients" entries
/// of `fio --client` left out), or why the document is not fio's.
fn job_entries(doc: &Map<String, Value>) -> Result<(Option<&str>, Vec<Entry<'_>>), ImportError> {
    let version = doc.get("fio version").and_then(Value::as_str);
    // fio --client puts the jobs under "client_stats" with one aggregate
    // entry per group named "All clients".
    let jobs = doc
        .get("jobs")
        .or_else(|| doc.get("client_stats"))
        .and_then(Value::as_array);
    let Some(jobs) = jobs else {
        let keys: Vec<&str> = doc.keys().map(String::as_str).take(6).collect();
        return Err(ImportError::NotFio {
            reason: format!(
                "it has no \"jobs\" list (its keys are: {})",
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            ),
        });
    };
    let entries: Vec<&Map<String, Value>> = jobs
        .iter()
        .filter_map(Value::as_object)
        .filter(|j| j.contains_key("jobname"))
        .filter(|j| j.get("jobname").and_then(Value::as_str) != Some("All clients"))
        .collect();
    if version.is_none() && entries.is_empty() {
        return Err(ImportError::NotFio {
            reason: "it has neither a \"fio version\" key nor fio job entries".into(),
        });
    }
    if entries.is_empty() {
        return Err(ImportError::NoJobs {
            reason: "the \"jobs\" list is empty".into(),
        });
    }
    Ok((version, entries))
}

/// When fio ended, in ms since 1970 (0 when the document does not say).
fn end_ms_of(doc: &Map<String, Value>) -> Result<u64, ImportError> {
    let end_ms = match u64_of(doc.get("timestamp_ms")) {
        Some(ms) => ms,
        None => match u64_of(doc.get("timestamp")) {
            // Seconds since 1970 that do not fit in milliseconds are no
            // time fio wrote (the fuzz pass found the overflow).
            Some(s) => s.checked_mul(1000).ok_or_else(|| ImportError::WrongType {
                path: "timestamp".into(),
                expected: "seconds since 1970 (fio's end time)",
                got: s.to_string(),
            })?,
            None => 0,
        },
    };
    if end_ms > storlab_types::time::MAX_RFC3339_UNIX_MS {
        return Err(ImportError::WrongType {
            path: "timestamp".into(),
            expected: "a time before the year 10000 (fio's end time)",
            got: format!("{end_ms} ms since 1970"),
        });
    }

    Ok(end_ms)
}

/// A job and its clones: consecutive entries with the same job name, group
/// and host.
fn clone_groups(entries: Vec<Entry<'_>>) -> Vec<Vec<Entry<'_>>> {
    let key = |j: &Map<String, Value>| {
        (
            j.get("jobname")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            u64_of(j.get("groupid")),
            j.get("hostname")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )
    };
    let mut groups: Vec<Vec<&Map<String, Value>>> = Vec::new();
    for e in entries {
        match groups.last_mut() {
            Some(g) if key(g[0]) == key(e) => g.push(e),
            _ => groups.push(vec![e]),
        }
    }
    groups
}

/// Each clone group as a phase, timed back from fio's end: the run's start,
/// the phases, and the groups that could not be imported (and why).
fn phases_of(
    groups: &[Vec<&Map<String, Value>>],
    global: &BTreeMap<String, String>,
    end_ms: u64,
) -> Result<(u64, Vec<PhaseResult>, Vec<SkippedJob>), ImportError> {
    // fio runs groups one after another (stonewall) and the jobs of a
    // group together; it stamps the document when it ends, so start times
    // are counted back from there.
    let group_ms = |g: &[&Map<String, Value>]| {
        g.iter()
            .map(|e| {
                // fio 2.x has no job_runtime: take the longer direction.
                u64_of(e.get("job_runtime")).unwrap_or_else(|| {
                    ["read", "write", "mixed"]
                        .iter()
                        .filter_map(|d| u64_of(e.get(*d).and_then(|d| d.get("runtime"))))
                        .max()
                        .unwrap_or(0)
                })
            })
            .max()
            .unwrap_or(0)
    };
    let mut by_groupid: BTreeMap<u64, u64> = BTreeMap::new();
    for g in groups {
        let id = u64_of(g[0].get("groupid")).unwrap_or(0);
        let ms = group_ms(g);
        let e = by_groupid.entry(id).or_insert(0);
        *e = (*e).max(ms);
    }
    let total_ms: u64 = by_groupid.values().copied().fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
    let start_ms = end_ms.saturating_sub(total_ms);
    let mut phases = Vec::new();
    let mut skipped = Vec::new();
    for set in concurrent_sets(groups) {
        let id = u64_of(set[0][0].get("groupid")).unwrap_or(0);
        let before: u64 = by_groupid
            .range(..id)
            .map(|(_, &ms)| ms)
            .fold(0u64, u64::saturating_add); // absurd inputs saturate, never wrap
        let started = start_ms.saturating_add(before);
        let ran = if set.len() == 1 {
            phase_of(set[0], global, started)
        } else {
            grouped_phase_of(&set, global, started)
        };
        match ran {
            Ok(p) => phases.push(p),
            Err(e) => skipped.push(e),
        }
    }
    if phases.is_empty() {
        let reasons: Vec<String> = skipped.iter().map(ToString::to_string).collect();
        return Err(ImportError::NoJobs {
            reason: reasons.join("; "),
        });
    }
    Ok((start_ms, phases, skipped))
}

/// The jobs fio ran together: consecutive jobs (each with its clones) of
/// one `groupid` on one host. fio starts the jobs that no `stonewall`
/// separates at once, and a `stonewall` starts a new reporting group;
/// `storlab bench --fio-job` makes the same jobs the groups of one phase.
fn concurrent_sets<'a, 'b>(groups: &'b [Vec<Entry<'a>>]) -> Vec<Vec<&'b [Entry<'a>]>> {
    let key = |g: &[Entry<'_>]| {
        (
            u64_of(g[0].get("groupid")),
            g[0].get("hostname")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )
    };
    let mut sets: Vec<Vec<&'b [Entry<'a>]>> = Vec::new();
    for g in groups {
        match sets.last_mut() {
            Some(s) if key(s[0]) == key(g) => s.push(g.as_slice()),
            _ => sets.push(vec![g.as_slice()]),
        }
    }
    sets
}

/// Several fio jobs that ran together as one phase of job groups, as
/// `storlab bench --fio-job` runs them: each job (with its clones) a group
/// over its own window (all start at the phase's epoch: fio starts them
/// together), the phase the aggregate of all their entries (bytes add up,
/// latency histograms merged when fio wrote them), named `a+b`.
fn grouped_phase_of(
    set: &[&[Entry<'_>]],
    global: &BTreeMap<String, String>,
    started_ms: u64,
) -> Result<PhaseResult, SkippedJob> {
    let mut members = Vec::with_capacity(set.len());
    let mut first_job = 0u32;
    for g in set {
        let mut p = phase_of(g, global, started_ms)?;
        // One fio groupid is one reporting group: the jobs after the
        // first share its report (as `--fio-job` records them).
        p.params.shares_report = !members.is_empty();
        let n = p.params.numjobs;
        members.push(GroupResult {
            name: p.params.name.clone(),
            first_job,
            params: p.params,
            start_ns: 0,
            end_ns: p.elapsed_ns,
            elapsed_ns: p.elapsed_ns,
            read: p.read,
            write: p.write,
            total: p.total,
            cpu: p.cpu,
            depth: p.depth,
            cache: p.cache,
            warnings: p.warnings,
            percentiles: p.percentiles,
            verify: None,
        });
        first_job = first_job.saturating_add(n);
    }
    let all: Vec<Entry<'_>> = set.iter().flat_map(|g| g.iter().copied()).collect();
    let mut phase = phase_of(&all, global, started_ms)?;
    let params: Vec<PhaseParams> = members.iter().map(|m| m.params.clone()).collect();
    phase.params = grouped_params(&params);
    // The aggregate's warnings speak of one workload: the groups' are kept.
    phase.warnings = members
        .iter()
        .flat_map(|m| {
            m.warnings
                .iter()
                .map(move |w| format!("group {}: {w}", m.name))
        })
        .collect();
    let windows: Vec<u64> = members.iter().map(|m| m.elapsed_ns).collect();
    let union = windows.iter().copied().max().unwrap_or(0);
    let all_moving_ns = windows.iter().copied().min().unwrap_or(0);
    phase.groups = Some(PhaseGroups {
        overlap: if union > 0 {
            all_moving_ns as f64 / union as f64
        } else {
            0.0
        },
        all_moving_ns,
        groups: members,
        reporting: Vec::new(),
    });
    Ok(phase)
}

/// The phase-level parameters of concurrent jobs, as storlab's job groups
/// describe a phase: named `a+b`, `read`/`write` when every group only
/// reads or only writes and `readwrite` otherwise (its read share the
/// reading jobs' share), the block sizes weighted by jobs, the sum of the
/// jobs, the largest size, depth and runtime.
fn grouped_params(groups: &[PhaseParams]) -> PhaseParams {
    let Some(first) = groups.first() else {
        return PhaseParams::default();
    };
    let name = groups
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    let total: u64 = groups.iter().map(|g| u64::from(g.numjobs)).sum();
    let (rw, read_jobs, bs) = storlab_types::group_mix(groups);
    PhaseParams {
        name,
        rw,
        rwmixread: ((read_jobs * 100) / total.max(1)) as u8,
        bs,
        size_bytes: groups.iter().map(|g| g.size_bytes).max().unwrap_or(0),
        numjobs: u32::try_from(total).unwrap_or(u32::MAX),
        iodepth: groups.iter().map(|g| g.iodepth).max().unwrap_or(1),
        runtime_ns: groups.iter().filter_map(|g| g.runtime_ns).max(),
        time_based: groups.iter().all(|g| g.time_based),
        end_fsync: groups.iter().any(|g| g.rw.writes() && g.end_fsync),
        fallocate: groups.iter().all(|g| g.fallocate),
        iodepth_batch: 1,
        groups: groups.to_vec(),
        ..first.clone()
    }
}

/// The command line that would run the imported jobs, for the record.
fn command_line_of(
    global: &BTreeMap<String, String>,
    groups: &[Vec<&Map<String, Value>>],
) -> Vec<String> {
    let mut command_line = vec!["fio".to_string(), "--output-format=json".to_string()];
    command_line.extend(global.iter().map(|(k, v)| fio_arg(k, v)));
    for g in groups {
        let name = g[0].get("jobname").and_then(Value::as_str).unwrap_or("job");
        command_line.push(format!("--name={name}"));
        command_line.extend(
            options_of(g[0].get("job options"))
                .iter()
                .filter(|(k, _)| k.as_str() != "name")
                .map(|(k, v)| fio_arg(k, v)),
        );
    }
    command_line
}

/// The target of the first job (its filename or directory) and the first
/// disk fio reported.
fn target_of(
    doc: &Map<String, Value>,
    global: &BTreeMap<String, String>,
    groups: &[Vec<&Map<String, Value>>],
) -> TargetInfo {
    let first_opts = {
        let mut m = global.clone();
        m.extend(options_of(groups[0][0].get("job options")));
        m
    };
    let path = first_opts
        .get("filename")
        .or_else(|| first_opts.get("directory"))
        .cloned()
        .unwrap_or_default();
    let kind = if path.starts_with("/dev/") {
        "block_device"
    } else if first_opts.contains_key("filename") {
        "file"
    } else if first_opts.contains_key("directory") {
        "directory"
    } else {
        "unknown"
    };
    let device = doc
        .get("disk_util")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|d| d.get("name"))
        .and_then(Value::as_str)
        .map(|n| format!("/dev/{n}"));
    TargetInfo {
        path,
        kind: kind.into(),
        files: vec![],
        device,
        ..Default::default()
    }
}

/// The document level of the import: version, globals, jobs, clones, in order.
fn parse_fio(doc: &Map<String, Value>, hostname: Option<&str>) -> Result<BenchReport, ImportError> {
    let (version, entries) = job_entries(doc)?;
    check_types(doc)?;
    let global = options_of(doc.get("global options"));
    let end_ms = end_ms_of(doc)?;
    let groups = clone_groups(entries);
    let (start_ms, phases, skipped) = phases_of(&groups, &global, end_ms)?;
    let mut warnings = vec![format!(
        "imported from {} JSON output; start times are derived from fio's end-of-run timestamp",
        version.unwrap_or("fio")
    )];
    warnings.extend(skipped.into_iter().map(|s| format!("not imported: {s}")));

    let command_line = command_line_of(&global, &groups);
    let target = target_of(doc, &global, &groups);
    let host = groups[0][0]
        .get("hostname")
        .and_then(Value::as_str)
        .or(hostname)
        .unwrap_or("")
        .to_string();
    // `storlab bench --output-format fio-json` writes `storlab-VERSION`.
    let tool = match version.and_then(|v| v.strip_prefix("storlab-")) {
        Some(v) => ToolInfo {
            name: "storlab".into(),
            version: v.to_string(),
        },
        None => ToolInfo {
            name: "fio".into(),
            version: version
                .map(|v| v.trim_start_matches("fio-").to_string())
                .unwrap_or_else(|| "unknown".into()),
        },
    };
    let mut report = BenchReport::imported(
        tool,
        command_line,
        (rfc3339(start_ms), rfc3339(end_ms)),
        HostInfo {
            hostname: host,
            ..Default::default()
        },
        target,
    );
    report.interrupted = phases.iter().any(|p| p.interrupted);
    report.stop_reason = phases
        .iter()
        .find(|p| p.interrupted)
        .map(|p| format!("fio reported errors in job '{}'", p.params.name));
    report.phases = phases;
    report.warnings = warnings;
    Ok(report)
}

fn fio_arg(k: &str, v: &str) -> String {
    if v.is_empty() {
        format!("--{k}")
    } else {
        format!("--{k}={v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const V333_RANDREAD: &str = include_str!("../fixtures/fio-3.33-randread.json");
    const V333_MIXED: &str = include_str!("../fixtures/fio-3.33-jobfile-clones.json");
    const V2_STYLE: &str = include_str!("../fixtures/fio-2.x-style.json");
    const V333_JSONPLUS: &str = include_str!("../fixtures/fio-3.33-jsonplus-clones.json");
    /// `[reader]` and `[writer]` (numjobs=2) run together, `[after]` after
    /// a `stonewall` (fio 3.33, made from the file in its docs).
    const V333_CONCURRENT: &str = include_str!("../fixtures/fio-3.33-concurrent.json");

    /// The jobs of one fio groupid ran together: one phase of groups, as
    /// `--fio-job` runs that file; the stonewalled job is the next phase.
    #[test]
    fn concurrent_jobs_import_as_the_groups_of_one_phase() {
        let r = parse(V333_CONCURRENT, None).unwrap().report;
        let names: Vec<&str> = r.phases.iter().map(|p| p.params.name.as_str()).collect();
        assert_eq!(names, ["reader+writer", "after"]);
        let ph = &r.phases[0];
        let g = ph.groups.as_ref().unwrap();
        let groups: Vec<(&str, u32, u32, bool)> = g
            .groups
            .iter()
            .map(|m| {
                (
                    m.name.as_str(),
                    m.first_job,
                    m.params.numjobs,
                    m.params.shares_report,
                )
            })
            .collect();
        assert_eq!(groups, [("reader", 0, 1, false), ("writer", 1, 2, true)]);
        assert_eq!(ph.params.rw, RwMode::ReadWrite);
        assert_eq!(ph.params.numjobs, 3);
        assert_eq!(ph.params.rwmixread, 33, "one reading job of three");
        assert_eq!(ph.params.groups.len(), 2);
        assert_eq!(ph.jobs.len(), 3);
        assert_eq!(ph.read.bytes, g.groups[0].read.bytes);
        assert_eq!(ph.write.bytes, g.groups[1].write.bytes);
        assert_eq!(ph.write.bytes, 2 * (4 << 20));
        assert!(r.phases[1].groups.is_none());
    }

    /// fio's randread output with one field replaced by `with`.
    fn mangled(path: &[&str], with: Value) -> String {
        let mut doc = value(V333_RANDREAD);
        let mut at = &mut doc["jobs"][0];
        for key in &path[..path.len() - 1] {
            at = &mut at[*key];
        }
        at[path[path.len() - 1]] = with;
        doc.to_string()
    }

    #[test]
    fn a_timestamp_beyond_milliseconds_is_refused_not_an_overflow() {
        let text = r#"{"fio version": "fio-3.33", "timestamp": 18446744073709551615,
            "jobs": [{"jobname": "j", "groupid": 0, "read": {}, "write": {}}]}"#;
        let e = parse(text, None).unwrap_err().to_string();
        assert!(e.contains("timestamp"), "{e}");
    }

    #[test]
    fn wrongly_typed_fields_are_refused_naming_their_json_path() {
        let cases: [(&[&str], Value, &str); 6] = [
            (
                &["trim"],
                Value::from("abc"),
                "jobs[0].trim: expected an object",
            ),
            (
                &["read", "total_ios"],
                Value::from("1e400"),
                "jobs[0].read.total_ios: expected a number",
            ),
            (
                &["read", "total_ios"],
                Value::from("abc"),
                "got the string \"abc\"",
            ),
            (
                &["read", "io_bytes"],
                Value::from(-5),
                "jobs[0].read.io_bytes: expected a number",
            ),
            (
                &["read", "clat_ns", "mean"],
                Value::Null,
                "jobs[0].read.clat_ns.mean: expected a number",
            ),
            (
                &["usr_cpu"],
                Value::from(vec![1, 2]),
                "jobs[0].usr_cpu: expected a number that is neither negative nor out of range, got a list",
            ),
        ];
        for (path, with, want) in cases {
            let err = parse(&mangled(path, with), None).unwrap_err();
            assert!(
                matches!(err, ImportError::WrongType { .. }),
                "{path:?}: {err}"
            );
            assert!(err.to_string().contains(want), "{path:?}: {err}");
        }
        // A percentile table with a key that is not a number.
        let mut doc = value(V333_RANDREAD);
        doc["jobs"][0]["read"]["clat_ns"]["percentile"]["p99"] = Value::from(5);
        let err = parse(&doc.to_string(), None).unwrap_err().to_string();
        assert!(
            err.contains("jobs[0].read.clat_ns.percentile.p99: expected a number as the key"),
            "{err}"
        );
        // fio 2.x's figures as strings of digits stay accepted.
        parse(&mangled(&["read", "total_ios"], Value::from("123")), None).unwrap();
    }

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn fio_units() {
        assert!(
            fio_size("50%", 1024).is_err(),
            "a relative size has no byte count"
        );
        assert_eq!(fio_time_ns("30"), Some(30_000_000_000));
        assert_eq!(fio_time_ns("500ms"), Some(500_000_000));
        assert_eq!(fio_time_ns("2m"), Some(120_000_000_000));
        assert!(fio_bool(Some(&String::new())));
        assert!(!fio_bool(Some(&"0".to_string())));
        assert!(!fio_bool(None));
    }

    /// The same size means the same bytes here as in a fio job file read by
    /// `bench --fio-job` (fio's `parse.c`: with the default `kb_base=1024`,
    /// `KiB` is 1000 and `k`/`KB` 1024; with `kb_base=1000` the other way
    /// round). The importer read `4KiB` as 4096 before it used the one
    /// grammar.
    #[test]
    fn sizes_in_job_options_follow_fios_kb_base_as_the_job_file_reader_does() {
        let cases = [
            ("4KiB", None, 4000),
            ("4k", None, 4096),
            ("4KB", None, 4096),
            ("64kib", None, 64_000),
            ("4KiB", Some("1000"), 4096),
            ("4k", Some("1000"), 4000),
            ("1MiB", None, 1_000_000),
        ];
        for (bs, kb_base, want) in cases {
            let mut doc = value(V333_RANDREAD);
            let o = doc["jobs"][0]["job options"].as_object_mut().unwrap();
            o.insert("bs".into(), bs.into());
            if let Some(k) = kb_base {
                o.insert("kb_base".into(), k.into());
            }
            let rep = parse(&doc.to_string(), None).unwrap().report;
            assert_eq!(
                rep.phases[0].params.bs[0].bs_bytes, want,
                "bs={bs} kb_base={kb_base:?}"
            );
            assert_eq!(
                Ok(want),
                storlab_types::fio_size(bs, kb_base.map_or(1024, |k| k.parse().unwrap())),
                "the job-file grammar agrees"
            );
        }
    }

    #[test]
    fn a_single_fio_3_job_maps_figures_exactly() {
        let doc = value(V333_RANDREAD);
        let job = &doc["jobs"][0];
        let r = parse(V333_RANDREAD, Some("node7")).unwrap();
        assert_eq!(r.kind, FIO_KIND);
        let rep = r.report;
        assert_eq!(rep.tool.name, "fio");
        assert_eq!(
            rep.tool.version,
            doc["fio version"]
                .as_str()
                .unwrap()
                .trim_start_matches("fio-")
        );
        assert_eq!(rep.host.hostname, "node7");
        assert_eq!(rep.phases.len(), 1);
        let p = &rep.phases[0];
        assert_eq!(p.params.name, job["jobname"].as_str().unwrap());
        assert_eq!(p.params.rw, RwMode::RandRead);
        assert_eq!(p.params.bs[0].bs_bytes, 4096);
        assert_eq!(p.params.size_bytes, 4 << 20);
        assert_eq!(p.params.engine, EngineKind::Psync);
        let read = &job["read"];
        assert_eq!(p.read.bytes, read["io_bytes"].as_u64().unwrap());
        assert_eq!(p.read.ops, read["total_ios"].as_u64().unwrap());
        assert_eq!(p.read.bw_bytes_per_s, read["bw_bytes"].as_f64().unwrap());
        assert_eq!(p.read.iops, read["iops"].as_f64().unwrap());
        let lat = p.read.lat_ns.unwrap();
        let pct = &read["clat_ns"]["percentile"];
        assert_eq!(lat.p50, pct["50.000000"].as_u64().unwrap());
        assert_eq!(lat.p99, pct["99.000000"].as_u64().unwrap());
        assert_eq!(lat.p99_9, pct["99.900000"].as_u64().unwrap());
        assert_eq!(lat.max, read["clat_ns"]["max"].as_u64().unwrap());
        assert!(p.latency_span.contains("clat"));
        assert_eq!(p.total, p.read);
        assert_eq!(p.write.ops, 0);
        assert_eq!(p.jobs.len(), 1);
        assert_eq!(p.cache.mode, "cold");
    }

    #[test]
    fn clones_are_merged_and_lat_percentiles_preferred() {
        let doc = value(V333_MIXED);
        let rep = parse(V333_MIXED, None).unwrap().report;
        let names: Vec<&str> = rep.phases.iter().map(|p| p.params.name.as_str()).collect();
        assert_eq!(names, ["seqwrite", "mixed"]);
        let w = &rep.phases[0];
        assert_eq!(w.params.rw, RwMode::Write);
        assert_eq!(w.params.bs[0].bs_bytes, 64 << 10);
        assert!(w.params.end_fsync);
        assert!(w.latency_span.contains("fio lat"), "{}", w.latency_span);
        let m = &rep.phases[1];
        assert_eq!(m.params.rw, RwMode::RandRw);
        assert_eq!(m.params.rwmixread, 70);
        assert_eq!(m.params.numjobs, 2);
        assert_eq!(m.jobs.len(), 2);
        let clones: Vec<&Value> = doc["jobs"].as_array().unwrap()[1..].iter().collect();
        let sum = |d: &str, k: &str| {
            clones
                .iter()
                .map(|c| c[d][k].as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(m.read.bytes, sum("read", "io_bytes"));
        assert_eq!(m.write.ops, sum("write", "total_ios"));
        assert_eq!(m.total.bytes, m.read.bytes + m.write.bytes);
        // One window for the phase: the longest clone's.
        let longest = clones
            .iter()
            .map(|c| c["read"]["runtime"].as_u64().unwrap())
            .max()
            .unwrap();
        let expect = m.read.bytes as f64 / (longest as f64 / 1000.0);
        assert!((m.read.bw_bytes_per_s - expect).abs() < 1e-6 * expect);
        // Worst clone's p99, flagged as such.
        let worst = clones
            .iter()
            .map(|c| {
                c["read"]["lat_ns"]["percentile"]["99.000000"]
                    .as_u64()
                    .unwrap()
            })
            .max()
            .unwrap();
        assert_eq!(m.read.lat_ns.unwrap().p99, worst);
        assert!(m.warnings.iter().any(|w| w.contains("worst of 2 parts")));
        assert!(m.total.lat_ns.is_none());
        assert_eq!(rep.target.path, "/tmp/fiot");
        assert_eq!(rep.target.kind, "directory");
        assert!(rep.command_line.contains(&"--rwmixread=70".to_string()));
        assert!(rep.started_at < rep.finished_at);
    }

    #[test]
    fn percentiles_from_histograms_match_fios_own() {
        // Every latency block of fio's json+ output: recomputing the
        // percentiles from its bins gives exactly fio's figures.
        let doc = value(V333_JSONPLUS);
        let mut checked = 0;
        for job in doc["jobs"].as_array().unwrap() {
            for dir in ["read", "write"] {
                for name in ["clat", "lat"] {
                    let d = job[dir].as_object().unwrap();
                    let Some(l) = lat_of(d, name, Era::V3) else {
                        continue;
                    };
                    let (Some(bins), false) = (&l.bins, l.pct.is_empty()) else {
                        continue;
                    };
                    let wants: Vec<f64> = l.pct.iter().map(|p| p.0).collect();
                    assert_eq!(pct_from_bins(bins, &wants), l.pct, "{dir} {name}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 6, "{checked}");
    }

    #[test]
    fn json_plus_clones_and_mixed_totals_merge_exactly() {
        let doc = value(V333_JSONPLUS);
        let rep = parse(V333_JSONPLUS, None).unwrap().report;
        let m = &rep.phases[1];
        assert_eq!(m.jobs.len(), 2);
        assert!(
            !m.warnings.iter().any(|w| w.contains("worst of")),
            "{:?}",
            m.warnings
        );
        // The merged p99 is the p99 of the two clones' histograms added up.
        let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
        let mut total: BTreeMap<u64, u64> = BTreeMap::new();
        for c in &doc["jobs"].as_array().unwrap()[1..] {
            for dir in ["read", "write"] {
                for (k, v) in c[dir]["lat_ns"]["bins"].as_object().unwrap() {
                    let (k, v) = (k.parse::<u64>().unwrap(), v.as_u64().unwrap());
                    if dir == "read" {
                        *merged.entry(k).or_insert(0) += v;
                    }
                    *total.entry(k).or_insert(0) += v;
                }
            }
        }
        let p99 = |h: &BTreeMap<u64, u64>| {
            let n: u64 = h.values().sum();
            let mut s = 0;
            for (k, v) in h {
                s += v;
                if s as f64 >= 0.99 * n as f64 {
                    return *k;
                }
            }
            unreachable!()
        };
        assert_eq!(m.read.lat_ns.unwrap().p99, p99(&merged));
        // A mixed phase gets a total latency from the read + write histograms.
        let t = m.total.lat_ns.expect("total latency from json+ bins");
        assert_eq!(t.p99, p99(&total));
        assert_eq!(m.total.ops, m.read.ops + m.write.ops);
    }

    #[test]
    fn fio_2_units_are_converted() {
        let rep = parse(V2_STYLE, None).unwrap().report;
        assert_eq!(rep.tool.version, "2.2.10");
        let p = &rep.phases[0];
        let doc = value(V2_STYLE);
        let read = &doc["jobs"][0]["read"];
        assert_eq!(p.read.bytes, read["io_bytes"].as_u64().unwrap() * 1024);
        assert_eq!(p.read.bw_bytes_per_s, read["bw"].as_f64().unwrap() * 1024.0);
        let lat = p.read.lat_ns.unwrap();
        assert_eq!(
            lat.p99,
            read["clat"]["percentile"]["99.000000"].as_u64().unwrap() * 1000
        );
        assert_eq!(lat.min, read["clat"]["min"].as_u64().unwrap() * 1000);
        assert_eq!(p.params.engine, EngineKind::Libaio);
        assert_eq!(p.params.cache, CacheMode::Direct);
        assert_eq!(p.params.iodepth, 32);
        assert_eq!(p.params.rate_iops, 0);
        assert!(p.params.fallocate);
        assert_eq!(p.elapsed_ns, 60_000_000_000);
        assert!(rep.started_at < rep.finished_at);
    }

    #[test]
    fn text_before_the_json_is_skipped() {
        let noisy = format!(
            "fio: this platform does not support O_ATOMIC\nnote: both iodepth >= 1 and synchronous I/O engine are selected\n{V333_RANDREAD}\nfio: trailing line\n"
        );
        assert_eq!(
            parse(&noisy, None).unwrap().report,
            parse(V333_RANDREAD, None).unwrap().report
        );
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        let cases = [
            ("", "empty"),
            ("hello world\n", "no line starts with '{'"),
            ("{ not json", "does not parse"),
            ("{\"name\": \"x\", \"values\": [1,2]}", "no \"jobs\" list"),
            ("{\"jobs\": [{\"x\": 1}]}", "neither"),
            ("{\"fio version\": \"fio-3.33\", \"jobs\": []}", "empty"),
            (
                "{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"t\", \"job options\": {\"rw\": \"trim\"}}]}",
                "rw=trim",
            ),
        ];
        for (text, needle) in cases {
            let e = parse(text, None).unwrap_err();
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_storlab_document_is_accepted() {
        // A storlab record (here the one an fio import makes) read back.
        let r = parse(V333_RANDREAD, Some("n")).unwrap().report;
        let text = serde_json::to_string_pretty(&r).unwrap();
        let imported = parse(&text, None).unwrap();
        assert_eq!(imported.kind, STORLAB_KIND);
        assert_eq!(imported.report, r);
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,200}") {
            let _ = parse(&s, None);
        }

        #[test]
        fn never_panics_on_mangled_fio_output(cut in 0usize..4000, junk in "[{}\\[\\]\",:0-9a-z ]{0,20}") {
            let base = V333_MIXED;
            let cut = cut.min(base.len());
            let cut = (0..=cut).rev().find(|i| base.is_char_boundary(*i)).unwrap_or(0);
            let text = format!("{}{}{}", &base[..cut], junk, &base[cut..]);
            let _ = parse(&text, None);
        }

        #[test]
        fn never_panics_on_odd_option_values(
            bs in "\\PC{0,12}", size in "\\PC{0,12}", rt in "\\PC{0,8}", mix in "\\PC{0,4}"
        ) {
            let mut doc = value(V333_RANDREAD);
            let o = doc["jobs"][0]["job options"].as_object_mut().unwrap();
            o.insert("bs".into(), bs.into());
            o.insert("size".into(), size.into());
            o.insert("runtime".into(), rt.into());
            o.insert("rwmixread".into(), mix.into());
            o.insert("bssplit".into(), "4k/x:y/50".into());
            let _ = parse(&doc.to_string(), None);
        }
    }
}
