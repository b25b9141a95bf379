//! The analytic solver: bottleneck bounds on the time to move the workload's
//! bytes, plus exact mean value analysis (MVA) for the knee of request-level
//! workloads.
//!
//! **Bounds.** Every component instance must carry its bytes: the run takes
//! at least `bytes_r / capacity_r` for the busiest instance of each
//! component, at least one client's own time (cache hits at page-cache speed
//! plus misses at its path rate), and with a lock-managed shared-file write,
//! at least `requests × (bs / single-writer rate + lock handoff)`. An array's
//! write-back cache takes the first `cache` bytes off its back end's share
//! (the fluid answer for a cache filled at `in` and drained at `b`:
//! `max(D/in, (D − C)/b)`). Aggregate throughput = bytes / the largest of
//! these times; each component's utilisation is its time / that time; the
//! binding component is the one at 100 %.
//!
//! **MVA.** Requests are the customers of a closed network (clients ×
//! iodepth of them); each component type is a queueing station with the
//! busiest instance's demand per request, repeated for the instances there
//! are; the client side and the network latency are a delay. Exact MVA
//! (Reiser and Lavenberg 1980) gives the throughput as customers are added.
//! For sequential streams (pipelined transfers) the fluid bound is the
//! answer and MVA's store-and-forward figure is only reported; for random
//! I/O the answer is the lower of the two.

use crate::model::{self, Layout, Point, Utilisation};
use crate::scenario::Resolved;

/// A station of the closed network: per-request demand at one instance (s)
/// and how many instances share the load; `call_s`, a cost per visit
/// shared by every request waiting at the instance (a calibrated host's
/// system call, `storlab_plan::calibrate::HostCentre`: the instance is
/// then load-dependent, its residence `call_s + demand (1 + Q)` per
/// instance visited; 0 for a plain station).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Station {
    pub demand_s: f64,
    pub copies: f64,
    pub call_s: f64,
}

/// Exact MVA for `customers` in a closed network of queueing `stations`
/// and a delay `think_s`. Returns (throughput per second, mean response
/// time s, mean queue length per instance of each station).
pub fn mva(stations: &[Station], think_s: f64, customers: u64) -> (f64, f64, Vec<f64>) {
    let mut q = vec![0.0; stations.len()];
    let mut x = 0.0;
    let mut resp = 0.0;
    for n in 1..=customers {
        let rs: Vec<f64> = stations
            .iter()
            .zip(&q)
            .map(|(s, qk)| s.demand_s * (1.0 + qk) + s.call_s / s.copies.max(1.0))
            .collect();
        resp = rs
            .iter()
            .zip(stations)
            .map(|(r, s)| r * s.copies)
            .sum::<f64>();
        x = n as f64 / (think_s + resp);
        for (qk, r) in q.iter_mut().zip(&rs) {
            *qk = x * r;
        }
    }
    (x, resp, q)
}

/// One term of the bound: a component and the time it needs.
struct Term {
    name: &'static str,
    /// Time the component needs at the least (the bound).
    secs: f64,
    /// Time the busiest instance works (its utilisation): `secs`, except
    /// for arrays, where fewer may work at once than share the bytes.
    busy_secs: f64,
    /// Demand per request at the busiest instance, and instance count (for MVA).
    station: Option<Station>,
}

