//! The component model both solvers share: which components a request
//! crosses, how clients and stripes map onto movers and arrays, what fraction
//! of each client's data each cache holds, and the result types.
//!
//! Components, in path order (the names the reports use):
//! `client page cache`, `client` (its own rate limit), `client NIC`,
//! `switch uplink`, `mover client ports`, `mover`, `mover storage ports`,
//! `array ports`, `array controller`, `array back end`, and `DLM lock`.
//!
//! Caches hold what fits: a client's page cache the first `page_cache` bytes
//! of its file, a mover's cache an equal share for each of its clients of
//! what passed the clients' caches, an array's cache likewise (reads with
//! `warm = true`; a cold read misses everywhere). An array's write-back cache
//! absorbs writes at front-end speed until it is full; from then on writes
//! go at the back end's speed.

use crate::scenario::{CachePolicy, FsKind, Pattern, Resolved, Sharing};
use serde::Serialize;

/// Component names in path order.
pub const COMPONENTS: [&str; 13] = [
    CLIENT_CACHE,
    CLIENT,
    HOST,
    CLIENT_NIC,
    UPLINK,
    MOVER_IN,
    MOVER,
    MOVER_OUT,
    ARRAY_PORTS,
    ARRAY_CTRL,
    BACKEND,
    LOCK,
    STREAM,
];
pub const CLIENT_CACHE: &str = "client page cache";
pub const CLIENT: &str = "client";
pub const CLIENT_NIC: &str = "client NIC";
/// A calibrated device's host centre: each stream's submission and
/// completion work (docs/MODEL.md §8).
pub const HOST: &str = "client host";
pub const UPLINK: &str = "switch uplink";
pub const MOVER_IN: &str = "mover client ports";
pub const MOVER: &str = "mover";
pub const MOVER_OUT: &str = "mover storage ports";
pub const ARRAY_PORTS: &str = "array ports";
pub const ARRAY_CTRL: &str = "array controller";
pub const BACKEND: &str = "array back end";
pub const LOCK: &str = "DLM lock";
/// A client's stream bound by its requests' round trip (Little's law).
pub const STREAM: &str = "stream round trip";

/// One component's utilisation (the busiest instance), percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Utilisation {
    pub component: String,
    pub pct: f64,
}

/// What one solver says about one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// `analytic` or `des`.
    pub solver: String,
    pub clients: u32,
    /// Bytes all clients moved / time from the first request to the last
    /// completion (analytic: the bound on that time).
    pub aggregate_bytes_per_s: f64,
    pub per_client_bytes_per_s: f64,
    /// The component with the highest utilisation.
    pub binding: String,
    pub utilisation: Vec<Utilisation>,
    /// Mean request latency (issue to completion), ns.
    pub mean_latency_ns: f64,
    /// Analytic: mean value analysis throughput (requests as customers of a
    /// closed queueing network), bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mva_bytes_per_s: Option<f64>,
    /// DES: latency percentiles over all requests, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_latency_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_latency_ns: Option<u64>,
    /// DES: the highest of the clients' own p99 latencies, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_client_p99_ns: Option<u64>,
    /// DES: the lowest of the clients' own p99 latencies, ns (beside the
    /// worst, how unfairly the design treats its clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_client_p99_ns: Option<u64>,
    /// DES: the clients' own p50 latencies, lowest and highest, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_p50_range_ns: Option<(u64, u64)>,
    /// DES: every client's own latency percentiles and when it finished,
    /// in client order (the JSON has them; the table shows the spread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_client: Option<Vec<ClientLatency>>,
    /// DES: the whole latency distribution over all requests (min, mean,
    /// stddev, max, p50 … p99.99), ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<storlab_types::LatencyStats>,
    /// DES: simulated time, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulated_ns: Option<u64>,
    /// DES: events processed (request issues, lock grants, completions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// True when a part of the array has no published limit for this
    /// workload (`unknowns`): the throughput is then an upper bound.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bound: bool,
    /// What is not modelled, one line each (plan's `path::unknowns`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknowns: Vec<String>,
    /// Beside a bound on the controller's write path: its class's typical
    /// range and sources, or that none is sourced (as in `plan layout`'s
    /// JSON; docs/MODEL.md §3.13).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typical: Option<storlab_plan::path::Typical>,
}

