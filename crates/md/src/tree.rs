//! The directory tree of an md job and where each item lives in it.
//!
//! As in mdtest, a tree has a top directory and `depth` levels below it,
//! each directory with `branch` subdirectories; directories are numbered
//! breadth first (the top is 0, the children of `k` are `k·branch + 1 ..=
//! k·branch + branch`). A rank's items are spread over every directory of
//! the tree in contiguous blocks: item `i` lives in directory
//! `i / per_dir`, with `per_dir = ceil(items / dirs)`. Nothing is stored:
//! a directory's path and an item's place are computed from numbers.

use std::path::PathBuf;

/// Largest tree accepted (its directories are created before the phases).
pub const MAX_TREE_DIRS: u64 = 1_000_000;

/// The shape of one tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    pub depth: u32,
    pub branch: u32,
    dirs: u64,
}

impl Tree {
    /// A tree of `depth` levels below the top with `branch` children per
    /// directory; `None` when it would hold more than [`MAX_TREE_DIRS`]
    /// directories (or `branch` is 0 with `depth` > 0).
    pub fn new(depth: u32, branch: u32) -> Option<Tree> {
        if depth > 0 && branch == 0 {
            return None;
        }
        let mut dirs: u64 = 1;
        let mut level: u64 = 1;
        for _ in 0..depth {
            level = level.checked_mul(u64::from(branch))?;
            dirs = dirs.checked_add(level)?;
            if dirs > MAX_TREE_DIRS {
                return None;
            }
        }
        Some(Tree {
            depth,
            branch,
            dirs,
        })
    }

    /// Directories in the tree (the top included).
    pub fn dirs(&self) -> u64 {
        self.dirs
    }

    /// The parent of directory `d` (None for the top).
    pub fn parent(&self, d: u64) -> Option<u64> {
        (d > 0).then(|| (d - 1) / u64::from(self.branch))
    }

    /// The path of directory `d` relative to the tree's base: `tree` for
    /// the top, `tree/d1/d4` for a directory two levels down.
    pub fn path(&self, d: u64) -> PathBuf {
        let mut chain = Vec::with_capacity(self.depth as usize + 1);
        let mut at = d;
        while let Some(p) = self.parent(at) {
            chain.push(at);
            at = p;
        }
        let mut path = PathBuf::from("tree");
        for k in chain.iter().rev() {
            path.push(format!("d{k}"));
        }
        path
    }

    /// Items per directory when `items` are spread over the tree.
    pub fn per_dir(&self, items: u64) -> u64 {
        items.div_ceil(self.dirs).max(1)
    }

    /// The directories holding the first `count` of `items` items, each
    /// with the range of item numbers it holds, in order.
    pub fn blocks(
        &self,
        items: u64,
        count: u64,
    ) -> impl Iterator<Item = (u64, std::ops::Range<u64>)> {
        let per = self.per_dir(items);
        let count = count.min(items);
        (0..self.dirs)
            .map(move |d| {
                let lo = d.saturating_mul(per).min(count);
                let hi = (d + 1).saturating_mul(per).min(count);
                (d, lo..hi)
            })
            .take_while(|(_, r)| !r.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_geometric_sum() {
        assert_eq!(Tree::new(0, 1).unwrap().dirs(), 1);
        assert_eq!(Tree::new(0, 0).unwrap().dirs(), 1);
        assert_eq!(Tree::new(3, 1).unwrap().dirs(), 4);
        assert_eq!(Tree::new(2, 3).unwrap().dirs(), 1 + 3 + 9);
        assert_eq!(Tree::new(5, 10).unwrap().dirs(), 111_111);
        assert!(
            Tree::new(6, 10).is_none(),
            "1,111,111 dirs is over the limit"
        );
        assert!(Tree::new(2, 0).is_none());
        assert!(Tree::new(u32::MAX, u32::MAX).is_none());
    }

    #[test]
    fn paths_nest_breadth_first() {
        let t = Tree::new(2, 3).unwrap();
        assert_eq!(t.path(0), PathBuf::from("tree"));
        assert_eq!(t.path(1), PathBuf::from("tree/d1"));
        assert_eq!(t.path(3), PathBuf::from("tree/d3"));
        // The children of 1 are 4, 5, 6; of 3 are 10, 11, 12.
        assert_eq!(t.path(4), PathBuf::from("tree/d1/d4"));
        assert_eq!(t.path(12), PathBuf::from("tree/d3/d12"));
        // Every directory's parent path is its path's parent.
        for d in 1..t.dirs() {
            let p = t.parent(d).unwrap();
            assert_eq!(t.path(d).parent().unwrap(), t.path(p));
        }
    }

    #[test]
    fn items_cover_the_tree_in_blocks_and_a_prefix_stays_a_prefix() {
        let t = Tree::new(2, 2).unwrap(); // 7 dirs
        let all: Vec<_> = t.blocks(20, 20).collect();
        assert_eq!(t.per_dir(20), 3);
        assert_eq!(all.len(), 7);
        assert_eq!(all[0], (0, 0..3));
        assert_eq!(all[6], (6, 18..20));
        let n: u64 = all.iter().map(|(_, r)| r.end - r.start).sum();
        assert_eq!(n, 20);
        // A stonewalled count: the same placement, cut after 8 items.
        let cut: Vec<_> = t.blocks(20, 8).collect();
        assert_eq!(cut, vec![(0, 0..3), (1, 3..6), (2, 6..8)]);
        assert_eq!(t.blocks(20, 0).count(), 0);
        // Fewer items than directories: one per directory, the rest empty.
        assert_eq!(t.blocks(3, 3).count(), 3);
    }
}
