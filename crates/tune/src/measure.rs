//! The values tried: each one set on the top layer and measured, the best
//! two measured again for the run-to-run noise, which points can be
//! trusted, and the verdict (a recommendation, or why none is given).

use crate::stack::{Layer, write_kb};
use serde::Serialize;
use storlab_types::format_bytes;

/// One measured point.
#[derive(Debug, Clone)]
pub struct Point {
    pub kb: u64,
    pub mbps: Option<f64>,
    pub note: String,
    /// The bench's own report that the page cache was emptied.
    pub cache_verified: Option<bool>,
    /// Why the figure cannot be trusted (eviction not verified, under
    /// 1 s, read again from the page cache); empty when it can.
    pub flags: Vec<String>,
}

/// The shortest measurement the tuner recommends from (the bench's own
/// "too short to trust" limit).
const MIN_POINT_NS: u64 = storlab_bench::MIN_TRUSTED_NS;

impl Point {
    /// A point that was not measured, and why.
    pub fn failed(kb: u64, note: String) -> Point {
        Point {
            kb,
            mbps: None,
            note,
            cache_verified: None,
            flags: Vec::new(),
        }
    }

    /// The point a `storlab bench --output-format json` run measured:
    /// `stdout` its output, `failure` how it exited when it failed (none
    /// when it succeeded), `size` the region read.
    pub fn from_bench(kb: u64, stdout: &[u8], failure: Option<String>, size: Option<u64>) -> Point {
        let json: Option<serde_json::Value> = serde_json::from_slice(stdout).ok();
        let phase = json.as_ref().map(|j| &j["phases"][0]);
        let mbps = phase
            .and_then(|p| p["read"]["bw_bytes_per_s"].as_f64())
            .map(|b| b / 1e6);
        let cache_verified = phase.and_then(|p| p["cache"]["verified"].as_bool());
        let flags = match phase {
            Some(p) if failure.is_none() && mbps.is_some() => point_flags(p, size),
            _ => Vec::new(),
        };
        let note = match failure {
            None => flags.join("; "),
            Some(status) => format!("bench exited with {status}"),
        };
        Point {
            kb,
            mbps,
            note,
            cache_verified,
            flags,
        }
    }
}

/// Why one bench phase's figure cannot be recommended from: its eviction
/// was not verified, it lasted under 1 s, or it read its region more than
/// once with the page cache able to hold it (`size`: the region read).
fn point_flags(phase: &serde_json::Value, size: Option<u64>) -> Vec<String> {
    let mut flags = Vec::new();
    if phase["cache"]["verified"].as_bool() != Some(true) {
        flags.push("cache eviction not verified".to_string());
    }
    let elapsed = phase["elapsed_ns"].as_u64().unwrap_or(0);
    if elapsed < MIN_POINT_NS {
        flags.push(format!("ran {:.2} s, under 1 s", elapsed as f64 / 1e9));
    }
    let read = phase["read"]["bytes"].as_u64().unwrap_or(0);
    if phase["cache"]["may_be_cached"].as_bool() == Some(true) && size.is_some_and(|s| read > s) {
        flags.push("read again from the page cache (region under 2× RAM)".to_string());
    }
    flags
}

/// How the front end measures one value (a child `storlab bench`).
pub trait Measure {
    /// Whether the user asked to stop.
    fn stopped(&self) -> bool;
    /// Say what is measured next (`repeat`: the noise measurement).
    fn announce(&mut self, kb: u64, repeat: bool);
    /// Measure with the value `kb` set (`repeat`: not saved).
    fn point(&mut self, kb: u64, repeat: bool) -> Point;
}

/// Each value (in KiB) set on `top` and measured, in order, until a stop;
/// then, unless stopped, the best two again (the noise).
pub fn measure_values(
    top: &Layer,
    values_kb: &[u64],
    m: &mut dyn Measure,
) -> (Vec<Point>, Option<NoiseDoc>) {
    let mut points = Vec::new();
    for &kb in values_kb {
        if m.stopped() {
            break;
        }
        if let Err(e) = write_kb(&top.path, kb) {
            points.push(Point::failed(kb, error_text(&e)));
            continue;
        }
        m.announce(kb, false);
        points.push(m.point(kb, false));
    }
    let noise = if m.stopped() {
        None
    } else {
        repeat_best_two(top, &points, m)
    };
    (points, noise)
}

/// An error with its causes, as `{:#}` of anyhow words it.
fn error_text(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(&format!(": {c}"));
        cause = c.source();
    }
    s
}

