//! Calibration: fit a catalog entry to the user's own measurements.
//!
//! The model serves one request on a device in `o + b/R` seconds
//! (per-command overhead o, streaming rate R, request of b bytes) and a
//! small random request in at least `1/IOPS` (docs/MODEL.md §3.1). Given
//! measured runs of one device — a block-size sweep for the streaming rate
//! and the overhead, random runs for the IOPS, reads and writes apart —
//! [`calibrate`] fits those figures by least squares on the latency
//! `in flight / IOPS = o + b/R` (Little's law; a sweep at QD 1 is best),
//! reports the fit error point by point, optionally predicts points it was
//! not fitted on (`hold_out`), and names every figure the data could not
//! identify instead of inventing it. [`Calibration::to_toml`] writes the
//! result as a user catalog entry.

mod holdout;
mod queue;

pub use holdout::{HeldOutReport, HeldPoint, HoldOut, median, render as render_knee_and_held_out};
pub use queue::{
    HostCentre, HostParams, MERGING, MergePoint, QdPoint, QueueFit, merge_rule, mva, mva_centres,
    mva_host,
};

use crate::PlanError;
use crate::against::{mean_abs, relative_error};
use crate::hardware::{Access, ControllerSpec, DriveSpec};
use serde::Serialize;

/// One measured phase, reduced to what the fit uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// Where it came from, e.g. `run 12 phase read-64k`.
    pub label: String,
    pub write: bool,
    pub random: bool,
    pub request_bytes: u64,
    /// Requests kept in flight (jobs x queue depth).
    pub in_flight: u32,
    /// Measured requests per second.
    pub iops: f64,
    /// Requests per device command the block layer's counters showed over
    /// the phase (`device_stat`; device-wide); `None` where not recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<f64>,
}

/// What the fit found for one direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DirectionFit {
    /// Streaming rate R, bytes/s.
    pub rate_bytes_per_s: Option<f64>,
    /// Per-command overhead o, seconds.
    pub cmd_overhead_s: Option<f64>,
    /// Random IOPS at the smallest random request measured.
    pub iops: Option<f64>,
    /// Request size that IOPS was measured at.
    pub iops_request_bytes: Option<u64>,
    /// Sequential points the fit used.
    pub sequential_points: usize,
    /// Highest sequential throughput measured, bytes/s (a controller's
    /// path limit is at least this).
    pub max_bytes_per_s: Option<f64>,
    /// Streaming capacity with the deepest queue measured: the larger of R
    /// and the highest throughput measured, bytes/s.
    pub capacity_bytes_per_s: Option<f64>,
    /// Random requests at two or more sizes, deepest queue: the device's
    /// time per random request `a + b/Rr` (1 / IOPS) — its fixed part a
    /// (seek, rotation, command: the per-command overhead of random work)…
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_op_s: Option<f64>,
    /// … and its transfer rate Rr, bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_rate_bytes_per_s: Option<f64>,
    /// Random requests at two or more sizes, shallowest queue: the unloaded
    /// latency `a' + b/Rr'` (in flight / IOPS), its fixed part, s …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_latency_s: Option<f64>,
    /// … and its transfer rate, bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_latency_rate_bytes_per_s: Option<f64>,
    /// Random sizes the fit used.
    #[serde(skip_serializing_if = "is_zero")]
    pub random_points: usize,
    /// Sequential runs at two or more depths: the concurrency knee, a
    /// closed queueing model solved by MVA ([`QueueFit`]); predicts every
    /// sequential point it covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential_queue: Option<QueueFit>,
    /// The same for random runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_queue: Option<QueueFit>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl DirectionFit {
    /// Requests per second the fitted device serves with `in_flight`
    /// requests outstanding, if the fit covers it: at most the device's
    /// capacity (R / b streaming, the IOPS for small random requests) and at
    /// most in_flight / latency, latency = o + b/R (Little's law).
    pub fn predict(&self, random: bool, bytes: u64, in_flight: u32) -> Option<f64> {
        // A queue-depth sweep: its MVA curve, the knee included.
        let queue = if random {
            &self.random_queue
        } else {
            &self.sequential_queue
        };
        if let Some(x) = queue.as_ref().and_then(|q| q.predict(bytes, in_flight)) {
            return Some(x);
        }
        let b = bytes as f64;
        if random && let (Some(a), Some(r)) = (self.random_op_s, self.random_rate_bytes_per_s) {
            // A random sweep at several sizes: capacity 1 / (a + b/Rr), and
            // by Little's law in flight / (a' + b/Rr') below the knee.
            let capacity = 1.0 / (a + b / r);
            let little = match (self.random_latency_s, self.random_latency_rate_bytes_per_s) {
                (Some(la), Some(lr)) => f64::from(in_flight.max(1)) / (la + b / lr),
                _ => f64::INFINITY,
            };
            return Some(capacity.min(little));
        }
        let latency = self
            .rate_bytes_per_s
            .map(|r| self.cmd_overhead_s.unwrap_or(0.0) + b / r);
        let little = latency.map(|l| f64::from(in_flight.max(1)) / l);
        let capacity = if random {
            match (self.iops, self.rate_bytes_per_s) {
                (Some(i), Some(r)) => Some(i.min(r / b)),
                (Some(i), None) => (bytes <= self.iops_request_bytes.unwrap_or(0)).then_some(i),
                _ => None,
            }
        } else {
            self.capacity_bytes_per_s
                .or(self.rate_bytes_per_s)
                .map(|r| r / b)
        };
        match (capacity, little) {
            (Some(c), Some(l)) => Some(c.min(l)),
            (Some(c), None) => Some(c),
            _ => None,
        }
    }
}

/// One point against the fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitPoint {
    pub label: String,
    pub measured_iops: f64,
    pub predicted_iops: Option<f64>,
    /// (predicted − measured) / measured.
    pub error: Option<f64>,
    /// Used in the fit (false: held out, a repeat other than the median,
    /// or below the deepest queue measured at its size).
    pub fitted: bool,
    /// Left out of the fit on purpose (`hold_out`) and predicted.
    pub held_out: bool,
}

/// The result of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub name: String,
    pub read: DirectionFit,
    pub write: DirectionFit,
    /// Figures the data could not identify, with what would identify them.
    pub not_identified: Vec<String>,
    pub points: Vec<FitPoint>,
    /// Mean |error| over the fitted points.
    pub fit_error: Option<f64>,
    /// Mean |error| of the prediction for each held-out size against the
    /// median of its repeats.
    pub held_out_error: Option<f64>,
    /// Every held-out point predicted, with the median and worst error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_out: Option<HeldOutReport>,
}

