//! Every rank of a multi-client run must run one job. `mpirun` lets each
//! rank be started with its own command line (MPMD `a : b`, a wrapper
//! script), and ranks that planned different jobs would call the
//! collective steps a different number of times (a hang), index files
//! rank 0 never made (a panic), or run different workloads under one
//! stored result. So before any file exists each rank reduces its
//! resolved job to canonical JSON ([`JobCanon`]), the ranks compare
//! its digest ([`digest`]), and on a difference rank 0 names the ranks and
//! the options that differ ([`describe_mismatch`]).
//!
//! What is compared: every phase's resolved parameters (machine defaults
//! included, so nodes that chose different engines or cache modes are
//! named too), the run-level multi-client options, `--repeat`, `--keep`,
//! `--allow-destroy`, `--monitor`, the tags, note and design given, the
//! storlab version, and the target as an absolute path (a relative TARGET
//! is resolved against each rank's working directory, and through symbolic
//! links where it exists: `mpirun -wdir` differences are refused only
//! when they change the path the rank means). Not compared: what is only
//! rank 0's to act on (`--db`, `--no-save`, `--json-out`, `--force`, the
//! output format, `-q`) and what legitimately differs per rank (host name,
//! rank, pid, environment, the config file's default tags: rank 0's are
//! stored).
//!
//! Pure (no MPI), so tested in every build; the command line fills
//! [`JobCanon`] from its flags and exchanges the digests over MPI.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use storlab_types::PhaseParams;

/// Everything that makes the run, as every rank must agree on it.
#[derive(Debug, Serialize)]
pub struct JobCanon<'a> {
    pub version: &'a str,
    pub target: String,
    pub phases: &'a [PhaseParams],
    pub clients: Option<&'a [u32]>,
    pub clients_by: &'a str,
    pub stonewall_ns: Option<u64>,
    pub stonewall_wear_out: bool,
    pub reorder_tasks: bool,
    pub repeat: u32,
    pub keep: bool,
    pub allow_destroy: bool,
    pub monitor: bool,
    /// `--tag` as given (a key given twice keeps both values).
    pub tag: BTreeMap<String, String>,
    pub note: Option<&'a str>,
    pub design: Option<&'a str>,
}

impl JobCanon<'_> {
    /// The job as canonical JSON (same job, same text).
    pub fn to_text(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}

/// `--tag` as given, one entry per key (a key given twice keeps both
/// values, joined by a comma in the order given).
pub fn joined_tags<'a>(
    tags: impl IntoIterator<Item = &'a (String, String)>,
) -> BTreeMap<String, String> {
    let mut tag: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in tags {
        tag.entry(k.clone())
            .and_modify(|old| {
                old.push(',');
                old.push_str(v);
            })
            .or_insert_with(|| v.clone());
    }
    tag
}

/// The target as this rank means it: absolute against its working
/// directory, through symbolic links where the path exists (`None` is the
/// default `./storlab-scratch`).
pub fn target_as_meant(target: Option<&Path>) -> String {
    let t = target.unwrap_or(Path::new("storlab-scratch"));
    std::fs::canonicalize(t)
        .or_else(|_| std::path::absolute(t))
        .unwrap_or_else(|_| t.to_path_buf())
        .display()
        .to_string()
}

/// A stable 128-bit digest of the canonical text (FNV-1a): the same on
/// every node and build, as two words for an MPI all-gather. Not
/// cryptographic; it only has to tell honest differences apart.
pub fn digest(text: &str) -> [u64; 2] {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let h = text
        .bytes()
        .fold(OFFSET, |h, b| (h ^ u128::from(b)).wrapping_mul(PRIME));
    [(h >> 64) as u64, h as u64]
}

/// At most this many options are named per rank, and this many groups of
/// ranks, so a thousand mismatched ranks still give a readable message.
const MAX_FIELDS: usize = 8;
const MAX_GROUPS: usize = 4;

