//! `storlab md` names its items as mdtest does (`file.mdtest.<rank>.<i>`,
//! `dir.mdtest.<rank>.<i>`): the names' length decides how many entries
//! share a directory block, and on ext4 every create scans its block, so
//! shorter names cost ~11 % more system time per create than mdtest's
//! (docs/PERFORMANCE.md, "md vs mdtest"). Same names, same directories.

use crate::util::{ok, storlab};
use std::path::{Path, PathBuf};

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn md_names_files_and_directories_as_mdtest_does() {
    let d = tempfile::tempdir().unwrap();
    let o = storlab(&[
        "md",
        d.path().to_str().unwrap(),
        "-n",
        "3",
        "-u",
        "-C",
        "--keep",
        "--no-save",
        "-q",
    ]);
    ok(&o);
    let runs: Vec<PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "one run directory: {runs:?}");
    let top = runs[0].join("rank.0/tree");
    assert_eq!(
        names_in(&top),
        [
            "dir.mdtest.0.0",
            "dir.mdtest.0.1",
            "dir.mdtest.0.2",
            "file.mdtest.0.0",
            "file.mdtest.0.1",
            "file.mdtest.0.2",
        ],
        "mdtest's names in {}",
        top.display()
    );
}
