//! Small formatting helpers shared by the exporters, the comparison table,
//! the charts and the HTML report. Every quantity is printed with its unit.

use std::collections::BTreeMap;
use storlab_types::{PhaseParams, StoredRun, format_bytes};

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

/// Block size(s) of a phase for people: `1 MiB`, or `4 KiB/50:64 KiB/50` for a mix.
pub fn bs_human(p: &PhaseParams) -> String {
    match p.bs.as_slice() {
        [one] => format_bytes(one.bs_bytes),
        many => many
            .iter()
            .map(|b| format!("{}/{}", format_bytes(b.bs_bytes), b.weight))
            .collect::<Vec<_>>()
            .join(":"),
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
    if what.is_empty() {
        format!("#{}", run.id)
    } else {
        format!("#{} {}", run.id, what)
    }
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