/// The run-to-run noise: the best two values read again, unsaved (the
/// stored points stay one per value).
fn repeat_best_two(top: &Layer, points: &[Point], m: &mut dyn Measure) -> Option<NoiseDoc> {
    let mut ok: Vec<(u64, f64)> = points
        .iter()
        .filter_map(|p| p.mbps.map(|m| (p.kb, m)))
        .collect();
    ok.sort_by(|a, b| b.1.total_cmp(&a.1));
    if ok.len() < 2 {
        return None;
    }
    let mut repeats = Vec::new();
    for &(kb, first) in &ok[..2] {
        m.announce(kb, true);
        let again = match write_kb(&top.path, kb) {
            Ok(()) => m.point(kb, true),
            Err(e) => Point::failed(kb, error_text(&e)),
        };
        repeats.push(RepeatDoc {
            readahead_kb: kb,
            first_mb_s: first,
            repeat_mb_s: again.mbps,
            note: again.note,
        });
    }
    Some(noise_of(repeats))
}

/// The best two values measured again: the run-to-run noise the best
/// value's lead must exceed.
#[derive(Debug, Serialize)]
pub struct NoiseDoc {
    /// Each of the two values: its first and its repeated MB/s.
    pub repeats: Vec<RepeatDoc>,
    /// The larger of the two values' differences between their first and
    /// repeated MB/s, in percent of the higher.
    pub noise_pct: f64,
    /// The best value's lead over the next (mean of its two measurements),
    /// in percent of the next.
    pub lead_pct: f64,
}

#[derive(Debug, Serialize)]
pub struct RepeatDoc {
    pub readahead_kb: u64,
    pub first_mb_s: f64,
    pub repeat_mb_s: Option<f64>,
    pub note: String,
}

/// What the points allow: a recommendation, or why none is given.
#[derive(Debug, Serialize)]
pub struct Verdict {
    /// `best` (a value is recommended) or `inconclusive`.
    pub conclusion: &'static str,
    /// Why no value is recommended (empty when one is).
    pub reasons: Vec<String>,
    /// The fastest value measured, recommended or not.
    pub fastest_kb: Option<u64>,
}

