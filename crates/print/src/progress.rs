//! The live progress line of a bench run, as words and a bar position:
//! which phase, the layout or the rate over the last interval, and the
//! time left. The CLI draws it (indicatif); this decides what it says.

use std::time::Instant;
use storlab_bench::ProgressSnapshot;

/// The counters of the last snapshot drawn, to take a rate from the next.
pub struct Rate {
    bytes: u64,
    ops: u64,
    at: Instant,
    phase: usize,
}

/// What the progress line shows now.
#[derive(Debug, PartialEq)]
pub struct Line {
    /// `[2/5] randread`.
    pub prefix: String,
    /// The bar's (length, position), when this snapshot sets them.
    pub bar: Option<(u64, u64)>,
    pub message: String,
}

/// The line for snapshot `s` taken at `now` of a run whose phases are
/// `names`; `last` is the previous snapshot's counters, replaced by these.
pub fn bench_line(
    s: &ProgressSnapshot,
    last: &mut Option<Rate>,
    names: &[String],
    now: Instant,
) -> Line {
    let name = names.get(s.phase).map(String::as_str).unwrap_or("?");
    let prefix = format!("[{}/{}] {name}", s.phase + 1, names.len());
    let line = |bar, message| Line {
        prefix: prefix.clone(),
        bar,
        message,
    };
    if let Some((done, total)) = s.layout {
        return line(
            Some((total.max(1), done)),
            format!(
                "laying out files: {} of {}",
                storlab_types::format_bytes(done),
                storlab_types::format_bytes(total)
            ),
        );
    }
    let Some(elapsed) = s.elapsed_ns else {
        return line(None, "preparing".into());
    };
    // A new phase (counters reset): take a baseline first, so the first
    // rate shown covers a real interval.
    let rate = match last.as_ref() {
        Some(l) if l.phase == s.phase && s.bytes >= l.bytes => {
            let dt = now.duration_since(l.at).as_secs_f64().max(1e-9);
            Some((
                (s.bytes - l.bytes) as f64 / dt / 1e6,
                s.ops.saturating_sub(l.ops) as f64 / dt,
            ))
        }
        _ => None,
    };
    *last = Some(Rate {
        bytes: s.bytes,
        ops: s.ops,
        at: now,
        phase: s.phase,
    });
    let figures = rate
        .map(|(mbps, iops)| format!("{mbps:>9.1} MB/s {iops:>10.0} IOPS"))
        .unwrap_or_default();
    let secs = elapsed as f64 / 1e9;
    match (s.planned_ns, s.planned_bytes) {
        (Some(p), _) => line(
            Some((p / 1_000_000, elapsed.min(p) / 1_000_000)),
            format!(
                "{figures}   {:.0} s left",
                p.saturating_sub(elapsed) as f64 / 1e9
            ),
        ),
        (None, Some(b)) => line(
            Some((b, s.bytes.min(b))),
            format!("{figures}   {secs:.0} s"),
        ),
        (None, None) => line(None, format!("{figures}   {secs:.0} s")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn snap(phase: usize, bytes: u64, ops: u64) -> ProgressSnapshot {
        ProgressSnapshot {
            phase,
            bytes,
            ops,
            elapsed_ns: Some(3_000_000_000),
            planned_ns: Some(10_000_000_000),
            planned_bytes: None,
            layout: None,
        }
    }

    /// The first snapshot of a phase shows no rate; the next shows the
    /// rate over the interval between them, and the time left.
    #[test]
    fn rate_over_the_last_interval() {
        let names = vec!["seqread".to_string(), "randread".to_string()];
        let t0 = Instant::now();
        let mut last = None;
        let first = bench_line(&snap(1, 0, 0), &mut last, &names, t0);
        assert_eq!(first.prefix, "[2/2] randread");
        assert_eq!(first.bar, Some((10_000, 3_000)));
        assert_eq!(first.message, "   7 s left");
        let t1 = t0 + Duration::from_secs(2);
        let next = bench_line(&snap(1, 20_000_000, 500), &mut last, &names, t1);
        assert_eq!(next.message, "     10.0 MB/s        250 IOPS   7 s left");
        // A new phase starts over: no rate from the old phase's counters.
        let other = bench_line(&snap(0, 30_000_000, 900), &mut last, &names, t1);
        assert_eq!(other.message, "   7 s left");
    }

    /// Laying out and preparing say so; a size-bounded phase's bar is bytes.
    #[test]
    fn layout_preparing_and_size_bounded() {
        let names = vec!["w".to_string()];
        let now = Instant::now();
        let mut s = snap(0, 0, 0);
        s.layout = Some((1 << 20, 4 << 20));
        let l = bench_line(&s, &mut None, &names, now);
        assert_eq!(l.bar, Some((4 << 20, 1 << 20)));
        assert!(l.message.starts_with("laying out files: "), "{}", l.message);
        s.layout = None;
        s.elapsed_ns = None;
        assert_eq!(bench_line(&s, &mut None, &names, now).message, "preparing");
        s.elapsed_ns = Some(1_000_000_000);
        s.planned_ns = None;
        s.planned_bytes = Some(100);
        s.bytes = 400;
        let b = bench_line(&s, &mut None, &names, now);
        assert_eq!((b.bar, b.message.as_str()), (Some((100, 100)), "   1 s"));
        assert_eq!(
            bench_line(&snap(5, 0, 0), &mut None, &names, now).prefix,
            "[6/1] ?"
        );
    }
}
