//! The access-pattern options of issue 27 (`random_distribution`,
//! `seq_skip`, `bs_write`, `rate`, `rate_process`, `io_size`,
//! `number_ios`): their words parsed and checked into [`PhaseParams`]
//! fields. The generators that use them are in `offsets.rs` (where each
//! I/O goes) and `pace.rs` (when it may go).

use crate::options::{PhaseSpec, SpecError};
use storlab_types::{BsWeight, PhaseParams, RandomDistribution, RateProcess, RwMode, Zone};

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

const DIST_HELP: &str = "use random, zipf:THETA, pareto:H, normal:PCT (each with an optional \
     :CENTER from 0 to 1), zoned:A/S:A/S... or zoned_abs:A/SIZE:..., e.g. zipf:1.2 or \
     zoned:60/10:30/20:10/70";

/// A number of a distribution's word, checked by `ok`.
fn number(text: &str, word: &str, what: &str, ok: impl Fn(f64) -> bool) -> Result<f64, SpecError> {
    text.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && ok(*v))
        .ok_or_else(|| {
            SpecError(format!(
                "invalid random_distribution '{word}': {what}; {DIST_HELP}"
            ))
        })
}

/// fio's `sequence:2,0,1` (`parse_sequence_distribution`): block indices
/// separated by ',', at most 64 of them.
fn parse_sequence(word: &str, list: &str) -> Result<RandomDistribution, SpecError> {
    let mut blocks = Vec::new();
    for b in list.split(',').map(str::trim) {
        let n = b.parse::<u64>().map_err(|_| {
            SpecError(format!(
                "invalid random_distribution '{word}': '{b}' is not a block index; \
                 give sequence:I,J,... (whole block numbers, e.g. sequence:2,0,1)"
            ))
        })?;
        blocks.push(n);
    }
    if blocks.len() > 64 {
        return err(format!(
            "invalid random_distribution '{word}': fio takes up to 64 sequence elements, not {}",
            blocks.len()
        ));
    }
    Ok(RandomDistribution::Sequence {
        blocks,
        stride: false,
    })
}

/// Parse fio's `random_distribution` value (`zipf:1.2`, `pareto:0.2:0.5`,
/// `normal:10`, `zoned:60/10:40/90`, `zoned_abs:60/1g:40/3g`); `random`
/// is `None`. Parameters left out take fio's defaults (zipf 1.1, pareto
/// 0.2, normal 0). Zone extents of `zoned_abs` are bytes (`parse_size`).
pub fn parse_distribution(text: &str) -> Result<Option<RandomDistribution>, SpecError> {
    let word = text.trim();
    if let Some(list) = word
        .strip_prefix("sequence")
        .map(|r| r.trim_start_matches(':'))
    {
        return parse_sequence(word, list).map(Some);
    }
    if word.contains(',') {
        return err(format!(
            "invalid random_distribution '{word}': separate read/write distributions (',') are \
             not supported; give one"
        ));
    }
    let (kind, rest) = word.split_once(':').unwrap_or((word, ""));
    let mut params = rest.split(':').filter(|p| !p.trim().is_empty());
    let kind = kind.trim().to_ascii_lowercase();
    let center = |c: Option<&str>| -> Result<Option<f64>, SpecError> {
        c.map(|c| {
            number(c, word, "the center must be from 0 to 1", |v| {
                (0.0..=1.0).contains(&v)
            })
        })
        .transpose()
    };
    let d = match kind.as_str() {
        "random" | "" => {
            if !rest.trim().is_empty() {
                return err(format!(
                    "invalid random_distribution '{word}': random takes no parameter; {DIST_HELP}"
                ));
            }
            return Ok(None);
        }
        "zipf" => RandomDistribution::Zipf {
            theta: params
                .next()
                .map(|t| {
                    number(t, word, "zipf's theta must be above 0 and not 1", |v| {
                        v > 0.0 && v != 1.0
                    })
                })
                .transpose()?
                .unwrap_or(1.1),
            center: center(params.next())?,
        },
        "pareto" => RandomDistribution::Pareto {
            h: params
                .next()
                .map(|t| {
                    number(t, word, "pareto's h must be between 0 and 1", |v| {
                        v > 0.0 && v < 1.0
                    })
                })
                .transpose()?
                .unwrap_or(0.2),
            center: center(params.next())?,
        },
        "normal" | "gauss" => RandomDistribution::Normal {
            dev_pct: params
                .next()
                .map(|t| {
                    number(
                        t,
                        word,
                        "normal's deviation must be from 0 to under 100 (%)",
                        |v| (0.0..100.0).contains(&v),
                    )
                })
                .transpose()?
                .unwrap_or(0.0),
            center: center(params.next())?,
        },
        "zoned" => {
            return Ok(Some(RandomDistribution::Zoned {
                zones: parse_zones(word, rest, false)?,
            }));
        }
        "zoned_abs" => {
            return Ok(Some(RandomDistribution::ZonedAbs {
                zones: parse_zones(word, rest, true)?,
            }));
        }
        _ => {
            return err(format!(
                "invalid random_distribution '{word}': unknown law '{kind}'; {DIST_HELP}"
            ));
        }
    };
    if params.next().is_some() {
        return err(format!(
            "invalid random_distribution '{word}': too many ':' parameters; {DIST_HELP}"
        ));
    }
    Ok(Some(d))
}

