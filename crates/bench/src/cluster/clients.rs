//! Where the clients of a multi-client run sit, from each rank's node
//! name (and RAM): which ranks are the first k clients (`--clients-by`),
//! how far to shift readers so each reads another node's data
//! (`--reorder-tasks`), and which buffered phases may be served from a
//! node's page cache. Pure, so tested without MPI.

use std::time::Duration;
use storlab_types::{CacheMode, PhaseParams};

/// How a `--clients` list is written.
const CLIENTS_HELP: &str =
    "expected a comma-separated, increasing list of client counts, e.g. 1,2,4,8";

/// A `--clients` list that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientsError {
    #[error("'{0}' is not a whole number; {help}", help = CLIENTS_HELP)]
    NotANumber(String),
    #[error("a client count of 0 runs nothing; {help}", help = CLIENTS_HELP)]
    Zero,
    #[error("{0} does not increase; {help}", help = CLIENTS_HELP)]
    NotIncreasing(u32),
}

/// Multi-client flags (`given`, as typed) outside an MPI launch, where
/// they mean nothing: how to launch one, or (`mpi_built` false) how to
/// build a storlab that can.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: only for a multi-client run{}", given.join(", "), outside_mpi_remedy(given, *mpi_built))]
pub struct OutsideMpi {
    pub given: Vec<&'static str>,
    pub mpi_built: bool,
}

fn outside_mpi_remedy(given: &[&str], mpi_built: bool) -> String {
    if mpi_built {
        format!(
            "; launch storlab with MPI, e.g. `mpirun -np 4 storlab bench TARGET {}` or \
             `srun -n 4 storlab bench ...`",
            given.first().copied().unwrap_or_default()
        )
    } else {
        ", and this storlab was built without MPI; rebuild with `cargo build --release \
         --features mpi` (needs Open MPI or MPICH and libclang) and launch it with \
         `mpirun -np N storlab bench ...`"
            .to_string()
    }
}

/// The client counts of `--clients`: `1,2,4,8` (strictly increasing,
/// each at least 1).
pub fn parse_clients(s: &str) -> Result<Vec<u32>, ClientsError> {
    let mut out: Vec<u32> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let k: u32 = part
            .parse()
            .map_err(|_| ClientsError::NotANumber(part.to_string()))?;
        if k == 0 {
            return Err(ClientsError::Zero);
        }
        if out.last().is_some_and(|&l| k <= l) {
            return Err(ClientsError::NotIncreasing(k));
        }
        out.push(k);
    }
    Ok(out)
}

/// A `--stonewall` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StonewallError {
    #[error(transparent)]
    Duration(#[from] storlab_types::units::ParseError),
    #[error("a stonewall of 0 stops before any I/O; use e.g. 30s")]
    Zero,
}

/// `--stonewall DUR` (more than 0).
pub fn parse_stonewall(s: &str) -> Result<Duration, StonewallError> {
    let d = storlab_types::parse_duration(s)?;
    if d.is_zero() {
        return Err(StonewallError::Zero);
    }
    Ok(d)
}

/// The client order spread over nodes first (`--clients-by node`): the
/// first rank of every node (in order of first appearance), then the
/// second of every node, and so on. `nodes[r]` is rank r's node.
pub fn order_by_node(nodes: &[String]) -> Vec<u32> {
    let ranks = (0..nodes.len()).map(|r| u32::try_from(r).unwrap_or(u32::MAX));
    let mut groups: Vec<(&String, Vec<u32>)> = Vec::new();
    for (r, n) in ranks.zip(nodes) {
        match groups.iter_mut().find(|g| g.0 == n) {
            Some(g) => g.1.push(r),
            None => groups.push((n, vec![r])),
        }
    }
    let mut order = Vec::new();
    for i in 0.. {
        let before = order.len();
        for g in &groups {
            if let Some(&r) = g.1.get(i) {
                order.push(r);
            }
        }
        if order.len() == before {
            break;
        }
    }
    order
}

/// How many places to shift clients so each reads data written on another
/// node; `None` when no shift does (every client on one node).
pub fn reorder_shift(nodes: &[String], clients: &[u32]) -> Option<u32> {
    let k = clients.len();
    let node = |c: usize| &nodes[clients[c % k] as usize];
    (1..k)
        .find(|&s| (0..k).all(|c| node(c) != node(c + s)))
        .map(|s| u32::try_from(s).unwrap_or(u32::MAX))
}

