//! Why a phase kept fewer I/Os in flight than it asked for: the shortfall
//! split by where the workers measured it, and the cause the depth warning
//! names from it (issue 22).

use super::WorkerOut;
use storlab_types::PhaseParams;

/// A phase's missing depth (requested − achieved, in I/Os, summed over its
/// workers) split by where each worker measured its free slots. The parts
/// add up to `missing`: `between` is what the measured parts leave.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Shortfall {
    pub missing: f64,
    /// Slots free while a submit call that does not wait ran: the kernel's
    /// submission path (the later I/Os of a refill wait for the calls
    /// before theirs).
    pub submit: f64,
    /// Slots free while the worker waited for a completion: the refill held
    /// I/Os back (flow control, an fsync due, the rate cap with I/Os out).
    pub held: f64,
    /// Slots free while the worker slept (rate cap, thinktime).
    pub asleep: f64,
    /// Slots free during the fsync calls of `fsync` (every N writes).
    pub fsync: f64,
    /// Slots free during stalls of the worker (off its CPU, by the length
    /// of the stretch: see `DepthCauses::lost_stall`).
    pub stalled: f64,
    /// Between a reap and the next submit call: storlab's own processing of
    /// the completions and the new I/Os, and any time the worker was
    /// preempted there.
    pub between: f64,
}

/// The shortfall of the workers that measured a window.
pub(crate) fn shortfall(outs: &[WorkerOut]) -> Shortfall {
    let mut s = Shortfall::default();
    for o in outs {
        let c = &o.causes;
        let (Some(mean), true) = (o.mean_depth, c.window_ns > 0) else {
            continue;
        };
        let w = c.window_ns as f64;
        let missing = (o.target_depth as f64 - mean).max(0.0);
        let mut parts = [
            c.lost_submit as f64 / w,
            c.lost_wait as f64 / w,
            c.lost_sleep as f64 / w,
            c.lost_fsync as f64 / w,
            c.lost_stall as f64 / w,
        ];
        let measured: f64 = parts.iter().sum();
        if measured > missing {
            // Only the window's edges can make the parts exceed the whole
            // (a call that straddles its end): scale them to it.
            let k = if measured > 0.0 {
                missing / measured
            } else {
                0.0
            };
            parts.iter_mut().for_each(|x| *x *= k);
        }
        let [submit, held, asleep, fsync, stalled] = parts;
        s.missing += missing;
        s.submit += submit;
        s.held += held;
        s.asleep += asleep;
        s.fsync += fsync;
        s.stalled += stalled;
        s.between += (missing - parts.iter().sum::<f64>()).max(0.0);
    }
    s
}

impl Shortfall {
    /// "of the 2.0 I/Os missing on average: 1.2 while submit calls ran
    /// (...), 0.8 between ...": every part, so the figures add up.
    fn breakdown(&self) -> String {
        let mut parts = vec![
            (
                self.submit,
                "while submit calls ran (the kernel's submission path: the later I/Os of a refill \
                 wait for the calls before theirs)",
            ),
            (
                self.between,
                "between a reap and the next submit call (storlab's processing)",
            ),
            (
                self.stalled,
                "while the worker went 200 µs or more without a system call with freed slots \
                 in hand (off its CPU, or a long verify step)",
            ),
            (
                self.held,
                "while the worker waited with I/Os held back (an fsync due, flow control)",
            ),
            (self.asleep, "while the worker slept (pacing)"),
            (self.fsync, "during fsync calls (--fsync)"),
        ];
        parts.retain(|p| p.0 >= 0.05);
        parts.sort_by(|a, b| b.0.total_cmp(&a.0));
        let list: Vec<String> = parts.iter().map(|(v, w)| format!("{v:.1} {w}")).collect();
        format!(
            "of the {:.1} I/Os missing on average, {}",
            self.missing,
            if list.is_empty() {
                "none was measured in one place".to_string()
            } else {
                list.join(", ")
            }
        )
    }
}

