//! Held-out points (`plan calibrate --hold-out`): which measured points the
//! fit does not see, and how well it predicts them.
//!
//! `--hold-out SIZE` leaves every phase of that request size out.
//! `--hold-out alternate` splits each direction and pattern's grid of
//! request size × requests in flight like a checkerboard: with the sizes
//! measured sorted (index i) and the depths measured sorted (index j), the
//! point (i, j) is held out when i + j is odd. Every size and every depth
//! then has fitted and held-out points, the split is fixed by the grid
//! alone (never by the measurements), and each held-out point has fitted
//! neighbours on both sides. Repeats of a point count by their median.

use super::{Calibration, DirectionFit, Observation, QueueFit};
use crate::render::Style;
use serde::Serialize;
use storlab_types::{format_bytes, format_rate};

/// What to leave out of the fit and predict instead.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HoldOut {
    /// Every phase of these request sizes.
    pub sizes: Vec<u64>,
    /// Alternate points of each direction and pattern's size × depth grid.
    pub alternate: bool,
}

impl HoldOut {
    pub fn sizes(sizes: &[u64]) -> HoldOut {
        HoldOut {
            sizes: sizes.to_vec(),
            alternate: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty() && !self.alternate
    }

    /// The rule in words, for the report.
    pub fn rule(&self) -> String {
        let mut parts = Vec::new();
        if self.alternate {
            parts.push(
                "alternate points of each size x depth grid (size index + depth index odd)"
                    .to_string(),
            );
        }
        if !self.sizes.is_empty() {
            let s: Vec<String> = self.sizes.iter().map(|&b| format_bytes(b)).collect();
            parts.push(format!("request size {}", s.join(", ")));
        }
        parts.join("; ")
    }

    /// For each observation, whether it is held out.
    pub fn mask(&self, obs: &[&Observation]) -> Vec<bool> {
        obs.iter()
            .map(|o| {
                if self.sizes.contains(&o.request_bytes) {
                    return true;
                }
                if !self.alternate {
                    return false;
                }
                let same = obs
                    .iter()
                    .filter(|x| x.write == o.write && x.random == o.random);
                let mut sizes: Vec<u64> = same.clone().map(|x| x.request_bytes).collect();
                let mut depths: Vec<u32> = same.map(|x| x.in_flight).collect();
                sizes.sort_unstable();
                sizes.dedup();
                depths.sort_unstable();
                depths.dedup();
                let i = sizes.partition_point(|&b| b < o.request_bytes);
                let j = depths.partition_point(|&d| d < o.in_flight);
                (i + j) % 2 == 1
            })
            .collect()
    }
}

/// One point of a sweep: its repeats reduced to their median.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldPoint {
    /// The first repeat's label.
    pub label: String,
    pub write: bool,
    pub random: bool,
    pub request_bytes: u64,
    pub in_flight: u32,
    /// Median over the repeats.
    pub measured_iops: f64,
    pub repeats: usize,
    pub predicted_iops: Option<f64>,
    /// (predicted − measured) / measured.
    pub error: Option<f64>,
    /// The run-to-run spread of the point's repeats, fastest / slowest − 1
    /// (the noise floor its error is judged against); None for one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// Requests per device command the counters showed (median of the
    /// repeats; device-wide), where recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<f64>,
    /// For a held-out point, the merge factor the prediction used: the
    /// rule's from the fitted points' counts (`QueueFit::merge_at`), never
    /// the point's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_used: Option<f64>,
    /// The error of the same fit without the merge counts (every point
    /// one request per command, the model before them), when there were
    /// counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_without_merges: Option<f64>,
}

/// How well the fit predicts the points it did not see.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOutReport {
    pub rule: String,
    pub points: Vec<HeldPoint>,
    /// Median and largest |error| over the predicted points.
    pub median_error: Option<f64>,
    pub worst_error: Option<f64>,
    /// Held-out points the fit cannot predict (a kind of request it has no
    /// fitted points of).
    pub not_predicted: usize,
    /// Median and largest run-to-run spread of the held-out points measured
    /// more than once: an error below the spread is within the noise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_spread: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_spread: Option<f64>,
    /// The median and worst error of the same fit without the merge counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_error_without_merges: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_error_without_merges: Option<f64>,
}

/// Fastest / slowest − 1 over `iops` (two or more runs of one point).
pub fn spread(iops: &[f64]) -> Option<f64> {
    let lo = iops.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = iops.iter().copied().fold(0.0, f64::max);
    (iops.len() > 1 && lo > 0.0).then(|| hi / lo - 1.0)
}

