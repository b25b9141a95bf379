//! Per-rank fio iologs read as one trace of several ranks: what
//! `storlab bench --write-iolog FILE` writes under MPI, one file per rank
//! named by [`rank_path`] (`run.iolog` → `run.rank0.iolog`,
//! `run.rank1.iolog`, ...; `run` → `run.rank0`, ...).
//!
//! A trace named `FILE` that does not exist, where `FILE`'s rank-0 file
//! does, is the set of `FILE`'s rank files 0, 1, 2, ... up to the first
//! missing one; rank r's records are rank r's. The files are merged by
//! time (each is in time order, as fio and storlab write them), so a
//! replay feeding its ranks from one reading keeps every rank's queue
//! filled in step. Memory grows with the number of ranks, not records.

use crate::iolog;
use crate::{FileId, Opener, TraceError, TraceRecord, err};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

/// The most rank files read as one trace (a replay's own rank limit).
const MAX_RANK_FILES: u32 = 4096;

/// Rank `rank`'s file of the per-rank set `path`: `.rankR` inserted
/// before the file name's extension (`run.iolog` → `run.rank3.iolog`),
/// or appended when it has none (`run` → `run.rank3`).
pub fn rank_path(path: &Path, rank: u32) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let renamed = match name.rfind('.') {
        // A leading dot is a hidden name, not an extension.
        Some(i) if i > 0 => format!("{}.rank{rank}{}", &name[..i], &name[i..]),
        _ => format!("{name}.rank{rank}"),
    };
    path.with_file_name(renamed)
}

