//! `mpirun -np 4 storlab io500` (issue 25, io500c; compiled with the
//! `mpi` feature only): the IOR reads read the rank IOR's `-C -Q` would
//! (on one node and on two nodes pretended with `STORLAB_MPI_NODE`, in
//! block and round-robin order), and find is walked by every rank in
//! pfind's shape, its total the sum of the ranks'. Every run is bounded
//! by `timeout`.

use crate::util::{mpirun, phase, stderr, storlab_bin};
use serde_json::Value;

/// Only the IOR phases run, at tiny sizes.
const IOR_ONLY: &str = "[ior-easy]\ntransferSize = 1m\nblockSize = 4m\n\n\
[ior-hard]\nsegmentCount = 40\n\n\
[mdtest-easy-write]\nrun = FALSE\n[mdtest-hard-write]\nrun = FALSE\n[find]\nrun = FALSE\n\
[mdtest-easy-stat]\nrun = FALSE\n[mdtest-hard-stat]\nrun = FALSE\n\
[mdtest-easy-delete]\nrun = FALSE\n[mdtest-hard-read]\nrun = FALSE\n\
[mdtest-hard-delete]\nrun = FALSE\n";

/// `mpirun -np LAYOUT.len() storlab io500 CONFIG` with rank r on node
/// `LAYOUT[r]` (a letter each); the stored record.
fn io500(test: &str, layout: &str, config: &str) -> Option<Value> {
    let d = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("tempdir");
    let cfg = d.path().join("config.ini");
    std::fs::write(&cfg, config).expect("config");
    let target = d.path().join("t");
    std::fs::create_dir(&target).expect("target");
    let (db, out) = (d.path().join("db.sqlite"), d.path().join("run.json"));
    let script = format!(
        "r=$OMPI_COMM_WORLD_RANK; node=node$(printf %s '{layout}' | cut -c$((r + 1))); \
         STORLAB_MPI_NODE=$node exec '{}' io500 '{}' '{}' --stonewall 1s -q --db '{}' --json-out '{}'",
        storlab_bin().display(),
        cfg.display(),
        target.display(),
        db.display(),
        out.display()
    );
    let np = u32::try_from(layout.len()).expect("ranks");
    let o = mpirun(test, np, 300, ["sh", "-c", &script])?;
    assert_eq!(o.status.code(), Some(0), "{layout}: {}", stderr(&o));
    Some(serde_json::from_slice(&std::fs::read(&out).expect("record")).expect("JSON"))
}

/// Each rank's first file label in phase `name`: (rank, label).
fn files_read(v: &Value, name: &str) -> Vec<(u64, String)> {
    let p = phase(v, name);
    let mut out: Vec<(u64, String)> = p["cluster"]["per_rank"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no per-rank figures: {p}"))
        .iter()
        .map(|r| {
            let files = r["files"].as_array().expect("files");
            (
                r["rank"].as_u64().expect("rank"),
                files[0].as_str().expect("label").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// IOR's `-C -Q 1` (ior-easy-read, ior-hard-read) and `-C -Q 2`
/// (ior-rnd4K-easy-read, a file per process): `offset = q × (block
/// mapping ? tasks on node 0 : 1) mod tasks`, rank r reading rank
/// (r + offset) mod 4's data; every read checks every word and reads what
/// the write wrote.
fn reads_follow_ior(test: &str, layout: &str, q1: u64, q2: u64) {
    let Some(v) = io500(test, layout, IOR_ONLY) else {
        return;
    };
    let n = layout.len() as u64;
    for (name, off, label) in [
        ("ior-easy-read", q1, "job file "),
        ("ior-hard-read", q1, "shared file, blocks of job "),
        ("ior-rnd4K-easy-read", q2, "job file "),
    ] {
        let want: Vec<(u64, String)> = (0..n)
            .map(|r| (r, format!("{label}{}", (r + off) % n)))
            .collect();
        assert_eq!(files_read(&v, name), want, "{layout} {name}");
        let p = phase(&v, name);
        assert_eq!(p["errors"], serde_json::json!({}), "{layout} {name}");
        let shift = &p["cluster"]["reorder_shift"];
        if off == 0 {
            assert!(shift.is_null(), "{layout} {name}: {shift}");
        } else {
            assert_eq!(shift.as_u64(), Some(off), "{layout} {name}");
        }
    }
    for (w, r) in [
        ("ior-easy-write", "ior-easy-read"),
        ("ior-hard-write", "ior-hard-read"),
    ] {
        let written = phase(&v, w)["total"]["bytes"].as_u64().expect("bytes");
        assert!(written > 0, "{layout} {w}");
        assert_eq!(
            phase(&v, r)["total"]["bytes"].as_u64(),
            Some(written),
            "{layout} {r}"
        );
        let checked = &phase(&v, r)["verify"];
        assert_eq!(
            checked["mismatches"].as_u64(),
            Some(0),
            "{layout} {r}: {checked}"
        );
    }
}

/// Two pretended nodes, ranks in blocks (a a b b): IOR's tasks per node 0
/// is 2, so `-Q 1` reads 2 ranks on (the other node) and `-Q 2` wraps
/// round to each rank's own data.
#[test]
fn two_nodes_in_blocks_read_the_other_nodes_data_as_ior_does() {
    reads_follow_ior("io500c2", "aabb", 2, 0);
}

/// Two pretended nodes, ranks round-robin (a b a b): rank 1 is on another
/// node, so IOR shifts by 1 per `-Q`.
#[test]
fn two_nodes_round_robin_shift_by_one_per_q_as_ior_does() {
    reads_follow_ior("io500c2", "abab", 1, 2);
}

/// One node: IOR's offset is `q × 4 mod 4 = 0`, every rank reads its own.
#[test]
fn one_node_reads_its_own_data_as_ior_does() {
    reads_follow_ior("io500c2", "aaaa", 0, 0);
}

/// find under MPI: every rank walks part of the data directory (pfind's
/// shape), and the files looked at, summed over the ranks, are every file
/// the phases before it made: ior-easy's 4, ior-hard's 1 and every file
/// mdtest-easy and mdtest-hard created.
#[test]
fn find_is_walked_by_every_rank_and_counts_every_file() {
    let config = "[ior-easy]\ntransferSize = 1m\nblockSize = 2m\n\n\
[ior-hard]\nsegmentCount = 20\n\n[mdtest-easy]\nn = 500\n\n[mdtest-hard]\nn = 2000\n";
    let Some(v) = io500("io500c2", "aaaa", config) else {
        return;
    };
    let find = phase(&v, "find");
    let ranks = find["cluster"]["per_rank"]
        .as_array()
        .unwrap_or_else(|| panic!("find has no per-rank figures: {find}"));
    let looked: Vec<u64> = ranks
        .iter()
        .map(|r| r["total"]["ops"].as_u64().expect("ops"))
        .collect();
    assert_eq!(looked.len(), 4, "{find}");
    assert!(
        looked.iter().all(|&n| n > 0),
        "every rank walks a part: {looked:?}"
    );
    let made = |name: &str| phase(&v, name)["total"]["ops"].as_u64().expect("ops");
    let files = 4 + 1 + made("mdtest-easy-write") + made("mdtest-hard-write");
    assert_eq!(find["total"]["ops"].as_u64(), Some(files), "{find}");
    assert_eq!(looked.iter().sum::<u64>(), files, "{looked:?}");
}
