//! The ranks' agreement on one job, from the command line's side: the
//! flags and the planned phases fill [`storlab_bench::cluster::agree`]'s
//! canonical job, whose digest the ranks compare before any file exists.
#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use super::{BenchCommand, PlannedJob};
use storlab_bench::cluster::agree::{JobCanon, joined_tags, target_as_meant};
use storlab_types::STORLAB_VERSION;

/// The resolved job of this rank as canonical JSON (same job, same text).
pub(crate) fn canonical_job(
    cmd: &BenchCommand,
    planned: &PlannedJob,
) -> serde_json::Result<String> {
    JobCanon {
        version: STORLAB_VERSION,
        target: target_as_meant(planned.target.as_deref()),
        phases: &planned.phases,
        clients: cmd.cluster.clients.as_ref().map(|c| c.0.as_slice()),
        clients_by: cmd.cluster.clients_by.unwrap_or_default().as_str(),
        stonewall_ns: cmd
            .cluster
            .stonewall
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        stonewall_wear_out: cmd.cluster.stonewall_wear_out,
        reorder_tasks: cmd.cluster.reorder_tasks,
        repeat: cmd.repeat,
        keep: cmd.run.keep,
        allow_destroy: cmd.run.allow_destroy,
        monitor: cmd.run.monitor,
        tag: joined_tags(&cmd.run.record.tags),
        note: cmd.run.record.note.as_deref(),
        design: cmd.run.record.design.as_deref(),
    }
    .to_text()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use storlab_bench::cluster::agree::{describe_mismatch, digest};

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        bench: BenchCommand,
    }

    /// The canonical job of `storlab bench ARGS` as a rank would plan it.
    fn job_of(args: &[&str]) -> String {
        let w = Wrap::try_parse_from(std::iter::once("bench").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let (planned, _) = w.bench.plan().unwrap();
        canonical_job(&w.bench, &planned).unwrap()
    }

    const BASE: &[&str] = &[
        "/tmp/agree-target",
        "--rw",
        "write",
        "--size",
        "4M",
        "--engine",
        "psync",
        "--cache",
        "cold",
    ];

    fn with(extra: &[&str]) -> String {
        let mut a = BASE.to_vec();
        if !extra.contains(&"--bs") {
            a.extend_from_slice(&["--bs", "4k"]);
        }
        a.extend_from_slice(extra);
        job_of(&a)
    }

    #[test]
    fn the_same_options_give_the_same_text_and_digest() {
        let (a, b) = (with(&[]), with(&[]));
        assert_eq!(a, b);
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(describe_mismatch(&[a.clone(), b, a.clone()]), None);
        // Options only rank 0 acts on do not count.
        let c = with(&["--no-save", "-q", "--json"]);
        assert_eq!(digest(&a), digest(&c));
        // Nor the spelling of the same default.
        assert_eq!(digest(&a), digest(&with(&["--clients-by", "rank"])));
    }

    #[test]
    fn the_digest_is_stable_and_tells_one_byte_apart() {
        let a = with(&[]);
        let b = a.replacen("\"numjobs\":1", "\"numjobs\":2", 1);
        assert_ne!(a, b);
        assert_ne!(digest(&a), digest(&b));
    }

    #[test]
    fn each_option_that_makes_the_run_is_named() {
        let base = with(&[]);
        for (extra, named) in [
            (&["--numjobs", "2"][..], "numjobs=2"),
            (&["--bs", "64k"], "bs=64k"),
            (&["--seed", "7"], "seed=7"),
            (&["--runtime", "2s"], "runtime=2s"),
            (&["--tag", "ctl=b"], "tag.ctl=b"),
            (&["--note", "x"], "note=x"),
            (&["--keep"], "keep=true"),
            (&["--shared-file"], "layout=shared_regions"),
        ] {
            let other = with(extra);
            assert_ne!(digest(&base), digest(&other), "{extra:?}");
            let m = describe_mismatch(&[base.clone(), other]).unwrap();
            assert!(
                m.contains(&format!("rank 1 has {named} where rank 0 has")),
                "{extra:?}: {m}"
            );
            assert!(
                m.contains("start every rank with the same command line"),
                "{m}"
            );
        }
    }

    #[test]
    fn the_message_names_every_differing_rank_and_both_values() {
        let base = with(&["--numjobs", "1"]);
        let two = with(&["--numjobs", "2", "--bs", "64k"]);
        let tag = with(&["--numjobs", "1", "--tag", "a=1"]);
        let m = describe_mismatch(&[base.clone(), two.clone(), base.clone(), two, tag]).unwrap();
        assert!(
            m.contains("ranks 1, 3 have bs=64k, numjobs=2 where rank 0 has bs=4k, numjobs=1"),
            "{m}"
        );
        assert!(
            m.contains("rank 4 has tag.a=1 where rank 0 has tag.a=(none)"),
            "{m}"
        );
        assert!(!m.contains("rank 2"), "{m}");
    }

    #[test]
    fn cluster_options_and_the_phase_count_are_compared() {
        let base = with(&[]);
        let clients = with(&["--clients", "1,2"]);
        let m = describe_mismatch(&[base.clone(), clients]).unwrap();
        assert!(
            m.contains("rank 1 has clients=1,2 where rank 0 has clients=(none)"),
            "{m}"
        );
        // The quick check (four phases) against one phase from flags.
        let quick = job_of(&["/tmp/agree-target", "--engine", "psync", "--cache", "cold"]);
        let m = describe_mismatch(&[base, quick]).unwrap();
        assert!(
            m.contains("phases=4 (seq-write, seq-read, rand-read, rand-write)"),
            "{m}"
        );
        assert!(m.contains("phases=1 ("), "{m}");
    }

    #[test]
    fn a_relative_target_counts_by_the_path_it_means() {
        let a = job_of(&[
            "/tmp/agree-a",
            "--rw",
            "read",
            "--engine",
            "psync",
            "--cache",
            "cold",
        ]);
        let b = job_of(&[
            "/tmp/agree-b",
            "--rw",
            "read",
            "--engine",
            "psync",
            "--cache",
            "cold",
        ]);
        let m = describe_mismatch(&[a, b]).unwrap();
        assert!(
            m.contains("target=/tmp/agree-b where rank 0 has target=/tmp/agree-a"),
            "{m}"
        );
        assert!(m.contains("give an absolute path"), "{m}");
    }

    #[test]
    fn nodes_that_chose_different_machine_defaults_are_told_to_choose() {
        let uring = |t: String| t.replace("\"engine\":\"psync\"", "\"engine\":\"io_uring\"");
        let base = with(&[]);
        let m = describe_mismatch(&[base.clone(), uring(base.clone())]).unwrap();
        assert!(
            m.contains("rank 1 has engine=io_uring where rank 0 has engine=psync"),
            "{m}"
        );
        assert!(m.contains("give them explicitly"), "{m}");
        // With other differences the engine is not the point.
        let m = describe_mismatch(&[base, uring(with(&["--numjobs", "3"]))]).unwrap();
        assert!(m.contains("engine=io_uring"), "{m}");
        assert!(!m.contains("give them explicitly"), "{m}");
    }

    #[test]
    fn many_ranks_give_a_bounded_message() {
        let mut texts = vec![with(&[])];
        for s in 1..=40 {
            texts.push(with(&["--seed", &s.to_string()]));
        }
        let m = describe_mismatch(&texts).unwrap();
        assert!(m.contains("and 36 more ranks differ"), "{m}");
        assert!(m.len() < 2000, "{}", m.len());
    }
}