/// Solve one resolved scenario analytically.
// long-function: bounds then MVA over the same station list, in the order of docs/SIM.md.
pub fn solve(r: &Resolved) -> Point {
    let l = Layout::of(r);
    let w = &r.workload;
    let bs = w.bs_bytes as f64;
    let requests = (l.total_bytes / bs).max(1.0);
    let mut terms: Vec<Term> = Vec::new();
    // `bytes` set the component's time (the bound), `busiest` its busiest
    // instance's work (utilisation): the same but for arrays.
    let mut push = |name: &'static str, bytes: f64, busiest: f64, cap: Option<f64>, copies: f64| {
        if let Some(c) = cap {
            let secs = bytes / c;
            terms.push(Term {
                name,
                secs,
                busy_secs: busiest / c,
                station: Some(Station {
                    demand_s: secs / requests,
                    copies,
                    call_s: 0.0,
                }),
            });
        }
    };

    // Client side: one client's own time (a delay in MVA).
    let hit = l.per_client_bytes * l.h_client;
    let miss = l.per_client_bytes - hit;
    // A client's processes share its page cache and NIC: each stream
    // has its share of them (Resolved::per_stream).
    let t_cache = hit / r.per_stream(r.page_cache_bytes_per_s);
    let t_nic = miss / r.per_stream(r.client_nic_bytes_per_s);
    let t_own = r.client_rate_bytes_per_s.map_or(0.0, |c| {
        miss / r.per_stream(c.min(r.client_nic_bytes_per_s))
    });
    // One client's stream, bound by its requests' round trip (§3.12 of
    // docs/MODEL.md): the bytes that leave the client at that rate.
    let t_stream = model::stream_rate(r, &l).map(|x| miss / x);
    let t_client = t_cache + t_nic.max(t_own).max(t_stream.unwrap_or(0.0));

    let past_client = l.total_bytes * (1.0 - l.h_client);
    push(
        UPLINK_NAME,
        past_client,
        past_client,
        r.uplink_bytes_per_s,
        1.0,
    );
    let mut at_arrays = past_client;
    if let Some(m) = &r.movers {
        let through = past_client * l.mover_share;
        let copies = 1.0 / l.mover_share;
        push(
            model::MOVER_IN,
            through,
            through,
            Some(m.client_side_bytes_per_s),
            copies,
        );
        push(model::MOVER, through, through, m.rate_bytes_per_s, copies);
        let out = through * (1.0 - l.h_mover);
        push(
            model::MOVER_OUT,
            out,
            out,
            Some(m.storage_side_bytes_per_s),
            copies,
        );
        at_arrays = past_client * (1.0 - l.h_mover);
    }
    // The busiest array carries `on_array` bytes over the run (its
    // utilisation); the arrays busy at once share the bytes' time between
    // them (the bound, and MVA's instances).
    let on_array = at_arrays * l.array_share;
    let copies = l.arrays_busy;
    let at_once = at_arrays / copies;
    // What passes an array's cache on to its back end: writes beyond what
    // the write-back cache absorbs, reads it does not serve.
    // A mix: its reads pass on, its writes beyond what the cache absorbs.
    let rf = w.pattern.read_fraction();
    let to_backend = if rf < 1.0 {
        if on_array > 0.0 {
            let written = on_array * (1.0 - rf);
            let absorbed = (r.array.cache_bytes as f64).min(written);
            rf * (1.0 - l.h_array) + (written - absorbed) / on_array
        } else {
            0.0
        }
    } else {
        1.0 - l.h_array
    };
    for (name, cap, frac) in [
        (model::ARRAY_PORTS, Some(r.array.ports_bytes_per_s), 1.0),
        (model::ARRAY_CTRL, r.array.controller_bytes_per_s, 1.0),
        (
            model::BACKEND,
            Some(r.array.backend_bytes_per_s),
            to_backend,
        ),
    ] {
        push(name, at_once * frac, on_array * frac, cap, copies);
    }
    // Random requests: each drive of the back end is its own queue (a
    // request visits one). bs / (all drives' bytes/s) is already one drive's
    // demand per request (service time × a 1/units visit); there are
    // `units` of them, so the knee comes at about one request per drive.
    let units = f64::from(r.array.backend_units.max(1));
    if units > 1.0
        && let Some(t) = terms.iter_mut().find(|t| t.name == model::BACKEND)
        && let Some(st) = t.station.as_mut()
    {
        st.copies *= units;
    }

    // A calibrated device's host centre (docs/MODEL.md §8): each stream's
    // own host (its submission and completion work), a load-dependent
    // station whose call is shared by the requests waiting at it. Its
    // bound: every request pays the per-request cost and at least its
    // share of a call carrying all the stream's iodepth requests.
    let host = r.array.host();
    if model::queued(r) && !host.is_none() {
        let streams = f64::from(r.streams().max(1));
        let secs = requests / streams * host.per_request_s(f64::from(w.iodepth));
        terms.push(Term {
            name: model::HOST,
            secs,
            busy_secs: secs,
            station: Some(Station {
                demand_s: host.io_s / streams,
                copies: streams,
                call_s: host.call_s,
            }),
        });
    }

    let lock_secs = lock_secs(r, &l, requests, bs);

    let t_bound = terms
        .iter()
        .map(|t| t.secs)
        .chain([t_client])
        .chain(lock_secs)
        .fold(0.0, f64::max);
    let t_bound = if t_bound > 0.0 {
        t_bound
    } else {
        f64::MIN_POSITIVE
    };
    let bound = l.total_bytes / t_bound;

    let customers = l.n * u64::from(w.iodepth);
    let mva = mva_throughput(
        r,
        &terms,
        lock_secs,
        requests,
        t_client / (l.per_client_bytes / bs).max(1.0),
        customers,
    );
    let mva_x = mva.as_ref().map(|m| m.0);
    let aggregate = if model::queued(r) {
        mva_x.map_or(bound, |m| m.min(bound))
    } else {
        bound
    };
    let t_run = l.total_bytes / aggregate;
    // The host's busy time: each call carries the requests waiting at it
    // (MVA's mean queue there, at least one).
    if let Some(t) = terms.iter_mut().find(|t| t.name == model::HOST) {
        let queued = mva
            .as_ref()
            .and_then(|m| m.1)
            .unwrap_or(f64::from(w.iodepth));
        let streams = f64::from(r.streams().max(1));
        t.busy_secs = requests / streams * host.per_request_s(queued.max(1.0));
    }

    let utilisation = utilisation(
        r,
        &terms,
        Parts {
            hit,
            t_cache,
            t_own,
            t_nic,
            on_array,
            lock_secs,
            t_stream,
            t_run,
        },
    );
    // A request-level run slower than every bound is bound by its queueing.
    let binding = model::binding_of(&utilisation);
    let unknowns = unknowns_for(r, &binding);
    Point {
        solver: "analytic".into(),
        clients: r.clients,
        aggregate_bytes_per_s: aggregate,
        per_client_bytes_per_s: aggregate / f64::from(r.clients.max(1)),
        binding,
        utilisation,
        mean_latency_ns: customers as f64 * bs / aggregate * 1e9,
        mva_bytes_per_s: mva_x,
        p50_latency_ns: None,
        p99_latency_ns: None,
        worst_client_p99_ns: None,
        best_client_p99_ns: None,
        latency_ns: None,
        client_p50_range_ns: None,
        per_client: None,
        simulated_ns: None,
        events: None,
        bound: !unknowns.is_empty(),
        unknowns,
        typical: r.array.typical.clone(),
    }
}

