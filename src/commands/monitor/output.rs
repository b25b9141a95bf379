//! How `storlab monitor` shows each interval: the flags, made into a
//! `storlab_monitor::display::Formatter` (the table, CSV rows, JSON lines).

use clap::ValueEnum;
use std::io::IsTerminal;
use storlab_monitor::display::{Formatter, Kind};
use storlab_monitor::{Layer, Selection};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MonitorFormat {
    /// A table, refreshed in place on a terminal (scrolling with --no-clear or into a pipe)
    Table,
    /// One JSON object per interval
    Jsonl,
    /// One row per device (and total) per interval
    Csv,
    /// The whole timeline as one JSON document at the end (what the store keeps)
    Json,
    /// Nothing on stdout (with --listen)
    None,
}

impl crate::commands::outfmt::Format for MonitorFormat {
    const HELP: &'static str = "Output format [default: table, or none with --listen]";
    const JSON: Self = MonitorFormat::Json;
    /// Table, or none with --listen: the command decides.
    const DEFAULT: Option<Self> = None;
}

/// What turns each interval into the text written, as `cmd` asks.
pub fn formatter(
    cmd: &super::MonitorCommand,
    format: MonitorFormat,
    layer: Layer,
    sel: Option<&Selection>,
) -> Formatter {
    let kind = match format {
        MonitorFormat::Table => Kind::Table {
            // Redraw in place: a terminal, and --no-clear not given.
            clear: std::io::stdout().is_terminal() && !cmd.no_clear,
        },
        MonitorFormat::Jsonl => Kind::Jsonl,
        MonitorFormat::Csv => Kind::Csv,
        MonitorFormat::Json | MonitorFormat::None => Kind::None,
    };
    let flags = (cmd.hide_idle, cmd.timestamps);
    Formatter::new(kind, cmd.units, flags, layer, sel)
}
