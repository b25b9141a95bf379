//! Reliability: mean time to data loss (MTTDL) of RAID groups and volumes.
//!
//! Each group is a continuous-time Markov chain: state `i` = `i` drives
//! failed (0 ≤ i ≤ t, t = failures the group tolerates), plus one absorbing
//! state "data lost". From state `i` a further drive fails at rate
//! `(n − i)·λ`; a rebuild completes at rate `μ = 1 / (replacement delay +
//! rebuild time)` (one rebuild at a time). In state `t` the group has no
//! redundancy left, so an unrecoverable read error (URE) while the rebuild
//! reads the surviving drives loses data: that rebuild ends in loss with
//! probability `h`, and back in state `t − 1` with `1 − h`.
//!
//! The chain is a birth–death chain absorbed at the top, so its mean time to
//! absorption has a closed form ([`GroupChain::mttdl_closed_form`]); the same
//! chain is also solved numerically as a linear system
//! ([`GroupChain::mttdl_numerical`]) and the tests check that they agree.
//! Derivation and sources: `docs/MODEL.md`.

use crate::error::PlanError;
use serde::Serialize;

/// Hours in a year (365.25 days), used for AFR ↔ MTBF and mission times:
/// the one definition in `storlab-types`.
pub use storlab_types::time::HOURS_PER_YEAR;

/// Annualised failure rate (fraction, 0.01 = 1 %) from an MTBF in hours,
/// assuming exponential lifetimes: AFR = 1 − exp(−8766 h / MTBF).
pub fn afr_from_mtbf(mtbf_hours: f64) -> f64 {
    1.0 - (-HOURS_PER_YEAR / mtbf_hours).exp()
}

/// MTBF in hours from an annualised failure rate (fraction).
pub fn mtbf_from_afr(afr: f64) -> f64 {
    -HOURS_PER_YEAR / (1.0 - afr).ln()
}

/// Probability that reading `bytes` hits at least one unrecoverable read
/// error, for a drive that loses one `sector_bytes` sector per `1/ber` bits
/// read: 1 − (1 − ber·8·sector)^(bytes/sector).
pub fn ure_probability(bytes: f64, ber: f64, sector_bytes: u64) -> f64 {
    if bytes <= 0.0 || ber <= 0.0 {
        return 0.0;
    }
    let sector = sector_bytes.max(1) as f64;
    let p_sector = (ber * 8.0 * sector).min(1.0);
    if p_sector >= 1.0 {
        return 1.0;
    }
    let sectors = bytes / sector;
    1.0 - (sectors * (-p_sector).ln_1p()).exp()
}

/// The Markov chain of one RAID group.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GroupChain {
    /// Drives in the group.
    pub drives: u32,
    /// Drive failures the group survives (1 for RAID 5, 2 for RAID 6,
    /// span − 1 for a mirror, 0 for RAID 0).
    pub tolerance: u32,
    /// Failure rate of one drive, per hour (1 / MTBF).
    pub lambda_per_hour: f64,
    /// Repair rate, per hour (1 / (replacement delay + rebuild time)).
    pub mu_per_hour: f64,
    /// Probability that the rebuild from the last redundant state meets an
    /// unrecoverable read error.
    pub ure_probability: f64,
}

impl GroupChain {
    /// Birth (failure) rate out of state `i`: the next failure, plus, in
    /// the last state, rebuilds that end in a URE.
    fn up(&self, i: u32) -> f64 {
        let fail = f64::from(self.drives - i) * self.lambda_per_hour;
        if i == self.tolerance && i > 0 {
            fail + self.mu_per_hour * self.ure_probability
        } else {
            fail
        }
    }

    /// Death (repair) rate out of state `i` (i ≥ 1).
    fn down(&self, i: u32) -> f64 {
        if i == self.tolerance {
            self.mu_per_hour * (1.0 - self.ure_probability)
        } else {
            self.mu_per_hour
        }
    }