impl HeldOutReport {
    /// Each point's error in `before` (the same points fitted without
    /// merge counts) beside its own.
    pub fn compare_with(&mut self, before: &HeldOutReport) {
        for p in &mut self.points {
            p.error_without_merges = before
                .points
                .iter()
                .find(|b| {
                    (b.write, b.random, b.request_bytes, b.in_flight)
                        == (p.write, p.random, p.request_bytes, p.in_flight)
                })
                .and_then(|b| b.error);
        }
        self.median_error_without_merges = before.median_error;
        self.worst_error_without_merges = before.worst_error;
    }

    /// Each point's run-to-run spread from `raw`, every repeat measured
    /// (before repeats are reduced to their median or their best).
    pub fn with_spread(mut self, raw: &[&Observation]) -> HeldOutReport {
        for p in &mut self.points {
            let runs: Vec<f64> = raw
                .iter()
                .filter(|o| {
                    (o.write, o.random, o.request_bytes, o.in_flight)
                        == (p.write, p.random, p.request_bytes, p.in_flight)
                })
                .map(|o| o.iops)
                .collect();
            p.spread = spread(&runs);
        }
        let sp: Vec<f64> = self.points.iter().filter_map(|p| p.spread).collect();
        self.worst_spread = sp.iter().copied().max_by(f64::total_cmp);
        self.median_spread = median(sp);
        self
    }
}

/// The median of `v` (mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The distinct points of `obs` (direction, pattern, size, in flight), in
/// the order first measured, each with the median of its repeats.
pub fn points(obs: &[&Observation]) -> Vec<HeldPoint> {
    let key = |o: &Observation| (o.write, o.random, o.request_bytes, o.in_flight);
    let mut out: Vec<HeldPoint> = Vec::new();
    for o in obs {
        if out
            .iter()
            .any(|p| (p.write, p.random, p.request_bytes, p.in_flight) == key(o))
        {
            continue;
        }
        let same: Vec<f64> = obs
            .iter()
            .filter(|x| key(x) == key(o))
            .map(|x| x.iops)
            .collect();
        let merges: Vec<f64> = obs
            .iter()
            .filter(|x| key(x) == key(o))
            .filter_map(|x| x.merge)
            .collect();
        out.push(HeldPoint {
            label: o.label.clone(),
            write: o.write,
            random: o.random,
            request_bytes: o.request_bytes,
            in_flight: o.in_flight,
            repeats: same.len(),
            measured_iops: median(same).unwrap_or(0.0),
            predicted_iops: None,
            error: None,
            spread: None,
            merge: median(merges),
            merge_used: None,
            error_without_merges: None,
        });
    }
    out
}

/// The held-out observations' points predicted by the fit.
pub fn report(
    rule: String,
    held: &[&Observation],
    read: &DirectionFit,
    write: &DirectionFit,
) -> HeldOutReport {
    let mut pts = points(held);
    for p in &mut pts {
        let f = if p.write { write } else { read };
        p.predicted_iops = f.predict(p.random, p.request_bytes, p.in_flight);
        let q = if p.random {
            &f.random_queue
        } else {
            &f.sequential_queue
        };
        p.merge_used = q
            .as_ref()
            .filter(|q| !q.merges.is_empty())
            .map(|q| q.merge_at(p.request_bytes as f64, p.in_flight));
        p.error = p
            .predicted_iops
            .and_then(|x| crate::against::relative_error(x, p.measured_iops));
    }
    let errs: Vec<f64> = pts.iter().filter_map(|p| p.error.map(f64::abs)).collect();
    HeldOutReport {
        rule,
        not_predicted: pts.len() - errs.len(),
        worst_error: errs.iter().copied().max_by(f64::total_cmp),
        median_error: median(errs),
        points: pts,
        median_spread: None,
        worst_spread: None,
        median_error_without_merges: None,
        worst_error_without_merges: None,
    }
}

fn kind(write: bool, random: bool) -> &'static str {
    match (write, random) {
        (false, false) => "sequential read",
        (false, true) => "random read",
        (true, false) => "sequential write",
        (true, true) => "random write",
    }
}

/// The queue-depth fits and the held-out table, for `plan calibrate`'s text.
pub fn render(cal: &Calibration, st: Style) -> String {
    let mut out = render_fits(cal, st);
    if let Some(h) = &cal.held_out {
        render_held_out(h, st, &mut out);
    }
    out
}