/// Least squares of y = a + s x in relative terms (weights 1/y², so a
/// 4 KiB point counts as much as a 1 MiB one); `None` without two distinct x.
fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let w: Vec<f64> = points.iter().map(|p| 1.0 / (p.1 * p.1)).collect();
    let sw: f64 = w.iter().sum();
    let mx = points.iter().zip(&w).map(|(p, w)| w * p.0).sum::<f64>() / sw;
    let my = points.iter().zip(&w).map(|(p, w)| w * p.1).sum::<f64>() / sw;
    let sxx: f64 = points
        .iter()
        .zip(&w)
        .map(|(p, w)| w * (p.0 - mx).powi(2))
        .sum();
    if sxx <= 1e-12 * sw * mx * mx {
        return None;
    }
    let sxy: f64 = points
        .iter()
        .zip(&w)
        .map(|(p, w)| w * (p.0 - mx) * (p.1 - my))
        .sum();
    let s = sxy / sxx;
    Some((my - s * mx, s))
}

/// For each (direction, pattern, size) the observation with the most in
/// flight (the model's capacities are saturation figures); of repeats at
/// that depth, the median.
fn saturated(obs: &[&Observation]) -> Vec<usize> {
    pick(obs, true)
}

/// For each (direction, pattern, size) the observation at the deepest (or
/// shallowest) queue measured; of repeats at that depth, the median.
fn pick(obs: &[&Observation], deepest: bool) -> Vec<usize> {
    let key = |o: &Observation| (o.write, o.random, o.request_bytes);
    let mut keys: Vec<(bool, bool, u64)> = Vec::new();
    for o in obs {
        if !keys.contains(&key(o)) {
            keys.push(key(o));
        }
    }
    keys.iter()
        .map(|k| {
            let depths = obs.iter().filter(|o| key(o) == *k).map(|o| o.in_flight);
            let depth = if deepest { depths.max() } else { depths.min() }.unwrap_or(1);
            let mut same: Vec<usize> = (0..obs.len())
                .filter(|&i| key(obs[i]) == *k && obs[i].in_flight == depth)
                .collect();
            same.sort_by(|&a, &b| obs[a].iops.total_cmp(&obs[b].iops));
            same[same.len() / 2]
        })
        .collect()
}

/// `shallow`: per size the shallowest queue (its latency is closest to
/// the unloaded one); `deep`: per size the deepest (capacities).
fn fit_direction(shallow: &[&Observation], deep: &[&Observation], write: bool) -> DirectionFit {
    let obs = deep;
    let mut f = DirectionFit::default();
    let seq: Vec<(f64, f64)> = shallow
        .iter()
        .filter(|o| o.write == write && !o.random)
        // Latency by Little's law: in flight / throughput (exact at QD 1).
        .map(|o| {
            (
                o.request_bytes as f64,
                f64::from(o.in_flight.max(1)) / o.iops,
            )
        })
        .collect();
    f.sequential_points = seq.len();
    f.max_bytes_per_s = obs
        .iter()
        .filter(|o| o.write == write && !o.random)
        .map(|o| o.iops * o.request_bytes as f64)
        .max_by(f64::total_cmp);
    match line(&seq) {
        Some((o, s)) if s > 0.0 && o >= 0.0 => {
            f.cmd_overhead_s = Some(o);
            f.rate_bytes_per_s = Some(1.0 / s);
        }
        _ if !seq.is_empty() => {
            // One size, or a negative intercept (noise): the best rate
            // with no overhead.
            let sb: f64 = seq.iter().map(|p| p.0 * p.0).sum();
            let sby: f64 = seq.iter().map(|p| p.0 * p.1).sum();
            f.rate_bytes_per_s = Some(sb / sby);
        }
        _ => {}
    }
    // Deep queues may stream faster than one request at a time does (an
    // SSD's parallelism): the capacity is then the fastest measured, while
    // o + b/R from the shallow queues stays the latency.
    f.capacity_bytes_per_s = match (f.rate_bytes_per_s, f.max_bytes_per_s) {
        (Some(r), Some(best)) => Some(r.max(best)),
        (r, best) => r.or(best),
    };
    if let Some(o) = obs
        .iter()
        .filter(|o| o.write == write && o.random)
        .min_by_key(|o| o.request_bytes)
    {
        f.iops = Some(o.iops);
        f.iops_request_bytes = Some(o.request_bytes);
    }
    fit_random(&mut f, shallow, deep, write);
    f
}

/// Time per request against its size, `t = a + b/R`, from random runs at
/// two or more sizes: at the deepest queue 1/IOPS (the device's capacity),
/// at the shallowest in flight/IOPS (the unloaded latency, Little's law).
/// A positive slope and a non-negative intercept, or nothing.
fn fit_random(f: &mut DirectionFit, shallow: &[&Observation], deep: &[&Observation], write: bool) {
    let points = |set: &[&Observation], little: bool| -> Vec<(f64, f64)> {
        set.iter()
            .filter(|o| o.write == write && o.random)
            .map(|o| {
                let q = if little {
                    f64::from(o.in_flight.max(1))
                } else {
                    1.0
                };
                (o.request_bytes as f64, q / o.iops)
            })
            .collect()
    };
    let cap = points(deep, false);
    f.random_points = cap.len();
    if let Some((a, s)) = line(&cap).filter(|&(a, s)| a >= 0.0 && s > 0.0) {
        f.random_op_s = Some(a);
        f.random_rate_bytes_per_s = Some(1.0 / s);
        if let Some((la, ls)) = line(&points(shallow, true)).filter(|&(a, s)| a >= 0.0 && s > 0.0) {
            f.random_latency_s = Some(la);
            f.random_latency_rate_bytes_per_s = Some(1.0 / ls);
        }
    }
}

/// Fit a device to measured phases. `hold_out`: request sizes to leave
/// out of the fit and predict instead.
pub fn calibrate(
    name: &str,
    obs: &[Observation],
    hold_out: &[u64],
) -> Result<Calibration, PlanError> {
    calibrate_with(name, obs, &HoldOut::sizes(hold_out), Repeats::Median)
}

/// The concurrency knee of each direction and pattern with two or more
/// depths among `fit_set` (repeats by their median).
fn fit_queues(fit_set: &[&Observation], read: &mut DirectionFit, write: &mut DirectionFit) {
    for (w, f) in [(false, read), (true, write)] {
        for random in [false, true] {
            let pts: Vec<QdPoint> = holdout::points(fit_set)
                .into_iter()
                .filter(|p| p.write == w && p.random == random)
                .map(|p| QdPoint {
                    bytes: p.request_bytes as f64,
                    in_flight: p.in_flight,
                    iops: p.measured_iops,
                    // Random requests are not merged (the counted table,
                    // docs/MODEL.md §8): their device-wide counts only carry
                    // other programs' merged I/O.
                    merge: if random { 1.0 } else { p.merge.unwrap_or(1.0) },
                })
                .collect();
            let q = queue::fit(&pts);
            if random {
                f.random_queue = q;
            } else {
                f.sequential_queue = q;
            }
        }
    }
}

