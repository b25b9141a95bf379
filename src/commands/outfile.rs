//! Result files and input files: what storlab may write over, and what it
//! reads. The rules live in `storlab-files` (`crates/files`); every command
//! reaches them through here (or `common`).

use std::path::Path;
pub use storlab_files::{
    BENCH_REPEAT_DOCUMENT, OutputKind, SWEEP_DOCUMENT, chart_is_png, database_file, open_input,
    read_input, read_input_bytes, same_file, special_kind,
};

/// The permit that writes a checked result file ([`storlab_files::Permit`]),
/// its failure as the front end's error.
#[derive(Debug, Clone)]
pub struct Permit(storlab_files::Permit);

impl Permit {
    /// The result file, as given.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Write the file, the rules checked again now.
    pub fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(self.0.write(bytes)?)
    }
}

/// [`storlab_files::check_output_path`].
pub fn check_output_path(
    path: &Path,
    db: &Path,
    force: bool,
    kind: OutputKind,
) -> anyhow::Result<Permit> {
    Ok(Permit(storlab_files::check_output_path(
        path, db, force, kind,
    )?))
}

/// [`storlab_files::check_chart_path`].
pub fn check_chart_path(path: &Path, db: &Path, force: bool) -> anyhow::Result<Permit> {
    Ok(Permit(storlab_files::check_chart_path(path, db, force)?))
}
