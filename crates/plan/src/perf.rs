//! Performance: a bottleneck model.
//!
//! For a workload (pattern and request size) the model works out what one
//! request costs each part of the system — drive busy time, bytes on the
//! drive-side links, bytes on the host-side link, controller requests,
//! parity work — and divides each part's capacity by that cost. The
//! smallest quotient is the prediction and names the part that binds; every
//! other part reports its headroom over it. The figures are saturation
//! throughput with enough outstanding I/O to keep every drive busy.
//! Formulas: `docs/MODEL.md`.

use crate::PlanError;
use crate::hardware::{Access, Hardware};
use crate::layout::{Geometry, GroupLevel, Layout};
use serde::Serialize;
use storlab_types::format_bytes;

/// What the workload does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    SeqRead,
    SeqWrite,
    RandRead,
    RandWrite,
    /// A mix of reads and writes; `read_pct` of requests are reads.
    Mix {
        read_pct: f64,
        random: bool,
    },
}

/// A workload: pattern and request size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    pub pattern: Pattern,
    pub request_bytes: u64,
}

impl Workload {
    pub fn label(&self) -> String {
        let size = format_bytes(self.request_bytes);
        match self.pattern {
            Pattern::SeqRead => format!("sequential read {size}"),
            Pattern::SeqWrite => format!("sequential write {size}"),
            Pattern::RandRead => format!("random read {size}"),
            Pattern::RandWrite => format!("random write {size}"),
            Pattern::Mix { read_pct, random } => format!(
                "{} {read_pct:.0}/{:.0} read/write {size}",
                if random { "random" } else { "sequential" },
                100.0 - read_pct
            ),
        }
    }

    /// The five workloads of a standard report.
    pub fn standard(seq: u64, random: u64, mix: Workload) -> Vec<Workload> {
        vec![
            Workload {
                pattern: Pattern::SeqRead,
                request_bytes: seq,
            },
            Workload {
                pattern: Pattern::SeqWrite,
                request_bytes: seq,
            },
            Workload {
                pattern: Pattern::RandRead,
                request_bytes: random,
            },
            Workload {
                pattern: Pattern::RandWrite,
                request_bytes: random,
            },
            mix,
        ]
    }
}

/// What one request costs each kind of part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Demand {
    /// Drive busy time summed over all drives, seconds.
    drive_s: f64,
    /// Bytes between controller and drives.
    backend_bytes: f64,
    /// Bytes between host and controller.
    front_bytes: f64,
    /// Requests the controller handles.
    ctrl_requests: f64,
    /// Data bytes through the parity engine.
    parity_bytes: f64,
}

