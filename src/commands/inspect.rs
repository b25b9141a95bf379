//! `storlab inspect`: the file system and device stack under a path, each
//! layer's performance settings, and recommendations with their reasons.

use anyhow::Context;
use clap::{Args, ValueEnum};
use std::fmt::Write as _;
use std::path::PathBuf;
use storlab_monitor::SysPaths;
use storlab_monitor::inspect::{InspectReport, LayerInfo, inspect_path};
use storlab_types::format_bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InspectFormat {
    Text,
    Json,
}

/// Explain the storage under a path or device: file system, stripe
/// geometry, each layer's settings (read-ahead, scheduler, RAID chunk, ...)
/// and what to change, with reasons.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  storlab inspect /data
  storlab inspect /dev/md0 --output-format json")]
pub struct InspectCommand {
    /// A path (the file system holding it) or a device (vda, dm-0, /dev/mapper/vg0-data)
    pub target: PathBuf,

    #[arg(
        long,
        value_enum,
        default_value = "text",
        default_value_if("json", clap::builder::ArgPredicate::IsPresent, Some("json"))
    )]
    pub output_format: InspectFormat,
    /// Shorthand for --output-format json
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,

    /// Read sys/ and proc/ under DIR (a recorded tree) instead of /sys and /proc
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
}

impl InspectCommand {
    pub fn execute(self) -> anyhow::Result<crate::Outcome> {
        let paths = SysPaths::from_root(self.sys_root.as_deref())?;
        let report = inspect_path(&paths, &self.target)
            .with_context(|| format!("inspecting {}", self.target.display()))?;
        let text = match self.output_format {
            InspectFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
            InspectFormat::Text => render(&report),
        };
        crate::output::print(&text)?;
        Ok(crate::Outcome::Ok)
    }
}

fn opt<T: std::fmt::Display>(label: &str, v: &Option<T>) -> Option<String> {
    v.as_ref().map(|v| format!("{label} {v}"))
}

fn layer_line(l: &LayerInfo) -> String {
    let mut parts: Vec<String> = vec![l.kind.as_str().to_string(), format_bytes(l.size_bytes)];
    if let Some(m) = &l.model {
        parts.push(format!("model {m}"));
    }
    if let Some(r) = l.rotational {
        parts.push(if r { "rotational" } else { "non-rotational" }.into());
    }
    if let (Some(lb), Some(pb)) = (l.logical_block_size_bytes, l.physical_block_size_bytes) {
        parts.push(format!("blocks {lb}/{pb} B (logical/physical)"));
    }
    parts.extend(opt("read_ahead_kb", &l.read_ahead_kb));
    parts.extend(opt("scheduler", &l.scheduler));
    parts.extend(opt("nr_requests", &l.nr_requests));
    parts.extend(opt("max_sectors_kb", &l.max_sectors_kb));
    parts.extend(opt("write cache", &l.write_cache));
    if let Some(s) = l.start_bytes {
        parts.push(format!("starts at {}", format_bytes(s)));
    }
    if let Some(md) = &l.md {
        let mut s = md.level.clone();
        if let Some(c) = md.chunk_bytes {
            let _ = write!(s, ", chunk {}", format_bytes(c));
        }
        if let Some(n) = md.raid_disks {
            let _ = write!(s, ", {n} disks");
        }
        if let Some(d) = md.data_disks {
            let _ = write!(s, " ({d} with data per stripe)");
        }
        let _ = write!(s, ", members {}", md.members.join(" "));
        parts.push(s);
    }
    if let Some(dm) = &l.dm {
        if let Some(t) = &dm.table {
            parts.push(format!("table: {}", t.replace('\n', "; ")));
        }
        if let (Some(n), Some(c)) = (dm.stripes, dm.stripe_chunk_bytes) {
            parts.push(format!("{n} stripes of {}", format_bytes(c)));
        }
    }
    if let Some(lp) = &l.loop_dev {
        if let Some(f) = &lp.backing_file {
            parts.push(format!("backing file {}", f.display()));
        }
        if let Some(fs) = &lp.backing_fs {
            parts.push(format!("on {fs}"));
        }
        if let Some(d) = lp.direct_io {
            parts.push(format!("direct I/O {}", if d { "on" } else { "off" }));
        }
    }
    parts.join(", ")
}

fn render(r: &InspectReport) -> String {
    let mut s = format!("{}\n", r.target);
    match &r.filesystem {
        Some(fs) => {
            let _ = writeln!(
                s,
                "  file system   {} on {} ({})",
                fs.fs_type,
                fs.mount_point.display(),
                fs.source
            );
            let _ = writeln!(s, "  options       {}", fs.mount_options.join(","));
            let mut sizes = Vec::new();
            sizes.extend(opt("block size", &fs.block_size_bytes));
            if let (Some(t), Some(f)) = (fs.size_bytes, fs.free_bytes) {
                sizes.push(format!(
                    "size {}, free {}",
                    format_bytes(t),
                    format_bytes(f)
                ));
            }
            if !sizes.is_empty() {
                let _ = writeln!(s, "                {}", sizes.join(", "));
            }
            match (fs.stripe_unit_bytes, fs.stripe_width_bytes) {
                (None, None) => {
                    let _ = writeln!(s, "  stripe        not set");
                }
                (u, w) => {
                    let _ = writeln!(
                        s,
                        "  stripe        unit {}, width {}  (from {})",
                        u.map(format_bytes).unwrap_or_else(|| "-".into()),
                        w.map(format_bytes).unwrap_or_else(|| "-".into()),
                        fs.stripe_source.as_deref().unwrap_or("?")
                    );
                }
            }
        }
        None => {
            let _ = writeln!(s, "  file system   (none mounted)");
        }
    }
    if r.stack.is_empty() {
        let _ = writeln!(s, "  device stack  (no block device)");
    } else {
        let _ = writeln!(s, "  device stack");
    }
    for l in &r.stack {
        let via = match l.via {
            Some(storlab_monitor::tree::LinkKind::File) => " (via a file)",
            _ => "",
        };
        let _ = writeln!(
            s,
            "    {}{}{via}: {}",
            "  ".repeat(l.depth),
            l.device,
            layer_line(l)
        );
    }
    if r.recommendations.is_empty() {
        let _ = writeln!(s, "  recommendations: none");
    } else {
        let _ = writeln!(s, "  recommendations");
    }
    for x in &r.recommendations {
        let _ = writeln!(s, "    [{}] {}", x.level, x.message);
        let _ = writeln!(s, "           why: {}", x.reason);
        if let Some(a) = &x.action {
            let _ = writeln!(s, "           try: {a}");
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    s
}
