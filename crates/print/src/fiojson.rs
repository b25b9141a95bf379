//! `storlab bench --output-format fio-json`: a run in fio's JSON layout
//! (`fio --output-format=json`), so fio dashboards and fio-plot read
//! storlab results, and `storlab import` reads them back.
//!
//! * one entry of `jobs[]` per phase (per group for a phase of job
//!   groups), its clones reported as one, as fio's `group_reporting` does;
//!   `job options` say so and hold every option storlab ran with, in fio's
//!   names and forms;
//! * `read`/`write` carry fio 3.x's keys: `io_bytes`, `io_kbytes`,
//!   `bw_bytes`, `bw` (KiB/s), `iops`, `runtime` (ms), `total_ios`, the
//!   per-interval spread (`bw_min`...`iops_stddev`, from storlab's series),
//!   and the latencies;
//! * latency: storlab measures one latency per I/O, from the submitting
//!   system call to the reaped completion, which is fio's `lat`. It is in
//!   `lat_ns` (with its percentiles, as fio writes them under
//!   `lat_percentiles=1`) and, so dashboards that read fio's default place
//!   find it, in `clat_ns` too; `slat_ns` is zero. The percentiles are
//!   p50, p90, p99, p99.9 and p99.99 plus any `percentile_list`;
//! * `latency_ns`/`latency_us`/`latency_ms`: fio's latency distribution
//!   (percent of I/Os per bucket), from the phase's histogram;
//! * `fio version` is `storlab-VERSION`, and a `storlab` object says what
//!   made the document.

use serde_json::{Map, Value, json};
use storlab_types::{
    BenchReport, CpuStats, DirStats, GroupResult, LatencyStats, PhaseParams, PhaseResult,
    SeriesPoint,
};

/// The run as fio's JSON document.
pub fn render(r: &BenchReport) -> Value {
    let end_ms = unix_ms(&r.finished_at).or_else(|| unix_ms(&r.started_at));
    let mut jobs = Vec::new();
    for (i, ph) in r.phases.iter().enumerate() {
        match &ph.groups {
            Some(g) => {
                for gr in &g.groups {
                    jobs.push(group_job(ph, gr, i));
                }
            }
            None => jobs.push(phase_job(ph, i)),
        }
    }
    json!({
        "fio version": format!("storlab-{}", r.tool.version),
        "timestamp": end_ms.map_or(0, |ms| ms / 1000),
        "timestamp_ms": end_ms.unwrap_or(0),
        "time": r.finished_at,
        "storlab": {
            "version": r.tool.version,
            "note": "written by storlab bench --output-format fio-json: storlab's latency (submission to completion, fio's lat) is in lat_ns and clat_ns; slat_ns is zero",
            "target": r.target.path,
        },
        "global options": {},
        "jobs": jobs,
        "disk_util": [],
    })
}

fn phase_job(ph: &PhaseResult, groupid: usize) -> Value {
    let pct = ph.percentiles.as_ref();
    let points: &[SeriesPoint] = ph.series.as_ref().map_or(&[], |s| &s.points);
    let dist = pct.map_or(&[][..], |c| c.distribution.as_slice());
    job(
        Job {
            params: &ph.params,
            groupid,
            elapsed_ns: ph.elapsed_ns,
            cpu: ph.cpu,
            read: dir(
                &ph.read,
                ph.elapsed_ns,
                points.iter().map(|p| &p.read),
                pct.map_or(&[][..], |c| &c.read),
            ),
            write: dir(
                &ph.write,
                ph.elapsed_ns,
                points.iter().map(|p| &p.write),
                pct.map_or(&[][..], |c| &c.write),
            ),
            errors: ph.errors.values().sum(),
        },
        dist,
    )
}

fn group_job(ph: &PhaseResult, g: &GroupResult, groupid: usize) -> Value {
    let none = std::iter::empty::<&DirStats>;
    let mut params = g.params.clone();
    params.name = g.name.clone();
    job(
        Job {
            params: &params,
            groupid,
            elapsed_ns: g.elapsed_ns,
            cpu: g.cpu,
            read: dir(&g.read, g.elapsed_ns, none(), &[]),
            write: dir(&g.write, g.elapsed_ns, none(), &[]),
            errors: if ph.interrupted { 1 } else { 0 },
        },
        &[],
    )
}

