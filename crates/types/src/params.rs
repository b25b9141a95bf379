//! The one parameter vocabulary: every name a user may give a parameter —
//! `sweep --vary`, `compare/check/report --vary`, `sim --vary`, a job file
//! — with its aliases, unit, description and bounds ([`PARAMS`]). A name
//! is looked up with [`lookup`] (case-insensitive, `-` equals `_`), so an
//! alias known here is accepted everywhere: `qd` is `iodepth` for a sweep
//! as for a comparison.
//!
//! A [`Param`]'s `key` is the name comparisons use (the run record's field
//! without its unit suffix: `ramp` for `ramp_ns`); `option` is the bench
//! option (job-file key, sweep name) that sets it, when one does. Groups
//! (`host`, `target`, `device`, `tool`) stand for several keys at once.

use crate::{CacheMode, EngineKind, RateProcess, RwMode, UnifiedRw};

/// One parameter name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The canonical name (`iodepth`, `ramp`, `kernel`).
    pub key: &'static str,
    /// The bench option that sets it (`ramp_time` for `ramp`), if any.
    pub option: Option<&'static str>,
    /// Other spellings, accepted wherever the key is.
    pub aliases: &'static [&'static str],
    /// The unit of its values (`bytes`, `%`, `s`), empty for counts and text.
    pub unit: &'static str,
    pub description: &'static str,
    /// The smallest and largest value it takes (whole numbers), if bounded.
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// The values it takes, when it is one of a few names.
    pub choices: &'static [&'static str],
    /// What to do instead, added to a refusal (`nrfiles`: use numjobs).
    pub note: &'static str,
    /// For a group (`host`): the keys it stands for.
    pub members: &'static [&'static str],
    /// Whether comparisons know it without looking into the runs (a key of
    /// the configuration diff); others are checked against the runs' records.
    pub compared: bool,
}

const fn p(key: &'static str, description: &'static str) -> Param {
    Param {
        key,
        option: Some(key),
        aliases: &[],
        unit: "",
        description,
        min: None,
        max: None,
        choices: &[],
        note: "",
        members: &[],
        compared: true,
    }
}

impl Param {
    const fn aliases(mut self, a: &'static [&'static str]) -> Param {
        self.aliases = a;
        self
    }
    const fn option(mut self, o: Option<&'static str>) -> Param {
        self.option = o;
        self
    }
    const fn unit(mut self, u: &'static str) -> Param {
        self.unit = u;
        self
    }
    const fn range(mut self, min: u64, max: Option<u64>) -> Param {
        self.min = Some(min);
        self.max = max;
        self
    }
    const fn choices(mut self, c: &'static [&'static str]) -> Param {
        self.choices = c;
        self
    }
    const fn note(mut self, n: &'static str) -> Param {
        self.note = n;
        self
    }
    const fn fact(mut self) -> Param {
        self.option = None;
        self
    }
    const fn group(mut self, m: &'static [&'static str]) -> Param {
        self.option = None;
        self.members = m;
        self
    }
    /// A bench option comparisons find in the runs' records.
    const fn recorded(mut self) -> Param {
        self.compared = false;
        self
    }

    /// Whether `name` (already normalized) is this parameter's key or alias.
    pub fn is_named(&self, name: &str) -> bool {
        self.key == name || self.aliases.contains(&name)
    }

    /// The values it takes, in words (`from 1 to 4096`, `1 or more`,
    /// `one of direct, cold, warm`), if it is bounded or a choice.
    pub fn allowed(&self) -> Option<String> {
        if !self.choices.is_empty() {
            return Some(format!("one of {}", self.choices.join(", ")));
        }
        match (self.min, self.max) {
            (Some(lo), Some(hi)) if lo == hi => Some(format!("only {lo}")),
            (Some(lo), Some(hi)) => Some(format!("from {lo} to {hi}")),
            (Some(lo), None) => Some(format!("{lo} or more")),
            (None, Some(hi)) => Some(format!("at most {hi}")),
            (None, None) => None,
        }
    }

    /// A value it takes, for the example in a refusal.
    pub fn example(&self) -> String {
        match (self.choices.first(), self.min) {
            (Some(c), _) => (*c).to_string(),
            (None, Some(lo)) => lo.to_string(),
            (None, None) => String::new(),
        }
    }

    /// The one refusal of a value outside this parameter's bounds or
    /// choices, wherever it was given (flag, job file, `--vary`, group).
    pub fn refuse(&self, value: impl std::fmt::Display) -> ValueError {
        ValueError {
            key: self.key,
            value: value.to_string(),
            allowed: self.allowed().unwrap_or_default(),
            example: format!("{}={}", self.key, self.example()),
            note: self.note,
        }
    }

    /// `v` if it lies within this parameter's bounds, else its refusal.
    pub fn check_number(&self, v: u64) -> Result<u64, ValueError> {
        let below = self.min.is_some_and(|lo| v < lo);
        let above = self.max.is_some_and(|hi| v > hi);
        if below || above {
            Err(self.refuse(v))
        } else {
            Ok(v)
        }
    }
}

