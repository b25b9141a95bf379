//! The bench option table: every workload option declared **once**, with
//! its job-file key (also its JSON and sweep name), command-line flag,
//! fio aliases, value name, default and help. From this one declaration
//! come [`PhaseSpec`] (the typed, all-optional layer that job files,
//! command lines and sweeps fill), its layering ([`PhaseSpec::overlay`]),
//! and [`OPTIONS`], the table the command line builds its flags from.
//! [`resolve_phase`] then validates a fully layered spec into
//! [`PhaseParams`], the resolved parameters every result echoes.
//!
//! Adding an option: one entry in [`bench_options!`] below (and its check
//! in `resolve_phase`), its field in `PhaseParams` (storlab-types), and its
//! use in the engine. The CLI, job files, sweeps and the schema echo follow.

use serde::{Deserialize, Serialize};
use storlab_types::{
    BsWeight, BufferPattern, ByteSize, CacheMode, EngineKind, FileLayout, PhaseParams, RateProcess,
    RwMode, SteadyCriterion, SteadyMetric, SteadyState, UnifiedRw, parse_duration, parse_size,
};

/// A bad job description: what is wrong, where, and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

impl From<storlab_types::params::ValueError> for SpecError {
    fn from(e: storlab_types::params::ValueError) -> SpecError {
        SpecError(e.to_string())
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// A yes/no value as storage people write it: `true`/`false`, fio's
/// `1`/`0`, `yes`/`no`, `on`/`off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Flag(pub bool);

impl Flag {
    /// Parse the spellings above.
    pub fn parse(s: &str) -> Option<Flag> {
        match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(Flag(true)),
            "0" | "false" | "no" | "off" => Some(Flag(false)),
            _ => None,
        }
    }
}

/// `fallocate`: a yes/no value that also takes fio's words, `native` (or
/// `posix`) and `none`; only this option takes them (`--verify=native` is
/// refused, not read as on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Fallocate(pub bool);

impl Fallocate {
    /// Its words, then the yes/no spellings.
    pub fn parse(s: &str) -> Option<Fallocate> {
        match s.trim().to_ascii_lowercase().as_str() {
            "native" | "posix" => Some(Fallocate(true)),
            "none" => Some(Fallocate(false)),
            _ => Flag::parse(s).map(|f| Fallocate(f.0)),
        }
    }
}

/// Reads a yes/no option from TOML: a boolean, 0/1 or a word its type
/// parses (`words` says which, for the refusal).
fn de_yes_no<'de, D: serde::Deserializer<'de>, T>(
    d: D,
    parse: fn(&str) -> Option<T>,
    of_bool: fn(bool) -> T,
    words: &'static str,
) -> Result<T, D::Error> {
    struct V<T>(fn(&str) -> Option<T>, fn(bool) -> T, &'static str);
    impl<T> serde::de::Visitor<'_> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("true or false (or 1/0, yes/no, on/off)")
        }
        fn visit_bool<E>(self, v: bool) -> Result<T, E> {
            Ok((self.1)(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
            match v {
                0 => Ok((self.1)(false)),
                1 => Ok((self.1)(true)),
                _ => Err(E::custom(format!("{v} is not 0 or 1"))),
            }
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
            self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            (self.0)(v).ok_or_else(|| E::custom(format!("'{v}' is not {}", self.2)))
        }
    }
    d.deserialize_any(V(parse, of_bool, words))
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        let words = "a yes/no value: use true or false (or 1/0)";
        de_yes_no(d, Flag::parse, Flag, words)
    }
}

impl<'de> Deserialize<'de> for Fallocate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Fallocate, D::Error> {
        let words = "a fallocate value: use native or none (or true/false, 1/0)";
        de_yes_no(d, Fallocate::parse, Fallocate, words)
    }
}

/// How an option's value is written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// On/off: `--verify`, `--verify=1`, `--verify=0`.
    Flag,
    /// A whole number.
    Int,
    /// A size: `4k`, `1M`, `10GiB`.
    Size,
    /// Text (a name, a pattern, a duration such as `30s`).
    Text,
}

/// Maps a field type to how its value is written, the words it takes and
/// how a value typed as text is checked: the option table reads these, so
/// a type's refusals, `--help` value list and completions are one.
pub trait OptType {
    const KIND: OptKind;
    /// The words it takes: a choice's (the vocabulary's choices, in the
    /// order refusals list them), or a yes/no option's own (`native|none`).
    const CHOICES: &'static [&'static str] = &[];
    /// A yes/no option's value (its own words or the yes/no spellings).
    fn yes_no(s: &str) -> Option<bool> {
        Flag::parse(s).map(|f| f.0)
    }
    /// A value typed as text, checked (a choice's word); others pass.
    fn check(_: &str) -> Result<(), SpecError> {
        Ok(())
    }
}
impl OptType for Flag {
    const KIND: OptKind = OptKind::Flag;
}
impl OptType for Fallocate {
    const KIND: OptKind = OptKind::Flag;
    const CHOICES: &'static [&'static str] = &["native", "none"];
    fn yes_no(s: &str) -> Option<bool> {
        Fallocate::parse(s).map(|f| f.0)
    }
}
impl OptType for u32 {
    const KIND: OptKind = OptKind::Int;
}
impl OptType for u64 {
    const KIND: OptKind = OptKind::Int;
}
impl OptType for ByteSize {
    const KIND: OptKind = OptKind::Size;
}
impl OptType for String {
    const KIND: OptKind = OptKind::Text;
}

/// A choice-valued option's type (`rw`, `engine`, `cache`, `rate_process`,
/// `unified_rw_reporting`): its words are parsed once, where the spec is
/// read, into the record's own enum (whose serde names the JSON keeps).
pub trait Choice: Sized {
    /// The option's key (and the vocabulary's parameter).
    const KEY: &'static str;
    /// The word as users write it, aliases included (`rw` for readwrite).
    fn parse_word(s: &str) -> Option<Self>;
}

/// A [`Choice`] and its [`OptType`]: the key, the words and the parser.
macro_rules! choice_type {
    ($($ty:ty => $key:literal, $words:expr, $parse:path;)*) => {$(
        impl Choice for $ty {
            const KEY: &'static str = $key;
            fn parse_word(s: &str) -> Option<Self> {
                $parse(s)
            }
        }
        impl OptType for $ty {
            const KIND: OptKind = OptKind::Text;
            const CHOICES: &'static [&'static str] = &$words;
            fn check(s: &str) -> Result<(), SpecError> {
                parse_choice::<$ty>(s).map(drop)
            }
        }
    )*};
}

choice_type! {
    RwMode => "rw", RwMode::WORDS, RwMode::parse;
    EngineKind => "engine", EngineKind::WORDS, EngineKind::parse;
    CacheMode => "cache", CacheMode::WORDS, CacheMode::parse;
    RateProcess => "rate_process", RateProcess::WORDS, RateProcess::parse;
    UnifiedRw => "unified_rw_reporting", UnifiedRw::WORDS, UnifiedRw::parse;
}

/// `T`'s word, or the vocabulary's refusal naming its choices.
pub fn parse_choice<T: Choice>(value: &str) -> Result<T, SpecError> {
    choice(T::KEY, value, T::parse_word)
}

/// Reads a choice-valued field of a [`PhaseSpec`] through [`parse_choice`],
/// so a job file, a flag and `--vary` accept the same words.
fn de_choice<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Choice,
{
    let word = String::deserialize(d)?;
    parse_choice(&word)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(e.0))
}

/// One option, as the command line, job files and sweeps know it.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    /// Job-file key, JSON name and sweep name (`iodepth_batch`).
    pub key: &'static str,
    /// Command-line flag without dashes (`iodepth-batch`).
    pub long: &'static str,
    /// Other spellings accepted everywhere (fio's names).
    pub aliases: &'static [&'static str],
    /// A flag that sets a default-on option off (`no-end-fsync`).
    pub negate: Option<&'static str>,
    pub value_name: &'static str,
    /// The default, as shown in help ("" when it depends on other options).
    pub default: &'static str,
    pub help: &'static str,
    pub kind: OptKind,
    /// The words it takes (`OptType::CHOICES`): what refusals name and
    /// shell completion offers.
    pub choices: &'static [&'static str],
    /// A yes/no option's value (`OptType::yes_no`).
    pub yes_no: fn(&str) -> Option<bool>,
    /// A text value's check (`OptType::check`).
    pub check: fn(&str) -> Result<(), SpecError>,
}

impl OptDef {
    /// The other spellings its command-line flag takes: the job-file key
    /// when it differs from the flag (`--iodepth_batch`), and every alias
    /// with underscores and with dashes (`--sqthread_poll`,
    /// `--sqthread-poll`), except a fio spelling read in fio's units
    /// ([`FIO_UNIT_SPELLINGS`]: a flag of its own).
    pub fn flag_aliases(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.key != self.long {
            out.push(self.key.to_string());
        }
        for alias in self.aliases {
            if FIO_UNIT_SPELLINGS.iter().any(|(n, _)| n == alias) {
                continue;
            }
            out.push(alias.to_string());
            let dashed = alias.replace('_', "-");
            if dashed != *alias && dashed != self.long {
                out.push(dashed);
            }
        }
        out
    }

