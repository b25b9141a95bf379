//! The monitor's figures in the Prometheus text exposition format (0.0.4),
//! and a tiny HTTP server for `GET /metrics` (std::net, one request per
//! connection). Each connection is served on its own thread with a short
//! total deadline, so a slow client never blocks the others; an address
//! given as a bare port binds loopback only, and a non-loopback address
//! comes with a warning that the metrics are unauthenticated.
//!
//! Figures are **counters** (`_total`), as node_exporter's diskstats are, so
//! `rate()` gives MB/s, IOPS, await and %util over any scrape interval:
//! `storlab_device_*_total{device="vda",layer="top"}` are the kernel's own
//! counters (since boot); `storlab_total_*_total{group="top"}` count each
//! request once across the stack, summed since the monitor started;
//! `storlab_cpu_seconds_total{mode="iowait"}`. Base units (bytes, seconds).
//! Only `storlab_device_io_now` (I/Os in flight) and
//! `storlab_interval_seconds` are gauges. `docs/monitor.md` lists the PromQL
//! that gives each iostat column.

use crate::Error;
use crate::diskstats::Counters;
use crate::rates::SECTOR;
use crate::sampler::Interval;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Get = fn(&Counters) -> f64;

const MS: f64 = 1e-3;

/// (name suffix, what it counts, how rate() reads it, value): the
/// node_exporter diskstats names, in base units.
const COUNTERS: &[(&str, &str, &str, Get)] = &[
    (
        "reads_completed_total",
        "Reads completed",
        "rate: iostat r/s",
        |c| c.rd_ios as f64,
    ),
    (
        "reads_merged_total",
        "Reads merged",
        "rate: iostat rrqm/s",
        |c| c.rd_merges as f64,
    ),
    (
        "read_bytes_total",
        "Bytes read",
        "rate: iostat rMB/s",
        |c| c.rd_sectors as f64 * SECTOR,
    ),
    (
        "read_time_seconds_total",
        "Seconds spent by all reads",
        "rate over the reads' rate: iostat r_await",
        |c| c.rd_ticks as f64 * MS,
    ),
    (
        "writes_completed_total",
        "Writes completed",
        "rate: iostat w/s",
        |c| c.wr_ios as f64,
    ),
    (
        "writes_merged_total",
        "Writes merged",
        "rate: iostat wrqm/s",
        |c| c.wr_merges as f64,
    ),
    (
        "written_bytes_total",
        "Bytes written",
        "rate: iostat wMB/s",
        |c| c.wr_sectors as f64 * SECTOR,
    ),
    (
        "write_time_seconds_total",
        "Seconds spent by all writes",
        "rate over the writes' rate: iostat w_await",
        |c| c.wr_ticks as f64 * MS,
    ),
    (
        "io_time_seconds_total",
        "Seconds with at least one I/O in flight",
        "rate: iostat %util / 100",
        |c| c.io_ticks as f64 * MS,
    ),
    (
        "io_time_weighted_seconds_total",
        "Seconds weighted by the I/Os in flight",
        "rate: iostat aqu-sz",
        |c| c.time_in_queue as f64 * MS,
    ),
    (
        "discards_completed_total",
        "Discards completed",
        "rate: iostat d/s",
        |c| c.dc_ios as f64,
    ),
    (
        "discards_merged_total",
        "Discards merged",
        "rate: iostat drqm/s",
        |c| c.dc_merges as f64,
    ),
    (
        "discarded_bytes_total",
        "Bytes discarded",
        "rate: iostat dMB/s",
        |c| c.dc_sectors as f64 * SECTOR,
    ),
    (
        "discard_time_seconds_total",
        "Seconds spent by all discards",
        "rate over the discards' rate: iostat d_await",
        |c| c.dc_ticks as f64 * MS,
    ),
    (
        "flush_requests_total",
        "Flush requests completed",
        "rate: iostat f/s",
        |c| c.fl_ios as f64,
    ),
    (
        "flush_requests_time_seconds_total",
        "Seconds spent by all flushes",
        "rate over the flushes' rate: iostat f_await",
        |c| c.fl_ticks as f64 * MS,
    ),
];

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn push_num(out: &mut String, v: f64) {
    if v.is_finite() {
        let _ = write!(out, "{v}");
    } else {
        out.push_str("NaN");
    }
}