/// The queue-depth fits' table (empty without a queue-depth sweep).
fn render_fits(cal: &Calibration, st: Style) -> String {
    let mut out = String::new();
    let fits: Vec<_> = [(false, &cal.read), (true, &cal.write)]
        .into_iter()
        .flat_map(|(w, f)| {
            [(false, &f.sequential_queue), (true, &f.random_queue)]
                .into_iter()
                .filter_map(move |(r, q)| q.as_ref().map(|q| (kind(w, r), q)))
        })
        .collect();
    if !fits.is_empty() {
        out.push_str(
            "\nconcurrency (queue-depth sweep, MVA: latency L = Z + S alone, 1/S saturated, knee L/S)\n",
        );
        let mut t = st.table();
        t.set_header(vec![
            "requests",
            "latency L",
            "demand S",
            "knee (in flight)",
            "points",
            "rms error",
        ]);
        // A transfer term under 0.1 µs per MiB is none the fit could see.
        let time = |s: f64, r: Option<f64>| match r {
            Some(r) if r < 1e13 => format!("{:.3} ms + size / {}", s * 1e3, format_rate(r)),
            _ => format!("{:.3} ms", s * 1e3),
        };
        for (k, q) in fits {
            let knees: Vec<String> = q
                .knees
                .iter()
                .map(|(b, n)| format!("{n:.1} at {}", format_bytes(*b)))
                .collect();
            t.add_row(vec![
                k.to_string(),
                time(q.latency_s, q.latency_bytes_per_s),
                demand_cell(q, &time),
                knees.join(", "),
                format!("{} (QD {}..{})", q.points, q.min_in_flight, q.max_in_flight),
                format!("{:.1}%", q.rms_log_error * 100.0),
            ]);
        }
        out.push_str(&st.show(&t));
        out.push('\n');
    }
    out
}

/// The held-out points' table, then their summary lines.
fn render_held_out(h: &HeldOutReport, st: Style, out: &mut String) {
    out.push_str(&format!("\nheld out ({}): predicted, not fitted\n", h.rule));
    let mut t = st.table();
    t.set_header(vec![
        "point",
        "requests",
        "size",
        "in flight",
        "measured IOPS",
        "predicted IOPS",
        "error",
        "spread",
        "merged (counted / used)",
    ]);
    for p in &h.points {
        t.add_row(vec![
            if p.repeats > 1 {
                format!("{} (median of {})", p.label, p.repeats)
            } else {
                p.label.clone()
            },
            kind(p.write, p.random).to_string(),
            format_bytes(p.request_bytes),
            p.in_flight.to_string(),
            format!("{:.0}", p.measured_iops),
            p.predicted_iops
                .map_or("-".to_string(), |x| format!("{x:.0}")),
            p.error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0)),
            p.spread
                .map_or("-".to_string(), |e| format!("{:.1}%", e * 100.0)),
            match (p.merge, p.merge_used) {
                (None, None) => "-".to_string(),
                (c, u) => format!(
                    "{} / {}",
                    c.map_or("-".into(), |m| format!("{m:.2}")),
                    u.map_or("-".into(), |m| format!("{m:.2}"))
                ),
            },
        ]);
    }
    out.push_str(&st.show(&t));
    out.push('\n');
    render_held_out_summary(h, out);
}

/// The held-out error, the noise floor beside it, what the merge counts
/// moved, and the points not predicted.
fn render_held_out_summary(h: &HeldOutReport, out: &mut String) {
    if let (Some(m), Some(w)) = (h.median_error, h.worst_error) {
        out.push_str(&format!(
            "held-out error over {} points: median {:.1}%, worst {:.1}%\n",
            h.points.len() - h.not_predicted,
            m * 100.0,
            w * 100.0
        ));
    }
    if let (Some(m), Some(w)) = (h.median_spread, h.worst_spread) {
        out.push_str(&format!(
            "run-to-run spread of the same points (fastest / slowest repeat - 1, the noise floor): median {:.1}%, worst {:.1}%\n",
            m * 100.0,
            w * 100.0
        ));
    }
    if let (Some(m), Some(w)) = (h.median_error_without_merges, h.worst_error_without_merges) {
        out.push_str(&format!(
            "without the merge counts (one request per device command, the model before): median {:.1}%, worst {:.1}%\n",
            m * 100.0,
            w * 100.0
        ));
        let moved: Vec<String> = h
            .points
            .iter()
            .filter_map(|p| {
                let (now, before) = (p.error?.abs(), p.error_without_merges?.abs());
                ((now - before).abs() >= 0.01).then(|| {
                    format!(
                        "  {} {} {} QD {}: {:.1}% -> {:.1}%",
                        if now < before { "improved" } else { "worse   " },
                        kind(p.write, p.random),
                        format_bytes(p.request_bytes),
                        p.in_flight,
                        before * 100.0,
                        now * 100.0
                    )
                })
            })
            .collect();
        let better = moved.iter().filter(|l| l.contains("improved")).count();
        out.push_str(&format!(
            "held-out points the merge counts moved by 1 point or more: {} improved, {} worse\n",
            better,
            moved.len() - better
        ));
        for l in moved {
            out.push_str(&l);
            out.push('\n');
        }
    }
    if h.not_predicted > 0 {
        out.push_str(&format!(
            "{} held-out point(s) not predicted: the fit has no points of their kind of request\n",
            h.not_predicted
        ));
    }
}

