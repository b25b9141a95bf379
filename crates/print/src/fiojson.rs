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
//! * a phase of job groups is written as fio writes a job file whose jobs
//!   run at once: one entry per group (per reporting group when
//!   `group_reporting` joins several, as fio's `new_group` decides), all
//!   with the phase's `groupid` (fio's number for jobs no `stonewall`
//!   separates, which `storlab import` reads back as one phase of groups),
//!   each with its own figures over its own window, its own percentiles
//!   (with `percentile_list`) and latency distribution. A group has no
//!   per-interval series of its own (the phase's series is of all groups),
//!   so its `bw_min`...`iops_stddev` are zero with zero samples;
//! * `disk_util`: fio's per-device counters over the run (`read_ios`,
//!   `write_ios`, merges, ticks in ms, `in_queue`, `util` in percent) from
//!   the device timeline storlab sampled (`bench --monitor`), the target's
//!   device first; empty when the run was not sampled;
//! * `fio version` is `storlab-VERSION`, and a `storlab` object says what
//!   made the document.

use serde_json::{Map, Value, json};
use storlab_types::{
    BenchReport, CpuStats, CustomPercentiles, DirStats, GroupResult, LatencyStats, MonitorTimeline,
    PhaseParams, PhaseResult, SeriesPoint,
};

