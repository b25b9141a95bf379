use super::*;
use storlab_types::{FileLayout, PhaseParams, RwMode};

fn cfg(text: &str) -> Config {
    Config::parse(text).expect("config")
}

fn opts(short: bool) -> Options {
    Options {
        ranks: 2,
        short,
        stonewall_s: None,
        keep: false,
    }
}

#[test]
fn short_mode_fills_in_small_sizes_but_the_config_wins() {
    let j = Job::resolve(&cfg(""), &opts(true)).expect("job");
    assert_eq!(j.stonewall_s, short::STONEWALL_S);
    assert_eq!(j.easy_block, short::IOR_EASY_BLOCK);
    assert_eq!(j.hard_segments, short::IOR_HARD_SEGMENTS);
    assert!(j.file_per_proc, "io500's default filePerProc = TRUE");
    let j = Job::resolve(
        &cfg("[ior-hard]\nsegmentCount = 7\n[debug]\nstonewall-time = 9\n"),
        &opts(true),
    )
    .expect("job");
    assert_eq!((j.hard_segments, j.stonewall_s), (7, 9));
    // Without --short, io500's own defaults.
    let j = Job::resolve(&cfg(""), &opts(false)).expect("job");
    assert_eq!(j.stonewall_s, 300);
    assert_eq!(j.hard_segments, 10_000_000);
    assert_eq!(j.md_easy_files, 1_000_000);
}

#[test]
fn a_stonewall_other_than_the_rules_makes_every_run_invalid() {
    let c = cfg("[mdtest-hard]\nfiles-per-dir = 10\n");
    let j = Job::resolve(&c, &opts(true)).expect("job");
    let r = j.run_reasons(&c);
    assert_eq!(
        r[0],
        Reason::StonewallTime {
            configured: 5,
            required: 300
        }
    );
    assert!(r.contains(&Reason::FilesPerDir));
    let j = Job::resolve(&cfg(""), &opts(false)).expect("job");
    assert!(j.run_reasons(&cfg("")).is_empty(), "a 300 s run is valid");
}

#[test]
fn bad_jobs_are_refused_before_anything_runs() {
    let e = Job::resolve(
        &cfg("[ior-easy]\ntransferSize = 3m\nblockSize = 10m\n"),
        &opts(false),
    )
    .expect_err("not a multiple");
    assert!(e.to_string().contains("blockSize"), "{e}");
    let e = Job::resolve(
        &cfg(""),
        &Options {
            ranks: 0,
            ..opts(true)
        },
    )
    .expect_err("no ranks");
    assert!(e.to_string().contains("--np"), "{e}");
}

#[test]
fn ior_hard_is_strided_47008_byte_transfers_in_one_shared_file() {
    let j = ior::IorJob {
        easy: false,
        ranks: 3,
        transfer: 47_008,
        block: 47_008,
        segments: 10,
        file_per_proc: false,
        stonewall_s: 5,
        rnd4k: false,
    };
    let ps = j.phases().expect("phases");
    let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ior-hard-write", "ior-hard-read"]);
    for p in &ps {
        assert_eq!(p.bs[0].bs_bytes, 47_008);
        assert_eq!(
            p.size_bytes,
            47_008 * 10,
            "one transfer per segment per rank"
        );
        assert_eq!(
            p.layout,
            FileLayout::SharedInterleaved {
                stride_bytes: 47_008
            }
        );
        assert_eq!(p.numjobs, 3);
        assert!(!p.fallocate);
    }
    assert_eq!(ps[0].rw, RwMode::Write);
    assert!(ps[0].end_fsync, "IOR's -e");
    assert_ior_data_and_read_check(&ps);
}

/// io500's IOR writes one fixed buffer (`--dataPacketType=timestamp`, no
/// word zero) and its reads check every word inside the window (`-R`);
/// the 4 KiB random read does not check. IOR's POSIX API has one transfer
/// in flight per rank (a synchronous `read` or `write`) and checks a read
/// before it issues the next: storlab's phases are the psync engine at
/// depth 1 (the check runs in the worker after each read completes). IOR
/// leaves the page cache alone: no eviction and no pre-read (storlab's
/// `warm` pre-read the whole file before a read: on a device twice the
/// reads io500 makes).
fn assert_ior_data_and_read_check(ps: &[PhaseParams]) {
    for p in ps {
        assert_eq!(p.cache, storlab_types::CacheMode::Buffered, "{}", p.name);
        assert_eq!(p.engine, storlab_types::EngineKind::Psync, "{}", p.name);
        assert_eq!(p.iodepth, 1, "{}: one transfer in flight", p.name);
        assert_eq!(p.buffer_pattern, storlab_types::BufferPattern::Ior);
        let checks = p.name.ends_with("-read") && p.name != "ior-rnd4K-easy-read";
        assert_eq!(p.check_reads, checks, "{}", p.name);
        assert!(!p.verify, "{}: no self-checking blocks", p.name);
    }
}

