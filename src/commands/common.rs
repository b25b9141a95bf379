//! Arguments shared by the commands that use the results store, to
//! `#[command(flatten)]` into a command: [`DbArgs`] (which database),
//! [`RecordArgs`] (labels of a new run) and [`RunArgs`] (which runs).

use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
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
        if self.db == super::config::default_db()
            && let Some(dir) = self.db.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        }
        if let Some(w) = super::config::network_fs_warning(&self.db) {
            eprintln!("storlab: warning: {w}");
        }
        Ok(Store::open(&self.db)?)
    }

    /// Open an existing database; a missing file is an error that says how
    /// to make one.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        super::config::get()?;
        Ok(Store::open_existing(&self.db)?)
    }
}

/// The tag that carries a run's design (`--design`): storlab plan layout's
/// arguments.
pub const DESIGN_TAG: &str = "planned_as";

/// Labels saved with a new run.
#[derive(Args, Debug, Clone, Default)]
pub struct RecordArgs {
    /// Label the run, e.g. --tag controller=perc5e --tag raid=R6/12 (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag_arg)]
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
        let defaults = super::config::get()?.tags.clone();
        let mut map = BTreeMap::new();
        for (k, v) in &self.tags {
            if let Some(old) = map.insert(k.clone(), v.clone())
                && old != *v
            {
                anyhow::bail!(
                    "--tag {k} is given twice ({k}={old} and {k}={v}); a run has one value per key"
                );
            }
        }
        if let Some(d) = &self.design {
            if let Some(old) = map.insert(DESIGN_TAG.to_string(), d.clone())
                && old != *d
            {
                anyhow::bail!(
                    "--design and --tag planned_as=... give two designs ({d} and {old}); keep one"
                );
            }
        }
        for (k, v) in defaults {
            map.entry(k).or_insert(v);
        }
        // A design is checked before anything runs: a typo found by
        // `storlab report` a week later cannot be fixed on the run. Its
        // catalog files are recorded by absolute path.
        if let Some(d) = map.get_mut(DESIGN_TAG) {
            *d = super::plan::design_to_record(d).context("--design (or tag planned_as=...)")?;
        }
        Ok(map)
    }

    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

/// clap value parser for `--tag key=value`.
pub fn parse_tag_arg(s: &str) -> Result<(String, String), String> {
    storlab_store::parse_tag(s).map_err(|e| e.to_string())
}

/// clap value parser for a RUN argument (`12`, `latest`, `tag:cfg=a`).
pub fn parse_run_arg(s: &str) -> Result<RunSelector, String> {
    RunSelector::parse(s).map_err(|e| e.to_string())
}

/// Runs named on the command line: RUN... or --all.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Runs: an id (12), latest, latest~1 (the one before), tag:KEY=VALUE (all runs with that tag;
    /// tag:a=1,b=2 for runs with both)
    #[arg(value_name = "RUN", value_parser = parse_run_arg, required_unless_present = "all")]
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

/// A borderless comfy-table without the padding at line ends, newline-terminated.
pub fn trim_table(table: &str) -> String {
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Resolve a `--baseline` selector to one run: the latest of those it
/// names. Returns the run and, when several matched, a line saying which
/// was taken.
pub fn load_baseline(
    store: &Store,
    sel: &RunSelector,
) -> anyhow::Result<(storlab_types::StoredRun, Option<String>)> {
    let ids = store.resolve(std::slice::from_ref(sel), false)?;
    let Some(&id) = ids.last() else {
        anyhow::bail!("no run matches the baseline {sel}");
    };
    let note = (ids.len() > 1).then(|| {
        format!(
            "baseline: run {id}, the latest of {} runs matching {sel}",
            ids.len()
        )
    });
    Ok((store.load(id)?, note))
}

/// Write a result file (export, report, chart). Refuses to write over
/// anything but a regular file, so a typo cannot clobber a device.
pub fn write_output(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        anyhow::bail!(
            "{} exists and is not a regular file; give -o a file name",
            path.display()
        );
    }
    std::fs::write(path, bytes).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// The results database and its WAL and SHM side files.
fn database_files(db: &Path) -> Vec<PathBuf> {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let mut shm = db.as_os_str().to_owned();
    shm.push("-shm");
    let mut journal = db.as_os_str().to_owned();
    journal.push("-journal");
    vec![
        db.to_path_buf(),
        PathBuf::from(wal),
        PathBuf::from(shm),
        PathBuf::from(journal),
    ]
}

/// `path` made absolute with symlinks resolved, also when the file itself
/// does not exist yet (its directory is resolved instead).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = std::fs::canonicalize(parent.unwrap_or(Path::new("."))).ok()?;
    Some(dir.join(name))
}