/// One simulated client's own figures (DES).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClientLatency {
    pub client: u32,
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// Simulated time at which its last request completed, ns.
    pub done_ns: u64,
}

impl Point {
    /// Utilisation of `component`, percent (0 when it is not in the design).
    pub fn util(&self, component: &str) -> f64 {
        self.utilisation
            .iter()
            .find(|u| u.component == component)
            .map_or(0.0, |u| u.pct)
    }
}

/// Pick the binding component: the highest utilisation; among those within
/// half a percentage point of it, the earliest in path order (the DES's
/// figures carry edge effects of that size).
pub fn binding_of(utils: &[Utilisation]) -> String {
    let top = utils.iter().map(|u| u.pct).fold(0.0, f64::max);
    utils
        .iter()
        .find(|u| u.pct >= top - 0.5)
        .map_or_else(|| CLIENT_NIC.to_string(), |b| b.component.clone())
}

/// Derived figures of a resolved scenario.
#[derive(Debug, Clone)]
pub struct Layout {
    pub n: u64,
    /// Bytes each client moves.
    pub per_client_bytes: f64,
    pub total_bytes: f64,
    /// A client's own path rate (its NIC and its own limit), bytes/s.
    pub client_rate: f64,
    /// Read hit fractions: client cache, mover cache (of what passed the
    /// client), array cache (of what reached the array).
    pub h_client: f64,
    pub h_mover: f64,
    pub h_array: f64,
    /// Share of all mover traffic that the busiest mover carries.
    pub mover_share: f64,
    /// Share of all array traffic that the busiest array carries (its
    /// cache's working set, and its utilisation).
    pub array_share: f64,
    /// How many arrays work at once (the time bound, and MVA's instances).
    pub arrays_busy: f64,
    /// Writes to one shared file through the lock manager.
    pub locked: bool,
}

impl Layout {
    pub fn of(r: &Resolved) -> Layout {
        // Every process of every client is a stream of its own.
        let n = u64::from(r.streams());
        let w = &r.workload;
        let f = w.file_size_bytes as f64;
        let (per_client, total) = match w.sharing {
            Sharing::NN => (f, f * n as f64),
            Sharing::N1 => (f / n as f64, f),
        };
        let client_rate = r.per_stream(
            r.client_rate_bytes_per_s
                .map_or(r.client_nic_bytes_per_s, |c| {
                    c.min(r.client_nic_bytes_per_s)
                }),
        );
        // A mix's reads are taken cold (its writes keep changing the data).
        let reads_warm = w.pattern.read_fraction() >= 1.0 && w.warm;
        // The fraction of a working set `ws` a cache of `c` bytes serves.
        let random = w.pattern.is_random();
        let hit = |policy: CachePolicy, c: f64, ws: f64| -> f64 {
            match policy {
                CachePolicy::Lru if !random => {
                    if c >= ws {
                        1.0
                    } else {
                        0.0
                    }
                }
                _ => (c / ws).min(1.0),
            }
        };
        let h_client = if reads_warm {
            hit(
                r.page_cache_policy,
                r.per_stream(r.page_cache_bytes as f64),
                per_client,
            )
        } else {
            0.0
        };
        let mover_share = match &r.movers {
            Some(m) if m.own_targets => owned_share(r, m.count),
            Some(m) => n.div_ceil(u64::from(m.count)) as f64 / n as f64,
            None => 1.0,
        };
        let past_client = total * (1.0 - h_client);
        let h_mover = match &r.movers {
            Some(m) if reads_warm && past_client > 0.0 => hit(
                r.mover_cache_policy,
                m.cache_bytes as f64,
                past_client * mover_share,
            ),
            _ => 0.0,
        };
        let a = u64::from(r.array.count);
        let s = u64::from(r.stripe_count.max(1));
        // Clients rotate over the arrays their data spans (see array_of):
        // over the run each of them carries an equal share of the bytes.
        let spanned = match (r.fs, w.sharing) {
            (FsKind::Parallel, Sharing::N1) => s,
            _ => a,
        };
        let array_share = 1.0 / spanned.max(1) as f64;
        // How many arrays work at once, from the same placement the DES
        // uses (array_of): a sequential stream's `iodepth` requests in flight
        // cover that many arrays; random requests land anywhere in the
        // client's data, so every array it covers takes its share (how many
        // are busy at once is then the queueing, MVA's and the DES's draws).
        // With fewer clients than arrays only these work at a time; averaged
        // over time the rotation balances them (static imbalance does not
        // persist: a busier array slows its clients, which then fall out of
        // step with the others).
        let per_client_busy = client_arrays_busy(r, per_client);
        let arrays_busy = (n as f64 * per_client_busy).clamp(1.0, spanned.max(1) as f64);
        let at_arrays = past_client * (1.0 - h_mover);
        let h_array = if reads_warm && at_arrays > 0.0 {
            hit(
                r.array_cache_policy,
                r.array.cache_bytes as f64,
                at_arrays * array_share,
            )
        } else {
            0.0
        };
        Layout {
            n,
            per_client_bytes: per_client,
            total_bytes: total,
            client_rate,
            h_client,
            h_mover,
            h_array,
            mover_share,
            array_share,
            arrays_busy,
            locked: r.fs == FsKind::SharedBlock && w.sharing == Sharing::N1 && w.pattern.is_write(),
        }
    }
}

