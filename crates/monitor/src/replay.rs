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
use crate::rates;
use crate::sampler::{Snapshot, rfc3339};
use storlab_types::SampleFlag;

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

/// `/proc/stat` lines other than `cpu` that a replay file may carry (they
/// are ignored, so `cat /proc/stat` whole is fine).
fn is_other_stat_line(first: &str) -> bool {
    first
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        || matches!(
            first,
            "intr" | "ctxt" | "btime" | "processes" | "procs_running" | "procs_blocked" | "softirq"
        )
}

/// A snapshot being read, with where each part of it came from.
struct Pending {
    snap: Snapshot,
    /// Line of its `@`.
    at: usize,
    /// Line of each entry of `snap.disks`.
    lines: Vec<usize>,
    cpu_line: Option<usize>,
}

/// The `@ SECONDS [WALL-CLOCK]` line `t` (line `n`), strictly: nothing
/// after the wall clock, and the wall clock RFC 3339 in UTC.
fn parse_at(rest: &str, n: usize) -> Result<Pending, Error> {
    let mut it = rest.split_ascii_whitespace();
    let secs = it
        .next()
        .ok_or_else(|| bad(n, "'@' must be followed by the time in seconds"))?;
    let t_ns = parse_seconds(secs, n)?;
    let wall = match it.next() {
        Some(w) => {
            if humantime::parse_rfc3339(w).is_err() {
                return Err(bad(
                    n,
                    format!(
                        "'{w}' after the time is not an RFC 3339 wall-clock time in UTC \
                         (e.g. 2026-01-01T00:00:01.250Z); the line is '@ SECONDS [WALL-CLOCK]'"
                    ),
                ));
            }
            Some(w.to_string())
        }
        // Unix time (after 2001): the wall clock is known.
        None => (t_ns >= 1_000_000_000 * 1_000_000_000).then(|| {
            rfc3339(
                (t_ns / 1_000_000_000) as i64,
                ((t_ns % 1_000_000_000) / 1_000_000) as u32,
            )
        }),
    };
    if let Some(extra) = it.next() {
        return Err(bad(
            n,
            format!(
                "unexpected '{extra}' after the wall-clock time; the line is '@ SECONDS [WALL-CLOCK]'"
            ),
        ));
    }
    Ok(Pending {
        snap: Snapshot {
            t_ns,
            wall,
            disks: Vec::new(),
            cpu: None,
        },
        at: n,
        lines: Vec::new(),
        cpu_line: None,
    })
}

/// One data line `t` (line `n`) of the snapshot being read.
fn parse_data_line(p: &mut Pending, t: &str, n: usize) -> Result<(), Error> {
    let first = t.split_ascii_whitespace().next().unwrap_or("");
    if first == "cpu" {
        if let Some(before) = p.cpu_line {
            return Err(bad(
                n,
                format!(
                    "a second 'cpu' line in the snapshot of line {} (the first is on line {before})",
                    p.at
                ),
            ));
        }
        let values = t.split_ascii_whitespace().count() - 1;
        if values > 10 {
            return Err(bad(
                n,
                format!("the cpu line has {values} values; /proc/stat's has at most 10"),
            ));
        }
        p.snap.cpu = Some(cpu::parse_cpu_line(t).map_err(|e| match e {
            Error::Parse { reason, .. } => bad(n, reason),
            e => bad(n, e.to_string()),
        })?);
        p.cpu_line = Some(n);
    } else if first.bytes().all(|b| b.is_ascii_digit()) {
        let fields = t.split_ascii_whitespace().count();
        if fields > 20 {
            return Err(bad(
                n,
                format!(
                    "{fields} fields; a /proc/diskstats line has 7, 14, 18 or 20 (major minor name counters...)"
                ),
            ));
        }
        let d: DiskStat = diskstats::parse_line(t, n).map_err(|e| match e {
            Error::Parse { reason, .. } => bad(n, reason),
            e => e,
        })?;
        if let Some(i) = p.snap.disks.iter().position(|x| x.name == d.name) {
            return Err(bad(
                n,
                format!(
                    "device {} appears twice in the snapshot of line {} (lines {} and {n}); a snapshot has one line per device",
                    d.name, p.at, p.lines[i]
                ),
            ));
        }
        p.snap.disks.push(d);
        p.lines.push(n);
    } else if !is_other_stat_line(first) {
        return Err(bad(
            n,
            format!(
                "'{first}' starts neither a /proc/diskstats line (major minor name counters...) nor a /proc/stat line"
            ),
        ));
    }
    Ok(())
}

