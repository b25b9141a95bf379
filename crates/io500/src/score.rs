//! The IO500 score, computed as io500's `calc_score` (`src/main.c` at
//! 02091cf) computes it:
//!
//! * for each score group (metadata, then bandwidth), the geometric mean of
//!   the scores of the group's phases that ran (in standard mode the
//!   optional phases are left out); a phase whose score is not above 0 is
//!   skipped, and a group with no phase left scores 0;
//! * the total is the square root of the product of the two group scores
//!   (the geometric mean of bandwidth and IOPS).
//!
//! Bandwidth is in GiB/s (the IOR phases), IOPS in kIOPS (the mdtest phases
//! and find), as io500 prints them.

use crate::phases::{self, ScoreGroup};
use serde::Serialize;

/// The three figures of an IO500 result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scores {
    /// Geometric mean of the bandwidth phases, GiB/s.
    pub bandwidth_gib_s: f64,
    /// Geometric mean of the metadata phases, kIOPS.
    pub md_kiops: f64,
    /// `sqrt(bandwidth × md)`.
    pub total: f64,
}

/// The scores of `measured` (phase name, score in its unit). Phases io500
/// does not score, or optional phases outside extended mode, are ignored, as
/// are unknown names (they cannot be in io500's formula).
pub fn score<'a>(
    measured: impl IntoIterator<Item = (&'a str, f64)> + Clone,
    extended: bool,
) -> Scores {
    let md = group_score(measured.clone(), ScoreGroup::Md, extended);
    let bw = group_score(measured, ScoreGroup::Bw, extended);
    Scores {
        bandwidth_gib_s: bw,
        md_kiops: md,
        total: (md * bw).sqrt(),
    }
}

/// One group's geometric mean, io500's way: multiply the positive scores in
/// phase order, then take the n-th root (`pow(product, 1.0/n)`).
pub fn group_score<'a>(
    measured: impl IntoIterator<Item = (&'a str, f64)>,
    group: ScoreGroup,
    extended: bool,
) -> f64 {
    let mut product = 1.0_f64;
    let mut n = 0_u32;
    for (name, t) in measured {
        let Some(p) = phases::find(name) else {
            continue;
        };
        if p.group != group || (p.optional && !extended) {
            continue;
        }
        if t <= 0.0 || t.is_nan() {
            continue;
        }
        product *= t;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        product.powf(1.0 / f64::from(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures from a published IO500 result line (contrib/s3/README.md of
    /// io500, shortened): the formula on fixed inputs, computed by hand.
    #[test]
    fn geometric_means_as_io500_computes_them() {
        let phases = [
            ("ior-easy-write", 2.0),
            ("mdtest-easy-write", 10.0),
            ("ior-hard-write", 0.5),
            ("mdtest-hard-write", 1.0),
            ("find", 100.0),
            ("ior-easy-read", 4.0),
            ("mdtest-easy-stat", 20.0),
            ("ior-hard-read", 1.0),
            ("mdtest-hard-stat", 5.0),
            ("mdtest-easy-delete", 8.0),
            ("mdtest-hard-read", 2.0),
            ("mdtest-hard-delete", 1.0),
            ("ior-rnd4K-easy-read", 1000.0),
        ];
        let s = score(phases, false);
        // bw = (2 · 0.5 · 4 · 1)^(1/4) = 4^(1/4) = √2
        assert!((s.bandwidth_gib_s - 2f64.sqrt()).abs() < 1e-12);
        // md = (10 · 1 · 100 · 20 · 5 · 8 · 2 · 1)^(1/8) = 1.6e6^(1/8)
        let md: f64 = 1.6e6_f64.powf(0.125);
        assert!((s.md_kiops - md).abs() < 1e-12);
        assert!((s.total - (md * 2f64.sqrt()).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_zero_phase_is_left_out_and_an_empty_group_scores_zero() {
        // find printed 0.000000 [INVALID]: io500 multiplies only scores > 0.
        let s = score(
            [
                ("ior-easy-write", 4.0),
                ("find", 0.0),
                ("mdtest-easy-write", 9.0),
            ],
            false,
        );
        assert_eq!(s.md_kiops, 9.0);
        assert_eq!(s.bandwidth_gib_s, 4.0);
        assert_eq!(s.total, 6.0);
        let none = score([("ior-easy-write", 4.0)], false);
        assert_eq!(none.md_kiops, 0.0);
        assert_eq!(none.total, 0.0);
    }

    #[test]
    fn optional_phases_count_only_in_extended_mode() {
        let m = [
            ("mdtest-easy-write", 4.0),
            ("find-easy", 16.0),
            ("ior-easy-write", 1.0),
        ];
        assert_eq!(score(m, false).md_kiops, 4.0);
        assert_eq!(score(m, true).md_kiops, 8.0);
    }

    proptest::proptest! {
        /// The total is the geometric mean of the two halves, and scaling
        /// every bandwidth phase by k scales the bandwidth score by k.
        #[test]
        fn scaling_all_bandwidth_phases_scales_the_bandwidth_score(
            a in 0.001f64..1e4, b in 0.001f64..1e4, m in 0.001f64..1e4, k in 0.01f64..100.0,
        ) {
            let base = score([("ior-easy-write", a), ("ior-hard-read", b), ("find", m)], false);
            let scaled = score([("ior-easy-write", a * k), ("ior-hard-read", b * k), ("find", m)], false);
            proptest::prop_assert!((scaled.bandwidth_gib_s / base.bandwidth_gib_s - k).abs() < 1e-9 * k);
            proptest::prop_assert!((base.total - (base.bandwidth_gib_s * base.md_kiops).sqrt()).abs() < 1e-9 * base.total);
        }
    }
}
