//! Realistic fixture runs (the report's unit tests, golden files and
//! property tests draw these).
//!
//! The figures are plausible for a hardware RAID array of spinning disks on a
//! 2020s server; they are internally consistent: bytes = rate × time,
//! ops = bytes / bs, mean latency from Little's law (jobs × iodepth / IOPS),
//! per-job figures spread a few percent around total / jobs.

use std::collections::BTreeMap;
use storlab_types::*;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;

/// What a fixture phase is.
#[derive(Clone)]
pub struct Spec {
    pub name: &'static str,
    pub rw: RwMode,
    pub rwmixread: u8,
    pub bs: u64,
    pub size: u64,
    pub numjobs: u32,
    pub iodepth: u32,
    pub cache: CacheMode,
    pub mb_s: f64,
    pub may_be_cached: bool,
    /// Salt for the per-job variation, so replicates differ.
    pub salt: u32,
}

impl Spec {
    pub fn new(name: &'static str, rw: RwMode, bs: u64, mb_s: f64) -> Spec {
        Spec {
            name,
            rw,
            rwmixread: 50,
            bs,
            size: 32 * GIB,
            numjobs: 4,
            iodepth: 16,
            cache: CacheMode::Direct,
            mb_s,
            may_be_cached: false,
            salt: 0,
        }
    }
    pub fn jobs(mut self, n: u32) -> Spec {
        self.numjobs = n;
        self
    }
    pub fn qd(mut self, n: u32) -> Spec {
        self.iodepth = n;
        self
    }
    pub fn size(mut self, s: u64) -> Spec {
        self.size = s;
        self
    }
    pub fn cache(mut self, c: CacheMode, may_be_cached: bool) -> Spec {
        self.cache = c;
        self.may_be_cached = may_be_cached;
        self
    }
    pub fn mix(mut self, read_pct: u8) -> Spec {
        self.rwmixread = read_pct;
        self
    }
    pub fn salt(mut self, s: u32) -> Spec {
        self.salt = s;
        self
    }
}

fn lat(mean_ns: f64) -> LatencyStats {
    LatencyStats {
        min: (mean_ns * 0.21) as u64,
        mean: (mean_ns * 10.0).round() / 10.0,
        stddev: (mean_ns * 0.8).round(),
        max: (mean_ns * 24.0) as u64,
        p50: (mean_ns * 0.88) as u64,
        p90: (mean_ns * 1.65) as u64,
        p99: (mean_ns * 3.3) as u64,
        p99_9: (mean_ns * 6.1) as u64,
        p99_99: (mean_ns * 11.0) as u64,
    }
}

fn dir(bw: f64, bs: u64, elapsed_s: f64, concurrency: f64) -> DirStats {
    if bw <= 0.0 {
        return DirStats::default();
    }
    let bytes = ((bw * elapsed_s) as u64 / bs) * bs;
    let ops = bytes / bs;
    let iops = ops as f64 / elapsed_s;
    DirStats {
        bytes,
        ops,
        bw_bytes_per_s: bytes as f64 / elapsed_s,
        iops,
        lat_ns: Some(lat(concurrency / iops * 1e9)),
    }
}

