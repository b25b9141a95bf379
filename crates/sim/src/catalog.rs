//! A small adapter over `plan`'s hardware catalog: link rates by name
//! (`fc1`, `10gbe-iscsi`, `fc4x2`) and an array's back end from a RAID layout
//! in plan's notation (`R5/8/16`) and a drive model. Only plan's stable
//! public items are used: `Catalog::{builtin, extend, link, drive}`,
//! `LinkSpec::bytes_per_s`, `DriveSpec::op_time`, `Layout` parsing and
//! `Geometry`'s drive counts.

use crate::scenario::Pattern;
use storlab_plan::catalog::Catalog;
use storlab_plan::hardware::Access;
use storlab_plan::{GroupLevel, Layout};

/// The catalog the scenario's names are looked up in.
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

    /// Add a user's catalog file on top (same name replaces), e.g. entries
    /// `plan calibrate` produced.
    pub fn extend(&mut self, name: &str, text: &str) -> Result<(), String> {
        self.inner.extend(name, text).map_err(|e| e.to_string())
    }

    /// Usable payload rate of a link spec in the direction the data goes
    /// (`write`: host to storage), bytes/s.
    pub fn link_rate(&self, spec: &str, write: bool) -> Result<f64, String> {
        self.inner
            .link(spec)
            .map(|l| {
                if write {
                    l.write_bytes_per_s.unwrap_or(l.bytes_per_s)
                } else {
                    l.bytes_per_s
                }
            })
            .map_err(|e| e.to_string())
    }

    /// A controller's own throughput limit, bytes/s (None when the catalog
    /// gives none).
    pub fn controller_limit(&self, name: &str) -> Result<Option<f64>, String> {
        self.inner
            .controller(name)
            .map(|c| c.max_bytes_per_s)
            .map_err(|e| e.to_string())
    }

    /// The back end of RAID `layout` on `drive` for `pattern` at `bs`:
    /// sequential work streams on the data drives (full-stripe writes,
    /// write-back); random work costs each drive `op_time` per operation,
    /// random writes the RAID level's read-modify-write operations (R1/R10
    /// 2, R5/R50 4, R6/R60 6). A simpler figure than `plan layout`'s model;
    /// give `backend` to use a measured or planned number instead.
    pub fn backend(
        &self,
        layout: &str,
        drive: &str,
        pattern: Pattern,
        bs: u64,
    ) -> Result<Backend, String> {
        let d = self.inner.drive(drive).map_err(|e| e.to_string())?;
        let l: Layout = layout
            .parse()
            .map_err(|e: storlab_plan::PlanError| e.to_string())?;
        let g = l.geometry(d.capacity_bytes).map_err(|e| e.to_string())?;
        let data = f64::from(g.data_drives_per_group * g.groups);
        let all = f64::from(g.drives);
        let b = bs as f64;
        let (v, how) = match pattern {
            Pattern::Read | Pattern::Write => {
                let per = b / d.op_time(pattern.is_write(), b, Access::Stream);
                (
                    data * per,
                    format!(
                        "{data} data drives × {:.0} MB/s ({layout} of {drive})",
                        per / 1e6
                    ),
                )
            }
            Pattern::RandRead => {
                let iops = 1.0 / d.op_time(false, b, Access::Random);
                (
                    all * iops * b,
                    format!("{all} drives × {iops:.0} IOPS ({layout} of {drive})"),
                )
            }
            Pattern::RandWrite => {
                let penalty = match l.level {
                    GroupLevel::R0 => 1.0,
                    GroupLevel::R1 => 2.0,
                    GroupLevel::R5 => 4.0,
                    GroupLevel::R6 => 6.0,
                };
                let iops = 1.0 / d.op_time(true, b, Access::Random);
                (
                    all * iops / penalty * b,
                    format!(
                        "{all} drives × {iops:.0} IOPS / {penalty} per write ({layout} of {drive})"
                    ),
                )
            }
        };
        Ok(Backend {
            bytes_per_s: v,
            units: if pattern.is_random() { g.drives } else { 1 },
            source: how,
        })
    }
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
        assert!(c.link_rate("fc5", true).unwrap_err().contains("fc"));
        // A link with a slower write direction gives it for writes.
        assert!(
            c.link_rate("1gbe-iscsi", true).unwrap() <= c.link_rate("1gbe-iscsi", false).unwrap()
        );
        let seq = c
            .backend("R5/5/5", "cheetah-15k7-600gb", Pattern::Write, 1 << 20)
            .unwrap();
        let rnd = c
            .backend("R5/5/5", "cheetah-15k7-600gb", Pattern::RandWrite, 4096)
            .unwrap();
        // Four data drives streaming beat five drives doing 4 KiB RMW writes.
        assert!(seq.bytes_per_s > 100.0 * rnd.bytes_per_s, "{seq:?} {rnd:?}");
        assert!(
            c.backend("R5/5/5", "no-such-drive", Pattern::Write, 4096)
                .is_err()
        );
        assert!(
            c.backend("R9/5", "cheetah-15k7-600gb", Pattern::Write, 4096)
                .is_err()
        );
    }
}