/// The array's unknowns, and the controller's command time when a stream
/// bound by its round trip (`binding`) leaves it out.
pub(crate) fn unknowns_for(r: &Resolved, binding: &str) -> Vec<String> {
    let mut u = r.array.unknowns.clone();
    if binding == model::STREAM
        && let Some(s) = &r.array.stream_unknown
    {
        u.push(s.clone());
    }
    u
}

/// MVA's throughput, bytes/s: the shared stations (under the DLM, the lock,
/// the back end and a calibrated host); the client side and the latency are
/// a delay. Beside it, the mean queue at one host instance, when there is a
/// host station.
fn mva_throughput(
    r: &Resolved,
    terms: &[Term],
    lock_secs: Option<f64>,
    requests: f64,
    client_per_request: f64,
    customers: u64,
) -> Option<(f64, Option<f64>)> {
    let (stations, think): (Vec<Station>, f64) = if let Some(ls) = lock_secs {
        let mut st = vec![Station {
            demand_s: ls / requests,
            copies: 1.0,
            call_s: 0.0,
        }];
        st.extend(
            terms
                .iter()
                .filter(|t| t.name == model::BACKEND || t.name == model::HOST)
                .filter_map(|t| t.station),
        );
        (st, r.latency_s + r.array.cmd_latency_s)
    } else {
        (
            terms.iter().filter_map(|t| t.station).collect(),
            r.latency_s + r.array.cmd_latency_s + r.array.drive_latency_s + client_per_request,
        )
    };
    let host = stations.iter().position(|s| s.call_s > 0.0);
    (customers <= MVA_MAX_CUSTOMERS).then(|| {
        let (x, _, q) = mva(&stations, think, customers);
        (x * r.workload.bs_bytes as f64, host.map(|i| q[i]))
    })
}

