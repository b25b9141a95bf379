//! The md job the metadata tests of several crates (md's own, the cluster
//! crate's rank-merging tests) run: `files` files in one shared flat
//! directory, created, stated and deleted ([`md_spec!`](crate::md_spec)).
//!
//! A macro rather than a function: md's own unit tests need `crate::MdSpec`
//! (the crate under test), the others `storlab_md::MdSpec`, and testkit
//! links neither.

/// `md_spec!(md, files)`: an `MdSpec` of `md` (`crate` inside storlab-md,
/// `storlab_md` elsewhere) with `files` files per rank, no directories,
/// a flat shared tree, no data, and the phases create, stat, delete.
#[macro_export]
macro_rules! md_spec {
    ($md:tt, $files:expr) => {
        $md::MdSpec {
            files: $files,
            dirs: 0,
            depth: 0,
            branch: 1,
            unique_dir: false,
            write_bytes: 0,
            read_bytes: 0,
            ops: vec![$md::Op::Create, $md::Op::Stat, $md::Op::Delete],
            rank_shift: 0,
            stonewall_ns: None,
        }
    };
}
