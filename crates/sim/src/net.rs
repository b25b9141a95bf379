//! Bandwidth shared max-min fairly among concurrent flows (progressive
//! filling), at the level of flow *classes*: flows that cross the same
//! resources with the same per-flow cap always get the same rate, so a class
//! is solved once however many flows it holds. Tens of thousands of clients
//! cost no more than a handful of classes.
//!
//! A flow is `bytes` to move. Each class keeps a virtual clock: the bytes
//! every one of its flows has received since the class began. A flow that
//! joins at virtual time `v` with `b` bytes finishes when the clock reaches
//! `v + b`; the class keeps its flows in a heap by that target.
//!
//! A class's path lists `(resource, weight)`: a flow at rate `x` bytes/s uses
//! `weight × x` of the resource. Resources have a capacity in the same unit
//! (bytes/s for links; a disk given in operations becomes bytes/s at the
//! request size).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::Nanos;

/// Index of a resource.
pub type ResourceId = usize;
/// Index of a class.
pub type ClassId = usize;

#[derive(Debug, Clone)]
struct Class {
    path: Vec<(ResourceId, f64)>,
    /// Per-flow rate cap, bytes/s.
    cap: f64,
    rate: f64,
    vclock: f64,
    /// (target virtual time as bits — non-negative floats order like their
    /// bits —, flow id)
    flows: BinaryHeap<Reverse<(u64, u64)>>,
}

/// The network of resources and the flows on it.
#[derive(Debug, Clone, Default)]
pub struct FluidNet {
    caps: Vec<f64>,
    classes: Vec<Class>,
    dirty: bool,
    /// Busy integral per resource: Σ used rate × dt (bytes), for utilisation.
    used: Vec<f64>,
    scratch_rem: Vec<f64>,
    scratch_load: Vec<f64>,
    scratch_open: Vec<ClassId>,
}

/// Relative tolerance for "this resource is full" and "this flow is done".
const EPS: f64 = 1e-9;

impl FluidNet {
    pub fn new() -> FluidNet {
        FluidNet::default()
    }

    /// Add a resource with `capacity` (bytes/s, > 0).
    pub fn add_resource(&mut self, capacity: f64) -> ResourceId {
        self.caps.push(capacity);
        self.used.push(0.0);
        self.caps.len() - 1
    }

    /// Add a class of flows crossing `path`, each capped at `cap` bytes/s.
    pub fn add_class(&mut self, path: Vec<(ResourceId, f64)>, cap: f64) -> ClassId {
        self.classes.push(Class {
            path,
            cap,
            rate: 0.0,
            vclock: 0.0,
            flows: BinaryHeap::new(),
        });
        self.classes.len() - 1
    }

    /// Change what a class's flows cross (e.g. a cache filled up).
    pub fn set_path(&mut self, class: ClassId, path: Vec<(ResourceId, f64)>) {
        self.classes[class].path = path;
        self.dirty = true;
    }

    pub fn flows_in(&self, class: ClassId) -> usize {
        self.classes[class].flows.len()
    }

    /// Start flow `id` of `bytes` in `class`.
    pub fn add_flow(&mut self, class: ClassId, bytes: f64, id: u64) {
        let c = &mut self.classes[class];
        let target = c.vclock + bytes.max(0.0);
        c.flows.push(Reverse((target.to_bits(), id)));
        self.dirty = true;
    }

    /// The current rate of one flow of `class`, bytes/s.
    pub fn rate(&mut self, class: ClassId) -> f64 {
        self.solve();
        self.classes[class].rate
    }

    /// Bytes moved through each resource so far.
    pub fn used_bytes(&self) -> &[f64] {
        &self.used
    }