/// `A/S:A/S...`: access percentages adding up to 100, extents in percent
/// (at most 100 together) or, `absolute`, sizes. As fio, a value left out
/// (`20/` or `/80`) gets an equal part of what the others leave (of 100 %
/// of the I/Os, or of 100 % of the region; a size cannot be left out).
fn parse_zones(word: &str, rest: &str, absolute: bool) -> Result<Vec<Zone>, SpecError> {
    let bad = |why: String| {
        SpecError(format!(
            "invalid random_distribution '{word}': {why}; {DIST_HELP}"
        ))
    };
    let pct = |t: &str, what: &str| -> Result<Option<u64>, SpecError> {
        let t = t.trim().trim_end_matches('%');
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<u64>()
            .ok()
            .filter(|v| *v <= 100)
            .map(Some)
            .ok_or_else(|| bad(format!("'{t}' is not a whole percentage {what}")))
    };
    let mut given: Vec<(Option<u64>, Option<u64>)> = Vec::new();
    for part in rest.split(':').filter(|p| !p.trim().is_empty()) {
        let (a, sz) = part
            .split_once('/')
            .ok_or_else(|| bad(format!("zone '{part}' is not ACCESS%/EXTENT")))?;
        let extent = if absolute {
            if sz.trim().is_empty() {
                return Err(bad(format!("zone '{part}' has no size")));
            }
            Some(storlab_types::parse_size(sz).map_err(|e| bad(e.to_string()))?)
        } else {
            pct(sz, "of the region")?
        };
        given.push((pct(a, "of the I/Os")?, extent));
    }
    if given.is_empty() || given.len() > 256 {
        return Err(bad("give from 1 to 256 zones".into()));
    }
    // Fill what was left out with an equal part of the rest.
    let fill = |vals: Vec<Option<u64>>, what: &str| -> Result<Vec<u64>, SpecError> {
        let sum: u64 = vals.iter().flatten().sum();
        let missing = vals.iter().filter(|v| v.is_none()).count() as u64;
        if sum > 100 {
            return Err(bad(format!("the {what} add up to {sum}, more than 100")));
        }
        let each = (100 - sum).checked_div(missing).unwrap_or(0);
        Ok(vals.into_iter().map(|v| v.unwrap_or(each)).collect())
    };
    let access = fill(given.iter().map(|g| g.0).collect(), "access percentages")?;
    let extents = if absolute {
        given.iter().map(|g| g.1.unwrap_or(0)).collect()
    } else {
        fill(
            given.iter().map(|g| g.1).collect(),
            "zone extents (% of the region)",
        )?
    };
    let zones: Vec<Zone> = access
        .iter()
        .zip(&extents)
        .map(|(&a, &extent)| Zone {
            access_pct: a as u32,
            extent,
        })
        .collect();
    if let Some(z) = zones.iter().find(|z| z.extent == 0 && z.access_pct > 0) {
        return Err(bad(format!(
            "a zone of {} % of the I/Os is empty",
            z.access_pct
        )));
    }
    let total: u32 = zones.iter().map(|z| z.access_pct).sum();
    if total != 100 {
        return Err(bad(format!(
            "the access percentages add up to {total}, not 100"
        )));
    }
    Ok(zones)
}

