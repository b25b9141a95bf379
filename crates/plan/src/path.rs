//! The storage path's one model: what one array — its controller, the RAID
//! back end with its drives and drive-side links, and its host-side ports —
//! can do for a workload. `plan` predicts from it ([`crate::perf`]) and
//! `sim`'s array component asks [`path_limits`] for the same figures, so the
//! two tools cannot drift apart (issue 24: sim once dropped the catalog's
//! per-direction controller limits and kept a RAID model of its own).
//!
//! The figures are the bottleneck model's parts (`docs/MODEL.md` §3) grouped
//! the way a cluster simulation sees an array: the controller's own limits,
//! the back end (drives together with the buses and loops beside them: the
//! smaller of the two binds), and the host link. Concurrency is left out:
//! a simulator has its own queueing (MVA, events) for it.
//!
//! Where a part on the path has no published limit for the workload's
//! direction, [`unknowns`] names it: the answer is then an upper bound, not
//! a prediction (`docs/MODEL.md` §3.6).

use crate::PlanError;
use crate::hardware::Hardware;
use crate::hardware::{ControllerSpec, LinkSpec};
use crate::layout::{GroupLevel, Layout};
use crate::perf::{PartKind, Workload, controller_only, part_name, quick};
use serde::Serialize;

/// One component's limit for a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    /// Bytes/s at the front end (what the host sees).
    pub bytes_per_s: f64,
    /// The part that sets it, as plan's report names it.
    pub by: String,
}

/// What one array's components can do for a workload, each alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathLimits {
    /// The controller's own limits (throughput, read or write path, command
    /// rate, parity engine) for this workload; None when the catalog
    /// publishes none that applies.
    pub controller: Option<Limit>,
    /// Drives and the drive-side links and enclosure uplinks together.
    pub backend: Limit,
    /// The host-side link (an array's front-end ports).
    pub host_link: Limit,
    /// Drives that serve random requests independently (1 for streams,
    /// which use every drive together).
    pub units: u32,
    /// Unloaded latency of one request inside the array, s: the
    /// controller's command time and the drives (the round trip without the
    /// host side and the transfer, which a simulator's links carry).
    pub latency_s: f64,
    /// One request's unloaded round trip, hop by hop (§3.12).
    pub round_trip: RoundTrip,
    /// Parts with no published limit for this workload ([`unknowns`]).
    pub unknowns: Vec<String>,
    /// The drives' calibrated queue for this workload, when the drive
    /// carries a concurrency knee that covers it ([`device_queue`]): a
    /// simulator queues the back end by it (`backend` is then its saturated
    /// rate, `units` its stations).
    pub queue: Option<DeviceQueue>,
}

/// A calibrated device's queue for one workload (docs/MODEL.md §3.14): the
/// `units` drives are queueing stations a request visits `1/units` of the
/// time each, with `demand_s` of service at one (the request's drive
/// operations' demand `S`, spread evenly), and `delay_s` of its unloaded
/// latency overlaps other requests (the delay centre `Z = L − S`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceQueue {
    pub units: u32,
    /// Service demand of one request at one unit, s.
    pub demand_s: f64,
    /// The part of the unloaded latency outside the queue, s.
    pub delay_s: f64,
    /// The device's unloaded latency for this request, s (`L`).
    pub latency_s: f64,
    /// Requests in flight at the knee, `L / S` (balanced job bounds).
    pub knee: f64,
    /// The host's demand per request, s: a queueing centre of its own in
    /// series with the units, which merging does not relieve (0: none
    /// calibrated; docs/MODEL.md §8, "The merge model").
    pub host_s: f64,
    /// The host's cost per system call, s, shared by the requests one
    /// call carries: with `j` requests at the host it completes `j` per
    /// `host_call_s + j · host_s` (a load-dependent centre,
    /// [`crate::calibrate::HostCentre`]; 0: a fixed cost per request).
    pub host_call_s: f64,
    /// Requests per device command at the workload's depth (the fit's
    /// rule from its counted merge factors; 1: none).
    pub merge: f64,
}

/// The drives' queue for a request of `w.request_bytes` on `drives` drives
/// striped in `chunk_bytes`: one command per drive it touches (a drive's
/// chunks of one request are adjacent on it), so `min(chunks, drives)`
/// commands of `request_bytes / commands` each, when `drive` carries a
/// calibrated curve for the direction
/// and pattern (`plan calibrate` from a queue-depth sweep): the one
/// function plan's prediction and sim's array both ask. `None` for a
/// curve that does not cover the piece, a mixed workload (`read_fraction`
/// strictly between 0 and 1), and writes on a redundant level (their drive
/// operations are reads and writes of other sizes, which the curve of
/// one kind does not describe).
pub fn device_queue(
    drive: &crate::hardware::DriveSpec,
    level: GroupLevel,
    drives: u32,
    chunk_bytes: u64,
    w: &Workload,
) -> Option<DeviceQueue> {
    let r = w.pattern.read_fraction();
    let write = match r {
        x if x >= 1.0 => false,
        x if x <= 0.0 => true,
        _ => return None,
    };
    if (write && level != GroupLevel::R0) || w.buffered {
        return None;
    }
    let fit = drive.queue.get(write, w.pattern.is_random())?;
    let bytes = w.request_bytes as f64;
    let ops = (bytes / chunk_bytes.max(1) as f64)
        .ceil()
        .clamp(1.0, f64::from(drives.max(1)));
    let piece = bytes / ops;
    if !fit.covers(piece) {
        return None;
    }
    let units = drives.max(1);
    // The block layer merges adjacent queued requests into one command:
    // at the workload's depth the fit's merge factor m, each request then
    // a 1/m share of a command of m pieces, with the host's own demand
    // beside it (QueueFit::demands; m = 1 and no host: the plain curve).
    let in_flight = u32::try_from(u64::from(w.streams) * u64::from(w.qd)).unwrap_or(u32::MAX);
    let merge = fit.merge_at(piece, in_flight);
    let host = fit.host();
    let (l, s) = fit.times(piece * merge);
    let busy = ops * s / merge;
    Some(DeviceQueue {
        units,
        demand_s: busy / f64::from(units),
        delay_s: (l - host.alone_s() - busy).max(0.0),
        latency_s: l,
        knee: l / busy.max(host.io_s),
        host_s: host.io_s,
        host_call_s: host.call_s,
        merge,
    })
}

