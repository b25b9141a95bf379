//! `storlab-md`: the metadata benchmark behind `storlab md` (what HPC sites
//! measure with mdtest): every rank creates, stats, reads, renames and
//! deletes its items (files or directories) in a directory tree, and each
//! operation is a phase with its own rate, latency histogram and CPU time.
//!
//! The main types: [`MdSpec`] (the job, checked by [`MdSpec::check`]),
//! [`run`] (the phase loop over an [`MdFs`], coordinated across ranks by a
//! [`RankSync`]; [`Solo`] for one process) and [`RankPhase`] (one rank's
//! figures for one phase, the HDR histogram kept for an exact merge).
//! Modules: `tree` (the tree's shape and where each item lives), `names`
//! (generated names: nothing is stored per item, so a million files cost
//! no memory), `fs` (the operations; [`Posix`] uses the `*at` calls,
//! [`PosixPaths`] whole paths as mdtest does),
//! `run` (the loop), [`job`] (mdtest's flags → the checked job),
//! [`record`] (the ranks' figures as the stored phase) and [`agree`] (the
//! digest the ranks compare); [`session`] runs one process's job from the
//! target to the final record. Nothing here prints.
#![forbid(unsafe_code)]
//!
//! Stonewalling stays correct: a create phase stopped by its stonewall
//! records how many items each rank really made ([`RankPhase::items`]),
//! and the later phases work on exactly those, so no stat ever looks for a
//! file that was never created (mdtest's stonewall is create-only and its
//! later phases did: hpc/ior#241, #112). An operation that fails stops the
//! phase and is counted by errno in [`RankPhase::errors`]; it is never
//! counted as an operation done.

pub mod agree;
mod fs;
pub mod job;
mod names;
pub mod record;
mod run;
pub mod session;
mod tree;

pub use fs::{MdFs, Posix, PosixPaths, errno_name};
pub use names::NameBuf;
pub use run::{Control, PlannedPhase, RankPhase, RankSync, Solo, Steps, plan, run};
pub use tree::{MAX_TREE_DIRS, Tree};

/// Largest `write_bytes` per file: md measures metadata, `bench` measures data.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// A metadata operation (one phase per operation and item kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Create,
    Stat,
    Read,
    Rename,
    Delete,
}

impl Op {
    /// In the order phases run.
    pub const ALL: [Op; 5] = [Op::Create, Op::Stat, Op::Read, Op::Rename, Op::Delete];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Stat => "stat",
            Op::Read => "read",
            Op::Rename => "rename",
            Op::Delete => "delete",
        }
    }

    /// `create`, `stat`, `read`, `rename`, `delete` (also `remove`,
    /// `removal`, `unlink` for delete, as mdtest prints it).
    /// [`Op::parse`], or an error listing the operations (`--ops`).
    pub fn from_word(s: &str) -> Result<Op, UnknownOp> {
        Op::parse(s).ok_or_else(|| UnknownOp(s.to_string()))
    }

    pub fn parse(s: &str) -> Option<Op> {
        match s.trim().to_ascii_lowercase().as_str() {
            "create" | "creation" => Some(Op::Create),
            "stat" => Some(Op::Stat),
            "read" => Some(Op::Read),
            "rename" => Some(Op::Rename),
            "delete" | "remove" | "removal" | "unlink" => Some(Op::Delete),
            _ => None,
        }
    }

    /// Stat and read visit another rank's items under a rank shift.
    pub fn shifted(self) -> bool {
        matches!(self, Op::Stat | Op::Read)
    }
}

/// What the operations work on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Item {
    File,
    Dir,
}

impl Item {
    pub fn as_str(self) -> &'static str {
        match self {
            Item::File => "file",
            Item::Dir => "dir",
        }
    }
}

/// An md job as the user asked for it (per rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MdSpec {
    /// Files each rank creates (0 = no file phases).
    pub files: u64,
    /// Directories each rank creates (0 = no directory phases).
    pub dirs: u64,
    /// Tree levels below the top directory (mdtest `-z`).
    pub depth: u32,
    /// Subdirectories per tree directory (mdtest `-b`).
    pub branch: u32,
    /// Each rank in its own tree (mdtest `-u`), else one shared tree.
    pub unique_dir: bool,
    /// Bytes written into each file at create (mdtest `-w`).
    pub write_bytes: u64,
    /// Bytes read from each file by the read phase (mdtest `-e`).
    pub read_bytes: u64,
    /// The operations measured, each its own phase. A create that is not
    /// measured still runs (untimed) when a later operation needs the
    /// items; everything is removed afterwards in any case.
    pub ops: Vec<Op>,
    /// Stat and read visit rank (r + shift) mod ranks (mdtest `-N`).
    pub rank_shift: u32,
    /// Stop each create phase after this long (mdtest `-W`).
    pub stonewall_ns: Option<u64>,
}

