//! `storlab monitor`: replayed fixtures, output formats, iostat's habits
//! (positional interval and count, -z, -t, units, scrolling on a terminal),
//! the Prometheus endpoint and its counters, a live loop-device stack (root)
//! and agreement with sysstat's iostat.

use crate::util::loopdev::Stack;
use crate::util::{have, is_root, run_tool, s, skip, stderr, stdout, storlab, storlab_bin};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(name)
}
const MIB: f64 = (1u64 << 20) as f64;

/// Sum over jsonl intervals of (total w_bytes_per_s × interval) per group.
fn written_per_total(jsonl: &str) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for line in jsonl.lines() {
        let v: Value = serde_json::from_str(line).expect("each line is JSON");
        let secs = v["interval_ns"].as_f64().unwrap() / 1e9;
        for t in v["totals"].as_array().unwrap() {
            let name = t["device"].as_str().unwrap().to_string();
            let b = t["w_bytes_per_s"].as_f64().unwrap() * secs;
            match sums.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 += b,
                None => sums.push((name, b)),
            }
        }
    }
    sums
}

fn written_per_device(jsonl: &str) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for line in jsonl.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let secs = v["interval_ns"].as_f64().unwrap() / 1e9;
        for t in v["devices"].as_array().unwrap() {
            let name = t["device"].as_str().unwrap().to_string();
            let b = t["w_bytes_per_s"].as_f64().unwrap() * secs;
            match sums.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 += b,
                None => sums.push((name, b)),
            }
        }
    }
    sums
}