/// What the runs cannot identify, with what would.
fn unidentified(read: &DirectionFit, write: &DirectionFit) -> Vec<String> {
    let mut not_identified = Vec::new();
    for (dir, f) in [("read", read), ("write", write)] {
        if f.rate_bytes_per_s.is_none() {
            not_identified.push(format!(
                "{dir} streaming rate (needs sequential {dir} runs)"
            ));
        }
        if f.cmd_overhead_s.is_none() {
            not_identified.push(format!(
                "{dir} per-command overhead (needs sequential {dir} runs at two or more block sizes)"
            ));
        }
        if f.iops.is_none() {
            not_identified.push(format!("{dir} IOPS (needs a random {dir} run)"));
        } else if f.random_op_s.is_none() {
            not_identified.push(format!(
                "{dir} random request time against size (needs random {dir} runs at two or more block sizes)"
            ));
        }
        for (kind, q, random) in [
            ("sequential", &f.sequential_queue, false),
            ("random", &f.random_queue, true),
        ] {
            let has_runs = if random {
                f.iops.is_some()
            } else {
                f.rate_bytes_per_s.is_some()
            };
            if has_runs && q.is_none() {
                not_identified.push(format!(
                    "{dir} {kind} concurrency knee (needs {kind} {dir} runs at two or more queue depths)"
                ));
            }
        }
    }
    not_identified.push(
        "rpm and seek time (the entry describes the device by its measured figures)".to_string(),
    );
    not_identified.push(
        "capacity, MTBF, error rate, sector size and rebuild rate (performance runs say nothing about them)"
            .to_string(),
    );
    not_identified
}

/// How repeats of one point (direction, pattern, size, requests in flight)
/// count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Repeats {
    /// Their median: robust to an outlier either way.
    #[default]
    Median,
    /// The fastest: on a shared machine other programs only ever slow a
    /// run down, so the best of several is the closest to the device alone
    /// (the rule `timeit` uses for the same reason).
    Best,
}

/// `obs` with every point's repeats reduced to the fastest, labelled
/// `(best of N)`.
fn best_of(obs: &[&Observation]) -> Vec<Observation> {
    let key = |o: &Observation| (o.write, o.random, o.request_bytes, o.in_flight);
    let mut out: Vec<Observation> = Vec::new();
    for o in obs {
        if out.iter().any(|x| key(x) == key(o)) {
            continue;
        }
        let same: Vec<&&Observation> = obs.iter().filter(|x| key(x) == key(o)).collect();
        let best = same
            .iter()
            .copied()
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .unwrap_or(o);
        let mut b = (*best).clone();
        if same.len() > 1 {
            b.label = format!("{} (best of {})", b.label, same.len());
        }
        out.push(b);
    }
    out
}

/// [`calibrate`] with any [`HoldOut`] rule (sizes, or alternate points of
/// the size × depth grid) and either rule for [`Repeats`].
pub fn calibrate_with(
    name: &str,
    obs: &[Observation],
    hold_out: &HoldOut,
    repeats: Repeats,
) -> Result<Calibration, PlanError> {
    let valid: Vec<&Observation> = obs
        .iter()
        .filter(|o| o.iops.is_finite() && o.iops > 0.0 && o.request_bytes > 0)
        .collect();
    let valid_all = valid.clone();
    let reduced;
    let usable: Vec<&Observation> = match repeats {
        Repeats::Median => valid,
        Repeats::Best => {
            reduced = best_of(&valid);
            reduced.iter().collect()
        }
    };
    if usable.is_empty() {
        return Err(PlanError::invalid(
            "calibration",
            "no phase with I/O to fit; give runs of pure reads or writes (a block-size sweep, random runs)",
        ));
    }
    let mask = hold_out.mask(&usable);
    let is_held = |o: &Observation| {
        usable
            .iter()
            .zip(&mask)
            .any(|(x, &m)| m && std::ptr::eq(*x, o))
    };
    let (held, fit_set): (Vec<&Observation>, Vec<&Observation>) =
        usable.iter().copied().partition(|o| is_held(o));
    if fit_set.is_empty() {
        return Err(PlanError::invalid(
            "calibration",
            "--hold-out leaves no phase to fit; hold out fewer sizes",
        ));
    }
    let deep: Vec<&Observation> = saturated(&fit_set).iter().map(|&i| fit_set[i]).collect();
    let shallow: Vec<&Observation> = pick(&fit_set, false).iter().map(|&i| fit_set[i]).collect();
    let mut read = fit_direction(&shallow, &deep, false);
    let mut write = fit_direction(&shallow, &deep, true);
    fit_queues(&fit_set, &mut read, &mut write);
    let mut fitted = deep.clone();
    fitted.extend(shallow.iter().copied().filter(|o| {
        !o.random
            || (if o.write { &write } else { &read })
                .random_latency_s
                .is_some()
    }));
    let not_identified = unidentified(&read, &write);
    let mut points = Vec::new();
    for o in &usable {
        let f = if o.write { &write } else { &read };
        let predicted = f.predict(o.random, o.request_bytes, o.in_flight);
        let queue = if o.random {
            &f.random_queue
        } else {
            &f.sequential_queue
        };
        let held_out = is_held(o);
        points.push(FitPoint {
            label: o.label.clone(),
            measured_iops: o.iops,
            predicted_iops: predicted,
            error: predicted.and_then(|p| relative_error(p, o.iops)),
            // A queue fit takes every point (repeats by their median).
            fitted: !held_out && (queue.is_some() || fitted.iter().any(|x| std::ptr::eq(*x, *o))),
            held_out,
        });
    }
    let fit_error =
        mean_abs(points.iter().filter(|p| p.fitted).filter_map(|p| p.error)).map(|m| m.0);
    // Held-out sizes: the prediction against the median of their repeats.
    let held_out_error = mean_abs(saturated(&held).into_iter().filter_map(|i| {
        let o = held[i];
        let f = if o.write { &write } else { &read };
        relative_error(f.predict(o.random, o.request_bytes, o.in_flight)?, o.iops)
    }))
    .map(|m| m.0);
    let mut held_out = (!hold_out.is_empty())
        .then(|| holdout::report(hold_out.rule(), &held, &read, &write).with_spread(&valid_all));
    // With merge counts: the same fit without them (the model before the
    // counters), so the report shows which held-out points they improved.
    if let Some(h) = held_out.as_mut()
        && obs.iter().any(|o| o.merge.is_some_and(|m| m > MERGING))
    {
        let blind: Vec<Observation> = obs
            .iter()
            .map(|o| Observation {
                merge: None,
                ..o.clone()
            })
            .collect();
        if let Some(before) = calibrate_with(name, &blind, hold_out, repeats)?.held_out {
            h.compare_with(&before);
        }
    }
    Ok(Calibration {
        name: name.to_string(),
        read,
        write,
        not_identified,
        fit_error,
        held_out_error,
        held_out,
        points,
    })
}