/// The noise of the repeated best two and the lead of the faster.
pub fn noise_of(repeats: Vec<RepeatDoc>) -> NoiseDoc {
    let mean = |r: &RepeatDoc| {
        r.repeat_mb_s
            .map_or(r.first_mb_s, |x| (x + r.first_mb_s) / 2.0)
    };
    let noise_pct = repeats
        .iter()
        .map(|r| match r.repeat_mb_s {
            Some(x) if x.max(r.first_mb_s) > 0.0 => {
                (x - r.first_mb_s).abs() / x.max(r.first_mb_s) * 100.0
            }
            // A repeat that failed measured no noise: nothing is known.
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max);
    let lead_pct = match repeats.as_slice() {
        [a, b] if mean(b) > 0.0 => (mean(a) - mean(b)) / mean(b) * 100.0,
        _ => 0.0,
    };
    NoiseDoc {
        repeats,
        noise_pct,
        lead_pct,
    }
}

/// A recommendation only from trusted points whose best is clearly ahead
/// of the next (beyond the noise measured by repeating the two).
pub fn verdict(points: &[Point], noise: Option<&NoiseDoc>, fastest_kb: Option<u64>) -> Verdict {
    let mut reasons = Vec::new();
    let flagged = points.iter().filter(|p| !p.flags.is_empty()).count();
    if flagged > 0 {
        reasons.push(format!(
            "{flagged} of {} point(s) cannot be trusted (see their notes): give a longer --runtime, \
             a larger --size, or a device or file over 2× RAM",
            points.len(),
        ));
    }
    let measured = points.iter().filter(|p| p.mbps.is_some()).count();
    match noise {
        _ if measured == 0 => reasons.push("no value was measured".into()),
        None if measured < 2 => {
            reasons.push("only one value was measured: there is nothing to compare it with".into())
        }
        None => reasons.push("the run stopped before the best two were read again".into()),
        Some(n) => {
            if let Some(r) = n.repeats.iter().find(|r| r.repeat_mb_s.is_none()) {
                reasons.push(format!(
                    "reading {} again failed ({}): the noise is unknown",
                    format_bytes(r.readahead_kb * 1024),
                    r.note
                ));
            } else if let Some(r) = n.repeats.iter().find(|r| !r.note.is_empty())
                && flagged == 0
            {
                reasons.push(format!(
                    "reading {} again cannot be trusted ({})",
                    format_bytes(r.readahead_kb * 1024),
                    r.note
                ));
            } else if n.lead_pct <= n.noise_pct {
                reasons.push(format!(
                    "the fastest leads the next by {:.1} %, not more than the run-to-run noise \
                     ({:.1} %): the difference is not measured",
                    n.lead_pct, n.noise_pct
                ));
            }
        }
    }
    Verdict {
        conclusion: if reasons.is_empty() {
            "best"
        } else {
            "inconclusive"
        },
        reasons,
        fastest_kb,
    }
}

/// How a tuning ends: interrupted when it was stopped, an error when no
/// value could be measured at all, else fine (an inconclusive result is
/// still a result).
pub fn outcome(points: &[Point], stopped: bool) -> storlab_types::outcome::Outcome {
    use storlab_types::outcome::Outcome;
    if stopped {
        Outcome::Interrupted
    } else if points.iter().all(|p| p.mbps.is_none()) {
        Outcome::Error
    } else {
        Outcome::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stopped is interrupted; nothing measured is an error.
    #[test]
    fn a_tuning_ends_by_what_it_measured() {
        use storlab_types::outcome::Outcome;
        let p = |mbps| Point {
            kb: 128,
            mbps,
            note: String::new(),
            cache_verified: None,
            flags: Vec::new(),
        };
        assert_eq!(outcome(&[p(Some(1.0))], true), Outcome::Interrupted);
        assert_eq!(outcome(&[p(None), p(None)], false), Outcome::Error);
        assert_eq!(outcome(&[p(None), p(Some(9.0))], false), Outcome::Ok);
    }

    fn pt(kb: u64, mbps: f64, flags: &[&str]) -> Point {
        Point {
            kb,
            mbps: Some(mbps),
            note: flags.join("; "),
            cache_verified: Some(true),
            flags: flags.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn rep(kb: u64, first: f64, again: f64) -> RepeatDoc {
        RepeatDoc {
            readahead_kb: kb,
            first_mb_s: first,
            repeat_mb_s: Some(again),
            note: String::new(),
        }
    }

    /// Trusted points and a lead beyond the noise: a recommendation. A
    /// lead within the noise, or one flagged point, or one value only:
    /// inconclusive, each with its reason.
    #[test]
    fn a_value_is_recommended_only_when_trusted_and_ahead_beyond_the_noise() {
        let points = [
            pt(128, 100.0, &[]),
            pt(1024, 200.0, &[]),
            pt(4096, 150.0, &[]),
        ];
        let clear = noise_of(vec![rep(1024, 200.0, 196.0), rep(4096, 150.0, 152.0)]);
        assert!(clear.noise_pct < 2.1 && clear.lead_pct > 30.0);
        let v = verdict(&points, Some(&clear), Some(1024));
        assert_eq!(
            (v.conclusion, v.reasons.len()),
            ("best", 0),
            "{:?}",
            v.reasons
        );

        let close = noise_of(vec![rep(1024, 200.0, 150.0), rep(4096, 150.0, 148.0)]);
        let v = verdict(&points, Some(&close), Some(1024));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("run-to-run noise"), "{:?}", v.reasons);

        let flagged = [
            pt(128, 100.0, &[]),
            pt(1024, 200.0, &["ran 0.40 s, under 1 s"]),
        ];
        let v = verdict(&flagged, Some(&clear), Some(1024));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("1 of 2 point(s)"), "{:?}", v.reasons);

        let v = verdict(&points[..1], None, Some(128));
        assert_eq!(v.conclusion, "inconclusive");
        assert!(v.reasons[0].contains("only one value"), "{:?}", v.reasons);
    }

    /// A phase's own figures flag it: unverified eviction, under 1 s, a
    /// region read more than once that the page cache can hold.
    #[test]
    fn a_point_is_flagged_from_its_phase_figures() {
        let ok = serde_json::json!({"elapsed_ns": 3_000_000_000u64,
            "cache": {"verified": true, "may_be_cached": false}, "read": {"bytes": 1u64 << 30}});
        assert!(point_flags(&ok, Some(1 << 30)).is_empty());
        let bad = serde_json::json!({"elapsed_ns": 400_000_000u64,
            "cache": {"verified": false, "may_be_cached": true}, "read": {"bytes": 3u64 << 20}});
        let f = point_flags(&bad, Some(1 << 20));
        assert_eq!(f.len(), 3, "{f:?}");
    }
}
