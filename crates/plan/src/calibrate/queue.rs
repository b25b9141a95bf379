//! The concurrency knee from a queue-depth sweep: a closed queueing model
//! of one device for one kind of request (a direction and a pattern),
//! solved by exact mean value analysis (MVA) and fitted to measured points.
//!
//! The device is a queueing centre of service demand `S(b)` per request
//! (one server: the saturated rate is `1/S`) in series with a delay centre
//! `Z(b)` (the part of a request's time that overlaps other requests: the
//! device's internal parallelism, the host's and the hypervisor's path).
//! With `n` requests kept in flight and no think time, exact MVA for one
//! queueing and one delay centre (Reiser and Lavenberg 1980; Lazowska et
//! al. 1984, ch. 6) gives, from `Q(0) = 0`,
//!
//! ```text
//! R_q(k) = S · (1 + Q(k−1)),  X(k) = k / (Z + R_q(k)),  Q(k) = X(k) · R_q(k)
//! ```
//!
//! so `X(1) = 1/L` with `L = Z + S` the unloaded latency (Little's law) and
//! `X(n) → 1/S`, the knee at `N* = L/S` (balanced job bounds). A device of
//! `m` parallel units of demand `D` is this model with `S = D/m`, `Z =
//! D(m−1)/m` (Seidmann, Schweitzer and Shalev-Oren 1987). Both times grow
//! with the request: `L(b) = l + b/Rl`, `S(b) = s + b/Rs` (per-command
//! overhead and transfer rate, docs/MODEL.md §3.1). [`fit`] finds the four
//! figures by minimising the Huber loss of the log error over the points
//! (Nelder and Mead 1965, a derivative-free simplex): relative, so a 4 KiB
//! and a 1 MiB point weigh the same, and robust to one noisy point.

use serde::{Deserialize, Serialize};

/// One measured point of a sweep (repeats already reduced to their median).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QdPoint {
    pub bytes: f64,
    pub in_flight: u32,
    pub iops: f64,
}

/// The fitted model of one direction and pattern. A catalog drive carries
/// it as `[drive.queue.rand_read]` (and `seq_read`, `seq_write`,
/// `rand_write`) with these field names; `knees` is derived on load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueFit {
    /// Unloaded latency `L(b) = latency_s + b / latency_bytes_per_s`, s.
    pub latency_s: f64,
    /// `None` when the sweep had one request size (the fit holds there only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_bytes_per_s: Option<f64>,
    /// Service demand at the bottleneck `S(b) = demand_s + b / demand_bytes_per_s`, s:
    /// the saturated rate is `1/S(b)` requests per second.
    pub demand_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demand_bytes_per_s: Option<f64>,
    /// The one request size the fit holds for (a queue-depth sweep at one size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only_bytes: Option<u64>,
    /// Points fitted, and the depths (requests in flight) they cover.
    pub points: usize,
    pub min_in_flight: u32,
    pub max_in_flight: u32,
    /// Root mean square of the fitted points' log error (≈ relative error).
    pub rms_log_error: f64,
    /// The knee `N* = L/S` (requests in flight where the device saturates)
    /// at the smallest and the largest size fitted: `[bytes, knee]`.
    #[serde(default)]
    pub knees: Vec<(u64, f64)>,
}

/// Exact MVA of one queueing centre (demand `s`) and one delay (`z`) with
/// `n` customers: the throughput, requests/s.
pub fn mva(z: f64, s: f64, n: u32) -> f64 {
    if s <= 0.0 {
        return f64::from(n) / z.max(f64::MIN_POSITIVE);
    }
    let mut q = 0.0;
    let mut x = 0.0;
    // Past a few times the knee the queue only grows: X is 1/S to within
    // rounding, so a huge population costs no more than that.
    let limit = n.min(1_000_000);
    for k in 1..=limit {
        let r = s * (1.0 + q);
        x = f64::from(k) / (z + r);
        q = x * r;
    }
    x
}

impl QueueFit {
    /// `(L, S)` at `bytes`, with `S ≤ L` (a request alone is never faster
    /// than the device's time for it).
    pub fn times(&self, bytes: f64) -> (f64, f64) {
        let l = self.latency_s + self.latency_bytes_per_s.map_or(0.0, |r| bytes / r);
        let s = self.demand_s + self.demand_bytes_per_s.map_or(0.0, |r| bytes / r);
        (l, s.min(l))
    }

    /// Requests per second with `in_flight` outstanding, for a request of
    /// `bytes`; `None` for a size a one-size fit does not cover.
    pub fn predict(&self, bytes: u64, in_flight: u32) -> Option<f64> {
        if self.only_bytes.is_some_and(|b| b != bytes) {
            return None;
        }
        let (l, s) = self.times(bytes as f64);
        Some(mva(l - s, s, in_flight.max(1)))
    }