    /// Mean time to data loss from the all-good state, hours, by the closed
    /// form for a birth–death chain absorbed at state t+1:
    ///
    /// MTTDL = Σ_{k=0..t} Σ_{j=0..k} (1/a_j) · Π_{m=j+1..k} (d_m / a_m)
    ///
    /// with a_i the up rates and d_i the down rates above.
    pub fn mttdl_closed_form(&self) -> f64 {
        let t = self.tolerance;
        let mut total = 0.0;
        // inner(k) = Σ_{j≤k} (1/a_j) Π_{m=j+1..k} d_m/a_m, built iteratively:
        // inner(k) = 1/a_k + (d_k/a_k) · inner(k−1).
        let mut inner = 0.0;
        for k in 0..=t {
            let a = self.up(k);
            inner = if k == 0 {
                1.0 / a
            } else {
                1.0 / a + self.down(k) / a * inner
            };
            total += inner;
        }
        total
    }

    /// The same mean time to absorption, by solving the linear system
    /// −Q_T · τ = 1 of the chain's transient states numerically (Gaussian
    /// elimination with partial pivoting); τ₀ is the MTTDL.
    pub fn mttdl_numerical(&self) -> f64 {
        let n = self.tolerance as usize + 1;
        let mut q = vec![vec![0.0; n]; n];
        for i in 0..n {
            let iu = i as u32;
            let up = self.up(iu);
            let down = if i > 0 { self.down(iu) } else { 0.0 };
            q[i][i] = up + down; // −Q_ii: total rate out
            if i + 1 < n {
                q[i][i + 1] = -up;
            }
            if i > 0 {
                q[i][i - 1] = -down;
            }
        }
        solve(q, vec![1.0; n])[0]
    }

    /// Probability that the group has lost data by time `hours`, from the
    /// transient solution p(T) = p(0)·exp(Q·T) of the full chain (absorbing
    /// state included), by scaling and squaring with a Taylor series. This
    /// checks the exponential approximation 1 − exp(−T/MTTDL) without
    /// assuming it.
    pub fn loss_probability_numerical(&self, hours: f64) -> f64 {
        let n = self.tolerance as usize + 2; // transient states + loss
        let loss = n - 1;
        let mut q = vec![vec![0.0; n]; n];
        for i in 0..loss {
            let iu = i as u32;
            let up = self.up(iu);
            q[i][i + 1] += up; // state t's "up" is the loss state
            q[i][i] -= up;
            if i > 0 {
                let down = self.down(iu);
                q[i][i - 1] += down;
                q[i][i] -= down;
            }
        }
        let norm = q
            .iter()
            .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
            .fold(0.0, f64::max)
            * hours;
        let mut squarings = 0;
        let mut scale = hours;
        while norm / 2f64.powi(squarings) > 0.5 {
            squarings += 1;
        }
        scale /= 2f64.powi(squarings);
        let a: Vec<Vec<f64>> = q
            .iter()
            .map(|r| r.iter().map(|x| x * scale).collect())
            .collect();
        let mul = |x: &Vec<Vec<f64>>, y: &Vec<Vec<f64>>| -> Vec<Vec<f64>> {
            (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| (0..n).map(|k| x[i][k] * y[k][j]).sum())
                        .collect()
                })
                .collect()
        };
        // exp(A) by Taylor series (‖A‖ ≤ 0.5: 20 terms reach 1e-20).
        let mut e: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
            .collect();
        let mut term = e.clone();
        for k in 1..=20 {
            term = mul(&term, &a);
            for row in term.iter_mut() {
                for x in row.iter_mut() {
                    *x /= f64::from(k);
                }
            }
            for (er, tr) in e.iter_mut().zip(&term) {
                for (x, t) in er.iter_mut().zip(tr) {
                    *x += t;
                }
            }
        }
        for _ in 0..squarings {
            e = mul(&e, &e);
        }
        e[0][loss].clamp(0.0, 1.0)
    }

    /// The textbook approximation for μ ≫ nλ without read errors:
    /// μ^t / (n (n−1) ... (n−t) λ^(t+1)).
    pub fn mttdl_approximation(&self) -> f64 {
        let mut denom = 1.0;
        for i in 0..=self.tolerance {
            denom *= f64::from(self.drives - i) * self.lambda_per_hour;
        }
        self.mu_per_hour.powi(self.tolerance as i32) / denom
    }
}

