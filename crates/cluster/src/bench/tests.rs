//! bench's ranks over in-process ranks (threads): the same collective
//! code MPI runs, checked without a launcher.

use super::*;
use crate::LocalComm;
use storlab_bench::{SafetyOptions, resolve_phase, spec_from_pairs};

fn phase(numjobs: &str) -> PhaseParams {
    let spec = spec_from_pairs([
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "64k"),
        ("engine", "psync"),
        ("cache", "cold"),
        ("numjobs", numjobs),
    ])
    .unwrap();
    resolve_phase(&spec, 0).unwrap()
}

#[test]
fn ranks_learn_every_node_and_its_memory() {
    let out = LocalComm::run(3, |c| {
        let r = c.rank();
        let w = Ranks::exchange(c, &format!("n{}", r % 2), 1000 + u64::from(r));
        (
            w.nodes.clone(),
            w.mem.clone(),
            w.node().to_string(),
            w.client_order(true),
        )
    });
    for (r, (nodes, mem, node, by_node)) in out.into_iter().enumerate() {
        assert_eq!(nodes, vec!["n0", "n1", "n0"]);
        assert_eq!(mem, vec![1000, 1001, 1002]);
        assert_eq!(node, format!("n{}", r % 2));
        // One rank per node in turn: 0 (n0), 1 (n1), then 2 (n0 again).
        assert_eq!(by_node, vec![0, 1, 2]);
    }
}

#[test]
fn a_failure_on_one_rank_is_reported_by_rank_zero_with_rank_and_node() {
    let out = LocalComm::run(3, |c| {
        let r = c.rank();
        let w = Ranks::exchange(c, &format!("node{r}"), 0);
        let fine = w.first_failure("step", None);
        let bad = w.first_failure("cannot open", (r == 2).then(|| "no such file".to_string()));
        let own = w.first_failure("x", (r == 0).then(|| "rank 0's own".to_string()));
        (fine, bad, own)
    });
    assert!(out.iter().all(|o| o.0 == Step::Ok));
    assert_eq!(
        out[0].1,
        Step::Report("rank 2 on node2: cannot open: no such file".into())
    );
    assert_eq!(out[0].2, Step::Report("rank 0's own".into()));
    for o in &out[1..] {
        assert_eq!((&o.1, &o.2), (&Step::Quiet, &Step::Quiet));
    }
}

#[test]
fn ranks_with_different_jobs_send_their_texts_to_rank_zero() {
    let same = LocalComm::run(3, |c| Ranks::exchange(c, "n", 0).agree_on_job("job A"));
    assert!(same.iter().all(Result::is_ok));
    let differ = LocalComm::run(3, |c| {
        let text = if c.rank() == 1 { "job B" } else { "job A" };
        Ranks::exchange(c, "n", 0).agree_on_job(text)
    });
    assert_eq!(
        differ[0],
        Err(Some(vec!["job A".into(), "job B".into(), "job A".into()]))
    );
    // Every rank stops, the others quietly.
    assert_eq!(differ[1], Err(None));
    assert_eq!(differ[2], Err(None));
}

#[test]
fn check_files_names_the_file_a_client_cannot_open() {
    let dir = tempfile::tempdir().unwrap();
    let job = prepare_for(dir.path(), 2);
    let mut msg = TargetMsg::of(&job);
    let mine = [phase("1")];
    assert!(check_files(&local_job("n", &mine, &msg, Some(1)), Some(1)).is_ok());
    msg.files[1].0 = dir.path().join("gone");
    let broken = local_job("n", &mine, &msg, Some(1));
    // Client 0's file is still there; client 1's is not.
    assert!(check_files(&broken, Some(0)).is_ok());
    let e = check_files(&broken, Some(1)).unwrap_err().to_string();
    assert!(e.starts_with("cannot open ") && e.contains("gone"), "{e}");
    // A rank that is not a client opens nothing.
    assert!(check_files(&broken, None).is_ok());
    job.target.cleanup();
}

fn prepare_for(dir: &std::path::Path, k: u32) -> ResolvedJob {
    let mut p = phase("1");
    p.numjobs *= k;
    storlab_bench::prepare(Some(dir), vec![p], SafetyOptions::default()).unwrap()
}

/// Three ranks run one write phase through [`ClusterSync`] exactly as the
/// MPI path does (rank 0 prepares and broadcasts the target, each rank its
/// local job, the phase through `run_synced`, the parts gathered and
/// merged at rank 0): the merged phase counts every client's bytes.
#[test]
fn three_thread_ranks_run_and_merge_one_phase() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let out = LocalComm::run(3, |c| {
        let w = Ranks::exchange(c, "node", 1 << 30);
        let clients = [0, 1, 2];
        let phases = vec![phase("1")];
        let prepared = w.root().then(|| prepare_for(&path, 3));
        let msg =
            TargetMsg::broadcast(&w.comm, prepared.as_ref().map(TargetMsg::of).as_ref()).unwrap();
        let opts = SyncOptions {
            clients_by: "rank".into(),
            ..SyncOptions::default()
        };
        let sync = ClusterSync::new(&w, opts, &clients, vec![1]);
        let me = sync.me();
        let job = local_job(w.node(), &phases, &msg, me);
        assert_eq!(job.target.files.len(), 3);
        check_files(&job, me).unwrap();
        let control = Control::new(1);
        let mut handed = 0;
        let outcome = sync.run(&job, &control, |_| handed += 1);
        w.comm.barrier();
        if let Some(j) = prepared {
            j.target.cleanup();
        }
        (me, outcome, handed)
    });
    for (r, (me, o, handed)) in out.iter().enumerate() {
        assert_eq!(*me, Some(r as u32));
        assert_eq!(o.local.stop_reason, None);
        assert_eq!(o.local.phases.len(), 1, "rank {r} ran its phase");
        assert_eq!(o.local.phases[0].total.bytes, 64 * 1024, "rank {r}");
        // Only rank 0 gets the merged phase, handed over as it is merged.
        assert_eq!(o.merged.len(), usize::from(r == 0), "rank {r}");
        assert_eq!(*handed, usize::from(r == 0), "rank {r}");
    }
    let o = &out[0].1;
    assert_eq!(o.stop_reason, None);
    let p = &o.merged[0];
    assert_eq!(p.total.bytes, 3 * 64 * 1024);
    let c = p.cluster.as_ref().unwrap();
    assert_eq!((c.clients, c.ranks, c.nodes), (3, 3, 1));
}
