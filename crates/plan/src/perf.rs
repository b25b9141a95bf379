//! Performance: a bottleneck model.
//!
//! For a workload (pattern, request size, concurrency, buffered or not) the
//! model works out what one request costs each part of the system — drive
//! busy time, bytes each way on the drive-side links, bytes each way on the
//! host-side link, controller requests, parity work, the controller's read
//! and write paths — and divides each part's capacity by that cost. A last
//! candidate is concurrency: by Little's law no more than the outstanding
//! requests divided by one request's unloaded latency complete per second.
//! The smallest quotient is the prediction and names the part that binds;
//! every other part reports its headroom over it. Formulas and sources:
//! `docs/MODEL.md` §3.

use crate::PlanError;
use crate::hardware::{Access, Hardware};
use crate::layout::{Geometry, GroupLevel, Layout};
use serde::Serialize;
use storlab_types::{Pattern, format_bytes};

/// Streams a workload runs unless told otherwise (`--streams`).
pub const DEFAULT_STREAMS: u32 = 1;
/// Outstanding requests per stream unless told otherwise (`--qd`): the
/// queue depth at which drive and array data sheets quote their figures.
pub const DEFAULT_QD: u32 = 32;

/// Streams and queue depth a workload can have: at least 1, at most a
/// million streams and 65,536 per stream.
pub fn check_concurrency(streams: u32, qd: u32) -> Result<(), PlanError> {
    if streams == 0 || qd == 0 || streams > 1_000_000 || qd > 65_536 {
        return Err(PlanError::Invalid {
            what: format!("--streams {streams} / --qd {qd}"),
            reason:
                "both must be at least 1 (and at most 1000000 and 65536), e.g. --streams 4 --qd 16"
                    .into(),
        });
    }
    Ok(())
}

/// A workload's request size (`--seq-size 1M`): at least one byte.
pub fn parse_request_size(what: &str, text: &str) -> Result<u64, PlanError> {
    let invalid = |reason: String| PlanError::Invalid {
        what: format!("--{what}"),
        reason,
    };
    match storlab_types::parse_size(text) {
        Ok(0) => Err(invalid("must be at least one byte, e.g. 4k or 1M".into())),
        Ok(v) => Ok(v),
        Err(e) => Err(invalid(e.to_string())),
    }
}

/// Linux's default read-ahead window (`read_ahead_kb` = 128): the size in
/// which buffered sequential reads reach the device.
pub const READ_AHEAD_BYTES: u64 = 128 << 10;
/// The size in which write-back reaches the device for a buffered stream
/// (the block layer's `max_sectors_kb`, 512 KiB on most kernels).
pub const WRITEBACK_BYTES: u64 = 512 << 10;
/// Read-ahead windows in flight per buffered reader (the current window and
/// the asynchronous next one).
pub const READ_AHEAD_IN_FLIGHT: f64 = 2.0;

/// A workload: pattern, request size and how much is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    pub pattern: Pattern,
    pub request_bytes: u64,
    /// Independent streams (jobs, processes).
    pub streams: u32,
    /// Outstanding requests per stream (queue depth).
    pub qd: u32,
    /// Through the page cache (not O_DIRECT): sequential reads reach the
    /// device as read-ahead windows and writes as write-back requests.
    pub buffered: bool,
}

impl Workload {
    /// A direct-I/O workload with the default concurrency.
    pub fn new(pattern: Pattern, request_bytes: u64) -> Self {
        Workload {
            pattern,
            request_bytes,
            streams: DEFAULT_STREAMS,
            qd: DEFAULT_QD,
            buffered: false,
        }
    }

    pub fn label(&self) -> String {
        let size = format_bytes(self.request_bytes);
        let base = match self.pattern {
            Pattern::SeqRead => format!("sequential read {size}"),
            Pattern::SeqWrite => format!("sequential write {size}"),
            Pattern::RandRead => format!("random read {size}"),
            Pattern::RandWrite => format!("random write {size}"),
            Pattern::Mix { read_pct, random } => format!(
                "{} {read_pct:.0}/{:.0} read/write {size}",
                if random { "random" } else { "sequential" },
                100.0 - read_pct
            ),
        };
        let mut extra = Vec::new();
        if self.buffered {
            extra.push("buffered".to_string());
        }
        if (self.streams, self.qd) != (DEFAULT_STREAMS, DEFAULT_QD) {
            extra.push(format!("{} x QD{}", self.streams, self.qd));
        }
        if extra.is_empty() {
            base
        } else {
            format!("{base} ({})", extra.join(", "))
        }
    }

    /// The same workload with another concurrency.
    pub fn with_concurrency(self, streams: u32, qd: u32) -> Self {
        Workload {
            streams,
            qd,
            ..self
        }
    }

    /// The five workloads of a standard report.
    pub fn standard(seq: u64, random: u64, mix: Workload) -> Vec<Workload> {
        vec![
            Workload::new(Pattern::SeqRead, seq),
            Workload::new(Pattern::SeqWrite, seq),
            Workload::new(Pattern::RandRead, random),
            Workload::new(Pattern::RandWrite, random),
            mix,
        ]
    }
}

/// What one request costs each kind of part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Demand {
    /// Drive busy time summed over all drives, seconds.
    drive_s: f64,
    /// Bytes from drives to controller (read direction).
    back_read: f64,
    /// Bytes from controller to drives (write direction).
    back_write: f64,
    /// Bytes to the host (read direction).
    front_read: f64,
    /// Bytes from the host (write direction).
    front_write: f64,
    /// Requests the controller handles.
    ctrl_requests: f64,
    /// Parity bytes computed (P, and Q for RAID 6).
    parity_bytes: f64,
    /// Unloaded latency of one request, seconds (for Little's law).
    latency_s: f64,
}

impl Demand {
    fn scaled(self, k: f64) -> Demand {
        Demand {
            drive_s: self.drive_s * k,
            back_read: self.back_read * k,
            back_write: self.back_write * k,
            front_read: self.front_read * k,
            front_write: self.front_write * k,
            ctrl_requests: self.ctrl_requests * k,
            parity_bytes: self.parity_bytes * k,
            latency_s: self.latency_s * k,
        }
    }
    fn plus(self, o: Demand) -> Demand {
        Demand {
            drive_s: self.drive_s + o.drive_s,
            back_read: self.back_read + o.back_read,
            back_write: self.back_write + o.back_write,
            front_read: self.front_read + o.front_read,
            front_write: self.front_write + o.front_write,
            ctrl_requests: self.ctrl_requests + o.ctrl_requests,
            parity_bytes: self.parity_bytes + o.parity_bytes,
            latency_s: self.latency_s + o.latency_s,
        }
    }
}

/// One part of the system and what it could deliver on its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub name: String,
    pub max_iops: f64,
    pub max_bytes_per_s: f64,
    /// How much more than the prediction this part could do (0.25 = 25 %).
    pub headroom: f64,
    pub binds: bool,
}

/// The model's answer for one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub workload: String,
    pub pattern: Pattern,
    pub request_bytes: u64,
    pub iops: f64,
    pub bytes_per_s: f64,
    /// The part that limits the figure.
    pub binding: String,
    /// The effect that binds, in one line ("bound by the controller's
    /// parity engine", "concurrency: 1 x QD1 ...").
    pub explanation: String,
    /// How writes reach the drives: full-stripe, full-stripe (cache),
    /// read-modify-write, reconstruct-write, mirrored, striped.
    pub write_path: Option<String>,
    /// Drive operations per request (the effective write penalty for writes).
    pub drive_ops_per_request: f64,
    /// Unloaded latency of one request, seconds (what Little's law uses).
    pub latency_s: f64,
    pub parts: Vec<Part>,
    /// True when a part that could bind has no published limit for this
    /// workload's direction: the figure is then an upper bound ("≤"), not a
    /// prediction ([`crate::path::unknowns`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bound: bool,
    /// The parts without a published limit, one line each (what is not
    /// modelled and how to calibrate it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknowns: Vec<String>,
    /// Beside a bound on the controller's write path: what comparable parts
    /// of its class measured, with sources, or that none is sourced
    /// ([`crate::path::typical_write`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typical: Option<crate::path::Typical>,
}

