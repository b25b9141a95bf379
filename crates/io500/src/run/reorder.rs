//! IOR's read shift (`-C -Q q`), exactly as IOR computes it (hpc/ior
//! 5fcf0ba `ior.c`, the read of `TestIoSys`; `utilities.c`): io500 gives
//! ior-easy-read and ior-hard-read `-C -Q 1` and ior-rnd4K-easy-read
//! `-C -Q 2` (only with `filePerProc`), and IOR makes each task read the
//! data of task `(rank + rankOffset) % numTasks`, its `pretendRank`:
//!
//! ```text
//! shift      = tasksBlockMapping ? numTasksOnNode0 : 1
//! rankOffset = (taskPerNodeOffset * shift) % numTasks
//! ```
//!
//! `numTasksOnNode0` is the size of the node of task 0 (IOR: the
//! `MPI_COMM_TYPE_SHARED` split holding world rank 0), and
//! `tasksBlockMapping` is whether task 1 runs on task 0's node (IOR:
//! `QueryNodeMapping`, by host name; true for one task). On one node the
//! offset is `q × numTasks mod numTasks = 0`: every task reads its own
//! data. storlab takes each rank's node from its node name (MPI's
//! processor name, or `STORLAB_MPI_NODE`, which tests set to pretend to
//! be several nodes).

/// IOR's `rankOffset` for `-C -Q q` over ranks whose nodes are `nodes`
/// (`nodes[r]`: rank r's node): rank r reads what rank
/// `(r + offset) % nodes.len()` wrote.
pub fn ior_read_offset(nodes: &[String], q: u32) -> u32 {
    let n = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    let Some(first) = nodes.first() else {
        return 0;
    };
    let on_node0 = nodes.iter().filter(|x| *x == first).count() as u64;
    let block = nodes.get(1).is_none_or(|x| x == first);
    let shift = if block { on_node0 } else { 1 };
    u32::try_from(u64::from(q) * shift % u64::from(n)).unwrap_or(0)
}

/// The `-Q` io500 gives an IOR read phase (its `-C` with it): 1 for
/// ior-easy-read and ior-hard-read (`phase_ior_easy.c`,
/// `phase_ior_hard.c`), 2 for ior-rnd4K-easy-read when ior-easy has a
/// file per process and none otherwise (`phase_ior_rnd4k_easy_read.c`).
pub fn ior_read_q(phase: &str, file_per_proc: bool) -> u32 {
    match phase {
        "ior-easy-read" | "ior-hard-read" => 1,
        "ior-rnd4K-easy-read" if file_per_proc => 2,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(s: &str) -> Vec<String> {
        s.chars().map(|c| c.to_string()).collect()
    }

    #[test]
    fn one_node_reads_its_own_data_as_ior_does() {
        for n in ["a", "aa", "aaaa", "aaaaaaa"] {
            for q in [0, 1, 2, 3] {
                assert_eq!(ior_read_offset(&nodes(n), q), 0, "{n} -Q {q}");
            }
        }
    }

    #[test]
    fn two_nodes_shift_by_the_tasks_of_node_0_or_by_one() {
        // Block mapping (a a b b): -Q 1 is node 0's 2 tasks, -Q 2 wraps to 0.
        assert_eq!(ior_read_offset(&nodes("aabb"), 1), 2);
        assert_eq!(ior_read_offset(&nodes("aabb"), 2), 0);
        assert_eq!(ior_read_offset(&nodes("aaabbb"), 1), 3);
        // Round-robin (a b a b): task 1 is on another node, shift 1.
        assert_eq!(ior_read_offset(&nodes("abab"), 1), 1);
        assert_eq!(ior_read_offset(&nodes("abab"), 2), 2);
        // Uneven nodes: IOR counts node 0's tasks only.
        assert_eq!(ior_read_offset(&nodes("aaab"), 1), 3);
        assert_eq!(ior_read_offset(&nodes("aaab"), 2), 2);
        assert_eq!(ior_read_offset(&[], 1), 0);
    }

    #[test]
    fn io500_gives_q_1_to_the_reads_and_q_2_to_the_random_read() {
        assert_eq!(ior_read_q("ior-easy-read", true), 1);
        assert_eq!(ior_read_q("ior-hard-read", true), 1);
        assert_eq!(ior_read_q("ior-rnd4K-easy-read", true), 2);
        assert_eq!(ior_read_q("ior-rnd4K-easy-read", false), 0);
        assert_eq!(ior_read_q("ior-easy-write", true), 0);
    }
}