/// A value outside a parameter's bounds or choices: names the parameter,
/// what it takes and an example (the CLI exits 2 on it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid {key} {value}: {allowed} (e.g. {example}){}",
    note_suffix(note)
)]
pub struct ValueError {
    pub key: &'static str,
    pub value: String,
    pub allowed: String,
    pub example: String,
    pub note: &'static str,
}

fn note_suffix(note: &str) -> String {
    if note.is_empty() {
        String::new()
    } else {
        format!("; {note}")
    }
}

/// Check a whole-number value of the parameter `name` names (key, alias or
/// bench option) against its bounds; names without bounds pass.
pub fn check_number(name: &str, v: u64) -> Result<u64, ValueError> {
    match lookup(name) {
        Some(p) => p.check_number(v),
        None => Ok(v),
    }
}

/// Every parameter name, workload options first, then the facts of the
/// machine, target and tool a comparison may study.
pub const PARAMS: &[Param] = &[
    p("rw", "I/O pattern")
        .aliases(&["readwrite"])
        .choices(&RwMode::WORDS),
    p("rwmixread", "read share of a mixed phase (alias mix)")
        .aliases(&["mix"])
        .unit("%")
        .range(0, Some(100)),
    p("bs", "block size or mix (aliases blocksize, bssplit)")
        .aliases(&["blocksize", "bssplit"])
        .unit("bytes")
        .range(512, Some(64 << 20)),
    p("size", "bytes per job (alias filesize)")
        .aliases(&["filesize"])
        .unit("bytes")
        .range(1, None),
    p("numjobs", "jobs (alias jobs)")
        .aliases(&["jobs"])
        .range(1, Some(4096)),
    p("iodepth", "queue depth per job (alias qd)")
        .aliases(&["qd"])
        .range(1, Some(4096)),
    p("engine", "I/O engine (alias ioengine)")
        .aliases(&["ioengine"])
        .choices(&EngineKind::WORDS),
    p(
        "cache",
        "cache mode direct/cold/warm/buffered (alias direct)",
    )
    .aliases(&["direct"])
    .choices(&CacheMode::WORDS),
    p("drop_caches", "cold cache by dropping the page cache"),
    p("rate_iops", "IOPS cap").unit("IO/s"),
    p("runtime", "time limit").unit("s"),
    p("time_based", "loop until the runtime"),
    p("ramp", "warm-up time (alias ramp_time)")
        .option(Some("ramp_time"))
        .aliases(&["ramp_time"])
        .unit("s"),
    p("fsync", "fsync every N writes")
        .option(Some("fsync_every"))
        .aliases(&["fsync_every"]),
    p("end_fsync", "fsync at the end of a write phase"),
    p("layout", "file per job or shared file (alias shared_file)")
        .option(Some("shared_file"))
        .aliases(&["shared_file"]),
    p("buffer_pattern", "data written"),
    p(
        "random_with_replacement",
        "random offsets with replacement (alias norandommap)",
    )
    .aliases(&["norandommap"]),
    p("verify", "verified writes and reads"),
    p("sqpoll", "io_uring submission polling").aliases(&["sqthread_poll"]),
    p("registered", "io_uring registered buffers and files")
        .aliases(&["fixedbufs", "registerfiles"]),
    p("iodepth_batch", "io_uring submit batch")
        .aliases(&["iodepth_batch_submit"])
        .range(1, None),
    p("fallocate", "pre-allocated files"),
    p("null_latency", "null engine service time").unit("s"),
    // Bench options a comparison finds in the runs' records.
    p("stride", "shared-file interleave unit")
        .unit("bytes")
        .recorded(),
    p("seed", "seed for offsets and data")
        .aliases(&["randseed"])
        .recorded(),
    p("log_interval", "interval of the time series")
        .unit("s")
        .recorded(),
    p("steadystate", "steady-state stop criterion")
        .aliases(&["ss"])
        .recorded(),
    p("steadystate_duration", "steady-state window")
        .aliases(&["ss_dur"])
        .unit("s")
        .recorded(),
    p(
        "steadystate_ramp_time",
        "time before steady state is judged",
    )
    .aliases(&["ss_ramp"])
    .unit("s")
    .recorded(),
    p("loops", "passes over the region")
        .range(1, Some(1_000_000))
        .recorded(),
    p("nrfiles", "files per job")
        .range(1, Some(1))
        .note("storlab gives each job one file: use --numjobs N for N files")
        .recorded(),
    p("thinktime", "pause after each completion")
        .unit("s")
        .recorded(),
    p("files", "a group's existing files, read in place").recorded(),
    p("files_of", "the group whose files a group uses").recorded(),
    p("ranks", "the MPI ranks that run a group").recorded(),
    p("group_ranks", "the MPI ranks of each group").recorded(),
    p("group_reporting", "jobs reported together").recorded(),
    p("new_group", "a group starts a new reporting group").recorded(),
    // fio's access patterns (issue 27).
    p(
        "random_distribution",
        "where random I/Os fall (zipf, pareto, normal, zoned)",
    )
    .recorded(),
    p(
        "seq_skip",
        "bytes skipped after each sequential I/O (fio's rw=read:N)",
    )
    .unit("bytes")
    .recorded(),
    p("bs_write", "block size of writes (fio's bs=R,W)")
        .unit("bytes")
        .recorded(),
    p("rate", "bandwidth cap per job and direction")
        .unit("B/s")
        .recorded(),
    p(
        "rate_process",
        "spacing of rate-capped I/Os (linear, poisson)",
    )
    .choices(&RateProcess::WORDS)
    .recorded(),
    p("io_size", "bytes each job moves (alias io_limit)")
        .aliases(&["io_limit"])
        .unit("bytes")
        .recorded(),
    p("number_ios", "I/Os after which each job stops").recorded(),
    // fio's run-control options (issue 27; crates/bench/src/runctl.rs).
    p("startdelay", "delay before a job starts (fio)")
        .unit("s")
        .recorded(),
    p("exitall", "a job that ends stops others (fio)").recorded(),
    p(
        "exit_what",
        "which jobs exitall stops: group, stonewall, all (fio)",
    )
    .recorded(),
    p("flow", "weight in fio's token flow control").recorded(),
    p("flow_id", "the jobs that pace each other with flow").recorded(),
    p("flow_sleep", "wait of a job held back by flow")
        .unit("us")
        .recorded(),
    p("rate_min", "minimum bandwidth per job (fio's ratemin)")
        .aliases(&["ratemin"])
        .unit("B/s")
        .recorded(),
    p("rate_iops_min", "minimum IOPS per job (fio)").recorded(),
    p("ratecycle", "span the minimum rate is judged over (fio)")
        .aliases(&["rate_cycle"])
        .unit("ms")
        .recorded(),
    p("latency_target", "latency fio's depth search meets")
        .unit("us")
        .recorded(),
    p("latency_window", "time each depth of the search runs")
        .unit("us")
        .recorded(),
    p("latency_percentile", "share of I/Os under latency_target")
        .unit("%")
        .recorded(),
    p("latency_run", "keep searching the depth (fio)").recorded(),
    p(
        "random_sequence_stride",
        "sequence distribution moves group by group (fio)",
    )
    .recorded(),
    p("sprandom", "fio's SanDisk SSD preconditioning").recorded(),
    p("spr_num_regions", "regions of sprandom").recorded(),
    p("spr_op", "over-provisioning sprandom assumes").recorded(),
    // fio's strided zones (issue 27).
    p("zonemode", "fio's zones: none, strided or zbd").recorded(),
    p("zonesize", "bytes of I/O in each strided zone (fio)")
        .unit("bytes")
        .recorded(),
    p("zonerange", "the region of each strided zone (fio)")
        .unit("bytes")
        .recorded(),
    p("zoneskip", "bytes skipped after each strided zone (fio)")
        .unit("bytes")
        .recorded(),
    // fio's zoned block device mode, emulated (issue 27, zbd).
    p("zonecapacity", "writable bytes of each zbd zone (fio)")
        .unit("bytes")
        .recorded(),
    p("max_open_zones", "zbd zones written at once (fio)").recorded(),
    p(
        "job_max_open_zones",
        "zbd zones one job writes at once (fio)",
    )
    .recorded(),
    p(
        "zone_reset_threshold",
        "written share that starts zone resets (fio)",
    )
    .recorded(),
    p(
        "zone_reset_frequency",
        "zone resets per write past the threshold (fio)",
    )
    .recorded(),
    p("read_beyond_wp", "zbd reads past the write pointer (fio)").recorded(),
    p("ignore_zone_limits", "ignore a zoned device's limits (fio)").recorded(),
    // fio's options that set another one or only what is reported.
    p("randrepeat", "the same offsets and data every run (fio)").recorded(),
    p("zero_buffers", "zero-filled writes (fio)").recorded(),
    p("percentile_list", "latency percentiles reported (fio)").recorded(),
    p("unified_rw_reporting", "one mixed line per phase (fio)")
        .choices(&UnifiedRw::WORDS)
        .recorded(),
    p("lat_percentiles", "fio's lat percentiles").recorded(),
    p("clat_percentiles", "fio's clat percentiles").recorded(),
    // fio's verify, error, priority, placement and dedupe options (issue 27).
    p("offset", "where each job's region starts (fio)")
        .unit("bytes")
        .recorded(),
    p(
        "offset_increment",
        "job N's region starts N x this further (fio)",
    )
    .unit("bytes")
    .recorded(),
    p("fill_device", "a write phase ends at ENOSPC (fio)")
        .aliases(&["fill_fs"])
        .recorded(),
    p("verify_method", "fio's verify=NAME, recorded").recorded(),
    p(
        "verify_backlog",
        "written blocks checked every N writes (fio)",
    )
    .recorded(),
    p("verify_dump", "bad units saved for inspection (fio)").recorded(),
    p("verify_pattern", "the pattern verified units carry (fio)").recorded(),
    p("verify_interval", "bytes per verified unit (fio)")
        .unit("bytes")
        .recorded(),
    p("do_verify", "whether a verify phase checks (fio)").recorded(),
    p("verify_fatal", "a job stops at its first mismatch (fio)").recorded(),
    p(
        "verify_async",
        "fio's verify threads, recorded (checks inline)",
    )
    .recorded(),
    p("continue_on_error", "error kinds a job goes on after (fio)").recorded(),
    p(
        "ignore_error",
        "errnos continue_on_error goes on after (fio)",
    )
    .recorded(),
    p("error_dump", "list each non-fatal error (fio)").recorded(),
    p("prio", "the job's I/O priority level (fio)").recorded(),
    p("prioclass", "the job's I/O priority class (fio)").recorded(),
    p(
        "cmdprio_percentage",
        "share of I/Os with a command priority (fio)",
    )
    .recorded(),
    p("cmdprio_class", "class of the command priority (fio)").recorded(),
    p("cmdprio", "level of the command priority (fio)").recorded(),
    p("cmdprio_hint", "hint of the command priority (fio)").recorded(),
    p("cmdprio_bssplit", "command priorities per block size (fio)").recorded(),
    p("log_prio", "latency per priority (fio)").recorded(),
    p("numa_cpu_nodes", "NUMA nodes whose CPUs run each job (fio)").recorded(),
    p("numa_mem_policy", "each job's NUMA memory policy (fio)").recorded(),
    p(
        "dedupe_percentage",
        "share of written blocks that repeat (fio)",
    )
    .recorded(),
    p("dedupe_mode", "which content a repeated block has (fio)").recorded(),
    p(
        "dedupe_working_set_percentage",
        "share of the region repeated blocks come from (fio)",
    )
    .recorded(),
    p("dedupe_global", "jobs share one dedupe working set (fio)").recorded(),
    // The machine, the target and the tool.
    p(
        "host",
        "the machine: host, os, kernel, arch, cpu, cpus, ram",
    )
    .aliases(&["hostname"])
    .group(&["host", "os", "kernel", "arch", "cpu", "cpus", "ram"]),
    p("os", "operating system").fact(),
    p("kernel", "kernel version").fact(),
    p("arch", "CPU architecture").fact(),
    p("cpu", "CPU model").fact(),
    p("cpus", "CPU count").fact(),
    p("ram", "memory size").fact(),
    p(
        "target",
        "what was measured: target, target_kind, filesystem, device, device_model",
    )
    .group(&[
        "target",
        "target_kind",
        "filesystem",
        "device",
        "device_model",
    ]),
    p("target_kind", "directory, file or block device").fact(),
    p("filesystem", "file system type (alias fs)")
        .aliases(&["fs"])
        .fact(),
    p("device", "device and its model").group(&["device", "device_model"]),
    p("device_model", "device model (alias model)")
        .aliases(&["model"])
        .fact(),
    p("tool", "tool and its version").group(&["tool", "tool_version"]),
    p("tool_version", "tool version (alias version)")
        .aliases(&["version"])
        .fact(),
];

