//! IOR's phases on storlab's engine: ior-easy and ior-hard are each one
//! `storlab_bench` job (its write, its read and, for ior-easy, the 4 KiB
//! random read), made from IOR's own flags by `storlab_bench::ior`, and
//! stepped a phase at a time on the caller's thread. io500 runs other
//! phases between a job's write and its read: the job keeps what its
//! stonewalled write wrote, and its read reads exactly that.

use super::RunError;
use super::sync::LocalSync;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use storlab_bench::{Control, ResolvedJob, SafetyOptions};
use storlab_types::{BufferPattern, CacheMode, FileLayout, PhaseParams, PhaseResult};

/// What one IOR job does (IOR's terms).
#[derive(Debug, Clone)]
pub(crate) struct IorJob {
    /// ior-easy (a file per rank) or ior-hard (one shared file, strided).
    pub easy: bool,
    pub ranks: u32,
    pub transfer: u64,
    pub block: u64,
    pub segments: u64,
    pub file_per_proc: bool,
    pub stonewall_s: u64,
    /// Add ior-rnd4K-easy-read (4 KiB random reads for the stonewall time).
    pub rnd4k: bool,
}

impl IorJob {
    /// The IOR flags io500 gives this job, in the words `storlab bench
    /// --ior` understands (the flags about result files, hashes and
    /// directories are io500's bookkeeping).
    pub(crate) fn ior_flags(&self) -> String {
        let mut f = format!(
            "-a POSIX -t {} -b {} -s {} -e -w -r",
            self.transfer, self.block, self.segments
        );
        if self.file_per_proc {
            f.push_str(" -F");
        }
        f
    }

    /// Its phases, named as io500 names them.
    pub(crate) fn phases(&self) -> Result<Vec<PhaseParams>, RunError> {
        // storlab's option table takes block sizes in 512-byte multiples;
        // ior-hard's 47,008 bytes is not one, so the job is made with the
        // next multiple and then given IOR's exact size (buffered psync
        // I/O has no alignment rule).
        let exact = self.transfer;
        let surrogate = exact.next_multiple_of(512);
        let flags = IorJob {
            transfer: surrogate,
            block: self.block / exact * surrogate,
            ..self.clone()
        }
        .ior_flags();
        let t = storlab_bench::ior::translate(&flags)
            .map_err(|e| RunError::Setup(format!("IOR flags {flags}: {e}")))?;
        let name = if self.easy { "ior-easy" } else { "ior-hard" };
        let mut toml = t.job_toml;
        if self.rnd4k {
            toml.push_str(&format!(
                "\n[[phase]]\nname = \"rnd4k\"\nrw = \"randread\"\nbs = 4096\ntime_based = true\nruntime = \"{}s\"\n",
                self.stonewall_s
            ));
        }
        let file = storlab_bench::JobFile::parse(&toml, Path::new(name))
            .map_err(|e| RunError::Setup(e.to_string()))?;
        let mut phases = file
            .phases(
                &toml,
                Path::new(name),
                &Default::default(),
                &Default::default(),
            )
            .map_err(|e| RunError::Setup(e.to_string()))?;
        for p in &mut phases {
            p.name = match p.name.as_str() {
                "write" => format!("{name}-write"),
                "read" => format!("{name}-read"),
                _ => "ior-rnd4K-easy-read".into(),
            };
            p.numjobs = self.ranks;
            // IOR neither evicts nor pre-reads: the data a write left in
            // the page cache is there for the read, as under io500 (warm
            // would pre-read the whole file before the read, outside the
            // window: on a device twice the reads io500 makes).
            p.cache = CacheMode::Buffered;
            // IOR writes into a new file; storlab's is sparse, not
            // pre-allocated.
            p.fallocate = false;
            // io500's IOR data (`--dataPacketType=timestamp`, fixed `-G`)
            // is one buffer made once and written unchanged by every
            // transfer, no word of it zero, and its reads (`-R`) compare
            // every word of every transfer with it, inside the timed
            // window; the 4 KiB random read does not check.
            p.buffer_pattern = BufferPattern::Ior;
            p.check_reads = p.rw.reads() && p.name != "ior-rnd4K-easy-read";
            if exact != surrogate && p.name != "ior-rnd4K-easy-read" {
                for b in &mut p.bs {
                    b.bs_bytes = exact;
                }
                p.size_bytes = self.block * self.segments;
                if let FileLayout::SharedInterleaved { stride_bytes } = &mut p.layout {
                    *stride_bytes = self.block;
                }
            }
        }
        Ok(phases)
    }
}

/// A bench job stepped one phase at a time on the caller's thread (its
/// workers are bench's): what its write laid out and what each rank wrote
/// under the stonewall are carried to its read ([`storlab_bench::Carried`]),
/// whatever runs between. The same for ranks as threads (one job of
/// `ranks` jobs, [`LocalSync`]) and for an MPI rank (its own job,
/// storlab-cluster's `ClusterSync`).
pub(crate) struct Stepper {
    pub job: ResolvedJob,
    pub carried: storlab_bench::Carried,
    pub control: Arc<Control>,
    keep: bool,
    sync: LocalSync,
}

impl Stepper {
    /// Prepare the job's files in `dir` (ranks as threads: one job of
    /// `job.ranks` jobs).
    pub(crate) fn start(
        job: &IorJob,
        dir: &Path,
        control: Arc<Control>,
        keep: bool,
    ) -> Result<Stepper, RunError> {
        let phases = job.phases()?;
        let resolved = prepare(dir, phases)?;
        Ok(Stepper::of(
            resolved,
            control,
            keep,
            Duration::from_secs(job.stonewall_s),
        ))
    }

    /// Step a job already prepared (an MPI rank's view of rank 0's files).
    pub(crate) fn of(
        job: ResolvedJob,
        control: Arc<Control>,
        keep: bool,
        stonewall: Duration,
    ) -> Stepper {
        Stepper {
            carried: storlab_bench::Carried::new(&job),
            job,
            control,
            keep,
            sync: LocalSync::new(stonewall, true),
        }
    }

    /// The index of the job's phase io500 calls `name` (a phase the config
    /// turns off is skipped, not run in the next one's place); past the
    /// last when the job has none of that name.
    pub(crate) fn index_of(&self, name: &str) -> usize {
        let i = self.job.phases.iter().position(|p| p.name == name);
        i.unwrap_or(self.job.phases.len())
    }

    /// Run the job's phase `name` (ranks as threads); None when the job
    /// stopped instead.
    pub(crate) fn next(&mut self, name: &str) -> Option<PhaseResult> {
        let i = self.index_of(name);
        let out = storlab_bench::run_synced_phases(
            &self.job,
            &self.control,
            &self.sync,
            &mut self.carried,
            i..i + 1,
            |_| {},
        );
        out.phases.into_iter().next()
    }

    /// Remove the job's files (unless kept).
    pub(crate) fn close(&mut self) {
        self.control.request_stop("the io500 run ended");
        if !self.keep {
            self.job.target.cleanup();
        }
    }
}

/// The job's files made in `dir` for `phases`.
pub(crate) fn prepare(dir: &Path, phases: Vec<PhaseParams>) -> Result<ResolvedJob, RunError> {
    storlab_bench::prepare(
        Some(dir),
        phases,
        SafetyOptions {
            allow_destroy: false,
        },
    )
    .map_err(|e| RunError::Setup(e.to_string()))
}
