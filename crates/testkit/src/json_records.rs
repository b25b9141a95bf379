//! Records built from JSON, so that fields added to the record types later
//! (with serde defaults) need no change here (configdiff's tests).

use serde_json::json;
use storlab_types::{BenchReport, PhaseParams, PhaseResult, RwMode};

pub fn params(name: &str, rw: RwMode, bs: u64, iodepth: u32) -> PhaseParams {
    serde_json::from_value(json!({
        "name": name, "rw": rw, "rwmixread": 70,
        "bs": [{"bs_bytes": bs, "weight": 100}],
        "size_bytes": 64u64 << 20, "numjobs": 1, "iodepth": iodepth,
        "engine": "psync", "cache": "direct", "drop_caches": false,
        "runtime_ns": null, "time_based": false, "ramp_ns": 0,
        "fsync_every": 0, "end_fsync": true, "layout": {"kind": "per_job"},
        "buffer_pattern": {"kind": "random"}, "random_with_replacement": false,
        "verify": false, "seed": 7, "sqpoll": false, "registered": false
    }))
    .expect("test params")
}

pub fn phase(params: PhaseParams) -> PhaseResult {
    let dir = json!({"bytes": 0, "ops": 0, "bw_bytes_per_s": 0.0, "iops": 0.0, "lat_ns": null});
    serde_json::from_value(json!({
        "params": params, "started_at": "2026-11-21T08:00:00Z", "elapsed_ns": 1_000_000_000u64,
        "fsync_in_window": true, "end_fsync_ns": 0, "latency_span": "submission to completion",
        "read": dir, "write": dir, "total": dir, "jobs": [],
        "cpu": {"user_ns": 0, "sys_ns": 0, "cpu_ns_per_io": 0.0, "utilization_pct": 0.0},
        "errors": {}, "cache": {"mode": "direct", "method": null, "resident_pages_before": null,
        "resident_pages_after": null, "total_pages": null, "verified": null, "may_be_cached": false},
        "verify": null, "interrupted": false, "warnings": []
    }))
    .expect("test phase")
}

pub fn report(
    host: &str,
    kernel: &str,
    target: &str,
    device: &str,
    tool: &str,
    version: &str,
) -> BenchReport {
    serde_json::from_value(json!({
        "schema_version": 1, "tool": {"name": tool, "version": version},
        "command_line": [], "started_at": "2026-11-21T08:00:00Z",
        "finished_at": "2026-11-21T08:01:00Z", "interrupted": false, "stop_reason": null,
        "host": {"hostname": host, "os": "linux", "kernel": kernel, "arch": "x86_64",
            "cpu_model": "cpu", "cpu_count": 2, "mem_total_bytes": 4u64 << 30,
            "page_size_bytes": 4096},
        "target": {"path": target, "kind": "directory", "files": [], "filesystem": "ext4",
            "mount_point": null, "device": device, "device_model": null, "rotational": null,
            "logical_block_size_bytes": null, "physical_block_size_bytes": null,
            "free_bytes_before": null, "created_by_storlab": true, "kept": false},
        "phases": [], "warnings": []
    }))
    .expect("test report")
}
