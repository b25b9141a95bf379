//! A small adapter over `plan`'s hardware catalog and model: link rates by
//! name (`fc1`, `10gbe-iscsi`, `fc4x2`), and what an array — a catalog
//! controller, a RAID layout in plan's notation (`R5/8/16`) on a drive
//! model — can do for the workload, from `storlab_plan::path::path_limits`,
//! the same function plan's prediction uses (docs/MODEL.md §3.5). sim keeps
//! no RAID or controller model of its own.

use crate::scenario::Pattern;
use storlab_plan::catalog::Catalog;
use storlab_plan::hardware::{ControllerSpec, Hardware, LinkSpec};
use storlab_plan::path::path_limits;
use storlab_plan::perf::Workload;
use storlab_plan::{Layout, PlanError};

/// The catalog the scenario's names are looked up in. Its lookups fail
/// with plan's typed [`PlanError`] (an unknown name, a bad catalog file),
/// which names the entry and how to list the catalog.
#[derive(Debug, Clone)]
pub struct SimCatalog {
    inner: Catalog,
}

/// An array's back end for one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub bytes_per_s: f64,
    /// Drives that serve random requests independently (1 for streams,
    /// which use every drive together).
    pub units: u32,
    /// How it was computed, for the report.
    pub source: String,
}

impl SimCatalog {
    /// storlab's built-in catalog.
    pub fn builtin() -> SimCatalog {
        SimCatalog {
            inner: Catalog::builtin(),
        }
    }

    /// The built-in catalog with the user's catalog `files` on top (same
    /// name replaces); `read` gives a file's text (the crate reads no files).
    pub fn with_files(
        files: &[std::path::PathBuf],
        read: impl FnMut(&std::path::Path) -> Result<String, String>,
    ) -> Result<SimCatalog, PlanError> {
        storlab_plan::spec::catalog_with(files, read).map(|inner| SimCatalog { inner })
    }

    /// Add a user's catalog file on top (same name replaces), e.g. entries
    /// `plan calibrate` produced.
    pub fn extend(&mut self, name: &str, text: &str) -> Result<(), PlanError> {
        self.inner.extend(name, text)
    }

    /// Usable payload rate of a link spec in the direction the data goes
    /// (`write`: host to storage), bytes/s.
    pub fn link_rate(&self, spec: &str, write: bool) -> Result<f64, PlanError> {
        self.inner
            .link(spec)
            .map(|l| if write { l.write_rate() } else { l.bytes_per_s })
    }

    /// A controller from plan's catalog.
    pub fn controller(&self, name: &str) -> Result<ControllerSpec, PlanError> {
        self.inner.controller(name)
    }

    /// What one array can do for `pattern` at `bs` with `iodepth` in
    /// flight: plan's model ([`storlab_plan::path`]), not a copy. With a
    /// RAID `layout` (plan's notation, `R5/8/16`) on `drive` the back end is
    /// plan's — RAID write paths, drives, and the drive-side links beside
    /// them; with `controller` its per-direction limits, command rate and
    /// parity engine apply and its host link is the array's ports. Without
    /// a controller the array's controller is taken to be transparent (no
    /// limits, write-back: sequential writes gather into full stripes).
    pub fn array_path(
        &self,
        controller: Option<&ControllerSpec>,
        raid: Option<(&str, &str)>,
        pattern: Pattern,
        bs: u64,
        iodepth: u32,
    ) -> Result<ArrayPath, PlanError> {
        let w = Workload::new(pattern, bs).with_concurrency(1, iodepth.max(1));
        let host_link = controller.map(|c| storlab_plan::path::host_link_limit(c, &w));
        let Some((layout, drive)) = raid else {
            return Ok(ArrayPath {
                controller: controller
                    .and_then(|c| storlab_plan::path::controller_limit(c, &w))
                    .map(|l| (l.bytes_per_s, l.by)),
                backend: None,
                host_link,
                unknowns: Vec::new(),
                round_trip: storlab_plan::path::RoundTrip {
                    controller_s: controller.and_then(|c| c.cmd_latency_s).unwrap_or(0.0),
                    ..Default::default()
                },
                queue: None,
            });
        };
        let d = self.inner.drive(drive)?;
        let l: Layout = layout.parse()?;
        let hw = Hardware {
            drive: d,
            controller: controller.cloned().unwrap_or_else(transparent_controller),
            controllers: 1,
            enclosure: None,
            host_bytes_per_s: None,
        };
        let p = path_limits(&l, &hw, &w)?;
        Ok(ArrayPath {
            controller: p.controller.map(|c| (c.bytes_per_s, c.by)),
            backend: Some(Backend {
                bytes_per_s: p.backend.bytes_per_s,
                units: p.units,
                source: format!("{} ({layout} of {drive}, plan's model)", p.backend.by),
            }),
            host_link,
            unknowns: p.unknowns,
            round_trip: p.round_trip,
            queue: p.queue,
        })
    }
}