/// The run as fio's JSON document.
pub fn render(r: &BenchReport) -> Value {
    let end_ms = unix_ms(&r.finished_at).or_else(|| unix_ms(&r.started_at));
    let mut jobs = Vec::new();
    for (i, ph) in r.phases.iter().enumerate() {
        match &ph.groups {
            Some(g) => {
                // fio joins the jobs of one reporting group under
                // `group_reporting`; storlab keeps those entries apart
                // only when they differ from the groups.
                let entries = if g.reporting.is_empty() {
                    &g.groups
                } else {
                    &g.reporting
                };
                for gr in entries {
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
        "disk_util": r.monitor.as_ref().map_or_else(Vec::new, |m| {
            disk_util(m, r.target.device.as_deref())
        }),
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
    let pct: Option<&CustomPercentiles> = g.percentiles.as_ref();
    job(
        Job {
            params: &params,
            groupid,
            elapsed_ns: g.elapsed_ns,
            cpu: g.cpu,
            read: dir(
                &g.read,
                g.elapsed_ns,
                none(),
                pct.map_or(&[][..], |c| &c.read),
            ),
            write: dir(
                &g.write,
                g.elapsed_ns,
                none(),
                pct.map_or(&[][..], |c| &c.write),
            ),
            errors: if ph.interrupted { 1 } else { 0 },
        },
        pct.map_or(&[][..], |c| c.distribution.as_slice()),
    )
}

/// fio's `disk_util` entries from a device timeline: each device's
/// counters over the whole timeline, integrated back from the sampled
/// rates (an interval's requests are its rate times its length; ticks are
/// its mean wait times its requests; `in_queue` its mean queue size times
/// its length; `util` the time-weighted mean). Flagged intervals (counters
/// reset or impossible) hold no rates and are left out. The target's
/// device (`/dev/NAME` or `NAME`) comes first, then the others in the
/// timeline's order.
fn disk_util(m: &MonitorTimeline, target_device: Option<&str>) -> Vec<Value> {
    let target = target_device.map(|d| d.trim_start_matches("/dev/"));
    let mut names: Vec<&str> = m.devices.iter().map(String::as_str).collect();
    for s in &m.samples {
        if !names.contains(&s.device.as_str()) {
            names.push(&s.device);
        }
    }
    if let Some(t) = target
        && let Some(at) = names.iter().position(|n| *n == t)
    {
        let first = names.remove(at);
        names.insert(0, first);
    }
    let mut out = Vec::new();
    for name in names {
        let mut last_t: Option<u64> = None;
        let mut c = DiskCounters::default();
        for s in m.samples.iter().filter(|s| s.device == name) {
            let dt_ns = match last_t {
                Some(t) => s.t_ns.saturating_sub(t),
                None => s.t_ns,
            };
            last_t = Some(s.t_ns);
            if s.flag.is_some() || dt_ns == 0 {
                continue;
            }
            let secs = dt_ns as f64 / 1e9;
            let (reads, writes) = (s.r_per_s * secs, s.w_per_s * secs);
            c.read_ios += reads;
            c.write_ios += writes;
            c.read_merges += s.rrqm_per_s * secs;
            c.write_merges += s.wrqm_per_s * secs;
            c.read_ticks += s.r_await_ms * reads;
            c.write_ticks += s.w_await_ms * writes;
            c.in_queue += s.aqu_sz * secs * 1e3;
            c.busy += s.util_pct * secs;
            c.secs += secs;
        }
        if c.secs == 0.0 {
            continue;
        }
        let n = |x: f64| x.round() as u64;
        out.push(json!({
            "name": name,
            "read_ios": n(c.read_ios),
            "write_ios": n(c.write_ios),
            "read_merges": n(c.read_merges),
            "write_merges": n(c.write_merges),
            "read_ticks": n(c.read_ticks),
            "write_ticks": n(c.write_ticks),
            "in_queue": n(c.in_queue),
            "util": (c.busy / c.secs).clamp(0.0, 100.0),
        }));
    }
    out
}

/// One device's counters summed over a timeline (see [`disk_util`]).
#[derive(Default)]
struct DiskCounters {
    read_ios: f64,
    write_ios: f64,
    read_merges: f64,
    write_merges: f64,
    read_ticks: f64,
    write_ticks: f64,
    in_queue: f64,
    /// Percent-seconds of utilisation.
    busy: f64,
    secs: f64,
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

    fn sample(t_ns: u64, device: &str, r: f64, w: f64) -> storlab_types::DeviceSample {
        storlab_types::DeviceSample {
            t_ns,
            device: device.into(),
            r_per_s: r,
            w_per_s: w,
            rrqm_per_s: 10.0,
            wrqm_per_s: 20.0,
            r_await_ms: 2.0,
            w_await_ms: 4.0,
            aqu_sz: 1.5,
            util_pct: 50.0,
            ..Default::default()
        }
    }

    /// fio's counters come back from the sampled rates: requests are rate
    /// times interval, ticks wait times requests, in_queue the mean queue
    /// times the time, util the time-weighted mean; a flagged interval
    /// counts nothing; the target's device comes first. (Before: always
    /// an empty list.)
    #[test]
    fn disk_util_integrates_the_device_timeline_target_first() {
        let mut flagged = sample(1_500_000_000, "vda", 1e6, 1e6);
        flagged.flag = Some(storlab_types::SampleFlag::Reset);
        let mut busy = sample(2_000_000_000, "vda", 100.0, 0.0);
        busy.util_pct = 100.0;
        let m = MonitorTimeline {
            interval_ns: 500_000_000,
            devices: vec!["loop0".into(), "vda".into()],
            samples: vec![
                sample(500_000_000, "vda", 100.0, 200.0),
                sample(500_000_000, "loop0", 2.0, 0.0),
                sample(1_000_000_000, "vda", 300.0, 0.0),
                flagged,
                busy,
            ],
            ..Default::default()
        };
        let d = disk_util(&m, Some("/dev/vda"));
        assert_eq!(d.len(), 2);
        let v = &d[0];
        assert_eq!(v["name"], "vda", "the target's device first");
        // 0.5 s at 100 r/s + 0.5 s at 300 r/s + 0.5 s at 100 r/s; the
        // flagged 0.5 s counts nothing.
        assert_eq!(v["read_ios"], 50 + 150 + 50);
        assert_eq!(v["write_ios"], 100);
        assert_eq!(v["read_merges"], 15, "10/s over 1.5 s");
        assert_eq!(v["write_merges"], 30);
        assert_eq!(v["read_ticks"], 500, "2 ms x 250 reads");
        assert_eq!(v["write_ticks"], 400, "4 ms x 100 writes");
        assert_eq!(v["in_queue"], 2250, "1.5 x 1,500 ms");
        let util = v["util"].as_f64().unwrap();
        assert!((util - 200.0 / 3.0).abs() < 1e-9, "{util}");
        assert_eq!(d[1]["name"], "loop0");
        assert_eq!(d[1]["read_ios"], 1);
        // Without a timeline: none.
        let r = BenchReport::new(Default::default(), Default::default());
        assert_eq!(render(&r)["disk_util"], json!([]));
    }

    /// A phase of groups: one entry per group, the phase's groupid, each
    /// with its own percentile_list values and latency distribution; a
    /// reporting group that joins groups replaces them.
    #[test]
    fn a_group_phase_writes_each_groups_own_percentiles() {
        let lat = |p: u64| LatencyStats {
            min: 1,
            max: 10 * p,
            mean: p as f64,
            p50: p,
            p90: 2 * p,
            p99: 3 * p,
            p99_9: 4 * p,
            p99_99: 5 * p,
            ..Default::default()
        };
        let dirs = |p: u64| DirStats {
            bytes: 4096,
            ops: 1,
            lat_ns: Some(lat(p)),
            ..Default::default()
        };
        let group = |name: &str, p: u64| GroupResult {
            name: name.into(),
            read: dirs(p),
            write: dirs(p),
            total: dirs(p),
            elapsed_ns: 1_000_000_000,
            percentiles: Some(CustomPercentiles {
                read: vec![(95.0, p + 1)],
                write: vec![(95.0, p + 2)],
                total: vec![(95.0, p + 3)],
                distribution: vec![("us:100".into(), 60.0), ("ms:2".into(), 40.0)],
                ..Default::default()
            }),
            ..Default::default()
        };
        let plain = || {
            let p = crate::fixture::params("p", storlab_types::RwMode::Read, 4096, 1, 1);
            crate::fixture::phase(p, dirs(1), DirStats::default())
        };
        let mut ph = plain();
        ph.groups = Some(storlab_types::PhaseGroups {
            groups: vec![group("r", 100), group("w", 200)],
            ..Default::default()
        });
        let mut r = BenchReport::new(Default::default(), Default::default());
        r.phases = vec![plain(), ph.clone()];
        let v = render(&r);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 3);
        for (j, name, p) in [(&jobs[1], "r", 100u64), (&jobs[2], "w", 200)] {
            assert_eq!(j["jobname"], name);
            assert_eq!(j["groupid"], 1, "the phase's groupid");
            let pct = &j["read"]["clat_ns"]["percentile"];
            assert_eq!(pct["95.000000"], p + 1, "{pct}");
            assert_eq!(pct["99.000000"], 3 * p);
            assert_eq!(j["write"]["lat_ns"]["percentile"]["95.000000"], p + 2);
            assert_eq!(j["latency_us"]["100"], 60.0);
            assert_eq!(j["latency_ms"]["2"], 40.0);
        }
        // group_reporting joined both: one entry, as fio writes it.
        if let Some(g) = ph.groups.as_mut() {
            g.reporting = vec![group("r+w", 300)];
        }
        r.phases = vec![ph];
        let v = render(&r);
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0]["jobname"], "r+w");
        assert_eq!(jobs[0]["read"]["clat_ns"]["percentile"]["95.000000"], 301);
    }
}
