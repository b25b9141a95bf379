//! The discrete-event solver: every request of every client, on the
//! [`crate::engine`] (integer-nanosecond time, seeded RNG) and the
//! [`crate::net`] flow network (max-min fair sharing by flow class).
//!
//! A client keeps `iodepth` requests in flight until it has moved its bytes.
//! A request waits the network latency, then (a lock-managed shared-file
//! write) queues FIFO for the file's lock — handing the lock to another
//! client costs `lock_handoff` — and then moves its bytes as a flow through
//! the components its class crosses. An array's write-back cache fills at
//! the rate writes arrive and drains at the back end's rate; once full, the
//! array's writes cross the back end. Reads hit the caches as the model
//! says (sequential: the first part of each client's data; random: drawn
//! with the seeded RNG).
//!
//! Rate = bytes moved / (last completion − first issue at t = 0), as the
//! bench engine measures it. The same scenario and seed give the same
//! result bit for bit.

use crate::engine::{EventQueue, Nanos, Rng};
use crate::error::SimError;
use crate::model::{self, Layout, Point, Utilisation};
use crate::net::{ClassId, FluidNet, ResourceId};
use crate::scenario::Resolved;
use std::collections::{BTreeMap, VecDeque};

/// The most requests one DES run may simulate.
pub const MAX_REQUESTS: u64 = 10_000_000;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A request reaches the storage side (after the network latency).
    Arrive { req: usize },
    /// A request starts moving its bytes (after a lock handoff).
    Start { req: usize },
    /// The next completion at a stream's calibrated host, scheduled in
    /// `epoch` (stale when the host's requests changed since).
    HostDone { stream: u32, epoch: u64 },
}

/// One stream's calibrated host centre: the requests there with the work
/// each has left (1 = a whole visit).
#[derive(Debug, Default, Clone)]
struct HostPs {
    present: Vec<(usize, f64)>,
    last: Nanos,
    epoch: u64,
    /// Time with a request there.
    busy_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    ClientHit,
    MoverHit,
    ArrayHit,
    Miss,
    Write,
}

#[derive(Debug, Clone, Copy)]
struct Req {
    client: u32,
    bytes: f64,
    issued: Nanos,
    array: u32,
    class: ClassId,
    level: Level,
}

#[derive(Debug, Default)]
struct Client {
    next_k: u64,
    total_k: u64,
    done_k: u64,
    left_bytes: f64,
    lat: Vec<u64>,
    nic_bytes: f64,
    hit_bytes: f64,
}

#[derive(Debug, Default, Clone)]
struct WriteCache {
    level: f64,
    /// Bytes the back end drained from the cache while it was filling.
    drained: f64,
    last: Nanos,
    full: bool,
    /// Its write classes and their keys (mover, array, level, unit).
    classes: Vec<(ClassId, (u32, u32, Level, u32))>,
}

struct Sim<'a> {
    r: &'a Resolved,
    l: Layout,
    q: EventQueue<Ev>,
    net: FluidNet,
    rng: Rng,
    uplink: Option<ResourceId>,
    mover_in: Vec<ResourceId>,
    mover_core: Vec<Option<ResourceId>>,
    mover_out: Vec<ResourceId>,
    ports: Vec<ResourceId>,
    ctrl: Vec<Option<ResourceId>>,
    /// Per array, its back end's units (drives for random work).
    backend: Vec<Vec<ResourceId>>,
    classes: BTreeMap<(u32, u32, Level, u32), ClassId>,
    caches: Vec<WriteCache>,
    reqs: Vec<Req>,
    free: Vec<usize>,
    clients: Vec<Client>,
    lock_queue: VecDeque<usize>,
    lock_holder: Option<usize>,
    lock_last_client: Option<u32>,
    lock_granted_at: Nanos,
    lock_busy_ns: u64,
    all_lat: Vec<u64>,
    /// Each finished client's latency percentiles (the worst and best p99
    /// and the p50 range are taken from it).
    per_client: Vec<crate::model::ClientLatency>,
    events: u64,
    last_done: Nanos,
    /// One stream request's round trip, ns, over which the clients' first
    /// requests are spread (0 when streams have no delay in it).
    stagger_ns: Nanos,
    /// The drives' time a stream's request waits before its flow, s: plan's
    /// drive latency less what the flow itself takes longer for crossing a
    /// back end slower than the links (the fluid flow moves at the slowest
    /// part's rate, so that time would otherwise count twice).
    drive_delay_s: f64,
    /// Each stream's calibrated host centre (none without one).
    hosts: Vec<HostPs>,
}

fn pct_of(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1]
}