/// Render the counters at the end of one interval. `layer` labels the
/// device figures.
pub fn render(i: &Interval, layer: &str) -> String {
    let mut out = String::with_capacity(512 + (i.devices.len() + i.totals.len()) * 1300);
    out.push_str("# HELP storlab_interval_seconds Time between the monitor's samples\n");
    out.push_str("# TYPE storlab_interval_seconds gauge\nstorlab_interval_seconds ");
    push_num(&mut out, i.interval_ns as f64 / 1e9);
    out.push('\n');
    // Label sets are escaped once, not once per figure.
    let layer = escape(layer);
    let dev_labels: Vec<String> = i
        .devices
        .iter()
        .map(|s| format!("{{device=\"{}\",layer=\"{layer}\"}} ", escape(&s.device)))
        .collect();
    let total_labels: Vec<String> = i
        .totals
        .iter()
        .map(|s| format!("{{group=\"{}\"}} ", escape(&s.device)))
        .collect();
    for (suffix, help, rate, get) in COUNTERS {
        for (kind, counters, labels, extra) in [
            (
                "device",
                &i.device_counters,
                &dev_labels,
                ", the kernel's count since boot",
            ),
            (
                "total",
                &i.total_counters,
                &total_labels,
                ", counting each request once, since the monitor started",
            ),
        ] {
            if counters.is_empty() {
                continue;
            }
            let _ = writeln!(out, "# HELP storlab_{kind}_{suffix} {help}{extra} ({rate})");
            let _ = writeln!(out, "# TYPE storlab_{kind}_{suffix} counter");
            for (c, l) in counters.iter().zip(labels) {
                out.push_str("storlab_");
                out.push_str(kind);
                out.push('_');
                out.push_str(suffix);
                out.push_str(l);
                push_num(&mut out, get(c));
                out.push('\n');
            }
        }
    }
    if !i.device_counters.is_empty() {
        out.push_str("# HELP storlab_device_io_now I/Os in flight when sampled\n");
        out.push_str("# TYPE storlab_device_io_now gauge\n");
        for (c, l) in i.device_counters.iter().zip(&dev_labels) {
            out.push_str("storlab_device_io_now");
            out.push_str(l);
            push_num(&mut out, c.in_flight as f64);
            out.push('\n');
        }
    }
    if let Some(c) = &i.cpu_times {
        let _ = writeln!(
            out,
            "# HELP storlab_cpu_seconds_total CPU time of all CPUs since boot (rate: iostat's avg-cpu share x CPUs)"
        );
        let _ = writeln!(out, "# TYPE storlab_cpu_seconds_total counter");
        let hz = storlab_host::os::clock_ticks() as f64;
        // iostat's user and nice leave out guest time (counted in both).
        for (mode, v) in [
            ("user", c.user.saturating_sub(c.guest)),
            ("nice", c.nice.saturating_sub(c.guest_nice)),
            ("system", c.system + c.irq + c.softirq),
            ("iowait", c.iowait),
            ("steal", c.steal),
            ("idle", c.idle),
            ("guest", c.guest + c.guest_nice),
        ] {
            let _ = write!(out, "storlab_cpu_seconds_total{{mode=\"{mode}\"}} ");
            push_num(&mut out, v as f64 / hz);
            out.push('\n');
        }
    }
    out
}

/// Serves the latest rendered text on `GET /metrics` until dropped.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    body: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Most connections served at once; further ones are closed at once.
const MAX_CONNECTIONS: usize = 32;
/// A connection's whole life (reading the request, writing the answer).
const CONNECTION_DEADLINE: Duration = Duration::from_secs(2);

