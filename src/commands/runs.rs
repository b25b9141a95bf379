//! `storlab runs`: list the runs in the results database.

use super::common::{DbArgs, parse_tag_arg};
use super::outfmt::{OutputArgs, TableFormat};
use crate::output::{self, Document, Reply};
use clap::Args;
use std::time::{Duration, SystemTime};
use storlab_store::{RunFilter, RunSummary};
use storlab_types::format_bytes;
use storlab_types::text::escape_controls;

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("Shorthand for --output-format json (one object per run)")))]
pub struct RunsCommand {
    /// Only runs with this tag (repeatable: runs with all of them)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag_arg)]
    tags: Vec<(String, String)>,
    /// Only runs whose target path contains this text
    #[arg(long, value_name = "TEXT")]
    target: Option<String>,
    /// Only runs whose host name contains this text
    #[arg(long, value_name = "TEXT")]
    host: Option<String>,
    /// Only runs started at or after this time: 2026-01-31, 2026-01-31T08:00 (UTC), or an age like 7d, 12h
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    since: Option<String>,
    /// Only runs started before this time (same forms as --since)
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    until: Option<String>,
    /// Only runs with a phase of this I/O pattern: read, write, randread, randwrite, readwrite, randrw
    #[arg(long, alias = "workload", value_name = "PATTERN", value_parser = parse_rw)]
    rw: Option<String>,
    /// Only runs of this kind: bench, fio-import, import, monitor, ...
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Show only the most recent N runs
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    #[command(flatten)]
    out: OutputArgs<TableFormat>,
    #[command(flatten)]
    db: DbArgs,
}

fn parse_rw(s: &str) -> Result<String, String> {
    storlab_types::RwMode::parse(s)
        .map(|m| m.as_str().to_string())
        .ok_or_else(|| {
            format!("unknown I/O pattern '{s}': use read, write, randread, randwrite, readwrite or randrw")
        })
}

/// A time bound as an RFC 3339 prefix (UTC) that compares correctly with
/// the stored `started_at` strings.
fn parse_when(s: &str) -> Result<String, String> {
    let t = s.trim();
    let help = "expected a date 2026-01-31, a time 2026-01-31T08:00 or 2026-01-31T08:00:00Z (UTC), \
                or an age such as 7d, 12h, 30m";
    let is_date = t.len() >= 10
        && t.as_bytes()[4] == b'-'
        && t.as_bytes()[7] == b'-'
        && t[..4].bytes().all(|b| b.is_ascii_digit());
    if is_date {
        let full = match t.len() {
            10 => format!("{t}T00:00:00Z"),
            16 => format!("{t}:00Z"),
            19 => format!("{t}Z"),
            _ => t.to_string(),
        };
        let full = full.replacen(' ', "T", 1);
        return humantime::parse_rfc3339_weak(full.trim_end_matches('Z'))
            .map(|_| full.trim_end_matches('Z').to_string())
            .map_err(|e| format!("invalid time '{s}' ({e}); {help}"));
    }
    let age =
        storlab_types::parse_duration(t).map_err(|_| format!("invalid time '{s}'; {help}"))?;
    let when = SystemTime::now()
        .checked_sub(age)
        .unwrap_or(SystemTime::UNIX_EPOCH + Duration::ZERO);
    Ok(storlab_types::time::rfc3339_seconds(when)
        .trim_end_matches('Z')
        .to_string())
}

impl RunsCommand {
    pub fn execute(self) -> anyhow::Result<Reply> {
        // A broken config file is named first (it may name the database).
        crate::commands::config::get()?;
        let how = self.out.rendering();
        // No database yet is an empty history, not an error.
        if !self.db.db.exists() {
            let note = format!(
                "no runs yet: there is no results database at {} (`storlab bench` creates it)",
                self.db.db.display()
            );
            return Ok(Reply::doc(
                Listing {
                    runs: Vec::new(),
                    note,
                },
                how,
            ));
        }
        let store = self.db.open_existing()?;
        let filter = RunFilter {
            tags: self.tags,
            target: self.target,
            host: self.host,
            since: self.since,
            until: self.until,
            rw: self.rw,
            kind: self.kind,
            limit: self.limit,
        };
        let runs = store.list(&filter)?;
        let what = if filter == RunFilter::default() {
            "no runs yet"
        } else {
            "no run matches these filters"
        };
        let note = format!("{}: {what}", store.path().display());
        Ok(Reply::doc(Listing { runs, note }, how))
    }
}

/// The runs `storlab runs` found: a table (or, when there are none, a
/// note on stderr saying why) or a JSON list with one object per run.
struct Listing {
    runs: Vec<RunSummary>,
    /// What to say when there are none.
    note: String,
}

impl Document for Listing {
    fn human(&self) -> anyhow::Result<String> {
        if self.runs.is_empty() {
            return Ok(String::new());
        }
        Ok(table(&self.runs))
    }
    fn json(&self) -> anyhow::Result<String> {
        let v: Vec<serde_json::Value> = self.runs.iter().map(summary_json).collect();
        output::json_text(&v)
    }
    fn note(&self) -> Option<String> {
        self.runs.is_empty().then(|| self.note.clone())
    }
}

fn summary_json(s: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "id": s.id,
        "kind": s.kind,
        "status": s.status.as_str(),
        "started_at": s.started_at,
        "finished_at": s.finished_at,
        "host": s.host,
        "target": s.target,
        "tool": s.tool,
        "tool_version": s.tool_version,
        "phases": s.phases,
        "workloads": s.workloads,
        "block_sizes_bytes": s.block_sizes,
        "block_mixes": s.block_mixes,
        "tags": s.tags,
        "note": s.note,
    })
}

/// `2026-11-21T08:40:11.123Z` → `2026-11-21 08:40`.
pub fn short_time(t: &str) -> String {
    let t = t.replacen('T', " ", 1);
    t.chars().take(16).collect()
}

fn table(runs: &[RunSummary]) -> String {
    let mut t = crate::commands::common::list_table();
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
    super::common::trim_table(&t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds() {
        assert_eq!(parse_when("2026-01-31").unwrap(), "2026-01-31T00:00:00");
        assert_eq!(
            parse_when("2026-01-31T08:00").unwrap(),
            "2026-01-31T08:00:00"
        );
        assert_eq!(
            parse_when("2026-01-31T08:00:05Z").unwrap(),
            "2026-01-31T08:00:05"
        );
        assert!(parse_when("2026-13-45").is_err());
        assert!(parse_when("yesterday").unwrap_err().contains("7d"));
        let week = parse_when("7d").unwrap();
        assert_eq!(week.len(), 19, "{week}");
        assert!(week < parse_when("1h").unwrap());
    }

    proptest::proptest! {
        #[test]
        fn time_bounds_never_panic(s in "\\PC{0,24}") {
            let _ = parse_when(&s);
            let _ = parse_rw(&s);
        }

        #[test]
        fn valid_dates_give_sortable_bounds(
            y in 1970u32..2200, m in 1u32..=12, d in 1u32..=28, h in 0u32..24, min in 0u32..60
        ) {
            let day = format!("{y:04}-{m:02}-{d:02}");
            let at = format!("{day}T{h:02}:{min:02}");
            let a = parse_when(&day).unwrap();
            let b = parse_when(&at).unwrap();
            proptest::prop_assert!(a <= b, "{a} {b}");
            proptest::prop_assert!(b.starts_with(&at));
        }
    }
}