/// A phase with consistent figures.
pub fn phase(s: &Spec) -> PhaseResult {
    let elapsed_s = 30.0;
    let elapsed_ns = 30_000_000_000u64;
    let bw = s.mb_s * 1e6;
    let read_share = f64::from(s.rw.read_pct(s.rwmixread)) / 100.0;
    let conc = f64::from(s.numjobs * s.iodepth);
    let read = dir(bw * read_share, s.bs, elapsed_s, conc * read_share);
    let write = dir(
        bw * (1.0 - read_share),
        s.bs,
        elapsed_s,
        conc * (1.0 - read_share),
    );
    let total = DirStats {
        bytes: read.bytes + write.bytes,
        ops: read.ops + write.ops,
        bw_bytes_per_s: read.bw_bytes_per_s + write.bw_bytes_per_s,
        iops: read.iops + write.iops,
        lat_ns: Some(lat(conc / (read.iops + write.iops) * 1e9)),
    };
    let jobs = (0..s.numjobs)
        .map(|j| {
            // ±4 % around the even share, deterministic.
            let f = 1.0 + (((j * 7 + s.salt * 3) % 9) as f64 - 4.0) / 100.0;
            let n = f64::from(s.numjobs);
            let c = f64::from(s.iodepth);
            JobResult {
                job: j,
                elapsed_ns,
                read: dir(read.bw_bytes_per_s / n * f, s.bs, elapsed_s, c * read_share),
                write: dir(
                    write.bw_bytes_per_s / n * f,
                    s.bs,
                    elapsed_s,
                    c * (1.0 - read_share),
                ),
                errors: BTreeMap::new(),
                mean_depth: None,
            }
        })
        .collect();
    let buffered = s.cache != CacheMode::Direct;
    let pages = s.size * u64::from(s.numjobs) / 4096;
    // A warm working set beyond ~100 GiB of the 128 GiB host does not stay resident.
    let resident_max = 100 * GIB / 4096;
    let warm_ok = pages <= resident_max;
    let mut warnings = Vec::new();
    if s.cache == CacheMode::Warm && !warm_ok {
        warnings.push(format!(
            "warm: only {} % of the files' pages stayed resident",
            resident_max * 100 / pages
        ));
    }
    if s.may_be_cached && s.cache != CacheMode::Warm {
        warnings.push(
            "buffered out-of-cache test with a working set under 2× RAM: results may come from \
             the page cache"
                .to_string(),
        );
    }
    PhaseResult {
        device_stat: None,
        params: PhaseParams {
            name: s.name.to_string(),
            rw: s.rw,
            rwmixread: s.rwmixread,
            bs: vec![BsWeight {
                bs_bytes: s.bs,
                weight: 100,
            }],
            size_bytes: s.size,
            numjobs: s.numjobs,
            iodepth: s.iodepth,
            engine: EngineKind::IoUring,
            cache: s.cache,
            runtime_ns: Some(elapsed_ns),
            time_based: true,
            ramp_ns: 2_000_000_000,
            end_fsync: s.rw.writes(),
            layout: FileLayout::PerJob,
            buffer_pattern: BufferPattern::Random,
            seed: 0x5EED + u64::from(s.salt),
            fallocate: true,
            iodepth_batch: 1,
            log_interval_ns: 1_000_000_000,
            loops: 1,
            ..Default::default()
        },
        started_at: "2026-11-02T09:00:00Z".to_string(),
        elapsed_ns,
        fsync_in_window: s.rw.writes(),
        end_fsync_ns: if s.rw.writes() { 41_000_000 } else { 0 },
        latency_span: "submission to completion".to_string(),
        read,
        write,
        total,
        jobs,
        cpu: CpuStats {
            user_ns: 1_200_000_000,
            sys_ns: 3_900_000_000,
            cpu_ns_per_io: 5.1e9 / total.ops.max(1) as f64,
            utilization_pct: 17.0,
        },
        errors: BTreeMap::new(),
        cache: CacheReport {
            mode: s.cache.into(),
            method: match s.cache {
                CacheMode::Direct => None,
                CacheMode::Cold => Some("posix_fadvise(DONTNEED)".to_string()),
                CacheMode::Warm => Some("pre-read".to_string()),
                CacheMode::Buffered => Some("none".to_string()),
            },
            resident_pages_before: buffered.then_some(pages / 3),
            resident_pages_after: buffered.then_some(if s.cache == CacheMode::Warm {
                pages.min(resident_max)
            } else {
                0
            }),
            total_pages: buffered.then_some(pages),
            verified: buffered.then_some(s.cache != CacheMode::Warm || warm_ok),
            may_be_cached: s.may_be_cached,
        },
        verify: None,
        depth: None,
        interrupted: false,
        warnings,
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
    }
}