fn mbs(x: f64) -> String {
    format!("{:.1}MB/s", x / 1e6)
}

impl Calibration {
    /// The result as a controller (or array) entry: read- and write-path
    /// limits and the IOPS limit are the highest throughput and IOPS
    /// measured, so at least what the controller does (the drives behind it
    /// may have bound the runs: then the real limits are higher, and the
    /// entry is conservative). Links, cache and drive limit come from
    /// `like`, and `source` says which figures are which.
    pub fn to_controller_toml(&self, like: &ControllerSpec, runs: &str) -> String {
        let mut lines = Vec::new();
        let mut measured = Vec::new();
        if let Some(r) = self.read.max_bytes_per_s {
            lines.push(format!("max_read = \"{}\"", mbs(r)));
            measured.push("max_read");
        }
        if let Some(w) = self.write.max_bytes_per_s {
            lines.push(format!("max_write = \"{}\"", mbs(w)));
            measured.push("max_write");
        }
        let iops = [self.read.iops, self.write.iops]
            .into_iter()
            .flatten()
            .max_by(f64::total_cmp);
        if let Some(i) = iops {
            lines.push(format!("max_iops = {i:.0}"));
            measured.push("max_iops");
        }
        let missing: Vec<&str> = ["max_read", "max_write", "max_iops"]
            .into_iter()
            .filter(|m| !measured.contains(m))
            .collect();
        let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut source = format!(
            "measured by storlab plan calibrate from {runs}: {} = the highest throughput / IOPS measured (lower bounds of the limits)",
            if measured.is_empty() {
                "nothing".to_string()
            } else {
                measured.join(", ")
            }
        );
        if !missing.is_empty() {
            source.push_str(&format!("; not identified: {}", missing.join(", ")));
        }
        source.push_str(&format!(
            "; links, write-back cache and drive limit from {}",
            like.name
        ));
        let mut out = format!(
            "# Written by storlab plan calibrate; use with --catalog FILE --controller {name}\n\
             [[controller]]\n\
             name = \"{name}\"\n\
             description = \"{desc}\"\n",
            name = q(&self.name),
            desc = q(&format!("calibrated from {runs}")),
        );
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.push_str(&format!(
            "write_back = {}\nbackend = \"{}\"\nhost = \"{}\"\n",
            like.write_back, like.backend.name, like.host.name
        ));
        if let Some(m) = like.max_drives {
            out.push_str(&format!("max_drives = {m}\n"));
        }
        if like.parity_on_controller {
            // Still a RAID-on-chip: without a measured write figure its
            // parity writes stay upper bounds.
            out.push_str("parity_on_controller = true\n");
        }
        out.push_str(&format!("source = \"{}\"\n", q(&source)));
        out
    }

    /// The catalog entry: a device described by its measured figures
    /// (`kind = "ssd"`: IOPS and streaming rates), the figures the runs
    /// could not give taken from `like` and named as such in `source`.
    pub fn to_toml(&self, like: &DriveSpec, runs: &str) -> String {
        let mut borrowed = Vec::new();
        let mut pick = |v: Option<f64>, what: &str, fallback: f64| {
            v.unwrap_or_else(|| {
                borrowed.push(what.to_string());
                fallback
            })
        };
        let r_iops = pick(
            self.read.iops,
            "read IOPS",
            1.0 / like.op_time(false, 4096.0, Access::Random),
        );
        let w_iops = pick(
            self.write.iops,
            "write IOPS",
            1.0 / like.op_time(true, 4096.0, Access::Random),
        );
        let seq_of = |w: bool| match &like.media {
            crate::hardware::DriveMedia::Hdd {
                seq_bytes_per_s, ..
            } => *seq_bytes_per_s,
            crate::hardware::DriveMedia::Ssd {
                seq_read_bytes_per_s,
                seq_write_bytes_per_s,
                ..
            } => {
                if w {
                    *seq_write_bytes_per_s
                } else {
                    *seq_read_bytes_per_s
                }
            }
        };
        let r_seq = pick(self.read.capacity_bytes_per_s, "read rate", seq_of(false));
        let w_seq = pick(self.write.capacity_bytes_per_s, "write rate", seq_of(true));
        let overheads: Vec<f64> = [self.read.cmd_overhead_s, self.write.cmd_overhead_s]
            .into_iter()
            .flatten()
            .collect();
        let overhead = if overheads.is_empty() {
            borrowed.push("per-command overhead".to_string());
            like.cmd_overhead_s
        } else {
            overheads.iter().sum::<f64>() / overheads.len() as f64
        };
        let err = self.fit_error.map_or("no fitted point".to_string(), |e| {
            format!("mean fit error {:.1}%", e * 100.0)
        });
        let mut source = format!("fitted by storlab plan calibrate from {runs} ({err})");
        if !borrowed.is_empty() {
            source.push_str(&format!(
                "; not identified, taken from {}: {}",
                like.name,
                borrowed.join(", ")
            ));
        }
        source.push_str(&format!(
            "; capacity, MTBF, error rate, sector size and rebuild rate from {}",
            like.name
        ));
        let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = format!(
            "# Written by storlab plan calibrate; use with --catalog FILE --drive {name}\n\
             [[drive]]\n\
             name = \"{name}\"\n\
             description = \"{desc}\"\n\
             kind = \"ssd\"\n\
             capacity = \"{cap}\"\n\
             read_iops = {r_iops:.1}\n\
             write_iops = {w_iops:.1}\n\
             seq_read = \"{sr}\"\n\
             seq_write = \"{sw}\"\n\
             cmd_overhead = \"{oh:.4}ms\"\n\
             mtbf = \"{mtbf:.0}h\"\n\
             ber = {ber:e}\n\
             sector_size = {sector}\n\
             rebuild_rate = \"{rb}\"\n\
             source = \"{source}\"\n",
            name = q(&self.name),
            desc = q(&format!("calibrated from {runs}")),
            cap = like.capacity_bytes,
            sr = mbs(r_seq),
            sw = mbs(w_seq),
            oh = overhead * 1e3,
            mtbf = like.mtbf_hours,
            ber = like.ber_per_bit,
            sector = like.sector_bytes,
            rb = mbs(like.rebuild_bytes_per_s),
            source = q(&source),
        );
        out.push_str(&self.queue_tables());
        out
    }

