//! Small formatting helpers shared by the exporters, the comparison table,
//! the charts and the HTML report. Every quantity is printed with its unit.

use std::collections::BTreeMap;
use storlab_types::{PhaseParams, StoredRun};

/// Nanoseconds as a human latency (shared with the rest of storlab).
pub use storlab_types::format_latency_ns as format_ns;

/// Bytes per second in decimal MB/s (10^6), without the unit: `1234.5`.
pub fn mb_per_s(bytes_per_s: f64) -> String {
    format!("{:.1}", bytes_per_s / 1e6)
}

/// IOPS rounded to whole operations, with thousands separated: `45 210`.
pub fn format_iops(iops: f64) -> String {
    if !iops.is_finite() {
        return "n/a".to_string();
    }
    let n = iops.round() as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A relative change in percent with its sign: `+112 %`, `-3.4 %`, `+0.0 %`.
/// Whole percent from 10 % up, one decimal below.
pub fn format_change(pct: f64) -> String {
    if !pct.is_finite() {
        return "n/a".to_string();
    }
    let sign = if pct < 0.0 { "-" } else { "+" };
    let a = pct.abs();
    if a >= 10.0 {
        format!("{sign}{a:.0} %")
    } else {
        format!("{sign}{a:.1} %")
    }
}

/// Block size(s) of a phase for machines: `1048576`, or `4096/50:65536/50`.
pub fn bs_machine(p: &PhaseParams) -> String {
    match p.bs.as_slice() {
        [one] => one.bs_bytes.to_string(),
        many => many
            .iter()
            .map(|b| format!("{}/{}", b.bs_bytes, b.weight))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// Tags as `key=value` pairs joined by `sep`, in key order.
pub fn tags_joined(tags: &BTreeMap<String, String>, sep: &str) -> String {
    tags.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// How a run is named in tables, legends and captions: `#3 controller=sas`,
/// or `#3 hostname` when it has no tags.
pub fn run_label(run: &StoredRun) -> String {
    let what = if run.tags.is_empty() {
        run.report.host.hostname.clone()
    } else {
        tags_joined(&run.tags, ",")
    };
    // A storlab sim run says so wherever it is named.
    let sim = if run.report.target.kind == "simulation" {
        " (simulated)"
    } else {
        ""
    };
    if what.is_empty() {
        format!("#{}{sim}", run.id)
    } else {
        format!("#{} {}{sim}", run.id, what)
    }
}

/// Bytes the way people type them on a command line: `4k`, `64k`, `1m`,
/// `2g`, else plain bytes.
pub fn bytes_short(b: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// The facts an untagged run is told apart by, each as (key, short text
/// of this run's value(s)).
fn label_facts(run: &StoredRun) -> Vec<(&'static str, String)> {
    let phases = &run.report.phases;
    let join = |f: &dyn Fn(&storlab_types::PhaseResult) -> String| -> String {
        let mut v: Vec<String> = Vec::new();
        for p in phases {
            let x = f(p);
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v.join("/")
    };
    vec![
        ("rw", join(&|p| p.params.rw.to_string())),
        (
            "bs",
            join(&|p| match p.params.bs.as_slice() {
                [one] => bytes_short(one.bs_bytes),
                many => many
                    .iter()
                    .map(|b| format!("{}/{}", bytes_short(b.bs_bytes), b.weight))
                    .collect::<Vec<_>>()
                    .join(":"),
            }),
        ),
        ("QD", join(&|p| p.params.iodepth.to_string())),
        ("jobs", join(&|p| p.params.numjobs.to_string())),
        ("size", join(&|p| bytes_short(p.params.size_bytes))),
        ("cache", join(&|p| p.params.cache.as_str().to_string())),
        ("engine", join(&|p| p.params.engine.as_str().to_string())),
        (
            "rate",
            join(&|p| match p.params.rate_iops {
                0 => "none".into(),
                r => format!("{r}/s"),
            }),
        ),
        ("host", run.report.host.hostname.clone()),
        (
            "fs",
            run.report.target.filesystem.clone().unwrap_or_default(),
        ),
        ("dev", run.report.target.device.clone().unwrap_or_default()),
    ]
}

/// How each run is named in tables, legends and captions, in the order
/// given: `#3 controller=sas` for a tagged run; an untagged one by the
/// parameters in which the runs differ (`#4 QD32 bs=64k`), or by its host
/// when nothing differs.
pub fn run_labels(runs: &[StoredRun]) -> Vec<String> {
    let refs: Vec<&StoredRun> = runs.iter().collect();
    run_labels_of(&refs)
}

/// [`run_labels`] over borrowed runs.
pub fn run_labels_of(runs: &[&StoredRun]) -> Vec<String> {
    let facts: Vec<Vec<(&str, String)>> = runs.iter().map(|r| label_facts(r)).collect();
    let n_keys = facts.first().map(Vec::len).unwrap_or(0);
    let varying: Vec<usize> = (0..n_keys)
        .filter(|&k| {
            let mut vals: Vec<&str> = facts.iter().map(|f| f[k].1.as_str()).collect();
            vals.sort_unstable();
            vals.dedup();
            vals.len() > 1
        })
        .collect();
    runs.iter()
        .zip(&facts)
        .map(|(r, f)| {
            if !r.tags.is_empty() || varying.is_empty() {
                return run_label(r);
            }
            let parts: Vec<String> = varying
                .iter()
                .take(4)
                .map(|&k| {
                    let (key, v) = (f[k].0, &f[k].1);
                    match key {
                        "QD" => format!("QD{v}"),
                        "rw" | "host" | "dev" | "fs" | "engine" | "cache" if !v.is_empty() => {
                            v.clone()
                        }
                        // Not recorded (an fio import has no host): say so.
                        _ if v.is_empty() => format!("{key}=?"),
                        _ => format!("{key}={v}"),
                    }
                })
                .filter(|s| !s.is_empty())
                .collect();
            format!("#{} {}", r.id, parts.join(" "))
        })
        .collect()
}

/// Tags that say how a run was made, not what it measured (the same for
/// every run of a sweep, or a counter): left out of short labels.
const BOOKKEEPING_TAGS: [&str; 6] = [
    "sweep",
    "sweep_point",
    "repeat_group",
    "campaign",
    "campaign_run",
    "tune_id",
];

/// Short names for bar labels, where space is scarce: `#3` and only the
/// tags whose values differ between these runs (a sweep point's
/// `sweep_params` as its own `bs=64k`), never the tags every run shares;
/// untagged runs as [`run_labels`] names them.
pub fn short_run_labels(runs: &[StoredRun]) -> Vec<String> {
    let long = run_labels(runs);
    let differs = |k: &str| {
        let mut v: Vec<Option<&String>> = runs.iter().map(|r| r.tags.get(k)).collect();
        v.dedup();
        v.len() > 1
    };
    runs.iter()
        .zip(long)
        .map(|(r, long)| {
            if r.tags.is_empty() {
                return long;
            }
            let parts: Vec<String> = r
                .tags
                .iter()
                .filter(|(k, _)| !BOOKKEEPING_TAGS.contains(&k.as_str()) && differs(k))
                .map(|(k, v)| {
                    if k == "sweep_params" {
                        v.replace(',', " ")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            if parts.is_empty() {
                format!("#{}", r.id)
            } else {
                format!("#{} {}", r.id, parts.join(" "))
            }
        })
        .collect()
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the records
/// hold them (`2026-11-21T08:00:00Z`, `...:00.250Z`, `...+00:00`); `None`
/// for anything else.
pub fn rfc3339_seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    let body = s
        .strip_suffix('Z')
        .or_else(|| s.strip_suffix("+00:00"))
        .unwrap_or(s);
    let (date, time) = body.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let mut t = time.splitn(3, ':');
    let hh: f64 = t.next()?.parse().ok()?;
    let mm: f64 = t.next()?.parse().ok()?;
    let ss: f64 = t.next().unwrap_or("0").parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh >= 24.0 || mm >= 60.0 || ss >= 61.0
    {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + hh * 3600.0 + mm * 60.0 + ss)
}

/// Escape text for HTML and SVG (element content and quoted attributes).
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0; show them as a space.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Cut a label to `max` characters, ending in `…` when it was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_units() {
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(85_200.0), "85.2 µs");
        assert_eq!(format_ns(2_100_000.0), "2.10 ms");
        assert_eq!(format_ns(1.5e9), "1.50 s");
        assert_eq!(format_ns(f64::NAN), "n/a");
    }

    #[test]
    fn changes_and_counts() {
        assert_eq!(format_change(111.9), "+112 %");
        assert_eq!(format_change(-3.44), "-3.4 %");
        assert_eq!(format_change(0.0), "+0.0 %");
        assert_eq!(format_change(f64::INFINITY), "n/a");
        assert_eq!(format_iops(45210.4), "45 210");
        assert_eq!(format_iops(999.0), "999");
        assert_eq!(format_iops(1_000_000.0), "1 000 000");
    }

    #[test]
    fn untagged_runs_are_named_by_what_differs() {
        use crate::testdata::{Spec, phase, run};
        use storlab_types::RwMode;
        let mk = |id, qd, bs| {
            run(
                id,
                &[],
                vec![phase(&Spec::new("r", RwMode::RandRead, bs, 100.0).qd(qd))],
            )
        };
        let runs = vec![mk(1, 1, 4096), mk(2, 32, 65536), mk(3, 32, 4096)];
        assert_eq!(
            run_labels(&runs),
            vec!["#1 bs=4k QD1", "#2 bs=64k QD32", "#3 bs=4k QD32"]
        );
        // Nothing differs: the host, as before; tagged runs keep their tags.
        let mut same = vec![mk(1, 8, 4096), mk(2, 8, 4096)];
        same[1].tags.insert("cfg".into(), "b".into());
        let l = run_labels(&same);
        assert_eq!(l[1], "#2 cfg=b");
        assert_eq!(l[0], run_label(&same[0]));
        assert_eq!(bytes_short(3 << 20), "3m");
        assert_eq!(bytes_short(1000), "1000");
        // A fact one run did not record (an fio import has no host) is
        // shown as unknown, not as an empty value.
        let mut hosts = vec![mk(1, 8, 4096), mk(2, 8, 4096)];
        hosts[1].report.host.hostname.clear();
        assert_eq!(run_labels(&hosts)[1], "#2 host=?");
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(rfc3339_seconds("2000-03-01T00:00:01Z"), Some(951_868_801.0));
        assert_eq!(
            rfc3339_seconds("2026-11-21T08:00:02.5Z").unwrap()
                - rfc3339_seconds("2026-11-21T08:00:00+00:00").unwrap(),
            2.5
        );
        assert_eq!(rfc3339_seconds("yesterday"), None);
        assert_eq!(rfc3339_seconds("2026-13-01T00:00:00Z"), None);
    }

    proptest::proptest! {
        #[test]
        fn rfc3339_never_panics(s in "\\PC{0,30}") {
            let _ = rfc3339_seconds(&s);
        }
    }

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(
            xml_escape("<script>a&b\"'</script>"),
            "&lt;script&gt;a&amp;b&quot;&#39;&lt;/script&gt;"
        );
        assert_eq!(xml_escape("a\u{1}b"), "a b");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