impl DeviceQueue {
    /// The host centre beside the units.
    pub fn host(&self) -> crate::calibrate::HostCentre {
        crate::calibrate::HostCentre {
            io_s: self.host_s,
            call_s: self.host_call_s,
        }
    }
}

/// Requests per second through `q` with `in_flight` requests kept
/// outstanding and `extra_delay_s` of each request's time spent outside
/// the device (host link, HBA, controller): exact MVA of `q.units`
/// identical queueing stations, each visited `1/units` of the time, and
/// one delay centre (Reiser and Lavenberg 1980). With one unit it is
/// [`crate::calibrate::mva`]; sim's analytic solver runs the same
/// recursion over the same station.
pub fn queued_rate(q: &DeviceQueue, extra_delay_s: f64, in_flight: u64) -> f64 {
    let z = q.delay_s + extra_delay_s.max(0.0);
    let n = f64::from(q.units.max(1));
    let (mut queue, mut x, mut host_q) = (0.0, 0.0, 0.0);
    for k in 1..=in_flight.clamp(1, 1_000_000) {
        let r = q.demand_s * (1.0 + queue);
        // The host centre (§8): its own queue, one call's cost shared by
        // the requests waiting there (HostCentre::residence_s).
        let rh = q.host().residence_s(host_q);
        let next = k as f64 / (z + n * r + rh);
        host_q = next * rh;
        // Far past the knee X no longer moves: a deep queue (a search over
        // many designs) costs no more than that.
        let settled = next - x <= 1e-13 * next;
        x = next;
        queue = x * r;
        if settled {
            break;
        }
    }
    x
}

/// The parts of plan's model that belong to the controller.
const CONTROLLER: [PartKind; 8] = [
    PartKind::LunRate,
    PartKind::ControllerThroughput,
    PartKind::ControllerRead,
    PartKind::ControllerWrite,
    PartKind::ControllerIops,
    PartKind::ControllerParity,
    PartKind::ControllerMemory,
    PartKind::MirrorLink,
];
/// The parts that make up the back end.
const BACKEND: [PartKind; 3] = [PartKind::Drives, PartKind::Backend, PartKind::Enclosure];

/// What the controller, the back end and the host link of `hw` with
/// `layout` can each do for workload `w`, bytes/s (the same figures
/// `plan`'s prediction takes its minimum over).
pub fn path_limits(layout: &Layout, hw: &Hardware, w: &Workload) -> Result<PathLimits, PlanError> {
    let geo = layout.geometry(hw.drive.capacity_bytes)?;
    let q = quick(layout, &geo, hw, w)?;
    let s = w.request_bytes as f64;
    let min_of = |kinds: &[PartKind]| -> Option<Limit> {
        q.parts[..q.len]
            .iter()
            .filter(|(k, _)| kinds.contains(k))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|&(k, iops)| Limit {
                bytes_per_s: iops * s,
                by: part_name(k, &geo, hw),
            })
    };
    // Drives are always a part, and the host link too: neither can be
    // missing from quick's list.
    let backend = min_of(&BACKEND).unwrap_or(Limit {
        bytes_per_s: f64::INFINITY,
        by: "back end".into(),
    });
    let host_link = min_of(&[PartKind::HostLink]).unwrap_or(Limit {
        bytes_per_s: f64::INFINITY,
        by: "host link".into(),
    });
    Ok(PathLimits {
        controller: min_of(&CONTROLLER),
        backend,
        host_link,
        units: match (&q.queue, w.pattern.is_random()) {
            (Some(d), _) => d.units,
            (None, true) => geo.drives,
            (None, false) => 1,
        },
        latency_s: q.round_trip.controller_s + q.round_trip.drive_s,
        round_trip: q.round_trip,
        unknowns: unknowns(layout, hw, w),
        queue: q.queue,
    })
}

/// A controller's own limit for workload `w` when the back end is not
/// built from a layout (a sim array whose back end is a measured figure):
/// the smallest of its throughput, read or write path and command rate,
/// from the same formulas [`path_limits`] uses.
pub fn controller_limit(ctrl: &ControllerSpec, w: &Workload) -> Option<Limit> {
    let s = w.request_bytes as f64;
    controller_only(ctrl, w)
        .into_iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, iops)| Limit {
            bytes_per_s: iops * s,
            by: match k {
                PartKind::ControllerRead => format!("controller {} read path", ctrl.name),
                PartKind::ControllerWrite => format!("controller {} write path", ctrl.name),
                PartKind::ControllerIops => format!("controller {} IOPS", ctrl.name),
                PartKind::MirrorLink => format!("controller {} cache mirror", ctrl.name),
                PartKind::LunRate => format!(
                    "controller {} per-LUN prefetch/destage ({} LUNs)",
                    ctrl.name, ctrl.luns
                ),
                _ => format!("controller {} throughput", ctrl.name),
            },
        })
}

/// What one controller's host link carries for workload `w`, bytes/s: the
/// same figure [`path_limits`] gives as `host_link` for one controller
/// (reads and writes share it as the link's duplex allows).
pub fn host_link_limit(ctrl: &ControllerSpec, w: &Workload) -> f64 {
    let s = w.request_bytes as f64;
    let r = w.pattern.read_fraction();
    ctrl.host.capacity(s * r, s * (1.0 - r)) * s
}

/// One request's unloaded round trip, hop by hop, seconds (docs/MODEL.md
/// §3.12): what a stream with few requests in flight waits for between
/// issuing a request and being able to issue the next in its place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RoundTrip {
    /// The initiator's HBA and driver and the fabric's switch hops, both
    /// ways (`--host-latency`; 0 when not given).
    pub host_s: f64,
    /// The controller's own command time (`cmd_latency`; 0 when not
    /// published: then [`stream_unknown`] says so where it binds).
    pub controller_s: f64,
    /// The drive operations the request waits for (0 for a write a
    /// write-back cache absorbs).
    pub drive_s: f64,
    /// Moving the request's bytes over the host link.
    pub transfer_s: f64,
}