    /// The concurrency knee of each direction and pattern the sweep
    /// identified, as the drive's `[drive.queue.KIND]` tables (plan and
    /// sim queue the device by them: docs/MODEL.md §3.14), each with the
    /// figures it came from.
    pub fn queue_tables(&self) -> String {
        let mut out = String::new();
        for (kind, fit) in [
            ("seq_read", &self.read.sequential_queue),
            ("rand_read", &self.read.random_queue),
            ("seq_write", &self.write.sequential_queue),
            ("rand_write", &self.write.random_queue),
        ] {
            if let Some(f) = fit {
                let knees: Vec<String> = f
                    .knees
                    .iter()
                    .map(|(b, k)| format!("{k:.1} at {b} B"))
                    .collect();
                out.push_str(&format!(
                    "\n# {kind}: the concurrency knee (MVA) fitted on {} points at {}..{} in flight, \
                     rms log error {:.3}; knee {}\n[drive.queue.{kind}]\n{}",
                    f.points,
                    f.min_in_flight,
                    f.max_in_flight,
                    f.rms_log_error,
                    knees.join(", "),
                    f.to_toml_lines()
                ));
            }
        }
        out
    }
}

/// A name `plan calibrate --as` can give an entry: letters, digits, '-',
/// '_' or '.' (trimmed).
pub fn entry_name(name: &str) -> Result<&str, PlanError> {
    let n = name.trim();
    if n.is_empty()
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(PlanError::Design(format!(
            "--as '{name}' is not a catalog name; use letters, digits, '-', '_' or '.', e.g. --as my-array"
        )));
    }
    Ok(n)
}

/// What a fitted entry is modelled on (`plan calibrate --like`): a catalog
/// drive, or a catalog controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Like {
    Drive(Box<DriveSpec>),
    Controller(Box<ControllerSpec>),
}