/// Which array request `k` of client `c` goes to: the request's stripe
/// index within the client's file or region, rotated by the client number
/// (each client starts on a different array, as allocators spread files and
/// as unsynchronised clients do), over every array (shared-block volume;
/// parallel N-N files within their `stripe_count` arrays) or over the shared
/// file's `stripe_count` arrays (parallel N-1).
pub fn array_of(r: &Resolved, c: u64, k: u64) -> u32 {
    let a = u64::from(r.array.count);
    let s = u64::from(r.stripe_count.max(1));
    let idx = k * r.workload.bs_bytes / r.stripe_bytes.max(1);
    let x = match (r.fs, r.workload.sharing) {
        (FsKind::SharedBlock, _) => (c + idx) % a,
        (FsKind::Parallel, Sharing::NN) => (c + idx % s) % a,
        (FsKind::Parallel, Sharing::N1) => (c + idx) % s,
    };
    x as u32
}

/// Requests of one client looked at to find the arrays it keeps busy: the
/// placement repeats long before this in every layout storlab models.
const PLACEMENT_SAMPLE: u64 = 4096;

/// How many arrays one client keeps busy at once, by [`array_of`]:
/// * its data's placement: if the busiest array holds a share `m` of the
///   client's requests, the client moves at most `1/m` arrays' worth (a
///   request size that does not divide the stripe puts more on some);
/// * for a stream, also the fewest arrays its `iodepth` consecutive
///   requests in flight cover wherever the window starts (a stream stalls
///   there: requests queued behind one array hold the window until it
///   serves them, so the window moves on only at that array's pace).
///
/// A client with less data than a stripe per array covers fewer.
fn client_arrays_busy(r: &Resolved, per_client_bytes: f64) -> f64 {
    let w = &r.workload;
    let requests = ((per_client_bytes / w.bs_bytes.max(1) as f64).ceil() as u64).max(1);
    let sample = requests.min(PLACEMENT_SAMPLE);
    let mut per_array = std::collections::BTreeMap::<u32, u64>::new();
    for k in 0..sample {
        *per_array.entry(array_of(r, 0, k)).or_default() += 1;
    }
    let busiest = per_array.values().copied().max().unwrap_or(1);
    let placement = sample as f64 / busiest as f64;
    if w.pattern.is_random() {
        return placement;
    }
    let distinct = |ks: std::ops::Range<u64>| {
        ks.map(|k| array_of(r, 0, k))
            .collect::<std::collections::BTreeSet<u32>>()
            .len()
    };
    let window = u64::from(w.iodepth.max(1)).min(requests);
    let starts = (requests - window + 1).min(PLACEMENT_SAMPLE);
    let stalled = (0..starts)
        .map(|k| distinct(k..k + window))
        .min()
        .unwrap_or(1) as f64;
    stalled.min(placement)
}

