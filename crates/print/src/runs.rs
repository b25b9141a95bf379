//! The `storlab runs` listing.

use storlab_store::RunSummary;
use storlab_types::format_bytes;
use storlab_types::text::escape_controls;

/// `2026-11-21T08:40:11.123Z` → `2026-11-21 08:40`.
pub fn short_time(t: &str) -> String {
    let t = t.replacen('T', " ", 1);
    t.chars().take(16).collect()
}

/// The listing: one line per run (id, start, kind, status, host, target,
/// phases, workload, tags, note), control characters escaped.
pub fn render(runs: &[RunSummary]) -> String {
    let mut t = crate::style::list_table();
    t.set_header([
        "ID",
        "STARTED (UTC)",
        "KIND",
        "STATUS",
        "HOST",
        "TARGET",
        "PHASES",
        "WORKLOAD",
        "TAGS",
        "NOTE",
    ]);
    for s in runs {
        let bs: Vec<String> = s
            .block_sizes
            .iter()
            .map(|b| format_bytes(*b).replace(' ', ""))
            .chain(s.block_mixes.iter().map(|m| format!("mix {m}")))
            .collect();
        let workload = if s.workloads.is_empty() {
            "-".to_string()
        } else {
            format!("{} @ {}", s.workloads.join(","), bs.join(","))
        };
        let tags: Vec<String> = s
            .tags
            .iter()
            .map(|(k, v)| escape_controls(&format!("{k}={v}")).into_owned())
            .collect();
        t.add_row([
            s.id.to_string(),
            short_time(&s.started_at),
            s.kind.clone(),
            s.status.as_str().to_string(),
            if s.host.is_empty() {
                "-".into()
            } else {
                escape_controls(&s.host).into_owned()
            },
            if s.target.is_empty() {
                "-".into()
            } else {
                escape_controls(&s.target).into_owned()
            },
            s.phases.to_string(),
            workload,
            tags.join(" "),
            escape_controls(s.note.as_deref().unwrap_or_default()).into_owned(),
        ]);
    }
    crate::style::trim_table(&t.to_string())
}
