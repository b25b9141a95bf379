//! IOR's command-line flags (`storlab bench --ior '-a POSIX -t 1m -b 16m
//! -s 4 -F -e -w -r'`) translated into storlab's options, so an IOR user
//! keeps the flags they know. Each flag maps to a job-file key (the phases)
//! or a run-level option (`--repeat`, `--keep`, the cluster flags); a flag
//! storlab cannot honour is refused by name, never ignored. `--dry-run`
//! prints the mapping and the job it makes.
//!
//! IOR's semantics (its `parse_options.c` and user guide): `-b` is the
//! contiguous block each task writes per segment, `-t` the transfer size
//! (it divides `-b`), `-s` the segment count; with `-F` each task has its
//! own file of `-b × -s` bytes, otherwise one shared file holds, per
//! segment, every task's block in rank order (storlab's `--shared-file
//! --stride B`). Without `-w`/`-r` IOR writes and then reads. IOR's POSIX
//! API is synchronous `pwrite`/`pread` (storlab's `psync`), buffered
//! unless `-B`; `-e` fsyncs on close, and without it IOR does not sync.

use std::fmt::Write as _;
use std::time::Duration;
use storlab_types::format_bytes;

/// IOR's defaults (`ior -h`): 1 MiB blocks, 256 KiB transfers, 1 segment.
const DEFAULT_BLOCK: u64 = 1 << 20;
const DEFAULT_TRANSFER: u64 = 256 << 10;

/// What IOR's flags mean in storlab's terms.
#[derive(Debug, Default, PartialEq)]
pub struct IorTranslation {
    /// A storlab job file (TOML): `[global]` and the phases.
    pub job_toml: String,
    /// `-i N`.
    pub repeat: Option<u32>,
    /// `-k`.
    pub keep: bool,
    /// `-D SECONDS`.
    pub stonewall: Option<Duration>,
    /// `-O stoneWallingWearOut=1`.
    pub wear_out: bool,
    /// `-C`.
    pub reorder_tasks: bool,
    /// Each IOR flag as typed, and what storlab does for it.
    pub mapping: Vec<(String, String)>,
}

/// Flags IOR has that storlab cannot honour, with why (refused by name).
fn refusal(flag: char) -> Option<&'static str> {
    Some(match flag {
        'c' => "collective MPI-IO has no storlab equivalent (storlab does POSIX I/O)",
        'm' | 'u' | 'I' | 'f' | 'A' => {
            "multiple files, unique directories, data sets and IOR scripts are not supported"
        }
        'E' => {
            "storlab lays out its own files; give an existing file as TARGET with --allow-destroy instead"
        }
        'W' | 'R' => {
            "IOR's read-back checks are not storlab's; storlab's --verify writes self-checking blocks and checks them on read"
        }
        'Z' | 'X' | 'Q' => {
            "storlab's --reorder-tasks (IOR's -C) reads a neighbour node's data; random or other task offsets are not supported"
        }
        'N' => "storlab uses every rank mpirun started; use --clients K for the first K",
        'T' | 'd' | 'j' | 'J' | 'G' | 'H' | 'K' | 'l' | 'n' | 'p' | 'P' | 'S' | 'U' | 'V' | 'x'
        | 'q' | 'h' => "not supported by storlab",
        _ => return None,
    })
}

/// Flags that take a value (IOR's getopt string).
fn takes_value(flag: char) -> bool {
    "AabQXdDfGijJNoOsTtU".contains(flag)
}

fn size(flag: char, v: &str) -> Result<u64, IorError> {
    storlab_types::parse_size(v)
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| IorError::NotASize {
            flag,
            value: v.to_string(),
        })
}

fn count(flag: char, v: &str) -> Result<u32, IorError> {
    v.parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| IorError::NotACount {
            flag,
            value: v.to_string(),
        })
}

