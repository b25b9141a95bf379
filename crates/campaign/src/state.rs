//! What a campaign's directory remembers (`./storlab-campaigns/ID/`): the
//! expanded campaign (`campaign.json`), each cell's state (`state.json`,
//! written atomically as a cell moves on, so `--resume` after a `kill -9`
//! knows what is left) and each cell's log; and the resume decisions read
//! from it (what the results database holds is [`crate::runs`]).

use crate::spec::{Campaign, Cell};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Tags storlab sets on every run of a campaign; a cell may not use them.
pub const RESERVED_TAGS: [&str; 3] = ["campaign", "cell", "campaign_run"];

/// A file of the campaign directory that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is damaged: {source}", path.display())]
    Damaged {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "no campaign {id} in {} (campaign ids are the directory names there; --dir DIR names another place)",
        dir.display()
    )]
    NoCampaign { id: String, dir: PathBuf },
    #[error("--resume {id}: not a campaign id (see the directories in {})", dir.display())]
    BadId { id: String, dir: PathBuf },
    #[error("cannot create {} (a campaign with this id exists?): {source}", path.display())]
    Exists {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Io { what, path, source }
}

/// How a cell ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Finished,
    Failed,
    Interrupted,
    /// Written before the cell's setup: still so on the next start, the
    /// campaign was killed mid-cell (its teardown did not run).
    Running,
}

impl CellStatus {
    pub fn word(&self) -> &'static str {
        match self {
            CellStatus::Finished => "finished",
            CellStatus::Failed => "failed",
            CellStatus::Interrupted => "interrupted",
            CellStatus::Running => "killed mid-cell",
        }
    }
}

/// How far a cell got: saved as it moves on, so `--resume` after a
/// `kill -9` knows what is left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Setup,
    Running,
    Teardown,
    Done,
}

/// What the campaign directory remembers of one cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellState {
    pub status: CellStatus,
    /// Why it failed; while `Running`, what failed before the teardown.
    pub reason: Option<String>,
    /// Finished runs stored for this cell when it ended.
    pub stored_runs: usize,
    /// The stage it reached (none in state files of older storlabs).
    #[serde(default)]
    pub stage: Option<Stage>,
}

impl CellState {
    /// A cell that reached `stage` (status running).
    pub fn at(stage: Stage, reason: Option<String>) -> CellState {
        CellState {
            status: CellStatus::Running,
            reason,
            stored_runs: 0,
            stage: Some(stage),
        }
    }

    /// Whether a cell killed in this state (status running) is measured:
    /// it reached its teardown with nothing failed before, and every run is
    /// stored (`all_stored`), so only the teardown is left.
    pub fn measured(&self, all_stored: bool) -> bool {
        all_stored
            && match self.stage {
                Some(Stage::Teardown) | Some(Stage::Done) => self.reason.is_none(),
                // An older state file: the stored runs tell.
                None => true,
                Some(Stage::Setup) | Some(Stage::Running) => false,
            }
    }
}

/// `state.json`: every cell that ended so far.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub cells: BTreeMap<String, CellState>,
}

/// The campaign's directory and files.
#[derive(Debug, Clone)]
pub struct Dir {
    pub path: PathBuf,
}

impl Dir {
    /// The directory of campaign `id` under `root`, refusing ids that are
    /// not a directory name there.
    pub fn of(root: &Path, id: &str) -> Result<Dir, StateError> {
        if id.is_empty() || id.contains('/') || id.starts_with('.') {
            return Err(StateError::BadId {
                id: id.into(),
                dir: root.into(),
            });
        }
        Ok(Dir {
            path: root.join(id),
        })
    }
    pub fn campaign(&self) -> PathBuf {
        self.path.join("campaign.json")
    }
    pub fn state(&self) -> PathBuf {
        self.path.join("state.json")
    }
    pub fn log(&self, cell: &str) -> PathBuf {
        self.path.join(format!("{cell}.log"))
    }
    pub fn open_log(&self, cell: &str) -> Result<std::fs::File, StateError> {
        let p = self.log(cell);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .map_err(io("open the log", &p))
    }
    /// The saved campaign of `--resume` (root: the `--dir`).
    pub fn load_campaign(&self, id: &str, root: &Path) -> Result<Campaign, StateError> {
        let path = self.campaign();
        let text = std::fs::read_to_string(&path).map_err(|_| StateError::NoCampaign {
            id: id.into(),
            dir: root.into(),
        })?;
        serde_json::from_str(&text).map_err(|source| StateError::Damaged { path, source })
    }
    /// Make the directory (and `root`) and save the expanded campaign.
    pub fn create(&self, root: &Path, c: &Campaign) -> Result<(), StateError> {
        std::fs::create_dir_all(root).map_err(io("create", root))?;
        std::fs::create_dir(&self.path).map_err(|source| StateError::Exists {
            path: self.path.clone(),
            source,
        })?;
        let text = serde_json::to_string_pretty(c).map_err(|source| StateError::Damaged {
            path: self.campaign(),
            source,
        })?;
        std::fs::write(self.campaign(), text).map_err(io("write", &self.campaign()))
    }
    pub fn load_state(&self) -> Result<State, StateError> {
        let path = self.state();
        match std::fs::read_to_string(&path) {
            Ok(t) => {
                serde_json::from_str(&t).map_err(|source| StateError::Damaged { path, source })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(io("read", &path)(e)),
        }
    }
    /// Record that `cell` reached `stage` (status running).
    pub fn enter(
        &self,
        s: &mut State,
        cell: &str,
        stage: Stage,
        reason: Option<String>,
    ) -> Result<(), StateError> {
        s.cells
            .insert(cell.to_string(), CellState::at(stage, reason));
        self.save_state(s)
    }
    /// Write the state atomically (a kill never leaves half a file).
    pub fn save_state(&self, s: &State) -> Result<(), StateError> {
        let tmp = self.path.join("state.json.tmp");
        let text = serde_json::to_string_pretty(s).map_err(|source| StateError::Damaged {
            path: self.state(),
            source,
        })?;
        std::fs::write(&tmp, text).map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, self.state()).map_err(io("write", &self.state()))
    }
}

