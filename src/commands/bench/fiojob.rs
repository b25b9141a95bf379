//! `storlab bench --fio-job FILE.fio`: an existing fio job file as storlab
//! phases. The reading and mapping is `storlab_bench::FioJobFile`; here the
//! phases are layered (machine defaults < the fio file < command-line flags)
//! and the target is taken from the file's `filename=`/`directory=` unless
//! one is given on the command line.

use super::{PlannedJob, machine_defaults};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use storlab_bench::{FioJobFile, PhaseSpec};

/// The phases of a fio job file, with `over` (the flags) on top.
pub fn plan_fio_phases(file: &Path, target: Option<&Path>, over: &PhaseSpec) -> Result<PlannedJob> {
    let text = crate::commands::common::read_input(file, "fio job file")?;
    let name = file.display().to_string();
    let job = FioJobFile::parse(&text, &name)?;
    let mut warnings: Vec<String> = job.notes.iter().map(|n| format!("{name}: {n}")).collect();
    let target = match (target, &job.target) {
        (Some(t), Some(f)) if Path::new(f) != t => {
            warnings.push(format!(
                "{name} names the target {f}; the command line's {} is used instead",
                t.display()
            ));
            Some(t.to_path_buf())
        }
        (Some(t), _) => Some(t.to_path_buf()),
        (None, f) => f.as_ref().map(PathBuf::from),
    };
    let machine = machine_defaults(over, target.as_deref(), &mut warnings);
    let phases = job
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = storlab_bench::with_command_line(&machine.overlay(p), over);
            storlab_bench::resolve_phase(&spec, i)
        })
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("in fio job file {name}"))?;
    Ok(PlannedJob {
        phases,
        target,
        warnings,
    })
}