/// A key of `storlab sim --vary`: a shorthand (`option`) for a value of the
/// scenario file.
const fn sim(key: &'static str, path: &'static str, description: &'static str) -> Param {
    p(key, description).option(Some(path))
}

/// `storlab sim --vary`'s keys (a scenario's vocabulary, apart from the
/// bench options of [`PARAMS`]: sim's `cache` is the array's cache size,
/// not a cache mode): each key's `option` is the scenario path it sets,
/// with the bounds sim's scenario check applies and words through
/// [`Param::refuse`], like every other out-of-bounds value. Any other
/// dotted path (`array.cache_rate`) is varied as written.
pub const SIM_PARAMS: &[Param] = &[
    sim("clients", "clients.count", "client nodes").range(1, Some(10_000_000)),
    sim("movers", "movers.count", "data movers (alias servers)")
        .aliases(&["servers"])
        .range(1, Some(1_000_000)),
    sim("arrays", "array.count", "storage arrays").range(1, Some(1_000_000)),
    sim("ports", "array.ports", "host ports per array").range(1, Some(1024)),
    sim("cache", "array.cache", "cache per array").unit("bytes"),
    sim(
        "stripe_count",
        "filesystem.stripe_count",
        "arrays a file is striped over",
    )
    .range(1, Some(1_000_000)),
    sim("file_size", "workload.file_size", "bytes per client file").unit("bytes"),
    sim("bs", "workload.bs", "request size").unit("bytes"),
    sim(
        "iodepth",
        "workload.iodepth",
        "requests in flight per client",
    )
    .range(1, Some(4096)),
];