/// A campaign id: the campaign's name (characters other than letters,
/// digits, `-` and `_` as `_`), a UTC time stamp `YYYYMMDD-HHMMSS` and
/// four hex digits of `salt` ([`storlab_types::time::id_salt`]), as sweep ids have: two
/// campaigns of the same name started in the same second (in different
/// `--dir`s, one database) got one id, and their runs mixed under one
/// `campaign=` tag.
pub fn new_id(name: &str, now_rfc3339: &str, salt: u16) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stamp = now_rfc3339
        .replace([':', '-'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    format!("{name}-{stamp}-{salt:04x}")
}

/// The first cell tag storlab sets itself ([`RESERVED_TAGS`]), with its cell.
pub fn reserved_tag(c: &Campaign) -> Option<(&str, &str)> {
    c.cells.iter().find_map(|cell| {
        cell.tags
            .keys()
            .find(|k| RESERVED_TAGS.contains(&k.as_str()))
            .map(|t| (cell.name.as_str(), t.as_str()))
    })
}

/// The arguments of a cell's `i`th storlab run: its words, the campaign's
/// tags and the database.
pub fn child_args(id: &str, cell: &Cell, i: usize, db: &Path) -> Vec<String> {
    let mut args: Vec<String> = cell.run[i].clone();
    let mut tags = vec![
        format!("campaign={id}"),
        format!("cell={}", cell.name),
        format!("campaign_run={i}"),
    ];
    tags.extend(cell.tags.iter().map(|(k, v)| format!("{k}={v}")));
    for t in tags {
        args.push("--tag".into());
        args.push(t);
    }
    args.push("--db".into());
    args.push(db.display().to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_atomically_and_old_files_load() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::of(t.path(), "c-1").unwrap();
        std::fs::create_dir(&d.path).unwrap();
        assert!(d.load_state().unwrap().cells.is_empty(), "no file yet");
        let mut s = State::default();
        d.enter(&mut s, "ext4", Stage::Teardown, None).unwrap();
        let back = d.load_state().unwrap();
        assert_eq!(back.cells["ext4"].stage, Some(Stage::Teardown));
        assert!(!d.path.join("state.json.tmp").exists());
        // A state file of an older storlab: no stage.
        std::fs::write(
            d.state(),
            r#"{"cells":{"a":{"status":"running","reason":null,"stored_runs":0}}}"#,
        )
        .unwrap();
        assert_eq!(d.load_state().unwrap().cells["a"].stage, None);
        std::fs::write(d.state(), "{").unwrap();
        assert!(d.load_state().unwrap_err().to_string().contains("damaged"));
        assert!(Dir::of(t.path(), "../x").is_err());
        assert!(Dir::of(t.path(), "").is_err());
    }

    #[test]
    fn a_kill_in_the_teardown_after_the_runs_leaves_the_cell_measured() {
        let at = |s, r: Option<&str>| CellState::at(s, r.map(String::from));
        assert!(at(Stage::Teardown, None).measured(true));
        assert!(!at(Stage::Teardown, None).measured(false));
        assert!(!at(Stage::Teardown, Some("setup failed")).measured(true));
        assert!(!at(Stage::Running, None).measured(true));
        assert!(!at(Stage::Setup, None).measured(true));
        let mut old = at(Stage::Setup, None);
        old.stage = None;
        assert!(
            old.measured(true),
            "older state files: the stored runs tell"
        );
    }

    #[test]
    fn ids_are_directory_names() {
        assert_eq!(
            new_id("fs choice/x", "2026-11-27T03:14:15Z", 0xbeef),
            "fs_choice_x-20261127-031415-beef"
        );
        // The same name in the same second: two ids as soon as the salts
        // differ (they did not before the salt).
        assert_ne!(
            new_id("tiny", "2026-11-27T04:55:45Z", 1),
            new_id("tiny", "2026-11-27T04:55:45Z", 2)
        );
    }
}