struct Ctx<'a> {
    hw: &'a Hardware,
    level: GroupLevel,
    span: u32,
    data: u32,
    parity: u32,
    chunk: f64,
    full: f64,
    groups: u32,
    stripe: f64,
}

/// The write path a cache-gathered sequential stream takes.
pub const GATHERED: &str = "full-stripe (cache)";

/// Cost of one piece (the part of a request that lands on one group).
fn piece_read(c: &Ctx, p: f64, acc: Access) -> (Demand, f64) {
    let d = &c.hw.drive;
    let k = (p / c.chunk).ceil().max(1.0);
    // Chunks of one piece go to different drives in parallel; more chunks
    // than drives take rounds.
    let rounds = (k / f64::from(c.span)).ceil().max(1.0);
    if acc == Access::Random {
        let one = d.op_time(false, p / k, Access::Random);
        (
            Demand {
                drive_s: k * one,
                back_read: p,
                latency_s: rounds * d.latency(false, p / k, Access::Random),
                ..Demand::default()
            },
            k,
        )
    } else {
        // Streaming: on a disk, rotating parity (or the other mirror's
        // chunks) passes under the head and costs time too.
        let eff = if d.is_hdd() {
            match c.level {
                GroupLevel::R0 => 1.0,
                GroupLevel::R1 => 1.0 / f64::from(c.span),
                _ => f64::from(c.data) / f64::from(c.span),
            }
        } else {
            1.0
        };
        let ops = (p / c.chunk).max(1.0);
        (
            Demand {
                drive_s: d.busy(false, p / eff, ops, acc),
                back_read: p,
                latency_s: rounds * d.latency(false, (p / k).min(c.chunk), acc),
                ..Demand::default()
            },
            k,
        )
    }
}

// long-function: the RAID write paths, one after the other, as in §3.2.
fn piece_write(c: &Ctx, p: f64, acc: Access) -> (Demand, f64, &'static str) {
    let d = &c.hw.drive;
    let random = acc == Access::Random;
    let k = (p / c.chunk).ceil().max(1.0);
    let rounds = (k / f64::from(c.span)).ceil().max(1.0);
    match c.level {
        GroupLevel::R0 | GroupLevel::R1 => {
            let copies = if c.level == GroupLevel::R1 {
                f64::from(c.span)
            } else {
                1.0
            };
            let one = d.op_time(true, p / k, acc);
            (
                Demand {
                    drive_s: copies * k * one,
                    back_write: copies * p,
                    latency_s: rounds * d.latency(true, p / k, acc),
                    ..Demand::default()
                },
                copies * k,
                if copies > 1.0 { "mirrored" } else { "striped" },
            )
        }
        GroupLevel::R5 | GroupLevel::R6 => {
            let dd = f64::from(c.data);
            let pp = f64::from(c.parity);
            let f = (p / c.full).floor();
            let r = p - f * c.full;
            if !random && c.hw.controller.write_back {
                // The cache gathers a sequential stream into full stripes;
                // the host sees the write complete once it is in the cache.
                let bytes = p * (dd + pp) / dd;
                let ops = (bytes / c.chunk).max(1.0);
                return (
                    Demand {
                        drive_s: d.busy(true, bytes, ops, acc),
                        back_write: bytes,
                        parity_bytes: p * pp / dd,
                        latency_s: 0.0,
                        ..Demand::default()
                    },
                    ops,
                    if r > 0.0 { GATHERED } else { "full-stripe" },
                );
            }
            // Full stripes: P (and Q) per D data chunks; a partial stripe
            // updates every parity chunk over the bytes it touches.
            let mut dem = Demand {
                parity_bytes: f * c.full * pp / dd + r * pp,
                ..Demand::default()
            };
            let mut ops = 0.0;
            if f > 0.0 {
                let one = d.op_time(true, f * c.chunk, acc);
                dem.drive_s += (dd + pp) * one;
                dem.back_write += f * c.full * (dd + pp) / dd;
                dem.latency_s = d.latency(true, f * c.chunk, acc);
                ops += dd + pp;
            }
            let mut path = "full-stripe";
            if r > 0.0 {
                let k = (r / c.chunk).ceil().max(1.0);
                let pmin = r.min(c.chunk);
                let near = if random { Access::Random } else { Access::Near };
                let back = if d.is_hdd() {
                    Access::SameSpot
                } else {
                    Access::Random
                };
                let rmw_t = k * (d.op_time(false, r / k, near) + d.op_time(true, r / k, back))
                    + pp * (d.op_time(false, pmin, near) + d.op_time(true, pmin, back));
                // Reconstruct-write reads what it does not write in the
                // parity rows: the other chunks, and the uncovered tail of
                // the last chunk when the request ends inside it.
                let tail = if k >= 2.0 { k * c.chunk - r } else { 0.0 };
                let rcw_t = (dd - k) * d.op_time(false, pmin, near)
                    + if tail > 0.0 {
                        d.op_time(false, tail, near)
                    } else {
                        0.0
                    }
                    + k * d.op_time(true, r / k, near)
                    + pp * d.op_time(true, pmin, near);
                // Both paths read, then write: two drive operations in a row.
                let lat = d.latency(false, pmin, near) + d.latency(true, pmin, back);
                dem.latency_s = dem.latency_s.max(lat);
                if rmw_t <= rcw_t {
                    dem.drive_s += rmw_t;
                    dem.back_read += r + pp * pmin;
                    dem.back_write += r + pp * pmin;
                    ops += 2.0 * (k + pp);
                    path = if f > 0.0 {
                        "full-stripe + read-modify-write"
                    } else {
                        "read-modify-write"
                    };
                } else {
                    dem.drive_s += rcw_t;
                    dem.back_read += (dd - k) * pmin + tail;
                    dem.back_write += r + pp * pmin;
                    ops += dd + pp + if tail > 0.0 { 1.0 } else { 0.0 };
                    path = if f > 0.0 {
                        "full-stripe + reconstruct-write"
                    } else {
                        "reconstruct-write"
                    };
                }
            }
            (dem, ops, path)
        }
    }
}

/// Predict one workload on a layout and hardware.
pub fn predict(layout: &Layout, hw: &Hardware, w: &Workload) -> Result<Prediction, PlanError> {
    let geo = layout.geometry(hw.drive.capacity_bytes)?;
    predict_geo(layout, &geo, hw, w)
}