/// Whether `a` and `b` name the same file: the same resolved path, or the
/// same inode (a hard link).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Some(x), Some(y)) = (resolved(a), resolved(b))
        && x == y
    {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Which of the database's files `path` is, if any.
pub fn database_file(path: &Path, db: &Path) -> Option<PathBuf> {
    database_files(db).into_iter().find(|f| same_file(path, f))
}

/// Whether the first bytes of an existing file show storlab wrote it: it
/// names storlab (JSON, HTML, CSV carry the tool's name), or it begins like
/// the output about to be written (a chart, a Markdown table), or it is
/// empty.
fn looks_like_ours(path: &Path, new_head: Option<&[u8]>) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    if f.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    if head.is_empty() {
        return true;
    }
    if head.windows(7).any(|w| w.eq_ignore_ascii_case(b"storlab")) {
        return true;
    }
    new_head.is_some_and(|new| {
        let n = 64.min(new.len()).min(head.len());
        n >= 16 && head[..n] == new[..n]
    })
}

/// Check that a result file may be written at `path` (report, export,
/// chart, `bench --json-out`), before anything is computed or run:
///
/// * never the results database or its `-wal`/`-shm` files (`--force` does
///   not change that: overwriting it loses every run);
/// * never a device, a directory or another special file;
/// * an existing file only when storlab wrote it (or it is empty), or the
///   user passed `--force`.
///
/// `new_head` is the beginning of what will be written, when known.
pub fn check_output_path(
    path: &Path,
    db: &Path,
    force: bool,
    new_head: Option<&[u8]>,
) -> anyhow::Result<()> {
    if let Some(which) = database_file(path, db) {
        anyhow::bail!(
            "{} is the results database ({}): writing there would destroy every stored run; \
             choose another output file name",
            path.display(),
            which.display()
        );
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.file_type().is_fifo() => Ok(()), // a pipe destroys nothing
        Ok(meta) if !meta.is_file() => {
            let what = if meta.file_type().is_block_device() {
                "a block device"
            } else if meta.file_type().is_char_device() {
                "a character device"
            } else if meta.is_dir() {
                "a directory"
            } else {
                "a special file"
            };
            anyhow::bail!(
                "{} is {what}, not a regular file; result files are never written over devices \
                 or directories: give a file name",
                path.display()
            )
        }
        // Found before the run, not after it: the file's directory must exist.
        Err(_)
            if path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .is_some_and(|d| !d.is_dir()) =>
        {
            let d = path.parent().unwrap_or(Path::new(""));
            anyhow::bail!(
                "{}: {} {}; write the file elsewhere",
                path.display(),
                d.display(),
                if d.exists() {
                    "is not a directory"
                } else {
                    "does not exist (create the directory first)"
                }
            )
        }
        Err(_)
            if resolved(path)
                .is_some_and(|p| p.starts_with("/dev") && !p.starts_with("/dev/shm")) =>
        {
            anyhow::bail!(
                "{} does not exist, and a new file on /dev would live in RAM next to the devices: \
                 check the name, or write the file elsewhere",
                path.display()
            )
        }
        Ok(_) if !force && !looks_like_ours(path, new_head) => anyhow::bail!(
            "{} already exists and storlab did not write it: pass --force to overwrite it, \
             or choose another file name",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// The one table style for results (boxed, condensed): bench, sweep,
/// repeats, clients, campaign, tune and plan tables all look alike.
pub fn result_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

/// The one style for listings (`runs`, `show`, `sim`): plain aligned
/// columns, as `ls -l` and `ps` print them.
pub fn list_table() -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t
}
