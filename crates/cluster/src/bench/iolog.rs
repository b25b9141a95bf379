//! `storlab bench --write-iolog FILE` under MPI: every rank records its own
//! jobs' I/O in its own iolog, FILE with the rank inserted
//! ([`storlab_trace::rank_path`]: `run.iolog` → `run.rank0.iolog`,
//! `run.rank1.iolog`, ...), which `storlab replay FILE` (one process, ranks
//! as threads) and `mpirun -np N storlab replay FILE` (rank r replays
//! `run.rankR.iolog`) read as one trace of N ranks.
//!
//! Before any file exists, every rank checks its own file (never over an
//! existing one: [`storlab_bench::iolog::Recording::start`]) and the ranks
//! agree: they were all given the same FILE, and none refused; otherwise
//! every rank stops, rank 0 naming the rank and the file. After the run,
//! each rank writes its file and the ranks agree again that all did;
//! rank 0 then has every file's name to show.

use super::Ranks;
use super::run::checked;
use crate::comm::Comm;
use crate::step::{Failed, RankStop};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storlab_bench::iolog::{Recording, Sink};

/// This rank's recording, started and agreed on.
#[derive(Debug)]
pub struct Iologs {
    recording: Recording,
    /// FILE as given (the same on every rank).
    given: PathBuf,
}

/// FNV-1a of the FILE given (0: none), what the ranks compare.
fn digest(file: Option<&Path>) -> u64 {
    let Some(f) = file else { return 0 };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in f.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h | 1
}

/// Start this rank's recording of `file` (collective; before any I/O):
/// every rank was given the same FILE, and every rank's own file is new.
pub fn start<C: Comm>(world: &Ranks<C>, file: Option<&Path>) -> Result<Option<Iologs>, RankStop> {
    let (lo, hi) = world.comm.min_max(digest(file));
    if lo != hi {
        return Err(RankStop::at_root(
            &world.comm,
            Failed(
                "--write-iolog: the ranks were not all given the same FILE (or some none); start every rank \
                 with the same command line (each rank writes FILE with its rank inserted)"
                    .into(),
            ),
        ));
    }
    let Some(file) = file else { return Ok(None) };
    let mine = storlab_trace::rank_path(file, world.rank());
    let started = Recording::start(&mine).map_err(Failed::of);
    let recording = checked(world, "--write-iolog", started)?;
    Ok(Some(Iologs {
        recording,
        given: file.to_path_buf(),
    }))
}

impl Iologs {
    /// What this rank's workers record into.
    pub fn sink(&self) -> Arc<Sink> {
        self.recording.sink()
    }

    /// After the run (collective): every rank writes its file; at rank 0
    /// every rank's file name, in rank order.
    pub fn finish<C: Comm>(self, world: &Ranks<C>) -> Result<Vec<PathBuf>, RankStop> {
        let written = self.recording.finish().map(|_| ()).map_err(Failed::of);
        checked(world, "--write-iolog", written)?;
        Ok((0..world.size())
            .map(|r| storlab_trace::rank_path(&self.given, r))
            .collect())
    }
}

/// What rank 0 says about the files every rank wrote.
pub fn written(files: &[PathBuf]) -> String {
    match (files.first(), files.last()) {
        (Some(a), Some(b)) => format!(
            "--write-iolog: each rank wrote its own iolog: {} .. {} ({} files; `storlab replay` of \
             the name given replays them all, rank by rank)",
            a.display(),
            b.display(),
            files.len()
        ),
        _ => "--write-iolog: no rank wrote an iolog".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalComm;

    #[test]
    fn an_existing_rank_file_stops_every_rank_before_any_is_made() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("run.iolog");
        std::fs::write(storlab_trace::rank_path(&file, 2), "theirs").unwrap();
        let out = LocalComm::run(4, |c| {
            let w = Ranks::exchange(c, "node", 1 << 30);
            start(&w, Some(&file)).map(|r| r.is_some())
        });
        let RankStop::Report(Failed(why)) = out[0].clone().unwrap_err() else {
            panic!("rank 0 reports: {:?}", out[0]);
        };
        assert!(
            why.contains("rank 2") && why.contains("run.rank2.iolog"),
            "{why}"
        );
        assert!(why.contains("exists"), "{why}");
        assert!(
            out[1..].iter().all(|r| *r == Err(RankStop::Quiet)),
            "{out:?}"
        );
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.rank2.iolog"], "nothing else was made");
    }

    #[test]
    fn ranks_given_different_files_stop_together() {
        let d = tempfile::tempdir().unwrap();
        let out = LocalComm::run(2, |c| {
            let w = Ranks::exchange(c, "node", 1 << 30);
            let mine = d.path().join(format!("r{}.iolog", w.rank()));
            start(&w, Some(&mine)).map(|r| r.is_some())
        });
        assert!(
            matches!(&out[0], Err(RankStop::Report(Failed(m))) if m.contains("same FILE")),
            "{out:?}"
        );
        assert_eq!(out[1], Err(RankStop::Quiet));
    }

    #[test]
    fn each_rank_writes_its_own_file_and_rank_0_names_them_all() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("run.iolog");
        let out = LocalComm::run(3, |c| {
            let w = Ranks::exchange(c, "node", 1 << 30);
            let logs = start(&w, Some(&file)).unwrap().unwrap();
            drop(logs.sink());
            logs.finish(&w).unwrap()
        });
        let want: Vec<PathBuf> = (0..3).map(|r| storlab_trace::rank_path(&file, r)).collect();
        assert_eq!(out[0], want);
        for p in &want {
            let text = std::fs::read_to_string(p).unwrap();
            assert!(text.starts_with("fio version 3 iolog\n"), "{}", p.display());
        }
    }
}