/// Device-side cost of one request of `s` bytes, split over groups.
fn device_demand(c: &Ctx, s: f64, write: bool, acc: Access) -> (Demand, f64, &'static str) {
    // Whole inter-group stripes plus what is left over; the pieces go to
    // different groups in parallel.
    let (whole, rest) = if c.groups > 1 && s > c.stripe {
        let f = (s / c.stripe).floor();
        (f, s - f * c.stripe)
    } else {
        (0.0, s)
    };
    let (mut d, mut ops, mut path) = (Demand::default(), 0.0, "full-stripe");
    let mut lat: f64 = 0.0;
    // Pieces beyond one per group are served in turn by the same group.
    let per_group_rounds = ((whole + if rest > 0.0 { 1.0 } else { 0.0 })
        / f64::from(c.groups.max(1)))
    .ceil()
    .max(1.0);
    if whole > 0.0 {
        let (pd, po, p) = if write {
            piece_write(c, c.stripe, acc)
        } else {
            let (pd, po) = piece_read(c, c.stripe, acc);
            (pd, po, "full-stripe")
        };
        lat = lat.max(pd.latency_s);
        d = pd.scaled(whole);
        ops = po * whole;
        path = p;
    }
    if rest > 0.0 {
        let (pd, po, p) = if write {
            piece_write(c, rest, acc)
        } else {
            let (pd, po) = piece_read(c, rest, acc);
            (pd, po, "full-stripe")
        };
        lat = lat.max(pd.latency_s);
        d = d.plus(pd);
        ops += po;
        // Report the costlier path when the pieces differ.
        if whole == 0.0 || p != "full-stripe" {
            path = p;
        }
    }
    d.latency_s = lat * per_group_rounds;
    d.ctrl_requests = whole + if rest > 0.0 { 1.0 } else { 0.0 };
    (d, ops, path)
}

/// The controller's own limits for one request with demand `dem` of
/// `front` bytes, in requests/s of one controller: overall throughput,
/// the read and write paths (one processor serves both: their times add
/// up), the command rate and the parity engine. [`quick`] and
/// [`crate::path::controller_limit`] both use it.
pub(crate) fn controller_parts(
    ctrl: &crate::hardware::ControllerSpec,
    dem: &Demand,
    front: f64,
) -> Vec<(PartKind, f64)> {
    let mut out = Vec::new();
    if let Some(b) = ctrl.max_bytes_per_s {
        out.push((PartKind::ControllerThroughput, b / front));
    }
    if ctrl.max_read_bytes_per_s.is_some() || ctrl.max_write_bytes_per_s.is_some() {
        let t = |bytes: f64, lim: Option<f64>| match (bytes > 0.0, lim) {
            (true, Some(l)) => bytes / l,
            _ => 0.0,
        };
        let tr = t(dem.front_read, ctrl.max_read_bytes_per_s);
        let tw = t(dem.front_write, ctrl.max_write_bytes_per_s);
        if tr > 0.0 && (tw == 0.0 || tr >= tw) {
            out.push((PartKind::ControllerRead, 1.0 / (tr + tw)));
        } else if tw > 0.0 {
            out.push((PartKind::ControllerWrite, 1.0 / (tr + tw)));
        }
    }
    if let Some(i) = ctrl.max_iops {
        out.push((PartKind::ControllerIops, i / dem.ctrl_requests));
    }
    if let (Some(x), true) = (ctrl.parity_bytes_per_s, dem.parity_bytes > 0.0) {
        out.push((PartKind::ControllerParity, x / dem.parity_bytes));
    }
    if ctrl.lun_read_bytes_per_s.is_some() || ctrl.lun_write_bytes_per_s.is_some() {
        // Each LUN prefetches and destages at its own rate; the two are
        // separate engines, so the busier one binds.
        let n = f64::from(ctrl.luns.max(1));
        let t = |bytes: f64, lim: Option<f64>| match (bytes > 0.0, lim) {
            (true, Some(l)) => bytes / (n * l),
            _ => 0.0,
        };
        let busy = t(dem.front_read, ctrl.lun_read_bytes_per_s)
            .max(t(dem.front_write, ctrl.lun_write_bytes_per_s));
        if busy > 0.0 {
            out.push((PartKind::LunRate, 1.0 / busy));
        }
    }
    if let (Some(m), true) = (&ctrl.mirror, dem.front_write > 0.0) {
        // Every written byte crosses the mirror path to the partner again.
        out.push((
            PartKind::MirrorLink,
            m.capacity(0.0, crate::path::mirrored_bytes(dem.front_write)),
        ));
    }
    if let Some(mem) = ctrl.memory_bytes_per_s {
        let bytes = crate::path::memory_crossings(
            dem.front_read,
            dem.front_write,
            dem.back_read,
            dem.back_write,
            dem.parity_bytes,
            ctrl.mirror.is_some(),
        );
        if bytes > 0.0 {
            out.push((PartKind::ControllerMemory, mem / bytes));
        }
    }
    out
}

/// The controller's limits for a workload without a layout (sim arrays
/// whose back end is given as a figure): throughput, read/write paths and
/// command rate for one request; the parity engine needs the layout.
pub(crate) fn controller_only(
    ctrl: &crate::hardware::ControllerSpec,
    w: &Workload,
) -> Vec<(PartKind, f64)> {
    let s = w.request_bytes as f64;
    let r = w.pattern.read_fraction();
    let dem = Demand {
        front_read: s * r,
        front_write: s * (1.0 - r),
        ctrl_requests: 1.0,
        ..Demand::default()
    };
    // Without the layout the drive-side bytes are unknown: the cache
    // memory's crossings cannot be counted, only the host-side parts.
    controller_parts(ctrl, &dem, s)
        .into_iter()
        .filter(|(k, _)| *k != PartKind::ControllerMemory)
        .collect()
}