/// Rank 0's message when the ranks' canonical jobs differ (`texts` in
/// rank order, rank 0 first): the ranks that differ from rank 0, grouped
/// by their job, each with the options that differ, and the fix. `None`
/// when every rank has rank 0's job.
pub fn describe_mismatch(texts: &[String]) -> Option<String> {
    let base = texts.first()?;
    let mut groups: Vec<(&String, Vec<usize>)> = Vec::new();
    for (r, t) in texts.iter().enumerate().skip(1).filter(|(_, t)| *t != base) {
        match groups.iter_mut().find(|g| g.0 == t) {
            Some(g) => g.1.push(r),
            None => groups.push((t, vec![r])),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap_or(Value::Null);
    let base_v = parse(base);
    let mut clauses = Vec::new();
    let mut keys = Vec::new();
    for (text, ranks) in groups.iter().take(MAX_GROUPS) {
        let diffs = differences(&base_v, &parse(text));
        keys.extend(diffs.iter().map(|d| d.0.clone()));
        let shown = |side: fn(&(String, String, String)) -> &String| {
            let mut v: Vec<String> = diffs
                .iter()
                .take(MAX_FIELDS)
                .map(|d| format!("{}={}", d.0, side(d)))
                .collect();
            if diffs.len() > MAX_FIELDS {
                v.push(format!("and {} more", diffs.len() - MAX_FIELDS));
            }
            v.join(", ")
        };
        let who = match ranks.as_slice() {
            [r] => format!("rank {r} has"),
            rs => format!(
                "ranks {} have",
                rs.iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        clauses.push(if diffs.is_empty() {
            // Same fields, different text: another storlab build.
            format!("{who} a job that differs from rank 0's (another storlab build?)")
        } else {
            format!(
                "{who} {} where rank 0 has {}",
                shown(|d| &d.2),
                shown(|d| &d.1)
            )
        });
    }
    if groups.len() > MAX_GROUPS {
        let more: usize = groups[MAX_GROUPS..].iter().map(|g| g.1.len()).sum();
        clauses.push(format!("and {more} more ranks differ"));
    }
    let mut fix = "start every rank with the same command line".to_string();
    if keys.iter().any(|k| k == "target") {
        fix.push_str(
            " (a relative TARGET is taken from each rank's working directory: give an absolute path)",
        );
    }
    // Only the engine or cache mode differs: the same command line on
    // nodes that support different things (machine defaults).
    if !keys.is_empty()
        && keys
            .iter()
            .all(|k| k.ends_with("engine") || k.ends_with("cache"))
    {
        fix.push_str(
            " (without --engine and --cache each node picks what it supports: give them explicitly)",
        );
    }
    Some(format!(
        "ranks were started with different options: {}; {fix}",
        clauses.join("; ")
    ))
}

/// The options whose values differ: `(name, rank 0's value, the other's)`,
/// rank 0's order first; an option one side lacks is `(none)`.
fn differences(a: &Value, b: &Value) -> Vec<(String, String, String)> {
    let (fa, fb) = (fields(a, b), fields(b, a));
    let find = |f: &[(String, String)], k: &str| {
        f.iter()
            .find(|x| x.0 == k)
            .map_or_else(|| "(none)".to_string(), |x| x.1.clone())
    };
    let mut out: Vec<(String, String, String)> = Vec::new();
    for k in fa.iter().chain(fb.iter()).map(|x| &x.0) {
        if out.iter().any(|d| &d.0 == k) {
            continue;
        }
        let (va, vb) = (find(&fa, k), find(&fb, k));
        if va != vb {
            out.push((k.clone(), va, vb));
        }
    }
    out
}

/// `v`'s options as `name=value` pairs: run-level first, then each
/// phase's (named `phaseN.option` when either job has several phases;
/// `other` is the job compared with).
fn fields(v: &Value, other: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(obj) = v.as_object() else {
        return out;
    };
    for (k, x) in obj.iter().filter(|(k, _)| k.as_str() != "phases") {
        flatten(k, x, &mut out);
    }
    let phases = |v: &Value| v["phases"].as_array().cloned().unwrap_or_default();
    let (mine, theirs) = (phases(v), phases(other));
    if mine.len() != theirs.len() {
        let names: Vec<&str> = mine.iter().filter_map(|p| p["name"].as_str()).collect();
        out.push((
            "phases".into(),
            format!("{} ({})", mine.len(), names.join(", ")),
        ));
    }
    let several = mine.len().max(theirs.len()) > 1;
    for (i, p) in mine.iter().enumerate().take(theirs.len()) {
        let prefix = if several {
            format!("phase{}.", i + 1)
        } else {
            String::new()
        };
        if let Some(obj) = p.as_object() {
            for (k, x) in obj {
                flatten(&format!("{prefix}{k}"), x, &mut out);
            }
        }
    }
    out
}

/// One JSON value as `name=value` pairs, in the units storlab's flags
/// take: `*_bytes` as sizes (`bs=64k`), `*_ns` as durations
/// (`runtime=30s`), block size lists as `4k` or `4k:70,64k:30`.
fn flatten(key: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    match v {
        Value::Null => out.push((strip_unit(key).into(), "(none)".into())),
        Value::Bool(b) => out.push((key.into(), b.to_string())),
        Value::String(s) => out.push((key.into(), s.clone())),
        Value::Number(n) => {
            let shown = match (n.as_u64(), leaf) {
                (Some(b), l) if l.ends_with("_bytes") => size(b),
                (Some(ns), l) if l.ends_with("_ns") => duration(ns),
                _ => n.to_string(),
            };
            out.push((strip_unit(key).into(), shown));
        }
        Value::Array(items) if leaf == "bs" => {
            let one = items.len() == 1;
            let shown: Vec<String> = items
                .iter()
                .map(|b| {
                    let s = size(b["bs_bytes"].as_u64().unwrap_or(0));
                    if one {
                        s
                    } else {
                        format!("{s}:{}", b["weight"])
                    }
                })
                .collect();
            out.push((key.into(), shown.join(",")));
        }
        Value::Array(items) if items.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let shown: Vec<String> = items
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    x => x.to_string(),
                })
                .collect();
            out.push((key.into(), shown.join(",")));
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                flatten(&format!("{key}.{i}"), x, out);
            }
        }
        Value::Object(map) => {
            // A tagged enum (`layout: {kind: ...}`) reads as `layout=kind`.
            if let Some(kind) = map.get("kind").and_then(Value::as_str) {
                out.push((key.into(), kind.into()));
            }
            for (k, x) in map.iter().filter(|(k, _)| k.as_str() != "kind") {
                flatten(&format!("{key}.{k}"), x, out);
            }
        }
    }
}