impl RoundTrip {
    /// The whole round trip, seconds.
    pub fn total_s(&self) -> f64 {
        self.host_s + self.controller_s + self.drive_s + self.transfer_s
    }
}

/// The fixed part of a request's round trip through `ctrl`: the host side
/// (HBA, fabric) and the controller's command time, seconds.
pub fn fixed_latency(ctrl: &ControllerSpec) -> (f64, f64) {
    (ctrl.host_latency_s, ctrl.cmd_latency_s.unwrap_or(0.0))
}

/// One stream's own limit, bytes/s, by Little's law (Little 1961): with
/// `in_flight` requests of `request_bytes` outstanding, each taking
/// `rt` from issue to completion, no more than
/// `in_flight × request_bytes / rt.total_s()` move per second, whatever
/// the ports and drives could carry together (docs/MODEL.md §3.12).
pub fn stream_limit(in_flight: f64, request_bytes: f64, rt: &RoundTrip) -> f64 {
    let t = rt.total_s();
    if t > 0.0 {
        in_flight * request_bytes / t
    } else {
        f64::INFINITY
    }
}

/// The line that makes a stream's Little's-law figure an upper bound when
/// the controller's command time is not published: the round trip then
/// counts only the drives, the transfer and the host side given.
pub fn stream_unknown(ctrl: &ControllerSpec) -> Option<String> {
    ctrl.cmd_latency_s.is_none().then(|| {
        format!(
            "one stream's round trip leaves out the controller's command time: no published figure for {}; \
             measure it from a queue-depth-1 run, or give --controller-latency (sim: array.latency)",
            ctrl.name
        )
    })
}

/// Who serves a LUN in a dual-controller array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ownership {
    /// Either controller serves any LUN through its ports.
    ActiveActive,
    /// A LUN is served only through its owning controller's ports (the
    /// partner takes over on failure).
    ActivePassive,
}

/// How the host's multipathing uses the paths to one LUN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Multipath {
    /// One active path per LUN, the others standby.
    Failover,
    /// Requests spread over every usable path (round robin, least queue).
    Balanced,
}

/// Front-end ports that carry traffic when `luns` LUNs are used on an
/// array of `controllers` controllers with `ports` ports in all
/// (docs/MODEL.md §3.10): with failover multipathing each LUN uses one
/// path, so at most `luns` ports work (LUNs spread over the ports and,
/// active/passive, alternately owned); with balanced multipathing a LUN
/// uses every port it can reach: all of them on an active/active array, its
/// owner's `ports / controllers` on an active/passive one, of which
/// `min(luns, controllers)` owners work.
pub fn ports_in_use(
    ports: u32,
    controllers: u32,
    luns: u32,
    ownership: Ownership,
    multipath: Multipath,
) -> u32 {
    let ports = ports.max(1);
    let ctrls = controllers.clamp(1, ports);
    let luns = luns.max(1);
    match (multipath, ownership) {
        (Multipath::Failover, _) => luns.min(ports),
        (Multipath::Balanced, Ownership::ActiveActive) => ports,
        (Multipath::Balanced, Ownership::ActivePassive) => luns.min(ctrls) * (ports / ctrls),
    }
}

impl Ownership {
    /// From the option's text (`active-active`, `active-passive`).
    pub fn parse(s: &str) -> Result<Ownership, PlanError> {
        match s {
            "active-active" => Ok(Ownership::ActiveActive),
            "active-passive" => Ok(Ownership::ActivePassive),
            other => Err(PlanError::invalid(
                "ownership",
                format!("'{other}': write active-active or active-passive"),
            )),
        }
    }
}

impl Multipath {
    /// From the option's text (`failover`, `balanced`).
    pub fn parse(s: &str) -> Result<Multipath, PlanError> {
        match s {
            "failover" => Ok(Multipath::Failover),
            "balanced" => Ok(Multipath::Balanced),
            other => Err(PlanError::invalid(
                "multipath",
                format!("'{other}': write failover (one path per LUN) or balanced (all paths)"),
            )),
        }
    }
}

/// `link` restricted to the `in_use` of its lanes (ports) that carry
/// traffic ([`ports_in_use`]), renamed to say so.
pub fn link_in_use(link: &LinkSpec, in_use: u32) -> LinkSpec {
    let lanes = link.lanes.max(1);
    let used = in_use.clamp(1, lanes);
    let f = f64::from(used) / f64::from(lanes);
    LinkSpec {
        name: if used == lanes {
            link.name.clone()
        } else {
            format!("{} ({used} of {lanes} ports in use)", link.name)
        },
        lanes: used,
        bytes_per_s: link.bytes_per_s * f,
        shared_bus: link.shared_bus,
        write_bytes_per_s: link.write_bytes_per_s.map(|w| w * f),
    }
}

/// Expected links of an 802.3ad bond of `links` that carry traffic when
/// `flows` connections hash onto it (docs/MODEL.md §3.11): each connection
/// stays on one link, chosen by a hash of its addresses and ports, so the
/// links used are the occupied bins of `flows` balls thrown into `links`
/// bins: `L·(1 − (1 − 1/L)^f)`.
pub fn bonded_links_in_use(links: u32, flows: u64) -> f64 {
    let l = f64::from(links.max(1));
    if flows == 0 {
        return 0.0;
    }
    let f = i32::try_from(flows).unwrap_or(i32::MAX);
    l * (1.0 - (1.0 - 1.0 / l).powi(f))
}

/// Bytes that cross the cache mirror per `written` bytes: a dual
/// controller that mirrors its write-back cache sends every written byte to
/// the partner before it acknowledges the write (docs/MODEL.md §3.9).
pub fn mirrored_bytes(written: f64) -> f64 {
    written
}