/// The model without names: what binds and how much.
// long-function: one candidate per part, in the order of the §3.3 table.
pub(crate) fn quick(
    layout: &Layout,
    geo: &Geometry,
    hw: &Hardware,
    w: &Workload,
) -> Result<Quick, PlanError> {
    if w.request_bytes == 0 {
        return Err(PlanError::invalid(
            "request size",
            "must be at least one byte, e.g. 4k or 1M",
        ));
    }
    if w.streams == 0 || w.qd == 0 {
        return Err(PlanError::invalid(
            "concurrency",
            "streams and queue depth must be at least 1, e.g. --streams 4 --qd 16",
        ));
    }
    let k = hw.controllers.max(1);
    if k > geo.groups {
        return Err(PlanError::invalid(
            "controllers",
            format!(
                "{k} controllers for {} group(s): each controller needs at least one group; use fewer controllers or more groups",
                geo.groups
            ),
        ));
    }
    if k > 1 && geo.groups > 1 && layout.aggregation != crate::Aggregation::Lvm {
        return Err(PlanError::invalid(
            "controllers",
            format!(
                "{} is striped by one controller; to spread groups over {k} controllers stripe them with LVM, e.g. lvm({}*{}/{})",
                layout.level_name(),
                geo.groups,
                layout.level.name(),
                layout.span
            ),
        ));
    }
    let c = Ctx {
        hw,
        level: layout.level,
        span: geo.span,
        data: geo.data_drives_per_group,
        parity: geo.parity_drives_per_group,
        chunk: geo.chunk_bytes as f64,
        full: geo.group_full_stripe_bytes as f64,
        groups: geo.groups,
        stripe: geo
            .inter_group_stripe_bytes
            .unwrap_or(geo.group_full_stripe_bytes) as f64,
    };
    let s = w.request_bytes as f64;
    let r = w.pattern.read_fraction();
    let random = w.pattern.is_random();
    let acc = if random {
        Access::Random
    } else {
        Access::Stream
    };
    let buffered_stream = w.buffered && !random;
    let mut rt = crate::path::RoundTrip::default();
    let (mut dem, ops, path, in_flight) = if buffered_stream {
        // The page cache turns the application's requests into read-ahead
        // windows and write-back requests; with both streams on the same
        // spindles every device request starts with the head elsewhere.
        let ra = READ_AHEAD_BYTES as f64;
        let wb = WRITEBACK_BYTES as f64;
        let acc = if r > 0.0 && r < 1.0 && hw.drive.is_hdd() {
            Access::Near
        } else {
            Access::Stream
        };
        let (rd, ro, _) = device_demand(&c, ra, false, acc);
        let (wd, wo, p) = device_demand(&c, wb, true, acc);
        let (kr, kw) = (s * r / ra, s * (1.0 - r) / wb);
        let mut d = rd.scaled(kr).plus(wd.scaled(kw));
        // Reads wait for the device (and the window's trip over the host
        // link); writes complete in the page cache.
        d.latency_s = rd.latency_s + ra / hw.controller.host.bytes_per_s;
        rt.drive_s = rd.latency_s;
        rt.transfer_s = ra / hw.controller.host.bytes_per_s;
        let in_flight = f64::from(w.streams) * READ_AHEAD_IN_FLIGHT * ra / s;
        (
            d,
            kr * ro + kw * wo,
            (r < 1.0).then_some(p),
            (r > 0.0).then_some(in_flight),
        )
    } else {
        let (rd, ro, _) = device_demand(&c, s, false, acc);
        let (wd, wo, p) = device_demand(&c, s, true, acc);
        let d = rd.scaled(r).plus(wd.scaled(1.0 - r));
        let in_flight = f64::from(w.streams) * f64::from(w.qd);
        (
            d,
            r * ro + (1.0 - r) * wo,
            (r < 1.0).then_some(p),
            Some(in_flight),
        )
    };
    // A drive with a calibrated concurrency knee (docs/MODEL.md §3.14):
    // its fitted demand and latency replace the data-sheet figures, and
    // its queue (MVA) takes the place of Little's law below.
    let queue = if buffered_stream {
        None
    } else {
        crate::path::device_queue(&hw.drive, c.level, geo.drives, geo.chunk_bytes, w)
    };
    if let Some(q) = &queue {
        dem.drive_s = q.demand_s * f64::from(q.units);
        dem.latency_s = q.latency_s;
    }
    dem.front_read = s * r;
    dem.front_write = s * (1.0 - r);
    if matches!(c.level, GroupLevel::R0 | GroupLevel::R1) {
        dem.parity_bytes = 0.0;
    }
    if !buffered_stream {
        // Moving the request over the host link is part of its latency.
        rt.drive_s = dem.latency_s;
        rt.transfer_s = dem.front_read / hw.controller.host.bytes_per_s
            + dem.front_write / hw.controller.host.write_rate();
        dem.latency_s += rt.transfer_s;
    }
    // The rest of its round trip: HBA and fabric, the controller's own
    // command time (§3.12).
    (rt.host_s, rt.controller_s) = crate::path::fixed_latency(&hw.controller);
    dem.latency_s += rt.host_s + rt.controller_s;

    // Capacity of each part, in requests per second.
    let mut parts = [(PartKind::Drives, 0.0); N_PARTS];
    let mut len = 0;
    let mut push = |k: PartKind, v: f64| {
        parts[len] = (k, v);
        len += 1;
    };
    let n = f64::from(geo.drives);
    push(PartKind::Drives, n / dem.drive_s);
    // The busiest controller carries ceil(G/K) of G groups.
    let share = f64::from(geo.groups.div_ceil(k)) / f64::from(geo.groups);
    let ctrl = &hw.controller;
    let front = s;
    for (kind, v) in controller_parts(ctrl, &dem, front) {
        push(kind, v / share);
    }
    push(
        PartKind::Backend,
        ctrl.backend.capacity(dem.back_read, dem.back_write) / share,
    );
    push(
        PartKind::HostLink,
        ctrl.host.capacity(dem.front_read, dem.front_write) / share,
    );
    if let Some(e) = &hw.enclosure {
        let per_ctrl = (n * share).ceil();
        let fullest = f64::from(e.slots).min(per_ctrl);
        // The fullest enclosure carries fullest/N of the back-end bytes.
        let f = fullest / n;
        push(
            PartKind::Enclosure,
            e.uplink.capacity(dem.back_read * f, dem.back_write * f),
        );
    }
    if let Some(h) = hw.host_bytes_per_s {
        push(PartKind::Host, h / front);
    }
    match (&queue, in_flight) {
        (Some(dq), Some(q)) => push(
            PartKind::Concurrency,
            crate::path::queued_rate(dq, dem.latency_s - dq.latency_s, q.round() as u64),
        ),
        (None, Some(q)) if dem.latency_s > 0.0 => push(PartKind::Concurrency, q / dem.latency_s),
        _ => {}
    }
    let (bi, best) = parts[..len]
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.1.total_cmp(&b.1.1))
        .map(|(i, p)| (i, p.1))
        .unwrap_or((0, 0.0));
    Ok(Quick {
        iops: best,
        bytes_per_s: best * s,
        binding: parts[bi].0,
        parts,
        len,
        ops,
        path,
        latency_s: dem.latency_s,
        round_trip: rt,
        in_flight: in_flight.unwrap_or(0.0),
        queue,
    })
}

const N_PARTS: usize = 15;

/// The parts the model knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    Drives,
    ControllerThroughput,
    ControllerRead,
    ControllerWrite,
    ControllerIops,
    ControllerParity,
    /// The controller's cache memory (every crossing of it).
    ControllerMemory,
    /// The path the write cache is mirrored over to the partner.
    MirrorLink,
    /// Per-LUN read-ahead and destage rates times the LUNs.
    LunRate,
    Backend,
    HostLink,
    Enclosure,
    Host,
    Concurrency,
}

/// The model's numbers before any names are formatted (the search
/// evaluates many designs and names only the ones it prints).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quick {
    pub iops: f64,
    pub bytes_per_s: f64,
    pub binding: PartKind,
    pub(crate) parts: [(PartKind, f64); N_PARTS],
    pub(crate) len: usize,
    ops: f64,
    path: Option<&'static str>,
    pub(crate) latency_s: f64,
    /// One request's round trip, hop by hop (its total is `latency_s`).
    pub(crate) round_trip: crate::path::RoundTrip,
    in_flight: f64,
    /// The drives' calibrated queue, when it replaces Little's law.
    pub(crate) queue: Option<crate::path::DeviceQueue>,
}

/// A part's name as the report prints it.
pub(crate) fn part_name(kind: PartKind, geo: &Geometry, hw: &Hardware) -> String {
    let ctrl = &hw.controller;
    let k = hw.controllers.max(1);
    let kname = if k > 1 {
        format!("{k} x {}", ctrl.name)
    } else {
        ctrl.name.clone()
    };
    match kind {
        PartKind::Drives => format!("drives ({} x {})", geo.drives, hw.drive.name),
        PartKind::ControllerThroughput => format!("controller {kname} throughput"),
        PartKind::ControllerRead => format!("controller {kname} read path"),
        PartKind::ControllerWrite => format!("controller {kname} write path"),
        PartKind::ControllerIops => format!("controller {kname} IOPS"),
        PartKind::ControllerParity => format!("controller {kname} parity engine"),
        PartKind::ControllerMemory => format!("controller {kname} cache memory"),
        PartKind::LunRate => format!(
            "controller {kname} per-LUN prefetch/destage ({} LUN{})",
            ctrl.luns,
            if ctrl.luns == 1 { "" } else { "s" }
        ),
        PartKind::MirrorLink => format!(
            "controller {kname} cache mirror {}",
            ctrl.mirror.as_ref().map_or("link", |m| m.name.as_str())
        ),
        PartKind::Backend => format!("back-end {} per controller", ctrl.backend.name),
        PartKind::HostLink => format!("host link {} per controller", ctrl.host.name),
        PartKind::Enclosure => match &hw.enclosure {
            Some(e) => format!(
                "enclosure uplink {} ({} x {})",
                e.uplink.name,
                hw.enclosures_for(geo.drives),
                e.name
            ),
            None => "enclosure uplink".to_string(),
        },
        PartKind::Host => "host".to_string(),
        PartKind::Concurrency => "concurrency (outstanding I/O / latency)".to_string(),
    }
}

