//! The output formats of the store commands, one spelling everywhere:
//! `--output-format FORMAT`, with `--json` as the shorthand for
//! `--output-format json` (`bench`, `monitor`, `plan` and `inspect` spell it
//! the same way).

use clap::ValueEnum;

/// For commands whose human output is prose or a record (`check`, `show`,
/// `import`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    /// For people
    Text,
    /// For programs: the full, serializer-made document
    Json,
}

/// For commands whose human output is a table (`compare`, `runs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// A table for the terminal
    Table,
    /// For programs: the full, serializer-made document
    Json,
}
