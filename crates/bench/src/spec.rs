//! What the user asked for: a job file (`[global]` + `[[phase]]` tables in
//! TOML) and command-line overrides, validated into [`PhaseParams`].
//!
//! Keys are named as fio names them (`rw`, `bs`, `bssplit`, `iodepth`,
//! `numjobs`, `rwmixread`, `ramp_time`, ...). Unknown keys and bad values are
//! errors that quote the file, line and column and say what is allowed.

use serde::Deserialize;
use std::path::Path;
use storlab_types::{
    BsWeight, BufferPattern, ByteSize, CacheMode, EngineKind, FileLayout, PhaseParams, RwMode,
    parse_duration, parse_size,
};

/// A bad job description: what is wrong, where, and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// One phase as typed: every field optional; later layers override earlier
/// ones (built-in defaults < `[global]` < `[[phase]]` < command line).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    pub name: Option<String>,
    pub rw: Option<String>,
    pub rwmixread: Option<u8>,
    pub bs: Option<ByteSize>,
    pub bssplit: Option<String>,
    pub size: Option<ByteSize>,
    pub numjobs: Option<u32>,
    pub iodepth: Option<u32>,
    #[serde(alias = "ioengine")]
    pub engine: Option<String>,
    pub direct: Option<bool>,
    pub cache: Option<String>,
    pub drop_caches: Option<bool>,
    pub runtime: Option<String>,
    pub time_based: Option<bool>,
    pub ramp_time: Option<String>,
    pub fsync_every: Option<u32>,
    pub end_fsync: Option<bool>,
    pub shared_file: Option<bool>,
    pub stride: Option<ByteSize>,
    pub buffer_pattern: Option<String>,
    pub random_with_replacement: Option<bool>,
    pub verify: Option<bool>,
    pub seed: Option<u64>,
    pub sqpoll: Option<bool>,
    pub registered: Option<bool>,
    pub rate_iops: Option<u32>,
    pub fallocate: Option<bool>,
    pub iodepth_batch: Option<u32>,
}

impl PhaseSpec {
    /// Fields set in `over` replace those in `self`. Two pairs are one
    /// setting spelled two ways and are replaced together: `bs`/`bssplit`
    /// (a phase's `bs` overrides a global `bssplit`) and `direct`/`cache`
    /// (a phase's `direct = true` overrides a global `cache = "cold"`).
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
        let this = &base;
        macro_rules! pick {
            ($($f:ident),*) => { PhaseSpec { $($f: over.$f.clone().or_else(|| this.$f.clone()),)* } };
        }
        pick!(
            name,
            rw,
            rwmixread,
            bs,
            bssplit,
            size,
            numjobs,
            iodepth,
            engine,
            direct,
            cache,
            drop_caches,
            runtime,
            time_based,
            ramp_time,
            fsync_every,
            end_fsync,
            shared_file,
            stride,
            buffer_pattern,
            random_with_replacement,
            verify,
            seed,
            sqpoll,
            registered,
            rate_iops,
            fallocate,
            iodepth_batch
        )
    }
}

/// A parsed job file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// Optional default target (the command line's TARGET wins).
    pub target: Option<String>,
    #[serde(default)]
    pub global: PhaseSpec,
    #[serde(default)]
    pub phase: Vec<toml::Spanned<PhaseSpec>>,
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map(|i| before.len() - i)
        .unwrap_or(before.len() + 1);
    (line, col)
}