struct Job<'a> {
    params: &'a PhaseParams,
    groupid: usize,
    elapsed_ns: u64,
    cpu: CpuStats,
    read: Value,
    write: Value,
    errors: u64,
}

fn job(j: Job<'_>, dist: &[(String, f64)]) -> Value {
    let ms = j.elapsed_ns / 1_000_000;
    let pct_of_window = |ns: u64| {
        if j.elapsed_ns == 0 {
            0.0
        } else {
            ns as f64 * 100.0 / j.elapsed_ns as f64
        }
    };
    let mut o = Map::new();
    o.insert("jobname".into(), json!(j.params.name));
    o.insert("groupid".into(), json!(j.groupid));
    o.insert("error".into(), json!(0));
    o.insert("total_err".into(), json!(j.errors));
    o.insert(
        "elapsed".into(),
        json!(j.elapsed_ns.div_ceil(1_000_000_000)),
    );
    o.insert("job options".into(), Value::Object(options(j.params)));
    o.insert("read".into(), j.read);
    o.insert("write".into(), j.write);
    o.insert(
        "trim".into(),
        dir(&DirStats::default(), 0, std::iter::empty(), &[]),
    );
    o.insert("sync".into(), json!({"total_ios": 0}));
    o.insert("job_runtime".into(), json!(ms));
    o.insert("usr_cpu".into(), json!(pct_of_window(j.cpu.user_ns)));
    o.insert("sys_cpu".into(), json!(pct_of_window(j.cpu.sys_ns)));
    o.insert("ctx".into(), json!(0));
    o.insert("majf".into(), json!(0));
    o.insert("minf".into(), json!(0));
    for unit in ["ns", "us", "ms"] {
        let prefix = format!("{unit}:");
        let m: Map<String, Value> = dist
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_string(), json!(v))))
            .collect();
        o.insert(format!("latency_{unit}"), Value::Object(m));
    }
    o.insert("latency_depth".into(), json!(j.params.iodepth));
    Value::Object(o)
}

/// Every option storlab ran with, in fio's names and forms.
fn options(p: &PhaseParams) -> Map<String, Value> {
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.into(), Value::String(v));
    };
    put("name", p.name.clone());
    put("rw", p.rw.to_string());
    if p.rw.reads() && p.rw.writes() {
        put("rwmixread", p.rwmixread.to_string());
    }
    // fio ignores bs under bssplit; tools that read job options (fio-plot)
    // expect it, so it names the (first) size.
    if let Some(first) = p.bs.first() {
        put("bs", fio_bytes(first.bs_bytes));
    }
    if p.bs.len() > 1 {
        let split: Vec<String> =
            p.bs.iter()
                .map(|b| format!("{}/{}", fio_bytes(b.bs_bytes), b.weight))
                .collect();
        put("bssplit", split.join(":"));
    }
    put("size", fio_bytes(p.size_bytes));
    put("numjobs", p.numjobs.to_string());
    put("iodepth", p.iodepth.to_string());
    put("ioengine", p.engine.as_str().to_string());
    let direct = p.cache == storlab_types::CacheMode::Direct;
    put("direct", u8::from(direct).to_string());
    if let Some(rt) = p.runtime_ns {
        put("runtime", format!("{}ms", rt / 1_000_000));
    }
    if p.time_based {
        put("time_based", "1".into());
    }
    if p.ramp_ns > 0 {
        put("ramp_time", format!("{}ms", p.ramp_ns / 1_000_000));
    }
    if p.rw.is_random() {
        put(
            "norandommap",
            u8::from(p.random_with_replacement).to_string(),
        );
    }
    put("randseed", p.seed.to_string());
    if p.fsync_every > 0 {
        put("fsync", p.fsync_every.to_string());
    }
    put("end_fsync", u8::from(p.end_fsync).to_string());
    match p.buffer_pattern {
        storlab_types::BufferPattern::Zero => put("zero_buffers", "1".into()),
        storlab_types::BufferPattern::Compressible { pct } => {
            put("buffer_compress_percentage", pct.to_string())
        }
        _ => {}
    }
    if p.rate_iops > 0 {
        put("rate_iops", p.rate_iops.to_string());
    }
    if p.thinktime_ns > 0 {
        put("thinktime", (p.thinktime_ns / 1000).to_string());
    }
    put("loops", p.loops.to_string());
    put("log_avg_msec", (p.log_interval_ns / 1_000_000).to_string());
    put("iodepth_batch_submit", p.iodepth_batch.to_string());
    put(
        "fallocate",
        if p.fallocate { "native" } else { "none" }.into(),
    );
    if p.verify {
        put("verify", "crc32c".into());
    }
    // Clones are reported as one entry, as fio does with group_reporting.
    put("group_reporting", "1".into());
    put("lat_percentiles", "1".into());
    if !p.report.percentile_list.is_empty() {
        let l: Vec<String> = p
            .report
            .percentile_list
            .iter()
            .map(|v| v.to_string())
            .collect();
        put("percentile_list", l.join(":"));
    }
    o
}

