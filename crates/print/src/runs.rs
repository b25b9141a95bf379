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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use storlab_store::RunStatus;

    fn summary(id: i64) -> RunSummary {
        RunSummary {
            id,
            kind: "bench".into(),
            status: RunStatus::Finished,
            started_at: "2026-11-21T08:40:11.123Z".into(),
            finished_at: Some("2026-11-21T08:41:02.456Z".into()),
            host: "node7".into(),
            target: "/mnt/scratch".into(),
            tool: "storlab".into(),
            tool_version: "0.1.0".into(),
            note: None,
            tags: Default::default(),
            phases: 2,
            workloads: vec!["write".into(), "randread".into()],
            block_sizes: vec![1 << 20, 4096],
            block_mixes: Vec::new(),
        }
    }

    /// Two fixed runs: one plain, one with tags, a note, a block-size mix,
    /// no host or target and no workload, interrupted.
    #[test]
    fn runs_listing_of_fixed_runs() {
        let mut other = summary(43);
        other.status = RunStatus::Interrupted;
        other.host.clear();
        other.target.clear();
        other.workloads.clear();
        other.tags = [("raid".to_string(), "R6\u{1b}/12".to_string())].into();
        other.note = Some("cold cache".into());
        let mut mixed = summary(44);
        mixed.block_sizes.clear();
        mixed.block_mixes = vec!["4KiB/50:64KiB/50".into()];
        fixture::golden("runs.txt", &render(&[summary(42), other, mixed]));
    }

    #[test]
    fn short_time_keeps_minutes() {
        assert_eq!(short_time("2026-11-21T08:40:11.123Z"), "2026-11-21 08:40");
    }
}