/// Bytes that cross a RAID controller's cache memory for one request
/// (docs/MODEL.md §3.9): host data in or out (`front_read` +
/// `front_write`), drive data in or out (`back_read` + `back_write`, parity
/// and read-modify-write reads included); with parity, the parity engine
/// reads the new data and the old data and parity it combines and writes
/// the parity; with a mirrored cache the written data is read once more to
/// send it to the partner.
pub fn memory_crossings(
    front_read: f64,
    front_write: f64,
    back_read: f64,
    back_write: f64,
    parity_bytes: f64,
    mirrored: bool,
) -> f64 {
    let parity = if parity_bytes > 0.0 {
        front_write + back_read + parity_bytes
    } else {
        0.0
    };
    let mirror = if mirrored { front_write } else { 0.0 };
    front_read + front_write + back_read + back_write + parity + mirror
}

/// What comparable parts of a controller's class measured, shown beside an
/// upper bound on its write path (docs/MODEL.md §3.13).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Typical {
    /// The era and kind of part.
    pub class: String,
    /// The measured range, when a sourced one exists for the class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low_bytes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high_bytes_per_s: Option<f64>,
    /// The published measurements it is taken from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// One line for tables and reports: the range and its sources, or that
    /// none is sourced.
    pub note: String,
}

/// The typical write range of `ctrl`'s class, when its catalog entry names
/// a class: the sourced range, or a line saying no sourced set of
/// measurements exists for the class (never an invented one).
pub fn typical_write(ctrl: &ControllerSpec) -> Option<Typical> {
    let class = ctrl.class.clone()?;
    Some(match &ctrl.typical_write {
        Some(t) => Typical {
            note: format!(
                "typical for its class ({class}): {:.0}-{:.0} MB/s measured on comparable parts ({})",
                t.low_bytes_per_s / 1e6,
                t.high_bytes_per_s / 1e6,
                t.source
            ),
            class,
            low_bytes_per_s: Some(t.low_bytes_per_s),
            high_bytes_per_s: Some(t.high_bytes_per_s),
            source: Some(t.source.clone()),
        },
        None => Typical {
            note: format!(
                "no typical range: no sourced measurements of comparable parts of its class ({class}) are in the catalog"
            ),
            class,
            low_bytes_per_s: None,
            high_bytes_per_s: None,
            source: None,
        },
    })
}