/// The `sim --vary` key `name` names (its key or an alias, exactly as
/// written: scenario keys are case-sensitive).
pub fn sim_lookup(name: &str) -> Option<&'static Param> {
    SIM_PARAMS.iter().find(|p| p.is_named(name))
}

/// The `sim --vary` key whose scenario path is `path` (`clients.count`).
pub fn sim_param_at(path: &str) -> Option<&'static Param> {
    SIM_PARAMS.iter().find(|p| p.option == Some(path))
}

/// `Queue-Depth` → `queue_depth`: names are case-insensitive and `-` is `_`.
pub fn normalize(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

/// The parameter `name` names (its key or an alias, any case, `-` or `_`).
pub fn lookup(name: &str) -> Option<&'static Param> {
    let n = normalize(name);
    PARAMS.iter().find(|p| p.is_named(&n))
}

/// The bench option `name` names through this vocabulary (`qd` →
/// `iodepth`, `ramp` → `ramp_time`), if it names one.
pub fn option_of(name: &str) -> Option<&'static str> {
    lookup(name).and_then(|p| p.option)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_unique_and_normalized() {
        let mut seen = std::collections::BTreeSet::new();
        for p in PARAMS {
            for n in std::iter::once(&p.key).chain(p.aliases) {
                assert_eq!(normalize(n), *n, "{n}");
                assert!(seen.insert(*n), "{n} names two parameters");
            }
            assert!(p.min <= p.max.or(p.min), "{}", p.key);
            for m in p.members {
                assert!(lookup(m).is_some(), "{} member {m}", p.key);
            }
        }
    }

    /// docs/parameters.md lists each bound and choice as the registry
    /// words it, and no other.
    #[test]
    fn docs_list_every_bound_and_choice() {
        let doc = include_str!("../../../docs/parameters.md");
        let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
        for p in PARAMS {
            let start = format!("| `{}` ", p.key);
            let Some(row) = rows.iter().find(|r| r.starts_with(&start)) else {
                assert!(
                    p.allowed().is_none(),
                    "{} is bounded but not in the docs",
                    p.key
                );
                continue;
            };
            let last = row
                .trim_end_matches('|')
                .rsplit('|')
                .next()
                .unwrap_or("")
                .trim();
            assert_eq!(
                last,
                p.allowed().unwrap_or_default(),
                "docs row of {}",
                p.key
            );
        }
    }

    /// docs/parameters.md's sim section lists every sim key with its
    /// aliases, scenario value, unit and bounds as the registry has them.
    #[test]
    fn docs_list_every_sim_key() {
        let doc = include_str!("../../../docs/parameters.md");
        let (_, section) = doc.split_once("## sim --vary keys").unwrap();
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), SIM_PARAMS.len(), "{rows:?}");
        for (p, row) in SIM_PARAMS.iter().zip(&rows) {
            let aliases: Vec<String> = p.aliases.iter().map(|a| format!("`{a}`")).collect();
            let want = format!(
                "| `{}` | {} | `{}` | {} | {} |",
                p.key,
                aliases.join(", "),
                p.option.unwrap_or_default(),
                p.unit,
                p.allowed().unwrap_or_default()
            );
            let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(squeeze(row), squeeze(&want), "docs row of {}", p.key);
        }
    }

    #[test]
    fn refusals_name_the_parameter_its_range_and_an_example() {
        let qd = lookup("qd").unwrap();
        assert_eq!(qd.check_number(4096), Ok(4096));
        assert_eq!(
            qd.check_number(0).unwrap_err().to_string(),
            "invalid iodepth 0: from 1 to 4096 (e.g. iodepth=1)"
        );
        assert_eq!(check_number("jobs", 4097).unwrap_err().key, "numjobs");
        assert!(check_number("ramp", u64::MAX).is_ok(), "unbounded");
        let e = check_number("nrfiles", 2).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid nrfiles 2: only 1 (e.g. nrfiles=1); "),
            "{e}"
        );
        assert!(e.contains("--numjobs"), "{e}");
        let e = lookup("engine").unwrap().refuse("'aio'").to_string();
        assert_eq!(
            e,
            "invalid engine 'aio': one of io_uring, libaio, psync, null (e.g. engine=io_uring)"
        );
    }

    /// sim's keys are in the registry with their scenario path, and a
    /// value out of bounds gets the one refusal bench's options get.
    #[test]
    fn sim_keys_carry_their_path_and_the_one_refusal() {
        assert_eq!(
            sim_lookup("servers").and_then(|p| p.option),
            Some("movers.count")
        );
        assert_eq!(
            sim_param_at("workload.iodepth").map(|p| p.key),
            Some("iodepth")
        );
        assert!(sim_lookup("array.cache_rate").is_none());
        let sim_qd = sim_lookup("iodepth").unwrap().check_number(0).unwrap_err();
        let bench_qd = lookup("iodepth").unwrap().check_number(0).unwrap_err();
        assert_eq!(sim_qd.to_string(), bench_qd.to_string());
        assert_eq!(
            sim_lookup("clients").unwrap().refuse(0).to_string(),
            "invalid clients 0: from 1 to 10000000 (e.g. clients=1)"
        );
        for p in SIM_PARAMS {
            assert!(p.option.is_some_and(|o| o.contains('.')), "{}", p.key);
        }
    }

    /// The choices of `rw`, `engine` and `cache` are their enums' words:
    /// each parses into its enum, and every variant's word is a choice, so
    /// the registry and the typed values cannot drift apart.
    #[test]
    fn choices_are_the_enums_words() {
        let choices = |k: &str| lookup(k).unwrap().choices.to_vec();
        for w in choices("rw") {
            assert!(RwMode::parse(w).is_some(), "{w}");
        }
        for m in RwMode::ALL {
            assert!(choices("rw").contains(&m.as_str()), "{m}");
        }
        for w in choices("engine") {
            assert!(EngineKind::parse(w).is_some(), "{w}");
        }
        for e in [
            EngineKind::IoUring,
            EngineKind::Libaio,
            EngineKind::Psync,
            EngineKind::Null,
        ] {
            assert!(choices("engine").contains(&e.as_str()), "{e:?}");
        }
        for w in choices("cache") {
            assert!(CacheMode::parse(w).is_some(), "{w}");
        }
        for c in CacheMode::ALL {
            assert!(choices("cache").contains(&c.as_str()), "{c:?}");
        }
        // Every choice-valued parameter is one of these.
        let with_choices: Vec<&str> = PARAMS
            .iter()
            .filter(|p| !p.choices.is_empty())
            .map(|p| p.key)
            .collect();
        assert_eq!(
            with_choices,
            [
                "rw",
                "engine",
                "cache",
                "rate_process",
                "unified_rw_reporting"
            ]
        );
        for w in choices("rate_process") {
            assert!(RateProcess::parse(w).is_some(), "{w}");
        }
        for w in choices("unified_rw_reporting") {
            assert!(UnifiedRw::parse(w).is_some(), "{w}");
        }
    }

    #[test]
    fn aliases_find_their_parameter() {
        assert_eq!(lookup("QD").map(|p| p.key), Some("iodepth"));
        assert_eq!(lookup("ramp-time").map(|p| p.key), Some("ramp"));
        assert_eq!(option_of("qd"), Some("iodepth"));
        assert_eq!(option_of("ramp"), Some("ramp_time"));
        assert_eq!(option_of("kernel"), None);
        assert!(lookup("queue depth").is_none());
    }
}