impl<'a> Sim<'a> {
    fn new(r: &'a Resolved) -> Sim<'a> {
        let l = Layout::of(r);
        let mut net = FluidNet::new();
        let uplink = r.uplink_bytes_per_s.map(|c| net.add_resource(c));
        let (mut mover_in, mut mover_core, mut mover_out) = (Vec::new(), Vec::new(), Vec::new());
        if let Some(m) = &r.movers {
            for _ in 0..m.count {
                mover_in.push(net.add_resource(m.client_side_bytes_per_s));
                mover_core.push(m.rate_bytes_per_s.map(|c| net.add_resource(c)));
                mover_out.push(net.add_resource(m.storage_side_bytes_per_s));
            }
        }
        let (mut ports, mut ctrl, mut backend) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..r.array.count {
            ports.push(net.add_resource(r.array.ports_bytes_per_s));
            ctrl.push(r.array.controller_bytes_per_s.map(|c| net.add_resource(c)));
            let units = r.array.backend_units.max(1);
            backend.push(
                (0..units)
                    .map(|_| net.add_resource(r.array.backend_bytes_per_s / f64::from(units)))
                    .collect(),
            );
        }
        let stagger_ns = model::stream_rate(r, &l).map_or(0, |x| {
            (f64::from(r.workload.iodepth) * r.workload.bs_bytes as f64 / x * 1e9) as Nanos
        });
        let drive_delay_s = if r.array.queued {
            // A calibrated queue: the fitted delay, beside the units'
            // service (docs/MODEL.md §3.14).
            r.array.drive_latency_s
        } else {
            let bs = r.workload.bs_bytes as f64;
            let lone = model::lone_link_rate(r, &l);
            let slower = (bs / r.array.backend_bytes_per_s - bs / lone).max(0.0);
            (r.array.drive_latency_s - slower).max(0.0)
        };
        let caches = vec![
            WriteCache {
                full: r.array.cache_bytes == 0,
                ..WriteCache::default()
            };
            r.array.count as usize
        ];
        Sim {
            r,
            l,
            q: EventQueue::new(),
            net,
            rng: Rng::new(r.seed),
            uplink,
            mover_in,
            mover_core,
            mover_out,
            ports,
            ctrl,
            backend,
            classes: BTreeMap::new(),
            caches,
            reqs: Vec::new(),
            free: Vec::new(),
            clients: Vec::new(),
            lock_queue: VecDeque::new(),
            lock_holder: None,
            lock_last_client: None,
            lock_granted_at: 0,
            lock_busy_ns: 0,
            all_lat: Vec::new(),
            per_client: Vec::new(),
            events: 0,
            last_done: 0,
            stagger_ns,
            drive_delay_s,
            hosts: vec![HostPs::default(); r.streams() as usize],
        }
    }

    fn path(&self, mover: u32, array: u32, level: Level, unit: u32) -> Vec<(ResourceId, f64)> {
        let mut p: Vec<ResourceId> = Vec::new();
        if level == Level::ClientHit {
            return Vec::new();
        }
        p.extend(self.uplink);
        if mover != u32::MAX {
            let m = mover as usize;
            p.push(self.mover_in[m]);
            p.extend(self.mover_core[m]);
            if level == Level::MoverHit {
                return p.into_iter().map(|x| (x, 1.0)).collect();
            }
            p.push(self.mover_out[m]);
        }
        let a = array as usize;
        p.push(self.ports[a]);
        p.extend(self.ctrl[a]);
        match level {
            Level::Miss => p.push(self.backend[a][unit as usize]),
            Level::Write if self.caches[a].full => p.push(self.backend[a][unit as usize]),
            _ => {}
        }
        p.into_iter().map(|x| (x, 1.0)).collect()
    }

    fn class(&mut self, mover: u32, array: u32, level: Level, unit: u32) -> ClassId {
        if let Some(&c) = self.classes.get(&(mover, array, level, unit)) {
            return c;
        }
        // A client's requests in flight share its link; under the DLM only
        // the lock holder's one request moves at a time.
        let depth = if self.l.locked {
            1.0
        } else {
            f64::from(self.r.workload.iodepth)
        };
        let cap = if level == Level::ClientHit {
            self.r.per_stream(self.r.page_cache_bytes_per_s) / depth
        } else {
            self.l.client_rate / depth
        };
        let path = self.path(mover, array, level, unit);
        let c = self.net.add_class(path, cap);
        self.classes.insert((mover, array, level, unit), c);
        if level == Level::Write {
            self.caches[array as usize]
                .classes
                .push((c, (mover, array, level, unit)));
        }
        c
    }

    fn level_of(&mut self, k: u64, total_k: u64) -> Level {
        let rf = self.r.workload.pattern.read_fraction();
        if rf <= 0.0 {
            return Level::Write;
        }
        if rf < 1.0 {
            // A mix: a share rf of the requests read, drawn for random
            // work, evenly interleaved for a stream.
            let read = if self.r.workload.pattern.is_random() {
                self.rng.uniform() < rf
            } else {
                ((k + 1) as f64 * rf).floor() > (k as f64 * rf).floor()
            };
            if !read {
                return Level::Write;
            }
        }
        let f = if self.r.workload.pattern.is_random() {
            self.rng.uniform()
        } else {
            k as f64 / total_k as f64
        };
        let l = &self.l;
        let c = l.h_client;
        let m = c + (1.0 - c) * l.h_mover;
        let a = m + (1.0 - m) * l.h_array;
        if f < c {
            Level::ClientHit
        } else if f < m {
            Level::MoverHit
        } else if f < a {
            Level::ArrayHit
        } else {
            Level::Miss
        }
    }

    fn issue(&mut self, client: u32) {
        let now = self.q.now();
        let cs = &mut self.clients[client as usize];
        if cs.next_k >= cs.total_k {
            return;
        }
        let k = cs.next_k;
        cs.next_k += 1;
        // Streams whose round trip holds a delay start staggered over one
        // round trip (client c at c/clients of it): identical clients
        // started at once would otherwise wait on their drives in lockstep
        // and leave the links idle together, which unsynchronised hosts
        // do not do.
        let stagger = if k < u64::from(self.r.workload.iodepth) {
            self.stagger_ns * u64::from(client) / u64::from(self.r.streams().max(1))
        } else {
            0
        };
        let now = now + stagger;
        let total_k = cs.total_k;
        let bytes = cs.left_bytes.min(self.r.workload.bs_bytes as f64);
        cs.left_bytes -= bytes;
        let level = self.level_of(k, total_k);
        let c = u64::from(client);
        // A random request's offset is anywhere in the client's data: its
        // array is drawn (two in flight may meet on one array), where a
        // sequential stream's next stripe is the next array.
        let at = if self.r.workload.pattern.is_random() {
            self.rng.next_u64() % total_k.max(1)
        } else {
            k
        };
        let array = model::array_of(self.r, c, at);
        let mover = model::mover_of(self.r, c, array).unwrap_or(u32::MAX);
        let units = self.r.array.backend_units.max(1);
        let unit = if units > 1 {
            (self.rng.next_u64() % u64::from(units)) as u32
        } else {
            0
        };
        let class = self.class(mover, array, level, unit);
        let req = Req {
            client,
            bytes,
            issued: now,
            array,
            class,
            level,
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.reqs[i] = req;
                i
            }
            None => {
                self.reqs.push(req);
                self.reqs.len() - 1
            }
        };
        if self.r.array.queued && !self.r.array.host().is_none() {
            self.host_enter(client, id, now);
        } else {
            self.depart(id, now);
        }
    }