/// Mean time to loss of a volume striped over `groups` independent copies
/// of `chain`, by solving the product chain (one state per combination of
/// failed-drive counts) numerically. Only for checking the `MTTDL / G`
/// approximation: the state space is (t+1)^G, so keep G and t small.
pub fn volume_mttdl_product_chain(chain: &GroupChain, groups: u32) -> f64 {
    let base = chain.tolerance as usize + 1;
    let n = base.pow(groups);
    let digits = |mut s: usize| -> Vec<usize> {
        (0..groups)
            .map(|_| {
                let d = s % base;
                s /= base;
                d
            })
            .collect()
    };
    let mut a = vec![vec![0.0; n]; n];
    for (s, row) in a.iter_mut().enumerate() {
        let ds = digits(s);
        let mut out = 0.0;
        for (g, &i) in ds.iter().enumerate() {
            let up = chain.up(i as u32);
            out += up;
            if i + 1 < base {
                row[s + base.pow(g as u32)] -= up;
            }
            if i > 0 {
                let down = chain.down(i as u32);
                out += down;
                row[s - base.pow(g as u32)] -= down;
            }
        }
        row[s] += out;
    }
    solve(a, vec![1.0; n])[0]
}

/// Solve `a · x = b` by Gaussian elimination with partial pivoting.
/// `a` must be non-singular (a transient generator always is).
pub fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            if f != 0.0 {
                let (top, bottom) = a.split_at_mut(row);
                for (x, p) in bottom[0][col..].iter_mut().zip(&top[col][col..]) {
                    *x -= f * p;
                }
                b[row] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x
}

/// What the reliability model needs to know about a drive and its repair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReliabilityInputs {
    pub drive_mtbf_hours: f64,
    pub drive_capacity_bytes: u64,
    /// Unrecoverable read errors per bit read (1e-15 = one sector per 10^15 bits).
    pub ber_per_bit: f64,
    pub sector_bytes: u64,
    /// Time to rebuild one drive once a replacement is in, hours.
    pub rebuild_hours: f64,
    /// Time before the rebuild starts (0 with a hot spare), hours.
    pub replace_delay_hours: f64,
    /// Mission time for the loss probability, hours.
    pub mission_hours: f64,
    /// Number of identical volumes in the fleet.
    pub fleet: u32,
}

/// Reliability of a volume of `groups` groups of `drives` drives each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReliabilityReport {
    pub drive_mtbf_hours: f64,
    pub drive_afr: f64,
    pub rebuild_hours: f64,
    pub replace_delay_hours: f64,
    /// Bytes read from surviving drives by a rebuild with no redundancy left.
    pub critical_rebuild_read_bytes: f64,
    /// Probability of an unrecoverable read error in that rebuild.
    pub ure_probability_per_critical_rebuild: f64,
    pub chain: GroupChain,
    pub group_mttdl_hours: f64,
    /// The same, from the numerical solution of the chain.
    pub group_mttdl_numerical_hours: f64,
    /// The group MTTDL if drives had no read errors.
    pub group_mttdl_without_ure_hours: f64,
    /// Share of the loss rate due to read errors during rebuild (0..1).
    pub ure_share_of_loss: f64,
    /// Volume = RAID 0 over groups: the first group lost loses the volume.
    pub volume_mttdl_hours: f64,
    pub mission_hours: f64,
    pub volume_loss_probability: f64,
    /// The same from the transient solution of the group chain,
    /// 1 − (1 − P_group(T))^G (no exponential assumption).
    pub volume_loss_probability_numerical: f64,
    pub fleet: u32,
    pub fleet_loss_probability: f64,
    pub fleet_expected_losses: f64,
}