#[test]
fn ior_easy_is_a_file_per_rank_and_ends_with_the_random_read() {
    let j = ior::IorJob {
        easy: true,
        ranks: 2,
        transfer: 2 << 20,
        block: 64 << 20,
        segments: 1,
        file_per_proc: true,
        stonewall_s: 5,
        rnd4k: true,
    };
    let ps = j.phases().expect("phases");
    let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["ior-easy-write", "ior-easy-read", "ior-rnd4K-easy-read"]
    );
    assert_eq!(ps[0].layout, FileLayout::PerJob);
    assert_eq!(ps[0].size_bytes, 64 << 20);
    assert_eq!(ps[2].bs[0].bs_bytes, 4096);
    assert!(ps[2].time_based);
    assert_ior_data_and_read_check(&ps);
}

#[test]
fn mdtest_shapes_and_shifts_are_mdtests() {
    let e = md::spec(md::Which::Easy, 10, Duration::from_secs(5));
    assert!(e.unique_dir && e.write_bytes == 0);
    let h = md::spec(md::Which::Hard, 10, Duration::from_secs(5));
    assert!(!h.unique_dir);
    assert_eq!((h.write_bytes, h.read_bytes), (3901, 3901));
    assert_eq!(
        [Op::Create, Op::Stat, Op::Read, Op::Delete].map(md::shift_of),
        [0, 1, 2, 3]
    );
}

#[test]
fn the_phases_run_are_io500s_standard_run_in_order() {
    let names = phase_names();
    assert_eq!(names.first(), Some(&"ior-easy-write"));
    assert_eq!(names.get(2), Some(&"timestamp"), "after mdtest-easy-write");
    assert_eq!(names.last(), Some(&"ior-rnd4K-easy-read"));
    assert_eq!(names.len(), 14);
}

/// A tiny job of one rank (`cfg`'s sizes).
fn tiny_job(c: &Config) -> Job {
    Job::resolve(
        c,
        &Options {
            ranks: 1,
            short: true,
            stonewall_s: Some(1),
            keep: false,
        },
    )
    .expect("job")
}

const TINY: &str = "[ior-easy]\ntransferSize = 1m\nblockSize = 4m\n[ior-hard]\nsegmentCount = 16\n\
[mdtest-easy]\nn = 50\n[mdtest-hard]\nn = 30\n";

#[test]
fn a_phase_that_fails_keeps_the_phases_before_it_and_says_why() {
    let d = tempfile::tempdir().expect("tempdir");
    // mdtest-hard's directory cannot be made: a file is in its place.
    std::fs::create_dir_all(d.path().join("datafiles")).expect("mkdir");
    std::fs::write(d.path().join("datafiles/mdtest-hard"), b"x").expect("file");
    let c = cfg(TINY);
    let job = tiny_job(&c);
    let mut seen = Vec::new();
    let out = run(&job, &c, d.path(), &Stop::new(1), |p| {
        seen.push(p.params.name.clone())
    });
    assert_eq!(
        seen,
        ["ior-easy-write", "mdtest-easy-write", "ior-hard-write"],
        "the phases before the failure ran and were handed over"
    );
    assert_eq!(out.phases.len(), 3);
    let why = out.failed.clone().expect("failed");
    assert!(
        why.starts_with("mdtest-hard-write: ") && why.contains("mdtest-hard"),
        "{why}"
    );
    // The record is finished as a failed, INVALID run with the reason.
    let header = storlab_types::BenchReport::new(Default::default(), Default::default());
    let rec = crate::summary::report(header, out, &job, &c);
    assert!(rec.interrupted);
    assert_eq!(rec.stop_reason.as_deref(), Some(why.as_str()));
    assert!(
        rec.warnings
            .iter()
            .any(|w| w == &format!("io500: INVALID run: failed: {why}")),
        "{:?}",
        rec.warnings
    );
    assert_eq!(rec.phases.len(), 3);
}