/// Why a job cannot run. Each message names the fix.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MdError {
    /// The job itself is wrong (exit 2 before anything is made).
    #[error("{0}")]
    Invalid(String),
    /// The tree could not be made.
    #[error("{0}")]
    Io(String),
}

/// A word `--ops` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown operation {0:?}: give some of create,stat,read,rename,delete")]
pub struct UnknownOp(pub String);

impl MdSpec {
    /// Check the job; returns its tree.
    pub fn check(&self) -> Result<Tree, MdError> {
        let bad = |m: String| Err(MdError::Invalid(m));
        if self.files == 0 && self.dirs == 0 {
            return bad("nothing to do: give --files N (mdtest's -n N -F) or --dirs N (-D), or -n N for both".into());
        }
        if self.ops.is_empty() {
            return bad(
                "no operations: give --ops with some of create,stat,read,rename,delete".into(),
            );
        }
        if self.ops.contains(&Op::Read) && self.files == 0 {
            return bad("--ops read reads files, and this job has none: give --files N".into());
        }
        if self.depth > 0 && self.branch == 0 {
            return bad(
                "--branch 0 with --depth > 0 makes no tree: give --branch 1 or more".into(),
            );
        }
        let Some(tree) = Tree::new(self.depth, self.branch) else {
            return bad(format!(
                "a tree of depth {} with {} branches has more than {MAX_TREE_DIRS} directories: use a smaller --depth or --branch",
                self.depth, self.branch
            ));
        };
        if self.write_bytes > MAX_FILE_BYTES {
            return bad(format!(
                "--size {} is over {} per file: md measures metadata; use storlab bench for large files",
                self.write_bytes, MAX_FILE_BYTES
            ));
        }
        if self.read_bytes > self.write_bytes {
            return bad(format!(
                "--read-bytes {} is more than the {} bytes written to each file: give --size (-w) at least as large",
                self.read_bytes, self.write_bytes
            ));
        }
        if self.stonewall_ns == Some(0) {
            return bad("--stonewall 0 would stop the create phase before it starts: give a duration such as 10s".into());
        }
        Ok(tree)
    }

    /// How many items of `item` each rank makes.
    pub fn count(&self, item: Item) -> u64 {
        match item {
            Item::File => self.files,
            Item::Dir => self.dirs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> MdSpec {
        storlab_testkit::md_spec!(crate, 10)
    }

    #[test]
    fn ops_parse_with_mdtest_words() {
        for op in Op::ALL {
            assert_eq!(Op::parse(op.as_str()), Some(op));
        }
        assert_eq!(Op::parse("removal"), Some(Op::Delete));
        assert_eq!(Op::parse(" STAT "), Some(Op::Stat));
        assert_eq!(Op::parse("chmod"), None);
    }

    #[test]
    fn bad_jobs_name_the_fix() {
        assert!(spec().check().is_ok());
        let cases = [
            (MdSpec { files: 0, ..spec() }, "--files"),
            (
                MdSpec {
                    ops: vec![],
                    ..spec()
                },
                "--ops",
            ),
            (
                MdSpec {
                    depth: 2,
                    branch: 0,
                    ..spec()
                },
                "--branch",
            ),
            (
                MdSpec {
                    depth: 9,
                    branch: 10,
                    ..spec()
                },
                "smaller --depth",
            ),
            (
                MdSpec {
                    write_bytes: 1 << 30,
                    ..spec()
                },
                "storlab bench",
            ),
            (
                MdSpec {
                    read_bytes: 10,
                    write_bytes: 5,
                    ..spec()
                },
                "--size",
            ),
            (
                MdSpec {
                    stonewall_ns: Some(0),
                    ..spec()
                },
                "--stonewall",
            ),
            (
                MdSpec {
                    files: 0,
                    dirs: 3,
                    ops: vec![Op::Read],
                    ..spec()
                },
                "--files",
            ),
        ];
        for (s, want) in cases {
            let e = s.check().unwrap_err().to_string();
            assert!(e.contains(want), "{e} should name {want}");
        }
    }
}
