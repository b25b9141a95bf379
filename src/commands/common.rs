//! Arguments shared by the commands that use the results store, to
//! `#[command(flatten)]` into a command: [`DbArgs`] (which database),
//! [`RecordArgs`] (labels of a new run) and [`RunArgs`] (which runs).

use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use storlab_store::{RunSelector, Store};

/// Which results database to use.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Results database (SQLite file; created when a run is first saved) [default: `database` in
    /// ~/.config/storlab/config.toml, else ~/.local/share/storlab/storlab.db]
    #[arg(long, env = "STORLAB_DB", value_name = "PATH", default_value_os_t = super::config::default_db(), hide_default_value = true)]
    pub db: PathBuf,
}

impl DbArgs {
    /// Open the database for writing, creating it if needed (and the
    /// per-user data directory, when it is the default). Warns when it sits
    /// on a network file system.
    pub fn open(&self) -> anyhow::Result<Store> {
        super::config::get()?;
        storlab_files::check_database_path(&self.db)?;
        if self.db == super::config::default_db()
            && let Some(dir) = self.db.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        }
        if let Some(w) = super::config::network_fs_warning(&self.db) {
            crate::output::warn(&w.to_string());
        }
        Ok(Store::open(&self.db)?)
    }

    /// Open an existing database; a missing file is an error that says how
    /// to make one.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        super::config::get()?;
        storlab_files::check_database_path(&self.db)?;
        Ok(Store::open_existing(&self.db)?)
    }
}

pub use storlab_types::DESIGN_TAG;

/// Labels saved with a new run.
#[derive(Args, Debug, Clone, Default)]
pub struct RecordArgs {
    /// Label the run, e.g. --tag controller=perc5e --tag raid=R6/12 (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = storlab_store::parse_tag)]
    pub tags: Vec<(String, String)>,
    /// Free-text note saved with the run
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// The design this storage was planned as: storlab plan layout's arguments, e.g.
    /// "R6/10/20 --drive exos-x18-18tb --controller perc-h800" (saved as tag planned_as=...;
    /// storlab report then shows each phase's predicted figure beside the measured one)
    #[arg(long, value_name = "PLAN")]
    pub design: Option<String>,
}

impl RecordArgs {
    /// The tags as a map, over the config file's default tags; the same
    /// key given twice with two values is refused.
    pub fn tag_map(&self) -> anyhow::Result<BTreeMap<String, String>> {
        let defaults = &super::config::get()?.tags;
        let mut map = storlab_store::merge_tags(&self.tags, self.design.as_deref(), defaults)?;
        // A design is checked before anything runs: a typo found by
        // `storlab report` a week later cannot be fixed on the run. Its
        // catalog files are recorded by absolute path.
        if let Some(d) = map.get_mut(DESIGN_TAG) {
            *d = storlab_plan::design_to_record(d, |p| {
                read_input(p, "catalog file").map_err(|e| format!("{e:#}"))
            })
            .context("--design (or tag planned_as=...)")?;
        }
        Ok(map)
    }

    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

/// Runs named on the command line: RUN... or --all.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Runs: an id (12), latest, latest~1 (the one before), tag:KEY=VALUE (all runs with that tag;
    /// tag:a=1,b=2 for runs with both)
    #[arg(value_name = "RUN", value_parser = RunSelector::parse, required_unless_present = "all")]
    pub runs: Vec<RunSelector>,
    /// Take every run in the database
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
}

impl RunArgs {
    /// The stored runs named, in the order given.
    pub fn load(&self, store: &Store) -> anyhow::Result<Vec<storlab_types::StoredRun>> {
        Ok(store.select(&self.runs, self.all)?)
    }
}

// The result-file rules and the input-file helper live in `outfile.rs`;
// every command reaches them through here.
pub use super::outfile::{OutputKind, check_output_path, read_input, read_input_bytes};

// The table styles (results, listings, the trim of listings) live in the
// printer crate; every command reaches them through here.
pub use storlab_print::style::result_table;