/// One line on the effect that binds.
fn explain(q: &Quick, w: &Workload, geo: &Geometry, hw: &Hardware) -> String {
    let ctrl = &hw.controller;
    // A calibrated queue: MVA, or past the knee its saturated rate (the
    // drives' part, equal to it within rounding).
    if matches!(q.binding, PartKind::Concurrency | PartKind::Drives)
        && let Some(dq) = q.queue
    {
        return format!(
            "bound by the device's calibrated queue: {:.0} requests in flight, knee at {:.1} \
             (MVA of the fitted latency {:.3} ms and demand {:.3} ms per request{})",
            q.in_flight,
            dq.knee,
            dq.latency_s * 1e3,
            dq.demand_s * f64::from(dq.units) * 1e3,
            if dq.units > 1 {
                format!(" over {} drives", dq.units)
            } else {
                String::new()
            }
        );
    }
    match q.binding {
        PartKind::Drives => {
            let hdd = hw.drive.is_hdd();
            let what = if w.pattern.is_random() && hdd {
                "seeks and rotation"
            } else if w.pattern.is_random() {
                "their rated random IOPS"
            } else if !hdd {
                "their rated sequential rate"
            } else if w.buffered
                && w.pattern.read_fraction() > 0.0
                && w.pattern.read_fraction() < 1.0
            {
                "interleaved read-ahead and write-back streams on every spindle"
            } else {
                "media rate and per-command cost"
            };
            format!("bound by the drives: {what}")
        }
        PartKind::ControllerWrite => format!(
            "bound by the controller's write path{}",
            ctrl.write_limit_by
                .as_ref()
                .map(|b| format!(" ({b})"))
                .unwrap_or_default()
        ),
        PartKind::ControllerRead => "bound by the controller's read path".to_string(),
        PartKind::ControllerThroughput => "bound by the controller's throughput".to_string(),
        PartKind::ControllerIops => "bound by the controller's command rate".to_string(),
        PartKind::ControllerParity => format!(
            "bound by the controller's parity engine ({})",
            if geo.parity_drives_per_group >= 2 {
                "P and Q per stripe"
            } else {
                "P per stripe"
            }
        ),
        PartKind::ControllerMemory => {
            "bound by the controller's cache memory (each byte crosses it several times)"
                .to_string()
        }
        PartKind::MirrorLink => {
            "bound by the write cache's mirror to the partner controller".to_string()
        }
        PartKind::LunRate => format!(
            "bound by the controller's per-LUN read-ahead / destage rate × {} LUN(s); more LUNs would help",
            ctrl.luns
        ),
        PartKind::Backend => "bound by the drive-side links".to_string(),
        PartKind::HostLink => format!(
            "bound by the host link {} after protocol overhead",
            ctrl.host.name
        ),
        PartKind::Enclosure => "bound by the enclosure uplink".to_string(),
        PartKind::Host => "bound by the host".to_string(),
        PartKind::Concurrency if w.buffered => format!(
            "bound by concurrency: {:.0} read-ahead windows of {} in flight ({} per reader) / {:.2} ms each (Little's law); \
             a larger read-ahead or more readers would help",
            f64::from(w.streams) * READ_AHEAD_IN_FLIGHT,
            format_bytes(READ_AHEAD_BYTES),
            READ_AHEAD_IN_FLIGHT,
            q.latency_s * 1e3
        ),
        PartKind::Concurrency if !w.pattern.is_random() => {
            let rt = &q.round_trip;
            format!(
                "bound by one stream's round trip: {:.0} requests in flight / {:.2} ms each (Little's law: \
                 HBA and fabric {:.3} ms, controller {:.3} ms, drives {:.3} ms, transfer {:.3} ms); \
                 more requests in flight or more streams would help",
                q.in_flight,
                q.latency_s * 1e3,
                rt.host_s * 1e3,
                rt.controller_s * 1e3,
                rt.drive_s * 1e3,
                rt.transfer_s * 1e3
            )
        }
        PartKind::Concurrency => format!(
            "bound by concurrency: {:.0} requests in flight / {:.2} ms each (Little's law); \
             more streams or a deeper queue would help",
            q.in_flight,
            q.latency_s * 1e3
        ),
    }
}

