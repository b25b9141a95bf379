//! fio's `bsrange=MIN-MAX` (`blocksize_range`) as the exact block-size
//! split fio draws from.
//!
//! fio (`io_u.c`, `get_next_buflen`, without `bssplit` and without
//! `bs_unaligned`) takes `buflen = min + (u64)(max · r/(RAND_MAX+1))`,
//! rounds it down to a multiple of `min` and caps it at `max`. The draw
//! `min + j`, `j` uniform over `0..max`, rounds to `k·min` for the `min`
//! values of `j` in `[(k-1)·min, k·min)`; so every multiple of `min` up to
//! `max` has the share `min/max`, and when `max` is no multiple of `min`
//! the last `max mod min` draws are capped at `max` itself. storlab's
//! `bssplit` takes whole percentages, so a range is mapped when every
//! share is one (`4k-16k`: 4 sizes at 25 %); otherwise it is refused with
//! the nearest whole-percentage split to write instead.

/// The sizes fio draws for `min..=max` and the share of each, as
/// (size, numerator) over the denominator `max`.
pub(super) fn shares(min: u64, max: u64) -> Vec<(u64, u64)> {
    if min == 0 || min >= max {
        return vec![(max.max(min), 1)];
    }
    let mut out: Vec<(u64, u64)> = (1..=max / min).map(|k| (k * min, min)).collect();
    if max % min != 0 {
        out.push((max, max % min));
    }
    out
}

/// `bssplit` text for the range when each share is a whole percentage;
/// otherwise the error names the shares and the nearest split.
pub(super) fn as_bssplit(min: u64, max: u64) -> Result<String, String> {
    let s = shares(min, max);
    if s.len() == 1 {
        return Ok(format!("{}/100", s[0].0));
    }
    if s.len() > 100 {
        return Err(format!(
            "fio draws {} block sizes from it, more than storlab's bssplit can name (whole \
             percentages): write a narrower range or a bssplit",
            s.len()
        ));
    }
    let exact = s.iter().all(|&(_, n)| (n * 100) % max == 0);
    let pcts = nearest_percentages(&s, max);
    let split = s
        .iter()
        .zip(&pcts)
        .map(|(&(b, _), p)| format!("{b}/{p}"))
        .collect::<Vec<_>>()
        .join(":");
    if exact {
        Ok(split)
    } else {
        let each = 100.0 * min as f64 / max as f64;
        Err(format!(
            "fio draws {} block sizes from it, {each:.4}% each, and storlab's bssplit takes whole \
             percentages: write bssplit={split} (the nearest whole split), or a range whose number \
             of sizes divides 100 (e.g. {min}-{})",
            s.len(),
            min * 4
        ))
    }
}

/// Whole percentages adding up to 100, each the share rounded by the
/// largest remainder.
fn nearest_percentages(s: &[(u64, u64)], den: u64) -> Vec<u64> {
    let mut p: Vec<u64> = s.iter().map(|&(_, n)| n * 100 / den).collect();
    let mut rest: Vec<(u64, usize)> = s
        .iter()
        .enumerate()
        .map(|(i, &(_, n))| ((n * 100) % den, i))
        .collect();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let short = 100 - p.iter().sum::<u64>().min(100);
    for &(_, i) in rest.iter().take(usize::try_from(short).unwrap_or(0)) {
        p[i] += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's draw, simulated over every `j` in `0..max`: the counts it
    /// gives each size are the shares.
    fn fio_draws(min: u64, max: u64) -> Vec<(u64, u64)> {
        let mut counts = std::collections::BTreeMap::new();
        for j in 0..max {
            let mut b = min + j;
            b -= b % min;
            b = b.min(max);
            *counts.entry(b).or_insert(0u64) += 1;
        }
        counts.into_iter().collect()
    }

    #[test]
    fn shares_are_fios_draws() {
        assert_eq!(shares(4096, 4096), [(4096, 1)]);
        for (min, max) in [(4096, 16384), (4096, 10240), (512, 4096), (4096, 65536)] {
            let want: Vec<(u64, u64)> = fio_draws(min, max);
            assert_eq!(shares(min, max), want, "{min}-{max}");
        }
    }

    #[test]
    fn exact_ranges_map_and_others_name_the_nearest_split() {
        assert_eq!(as_bssplit(4096, 4096).unwrap(), "4096/100");
        assert_eq!(
            as_bssplit(4096, 16384).unwrap(),
            "4096/25:8192/25:12288/25:16384/25"
        );
        // 4k-10k: 4k and 8k 40 % each, 10k (the capped draws) 20 %.
        assert_eq!(as_bssplit(4096, 10240).unwrap(), "4096/40:8192/40:10240/20");
        let e = as_bssplit(4096, 12288).unwrap_err();
        assert!(
            e.contains("33.3333%") && e.contains("bssplit=4096/34:8192/33:12288/33"),
            "{e}"
        );
        assert!(as_bssplit(512, 1 << 20).unwrap_err().contains("narrower"));
    }
}