/// A size with an optional sign (`-8k`, `112k`), in bytes.
pub fn parse_signed_size(text: &str) -> Result<i64, SpecError> {
    let t = text.trim();
    let (neg, mag) = match t.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let bytes = storlab_types::parse_size(mag)
        .map_err(|e| SpecError(format!("invalid seq_skip '{t}': {e}")))?;
    let v = i64::try_from(bytes).map_err(|_| SpecError(format!("seq_skip '{t}' is too large")))?;
    Ok(if neg { -v } else { v })
}

/// fio's `rate=R[,W]`: one value caps both directions; an empty side is
/// no cap. Returns (read, write) bytes/s.
pub fn parse_rate(text: &str) -> Result<(u64, u64), SpecError> {
    let t = text.trim();
    let help = "use BYTES/S for both directions or READ,WRITE, e.g. 10m, 1m,500k or ,500k";
    let one = |v: &str| -> Result<u64, SpecError> {
        if v.trim().is_empty() {
            return Ok(0);
        }
        storlab_types::parse_size(v)
            .map_err(|e| SpecError(format!("invalid rate '{t}': {e}; {help}")))
    };
    match t.split(',').collect::<Vec<_>>().as_slice() {
        [both] => {
            let v = one(both)?;
            Ok((v, v))
        }
        [r, w] => Ok((one(r)?, one(w)?)),
        [r, w, trim] if trim.trim().is_empty() => Ok((one(r)?, one(w)?)),
        _ => err(format!(
            "invalid rate '{t}': {help} (trims are not supported)"
        )),
    }
}

fn check_bs(b: u64, what: &str) -> Result<u64, SpecError> {
    storlab_types::params::check_number("bs", b)?;
    if b == 0 || b % 512 != 0 || b > 64 << 20 {
        return err(format!(
            "invalid {what} {b}: a non-zero multiple of 512 bytes up to 64 MiB (e.g. 4k, 64k, 1M)"
        ));
    }
    Ok(b)
}

/// A sequence's blocks must lie in the region (fio: "sequence access
/// block out of bounds"); fio counts each direction's I/Os apart, which
/// storlab's one offset stream per job does not, so mixed patterns are
/// refused.
fn check_sequence(blocks: &[u64], rw: RwMode, bs: &[BsWeight], size: u64) -> Result<(), SpecError> {
    if matches!(rw, RwMode::RandRw) {
        return err(
            "random_distribution=sequence with randrw is not supported (fio walks the sequence per \
             direction): use randread or randwrite",
        );
    }
    let max_bs = bs.iter().map(|b| b.bs_bytes).max().unwrap_or(4096);
    let n = size / max_bs.max(1);
    if let Some(b) = blocks.iter().find(|&&b| b >= n) {
        return err(format!(
            "random_distribution=sequence: block {b} is past the region ({n} blocks of {max_bs} \
             bytes): use indices below {n} or a larger --size"
        ));
    }
    Ok(())
}

