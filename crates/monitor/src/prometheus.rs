//! The latest interval in the Prometheus text exposition format (0.0.4), and
//! a tiny HTTP server for `GET /metrics` (std::net, one request per
//! connection). Each connection is served on its own thread with a short
//! total deadline, so a slow client never blocks the others; an address
//! given as a bare port binds loopback only, and a non-loopback address
//! comes with a warning that the metrics are unauthenticated.
//!
//! Every figure is a gauge over the last interval, in base units (seconds,
//! bytes, ratios 0–1): `storlab_device_*{device="vda"}`,
//! `storlab_total_*{group="top"}` (totals that count each request once) and
//! `storlab_cpu_ratio{mode="iowait"}`.

use crate::Error;
use crate::sampler::Interval;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storlab_types::DeviceSample;

type Get = fn(&DeviceSample) -> f64;

/// (name suffix, help, value)
const FIGURES: &[(&str, &str, Get)] = &[
    (
        "reads_per_second",
        "Reads completed per second (iostat r/s)",
        |s| s.r_per_s,
    ),
    (
        "writes_per_second",
        "Writes completed per second (iostat w/s)",
        |s| s.w_per_s,
    ),
    ("read_bytes_per_second", "Bytes read per second", |s| {
        s.r_bytes_per_s
    }),
    ("write_bytes_per_second", "Bytes written per second", |s| {
        s.w_bytes_per_s
    }),
    (
        "read_merges_per_second",
        "Reads merged per second (iostat rrqm/s)",
        |s| s.rrqm_per_s,
    ),
    (
        "write_merges_per_second",
        "Writes merged per second (iostat wrqm/s)",
        |s| s.wrqm_per_s,
    ),
    (
        "read_await_seconds",
        "Mean time of a read, queue plus service (iostat r_await)",
        |s| s.r_await_ms / 1e3,
    ),
    (
        "write_await_seconds",
        "Mean time of a write, queue plus service (iostat w_await)",
        |s| s.w_await_ms / 1e3,
    ),
    (
        "request_size_bytes",
        "Mean request size (iostat areq-sz)",
        |s| s.areq_sz_bytes,
    ),
    (
        "queue_size",
        "Mean number of requests in flight (iostat aqu-sz)",
        |s| s.aqu_sz,
    ),
    (
        "utilization_ratio",
        "Fraction of the interval with a request in flight (iostat %util / 100)",
        |s| s.util_pct / 100.0,
    ),
    (
        "discards_per_second",
        "Discards completed per second (iostat d/s)",
        |s| s.d_per_s,
    ),
    (
        "discard_bytes_per_second",
        "Bytes discarded per second",
        |s| s.d_bytes_per_s,
    ),
    (
        "discard_await_seconds",
        "Mean time of a discard (iostat d_await)",
        |s| s.d_await_ms / 1e3,
    ),
    (
        "flushes_per_second",
        "Flush requests completed per second (iostat f/s)",
        |s| s.f_per_s,
    ),
    (
        "flush_await_seconds",
        "Mean time of a flush (iostat f_await)",
        |s| s.f_await_ms / 1e3,
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

/// Render one interval. `layer` labels the device figures.
pub fn render(i: &Interval, layer: &str) -> String {
    let mut out = String::with_capacity(512 + (i.devices.len() + i.totals.len()) * 1300);
    out.push_str("# HELP storlab_interval_seconds Length of the interval the figures cover\n");
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
    for (suffix, help, get) in FIGURES {
        for (kind, samples, labels, extra) in [
            ("device", &i.devices, &dev_labels, ""),
            (
                "total",
                &i.totals,
                &total_labels,
                ", total counting each request once",
            ),
        ] {
            if samples.is_empty() {
                continue;
            }
            let _ = writeln!(out, "# HELP storlab_{kind}_{suffix} {help}{extra}");
            let _ = writeln!(out, "# TYPE storlab_{kind}_{suffix} gauge");
            for (s, l) in samples.iter().zip(labels) {
                out.push_str("storlab_");
                out.push_str(kind);
                out.push('_');
                out.push_str(suffix);
                out.push_str(l);
                push_num(&mut out, get(s));
                out.push('\n');
            }
        }
    }
    if let Some(c) = &i.cpu {
        let _ = writeln!(
            out,
            "# HELP storlab_cpu_ratio Share of CPU time over the interval, all CPUs (as iostat's avg-cpu)"
        );
        let _ = writeln!(out, "# TYPE storlab_cpu_ratio gauge");
        for (mode, v) in [
            ("user", c.user_pct),
            ("nice", c.nice_pct),
            ("system", c.system_pct),
            ("iowait", c.iowait_pct),
            ("steal", c.steal_pct),
            ("idle", c.idle_pct),
        ] {
            let _ = write!(out, "storlab_cpu_ratio{{mode=\"{mode}\"}} ");
            push_num(&mut out, v / 100.0);
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
    use storlab_types::CpuSample;

    #[test]
    fn renders_and_serves() {
        let i = Interval {
            t_ns: 1,
            interval_ns: 500_000_000,
            devices: vec![DeviceSample {
                device: "vd\"a".into(),
                r_per_s: 12.5,
                util_pct: 50.0,
                ..DeviceSample::default()
            }],
            totals: vec![DeviceSample {
                device: "top".into(),
                w_await_ms: 2.0,
                ..DeviceSample::default()
            }],
            cpu: Some(CpuSample {
                idle_pct: 75.0,
                ..CpuSample::default()
            }),
        };
        let text = render(&i, "top");
        assert!(
            text.contains(
                "storlab_device_reads_per_second{device=\"vd\\\"a\",layer=\"top\"} 12.5\n"
            )
        );
        assert!(
            text.contains(
                "storlab_device_utilization_ratio{device=\"vd\\\"a\",layer=\"top\"} 0.5\n"
            )
        );
        assert!(text.contains("storlab_total_write_await_seconds{group=\"top\"} 0.002\n"));
        assert!(text.contains("storlab_cpu_ratio{mode=\"idle\"} 0.75\n"));
        assert!(text.contains("storlab_interval_seconds 0.5\n"));

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
