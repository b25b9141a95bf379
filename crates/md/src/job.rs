//! md job building: mdtest's flags as the command line took them
//! ([`MdFlags`]: `-n` with `-F`/`-D`, `-C`/`-T`/`-E`/`-r`, `--ops`, sizes)
//! made into a checked [`MdSpec`] and its tree.

use crate::{MdError, MdSpec, Op, Tree};
use std::time::Duration;
use storlab_types::ParseError;

/// What the user asked for, flag by flag (mdtest's spellings included).
#[derive(Debug, Clone, Default)]
pub struct MdFlags {
    /// `--files N` (files per rank).
    pub files: Option<u64>,
    /// `--dirs N` (directories per rank).
    pub dirs: Option<u64>,
    /// `-n N` (mdtest's items per rank: files and directories).
    pub items: Option<u64>,
    /// `-F`: `-n` counts files only.
    pub files_only: bool,
    /// `-D`: `-n` counts directories only.
    pub dirs_only: bool,
    pub depth: u32,
    pub branch: u32,
    pub unique_dir: bool,
    /// `-w` bytes written to each file.
    pub size: Option<u64>,
    /// `-e` bytes read from each file (default: what was written).
    pub read_bytes: Option<u64>,
    /// `--ops` as given.
    pub ops: Vec<Op>,
    /// mdtest's `-C`, `-T`, `-E`, `-r`.
    pub create_only: bool,
    pub stat_only: bool,
    pub read_only: bool,
    pub remove_only: bool,
    /// `--rename`.
    pub rename: bool,
    pub rank_shift: u32,
    pub stonewall_ns: Option<u64>,
    /// bench's `--allow-destroy` and `--monitor`, which md shares the flags
    /// of but cannot honour: refused, not ignored.
    pub allow_destroy: bool,
    pub monitor: bool,
}

/// The job the flags describe, checked, and its tree.
pub fn build(f: &MdFlags) -> Result<(MdSpec, Tree), MdError> {
    if (f.files_only || f.dirs_only) && f.items.is_none() {
        return Err(MdError::Invalid(
            "-F and -D go with -n N (mdtest's items per rank): give -n N, or --files N / --dirs N alone"
                .into(),
        ));
    }
    let (files, dirs) = match f.items {
        Some(n) if f.files_only => (n, 0),
        Some(n) if f.dirs_only => (0, n),
        Some(n) => (n, n),
        None => (f.files.unwrap_or(0), f.dirs.unwrap_or(0)),
    };
    let picked: Vec<Op> = [
        (f.create_only, Op::Create),
        (f.stat_only, Op::Stat),
        (f.read_only, Op::Read),
        (f.remove_only, Op::Delete),
    ]
    .into_iter()
    .filter_map(|(on, op)| on.then_some(op))
    .collect();
    let mut ops = if !f.ops.is_empty() {
        f.ops.clone()
    } else if !picked.is_empty() {
        picked
    } else if files > 0 {
        vec![Op::Create, Op::Stat, Op::Read, Op::Delete]
    } else {
        vec![Op::Create, Op::Stat, Op::Delete]
    };
    if f.rename {
        ops.push(Op::Rename);
    }
    ops.sort_unstable();
    ops.dedup();
    let write_bytes = f.size.unwrap_or(0);
    let spec = MdSpec {
        files,
        dirs,
        depth: f.depth,
        branch: f.branch,
        unique_dir: f.unique_dir,
        write_bytes,
        read_bytes: f.read_bytes.unwrap_or(write_bytes),
        ops,
        rank_shift: f.rank_shift,
        stonewall_ns: f.stonewall_ns,
    };
    let tree = spec.check()?;
    if f.allow_destroy {
        return Err(MdError::Invalid(
            "--allow-destroy has no meaning for md: it only ever works in its own new subdirectory of TARGET; drop the flag".into(),
        ));
    }
    if f.monitor {
        return Err(MdError::Invalid(
            "--monitor is not available for md yet: run `storlab monitor` beside it, or drop the flag".into(),
        ));
    }
    Ok((spec, tree))
}

/// `-W`'s stonewall: a bare number is seconds (as in mdtest), else a
/// duration (`500ms`, `2m`).
pub fn stonewall(s: &str) -> Result<Duration, ParseError> {
    if let Ok(secs) = s.trim().parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    storlab_types::parse_duration(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mdtest_items_and_phases_make_the_job() {
        let flags = MdFlags {
            items: Some(10),
            files_only: true,
            branch: 1,
            ..Default::default()
        };
        let (spec, _) = build(&flags).unwrap();
        assert_eq!((spec.files, spec.dirs), (10, 0));
        assert_eq!(spec.ops, [Op::Create, Op::Stat, Op::Read, Op::Delete]);
        let (spec, _) = build(&MdFlags {
            create_only: true,
            remove_only: true,
            rename: true,
            size: Some(4096),
            ..flags.clone()
        })
        .unwrap();
        assert_eq!(spec.ops, [Op::Create, Op::Rename, Op::Delete]);
        assert_eq!((spec.write_bytes, spec.read_bytes), (4096, 4096));
        let (spec, _) = build(&MdFlags {
            items: None,
            files_only: false,
            dirs: Some(3),
            ..flags.clone()
        })
        .unwrap();
        assert_eq!((spec.files, spec.dirs), (0, 3));
        assert_eq!(spec.ops, [Op::Create, Op::Stat, Op::Delete]);
        let e = build(&MdFlags {
            items: None,
            ..flags.clone()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("-F and -D go with -n N"), "{e}");
        for (allow_destroy, monitor, flag) in
            [(true, false, "--allow-destroy"), (false, true, "--monitor")]
        {
            let e = build(&MdFlags {
                allow_destroy,
                monitor,
                ..flags.clone()
            })
            .unwrap_err();
            assert!(e.to_string().starts_with(flag), "{e}");
        }
    }
}