fn strip_unit(key: &str) -> &str {
    key.strip_suffix("_bytes")
        .or_else(|| key.strip_suffix("_ns"))
        .unwrap_or(key)
}

/// A byte count as storlab's size flags take it (`4k` = 4096).
fn size(b: u64) -> String {
    for (suffix, shift) in [("T", 40), ("G", 30), ("M", 20), ("k", 10)] {
        if b != 0 && b % (1u64 << shift) == 0 {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

/// Nanoseconds as storlab's duration flags take them.
fn duration(ns: u64) -> String {
    for (suffix, unit) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns % unit == 0 {
            return format!("{}{suffix}", ns / unit);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(target: &str, numjobs: &str, tags: &[(String, String)]) -> String {
        let phases = [crate::resolve_phase(
            &crate::spec_from_pairs([
                ("rw", "write"),
                ("size", "4M"),
                ("bs", "4k"),
                ("numjobs", numjobs),
                ("engine", "psync"),
                ("cache", "cold"),
            ])
            .unwrap(),
            0,
        )
        .unwrap()];
        JobCanon {
            version: "test",
            target: target_as_meant(Some(Path::new(target))),
            phases: &phases,
            clients: None,
            clients_by: "rank",
            stonewall_ns: None,
            stonewall_wear_out: false,
            reorder_tasks: false,
            repeat: 1,
            keep: false,
            allow_destroy: false,
            monitor: false,
            tag: joined_tags(tags),
            note: None,
            design: None,
        }
        .to_text()
        .unwrap()
    }

    #[test]
    fn the_digest_is_stable_and_tells_one_byte_apart() {
        // FNV-1a 128 of "" is its offset basis; of "a", the published value
        // (checked against an independent implementation).
        assert_eq!(digest(""), [0x6c62_272e_07bb_0142, 0x62b8_2175_6295_c58d]);
        assert_eq!(digest("a"), [0xd228_cb69_6f1a_8caf, 0x7891_2b70_4e4a_8964]);
        let a = canon("/tmp/x", "1", &[]);
        assert_eq!(a, canon("/tmp/x", "1", &[]));
        let b = a.replacen("\"numjobs\":1", "\"numjobs\":2", 1);
        assert_ne!(a, b);
        assert_ne!(digest(&a), digest(&b));
    }

    #[test]
    fn a_mismatch_names_the_ranks_the_options_and_the_fix() {
        let base = canon("/tmp/x", "1", &[]);
        assert_eq!(describe_mismatch(&[base.clone(), base.clone()]), None);
        let two = canon("/tmp/x", "2", &[]);
        let tag = canon(
            "/tmp/x",
            "1",
            &[("a".into(), "1".into()), ("a".into(), "2".into())],
        );
        let m = describe_mismatch(&[base.clone(), two.clone(), base.clone(), two, tag]).unwrap();
        assert!(
            m.contains("ranks 1, 3 have numjobs=2 where rank 0 has numjobs=1"),
            "{m}"
        );
        assert!(
            m.contains("rank 4 has tag.a=1,2 where rank 0 has tag.a=(none)"),
            "{m}"
        );
        assert!(!m.contains("rank 2"), "{m}");
        assert!(
            m.contains("start every rank with the same command line"),
            "{m}"
        );
        let other = canon("/tmp/y", "1", &[]);
        let m = describe_mismatch(&[base, other]).unwrap();
        assert!(
            m.contains("target=/tmp/y where rank 0 has target=/tmp/x"),
            "{m}"
        );
        assert!(m.contains("give an absolute path"), "{m}");
    }

    #[test]
    fn a_relative_target_counts_by_the_path_it_means() {
        let cwd = std::env::current_dir().unwrap();
        let rel = Path::new("some-dir/x");
        assert_eq!(
            target_as_meant(Some(rel)),
            cwd.join(rel).display().to_string()
        );
        assert_eq!(
            target_as_meant(Some(&cwd.join(rel))),
            target_as_meant(Some(rel))
        );
        assert_eq!(
            target_as_meant(None),
            cwd.join("storlab-scratch").display().to_string()
        );
    }

    #[test]
    fn values_read_as_flags_take_them() {
        assert_eq!(size(4096), "4k");
        assert_eq!(size(65536), "64k");
        assert_eq!(size(1 << 30), "1G");
        assert_eq!(size(1000), "1000");
        assert_eq!(size(0), "0");
        assert_eq!(duration(30_000_000_000), "30s");
        assert_eq!(duration(1_500_000), "1500us");
        assert_eq!(duration(20_000_000), "20ms");
        assert_eq!(duration(7), "7ns");
    }
}