/// The DLM's time: one writer at a time, at the rate of a lone flow through
/// the front path (the back end drains the cache outside the lock), plus a
/// lock handoff per request once two clients compete.
fn lock_secs(r: &Resolved, l: &Layout, requests: f64, bs: f64) -> Option<f64> {
    if !l.locked {
        return None;
    }
    {
        let mut single = l.client_rate;
        for c in [
            r.uplink_bytes_per_s,
            r.array.controller_bytes_per_s,
            Some(r.array.ports_bytes_per_s),
        ]
        .into_iter()
        .flatten()
        {
            single = single.min(c);
        }
        if let Some(m) = &r.movers {
            single = single
                .min(m.client_side_bytes_per_s)
                .min(m.storage_side_bytes_per_s)
                .min(m.rate_bytes_per_s.unwrap_or(f64::INFINITY));
        }
        let handoff = if l.n >= 2 { r.lock_handoff_s } else { 0.0 };
        let per_request = bs / single + handoff;
        Some(requests * per_request)
    }
}

/// The client-side and array figures [`utilisation`] needs besides the terms.
struct Parts {
    hit: f64,
    t_cache: f64,
    t_own: f64,
    t_nic: f64,
    on_array: f64,
    lock_secs: Option<f64>,
    t_stream: Option<f64>,
    t_run: f64,
}

/// Every component's utilisation over a run of `t_run` seconds.
fn utilisation(r: &Resolved, terms: &[Term], p: Parts) -> Vec<Utilisation> {
    let Parts {
        hit,
        t_cache,
        t_own,
        t_nic,
        on_array,
        lock_secs,
        t_stream,
        t_run,
    } = p;
    let w = &r.workload;
    let mut utilisation = Vec::new();
    let mut add = |name: &str, secs: f64| {
        utilisation.push(Utilisation {
            component: name.to_string(),
            pct: 100.0 * secs / t_run,
        });
    };
    if hit > 0.0 {
        add(model::CLIENT_CACHE, t_cache);
    }
    if r.client_rate_bytes_per_s.is_some() {
        add(model::CLIENT, t_cache + t_own);
    }
    add(model::CLIENT_NIC, t_cache + t_nic);
    for name in model::COMPONENTS {
        if let Some(t) = terms.iter().find(|t| t.name == name) {
            let secs = if name == model::BACKEND && w.pattern.read_fraction() < 1.0 {
                // The back end drains the write-back cache from the first
                // byte: it is busy for everything it can write in the run.
                (on_array / r.array.backend_bytes_per_s).min(t_run)
            } else {
                t.busy_secs
            };
            add(name, secs);
        }
    }
    if let Some(ls) = lock_secs {
        add(model::LOCK, ls);
    }
    if let Some(ts) = t_stream {
        add(model::STREAM, t_cache + ts);
    }
    utilisation
}

const UPLINK_NAME: &str = model::UPLINK;