/// The parts on the path that could bind `w` but have no published limit:
/// a RAID-on-chip's write path for parity RAID (`parity_on_controller`)
/// without `max_write`, `parity_rate` or `memory_bandwidth`, and a
/// controller write path whose mechanism the catalog names
/// (`write_limit_by`: a mirrored write cache) without a figure. Each line
/// says what is missing and how to supply it.
pub fn unknowns(layout: &Layout, hw: &Hardware, w: &Workload) -> Vec<String> {
    let c = &hw.controller;
    let mut out = Vec::new();
    let beside = typical_write(c).map_or(String::new(), |t| format!("; {}", t.note));
    // A RAID-on-chip computing parity moves each written byte through its
    // cache memory several times (§3.9); without any published figure for
    // that path its limit is unknown.
    let parity = matches!(layout.level, GroupLevel::R5 | GroupLevel::R6);
    if parity
        && c.parity_on_controller
        && w.pattern.read_fraction() < 1.0
        && c.max_write_bytes_per_s.is_none()
        && c.parity_bytes_per_s.is_none()
        && c.memory_bytes_per_s.is_none()
    {
        out.push(format!(
            "the controller's write path (parity on the RAID-on-chip, through its cache memory) is not modelled: \
             no published figure for {}; calibrate it with `plan calibrate` from one run, or give \
             --controller-max-write or --controller-memory{beside}",
            c.name
        ));
        return out;
    }
    if w.pattern.read_fraction() < 1.0
        && c.max_write_bytes_per_s.is_none()
        && c.mirror.is_none()
        && c.memory_bytes_per_s.is_none()
        && let Some(by) = &c.write_limit_by
    {
        out.push(format!(
            "the controller's write path ({by}) is not modelled: no published figure for {}; \
             calibrate it with `plan calibrate` from one run, or give --controller-max-write{beside}",
            c.name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::perf::predict;
    use storlab_types::Pattern;

    /// MVA by hand. One unit, Z = S = 1 ms: 500, 800, 937.5 requests/s
    /// (calibrate's `mva`). Two units of 0.5 ms each, Z = 1 ms: k = 1:
    /// R = 0.5 ms per unit, X = 1 / (1 + 2 × 0.5) ms = 500/s, Q = 0.25;
    /// k = 2: R = 0.625 ms, X = 2 / (1 + 1.25) ms = 888.89/s.
    #[test]
    fn the_device_queue_is_mva_over_its_units() {
        let q = |units, demand_s| DeviceQueue {
            units,
            demand_s,
            delay_s: 1e-3,
            latency_s: 2e-3,
            knee: 2.0,
            host_s: 0.0,
            host_call_s: 0.0,
            merge: 1.0,
        };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        let one = q(1, 1e-3);
        for n in 1..=40 {
            assert!(near(
                queued_rate(&one, 0.0, n),
                crate::calibrate::mva(1e-3, 1e-3, n as u32)
            ));
        }
        assert!(near(queued_rate(&one, 0.0, 3), 937.5));
        let two = q(2, 0.5e-3);
        assert!(near(queued_rate(&two, 0.0, 1), 500.0));
        assert!(near(queued_rate(&two, 0.0, 2), 2.0 / 2.25e-3));
        // A delay outside the device adds to Z: one request, 1 + 1 + 0.5 ms.
        assert!(near(queued_rate(&one, 0.5e-3, 1), 1.0 / 2.5e-3));
        // Saturates where every unit is busy, 1 / demand, never above.
        assert!(queued_rate(&two, 0.0, 10_000) < 2000.0 * (1.0 + 1e-9));
        assert!(queued_rate(&two, 0.0, 10_000) > 1980.0);
    }

    /// The curve is asked for one command per drive a request touches: a
    /// 1 MiB read on one drive is one 1 MiB command, on R0/4 with 256 KiB
    /// chunks four of 256 KiB; writes on redundant levels and mixes are
    /// not covered; a drive without a curve has none.
    #[test]
    fn the_device_queue_splits_a_request_into_its_drives_commands() {
        let fit = crate::calibrate::QueueFit {
            latency_s: 0.1e-3,
            latency_bytes_per_s: Some(1e9),
            demand_s: 0.02e-3,
            demand_bytes_per_s: Some(2e9),
            only_bytes: None,
            points: 12,
            min_in_flight: 1,
            max_in_flight: 32,
            rms_log_error: 0.05,
            knees: Vec::new(),
            host_s: None,
            host_call_s: None,
            merges: Vec::new(),
        };
        let mut d = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        let w = Workload::new(Pattern::SeqRead, 1 << 20);
        assert!(device_queue(&d, GroupLevel::R0, 1, 256 << 10, &w).is_none());
        d.queue.seq_read = Some(fit.clone());
        let b = f64::from(1u32 << 20);
        let one = device_queue(&d, GroupLevel::R0, 1, 256 << 10, &w).unwrap();
        assert_eq!(one.units, 1);
        assert!((one.latency_s - (0.1e-3 + b / 1e9)).abs() < 1e-15);
        assert!((one.demand_s - (0.02e-3 + b / 2e9)).abs() < 1e-15);
        let four = device_queue(&d, GroupLevel::R0, 4, 256 << 10, &w).unwrap();
        let piece = b / 4.0;
        assert!((four.latency_s - (0.1e-3 + piece / 1e9)).abs() < 1e-15);
        // Four commands' demand spread over four drives.
        assert!((four.demand_s - (0.02e-3 + piece / 2e9)).abs() < 1e-15);
        d.queue.seq_write = Some(fit);
        let wr = Workload::new(Pattern::SeqWrite, 1 << 20);
        assert!(device_queue(&d, GroupLevel::R0, 4, 256 << 10, &wr).is_some());
        assert!(device_queue(&d, GroupLevel::R5, 4, 256 << 10, &wr).is_none());
        let mix = Workload::new(
            Pattern::Mix {
                read_pct: 70.0,
                random: false,
            },
            1 << 20,
        );
        assert!(device_queue(&d, GroupLevel::R0, 4, 256 << 10, &mix).is_none());
    }

    /// Merged requests, by hand (docs/MODEL.md §8): a 4 KiB curve of
    /// L = 100 µs, S = 40 µs with a host demand of 15 µs, counted 4
    /// requests per command at QD 32. A sequential 4 KiB read at QD 32:
    /// each request 40/4 = 10 µs of the device, 15 µs of the host, and
    /// 100 − 15 − 10 = 75 µs of delay; alone 1 / 100 µs = 10,000/s; two in
    /// flight: Q = 0.15 (host), 0.1 (device), R = 17.25 + 11 µs, X =
    /// 2 / 103.25 µs = 19,370.5/s; saturated at the host, 1 / 15 µs =
    /// 66,667/s (not the device's 25,000/s of unmerged commands). Random
    /// requests are not merged: the plain curve.
    #[test]
    fn merged_requests_share_a_command_but_each_pays_the_host() {
        use crate::calibrate::MergePoint;
        let fit = crate::calibrate::QueueFit {
            latency_s: 100e-6,
            latency_bytes_per_s: None,
            demand_s: 40e-6,
            demand_bytes_per_s: None,
            only_bytes: Some(4096),
            points: 6,
            min_in_flight: 1,
            max_in_flight: 32,
            rms_log_error: 0.05,
            knees: Vec::new(),
            host_s: Some(15e-6),
            host_call_s: None,
            merges: vec![MergePoint {
                bytes: 4096,
                in_flight: 32,
                factor: 4.0,
            }],
        };
        let mut d = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        d.queue.seq_read = Some(fit.clone());
        let mut w = Workload::new(Pattern::SeqRead, 4096);
        w.qd = 32;
        let q = device_queue(&d, GroupLevel::R0, 1, 256 << 10, &w).unwrap();
        let near = |a: f64, b: f64, tol: f64| (a / b - 1.0).abs() < tol;
        assert!(near(q.merge, 4.0, 1e-12), "{q:?}");
        assert!(near(q.demand_s, 10e-6, 1e-9), "{q:?}");
        assert!(near(q.host_s, 15e-6, 1e-9), "{q:?}");
        assert!(near(q.delay_s, 75e-6, 1e-9), "{q:?}");
        assert!(near(queued_rate(&q, 0.0, 1), 10_000.0, 1e-9));
        assert!(near(queued_rate(&q, 0.0, 2), 2.0 / 103.25e-6, 1e-9));
        assert!(near(queued_rate(&q, 0.0, 100_000), 1.0 / 15e-6, 1e-3));
        // The same through calibrate's function (plan and sim share it).
        let x2 = fit.predict(4096, 2).unwrap();
        // At QD 2 the rule interpolates 1 → 4 over log2 1..32: 1.6.
        assert!(near(fit.merge_at(4096.0, 2), 1.6, 1e-12));
        assert!(x2 > 0.0);
        // Random reads with the same curve and no counts: unmerged.
        let mut plain = fit;
        plain.merges.clear();
        plain.host_s = None;
        d.queue.rand_read = Some(plain);
        let rw = Workload {
            qd: 32,
            ..Workload::new(Pattern::RandRead, 4096)
        };
        let r = device_queue(&d, GroupLevel::R0, 1, 256 << 10, &rw).unwrap();
        assert_eq!((r.merge, r.host_s), (1.0, 0.0));
        assert!(near(queued_rate(&r, 0.0, 100_000), 25_000.0, 1e-3));
    }

    /// A batching host by hand (docs/MODEL.md §8): random 4 KiB reads on a
    /// curve of L = 100 µs, S = 20 µs with a host of 10 µs per request and
    /// 30 µs per call. The delay is 100 − (30 + 10) − 20 = 40 µs; one
    /// request: 10,000/s (Q = 0.4 at the host, 0.2 at the device); two:
    /// R = 30 + 10 × 1.4 = 44 µs at the host, 20 × 1.2 = 24 µs at the
    /// device, X = 2 / 108 µs = 18,518.5/s. Deep, the device's 1 / 20 µs
    /// = 50,000/s binds: the host's calls then carry several requests each
    /// (10 + 30/j µs per request), where a host paying its 40 µs per
    /// request would hold it to 25,000/s.
    #[test]
    fn a_batching_host_shares_its_call_among_the_requests_waiting() {
        let fit = crate::calibrate::QueueFit {
            latency_s: 100e-6,
            latency_bytes_per_s: None,
            demand_s: 20e-6,
            demand_bytes_per_s: None,
            only_bytes: Some(4096),
            points: 6,
            min_in_flight: 1,
            max_in_flight: 32,
            rms_log_error: 0.05,
            knees: Vec::new(),
            host_s: Some(10e-6),
            host_call_s: Some(30e-6),
            merges: Vec::new(),
        };
        let mut d = Catalog::builtin().drive("dc-s3700-800gb").unwrap();
        d.queue.rand_read = Some(fit.clone());
        let w = Workload::new(Pattern::RandRead, 4096).with_concurrency(1, 2);
        let q = device_queue(&d, GroupLevel::R0, 1, 256 << 10, &w).unwrap();
        let near = |a: f64, b: f64, tol: f64| (a / b - 1.0).abs() < tol;
        assert_eq!((q.host_s, q.host_call_s, q.merge), (10e-6, 30e-6, 1.0));
        assert!(near(q.delay_s, 40e-6, 1e-9), "{q:?}");
        assert!(near(queued_rate(&q, 0.0, 1), 10_000.0, 1e-9));
        assert!(near(queued_rate(&q, 0.0, 2), 2.0 / 108e-6, 1e-9));
        assert!(near(queued_rate(&q, 0.0, 3), 25_632.911_392_405, 1e-9));
        let deep = queued_rate(&q, 0.0, 100_000);
        assert!(near(deep, 50_000.0, 1e-6), "{deep}");
        let unbatched = DeviceQueue {
            host_s: 40e-6,
            host_call_s: 0.0,
            ..q
        };
        assert!(near(queued_rate(&unbatched, 0.0, 100_000), 25_000.0, 1e-6));
        // plan and calibrate's own prediction agree (one function).
        assert!(near(
            queued_rate(&q, 0.0, 2),
            fit.predict(4096, 2).unwrap(),
            1e-12
        ));
        // plan's prediction queues by it.
        let h = Hardware {
            drive: d,
            ..hw("md-nvme-direct", "dc-s3700-800gb")
        };
        let l: Layout = "R0/1".parse().unwrap();
        let p = predict(&l, &h, &w).unwrap();
        assert!(
            p.explanation.contains("calibrated queue"),
            "{}",
            p.explanation
        );
    }

    fn hw(ctrl: &str, drive: &str) -> Hardware {
        let c = Catalog::builtin();
        Hardware {
            drive: c.drive(drive).unwrap(),
            controller: c.controller(ctrl).unwrap(),
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        }
    }

    #[test]
    fn the_prediction_is_the_smallest_path_limit() {
        let h = hw("perc-6e", "cheetah-15k5-300gb");
        let l: Layout = "R5/12".parse().unwrap();
        for p in [
            Pattern::SeqRead,
            Pattern::SeqWrite,
            Pattern::RandRead,
            Pattern::RandWrite,
        ] {
            let size = if p.is_random() { 4096 } else { 1 << 20 };
            // A deep queue: concurrency, which sim models by itself, does not bind.
            let w = Workload::new(p, size).with_concurrency(16, 256);
            let pl = path_limits(&l, &h, &w).unwrap();
            let pr = predict(&l, &h, &w).unwrap();
            let min = pl
                .controller
                .as_ref()
                .map_or(f64::INFINITY, |c| c.bytes_per_s)
                .min(pl.backend.bytes_per_s)
                .min(pl.host_link.bytes_per_s);
            assert!((min - pr.bytes_per_s).abs() / min < 1e-12, "{p:?}");
        }
    }

    #[test]
    fn the_per_direction_controller_limit_reaches_the_path() {
        // PERC 6/E: 1.5 GB/s read path (Dell's performance analysis), no
        // overall throughput figure; 24 fast drives on 2 x4 SAS 3Gb/s.
        let h = hw("perc-6e", "cheetah-15k5-300gb");
        let l: Layout = "R0/24".parse().unwrap();
        let w = Workload::new(Pattern::SeqRead, 1 << 20);
        let pl = path_limits(&l, &h, &w).unwrap();
        let c = pl.controller.unwrap();
        assert_eq!(c.bytes_per_s, 1.5e9);
        assert!(c.by.contains("read path"), "{}", c.by);
        // Writes have no published limit on this controller.
        let wr = path_limits(&l, &h, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!(wr.controller.is_none());
    }

    #[test]
    fn a_named_write_path_without_a_figure_is_an_unknown() {
        let h = hw("equallogic-ps4000", "cheetah-15k5-300gb");
        let l: Layout = "R5/8".parse().unwrap();
        let rd = predict(&l, &h, &Workload::new(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(!rd.bound && rd.unknowns.is_empty());
        let wr = predict(&l, &h, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!(wr.bound);
        assert_eq!(wr.unknowns.len(), 1);
        assert!(
            wr.unknowns[0].contains("cache mirroring"),
            "{:?}",
            wr.unknowns
        );
        // A published figure makes it a prediction again.
        let mut known = h.clone();
        known.controller.max_write_bytes_per_s = Some(100e6);
        let k = predict(&l, &known, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!(!k.bound && k.unknowns.is_empty());
        assert!((k.bytes_per_s - 100e6).abs() < 1.0);
    }

    #[test]
    fn the_cache_memory_bounds_writes_by_its_crossings() {
        // RAID 6 of 10, full-stripe 1 MiB writes: into the cache 1, to the
        // drives 10/8, parity engine reads the data 1 and writes P and Q
        // 2/8: 3.5 crossings per byte. Reads: drives in, host out: 2.
        assert_eq!(memory_crossings(0.0, 1.0, 0.0, 1.25, 0.25, false), 3.5);
        assert_eq!(memory_crossings(1.0, 0.0, 1.0, 0.0, 0.0, false), 2.0);
        // A RAID 5 read-modify-write of 4 KiB: old data and parity in
        // (8 KiB), new data and parity out (8 KiB), host in 4, engine
        // reads new + old data + old parity (12) and writes parity (4).
        assert_eq!(
            memory_crossings(0.0, 4.0, 8.0, 8.0, 4.0, false),
            4.0 + 8.0 + 8.0 + 12.0 + 4.0
        );
        // Mirroring reads the written data once more.
        assert_eq!(memory_crossings(0.0, 1.0, 0.0, 1.0, 0.0, true), 3.0);

        let mut h = hw("megaraid-9361-8i", "pm1733-3.84tb");
        h.controller.memory_bytes_per_s = Some(3.5e9);
        let l: Layout = "R6/10,chunk=64k".parse().unwrap();
        let w = predict(&l, &h, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!((w.bytes_per_s - 1.0e9).abs() < 1.0, "{w:?}");
        assert!(w.binding.contains("cache memory"), "{}", w.binding);
        let r = predict(&l, &h, &Workload::new(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!((r.bytes_per_s - 1.75e9).abs() < 1.0, "{r:?}");
    }

    #[test]
    fn a_mirrored_write_cache_sends_every_written_byte_to_the_partner() {
        assert_eq!(mirrored_bytes(4096.0), 4096.0);
        let c = Catalog::builtin();
        let mut h = hw("equallogic-ps4000", "pm1733-3.84tb");
        // Fast everything else: the mirror over one 1GbE iSCSI port binds.
        h.controller.host = c.link("100gbe-iscsi").unwrap();
        h.controller.backend = c.link("sas12x8").unwrap();
        let gbe = c.link("1gbe-iscsi").unwrap();
        h.controller.mirror = Some(gbe.clone());
        let l: Layout = "R10/2/8".parse().unwrap();
        let w = predict(&l, &h, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!((w.bytes_per_s - gbe.write_rate()).abs() < 1.0, "{w:?}");
        assert!(
            w.binding.contains("cache mirror 1gbe-iscsi"),
            "{}",
            w.binding
        );
        // The mirror path is now modelled: a prediction, not a bound.
        assert!(!w.bound, "{:?}", w.unknowns);
        // Reads do not cross it.
        let r = predict(&l, &h, &Workload::new(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(r.bytes_per_s > 2.0 * gbe.bytes_per_s, "{r:?}");
        // A 70/30 mix: 0.3 of each request's bytes cross it.
        let m = Pattern::Mix {
            read_pct: 70.0,
            random: false,
        };
        let p = predict(&l, &h, &Workload::new(m, 1 << 20)).unwrap();
        assert!(p.bytes_per_s <= gbe.write_rate() / 0.3 + 1.0, "{p:?}");
    }

    #[test]
    fn one_streams_limit_is_its_bytes_in_flight_over_its_round_trip() {
        // 4 requests of 1 MiB in flight; 0.1 ms HBA and fabric, 0.05 ms
        // controller, 2 ms drives, 2.5 ms transfer: 4.65 ms each, so
        // 4 × 1,048,576 / 4.65 ms = 902.001 MB/s.
        let rt = RoundTrip {
            host_s: 0.1e-3,
            controller_s: 0.05e-3,
            drive_s: 2e-3,
            transfer_s: 2.5e-3,
        };
        assert!((rt.total_s() - 4.65e-3).abs() < 1e-15);
        let x = stream_limit(4.0, 1048576.0, &rt);
        assert!((x - 902_000_860.215).abs() < 1.0, "{x}");
        assert_eq!(stream_limit(1.0, 1.0, &RoundTrip::default()), f64::INFINITY);
        // path_limits carries the array's part of it (controller and
        // drives; the links carry the transfer in a simulator).
        let mut h = hw("perc-6e", "cheetah-15k5-300gb");
        h.controller.cmd_latency_s = Some(40e-6);
        let l: Layout = "R0/4,chunk=256k".parse().unwrap();
        let pl = path_limits(&l, &h, &Workload::new(Pattern::SeqRead, 1 << 20)).unwrap();
        assert_eq!(pl.round_trip.controller_s, 40e-6);
        assert!(pl.round_trip.drive_s > 0.0 && pl.round_trip.transfer_s > 0.0);
        assert!((pl.latency_s - (40e-6 + pl.round_trip.drive_s)).abs() < 1e-15);
        assert!(stream_unknown(&h.controller).is_none());
        h.controller.cmd_latency_s = None;
        assert!(stream_unknown(&h.controller).is_some());
    }

    #[test]
    fn a_bound_shows_its_classs_typical_range_or_says_none_is_sourced() {
        // Built in: the PERC 6/E's class has no sourced set of parity-write
        // measurements, and the bound says so rather than invent one.
        let h = hw("perc-6e", "cheetah-15k5-300gb");
        let l: Layout = "R5/8".parse().unwrap();
        let w = Workload::new(Pattern::SeqWrite, 1 << 20);
        let p = predict(&l, &h, &w).unwrap();
        let t = p.typical.clone().expect("typical");
        assert!(t.class.contains("LSI SAS1078"), "{t:?}");
        assert_eq!((t.low_bytes_per_s, t.source.as_deref()), (None, None));
        assert!(
            p.unknowns[0].contains("no typical range"),
            "{:?}",
            p.unknowns
        );
        // Reads are not bounds: no range beside them.
        let r = predict(&l, &h, &Workload::new(Pattern::SeqRead, 1 << 20)).unwrap();
        assert!(r.typical.is_none());
        // A user's catalog that cites measurements of comparable parts
        // (the figures here are the test's, not a real data set): the range
        // and its source stand beside the bound, which is not changed.
        let mut c = Catalog::builtin();
        let entry = "[[controller]]\nname = \"roc-x\"\nwrite_back = true\nparity_on_controller = true\nbackend = \"sas6x8\"\nhost = \"pcie2x8\"\nclass = \"RAID-on-chip, 6Gb/s SAS\"\ntypical_write = [\"300MB/s\", \"600MB/s\"]\ntypical_source = \"review A (2010), review B (2011)\"\nsource = \"test\"\n";
        c.extend("mine.toml", entry).unwrap();
        let mut h2 = h.clone();
        h2.controller = c.controller("roc-x").unwrap();
        let p2 = predict(&l, &h2, &w).unwrap();
        let t = p2.typical.clone().expect("typical");
        assert_eq!(
            (t.low_bytes_per_s, t.high_bytes_per_s),
            (Some(300e6), Some(600e6))
        );
        assert!(p2.bound);
        assert!(
            p2.unknowns[0].contains(
                "300-600 MB/s measured on comparable parts (review A (2010), review B (2011))"
            ),
            "{:?}",
            p2.unknowns
        );
        // A range without its sources, or upside down, is refused.
        for bad in [
            entry.replace(
                "typical_source = \"review A (2010), review B (2011)\"\n",
                "",
            ),
            entry.replace("[\"300MB/s\", \"600MB/s\"]", "[\"600MB/s\", \"300MB/s\"]"),
        ] {
            let e = Catalog::builtin()
                .extend("bad.toml", &bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("typical_write"), "{e}");
        }
    }

    #[test]
    fn lun_ownership_and_multipathing_decide_the_ports_that_work() {
        use Multipath::*;
        use Ownership::*;
        // A CX600-like array: 2 storage processors, 8 front-end ports.
        assert_eq!(ports_in_use(8, 2, 1, ActivePassive, Failover), 1);
        assert_eq!(ports_in_use(8, 2, 3, ActivePassive, Failover), 3);
        assert_eq!(ports_in_use(8, 2, 20, ActivePassive, Failover), 8);
        assert_eq!(ports_in_use(8, 2, 1, ActivePassive, Balanced), 4);
        assert_eq!(ports_in_use(8, 2, 2, ActivePassive, Balanced), 8);
        assert_eq!(ports_in_use(8, 2, 1, ActiveActive, Balanced), 8);
        assert_eq!(ports_in_use(8, 2, 1, ActiveActive, Failover), 1);
    }

    #[test]
    fn per_lun_prefetch_and_destage_scale_with_the_luns() {
        // A measured single-LUN limit of 300 MB/s read, 200 MB/s write.
        let mut h = hw("megaraid-9361-8i", "pm1733-3.84tb");
        h.controller.lun_read_bytes_per_s = Some(300e6);
        h.controller.lun_write_bytes_per_s = Some(200e6);
        let l: Layout = "R10/2/8".parse().unwrap();
        let rate = |h: &Hardware, p| {
            predict(&l, h, &Workload::new(p, 1 << 20))
                .unwrap()
                .bytes_per_s
        };
        assert!((rate(&h, Pattern::SeqRead) - 300e6).abs() < 1.0);
        assert!((rate(&h, Pattern::SeqWrite) - 200e6).abs() < 1.0);
        h.controller.luns = 4;
        assert!((rate(&h, Pattern::SeqRead) - 1200e6).abs() < 1.0);
        assert!((rate(&h, Pattern::SeqWrite) - 800e6).abs() < 1.0);
        // A 50/50 mix: read-ahead and destage are separate engines, each
        // busy for its half: 0.5 / (4 × 200 MB/s) binds → 1.6 GB/s.
        let m = Pattern::Mix {
            read_pct: 50.0,
            random: false,
        };
        let p = predict(&l, &h, &Workload::new(m, 1 << 20)).unwrap();
        assert!(
            p.parts
                .iter()
                .any(|x| x.name.contains("per-LUN") && (x.max_bytes_per_s - 1.6e9).abs() < 1.0),
            "{:?}",
            p.parts
        );
    }

    #[test]
    fn hashed_flows_use_fewer_bonded_links_than_a_perfect_pool() {
        // 4 links: one flow uses 1, two flows 4·(1 − 0.75²) = 1.75, four
        // 4·(1 − 0.75⁴) = 2.734375; many flows approach 4.
        assert_eq!(bonded_links_in_use(4, 1), 1.0);
        assert!((bonded_links_in_use(4, 2) - 1.75).abs() < 1e-12);
        assert!((bonded_links_in_use(4, 4) - 2.734375).abs() < 1e-12);
        assert!(bonded_links_in_use(4, 1000) > 3.999);
        assert_eq!(bonded_links_in_use(1, 7), 1.0);
        assert_eq!(bonded_links_in_use(4, 0), 0.0);
    }

    #[test]
    fn a_raid_on_chip_parity_write_without_a_figure_is_an_unknown() {
        // PERC 6/E (LSI SAS1078): a published read path, no write figure.
        let h = hw("perc-6e", "cheetah-15k5-300gb");
        let seq = |l: &str, p| {
            let l: Layout = l.parse().unwrap();
            predict(&l, &h, &Workload::new(p, 1 << 20)).unwrap()
        };
        let w5 = seq("R5/8", Pattern::SeqWrite);
        assert!(w5.bound, "{w5:?}");
        assert!(w5.unknowns[0].contains("RAID-on-chip"), "{:?}", w5.unknowns);
        assert!(seq("R6/8", Pattern::RandWrite).bound);
        // No parity, or no writes: nothing unknown on this path.
        assert!(!seq("R10/2/8", Pattern::SeqWrite).bound);
        assert!(!seq("R5/8", Pattern::SeqRead).bound);
        // An HBA whose host computes parity (Linux md): not this unknown.
        let md = hw("hba-9300-8i-md", "cheetah-15k5-300gb");
        let l: Layout = "R6/8".parse().unwrap();
        assert!(
            !predict(&l, &md, &Workload::new(Pattern::SeqWrite, 1 << 20))
                .unwrap()
                .bound
        );
        // A published memory bandwidth models the path (§3.9).
        let mut known = h.clone();
        known.controller.memory_bytes_per_s = Some(2e9);
        let l: Layout = "R5/8".parse().unwrap();
        let k = predict(&l, &known, &Workload::new(Pattern::SeqWrite, 1 << 20)).unwrap();
        assert!(!k.bound, "{k:?}");
    }
}