    /// Whether its flag may stand alone (`--direct` for `--direct=1`): a
    /// yes/no option written `0|1`. One whose values are words
    /// (`--fallocate native|none`) always takes one.
    pub fn value_optional(&self) -> bool {
        self.kind == OptKind::Flag && self.choices.is_empty()
    }

    /// Whether a value may start with `-` (a backwards `--seq-skip -8k`).
    pub fn takes_negative(&self) -> bool {
        self.key == "seq_skip"
    }

    /// The one-line help with its default.
    pub fn help_line(&self) -> String {
        let h = self.help.trim();
        if self.default.is_empty() {
            h.to_string()
        } else {
            format!("{h} [default: {}]", self.default)
        }
    }
}

/// Find an option by key, flag or alias (`iodepth_batch`, `iodepth-batch`,
/// `iodepth_batch_submit`), or by any name the parameter vocabulary
/// ([`storlab_types::params`]) gives it (`qd` for `iodepth`, `ramp` for
/// `ramp_time`): an alias one command accepts, every command accepts.
pub fn find_option(name: &str) -> Option<&'static OptDef> {
    let n = name.trim_start_matches('-');
    let by_name = |n: &str| {
        OPTIONS
            .iter()
            .find(|o| o.key == n || o.long == n || o.aliases.contains(&n))
    };
    by_name(n).or_else(|| storlab_types::params::option_of(n).and_then(by_name))
}

macro_rules! some_or_none {
    () => {
        None
    };
    ($x:literal) => {
        Some($x)
    };
}