/// Evaluate the reliability of `groups` groups of `drives` drives that
/// each tolerate `tolerance` failures.
pub fn evaluate(
    drives: u32,
    tolerance: u32,
    groups: u32,
    r: &ReliabilityInputs,
) -> Result<ReliabilityReport, PlanError> {
    if !(r.drive_mtbf_hours.is_finite() && r.drive_mtbf_hours > 0.0) {
        return Err(PlanError::invalid(
            "MTBF",
            "must be a positive number of hours (e.g. --mtbf 1200000h or --afr 0.73%)",
        ));
    }
    if !(r.rebuild_hours.is_finite() && r.rebuild_hours > 0.0) {
        return Err(PlanError::invalid(
            "rebuild time",
            "must be positive (e.g. --rebuild-time 12h or --rebuild-rate 50MB/s)",
        ));
    }
    if !(r.ber_per_bit.is_finite() && (0.0..1.0).contains(&r.ber_per_bit)) {
        return Err(PlanError::invalid(
            "bit error rate",
            "must be a probability per bit, e.g. --ber 1e-15",
        ));
    }
    if !(r.replace_delay_hours.is_finite() && r.replace_delay_hours >= 0.0) {
        return Err(PlanError::invalid(
            "replacement delay",
            "must be zero or positive",
        ));
    }
    if tolerance >= drives || groups == 0 {
        return Err(PlanError::invalid(
            "group",
            format!("{drives} drives cannot tolerate {tolerance} failures"),
        ));
    }
    let critical_read = f64::from(drives - tolerance) * r.drive_capacity_bytes as f64;
    let h = if tolerance == 0 {
        0.0
    } else {
        ure_probability(critical_read, r.ber_per_bit, r.sector_bytes)
    };
    let chain = GroupChain {
        drives,
        tolerance,
        lambda_per_hour: 1.0 / r.drive_mtbf_hours,
        mu_per_hour: 1.0 / (r.rebuild_hours + r.replace_delay_hours),
        ure_probability: h,
    };
    let group = chain.mttdl_closed_form();
    let no_ure = GroupChain {
        ure_probability: 0.0,
        ..chain
    }
    .mttdl_closed_form();
    let volume = group / f64::from(groups);
    let mission = r.mission_hours.max(0.0);
    let p_volume = -(-mission / volume).exp_m1();
    let fleet = r.fleet.max(1);
    let expected = f64::from(fleet) * mission / volume;
    Ok(ReliabilityReport {
        drive_mtbf_hours: r.drive_mtbf_hours,
        drive_afr: afr_from_mtbf(r.drive_mtbf_hours),
        rebuild_hours: r.rebuild_hours,
        replace_delay_hours: r.replace_delay_hours,
        critical_rebuild_read_bytes: if tolerance == 0 { 0.0 } else { critical_read },
        ure_probability_per_critical_rebuild: h,
        chain,
        group_mttdl_hours: group,
        group_mttdl_numerical_hours: chain.mttdl_numerical(),
        group_mttdl_without_ure_hours: no_ure,
        ure_share_of_loss: (1.0 - group / no_ure).max(0.0),
        volume_mttdl_hours: volume,
        mission_hours: mission,
        volume_loss_probability: p_volume,
        volume_loss_probability_numerical: {
            let pg = chain.loss_probability_numerical(mission);
            -(f64::from(groups) * (-pg).ln_1p()).exp_m1()
        },
        fleet,
        fleet_loss_probability: -(-expected).exp_m1(),
        fleet_expected_losses: expected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn inputs() -> ReliabilityInputs {
        ReliabilityInputs {
            drive_mtbf_hours: 1_200_000.0,
            drive_capacity_bytes: 4_000_000_000_000,
            ber_per_bit: 1e-15,
            sector_bytes: 512,
            rebuild_hours: 24.0,
            replace_delay_hours: 0.0,
            mission_hours: 5.0 * HOURS_PER_YEAR,
            fleet: 1,
        }
    }

    fn rel(err: f64, a: f64, b: f64) -> bool {
        ((a - b) / b).abs() < err
    }

    #[test]
    fn raid5_closed_form_matches_textbook_exact_formula() {
        // Without UREs the exact RAID 5 MTTDL is ((2n−1)λ + μ) / (n(n−1)λ²).
        let (n, l, m) = (8.0, 1e-6, 1.0 / 24.0);
        let c = GroupChain {
            drives: 8,
            tolerance: 1,
            lambda_per_hour: l,
            mu_per_hour: m,
            ure_probability: 0.0,
        };
        let exact = ((2.0 * n - 1.0) * l + m) / (n * (n - 1.0) * l * l);
        assert!(rel(1e-12, c.mttdl_closed_form(), exact));
        // With URE probability h: (nλ + (n−1)λ + μ) / (nλ((n−1)λ + μh)).
        let h = 0.3;
        let c = GroupChain {
            ure_probability: h,
            ..c
        };
        let exact = (n * l + (n - 1.0) * l + m) / (n * l * ((n - 1.0) * l + m * h));
        assert!(rel(1e-12, c.mttdl_closed_form(), exact));
    }

    #[test]
    fn mission_probability_matches_transient_solution() {
        // The exponential formula against p(0)·exp(QT) of the same chain.
        for (n, t, mtbf, repair, h, g) in [
            (8, 1, 100_000.0, 24.0, 0.1, 1),
            (8, 1, 300_000.0, 48.0, 0.5, 4),
            (12, 2, 50_000.0, 72.0, 0.3, 4),
            (2, 1, 200_000.0, 24.0, 0.05, 10),
            (6, 0, 1_000_000.0, 24.0, 0.0, 2),
        ] {
            let r = evaluate(
                n,
                t,
                g,
                &ReliabilityInputs {
                    drive_mtbf_hours: mtbf,
                    rebuild_hours: repair,
                    ..inputs()
                },
            )
            .unwrap();
            let c = GroupChain {
                ure_probability: h,
                ..r.chain
            };
            let pg = c.loss_probability_numerical(r.mission_hours);
            let exp = -(-r.mission_hours / c.mttdl_closed_form()).exp_m1();
            assert!(
                rel(0.01, exp, pg),
                "n={n} t={t}: exponential {exp} transient {pg}"
            );
            assert!(
                rel(
                    0.01,
                    r.volume_loss_probability,
                    r.volume_loss_probability_numerical
                ),
                "{} vs {}",
                r.volume_loss_probability,
                r.volume_loss_probability_numerical
            );
        }
        // RAID 0 of one drive: exactly 1 − exp(−T/MTBF).
        let c = GroupChain {
            drives: 1,
            tolerance: 0,
            lambda_per_hour: 1e-5,
            mu_per_hour: 1.0,
            ure_probability: 0.0,
        };
        assert!(rel(
            1e-9,
            c.loss_probability_numerical(1e5),
            1.0 - (-1.0f64).exp()
        ));
    }

    #[test]
    fn raid0_is_first_failure() {
        let c = GroupChain {
            drives: 4,
            tolerance: 0,
            lambda_per_hour: 1e-5,
            mu_per_hour: 0.1,
            ure_probability: 0.0,
        };
        assert!(rel(1e-12, c.mttdl_closed_form(), 1.0 / 4e-5));
        assert!(rel(1e-12, c.mttdl_numerical(), 1.0 / 4e-5));
    }

    #[test]
    fn approximation_holds_when_repair_is_fast() {
        for t in 1..=3 {
            let c = GroupChain {
                drives: 12,
                tolerance: t,
                lambda_per_hour: 1e-6,
                mu_per_hour: 1.0 / 10.0,
                ure_probability: 0.0,
            };
            assert!(rel(1e-3, c.mttdl_closed_form(), c.mttdl_approximation()));
        }
    }

    #[test]
    fn ure_probability_known_values() {
        // Reading 12 TB at 1e-14 per bit: 1 − exp(−0.96) ≈ 0.617.
        let p = ure_probability(12e12, 1e-14, 512);
        assert!(rel(1e-3, p, 1.0 - (-0.96f64).exp()), "{p}");
        assert_eq!(ure_probability(0.0, 1e-14, 512), 0.0);
        assert_eq!(ure_probability(1e12, 0.0, 512), 0.0);
        assert!((afr_from_mtbf(mtbf_from_afr(0.015)) - 0.015).abs() < 1e-12);
    }

    #[test]
    fn raid5_with_big_drives_is_dominated_by_read_errors() {
        let r = evaluate(
            8,
            1,
            1,
            &ReliabilityInputs {
                drive_capacity_bytes: 18_000_000_000_000,
                ber_per_bit: 1e-14,
                ..inputs()
            },
        )
        .unwrap();
        assert!(r.ure_share_of_loss > 0.9, "{}", r.ure_share_of_loss);
    }

    #[test]
    fn volume_and_fleet() {
        let one = evaluate(12, 2, 1, &inputs()).unwrap();
        let four = evaluate(12, 2, 4, &inputs()).unwrap();
        assert!(rel(
            1e-12,
            four.volume_mttdl_hours * 4.0,
            one.volume_mttdl_hours
        ));
        let fleet = evaluate(
            12,
            2,
            4,
            &ReliabilityInputs {
                fleet: 100,
                ..inputs()
            },
        )
        .unwrap();
        assert!(fleet.fleet_loss_probability > four.volume_loss_probability);
        assert!(rel(
            1e-9,
            fleet.fleet_expected_losses,
            100.0 * four.mission_hours / four.volume_mttdl_hours
        ));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(
            evaluate(
                12,
                2,
                1,
                &ReliabilityInputs {
                    drive_mtbf_hours: 0.0,
                    ..inputs()
                }
            )
            .is_err()
        );
        assert!(
            evaluate(
                12,
                2,
                1,
                &ReliabilityInputs {
                    rebuild_hours: f64::NAN,
                    ..inputs()
                }
            )
            .is_err()
        );
        assert!(evaluate(2, 2, 1, &inputs()).is_err());
    }

    #[test]
    fn volume_of_g_groups_matches_product_chain() {
        // The exact volume chain agrees with MTTDL_group / G when repairs are
        // much faster than failures (the exponential approximation).
        for (n, t, h) in [(6, 1, 0.0), (6, 1, 0.2), (12, 2, 0.05), (2, 1, 0.01)] {
            let c = GroupChain {
                drives: n,
                tolerance: t,
                lambda_per_hour: 1.0 / 500_000.0,
                mu_per_hour: 1.0 / 24.0,
                ure_probability: h,
            };
            for g in 1..=3 {
                let exact = volume_mttdl_product_chain(&c, g);
                let approx = c.mttdl_closed_form() / f64::from(g);
                assert!(
                    rel(0.01, approx, exact),
                    "n={n} t={t} g={g}: {approx} vs {exact}"
                );
            }
        }
    }

    /// Chains whose condition number (≈ (μ/λ)^t) leaves the numerical
    /// solution meaningful in f64: (μ/λ)^t ≤ 1e10.
    fn arb_chain() -> impl Strategy<Value = GroupChain> {
        (2u32..40, 0u32..4, 1e4f64..1e7, 0.5f64..500.0, 0.0f64..1.0)
            .prop_filter("ill-conditioned", |(_, t, mtbf, repair, _)| {
                (mtbf / repair).powi(*t as i32) <= 1e10
            })
            .prop_map(|(n, t, mtbf, repair, h)| GroupChain {
                drives: n.max(t + 1),
                tolerance: t,
                lambda_per_hour: 1.0 / mtbf,
                mu_per_hour: 1.0 / repair,
                ure_probability: h,
            })
    }

    proptest! {
        #[test]
        fn closed_form_equals_numerical(c in arb_chain()) {
            let a = c.mttdl_closed_form();
            let b = c.mttdl_numerical();
            prop_assert!(a.is_finite() && a > 0.0);
            prop_assert!(((a - b) / b).abs() < 1e-5, "closed {} numerical {}", a, b);
        }

        // Holds while a read error in a critical rebuild is not close to
        // certain: when h ≥ (n−t)/(2n−2t+1) the MTTDL is ≈ (time to first
        // failure)/h and the degraded time itself counts as survival, so a
        // slower rebuild no longer lowers it (docs/MODEL.md).
        #[test]
        fn mttdl_falls_as_rebuild_time_rises(n in 4u32..30, t in 1u32..3, r1 in 1.0f64..200.0, extra in 0.1f64..200.0) {
            let a = evaluate(n, t, 1, &ReliabilityInputs { rebuild_hours: r1, ..inputs() }).unwrap();
            let m = f64::from(n - t);
            prop_assume!(a.ure_probability_per_critical_rebuild < m / (2.0 * m + 1.0));
            let b = evaluate(n, t, 1, &ReliabilityInputs { rebuild_hours: r1 + extra, ..inputs() }).unwrap();
            prop_assert!(b.group_mttdl_hours < a.group_mttdl_hours);
        }

        #[test]
        fn mttdl_falls_as_ber_rises(n in 4u32..30, t in 1u32..3, e in -17.0f64..-13.0, de in 0.1f64..2.0) {
            let a = evaluate(n, t, 1, &ReliabilityInputs { ber_per_bit: 10f64.powf(e), ..inputs() }).unwrap();
            let b = evaluate(n, t, 1, &ReliabilityInputs { ber_per_bit: 10f64.powf(e + de), ..inputs() }).unwrap();
            prop_assert!(b.group_mttdl_hours <= a.group_mttdl_hours);
            if a.ure_probability_per_critical_rebuild < 0.999 {
                prop_assert!(b.group_mttdl_hours < a.group_mttdl_hours);
            }
        }

        #[test]
        fn mttdl_falls_as_width_rises(n in 4u32..40, t in 1u32..3, dn in 1u32..10) {
            let a = evaluate(n, t, 1, &inputs()).unwrap();
            let b = evaluate(n + dn, t, 1, &inputs()).unwrap();
            prop_assert!(b.group_mttdl_hours < a.group_mttdl_hours);
        }

        #[test]
        fn raid6_beats_raid5_at_same_width(n in 4u32..40, cap in 1e11f64..3e13, ber in -16.0f64..-13.0, reb in 1.0f64..300.0) {
            let r = ReliabilityInputs { drive_capacity_bytes: cap as u64, ber_per_bit: 10f64.powf(ber), rebuild_hours: reb, ..inputs() };
            let r5 = evaluate(n, 1, 1, &r).unwrap();
            let r6 = evaluate(n, 2, 1, &r).unwrap();
            prop_assert!(r6.group_mttdl_hours >= r5.group_mttdl_hours);
        }

        #[test]
        fn g_groups_are_g_times_less_reliable(n in 3u32..20, t in 0u32..3, g in 1u32..64) {
            prop_assume!(t < n);
            let one = evaluate(n, t, 1, &inputs()).unwrap();
            let many = evaluate(n, t, g, &inputs()).unwrap();
            prop_assert!(((one.volume_mttdl_hours / many.volume_mttdl_hours) - f64::from(g)).abs() < 1e-9 * f64::from(g));
            prop_assert!(many.volume_loss_probability >= one.volume_loss_probability);
        }
    }
}

/// Parse a long duration into hours: `600000h`, `1.5e6h`, `5y`, `10000y`,
/// `30d`, or anything [`storlab_types::parse_duration`] takes. MTBFs and
/// MTTDLs overflow a nanosecond count (u64 ns ends at 584 years), so this
/// parses the number as a float.
pub fn parse_hours(input: &str) -> Result<f64, PlanError> {
    let s = input.trim();
    let split = s
        .char_indices()
        .find(|&(i, c)| {
            c.is_ascii_alphabetic()
                && !((c == 'e' || c == 'E')
                    && s[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))
        })
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = (s[..split].trim(), s[split..].trim());
    let per_hour = match unit {
        "h" | "hr" | "hrs" | "hour" | "hours" => Some(1.0),
        "d" | "day" | "days" => Some(24.0),
        "y" | "yr" | "yrs" | "year" | "years" => Some(HOURS_PER_YEAR),
        _ => None,
    };
    let bad = || {
        PlanError::invalid(
            format!("duration '{input}'"),
            "expected a number with a unit, e.g. 600000h, 1.5e6h, 30d, 5y or 10000y (also s, m)",
        )
    };
    match per_hour {
        Some(k) => {
            let v: f64 = num.parse().map_err(|_| bad())?;
            if !v.is_finite() || v < 0.0 {
                return Err(bad());
            }
            Ok(v * k)
        }
        None => storlab_types::parse_duration(s)
            .map(|d| d.as_secs_f64() / 3600.0)
            .map_err(|_| bad()),
    }
}

#[cfg(test)]
mod hours_tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_durations() {
        assert_eq!(parse_hours("600000h").unwrap(), 600_000.0);
        assert_eq!(parse_hours("1.5e6h").unwrap(), 1.5e6);
        assert_eq!(parse_hours("10000y").unwrap(), 10_000.0 * HOURS_PER_YEAR);
        assert_eq!(parse_hours("5y").unwrap(), 5.0 * HOURS_PER_YEAR);
        assert_eq!(parse_hours("30d").unwrap(), 720.0);
        assert_eq!(parse_hours("90m").unwrap(), 1.5);
        for b in ["", "h", "-5h", "5 fortnights", "1e400h", "abc"] {
            assert!(parse_hours(b).is_err(), "{b}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,20}") {
            let _ = parse_hours(&s);
        }
        #[test]
        fn hours_round_trip(n in 0u32..100_000_000) {
            prop_assert_eq!(parse_hours(&format!("{n}h")).unwrap(), f64::from(n));
        }
    }
}