/// Why the depth was low, from what the workers measured: the CPU figures
/// are the busiest worker's (the one that held the depth down most), the
/// shortfall's parts are summed over the workers (they add up to the
/// missing depth the warning quotes).
pub(crate) fn depth_cause(p: &PhaseParams, outs: &[WorkerOut]) -> String {
    let frac = |f: &dyn Fn(&WorkerOut) -> Option<u64>| {
        outs.iter()
            .filter(|o| o.causes.window_ns > 0)
            .filter_map(|o| Some(f(o)? as f64 / o.causes.window_ns as f64))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let pct = |x: f64| format!("{:.0} %", 100.0 * x);
    let paced = frac(&|o| Some(o.causes.paced_ns)).unwrap_or(0.0);
    let on_cpu = frac(&|o| o.causes.on_cpu_ns);
    let cpu_wait = frac(&|o| o.causes.cpu_wait_ns);
    let refused: u64 = outs.iter().map(|o| o.causes.refused).sum();
    let s = shortfall(outs);
    let parts = s.breakdown();
    let cpu_note = match (on_cpu, cpu_wait) {
        (Some(c), Some(w)) => format!(
            "; the worker thread was on a CPU {} of the window and waited for one {}",
            pct(c),
            pct(w)
        ),
        _ => String::new(),
    };
    if p.rate_iops > 0 || p.rate_read_bytes_per_s > 0 || p.rate_write_bytes_per_s > 0 {
        let cap = if p.rate_iops > 0 {
            format!("--rate-iops {}", p.rate_iops)
        } else {
            format!(
                "--rate {}/s,{}/s",
                storlab_types::format_bytes(p.rate_read_bytes_per_s),
                storlab_types::format_bytes(p.rate_write_bytes_per_s)
            )
        };
        return format!(
            "the rate cap ({cap} per job) held I/Os back, as asked (asleep {} of the window)",
            pct(paced)
        );
    }
    if p.thinktime_ns > 0 {
        return format!(
            "--thinktime {} µs after each completion held I/Os back, as asked (asleep {} of the window)",
            p.thinktime_ns / 1000,
            pct(paced)
        );
    }
    if refused > 0 {
        return format!(
            "device throttling: the kernel took fewer I/Os than offered in {refused} submit calls \
             (EAGAIN/EBUSY: its request queue was full; see /sys/block/DEV/queue/nr_requests); \
             {parts}{cpu_note}"
        );
    }
    if p.fsync_every > 0 && s.held + s.fsync >= 0.5 * s.missing {
        return format!(
            "--fsync {}: every {} writes the queue drains for an fsync, as asked; {parts}",
            p.fsync_every, p.fsync_every
        );
    }
    let top = s.submit.max(s.between).max(s.stalled);
    match (on_cpu, cpu_wait) {
        (_, Some(w)) if w >= 0.05 && s.stalled >= top => format!(
            "the machine is busy: the worker thread waited {} of the window for a CPU other programs \
             (or jobs) held (on a CPU {}); {parts}; fewer jobs or a quieter machine",
            pct(w),
            pct(on_cpu.unwrap_or(0.0))
        ),
        (Some(c), _) if c >= 0.9 => format!(
            "CPU saturated: the worker thread was on a CPU {} of the window, so completions wait to \
             be resubmitted; {parts}; --numjobs spreads the depth over CPUs",
            pct(c)
        ),
        _ if s.stalled >= top && s.stalled > 0.0 => {
            format!("the worker stalled with freed slots in hand: {parts}{cpu_note}")
        }
        _ if s.submit >= s.between && s.submit > 0.0 => {
            format!("the kernel's submission path: {parts}{cpu_note}")
        }
        _ => format!(
            "the time between a completion and the resubmission of its slot (storlab's and the \
             kernel's per-I/O cost) is significant against this latency: {parts}{cpu_note}"
        ),
    }
}