impl Like {
    /// The catalog drive or controller called `name`.
    pub fn find(cat: &crate::catalog::Catalog, name: &str) -> Result<Like, PlanError> {
        match (cat.drive(name), cat.controller(name)) {
            (Ok(d), _) => Ok(Like::Drive(Box::new(d))),
            (Err(_), Ok(c)) => Ok(Like::Controller(Box::new(c))),
            (Err(e), Err(_)) => {
                let mut known = cat.drive_names();
                known.extend(cat.controller_names());
                let s = crate::error::suggest(name, known);
                Err(PlanError::Design(format!(
                    "--like '{name}' is neither a drive nor a controller in the catalog{}; list them with `storlab plan catalog` ({e})",
                    if s.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (did you mean {}?)",
                            s.iter()
                                .map(|x| format!("'{x}'"))
                                .collect::<Vec<_>>()
                                .join(" or ")
                        )
                    }
                )))
            }
        }
    }

    /// `drive` or `controller`: the flag the written entry is used with.
    pub fn kind(&self) -> &'static str {
        match self {
            Like::Drive(_) => "drive",
            Like::Controller(_) => "controller",
        }
    }

    /// The catalog entry (TOML) of `cal` modelled on this, fitted to `runs`.
    pub fn entry(&self, cal: &Calibration, runs: &str) -> String {
        match self {
            Like::Drive(d) => cal.to_toml(d, runs),
            Like::Controller(c) => cal.to_controller_toml(c, runs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    /// Runs generated from known figures, with deterministic ±3 % noise.
    fn synthetic(o: f64, r: f64, wo: f64, wr: f64, iops: f64) -> Vec<Observation> {
        let mut out = Vec::new();
        let noise = [0.97, 1.02, 0.99, 1.03, 0.98, 1.01, 1.0];
        let mut k = 0;
        let mut next = || {
            k += 1;
            noise[k % noise.len()]
        };
        for (write, oo, rr) in [(false, o, r), (true, wo, wr)] {
            for kb in [4u64, 16, 64, 256, 1024] {
                let b = (kb << 10) as f64;
                out.push(Observation {
                    label: format!("{}-{kb}k", if write { "write" } else { "read" }),
                    write,
                    random: false,
                    request_bytes: kb << 10,
                    in_flight: 1,
                    iops: next() / (oo + b / rr),
                    merge: None,
                });
            }
        }
        out.push(Observation {
            label: "randread-4k".into(),
            write: false,
            random: true,
            request_bytes: 4096,
            in_flight: 32,
            iops: iops * next(),
            merge: None,
        });
        out
    }

    #[test]
    fn recovers_known_figures_within_5_percent() {
        let obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        let c = calibrate("dev", &obs, &[]).unwrap();
        let near = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() / b < 0.05;
        assert!(near(c.read.rate_bytes_per_s, 500e6), "{:?}", c.read);
        assert!(near(c.read.cmd_overhead_s, 0.2e-3), "{:?}", c.read);
        assert!(near(c.write.rate_bytes_per_s, 300e6), "{:?}", c.write);
        assert!(near(c.write.cmd_overhead_s, 0.35e-3), "{:?}", c.write);
        assert!(near(c.read.iops, 80_000.0));
        assert!(c.fit_error.unwrap() < 0.05);
        // No random writes: said, not invented.
        assert!(c.write.iops.is_none());
        assert!(
            c.not_identified.iter().any(|s| s.contains("write IOPS")),
            "{:?}",
            c.not_identified
        );
        assert!(!c.not_identified.iter().any(|s| s.contains("read IOPS")));
    }

    #[test]
    fn held_out_sizes_are_predicted_not_fitted() {
        let obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        let c = calibrate("dev", &obs, &[64 << 10]).unwrap();
        let held: Vec<_> = c.points.iter().filter(|p| p.held_out).collect();
        assert_eq!(held.len(), 2, "{held:?}");
        assert!(held.iter().all(|p| p.error.unwrap().abs() < 0.06));
        assert!(c.held_out_error.unwrap() < 0.06);
    }

    #[test]
    fn repeats_count_by_their_median() {
        let mut obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        // A wild outlier at 64 KiB among three repeats does not move the fit.
        let base = obs.iter().find(|o| o.label == "read-64k").unwrap().clone();
        for k in [1.0, 0.4] {
            obs.push(Observation {
                iops: base.iops * k,
                merge: None,
                ..base.clone()
            });
        }
        let c = calibrate("dev", &obs, &[]).unwrap();
        let r = c.read.rate_bytes_per_s.unwrap();
        assert!((r - 500e6).abs() / 500e6 < 0.05, "{r}");
    }

    #[test]
    fn best_of_repeats_takes_the_fastest_run_of_each_point() {
        let mut obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        // Two slowed repeats of 64 KiB (another program on the disk): the
        // median is the slowed figure, the best is the device's.
        let base = obs.iter().find(|o| o.label == "read-64k").unwrap().clone();
        for k in [0.5, 0.6] {
            obs.push(Observation {
                iops: base.iops * k,
                merge: None,
                ..base.clone()
            });
        }
        let h = HoldOut::sizes(&[64 << 10]);
        let median = calibrate_with("dev", &obs, &h, Repeats::Median).unwrap();
        let best = calibrate_with("dev", &obs, &h, Repeats::Best).unwrap();
        let held = |c: &Calibration| {
            c.held_out
                .as_ref()
                .unwrap()
                .points
                .iter()
                .find(|p| !p.write)
                .unwrap()
                .clone()
        };
        assert_eq!(held(&median).measured_iops, base.iops * 0.6);
        assert_eq!(held(&best).measured_iops, base.iops);
        assert!(held(&best).label.contains("best of 3"), "{:?}", held(&best));
        assert!(held(&best).error.unwrap().abs() < 0.06, "{:?}", held(&best));
        assert!(held(&median).error.unwrap() > 0.5, "{:?}", held(&median));
    }

    /// The held-out report gives each point's run-to-run spread from every
    /// repeat (fastest / slowest − 1), whichever rule reduced the repeats,
    /// and its median and worst beside the error: three runs of 64 KiB
    /// reads at 1, 0.5 and 0.6 times the device's rate spread by 100 %;
    /// points run once have none.
    #[test]
    fn the_held_out_report_gives_the_run_to_run_spread() {
        let mut obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        let base = obs.iter().find(|o| o.label == "read-64k").unwrap().clone();
        for k in [0.5, 0.6] {
            obs.push(Observation {
                iops: base.iops * k,
                merge: None,
                ..base.clone()
            });
        }
        let h = HoldOut::sizes(&[64 << 10]);
        for rule in [Repeats::Median, Repeats::Best] {
            let c = calibrate_with("dev", &obs, &h, rule).unwrap();
            let r = c.held_out.unwrap();
            let read = r.points.iter().find(|p| !p.write).unwrap();
            assert!((read.spread.unwrap() - 1.0).abs() < 1e-12, "{read:?}");
            let write = r.points.iter().find(|p| p.write).unwrap();
            assert_eq!(write.spread, None);
            assert!((r.median_spread.unwrap() - 1.0).abs() < 1e-12);
            let c = calibrate_with("dev", &obs, &h, rule).unwrap();
            let text = render_knee_and_held_out(&c, crate::render::Style::markdown());
            assert!(text.contains("run-to-run spread"), "{text}");
        }
    }

    #[test]
    fn a_jobs_sweep_gives_the_capacity_and_qd1_the_latency() {
        // An SSD-like device: 0.1 ms + b / 1.5 GB/s at QD 1, but 3 GB/s
        // with 32 in flight. Fitting the deep points as latencies would
        // divide the rate by 32; the fit must keep both right.
        let mut obs = Vec::new();
        for kb in [4u64, 64, 256, 1024] {
            let b = (kb << 10) as f64;
            let qd1 = 1.0 / (0.1e-3 + b / 1.5e9);
            obs.push(Observation {
                label: format!("read-{kb}k-qd1"),
                write: false,
                random: false,
                request_bytes: kb << 10,
                in_flight: 1,
                iops: qd1,
                merge: None,
            });
            obs.push(Observation {
                label: format!("read-{kb}k-qd32"),
                write: false,
                random: false,
                request_bytes: kb << 10,
                in_flight: 32,
                iops: (32.0 * qd1).min(3e9 / b),
                merge: None,
            });
        }
        let c = calibrate("ssd", &obs, &[]).unwrap();
        let r = c.read.capacity_bytes_per_s.unwrap();
        assert!((r - 3e9).abs() / 3e9 < 0.05, "{r}");
        let q = c.read.rate_bytes_per_s.unwrap();
        assert!((q - 1.5e9).abs() / 1.5e9 < 0.05, "{q}");
        for p in &c.points {
            assert!(p.error.unwrap().abs() < 0.15, "{p:?}");
        }
    }

    #[test]
    fn one_block_size_leaves_the_overhead_unidentified() {
        let obs: Vec<_> = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0)
            .into_iter()
            .filter(|o| o.request_bytes == 1 << 20 && !o.write)
            .collect();
        let c = calibrate("dev", &obs, &[]).unwrap();
        assert!(c.read.cmd_overhead_s.is_none());
        assert!(c.read.rate_bytes_per_s.is_some());
        assert!(
            c.not_identified
                .iter()
                .any(|s| s.contains("read per-command overhead"))
        );
        assert!(calibrate("dev", &[], &[]).is_err());
    }

    #[test]
    fn a_controller_entry_carries_the_measured_limits() {
        let obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        let c = calibrate("my-ctl", &obs, &[]).unwrap();
        let cat = Catalog::builtin();
        let like = cat.controller("perc-h800").unwrap();
        let text = c.to_controller_toml(&like, "run 3");
        let mut cat2 = cat.clone();
        cat2.extend("ctl.toml", &text).unwrap();
        let k = cat2.controller("my-ctl").unwrap();
        let best_read = obs
            .iter()
            .filter(|o| !o.write && !o.random)
            .map(|o| o.iops * o.request_bytes as f64)
            .fold(0.0, f64::max);
        assert!((k.max_read_bytes_per_s.unwrap() - best_read).abs() / best_read < 1e-3);
        assert!(k.max_write_bytes_per_s.is_some());
        assert_eq!(k.max_iops.map(f64::round), c.read.iops.map(f64::round));
        assert_eq!(k.backend, like.backend);
        assert!(text.contains("lower bounds"), "{text}");
        // Still a RAID-on-chip, like the model it was measured as.
        assert!(k.parity_on_controller && like.parity_on_controller);
    }

    #[test]
    fn the_entry_loads_into_the_catalog() {
        let obs = synthetic(0.2e-3, 500e6, 0.35e-3, 300e6, 80_000.0);
        let c = calibrate("my-array", &obs, &[]).unwrap();
        let cat = Catalog::builtin();
        let like = cat.drive("dc-s3700-800gb").unwrap();
        let text = c.to_toml(&like, "runs 1, 2");
        let mut cat2 = cat.clone();
        cat2.extend("fitted.toml", &text).unwrap();
        let d = cat2.drive("my-array").unwrap();
        assert!((d.cmd_overhead_s - (0.2e-3 + 0.35e-3) / 2.0).abs() < 0.02e-3);
        assert!(text.contains("not identified, taken from dc-s3700-800gb: write IOPS"));
        assert_eq!(d.capacity_bytes, like.capacity_bytes);
    }

    /// A block-size sweep of random reads only, as most users run it:
    /// 4 KiB … 1 MiB at QD 1 and QD 32 on a disk whose random request takes
    /// 8 ms + b / 120 MB/s (and whose queue lets it serve 1.6 times more
    /// per second at QD 32, by reordering).
    fn random_sweep() -> Vec<Observation> {
        let mut out = Vec::new();
        let noise = [0.98, 1.02, 1.0, 0.99, 1.01];
        let mut k = 0;
        for kb in [4u64, 16, 64, 256, 1024] {
            let b = (kb << 10) as f64;
            let t = 8e-3 + b / 120e6;
            for (qd, speedup) in [(1u32, 1.0), (32, 1.6)] {
                k += 1;
                out.push(Observation {
                    label: format!("randread-{kb}k-qd{qd}"),
                    write: false,
                    random: true,
                    request_bytes: kb << 10,
                    in_flight: qd,
                    iops: noise[k % noise.len()] * speedup / t,
                    merge: None,
                });
            }
        }
        out
    }

    #[test]
    fn a_random_sweep_identifies_overhead_and_transfer_rate() {
        let c = calibrate("disk", &random_sweep(), &[]).unwrap();
        let near = |a: Option<f64>, b: f64, tol: f64| (a.unwrap() - b).abs() / b < tol;
        // Capacity (QD 32): (8 ms + b/120 MB/s) / 1.6 = 5 ms + b / 192 MB/s.
        assert!(near(c.read.random_op_s, 5e-3, 0.05), "{:?}", c.read);
        assert!(
            near(c.read.random_rate_bytes_per_s, 192e6, 0.10),
            "{:?}",
            c.read
        );
        // Latency (QD 1): 8 ms + b / 120 MB/s.
        assert!(near(c.read.random_latency_s, 8e-3, 0.05), "{:?}", c.read);
        assert!(
            near(c.read.random_latency_rate_bytes_per_s, 120e6, 0.10),
            "{:?}",
            c.read
        );
        assert_eq!(c.read.random_points, 5);
        // Every point, not only the smallest size, is predicted.
        assert!(
            c.points.iter().all(|p| p.predicted_iops.is_some()),
            "{:?}",
            c.points
        );
        assert!(c.fit_error.unwrap() < 0.05, "{:?}", c.fit_error);
    }

    #[test]
    fn held_out_random_sizes_and_depths_are_predicted() {
        // Fit on 4k, 64k, 1m; predict 16k and 256k at both depths.
        let c = calibrate("disk", &random_sweep(), &[16 << 10, 256 << 10]).unwrap();
        let held: Vec<_> = c.points.iter().filter(|p| p.held_out).collect();
        assert_eq!(held.len(), 4, "{held:?}");
        for p in &held {
            let e = p.error.unwrap_or(f64::INFINITY).abs();
            assert!(e < 0.06, "{p:?}");
        }
        assert!(c.held_out_error.unwrap() < 0.06);
    }

    /// A device of 4 parallel units (0.1 ms + b / 400 MB/s each) behind a
    /// 40 µs path, measured at 4 KiB and 64 KiB × QD 1..32 for random reads
    /// (exact MVA figures).
    fn qd_sweep() -> Vec<Observation> {
        let mut out = Vec::new();
        for kb in [4u64, 64] {
            for n in [1u32, 2, 4, 8, 16, 32] {
                let b = (kb << 10) as f64;
                let d = 0.1e-3 + b / 400e6;
                out.push(Observation {
                    label: format!("randread-{kb}k-qd{n}"),
                    write: false,
                    random: true,
                    request_bytes: kb << 10,
                    in_flight: n,
                    iops: queue::mva(40e-6 + d * 0.75, d / 4.0, n),
                    merge: None,
                });
            }
        }
        out
    }

    /// Issue 24 item: the knee `plan calibrate` fits is written into the
    /// entry and plan's model queues the device by it. Fitted on a
    /// checkerboard half, the entry read back from its TOML predicts a
    /// held-out point (64 KiB at QD 4, near the knee) exactly as the fit
    /// does, within the fit's own error of the truth; the entry without its
    /// queue tables (what was written before) misses it by Little's law
    /// and the saturated rate alone.
    #[test]
    fn the_written_entry_carries_the_knee_and_plan_predicts_by_it() {
        let obs = qd_sweep();
        let h = HoldOut {
            sizes: Vec::new(),
            alternate: true,
        };
        let c = calibrate_with("qdev", &obs, &h, Repeats::Median).unwrap();
        let fit = c.read.random_queue.clone().unwrap();
        let cat = Catalog::builtin();
        let like = cat.drive("dc-s3700-800gb").unwrap();
        let text = c.to_toml(&like, "a synthetic sweep");
        assert!(text.contains("[drive.queue.rand_read]"), "{text}");
        assert!(!text.contains("[drive.queue.seq_read]"), "{text}");
        let mut with = Catalog::builtin();
        with.extend("q.toml", &text).unwrap();
        let d = with.drive("qdev").unwrap();
        let got = d.queue.rand_read.as_ref().unwrap();
        assert_eq!((got.latency_s, got.demand_s), (fit.latency_s, fit.demand_s));
        assert_eq!(got.points, fit.points);
        // The held-out point: 64 KiB (size index 1) at QD 4 (depth index
        // 2): 1 + 2 is odd.
        let held = obs.iter().find(|o| o.label == "randread-64k-qd4").unwrap();
        let p = c.points.iter().find(|p| p.label == held.label).unwrap();
        assert!(p.held_out, "{p:?}");
        let free = crate::hardware::LinkSpec::new("none", 1, f64::INFINITY);
        let hw = |drive: DriveSpec| crate::hardware::Hardware {
            drive,
            controller: ControllerSpec::new("none", free.clone(), free.clone()),
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        };
        let layout: crate::Layout = "R0/1".parse().unwrap();
        let w = crate::perf::Workload::new(storlab_types::Pattern::RandRead, 64 << 10)
            .with_concurrency(1, 4);
        let plan = crate::perf::predict(&layout, &hw(d.clone()), &w).unwrap();
        let by_fit = fit.predict(64 << 10, 4).unwrap();
        assert!(
            (plan.iops / by_fit - 1.0).abs() < 1e-9,
            "{plan:?} vs {by_fit}"
        );
        assert!(
            plan.explanation.contains("calibrated queue"),
            "{}",
            plan.explanation
        );
        let err = (plan.iops / held.iops - 1.0).abs();
        assert!(err < 0.02, "{} vs {}: {err}", plan.iops, held.iops);
        // Without the knee (the entry as written before): 5 % or more off.
        let old = DriveSpec {
            queue: Default::default(),
            ..d
        };
        let before = crate::perf::predict(&layout, &hw(old), &w).unwrap();
        assert!(
            (before.iops / held.iops - 1.0).abs() > 0.05,
            "{} vs {}",
            before.iops,
            held.iops
        );
    }

    /// A sequential read sweep whose block layer merged small requests
    /// (the counts as bench records them): host 12 µs per request, per
    /// command L = 60 µs + c / 2 GB/s, S = 25 µs + c / 1.5 GB/s; merged
    /// 1, 1.5, 2.2, 3, 4, 4.5 requests per command at QD 1..32, up to
    /// commands of 4 MiB.
    fn merged_sweep() -> Vec<Observation> {
        let truth = QueueFit {
            latency_s: 60e-6,
            latency_bytes_per_s: Some(2e9),
            demand_s: 25e-6,
            demand_bytes_per_s: Some(1.5e9),
            only_bytes: None,
            points: 1,
            min_in_flight: 1,
            max_in_flight: 2,
            rms_log_error: 0.0,
            knees: Vec::new(),
            host_s: Some(12e-6),
            host_call_s: None,
            merges: Vec::new(),
        };
        let counted = [1.0, 1.5, 2.2, 3.0, 4.0, 4.5];
        let mut out = Vec::new();
        for kb in [4u64, 16, 64, 256, 1024] {
            for (j, n) in [1u32, 2, 4, 8, 16, 32].into_iter().enumerate() {
                let m = f64::min(counted[j], 4096.0 / kb as f64).max(1.0);
                out.push(Observation {
                    label: format!("read-{kb}k-qd{n}"),
                    write: false,
                    random: false,
                    request_bytes: kb << 10,
                    in_flight: n,
                    iops: truth.predict_merged(kb << 10, n, m).unwrap(),
                    merge: Some(m),
                });
            }
        }
        out
    }

    /// The counts reach the fit, the held-out report (each point's factor
    /// counted and the one the rule used, and its error without the counts)
    /// and the written entry, whose `merges` and `host_s` plan predicts by:
    /// the held-out 16 KiB QD 16 point (size index 1 + depth index 4, odd)
    /// within 3 % of the truth in `perf::predict`, exactly as the fit.
    #[test]
    fn merge_counts_reach_the_fit_the_report_and_the_entry() {
        let obs = merged_sweep();
        let h = HoldOut {
            sizes: Vec::new(),
            alternate: true,
        };
        let c = calibrate_with("mdev", &obs, &h, Repeats::Median).unwrap();
        let q = c.read.sequential_queue.clone().unwrap();
        assert!(q.host_s.is_some() && !q.merges.is_empty(), "{q:?}");
        let ho = c.held_out.as_ref().unwrap();
        let p = ho
            .points
            .iter()
            .find(|p| p.request_bytes == 16 << 10 && p.in_flight == 16)
            .unwrap();
        assert_eq!(p.merge, Some(4.0));
        let used = p.merge_used.unwrap();
        assert!((used - 4.0).abs() < 0.6, "{used}");
        assert!(p.error.unwrap().abs() < 0.03, "{p:?}");
        assert!(p.error_without_merges.is_some(), "{p:?}");
        let (now, before) = (
            ho.median_error.unwrap(),
            ho.median_error_without_merges.unwrap(),
        );
        assert!(
            now < before,
            "median {now} with the counts, {before} without"
        );
        let like = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        let text = c.to_toml(&like, "a merged sweep");
        assert!(
            text.contains("host_s = ") && text.contains("merges = ["),
            "{text}"
        );
        let mut cat = Catalog::builtin();
        cat.extend("m.toml", &text).unwrap();
        let d = cat.drive("mdev").unwrap();
        let got = d.queue.seq_read.as_ref().unwrap();
        assert_eq!((got.host_s, &got.merges), (q.host_s, &q.merges));
        let free = crate::hardware::LinkSpec::new("none", 1, f64::INFINITY);
        let hw = crate::hardware::Hardware {
            drive: d,
            controller: ControllerSpec::new("none", free.clone(), free),
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        };
        let layout: crate::Layout = "R0/1".parse().unwrap();
        let w = crate::perf::Workload::new(storlab_types::Pattern::SeqRead, 16 << 10)
            .with_concurrency(1, 16);
        let plan = crate::perf::predict(&layout, &hw, &w).unwrap();
        let by_fit = q.predict(16 << 10, 16).unwrap();
        assert!(
            (plan.iops / by_fit - 1.0).abs() < 1e-6,
            "{plan:?} vs {by_fit}"
        );
        let truth = obs.iter().find(|o| o.label == "read-16k-qd16").unwrap();
        assert!((plan.iops / truth.iops - 1.0).abs() < 0.03);
    }

    /// An override of a calibrated drive keeps its knee (the entry is
    /// written back with its queue tables and read again).
    #[test]
    fn an_override_of_a_calibrated_drive_keeps_its_knee() {
        let c = calibrate_with("qdev", &qd_sweep(), &HoldOut::sizes(&[]), Repeats::Median).unwrap();
        let like = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        let mut cat = Catalog::builtin();
        cat.extend("q.toml", &c.to_toml(&like, "runs")).unwrap();
        let before = cat.drive("qdev").unwrap();
        cat.extend("o.toml", "[override.drive.\"qdev\"]\nprice = 100\n")
            .unwrap();
        let after = cat.drive("qdev").unwrap();
        assert_eq!(after.price, Some(100.0));
        assert_eq!(after.queue, before.queue);
        assert!(after.queue.rand_read.is_some());
    }

    /// A catalog curve must be complete and positive: a bad one is refused
    /// naming the drive, the table and what to give.
    #[test]
    fn a_bad_queue_table_is_refused_naming_it() {
        let c = calibrate_with("qdev", &qd_sweep(), &HoldOut::sizes(&[]), Repeats::Median).unwrap();
        let like = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        let text = c.to_toml(&like, "runs");
        // A negative cost per system call, written or given by hand.
        let call = if text.contains("host_call_s = ") {
            ("host_call_s = ", "host_call_s = -")
        } else {
            ("rms_log_error = ", "host_call_s = -1e-5\nrms_log_error = ")
        };
        for (from, to) in [
            ("demand_s = ", "demand_s = -"),
            ("points = ", "points = 0\n# "),
            ("latency_bytes_per_s", "# latency_bytes_per_s"),
            call,
        ] {
            let bad = text.replacen(from, to, 1);
            let mut cat = Catalog::builtin();
            let e = match cat.extend("q.toml", &bad) {
                Err(e) => e.to_string(),
                Ok(()) => cat.drive("qdev").unwrap_err().to_string(),
            };
            assert!(
                e.contains("qdev") && e.contains("queue.rand_read"),
                "{from}: {e}"
            );
        }
    }
}
