//! The user's defaults (`storlab-config`: config.toml, the per-user
//! database, the network-file-system warning), read once for the whole
//! process.

use anyhow::Result;
use std::path::PathBuf;
use std::sync::OnceLock;
pub use storlab_config::{Config, config_path, network_fs_warning};

/// The config, read once. An unreadable or bad file is reported the first
/// time it is needed.
pub fn get() -> Result<&'static Config> {
    static CONFIG: OnceLock<std::result::Result<Config, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| storlab_config::load().map_err(|e| format!("{:#}", anyhow::Error::from(e))))
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// The default results database ([`storlab_config::default_db`]); `--db`
/// and `STORLAB_DB` are applied by clap on top.
pub fn default_db() -> PathBuf {
    storlab_config::default_db(get().ok())
}