/// [`predict`] with the geometry already computed.
pub fn predict_geo(
    layout: &Layout,
    geo: &Geometry,
    hw: &Hardware,
    w: &Workload,
) -> Result<Prediction, PlanError> {
    let q = quick(layout, geo, hw, w)?;
    let s = w.request_bytes as f64;
    let mut unknowns = crate::path::unknowns(layout, hw, w);
    let typical = if unknowns.is_empty() {
        None
    } else {
        crate::path::typical_write(&hw.controller)
    };
    // A stream bound by its round trip: the controller's command time is
    // part of it, unknown unless published (§3.12).
    if q.binding == PartKind::Concurrency
        && !w.pattern.is_random()
        && let Some(u) = crate::path::stream_unknown(&hw.controller)
    {
        unknowns.push(u);
    }
    let parts = q.parts[..q.len]
        .iter()
        .map(|&(kind, iops)| Part {
            name: part_name(kind, geo, hw),
            max_iops: iops,
            max_bytes_per_s: iops * s,
            headroom: iops / q.iops - 1.0,
            binds: kind == q.binding,
        })
        .collect();
    Ok(Prediction {
        workload: w.label(),
        pattern: w.pattern,
        request_bytes: w.request_bytes,
        iops: q.iops,
        bytes_per_s: q.bytes_per_s,
        binding: part_name(q.binding, geo, hw),
        explanation: explain(&q, w, geo, hw),
        write_path: q.path.map(str::to_string),
        drive_ops_per_request: q.ops,
        latency_s: q.latency_s,
        parts,
        bound: !unknowns.is_empty(),
        unknowns,
        typical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::*;

    #[test]
    fn concurrency_and_request_sizes_are_checked_here() {
        assert!(check_concurrency(1, 1).is_ok());
        assert!(check_concurrency(1_000_000, 65_536).is_ok());
        for (s, q) in [(0, 1), (1, 0), (1_000_001, 1), (1, 65_537)] {
            let e = check_concurrency(s, q).unwrap_err().to_string();
            assert!(e.contains("at least 1"), "{e}");
        }
        assert_eq!(parse_request_size("seq-size", "1M").unwrap(), 1 << 20);
        let e = parse_request_size("seq-size", "0").unwrap_err().to_string();
        assert!(
            e.contains("--seq-size") && e.contains("at least one byte"),
            "{e}"
        );
        assert!(parse_request_size("mix-size", "lots").is_err());
    }

    fn link(name: &str, mbs: f64) -> LinkSpec {
        LinkSpec::new(name, 1, mbs * 1e6)
    }

    fn hw(write_back: bool) -> Hardware {
        Hardware {
            drive: DriveSpec {
                name: "hdd".into(),
                capacity_bytes: 4_000_000_000_000,
                media: DriveMedia::Hdd {
                    rpm: 7200.0,
                    avg_seek_s: 0.0085,
                    seq_bytes_per_s: 150e6,
                },
                mtbf_hours: 1.2e6,
                ber_per_bit: 1e-15,
                sector_bytes: 512,
                rebuild_bytes_per_s: 50e6,
                rebuild_hours: None,
                price: None,
                currency: None,
                cmd_overhead_s: 0.0,
                seq_outer_bytes_per_s: None,
                seq_inner_bytes_per_s: None,
                overrides: Vec::new(),
                queue: Default::default(),
            },
            controller: ControllerSpec {
                write_back,
                ..ControllerSpec::new("ctl", link("sas12x8", 1e9), link("pcie", 1e9))
            },
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        }
    }

    fn w(pattern: Pattern, size: u64) -> Workload {
        Workload::new(pattern, size)
    }

    fn hdd_iops(size: f64) -> f64 {
        1.0 / (0.0085 + 60.0 / 7200.0 / 2.0 + size / 150e6)
    }

    #[test]
    fn small_random_writes_pay_the_classic_penalty() {
        // Read-modify-write of a 4 KiB write: 2 reads + 2 writes on RAID 5,
        // 3 + 3 on RAID 6, 2 writes on RAID 10; the write-back to the same
        // spot costs a revolution instead of a seek, so compare ops.
        for (l, ops) in [
            ("R5/8", 4.0),
            ("R6/8", 6.0),
            ("R10/2/8", 2.0),
            ("R0/8", 1.0),
        ] {
            let layout: Layout = l.parse().unwrap();
            let p = predict(&layout, &hw(true), &w(Pattern::RandWrite, 4096)).unwrap();
            assert_eq!(p.drive_ops_per_request, ops, "{l}");
        }
        let layout: Layout = "R0/8".parse().unwrap();
        let p = predict(&layout, &hw(true), &w(Pattern::RandRead, 4096)).unwrap();
        assert!((p.iops - 8.0 * hdd_iops(4096.0)).abs() < 1e-6);
        assert!(p.binding.starts_with("drives"));
    }

    #[test]
    fn drive_bound_explanations_name_what_the_drive_kind_has() {
        // A disk is bound by seeks and rotation; an SSD has neither.
        let layout: Layout = "R0/8".parse().unwrap();
        let rand = w(Pattern::RandRead, 4096);
        let p = predict(&layout, &hw(true), &rand).unwrap();
        assert_eq!(p.explanation, "bound by the drives: seeks and rotation");
        let mut ssd = hw(true);
        ssd.drive.media = DriveMedia::Ssd {
            read_iops: 50_000.0,
            write_iops: 20_000.0,
            seq_read_bytes_per_s: 100e6,
            seq_write_bytes_per_s: 100e6,
        };
        let p = predict(&layout, &ssd, &rand).unwrap();
        assert_eq!(
            p.explanation,
            "bound by the drives: their rated random IOPS"
        );
        let p = predict(&layout, &ssd, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert_eq!(
            p.explanation,
            "bound by the drives: their rated sequential rate"
        );
    }

    #[test]
    fn full_stripe_write_costs_d_plus_p_over_d() {
        let layout: Layout = "R6/10,chunk=64k".parse().unwrap();
        let p = predict(&layout, &hw(true), &w(Pattern::SeqWrite, 1 << 20)).unwrap();
        // 10 drives stream at 150 MB/s; 8/10 of it is data.
        assert!(
            (p.bytes_per_s - 8.0 * 150e6).abs() < 1.0,
            "{}",
            p.bytes_per_s
        );
        assert_eq!(p.write_path.as_deref(), Some("full-stripe"));
        // Random 512 KiB writes = one full stripe of 8 x 64 KiB.
        let p = predict(&layout, &hw(true), &w(Pattern::RandWrite, 512 << 10)).unwrap();
        assert_eq!(p.write_path.as_deref(), Some("full-stripe"));
        assert_eq!(p.drive_ops_per_request, 10.0);
    }

    #[test]
    fn request_size_against_chunk_picks_the_write_path() {
        let layout: Layout = "R6/10,chunk=64k".parse().unwrap();
        let one = predict(&layout, &hw(true), &w(Pattern::RandWrite, 64 << 10)).unwrap();
        assert_eq!(one.write_path.as_deref(), Some("read-modify-write"));
        let most = predict(&layout, &hw(true), &w(Pattern::RandWrite, 448 << 10)).unwrap();
        assert_eq!(most.write_path.as_deref(), Some("reconstruct-write"));
        // 7 data chunks written + 1 read + 2 parity = 10 operations.
        assert_eq!(most.drive_ops_per_request, 10.0);
        // Ending 4 KiB short of the stripe: the tail of the last chunk is read too.
        let short = predict(&layout, &hw(true), &w(Pattern::RandWrite, 508 << 10)).unwrap();
        assert_eq!(short.write_path.as_deref(), Some("reconstruct-write"));
        assert_eq!(short.drive_ops_per_request, 11.0);
        // Without a write-back cache sequential 64 KiB writes on a 512 KiB
        // stripe are partial-stripe too and much slower than with it.
        let cached = predict(&layout, &hw(true), &w(Pattern::SeqWrite, 64 << 10)).unwrap();
        let raw = predict(&layout, &hw(false), &w(Pattern::SeqWrite, 64 << 10)).unwrap();
        assert!(raw.bytes_per_s < cached.bytes_per_s / 2.0);
    }

    #[test]
    fn links_and_controllers_bind_and_add_up() {
        let mut h = hw(true);
        h.controller.host = link("pcie-slow", 500.0);
        let l: Layout = "lvm(4*R6/10, stripe=2M)".parse().unwrap();
        let p = predict(&l, &h, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(p.binding.starts_with("host link"));
        assert!((p.bytes_per_s - 500e6).abs() < 1.0);
        assert!(
            p.parts
                .iter()
                .filter(|x| !x.binds)
                .all(|x| x.headroom >= 0.0)
        );
        h.controllers = 2;
        let p2 = predict(&l, &h, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!((p2.bytes_per_s - 1000e6).abs() < 1.0);
        // Controller RAID 60 cannot be split over controllers.
        let r60: Layout = "R60/10/40".parse().unwrap();
        assert!(predict(&r60, &h, &w(Pattern::SeqRead, 1 << 20)).is_err());
    }

    #[test]
    fn requests_split_over_groups_move_exactly_their_bytes() {
        // 1 MiB over a 384 KiB inter-group stripe: 384 + 384 + 256 KiB; a
        // slow back end must then deliver exactly its own rate.
        let mut h = hw(true);
        h.controller.backend = link("slow", 100.0);
        let l: Layout = "R50/7/14,chunk=64k".parse().unwrap();
        let p = predict(&l, &h, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(p.binding.starts_with("back-end"));
        assert!((p.bytes_per_s - 100e6).abs() < 1e-3, "{}", p.bytes_per_s);
    }

    #[test]
    fn misaligned_lvm_stripe_costs_read_modify_write() {
        let mut h = hw(false);
        h.controller.backend = link("fast", 1e5);
        h.controller.host = link("fast", 1e5);
        let good: Layout = "lvm(4*R6/10, stripe=2M)".parse().unwrap();
        let bad: Layout = "lvm(4*R6/12, stripe=2M)".parse().unwrap();
        let g = predict(&good, &h, &w(Pattern::SeqWrite, 8 << 20)).unwrap();
        let b = predict(&bad, &h, &w(Pattern::SeqWrite, 8 << 20)).unwrap();
        assert_eq!(g.write_path.as_deref(), Some("full-stripe"));
        assert_ne!(b.write_path.as_deref(), Some("full-stripe"));
        assert!(b.bytes_per_s < g.bytes_per_s);
    }

    #[test]
    fn littles_law_bounds_a_shallow_queue() {
        // One outstanding 4 KiB random read at a time on 8 disks: the
        // throughput is 1 / latency, whatever the disks could do together.
        let layout: Layout = "R0/8".parse().unwrap();
        let one = w(Pattern::RandRead, 4096).with_concurrency(1, 1);
        let p = predict(&layout, &hw(true), &one).unwrap();
        // The fixture's host link moves 1e15 bytes/s.
        let lat = 1.0 / hdd_iops(4096.0) + 4096.0 / 1e15;
        assert!((p.latency_s - lat).abs() < 1e-12, "{}", p.latency_s);
        assert!((p.iops - 1.0 / lat).abs() < 1e-6, "{}", p.iops);
        assert!(p.binding.starts_with("concurrency"), "{}", p.binding);
        assert!(p.explanation.contains("Little's law"), "{}", p.explanation);
        // IOPS x latency = requests in flight (the textbook identity).
        let four = predict(&layout, &hw(true), &one.with_concurrency(1, 4)).unwrap();
        assert!((four.iops * four.latency_s - 4.0).abs() < 1e-9);
        // Enough in flight and the drives bind again.
        let deep = predict(&layout, &hw(true), &one.with_concurrency(4, 64)).unwrap();
        assert!(deep.binding.starts_with("drives"));
        assert!((deep.iops - 8.0 * hdd_iops(4096.0)).abs() < 1e-6);
    }

    #[test]
    fn one_stream_is_bound_by_its_round_trip() {
        // One sequential stream of 1 MiB reads at QD1 on R0/8 with 128 KiB
        // chunks: each drive reads one chunk (131072 / 150 MB/s =
        // 0.873813 ms), the request crosses the 1 GB/s host link
        // (1.048576 ms), the controller takes 50 us and HBA and fabric
        // 20 us: 1.992389 ms, so 1048576 / 1.992389 ms = 526.29 MB/s,
        // though the drives stream 1,200 MB/s and the link carries 1,000.
        let layout: Layout = "R0/8,chunk=128k".parse().unwrap();
        let mut h = hw(true);
        h.controller.host = link("pcie", 1000.0);
        h.controller.cmd_latency_s = Some(50e-6);
        h.controller.host_latency_s = 20e-6;
        let one = w(Pattern::SeqRead, 1 << 20).with_concurrency(1, 1);
        let p = predict(&layout, &h, &one).unwrap();
        let rtt: f64 = 20e-6 + 50e-6 + 131072.0 / 150e6 + 1048576.0 / 1e9;
        assert!((rtt - 1.992389e-3).abs() < 1e-9);
        assert!((p.bytes_per_s - 1048576.0 / rtt).abs() < 1.0, "{p:?}");
        assert!((p.bytes_per_s / 1e6 - 526.29).abs() < 0.01);
        assert!(
            p.explanation.contains("one stream's round trip"),
            "{}",
            p.explanation
        );
        assert!(
            p.explanation.contains("controller 0.050 ms"),
            "{}",
            p.explanation
        );
        assert!(!p.bound, "{:?}", p.unknowns);
        // Four in flight: 2,105 MB/s by Little's law, so the host link binds.
        let four = predict(&layout, &h, &one.with_concurrency(1, 4)).unwrap();
        assert!((four.bytes_per_s - 1e9).abs() < 1.0, "{four:?}");
        // Without a published command time the stream's figure is an upper
        // bound, and says what is missing.
        h.controller.cmd_latency_s = None;
        let b = predict(&layout, &h, &one).unwrap();
        assert!(b.bytes_per_s > p.bytes_per_s);
        assert!(b.bound && b.unknowns[0].contains("command time"), "{b:?}");
        // Random work keeps its own wording (and no such unknown).
        let r = predict(
            &layout,
            &h,
            &w(Pattern::RandRead, 4096).with_concurrency(1, 1),
        )
        .unwrap();
        assert!(
            r.explanation.starts_with("bound by concurrency"),
            "{}",
            r.explanation
        );
        assert!(!r.bound);
    }

    #[test]
    fn per_command_overhead_makes_bigger_chunks_faster() {
        // A disk paying o per command streams c / (o + c/R) per drive.
        let mut h = hw(true);
        h.drive.cmd_overhead_s = 0.1e-3;
        h.controller.backend = link("fast", 1e5);
        h.controller.host = link("fast", 1e5);
        let rate = |chunk: &str| {
            let l: Layout = format!("R0/8,chunk={chunk}").parse().unwrap();
            predict(&l, &h, &w(Pattern::SeqRead, 8 << 20))
                .unwrap()
                .bytes_per_s
        };
        for (c, bytes) in [("64k", 65536.0), ("256k", 262144.0), ("1m", 1048576.0)] {
            let expect = 8.0 * bytes / (0.1e-3 + bytes / 150e6);
            assert!((rate(c) - expect).abs() / expect < 1e-9, "{c}: {}", rate(c));
        }
        assert!(rate("64k") < rate("256k") && rate("256k") < rate("1m"));
        // An LVM stripe smaller than the chunk costs reads a command per stripe.
        let fine: Layout = "lvm(2*R0/4, stripe=64k)".parse().unwrap();
        let coarse: Layout = "lvm(2*R0/4, stripe=1m)".parse().unwrap();
        let f = predict(&fine, &h, &w(Pattern::SeqRead, 8 << 20)).unwrap();
        let c = predict(&coarse, &h, &w(Pattern::SeqRead, 8 << 20)).unwrap();
        assert!(
            f.bytes_per_s < 0.9 * c.bytes_per_s,
            "{} vs {}",
            f.bytes_per_s,
            c.bytes_per_s
        );
    }

    #[test]
    fn zone_average_is_the_mean_of_the_edges_in_use() {
        assert!((zone_average(200.0, 100.0, 1.0) - 150.0).abs() < 1e-12);
        assert!((zone_average(200.0, 100.0, 0.0) - 200.0).abs() < 1e-12);
        // Half the capacity: r_u = sqrt(1 - 0.5 x 0.75) = 0.7906.
        let half = zone_average(200.0, 100.0, 0.5);
        assert!((half - 200.0 * (1.0 + 0.625f64.sqrt()) / 2.0).abs() < 1e-9);
        assert!(half > 150.0 && half < 200.0);
    }

    #[test]
    fn buffered_small_sequential_mix_reaches_the_device_transformed() {
        let mut h = hw(true);
        h.drive.cmd_overhead_s = 0.1e-3;
        let layout: Layout = "R0/1,chunk=1m".parse().unwrap();
        let mix = Pattern::Mix {
            read_pct: 50.0,
            random: false,
        };
        let buffered = Workload {
            buffered: true,
            ..w(mix, 8192)
        };
        let p = predict(&layout, &h, &buffered.with_concurrency(16, 1)).unwrap();
        // Per 8 KiB request: 4 KiB of a 128 KiB read-ahead window and 4 KiB
        // of a 512 KiB write-back request, each starting half a revolution
        // away because the other stream moved the head.
        let half_rev = 60.0 / 7200.0 / 2.0;
        let ra = READ_AHEAD_BYTES as f64;
        let wb = WRITEBACK_BYTES as f64;
        let t = 4096.0 / ra * (0.1e-3 + half_rev + ra / 150e6)
            + 4096.0 / wb * (0.1e-3 + half_rev + wb / 150e6);
        assert!(
            (p.iops - 1.0 / t).abs() / p.iops < 1e-9,
            "{} vs {}",
            p.iops,
            1.0 / t
        );
        // Far fewer device commands than 8 KiB direct I/O (one per
        // request), far slower than 1 MiB streaming.
        let direct = predict(&layout, &h, &w(mix, 8192)).unwrap();
        let stream = predict(&layout, &h, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(p.drive_ops_per_request < direct.drive_ops_per_request / 20.0);
        assert!(p.bytes_per_s < stream.bytes_per_s / 3.0);
        assert!(p.explanation.contains("interleaved"), "{}", p.explanation);
        // One buffered reader keeps two read-ahead windows in flight.
        let reader = Workload {
            buffered: true,
            ..w(Pattern::SeqRead, 8192)
        }
        .with_concurrency(1, 1);
        let l8: Layout = "R0/8".parse().unwrap();
        let r = predict(&l8, &h, &reader).unwrap();
        assert!(r.binding.starts_with("concurrency"), "{}", r.binding);
        assert!((r.bytes_per_s * r.latency_s - 2.0 * ra).abs() < 1e-3 * ra);
    }

    #[test]
    fn the_write_path_has_its_own_limit() {
        let mut h = hw(true);
        h.controller.max_write_bytes_per_s = Some(300e6);
        h.controller.write_limit_by = Some("parity engine".into());
        let l: Layout = "R6/10".parse().unwrap();
        let wr = predict(&l, &h, &w(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!((wr.bytes_per_s - 300e6).abs() < 1e-3);
        assert!(
            wr.explanation.contains("write path (parity engine)"),
            "{}",
            wr.explanation
        );
        let rd = predict(&l, &h, &w(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(rd.bytes_per_s > 1e9 - 1.0 || rd.binding.starts_with("drives"));
        assert!(!rd.binding.contains("write path"));
        // A 50/50 mix shares the processor: 1 / (0.5/read + 0.5/write).
        h.controller.max_read_bytes_per_s = Some(900e6);
        let m = Pattern::Mix {
            read_pct: 50.0,
            random: false,
        };
        let fast = hw(true);
        let mut hh = h.clone();
        hh.controller.backend = link("fast", 1e5);
        hh.controller.host = link("fast", 1e5);
        hh.drive = fast.drive;
        hh.drive.media = DriveMedia::Ssd {
            read_iops: 1e7,
            write_iops: 1e7,
            seq_read_bytes_per_s: 1e11,
            seq_write_bytes_per_s: 1e11,
        };
        let p = predict(&l, &hh, &w(m, 1 << 20)).unwrap();
        assert!((p.bytes_per_s - 1.0 / (0.5 / 900e6 + 0.5 / 300e6)).abs() < 1.0);
    }

    #[test]
    fn raid6_pays_twice_the_parity_work_of_raid5() {
        let mut h = hw(true);
        h.controller.parity_bytes_per_s = Some(400e6);
        h.controller.backend = link("fast", 1e5);
        h.controller.host = link("fast", 1e5);
        h.drive.media = DriveMedia::Ssd {
            read_iops: 1e7,
            write_iops: 1e7,
            seq_read_bytes_per_s: 1e11,
            seq_write_bytes_per_s: 1e11,
        };
        let r5: Layout = "R5/10".parse().unwrap();
        let r6: Layout = "R6/10".parse().unwrap();
        let a = predict(&r5, &h, &w(Pattern::SeqWrite, 1 << 20)).unwrap();
        let b = predict(&r6, &h, &w(Pattern::SeqWrite, 1 << 20)).unwrap();
        // P per 9 data bytes vs P and Q per 8.
        assert!(
            (a.bytes_per_s - 400e6 * 9.0).abs() < 1.0,
            "{}",
            a.bytes_per_s
        );
        assert!(
            (b.bytes_per_s - 400e6 * 4.0).abs() < 1.0,
            "{}",
            b.bytes_per_s
        );
        assert!(b.explanation.contains("P and Q"), "{}", b.explanation);
    }

    #[test]
    fn full_duplex_links_carry_reads_and_writes_at_once() {
        let mut h = hw(true);
        h.controller.host = link("duplex", 100.0);
        h.controller.backend = link("fast", 1e5);
        h.drive.media = DriveMedia::Ssd {
            read_iops: 1e7,
            write_iops: 1e7,
            seq_read_bytes_per_s: 1e11,
            seq_write_bytes_per_s: 1e11,
        };
        let l: Layout = "R0/4".parse().unwrap();
        let m = w(
            Pattern::Mix {
                read_pct: 50.0,
                random: false,
            },
            1 << 20,
        );
        let duplex = predict(&l, &h, &m).unwrap();
        assert!(
            (duplex.bytes_per_s - 200e6).abs() < 1.0,
            "{}",
            duplex.bytes_per_s
        );
        h.controller.host.shared_bus = true;
        let bus = predict(&l, &h, &m).unwrap();
        assert!((bus.bytes_per_s - 100e6).abs() < 1.0, "{}", bus.bytes_per_s);
        // Writes slower than reads on the link (iSCSI): the write side binds.
        h.controller.host.shared_bus = false;
        h.controller.host.write_bytes_per_s = Some(80e6);
        let wr = predict(&l, &h, &w(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!((wr.bytes_per_s - 80e6).abs() < 1.0);
    }

    fn arb_workload() -> impl proptest::strategy::Strategy<Value = Workload> {
        use proptest::prelude::*;
        (0usize..6, 9u32..24, 0.0f64..100.0).prop_map(|(p, sz, r)| Workload {
            pattern: [
                Pattern::SeqRead,
                Pattern::SeqWrite,
                Pattern::RandRead,
                Pattern::RandWrite,
                Pattern::Mix {
                    read_pct: r,
                    random: true,
                },
                Pattern::Mix {
                    read_pct: r,
                    random: false,
                },
            ][p],
            ..Workload::new(Pattern::SeqRead, 1u64 << sz)
        })
    }

    proptest::proptest! {
        #[test]
        fn prediction_is_the_smallest_part(
            l in 0usize..4, span in 4u32..16, groups in 1u32..8, ctl in 1u32..4,
            chunk in 0u32..5, wb in proptest::bool::ANY, w in arb_workload(), ssd in proptest::bool::ANY,
        ) {
            let level = [GroupLevel::R0, GroupLevel::R1, GroupLevel::R5, GroupLevel::R6][l];
            let span = if level == GroupLevel::R1 { 2 } else { span };
            let agg = if groups == 1 { crate::Aggregation::Single } else { crate::Aggregation::Lvm };
            let layout = Layout { chunk_bytes: 16384 << chunk, ..Layout::new(level, span, groups, agg) };
            let mut h = hw(wb);
            h.controllers = ctl.min(groups);
            if ssd {
                h.drive.media = DriveMedia::Ssd {
                    read_iops: 500_000.0, write_iops: 100_000.0,
                    seq_read_bytes_per_s: 3e9, seq_write_bytes_per_s: 2e9,
                };
            }
            let p = predict(&layout, &h, &w).unwrap();
            proptest::prop_assert!(p.iops.is_finite() && p.iops > 0.0);
            proptest::prop_assert_eq!(p.parts.iter().filter(|x| x.binds).count(), 1);
            for x in &p.parts {
                proptest::prop_assert!(x.max_iops >= p.iops * (1.0 - 1e-12));
                proptest::prop_assert!(x.headroom >= -1e-12);
            }
            // More controllers (LVM) never make it slower.
            if groups > 1 && h.controllers < groups {
                let mut more = h.clone();
                more.controllers += 1;
                let q = predict(&layout, &more, &w).unwrap();
                proptest::prop_assert!(q.iops >= p.iops * (1.0 - 1e-9));
            }
        }
    }
}