    /// Request `id` leaves its client (and its host, if calibrated) at
    /// `now`: it waits the network latency and, in the array, the
    /// controller's command time and the drives' (one request's round trip,
    /// docs/MODEL.md §3.12), then arrives.
    fn depart(&mut self, id: usize, now: Nanos) {
        let level = self.reqs[id].level;
        let a = &self.r.array;
        // A calibrated queue's delay is a delay centre of that mean: drawn
        // exponential, or requests that start together at one unit would
        // finish and return together, in lockstep, below the MVA the fit
        // describes (a closed network of a processor-sharing station and a
        // delay is insensitive to the delay's distribution beyond its mean).
        let drive_delay_s = if a.queued {
            let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            -(1.0 - u).ln() * self.drive_delay_s
        } else {
            self.drive_delay_s
        };
        let in_array = match level {
            Level::Miss | Level::Write => a.cmd_latency_s + drive_delay_s,
            Level::ArrayHit => a.cmd_latency_s,
            _ => 0.0,
        };
        let lat = ((self.r.latency_s + in_array) * 1e9).round() as Nanos;
        if now + lat > self.q.now() {
            self.q.schedule(now + lat, Ev::Arrive { req: id });
        } else {
            self.arrive(id);
        }
    }

    /// Request `id` reaches its stream's calibrated host centre at `now`:
    /// processor sharing at a load-dependent rate, each of the `j` requests
    /// there served at `1 / (call + j · io)` of a visit per second, so the
    /// host completes `j` per `call + j · io` — the load-dependent centre
    /// plan's MVA solves (`storlab_plan::calibrate::HostCentre`; a
    /// processor-sharing station's throughput in a closed network depends
    /// on its service times' means only).
    fn host_enter(&mut self, stream: u32, id: usize, now: Nanos) {
        self.host_advance(stream, now);
        self.hosts[stream as usize].present.push((id, 1.0));
        self.host_schedule(stream, now);
    }

    /// The work the requests at `stream`'s host received up to `now`.
    fn host_advance(&mut self, stream: u32, now: Nanos) {
        let h = self.r.array.host();
        let hs = &mut self.hosts[stream as usize];
        let j = hs.present.len() as f64;
        if j > 0.0 && now > hs.last {
            let done = (now - hs.last) as f64 / 1e9 / (h.call_s + j * h.io_s);
            for p in &mut hs.present {
                p.1 -= done;
            }
            hs.busy_ns += now - hs.last;
        }
        hs.last = now;
    }

    /// The next completion at `stream`'s host (a new epoch: any earlier
    /// one scheduled is stale).
    fn host_schedule(&mut self, stream: u32, now: Nanos) {
        let h = self.r.array.host();
        let hs = &mut self.hosts[stream as usize];
        hs.epoch += 1;
        let j = hs.present.len() as f64;
        let Some(left) = hs.present.iter().map(|p| p.1).min_by(f64::total_cmp) else {
            return;
        };
        let secs = left.max(0.0) * (h.call_s + j * h.io_s);
        let at = now + (secs * 1e9).ceil() as Nanos;
        let epoch = hs.epoch;
        self.q.schedule(at, Ev::HostDone { stream, epoch });
    }

    /// A completion at `stream`'s host: the requests whose work is done
    /// leave it.
    fn host_done(&mut self, stream: u32, epoch: u64) {
        if self.hosts[stream as usize].epoch != epoch {
            return;
        }
        let now = self.q.now();
        self.host_advance(stream, now);
        let hs = &mut self.hosts[stream as usize];
        let mut leaving = Vec::new();
        hs.present.retain(|&(id, left)| {
            let done = left <= 1e-9;
            if done {
                leaving.push(id);
            }
            !done
        });
        self.host_schedule(stream, now);
        for id in leaving {
            self.depart(id, now);
        }
    }

    fn arrive(&mut self, id: usize) {
        if self.l.locked {
            self.lock_queue.push_back(id);
            if self.lock_holder.is_none() {
                self.grant();
            }
        } else {
            self.start(id);
        }
    }

    fn grant(&mut self) {
        let Some(id) = self.lock_queue.pop_front() else {
            return;
        };
        let now = self.q.now();
        let client = self.reqs[id].client;
        self.lock_holder = Some(id);
        self.lock_granted_at = now;
        let handoff = self.lock_last_client.is_some_and(|c| c != client);
        self.lock_last_client = Some(client);
        let h = (self.r.lock_handoff_s * 1e9).round() as Nanos;
        if handoff && h > 0 {
            self.q.schedule(now + h, Ev::Start { req: id });
        } else {
            self.start(id);
        }
    }