/// Which mover serves client `c`'s request to `array`: the client's own
/// mover (`c mod movers`), or with `own_targets` the array's
/// (`array mod movers`: a Lustre OSS serves only its own OSTs).
pub fn mover_of(r: &Resolved, c: u64, array: u32) -> Option<u32> {
    r.movers.as_ref().map(|m| {
        if m.own_targets {
            array % m.count.max(1)
        } else {
            (c % u64::from(m.count)) as u32
        }
    })
}

/// With movers that own their targets, the share of all traffic the
/// busiest mover carries: the arrays the data spans (a parallel N-1 file's
/// `stripe_count`, otherwise every array) carry equal shares, and mover m
/// those of its arrays (a mod movers = m).
fn owned_share(r: &Resolved, movers: u32) -> f64 {
    let spanned = match (r.fs, r.workload.sharing) {
        (FsKind::Parallel, Sharing::N1) => r.stripe_count.max(1),
        _ => r.array.count.max(1),
    };
    let m = movers.max(1);
    let busiest = (0..m)
        .map(|k| (0..spanned).filter(|a| a % m == k).count())
        .max()
        .unwrap_or(1);
    busiest as f64 / f64::from(spanned)
}

/// The rate one request alone moves at over the links its bytes cross one
/// after the other — the client's own path, the uplink, the movers' ports
/// and the array's ports — bytes/s. Plan counts the host link; a
/// controller's or mover's rate is a throughput over many requests, not
/// one request's transfer.
pub fn lone_link_rate(r: &Resolved, l: &Layout) -> f64 {
    let caps = [
        r.uplink_bytes_per_s,
        r.movers.as_ref().map(|m| m.client_side_bytes_per_s),
        r.movers.as_ref().map(|m| m.storage_side_bytes_per_s),
        Some(r.array.ports_bytes_per_s),
    ];
    caps.into_iter().flatten().fold(l.client_rate, f64::min)
}

/// One client's stream limit, bytes/s (docs/MODEL.md §3.12): a sequential
/// stream keeps `iodepth` requests in flight, each taking its round trip —
/// the network `latency`, the array controller's command time and the
/// drives' time (plan's model), and the transfer at the rate a lone
/// request gets over the links (client, uplink, movers' ports, array
/// ports) — so by Little's law it moves at most
/// `iodepth × bs / round trip`. None for random work (MVA counts its
/// queueing) and for lock-managed shared-file writes (one at a time).
pub fn stream_rate(r: &Resolved, l: &Layout) -> Option<f64> {
    let w = &r.workload;
    if w.pattern.is_random() || l.locked || r.array.queued {
        return None;
    }
    let lone = lone_link_rate(r, l);
    let bs = w.bs_bytes as f64;
    // Only a round trip with more than the transfer in it can bind below
    // the path's own parts.
    if r.latency_s + r.array.cmd_latency_s + r.array.drive_latency_s <= 0.0 {
        return None;
    }
    let rt = storlab_plan::path::RoundTrip {
        host_s: r.latency_s,
        controller_s: r.array.cmd_latency_s,
        drive_s: r.array.drive_latency_s,
        transfer_s: bs / lone,
    };
    Some(storlab_plan::path::stream_limit(
        f64::from(w.iodepth),
        bs,
        &rt,
    ))
}

/// Whether the pattern is a request-level one (random) for which MVA, not
/// the fluid bound, gives the throughput.
pub fn request_level(p: Pattern) -> bool {
    p.is_random()
}

/// Whether MVA gives the throughput of `r`: random work, or an array whose
/// drives are a calibrated queue (their knee holds for streams too).
pub fn queued(r: &Resolved) -> bool {
    request_level(r.workload.pattern) || r.array.queued
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scenario, SimCatalog, analytic, des};

    fn resolve(text: &str) -> Resolved {
        Scenario::parse("t.toml", text)
            .unwrap()
            .resolve(&SimCatalog::builtin())
            .unwrap()
    }

    /// A drive with the concurrency knee `plan calibrate` writes: random
    /// reads `L = 80 µs + b / 1 GB/s`, `S = 20 µs + b / 2 GB/s` (knee near
    /// 4 at 4 KiB), sequential reads `L = 60 µs + b / 1.2 GB/s`, `S = 10 µs
    /// + b / 2.5 GB/s`.
    const QUEUED: &str = r#"[[drive]]
