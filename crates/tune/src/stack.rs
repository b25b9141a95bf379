//! The block-layer stack under a target whose read-ahead can be set, and
//! reading and writing a layer's value.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storlab_monitor::tree::LinkKind;
use storlab_monitor::{DeviceTree, SysPaths};

/// One layer of the stack whose read-ahead can be set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// Kernel name (`dm-0`, `vda`).
    pub name: String,
    /// Its `queue/read_ahead_kb` file.
    pub path: PathBuf,
}

/// A read-ahead file's value in KiB.
pub fn read_kb(p: &Path) -> Result<u64> {
    let t =
        std::fs::read_to_string(p).map_err(Error::io(format!("cannot read {}", p.display())))?;
    t.trim().parse().map_err(|source| Error::NotANumber {
        path: p.to_path_buf(),
        text: t.trim().to_string(),
        source,
    })
}

/// Set a read-ahead file to `kb` KiB.
pub fn write_kb(p: &Path, kb: u64) -> Result<()> {
    std::fs::write(p, format!("{kb}\n")).map_err(Error::io(format!("cannot write {}", p.display())))
}

/// The read-ahead file that governs `name`: its own queue, or for a
/// partition its disk's (partitions share the disk's request queue).
fn ra_file(tree: &DeviceTree, name: &str) -> Option<PathBuf> {
    let d = tree.get(name)?;
    let own = d.sysfs_dir.join("queue/read_ahead_kb");
    if own.exists() {
        return Some(own);
    }
    let parent = d.sysfs_dir.parent()?.join("queue/read_ahead_kb");
    parent.exists().then_some(parent)
}

/// The stack under `target`, top first: the layer whose read-ahead file
/// reads use, then every layer below it.
pub fn layers(target: &Path) -> Result<Vec<Layer>> {
    let tree = DeviceTree::load(&SysPaths::live())?;
    let top = tree.resolve(&target.display().to_string())?;
    // The block-layer stack only: a loop device's backing file is reached
    // through a file system, whose device's read-ahead is another matter.
    let mut names: Vec<String> = Vec::new();
    let mut todo = vec![top];
    while let Some(n) = todo.pop() {
        if names.contains(&n) {
            continue;
        }
        if let Some(d) = tree.get(&n) {
            todo.extend(
                d.lowers
                    .iter()
                    .filter(|l| l.kind != LinkKind::File)
                    .map(|l| l.device.clone()),
            );
        }
        names.push(n);
    }
    // Top first, then by level from the top down.
    names.sort_by_key(|n| std::cmp::Reverse(tree.level(n)));
    let mut out: Vec<Layer> = Vec::new();
    for n in names {
        if let Some(path) = ra_file(&tree, &n)
            && !out.iter().any(|l| l.path == path)
        {
            let name = path
                .parent()
                .and_then(Path::parent)
                .and_then(|p| p.file_name())
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(n);
            out.push(Layer { name, path });
        }
    }
    if out.is_empty() {
        return Err(Error::NoReadahead {
            target: target.to_path_buf(),
        });
    }
    Ok(out)
}

/// Size of a block device, from sysfs (512-byte sectors).
pub fn device_size(dev: &Path) -> Result<u64> {
    let real = dev
        .canonicalize()
        .map_err(Error::io(format!("cannot resolve {}", dev.display())))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let p = PathBuf::from(format!("/sys/class/block/{name}/size"));
    Ok(read_kb(&p)? * 512)
}
