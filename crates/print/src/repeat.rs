//! The summary of a `--repeat` series: per phase the mean, standard
//! deviation, min and max of each figure, and IOR's own summary table.

use comfy_table::{Cell, CellAlignment};
use storlab_bench::repeat::{PhaseSpread, Spread};

/// The summary table; each column's header names its unit.
pub fn render(group: &str, count: u32, s: &[PhaseSpread]) -> String {
    let mut t = crate::style::result_table();
    t.set_header(vec![
        "phase", "figure", "n", "mean", "stddev", "stddev %", "min", "max",
    ]);
    for p in s {
        let rows: [(&str, Option<Spread>, f64); 4] = [
            ("MB/s (10^6 B/s)", p.bw_bytes_per_s, 1e6),
            ("IOPS (ops/s)", p.iops, 1.0),
            ("lat p50 (µs)", p.lat_p50_ns, 1e3),
            ("lat p99 (µs)", p.lat_p99_ns, 1e3),
        ];
        for (k, (what, sp, div)) in rows.into_iter().enumerate() {
            let Some(sp) = sp else { continue };
            let num =
                |v: f64| Cell::new(format!("{:.1}", v / div)).set_alignment(CellAlignment::Right);
            let cv = if sp.mean > 0.0 {
                format!("{:.1}", sp.stddev / sp.mean * 100.0)
            } else {
                "-".into()
            };
            t.add_row(vec![
                Cell::new(if k == 0 { p.phase.as_str() } else { "" }),
                Cell::new(what),
                Cell::new(sp.n).set_alignment(CellAlignment::Right),
                num(sp.mean),
                num(sp.stddev),
                Cell::new(cv).set_alignment(CellAlignment::Right),
                num(sp.min),
                num(sp.max),
            ]);
        }
    }
    format!(
        "{count} repeats (repeat_group={group}); stddev is the sample standard deviation (n − 1); \
         interrupted phases are left out.\n{t}\n\
         Each repeat is saved as its own run tagged repeat_group={group}: `storlab compare` uses their spread as the noise.\n"
    )
}

/// IOR's summary of the repeats (`-i N`): per operation (phase) the max,
/// min, mean and standard deviation of the bandwidth in MiB/s (2^20 B/s,
/// IOR's unit) and MB/s (10^6 B/s), and of the operations per second.
pub fn render_ior(s: &[PhaseSpread]) -> String {
    let mut t = crate::style::result_table();
    t.set_header(vec![
        "Operation",
        "Max(MiB/s)",
        "Min(MiB/s)",
        "Mean(MiB/s)",
        "StdDev(MiB/s)",
        "Max(MB/s)",
        "Min(MB/s)",
        "Mean(MB/s)",
        "StdDev(MB/s)",
        "Mean(OPs/s)",
        "StdDev(OPs/s)",
        "reps",
    ]);
    let num = |v: f64| Cell::new(format!("{v:.2}")).set_alignment(CellAlignment::Right);
    for p in s {
        let (Some(bw), Some(ops)) = (p.bw_bytes_per_s, p.iops) else {
            continue;
        };
        let mut row = vec![Cell::new(&p.phase)];
        for div in [1_048_576.0, 1e6] {
            row.extend([bw.max, bw.min, bw.mean, bw.stddev].map(|v| num(v / div)));
        }
        row.extend([num(ops.mean), num(ops.stddev)]);
        row.push(Cell::new(bw.n).set_alignment(CellAlignment::Right));
        t.add_row(row);
    }
    format!(
        "Summary of all repetitions (as IOR's; StdDev is the sample standard deviation, n − 1):\n{t}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    /// A fixed series of three repeats: each figure's mean, stddev, its
    /// percentage and range; a phase without latency has no latency rows.
    #[test]
    fn repeat_table_of_fixed_spreads() {
        let s = [
            PhaseSpread {
                phase: "write".into(),
                bw_bytes_per_s: Spread::of(&[500e6, 510e6, 520e6]),
                iops: Spread::of(&[476.0, 486.0, 496.0]),
                lat_p50_ns: Spread::of(&[2_000_000.0, 2_100_000.0, 1_900_000.0]),
                lat_p99_ns: Spread::of(&[6_000_000.0, 6_500_000.0, 5_500_000.0]),
            },
            PhaseSpread {
                phase: "read".into(),
                bw_bytes_per_s: Spread::of(&[0.0, 0.0, 0.0]),
                iops: Spread::of(&[0.0, 0.0, 0.0]),
                lat_p50_ns: None,
                lat_p99_ns: None,
            },
        ];
        fixture::golden("repeat.txt", &render("g1", 3, &s));
    }

    /// IOR's summary: MiB/s and MB/s of the same rates, and ops/s.
    #[test]
    fn ior_summary_gives_mib_and_mb_and_ops() {
        let sp = |v: &[f64]| Spread::of(v);
        let s = [PhaseSpread {
            phase: "write".into(),
            bw_bytes_per_s: sp(&[1_048_576.0 * 100.0, 1_048_576.0 * 200.0]),
            iops: sp(&[100.0, 200.0]),
            lat_p50_ns: None,
            lat_p99_ns: None,
        }];
        let t = render_ior(&s);
        // Max 200 MiB/s = 209.72 MB/s; mean 150 MiB/s; ops 150.
        for want in [
            "write", "200.00", "100.00", "150.00", "209.72", "157.29", "70.71",
        ] {
            assert!(t.contains(want), "{want}: {t}");
        }
    }
}
