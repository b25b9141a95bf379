//! Who launched this process: the MPI launcher's environment (Open MPI,
//! PMIx, PMI/MPICH, Slurm) read without MPI, so every build (and every
//! command that runs phases) can tell it was started by `mpirun` or `srun`.

/// The MPI rank this process was started as, from the launcher's
/// environment (Open MPI, PMIx, PMI/MPICH, Slurm), if any.
pub fn launcher_rank() -> Option<u32> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// Whether this process speaks for its launch's command line: not under a
/// launcher, rank 0, or (Open MPI's MPMD `mpirun A : B`) the first rank of
/// its own app context, whose command line may differ from rank 0's. So a
/// bad option given to every rank is named once, and one given only to
/// `B` is still named (by B's first rank) instead of only mpirun's "exit
/// code 2".
pub fn speaks_for_its_command_line() -> bool {
    let Some(rank) = launcher_rank() else {
        return true;
    };
    if rank == 0 {
        return true;
    }
    let env = |k: &str| std::env::var(k).ok();
    let (Some(app), Some(counts)) = (
        env("OMPI_MCA_orte_app_num").and_then(|a| a.trim().parse::<usize>().ok()),
        env("OMPI_APP_CTX_NUM_PROCS"),
    ) else {
        return false;
    };
    first_rank_of_app(app, &counts) == Some(rank)
}

/// The first rank of app context `app`, from Open MPI's
/// `OMPI_APP_CTX_NUM_PROCS` ("4 2": ranks 0-3, then 4-5).
fn first_rank_of_app(app: usize, counts: &str) -> Option<u32> {
    let counts: Vec<u32> = counts
        .split_whitespace()
        .map(|c| c.parse().ok())
        .collect::<Option<_>>()?;
    (app < counts.len()).then(|| counts[..app].iter().sum())
}

/// How many processes the launcher started in this job (mpirun's `-np`,
/// srun's tasks), when started by one.
pub fn launcher_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_rank_of_each_mpmd_app_context_speaks_for_it() {
        use super::first_rank_of_app;
        assert_eq!(first_rank_of_app(0, "4 2"), Some(0));
        assert_eq!(first_rank_of_app(1, "4 2"), Some(4));
        assert_eq!(first_rank_of_app(2, "1 1 3"), Some(2));
        assert_eq!(first_rank_of_app(2, "4 2"), None);
        assert_eq!(first_rank_of_app(0, "x"), None);
    }
}