    /// Progressive filling: all unfrozen classes' per-flow rates rise
    /// together; a class freezes when it reaches its cap or when a resource
    /// on its path fills up.
    fn solve(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        // Scratch buffers live in the struct: a solve allocates nothing.
        let mut rem = std::mem::take(&mut self.scratch_rem);
        let mut load = std::mem::take(&mut self.scratch_load);
        let mut open = std::mem::take(&mut self.scratch_open);
        rem.clear();
        rem.extend_from_slice(&self.caps);
        load.clear();
        load.resize(self.caps.len(), 0.0);
        open.clear();
        for (i, c) in self.classes.iter_mut().enumerate() {
            c.rate = 0.0;
            if !c.flows.is_empty() {
                open.push(i);
                let n = c.flows.len() as f64;
                for &(r, w) in &c.path {
                    load[r] += n * w;
                }
            }
        }
        let mut level = 0.0;
        while !open.is_empty() {
            // Raise every open class's rate by the largest step no resource
            // and no cap forbids; loads change only as classes freeze.
            let mut step = f64::INFINITY;
            for (r, &l) in load.iter().enumerate() {
                if l > 0.0 {
                    step = step.min(rem[r].max(0.0) / l);
                }
            }
            for &ci in &open {
                step = step.min(self.classes[ci].cap - level);
            }
            if !step.is_finite() {
                // Nothing limits these flows: a scenario error caught before.
                step = 0.0;
            }
            let step = step.max(0.0);
            level += step;
            for (r, &l) in load.iter().enumerate() {
                if l > 0.0 {
                    rem[r] -= step * l;
                }
            }
            let caps = &self.caps;
            let before = open.len();
            let classes = &mut self.classes;
            open.retain(|&ci| {
                let c = &mut classes[ci];
                let full = c
                    .path
                    .iter()
                    .any(|&(r, w)| w > 0.0 && rem[r] <= EPS * caps[r]);
                if full || (c.cap.is_finite() && c.cap - level <= EPS * c.cap.max(1.0)) {
                    c.rate = level;
                    let n = c.flows.len() as f64;
                    for &(r, w) in &c.path {
                        load[r] -= n * w;
                        if load[r] < 1e-12 {
                            load[r] = 0.0;
                        }
                    }
                    false
                } else {
                    true
                }
            });
            if open.len() == before {
                // Guard against a stall from rounding: freeze everything.
                for &ci in &open {
                    self.classes[ci].rate = level;
                }
                break;
            }
        }
        self.scratch_rem = rem;
        self.scratch_load = load;
        self.scratch_open = open;
    }