/// The access-pattern fields of a phase, checked against its pattern,
/// block sizes and size. Every other field is the default (the caller
/// fills them).
pub fn resolve(
    s: &PhaseSpec,
    rw: RwMode,
    bs: &[BsWeight],
    size: u64,
    time_based: bool,
) -> Result<PhaseParams, SpecError> {
    let mut dist = match s.random_distribution.as_deref() {
        Some(t) => parse_distribution(t)?,
        None => None,
    };
    if let Some(RandomDistribution::Sequence { blocks, stride }) = &mut dist {
        *stride = s.random_sequence_stride.is_some_and(|f| f.0);
        check_sequence(blocks, rw, bs, size)?;
    } else if s.random_sequence_stride.is_some_and(|f| f.0) {
        return err(
            "random_sequence_stride applies to random_distribution=sequence:...: drop it or give a sequence",
        );
    }
    if let Some(RandomDistribution::ZonedAbs { zones }) = &dist {
        let total: u64 = zones.iter().map(|z| z.extent).sum();
        if total > size {
            return err(format!(
                "random_distribution zoned_abs: the zones add up to {} but each job's region is {}: \
                 use smaller zones or a larger --size",
                storlab_types::format_bytes(total),
                storlab_types::format_bytes(size)
            ));
        }
    }
    let seq_skip_bytes = match s.seq_skip.as_deref() {
        Some(t) => parse_signed_size(t)?,
        None => 0,
    };
    if seq_skip_bytes != 0 {
        if rw.is_random() || rw == RwMode::ReadModifyWrite {
            return err(format!(
                "seq_skip applies to sequential patterns (read, write, readwrite), not {}: drop it",
                rw.as_str()
            ));
        }
        if seq_skip_bytes % 512 != 0 || seq_skip_bytes.unsigned_abs() >= size {
            return err(format!(
                "invalid seq_skip {seq_skip_bytes}: a multiple of 512 bytes, smaller than --size ({size})"
            ));
        }
    }
    let bs_write_bytes = match s.bs_write {
        None => None,
        Some(_) if rw == RwMode::ReadModifyWrite => {
            return err("bs_write does not apply to rmw (each block is written back at its read size): drop it");
        }
        Some(b) => Some(check_bs(b.0, "bs_write")?),
    }
    // Reads only, or the same size as --bs: nothing to say.
    // (with a bssplit of reads, fio's bssplit=READS,SIZE/100, it always applies).
    .filter(|w| rw.writes() && (bs.len() > 1 || bs.first().is_none_or(|b| b.bs_bytes != *w)));
    let (rate_read, rate_write) = match s.rate.as_deref() {
        Some(t) => parse_rate(t)?,
        None => (0, 0),
    };
    let rate_process = match s.rate_process {
        Some(p) => p,
        None => crate::options::table_default::<RateProcess>()?,
    };
    let io_size_bytes = s.io_size.map_or(0, |b| b.0);
    if s.io_size.is_some() && io_size_bytes == 0 {
        return err("io_size 0: give a size such as 1g, or leave it out");
    }
    // fio's zoned block device mode, emulated (zbd.rs).
    let zbd = match s.zonemode.as_deref() {
        Some("zbd") => Some(crate::zbd::resolve(s, rw, bs, size)?),
        _ => None,
    };
    if zbd.is_some() && seq_skip_bytes != 0 {
        return err("zonemode zbd and seq_skip (rw=read:N) cannot be combined: drop one");
    }
    let (zone_size_bytes, zone_range_bytes, zone_skip_bytes) = if zbd.is_some() {
        (0, 0, 0)
    } else {
        resolve_zones(s, rw, seq_skip_bytes)?
    };
    Ok(PhaseParams {
        random_distribution: dist.filter(|_| rw.is_random()),
        seq_skip_bytes,
        bs_write_bytes,
        rate_read_bytes_per_s: if rw.reads() { rate_read } else { 0 },
        rate_write_bytes_per_s: if rw.writes() { rate_write } else { 0 },
        rate_process,
        io_size_bytes: if time_based { 0 } else { io_size_bytes },
        number_ios: s.number_ios.unwrap_or(0),
        zone_size_bytes,
        zone_range_bytes,
        zone_skip_bytes,
        zbd,
        ..PhaseParams::default()
    })
}