impl JobFile {
    /// Parse TOML text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<JobFile, SpecError> {
        toml::from_str::<JobFile>(text).map_err(|e| {
            let loc = e
                .span()
                .map(|s| {
                    let (l, c) = line_col(text, s.start);
                    format!("{}:{l}:{c}", path.display())
                })
                .unwrap_or_else(|| path.display().to_string());
            let mut msg = e.message().to_string();
            if msg.contains("unknown field") {
                msg.push_str(
                    " (see `storlab bench --help` or docs/bench.md for the keys a job file takes)",
                );
            }
            SpecError(format!("{loc}: {msg}"))
        })
    }

    /// Resolve every phase: built-in defaults < `base` (defaults that
    /// depend on the machine, e.g. psync where io_uring is unavailable) <
    /// global < phase < `cli`. A file with no `[[phase]]` runs `[global]`
    /// as a single phase.
    pub fn phases(
        &self,
        text: &str,
        path: &Path,
        base: &PhaseSpec,
        cli: &PhaseSpec,
    ) -> Result<Vec<PhaseParams>, SpecError> {
        let global = base.overlay(&self.global);
        if self.phase.is_empty() {
            let spec = global.overlay(cli);
            return Ok(vec![
                resolve_phase(&spec, 0)
                    .map_err(|e| SpecError(format!("{}: {}", path.display(), e.0)))?,
            ]);
        }
        self.phase
            .iter()
            .enumerate()
            .map(|(i, sp)| {
                let spec = global.overlay(sp.get_ref()).overlay(cli);
                resolve_phase(&spec, i).map_err(|e| {
                    let (l, c) = line_col(text, sp.span().start);
                    SpecError(format!(
                        "{}:{l}:{c}: phase {}: {}",
                        path.display(),
                        i + 1,
                        e.0
                    ))
                })
            })
            .collect()
    }
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
    let sum: u32 = out.iter().map(|b| b.weight).sum();
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

