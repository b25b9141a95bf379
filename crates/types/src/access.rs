//! Access-pattern parameters of a phase beyond `rw` and `bs` (issue 27):
//! fio's `random_distribution` and `rate_process`, resolved.

use serde::{Deserialize, Serialize};

/// Where random I/Os fall (fio's `random_distribution`); absent from a
/// record means uniform (`random`). zipf, pareto and normal draw a *rank*
/// from their law and scatter ranks over the region's blocks (fio hashes
/// the rank; storlab uses a seeded permutation, so no two ranks share a
/// block), then shift by `center` (a fraction of the region) when given.
/// Every non-uniform law draws with replacement (fio disables its random
/// map for them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RandomDistribution {
    /// Zipf with exponent `theta` (≠ 1): rank k (1-based) has weight k^-θ.
    Zipf { theta: f64, center: Option<f64> },
    /// Pareto with fio's `h` (0 < h < 1): rank = (n−1)·u^(ln h / ln(1−h)),
    /// so the hottest fraction h of blocks takes a share 1−h of the hits.
    Pareto { h: f64, center: Option<f64> },
    /// fio's `normal:P`: the mean of 12 uniform ranks (a bell of σ ≈ n/12
    /// around the middle) plus a uniform spread of P % of the region.
    Normal { dev_pct: f64, center: Option<f64> },
    /// `zoned:A/S:...`: A % of the I/Os fall uniformly in the next S % of
    /// the region, zone after zone.
    Zoned { zones: Vec<Zone> },
    /// `zoned_abs:A/SIZE:...`: as `Zoned`, with zone sizes in bytes.
    ZonedAbs { zones: Vec<Zone> },
    /// fio's `sequence:2,0,1`: the i-th I/O goes to block `blocks[i mod
    /// n]` (blocks of the block size), repeated; with `stride` (fio's
    /// `random_sequence_stride`) cycle c adds c·n, so the pattern moves
    /// through the region group by group.
    Sequence { blocks: Vec<u64>, stride: bool },
}

/// One zone of a zoned distribution: the share of I/Os it takes and its
/// extent (percent of the region for `zoned`, bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub access_pct: u32,
    pub extent: u64,
}

/// How rate-capped I/Os are spaced (fio's `rate_process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateProcess {
    /// Evenly: the k-th I/O is due at k / rate.
    #[default]
    Linear,
    /// A Poisson process: exponential gaps whose mean is 1 / rate.
    Poisson,
}

impl RateProcess {
    /// The words a user may write (the parameter registry's choices).
    pub const WORDS: [&'static str; 2] = ["linear", "poisson"];

    /// Whether this is the default (and left out of records).
    pub fn is_linear(&self) -> bool {
        *self == RateProcess::Linear
    }

    /// The process a word names (`linear`, `poisson`).
    pub fn parse(s: &str) -> Option<RateProcess> {
        match s.trim() {
            "linear" => Some(RateProcess::Linear),
            "poisson" => Some(RateProcess::Poisson),
            _ => None,
        }
    }
}

/// fio's `unified_rw_reporting`: how a mixed phase's directions are
/// reported. The record keeps [`UnifiedRw::record_word`] in
/// `ReportOptions::unified_rw_reporting` (empty for `none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnifiedRw {
    /// Each direction on its own line (fio's `none`, `0`).
    #[default]
    None,
    /// One line of reads and writes together (fio's `mixed`, `1`).
    Mixed,
    /// The directions and the mixed line (fio's `both`, `2`).
    Both,
}

impl UnifiedRw {
    /// The words a user may write (the parameter registry's choices); fio's
    /// numbers `0`, `1`, `2` are read too.
    pub const WORDS: [&'static str; 3] = ["none", "mixed", "both"];

    /// The setting a word (any case) or fio's number names.
    pub fn parse(s: &str) -> Option<UnifiedRw> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "0" => Some(UnifiedRw::None),
            "mixed" | "1" => Some(UnifiedRw::Mixed),
            "both" | "2" => Some(UnifiedRw::Both),
            _ => None,
        }
    }

    /// As the record keeps it: `mixed`, `both`, or empty for `none`.
    pub fn record_word(self) -> &'static str {
        match self {
            UnifiedRw::None => "",
            UnifiedRw::Mixed => "mixed",
            UnifiedRw::Both => "both",
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{PhaseParams, RandomDistribution, RateProcess};

    /// Records made before these fields load, and write none of them back
    /// when unset; set ones round-trip.
    #[test]
    fn old_records_load_and_new_fields_round_trip() {
        let old = serde_json::to_value(PhaseParams::default()).unwrap();
        for k in [
            "random_distribution",
            "seq_skip_bytes",
            "bs_write_bytes",
            "rate_read_bytes_per_s",
            "rate_write_bytes_per_s",
            "rate_process",
            "io_size_bytes",
            "number_ios",
        ] {
            assert!(old.get(k).is_none(), "{k} written while unset");
        }
        let back: PhaseParams = serde_json::from_value(old).unwrap();
        assert_eq!(back, PhaseParams::default());
        let p = PhaseParams {
            random_distribution: Some(RandomDistribution::Zipf {
                theta: 1.2,
                center: Some(0.25),
            }),
            seq_skip_bytes: -8192,
            rate_process: RateProcess::Poisson,
            rate_write_bytes_per_s: 500_000,
            ..PhaseParams::default()
        };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["random_distribution"]["kind"], "zipf");
        assert_eq!(v["rate_process"], "poisson");
        assert_eq!(serde_json::from_value::<PhaseParams>(v).unwrap(), p);
    }
}

/// fio's `zonemode=zbd` emulated on an ordinary file or device (fio's
/// `init_zone_info`): zones of `zone_size` bytes from the start of the
/// file, each with a write pointer kept in memory, every zone empty at the
/// start. Writes go to a zone's write pointer; a full zone is reset before
/// it is written again (see `crates/bench/src/zbd.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZbdParams {
    /// `zonesize`, bytes.
    pub zone_size: u64,
    /// `zonecapacity`: the writable bytes of each zone (default the size).
    pub zone_capacity: u64,
    /// `max_open_zones`: zones written at once per file; 0 = no limit.
    #[serde(default)]
    pub max_open_zones: u32,
    /// `job_max_open_zones`: zones one job writes at once; 0 = no limit.
    #[serde(default)]
    pub job_max_open_zones: u32,
    /// `zone_reset_threshold`: a share of the region's bytes (0..1).
    #[serde(default)]
    pub reset_threshold: f64,
    /// `zone_reset_frequency`: reset one zone every 1/F writes once the
    /// threshold is passed (0 = never).
    #[serde(default)]
    pub reset_frequency: f64,
    /// `read_beyond_wp`: reads may go past a zone's write pointer.
    #[serde(default)]
    pub read_beyond_wp: bool,
    /// Zones the phase reset (full zones written again, trims, the reset
    /// threshold): fio's "N zone resets". A figure of the run, filled in
    /// once the phase is over (0 in a phase's request).
    #[serde(default)]
    pub zone_resets: u64,
}
