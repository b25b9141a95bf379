//! Where O_DIRECT stops: a bench whose target sits on memory (tmpfs,
//! ramfs) or on a buffered loop device (its backing file in the page
//! cache) measures the page cache, not a device, whatever `--direct`
//! says. What `storlab inspect` knows about the stack under the target is
//! turned into one warning, saved in the record and printed. (The bench
//! crate does not depend on the monitor crate: the CLI joins them.)

use std::path::Path;
use storlab_monitor::SysPaths;
use storlab_monitor::inspect::{InspectReport, inspect};
use storlab_types::CacheMode;

const SUFFIX: &str = "the figures are the page cache's, not the device's";

/// The warning for a target at `at` (a file, directory or block device),
/// when any of `modes` is meant to reach the device (`direct`, `cold`);
/// none when the stack cannot be read or nothing caches above the disk.
pub(crate) fn page_cache_warning(at: &Path, modes: &[CacheMode]) -> Option<String> {
    if modes.iter().all(|m| *m == CacheMode::Warm) {
        return None;
    }
    // A file not laid out yet: its directory says where it will be.
    let probe = if at.exists() { at } else { at.parent()? };
    let report = inspect(&SysPaths::live(), probe.to_str()?).ok()?;
    warning_of(&report)
}

/// The warning an inspection calls for (see [`page_cache_warning`]).
fn warning_of(report: &InspectReport) -> Option<String> {
    if let Some(fs) = &report.filesystem
        && matches!(fs.fs_type.as_str(), "tmpfs" | "ramfs")
    {
        return Some(format!(
            "{} is {} (memory, no device under it): O_DIRECT stops at the page cache; {SUFFIX}",
            fs.mount_point.display(),
            fs.fs_type
        ));
    }
    let buffered = report.stack.iter().find_map(|l| {
        let lp = l.loop_dev.as_ref()?;
        (lp.direct_io == Some(false)).then_some((l, lp))
    })?;
    let (layer, lp) = buffered;
    Some(format!(
        "/dev/{} is a buffered loop device{}: O_DIRECT stops at the page cache of its backing file; \
         {SUFFIX} (losetup --direct-io=on /dev/{} reaches the disk)",
        layer.device,
        lp.backing_file
            .as_ref()
            .map(|f| format!(" over {}", f.display()))
            .unwrap_or_default(),
        layer.device
    ))
}
