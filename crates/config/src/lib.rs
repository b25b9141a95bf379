//! The user's defaults: `$XDG_CONFIG_HOME/storlab/config.toml`
//! (`~/.config/storlab/config.toml`) and the per-user results database
//! `$XDG_DATA_HOME/storlab/storlab.db` (`~/.local/share/storlab/storlab.db`).
//!
//! ```toml
//! database = "/srv/perf/storlab.db"   # where results go (--db and STORLAB_DB still win)
//! host = "oss01"                      # label saved as the host name of new runs
//! [tags]                              # tags every new run gets (--tag wins per key)
//! site = "hpc-a"
//! ```
//!
//! A missing file means no defaults; a bad one is a [`ConfigError`] naming
//! the file and the key, so a typo is never silently ignored. The main
//! type is [`Config`]; the front end reads it once ([`load`]) and applies
//! `--db`, `STORLAB_DB` and `--tag` on top.

#![forbid(unsafe_code)]

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The config file's contents.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Results database.
    pub database: Option<PathBuf>,
    /// Host label for new runs.
    pub host: Option<String>,
    /// Default tags of new runs.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

/// Why the config file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or a key that is not one of ours.
    #[error(
        "{}: {message} (the keys are database, host and [tags]; see `storlab --help`)",
        path.display()
    )]
    Parse { path: PathBuf, message: String },
    /// A default tag the store would refuse.
    #[error("{}: [tags]: {err}", path.display())]
    Tag {
        path: PathBuf,
        err: storlab_store::SelectError,
    },
    /// The file could not be read under the input rules.
    #[error(transparent)]
    Read(#[from] storlab_files::Error),
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `$XDG_<kind>_HOME` or `~/<fallback>`.
fn xdg(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(fallback)))
}

/// Where the config file is looked for.
pub fn config_path() -> Option<PathBuf> {
    xdg("XDG_CONFIG_HOME", ".config").map(|d| d.join("storlab/config.toml"))
}

/// Parse a config file's text (at `path`): a relative `database` is
/// relative to the config file, not to wherever storlab runs; every
/// default tag is one the store takes.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let mut c: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    if let Some(db) = &c.database
        && db.is_relative()
    {
        let base = path.parent().unwrap_or(Path::new("."));
        c.database = Some(base.join(db));
    }
    for (k, v) in &c.tags {
        storlab_store::parse_tag(&format!("{k}={v}")).map_err(|err| ConfigError::Tag {
            path: path.to_path_buf(),
            err,
        })?;
    }
    Ok(c)
}

/// The user's config: none (the defaults) when there is no file.
pub fn load() -> Result<Config, ConfigError> {
    let Some(path) = config_path() else {
        return Ok(Config::default());
    };
    // A missing file is no config; anything else at that name is read by
    // the input rules (a FIFO or device would block every command).
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Config::default());
    }
    parse(&storlab_files::read_input(&path, "config file")?, &path)
}

/// The default results database: the config's `database`, else the
/// per-user `$XDG_DATA_HOME/storlab/storlab.db`, else `./storlab.db` (no
/// home directory).
pub fn default_db(config: Option<&Config>) -> PathBuf {
    if let Some(db) = config.and_then(|c| c.database.as_ref()) {
        return db.clone();
    }
    xdg("XDG_DATA_HOME", ".local/share")
        .map(|d| d.join("storlab").join(storlab_store::DEFAULT_DB))
        .unwrap_or_else(|| PathBuf::from(storlab_store::DEFAULT_DB))
}

/// A warning when `db` sits on a network file system, where SQLite's
/// locking is unreliable (concurrent writers can corrupt it).
pub fn network_fs_warning(db: &Path) -> Option<String> {
    let dir = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let f_type = storlab_host::os::fs_type(dir).ok()?;
    const NFS: i64 = 0x6969;
    const SMB: i64 = 0x517B;
    const CIFS: i64 = 0xFF53_4D42;
    const SMB2: i64 = 0xFE53_4D42;
    const FUSE: i64 = 0x6573_5546;
    let kind = match f_type {
        NFS => "NFS",
        SMB | CIFS | SMB2 => "SMB/CIFS",
        FUSE => "a FUSE file system",
        _ => return None,
    };
    Some(format!(
        "the results database {} is on {kind}, where SQLite's file locking is unreliable: \
         keep it on a local disk (--db, STORLAB_DB or `database` in {})",
        db.display(),
        config_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the config file".into())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_keys_and_mistakes() {
        let c = parse(
            "database = \"/x/r.db\"\nhost = \"oss01\"\n[tags]\nsite = \"a\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(c.database.as_deref(), Some(Path::new("/x/r.db")));
        assert_eq!(c.host.as_deref(), Some("oss01"));
        assert_eq!(c.tags["site"], "a");
        let e = parse("databse = \"x\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.toml") && e.contains("databse"), "{e}");
    }

    /// A relative database is the config file's neighbour; a tag the
    /// store would refuse is refused here, naming the file.
    #[test]
    fn a_relative_database_and_a_bad_tag() {
        let c = parse("database = \"r.db\"\n", Path::new("/etc/x/c.toml")).unwrap();
        assert_eq!(c.database.as_deref(), Some(Path::new("/etc/x/r.db")));
        assert_eq!(default_db(Some(&c)), PathBuf::from("/etc/x/r.db"));
        let e = parse("[tags]\n\"a b\" = \"x\"\n", Path::new("c.toml")).unwrap_err();
        assert!(matches!(e, ConfigError::Tag { .. }), "{e}");
        assert!(e.to_string().starts_with("c.toml: [tags]: "), "{e}");
    }

    #[test]
    fn local_disks_are_not_network_file_systems() {
        assert_eq!(network_fs_warning(&std::env::temp_dir().join("x.db")), None);
    }
}