/// Check a finished snapshot against the one before: its time is later,
/// and no device's counters moved more than a device physically can
/// ([`rates::check`]). A counter that went backwards (a wrap or a
/// re-created device) is accepted here: the monitor shows that interval as
/// `reset`.
fn check_against(before: &Pending, p: &Pending) -> Result<(), Error> {
    if p.snap.t_ns <= before.snap.t_ns {
        return Err(bad(
            p.at,
            format!(
                "the time is not later than that of the snapshot on line {}; times must increase",
                before.at
            ),
        ));
    }
    let interval_ns = p.snap.t_ns - before.snap.t_ns;
    for (d, line) in p.snap.disks.iter().zip(&p.lines) {
        let Some(old) = before.snap.disks.iter().find(|x| x.name == d.name) else {
            continue;
        };
        if let Some((SampleFlag::Impossible, why)) =
            rates::check(&old.counters, &d.counters, interval_ns)
        {
            return Err(bad(
                *line,
                format!(
                    "{}: {why} (since the snapshot on line {}); the file is damaged or was edited",
                    d.name, before.at
                ),
            ));
        }
    }
    Ok(())
}

/// Parse a whole replay file, strictly: every line is a snapshot's `@`
/// line, a `/proc/diskstats` line, a `/proc/stat` line, a comment or blank;
/// a device appears once per snapshot; times increase; counters move no
/// more than a device can ([`rates::check`]). Errors carry the line.
pub fn parse(text: &str) -> Result<Vec<Snapshot>, Error> {
    let mut out: Vec<Snapshot> = Vec::new();
    let mut before: Option<Pending> = None;
    let mut cur: Option<Pending> = None;
    let mut finish = |p: Pending, before: &mut Option<Pending>| -> Result<(), Error> {
        if let Some(b) = before.as_ref() {
            check_against(b, &p)?;
        }
        out.push(p.snap.clone());
        *before = Some(p);
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix('@') {
            let next = parse_at(rest, n)?;
            if let Some(p) = cur.replace(next) {
                finish(p, &mut before)?;
            }
            continue;
        }
        let p = cur.as_mut().ok_or_else(|| {
            bad(
                n,
                "data before the first '@ SECONDS' line (is this a replay file? see --replay in storlab monitor --help)",
            )
        })?;
        parse_data_line(p, t, n)?;
    }
    if let Some(p) = cur.take() {
        finish(p, &mut before)?;
    }
    Ok(out)
}

/// A recording cut off while a snapshot was being written (SIGKILL or a
/// power loss in the middle of `--record FILE`'s write) ends without a
/// newline. Returns the text without that unfinished last snapshot, and the
/// line of the `@` it started on; a text that ends with a newline (or is
/// empty) is returned whole.
pub fn complete_part(text: &str) -> (&str, Option<usize>) {
    if text.is_empty() || text.ends_with('\n') {
        return (text, None);
    }
    // The start of the last `@` line (at the start of the text or after a
    // newline, maybe indented).
    let mut start = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('@') {
            start = Some(pos);
        }
        pos += line.len();
    }
    match start {
        Some(at) => (&text[..at], Some(text[..at].matches('\n').count() + 1)),
        None => (text, None),
    }
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