    fn start(&mut self, id: usize) {
        let r = self.reqs[id];
        self.net.add_flow(r.class, r.bytes, id as u64);
    }

    fn complete(&mut self, id: usize) {
        let now = self.q.now();
        self.events += 1;
        self.last_done = self.last_done.max(now);
        let r = self.reqs[id];
        self.free.push(id);
        if r.level == Level::Write {
            let b = self.r.array.backend_bytes_per_s;
            let cap = self.r.array.cache_bytes as f64;
            let wc = &mut self.caches[r.array as usize];
            if !wc.full {
                let drained = (b * (now - wc.last) as f64 / 1e9).min(wc.level);
                wc.drained += drained;
                wc.level = wc.level - drained + r.bytes;
                wc.last = now;
                if wc.level >= cap {
                    wc.full = true;
                    let classes = wc.classes.clone();
                    for (c, (mover, array, level, unit)) in classes {
                        let p = self.path(mover, array, level, unit);
                        self.net.set_path(c, p);
                    }
                }
            }
        }
        if self.l.locked && self.lock_holder == Some(id) {
            self.lock_busy_ns += now - self.lock_granted_at;
            self.lock_holder = None;
            self.grant();
        }
        let cs = &mut self.clients[r.client as usize];
        cs.done_k += 1;
        cs.lat.push(now - r.issued);
        if r.level == Level::ClientHit {
            cs.hit_bytes += r.bytes;
        } else {
            cs.nic_bytes += r.bytes;
        }
        if cs.done_k == cs.total_k {
            let mut lat = std::mem::take(&mut cs.lat);
            lat.sort_unstable();
            let p99 = pct_of(&lat, 99.0);
            let p50 = pct_of(&lat, 50.0);
            self.per_client.push(crate::model::ClientLatency {
                client: r.client,
                p50_ns: p50,
                p99_ns: p99,
                done_ns: now,
            });
            self.all_lat.extend_from_slice(&lat);
        } else {
            self.issue(r.client);
        }
    }

    fn run(&mut self) {
        let bs = self.r.workload.bs_bytes as f64;
        let per = self.l.per_client_bytes;
        for c in 0..self.r.streams() {
            let total_k = (per / bs).ceil().max(1.0) as u64;
            self.clients.push(Client {
                total_k,
                left_bytes: per,
                ..Client::default()
            });
            let _ = c;
        }
        for c in 0..self.r.streams() {
            for _ in 0..self.r.workload.iodepth {
                self.issue(c);
            }
        }
        loop {
            let now = self.q.now();
            let t_net = self.net.next_completion().map(|d| now.saturating_add(d));
            let t_ev = self.q.peek_time();
            let t = match (t_net, t_ev) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            let done = self.net.advance(t - now);
            self.q.advance_to(t);
            for (_, id) in done {
                self.complete(id as usize);
            }
            while self.q.peek_time() == Some(t) {
                let Some((_, ev)) = self.q.pop() else { break };
                self.events += 1;
                match ev {
                    Ev::Arrive { req } => self.arrive(req),
                    Ev::Start { req } => self.start(req),
                    Ev::HostDone { stream, epoch } => self.host_done(stream, epoch),
                }
            }
        }
    }