impl Demand {
    fn scaled(self, k: f64) -> Demand {
        Demand {
            drive_s: self.drive_s * k,
            backend_bytes: self.backend_bytes * k,
            front_bytes: self.front_bytes * k,
            ctrl_requests: self.ctrl_requests * k,
            parity_bytes: self.parity_bytes * k,
        }
    }
    fn plus(self, o: Demand) -> Demand {
        Demand {
            drive_s: self.drive_s + o.drive_s,
            backend_bytes: self.backend_bytes + o.backend_bytes,
            front_bytes: self.front_bytes + o.front_bytes,
            ctrl_requests: self.ctrl_requests + o.ctrl_requests,
            parity_bytes: self.parity_bytes + o.parity_bytes,
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
    /// How writes reach the drives: full-stripe, read-modify-write,
    /// reconstruct-write, mirrored, striped.
    pub write_path: Option<String>,
    /// Drive operations per request (the effective write penalty for writes).
    pub drive_ops_per_request: f64,
    pub parts: Vec<Part>,
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

/// Cost of one piece (the part of a request that lands on one group).
fn piece_read(c: &Ctx, p: f64, random: bool) -> (Demand, f64) {
    let d = &c.hw.drive;
    if random {
        let k = (p / c.chunk).ceil().max(1.0);
        let t = k * d.op_time(false, p / k, Access::Random);
        (
            Demand {
                drive_s: t,
                backend_bytes: p,
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
        (
            Demand {
                drive_s: d.op_time(false, p / eff, Access::Stream),
                backend_bytes: p,
                ..Demand::default()
            },
            (p / c.chunk).ceil().max(1.0),
        )
    }
}

fn piece_write(c: &Ctx, p: f64, random: bool) -> (Demand, f64, &'static str) {
    let d = &c.hw.drive;
    let acc = if random {
        Access::Random
    } else {
        Access::Stream
    };
    match c.level {
        GroupLevel::R0 | GroupLevel::R1 => {
            let copies = if c.level == GroupLevel::R1 {
                f64::from(c.span)
            } else {
                1.0
            };
            let k = (p / c.chunk).ceil().max(1.0);
            (
                Demand {
                    drive_s: copies * k * d.op_time(true, p / k, acc),
                    backend_bytes: copies * p,
                    ..Demand::default()
                },
                copies * k,
                if copies > 1.0 { "mirrored" } else { "striped" },
            )
        }
        GroupLevel::R5 | GroupLevel::R6 => {
            let dd = f64::from(c.data);
            let pp = f64::from(c.parity);
            if !random && c.hw.controller.write_back {
                // The cache gathers a sequential stream into full stripes.
                let bytes = p * (dd + pp) / dd;
                return (
                    Demand {
                        drive_s: d.op_time(true, bytes, Access::Stream),
                        backend_bytes: bytes,
                        parity_bytes: p,
                        ..Demand::default()
                    },
                    (bytes / c.chunk).max(1.0),
                    "full-stripe",
                );
            }
            let f = (p / c.full).floor();
            let r = p - f * c.full;
            let mut dem = Demand {
                parity_bytes: p,
                ..Demand::default()
            };
            let mut ops = 0.0;
            if f > 0.0 {
                dem.drive_s += (dd + pp) * d.op_time(true, f * c.chunk, acc);
                dem.backend_bytes += f * c.full * (dd + pp) / dd;
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
                if rmw_t <= rcw_t {
                    dem.drive_s += rmw_t;
                    dem.backend_bytes += 2.0 * (r + pp * pmin);
                    ops += 2.0 * (k + pp);
                    path = if f > 0.0 {
                        "full-stripe + read-modify-write"
                    } else {
                        "read-modify-write"
                    };
                } else {
                    dem.drive_s += rcw_t;
                    dem.backend_bytes += (dd - k) * pmin + tail + r + pp * pmin;
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

/// The model without names: what binds and how much.
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
    // Split a request into pieces, one per group it touches: whole
    // inter-group stripes plus what is left over.
    let (whole, rest) = if c.groups > 1 && s > c.stripe {
        let f = (s / c.stripe).floor();
        (f, s - f * c.stripe)
    } else {
        (0.0, s)
    };
    let pieces = whole + if rest > 0.0 { 1.0 } else { 0.0 };
    let read = |random: bool| {
        let (mut d, mut ops) = (Demand::default(), 0.0);
        if whole > 0.0 {
            let (pd, po) = piece_read(&c, c.stripe, random);
            d = pd.scaled(whole);
            ops = po * whole;
        }
        if rest > 0.0 {
            let (pd, po) = piece_read(&c, rest, random);
            d = d.plus(pd);
            ops += po;
        }
        (d, ops)
    };
    let write = |random: bool| {
        let (mut d, mut ops, mut path) = (Demand::default(), 0.0, "full-stripe");
        if whole > 0.0 {
            let (pd, po, p) = piece_write(&c, c.stripe, random);
            d = pd.scaled(whole);
            ops = po * whole;
            path = p;
        }
        if rest > 0.0 {
            let (pd, po, p) = piece_write(&c, rest, random);
            d = d.plus(pd);
            ops += po;
            // Report the costlier path when the pieces differ.
            if whole == 0.0 || p != "full-stripe" {
                path = p;
            }
        }
        (d, ops, path)
    };
    let (mut dem, ops, path) = match w.pattern {
        Pattern::SeqRead => {
            let (d, o) = read(false);
            (d, o, None)
        }
        Pattern::RandRead => {
            let (d, o) = read(true);
            (d, o, None)
        }
        Pattern::SeqWrite => {
            let (d, o, p) = write(false);
            (d, o, Some(p))
        }
        Pattern::RandWrite => {
            let (d, o, p) = write(true);
            (d, o, Some(p))
        }
        Pattern::Mix { read_pct, random } => {
            let r = (read_pct / 100.0).clamp(0.0, 1.0);
            let (rd, ro) = read(random);
            let (wd, wo, p) = write(random);
            (
                rd.scaled(r).plus(wd.scaled(1.0 - r)),
                r * ro + (1.0 - r) * wo,
                Some(p),
            )
        }
    };
    dem.front_bytes = s;
    dem.ctrl_requests = pieces;
    if matches!(c.level, GroupLevel::R0 | GroupLevel::R1) {
        dem.parity_bytes = 0.0;
    }

    // Capacity of each part, in requests per second.
    let mut parts = [(PartKind::Drives, 0.0); 8];
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
    if let Some(b) = ctrl.max_bytes_per_s {
        push(PartKind::ControllerThroughput, b / share / dem.front_bytes);
    }
    if let Some(i) = ctrl.max_iops {
        push(PartKind::ControllerIops, i / share / dem.ctrl_requests);
    }
    if let (Some(x), true) = (ctrl.parity_bytes_per_s, dem.parity_bytes > 0.0) {
        push(PartKind::ControllerParity, x / share / dem.parity_bytes);
    }
    push(
        PartKind::Backend,
        ctrl.backend.bytes_per_s / share / dem.backend_bytes,
    );
    push(
        PartKind::HostLink,
        ctrl.host.bytes_per_s / share / dem.front_bytes,
    );
    if let Some(e) = &hw.enclosure {
        let per_ctrl = (n * share).ceil();
        let fullest = f64::from(e.slots).min(per_ctrl);
        // The fullest enclosure carries fullest/N of the back-end bytes.
        push(
            PartKind::Enclosure,
            e.uplink.bytes_per_s / (dem.backend_bytes * fullest / n),
        );
    }
    if let Some(h) = hw.host_bytes_per_s {
        push(PartKind::Host, h / dem.front_bytes);
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
    })
}

/// The parts the model knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    Drives,
    ControllerThroughput,
    ControllerIops,
    ControllerParity,
    Backend,
    HostLink,
    Enclosure,
    Host,
}

/// The model's numbers before any names are formatted (the search
/// evaluates many designs and names only the ones it prints).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quick {
    pub iops: f64,
    pub bytes_per_s: f64,
    pub binding: PartKind,
    parts: [(PartKind, f64); 8],
    len: usize,
    ops: f64,
    path: Option<&'static str>,
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
        PartKind::ControllerIops => format!("controller {kname} IOPS"),
        PartKind::ControllerParity => format!("controller {kname} parity engine"),
        PartKind::Backend => format!("back-end {} per controller", ctrl.backend.name),
        PartKind::HostLink => format!("host link {} per controller", ctrl.host.name),
        PartKind::Enclosure => match &hw.enclosure {
            Some(e) => format!(
                "enclosure uplink {} ({} x {})",
                e.uplink.name,
                geo.drives.div_ceil(e.slots),
                e.name
            ),
            None => "enclosure uplink".to_string(),
        },
        PartKind::Host => "host".to_string(),
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
        write_path: q.path.map(str::to_string),
        drive_ops_per_request: q.ops,
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::*;

    fn link(name: &str, mbs: f64) -> LinkSpec {
        LinkSpec {
            name: name.into(),
            lanes: 1,
            bytes_per_s: mbs * 1e6,
            shared_bus: false,
        }
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
            },
            controller: ControllerSpec {
                name: "ctl".into(),
                max_bytes_per_s: None,
                max_iops: None,
                parity_bytes_per_s: None,
                write_back,
                backend: link("sas12x8", 1e9),
                host: link("pcie", 1e9),
                max_drives: None,
                price: None,
            },
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        }
    }

    fn w(pattern: Pattern, size: u64) -> Workload {
        Workload {
            pattern,
            request_bytes: size,
        }
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
            request_bytes: 1u64 << sz,
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