/// The rank files of `path` when it names a per-rank set (`path` itself
/// absent, its rank-0 file present), in rank order.
pub(crate) fn per_rank_files(path: &Path) -> Option<Vec<PathBuf>> {
    if path.file_name().is_none() || std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let files: Vec<PathBuf> = (0..MAX_RANK_FILES)
        .map(|r| rank_path(path, r))
        .take_while(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    (!files.is_empty()).then_some(files)
}

/// The files a trace given as `path` is read from: the per-rank files of
/// a set, else `path` itself.
pub fn trace_files(path: &Path) -> Vec<PathBuf> {
    per_rank_files(path).unwrap_or_else(|| vec![path.to_path_buf()])
}

/// One rank's iolog and its next record.
struct Rank {
    reader: iolog::Reader,
    next: Option<TraceRecord>,
    /// This rank's file ids → the set's.
    ids: Vec<Option<FileId>>,
}

pub(crate) struct Reader {
    ranks: Vec<Rank>,
    /// Ranks with a pending record, earliest first (ties: lower rank).
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    files: Vec<String>,
    ids: HashMap<String, FileId>,
    version: u32,
}

impl Reader {
    pub(crate) fn open(
        set: &Path,
        paths: &[PathBuf],
        opener: &mut Opener<'_>,
    ) -> Result<Reader, TraceError> {
        let mut r = Reader {
            ranks: Vec::with_capacity(paths.len()),
            heap: BinaryHeap::new(),
            files: Vec::new(),
            ids: HashMap::new(),
            version: 0,
        };
        for p in paths {
            let file = opener(p).map_err(|e| err(p, crate::At::File, e.to_string()))?;
            let reader = iolog::Reader::new(p, file)?;
            if r.version == 0 {
                r.version = reader.version();
            } else if reader.version() != r.version {
                return Err(err(
                    p,
                    crate::At::Line(1),
                    format!(
                        "a per-rank iolog of {} in version {} beside version {} ones; every rank's \
                         file must be the same version",
                        set.display(),
                        reader.version(),
                        r.version
                    ),
                ));
            }
            r.ranks.push(Rank {
                reader,
                next: None,
                ids: Vec::new(),
            });
        }
        for i in 0..r.ranks.len() {
            r.advance(i)?;
        }
        Ok(r)
    }

    pub(crate) fn version(&self) -> u32 {
        self.version
    }

    pub(crate) fn ranks(&self) -> u32 {
        u32::try_from(self.ranks.len()).unwrap_or(u32::MAX)
    }

    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    /// Read rank `i`'s next record (its file in the set's numbering).
    fn advance(&mut self, i: usize) -> Result<(), TraceError> {
        let rank = &mut self.ranks[i];
        let Some(mut rec) = rank.reader.next_record()? else {
            rank.next = None;
            return Ok(());
        };
        let local = rec.file as usize;
        if rank.ids.len() <= local {
            rank.ids.resize(local + 1, None);
        }
        rec.file = match rank.ids[local] {
            Some(id) => id,
            None => {
                let name = rank.reader.files().get(local).cloned().unwrap_or_default();
                let id = match self.ids.get(&name) {
                    Some(&id) => id,
                    None => {
                        let id = FileId::try_from(self.files.len()).unwrap_or(FileId::MAX);
                        self.ids.insert(name.clone(), id);
                        self.files.push(name);
                        id
                    }
                };
                rank.ids[local] = Some(id);
                id
            }
        };
        rec.rank = u32::try_from(i).unwrap_or(u32::MAX);
        self.heap.push(Reverse((rec.start_ns, rec.rank)));
        rank.next = Some(rec);
        Ok(())
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        let Some(Reverse((_, rank))) = self.heap.pop() else {
            return Ok(None);
        };
        let i = rank as usize;
        let rec = self.ranks[i].next.take();
        self.advance(i)?;
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Op, OpenOptions, TraceReader};

    #[test]
    fn the_rank_goes_before_the_extension() {
        let p = |s: &str, r| rank_path(Path::new(s), r).display().to_string();
        assert_eq!(p("/x/run.iolog", 3), "/x/run.rank3.iolog");
        assert_eq!(p("/x/a.b/run", 0), "/x/a.b/run.rank0");
        assert_eq!(p("run.tar.log", 12), "run.tar.rank12.log");
        assert_eq!(p("/x/.hidden", 1), "/x/.hidden.rank1");
    }

    #[test]
    fn rank_files_are_merged_by_time_each_as_its_rank() {
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("run.iolog");
        let log = |rank: u32, text: &str| {
            std::fs::write(rank_path(&set, rank), text).unwrap();
        };
        log(
            0,
            "fio version 3 iolog\n0 /d/a add\n0 /d/a open\n10 /d/a read 0 4096\n30 /d/a read 4096 4096\n40 /d/a close\n",
        );
        log(
            1,
            "fio version 3 iolog\n0 /d/b add\n0 /d/a add\n0 /d/b open\n20 /d/b write 0 512\n25 /d/a read 8192 4096\n40 /d/b close\n",
        );
        // A rank file past a gap is not part of the set.
        log(3, "fio version 3 iolog\n0 /d/z add\n5 /d/z read 0 1\n");
        let mut r = TraceReader::open(&set, &OpenOptions::default()).unwrap();
        assert_eq!(
            r.format(),
            &Format::FioIologRanks {
                version: 3,
                ranks: 2
            }
        );
        let recs: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
        let got: Vec<_> = recs
            .iter()
            .filter(|x| x.op.is_data())
            .map(|x| (x.start_ns / 1000, x.rank, x.op, x.file, x.offset))
            .collect();
        assert_eq!(
            got,
            [
                (10, 0, Op::Read, 0, 0),
                (20, 1, Op::Write, 1, 0),
                (25, 1, Op::Read, 0, 8192),
                (30, 0, Op::Read, 0, 4096),
            ]
        );
        assert_eq!(r.files(), ["/d/a", "/d/b"]);
        let starts: Vec<u64> = recs.iter().map(|x| x.start_ns).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
        assert_eq!(trace_files(&set).len(), 2);
        // The set's own name, once it exists, is read as itself.
        std::fs::write(&set, "fio version 3 iolog\n0 /d/q add\n").unwrap();
        assert_eq!(trace_files(&set), vec![set]);
    }

    #[test]
    fn a_broken_rank_file_is_named_with_its_line() {
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("run.iolog");
        std::fs::write(
            rank_path(&set, 0),
            "fio version 3 iolog\n0 /a add\n1 /a read 0 1\n",
        )
        .unwrap();
        std::fs::write(
            rank_path(&set, 1),
            "fio version 3 iolog\n0 /a add\n1 /a read zero 1\n",
        )
        .unwrap();
        let e = TraceReader::open(&set, &OpenOptions::default())
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
            .unwrap_err();
        assert!(e.to_string().contains("run.rank1.iolog"), "{e}");
        assert_eq!(e.at, crate::At::Line(3), "{e}");
        std::fs::write(rank_path(&set, 1), "fio version 2 iolog\n").unwrap();
        let e = TraceReader::open(&set, &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("same version"), "{e}");
    }
}
