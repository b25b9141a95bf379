//! Every way two phases' configurations differ.
//!
//! Workload parameters are compared through their serde form, so a field
//! added to [`PhaseParams`] later is compared (and listed under its JSON
//! name) without touching this file; the parameters people know get their
//! usual names and units (`bs 1 MiB (base 4 KiB)`). Only the phase name and
//! the random seed are never differences, and a parameter that cannot
//! matter to either phase (the read share of a pure read, io_uring options
//! of a psync phase) is skipped.

use serde::Serialize;
use serde_json::Value;
use storlab_types::{
    BenchReport, BufferPattern, EngineKind, FileLayout, PhaseParams, PhaseResult, format_bytes,
    format_latency_ns,
};

/// What a difference is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// A phase parameter (`bs`, `iodepth`, `cache`, ...).
    Workload,
    /// The machine (host name, kernel, CPU, RAM).
    Host,
    /// What was measured (path, file system, device, model).
    Target,
    /// The tool that produced the record and its version.
    Tool,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Workload => "workload",
            Scope::Host => "host",
            Scope::Target => "target",
            Scope::Tool => "tool",
        }
    }
}

/// One parameter or fact that differs from the baseline's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The name `--vary` takes (`iodepth`, `bs`, `kernel`, `device`).
    pub key: String,
    pub scope: Scope,
    /// This phase's value, for people.
    pub value: String,
    /// The baseline's value.
    pub baseline: String,
}

