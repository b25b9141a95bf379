//! Fixed records for the golden tests of the tables: every figure is
//! chosen, nothing depends on the clock or the machine.

use storlab_types::{
    BenchReport, BsWeight, CacheReport, ClusterPhase, CpuStats, DepthReport, DirStats, DoneRate,
    HostInfo, JobResult, LatencyStats, MdParams, PhaseParams, PhaseResult, RankResult, RwMode,
    Spread, TargetInfo, ToolInfo,
};

pub fn lat(p50_us: u64) -> LatencyStats {
    LatencyStats {
        min: p50_us * 500,
        mean: p50_us as f64 * 1100.0,
        stddev: p50_us as f64 * 200.0,
        max: p50_us * 9000,
        p50: p50_us * 1000,
        p90: p50_us * 1500,
        p99: p50_us * 3000,
        p99_9: p50_us * 5000,
        p99_99: p50_us * 7000,
    }
}

pub fn dir(bw: f64, iops: f64, secs: f64, p50_us: Option<u64>) -> DirStats {
    DirStats {
        bytes: (bw * secs) as u64,
        ops: (iops * secs) as u64,
        bw_bytes_per_s: bw,
        iops,
        lat_ns: p50_us.map(lat),
    }
}

pub fn params(name: &str, rw: RwMode, bs: u64, numjobs: u32, iodepth: u32) -> PhaseParams {
    PhaseParams {
        name: name.into(),
        rw,
        rwmixread: 70,
        bs: vec![BsWeight {
            bs_bytes: bs,
            weight: 100,
        }],
        size_bytes: 1 << 30,
        numjobs,
        iodepth,
        ..PhaseParams::default()
    }
}

pub fn phase(params: PhaseParams, read: DirStats, write: DirStats) -> PhaseResult {
    let total = DirStats {
        bytes: read.bytes + write.bytes,
        ops: read.ops + write.ops,
        bw_bytes_per_s: read.bw_bytes_per_s + write.bw_bytes_per_s,
        iops: read.iops + write.iops,
        lat_ns: read.lat_ns.or(write.lat_ns),
    };
    PhaseResult {
        device_stat: None,
        params,
        started_at: "2026-11-21T08:40:11Z".into(),
        elapsed_ns: 10_000_000_000,
        fsync_in_window: false,
        end_fsync_ns: 0,
        latency_span: "submit to reap".into(),
        read,
        write,
        total,
        jobs: Vec::new(),
        cpu: CpuStats {
            user_ns: 1_000_000,
            sys_ns: 2_000_000,
            cpu_ns_per_io: 4_250.0,
            utilization_pct: 12.0,
        },
        errors: Default::default(),
        cache: CacheReport {
            mode: "direct".into(),
            ..CacheReport::default()
        },
        verify: None,
        depth: None,
        interrupted: false,
        warnings: Vec::new(),
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
    }
}

pub fn report(phases: Vec<PhaseResult>) -> BenchReport {
    BenchReport {
        schema_version: 1,
        tool: ToolInfo {
            name: "storlab".into(),
            version: "0.1.0".into(),
        },
        command_line: vec!["storlab".into(), "bench".into(), "/mnt/scratch".into()],
        started_at: "2026-11-21T08:40:11.123Z".into(),
        finished_at: "2026-11-21T08:41:02.456Z".into(),
        interrupted: false,
        stop_reason: None,
        host: HostInfo {
            hostname: "node7".into(),
            os: "linux".into(),
            kernel: "6.12.0".into(),
            arch: "x86_64".into(),
            cpu_model: "Xeon".into(),
            cpu_count: 16,
            mem_total_bytes: 64 << 30,
            page_size_bytes: 4096,
        },
        target: TargetInfo {
            path: "/mnt/scratch".into(),
            kind: "directory".into(),
            filesystem: Some("xfs".into()),
            device: Some("/dev/sdb".into()),
            device_model: Some("ACME SSD".into()),
            created_by_storlab: true,
            ..TargetInfo::default()
        },
        phases,
        warnings: Vec::new(),
        monitor: None,
        repeat: None,
        replay: None,
    }
}