    // long-function: one simulated point: set up, run the event loop, collect, in order.
    fn point(mut self) -> Point {
        let elapsed = self.last_done.max(1);
        let secs = elapsed as f64 / 1e9;
        let total: f64 = self.clients.iter().map(|c| c.nic_bytes + c.hit_bytes).sum();
        let aggregate = total / secs;
        let mut utilisation = Vec::new();
        let mut add = |name: &str, pct: f64| {
            utilisation.push(Utilisation {
                component: name.to_string(),
                pct,
            })
        };
        let max_hit = self.clients.iter().map(|c| c.hit_bytes).fold(0.0, f64::max);
        let max_nic = self.clients.iter().map(|c| c.nic_bytes).fold(0.0, f64::max);
        if max_hit > 0.0 {
            add(
                model::CLIENT_CACHE,
                100.0 * max_hit / self.r.per_stream(self.r.page_cache_bytes_per_s) / secs,
            );
        }
        if let Some(c) = self.r.client_rate_bytes_per_s {
            let t = self
                .clients
                .iter()
                .map(|x| {
                    x.hit_bytes / self.r.per_stream(self.r.page_cache_bytes_per_s)
                        + x.nic_bytes / self.r.per_stream(c.min(self.r.client_nic_bytes_per_s))
                })
                .fold(0.0, f64::max);
            add(model::CLIENT, 100.0 * t / secs);
        }
        let t_nic = self
            .clients
            .iter()
            .map(|x| {
                x.hit_bytes / self.r.per_stream(self.r.page_cache_bytes_per_s)
                    + x.nic_bytes / self.r.per_stream(self.r.client_nic_bytes_per_s)
            })
            .fold(0.0, f64::max);
        let _ = max_nic;
        add(model::CLIENT_NIC, 100.0 * t_nic / secs);
        if let Some(busy) = self
            .hosts
            .iter()
            .map(|h| h.busy_ns)
            .max()
            .filter(|&b| b > 0)
        {
            add(model::HOST, 100.0 * busy as f64 / 1e9 / secs);
        }
        let used = self.net.used_bytes().to_vec();
        let one = |ids: &[ResourceId], cap: f64| -> Vec<(f64, f64)> {
            ids.iter().map(|&x| (used[x], cap)).collect()
        };
        let mv = self.r.movers.as_ref();
        let core: Vec<ResourceId> = self.mover_core.iter().flatten().copied().collect();
        let ctrl: Vec<ResourceId> = self.ctrl.iter().flatten().copied().collect();
        let uplink: Vec<ResourceId> = self.uplink.iter().copied().collect();
        // Per component: (bytes moved, capacity) of each instance.
        let parts: Vec<(&str, Vec<(f64, f64)>)> = vec![
            (
                model::UPLINK,
                one(&uplink, self.r.uplink_bytes_per_s.unwrap_or(1.0)),
            ),
            (
                model::MOVER_IN,
                one(
                    &self.mover_in,
                    mv.map_or(1.0, |m| m.client_side_bytes_per_s),
                ),
            ),
            (
                model::MOVER,
                one(&core, mv.and_then(|m| m.rate_bytes_per_s).unwrap_or(1.0)),
            ),
            (
                model::MOVER_OUT,
                one(
                    &self.mover_out,
                    mv.map_or(1.0, |m| m.storage_side_bytes_per_s),
                ),
            ),
            (
                model::ARRAY_PORTS,
                one(&self.ports, self.r.array.ports_bytes_per_s),
            ),
            (
                model::ARRAY_CTRL,
                one(&ctrl, self.r.array.controller_bytes_per_s.unwrap_or(1.0)),
            ),
            (
                model::BACKEND,
                self.backend
                    .iter()
                    .zip(&self.caches)
                    .map(|(units, wc)| {
                        // All its drives together, plus what it drained
                        // from the write cache while the cache filled.
                        let b: f64 = units.iter().map(|&x| used[x]).sum();
                        (b + wc.drained, self.r.array.backend_bytes_per_s)
                    })
                    .collect(),
            ),
        ];
        for (name, rs) in parts {
            if rs.is_empty() {
                continue;
            }
            let u = rs
                .iter()
                .map(|&(b, cap)| b / cap / secs * 100.0)
                .fold(0.0, f64::max);
            add(name, u);
        }
        if self.l.locked {
            add(
                model::LOCK,
                100.0 * self.lock_busy_ns as f64 / elapsed as f64,
            );
        }
        if let Some(x) = model::stream_rate(self.r, &self.l) {
            let t = self
                .clients
                .iter()
                .map(|c| {
                    c.hit_bytes / self.r.per_stream(self.r.page_cache_bytes_per_s) + c.nic_bytes / x
                })
                .fold(0.0, f64::max);
            add(model::STREAM, 100.0 * t / secs);
        }
        let binding = model::binding_of(&utilisation);
        let unknowns = crate::analytic::unknowns_for(self.r, &binding);
        self.all_lat.sort_unstable();
        let mean = if self.all_lat.is_empty() {
            0.0
        } else {
            self.all_lat.iter().map(|&x| x as f64).sum::<f64>() / self.all_lat.len() as f64
        };
        let mut per_client = std::mem::take(&mut self.per_client);
        per_client.sort_by_key(|c| c.client);
        let p99s = per_client.iter().map(|c| c.p99_ns);
        let p50s = per_client.iter().map(|c| c.p50_ns);
        Point {
            solver: "des".into(),
            clients: self.r.clients,
            aggregate_bytes_per_s: aggregate,
            per_client_bytes_per_s: aggregate / f64::from(self.r.clients.max(1)),
            binding,
            utilisation,
            mean_latency_ns: mean,
            mva_bytes_per_s: None,
            p50_latency_ns: Some(pct_of(&self.all_lat, 50.0)),
            p99_latency_ns: Some(pct_of(&self.all_lat, 99.0)),
            worst_client_p99_ns: Some(p99s.clone().max().unwrap_or(0)),
            best_client_p99_ns: Some(p99s.min().unwrap_or(0)),
            latency_ns: Some(storlab_types::LatencyStats {
                min: self.all_lat.first().copied().unwrap_or(0),
                mean,
                stddev: if self.all_lat.is_empty() {
                    0.0
                } else {
                    (self
                        .all_lat
                        .iter()
                        .map(|&x| (x as f64 - mean).powi(2))
                        .sum::<f64>()
                        / self.all_lat.len() as f64)
                        .sqrt()
                },
                max: self.all_lat.last().copied().unwrap_or(0),
                p50: pct_of(&self.all_lat, 50.0),
                p90: pct_of(&self.all_lat, 90.0),
                p99: pct_of(&self.all_lat, 99.0),
                p99_9: pct_of(&self.all_lat, 99.9),
                p99_99: pct_of(&self.all_lat, 99.99),
            }),
            client_p50_range_ns: Some((p50s.clone().min().unwrap_or(0), p50s.max().unwrap_or(0))),
            per_client: Some(per_client),
            simulated_ns: Some(elapsed),
            events: Some(self.events),
            bound: !unknowns.is_empty(),
            unknowns,
            typical: self.r.array.typical.clone(),
        }
    }
}