/// The flags as (flag, value) pairs: `-t 1m`, `-t1m`, bundles `-wr`;
/// IOR's `--posix.odirect` is `-B`.
fn tokens(args: &str) -> Result<Vec<(char, Option<String>)>, IorError> {
    let words = shlex::split(args).ok_or_else(|| IorError::Quotes {
        args: args.to_string(),
    })?;
    let mut out = Vec::new();
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if w == "--posix.odirect" {
            out.push(('B', None));
            continue;
        }
        let Some(letters) = w
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && !l.starts_with('-'))
        else {
            return Err(IorError::NotAFlag { word: w });
        };
        for (i, c) in letters.char_indices() {
            if takes_value(c) {
                let rest = &letters[i + c.len_utf8()..];
                let v = if rest.is_empty() {
                    it.next().ok_or(IorError::NeedsValue { flag: c })?
                } else {
                    rest.to_string()
                };
                out.push((c, Some(v)));
                break;
            }
            out.push((c, None));
        }
    }
    Ok(out)
}

/// IOR flags that cannot be translated: the flag named, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IorError {
    #[error("--ior: -{flag} {value}: not a size (e.g. 1m, 16m, 4k)")]
    NotASize { flag: char, value: String },
    #[error("--ior: -{flag} {value}: expected a whole number of at least 1")]
    NotACount { flag: char, value: String },
    #[error("--ior '{args}': unbalanced quotes")]
    Quotes { args: String },
    #[error(
        "--ior: '{word}' is not an IOR flag (give flags such as -t 1m -b 16m -w -r; the \
         target is storlab's TARGET or IOR's -o)"
    )]
    NotAFlag { word: String },
    #[error("--ior: -{flag} needs a value")]
    NeedsValue { flag: char },
    /// `-a` other than POSIX.
    #[error("--ior: -a {api}: storlab does POSIX I/O only (-a POSIX); {api} is not supported")]
    Api { api: String },
    /// `-O` other than stoneWallingWearOut=1.
    #[error("--ior: -O {value}: only -O stoneWallingWearOut=1 is supported")]
    Option { value: String },
    /// A flag storlab cannot honour, and why.
    #[error("--ior: -{flag}: {why}")]
    Refused { flag: char, why: &'static str },
    #[error(
        "--ior: the block (-b {}) is not a multiple of the transfer (-t {}), as IOR requires",
        format_bytes(*block),
        format_bytes(*transfer)
    )]
    BlockNotMultiple { block: u64, transfer: u64 },
}

