//! The aggregate `cpu` line of `/proc/stat` and iostat's CPU percentages.

use crate::Error;
use storlab_types::CpuSample;

/// Cumulative CPU time of all CPUs, in USER_HZ ticks, as `/proc/stat`'s
/// first line gives it. `guest` and `guest_nice` are already included in
/// `user` and `nice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

/// Parse the `cpu ` line (the sum over all CPUs). Older kernels print fewer
/// columns (4 before 2.5.41, 7 before 2.6.11, 8 before 2.6.24, 9 before
/// 2.6.33); the missing ones are 0.
pub fn parse_cpu_line(line: &str) -> Result<CpuTimes, Error> {
    let mut it = line.split_ascii_whitespace();
    if it.next() != Some("cpu") {
        return Err(Error::Parse {
            what: "/proc/stat",
            line: 1,
            reason: "expected the aggregate 'cpu' line".into(),
        });
    }
    let mut v = [0u64; 10];
    let mut n = 0;
    for (slot, tok) in v.iter_mut().zip(&mut it) {
        *slot = tok.parse().map_err(|_| Error::Parse {
            what: "/proc/stat",
            line: 1,
            reason: format!("cpu time '{tok}' is not a non-negative integer"),
        })?;
        n += 1;
    }
    if n < 4 {
        return Err(Error::Parse {
            what: "/proc/stat",
            line: 1,
            reason: format!("the cpu line has {n} values; at least 4 expected"),
        });
    }
    Ok(CpuTimes {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
        guest: v[8],
        guest_nice: v[9],
    })
}

/// Find and parse the aggregate `cpu` line of a whole `/proc/stat` text.
pub fn parse_proc_stat(text: &str) -> Result<CpuTimes, Error> {
    let line = text
        .lines()
        .find(|l| l.starts_with("cpu "))
        .ok_or_else(|| Error::Parse {
            what: "/proc/stat",
            line: 1,
            reason: "no aggregate 'cpu' line".into(),
        })?;
    parse_cpu_line(line)
}

/// CPU percentages over an interval, with iostat's definitions:
/// user = Δ(user − guest), nice = Δ(nice − guest_nice),
/// system = Δ(system + irq + softirq), iowait, steal, idle, each divided by
/// Δ(user + nice + system + idle + iowait + irq + softirq + steal).
/// Returns all zeros when no time passed.
pub fn cpu_sample(prev: &CpuTimes, cur: &CpuTimes, t_ns: u64) -> CpuSample {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let user = d(prev.user, cur.user);
    let nice = d(prev.nice, cur.nice);
    let guest = d(prev.guest, cur.guest);
    let guest_nice = d(prev.guest_nice, cur.guest_nice);
    let system = d(prev.system, cur.system) + d(prev.irq, cur.irq) + d(prev.softirq, cur.softirq);
    let idle = d(prev.idle, cur.idle);
    let iowait = d(prev.iowait, cur.iowait);
    let steal = d(prev.steal, cur.steal);
    let total = user + nice + system + idle + iowait + steal;
    if total <= 0.0 {
        return CpuSample {
            t_ns,
            ..CpuSample::default()
        };
    }
    let pct = |x: f64| (x.max(0.0) / total * 100.0).clamp(0.0, 100.0);
    CpuSample {
        t_ns,
        user_pct: pct(user - guest),
        nice_pct: pct(nice - guest_nice),
        system_pct: pct(system),
        iowait_pct: pct(iowait),
        steal_pct: pct(steal),
        idle_pct: pct(idle),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_and_computes() {
        let a = parse_proc_stat("cpu  100 10 50 800 20 5 5 0 0 0\ncpu0 1 2 3 4\nintr 1\n").unwrap();
        let b = parse_cpu_line("cpu  160 10 80 1000 80 10 10 10 20 0").unwrap();
        // Δ: user 60 (guest 20), nice 0, system 30+5+5 = 40, idle 200, iowait 60, steal 10
        // total = 60 + 0 + 40 + 200 + 60 + 10 = 370
        let s = cpu_sample(&a, &b, 7);
        assert_eq!(s.t_ns, 7);
        let close = |x: f64, y: f64| assert!((x - y).abs() < 1e-9, "{x} vs {y}");
        close(s.user_pct, 40.0 / 370.0 * 100.0);
        close(s.system_pct, 40.0 / 370.0 * 100.0);
        close(s.idle_pct, 200.0 / 370.0 * 100.0);
        close(s.iowait_pct, 60.0 / 370.0 * 100.0);
        close(s.steal_pct, 10.0 / 370.0 * 100.0);
        close(s.nice_pct, 0.0);
    }

    #[test]
    fn old_kernels_and_errors() {
        let t = parse_cpu_line("cpu 1 2 3 4").unwrap();
        assert_eq!((t.idle, t.iowait), (4, 0));
        assert!(parse_cpu_line("cpu 1 2").is_err());
        assert!(parse_cpu_line("cpu0 1 2 3 4").is_err());
        assert!(parse_cpu_line("cpu 1 x 3 4").is_err());
        assert!(parse_proc_stat("intr 5\n").is_err());
        let z = cpu_sample(&t, &t, 0);
        assert_eq!(z.idle_pct, 0.0);
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,120}") {
            let _ = parse_proc_stat(&s);
        }

        #[test]
        fn percentages_sum_to_100(v in proptest::collection::vec(0u64..1_000_000, 8)) {
            let a = CpuTimes::default();
            let b = CpuTimes { user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4],
                irq: v[5], softirq: v[6], steal: v[7], guest: 0, guest_nice: 0 };
            let s = cpu_sample(&a, &b, 0);
            let sum = s.user_pct + s.nice_pct + s.system_pct + s.iowait_pct + s.steal_pct + s.idle_pct;
            if v.iter().sum::<u64>() > 0 {
                prop_assert!((sum - 100.0).abs() < 1e-6);
            }
        }
    }
}