#[test]
fn the_free_space_check_counts_every_phase_that_writes_and_names_the_fix() {
    let c = cfg(TINY);
    let job = Job {
        ranks: 2,
        ..tiny_job(&c)
    };
    // ior-easy 4 MiB, ior-hard 16 × 47,008 and mdtest-hard 30 × 3,901 per rank.
    let need = 2 * ((4 << 20) + 16 * 47_008 + 30 * 3901);
    assert_eq!(job.max_bytes(), need);
    let t = Path::new("/scratch");
    assert!(job.check_space(t, Some(need)).is_ok());
    assert!(job.check_space(t, None).is_ok(), "unknown: not refused");
    let e = job.check_space(t, Some(need - 1)).expect_err("too little");
    let msg = e.to_string();
    assert!(msg.contains("not enough free space on /scratch"), "{msg}");
    assert!(msg.contains("[ior-easy] blockSize"), "{msg}");
}

#[test]
fn a_workloads_run_false_skips_its_phases_and_their_space_as_io500_does() {
    let c = cfg(&format!(
        "{TINY}[ior-hard]\nrun = FALSE\n[mdtest-hard-write]\nrun = FALSE\n"
    ));
    assert!(!c.runs("ior-hard-write") && !c.runs("ior-hard-read"));
    assert!(!c.runs("mdtest-hard-write") && c.runs("mdtest-hard-stat"));
    assert!(c.runs("ior-easy-write") && c.runs("ior-rnd4K-easy-read") && c.runs("find"));
    let c2 = cfg("[ior-easy]\nrun = FALSE\n");
    assert!(!c2.runs("ior-rnd4K-easy-read"), "it reads ior-easy's files");
    let job = tiny_job(&c);
    assert_eq!(job.writes, [true, false, false]);
    assert_eq!(job.max_bytes(), 4 << 20, "only ior-easy's block is written");
}

/// A config that turns ior-easy-read off: ior-rnd4K-easy-read is still
/// the 4 KiB random read (before, the IOR job ran its phases in turn, so
/// the sequential read ran under the random read's name).
#[test]
fn a_phase_turned_off_is_skipped_not_run_under_the_next_ones_name() {
    let d = tempfile::tempdir().expect("tempdir");
    let c = cfg(&format!("{TINY}[ior-easy-read]\nrun = FALSE\n"));
    assert!(!c.runs("ior-easy-read") && c.runs("ior-rnd4K-easy-read"));
    let job = Job {
        stonewall_s: 1,
        ..tiny_job(&c)
    };
    let out = run(&job, &c, d.path(), &Stop::new(1), |_| {});
    assert_eq!(out.failed, None);
    let names: Vec<&str> = out.phases.iter().map(|p| p.params.name.as_str()).collect();
    assert!(!names.contains(&"ior-easy-read"), "{names:?}");
    let rnd = out
        .phases
        .iter()
        .find(|p| p.params.name == "ior-rnd4K-easy-read")
        .expect("the random read ran");
    assert_eq!(rnd.params.rw, RwMode::RandRead);
    assert_eq!(rnd.params.bs.first().map(|b| b.bs_bytes), Some(4096));
}

/// Ranks whose first timed phase stops, and whose agreed reason is
/// `reason` (what another rank was told, say).
struct StopsAtOnce {
    reason: Option<String>,
    ran: Vec<String>,
}

impl Ranks for StopsAtOnce {
    fn stop_requested(&self, here: bool) -> bool {
        here
    }
    fn stop_reason(&self, _here: Option<String>) -> Option<String> {
        self.reason.clone()
    }
    fn phase(&mut self, name: &str) -> Result<Ran, RunError> {
        self.ran.push(name.to_string());
        Ok(Ran {
            result: None,
            stopped: name != "timestamp",
        })
    }
}

/// A phase stopped because another rank was signalled: the run's reason is
/// that rank's, not "stopped before it finished"; with no reason on any
/// rank, the phase is named.
#[test]
fn a_stop_on_another_rank_is_the_runs_reason() {
    let c = cfg(TINY);
    let job = tiny_job(&c);
    for (reason, want) in [
        (Some("SIGINT (on rank 3)"), "SIGINT (on rank 3)"),
        (None, "ior-easy-write stopped before it finished"),
    ] {
        let mut ranks = StopsAtOnce {
            reason: reason.map(str::to_string),
            ran: Vec::new(),
        };
        let mut out = Outcome::default();
        drive(&mut ranks, &job, &c, &Stop::new(1), &mut out, |_| {}).expect("drive");
        assert_eq!(ranks.ran, ["ior-easy-write"], "stops at once");
        assert_eq!(out.stop_reason.as_deref(), Some(want));
        assert!(out.phases.is_empty());
    }
}