/// Translate IOR's flags (one string, as typed after `ior`).
pub fn translate(args: &str) -> Result<IorTranslation, IorError> {
    let mut t = IorTranslation::default();
    let (mut block, mut transfer, mut segments) = (DEFAULT_BLOCK, DEFAULT_TRANSFER, 1u32);
    let (mut fpp, mut direct, mut fsync, mut random) = (false, false, false, false);
    let mut fsync_each = false;
    let (mut write, mut read) = (false, false);
    let mut target = None;
    let mut map = |flag: String, what: String| t.mapping.push((flag, what));
    for (c, v) in tokens(args)? {
        let shown = match &v {
            Some(v) => format!("-{c} {v}"),
            None => format!("-{c}"),
        };
        let v = v.unwrap_or_default();
        match c {
            'a' if v.eq_ignore_ascii_case("posix") => map(
                shown,
                "--engine psync (synchronous pwrite/pread, one I/O in flight)".into(),
            ),
            'a' => {
                return Err(IorError::Api { api: v });
            }
            'b' => {
                block = size(c, &v)?;
                map(
                    shown,
                    format!("block per task per segment {}", format_bytes(block)),
                );
            }
            't' => {
                transfer = size(c, &v)?;
                map(shown, format!("--bs {}", format_bytes(transfer)));
            }
            's' => {
                segments = count(c, &v)?;
                map(shown, format!("{segments} segment(s)"));
            }
            'F' => {
                fpp = true;
                map(
                    shown,
                    "a file per rank (storlab's default layout, N-N)".into(),
                );
            }
            'B' => {
                direct = true;
                map(shown, "--cache direct (O_DIRECT)".into());
            }
            'e' => {
                fsync = true;
                map(shown, "--end-fsync (inside the timed window)".into());
            }
            'Y' => {
                fsync_each = true;
                map(shown, "--fsync-every 1 (fsync after every write)".into());
            }
            'w' => {
                write = true;
                map(shown, "a write phase".into());
            }
            'r' => {
                read = true;
                map(shown, "a read phase (after the write phase)".into());
            }
            'z' => {
                random = true;
                map(
                    shown,
                    "--rw randwrite / randread (each transfer once, in random order)".into(),
                );
            }
            'C' => {
                t.reorder_tasks = true;
                map(
                    shown,
                    "--reorder-tasks (MPI: read what a rank on another node wrote)".into(),
                );
            }
            'D' => {
                let s = count(c, &v)?;
                t.stonewall = Some(Duration::from_secs(u64::from(s)));
                map(shown, format!("--stonewall {s}s (MPI)"));
            }
            'i' => {
                let n = count(c, &v)?;
                t.repeat = Some(n);
                map(shown, format!("--repeat {n}"));
            }
            'k' => {
                t.keep = true;
                map(shown, "--keep".into());
            }
            'o' => {
                map(shown, format!("TARGET {v}"));
                target = Some(v);
            }
            'O' if v
                .replace(' ', "")
                .eq_ignore_ascii_case("stonewallingwearout=1") =>
            {
                t.wear_out = true;
                map(shown, "--stonewall-wear-out (MPI)".into());
            }
            'O' => {
                return Err(IorError::Option { value: v });
            }
            'g' => map(
                shown,
                "(always so: storlab's ranks meet at a barrier around each phase)".into(),
            ),
            'v' => map(shown, "(IOR's verbosity: storlab's output is fixed)".into()),
            c => {
                let why = refusal(c).unwrap_or("not an IOR flag storlab knows");
                return Err(IorError::Refused { flag: c, why });
            }
        }
    }
    finish(
        t,
        JobShape {
            size: 0,
            transfer,
            block,
            segments,
            fpp,
            direct,
            fsync,
            random,
            fsync_each,
            write,
            read,
            target,
        },
    )
}

/// Check the shape, apply IOR's defaults (both phases without -w/-r), note
/// what differs from IOR when a flag is absent, and make the job.
fn finish(mut t: IorTranslation, mut sh: JobShape) -> Result<IorTranslation, IorError> {
    let (block, transfer, segments) = (sh.block, sh.transfer, sh.segments);
    if block % transfer != 0 {
        return Err(IorError::BlockNotMultiple { block, transfer });
    }
    if !sh.write && !sh.read {
        // IOR's default: write, then read.
        (sh.write, sh.read) = (true, true);
        t.mapping.push((
            "(no -w/-r)".into(),
            "a write phase, then a read phase (IOR's default)".into(),
        ));
    }
    if !sh.fsync && sh.write {
        t.mapping.push((
            "(no -e)".into(),
            "--no-end-fsync (IOR does not fsync without -e)".into(),
        ));
    }
    if !sh.direct {
        t.mapping.push((
            "(no -B)".into(),
            "--cache buffered (the page cache left as it is, as IOR leaves it)".into(),
        ));
    }
    let size = block * u64::from(segments);
    sh.size = size;
    t.job_toml = job_toml(&sh);
    let layout = if sh.fpp {
        format!("--size {} per rank's file (-b × -s)", format_bytes(size))
    } else if segments == 1 {
        format!(
            "--shared-file, --size {} per rank (one block each)",
            format_bytes(size)
        )
    } else {
        format!(
            "--shared-file --stride {} --size {} per rank (blocks interleaved by rank in each segment)",
            format_bytes(block),
            format_bytes(size)
        )
    };
    t.mapping.push(("(layout)".into(), layout));
    Ok(t)
}