/// The address to bind for `--listen`: a bare port (`9464` or `:9464`)
/// means loopback (`127.0.0.1:9464`); anything else is taken as given.
pub fn listen_address(addr: &str) -> String {
    let port = addr.strip_prefix(':').unwrap_or(addr);
    if port.parse::<u16>().is_ok() {
        format!("127.0.0.1:{port}")
    } else {
        addr.to_string()
    }
}

impl MetricsServer {
    /// Bind `addr` (`127.0.0.1:9464`; a bare port binds loopback; port 0
    /// picks a free one) and serve.
    pub fn start(addr: &str) -> Result<MetricsServer, Error> {
        let addr = listen_address(addr);
        let addr = addr.as_str();
        let listener = TcpListener::bind(addr).map_err(|e| Error::Listen {
            addr: addr.to_string(),
            err: e,
        })?;
        let local = listener.local_addr().map_err(|e| Error::Listen {
            addr: addr.to_string(),
            err: e,
        })?;
        listener.set_nonblocking(true).map_err(|e| Error::Listen {
            addr: addr.to_string(),
            err: e,
        })?;
        let body = Arc::new(Mutex::new(String::from("# no interval measured yet\n")));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (body.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("storlab-metrics".into())
            .spawn(move || accept_loop(&listener, &b, &s))
            .map_err(|e| Error::Listen {
                addr: addr.to_string(),
                err: e,
            })?;
        Ok(MetricsServer {
            addr: local,
            body,
            stop,
            thread: Some(thread),
        })
    }

    /// A warning to print when the endpoint is reachable from other hosts.
    pub fn exposure_warning(&self) -> Option<String> {
        (!self.addr.ip().is_loopback()).then(|| {
            format!(
                "the metrics on {} are unauthenticated and reachable from other hosts; \
                 listen on 127.0.0.1 unless that is what you want",
                self.addr
            )
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replace what `/metrics` returns.
    pub fn update(&self, text: String) {
        if let Ok(mut b) = self.body.lock() {
            *b = text;
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accept connections until `stop`; each is served on its own thread.
fn accept_loop(listener: &TcpListener, body: &Arc<Mutex<String>>, stop: &AtomicBool) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((conn, _)) => {
                if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                    drop(conn); // too many at once: close, the client retries
                    continue;
                }
                active.fetch_add(1, Ordering::SeqCst);
                let (b, a) = (Arc::clone(body), Arc::clone(&active));
                let spawned = std::thread::Builder::new()
                    .name("storlab-metrics-conn".into())
                    .spawn(move || {
                        let _ = serve(conn, &b);
                        a.fetch_sub(1, Ordering::SeqCst);
                    });
                if spawned.is_err() {
                    // The connection was moved into the closure and dropped.
                    active.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Time left before `deadline`, or a timeout error.
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "connection deadline passed",
        ))
    } else {
        Ok(d)
    }
}

fn serve(mut conn: TcpStream, body: &Mutex<String>) -> std::io::Result<()> {
    let deadline = Instant::now() + CONNECTION_DEADLINE;
    conn.set_nonblocking(false)?;
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        // The deadline covers the whole request, not each read: a client
        // sending a byte at a time cannot hold the connection open.
        conn.set_read_timeout(Some(left(deadline)?))?;
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let mut parts = line.split_ascii_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, ctype, text) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            body.lock().map(|b| b.clone()).unwrap_or_default(),
        ),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "storlab monitor: metrics are on /metrics\n".to_string(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain",
            "not found; try /metrics\n".into(),
        ),
        _ => ("405 Method Not Allowed", "text/plain", "only GET\n".into()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    conn.set_write_timeout(Some(left(deadline)?))?;
    conn.write_all(head.as_bytes())?;
    if method != "HEAD" {
        conn.write_all(text.as_bytes())?;
    }
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuTimes;
    use crate::diskstats;
    use crate::sampler::{Monitor, Snapshot};
    use crate::tree::{Layer, Selection, Term, TotalGroup};

    fn value(text: &str, series: &str) -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"));
        line.rsplit_once(' ').unwrap().1.parse().unwrap()
    }

    fn snap(t_s: u64, lines: &str, cpu_user: u64) -> Snapshot {
        Snapshot {
            t_ns: t_s * 1_000_000_000,
            wall: None,
            disks: diskstats::parse(lines).unwrap(),
            cpu: Some(CpuTimes {
                user: cpu_user,
                idle: 1000,
                ..CpuTimes::default()
            }),
        }
    }

    /// Counters over any window give the interval figures by rate(): the
    /// difference of two scrapes over the time between them.
    #[test]
    fn counters_rate_to_the_interval_figures() {
        // loop0's file is on vda: the top total takes vda minus loop0.
        let sel = Selection {
            layer: Layer::Top,
            devices: vec!["vd\"a".into(), "loop0".into()],
            totals: vec![TotalGroup {
                name: "top".into(),
                terms: vec![
                    Term {
                        device: "vd\"a".into(),
                        minus: vec!["loop0".into()],
                        ..Default::default()
                    },
                    Term {
                        device: "loop0".into(),
                        minus: vec![],
                        ..Default::default()
                    },
                ],
            }],
        };
        let mut m = Monitor::new(Some(sel));
        let lines = |vda: [u64; 11], lo: [u64; 11]| {
            let f = |v: [u64; 11]| v.map(|x| x.to_string()).join(" ");
            format!("254 0 vd\"a {}\n7 0 loop0 {}", f(vda), f(lo))
        };
        m.push(snap(
            0,
            &lines(
                [100, 0, 800, 50, 10, 0, 80, 5, 0, 1000, 2000],
                [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
            0,
        ))
        .unwrap();
        let a = m
            .push(snap(
                1,
                &lines(
                    [100, 0, 800, 50, 30, 2, 2080, 45, 1, 1500, 2400],
                    [0, 0, 0, 0, 10, 0, 1000, 20, 0, 900, 20],
                ),
                50,
            ))
            .unwrap()
            .unwrap();
        let b = m
            .push(snap(
                3,
                &lines(
                    [140, 0, 1120, 90, 50, 2, 4080, 85, 2, 2500, 2600],
                    [0, 0, 0, 0, 30, 0, 3000, 60, 0, 2700, 80],
                ),
                150,
            ))
            .unwrap()
            .unwrap();
        let (ta, tb) = (render(&a, "top"), render(&b, "top"));
        let dev = "{device=\"vd\\\"a\",layer=\"top\"}";
        // The kernel's counters as they are.
        assert_eq!(
            value(&ta, &format!("storlab_device_reads_completed_total{dev}")),
            100.0
        );
        assert_eq!(
            value(&tb, &format!("storlab_device_written_bytes_total{dev}")),
            4080.0 * 512.0
        );
        assert_eq!(value(&tb, &format!("storlab_device_io_now{dev}")), 2.0);
        assert!(ta.contains("# TYPE storlab_device_written_bytes_total counter\n"));
        assert!(ta.contains("# TYPE storlab_device_io_now gauge\n"));
        assert!(!ta.contains("per_second"));
        // rate() over the second interval (2 s) = that interval's figures.
        let rate = |series: &str| (value(&tb, series) - value(&ta, series)) / 2.0;
        let close =
            |x: f64, y: f64| assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{x} vs {y}");
        let d = &b.devices[0];
        close(
            rate(&format!("storlab_device_reads_completed_total{dev}")),
            d.r_per_s,
        );
        close(
            rate(&format!("storlab_device_read_bytes_total{dev}")),
            d.r_bytes_per_s,
        );
        close(
            rate(&format!("storlab_device_written_bytes_total{dev}")),
            d.w_bytes_per_s,
        );
        close(
            rate(&format!("storlab_device_io_time_seconds_total{dev}")),
            d.util_pct / 100.0,
        );
        close(
            rate(&format!(
                "storlab_device_io_time_weighted_seconds_total{dev}"
            )),
            d.aqu_sz,
        );
        close(
            rate(&format!("storlab_device_read_time_seconds_total{dev}"))
                / rate(&format!("storlab_device_reads_completed_total{dev}")),
            d.r_await_ms / 1e3,
        );
        // The total counts loop0's writes once, over both intervals.
        let t = &b.totals[0];
        let g = "{group=\"top\"}";
        close(
            rate(&format!("storlab_total_written_bytes_total{g}")),
            t.w_bytes_per_s,
        );
        close(
            rate(&format!("storlab_total_writes_completed_total{g}")),
            t.w_per_s,
        );
        close(
            rate(&format!("storlab_total_io_time_seconds_total{g}")),
            t.util_pct / 100.0,
        );
        // Since the monitor started: vda wrote 4000 sectors, 2000 of them loop0's.
        assert_eq!(
            value(&tb, &format!("storlab_total_written_bytes_total{g}")),
            4000.0 * 512.0
        );
        // CPU seconds: user ticks / USER_HZ.
        close(
            value(&tb, "storlab_cpu_seconds_total{mode=\"user\"}"),
            150.0 / storlab_host::os::clock_ticks() as f64,
        );
        assert!(tb.contains("storlab_interval_seconds 2\n"));
    }

    #[test]
    fn serves_over_http() {
        let text = "storlab_interval_seconds 1\n".to_string();
        let server = MetricsServer::start("127.0.0.1:0").unwrap();
        server.update(text.clone());
        let mut c = TcpStream::connect(server.local_addr()).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut resp = String::new();
        c.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
        assert!(resp.ends_with(&text));
        let mut c = TcpStream::connect(server.local_addr()).unwrap();
        c.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
        let mut resp = String::new();
        c.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 404"), "{resp}");
    }
}

#[cfg(test)]
mod safety_tests {
    use super::*;

    fn get(addr: SocketAddr) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut resp = String::new();
        c.read_to_string(&mut resp).unwrap();
        resp
    }

    #[test]
    fn a_slow_client_does_not_block_others_and_is_cut_off() {
        let server = MetricsServer::start("127.0.0.1:0").unwrap();
        server.update("storlab_x 1\n".into());
        let addr = server.local_addr();
        // One byte every 1.5 s, forever (issue 9, item 13).
        let slow = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            let t = Instant::now();
            for b in b"GET /metrics HTTP/1.1\r\n" {
                if c.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1500));
                if t.elapsed() > Duration::from_secs(8) {
                    break;
                }
            }
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..3 {
            let t = Instant::now();
            let resp = get(addr);
            assert!(resp.contains("storlab_x 1"), "{resp}");
            assert!(
                t.elapsed() < Duration::from_millis(1000),
                "a fast client waited {:?} behind a slow one",
                t.elapsed()
            );
        }
        // The server closes the slow connection at its deadline, so the
        // slow writer sees an error well before its 8 s.
        let took = slow.join().unwrap();
        assert!(
            took < Duration::from_secs(7),
            "slow client kept for {took:?}"
        );
    }

    #[test]
    fn a_bare_port_binds_loopback_and_other_addresses_warn() {
        assert_eq!(listen_address("9464"), "127.0.0.1:9464");
        assert_eq!(listen_address(":9464"), "127.0.0.1:9464");
        assert_eq!(listen_address("0.0.0.0:9464"), "0.0.0.0:9464");
        let s = MetricsServer::start(":0").unwrap();
        assert!(s.local_addr().ip().is_loopback());
        assert!(s.exposure_warning().is_none());
        let s = MetricsServer::start("0.0.0.0:0").unwrap();
        let w = s.exposure_warning().unwrap();
        assert!(w.contains("unauthenticated"), "{w}");
    }
}