/// A bench run: a sequential write of one job and a mixed random phase of
/// two jobs with a depth report, a cold cache that was verified and an
/// error count.
pub fn bench() -> BenchReport {
    let w = phase(
        params("write", RwMode::Write, 1 << 20, 1, 4),
        DirStats::default(),
        dir(512e6, 488.0, 10.0, Some(2_000)),
    );
    let mut m = phase(
        params("mixed\u{1b}[2J", RwMode::RandRw, 4096, 2, 16),
        dir(70e6, 17_090.0, 10.0, Some(300)),
        dir(30e6, 7_324.0, 10.0, Some(90)),
    );
    m.jobs = (0..2)
        .map(|j| JobResult {
            job: j,
            elapsed_ns: 10_000_000_000,
            read: dir(35e6, 8_545.0, 10.0, Some(300)),
            write: dir(15e6, 3_662.0, 10.0, Some(90)),
            ..JobResult::default()
        })
        .collect();
    m.cache = CacheReport {
        mode: "cold".into(),
        method: Some("posix_fadvise(DONTNEED)".into()),
        resident_pages_after: Some(0),
        total_pages: Some(524_288),
        verified: Some(true),
        ..CacheReport::default()
    };
    m.depth = Some(DepthReport {
        requested: 32,
        achieved: 31.4,
        littles_law_depth: 31.2,
        stamp_error_ns: None,
        stamp_error_mean_ns: None,
        latency_target: None,
    });
    m.errors.insert("EIO".into(), 2);
    m.interrupted = true;
    report(vec![w, m])
}

/// A two-rank, two-node cluster run of one write phase.
pub fn cluster() -> BenchReport {
    let mut p = phase(
        params("write", RwMode::Write, 1 << 20, 1, 1),
        DirStats::default(),
        dir(800e6, 763.0, 10.0, Some(5_000)),
    );
    let rank = |rank: u32, node: &str, bw: f64| RankResult {
        rank,
        node: node.into(),
        first_job: rank,
        end_ns: 10_000_000_000,
        total: dir(bw, bw / 1048576.0, 10.0, None),
        ..RankResult::default()
    };
    p.cluster = Some(ClusterPhase {
        clients: 2,
        ranks: 3,
        nodes: 2,
        clients_by: "rank".into(),
        layout: "n-n".into(),
        transfer_bytes: 1 << 20,
        block_bytes: 1 << 30,
        segments: 4,
        reorder_shift: None,
        stonewall_ns: Some(5_000_000_000),
        stonewall_wear_out: true,
        window_ns: 10_000_000_000,
        clock_error_bound_ns: 1_250_000,
        first_done: DoneRate {
            elapsed_ns: 9_000_000_000,
            bytes: 7_650_000_000,
            bw_bytes_per_s: 850e6,
        },
        last_done: DoneRate {
            elapsed_ns: 10_000_000_000,
            bytes: 8_000_000_000,
            bw_bytes_per_s: 800e6,
        },
        per_rank: vec![rank(0, "n1", 450e6), rank(1, "n2", 350e6)],
        per_node: Vec::new(),
        rank_bw_bytes_per_s: Spread {
            min: 350e6,
            mean: 400e6,
            max: 450e6,
        },
        node_bw_bytes_per_s: Spread {
            min: 350e6,
            mean: 400e6,
            max: 450e6,
        },
        slowest_rank: Some(1),
    });
    report(vec![p])
}

/// An md run of two ranks: a stonewalled create and a stat.
pub fn md() -> BenchReport {
    let md = MdParams {
        op: "create".into(),
        item: "file".into(),
        items_per_rank: 1000,
        items_by_rank: vec![900, 1000],
        depth: 2,
        branch: 3,
        tree_dirs: 13,
        unique_dir: true,
        write_bytes: 4096,
        read_bytes: 0,
        ranks: 2,
        rank_shift: 1,
        stonewall_ns: Some(1_000_000_000),
        stonewalled: true,
    };
    let item = |name: &str, op: &str, rates: [f64; 2]| {
        let mut p = phase(
            PhaseParams {
                name: name.into(),
                md: Some(MdParams {
                    op: op.into(),
                    stonewalled: op == "create",
                    ..md.clone()
                }),
                ..PhaseParams::default()
            },
            DirStats::default(),
            dir(0.0, rates[0] + rates[1], 1.0, Some(40)),
        );
        p.jobs = rates
            .iter()
            .enumerate()
            .map(|(j, r)| JobResult {
                job: j as u32,
                write: dir(0.0, *r, 1.0, None),
                ..JobResult::default()
            })
            .collect();
        p
    };
    report(vec![
        item("file-create", "create", [900.0, 1000.0]),
        item("file-stat", "stat", [5000.0, 6000.0]),
    ])
}

/// `got` must equal the file `golden/NAME` of this crate, byte for byte:
/// the workspace's one golden helper (`storlab_testkit::golden`), so
/// `STORLAB_UPDATE_GOLDEN=1` rewrites these files as it does every other
/// golden file (review the diff before committing).
pub fn golden(name: &str, got: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name);
    storlab_testkit::golden::assert_golden(&path, got);
}