/// Buffered phases whose working set per node is under twice that node's
/// RAM may be served from the client's page cache: one warning per such
/// phase and node. `mem[r]` is rank r's node's RAM in bytes.
pub fn working_set_warnings(
    nodes: &[String],
    mem: &[u64],
    phases: &[PhaseParams],
    clients: &[u32],
) -> Vec<String> {
    let mut out = Vec::new();
    // Every buffered phase: each may have its own size and job count.
    for p in phases.iter().filter(|p| p.cache != CacheMode::Direct) {
        let per_rank = p.size_bytes * u64::from(p.numjobs);
        let mut by_node: Vec<(&String, u64, u64)> = Vec::new();
        for &r in clients {
            let n = &nodes[r as usize];
            match by_node.iter_mut().find(|x| x.0 == n) {
                Some(x) => x.1 += per_rank,
                None => by_node.push((n, per_rank, mem[r as usize])),
            }
        }
        out.extend(by_node.iter().filter(|(_, ws, mem)| *ws < 2 * *mem).map(|(n, ws, mem)| {
            format!(
                "phase {}: buffered I/O with a working set of {} on node {n}, which has {} of RAM: \
                 results may come from the client's page cache (use --cache direct, a size over 2× RAM \
                 per node, or --reorder-tasks for reads)",
                p.name,
                storlab_types::format_bytes(*ws),
                storlab_types::format_bytes(*mem)
            )
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    /// Outside MPI the flags given are named with how to launch (or build)
    /// a multi-client run.
    #[test]
    fn multi_client_flags_outside_mpi_say_how() {
        let e = OutsideMpi {
            given: vec!["--clients", "--stonewall"],
            mpi_built: true,
        };
        assert_eq!(
            e.to_string(),
            "--clients, --stonewall: only for a multi-client run; launch storlab with MPI, e.g. \
             `mpirun -np 4 storlab bench TARGET --clients` or `srun -n 4 storlab bench ...`"
        );
        let e = OutsideMpi {
            given: vec!["--reorder-tasks"],
            mpi_built: false,
        };
        assert!(e.to_string().starts_with("--reorder-tasks: only for a multi-client run, and this storlab was built without MPI; rebuild with `cargo build --release --features mpi`"), "{e}");
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn clients_lists() {
        let e = |s: &str| parse_clients(s).unwrap_err().to_string();
        assert_eq!(parse_clients("1,2,4").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_clients(" 3 ").unwrap(), vec![3]);
        assert!(e("2,1").contains("increase"));
        assert!(e("0").contains("0"));
        assert!(e("1,,2").contains("whole number"));
        assert!(parse_stonewall("0s").is_err());
        assert_eq!(parse_stonewall("2s").unwrap(), Duration::from_secs(2));
    }

    proptest! {
        #[test]
        fn clients_parser_never_panics_and_returns_increasing(s in "[0-9, x-]{0,20}") {
            if let Ok(v) = parse_clients(&s) {
                prop_assert!(!v.is_empty());
                prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(v[0] >= 1);
            }
        }
    }

    fn nodes(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn clients_by_node_take_one_rank_of_every_node_first() {
        let n = nodes(&["a", "a", "b", "b", "c"]);
        assert_eq!(order_by_node(&n), [0, 2, 4, 1, 3]);
        assert_eq!(order_by_node(&nodes(&["a", "b", "a"])), [0, 1, 2]);
        assert_eq!(order_by_node(&[]), Vec::<u32>::new());
    }

    #[test]
    fn readers_shift_to_another_node_when_one_exists() {
        let n = nodes(&["a", "a", "b", "b"]);
        assert_eq!(reorder_shift(&n, &[0, 1, 2, 3]), Some(2));
        assert_eq!(reorder_shift(&n, &[0, 2, 1, 3]), Some(1));
        assert_eq!(reorder_shift(&nodes(&["a", "a"]), &[0, 1]), None);
        assert_eq!(reorder_shift(&n, &[0]), None);
    }

    #[test]
    fn buffered_working_sets_under_twice_ram_are_named_per_node() {
        let n = nodes(&["a", "a", "b"]);
        let mem = [1 << 30, 1 << 30, 8 << 30];
        let mut p = PhaseParams {
            name: "w".into(),
            size_bytes: 1 << 30,
            numjobs: 1,
            cache: CacheMode::Cold,
            ..Default::default()
        };
        // Node a: 2 GiB of 1 GiB RAM (over 2x? no: 2 GiB is not under 2 GiB);
        // node b: 1 GiB of 8 GiB RAM: warned.
        let w = working_set_warnings(&n, &mem, std::slice::from_ref(&p), &[0, 1, 2]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("phase w: buffered I/O with a working set of"),
            "{w:?}"
        );
        assert!(w[0].contains("on node b"), "{w:?}");
        p.cache = CacheMode::Direct;
        assert!(working_set_warnings(&n, &mem, &[p], &[0, 1, 2]).is_empty());
    }
}