/// Simulate one resolved scenario request by request.
pub fn simulate(r: &Resolved) -> Result<Point, SimError> {
    let l = Layout::of(r);
    let per_client = (l.per_client_bytes / r.workload.bs_bytes as f64)
        .ceil()
        .max(1.0) as u64;
    let requests = per_client.saturating_mul(l.n);
    if requests > MAX_REQUESTS {
        return Err(SimError::TooLarge(format!(
            "{} clients × {per_client} requests = {requests} requests is more than the discrete-event solver's {MAX_REQUESTS}; \
             use --solver analytic, a smaller workload.file_size or a larger workload.bs",
            l.n
        )));
    }
    let mut sim = Sim::new(r);
    sim.run();
    Ok(sim.point())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic;
    use crate::catalog::SimCatalog;
    use crate::engine::{EventQueue, Rng};
    use crate::net::FluidNet;
    use crate::scenario::Scenario;

    /// Both solvers' aggregate MB/s (bytes/s) for one scenario, each within
    /// 5 % of `expect`; `what` names the case in the failure.
    fn both_near(r: &Resolved, expect: f64, what: &str) {
        let a = analytic::solve(r).aggregate_bytes_per_s;
        let d = simulate(r).unwrap().aggregate_bytes_per_s;
        for (solver, v) in [("analytic", a), ("des", d)] {
            assert!(
                (v / expect - 1.0).abs() < 0.05,
                "{what}: {solver} {v}, expected {expect}"
            );
        }
    }

    const BASE: &str = r#"
[clients]
count = 8
nic = "100MB/s"
[array]
count = 2
port = "150MB/s"
backend = "120MB/s"
[workload]
pattern = "write"
bs = "1MiB"
file_size = "64MiB"
"#;

    fn resolve(text: &str) -> crate::Resolved {
        Scenario::parse("t.toml", text)
            .unwrap()
            .resolve(&SimCatalog::builtin())
            .unwrap()
    }

    #[test]
    fn des_agrees_with_the_bound_on_plateaus_and_names_the_same_part() {
        for n in [1u32, 2, 4, 16, 64] {
            let r = resolve(&BASE.replace("count = 8", &format!("count = {n}")));
            let a = analytic::solve(&r);
            let d = simulate(&r).unwrap();
            let rel =
                (d.aggregate_bytes_per_s - a.aggregate_bytes_per_s).abs() / a.aggregate_bytes_per_s;
            assert!(
                rel < 0.05,
                "n={n}: des {} analytic {}",
                d.aggregate_bytes_per_s,
                a.aggregate_bytes_per_s
            );
            assert_eq!(d.binding, a.binding, "n={n}");
        }
    }

    /// Fewer clients than arrays: a client with several requests in flight
    /// keeps several arrays busy at once (the analytic answer had counted
    /// one array per client whatever the queue depth).
    #[test]
    fn few_deep_clients_keep_several_arrays_busy_in_both_solvers() {
        let base = r#"
[clients]
count = 1
nic = "1000MB/s"
[array]
count = 3
port = "1000MB/s"
backend = "200MB/s"
[workload]
pattern = "read"
bs = "1MiB"
file_size = "256MiB"
"#;
        for (n, qd, bs, expect) in [
            (1u32, 4u32, "1MiB", 600e6),
            (2, 4, "1MiB", 600e6),
            (1, 1, "1MiB", 200e6),
            (1, 2, "1MiB", 400e6),
            (1, 4, "256KiB", 200e6),
            // A request larger than the stripe goes to its first stripe's
            // array (array_of): 3 MiB requests all land on one array.
            (1, 4, "3MiB", 200e6),
            // 1.5 MiB: two arrays take every request between them.
            (1, 2, "1.5MiB", 400e6),
            // 768 KiB does not divide the stripe: one array holds half the
            // requests, so three in flight move two arrays' worth.
            (1, 6, "768KiB", 400e6),
        ] {
            let text = base
                .replace("count = 1\n", &format!("count = {n}\n"))
                .replace("bs = \"1MiB\"", &format!("bs = \"{bs}\"\niodepth = {qd}"));
            both_near(&resolve(&text), expect, &format!("{n} clients QD{qd} {bs}"));
        }
    }

    /// An array cache holds its share of the data whatever the queue depth:
    /// a 3 GiB file over three arrays with 1 GiB caches is served from the
    /// caches at every depth, one array's cache rate per array busy at once
    /// (the hit ratio had followed the number of arrays busy: 150, 600, 6000
    /// MB/s at QD 1, 2, 3).
    #[test]
    fn array_caches_hold_their_share_at_every_queue_depth() {
        for (qd, expect) in [(1u32, 2000e6), (2, 4000e6), (3, 6000e6)] {
            let text = format!(
                "[clients]\ncount = 1\nnic = \"10GB/s\"\n[array]\ncount = 3\nport = \"10GB/s\"\n\
                 cache = \"1GiB\"\ncache_rate = \"2GB/s\"\nbackend = \"100MB/s\"\n[workload]\n\
                 pattern = \"read\"\nbs = \"1MiB\"\nfile_size = \"3GiB\"\niodepth = {qd}\nwarm = true\n"
            );
            let r = resolve(&text);
            assert_eq!(Layout::of(&r).h_array, 1.0, "QD{qd}");
            both_near(&r, expect, &format!("QD{qd}"));
        }
    }

    /// A small file's random requests stay on the arrays its data covers:
    /// 1 MiB in 1 MiB stripes is one array, at 200 IO/s of 64 KiB.
    #[test]
    fn random_requests_stay_on_the_arrays_the_data_covers() {
        let r = resolve(
            "[clients]\ncount = 1\nnic = \"10GB/s\"\n[array]\ncount = 4\nport = \"10GB/s\"\n\
             backend_iops = 200\n[workload]\npattern = \"randread\"\nbs = \"64KiB\"\n\
             file_size = \"1MiB\"\niodepth = 4\n",
        );
        both_near(&r, 200.0 * 65536.0, "1 MiB file");
    }

    /// Random requests land on any array of the client's span, so two in
    /// flight may meet on one: one client at QD 2 over three arrays gets
    /// less than two arrays' worth, in both solvers (the DES had sent
    /// request k to array k mod 3, as if random reads were a stream, and
    /// read 419 MB/s where MVA, counting the meetings, said 276).
    #[test]
    fn random_requests_meet_on_arrays_in_both_solvers() {
        let text = |qd: u32| {
            format!(
                "[clients]\ncount = 1\nnic = \"10GB/s\"\n[array]\ncount = 3\nport = \"10GB/s\"\n\
                 backend_iops = 200\n[workload]\npattern = \"randread\"\nbs = \"1MiB\"\n\
                 file_size = \"512MiB\"\niodepth = {qd}\n"
            )
        };
        for qd in [1u32, 2, 3, 4, 8] {
            let r = resolve(&text(qd));
            let a = analytic::solve(&r).aggregate_bytes_per_s;
            let d = simulate(&r).unwrap().aggregate_bytes_per_s;
            assert!((d / a - 1.0).abs() < 0.08, "QD{qd}: des {d} analytic {a}");
            // Never the collision-free ideal of min(QD, 3) arrays.
            let ideal = f64::from(qd.min(3)) * 200.0 * 1_048_576.0;
            if qd > 1 {
                assert!(
                    d < 0.9 * ideal && a < 0.9 * ideal,
                    "QD{qd}: {d} {a} vs {ideal}"
                );
            }
        }
    }

    /// p50/p99 per client: every client once, in order, and the summary
    /// figures are their extremes.
    #[test]
    fn every_client_has_its_own_percentiles() {
        let r = resolve(&BASE.replace("count = 8", "count = 6"));
        let d = simulate(&r).unwrap();
        let pc = d.per_client.as_ref().unwrap();
        let ids: Vec<u32> = pc.iter().map(|c| c.client).collect();
        assert_eq!(ids, (0..6).collect::<Vec<_>>());
        assert!(
            pc.iter()
                .all(|c| c.p50_ns > 0 && c.p50_ns <= c.p99_ns && c.done_ns > 0)
        );
        let worst = pc.iter().map(|c| c.p99_ns).max().unwrap();
        let best = pc.iter().map(|c| c.p99_ns).min().unwrap();
        assert_eq!(d.worst_client_p99_ns, Some(worst));
        assert_eq!(d.best_client_p99_ns, Some(best));
        let (lo, hi) = d.client_p50_range_ns.unwrap();
        assert_eq!(lo, pc.iter().map(|c| c.p50_ns).min().unwrap());
        assert_eq!(hi, pc.iter().map(|c| c.p50_ns).max().unwrap());
        // Outside identities: the last client to finish ends the run, and no
        // client's p99 is above the run's slowest request.
        let last = pc.iter().map(|c| c.done_ns).max().unwrap();
        assert_eq!(Some(last), d.simulated_ns);
        let max = d.latency_ns.as_ref().unwrap().max;
        assert!(pc.iter().all(|c| c.p99_ns <= max), "{pc:?} vs max {max}");
        assert!(analytic::solve(&r).per_client.is_none());
    }

    /// An LRU cache serves nothing of a sequential re-read larger than
    /// itself (each block is evicted before it is wanted again) and all of
    /// one that fits; the scan-resistant default keeps what fits. Random
    /// reads hit cache / working set under both. Both solvers agree.
    #[test]
    fn lru_caches_miss_a_sequential_reread_larger_than_themselves() {
        let text = |policy: &str, pattern: &str, size: &str| {
            // 100 MB/s either way: 100 random 1 MiB requests a second.
            let backend = if pattern.starts_with("rand") {
                "backend_iops = 100"
            } else {
                "backend = \"100MB/s\""
            };
            format!(
                r#"cache_policy = "{policy}"
[clients]
count = 1
nic = "10GB/s"
[array]
count = 1
port = "10GB/s"
cache = "1GiB"
cache_rate = "2GB/s"
{backend}
[workload]
pattern = "{pattern}"
bs = "1MiB"
file_size = "{size}"
warm = true
"#
            )
        };
        // (analytic, DES); sequential streams are plateaus, where the two agree.
        let both = |policy: &str, pattern: &str, size: &str| {
            let r = resolve(&text(policy, pattern, size));
            let a = analytic::solve(&r).aggregate_bytes_per_s;
            let d = simulate(&r).unwrap().aggregate_bytes_per_s;
            (a, d)
        };
        let rate = |policy: &str, pattern: &str, size: &str| {
            let (a, d) = both(policy, pattern, size);
            assert!(
                (d / a - 1.0).abs() < 0.05,
                "{policy} {pattern} {size}: des {d} analytic {a}"
            );
            a
        };
        // 2 GiB re-read through a 1 GiB cache over a 100 MB/s back end.
        let scan = rate("scan-resistant", "read", "2GiB");
        let lru = rate("lru", "read", "2GiB");
        assert!(
            (lru / 100e6 - 1.0).abs() < 0.05,
            "LRU: all from the back end: {lru}"
        );
        assert!(
            scan > 1.8 * lru,
            "scan-resistant keeps half: {scan} vs {lru}"
        );
        // What fits is served from the cache under both.
        let (s, l) = (
            rate("scan-resistant", "read", "512MiB"),
            rate("lru", "read", "512MiB"),
        );
        assert!((s / l - 1.0).abs() < 1e-9 && s > 1e9, "{s} {l}");
        // Random reads: the same hit ratio under both policies, in each solver
        // (the same seed draws the same hits).
        let (s, l) = (
            both("scan-resistant", "randread", "2GiB"),
            both("lru", "randread", "2GiB"),
        );
        assert_eq!(s, l);
        // ... and that ratio is cache / working set: 1 GiB of 2 GiB.
        for policy in ["scan-resistant", "lru"] {
            let r = resolve(&text(policy, "randread", "2GiB"));
            assert_eq!(Layout::of(&r).h_array, 0.5, "{policy}");
        }
        // A policy the model does not know is refused with its place.
        let bad = Scenario::parse("t.toml", &text("fifo", "read", "1GiB"));
        let e = bad.and_then(|s| s.resolve(&SimCatalog::builtin()).map(|_| ()));
        assert!(
            e.unwrap_err().to_string().contains("t.toml:1"),
            "unknown policy"
        );
    }

    #[test]
    fn same_seed_same_result_bit_for_bit() {
        let text = BASE
            .replace("pattern = \"write\"", "pattern = \"randread\"")
            .replace("backend = \"120MB/s\"", "backend_iops = 300")
            .replace("bs = \"1MiB\"", "bs = \"64KiB\"")
            + "warm = true\n";
        let text = text.replace("[array]", "[array]\ncache = \"64MiB\"");
        let r = resolve(&text);
        let a = serde_json::to_string(&simulate(&r).unwrap()).unwrap();
        let b = serde_json::to_string(&simulate(&r).unwrap()).unwrap();
        assert_eq!(a, b);
        let r2 = resolve(&format!("seed = 99\n{text}"));
        let c = serde_json::to_string(&simulate(&r2).unwrap()).unwrap();
        assert_ne!(a, c, "a different seed draws different cache hits");
    }

    /// M/M/1 through the engine and the flow network: Poisson arrivals,
    /// exponential sizes, one link shared by the flows in progress
    /// (processor sharing, whose utilisation and mean response time equal
    /// M/M/1's: ρ = λ/μ, E[T] = 1/(μ − λ)).
    #[test]
    fn mm1_utilisation_and_mean_response_time() {
        #[derive(Debug)]
        enum E {
            Arrival,
        }
        let (lambda, mu) = (80.0, 100.0); // per second; link 1e6 B/s, mean size 1e4 B
        let mut q: EventQueue<E> = EventQueue::new();
        let mut net = FluidNet::new();
        let link = net.add_resource(1e6);
        let class = net.add_class(vec![(link, 1.0)], f64::INFINITY);
        let mut rng = Rng::new(42);
        let mut start = std::collections::BTreeMap::new();
        let mut next_id = 0u64;
        let mut total_t = 0.0;
        let mut done = 0u64;
        let n = 200_000u64;
        q.schedule(0, E::Arrival);
        while done < n {
            let now = q.now();
            let t_net = net.next_completion().map(|d| now + d);
            let t_ev = q.peek_time();
            let t = match (t_net, t_ev) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => break,
            };
            for (_, id) in net.advance(t - now) {
                let s: u64 = start.remove(&id).unwrap();
                total_t += (t - s) as f64 / 1e9;
                done += 1;
            }
            q.advance_to(t);
            while q.peek_time() == Some(t) {
                let (_, E::Arrival) = q.pop().unwrap();
                net.add_flow(class, rng.exponential(1e6 / mu), next_id);
                start.insert(next_id, t);
                next_id += 1;
                let gap = (rng.exponential(1.0 / lambda) * 1e9).round() as u64;
                q.schedule(t + gap.max(1), E::Arrival);
            }
        }
        let elapsed = q.now() as f64 / 1e9;
        let rho = net.used_bytes()[link] / 1e6 / elapsed;
        let mean_t = total_t / done as f64;
        let want = 1.0 / (mu - lambda);
        assert!((rho - 0.8).abs() < 0.02, "utilisation {rho}");
        // The response time of a busy queue converges slowly: 8 % covers
        // several standard errors at 200,000 jobs.
        assert!(
            (mean_t - want).abs() / want < 0.08,
            "E[T] {mean_t} vs {want}"
        );
    }

    /// Random reads over a RAID of 16 drives: each drive is its own queue,
    /// so throughput rises with outstanding requests toward the drives'
    /// total, and the DES follows exact MVA's knee.
    #[test]
    fn random_reads_follow_the_mva_knee() {
        let text = r#"
[clients]
count = 4
nic = "10gbe-iscsi"
[network]
latency = "200us"
[array]
port = "fc8"
ports = 2
raid = "R50/8/16"
drive = "cheetah-15k7-600gb"
[workload]
pattern = "randread"
bs = "8KiB"
file_size = "16MiB"
iodepth = 1
"#;
        let mut last = 0.0;
        for depth in [1, 4, 16] {
            let r = resolve(&text.replace("iodepth = 1", &format!("iodepth = {depth}")));
            let a = analytic::solve(&r);
            let d = simulate(&r).unwrap();
            let rel =
                (d.aggregate_bytes_per_s - a.aggregate_bytes_per_s).abs() / a.aggregate_bytes_per_s;
            assert!(
                rel < 0.05,
                "depth {depth}: des {} mva {}",
                d.aggregate_bytes_per_s,
                a.aggregate_bytes_per_s
            );
            assert!(
                a.aggregate_bytes_per_s > last * 1.2,
                "depth {depth} should gain"
            );
            last = a.aggregate_bytes_per_s;
            // Little's law holds in the DES: customers = X × mean latency.
            let x = d.aggregate_bytes_per_s / 8192.0;
            let n = x * d.mean_latency_ns / 1e9;
            assert!(
                (n - f64::from(4 * depth)).abs() / f64::from(4 * depth) < 0.05,
                "depth {depth}: {n}"
            );
        }
    }
}
