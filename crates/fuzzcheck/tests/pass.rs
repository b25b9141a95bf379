//! The bounded fuzz pass that runs on stable Rust (in `cargo test`, so in
//! CI): every target of `storlab_fuzzcheck::TARGETS` gets its seed corpus
//! (`fuzz/corpus/<target>/`) and then seeded random mutations of it: bit
//! flips, interesting bytes and numbers, insertions of tokens the formats
//! use, deletions, duplications and truncations. Deterministic for a seed.
//!
//! Bounds: `STORLAB_FUZZ_ITERS` mutated inputs per target (default 3000)
//! and at most `STORLAB_FUZZ_SECS` seconds per target (default 3; no time
//! limit when STORLAB_FUZZ_ITERS is set and STORLAB_FUZZ_SECS is not).
//! `STORLAB_FUZZ_SEED` changes the seed. A failing input is written to
//! `fuzz/artifacts/<target>/stable-<hash>` (replay it with cargo-fuzz or
//! with the check function) and named in the failure.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(n) => Some(n),
        Err(_) => panic!("{name}={v:?}: expected a whole number"),
    }
}

/// SplitMix64: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Pieces of the formats worth splicing in: units, numbers at the edges,
/// separators, quotes, TOML and JSON syntax, fio and layout notation.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "4k",
    "1MiB",
    "8E",
    "16EiB",
    "1e400",
    "NaN",
    "inf",
    "-0",
    "0.0",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967296",
    "%",
    "s",
    "ms",
    "ns",
    "h",
    "y",
    "/s",
    "MB/s",
    "x",
    "*",
    "=",
    ",",
    ".",
    ":",
    "~",
    "..",
    "\n",
    "\r\n",
    " ",
    "\t",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    "[[",
    "]]",
    "#",
    ";",
    "\\",
    "\u{e9}",
    "\u{0}",
    "true",
    "null",
    "[]",
    "{}",
    "\"\"",
    "R6/12",
    "R60/12/48",
    "lvm(",
    ")",
    "chunk=",
    "stripe=",
    "tag:",
    "latest",
    "@ ",
    "rw=",
    "bs=",
    "size=",
    "[global]",
    "$",
    "${",
    "{{",
    "}}",
    "name = ",
    "count = ",
    "jobs",
    "\"jobs\": [",
    "total_ios",
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = [0, 0xff, 0x7f, 0x80, b'0', b'9', b' ', 0xe9][rng.below(8)];
            }
            2 | 3 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let at = rng.below(len + 1);
                input.splice(at..at, t.iter().copied());
            }
            4 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(16));
                input.drain(at..at + n);
            }
            5 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below((len - at).min(64));
                let piece: Vec<u8> = input[at..at + n].to_vec();
                let to = rng.below(input.len() + 1);
                input.splice(to..to, piece);
            }
            6 => input.truncate(rng.below(len + 1)),
            _ => {
                // Replace a run of digits by an edge number.
                if let Some(start) = input.iter().position(|b| b.is_ascii_digit()) {
                    let end = input[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(input.len(), |e| start + e);
                    let t = TOKENS[rng.below(16)].as_bytes();
                    input.splice(start..end, t.iter().copied());
                }
            }
        }
    }
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (every target has a seed corpus)", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("read seed"))
        .collect();
    assert!(!seeds.is_empty(), "{}: no seeds", dir.display());
    seeds
}

thread_local! {
    /// Set on a thread whose expected panics should not be printed.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Print panics as usual, except on a thread that expects them.
fn quiet_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                default(info);
            }
        }));
    });
}

/// How long a pass runs: mutations at most, and seconds at most.
struct Bounds {
    iters: u64,
    secs: Option<u64>,
    seed: u64,
}

impl Bounds {
    fn from_env() -> Bounds {
        let iters = env_u64("STORLAB_FUZZ_ITERS");
        Bounds {
            secs: env_u64("STORLAB_FUZZ_SECS").or(if iters.is_some() { None } else { Some(3) }),
            iters: iters.unwrap_or(3000),
            seed: env_u64("STORLAB_FUZZ_SEED").unwrap_or(0x0570_71ab),
        }
    }
}