/// A stored run on the fixture host.
pub fn run(id: i64, tags: &[(&str, &str)], phases: Vec<PhaseResult>) -> StoredRun {
    let day = 1 + id as u32;
    StoredRun {
        id,
        kind: "bench".into(),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        note: None,
        report: BenchReport {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "storlab".to_string(),
                version: "0.1.0".to_string(),
            },
            command_line: vec!["storlab".into(), "bench".into(), "/mnt/array".into()],
            started_at: format!("2026-11-{day:02}T09:00:00Z"),
            finished_at: format!("2026-11-{day:02}T09:03:10Z"),
            interrupted: false,
            stop_reason: None,
            host: HostInfo {
                hostname: "stor01".to_string(),
                os: "Debian GNU/Linux 12 (bookworm)".to_string(),
                kernel: "6.1.0-27-amd64".to_string(),
                arch: "x86_64".to_string(),
                cpu_model: "AMD EPYC 7313 16-Core Processor".to_string(),
                cpu_count: 32,
                mem_total_bytes: 128 * GIB,
                page_size_bytes: 4096,
            },
            target: TargetInfo {
                path: "/mnt/array/storlab".to_string(),
                kind: "directory".into(),
                files: vec!["/mnt/array/storlab/job0.dat".to_string()],
                filesystem: Some("xfs".to_string()),
                mount_point: Some("/mnt/array".to_string()),
                device: Some("/dev/sdb".to_string()),
                device_model: Some("PERC H740P".to_string()),
                rotational: Some(true),
                logical_block_size_bytes: Some(512),
                physical_block_size_bytes: Some(4096),
                free_bytes_before: Some(40 * 1024 * GIB),
                created_by_storlab: true,
                kept: false,
            },
            phases,
            warnings: Vec::new(),
            monitor: None,
            repeat: None,
            replay: None,
        },
    }
}

/// SAS vs SCSI enclosures: two replicate runs of the SCSI baseline and one
/// SAS run, each writing then reading a file far larger than RAM and doing
/// 4 KiB random reads.
pub fn compare_runs() -> Vec<StoredRun> {
    let cfg = |salt: u32, w: f64, r: f64, rr: f64| {
        vec![
            phase(
                &Spec::new("seqwrite", RwMode::Write, MIB, w)
                    .qd(8)
                    .salt(salt),
            ),
            phase(&Spec::new("seqread", RwMode::Read, MIB, r).qd(8).salt(salt)),
            phase(
                &Spec::new("randread", RwMode::RandRead, 4 * KIB, rr)
                    .qd(32)
                    .salt(salt),
            ),
        ]
    };
    let mut runs = vec![
        run(1, &[("enclosure", "scsi")], cfg(0, 412.3, 498.7, 88.0)),
        run(2, &[("enclosure", "scsi")], cfg(1, 405.9, 507.2, 86.9)),
        run(3, &[("enclosure", "sas")], cfg(2, 874.6, 1061.8, 88.5)),
    ];
    runs[2].note = Some("new SAS enclosure, same 12 disks, R6/12".to_string());
    runs
}

