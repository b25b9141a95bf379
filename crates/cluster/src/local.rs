//! [`Comm`] inside one process: ranks are threads sharing a
//! [`std::sync::Barrier`] and one slot each, or a single rank alone
//! ([`LocalComm::solo`]). For tests of everything built on `Comm`, and for
//! a run of one process through the same code as a cluster run.

use crate::comm::Comm;
use std::sync::{Arc, Barrier, Mutex, PoisonError};

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Vec<u8>>>,
}

/// One rank of an in-process job.
pub struct LocalComm {
    rank: u32,
    size: u32,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LocalComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalComm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl LocalComm {
    /// One rank, no one to wait for.
    pub fn solo() -> LocalComm {
        LocalComm {
            rank: 0,
            size: 1,
            shared: Arc::new(Shared {
                barrier: Barrier::new(1),
                slots: Mutex::new(vec![Vec::new()]),
            }),
        }
    }

    /// The `size` ranks of one job (rank order), to hand to `size` threads.
    /// `size` 0 counts as 1.
    pub fn group(size: u32) -> Vec<LocalComm> {
        let size = size.max(1);
        let shared = Arc::new(Shared {
            barrier: Barrier::new(size as usize),
            slots: Mutex::new(vec![Vec::new(); size as usize]),
        });
        (0..size)
            .map(|rank| LocalComm {
                rank,
                size,
                shared: Arc::clone(&shared),
            })
            .collect()
    }

    /// Run `f` on `size` ranks, each a thread; their results in rank order.
    /// A panic on a rank is re-raised here (the other ranks may then wait
    /// for ever: like MPI, a rank that dies mid-step hangs the job).
    pub fn run<T, F>(size: u32, f: F) -> Vec<T>
    where
        T: Send,
        F: Fn(LocalComm) -> T + Sync,
    {
        let f = &f;
        std::thread::scope(|s| {
            let handles: Vec<_> = LocalComm::group(size)
                .into_iter()
                .map(|c| s.spawn(move || f(c)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    /// Every rank's bytes on every rank (rank order): the one step every
    /// collective here is built on.
    fn exchange(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        {
            let mut slots = self
                .shared
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(s) = slots.get_mut(self.rank as usize) {
                *s = mine.to_vec();
            }
        }
        self.shared.barrier.wait();
        let all = self
            .shared
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // No rank writes its next value before every rank has read this one.
        self.shared.barrier.wait();
        all
    }

    fn exchange_u64(&self, values: &[u64]) -> Vec<Vec<u64>> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.exchange(&bytes)
            .into_iter()
            .map(|b| {
                b.chunks_exact(8)
                    .map(|c| {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(c);
                        u64::from_le_bytes(a)
                    })
                    .collect()
            })
            .collect()
    }
}

impl Comm for LocalComm {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn barrier(&self) {
        self.shared.barrier.wait();
    }
    fn broadcast_u64(&self, value: u64) -> u64 {
        self.exchange_u64(&[value])
            .first()
            .and_then(|v| v.first().copied())
            .unwrap_or(value)
    }
    fn broadcast_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        self.exchange(bytes).into_iter().next().unwrap_or_default()
    }
    fn all_gather_u64(&self, values: &[u64]) -> Vec<u64> {
        self.exchange_u64(values).concat()
    }
    fn gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let all = self.exchange(bytes);
        if self.root() { all } else { Vec::new() }
    }
    fn max_u64(&self, values: &[u64]) -> Vec<u64> {
        let all = self.exchange_u64(values);
        (0..values.len())
            .map(|i| {
                all.iter()
                    .filter_map(|v| v.get(i).copied())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }
    fn min_u64(&self, value: u64) -> u64 {
        self.exchange_u64(&[value])
            .iter()
            .filter_map(|v| v.first().copied())
            .min()
            .unwrap_or(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signal that reached rank 2 before rank 0 is the reason rank 0
    /// stores, naming rank 2; rank 0's own reason wins when it has one.
    #[test]
    fn the_stop_reason_is_any_ranks_and_names_it() {
        let got = LocalComm::run(3, |c| {
            let here = (c.rank() == 2).then(|| "SIGINT".to_string());
            c.stop_reason(here)
        });
        assert_eq!(got, [Some("SIGINT (on rank 2)".into()), None, None]);
        let got = LocalComm::run(3, |c| {
            c.stop_reason(Some(format!("signal on {}", c.rank())))
        });
        assert_eq!(got[0].as_deref(), Some("signal on 0"));
        let got = LocalComm::run(2, |c| c.stop_reason(None));
        assert_eq!(got, [None, None]);
    }

    #[test]
    fn solo_is_rank_zero_of_one_and_every_step_returns_its_own() {
        let c = LocalComm::solo();
        assert_eq!((c.rank(), c.size(), c.root()), (0, 1, true));
        c.barrier();
        assert_eq!(c.broadcast_u64(7), 7);
        assert_eq!(c.broadcast_string("x"), "x");
        assert_eq!(c.all_gather_u64(&[1, 2]), vec![1, 2]);
        assert_eq!(c.gather_strings("me"), vec!["me".to_string()]);
        assert_eq!(c.max_u64(&[3, 4]), vec![3, 4]);
        assert_eq!(c.min_u64(5), 5);
        assert!(c.any(true) && !c.any(false) && c.all(true) && !c.all(false));
        assert_eq!(c.min_max(9), (9, 9));
    }

    #[test]
    fn four_ranks_agree_on_every_collective() {
        let out = LocalComm::run(4, |c| {
            let r = u64::from(c.rank());
            c.barrier();
            let b = c.broadcast_u64(100 + r);
            let s = c.broadcast_string(&format!("from {r}"));
            let g = c.all_gather_u64(&[r, 10 * r]);
            let gathered = c.gather_strings(&format!("r{r}"));
            let max = c.max_u64(&[r, 3 - r]);
            let min = c.min_u64(r + 1);
            let any = (c.any(r == 2), c.any(false));
            let all = (c.all(r < 4), c.all(r != 1));
            let mm = c.min_max(r * r);
            (
                c.rank(),
                c.size(),
                b,
                s,
                g,
                gathered,
                max,
                min,
                any,
                all,
                mm,
            )
        });
        assert_eq!(out.len(), 4);
        for (i, (rank, size, b, s, g, gathered, max, min, any, all, mm)) in
            out.into_iter().enumerate()
        {
            assert_eq!((rank, size), (i as u32, 4));
            assert_eq!(b, 100, "rank 0's value everywhere");
            assert_eq!(s, "from 0");
            assert_eq!(g, vec![0, 0, 1, 10, 2, 20, 3, 30]);
            if i == 0 {
                assert_eq!(gathered, vec!["r0", "r1", "r2", "r3"]);
            } else {
                assert!(gathered.is_empty(), "only rank 0 gets the gather");
            }
            assert_eq!(max, vec![3, 3]);
            assert_eq!(min, 1);
            assert_eq!(any, (true, false));
            assert_eq!(all, (true, false));
            assert_eq!(mm, (0, 9));
        }
    }

    #[test]
    fn back_to_back_steps_do_not_mix_values() {
        // Each rank's value changes every step; a slot read after another
        // rank already wrote its next value would show up as a mismatch.
        let out = LocalComm::run(3, |c| {
            (0..200u64)
                .map(|i| c.all_gather_u64(&[i * 10 + u64::from(c.rank())]))
                .collect::<Vec<_>>()
        });
        for per_rank in out {
            for (i, g) in per_rank.into_iter().enumerate() {
                let i = i as u64;
                assert_eq!(g, vec![i * 10, i * 10 + 1, i * 10 + 2]);
            }
        }
    }

    #[test]
    fn gather_keeps_empty_and_binary_payloads_in_rank_order() {
        let out = LocalComm::run(3, |c| {
            let mine: Vec<u8> = (0..c.rank() as u8).map(|b| b ^ 0xff).collect();
            c.gather_bytes(&mine)
        });
        assert_eq!(out[0], vec![vec![], vec![0xff], vec![0xff, 0xfe]]);
        assert!(out[1].is_empty() && out[2].is_empty());
    }
}