/// The seeds, then mutations of them, through `check`: the first input
/// that panics, with what it was, or the number of mutations run.
fn search(
    name: &str,
    check: fn(&[u8]),
    seeds: &[Vec<u8>],
    b: &Bounds,
) -> Result<u64, (Vec<u8>, String)> {
    let fails = |input: &[u8]| catch_unwind(AssertUnwindSafe(|| check(input))).is_err();
    for (i, s) in seeds.iter().enumerate() {
        if fails(s) {
            return Err((s.clone(), format!("seed {i}")));
        }
    }
    let mut rng = Rng(b.seed
        ^ name
            .bytes()
            .fold(0u64, |h, c| h.rotate_left(5) ^ u64::from(c)));
    let start = Instant::now();
    let mut done = 0u64;
    while done < b.iters {
        if b.secs
            .is_some_and(|s| start.elapsed() > Duration::from_secs(s))
        {
            break;
        }
        let mut input = seeds[rng.below(seeds.len())].clone();
        mutate(&mut rng, &mut input);
        if fails(&input) {
            return Err((input, format!("mutation {done} (seed {:#x})", b.seed)));
        }
        done += 1;
    }
    Ok(done)
}

/// One target's pass; a failing input is kept under fuzz/artifacts/ and
/// named in the failure.
fn pass(target: &str) {
    let (_, check) = storlab_fuzzcheck::TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .unwrap_or_else(|| panic!("no target {target}"));
    let seeds = seeds(target);
    let start = Instant::now();
    match search(target, *check, &seeds, &Bounds::from_env()) {
        Ok(done) => {
            eprintln!(
                "fuzz pass {target}: {} seeds, {done} mutations in {:.1?}",
                seeds.len(),
                start.elapsed()
            );
            assert!(done > 0, "{target}: no mutation ran");
        }
        Err((input, what)) => {
            let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
            let dir = fuzz_dir().join("artifacts").join(target);
            let file = dir.join(format!("stable-{hash:016x}"));
            let kept = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, &input));
            panic!(
                "fuzz target {target}: {what} failed its check (see the panic above); input {} ({} bytes): {:?}",
                match kept {
                    Ok(()) => file.display().to_string(),
                    Err(e) => format!("not saved: {e}"),
                },
                input.len(),
                String::from_utf8_lossy(&input[..input.len().min(400)])
            );
        }
    }
}

/// The pass is able to fail: a check with a planted bug (it panics on a
/// size written with an exponent past f64's range) is caught from a seed
/// that does not have it, within the default bounds.
#[test]
fn the_pass_finds_a_planted_bug() {
    fn planted(data: &[u8]) {
        assert!(!data.windows(5).any(|w| w == b"1e400"), "planted");
    }
    quiet_hook();
    QUIET.with(|q| q.set(true));
    let seeds = vec![b"4k".to_vec(), b"size = 1MiB".to_vec()];
    let b = Bounds {
        iters: 3000,
        secs: None,
        seed: 1,
    };
    let (input, _) = search("planted", planted, &seeds, &b).expect_err("the planted bug is found");
    assert!(String::from_utf8_lossy(&input).contains("1e400"));
    // And a check without the bug passes the same search.
    assert_eq!(search("planted", |_| {}, &seeds, &b), Ok(3000));
}

#[test]
fn every_target_has_a_test_here() {
    let src = include_str!("pass.rs");
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in storlab_fuzzcheck::TARGETS {
        assert!(
            src.contains(&format!("fn {name}() {{\n    pass(\"{name}\")")),
            "{name}"
        );
        let bin = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        assert!(bin.is_file(), "{}: the cargo-fuzz target", bin.display());
        let calls = std::fs::read_to_string(&bin).expect("read the target");
        assert!(
            calls.contains(&format!("storlab_fuzzcheck::{name}(data)")),
            "{}",
            bin.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml: [[bin]] {name}"
        );
    }
}

#[test]
fn units() {
    pass("units")
}
#[test]
fn select() {
    pass("select")
}
#[test]
fn fio_json() {
    pass("fio_json")
}
#[test]
fn job_file() {
    pass("job_file")
}
#[test]
fn fio_job() {
    pass("fio_job")
}
#[test]
fn layout() {
    pass("layout")
}
#[test]
fn replay() {
    pass("replay")
}
#[test]
fn campaign() {
    pass("campaign")
}
#[test]
fn sim_scenario() {
    pass("sim_scenario")
}
#[test]
fn plan_catalog() {
    pass("plan_catalog")
}
#[test]
fn design() {
    pass("design")
}
#[test]
fn vary() {
    pass("vary")
}
