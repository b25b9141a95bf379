//! Replay files: recorded `/proc/diskstats` snapshots, for tests and for
//! analysing samples taken on another machine.
//!
//! Format (`docs/monitor.md`): plain text, one snapshot after another. A
//! snapshot starts with a line `@ SECONDS [WALL-CLOCK]`, where SECONDS is a
//! decimal time in seconds on any clock that does not jump (e.g. the first
//! field of `/proc/uptime`, or `date +%s.%N`) and the optional WALL-CLOCK is
//! RFC 3339. The lines after it are `/proc/diskstats` verbatim, and optionally
//! `/proc/stat` (its `cpu ` line is used, other lines are ignored). Lines
//! starting with `#` are comments. Record one on any Linux machine with:
//!
//! ```sh
//! while :; do echo "@ $(date +%s.%N)"; cat /proc/diskstats; head -1 /proc/stat; sleep 1; done > samples.txt
//! ```

use crate::Error;
use crate::cpu;
use crate::diskstats::{self, DiskStat};
use crate::sampler::{Snapshot, rfc3339};

fn bad(line: usize, reason: impl Into<String>) -> Error {
    Error::Parse {
        what: "replay file",
        line,
        reason: reason.into(),
    }
}

/// Parse `SECONDS` (`123.456789`) into nanoseconds, exactly.
fn parse_seconds(s: &str, line: usize) -> Result<u64, Error> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad(
            line,
            format!("time '{s}' is not a decimal number of seconds (e.g. '@ 12345.678')"),
        ));
    }
    let secs: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad(line, "time is too large"))?
    };
    let mut ns: u64 = 0;
    for (i, b) in frac.bytes().take(9).enumerate() {
        ns += u64::from(b - b'0') * 10u64.pow(8 - i as u32);
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|x| x.checked_add(ns))
        .ok_or_else(|| bad(line, "time is too large"))
}

/// The largest replay file read (a day of 1 s samples of 1,000 devices is
/// about 1 GiB).
pub const MAX_REPLAY_BYTES: u64 = 4 << 30;

/// Read a replay file, bounded: only a regular file (or a pipe) is read,
/// never more than [`MAX_REPLAY_BYTES`], and it must be text that starts
/// like a replay file. `/dev/zero` or a binary file is refused at once.
pub fn read_file(path: &std::path::Path) -> Result<String, Error> {
    read_bounded(path, MAX_REPLAY_BYTES)
}

