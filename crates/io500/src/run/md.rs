//! mdtest's phases on storlab's engine: `storlab_md`'s [`Steps`], one
//! thread per rank, each holding its steps of mdtest-easy and mdtest-hard
//! between io500's other phases. A create stopped by the stonewall wears
//! out as mdtest's `-W` does (every rank goes on to the busiest rank's
//! count), and stat, read and delete work on exactly the items made,
//! each rank on another rank's items (mdtest's `-N 1`: stat visits rank
//! r+1, read r+2, delete r+3, as mdtest names them). As io500 runs mdtest,
//! each create ends with a sync inside its window (`-Y`) and each read
//! compares the bytes it read with the bytes written (`-X`). Every
//! operation names its file by its whole path, as mdtest does
//! ([`PosixPaths`]).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;
use storlab_md::{Control, Item, MdSpec, Op, PlannedPhase, PosixPaths, RankPhase, RankSync, Steps};

/// The two mdtest workloads of io500.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Easy,
    Hard,
}

/// mdtest-easy (`-u -L -F`: empty files, a directory per rank) or
/// mdtest-hard (`-w 3901 -e 3901`: 3,901-byte files, one shared
/// directory), `files` per rank, create stonewalled after `stonewall`.
pub(crate) fn spec(which: Which, files: u64, stonewall: Duration) -> MdSpec {
    let hard = which == Which::Hard;
    let size = if hard {
        crate::phases::fixed::MDTEST_HARD_FILE_SIZE
    } else {
        0
    };
    MdSpec {
        files,
        dirs: 0,
        depth: 0,
        branch: 1,
        unique_dir: !hard,
        write_bytes: size,
        read_bytes: size,
        ops: if hard {
            vec![Op::Create, Op::Stat, Op::Read, Op::Delete]
        } else {
            vec![Op::Create, Op::Stat, Op::Delete]
        },
        rank_shift: 1,
        stonewall_ns: Some(u64::try_from(stonewall.as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// mdtest's rank shift for an operation under `-N 1` (its `mk_name`,
/// `stat_name`, `read_name`, `rm_name`: shifts 0, 1, 2, 3).
pub(crate) fn shift_of(op: Op) -> u32 {
    match op {
        Op::Create => 0,
        Op::Stat => 1,
        Op::Read => 2,
        Op::Rename | Op::Delete => 3,
    }
}

/// Ranks as threads: a barrier and one slot per rank for the gathers.
struct ThreadSync {
    shared: Arc<(Barrier, Mutex<Vec<u64>>)>,
    rank: u32,
    ranks: u32,
}

impl RankSync for ThreadSync {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn ranks(&self) -> u32 {
        self.ranks
    }
    fn barrier(&self) {
        self.shared.0.wait();
    }
    fn gather_all(&self, value: u64) -> Vec<u64> {
        if let Ok(mut s) = self.shared.1.lock()
            && let Some(x) = s.get_mut(self.rank as usize)
        {
            *x = value;
        }
        self.barrier();
        let all = self.shared.1.lock().map(|s| s.clone()).unwrap_or_default();
        self.barrier();
        all
    }
    fn any(&self, flag: bool) -> bool {
        self.gather_all(u64::from(flag)).iter().any(|&v| v != 0)
    }
}

/// One step every rank runs.
#[derive(Debug, Clone, Copy)]
struct Cmd {
    which: Which,
    op: Op,
}

/// The rank threads of both mdtest workloads.
pub(crate) struct MdRanks {
    cmds: Vec<Sender<Cmd>>,
    results: Receiver<Result<(RankPhase, bool), String>>,
    pub specs: [MdSpec; 2],
}

impl MdRanks {
    /// Start `ranks` threads working under `base` (`mdtest-easy/` and
    /// `mdtest-hard/` inside it).
    pub(crate) fn start<'s>(
        scope: &'s std::thread::Scope<'s, '_>,
        ranks: u32,
        specs: [MdSpec; 2],
        base: &Path,
        control: &'s Control,
    ) -> MdRanks {
        let shared = Arc::new((
            Barrier::new(ranks as usize),
            Mutex::new(vec![0; ranks as usize]),
        ));
        let (res_tx, res_rx) = channel();
        let mut cmds = Vec::new();
        for rank in 0..ranks {
            let (tx, rx) = channel::<Cmd>();
            cmds.push(tx);
            let sync = ThreadSync {
                shared: Arc::clone(&shared),
                rank,
                ranks,
            };
            let specs = specs.clone();
            let bases = [base.join("mdtest-easy"), base.join("mdtest-hard")];
            let res_tx = res_tx.clone();
            scope.spawn(move || rank_loop(&rx, &sync, &specs, &bases, control, &res_tx));
        }
        MdRanks {
            cmds,
            results: res_rx,
            specs,
        }
    }

    /// Run `op` of `which` on every rank; every rank's figures (by rank)
    /// and whether the run must stop.
    pub(crate) fn step(&self, which: Which, op: Op) -> Result<(Vec<RankPhase>, bool), String> {
        for c in &self.cmds {
            c.send(Cmd { which, op })
                .map_err(|_| "an mdtest rank thread ended early".to_string())?;
        }
        let mut parts = Vec::new();
        let mut stop = false;
        for _ in &self.cmds {
            let (r, s) = self
                .results
                .recv()
                .map_err(|_| "an mdtest rank thread ended early".to_string())??;
            stop |= s;
            parts.push(r);
        }
        parts.sort_by_key(|p| p.rank);
        Ok((parts, stop))
    }

    /// Let the rank threads end.
    pub(crate) fn close(&mut self) {
        self.cmds.clear();
    }
}

fn rank_loop(
    rx: &Receiver<Cmd>,
    sync: &ThreadSync,
    specs: &[MdSpec; 2],
    bases: &[PathBuf; 2],
    control: &Control,
    out: &Sender<Result<(RankPhase, bool), String>>,
) {
    let mut rank = RankMd::new(specs, bases.clone());
    while let Ok(cmd) = rx.recv() {
        let r = rank.step(sync, control, cmd.which, cmd.op);
        let failed = r.is_err();
        if out.send(r).is_err() || failed {
            return;
        }
    }
}

/// One rank's mdtest-easy and mdtest-hard, stepped an operation at a time
/// (a rank thread's, or an MPI rank's on its main thread): the steps of
/// each are made at its first operation (rank 0 makes its directory).
pub(crate) struct RankMd<'a> {
    specs: &'a [MdSpec; 2],
    bases: [PathBuf; 2],
    steps: [Option<Steps<'a>>; 2],
}

impl<'a> RankMd<'a> {
    /// `bases`: the directories of mdtest-easy and mdtest-hard.
    pub(crate) fn new(specs: &'a [MdSpec; 2], bases: [PathBuf; 2]) -> RankMd<'a> {
        RankMd {
            specs,
            bases,
            steps: [None, None],
        }
    }

    /// Run `op` of `which` on this rank (collective): its figures and
    /// whether the run must stop, or why it could not.
    pub(crate) fn step<S: RankSync>(
        &mut self,
        sync: &S,
        control: &Control,
        which: Which,
        op: Op,
    ) -> Result<(RankPhase, bool), String> {
        let i = which as usize;
        if self.steps[i].is_none() {
            let base = &self.bases[i];
            let made = if sync.rank() == 0 {
                std::fs::create_dir(base)
                    .map_err(|e| format!("cannot make {}: {e}", base.display()))
            } else {
                Ok(())
            };
            if sync.any(made.is_err()) {
                return Err(made
                    .err()
                    .unwrap_or_else(|| "rank 0 could not make the mdtest directory".into()));
            }
            // io500's mdtest creates end with `-Y` (sync, timed) and
            // mdtest-hard-read checks what it read (`-X`).
            let s =
                Steps::new(&PosixPaths, &self.specs[i], base, sync).map_err(|e| e.to_string())?;
            self.steps[i] = Some(s.sync_creates(true).verify_reads(true));
        }
        let Some(s) = self.steps[i].as_mut() else {
            return Err("mdtest steps missing".into());
        };
        let ph = PlannedPhase {
            item: Item::File,
            op,
            timed: true,
        };
        Ok(s.step(&PosixPaths, sync, control, ph, shift_of(op), true))
    }
}