/// The recorded real-kernel stack: 16 MiB through three loop layers and
/// 64 MiB to a partition; every layer's total is 80 MiB.
#[test]
fn replayed_real_stack_counts_bytes_once() {
    let root = fixture("loopstack");
    let replay = root.join("replay.txt");
    for (layer, group_mib) in [
        ("top", vec![("top", 80.0)]),
        ("leaf", vec![("leaf", 80.0)]),
        (
            "all",
            vec![
                ("loop@3", 16.0),
                ("loop@2", 16.0),
                ("part", 80.0),
                ("loop@0", 80.0),
            ],
        ),
    ] {
        let o = storlab(&[
            "monitor",
            "--replay",
            &s(&replay),
            "--sys-root",
            &s(&root),
            "--layer",
            layer,
            "--output-format",
            "jsonl",
            "loop0p1",
            "loop0p2",
            "loop1",
            "loop2",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = written_per_total(&stdout(&o));
        assert_eq!(got.len(), group_mib.len(), "{layer}: {got:?}");
        for (name, want) in group_mib {
            let b = got.iter().find(|x| x.0 == name).unwrap().1;
            assert!(
                (b / MIB - want).abs() < 1e-6,
                "{layer}/{name}: {} MiB",
                b / MIB
            );
        }
        // The naive sum over every device of --layer all is far more.
        if layer == "all" {
            let naive: f64 = written_per_device(&stdout(&o)).iter().map(|x| x.1).sum();
            // loop2, loop1, loop0p1: 16 each; loop0p2: 64; loop0: 80.
            assert!((naive / MIB - 192.0).abs() < 1e-6, "naive {}", naive / MIB);
        }
    }
}

/// Whole system, recorded: loop3 is a loop over a file on vda, so its 16 MiB
/// are already in vda's counters. The top total is vda + the loop stack's
/// 80 MiB, not vda + 80 + 16.
#[test]
fn replayed_loop_over_a_file_on_vda_is_not_added_to_vda() {
    let root = fixture("loopstack");
    let replay = root.join("replay.txt");
    let text = std::fs::read_to_string(&replay).unwrap();
    // vda's written sectors, first and last snapshot, from the file itself.
    let vda: Vec<f64> = text
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("vda"))
        .map(|l| l.split_whitespace().nth(9).unwrap().parse().unwrap())
        .collect();
    let vda_written = (vda[vda.len() - 1] - vda[0]) * 512.0;
    let o = storlab(&[
        "monitor",
        "--replay",
        &s(&replay),
        "--sys-root",
        &s(&root),
        "--output-format",
        "jsonl",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let top = written_per_total(&out)[0].1;
    assert!(
        (top - vda_written - 80.0 * MIB).abs() < 1.0,
        "top {} MiB, vda {} MiB",
        top / MIB,
        vda_written / MIB
    );
    let loop3 = written_per_device(&out)
        .into_iter()
        .find(|x| x.0 == "loop3")
        .unwrap()
        .1;
    assert!((loop3 / MIB - 16.0).abs() < 1e-6);
}

#[test]
fn formats_csv_json_table_and_tree() {
    let root = fixture("md-lvm");
    let replay = s(&root.join("replay.txt"));
    let sr = s(&root);
    let o = storlab(&[
        "monitor",
        "--replay",
        &replay,
        "--sys-root",
        &sr,
        "--output-format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("time,t_s,interval_s,kind,device,r_per_s,w_per_s"));
    let ncol = lines[0].split(',').count();
    // 2 intervals × (4 top devices + 1 total)
    assert_eq!(lines.len(), 1 + 2 * 5, "{out}");
    assert!(lines.iter().all(|l| l.split(',').count() == ncol));
    let total = lines.iter().find(|l| l.contains(",total,top,")).unwrap();
    // iostat's MB/s by default: 400 × 10^6 bytes/s = 381.470 MiB/s
    assert_eq!(
        csv_col(lines[0], total, "w_mib_per_s"),
        "381.470",
        "{total}"
    );
    // --units si: 300 MB/s + 100 MB/s (sectors chosen to make it exact)
    let o = storlab(&[
        "monitor",
        "--replay",
        &replay,
        "--sys-root",
        &sr,
        "--output-format",
        "csv",
        "--units",
        "si",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let total = lines.iter().find(|l| l.contains(",total,top,")).unwrap();
    assert_eq!(csv_col(lines[0], total, "w_mb_per_s"), "400.000", "{total}");

    let o = storlab(&[
        "monitor",
        "--replay",
        &replay,
        "--sys-root",
        &sr,
        "--output-format",
        "json",
        "--layer",
        "leaf",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: storlab_like::Timeline = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(t.layer, "leaf");
    assert_eq!(
        t.devices,
        ["nvme0n1", "nvme1n1", "nvme2n1", "sda", "sdb", "sdc", "sdd"]
    );
    assert_eq!(t.samples.len(), 14);
    assert_eq!(t.totals.len(), 2);
    assert_eq!(t.cpu.len(), 2);
    assert_eq!(t.interval_ns, 1_000_000_000);
    // Leaf total: RAID-5 writes parity too, 4/3 of what the volumes wrote:
    // four members × 260416 sectors in the first second.
    let leaf = t.totals[0]["w_bytes_per_s"].as_f64().unwrap();
    assert_eq!(leaf, 4.0 * 260416.0 * 512.0);

    let o = storlab(&[
        "monitor",
        "--replay",
        &replay,
        "--sys-root",
        &sr,
        "--count",
        "1",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("Device") && out.contains("= top") && out.contains("dm-0"),
        "{out}"
    );
    assert!(
        !out.contains('\x1b'),
        "no terminal escapes when not a terminal"
    );
    assert_eq!(out.matches("storlab monitor  layer top").count(), 1);
    assert!(
        out.contains("wMiB/s") && out.contains("MiB/s = 2^20 bytes/s = iostat's MB/s"),
        "the header says which MB: {out}"
    );

    let o = storlab(&["monitor", "--tree", "--sys-root", &sr]);
    let out = stdout(&o);
    assert!(
        out.contains("dm-0 (vg0-data)") && out.contains("raid5"),
        "{out}"
    );
}

/// The value of column `name` in a CSV `row` under `header`.
fn csv_col<'a>(header: &str, row: &'a str, name: &str) -> &'a str {
    let i = header
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {header}"));
    row.split(',').nth(i).unwrap()
}

/// iostat's positional interval and count, `-z`, `-t` and absolute times,
/// on the recorded real-kernel replay (3 snapshots, 2 intervals).
#[test]
fn iostat_habits_on_a_replay() {
    let root = fixture("loopstack");
    let replay = s(&root.join("replay.txt"));
    let sr = s(&root);
    let base = ["monitor", "--replay", &replay, "--sys-root", &sr];
    let run = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        let o = storlab(&a);
        assert!(o.status.success(), "{a:?}: {}", stderr(&o));
        stdout(&o)
    };
    // `DEVICE... 1 1`: the trailing numbers are interval and count.
    let one = run(&["--output-format", "jsonl", "loop1", "loop2", "1", "1"]);
    assert_eq!(one.lines().count(), 1, "{one}");
    let v: Value = serde_json::from_str(one.lines().next().unwrap()).unwrap();
    let names: Vec<&str> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["loop1", "loop2"]);
    // Absolute times: RFC 3339 (the replay's Unix seconds), in JSONL and CSV.
    let time = v["time"].as_str().expect("time in JSONL");
    assert!(
        time.starts_with("2026-") && time.ends_with('Z') && time.contains('T'),
        "{time}"
    );
    let csv = run(&["--output-format", "csv", "1", "1"]);
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let row = lines.next().unwrap();
    assert_eq!(csv_col(header, row, "time"), time);

    // -z leaves out exactly the devices without completed I/O; totals stay.
    let all = run(&["--output-format", "jsonl"]);
    let busy = run(&["--output-format", "jsonl", "-z"]);
    let mut hidden = 0;
    for (a, b) in all.lines().zip(busy.lines()) {
        let (a, b): (Value, Value) = (
            serde_json::from_str(a).unwrap(),
            serde_json::from_str(b).unwrap(),
        );
        assert_eq!(a["totals"], b["totals"]);
        let idle = |d: &Value| {
            ["r_per_s", "w_per_s", "d_per_s", "f_per_s"]
                .iter()
                .all(|k| d[*k].as_f64() == Some(0.0))
        };
        let want: Vec<&Value> = a["devices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| !idle(d))
            .collect();
        let got: Vec<&Value> = b["devices"].as_array().unwrap().iter().collect();
        assert_eq!(got, want);
        hidden += a["devices"].as_array().unwrap().len() - got.len();
    }
    assert!(hidden > 0, "the fixture has idle devices to hide:\n{all}");
    let table = run(&["-z", "-t", "1", "1"]);
    let first = table.lines().next().unwrap();
    assert_eq!(first, time, "-t prints the time first:\n{table}");

    // Scrolling into a pipe: each interval's table below the last.
    let two = run(&["loop1", "1", "2"]);
    assert_eq!(
        two.matches("storlab monitor  layer top").count(),
        2,
        "{two}"
    );
    assert!(!two.contains('\x1b'));
}

/// On a terminal the table is redrawn in place; `--no-clear` scrolls there
/// too. `script` gives the monitor a pseudo-terminal.
#[test]
fn no_clear_scrolls_on_a_terminal() {
    const NAME: &str = "monitor::no_clear_scrolls_on_a_terminal";
    if !have("script") {
        return skip(
            NAME,
            "util-linux's script (a pseudo-terminal) is not installed",
        );
    }
    let root = fixture("loopstack");
    let cmd = |extra: &str| {
        format!(
            "{} monitor --replay {} --sys-root {} loop1 1 2{extra}",
            s(&storlab_bin()),
            s(&root.join("replay.txt")),
            s(&root)
        )
    };
    let on_tty = |extra: &str| {
        let o = Command::new("script")
            .args(["-q", "-e", "-c", &cmd(extra), "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let redrawn = on_tty("");
    assert_eq!(redrawn.matches("\x1b[H\x1b[2J").count(), 2, "{redrawn:?}");
    let scrolled = on_tty(" --no-clear");
    assert!(!scrolled.contains("\x1b[2J"), "{scrolled:?}");
    assert_eq!(scrolled.matches("storlab monitor  layer top").count(), 2);
}

/// The timeline JSON, read back with plain serde (the lead's store reads it
/// as storlab_types::MonitorTimeline).
mod storlab_like {
    #[derive(serde::Deserialize)]
    pub struct Timeline {
        pub layer: String,
        pub interval_ns: u64,
        pub devices: Vec<String>,
        pub samples: Vec<serde_json::Value>,
        pub totals: Vec<serde_json::Value>,
        pub cpu: Vec<serde_json::Value>,
    }
}

#[test]
fn bad_input_exits_2_with_a_fix() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["monitor", "no-such-disk", "--count", "1"],
            "monitor --tree",
        ),
        (&["monitor", "--interval", "1ms"], "10ms or more"),
        (&["monitor", "--interval", "soon"], "invalid duration"),
        (&["monitor", "--count", "0"], "give 1 or more"),
        (
            &["monitor", "1", "no-such-disk"],
            "storlab monitor no-such-disk 1",
        ),
        (&["monitor", "1", "2", "3"], "third number"),
        (&["monitor", "1", "0"], "give 1 or more"),
        (&["monitor", "0"], "zero"),
        (&["monitor", "0.001"], "10ms or more"),
        (&["monitor", "1", "2.5"], "whole number"),
        (
            &["monitor", "--interval", "2s", "1"],
            "interval is given twice",
        ),
        (
            &["monitor", "--count", "2", "1", "3"],
            "count is given twice",
        ),
        (&["monitor", "--units", "kib"], "--units"),
        (
            &["monitor", "--replay", "/no/such/file"],
            "reading the replay file",
        ),
        (&["monitor", "--sys-root", "/tmp", "--tree"], "no sys/block"),
    ];
    for (args, want) in cases {
        let o = storlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    let md = fixture("md-lvm").join("replay.txt");
    let o = storlab(&["monitor", "--replay", &s(&md), "sdz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no samples of sdz") && stderr(&o).contains("nvme0n1"),
        "{}",
        stderr(&o)
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.txt");
    std::fs::write(&f, "@ 1\n 8 0 sda 1 2 3\n").unwrap();
    let o = storlab(&["monitor", "--replay", &s(&f)]);
    assert_eq!(o.status.code(), Some(2));
    // FILE:LINE: what is wrong.
    assert!(
        stderr(&o).contains(&format!("{}:2:", f.display())),
        "{}",
        stderr(&o)
    );
}

/// One sample line: name, labels, value.
type Series = (String, Vec<(String, String)>, f64);

/// Parse the Prometheus text format: `name{labels} value` lines.
fn parse_prometheus(text: &str) -> Vec<Series> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let kind = rest.split_whitespace().nth(1).unwrap();
                assert!(["gauge", "counter"].contains(&kind), "{line}");
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => {
                let l = l.strip_suffix('}').expect("closing brace");
                let labels = l
                    .split("\",")
                    .map(|kv| {
                        let (k, v) = kv.split_once("=\"").expect("k=\"v\"");
                        (k.to_string(), v.trim_end_matches('"').to_string())
                    })
                    .collect();
                (n.to_string(), labels)
            }
            None => (series.to_string(), Vec::new()),
        };
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "metric name {name}"
        );
        out.push((name, labels, value));
    }
    out
}

#[test]
fn prometheus_endpoint_scraped_over_loopback() {
    let root = fixture("md-lvm");
    let mut child = Command::new(storlab_bin())
        .args([
            "monitor",
            "--replay",
            &s(&root.join("replay.txt")),
            "--sys-root",
            &s(&root),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(rest) = line.split("http://").nth(1) {
            addr = Some(rest.trim().trim_end_matches("/metrics").to_string());
        }
        if line.contains("replay finished") {
            break;
        }
    }
    let addr = addr.expect("the server says where it listens");
    let mut c = std::net::TcpStream::connect(&addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    c.read_to_string(&mut resp).unwrap();
    // SAFETY: kill() on the pid of our own child; SIGTERM stops it cleanly.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(status.success(), "stopped cleanly by SIGTERM: {status:?}");

    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    let m = parse_prometheus(body);
    let get = |name: &str, key: &str, val: &str| {
        m.iter()
            .find(|(n, l, _)| n == name && l.iter().any(|(k, v)| k == key && v == val))
            .map(|x| x.2)
    };
    // Counters, as node_exporter's: dm-0's own, the kernel's since boot
    // (sectors written, field 10 of its last diskstats line).
    let text = std::fs::read_to_string(root.join("replay.txt")).unwrap();
    let last_dm0: f64 = text
        .lines()
        .rev()
        .find(|l| l.split_whitespace().nth(2) == Some("dm-0"))
        .and_then(|l| l.split_whitespace().nth(9))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        get("storlab_device_written_bytes_total", "device", "dm-0"),
        Some(last_dm0 * 512.0)
    );
    // The top total since the monitor started: what the two intervals'
    // rates add up to (300 MB/s + 100 MB/s in the last one).
    let o = storlab(&[
        "monitor",
        "--replay",
        &s(&root.join("replay.txt")),
        "--sys-root",
        &s(&root),
        "--output-format",
        "jsonl",
    ]);
    let top = written_per_total(&stdout(&o));
    let top = top.iter().find(|x| x.0 == "top").unwrap().1;
    let counted = get("storlab_total_written_bytes_total", "group", "top").unwrap();
    assert!((counted - top).abs() < 1.0, "{counted} vs {top}");
    // Busy time: dm-0's io_ticks (field 13, ms) in seconds.
    let ticks: f64 = text
        .lines()
        .rev()
        .find(|l| l.split_whitespace().nth(2) == Some("dm-0"))
        .and_then(|l| l.split_whitespace().nth(12))
        .unwrap()
        .parse()
        .unwrap();
    let busy = get("storlab_device_io_time_seconds_total", "device", "dm-0").unwrap();
    assert!((busy - ticks / 1000.0).abs() < 1e-9, "{busy} vs {ticks} ms");
    assert!(get("storlab_cpu_seconds_total", "mode", "iowait").unwrap() > 0.0);
    assert!(
        get("storlab_device_io_now", "device", "dm-0").is_some(),
        "in-flight gauge"
    );
    // Every _total is declared a counter, everything else a gauge.
    for line in body.lines().filter(|l| l.starts_with("# TYPE ")) {
        let mut f = line.split_whitespace().skip(2);
        let (name, kind) = (f.next().unwrap(), f.next().unwrap());
        let want = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        assert_eq!(kind, want, "{line}");
    }
    assert!(!body.contains("per_second"), "no per-interval gauges");
    assert_eq!(
        m.iter()
            .find(|x| x.0 == "storlab_interval_seconds")
            .map(|x| x.2),
        Some(1.0)
    );
}

// ---------------------------------------------------------------- live, root

/// A direct-I/O loop device over a new file of `size` bytes in the temp
/// directory (`storlab-TAG-PID.img`), both undone when `st` drops.
fn direct_loop(st: &mut Stack, tag: &str, size: u64) -> Result<String, String> {
    let img = std::env::temp_dir().join(format!("storlab-{tag}-{}.img", std::process::id()));
    // A scratch file that cannot be made is a failure, never a skip.
    st.file(&img, size)
        .expect("scratch file for the loop device");
    st.attach(&img, &["--direct-io=on"])
}

fn write_direct(dev: &str, bs: usize, count: usize) -> Result<(), String> {
    run_tool(
        "dd",
        &[
            "if=/dev/zero",
            &format!("of={dev}"),
            &format!("bs={bs}"),
            &format!("count={count}"),
            "oflag=direct",
            "status=none",
        ],
    )
    .map(|_| ())
}

/// Real loop stack: loopA over tmpfs, (partition p1,) ext4, a direct-I/O
/// loopB over a file in it. 32 MiB written to loopB must show as 32 MiB in
/// the top, leaf and per-level totals, not 64 or 96.
#[test]
fn live_loop_stack_totals_count_bytes_once() {
    const NAME: &str = "monitor::live_loop_stack_totals_count_bytes_once";
    if !is_root() {
        return skip(NAME, "needs root (loop devices, mount)");
    }
    let _serial = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for t in ["losetup", "mkfs.ext4", "mount", "dd"] {
        if !have(t) {
            return skip(NAME, &format!("{t} is not installed"));
        }
    }
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return skip(NAME, "no /dev/shm (tmpfs) for the backing file");
    }
    // The stack owns the directory it mounts in: undone first, then removed.
    let mut st = Stack::in_tempdir().unwrap();
    let a_img = shm.join(format!("storlab-monitor-test-{}.img", std::process::id()));
    st.file(&a_img, 256 << 20).unwrap();
    let la = match st.attach(&a_img, &["-P"]) {
        Ok(d) => d,
        Err(e) => return skip(NAME, &format!("cannot attach a loop device: {e}")),
    };
    // A partition through BLKPG when the kernel allows it.
    let fsdev = have("addpart")
        .then(|| st.add_partition(&la, "1", "2048", "450560").ok())
        .flatten()
        .unwrap_or_else(|| la.clone());
    let mnt = st.dir().join("mnt");
    // No lazy inode-table init: it would write in the background while we measure.
    st.ext4_mounted(&fsdev, &mnt).unwrap();
    let b_img = mnt.join("b.img");
    run_tool(
        "dd",
        &[
            "if=/dev/zero",
            &format!("of={}", s(&b_img)),
            "bs=1M",
            "count=48",
            "conv=fsync",
            "status=none",
        ],
    )
    .unwrap();
    let lb = st.attach(&b_img, &["--direct-io=on"]).unwrap();
    // Settle the journal before measuring.
    run_tool("sync", &[]).unwrap();
    std::thread::sleep(Duration::from_millis(300));

    // Monitors run until SIGINT; the I/O starts once each has measured one
    // interval (so its first reading is before the I/O, however loaded the
    // machine), and they are stopped two intervals after it ends.
    let spawn = |layer: &str| {
        Command::new(storlab_bin())
            .args([
                "monitor",
                &s(&mnt),
                &lb,
                "--layer",
                layer,
                "--interval",
                "250ms",
                "--output-format",
                "jsonl",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut kids: Vec<_> = ["top", "leaf", "all"]
        .iter()
        .map(|l| {
            let mut child = spawn(l);
            let mut out = BufReader::new(child.stdout.take().unwrap());
            let mut first = String::new();
            out.read_line(&mut first).unwrap();
            (l.to_string(), child, out, first)
        })
        .collect();
    write_direct(&lb, 1 << 20, 32).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    for (_, child, _, _) in &kids {
        // SAFETY: kill() on the pid of our own child; SIGINT stops it cleanly.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    for (layer, child, reader, first) in kids.iter_mut() {
        let mut out = std::mem::take(first);
        reader.read_to_string(&mut out).unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "{layer}: {err}");
        let layer = layer.clone();
        let totals = written_per_total(&out);
        eprintln!(
            "{layer}: {:?}",
            totals.iter().map(|(n, b)| (n, b / MIB)).collect::<Vec<_>>()
        );
        let lo = 32.0;
        let hi = 32.0 * 1.05; // file system metadata may add a little
        for (name, b) in &totals {
            let mib = b / MIB;
            assert!(
                (lo - 0.01..hi).contains(&mib),
                "{layer}/{name}: {mib:.2} MiB\n{out}"
            );
        }
        let want = match layer.as_str() {
            "all" => {
                if fsdev.ends_with("p1") {
                    3
                } else {
                    2
                }
            }
            _ => 1,
        };
        assert_eq!(totals.len(), want, "{layer}: {totals:?}");
        if layer == "all" {
            // Each device saw the 32 MiB: a naive sum would double or triple it.
            let naive: f64 = written_per_device(&out).iter().map(|x| x.1).sum();
            assert!(naive / MIB > 2.0 * lo - 0.1, "naive {}", naive / MIB);
        }
    }
}

/// The live tests load the machine; run them one at a time so one's load
/// does not disturb the other's pacing.
static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Measured {
    iostat: Value,
    storlab: Value,
}

/// A paced load of 64 KiB direct writes to `dev` at `rate` per second, for
/// at most `secs` seconds or until the flag is set.
fn paced_writer(
    dev: &str,
    rate: u32,
    secs: u64,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let dev = dev.to_string();
        let stop = stop.clone();
        std::thread::spawn(move || {
            use std::os::unix::fs::{FileExt, OpenOptionsExt};
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(&dev)
                .unwrap();
            let layout = std::alloc::Layout::from_size_align(65536, 4096).unwrap();
            // SAFETY: layout has a non-zero size; the buffer is freed below.
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            // SAFETY: p points to 65536 zeroed bytes owned by this thread.
            let buf = unsafe { std::slice::from_raw_parts(p, 65536) };
            let start = Instant::now();
            let period = Duration::from_secs(1) / rate;
            let mut i: u32 = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && start.elapsed() < Duration::from_secs(secs)
            {
                let due = start + period * i;
                if let Some(w) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(w);
                }
                f.write_at(buf, u64::from(i % 1000) * 65536).unwrap();
                i += 1;
            }
            // SAFETY: allocated above with the same layout.
            unsafe { std::alloc::dealloc(p, layout) };
        })
    };
    (stop, writer)
}

/// One 1-second window measured by both tools at once under a paced load of
/// 64 KiB direct writes at `rate` per second.
fn measure_both(dev: &str, rate: u32) -> Measured {
    let name = dev.trim_start_matches("/dev/").to_string();
    let (stop, writer) = paced_writer(dev, rate, 8);
    std::thread::sleep(Duration::from_millis(500));
    let io = Command::new("iostat")
        .args(["-d", "-x", "-y", "-o", "JSON", "1", "1", &name])
        .env("LC_ALL", "C")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let me = Command::new(storlab_bin())
        .args([
            "monitor",
            &name,
            "--interval",
            "1s",
            "--count",
            "1",
            "--output-format",
            "jsonl",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let io = io.wait_with_output().unwrap();
    let me = me.wait_with_output().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(me.status.success(), "{}", stderr(&me));
    let iv: Value = serde_json::from_slice(&io.stdout).expect("iostat JSON");
    let d = iv["sysstat"]["hosts"][0]["statistics"][0]["disk"][0].clone();
    assert_eq!(d["disk_device"].as_str(), Some(name.as_str()), "{iv}");
    let mv: Value = serde_json::from_str(stdout(&me).lines().next().unwrap()).unwrap();
    Measured {
        iostat: d,
        storlab: mv["devices"][0].clone(),
    }
}

/// Same interval, steady paced load: storlab and `iostat -d -x -y 1 1`
/// agree within a few percent. The two tools cannot sample at exactly the
/// same instants, so a window disturbed by other load on the machine is
/// measured again (up to 3 times); a wrong definition fails every attempt.
#[test]
fn agrees_with_iostat_under_load() {
    const NAME: &str = "monitor::agrees_with_iostat_under_load";
    if !have("iostat") {
        return skip(NAME, "sysstat's iostat is not installed (Debian: sysstat)");
    }
    if !is_root() || !have("losetup") {
        return skip(
            NAME,
            "needs root and losetup for a private loop device to load",
        );
    }
    let _serial = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut st = Stack::new();
    let dev = match direct_loop(&mut st, "iostat", 64 << 20) {
        Ok(d) => d,
        Err(e) => return skip(NAME, &format!("cannot attach a loop device: {e}")),
    };
    let mut failures = Vec::new();
    for attempt in 1..=3 {
        let m = measure_both(&dev, 400);
        let (d, me) = (&m.iostat, &m.storlab);
        let pairs = [
            (
                "w/s",
                d["w/s"].as_f64().unwrap(),
                me["w_per_s"].as_f64().unwrap(),
            ),
            (
                "wkB/s",
                d["wkB/s"].as_f64().unwrap(),
                me["w_bytes_per_s"].as_f64().unwrap() / 1024.0,
            ),
            (
                "wareq-sz",
                d["wareq-sz"].as_f64().unwrap(),
                me["w_areq_sz_bytes"].as_f64().unwrap() / 1024.0,
            ),
            (
                "w_await",
                d["w_await"].as_f64().unwrap(),
                me["w_await_ms"].as_f64().unwrap(),
            ),
        ];
        eprintln!("attempt {attempt}: (figure, iostat, storlab) {pairs:?}");
        let mut bad = Vec::new();
        for (what, a, b) in &pairs[..3] {
            assert!(*a > 0.0, "iostat saw no {what}: {d}");
            let rel = (a - b).abs() / a;
            if rel >= 0.05 {
                bad.push(format!(
                    "{what}: iostat {a} vs storlab {b} ({:.1}% apart)",
                    rel * 100.0
                ));
            }
        }
        // Awaits are small and jittery: within 0.1 ms or 25 %.
        let (a, b) = (pairs[3].1, pairs[3].2);
        if (a - b).abs() > 0.1_f64.max(0.25 * a) {
            bad.push(format!("w_await: iostat {a} vs storlab {b}"));
        }
        let (ua, ub) = (
            d["util"].as_f64().unwrap(),
            me["util_pct"].as_f64().unwrap(),
        );
        if (ua - ub).abs() >= 5.0 {
            bad.push(format!("%util: iostat {ua} vs storlab {ub}"));
        }
        if bad.is_empty() {
            return;
        }
        failures.push(bad.join("; "));
    }
    panic!("storlab and iostat disagree in every attempt: {failures:#?}");
}

/// What an iostat user types and reads: `iostat -d -x -y -m 1 3 DEV` and
/// `storlab monitor DEV 1 3` side by side on a loaded loop device. The
/// MB/s columns agree as printed (both 2^20 bytes by default), interval by
/// interval, as do w/s; a window disturbed by other load on the machine is
/// measured again (up to 3 times).
#[test]
fn iostat_positional_form_and_units_match_iostat() {
    const NAME: &str = "monitor::iostat_positional_form_and_units_match_iostat";
    if !have("iostat") {
        return skip(NAME, "sysstat's iostat is not installed (Debian: sysstat)");
    }
    if !is_root() || !have("losetup") {
        return skip(
            NAME,
            "needs root and losetup for a private loop device to load",
        );
    }
    let _serial = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut st = Stack::new();
    let dev = match direct_loop(&mut st, "iostat-m", 64 << 20) {
        Ok(d) => d,
        Err(e) => return skip(NAME, &format!("cannot attach a loop device: {e}")),
    };
    let name = dev.trim_start_matches("/dev/").to_string();
    let mut failures = Vec::new();
    for attempt in 1..=3 {
        let (stop, writer) = paced_writer(&dev, 400, 10);
        std::thread::sleep(Duration::from_millis(500));
        let io = Command::new("iostat")
            .args(["-d", "-x", "-y", "-m", "-o", "JSON", "1", "3", &name])
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let me = Command::new(storlab_bin())
            .args(["monitor", &name, "1", "3", "--output-format", "csv"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let io = io.wait_with_output().unwrap();
        let me = me.wait_with_output().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        assert!(me.status.success(), "{}", stderr(&me));
        let iv: Value = serde_json::from_slice(&io.stdout).expect("iostat JSON");
        let stats = iv["sysstat"]["hosts"][0]["statistics"].as_array().unwrap();
        assert_eq!(stats.len(), 3, "iostat's three reports: {iv}");
        let out = stdout(&me);
        let mut lines = out.lines();
        let header = lines.next().unwrap();
        let rows: Vec<&str> = lines.filter(|l| l.contains(",device,")).collect();
        assert_eq!(rows.len(), 3, "three intervals, one device:\n{out}");
        let mut bad = Vec::new();
        let mut seen = Vec::new();
        for (k, (st, row)) in stats.iter().zip(&rows).enumerate() {
            let d = &st["disk"][0];
            assert_eq!(d["disk_device"].as_str(), Some(name.as_str()), "{iv}");
            let col = |c: &str| csv_col(header, row, c).parse::<f64>().unwrap();
            for (what, a, b) in [
                ("wMB/s", d["wMB/s"].as_f64().unwrap(), col("w_mib_per_s")),
                ("w/s", d["w/s"].as_f64().unwrap(), col("w_per_s")),
            ] {
                seen.push(format!("{k}: {what} iostat {a} storlab {b}"));
                // A writer the loaded machine stalled for a whole second is
                // measured again, not compared.
                if a <= 0.0 || (a - b).abs() / a >= 0.05 {
                    bad.push(format!("interval {k}: {what} iostat {a} vs storlab {b}"));
                }
            }
        }
        eprintln!("attempt {attempt}: {seen:?}");
        if bad.is_empty() {
            return;
        }
        failures.push(bad.join("; "));
    }
    panic!("storlab and iostat disagree in every attempt: {failures:#?}");
}

/// GET /metrics from `addr`; the body.
fn scrape(addr: &str) -> String {
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    c.read_to_string(&mut resp).unwrap();
    resp.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The counters move by exactly what was written between two scrapes,
/// however far apart they are: 16 MiB written to a private loop device
/// between two scrapes show as 16 MiB in the device's and the total's
/// `written_bytes_total`.
#[test]
fn prometheus_counters_move_by_what_was_written() {
    const NAME: &str = "monitor::prometheus_counters_move_by_what_was_written";
    if !is_root() || !have("losetup") || !have("dd") {
        return skip(
            NAME,
            "needs root, losetup and dd for a private loop device to write to",
        );
    }
    let _serial = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut st = Stack::new();
    let dev = match direct_loop(&mut st, "prom", 32 << 20) {
        Ok(d) => d,
        Err(e) => return skip(NAME, &format!("cannot attach a loop device: {e}")),
    };
    let name = dev.trim_start_matches("/dev/").to_string();
    let mut child = Command::new(storlab_bin())
        .args([
            "monitor",
            &name,
            "--interval",
            "100ms",
            "--listen",
            "127.0.0.1:0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .expect("the server says where it listens")
        .trim()
        .trim_end_matches("/metrics")
        .to_string();
    let written = |body: &str, name_: &str, key: &str, val: &str| {
        parse_prometheus(body)
            .into_iter()
            .find(|(n, l, _)| n == name_ && l.iter().any(|(k, v)| k == key && v == val))
            .map(|x| x.2)
    };
    // Wait for the first interval, then let the udev probe of the new
    // device settle.
    let t0 = Instant::now();
    while written(
        &scrape(&addr),
        "storlab_device_written_bytes_total",
        "device",
        &name,
    )
    .is_none()
    {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no interval measured"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let a = scrape(&addr);
    write_direct(&dev, 1 << 20, 16).unwrap();
    // Two intervals after the writes finished, the counters have them.
    std::thread::sleep(Duration::from_millis(400));
    let b = scrape(&addr);
    // SAFETY: kill() on the pid of our own child; SIGTERM stops it cleanly.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
    for (series, key, val) in [
        (
            "storlab_device_written_bytes_total",
            "device",
            name.as_str(),
        ),
        ("storlab_total_written_bytes_total", "group", "top"),
    ] {
        let (x, y) = (
            written(&a, series, key, val).unwrap(),
            written(&b, series, key, val).unwrap(),
        );
        assert_eq!(y - x, 16.0 * MIB, "{series}: {x} -> {y}");
    }
    let busy =
        |t: &str| written(t, "storlab_device_io_time_seconds_total", "device", &name).unwrap();
    assert!(busy(&b) > busy(&a), "the device was busy writing");
}

/// `--record` keeps the replayed samples as a run in the results database.
#[test]
fn record_saves_the_timeline_as_a_run() {
    let root = fixture("loopstack");
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("m.db");
    let o = storlab(&[
        "monitor",
        "--replay",
        &s(&root.join("replay.txt")),
        "--sys-root",
        &s(&root),
        "--output-format",
        "none",
        "--record",
        "--db",
        &s(&db),
        "--tag",
        "site=lab",
        "loop1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("saved as run 1"), "{}", stderr(&o));
    let o = storlab(&["show", "tag:site=lab", "--json", "--db", &s(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["kind"], "monitor");
    let m = &v[0]["report"]["monitor"];
    assert!(
        m["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "loop1"),
        "{m}"
    );
    let written: f64 = m["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["device"] == "loop1")
        .map(|x| x["w_bytes_per_s"].as_f64().unwrap())
        .sum();
    assert!(written > 0.0, "the replay writes through loop1");
}