/// fio's way of writing a size: `4k`, `1m`, or bytes.
fn fio_bytes(b: u64) -> String {
    for (unit, shift) in [("g", 30), ("m", 20), ("k", 10)] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// One direction in fio 3.x's keys.
fn dir<'a>(
    d: &DirStats,
    elapsed_ns: u64,
    points: impl Iterator<Item = &'a DirStats>,
    custom: &[(f64, u64)],
) -> Value {
    let (bws, iopss): (Vec<f64>, Vec<f64>) =
        points.map(|p| (p.bw_bytes_per_s / 1024.0, p.iops)).unzip();
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(&bws);
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(&iopss);
    let lat = latency(d.lat_ns.as_ref(), d.ops, custom);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": d.bw_bytes_per_s.round() as u64,
        "bw": (d.bw_bytes_per_s / 1024.0).round() as u64,
        "iops": d.iops,
        "runtime": if d.ops > 0 { elapsed_ns / 1_000_000 } else { 0 },
        "total_ios": d.ops,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": lat,
        "lat_ns": lat,
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if d.ops > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bws.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iopss.len(),
    })
}

/// (min, max, mean, standard deviation) of per-interval figures.
fn spread(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt())
}

fn latency(l: Option<&LatencyStats>, n: u64, custom: &[(f64, u64)]) -> Value {
    let Some(l) = l else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let mut pcts: Vec<(f64, u64)> = vec![
        (50.0, l.p50),
        (90.0, l.p90),
        (99.0, l.p99),
        (99.9, l.p99_9),
        (99.99, l.p99_99),
    ];
    for &(p, v) in custom {
        if !pcts.iter().any(|(q, _)| (q - p).abs() < 1e-9) {
            pcts.push((p, v));
        }
    }
    pcts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let percentile: Map<String, Value> = pcts
        .into_iter()
        .map(|(p, v)| (format!("{p:.6}"), json!(v)))
        .collect();
    json!({
        "min": l.min,
        "max": l.max,
        "mean": l.mean,
        "stddev": l.stddev,
        "N": n,
        "percentile": percentile,
    })
}

/// Milliseconds since the epoch of an RFC 3339 UTC time
/// (`2026-11-27T08:51:37Z`, fractions allowed).
fn unix_ms(t: &str) -> Option<u64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut h = hms.split(':').map(|x| x.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let ms: i64 = format!("{:0<3}", &frac[..frac.len().min(3)]).parse().ok()?;
    let total = ((days * 24 + hh) * 60 + mm) * 60 + ss;
    u64::try_from(total * 1000 + ms).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_sizes_in_fios_forms() {
        assert_eq!(unix_ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(unix_ms("2026-11-27T08:51:37.601Z"), Some(1_795_769_497_601));
        assert_eq!(unix_ms("garbage"), None);
        assert_eq!(fio_bytes(4096), "4k");
        assert_eq!(fio_bytes(1 << 20), "1m");
        assert_eq!(fio_bytes(1000), "1000");
    }
}
