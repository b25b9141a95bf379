//! Plausible runs built field by field (the store's and configdiff's tests).

use std::collections::BTreeMap;
use storlab_types::*;

pub fn lat(p50: u64, p99: u64) -> LatencyStats {
    LatencyStats {
        min: p50 / 2,
        mean: p50 as f64 * 1.1,
        stddev: p50 as f64 / 10.0,
        max: p99 * 3,
        p50,
        p90: (p50 + p99) / 2,
        p99,
        p99_9: p99 * 2,
        p99_99: p99 * 2 + 1,
    }
}

pub fn dir(bw: f64, bs: u64, elapsed_ns: u64, p99: u64) -> DirStats {
    let iops = bw / bs as f64;
    let secs = elapsed_ns as f64 / 1e9;
    DirStats {
        bytes: (bw * secs) as u64,
        ops: (iops * secs) as u64,
        bw_bytes_per_s: bw,
        iops,
        lat_ns: Some(lat(p99 / 4, p99)),
    }
}

/// A phase of `rw` with block size `bs` that moved `bw` bytes/s with the
/// given p99 latency.
pub fn phase(name: &str, rw: RwMode, bs: u64, bw: f64, p99: u64) -> PhaseResult {
    let elapsed_ns = 2_000_000_000;
    let d = dir(bw, bs, elapsed_ns, p99);
    let (read, write) = match (rw.reads(), rw.writes()) {
        (true, false) => (d, DirStats::default()),
        (false, true) => (DirStats::default(), d),
        _ => (
            dir(bw / 2.0, bs, elapsed_ns, p99),
            dir(bw / 2.0, bs, elapsed_ns, p99),
        ),
    };
    PhaseResult {
        device_stat: None,
        params: PhaseParams {
            name: name.into(),
            rw,
            rwmixread: 50,
            bs: vec![BsWeight {
                bs_bytes: bs,
                weight: 100,
            }],
            size_bytes: 64 << 20,
            numjobs: 1,
            iodepth: 4,
            engine: EngineKind::Psync,
            cache: CacheMode::Direct,
            end_fsync: rw.writes(),
            layout: FileLayout::PerJob,
            buffer_pattern: BufferPattern::Random,
            seed: 7,
            fallocate: true,
            iodepth_batch: 1,
            log_interval_ns: 1_000_000_000,
            loops: 1,
            ..Default::default()
        },
        started_at: "2026-11-21T08:00:00Z".into(),
        elapsed_ns,
        fsync_in_window: true,
        end_fsync_ns: 0,
        latency_span: "submission to completion".into(),
        read,
        write,
        total: d,
        jobs: vec![],
        cpu: CpuStats::default(),
        errors: BTreeMap::new(),
        cache: CacheReport {
            mode: "direct".into(),
            ..Default::default()
        },
        verify: None,
        depth: None,
        interrupted: false,
        warnings: vec![],
        cluster: None,
        series: None,
        groups: None,
        percentiles: None,
    }
}

pub fn report(started_at: &str, host: &str, target: &str, phases: Vec<PhaseResult>) -> BenchReport {
    BenchReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "storlab".into(),
            version: STORLAB_VERSION.into(),
        },
        command_line: vec!["storlab".into(), "bench".into()],
        started_at: started_at.into(),
        finished_at: started_at.replace("T08", "T09"),
        interrupted: false,
        stop_reason: None,
        host: HostInfo {
            hostname: host.into(),
            os: "linux".into(),
            kernel: "6.1".into(),
            arch: "x86_64".into(),
            cpu_model: "test cpu".into(),
            cpu_count: 2,
            mem_total_bytes: 4 << 30,
            page_size_bytes: 4096,
        },
        target: TargetInfo {
            path: target.into(),
            kind: "directory".into(),
            ..Default::default()
        },
        phases,
        warnings: vec![],
        monitor: None,
        repeat: None,
        replay: None,
    }
}

pub fn timeline() -> MonitorTimeline {
    MonitorTimeline {
        started_at: "2026-11-21T08:00:00Z".into(),
        interval_ns: 1_000_000_000,
        layer: "top".into(),
        devices: vec!["vda".into()],
        samples: vec![DeviceSample {
            t_ns: 1_000_000_000,
            device: "vda".into(),
            r_per_s: 100.0,
            r_bytes_per_s: 409600.0,
            util_pct: 12.5,
            ..Default::default()
        }],
        cpu: vec![CpuSample {
            t_ns: 1_000_000_000,
            user_pct: 3.0,
            idle_pct: 97.0,
            ..Default::default()
        }],
        totals: vec![],
    }
}

pub fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