/// Declares every bench option once; see the module documentation.
macro_rules! bench_options {
    ($(
        $(#[doc = $doc:literal])+
        $field:ident : $ty:ty = $default:literal,
            long $long:literal, value $vn:literal
            $(, aliases [$($alias:literal),* $(,)?])?
            $(, negate $neg:literal)?
            $(, read_with $with:literal)?
            ;
    )*) => {
        /// One phase as typed: every field optional; later layers override
        /// earlier ones (machine defaults < `[global]` < `[[phase]]` <
        /// command line < sweep point). Generated from the option table.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct PhaseSpec {
            $(
                $(#[doc = $doc])+
                $($(#[serde(alias = $alias)])*)?
                $(#[serde(deserialize_with = $with)])?
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
            /// Job groups run together in this phase (`[[phase.group]]`):
            /// each a spec over this one (see `groups.rs`).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub group: Vec<PhaseSpec>,
            /// Values for one named group only, over everything else (a
            /// sweep's `--vary group.NAME.KEY=...`); not a job-file key.
            #[serde(skip)]
            pub group_over: std::collections::BTreeMap<String, PhaseSpec>,
        }

        /// Every bench option, in the order `--help` lists them.
        pub const OPTIONS: &[OptDef] = &[$(
            OptDef {
                key: stringify!($field),
                long: $long,
                aliases: &[$($($alias),*)?],
                negate: some_or_none!($($neg)?),
                value_name: $vn,
                default: $default,
                help: concat!($($doc),+),
                kind: <$ty as OptType>::KIND,
                choices: <$ty as OptType>::CHOICES,
                yes_no: <$ty as OptType>::yes_no,
                check: <$ty as OptType>::check,
            },
        )*];

        impl PhaseSpec {
            /// Fields set in `over` replace those in `self`, except that
            /// one setting spelled two ways is replaced as a pair (see
            /// [`PAIRED`]).
            pub fn overlay(&self, over: &PhaseSpec) -> PhaseSpec {
                let mut base = self.clone();
                if over.bs.is_some() || over.bssplit.is_some() {
                    base.bs = None;
                    base.bssplit = None;
                }
                if over.direct.is_some() || over.cache.is_some() {
                    base.direct = None;
                    base.cache = None;
                }
                PhaseSpec {
                    $($field: over.$field.clone().or(base.$field),)*
                    group: if over.group.is_empty() { base.group } else { over.group.clone() },
                    group_over: {
                        let mut g = base.group_over;
                        for (name, spec) in &over.group_over {
                            let merged = g.get(name).map_or_else(|| spec.clone(), |b| b.overlay(spec));
                            g.insert(name.clone(), merged);
                        }
                        g
                    },
                }
            }
        }
    };
}

/// Options that are one setting spelled two ways: setting either in a
/// later layer replaces both from earlier layers (a phase's `bs` overrides
/// a global `bssplit`; a phase's `direct = true` a global `cache = "cold"`).
pub const PAIRED: &[(&str, &str)] = &[("bs", "bssplit"), ("direct", "cache")];

bench_options! {
    /// Phase name in tables and the store
    name: String = "", long "name", value "NAME";
    /// I/O pattern: read, write, randread, randwrite, readwrite (rw), randrw, rmw (read each block, then write it back), trim, randtrim (punch holes in storlab's file; discard on a device, with --allow-destroy); a job file's phase without rw reads, and `storlab bench` with no workload flag runs the quick check
    rw: RwMode = "", long "rw", value "PATTERN", aliases ["readwrite"], read_with "de_choice";
    /// Percentage of reads in a mixed pattern (readwrite, randrw)
    rwmixread: u32 = "50", long "rwmixread", value "PCT";
    /// Block size, e.g. 4k, 64k, 1M
    bs: ByteSize = "4k", long "bs", value "SIZE", aliases ["blocksize"];
    /// Block size mix, SIZE/PERCENT pairs: 4k/50:64k/50
    bssplit: String = "", long "bssplit", value "MIX";
    /// Bytes per job (its file or region)
    size: ByteSize = "256M", long "size", value "SIZE";
    /// Number of jobs (threads)
    numjobs: u32 = "1", long "numjobs", value "N";
    /// I/Os in flight per job
    iodepth: u32 = "1", long "iodepth", value "N";
    /// I/O engine: io_uring, libaio, psync, null (psync where io_uring is unavailable)
    engine: EngineKind = "io_uring", long "engine", value "ENGINE", aliases ["ioengine"], read_with "de_choice";
    /// O_DIRECT: --direct or --direct=1 (same as --cache direct); --direct=0 is --cache cold
    direct: Flag = "", long "direct", value "0|1";
    /// Page-cache state: direct (O_DIRECT), cold (evicted before each phase), warm (pre-read), buffered (left as earlier steps left it, as IOR and fio's invalidate=0 do); cold where O_DIRECT is unsupported
    cache: CacheMode = "direct", long "cache", value "MODE", read_with "de_choice";
    /// With --cache cold, also drop the whole page cache (root only)
    drop_caches: Flag = "off", long "drop-caches", value "0|1";
    /// Limit of the measured time, e.g. 30s, 2m
    runtime: String = "", long "runtime", value "DUR";
    /// Repeat passes over the region until --runtime expires
    time_based: Flag = "off", long "time-based", value "0|1";
    /// Warm-up time whose I/O is not counted, e.g. 5s
    ramp_time: String = "0", long "ramp-time", value "DUR";
    /// fsync after every N writes per job (0 = never)
    fsync_every: u32 = "0", long "fsync-every", value "N", aliases ["fsync"];
    /// fsync at the end of write phases, inside the timed window (--no-end-fsync: writes may then not be durable)
    end_fsync: Flag = "on", long "end-fsync", value "0|1", negate "no-end-fsync";
    /// One file shared by all jobs (each job its own region)
    shared_file: Flag = "off", long "shared-file", value "0|1";
    /// With a shared file, interleave jobs in units of SIZE
    stride: ByteSize = "", long "stride", value "SIZE";
    /// Data written: random (incompressible), zero, compressible:PCT
    buffer_pattern: String = "random", long "buffer-pattern", value "PATTERN";
    /// Random offsets with replacement instead of every block once per pass
    random_with_replacement: Flag = "off", long "random-with-replacement", value "0|1", aliases ["norandommap"];
    /// Write self-checking blocks and check them on read (exit 1 on any mismatch)
    verify: Flag = "off", long "verify", value "0|1";
    /// Seed for offsets and data
    seed: u64 = "", long "seed", value "N", aliases ["randseed"];
    /// io_uring: kernel-side submission polling (uses a kernel thread's CPU)
    sqpoll: Flag = "off", long "sqpoll", value "0|1", aliases ["sqthread_poll"];
    /// io_uring: registered buffers and files (--no-registered to turn off)
    registered: Flag = "on", long "registered", value "0|1", aliases ["fixedbufs", "registerfiles"], negate "no-registered";
    /// Cap on I/Os per second per job (0 = none)
    rate_iops: u32 = "0", long "rate-iops", value "N";
    /// Pre-allocation of new files: native (fallocate) or none (sparse)
    fallocate: Fallocate = "native", long "fallocate", value "native|none";
    /// io_uring and libaio: enter the kernel once N I/Os are queued (1 = adaptive: freed slots go to the kernel in growing calls of 2, 4, 8, ..., never waiting for a batch to fill)
    iodepth_batch: u32 = "1", long "iodepth-batch", value "N", aliases ["iodepth_batch_submit"];
    /// Null engine only: a synthetic fixed service time per I/O, e.g. 1ms (checks the measurement pipeline)
    null_latency: String = "0", long "null-latency", value "DUR";
    /// Interval of the application's own time series kept in the result (bandwidth, IOPS, latency percentiles per interval), e.g. 1s, 200ms
    log_interval: String = "1s", long "log-interval", value "DUR";
    /// fio's percentile_list: latency percentiles to report besides p50, p90, p99, p99.9 and p99.99, separated by ':' (e.g. 95:99.5:99.999), in the table and the JSON (phases[].percentiles)
    percentile_list: String = "", long "percentile-list", value "PCT:PCT";
    /// fio's unified_rw_reporting: mixed (or 1) shows one line of reads and writes together per phase, both (2) the directions and that line, none (0) the directions
    unified_rw_reporting: UnifiedRw = "none", long "unified-rw-reporting", value "none|mixed|both", read_with "de_choice";
    /// fio's lat_percentiles: accepted; storlab's latency always spans submission to completion (fio's lat, not its clat)
    lat_percentiles: Flag = "on", long "lat-percentiles", value "0|1";
    /// fio's clat_percentiles: accepted; storlab reports one latency, submission to completion (fio's lat), whatever this says
    clat_percentiles: Flag = "on", long "clat-percentiles", value "0|1";
    /// fio's randrepeat: 1 draws the same offsets and data on every run (the default), 0 a new seed each run (recorded in the result); --seed wins
    randrepeat: Flag = "on", long "randrepeat", value "0|1";
    /// fio's zero_buffers: write zero-filled blocks (same as --buffer-pattern zero)
    zero_buffers: Flag = "off", long "zero-buffers", value "0|1";
    /// Stop the phase once steady (fio's form): bw_slope:PCT, iops_slope:PCT or lat_slope:PCT (slope over the window, % of its mean per second), bw:PCT, iops:PCT or lat:PCT (largest deviation from the window's mean, % of it; lat is each interval's mean latency)
    steadystate: String = "", long "steadystate", value "CRIT:PCT", aliases ["ss"];
    /// The window steadystate judges, a whole number of --log-interval
    steadystate_duration: String = "30s", long "steadystate-duration", value "DUR", aliases ["ss_dur"];
    /// Time after the start of measuring before steadystate starts judging
    steadystate_ramp_time: String = "0", long "steadystate-ramp-time", value "DUR", aliases ["ss_ramp"];
    /// Passes over the region (fio's loops; ignored with --time-based)
    loops: u32 = "1", long "loops", value "N";
    /// Files per job (fio's nrfiles); only 1 is supported (use --numjobs for more files)
    nrfiles: u32 = "1", long "nrfiles", value "N";
    /// Pause after each completion before reusing its slot (fio's thinktime; a bare number is microseconds, as in fio)
    thinktime: String = "0", long "thinktime", value "DUR";
    /// Job groups only: read existing files in place (never written) instead of new ones: paths or globs (`*`, `?`, `[...]` in the file name) separated by ':', relative to the current directory; job k reads file k (round-robin)
    files: String = "", long "files", value "PATHS";
    /// Job groups only: use the files of the group NAME of the same phase (job k that group's file k), e.g. readers of what a writer group lays out
    files_of: String = "", long "files-of", value "GROUP";
    /// Job groups only, multi-client runs (mpirun): the ranks that run this group's jobs, e.g. 0-5 (ranges and ranks separated by ':'); each of them runs numjobs jobs of the group and nothing else
    ranks: String = "", long "ranks", value "RANKS";
    /// Multi-client runs (mpirun): the ranks of each job group, in group order, separated by ',', e.g. 0-5,6-8 (the first group on ranks 0-5, the second on 6-8); the sets must be disjoint and cover every rank
    group_ranks: String = "", long "group-ranks", value "SETS";
    /// fio's group_reporting: the table shows one line per group (or per reporting group, see --new-group) instead of one per job; per-job figures stay in the JSON
    group_reporting: Flag = "off", long "group-reporting", value "0|1";
    /// fio's new_group: with --group-reporting, this group starts a reporting group of its own (the default for storlab's groups; fio job files say new_group=0 for their jobs, so the jobs no new_group separates are reported as one line, as fio does)
    new_group: Flag = "on", long "new-group", value "0|1";
    /// Random patterns: where the I/Os fall (fio's random_distribution): random (uniform), zipf:THETA (THETA > 0, not 1), pareto:H (0 < H < 1: the hottest H of the blocks take 1-H of the hits), normal:PCT (fio's: a bell of sigma about 8 % of the region plus a uniform spread of PCT %), each with an optional :CENTER (0..1) shifting the hot spot; zoned:A/S:... (A % of the I/Os in the next S % of the region) or zoned_abs:A/SIZE:...; sequence:I,J,... (fio's: the blocks of those indices in that order, repeated; see --random-sequence-stride) Every non-uniform law draws with replacement, as fio (which turns its random map off for them); zoned too (fio keeps its map there)
    random_distribution: String = "random", long "random-distribution", value "DIST";
    /// Sequential patterns: bytes skipped after each I/O, negative to move backwards (fio's rw=read:N, e.g. --seq-skip -8k reads 4k blocks from the end down; 112k writes 16k every 128k); the pass still moves --size bytes, wrapping as fio does
    seq_skip: String = "0", long "seq-skip", value "SIZE";
    /// Block size of writes when it differs from --bs (fio's bs=R,W); with --bssplit the split is the reads' (fio's bssplit=READS,SIZE/100)
    bs_write: ByteSize = "", long "bs-write", value "SIZE";
    /// Bandwidth cap per job in bytes/s (fio's rate): one value caps reads and writes each, READ,WRITE caps them apart, ',500k' only writes (0 = none)
    rate: String = "0", long "rate", value "R[,W]";
    /// How rate-capped I/Os are spaced (--rate, --rate-iops): linear (evenly) or poisson (exponential gaps whose mean is one I/O's share of the rate, as fio's rate_process)
    rate_process: RateProcess = "linear", long "rate-process", value "linear|poisson", read_with "de_choice";
    /// Stop each job after it moved SIZE bytes (fio's io_size/io_limit): less than --size ends early, more passes over the region again; with --time-based the runtime decides instead
    io_size: ByteSize = "", long "io-size", value "SIZE", aliases ["io_limit"];
    /// Stop each job after N I/Os (times --loops, as fio's number_ios; 0 = no limit); it only ends a job early
    number_ios: u64 = "0", long "number-ios", value "N";
    // --- fio's verify, error, priority, placement and dedupe options (issue 27; verify.rs, errors.rs, prio.rs, placement.rs, dedupe.rs) ---
    /// Where each job's region starts in its file or device (fio's offset); job N starts at offset + N × --offset-increment
    offset: ByteSize = "0", long "offset", value "SIZE";
    /// Job N's region starts N × SIZE further (fio's offset_increment)
    offset_increment: ByteSize = "0", long "offset-increment", value "SIZE";
    /// Write phases: ENOSPC ends the phase as its normal end, not an error (fio's fill_device); never beyond --size or the device's end
    fill_device: Flag = "off", long "fill-device", value "0|1", aliases ["fill_fs"];
    /// fio's verify=NAME (crc32c, md5, sha256, xxhash, meta, pattern, ...): recorded; storlab checks every variant with its own checksum and header per unit
    verify_method: String = "", long "verify-method", value "NAME";
    /// With --verify, a writing job reads back and checks what it wrote after every N writes (fio's verify_backlog; 0 = not during the phase)
    verify_backlog: u64 = "0", long "verify-backlog", value "N";
    /// With --verify, a failed unit is saved beside the data file as FILE.OFFSET.received and .expected (fio's verify_dump)
    verify_dump: Flag = "off", long "verify-dump", value "0|1";
    /// With --verify, fill each unit after its header with this pattern and check it (fio's verify_pattern: 0xHEX, "text", or a number)
    verify_pattern: String = "", long "verify-pattern", value "PATTERN";
    /// With --verify, bytes per checked unit (fio's verify_interval; at least 64, dividing every block size)
    verify_interval: ByteSize = "", long "verify-interval", value "SIZE";
    /// With --verify, 0 writes verifiable data but checks nothing in this phase (fio's do_verify)
    do_verify: Flag = "on", long "do-verify", value "0|1";
    // --- verify in job groups (issue 27, grpverify; verify.rs, run/grouped.rs) ---
    /// With --verify, a job stops at its first mismatch (fio's verify_fatal); the run fails with exit 1 either way
    verify_fatal: Flag = "off", long "verify-fatal", value "0|1";
    /// fio's verify_async=N: recorded; storlab checks on each job's own thread (fio's N offload threads change where a check runs, not what is checked)
    verify_async: u64 = "0", long "verify-async", value "N";
    /// I/O errors a job counts and goes on after (fio's continue_on_error): none, read, write, io, verify, all
    continue_on_error: String = "none", long "continue-on-error", value "KINDS";
    /// errnos that --continue-on-error goes on after, READ,WRITE,VERIFY lists of names or numbers separated by ':' (fio's ignore_error; default EIO:EILSEQ)
    ignore_error: String = "", long "ignore-error", value "R,W,V";
    /// List each error that --continue-on-error goes on after (fio's error_dump); they are counted either way
    error_dump: Flag = "on", long "error-dump", value "0|1";
    /// The job's I/O priority level 0-7 (fio's prio; with --prioclass)
    prio: u32 = "", long "prio", value "0-7";
    /// The job's I/O priority class: 1 realtime, 2 best-effort, 3 idle (fio's prioclass)
    prioclass: u32 = "", long "prioclass", value "1-3";
    /// libaio/io_uring: percent of reads,writes issued with the --cmdprio-class priority (fio's cmdprio_percentage)
    cmdprio_percentage: String = "", long "cmdprio-percentage", value "R[,W]";
    /// The priority class of --cmdprio-percentage's I/Os, reads,writes (fio's cmdprio_class; default 1)
    cmdprio_class: String = "", long "cmdprio-class", value "R[,W]";
    /// The priority level of --cmdprio-percentage's I/Os, reads,writes (fio's cmdprio; default 0)
    cmdprio: String = "", long "cmdprio", value "R[,W]";
    /// The priority hint of --cmdprio-percentage's I/Os, reads,writes (fio's cmdprio_hint; default 0)
    cmdprio_hint: String = "", long "cmdprio-hint", value "R[,W]";
    /// libaio/io_uring: per block size, percent of I/Os with a priority (fio's cmdprio_bssplit: BS/PCT[/CLASS/LEVEL[/HINT]]:...,WRITES)
    cmdprio_bssplit: String = "", long "cmdprio-bssplit", value "SPLIT";
    /// fio's log_prio: accepted; a phase whose I/Os carry several priorities reports each priority's latency apart
    log_prio: Flag = "off", long "log-prio", value "0|1";
    /// Run each job's thread on the CPUs of these NUMA nodes (fio's numa_cpu_nodes: 0, 0-1, 0,2)
    numa_cpu_nodes: String = "", long "numa-cpu-nodes", value "NODES";
    /// Memory policy of each job's thread (fio's numa_mem_policy): default, local, prefer:N, bind:NODES, interleave:NODES
    numa_mem_policy: String = "", long "numa-mem-policy", value "POLICY";
    /// Percent of written blocks that repeat an earlier block's content (fio's dedupe_percentage)
    dedupe_percentage: u32 = "0", long "dedupe-percentage", value "PCT";
    /// Which content a repeated block has (fio's dedupe_mode): repeat (the last unique block) or working_set
    dedupe_mode: String = "repeat", long "dedupe-mode", value "repeat|working_set";
    /// working_set: the repeated blocks come from the first PCT % of the region's unique blocks (fio's dedupe_working_set_percentage)
    dedupe_working_set_percentage: u32 = "5", long "dedupe-working-set-percentage", value "PCT";
    /// working_set: the jobs of a phase share one working set, so blocks repeat across their files (fio's dedupe_global)
    dedupe_global: Flag = "off", long "dedupe-global", value "0|1";
    // fio's run-control options (issue 27, fiojob3; runctl.rs).
    /// fio's startdelay: this job starts DUR after the phase does (its ramp and runtime start then; a bare number is seconds)
    startdelay: String = "0", long "startdelay", value "DUR";
    /// fio's exitall: when this job ends, stop the jobs --exit-what names
    exitall: Flag = "off", long "exitall", value "0|1";
    /// fio's exit_what: the jobs --exitall stops: group (its reporting group), stonewall (every job of the phase; the next phase runs) or all (the phases after it too)
    exit_what: String = "group", long "exit-what", value "group|stonewall|all";
    /// fio's flow: this job's weight in fio's token flow control; the jobs of one --flow-id keep their I/O counts in the ratio of their weights (0 = off)
    flow: u64 = "0", long "flow", value "WEIGHT";
    /// fio's flow_id: the jobs that pace each other with --flow
    flow_id: u64 = "0", long "flow-id", value "ID";
    /// fio's flow_sleep: how long a job ahead of its --flow share waits before looking again (a bare number is microseconds)
    flow_sleep: String = "0", long "flow-sleep", value "DUR";
    /// fio's rate_min: fail the job when its bandwidth over a --ratecycle falls below this, bytes/s (R or R,W), after fio's 2 s settle period
    rate_min: String = "0", long "rate-min", value "R[,W]", aliases ["ratemin"];
    /// fio's rate_iops_min: as --rate-min in I/Os per second
    rate_iops_min: String = "0", long "rate-iops-min", value "R[,W]";
    /// fio's ratecycle: the span --rate-min is judged over (a bare number is milliseconds)
    ratecycle: String = "1000", long "ratecycle", value "DUR", aliases ["rate_cycle"];
    /// fio's latency_target: find the highest queue depth (up to --iodepth) whose latencies meet this target, as fio's search does, and report it (a bare number is microseconds)
    latency_target: String = "0", long "latency-target", value "DUR";
    /// fio's latency_window: how long each depth of the --latency-target search runs (a bare number is microseconds)
    latency_window: String = "0", long "latency-window", value "DUR";
    /// fio's latency_percentile: the share of I/Os that must meet --latency-target
    latency_percentile: String = "100", long "latency-percentile", value "PCT";
    /// fio's latency_run: keep adjusting the depth for the whole runtime instead of ending the job once it has settled
    latency_run: Flag = "off", long "latency-run", value "0|1";
    /// fio's random_sequence_stride: with --random-distribution sequence:I,J,..., cycle c of the sequence adds c x its length to each index, so the pattern moves through the region group by group (0: the same blocks every cycle)
    random_sequence_stride: Flag = "off", long "random-sequence-stride", value "0|1";
    /// fio's sprandom (randwrite only): SanDisk's SSD preconditioning: every block written once at random, plus re-writes that leave each region of the physical capacity (--spr-num-regions of it, over-provisioned by --spr-op) with the share of invalid blocks of a steady state; the job ends when done (with --time-based it starts over)
    sprandom: Flag = "off", long "sprandom", value "0|1";
    /// fio's spr_num_regions: the regions --sprandom divides the physical capacity into
    spr_num_regions: u32 = "100", long "spr-num-regions", value "N";
    /// fio's spr_op: the over-provisioning --sprandom assumes, a fraction (0.15 = 15 %)
    spr_op: String = "0.15", long "spr-op", value "FRACTION";
    // --- fio's strided zones (issue 27; offsets.rs: OffsetGen::Strided) ---
    /// fio's zonemode: none; strided (I/O in zones: --zonesize bytes in each, then a skip of --zoneskip bytes to the next zone, wrapping at the end of the region); or zbd (fio's zoned block device mode emulated on the file or device: zones of --zonesize with write pointers kept in memory, all empty at the start; writes go to a zone's write pointer, a full zone is reset before it is written again; a real zoned device is refused)
    zonemode: String = "none", long "zonemode", value "none|strided|zbd";
    /// fio's zonesize: with --zonemode strided, the bytes of I/O done in each zone before moving on
    zonesize: ByteSize = "0", long "zonesize", value "SIZE";
    /// fio's zonerange: with --zonemode strided, the region each zone's I/O stays in (default: --zonesize); a smaller --zonesize reads part of it, a larger one goes over it again
    zonerange: ByteSize = "0", long "zonerange", value "SIZE";
    /// fio's zoneskip: with --zonemode strided, the bytes skipped after each zone's range
    zoneskip: ByteSize = "0", long "zoneskip", value "SIZE";
    // --- fio's zoned block device mode, emulated (issue 27; zbd.rs) ---
    /// fio's zonecapacity: with --zonemode zbd, the writable bytes of each zone (default: --zonesize)
    zonecapacity: ByteSize = "0", long "zonecapacity", value "SIZE";
    /// fio's max_open_zones: with --zonemode zbd, the zones of a file written at once (0 = no limit); a random write goes to one of them
    max_open_zones: u32 = "0", long "max-open-zones", value "N";
    /// fio's job_max_open_zones: with --zonemode zbd, the zones one job writes at once (0 = no limit; needs --max-open-zones)
    job_max_open_zones: u32 = "0", long "job-max-open-zones", value "N";
    /// fio's zone_reset_threshold: with --zonemode zbd, once the written share of the region passes this fraction, zones are reset at --zone-reset-frequency
    zone_reset_threshold: String = "0", long "zone-reset-threshold", value "FRACTION";
    /// fio's zone_reset_frequency: with --zonemode zbd past the threshold, the zone of one write in 1/FRACTION is reset before it is written (0 = never)
    zone_reset_frequency: String = "0", long "zone-reset-frequency", value "FRACTION";
    /// fio's read_beyond_wp: with --zonemode zbd, reads may go past a zone's write pointer (0: reads only what was written since storlab emulates the zones, as fio)
    read_beyond_wp: Flag = "off", long "read-beyond-wp", value "0|1";
    /// fio's ignore_zone_limits: accepted (storlab emulates the zones; there are no device limits to ignore)
    ignore_zone_limits: Flag = "off", long "ignore-zone-limits", value "0|1";
}

/// Parse `4k/50:64k/50` (fio's bssplit: size/percent pairs separated by ':').
pub fn parse_bssplit(s: &str) -> Result<Vec<BsWeight>, SpecError> {
    let help = "expected SIZE/PERCENT pairs separated by ':', e.g. 4k/50:64k/50";
    let mut out = Vec::new();
    for part in s.split(':').filter(|p| !p.trim().is_empty()) {
        let (size, pct) = part.split_once('/').ok_or_else(|| {
            SpecError(format!(
                "invalid bssplit '{s}': '{part}' has no '/'; {help}"
            ))
        })?;
        let bs = parse_size(size).map_err(|e| SpecError(format!("invalid bssplit '{s}': {e}")))?;
        let weight: u32 = pct.trim().trim_end_matches('%').parse().map_err(|_| {
            SpecError(format!(
                "invalid bssplit '{s}': '{pct}' is not a whole percentage; {help}"
            ))
        })?;
        if weight > 0 {
            out.push(BsWeight {
                bs_bytes: bs,
                weight,
            });
        }
    }
    if out.is_empty() {
        return err(format!("invalid bssplit '{s}': {help}"));
    }
    let sum: u64 = out.iter().map(|b| u64::from(b.weight)).sum();
    if sum != 100 {
        return err(format!(
            "invalid bssplit '{s}': the percentages add up to {sum}, not 100; {help}"
        ));
    }
    Ok(out)
}

/// Parse `zero`, `random` or `compressible:PCT`.
pub fn parse_buffer_pattern(s: &str) -> Result<BufferPattern, SpecError> {
    match s {
        "random" => Ok(BufferPattern::Random),
        "zero" => Ok(BufferPattern::Zero),
        _ => {
            if let Some(p) = s.strip_prefix("compressible:") {
                let pct: u8 = p.trim_end_matches('%').parse().map_err(|_| {
                    SpecError(format!(
                        "invalid buffer pattern '{s}': '{p}' is not a percentage from 0 to 100"
                    ))
                })?;
                if pct <= 100 {
                    return Ok(BufferPattern::Compressible { pct });
                }
            }
            err(format!(
                "invalid buffer pattern '{s}': use random (incompressible, the default), zero, or compressible:PCT (e.g. compressible:50)"
            ))
        }
    }
}

fn flag(f: Option<Flag>, default: bool) -> bool {
    f.map_or(default, |f| f.0)
}

fn duration_ns(v: &Option<String>, what: &str) -> Result<Option<u64>, SpecError> {
    v.as_deref()
        .map(|t| {
            parse_duration(t)
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
                .map_err(|e| SpecError(format!("{what}: {e}")))
        })
        .transpose()
}

/// `v` if it lies within the bounds the parameter vocabulary gives `key`
/// (the one copy of them: `storlab_types::params`).
fn bounded(key: &str, v: u32) -> Result<u32, SpecError> {
    storlab_types::params::check_number(key, u64::from(v))?;
    Ok(v)
}

/// A choice-valued option's word (`rw`, `engine`, `cache`) parsed once
/// into its type, or the vocabulary's refusal naming the choices.
fn choice<T>(key: &str, value: &str, parse: impl Fn(&str) -> Option<T>) -> Result<T, SpecError> {
    parse(value).ok_or_else(|| match storlab_types::params::lookup(key) {
        Some(p) => SpecError::from(p.refuse(format!("'{value}'"))),
        None => SpecError(format!("invalid {key} '{value}'")),
    })
}

/// The default the option table declares for `T`'s option, parsed as a
/// user's word would be: the value [`resolve_phase`] applies when no layer
/// sets it.
pub(crate) fn table_default<T: Choice>() -> Result<T, SpecError> {
    let def =
        find_option(T::KEY).ok_or_else(|| SpecError(format!("{} is no bench option", T::KEY)))?;
    parse_choice(def.default)
}

/// Block sizes from `bs`/`bssplit`, each checked.
fn resolve_bs(s: &PhaseSpec) -> Result<Vec<BsWeight>, SpecError> {
    let bs = match (&s.bssplit, s.bs) {
        (Some(split), _) => parse_bssplit(split)?,
        (None, b) => vec![BsWeight {
            bs_bytes: b.map_or(4096, |b| b.0),
            weight: 100,
        }],
    };
    for b in &bs {
        storlab_types::params::check_number("bs", b.bs_bytes)?;
        if b.bs_bytes == 0 || b.bs_bytes % 512 != 0 {
            return err(format!(
                "invalid block size {}: must be a non-zero multiple of 512 bytes (e.g. 4k, 64k, 1M)",
                b.bs_bytes
            ));
        }
        if b.bs_bytes > 64 << 20 {
            return err(format!(
                "block size {} is over the 64 MiB limit",
                b.bs_bytes
            ));
        }
    }
    Ok(bs)
}

fn resolve_cache(s: &PhaseSpec) -> Result<CacheMode, SpecError> {
    Ok(match (&s.cache, s.direct) {
        (Some(m), direct) => {
            if direct == Some(Flag(true)) && *m != CacheMode::Direct {
                return err(format!(
                    "--direct contradicts cache = {}: drop one of them",
                    m.as_str()
                ));
            }
            *m
        }
        (None, Some(Flag(false))) => CacheMode::Cold,
        (None, _) => table_default::<CacheMode>()?,
    })
}

fn resolve_layout(s: &PhaseSpec, size: u64, max_bs: u64) -> Result<FileLayout, SpecError> {
    Ok(match (flag(s.shared_file, false), s.stride) {
        (false, None) => FileLayout::PerJob,
        (true, None) => FileLayout::SharedRegions,
        (_, Some(st)) => {
            if st.0 == 0 || st.0 % max_bs != 0 {
                return err(format!(
                    "stride {} must be a non-zero multiple of the block size {max_bs}",
                    st.0
                ));
            }
            if size % st.0 != 0 {
                return err(format!(
                    "size {size} must be a multiple of the stride {}",
                    st.0
                ));
            }
            FileLayout::SharedInterleaved { stride_bytes: st.0 }
        }
    })
}

/// Time limits: (runtime, time_based, ramp, null latency), checked together.
fn resolve_times(
    s: &PhaseSpec,
    engine: EngineKind,
) -> Result<(Option<u64>, bool, u64, u64), SpecError> {
    let runtime_ns = duration_ns(&s.runtime, "runtime")?;
    if runtime_ns == Some(0) {
        return err("runtime 0: give a positive duration such as 10s, or leave it out");
    }
    let time_based = flag(s.time_based, false);
    if time_based && runtime_ns.is_none() {
        return err("time_based needs a runtime: add e.g. --runtime 30s");
    }
    let ramp_ns = duration_ns(&s.ramp_time, "ramp_time")?.unwrap_or(0);
    let null_latency_ns = duration_ns(&s.null_latency, "null_latency")?.unwrap_or(0);
    if null_latency_ns > 0 && engine != EngineKind::Null {
        return err("null_latency applies to the null engine only: add --engine null or drop it");
    }
    Ok((runtime_ns, time_based, ramp_ns, null_latency_ns))
}

/// Turn one fully layered spec into resolved parameters, checking every
/// value and every combination.
pub fn resolve_phase(s: &PhaseSpec, index: usize) -> Result<PhaseParams, SpecError> {
    if !s.group.is_empty() {
        return crate::groups::resolve_grouped(s, index);
    }
    if s.ranks.is_some() || s.group_ranks.is_some() {
        return err(
            "ranks and group_ranks give job groups to MPI ranks: use them with groups \
             ([[phase.group]] or --group '...'), e.g. --group 'rw=read' --group 'rw=write' --group-ranks 0-1,2-3"
                .to_string(),
        );
    }
    if s.files.is_some() || s.files_of.is_some() {
        return err(
            "files and files_of are options of a job group: put them in a [[phase.group]] or a --group '...'"
                .to_string(),
        );
    }
    // The table's default: a phase without rw reads.
    let rw = s.rw.unwrap_or(RwMode::Read);
    let rwmixread = bounded("rwmixread", s.rwmixread.unwrap_or(50))? as u8;
    let bs = resolve_bs(s)?;
    let max_bs = bs.iter().map(|b| b.bs_bytes).max().unwrap_or(4096);
    // fio's bs=R,W: the larger size sets the granularity too.
    let max_bs = max_bs.max(s.bs_write.map_or(0, |b| b.0));
    let size = storlab_types::params::check_number("size", s.size.map_or(256 << 20, |b| b.0))?;
    if size < max_bs {
        return err(format!(
            "size {size} is smaller than the block size {max_bs}: use a larger --size"
        ));
    }
    // Whole blocks only: the tail that does not fill a block is not used.
    let size = size / max_bs * max_bs;
    let numjobs = bounded("numjobs", s.numjobs.unwrap_or(1))?;
    let iodepth = bounded("iodepth", s.iodepth.unwrap_or(1))?;
    let iodepth_batch = bounded("iodepth_batch", s.iodepth_batch.unwrap_or(1))?;
    if iodepth_batch > iodepth {
        return err(format!(
            "invalid iodepth_batch {iodepth_batch}: from 1 to the iodepth ({iodepth})"
        ));
    }
    let engine = match s.engine {
        Some(e) => e,
        None => table_default::<EngineKind>()?,
    };
    let cache = resolve_cache(s)?;
    let (runtime_ns, time_based, ramp_ns, null_latency_ns) = resolve_times(s, engine)?;
    let layout = resolve_layout(s, size, max_bs)?;
    let buffer_pattern = match &s.buffer_pattern {
        None if flag(s.zero_buffers, false) => BufferPattern::Zero,
        None => BufferPattern::Random,
        Some(b) => parse_buffer_pattern(b)?,
    };
    if flag(s.zero_buffers, false) && buffer_pattern != BufferPattern::Zero {
        return err("zero_buffers contradicts the buffer pattern given: drop one of them");
    }
    let (log_interval_ns, steadystate) = resolve_series(s)?;
    let loops = bounded("loops", s.loops.unwrap_or(1))?;
    if let Some(n) = s.nrfiles {
        bounded("nrfiles", n)?;
    }
    let thinktime_ns = match s.thinktime.as_deref().map(str::trim) {
        None => 0,
        // fio: a bare number is microseconds.
        Some(t) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => t
            .parse::<u64>()
            .ok()
            .and_then(|us| us.checked_mul(1000))
            .ok_or_else(|| SpecError(format!("thinktime {t} is too large")))?,
        Some(_) => duration_ns(&s.thinktime, "thinktime")?.unwrap_or(0),
    };
    let verify = flag(s.verify, false);
    if verify && buffer_pattern == BufferPattern::Zero {
        return err("verify needs self-checking data: drop --buffer-pattern zero or --verify");
    }
    if verify && rw.trims() {
        // A trimmed block reads back as zeros: every one would count as a
        // mismatch (fio verifies trims only with trim_verify_zero, which
        // storlab does not do).
        return err(format!(
            "verify cannot check a {rw} phase (a trimmed block reads back as zeros): drop --verify, \
             or verify in a write phase of its own"
        ));
    }
    let access = crate::access::resolve(s, rw, &bs, size, time_based)?;
    let access = crate::verify::resolve_extras(s, &bs, engine, verify, access)?;
    Ok(PhaseParams {
        name: s
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", index + 1, rw.as_str())),
        rw,
        rwmixread,
        bs,
        size_bytes: size,
        numjobs,
        iodepth,
        engine,
        cache,
        drop_caches: flag(s.drop_caches, false),
        runtime_ns,
        time_based,
        ramp_ns,
        fsync_every: s.fsync_every.unwrap_or(0),
        end_fsync: flag(s.end_fsync, true),
        layout,
        buffer_pattern,
        random_with_replacement: flag(s.random_with_replacement, false),
        verify,
        seed: seed_of(s),
        sqpoll: flag(s.sqpoll, false),
        registered: flag(s.registered, true),
        rate_iops: s.rate_iops.unwrap_or(0),
        fallocate: s.fallocate.is_none_or(|f| f.0),
        iodepth_batch,
        null_latency_ns,
        log_interval_ns,
        steadystate,
        loops,
        thinktime_ns,
        files: Vec::new(),
        files_of: None,
        group_reporting: flag(s.group_reporting, false),
        shares_report: false,
        ranks: Vec::new(),
        groups: Vec::new(),
        md: None,
        report: resolve_report(s)?,
        run_control: crate::runctl::resolve(s)?,
        ..access
    })
}

/// The seed: `seed` if given; else the fixed default, or with fio's
/// `randrepeat=0` a new one for this run (kept in the result, so the run
/// can be repeated with `--seed`).
fn seed_of(s: &PhaseSpec) -> u64 {
    match (s.seed, flag(s.randrepeat, true)) {
        (Some(seed), _) => seed,
        (None, true) => 0x5354_4F52_4C41_4231,
        (None, false) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            // A splitmix64 step, so nearby clocks give unrelated seeds.
            let mut z = t.wrapping_add(0x9E37_79B9_7F4A_7C15) ^ u64::from(std::process::id());
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }
}

/// fio's reporting-only options, checked: `percentile_list` (each from
/// 0 to 100, at most 64 as in fio) and `unified_rw_reporting`.
pub fn resolve_report(s: &PhaseSpec) -> Result<storlab_types::ReportOptions, SpecError> {
    let mut list = Vec::new();
    for part in s
        .percentile_list
        .as_deref()
        .unwrap_or("")
        .split(':')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let v: f64 = part.trim_end_matches('%').parse().map_err(|_| {
            SpecError(format!(
                "invalid percentile_list entry '{part}': give percentages separated by ':', e.g. 95:99.5:99.999"
            ))
        })?;
        if !(0.0..=100.0).contains(&v) || !v.is_finite() {
            return err(format!(
                "invalid percentile_list entry '{part}': a percentile is from 0 to 100"
            ));
        }
        list.push(v);
    }
    if list.len() > 64 {
        return err("percentile_list has more than 64 entries (fio's limit)");
    }
    let unified = match s.unified_rw_reporting {
        Some(u) => u,
        None => table_default::<UnifiedRw>()?,
    };
    Ok(storlab_types::ReportOptions {
        percentile_list: list,
        unified_rw_reporting: unified.record_word().to_string(),
        latency_distribution: false,
    })
}

/// The time-series interval and the steady-state rule, checked together.
fn resolve_series(s: &PhaseSpec) -> Result<(u64, Option<SteadyState>), SpecError> {
    let interval = duration_ns(&s.log_interval, "log_interval")?.unwrap_or(1_000_000_000);
    if !(1_000_000..=3_600_000_000_000).contains(&interval) {
        return err(format!(
            "log_interval {interval} ns is out of range: from 1ms to 1h (e.g. 1s, 200ms)"
        ));
    }
    let Some(text) = s.steadystate.as_deref().filter(|t| !t.trim().is_empty()) else {
        return Ok((interval, None));
    };
    let ss = parse_steadystate(text)?;
    let window =
        duration_ns(&s.steadystate_duration, "steadystate_duration")?.unwrap_or(30_000_000_000);
    let ramp = duration_ns(&s.steadystate_ramp_time, "steadystate_ramp_time")?.unwrap_or(0);
    if window < 2 * interval || window % interval != 0 {
        return err(format!(
            "steadystate_duration must be a whole number (at least 2) of log intervals ({} ms): e.g. --steadystate-duration 10s",
            interval / 1_000_000
        ));
    }
    Ok((
        interval,
        Some(SteadyState {
            window_ns: window,
            ramp_ns: ramp,
            ..ss
        }),
    ))
}

/// Parse fio's `steadystate` value: `bw_slope:0.3%`, `iops_slope:1`,
/// `bw:2%`, `iops:5%` (the window and ramp are filled in by the caller).
pub fn parse_steadystate(text: &str) -> Result<SteadyState, SpecError> {
    let help = "use bw_slope:PCT, iops_slope:PCT, lat_slope:PCT, bw:PCT, iops:PCT or lat:PCT, e.g. bw_slope:0.3%";
    let (kind, tol) = text
        .trim()
        .split_once(':')
        .ok_or_else(|| SpecError(format!("invalid steadystate '{text}': {help}")))?;
    let (metric, criterion) = match kind.trim() {
        "bw_slope" => (SteadyMetric::Bw, SteadyCriterion::Slope),
        "iops_slope" => (SteadyMetric::Iops, SteadyCriterion::Slope),
        "bw" => (SteadyMetric::Bw, SteadyCriterion::Deviation),
        "iops" => (SteadyMetric::Iops, SteadyCriterion::Deviation),
        // fio's latency criteria (steadystate.c: FIO_SS_LAT).
        "lat_slope" => (SteadyMetric::Lat, SteadyCriterion::Slope),
        "lat" => (SteadyMetric::Lat, SteadyCriterion::Deviation),
        k => {
            return err(format!(
                "invalid steadystate '{text}': unknown criterion '{k}'; {help}"
            ));
        }
    };
    let pct: f64 = tol
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite() && *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| {
            SpecError(format!(
                "invalid steadystate '{text}': the tolerance must be a percentage above 0 and at most 100; {help}"
            ))
        })?;
    Ok(SteadyState {
        metric,
        criterion,
        tolerance_pct: pct,
        window_ns: 0,
        ramp_ns: 0,
    })
}

/// A spec from `(key, value)` pairs as typed on a command line or in a
/// sweep (`iodepth`, `"32"`): each value is checked against its option's
/// kind, then the pairs go through the same deserializer as job files.
pub fn spec_from_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<PhaseSpec, SpecError> {
    let mut table = toml::Table::new();
    for (name, value) in pairs {
        let def = find_option(name).ok_or_else(|| {
            SpecError(format!(
                "unknown option '{name}': see `storlab bench --help` for the options"
            ))
        })?;
        let v = typed_value(def, value)?;
        table.insert(def.key.to_string(), v);
    }
    table
        .try_into::<PhaseSpec>()
        .map_err(|e| SpecError(e.message().to_string()))
}

/// fio-only spellings of size options whose values follow fio's units
/// (`kb_base`: `4KiB` is 4000 there): (fio name, option key). storlab's
/// own flags (`--bs`) keep SI/IEC.
pub const FIO_UNIT_SPELLINGS: &[(&str, &str)] = &[("blocksize", "bs")];

/// Why the workload flags of a command line were refused: a value the
/// option table's kinds, bounds or choices reject, or a size under a fio
/// spelling that is not one in fio's units. The command hands it to the
/// user as any other bad input (exit 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlagError {
    /// `--blocksize 4q`: not a size in fio's units.
    #[error("--{flag}: {error} (fio's units, kb_base {kb_base})")]
    FioUnits {
        /// The fio spelling typed (`blocksize`).
        flag: &'static str,
        error: storlab_types::ParseError,
        kb_base: u64,
    },
    /// A value the option table refuses.
    #[error(transparent)]
    Value(#[from] SpecError),
}

/// The spec a command line's workload flags set: `fio_sized` are the
/// values given under [`FIO_UNIT_SPELLINGS`] (fio name, option key, text,
/// read with `kb_base`), `pairs` the values of the table's own flags, as
/// [`spec_from_pairs`] reads them.
pub fn spec_from_flags<'a>(
    fio_sized: impl IntoIterator<Item = (&'static str, &'static str, &'a str)>,
    kb_base: u64,
    pairs: impl IntoIterator<Item = (&'static str, String)>,
) -> Result<PhaseSpec, FlagError> {
    let mut given: Vec<(&'static str, String)> = Vec::new();
    for (flag, key, v) in fio_sized {
        let bytes = storlab_types::fio_size(v, kb_base).map_err(|error| FlagError::FioUnits {
            flag,
            error,
            kb_base,
        })?;
        given.push((key, bytes.to_string()));
    }
    given.extend(pairs);
    Ok(spec_from_pairs(
        given.iter().map(|(k, v)| (*k, v.as_str())),
    )?)
}

/// One option's value from text, by its kind.
/// Whole numbers and sizes are checked against the bounds, and words
/// against the choices, of the parameter vocabulary.
pub fn typed_value(def: &OptDef, value: &str) -> Result<toml::Value, SpecError> {
    let flag = format!("--{}", def.long);
    let bound = |n: u64| storlab_types::params::check_number(def.key, n).map_err(SpecError::from);
    Ok(match def.kind {
        OptKind::Flag => toml::Value::Boolean((def.yes_no)(value).ok_or_else(|| {
            // The option's own words (fallocate's native|none), else the
            // yes/no spellings.
            let words = match def.choices {
                [yes, no] => format!("use {yes} or {no} (or 1/0, true/false)"),
                _ => "use 1 or 0 (or true/false)".to_string(),
            };
            SpecError(format!("invalid value '{value}' for {flag}: {words}"))
        })?),
        OptKind::Int => {
            let n: i64 = value.trim().parse().map_err(|_| {
                SpecError(format!(
                    "invalid value '{value}' for {flag}: expected a whole number"
                ))
            })?;
            if let Ok(u) = u64::try_from(n) {
                bound(u)?;
            }
            toml::Value::Integer(n)
        }
        OptKind::Size => {
            bound(parse_size(value).map_err(|e| SpecError(format!("{flag}: {e}")))?)?;
            toml::Value::String(value.to_string())
        }
        OptKind::Text => {
            (def.check)(value)?;
            toml::Value::String(value.to_string())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_spelling_names_two_options() {
        let mut owner = std::collections::BTreeMap::new();
        for o in OPTIONS {
            assert!(!o.help.trim().is_empty(), "{} has no help", o.key);
            let spellings: std::collections::BTreeSet<&str> = std::iter::once(o.key)
                .chain(std::iter::once(o.long))
                .chain(o.aliases.iter().copied())
                .chain(o.negate)
                .collect();
            for n in spellings {
                if let Some(other) = owner.insert(n, o.key) {
                    panic!("{n} names both {other} and {}", o.key);
                }
                if Some(n) != o.negate {
                    assert_eq!(find_option(n).map(|d| d.key), Some(o.key), "{n}");
                }
            }
            // Every option round-trips through a spec.
            let choice =
                storlab_types::params::lookup(o.key).and_then(|p| p.choices.first().copied());
            let sample = match o.kind {
                OptKind::Flag => "1",
                OptKind::Int => "1",
                OptKind::Size => "8k",
                OptKind::Text => choice.unwrap_or("x"),
            };
            let spec = spec_from_pairs([(o.key, sample)]).unwrap();
            let back = toml::Value::try_from(&spec).unwrap();
            assert!(back.get(o.key).is_some(), "{} did not round-trip", o.key);
        }
    }

    /// The flag's other spellings: its key, each alias with underscores
    /// and dashes; never a fio spelling read in fio's units.
    #[test]
    fn flag_spellings_come_from_the_table() {
        let def = |k: &str| OPTIONS.iter().find(|d| d.key == k).unwrap();
        assert_eq!(
            def("iodepth_batch").flag_aliases(),
            [
                "iodepth_batch",
                "iodepth_batch_submit",
                "iodepth-batch-submit"
            ]
        );
        assert_eq!(
            def("bs").flag_aliases(),
            Vec::<String>::new(),
            "blocksize is its own flag"
        );
        assert_eq!(def("engine").flag_aliases(), ["ioengine"]);
        assert!(def("direct").value_optional() && !def("fallocate").value_optional());
        assert!(!def("bs").value_optional());
        assert!(def("seq_skip").takes_negative() && !def("bs").takes_negative());
    }

    #[test]
    fn aliases_reach_the_same_field() {
        let a = spec_from_pairs([("ioengine", "psync"), ("iodepth_batch_submit", "2")]).unwrap();
        assert_eq!(a.engine, Some(EngineKind::Psync));
        assert_eq!(a.iodepth_batch, Some(2));
        let b =
            spec_from_pairs([("iodepth-batch", "2"), ("direct", "0"), ("iodepth", "4")]).unwrap();
        assert_eq!(b.iodepth_batch, Some(2));
        assert_eq!(resolve_phase(&b, 0).unwrap().cache, CacheMode::Cold);
        let e = spec_from_pairs([("iodepht", "2")]).unwrap_err().0;
        assert!(e.contains("unknown option 'iodepht'"), "{e}");
        let e = spec_from_pairs([("iodepth", "lots")]).unwrap_err().0;
        assert!(e.contains("whole number"), "{e}");
    }

    #[test]
    fn paired_settings_replace_each_other() {
        let base = spec_from_pairs([("bssplit", "4k/50:64k/50"), ("cache", "cold")]).unwrap();
        let over = spec_from_pairs([("bs", "1M"), ("direct", "1")]).unwrap();
        let s = base.overlay(&over);
        assert_eq!(s.bssplit, None);
        assert_eq!(s.cache, None);
        let p = resolve_phase(&s, 0).unwrap();
        assert_eq!(p.bs.len(), 1);
        assert_eq!(p.cache, CacheMode::Direct);
        for (a, b) in PAIRED {
            assert!(find_option(a).is_some() && find_option(b).is_some());
        }
    }

    #[test]
    fn validation() {
        let ok = |pairs: &[(&str, &str)]| resolve_phase(&spec_from_pairs(pairs.to_vec())?, 0);
        assert!(ok(&[("bs", "1000")]).is_err());
        assert!(
            ok(&[("time_based", "1")])
                .unwrap_err()
                .0
                .contains("--runtime")
        );
        assert!(ok(&[("rwmixread", "101")]).is_err());
        assert!(ok(&[("iodepth", "0")]).is_err());
        assert!(ok(&[("numjobs", "5000")]).is_err());
        assert!(
            ok(&[("direct", "1"), ("cache", "cold")])
                .unwrap_err()
                .0
                .contains("contradicts")
        );
        assert!(
            ok(&[("null_latency", "1ms")])
                .unwrap_err()
                .0
                .contains("null engine")
        );
        let p = ok(&[("engine", "null"), ("null_latency", "2ms")]).unwrap();
        assert_eq!(p.null_latency_ns, 2_000_000);
        let s = ok(&[("stride", "8k"), ("bs", "4k"), ("size", "64k")]).unwrap();
        assert_eq!(
            s.layout,
            FileLayout::SharedInterleaved { stride_bytes: 8192 }
        );
        let s = ok(&[("size", "10000")]).unwrap();
        assert_eq!(s.size_bytes, 8192, "rounded down to whole blocks");
        let s = ok(&[("fallocate", "none")]).unwrap();
        assert!(!s.fallocate);
    }

    #[test]
    fn a_bad_flag_value_names_the_words_its_help_names() {
        let def = |k: &str| OPTIONS.iter().find(|d| d.key == k).unwrap();
        // fallocate's help says native|none: the refusal says so too (it
        // said "use 1 or 0" for a flag documented as native|none).
        let e = typed_value(def("fallocate"), "keep").unwrap_err().0;
        assert!(e.contains("use native or none"), "{e}");
        let e = typed_value(def("verify"), "maybe").unwrap_err().0;
        assert!(e.contains("use 1 or 0 (or true/false)"), "{e}");
    }

    /// fallocate's words (`native`, `posix`, `none`) are fallocate's only:
    /// they were read as on/off by every yes/no option (`--verify=native`
    /// turned verification on, `direct = "none"` made the cache cold).
    #[test]
    fn only_fallocate_takes_its_words() {
        for (key, word) in [
            ("verify", "native"),
            ("direct", "none"),
            ("sqpoll", "posix"),
        ] {
            let e = spec_from_pairs([(key, word)]).unwrap_err().0;
            assert!(e.contains("use 1 or 0"), "{key}={word}: {e}");
            let toml = format!("{key} = \"{word}\"");
            let e = toml::from_str::<PhaseSpec>(&toml).unwrap_err();
            assert!(e.message().contains("yes/no"), "{toml}: {e}");
        }
        for (word, on) in [
            ("native", true),
            ("posix", true),
            ("none", false),
            ("0", false),
        ] {
            let p = resolve_phase(&spec_from_pairs([("fallocate", word)]).unwrap(), 0).unwrap();
            assert_eq!(p.fallocate, on, "{word}");
            let toml = format!("fallocate = \"{word}\"");
            assert_eq!(
                toml::from_str::<PhaseSpec>(&toml).unwrap().fallocate,
                Some(Fallocate(on))
            );
        }
    }

    /// Every option's words come from its type, and a choice's are the
    /// vocabulary's: what a refusal lists, what `--help` shows as the
    /// value (`linear|poisson`) and what completion offers are one list.
    #[test]
    fn the_words_of_every_option_are_its_types() {
        let mut typed = Vec::new();
        for o in OPTIONS {
            let vocab = storlab_types::params::lookup(o.key).map_or(&[][..], |p| p.choices);
            if o.kind == OptKind::Text {
                assert_eq!(o.choices, vocab, "{}", o.key);
            }
            if o.value_name.contains('|') && !o.choices.is_empty() {
                assert_eq!(o.value_name, o.choices.join("|"), "{}", o.key);
            }
            if !o.choices.is_empty() {
                typed.push(o.key);
            }
        }
        assert_eq!(
            typed,
            [
                "rw",
                "engine",
                "cache",
                "fallocate",
                "unified_rw_reporting",
                "rate_process"
            ]
        );
    }

    #[test]
    fn bssplit_and_patterns() {
        let b = parse_bssplit("4k/50:64k/50").unwrap();
        assert_eq!(
            b,
            vec![
                BsWeight {
                    bs_bytes: 4096,
                    weight: 50
                },
                BsWeight {
                    bs_bytes: 65536,
                    weight: 50
                }
            ]
        );
        assert!(
            parse_bssplit("4k/50:64k/40")
                .unwrap_err()
                .0
                .contains("add up to 90")
        );
        assert!(parse_bssplit("4k").is_err());
        assert!(parse_bssplit("4k/x").is_err());
        assert!(parse_bssplit("4k/4294967295:8k/2").is_err(), "no overflow");
        assert_eq!(
            parse_buffer_pattern("compressible:30").unwrap(),
            BufferPattern::Compressible { pct: 30 }
        );
        assert!(parse_buffer_pattern("compressible:300").is_err());
        assert!(parse_buffer_pattern("ones").is_err());
    }

    /// The bench options the vocabulary bounds, with their parameter.
    fn bounded_options() -> Vec<(&'static OptDef, &'static storlab_types::params::Param)> {
        storlab_types::params::PARAMS
            .iter()
            .filter(|p| p.min.is_some() || p.max.is_some() || !p.choices.is_empty())
            .filter_map(|p| Some((find_option(p.option?)?, p)))
            .collect()
    }

    /// Every way a value reaches a phase refuses `value` of `def` with
    /// `want`: a flag (and `--group`, through `spec_from_pairs`), a job-file
    /// key (TOML, then `resolve_phase`) and `--vary`.
    fn refused_everywhere(def: &OptDef, value: &str, want: &str) {
        let flag = spec_from_pairs([(def.key, value)]).and_then(|s| resolve_phase(&s, 0));
        match flag {
            Err(e) => assert!(e.0.contains(want), "flag: {e} (want {want})"),
            Ok(r) => panic!("flag --{}={value} accepted: {r:?}", def.long),
        }
        let group = crate::groups::parse_group_arg(&format!("{}={value}", def.key));
        let e = group.expect_err("--group accepted it").0;
        assert!(e.contains(want), "--group: {e} (want {want})");
        let toml_value = match def.kind {
            OptKind::Int => value.to_string(),
            _ => format!("{value:?}"),
        };
        // Refused as the file is read (a choice) or as its phase resolves.
        let e = match toml::from_str::<PhaseSpec>(&format!("{} = {toml_value}", def.key)) {
            Err(e) => e.message().to_string(),
            Ok(spec) => resolve_phase(&spec, 0).expect_err("job file accepted it").0,
        };
        assert!(e.contains(want), "job file: {e} (want {want})");
        let e = crate::Vary::parse(&format!("{}={value}", def.key))
            .expect_err("--vary accepted it")
            .0;
        assert!(e.contains(want), "--vary: {e} (want {want})");
    }

    /// A value just outside each bound of the vocabulary, and a word outside
    /// each list of choices, is refused the same way on every path.
    #[test]
    fn values_just_outside_the_vocabulary_are_refused_everywhere() {
        let options = bounded_options();
        for key in [
            "rw",
            "rwmixread",
            "bs",
            "numjobs",
            "iodepth",
            "engine",
            "cache",
            "nrfiles",
            "rate_process",
            "unified_rw_reporting",
        ] {
            assert!(
                options.iter().any(|(_, p)| p.key == key),
                "{key} has no bound"
            );
        }
        for (def, p) in options {
            let mut outside = Vec::new();
            if let Some(lo) = p.min.filter(|lo| *lo > 0) {
                outside.push((lo - 1).to_string());
            }
            if let Some(hi) = p.max {
                outside.push((hi + 1).to_string());
            }
            for v in outside {
                let want = p.refuse(&v).to_string();
                refused_everywhere(def, &v, &want);
            }
            if !p.choices.is_empty() {
                let want = p.refuse("'nope'").to_string();
                refused_everywhere(def, "nope", &want);
                for c in p.choices {
                    assert!(spec_from_pairs([(def.key, *c)]).is_ok(), "{c}");
                }
            }
        }
    }

    /// The bounds live in the vocabulary only: what `resolve_phase` accepts
    /// at each bound is what the vocabulary says.
    #[test]
    fn the_table_applies_the_vocabulary_bounds() {
        for (def, p) in bounded_options() {
            for v in [p.min, p.max].into_iter().flatten() {
                let s = spec_from_pairs([(def.key, v.to_string().as_str())]);
                let s = s.unwrap_or_else(|e| panic!("{} = {v}: {e}", def.key));
                if def.key != "size" {
                    resolve_phase(&s, 0).unwrap_or_else(|e| panic!("{} = {v}: {e}", def.key));
                }
            }
        }
    }

    /// The defaults the table declares (and `--help` shows) are the ones
    /// `resolve_phase` applies: setting every option to its declared default
    /// resolves to the same phase as setting none.
    #[test]
    fn the_table_defaults_are_the_applied_defaults() {
        let unset = resolve_phase(&PhaseSpec::default(), 0).unwrap();
        let pairs: Vec<(&str, &str)> = OPTIONS
            .iter()
            .filter(|o| !o.default.is_empty())
            .map(|o| (o.key, o.default))
            .collect();
        assert!(pairs.iter().any(|(k, _)| *k == "engine"));
        assert!(pairs.iter().any(|(k, _)| *k == "cache"));
        let set = resolve_phase(&spec_from_pairs(pairs.iter().copied()).unwrap(), 0).unwrap();
        assert_eq!(set, unset);
        assert_eq!(unset.engine, EngineKind::IoUring);
        assert_eq!(unset.cache, CacheMode::Direct);
        assert_eq!(unset.rw, RwMode::Read);
    }

    /// Choices are typed in the spec and written back with the record's
    /// serde names: an alias (`rw`, `uring`) is read as its canonical word.
    #[test]
    fn choices_are_typed_and_keep_their_json_words() {
        let s = spec_from_pairs([("rw", "rw"), ("ioengine", "uring"), ("cache", "warm")]).unwrap();
        assert_eq!(s.rw, Some(RwMode::ReadWrite));
        assert_eq!(s.engine, Some(EngineKind::IoUring));
        assert_eq!(s.cache, Some(CacheMode::Warm));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["rw"], "readwrite");
        assert_eq!(json["engine"], "io_uring");
        assert_eq!(json["cache"], "warm");
        let back: PhaseSpec = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
    }

    proptest! {
        /// Further out than one step: still the one refusal.
        #[test]
        fn values_outside_the_bounds_are_refused_everywhere(i in 0usize..64, d in 1u64..100_000, above in any::<bool>()) {
            let options: Vec<_> = bounded_options()
                .into_iter()
                .filter(|(_, p)| p.choices.is_empty())
                .collect();
            let (def, p) = options[i % options.len()];
            let v = match (above, p.min, p.max) {
                (true, _, Some(hi)) => hi + d,
                (_, Some(lo), _) if lo >= d => lo - d,
                (_, _, Some(hi)) => hi + d,
                _ => return Ok(()),
            };
            let v = v.to_string();
            refused_everywhere(def, &v, &p.refuse(&v).to_string());
        }

        #[test]
        fn bssplit_never_panics(s in "[0-9kKmM/:%]{0,30}") {
            let _ = parse_bssplit(&s);
        }

        #[test]
        fn any_option_any_value_never_panics(i in 0usize..64, v in "\\PC{0,24}") {
            let o = &OPTIONS[i % OPTIONS.len()];
            if let Ok(s) = spec_from_pairs([(o.key, v.as_str())]) {
                let _ = resolve_phase(&s, 0);
            }
        }
    }
}