impl Difference {
    /// `iodepth 1 (base 32)`.
    pub fn describe(&self) -> String {
        format!("{} {} (base {})", self.key, self.value, self.baseline)
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn layout_text(l: &FileLayout) -> String {
    match l {
        FileLayout::PerJob => "file per job".into(),
        FileLayout::SharedRegions => "shared file, regions".into(),
        FileLayout::SharedInterleaved { stride_bytes } => {
            format!("shared file, interleaved {}", format_bytes(*stride_bytes))
        }
    }
}

fn pattern_text(b: &BufferPattern) -> String {
    match b {
        BufferPattern::Random => "random".into(),
        BufferPattern::Zero => "zeros".into(),
        BufferPattern::Ior => "IOR packets".into(),
        BufferPattern::Compressible { pct } => format!("{pct}% compressible"),
    }
}

fn runtime_text(ns: Option<u64>) -> String {
    match ns {
        Some(n) => format_latency_ns(n as f64),
        None => "none".into(),
    }
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// A JSON value as compact text (for parameters this file does not know).
fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The `--vary` key of a parameter this file does not know: its JSON name
/// without the unit suffix (`thinktime_ns` → `thinktime`).
pub(crate) fn generic_key(json_key: &str) -> String {
    for suffix in ["_bytes_per_s", "_bytes", "_ns", "_per_s"] {
        if let Some(k) = json_key.strip_suffix(suffix)
            && !k.is_empty()
        {
            return k.to_string();
        }
    }
    json_key.to_string()
}

/// JSON fields handled by name below, or never a difference.
const HANDLED: &[&str] = &[
    "name",
    "groups",
    "seed",
    "rw",
    "rwmixread",
    "bs",
    "size_bytes",
    "numjobs",
    "iodepth",
    "engine",
    "cache",
    "drop_caches",
    "runtime_ns",
    "time_based",
    "ramp_ns",
    "fsync_every",
    "end_fsync",
    "layout",
    "buffer_pattern",
    "random_with_replacement",
    "verify",
    "sqpoll",
    "registered",
    "rate_iops",
    "iodepth_batch",
    "fallocate",
    "null_latency_ns",
    // fio's reporting-only options: what is shown, never the workload.
    "report",
];

/// The workload parameters in which `p` differs from the baseline's `b`,
/// in the order a person reads a job description.
pub fn phase_differences(p: &PhaseParams, b: &PhaseParams) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut diff = |key: &str, v: String, base: String| {
        if v != base {
            out.push(Difference {
                key: key.into(),
                scope: Scope::Workload,
                value: v,
                baseline: base,
            });
        }
    };
    let mixed = |q: &PhaseParams| q.rw.reads() && q.rw.writes();
    let writes = p.rw.writes() || b.rw.writes();
    // io_uring's own options mean something only when both sides ran it:
    // against psync, "registered no (base yes)" is the engine difference
    // again, already listed.
    let uring = p.engine == EngineKind::IoUring && b.engine == EngineKind::IoUring;
    diff("rw", p.rw.to_string(), b.rw.to_string());
    if mixed(p) || mixed(b) {
        diff(
            "rwmixread",
            format!("{}%", p.rw.read_pct(p.rwmixread)),
            format!("{}%", b.rw.read_pct(b.rwmixread)),
        );
    }
    diff("bs", p.bs_human(), b.bs_human());
    diff(
        "size",
        format_bytes(p.size_bytes),
        format_bytes(b.size_bytes),
    );
    diff("numjobs", p.numjobs.to_string(), b.numjobs.to_string());
    diff("iodepth", p.iodepth.to_string(), b.iodepth.to_string());
    diff("engine", p.engine.as_str().into(), b.engine.as_str().into());
    diff("cache", p.cache.as_str().into(), b.cache.as_str().into());
    if p.cache == storlab_types::CacheMode::Cold || b.cache == storlab_types::CacheMode::Cold {
        diff("drop_caches", yes_no(p.drop_caches), yes_no(b.drop_caches));
    }
    diff("rate_iops", rate_text(p.rate_iops), rate_text(b.rate_iops));
    diff(
        "runtime",
        runtime_text(p.runtime_ns),
        runtime_text(b.runtime_ns),
    );
    diff("time_based", yes_no(p.time_based), yes_no(b.time_based));
    diff(
        "ramp",
        format_latency_ns(p.ramp_ns as f64),
        format_latency_ns(b.ramp_ns as f64),
    );
    if writes {
        diff(
            "fsync",
            p.fsync_every.to_string(),
            b.fsync_every.to_string(),
        );
        diff("end_fsync", yes_no(p.end_fsync), yes_no(b.end_fsync));
    }
    diff("layout", layout_text(&p.layout), layout_text(&b.layout));
    diff(
        "buffer_pattern",
        pattern_text(&p.buffer_pattern),
        pattern_text(&b.buffer_pattern),
    );
    if p.rw.is_random() || b.rw.is_random() {
        diff(
            "random_with_replacement",
            yes_no(p.random_with_replacement),
            yes_no(b.random_with_replacement),
        );
    }
    diff("verify", yes_no(p.verify), yes_no(b.verify));
    if uring {
        diff("sqpoll", yes_no(p.sqpoll), yes_no(b.sqpoll));
        diff("registered", yes_no(p.registered), yes_no(b.registered));
        diff(
            "iodepth_batch",
            p.iodepth_batch.to_string(),
            b.iodepth_batch.to_string(),
        );
    }
    diff("fallocate", yes_no(p.fallocate), yes_no(b.fallocate));
    if p.engine == EngineKind::Null || b.engine == EngineKind::Null {
        diff(
            "null_latency",
            format_latency_ns(p.null_latency_ns as f64),
            format_latency_ns(b.null_latency_ns as f64),
        );
    }
    // Parameters added to PhaseParams after this file was written.
    if let (Ok(Value::Object(pv)), Ok(Value::Object(bv))) =
        (serde_json::to_value(p), serde_json::to_value(b))
    {
        let mut keys: Vec<&String> = pv.keys().chain(bv.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if HANDLED.contains(&k.as_str()) {
                continue;
            }
            let (a, c) = (pv.get(k), bv.get(k));
            if a != c {
                diff(
                    &generic_key(k),
                    a.map(json_text).unwrap_or_else(|| "none".into()),
                    c.map(json_text).unwrap_or_else(|| "none".into()),
                );
            }
        }
    }
    out.extend(group_differences(p, b));
    out
}

/// How two phases' job groups differ: each pair (by name and shape) by
/// its parameters, keyed `group.NAME.KEY`; groups without a partner as
/// `groups` (the names and shapes on each side).
fn group_differences(p: &PhaseParams, b: &PhaseParams) -> Vec<Difference> {
    if p.groups.is_empty() && b.groups.is_empty() {
        return Vec::new();
    }
    let m = crate::match_groups(&p.groups, &b.groups, &crate::Vary::default());
    let mut out = Vec::new();
    for pair in &m.pairs {
        let (g, bg) = (&p.groups[pair.phase], &b.groups[pair.baseline_phase]);
        for mut d in phase_differences(g, bg) {
            d.key = format!("group.{}.{}", bg.name, d.key);
            out.push(d);
        }
    }
    if !m.unmatched.is_empty() || !m.unmatched_baseline.is_empty() {
        let list = |gs: &[PhaseParams]| {
            if gs.is_empty() {
                "none".to_string()
            } else {
                gs.iter()
                    .map(|g| format!("{} ({} {}×{})", g.name, g.rw, g.numjobs, g.bs_human()))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(Difference {
            key: "groups".into(),
            scope: Scope::Workload,
            value: list(&p.groups),
            baseline: list(&b.groups),
        });
    }
    out
}

fn rate_text(r: u32) -> String {
    if r == 0 {
        "unlimited".into()
    } else {
        format!("{r}/s per job")
    }
}

/// The host, target and tool facts in which `run` differs from the
/// baseline run. A fact one of them did not record is skipped.
pub fn run_differences(run: &BenchReport, base: &BenchReport) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut diff = |key: &str, scope: Scope, v: String, b: String| {
        if !v.is_empty() && !b.is_empty() && v != b {
            out.push(Difference {
                key: key.into(),
                scope,
                value: v,
                baseline: b,
            });
        }
    };
    let num = |n: u64| if n == 0 { String::new() } else { n.to_string() };
    let (h, bh) = (&run.host, &base.host);
    diff("host", Scope::Host, h.hostname.clone(), bh.hostname.clone());
    diff("os", Scope::Host, h.os.clone(), bh.os.clone());
    diff("kernel", Scope::Host, h.kernel.clone(), bh.kernel.clone());
    diff("arch", Scope::Host, h.arch.clone(), bh.arch.clone());
    diff(
        "cpu",
        Scope::Host,
        h.cpu_model.clone(),
        bh.cpu_model.clone(),
    );
    diff(
        "cpus",
        Scope::Host,
        num(u64::from(h.cpu_count)),
        num(u64::from(bh.cpu_count)),
    );
    let ram = |n: u64| {
        if n == 0 {
            String::new()
        } else {
            format_bytes(n)
        }
    };
    diff(
        "ram",
        Scope::Host,
        ram(h.mem_total_bytes),
        ram(bh.mem_total_bytes),
    );
    let (t, bt) = (&run.target, &base.target);
    let opt = |o: &Option<String>| o.clone().unwrap_or_default();
    diff("target", Scope::Target, t.path.clone(), bt.path.clone());
    diff(
        "target_kind",
        Scope::Target,
        t.kind.to_string(),
        bt.kind.to_string(),
    );
    diff(
        "filesystem",
        Scope::Target,
        opt(&t.filesystem),
        opt(&bt.filesystem),
    );
    diff("device", Scope::Target, opt(&t.device), opt(&bt.device));
    diff(
        "device_model",
        Scope::Target,
        opt(&t.device_model),
        opt(&bt.device_model),
    );
    diff(
        "tool",
        Scope::Tool,
        run.tool.name.clone(),
        base.tool.name.clone(),
    );
    // A version only means something for the same tool.
    if run.tool.name == base.tool.name {
        diff(
            "tool_version",
            Scope::Tool,
            run.tool.version.clone(),
            base.tool.version.clone(),
        );
    }
    out
}

/// Every difference between a phase of `run` and a phase of `baseline`:
/// the workload parameters first, then host, target and tool.
pub fn differences(
    run: &BenchReport,
    phase: &PhaseResult,
    baseline: &BenchReport,
    base_phase: &PhaseResult,
) -> Vec<Difference> {
    let mut d = phase_differences(&phase.params, &base_phase.params);
    d.extend(run_differences(run, baseline));
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{params, report};

    #[test]
    fn identical_phases_do_not_differ_but_name_and_seed_never_count() {
        let a = params("a", storlab_types::RwMode::RandRead, 4096, 32);
        let mut b = a.clone();
        b.name = "b".into();
        b.seed = 99;
        assert!(phase_differences(&a, &b).is_empty());
    }

    #[test]
    fn rate_and_depth_are_named_with_values() {
        let base = params("r", storlab_types::RwMode::RandRead, 4096, 32);
        let mut p = base.clone();
        p.rate_iops = 2000;
        p.iodepth = 1;
        let d: Vec<String> = phase_differences(&p, &base)
            .iter()
            .map(Difference::describe)
            .collect();
        assert_eq!(
            d,
            vec![
                "iodepth 1 (base 32)".to_string(),
                "rate_iops 2000/s per job (base unlimited)".to_string()
            ]
        );
    }

    #[test]
    fn irrelevant_parameters_are_skipped() {
        let base = params("r", storlab_types::RwMode::Read, 1 << 20, 1);
        let mut p = base.clone();
        p.rwmixread = 10; // a pure read has no mix
        p.sqpoll = true; // psync has no SQ polling
        p.fsync_every = 4; // a read never syncs
        assert!(phase_differences(&p, &base).is_empty());
        // io_uring against psync: the engine differs, its options are not
        // listed again as differences of their own.
        let mut u = base.clone();
        u.engine = EngineKind::IoUring;
        u.registered = true;
        u.sqpoll = true;
        let keys: Vec<String> = phase_differences(&u, &base)
            .into_iter()
            .map(|d| d.key)
            .collect();
        assert_eq!(keys, vec!["engine"]);
        let mut both = u.clone();
        both.registered = false;
        let keys: Vec<String> = phase_differences(&u, &both)
            .into_iter()
            .map(|d| d.key)
            .collect();
        assert_eq!(
            keys,
            vec!["registered"],
            "between two io_uring runs it counts"
        );
    }

    #[test]
    fn host_target_and_tool_differences_and_unknown_facts() {
        let a = report("stor01", "6.1.0", "/mnt/a", "sdb", "storlab", "0.1.0");
        let mut b = report("stor02", "6.5.0", "/mnt/a", "sdc", "storlab", "0.2.0");
        let keys: Vec<String> = run_differences(&b, &a).into_iter().map(|d| d.key).collect();
        assert_eq!(keys, vec!["host", "kernel", "device", "tool_version"]);
        // An fio import records no kernel: not a difference.
        b.host.kernel.clear();
        b.tool.name = "fio".into();
        let keys: Vec<String> = run_differences(&b, &a).into_iter().map(|d| d.key).collect();
        assert_eq!(keys, vec!["host", "device", "tool"]);
    }

    #[test]
    fn generic_keys_drop_unit_suffixes() {
        assert_eq!(generic_key("thinktime_ns"), "thinktime");
        assert_eq!(generic_key("log_interval_ns"), "log_interval");
        assert_eq!(generic_key("nrfiles"), "nrfiles");
        assert_eq!(generic_key("_ns"), "_ns");
    }
}