fn read_bounded(path: &std::path::Path, max: u64) -> Result<String, Error> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let io = |err| Error::Io {
        path: path.to_path_buf(),
        err,
    };
    let md = std::fs::metadata(path).map_err(io)?;
    if !md.is_file() && !md.file_type().is_fifo() {
        return Err(Error::Data(format!(
            "{} is not a replay file (not a regular file); give a file recorded as storlab monitor --help shows (--replay)",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(Error::Data(format!(
            "{} is larger than {} GiB, the most a replay file may be; split it",
            path.display(),
            max >> 30
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::Data(format!(
            "{} is not a replay file (not text); give a file recorded as storlab monitor --help shows (--replay)",
            path.display()
        ))
    })
}

/// Parse a whole replay file.
pub fn parse(text: &str) -> Result<Vec<Snapshot>, Error> {
    let mut out: Vec<Snapshot> = Vec::new();
    let mut cur: Option<Snapshot> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix('@') {
            let mut it = rest.split_ascii_whitespace();
            let secs = it
                .next()
                .ok_or_else(|| bad(n, "'@' must be followed by the time in seconds"))?;
            let t_ns = parse_seconds(secs, n)?;
            let wall = it.next().map(str::to_string).or_else(|| {
                // Unix time (after 2001): the wall clock is known.
                (t_ns >= 1_000_000_000 * 1_000_000_000).then(|| {
                    rfc3339(
                        (t_ns / 1_000_000_000) as i64,
                        ((t_ns % 1_000_000_000) / 1_000_000) as u32,
                    )
                })
            });
            if let Some(s) = cur.take() {
                out.push(s);
            }
            cur = Some(Snapshot {
                t_ns,
                wall,
                disks: Vec::new(),
                cpu: None,
            });
            continue;
        }
        let snap = cur.as_mut().ok_or_else(|| {
            bad(
                n,
                "data before the first '@ SECONDS' line (is this a replay file? see --replay in storlab monitor --help)",
            )
        })?;
        let first = t.split_ascii_whitespace().next().unwrap_or("");
        if first == "cpu" {
            snap.cpu = Some(cpu::parse_cpu_line(t).map_err(|e| bad(n, e.to_string()))?);
        } else if first.bytes().all(|b| b.is_ascii_digit()) {
            let d: DiskStat = diskstats::parse_line(t, n)?;
            snap.disks.push(d);
        }
        // Other /proc/stat lines (cpu0, intr, ctxt, ...) are ignored.
    }
    if let Some(s) = cur.take() {
        out.push(s);
    }
    Ok(out)
}

/// Format a snapshot in the replay format (the inverse of [`parse`]).
pub fn format(s: &Snapshot) -> String {
    let mut out = format!("@ {}.{:09}", s.t_ns / 1_000_000_000, s.t_ns % 1_000_000_000);
    if let Some(w) = &s.wall {
        out.push(' ');
        out.push_str(w);
    }
    out.push('\n');
    for d in &s.disks {
        out.push_str(&diskstats::format_line(d));
        out.push('\n');
    }
    if let Some(c) = &s.cpu {
        out.push_str(&format!(
            "cpu  {} {} {} {} {} {} {} {} {} {}\n",
            c.user,
            c.nice,
            c.system,
            c.idle,
            c.iowait,
            c.irq,
            c.softirq,
            c.steal,
            c.guest,
            c.guest_nice
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_snapshots() {
        let text = "# two snapshots\n@ 100.5\n 254 0 vda 1 0 8 1 0 0 0 0 0 1 1\ncpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 1 1 1\nintr 5 6\n\
                    @ 101.75 2026-01-01T00:00:01Z\n 254 0 vda 3 0 24 2 0 0 0 0 0 2 2\n";
        let v = parse(text).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].t_ns, 100_500_000_000);
        assert_eq!(v[1].t_ns, 101_750_000_000);
        assert_eq!(v[0].cpu.unwrap().steal, 8);
        assert_eq!(v[1].wall.as_deref(), Some("2026-01-01T00:00:01Z"));
        assert_eq!(v[1].disks[0].counters.rd_ios, 3);
        let again = parse(&v.iter().map(format).collect::<String>()).unwrap();
        assert_eq!(again, v);
    }

    #[test]
    fn epoch_times_give_wall_clock() {
        let v = parse("@ 1700000000.25\n").unwrap();
        assert_eq!(v[0].wall.as_deref(), Some("2023-11-14T22:13:20.250Z"));
    }

    #[test]
    fn errors_say_where() {
        let e = parse("8 0 sda 1 2 3 4\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("'@ SECONDS'"), "{e}");
        let e = parse("@ abc\n").unwrap_err().to_string();
        assert!(e.contains("not a decimal"), "{e}");
        let e = parse("@ 1\n8 0 sda 1 2\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn reading_is_bounded_and_refuses_devices() {
        let t = std::time::Instant::now();
        let e = read_file(std::path::Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a replay file"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        let d = tempfile::tempdir().unwrap();
        let big = d.path().join("big.txt");
        std::fs::write(&big, vec![b'#'; 4096]).unwrap();
        let e = read_bounded(&big, 1024).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        let bin = d.path().join("bin");
        std::fs::write(&bin, [0xffu8, 0xfe, 0, 1]).unwrap();
        let e = read_file(&bin).unwrap_err().to_string();
        assert!(e.contains("not text"), "{e}");
        let ok = d.path().join("ok.txt");
        std::fs::write(&ok, "@ 1\n").unwrap();
        assert_eq!(read_file(&ok).unwrap(), "@ 1\n");
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let _ = parse(&s);
        }
        #[test]
        fn seconds_exact(secs in 0u64..4_000_000_000, ns in 0u64..1_000_000_000) {
            prop_assert_eq!(parse_seconds(&format!("{secs}.{ns:09}"), 1).unwrap(), secs * 1_000_000_000 + ns);
        }
    }
}