    /// Nanoseconds from now until the next flow finishes, if any flows run.
    pub fn next_completion(&mut self) -> Option<Nanos> {
        self.solve();
        let mut best: Option<Nanos> = None;
        for c in &self.classes {
            if let Some(Reverse((t, _))) = c.flows.peek() {
                if c.rate <= 0.0 {
                    continue;
                }
                let left = (f64::from_bits(*t) - c.vclock).max(0.0);
                let ns = (left / c.rate * 1e9).ceil();
                let ns = if ns >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    ns as u64
                };
                best = Some(best.map_or(ns, |b| b.min(ns)));
            }
        }
        best
    }

    /// Let `dt` nanoseconds pass; returns the flows that finished, as
    /// (class, flow id), in a deterministic order.
    pub fn advance(&mut self, dt: Nanos) -> Vec<(ClassId, u64)> {
        self.solve();
        let secs = dt as f64 / 1e9;
        let mut done = Vec::new();
        for (ci, c) in self.classes.iter_mut().enumerate() {
            if c.flows.is_empty() {
                continue;
            }
            let moved = c.rate * secs;
            c.vclock += moved;
            let total = moved * c.flows.len() as f64;
            for &(r, w) in &c.path {
                self.used[r] += total * w;
            }
            while let Some(Reverse((t, id))) = c.flows.peek().copied() {
                let target = f64::from_bits(t);
                if target - c.vclock <= EPS * target.max(1.0) {
                    c.flows.pop();
                    done.push((ci, id));
                } else {
                    break;
                }
            }
        }
        if !done.is_empty() {
            self.dirty = true;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_shared_by_n_equal_flows_gives_each_one_nth() {
        for n in [1usize, 2, 3, 10, 1000] {
            let mut net = FluidNet::new();
            let link = net.add_resource(100.0);
            let c = net.add_class(vec![(link, 1.0)], f64::INFINITY);
            for i in 0..n {
                net.add_flow(c, 1e9, i as u64);
            }
            let r = net.rate(c);
            assert!((r - 100.0 / n as f64).abs() < 1e-9 * 100.0, "n={n} r={r}");
        }
    }

    #[test]
    fn textbook_progressive_filling() {
        // Link A (10) carries flows 1 and 2; link B (4) carries flows 2 and 3.
        // Max-min: flows 2 and 3 get 2 each (B is the bottleneck), flow 1 the
        // rest of A, 8. Every link with a frozen flow is full.
        let mut net = FluidNet::new();
        let a = net.add_resource(10.0);
        let b = net.add_resource(4.0);
        let f1 = net.add_class(vec![(a, 1.0)], f64::INFINITY);
        let f2 = net.add_class(vec![(a, 1.0), (b, 1.0)], f64::INFINITY);
        let f3 = net.add_class(vec![(b, 1.0)], f64::INFINITY);
        net.add_flow(f1, 1e9, 1);
        net.add_flow(f2, 1e9, 2);
        net.add_flow(f3, 1e9, 3);
        let (r1, r2, r3) = (net.rate(f1), net.rate(f2), net.rate(f3));
        assert!((r1 - 8.0).abs() < 1e-9, "{r1}");
        assert!((r2 - 2.0).abs() < 1e-9, "{r2}");
        assert!((r3 - 2.0).abs() < 1e-9, "{r3}");
        assert!((r1 + r2 - 10.0).abs() < 1e-9 && (r2 + r3 - 4.0).abs() < 1e-9);
    }

    #[test]
    fn caps_freeze_early_and_the_rest_share_what_is_left() {
        let mut net = FluidNet::new();
        let l = net.add_resource(100.0);
        let slow = net.add_class(vec![(l, 1.0)], 10.0);
        let fast = net.add_class(vec![(l, 1.0)], f64::INFINITY);
        net.add_flow(slow, 1e9, 1);
        net.add_flow(slow, 1e9, 2);
        net.add_flow(fast, 1e9, 3);
        assert!((net.rate(slow) - 10.0).abs() < 1e-9);
        assert!((net.rate(fast) - 80.0).abs() < 1e-9);
    }

    #[test]
    fn flows_finish_when_their_bytes_are_moved() {
        let mut net = FluidNet::new();
        let l = net.add_resource(1e9); // 1 GB/s
        let c = net.add_class(vec![(l, 1.0)], f64::INFINITY);
        net.add_flow(c, 1e6, 1); // alone: 1 ms
        let dt = net.next_completion().unwrap();
        assert_eq!(dt, 1_000_000);
        let done = net.advance(dt);
        assert_eq!(done, vec![(c, 1)]);
        assert!((net.used_bytes()[0] - 1e6).abs() < 1e-3);
        // Two flows of 1 MB and 2 MB: the first ends at 2 ms (0.5 GB/s each),
        // then the second has 1 MB left alone: ends at 3 ms.
        net.add_flow(c, 1e6, 2);
        net.add_flow(c, 2e6, 3);
        let t1 = net.next_completion().unwrap();
        assert_eq!(t1, 2_000_000);
        assert_eq!(net.advance(t1), vec![(c, 2)]);
        let t2 = net.next_completion().unwrap();
        assert_eq!(t2, 1_000_000);
        assert_eq!(net.advance(t2), vec![(c, 3)]);
        assert!(net.next_completion().is_none());
    }

    use proptest::prelude::*;

    proptest! {
        /// Progressive filling on random networks: no resource is over its
        /// capacity, and every class is either at its cap or crosses a full
        /// resource (the max-min condition: nobody can gain without taking
        /// from a flow that is no faster).
        #[test]
        fn max_min_is_feasible_and_every_flow_is_blocked(
            caps in prop::collection::vec(1.0f64..1000.0, 1..5),
            classes in prop::collection::vec(
                (prop::collection::vec(0usize..5, 1..4), 1usize..20, prop::option::of(1.0f64..500.0)), 1..6),
        ) {
            let mut net = FluidNet::new();
            let rs: Vec<_> = caps.iter().map(|&c| net.add_resource(c)).collect();
            let mut ids = Vec::new();
            for (k, (path, n, cap)) in classes.iter().enumerate() {
                let mut p: Vec<(usize, f64)> = path.iter().map(|&i| (rs[i % rs.len()], 1.0)).collect();
                p.sort_by_key(|x| x.0);
                p.dedup_by_key(|x| x.0);
                let c = net.add_class(p, cap.unwrap_or(f64::INFINITY));
                for j in 0..*n { net.add_flow(c, 1e12, (k * 100 + j) as u64); }
                ids.push((c, *n, *cap));
            }
            let mut used = vec![0.0; caps.len()];
            let rates: Vec<f64> = ids.iter().map(|(c, _, _)| net.rate(*c)).collect();
            for ((c, n, _), r) in ids.iter().zip(&rates) {
                for &(res, w) in &net.classes[*c].path { used[res] += *n as f64 * w * r; }
            }
            for (u, c) in used.iter().zip(&caps) {
                prop_assert!(*u <= c * (1.0 + 1e-6), "used {} > cap {}", u, c);
            }
            for ((c, _, cap), r) in ids.iter().zip(&rates) {
                let at_cap = cap.is_some_and(|k| (r - k).abs() <= 1e-6 * k);
                let blocked = net.classes[*c].path.iter().any(|&(res, _)| used[res] >= caps[res] * (1.0 - 1e-6));
                prop_assert!(at_cap || blocked, "class {} at {} is neither capped nor blocked", c, r);
            }
        }
    }
}