/// Above this many customers MVA's O(customers × stations) loop is skipped
/// and the bound alone is the answer.
pub const MVA_MAX_CUSTOMERS: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed networks whose answers are known in closed form: one station
    /// (X = 1/D), and K balanced stations (X = N / (D (K + N − 1)), Lazowska
    /// et al., "Quantitative System Performance", 1984, ch. 5).
    #[test]
    fn mva_single_station_and_balanced_network() {
        // One station, no think time: X = 1/D for any population, R = N·D.
        let (x, r, q) = mva(
            &[Station {
                demand_s: 0.01,
                copies: 1.0,
                call_s: 0.0,
            }],
            0.0,
            5,
        );
        assert!((x - 100.0).abs() < 1e-9);
        assert!((r - 0.05).abs() < 1e-12);
        assert!((q[0] - 5.0).abs() < 1e-9);
        // K balanced stations of demand D, N customers: X = N / (D (K + N - 1)).
        let k = 3.0;
        let d = 0.02;
        for n in 1..20u64 {
            let st = vec![
                Station {
                    demand_s: d,
                    copies: 1.0,
                    call_s: 0.0,
                };
                3
            ];
            let (x, _, _) = mva(&st, 0.0, n);
            let exact = n as f64 / (d * (k + n as f64 - 1.0));
            assert!((x - exact).abs() < 1e-9 * exact, "n={n} {x} {exact}");
        }
    }

    #[test]
    fn mva_textbook_two_customers() {
        // Demands 1 and 2, no think time, N = 2, computed by hand:
        // n=1: R = 1 + 2 = 3, X = 1/3, Q = (1/3, 2/3)
        // n=2: R1 = 1·(4/3), R2 = 2·(5/3) = 10/3, R = 14/3, X = 6/14.
        let st = [
            Station {
                demand_s: 1.0,
                copies: 1.0,
                call_s: 0.0,
            },
            Station {
                demand_s: 2.0,
                copies: 1.0,
                call_s: 0.0,
            },
        ];
        let (x, r, _) = mva(&st, 0.0, 2);
        assert!((x - 6.0 / 14.0).abs() < 1e-12);
        assert!((r - 14.0 / 3.0).abs() < 1e-12);
        // With think time Z: X(1) = 1 / (Z + ΣD).
        let (x, _, _) = mva(&st, 7.0, 1);
        assert!((x - 0.1).abs() < 1e-12);
        // Throughput never exceeds the bottleneck bound 1/Dmax, and grows with N.
        let mut last = 0.0;
        for n in 1..50 {
            let (x, _, _) = mva(&st, 0.5, n);
            assert!(x <= 0.5 + 1e-12 && x >= last);
            last = x;
        }
    }

    use crate::catalog::SimCatalog;
    use crate::scenario::Scenario;
    use proptest::prelude::*;

    fn scenario(
        clients: u32,
        movers: u32,
        arrays: u32,
        pattern: &str,
        sharing: &str,
        fs: &str,
        cache_mib: u32,
    ) -> String {
        format!(
            r#"
[clients]
count = {clients}
nic = "1gbe-iscsi"
page_cache = "256MiB"
[network]
uplink = "10gbe-iscsi"
[movers]
count = {movers}
client_port = "10gbe-iscsi"
storage_port = "fc4"
cache = "{cache_mib}MiB"
[filesystem]
kind = "{fs}"
[array]
count = {arrays}
port = "fc4"
ports = 2
cache = "{cache_mib}MiB"
cache_rate = "1GB/s"
backend = "300MB/s"
backend_iops = 2000
[workload]
pattern = "{pattern}"
sharing = "{sharing}"
bs = "256KiB"
file_size = "1GiB"
warm = true
"#
        )
    }

    fn solve_text(t: &str) -> Point {
        solve(
            &Scenario::parse("p.toml", t)
                .unwrap()
                .resolve(&SimCatalog::builtin())
                .unwrap(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// More clients never push a component above its capacity, and
        /// adding an array or a mover never lowers the answer.
        #[test]
        fn caps_hold_and_servers_never_hurt(
            clients in 1u32..5000,
            movers in 1u32..8,
            arrays in 1u32..8,
            pattern in prop::sample::select(vec!["read", "write", "randread", "randwrite"]),
            sharing in prop::sample::select(vec!["n-n", "n-1"]),
            fs in prop::sample::select(vec!["shared-block", "parallel"]),
            cache in 0u32..4096,
        ) {
            let p = solve_text(&scenario(clients, movers, arrays, pattern, sharing, fs, cache));
            for u in &p.utilisation {
                prop_assert!(u.pct <= 100.0 + 1e-6, "{} at {}%", u.component, u.pct);
            }
            prop_assert!(p.aggregate_bytes_per_s > 0.0 && p.aggregate_bytes_per_s.is_finite());
            let more_arrays = solve_text(&scenario(clients, movers, arrays + 1, pattern, sharing, fs, cache));
            let more_movers = solve_text(&scenario(clients, movers + 1, arrays, pattern, sharing, fs, cache));
            let eps = 1e-9 * p.aggregate_bytes_per_s;
            prop_assert!(more_arrays.aggregate_bytes_per_s >= p.aggregate_bytes_per_s - eps,
                "arrays {} -> {}: {} -> {}", arrays, arrays + 1, p.aggregate_bytes_per_s, more_arrays.aggregate_bytes_per_s);
            prop_assert!(more_movers.aggregate_bytes_per_s >= p.aggregate_bytes_per_s - eps,
                "movers {} -> {}: {} -> {}", movers, movers + 1, p.aggregate_bytes_per_s, more_movers.aggregate_bytes_per_s);
        }
    }
}