/// fio's `zonemode` with its `zonesize`, `zonerange` and `zoneskip`, as
/// (size, range, skip) bytes; all 0 for `zonemode=none` (fio ignores the
/// zone options then). The range defaults to the size, as fio's.
fn resolve_zones(s: &PhaseSpec, rw: RwMode, seq_skip: i64) -> Result<(u64, u64, u64), SpecError> {
    match s.zonemode.as_deref().unwrap_or("none") {
        "none" => return Ok((0, 0, 0)),
        "strided" => {}
        m => return err(format!("invalid zonemode '{m}': give none, strided or zbd")),
    }
    let size = s.zonesize.map_or(0, |b| b.0);
    if size == 0 {
        return err("zonemode strided needs --zonesize: the bytes of I/O per zone, e.g. 256m");
    }
    if rw.is_random() || rw == RwMode::ReadModifyWrite {
        return err(format!(
            "zonemode strided is supported with sequential patterns (read, write, readwrite), not \
             {}: use a sequential --rw or zonemode none",
            rw.as_str()
        ));
    }
    if seq_skip != 0 {
        return err("zonemode strided and seq_skip (rw=read:N) cannot be combined: drop one");
    }
    let range = match s.zonerange.map_or(0, |b| b.0) {
        0 => size,
        r => r,
    };
    Ok((size, range, s.zoneskip.map_or(0, |b| b.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(text: &str) -> Vec<(u32, u64)> {
        match parse_distribution(text).unwrap() {
            Some(RandomDistribution::Zoned { zones } | RandomDistribution::ZonedAbs { zones }) => {
                zones.iter().map(|z| (z.access_pct, z.extent)).collect()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fio_spellings_and_defaults() {
        assert_eq!(parse_distribution("random").unwrap(), None);
        assert_eq!(
            parse_distribution("zipf").unwrap(),
            Some(RandomDistribution::Zipf {
                theta: 1.1,
                center: None
            })
        );
        assert_eq!(
            parse_distribution("pareto:0.3:0.5").unwrap(),
            Some(RandomDistribution::Pareto {
                h: 0.3,
                center: Some(0.5)
            })
        );
        assert_eq!(
            parse_distribution("gauss:10").unwrap(),
            Some(RandomDistribution::Normal {
                dev_pct: 10.0,
                center: None
            })
        );
        // fio's examples/rand-zones.fio leaves the last extent out: 80 %.
        assert_eq!(
            zones("zoned:50/5:30/15:20/"),
            vec![(50, 5), (30, 15), (20, 80)]
        );
        assert_eq!(zones("zoned:/50:/50"), vec![(50, 50), (50, 50)]);
        assert_eq!(
            zones("zoned_abs:60/20G:40/100G"),
            vec![(60, 20 << 30), (40, 100 << 30)]
        );
    }

    #[test]
    fn bad_distributions_say_what_fio_takes() {
        let e = |t: &str| parse_distribution(t).unwrap_err().0;
        assert!(e("zipf:1").contains("not 1"));
        assert!(e("pareto:1.5").contains("between 0 and 1"));
        assert!(e("normal:100").contains("under 100"));
        assert!(e("zipf:1.2:2").contains("center"));
        assert!(e("zoned:60/10:30/20").contains("add up to 90"));
        assert!(e("zoned:60/60:40/60").contains("more than 100"));
        assert!(e("zoned:50/0:50/100").contains("empty"));
        assert!(e("zoned_abs:60/:40/1g").contains("no size"));
        // fio's sequence (issue 27): a list of block indices, up to 64.
        assert_eq!(
            parse_distribution("sequence:2,0,1").unwrap(),
            Some(RandomDistribution::Sequence {
                blocks: vec![2, 0, 1],
                stride: false
            })
        );
        assert!(e("sequence:2,x").contains("not a block index"));
        let long = format!("sequence:{}", vec!["1"; 65].join(","));
        assert!(e(&long).contains("up to 64"));
        assert!(e("zipf:1.2,pareto:0.2").contains("read/write"));
        assert!(e("lognormal").contains("unknown law"));
    }

    #[test]
    fn rates_and_skips() {
        assert_eq!(parse_rate("1MB").unwrap(), (1_000_000, 1_000_000));
        assert_eq!(parse_rate("1MB,500kB").unwrap(), (1_000_000, 500_000));
        assert_eq!(parse_rate(",500kB").unwrap(), (0, 500_000));
        assert_eq!(parse_rate("500kB,").unwrap(), (500_000, 0));
        assert!(parse_rate("1m,2m,3m").is_err());
        assert!(parse_rate("fast").is_err());
        assert_eq!(parse_signed_size("-8k").unwrap(), -8192);
        assert_eq!(parse_signed_size("112k").unwrap(), 112 * 1024);
    }
}
