//! The options of a multi-client run (`mpirun -np N storlab bench ...`):
//! how ranks coordinate, not what each job does, so they are run-level
//! flags beside the workload table. Always compiled, so a build without
//! the `mpi` feature names them in `--help` and rejects them with a clear
//! message (exit 2) instead of "unexpected argument".

use anyhow::Result;
use clap::{Args, ValueEnum};
use std::time::Duration;
use storlab_bench::cluster::clients::{ClientsError, OutsideMpi, parse_clients, parse_stonewall};

/// Which ranks count as the first k clients of `--clients`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ClientsBy {
    /// Rank order: ranks 0..k.
    #[default]
    Rank,
    /// Spread over nodes first: the first rank of every node, then the
    /// second of every node, ...
    Node,
}

impl ClientsBy {
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub fn as_str(self) -> &'static str {
        match self {
            ClientsBy::Rank => "rank",
            ClientsBy::Node => "node",
        }
    }
}

/// Multi-client options (need an MPI build launched by mpirun or srun).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Multi-client runs (MPI build, under mpirun or srun)")]
pub struct ClusterArgs {
    /// Run the job with the first k ranks for each k in LIST (the others wait
    /// at the barrier): one stored run per k, and the clients table
    #[arg(long, value_name = "LIST", value_parser = parse_client_list)]
    pub clients: Option<ClientList>,
    /// Which ranks are the first k: rank order, or spread over nodes first
    #[arg(long, value_enum, value_name = "HOW")]
    pub clients_by: Option<ClientsBy>,
    /// Stop every rank once the first rank has run DUR; the report gives the
    /// rate while all ranks moved data (first done) and to completion (last done)
    #[arg(long, value_name = "DUR", value_parser = parse_stonewall)]
    pub stonewall: Option<Duration>,
    /// After the stonewall, let every job go on to the amount of the
    /// furthest job (bounded by another DUR)
    #[arg(long, requires = "stonewall")]
    pub stonewall_wear_out: bool,
    /// Read phases read the data a rank on another node wrote (IOR's -C), so
    /// no client reads back from its own cache
    #[arg(long)]
    pub reorder_tasks: bool,
}

impl ClusterArgs {
    /// The flags given, as typed.
    pub fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.clients.is_some() {
            v.push("--clients");
        }
        if self.clients_by.is_some() {
            v.push("--clients-by");
        }
        if self.stonewall.is_some() {
            v.push("--stonewall");
        }
        if self.stonewall_wear_out {
            v.push("--stonewall-wear-out");
        }
        if self.reorder_tasks {
            v.push("--reorder-tasks");
        }
        v
    }

    /// Outside an MPI launch these options mean nothing: say why and how.
    pub fn reject_outside_mpi(&self) -> Result<()> {
        let given = self.given();
        if given.is_empty() {
            return Ok(());
        }
        let mpi_built = cfg!(feature = "mpi");
        Err(OutsideMpi { given, mpi_built }.into())
    }
}

/// The client counts of `--clients`, increasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientList(pub Vec<u32>);

fn parse_client_list(s: &str) -> Result<ClientList, ClientsError> {
    parse_clients(s).map(ClientList)
}