    /// The knee `N* = L/S` at `bytes`.
    pub fn knee(&self, bytes: f64) -> f64 {
        let (l, s) = self.times(bytes);
        l / s
    }

    /// Whether the fit covers requests of `bytes` (a one-size fit covers
    /// its size only).
    pub fn covers(&self, bytes: f64) -> bool {
        self.only_bytes.is_none_or(|b| b as f64 == bytes)
    }

    /// A curve read from a catalog: every time and rate positive and
    /// finite, a size-dependent fit with both rates or neither, and the
    /// figures it came from consistent; the knees recomputed. `Err` names
    /// what is wrong.
    pub fn checked(mut self) -> Result<QueueFit, String> {
        let pos = |v: f64| v > 0.0 && v.is_finite();
        if !pos(self.latency_s) || !pos(self.demand_s) {
            return Err("latency_s and demand_s must be positive seconds".into());
        }
        match (
            self.latency_bytes_per_s,
            self.demand_bytes_per_s,
            self.only_bytes,
        ) {
            (Some(a), Some(b), None) if pos(a) && pos(b) => {}
            (None, None, Some(b)) if b > 0 => {}
            _ => {
                return Err(
                    "give latency_bytes_per_s and demand_bytes_per_s (positive), or only_bytes for a one-size fit"
                        .into(),
                );
            }
        }
        if self.points == 0
            || self.min_in_flight == 0
            || self.min_in_flight >= self.max_in_flight
            || !(self.rms_log_error >= 0.0 && self.rms_log_error.is_finite())
        {
            return Err(
                "points, min_in_flight < max_in_flight and rms_log_error (the sweep it was fitted on) are required"
                    .into(),
            );
        }
        self.knees = match self.only_bytes {
            Some(b) => vec![(b, self.knee(b as f64))],
            None => Vec::new(),
        };
        Ok(self)
    }

    /// The curve as the lines of a catalog table (exact figures: `{:e}`).
    pub fn to_toml_lines(&self) -> String {
        let mut out = format!("latency_s = {:e}\n", self.latency_s);
        if let Some(r) = self.latency_bytes_per_s {
            out.push_str(&format!("latency_bytes_per_s = {r:e}\n"));
        }
        out.push_str(&format!("demand_s = {:e}\n", self.demand_s));
        if let Some(r) = self.demand_bytes_per_s {
            out.push_str(&format!("demand_bytes_per_s = {r:e}\n"));
        }
        if let Some(b) = self.only_bytes {
            out.push_str(&format!("only_bytes = {b}\n"));
        }
        out.push_str(&format!(
            "points = {}\nmin_in_flight = {}\nmax_in_flight = {}\nrms_log_error = {:e}\n",
            self.points, self.min_in_flight, self.max_in_flight, self.rms_log_error
        ));
        out
    }
}

/// The model for the parameters `p` (natural logs of `l, Rl, s, Rs`, or of
/// `L, S` for one size).
fn model(p: &[f64]) -> QueueFit {
    let e = |i: usize| p[i].exp();
    let (latency_bytes_per_s, demand_bytes_per_s, demand_s) = if p.len() == 4 {
        (Some(e(1)), Some(e(3)), e(2))
    } else {
        (None, None, e(1))
    };
    QueueFit {
        latency_s: e(0),
        latency_bytes_per_s,
        demand_s,
        demand_bytes_per_s,
        only_bytes: None,
        points: 0,
        min_in_flight: 0,
        max_in_flight: 0,
        rms_log_error: 0.0,
        knees: Vec::new(),
    }
}

/// Huber's loss of a log error: quadratic within 10 %, linear beyond.
fn huber(r: f64) -> f64 {
    const D: f64 = 0.1;
    if r.abs() <= D {
        0.5 * r * r
    } else {
        D * (r.abs() - 0.5 * D)
    }
}

fn log_error(m: &QueueFit, p: &QdPoint) -> f64 {
    let x = m.predict(p.bytes as u64, p.in_flight).unwrap_or(0.0);
    if x > 0.0 && x.is_finite() {
        (x / p.iops).ln()
    } else {
        10.0
    }
}

fn loss(params: &[f64], pts: &[QdPoint]) -> f64 {
    let m = model(params);
    pts.iter().map(|p| huber(log_error(&m, p))).sum()
}