/// What [`SimCatalog::array_path`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayPath {
    /// The controller's own limit, bytes/s, and the part that sets it.
    pub controller: Option<(f64, String)>,
    /// The back end, when built from a RAID layout and a drive.
    pub backend: Option<Backend>,
    /// The controller's host link in the workload's direction, bytes/s.
    pub host_link: Option<f64>,
    /// Parts without a published limit (the answer is then a bound).
    pub unknowns: Vec<String>,
    /// One request's unloaded round trip in plan's model (controller
    /// command time, drives: one stream's own limit, docs/MODEL.md §3.12).
    pub round_trip: storlab_plan::path::RoundTrip,
    /// The drives' calibrated queue (plan's `path::device_queue`), when the
    /// drive carries a concurrency knee that covers the workload.
    pub queue: Option<storlab_plan::path::DeviceQueue>,
}

/// An array controller that limits nothing: links of unbounded rate, a
/// write-back cache (sim's arrays gather sequential writes into full
/// stripes unless a catalog controller says otherwise).
pub fn transparent_controller() -> ControllerSpec {
    let free = LinkSpec::new("none", 1, f64::INFINITY);
    ControllerSpec::new("array controller", free.clone(), free)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_backends_come_from_plans_catalog() {
        let c = SimCatalog::builtin();
        let one = c.link_rate("fc4", false).unwrap();
        let two = c.link_rate("fc4x2", false).unwrap();
        assert!((two - 2.0 * one).abs() < 1e-6);
        assert!(
            c.link_rate("fc5", true)
                .unwrap_err()
                .to_string()
                .contains("fc")
        );
        // A link with a slower write direction gives it for writes.
        assert!(
            c.link_rate("1gbe-iscsi", true).unwrap() <= c.link_rate("1gbe-iscsi", false).unwrap()
        );
        let be = |pattern, bs| {
            c.array_path(None, Some(("R5/5/5", "cheetah-15k7-600gb")), pattern, bs, 1)
                .unwrap()
                .backend
                .unwrap()
        };
        let seq = be(Pattern::SeqWrite, 1 << 20);
        let rnd = be(Pattern::RandWrite, 4096);
        // Four data drives streaming beat five drives doing 4 KiB RMW writes.
        assert!(seq.bytes_per_s > 100.0 * rnd.bytes_per_s, "{seq:?} {rnd:?}");
        assert_eq!(rnd.units, 5);
        assert_eq!(seq.units, 1);
        for bad in [("R5/5/5", "no-such-drive"), ("R9/5", "cheetah-15k7-600gb")] {
            assert!(
                c.array_path(None, Some(bad), Pattern::SeqWrite, 4096, 1)
                    .is_err()
            );
        }
    }

    /// The array's ports are plan's host link: the figure sim takes is the
    /// one plan's model gives for the same controller, layout and workload.
    #[test]
    fn the_host_link_is_plans_figure() {
        let c = SimCatalog::builtin();
        let ctrl = c.controller("perc-6e").unwrap();
        let cat = Catalog::builtin();
        for pattern in [
            Pattern::SeqRead,
            Pattern::SeqWrite,
            Pattern::RandRead,
            Pattern::RandWrite,
        ] {
            let bs = 256 * 1024;
            let sim = c
                .array_path(
                    Some(&ctrl),
                    Some(("R5/6", "cheetah-15k5-300gb")),
                    pattern,
                    bs,
                    4,
                )
                .unwrap();
            let hw = Hardware {
                drive: cat.drive("cheetah-15k5-300gb").unwrap(),
                controller: ctrl.clone(),
                controllers: 1,
                enclosure: None,
                host_bytes_per_s: None,
            };
            let w = Workload::new(pattern, bs).with_concurrency(1, 4);
            let plan = path_limits(&"R5/6".parse().unwrap(), &hw, &w).unwrap();
            assert_eq!(
                sim.host_link,
                Some(plan.host_link.bytes_per_s),
                "{pattern:?}"
            );
        }
    }

    #[test]
    fn a_catalog_controller_keeps_its_per_direction_limits() {
        // Issue 24: sim took only a controller's overall throughput, so the
        // PERC 6/E's published 1.5 GB/s read path was lost.
        let c = SimCatalog::builtin();
        let perc = c.controller("perc-6e").unwrap();
        let alone = c
            .array_path(Some(&perc), None, Pattern::SeqRead, 1 << 20, 1)
            .unwrap();
        let (v, by) = alone.controller.unwrap();
        assert_eq!(v, 1.5e9);
        assert!(by.contains("read path"), "{by}");
        // Writes: no published figure, no controller limit.
        let w = c
            .array_path(Some(&perc), None, Pattern::SeqWrite, 1 << 20, 1)
            .unwrap();
        assert!(w.controller.is_none());
        // Its host link (PCIe 1.0 x8) is the array's ports.
        assert_eq!(w.host_link, Some(c.link_rate("pcie1x8", true).unwrap()));
        // With drives the back end includes the drive-side links: 24
        // 15k disks stream more than 2 x4 3Gb/s SAS carries.
        let full = c
            .array_path(
                Some(&perc),
                Some(("R0/24", "cheetah-15k5-300gb")),
                Pattern::SeqRead,
                1 << 20,
                32,
            )
            .unwrap();
        let b = full.backend.unwrap();
        let sas = c.link_rate("sas3x8", false).unwrap();
        assert!((b.bytes_per_s - sas).abs() < 1.0, "{b:?} vs {sas}");
        assert!(b.source.contains("back-end"), "{}", b.source);
    }
}