/// Turn one fully layered spec into resolved parameters, checking every value.
pub fn resolve_phase(s: &PhaseSpec, index: usize) -> Result<PhaseParams, SpecError> {
    let rw = match &s.rw {
        None => RwMode::Read,
        Some(r) => RwMode::parse(r).ok_or_else(|| {
            SpecError(format!(
                "invalid rw '{r}': use one of read, write, randread, randwrite, readwrite (or rw), randrw"
            ))
        })?,
    };
    let rwmixread = s.rwmixread.unwrap_or(50);
    if rwmixread > 100 {
        return err(format!(
            "invalid rwmixread {rwmixread}: a percentage from 0 to 100"
        ));
    }
    let bs = match (&s.bssplit, s.bs) {
        (Some(split), _) => parse_bssplit(split)?,
        (None, Some(b)) => vec![BsWeight {
            bs_bytes: b.0,
            weight: 100,
        }],
        (None, None) => vec![BsWeight {
            bs_bytes: 4096,
            weight: 100,
        }],
    };
    for b in &bs {
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
    let max_bs = bs.iter().map(|b| b.bs_bytes).max().unwrap_or(4096);
    let size = s.size.map(|b| b.0).unwrap_or(256 << 20);
    if size < max_bs {
        return err(format!(
            "size {size} is smaller than the block size {max_bs}: use a larger --size"
        ));
    }
    // Whole blocks only: the tail that does not fill a block is not used.
    let size = size / max_bs * max_bs;
    let numjobs = s.numjobs.unwrap_or(1);
    if numjobs == 0 || numjobs > 4096 {
        return err(format!("invalid numjobs {numjobs}: from 1 to 4096"));
    }
    let iodepth = s.iodepth.unwrap_or(1);
    if iodepth == 0 || iodepth > 4096 {
        return err(format!("invalid iodepth {iodepth}: from 1 to 4096"));
    }
    let iodepth_batch = s.iodepth_batch.unwrap_or(1);
    if iodepth_batch == 0 || iodepth_batch > iodepth {
        return err(format!(
            "invalid iodepth_batch {iodepth_batch}: from 1 to the iodepth ({iodepth})"
        ));
    }
    let engine = match &s.engine {
        None => EngineKind::IoUring,
        Some(e) => EngineKind::parse(e).ok_or_else(|| {
            SpecError(format!("invalid engine '{e}': use io_uring, psync or null"))
        })?,
    };
    let cache = match (&s.cache, s.direct) {
        (Some(c), direct) => {
            let m = CacheMode::parse(c).ok_or_else(|| {
                SpecError(format!(
                    "invalid cache mode '{c}': use direct, cold or warm"
                ))
            })?;
            if direct == Some(true) && m != CacheMode::Direct {
                return err(format!(
                    "--direct contradicts cache = {c}: drop one of them"
                ));
            }
            m
        }
        (None, Some(true)) => CacheMode::Direct,
        (None, Some(false)) => CacheMode::Cold,
        (None, None) => CacheMode::Direct,
    };
    let dur = |v: &Option<String>, what: &str| -> Result<Option<u64>, SpecError> {
        v.as_deref()
            .map(|t| {
                parse_duration(t)
                    .map(|d| d.as_nanos() as u64)
                    .map_err(|e| SpecError(format!("{what}: {e}")))
            })
            .transpose()
    };
    let runtime_ns = dur(&s.runtime, "runtime")?;
    if runtime_ns == Some(0) {
        return err("runtime 0: give a positive duration such as 10s, or leave it out");
    }
    let time_based = s.time_based.unwrap_or(false);
    if time_based && runtime_ns.is_none() {
        return err("time_based needs a runtime: add e.g. --runtime 30s");
    }
    let ramp_ns = dur(&s.ramp_time, "ramp_time")?.unwrap_or(0);
    let layout = match (s.shared_file.unwrap_or(false), s.stride) {
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
    };
    let buffer_pattern = match &s.buffer_pattern {
        None => BufferPattern::Random,
        Some(b) => parse_buffer_pattern(b)?,
    };
    let verify = s.verify.unwrap_or(false);
    if verify && buffer_pattern == BufferPattern::Zero {
        return err("verify needs self-checking data: drop --buffer-pattern zero or --verify");
    }
    if verify && bs.iter().any(|b| b.bs_bytes < 512) {
        return err("verify needs block sizes of at least 512 bytes");
    }
    let seed = s.seed.unwrap_or(0x5354_4F52_4C41_4231);
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
        drop_caches: s.drop_caches.unwrap_or(false),
        runtime_ns,
        time_based,
        ramp_ns,
        fsync_every: s.fsync_every.unwrap_or(0),
        end_fsync: s.end_fsync.unwrap_or(true),
        layout,
        buffer_pattern,
        random_with_replacement: s.random_with_replacement.unwrap_or(false),
        verify,
        seed,
        sqpoll: s.sqpoll.unwrap_or(false),
        registered: s.registered.unwrap_or(true),
        rate_iops: s.rate_iops.unwrap_or(0),
        fallocate: s.fallocate.unwrap_or(true),
        iodepth_batch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(text: &str) -> Result<Vec<PhaseParams>, SpecError> {
        let path = Path::new("job.toml");
        let f = JobFile::parse(text, path)?;
        f.phases(text, path, &PhaseSpec::default(), &PhaseSpec::default())
    }

    #[test]
    fn global_and_phases_layer() {
        let phases = p(r#"
[global]
bs = "1M"
size = "64M"
iodepth = 8
[[phase]]
name = "write"
rw = "write"
[[phase]]
rw = "randread"
bs = "4k"
"#)
        .unwrap();
        assert_eq!(phases.len(), 2);
        assert_eq!(phases[0].name, "write");
        assert_eq!(phases[0].bs[0].bs_bytes, 1 << 20);
        assert_eq!(phases[1].bs[0].bs_bytes, 4096);
        assert_eq!(phases[1].iodepth, 8);
        assert_eq!(phases[1].size_bytes, 64 << 20);
        assert_eq!(phases[1].name, "2-randread");
    }

    #[test]
    fn cli_overrides_file() {
        let text = "[[phase]]\nrw = \"read\"\niodepth = 4\n";
        let f = JobFile::parse(text, Path::new("j.toml")).unwrap();
        let cli = PhaseSpec {
            iodepth: Some(32),
            ..Default::default()
        };
        let ph = f
            .phases(text, Path::new("j.toml"), &PhaseSpec::default(), &cli)
            .unwrap();
        assert_eq!(ph[0].iodepth, 32);
    }

    #[test]
    fn paired_settings_override_together_and_base_is_lowest() {
        let text = "[global]\nbssplit = \"4k/50:64k/50\"\ncache = \"cold\"\n\
                    [[phase]]\nrw = \"read\"\nbs = \"1M\"\ndirect = true\n\
                    [[phase]]\nrw = \"write\"\nengine = \"null\"\n";
        let path = Path::new("j.toml");
        let f = JobFile::parse(text, path).unwrap();
        let base = PhaseSpec {
            engine: Some("psync".into()),
            cache: Some("warm".into()),
            ..Default::default()
        };
        let ph = f.phases(text, path, &base, &PhaseSpec::default()).unwrap();
        assert_eq!(
            ph[0].bs,
            vec![BsWeight {
                bs_bytes: 1 << 20,
                weight: 100
            }]
        );
        assert_eq!(ph[0].cache, CacheMode::Direct);
        assert_eq!(
            ph[0].engine,
            EngineKind::Psync,
            "the machine default fills what nobody set"
        );
        assert_eq!(
            ph[1].bs.len(),
            2,
            "the global mix applies where the phase sets no size"
        );
        assert_eq!(
            ph[1].cache,
            CacheMode::Cold,
            "the file's choice beats the machine default"
        );
        assert_eq!(ph[1].engine, EngineKind::Null);
    }

    #[test]
    fn unknown_key_quotes_line_and_column() {
        let e = p("[global]\nbs = \"4k\"\nblocksize = 3\n").unwrap_err().0;
        assert!(e.starts_with("job.toml:3:1:"), "{e}");
        assert!(e.contains("blocksize"), "{e}");
        assert!(e.contains("expected one of"), "{e}");
    }

    #[test]
    fn bad_values_quote_location_and_fix() {
        let e = p("[global]\nbs = \"4q\"\n").unwrap_err().0;
        assert!(e.starts_with("job.toml:2:"), "{e}");
        assert!(e.contains("e.g. 4096, 4k"), "{e}");
        let e = p("[[phase]]\nrw = \"read\"\n[[phase]]\nrw = \"sideways\"\n")
            .unwrap_err()
            .0;
        assert!(e.starts_with("job.toml:3:1: phase 2:"), "{e}");
        assert!(e.contains("randrw"), "{e}");
        let e = p("[global]\nruntime = \"5 parsecs\"\n").unwrap_err().0;
        assert!(e.contains("runtime"), "{e}");
    }

    #[test]
    fn validation() {
        let ok = |s: PhaseSpec| resolve_phase(&s, 0);
        assert!(
            ok(PhaseSpec {
                bs: Some(ByteSize(1000)),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            ok(PhaseSpec {
                time_based: Some(true),
                ..Default::default()
            })
            .unwrap_err()
            .0
            .contains("--runtime")
        );
        assert!(
            ok(PhaseSpec {
                rwmixread: Some(101),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            ok(PhaseSpec {
                iodepth: Some(0),
                ..Default::default()
            })
            .is_err()
        );
        let d = ok(PhaseSpec {
            direct: Some(true),
            cache: Some("cold".into()),
            ..Default::default()
        });
        assert!(d.unwrap_err().0.contains("contradicts"));
        let s = ok(PhaseSpec {
            stride: Some(ByteSize(8192)),
            bs: Some(ByteSize(4096)),
            size: Some(ByteSize(65536)),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            s.layout,
            FileLayout::SharedInterleaved { stride_bytes: 8192 }
        );
        let s = ok(PhaseSpec {
            size: Some(ByteSize(10_000)),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(s.size_bytes, 8192, "rounded down to whole blocks");
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
        assert_eq!(
            parse_buffer_pattern("compressible:30").unwrap(),
            BufferPattern::Compressible { pct: 30 }
        );
        assert!(parse_buffer_pattern("compressible:300").is_err());
        assert!(parse_buffer_pattern("ones").is_err());
    }

    #[test]
    fn shipped_examples_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let f = JobFile::parse(&text, &path).unwrap();
                let phases = f
                    .phases(&text, &path, &PhaseSpec::default(), &PhaseSpec::default())
                    .unwrap();
                assert!(!phases.is_empty(), "{}", path.display());
                n += 1;
            }
        }
        assert!(n >= 2, "examples found: {n}");
    }

    proptest! {
        #[test]
        fn job_file_parser_never_panics(text in "\\PC{0,200}") {
            let path = Path::new("f.toml");
            if let Ok(f) = JobFile::parse(&text, path) {
                let _ = f.phases(&text, path, &PhaseSpec::default(), &PhaseSpec::default());
            }
        }

        #[test]
        fn bssplit_never_panics(s in "[0-9kKmM/:%]{0,30}") {
            let _ = parse_bssplit(&s);
        }

        #[test]
        fn structured_job_files_never_panic(
            bs in "[0-9]{1,5}[kKmM]?", rw in "(read|write|randrw|x)", depth in 0u32..70000, mix in 0u8..=255
        ) {
            let text = format!("[global]\nbs = \"{bs}\"\n[[phase]]\nrw = \"{rw}\"\niodepth = {depth}\nrwmixread = {mix}\n");
            let path = Path::new("f.toml");
            if let Ok(f) = JobFile::parse(&text, path) {
                let _ = f.phases(&text, path, &PhaseSpec::default(), &PhaseSpec::default());
            }
        }
    }
}
