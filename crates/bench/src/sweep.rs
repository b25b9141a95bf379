//! Sweeps: which points a `storlab sweep` runs. A [`Vary`] is one option
//! from the option table with its list of values (`bs=4k,64k,1m`) or a
//! ranges (`bs=4k..4m:x2`, `iodepth=1..256:x2`, `numjobs=1..8:+1`, in the
//! one grammar of [`storlab_types::range`]; a sweep's range needs a step);
//! [`expand`] turns several of them into [`SweepPoint`]s, the cartesian
//! product (first option outermost) or, zipped, the lists side by side.
//! Every value is checked against its option's kind here, so a typo fails
//! before anything runs; whether a combination makes sense is checked per
//! point later (a point that fails is recorded and the sweep goes on).

use crate::options::{OptKind, SpecError, find_option, typed_value};
use storlab_types::parse_size;
use storlab_types::range::{Bare, expand_list, whole};

/// The most points one sweep may have (a guard against `1..1000000:+1`).
pub const MAX_POINTS: usize = 10_000;

/// One varied option and its values, as typed (`4k`, `64k`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    /// The option's key in the table (`bs`, `iodepth_batch`).
    pub key: &'static str,
    pub values: Vec<String>,
}

/// One point of a sweep: its index and `(key, value)` for each varied option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepPoint {
    pub index: usize,
    pub params: Vec<(&'static str, String)>,
}