/// Every kind of run the report draws: the comparison above, a block-size
/// sweep, a jobs sweep, in-cache vs out-of-cache reads, a mixed run with a
/// device timeline, and a file-size sweep across the host's RAM.
pub fn all_runs() -> Vec<StoredRun> {
    let mut runs = compare_runs();
    for (i, (bs, label, mb)) in [
        (4 * KIB, "4k", 310.0),
        (64 * KIB, "64k", 980.0),
        (MIB, "1m", 1420.0),
        (4 * MIB, "4m", 1455.0),
    ]
    .into_iter()
    .enumerate()
    {
        runs.push(run(
            4 + i as i64,
            &[("sweep", "bs"), ("bs", label)],
            vec![phase(&Spec::new("seqread", RwMode::Read, bs, mb))],
        ));
    }
    for (i, (jobs, mb)) in [(1u32, 380.0), (4, 860.0), (16, 905.0)]
        .into_iter()
        .enumerate()
    {
        let label = jobs.to_string();
        runs.push(run(
            8 + i as i64,
            &[("sweep", "numjobs"), ("numjobs", label.as_str())],
            vec![phase(
                &Spec::new("seqwrite", RwMode::Write, MIB, mb)
                    .jobs(jobs)
                    .qd(8),
            )],
        ));
    }
    runs.push(run(
        11,
        &[("test", "cache")],
        vec![
            phase(
                &Spec::new("read-small", RwMode::Read, MIB, 6480.0)
                    .jobs(1)
                    .size(2 * GIB)
                    .cache(CacheMode::Warm, true),
            ),
            phase(
                &Spec::new("read-large", RwMode::Read, MIB, 1390.0)
                    .jobs(1)
                    .size(256 * GIB)
                    .cache(CacheMode::Cold, false),
            ),
        ],
    ));
    let mut mixed = run(
        12,
        &[("workload", "oltp")],
        vec![phase(
            &Spec::new("oltp", RwMode::RandRw, 8 * KIB, 142.0)
                .mix(70)
                .jobs(8)
                .qd(16),
        )],
    );
    mixed.report.monitor = Some(timeline());
    // The phase's measured window: 2 s into the timeline, 50 s long.
    mixed.report.phases[0].started_at = "2026-11-13T09:00:02Z".to_string();
    runs.push(mixed);
    let sizes = [
        ("read-8g", 8 * GIB, 6420.0),
        ("read-32g", 32 * GIB, 6390.0),
        ("read-96g", 96 * GIB, 6105.0),
        ("read-192g", 192 * GIB, 1720.0),
        ("read-384g", 384 * GIB, 1415.0),
    ];
    runs.push(run(
        13,
        &[("sweep", "size")],
        sizes
            .iter()
            .map(|(name, size, mb)| {
                phase(
                    &Spec::new(name, RwMode::Read, MIB, *mb)
                        .jobs(1)
                        .size(*size)
                        .cache(CacheMode::Warm, false),
                )
            })
            .collect(),
    ));
    runs
}

/// 60 one-second samples of two disks under a 70/30 random load, ramping
/// up over the first 5 s.
pub fn timeline() -> MonitorTimeline {
    let devices = ["sdb", "sdc"];
    let mut samples = Vec::new();
    let mut cpu = Vec::new();
    for t in 1..=60u64 {
        let ramp = (t as f64 / 5.0).min(1.0);
        let wobble = ((t as f64) * 0.7).sin() * 0.06;
        for (d, dev) in devices.iter().enumerate() {
            let share = if d == 0 { 0.52 } else { 0.48 };
            let rb = 99.4e6 * share * ramp * (1.0 + wobble);
            let wb = 42.6e6 * share * ramp * (1.0 - wobble);
            samples.push(DeviceSample {
                t_ns: t * 1_000_000_000,
                device: dev.to_string(),
                r_per_s: rb / 8192.0,
                w_per_s: wb / 8192.0,
                r_bytes_per_s: rb,
                w_bytes_per_s: wb,
                r_await_ms: 9.8 * (1.0 + wobble),
                w_await_ms: 4.1,
                areq_sz_bytes: 8192.0,
                aqu_sz: 60.0 * ramp,
                util_pct: ((if d == 0 { 97.0 } else { 91.0 }) * ramp * (1.0 + wobble / 3.0))
                    .min(100.0),
                ..DeviceSample::default()
            });
        }
        cpu.push(CpuSample {
            t_ns: t * 1_000_000_000,
            user_pct: 3.0,
            system_pct: 9.0 * ramp,
            iowait_pct: 21.0 * ramp,
            idle_pct: 100.0 - 3.0 - 30.0 * ramp,
            ..CpuSample::default()
        });
    }
    // The leaf layer's once-counted total per interval.
    let totals = samples
        .chunks(devices.len())
        .map(|per_t| DeviceSample {
            t_ns: per_t[0].t_ns,
            device: "leaf".to_string(),
            r_per_s: per_t.iter().map(|s| s.r_per_s).sum(),
            w_per_s: per_t.iter().map(|s| s.w_per_s).sum(),
            r_bytes_per_s: per_t.iter().map(|s| s.r_bytes_per_s).sum(),
            w_bytes_per_s: per_t.iter().map(|s| s.w_bytes_per_s).sum(),
            ..DeviceSample::default()
        })
        .collect();
    MonitorTimeline {
        totals,
        started_at: "2026-11-13T09:00:00Z".to_string(),
        interval_ns: 1_000_000_000,
        layer: "leaf".into(),
        devices: devices.iter().map(|d| d.to_string()).collect(),
        samples,
        cpu,
    }
}