name = "qdisk"
kind = "ssd"
capacity = "800GB"
read_iops = 50000
write_iops = 20000
seq_read = "2.5GB/s"
seq_write = "1GB/s"
mtbf = "2000000h"
ber = 1e-17
sector_size = 512
rebuild_rate = "200MB/s"
source = "test"

[drive.queue.rand_read]
latency_s = 80e-6
latency_bytes_per_s = 1e9
demand_s = 20e-6
demand_bytes_per_s = 2e9
points = 12
min_in_flight = 1
max_in_flight = 32
rms_log_error = 0.05

[drive.queue.seq_read]
latency_s = 60e-6
latency_bytes_per_s = 1.2e9
demand_s = 10e-6
demand_bytes_per_s = 2.5e9
points = 12
min_in_flight = 1
max_in_flight = 32
rms_log_error = 0.05
"#;

    /// Issue 24: sim's array queues a calibrated drive by its knee, the
    /// same MVA plan's model runs (`path::queued_rate` over
    /// `path::device_queue`): one client at QD 1, 4 and 16 (random 4 KiB
    /// and 64 KiB, sequential 1 MiB), on one drive and on R0/4, within 1 %
    /// of plan in the analytic solver and 5 % in the DES. Before, sim used
    /// only the saturated rate and its own Little's-law bound.
    #[test]
    fn a_calibrated_drive_is_queued_by_its_knee_in_both_solvers() {
        let mut cat = SimCatalog::builtin();
        cat.extend("q.toml", QUEUED).unwrap();
        let pc = {
            let mut c = storlab_plan::catalog::Catalog::builtin();
            c.extend("q.toml", QUEUED).unwrap();
            c
        };
        for (raid, pattern, bs, qd) in [
            ("R0/1", "randread", "4KiB", 1u32),
            ("R0/1", "randread", "4KiB", 4),
            ("R0/1", "randread", "64KiB", 16),
            ("R0/1", "read", "1MiB", 1),
            ("R0/1", "read", "1MiB", 4),
            ("R0/4", "randread", "4KiB", 16),
            ("R0/4", "read", "1MiB", 4),
        ] {
            let text = format!(
                "[clients]\ncount = 1\nnic = \"1000GB/s\"\n[array]\nraid = \"{raid}\"\ndrive = \"qdisk\"\n\
                 port = \"1000GB/s\"\n[workload]\npattern = \"{pattern}\"\nbs = \"{bs}\"\n\
                 file_size = \"256MiB\"\niodepth = {qd}\n"
            );
            let r = Scenario::parse("t.toml", &text)
                .unwrap()
                .resolve(&cat)
                .unwrap();
            assert!(r.array.queued, "{raid} {pattern}");
            let layout: storlab_plan::Layout = raid.parse().unwrap();
            let hw = storlab_plan::hardware::Hardware {
                drive: pc.drive("qdisk").unwrap(),
                controller: crate::catalog::transparent_controller(),
                controllers: 1,
                enclosure: None,
                host_bytes_per_s: None,
            };
            let w = storlab_plan::perf::Workload::new(r.workload.pattern, r.workload.bs_bytes)
                .with_concurrency(1, qd);
            let plan = storlab_plan::perf::predict(&layout, &hw, &w).unwrap();
            assert!(
                plan.explanation.contains("calibrated queue"),
                "{raid} {pattern} {qd}: {}",
                plan.explanation
            );
            let a = analytic::solve(&r).aggregate_bytes_per_s;
            assert!(
                (a / plan.bytes_per_s - 1.0).abs() < 0.01,
                "{raid} {pattern} {bs} QD{qd}: analytic {a} plan {}",
                plan.bytes_per_s
            );
            let d = des::simulate(&r).unwrap().aggregate_bytes_per_s;
            assert!(
                (d / plan.bytes_per_s - 1.0).abs() < 0.05,
                "{raid} {pattern} {bs} QD{qd}: des {d} plan {}",
                plan.bytes_per_s
            );
        }
    }

    /// Issue 24: a calibrated drive's host centre (docs/MODEL.md §8) —
    /// random reads with a host of 8 µs per request and 40 µs per call,
    /// sequential reads merged 4 to a command at QD 32 with a fixed host of
    /// 12 µs per request — is each stream's own station in sim, the same
    /// load-dependent centre plan's MVA queues: one client at QD 1, 8, 32
    /// and 256, within 1 % of plan in the analytic solver and 5 % in the
    /// DES. Before, sim had no host centre: the host's time was lost at
    /// depth (random 4 KiB at QD 32 about 60 % above plan).
    #[test]
    fn a_calibrated_host_centre_is_queued_in_both_solvers() {
        let host = QUEUED
            .replace(
                "demand_bytes_per_s = 2e9\npoints = 12",
                "demand_bytes_per_s = 2e9\nhost_s = 8e-6\nhost_call_s = 40e-6\npoints = 12",
            )
            .replace(
                "demand_bytes_per_s = 2.5e9\npoints = 12",
                "demand_bytes_per_s = 2.5e9\nhost_s = 12e-6\nmerges = [{ bytes = 4096, in_flight = 32, factor = 4.0 }]\npoints = 12",
            );
        assert!(host.contains("host_call_s") && host.contains("merges"));
        let mut cat = SimCatalog::builtin();
        cat.extend("q.toml", &host).unwrap();
        let mut pc = storlab_plan::catalog::Catalog::builtin();
        pc.extend("q.toml", &host).unwrap();
        for (pattern, bs, qd) in [
            ("randread", "4KiB", 1u32),
            ("randread", "4KiB", 8),
            ("randread", "4KiB", 32),
            ("randread", "64KiB", 32),
            ("randread", "4KiB", 256),
            ("read", "4KiB", 32),
            ("read", "1MiB", 8),
        ] {
            let text = format!(
                "[clients]\ncount = 1\nnic = \"1000GB/s\"\n[array]\nraid = \"R0/1\"\ndrive = \"qdisk\"\n\
                 port = \"1000GB/s\"\n[workload]\npattern = \"{pattern}\"\nbs = \"{bs}\"\n\
                 file_size = \"256MiB\"\niodepth = {qd}\n"
            );
            let r = Scenario::parse("t.toml", &text)
                .unwrap()
                .resolve(&cat)
                .unwrap();
            assert!(r.array.queued && r.array.host_s > 0.0, "{pattern} {bs}");
            let hw = storlab_plan::hardware::Hardware {
                drive: pc.drive("qdisk").unwrap(),
                controller: crate::catalog::transparent_controller(),
                controllers: 1,
                enclosure: None,
                host_bytes_per_s: None,
            };
            let layout: storlab_plan::Layout = "R0/1".parse().unwrap();
            let w = storlab_plan::perf::Workload::new(r.workload.pattern, r.workload.bs_bytes)
                .with_concurrency(1, qd);
            let plan = storlab_plan::perf::predict(&layout, &hw, &w)
                .unwrap()
                .bytes_per_s;
            let a = analytic::solve(&r);
            assert!(
                (a.aggregate_bytes_per_s / plan - 1.0).abs() < 0.01,
                "{pattern} {bs} QD{qd}: analytic {} plan {plan}",
                a.aggregate_bytes_per_s
            );
            let d = des::simulate(&r).unwrap().aggregate_bytes_per_s;
            assert!(
                (d / plan - 1.0).abs() < 0.05,
                "{pattern} {bs} QD{qd}: des {d} plan {plan}"
            );
            assert!(
                a.utilisation
                    .iter()
                    .any(|u| u.component == HOST && u.pct > 0.0),
                "{:?}",
                a.utilisation
            );
        }
    }

    /// A page cache that evicts least recently used in front of an array
    /// cache that resists scans: a 2 GiB sequential re-read through 1 GiB
    /// of each misses the page cache entirely (LRU, larger than itself) and
    /// hits the array cache for the half it holds.
    #[test]
    fn each_cache_has_its_own_policy() {
        let text = |top: &str, page: &str, array: &str| {
            format!(
                r#"cache_policy = "{top}"
[clients]
count = 1
nic = "10GB/s"
page_cache = "1GiB"
{page}
[array]
port = "10GB/s"
cache = "1GiB"
cache_rate = "2GB/s"
backend = "100MB/s"
{array}
[workload]
pattern = "read"
bs = "1MiB"
file_size = "2GiB"
warm = true
"#
            )
        };
        let mixed = resolve(&text("scan-resistant", "cache_policy = \"lru\"", ""));
        assert_eq!(mixed.page_cache_policy, CachePolicy::Lru);
        assert_eq!(mixed.array_cache_policy, CachePolicy::ScanResistant);
        let l = Layout::of(&mixed);
        assert_eq!((l.h_client, l.h_array), (0.0, 0.5));
        // The same policy everywhere, as before: all LRU misses both; all
        // scan-resistant keeps half in the page cache and the other half
        // in the array's.
        let lru = Layout::of(&resolve(&text("lru", "", "")));
        assert_eq!((lru.h_client, lru.h_array), (0.0, 0.0));
        let scan = Layout::of(&resolve(&text("scan-resistant", "", "")));
        assert_eq!((scan.h_client, scan.h_array), (0.5, 1.0));
        // The array's own key: LRU by default, a scan-resistant array.
        let arr = resolve(&text("lru", "", "cache_policy = \"scan-resistant\""));
        let la = Layout::of(&arr);
        assert_eq!((la.h_client, la.h_array), (0.0, 0.5));
        // Both solvers see it: half of the 2 GiB from the back end at
        // 100 MB/s, the other half from the array cache.
        let a = analytic::solve(&mixed).aggregate_bytes_per_s;
        let d = des::simulate(&mixed).unwrap().aggregate_bytes_per_s;
        assert!((d / a - 1.0).abs() < 0.05, "des {d} analytic {a}");
        assert!(a > 150e6 && a < 250e6, "{a}");
    }

    /// Four movers of 500 MB/s in front of two arrays: with clients spread
    /// over the movers all four work (2,000 MB/s); when each mover serves
    /// only its own targets (a Lustre OSS its OSTs) the data path follows
    /// the data, and the two movers without an array idle (1,000 MB/s).
    #[test]
    fn one_stream_is_bound_by_its_round_trip_in_both_solvers() {
        // One client, QD1, 1 MiB reads: 1 ms of network latency, 0.5 ms in
        // the array's controller, then 1,048,576 bytes over its 100 MB/s
        // NIC (10.48576 ms): 11.98576 ms each, so 1,048,576 / 11.98576 ms
        // = 87.485 MB/s, though the NIC carries 100 (docs/MODEL.md §3.12).
        let text = |qd: u32, latency: &str| {
            format!(
                r#"[clients]
count = 1
nic = "100MB/s"
[network]
latency = "1ms"
[array]
port = "10GB/s"
backend = "10GB/s"
{latency}
[workload]
pattern = "read"
bs = "1MiB"
file_size = "256MiB"
iodepth = {qd}
"#
            )
        };
        let want: f64 = 1048576.0 / 11.98576e-3;
        assert!((want / 1e6 - 87.485).abs() < 0.001);
        let r = resolve(&text(1, "latency = \"500us\""));
        assert_eq!(stream_rate(&r, &Layout::of(&r)), Some(want));
        let a = analytic::solve(&r);
        assert!((a.aggregate_bytes_per_s / want - 1.0).abs() < 1e-9, "{a:?}");
        assert_eq!(a.binding, STREAM);
        assert!(!a.bound, "{:?}", a.unknowns);
        let d = des::simulate(&r).unwrap();
        assert!((d.aggregate_bytes_per_s / want - 1.0).abs() < 0.01, "{d:?}");
        assert_eq!(d.binding, STREAM);
        // Two in flight: 175 MB/s by Little's law, so the NIC binds.
        let r = resolve(&text(2, "latency = \"500us\""));
        let a = analytic::solve(&r);
        assert!(
            (a.aggregate_bytes_per_s / 100e6 - 1.0).abs() < 1e-9,
            "{a:?}"
        );
        assert_eq!(a.binding, CLIENT_NIC);
        // Without the controller's command time the stream's figure is an
        // upper bound that says what is missing.
        let r = resolve(&text(1, ""));
        let a = analytic::solve(&r);
        assert!(a.aggregate_bytes_per_s > want);
        assert!(a.bound && a.unknowns[0].contains("command time"), "{a:?}");
        assert!(des::simulate(&r).unwrap().bound);
    }

    #[test]
    fn a_clients_processes_share_its_nic() {
        // Two clients of four processes each, sequential 1 MiB writes,
        // 100 MB/s NICs, an array that cannot bind: eight streams, but
        // two NICs: 200 MB/s, 100 per client, in both solvers.
        let text = |clients: u32, processes: u32, extra: &str| {
            format!(
                r#"[clients]
count = {clients}
processes = {processes}
nic = "100MB/s"
{extra}
[array]
port = "100GB/s"
backend = "100GB/s"
[workload]
pattern = "write"
bs = "1MiB"
file_size = "256MiB"
"#
            )
        };
        let r = resolve(&text(2, 4, ""));
        assert_eq!((r.clients, r.processes, r.streams()), (2, 4, 8));
        let a = analytic::solve(&r);
        assert!(
            (a.aggregate_bytes_per_s / 200e6 - 1.0).abs() < 1e-9,
            "{a:?}"
        );
        assert!((a.per_client_bytes_per_s / 100e6 - 1.0).abs() < 1e-9);
        assert_eq!(a.binding, CLIENT_NIC);
        let d = des::simulate(&r).unwrap();
        assert!(
            (d.aggregate_bytes_per_s / 200e6 - 1.0).abs() < 0.01,
            "{d:?}"
        );
        assert_eq!(d.per_client.as_ref().map(Vec::len), Some(8));
        // Each process its own file: eight 256 MiB files were written.
        assert!((Layout::of(&r).total_bytes - 8.0 * 268435456.0).abs() < 1.0);
        // On a hashed bond each process is a flow of its own: two clients
        // of four processes on one mover's 4 x 1 GB/s bond use
        // 4 (1 - 0.75^8) = 3.5995 links, two clients alone 1.75.
        let bond = "[movers]\ncount = 1\nclient_port = \"1GB/s\"\nclient_ports = 4\nstorage_port = \"100GB/s\"\nbonding = \"802.3ad\"";
        let with = |p| {
            resolve(&text(2, p, bond))
                .movers
                .map(|m| m.client_side_bytes_per_s)
                .unwrap()
        };
        assert!((with(4) / 1e9 - 4.0 * (1.0 - 0.75f64.powi(8))).abs() < 1e-9);
        assert!((with(1) / 1e9 - 1.75).abs() < 1e-9);
    }

    #[test]
    fn movers_that_own_their_targets_follow_the_data() {
        let text = |own: bool| {
            format!(
                r#"[clients]
count = 8
nic = "10GB/s"
[movers]
count = 4
client_port = "100GB/s"
storage_port = "100GB/s"
rate = "500MB/s"
own_targets = {own}
[filesystem]
kind = "parallel"
[array]
count = 2
port = "100GB/s"
backend = "100GB/s"
[workload]
pattern = "read"
bs = "1MiB"
file_size = "1GiB"
iodepth = 4
"#
            )
        };
        for (own, want) in [(false, 2000e6), (true, 1000e6)] {
            let r = resolve(&text(own));
            let a = analytic::solve(&r);
            assert!(
                (a.aggregate_bytes_per_s - want).abs() / want < 1e-9,
                "own {own}: {}",
                a.aggregate_bytes_per_s
            );
            assert_eq!(a.binding, MOVER, "{a:?}");
            let d = des::simulate(&r).unwrap().aggregate_bytes_per_s;
            assert!((d / want - 1.0).abs() < 0.05, "own {own}: des {d}");
        }
        // Array a is behind mover a mod 4.
        let r = resolve(&text(true));
        assert_eq!(mover_of(&r, 5, 1), Some(1));
        assert_eq!(mover_of(&resolve(&text(false)), 5, 1), Some(1));
        assert_eq!(mover_of(&resolve(&text(false)), 6, 1), Some(2));
    }
}