impl SweepPoint {
    /// `bs=4k,numjobs=2`: the point's name in tables, tags and progress.
    pub fn label(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn bad<T>(spec: &str, why: impl std::fmt::Display) -> Result<T, SpecError> {
    Err(SpecError(format!("invalid --vary '{spec}': {why}")))
}

/// A size as short as it can be written exactly: `4k`, `1m`, `1536`.
pub fn short_size(b: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

impl Vary {
    /// Parse `KEY=V1,V2,...` or `KEY=FROM..TO:xN` / `KEY=FROM..TO:+N` /
    /// `KEY=FROM..TO/N`, or a comma list of values and ranges. KEY is any
    /// bench option (its job-file key, flag, fio alias or a name of the
    /// parameter vocabulary such as `qd`).
    pub fn parse(spec: &str) -> Result<Vary, SpecError> {
        let Some((name, list)) = spec.split_once('=') else {
            return bad(
                spec,
                "expected OPTION=VALUES, e.g. bs=4k,64k,1m or iodepth=1..256:x2",
            );
        };
        let name = name.trim();
        // `group.NAME.KEY`: one job group's option.
        let (group, name) = match split_group_key(name) {
            Some((g, k)) => (Some(g), k),
            None if name.starts_with("group.") => {
                return bad(
                    spec,
                    "a group's option is group.NAME.OPTION, e.g. group.write.numjobs=1,2,3",
                );
            }
            None => (None, name),
        };
        let def = find_option(name.trim()).ok_or_else(|| {
            SpecError(format!(
                "invalid --vary '{spec}': unknown option '{}' (the options of `storlab bench --help`, e.g. bs, iodepth, numjobs, size, rw)",
                name.trim()
            ))
        })?;
        let kind = def.kind;
        let values = expand_list(
            list.trim(),
            Bare::Refused,
            |v| match kind {
                OptKind::Size => parse_size(v).map_err(|e| e.to_string()),
                OptKind::Int => whole(v).map_err(|e| e.to_string()),
                _ => {
                    Err("ranges are for sizes and numbers; list text values: rw=read,write".into())
                }
            },
            |v| match kind {
                OptKind::Size => short_size(v),
                _ => v.to_string(),
            },
        )
        .map_err(|e| SpecError(format!("invalid --vary '{spec}': {e}")))?;
        if values.len() > MAX_POINTS {
            return bad(spec, format!("more than {MAX_POINTS} values"));
        }
        if values.iter().any(String::is_empty) {
            return bad(spec, "an empty value in the list");
        }
        for v in &values {
            typed_value(def, v).map_err(|e| SpecError(format!("invalid --vary '{spec}': {e}")))?;
        }
        let key = match group {
            // The key names the group: leaked once per --vary (a handful
            // per process), so points keep their `&'static str` keys.
            Some(g) => &*Box::leak(format!("group.{g}.{}", def.key).into_boxed_str()),
            None => def.key,
        };
        Ok(Vary { key, values })
    }
}

/// `group.NAME.KEY` → `(NAME, KEY)` (KEY after the last dot).
pub fn split_group_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("group.")?;
    let (name, opt) = rest.rsplit_once('.')?;
    (!name.is_empty() && !opt.is_empty()).then_some((name, opt))
}

/// The points of a sweep: the cartesian product of the lists (the first
/// option outermost, so it changes slowest), or with `zip` the lists side
/// by side (all the same length). No options: one point with no parameters.
pub fn expand(varies: &[Vary], zip: bool) -> Result<Vec<SweepPoint>, SpecError> {
    for (i, v) in varies.iter().enumerate() {
        if varies[..i].iter().any(|w| w.key == v.key) {
            return Err(SpecError(format!(
                "--vary {} is given twice: put all its values in one list",
                v.key
            )));
        }
    }
    let mut points: Vec<Vec<(&'static str, String)>> = vec![Vec::new()];
    if zip && !varies.is_empty() {
        let n = varies[0].values.len();
        if let Some(v) = varies.iter().find(|v| v.values.len() != n) {
            return Err(SpecError(format!(
                "--zip pairs the lists value by value, but {} has {} values and {} has {n}: give them the same length",
                v.key,
                v.values.len(),
                varies[0].key
            )));
        }
        points = (0..n)
            .map(|i| {
                varies
                    .iter()
                    .map(|v| (v.key, v.values[i].clone()))
                    .collect()
            })
            .collect();
    } else {
        for v in varies {
            if points.len().saturating_mul(v.values.len()) > MAX_POINTS {
                return Err(SpecError(format!(
                    "the sweep has more than {MAX_POINTS} points: vary fewer options or fewer values"
                )));
            }
            points = points
                .iter()
                .flat_map(|p| {
                    v.values.iter().map(move |val| {
                        let mut q = p.clone();
                        q.push((v.key, val.clone()));
                        q
                    })
                })
                .collect();
        }
    }
    Ok(points
        .into_iter()
        .enumerate()
        .map(|(index, params)| SweepPoint { index, params })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(s: &str) -> Vary {
        Vary::parse(s).unwrap()
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(v("bs=4k,64k, 1m").values, ["4k", "64k", "1m"]);
        assert_eq!(v("blocksize=4k").key, "bs", "fio alias");
        let g = v("group.write.numjobs=1..3:+1");
        assert_eq!(g.key, "group.write.numjobs");
        assert_eq!(g.values, ["1", "2", "3"]);
        assert_eq!(v("group.a.b.iodepth=2").key, "group.a.b.iodepth");
        assert_eq!(
            split_group_key("group.a.b.iodepth"),
            Some(("a.b", "iodepth"))
        );
        assert!(Vary::parse("group.numjobs=1").is_err());
        assert!(Vary::parse("group.w.colour=1").is_err());
        assert_eq!(v("iodepth-batch=1,2").key, "iodepth_batch", "flag spelling");
        assert_eq!(v("bs=4k..64k:x2").values, ["4k", "8k", "16k", "32k", "64k"]);
        assert_eq!(v("bs=4k..4m:x2").values.len(), 11);
        assert_eq!(v("iodepth=1..256:x2").values.len(), 9);
        assert_eq!(v("numjobs=1..4:+1").values, ["1", "2", "3", "4"]);
        assert_eq!(
            v("numjobs=1..6:x4").values,
            ["1", "4"],
            "TO need not be hit"
        );
        assert_eq!(v("size=1m..3m:+1m").values, ["1m", "2m", "3m"]);
        assert_eq!(v("rw=read,randread").values, ["read", "randread"]);
        assert_eq!(v("iodepth=1..64/3").values, ["1", "33", "64"]);
        assert_eq!(v("bs=512,4k..16k:x2").values, ["512", "4k", "8k", "16k"]);
    }

    /// Every name the parameter vocabulary gives a bench option is a sweep
    /// name (`sweep --vary qd=1,2` said "unknown option" while `compare
    /// --vary qd` was accepted), and every spelling of the option table is in
    /// the vocabulary.
    #[test]
    fn every_vocabulary_name_of_an_option_is_a_sweep_name() {
        use storlab_types::params::{PARAMS, lookup};
        assert_eq!(v("qd=1,2").key, "iodepth");
        assert_eq!(v("ramp=0,1s").key, "ramp_time");
        for p in PARAMS {
            let Some(opt) = p.option else { continue };
            for n in std::iter::once(&p.key).chain(p.aliases) {
                let def = find_option(n).unwrap_or_else(|| panic!("{n} is no bench option"));
                // The option itself, or one of its own (direct, bssplit).
                assert!(
                    def.key == opt || def.key == *n || def.aliases.contains(n),
                    "{n} -> {} (vocabulary: {opt})",
                    def.key
                );
                let sample = match def.kind {
                    crate::OptKind::Flag => "1",
                    // The smallest value the vocabulary allows (nrfiles: only 1).
                    crate::OptKind::Int => "1",
                    crate::OptKind::Size => "8k",
                    crate::OptKind::Text => continue,
                };
                assert!(Vary::parse(&format!("{n}={sample}")).is_ok(), "{n}");
            }
        }
        for o in crate::OPTIONS.iter().filter(|o| o.key != "name") {
            for n in std::iter::once(&o.key).chain(o.aliases) {
                assert!(
                    lookup(n).is_some(),
                    "option spelling {n} is not in the vocabulary"
                );
            }
        }
    }

    #[test]
    fn mistakes_are_named() {
        let e = |s: &str| Vary::parse(s).unwrap_err().0;
        assert!(e("bs").contains("OPTION=VALUES"));
        assert!(e("blcksize=4k").contains("unknown option 'blcksize'"));
        assert!(e("iodepth=1,two").contains("whole number"));
        assert!(e("bs=4k,,8k").contains("empty value"));
        assert!(e("bs=4k..1m").contains("needs a step"));
        assert!(e("bs=4k..1m:x1").contains("must grow"));
        assert!(e("bs=1m..4k:x2").contains("FROM <= TO"));
        assert!(e("rw=read..write:x2").contains("ranges are for sizes"));
        assert!(e("numjobs=1..100000:+1").contains("more than"));
        assert!(e("bs=4x").contains("size"));
    }

    #[test]
    fn products_and_zips() {
        let p = expand(&[v("bs=4k,1m"), v("numjobs=1,2,4")], false).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[0].label(), "bs=4k,numjobs=1");
        assert_eq!(p[1].label(), "bs=4k,numjobs=2");
        assert_eq!(p[5].label(), "bs=1m,numjobs=4");
        assert_eq!(p[5].index, 5);
        let z = expand(&[v("bs=4k,1m"), v("iodepth=32,4")], true).unwrap();
        assert_eq!(z.len(), 2);
        assert_eq!(z[1].label(), "bs=1m,iodepth=4");
        let e = expand(&[v("bs=4k,1m"), v("iodepth=1,2,3")], true)
            .unwrap_err()
            .0;
        assert!(e.contains("same length"), "{e}");
        let e = expand(&[v("bs=4k"), v("blocksize=8k")], false)
            .unwrap_err()
            .0;
        assert!(e.contains("given twice"), "{e}");
        assert_eq!(expand(&[], false).unwrap().len(), 1);
        let big = [v("numjobs=1..1000:+1"), v("iodepth=1..1000:+1")];
        assert!(expand(&big, false).is_err());
    }

    /// A value outside the vocabulary's bounds is refused when the sweep
    /// is read, before any point runs, with the vocabulary's message.
    #[test]
    fn vary_refuses_values_outside_the_bounds() {
        for (spec, want) in [
            (
                "iodepth=0,1",
                "invalid iodepth 0: from 1 to 4096 (e.g. iodepth=1)",
            ),
            ("qd=1,4097", "invalid iodepth 4097: from 1 to 4096"),
            ("numjobs=1..8192:x2", "invalid numjobs 8192: from 1 to 4096"),
            ("rwmixread=50,101", "invalid rwmixread 101: from 0 to 100"),
            (
                "engine=psync,nope",
                "invalid engine 'nope': one of io_uring",
            ),
        ] {
            let e = Vary::parse(spec).unwrap_err().0;
            assert!(e.contains(want), "{spec}: {e}");
        }
    }

    #[test]
    fn relative_sizes_vary() {
        storlab_types::set_ram_bytes(1 << 30);
        assert_eq!(v("size=0.25xRAM,2xRAM").values, ["0.25xRAM", "2xRAM"]);
        let s = crate::spec_from_pairs([("size", "0.25xRAM")]).unwrap();
        assert_eq!(s.size.map(|b| b.0), Some(256 << 20));
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "[a-z_=0-9kmx.,:+]{0,30}") {
            let _ = Vary::parse(&s);
        }

        #[test]
        fn ranges_stay_in_bounds(lo in 1u64..5000, span in 0u64..100_000, step in 2u64..9, mul: bool) {
            let hi = lo + span;
            let s = if mul { format!("numjobs={lo}..{hi}:x{step}") } else { format!("numjobs={lo}..{hi}:+{step}") };
            if let Ok(v) = Vary::parse(&s) {
                let n: Vec<u64> = v.values.iter().map(|x| x.parse().unwrap()).collect();
                prop_assert_eq!(n[0], lo);
                prop_assert!(n.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(*n.last().unwrap() <= hi);
            }
        }

        #[test]
        fn product_size_is_the_product(a in 1usize..6, b in 1usize..6, c in 1usize..4) {
            let list = |k: &str, n: usize| Vary::parse(&format!("{k}={}", (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(","))).unwrap();
            let p = expand(&[list("numjobs", a), list("iodepth", b), list("rwmixread", c)], false).unwrap();
            prop_assert_eq!(p.len(), a * b * c);
            let labels: std::collections::BTreeSet<String> = p.iter().map(SweepPoint::label).collect();
            prop_assert_eq!(labels.len(), p.len());
        }
    }
}
