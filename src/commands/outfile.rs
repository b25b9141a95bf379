//! Result files and input files: what storlab may write over, and what it
//! reads. The rules (and the [`Permit`] that writes a checked result file)
//! live in `storlab-files` (`crates/files`); every command reaches them
//! through here (or `common`).

pub use storlab_files::{
    BENCH_REPEAT_DOCUMENT, OutputKind, Permit, SWEEP_DOCUMENT, chart_is_png, check_chart_path,
    check_output_path, check_run_paths, open_input, read_input, read_input_bytes,
};
