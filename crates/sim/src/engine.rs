//! The event engine: integer-nanosecond time, an event queue and a seeded
//! random number generator. It knows nothing about storage; the models in
//! [`crate::des`] give it typed events and react to them.
//!
//! Events at the same time pop in the order they were scheduled (a sequence
//! number breaks ties), so the same seed gives the same run bit for bit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated time in nanoseconds since the start of the run.
pub type Nanos = u64;

/// A queue of events of type `E` ordered by (time, scheduling order).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(Nanos, u64, usize)>>,
    /// Event payloads by slot; freed slots are reused.
    slots: Vec<Option<E>>,
    free: Vec<usize>,
    seq: u64,
    now: Nanos,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedule `event` at absolute time `at` (never before now).
    pub fn schedule(&mut self, at: Nanos, event: E) {
        let at = at.max(self.now);
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(event);
                i
            }
            None => {
                self.slots.push(Some(event));
                self.slots.len() - 1
            }
        };
        self.heap.push(Reverse((at, self.seq, slot)));
        self.seq += 1;
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Pop the next event and advance the clock to it.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Reverse((t, _, slot)) = self.heap.pop()?;
        self.now = t;
        // A slot is filled when its entry is pushed and emptied only here.
        let e = self.slots[slot].take()?;
        self.free.push(slot);
        Some((t, e))
    }

    /// Advance the clock without an event (the flow network's completions).
    pub fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// SplitMix64: a small, fast, well-mixed generator (Steele, Lea and Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014). Seeded
/// explicitly; nothing in the simulator reads entropy from the system.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponentially distributed with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_order_and_ties_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(30, "c");
        q.schedule(10, "a1");
        q.schedule(20, "b");
        q.schedule(10, "a2");
        q.schedule(10, "a3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(10, "a1"), (10, "a2"), (10, "a3"), (20, "b"), (30, "c")]
        );
        assert_eq!(q.now(), 30);
        // Nothing is scheduled in the past.
        q.schedule(5, "late");
        assert_eq!(q.pop(), Some((30, "late")));
    }

    #[test]
    fn same_seed_same_stream() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..100).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..100).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        let mut r = Rng::new(8);
        assert_ne!(a[0], r.next_u64());
    }

    #[test]
    fn exponential_mean_is_right() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        // Standard error 2/sqrt(n) ≈ 0.0045; allow 4 of them.
        assert!((mean - 2.0).abs() < 0.02, "{mean}");
    }
}