/// Nelder–Mead simplex minimisation from `x0` with initial step `step`.
fn nelder_mead(f: &dyn Fn(&[f64]) -> f64, x0: &[f64], step: f64, iters: usize) -> (Vec<f64>, f64) {
    let n = x0.len();
    let mut simplex: Vec<(Vec<f64>, f64)> = (0..=n)
        .map(|i| {
            let mut x = x0.to_vec();
            if i > 0 {
                x[i - 1] += step;
            }
            let v = f(&x);
            (x, v)
        })
        .collect();
    let point = |c: &[f64], w: &[f64], t: f64| -> Vec<f64> {
        c.iter().zip(w).map(|(c, w)| c + t * (w - c)).collect()
    };
    for _ in 0..iters {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if (simplex[n].1 - simplex[0].1).abs() <= 1e-12 * (1.0 + simplex[0].1.abs()) {
            break;
        }
        let mut c = vec![0.0; n];
        for (x, _) in &simplex[..n] {
            for (ci, xi) in c.iter_mut().zip(x) {
                *ci += xi / n as f64;
            }
        }
        let worst = simplex[n].0.clone();
        let xr = point(&c, &worst, -1.0);
        let fr = f(&xr);
        if fr < simplex[0].1 {
            let xe = point(&c, &worst, -2.0);
            let fe = f(&xe);
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = point(&c, &worst, 0.5);
            let fc = f(&xc);
            if fc < simplex[n].1 {
                simplex[n] = (xc, fc);
            } else {
                let best = simplex[0].0.clone();
                for s in simplex.iter_mut().skip(1) {
                    s.0 = point(&best, &s.0, 0.5);
                    s.1 = f(&s.0);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

/// A time `t = a + b/R` through the smallest and the largest size's times
/// (positive figures: a floor of 5 % for the fixed part, 0.1 % for the
/// transfer), as natural logs of `a` and `R`.
fn two_point(lo: (f64, f64), hi: (f64, f64)) -> [f64; 2] {
    let slope = ((hi.1 - lo.1) / (hi.0 - lo.0).max(1.0)).max(1e-3 * hi.1 / hi.0);
    let a = (lo.1 - slope * lo.0).max(0.05 * lo.1);
    [a.ln(), (1.0 / slope).ln()]
}

/// Fit the model to `pts` (one direction and pattern). Needs two or more
/// depths; with one size the fit holds at that size only; `None` when the
/// points cannot identify it.
pub fn fit(pts: &[QdPoint]) -> Option<QueueFit> {
    let mut depths: Vec<u32> = pts.iter().map(|p| p.in_flight).collect();
    depths.sort_unstable();
    depths.dedup();
    let mut sizes: Vec<u64> = pts.iter().map(|p| p.bytes as u64).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if depths.len() < 2 || pts.iter().any(|p| !(p.iops > 0.0 && p.iops.is_finite())) {
        return None;
    }
    // Per size, the time at its shallowest depth (in flight / IOPS: the
    // latency, Little's law) and at its deepest (1 / IOPS: the demand).
    let at = |b: u64, deepest: bool| -> (f64, f64) {
        let mut of: Vec<&QdPoint> = pts.iter().filter(|p| p.bytes as u64 == b).collect();
        of.sort_by_key(|p| p.in_flight);
        let p = if deepest { of[of.len() - 1] } else { of[0] };
        let t = if deepest {
            1.0 / p.iops
        } else {
            f64::from(p.in_flight) / p.iops
        };
        (b as f64, t)
    };
    let x0: Vec<f64> = if sizes.len() >= 2 {
        if pts.len() < 5 {
            return None;
        }
        let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
        let l = two_point(at(lo, false), at(hi, false));
        let s = two_point(at(lo, true), at(hi, true));
        vec![l[0], l[1], s[0], s[1]]
    } else {
        if pts.len() < 3 {
            return None;
        }
        vec![at(sizes[0], false).1.ln(), at(sizes[0], true).1.ln()]
    };
    let f = |p: &[f64]| loss(p, pts);
    // Restarts from the best point (a simplex can stall on a ridge) and a
    // second start with more parallelism: deterministic.
    let mut best: Option<(Vec<f64>, f64)> = None;
    for shift in [0.0, -1.5] {
        let mut x = x0.clone();
        let k = if x.len() == 4 { 2 } else { 1 };
        x[k] += shift;
        let mut cur = (x, f64::INFINITY);
        for step in [0.7, 0.3, 0.1] {
            cur = nelder_mead(&f, &cur.0, step, 3000);
        }
        if best.as_ref().is_none_or(|b| cur.1 < b.1) {
            best = Some(cur);
        }
    }
    let (p, _) = best?;
    let mut m = model(&p);
    if sizes.len() == 1 {
        m.only_bytes = Some(sizes[0]);
    }
    m.points = pts.len();
    m.min_in_flight = depths[0];
    m.max_in_flight = depths[depths.len() - 1];
    let sq: f64 = pts.iter().map(|q| log_error(&m, q).powi(2)).sum();
    m.rms_log_error = (sq / pts.len() as f64).sqrt();
    m.knees = [sizes[0], sizes[sizes.len() - 1]]
        .into_iter()
        .map(|b| (b, m.knee(b as f64)))
        .collect();
    m.knees.dedup_by_key(|k| k.0);
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MVA by hand for Z = 1 ms, S = 1 ms: X(1) = 1/(1+1) ms = 500/s;
    /// R_q(1) = 1 ms, Q(1) = 0.5; R_q(2) = 1.5 ms, X(2) = 2/2.5 ms = 800/s;
    /// Q(2) = 1.2, R_q(3) = 2.2 ms, X(3) = 3/3.2 ms = 937.5/s.
    #[test]
    fn mva_matches_the_recursion_by_hand() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(near(mva(1e-3, 1e-3, 1), 500.0));
        assert!(near(mva(1e-3, 1e-3, 2), 800.0));
        assert!(near(mva(1e-3, 1e-3, 3), 937.5));
        // Saturates at 1/S, never above; monotone in n.
        let mut last = 0.0;
        for n in 1..200 {
            let x = mva(1e-3, 1e-3, n);
            assert!(x >= last * (1.0 - 1e-12) && x < 1000.0 + 1e-9, "{n}: {x}");
            last = x;
        }
        assert!(mva(1e-3, 1e-3, 199) > 990.0);
    }

    /// A device of m = 4 parallel units of D = 0.2 ms + b / 500 MB/s and a
    /// 50 µs host path, measured at 5 sizes × 6 depths with ±4 % noise:
    /// fitted on a checkerboard half, the other half predicted within 8 %.
    #[test]
    fn a_synthetic_sweep_is_recovered_and_predicts_its_other_half() {
        let noise = [0.96, 1.03, 1.0, 0.98, 1.04, 1.01, 0.97];
        let (mut fit_pts, mut held) = (Vec::new(), Vec::new());
        let mut k = 0;
        for (i, kb) in [4u64, 16, 64, 256, 1024].into_iter().enumerate() {
            for (j, n) in [1u32, 2, 4, 8, 16, 32].into_iter().enumerate() {
                let b = (kb << 10) as f64;
                let d = 0.2e-3 + b / 500e6;
                let (s, z) = (d / 4.0, 50e-6 + d * 3.0 / 4.0);
                let truth = mva(z, s, n);
                k += 1;
                let p = QdPoint {
                    bytes: b,
                    in_flight: n,
                    iops: truth * noise[k % noise.len()],
                };
                if (i + j) % 2 == 0 {
                    fit_pts.push(p);
                } else {
                    held.push((p, truth));
                }
            }
        }
        let m = fit(&fit_pts).unwrap();
        for (p, _) in &held {
            let x = m.predict(p.bytes as u64, p.in_flight).unwrap();
            assert!((x / p.iops - 1.0).abs() < 0.08, "{p:?}: {x} ({m:?})");
        }
        // The saturated rate at 4 KiB: 4 / D(4 KiB).
        let x_sat = m.predict(4096, 1 << 16).unwrap();
        let want = 4.0 / (0.2e-3 + 4096.0 / 500e6);
        assert!((x_sat / want - 1.0).abs() < 0.08, "{x_sat} vs {want}");
        // The knee at 4 KiB is about L/S = (50 µs + D)/(D/4) ≈ 4.8.
        let knee = m.knees[0].1;
        assert!((3.5..6.5).contains(&knee), "{knee}");
    }

    #[test]
    fn one_size_holds_there_and_one_depth_identifies_nothing() {
        let pts: Vec<QdPoint> = [1u32, 2, 4, 8, 16]
            .into_iter()
            .map(|n| QdPoint {
                bytes: 4096.0,
                in_flight: n,
                iops: mva(0.3e-3, 0.1e-3, n),
            })
            .collect();
        let m = fit(&pts).unwrap();
        assert_eq!(m.only_bytes, Some(4096));
        assert!(m.predict(8192, 4).is_none());
        let x = m.predict(4096, 32).unwrap();
        assert!((x / mva(0.3e-3, 0.1e-3, 32) - 1.0).abs() < 0.02, "{x}");
        let flat: Vec<QdPoint> = pts.iter().map(|p| QdPoint { in_flight: 1, ..*p }).collect();
        assert!(fit(&flat).is_none());
    }
}