struct JobShape {
    size: u64,
    transfer: u64,
    block: u64,
    segments: u32,
    fpp: bool,
    direct: bool,
    fsync: bool,
    random: bool,
    fsync_each: bool,
    write: bool,
    read: bool,
    target: Option<String>,
}

/// The storlab job file the flags make.
fn job_toml(s: &JobShape) -> String {
    let mut j = String::from("# translated from IOR's flags (storlab bench --ior)\n");
    if let Some(t) = &s.target {
        let _ = writeln!(j, "target = {}", toml_str(t));
    }
    j.push_str("\n[global]\nengine = \"psync\"\n");
    let _ = writeln!(j, "bs = {}", s.transfer);
    let _ = writeln!(j, "size = {}", s.size);
    let _ = writeln!(
        j,
        "cache = \"{}\"",
        if s.direct { "direct" } else { "buffered" }
    );
    let _ = writeln!(j, "end_fsync = {}", s.fsync);
    if s.fsync_each {
        j.push_str("fsync_every = 1\n");
    }
    if !s.fpp {
        j.push_str("shared_file = true\n");
        if s.segments > 1 {
            let _ = writeln!(j, "stride = {}", s.block);
        }
    }
    let rand = if s.random { "rand" } else { "" };
    if s.write {
        let _ = writeln!(j, "\n[[phase]]\nname = \"write\"\nrw = \"{rand}write\"");
    }
    if s.read {
        let _ = writeln!(j, "\n[[phase]]\nname = \"read\"\nrw = \"{rand}read\"");
    }
    j
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04X}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The mapping as `--dry-run` prints it.
pub fn render(t: &IorTranslation) -> String {
    let w = t.mapping.iter().map(|(f, _)| f.len()).max().unwrap_or(0);
    let mut out = String::from("IOR flag → storlab\n");
    for (f, what) in &t.mapping {
        let _ = writeln!(out, "  {f:<w$}  {what}");
    }
    out.push_str("\nThe job it makes (storlab bench --job FILE runs the same):\n");
    out.push_str(&t.job_toml);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_maps_every_flag() {
        let t = translate("-a POSIX -t 1m -b 16m -s 4 -F -C -e -w -r -D 30").unwrap();
        assert!(t.job_toml.contains("bs = 1048576"), "{}", t.job_toml);
        assert!(t.job_toml.contains("size = 67108864"), "{}", t.job_toml);
        assert!(t.job_toml.contains("end_fsync = true"));
        assert!(!t.job_toml.contains("shared_file"));
        assert!(t.job_toml.contains("rw = \"write\"") && t.job_toml.contains("rw = \"read\""));
        assert!(t.reorder_tasks);
        assert_eq!(t.stonewall, Some(Duration::from_secs(30)));
    }

    #[test]
    fn shared_segments_interleave_and_bundles_and_attached_values_parse() {
        let t = translate("-t256k -b 1m -s 8 -wrzk -i 3 -B").unwrap();
        assert!(t.job_toml.contains("shared_file = true"));
        assert!(t.job_toml.contains("stride = 1048576"));
        assert!(t.job_toml.contains("rw = \"randwrite\""));
        assert!(t.job_toml.contains("cache = \"direct\""));
        assert_eq!((t.repeat, t.keep), (Some(3), true));
    }

    #[test]
    fn flags_storlab_cannot_honour_are_refused_by_name() {
        for (args, named) in [
            ("-a MPIIO", "-a MPIIO"),
            ("-c -w", "-c"),
            ("-W", "-W"),
            ("-t 3m -b 4m", "not a multiple"),
            ("-O foo=1", "-O foo=1"),
            ("-q", "-q"),
            ("--bogus", "--bogus"),
            ("-t", "-t needs a value"),
        ] {
            let e = translate(args).unwrap_err().to_string();
            assert!(e.contains(named), "{args}: {e}");
        }
    }
}
