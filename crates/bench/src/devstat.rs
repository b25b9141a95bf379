//! The block layer's own counters around a phase (issue 24): how many
//! device requests a phase's requests became, merged or not.
//!
//! The target (the first data file, or the device itself) is resolved to
//! its block device as `storlab inspect` and `monitor` do
//! ([`storlab_monitor::DeviceTree`]), then down the stack to where requests
//! are merged: a partition counts as its disk (the disk's queue merges),
//! a device-mapper or md volume as its member devices (summed), a loop
//! device as itself (its own queue; the I/O to its backing file is another
//! stream). The counters are read from `/proc/diskstats` (the same fields
//! as `/sys/block/DEV/stat`, all devices in one read) with monitor's parser
//! before and after the phase. They are device-wide: other programs' I/O
//! in the same window is counted too, which the record says
//! (`device_wide`).

use std::collections::BTreeMap;
use std::path::Path;
use storlab_monitor::diskstats::{self, Counters};
use storlab_monitor::tree::{DeviceKind, LinkKind};
use storlab_monitor::{DeviceTree, SysPaths};
use storlab_types::DeviceStatDelta;

/// The devices whose counters a phase on the target is judged by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    devices: Vec<String>,
    paths: SysPaths,
}

/// Where requests to `name` are merged: the device itself, or for a
/// partition its disk and for a dm/md volume its members (recursively).
pub fn merging_devices(tree: &DeviceTree, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![name.to_string()];
    let mut seen = 0;
    while let Some(n) = todo.pop() {
        seen += 1;
        if seen > 256 {
            break; // a cycle in a malformed tree: stop, do not loop
        }
        let Some(d) = tree.get(&n) else { continue };
        let through = matches!(
            d.kind,
            DeviceKind::Partition | DeviceKind::Dm | DeviceKind::Md
        );
        let lowers: Vec<&str> = d
            .lowers
            .iter()
            .filter(|l| l.kind != LinkKind::File)
            .map(|l| l.device.as_str())
            .collect();
        if through && !lowers.is_empty() {
            todo.extend(lowers.into_iter().map(str::to_string));
        } else if !out.contains(&n) {
            out.push(n);
        }
    }
    out.sort();
    out
}

impl Probe {
    /// The probe for a target path (a file on a file system, or a device
    /// node); `None` where no block device is under it (tmpfs, NFS) or the
    /// kernel's tables cannot be read.
    pub fn for_path(path: &Path) -> Option<Probe> {
        Probe::for_path_in(path, SysPaths::live())
    }

    /// [`Probe::for_path`] on a given `/sys` and `/proc` (tests).
    pub fn for_path_in(path: &Path, paths: SysPaths) -> Option<Probe> {
        let tree = DeviceTree::load(&paths).ok()?;
        let name = tree.resolve_path(path).ok()?;
        let devices = merging_devices(&tree, &name);
        (!devices.is_empty()).then_some(Probe { devices, paths })
    }

    /// The devices' counters now, summed; `None` when `/proc/diskstats`
    /// cannot be read or lacks one of them.
    pub fn read(&self) -> Option<Counters> {
        let text = std::fs::read_to_string(self.paths.diskstats()).ok()?;
        let all: BTreeMap<String, Counters> = diskstats::parse(&text)
            .ok()?
            .into_iter()
            .map(|d| (d.name, d.counters))
            .collect();
        self.devices
            .iter()
            .try_fold(Counters::default(), |acc, n| Some(acc.add(all.get(n)?)))
    }

    /// The change from `before` to now, as a phase records it.
    pub fn delta(&self, before: &Counters) -> Option<DeviceStatDelta> {
        Some(delta_record(&self.devices, before, &self.read()?))
    }
}

/// The record of the counters' change from `before` to `after`.
pub fn delta_record(devices: &[String], before: &Counters, after: &Counters) -> DeviceStatDelta {
    let d = after.delta(before);
    DeviceStatDelta {
        devices: devices.to_vec(),
        device_wide: true,
        read_ios: d.rd_ios,
        read_merges: d.rd_merges,
        read_sectors: d.rd_sectors,
        write_ios: d.wr_ios,
        write_merges: d.wr_merges,
        write_sectors: d.wr_sectors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before: 100 reads (20 merged, 1,000 sectors), 50 writes; after:
    /// 130 reads, 110 merged, 50 writes, 5 merged: 30 device reads of
    /// 90 merged requests, a merge factor of (30 + 90) / 30 = 4.
    #[test]
    fn the_delta_counts_completed_and_merged_requests_per_direction() {
        let before = Counters {
            rd_ios: 100,
            rd_merges: 20,
            rd_sectors: 1_000,
            wr_ios: 50,
            ..Counters::default()
        };
        let after = Counters {
            rd_ios: 130,
            rd_merges: 110,
            rd_sectors: 1_960,
            wr_ios: 50,
            wr_merges: 5,
            ..Counters::default()
        };
        let d = delta_record(&["vda".into()], &before, &after);
        assert_eq!((d.read_ios, d.read_merges, d.read_sectors), (30, 90, 960));
        assert_eq!((d.write_ios, d.write_merges), (0, 5));
        assert!(d.device_wide);
        assert_eq!(d.merge_factor(false), Some(4.0));
        assert_eq!(d.merge_factor(true), None);
    }
}