/// The demand column of the knee table: the device's demand and, where
/// fitted, the host's cost per request and per call and the merge counts.
fn demand_cell(q: &QueueFit, time: &dyn Fn(f64, Option<f64>) -> String) -> String {
    let device = time(q.demand_s, q.demand_bytes_per_s);
    let Some(h) = q.host_s else {
        return device;
    };
    let merged: Vec<String> = q
        .merges
        .iter()
        .filter(|m| m.factor > super::MERGING)
        .map(|m| {
            format!(
                "{:.1}x at {} QD {}",
                m.factor,
                format_bytes(m.bytes),
                m.in_flight
            )
        })
        .collect();
    let call = q
        .host_call_s
        .map(|c| format!(" + {:.4} ms per call", c * 1e3))
        .unwrap_or_default();
    let per = if merged.is_empty() {
        ""
    } else {
        " per command"
    };
    let counted = if merged.is_empty() {
        String::new()
    } else {
        format!(" (merged: counted {})", merged.join(", "))
    };
    format!(
        "{device}{per}; host {:.4} ms per request{call}{counted}",
        h * 1e3
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ob(write: bool, random: bool, kb: u64, n: u32) -> Observation {
        Observation {
            label: format!("{kb}k-qd{n}"),
            write,
            random,
            request_bytes: kb << 10,
            in_flight: n,
            iops: 1000.0,
            merge: None,
        }
    }

    #[test]
    fn alternate_is_a_checkerboard_per_direction_and_pattern() {
        let mut obs = Vec::new();
        for (w, r) in [(false, true), (true, false)] {
            for kb in [4, 64, 1024] {
                for n in [1, 4, 32] {
                    obs.push(ob(w, r, kb, n));
                }
            }
        }
        // A repeat of 64k qd4 (held out: 1 + 1 even -> fitted).
        obs.push(ob(false, true, 64, 4));
        let refs: Vec<&Observation> = obs.iter().collect();
        let h = HoldOut {
            sizes: Vec::new(),
            alternate: true,
        };
        let m = h.mask(&refs);
        let held: Vec<String> = refs
            .iter()
            .zip(&m)
            .filter(|(o, _)| !o.write)
            .filter(|(_, h)| **h)
            .map(|(o, _)| o.label.clone())
            .collect();
        assert_eq!(held, ["4k-qd4", "64k-qd1", "64k-qd32", "1024k-qd4"]);
        // Same split for the other kind; the repeat follows its point.
        assert_eq!(m.iter().filter(|x| **x).count(), 8);
        assert!(!m[m.len() - 1]);
        assert!(HoldOut::default().mask(&refs).iter().all(|x| !x));
        assert!(
            HoldOut::sizes(&[4096])
                .mask(&refs)
                .iter()
                .filter(|x| **x)
                .count()
                == 6
        );
    }

    #[test]
    fn repeats_count_by_their_median() {
        let mut obs = [
            ob(false, true, 4, 1),
            ob(false, true, 4, 1),
            ob(false, true, 4, 1),
        ];
        obs[1].iops = 5000.0;
        obs[2].iops = 900.0;
        let refs: Vec<&Observation> = obs.iter().collect();
        let p = points(&refs);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].repeats, p[0].measured_iops), (3, 1000.0));
        assert_eq!(median(vec![1.0, 3.0]), Some(2.0));
        assert_eq!(median(Vec::new()), None);
    }
}