/// Read and check a replay file: its snapshots, strictly parsed (a damaged
/// line is refused as `FILE:LINE: what is wrong`), with at least one
/// interval and some sample of the devices asked for (`selection`).
/// `cut_at` hears of a last snapshot left out because the recording was
/// cut off while writing it (the line it starts on), before parsing.
pub fn load(
    file: &std::path::Path,
    selection: Option<&crate::Selection>,
    cut_at: &mut dyn FnMut(usize),
) -> Result<Vec<Snapshot>, Error> {
    use crate::ReplayError as R;
    let fail = |what| Error::Replay {
        file: file.to_path_buf(),
        what,
    };
    let text = read_file(file).map_err(|e| fail(R::Read(Box::new(e))))?;
    // A recording cut off while writing a snapshot keeps what came before.
    let (text, cut) = complete_part(&text);
    if let Some(line) = cut {
        cut_at(line);
    }
    let snaps = parse(text).map_err(|e| match e {
        Error::Parse { line, reason, .. } => fail(R::Line { line, reason }),
        e => fail(R::Data(Box::new(e))),
    })?;
    if let Some(sel) = selection {
        let missing: Vec<String> = (sel.devices.iter())
            .filter(|d| !snaps.iter().any(|s| s.disks.iter().any(|x| &x.name == *d)))
            .cloned()
            .collect();
        if !missing.is_empty() && missing.len() == sel.devices.len() {
            let mut have: Vec<String> = (snaps.first())
                .map(|s| s.disks.iter().map(|d| d.name.clone()).collect())
                .unwrap_or_default();
            have.truncate(20);
            return Err(fail(R::NoDevices { missing, have }));
        }
    }
    if snaps.len() < 2 {
        return Err(fail(R::Short(snaps.len())));
    }
    Ok(snaps)
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

    /// A recording cut in the middle of a snapshot loses that snapshot,
    /// not the file; one cut after a snapshot is whole.
    #[test]
    fn a_recording_cut_mid_snapshot_keeps_the_snapshots_before() {
        let cut = format!("{GOOD}@ 102\n 8 0 sda 1500 30 1600");
        let (whole, dropped) = complete_part(&cut);
        assert_eq!(whole, GOOD);
        assert_eq!(dropped, Some(5));
        assert_eq!(parse(whole).unwrap().len(), 2);
        // Cut inside the `@` line itself.
        let cut = format!("{GOOD}@ 10");
        let (whole, dropped) = complete_part(&cut);
        assert_eq!((whole, dropped), (GOOD, Some(5)));
        assert_eq!(complete_part(GOOD), (GOOD, None));
        assert_eq!(complete_part(""), ("", None));
        // No `@` at all: left to parse to refuse.
        assert_eq!(complete_part("8 0 sda 1"), ("8 0 sda 1", None));
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

    fn refusal(text: &str) -> (usize, String) {
        match parse(text) {
            Err(Error::Parse { line, reason, .. }) => (line, reason),
            other => panic!("not refused with a line: {other:?}\n{text}"),
        }
    }

    const GOOD: &str = "@ 100\n 8 0 sda 1000 10 80000 500 2000 100 160000 4000 0 1000 4500\n\
                        @ 101\n 8 0 sda 1400 30 160000 1300 2600 160 208000 5800 3 2500 9100\n";

    /// The inputs the fuzzer found accepted silently: each is refused with
    /// its line and what is wrong.
    #[test]
    fn damaged_files_are_refused_with_the_line() {
        assert_eq!(parse(GOOD).unwrap().len(), 2);
        // Extra fields on a diskstats line.
        let (l, why) = refusal(&GOOD.replace("5800 3 2500 9100", "5800 3 2500 9100 1 2 3 4 5 6 7"));
        assert_eq!(l, 4, "{why}");
        assert!(why.contains("21 fields"), "{why}");
        // ... and on a cpu line.
        let (l, why) = refusal(&format!("{GOOD}cpu  1 2 3 4 5 6 7 8 9 10 11\n"));
        assert_eq!(l, 5, "{why}");
        assert!(why.contains("11 values"), "{why}");
        // Garbage after `@ SECONDS`.
        let (l, why) = refusal(&GOOD.replace("@ 101", "@ 101 garbage"));
        assert_eq!(l, 3, "{why}");
        assert!(
            why.contains("'garbage'") && why.contains("RFC 3339"),
            "{why}"
        );
        let (l, why) = refusal(&GOOD.replace("@ 101", "@ 101 2026-01-01T00:00:01Z junk"));
        assert_eq!(l, 3, "{why}");
        assert!(why.contains("'junk'"), "{why}");
        // A counter jumping to 2^32-1 (4.29e9 rrqm/s before).
        let (l, why) = refusal(&GOOD.replace("1400 30 ", "1400 4294967295 "));
        assert_eq!(l, 4, "{why}");
        assert!(
            why.contains("sda") && why.contains("rd_merges") && why.contains("2^32-1"),
            "{why}"
        );
        // A jump beyond 100 GB/s.
        let (l, why) = refusal(&GOOD.replace("1400 30 160000", "1400 30 987654321000"));
        assert_eq!(l, 4, "{why}");
        assert!(why.contains("GB/s"), "{why}");
        // A device twice in one snapshot (8.3e9 r/s before).
        let dup = format!("{GOOD} 8 0 sda 9000000000 0 0 0 0 0 0 0 0 0 0\n");
        let (l, why) = refusal(&dup);
        assert_eq!(l, 5, "{why}");
        assert!(
            why.contains("twice") && why.contains("lines 4 and 5"),
            "{why}"
        );
        // A line that is neither diskstats nor /proc/stat.
        let (l, why) = refusal(&GOOD.replace("@ 101\n", "@ 101\nhello world\n"));
        assert_eq!(l, 4, "{why}");
        assert!(why.contains("'hello'"), "{why}");
        // Time not increasing.
        let (l, why) = refusal(&GOOD.replace("@ 101", "@ 100"));
        assert_eq!(l, 3, "{why}");
        assert!(why.contains("line 1"), "{why}");
        // A second cpu line in one snapshot.
        let (l, _) = refusal(&format!("{GOOD}cpu 1 2 3 4\ncpu 1 2 3 4\n"));
        assert_eq!(l, 6);
        // /proc/stat whole is still fine, and a counter going backwards is
        // accepted (a wrap or re-created device: the monitor flags it).
        let ok = format!(
            "{GOOD}cpu0 1 2 3 4\nintr 1 2\nctxt 5\nbtime 1\nprocesses 3\nprocs_running 1\nprocs_blocked 0\nsoftirq 1 2\n@ 102\n 8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n"
        );
        assert_eq!(parse(&ok).unwrap().len(), 3);
    }

    /// A valid file with `k` snapshots of two devices whose counters grow
    /// by `steps` (small, plausible changes) each second.
    fn valid_file(steps: &[(u64, u64)]) -> String {
        let mut c = [[0u64; 17]; 2];
        let mut out = String::new();
        for (k, (a, b)) in steps.iter().enumerate() {
            out.push_str(&format!("@ {}.5\n", 1000 + k));
            for (d, step) in [*a, *b].iter().enumerate() {
                for (i, v) in c[d].iter_mut().enumerate() {
                    if i != 8 {
                        *v += step * (i as u64 + 1);
                    }
                }
                let vals: Vec<String> = c[d].iter().map(u64::to_string).collect();
                out.push_str(&format!(
                    "8 {} sd{} {}\n",
                    d * 16,
                    ["a", "b"][d],
                    vals.join(" ")
                ));
            }
            out.push_str("cpu  1 2 3 4 5 6 7 8 9 10\n");
        }
        out
    }

    /// What a mutation of one character of a line may do to that line.
    fn mutate(line: &str, pos: usize, how: u8, ch: char) -> String {
        // One line stays one line.
        let ch = if matches!(ch, '\n' | '\r') { '#' } else { ch };
        let mut chars: Vec<char> = line.chars().collect();
        let p = if chars.is_empty() {
            0
        } else {
            pos % chars.len()
        };
        match how % 4 {
            0 if !chars.is_empty() => {
                chars[p] = ch;
            }
            1 => chars.insert(p.min(chars.len()), ch),
            2 if !chars.is_empty() => {
                chars.remove(p);
            }
            _ => chars.extend(format!(" {}", ch as u32).chars()),
        }
        chars.into_iter().collect()
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let _ = parse(&s);
        }
        /// Any one line of a valid file, mutated: the file is parsed
        /// exactly (the mutated line means what it says) or refused with
        /// that line's number; never a panic, never a rate beyond the
        /// physical bound.
        #[test]
        fn mutated_lines_parse_exactly_or_are_refused_with_their_line(
            steps in proptest::collection::vec((0u64..2000, 0u64..2000), 2..5),
            which in 0usize..100,
            pos in 0usize..200,
            how in 0u8..4,
            ch in proptest::char::any(),
            big in proptest::sample::select(vec![u64::from(u32::MAX), u64::MAX, 4_000_000_000_000, 7]),
        ) {
            let text = valid_file(&steps);
            let lines: Vec<&str> = text.lines().collect();
            let k = which % lines.len();
            let bad_line = if how == 3 && which % 2 == 0 {
                // Replace one number with a large or sentinel value.
                let mut w: Vec<String> = lines[k].split(' ').map(str::to_string).collect();
                let j = 3 + pos % w.len().saturating_sub(3).max(1);
                if j < w.len() { w[j] = big.to_string(); }
                w.join(" ")
            } else {
                mutate(lines[k], pos, how, ch)
            };
            let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            mutated[k] = bad_line.clone();
            let mutated = mutated.join("\n") + "\n";
            match parse(&mutated) {
                Ok(snaps) => {
                    // Parsed exactly: formatting and re-parsing gives the
                    // same snapshots, and the mutated line is in them as
                    // written (a diskstats line parses to the same device).
                    let again = parse(&snaps.iter().map(format).collect::<String>()).unwrap();
                    prop_assert_eq!(&again, &snaps);
                    let t = bad_line.trim();
                    if t.split_ascii_whitespace().next().is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())) {
                        let d = diskstats::parse_line(t, 1).unwrap();
                        prop_assert!(snaps.iter().any(|s| s.disks.contains(&d)), "{} not in the result", t);
                    }
                    // Never a rate above the bound.
                    let mut m = crate::Monitor::new(None);
                    for s in snaps {
                        if let Some(i) = m.push(s).unwrap() {
                            for d in &i.devices {
                                let bytes = d.r_bytes_per_s + d.w_bytes_per_s + d.d_bytes_per_s;
                                prop_assert!(bytes <= rates::MAX_BYTES_PER_S * (1.0 + 1e-9), "{:?}", d);
                                let ios = d.r_per_s + d.w_per_s + d.d_per_s + d.f_per_s;
                                prop_assert!(ios <= rates::MAX_IOS_PER_S * (1.0 + 1e-9), "{:?}", d);
                                prop_assert!(d.rrqm_per_s + d.wrqm_per_s + d.drqm_per_s <= rates::MAX_IOS_PER_S * (1.0 + 1e-9), "{:?}", d);
                            }
                        }
                    }
                }
                Err(Error::Parse { line, .. }) => {
                    // Refused at the mutated line; or at the next line
                    // (sda renamed sdb: the second sdb is the duplicate);
                    // or a snapshot later (4 lines each: `@`, sda, sdb,
                    // cpu), where a time made later shows.
                    prop_assert!([k + 1, k + 2, k + 5].contains(&line),
                        "refused at line {} for a mutation of line {}: {:?}", line, k + 1, bad_line);
                }
                Err(e) => prop_assert!(false, "refused without a line: {}", e),
            }
        }
        #[test]
        fn seconds_exact(secs in 0u64..4_000_000_000, ns in 0u64..1_000_000_000) {
            prop_assert_eq!(parse_seconds(&format!("{secs}.{ns:09}"), 1).unwrap(), secs * 1_000_000_000 + ns);
        }
    }
}
