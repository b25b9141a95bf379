use super::*;
use crate::Posix;
use std::collections::BTreeSet;
use std::ffi::CStr;
use std::io;
use std::sync::{Arc, Barrier};

/// An in-memory file system that logs every item operation (rank of the
/// calling thread, op, full path) and can slow one rank's creates.
#[derive(Default)]
struct MemFs {
    entries: Mutex<BTreeSet<PathBuf>>,
    log: Mutex<Vec<(String, PathBuf)>>,
    made_dirs: Mutex<Vec<PathBuf>>,
    /// Names containing this text take 2 ms to create.
    slow: Option<String>,
    /// Stat of this exact name fails with ENOENT.
    vanish: Option<String>,
    /// `sync` calls.
    syncs: std::sync::atomic::AtomicU32,
}

fn enoent() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOENT)
}

impl MemFs {
    fn path(dir: &Path, name: &CStr) -> PathBuf {
        dir.join(name.to_str().unwrap())
    }
    fn note(&self, op: &str, p: &Path) {
        self.log.lock().unwrap().push((op.into(), p.to_path_buf()));
    }
    fn add(&self, p: PathBuf) -> io::Result<()> {
        let mut e = self.entries.lock().unwrap();
        if !e.contains(p.parent().unwrap()) {
            return Err(enoent());
        }
        if !e.insert(p) {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        Ok(())
    }
    fn remove(&self, p: &Path) -> io::Result<()> {
        if self.entries.lock().unwrap().remove(p) {
            Ok(())
        } else {
            Err(enoent())
        }
    }
    fn has(&self, p: &Path) -> io::Result<()> {
        if self.entries.lock().unwrap().contains(p) {
            Ok(())
        } else {
            Err(enoent())
        }
    }
    fn ops(&self, op: &str) -> Vec<PathBuf> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|(o, _)| o == op)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

impl MdFs for MemFs {
    type Dir = PathBuf;
    fn open_dir(&self, path: &Path) -> io::Result<PathBuf> {
        self.has(path).map(|()| path.to_path_buf())
    }
    fn make_dir(&self, path: &Path) -> io::Result<()> {
        self.made_dirs.lock().unwrap().push(path.to_path_buf());
        let mut e = self.entries.lock().unwrap();
        e.insert(path.to_path_buf());
        Ok(())
    }
    fn create(&self, dir: &PathBuf, name: &CStr, _data: &[u8]) -> io::Result<()> {
        let p = Self::path(dir, name);
        if self
            .slow
            .as_ref()
            .is_some_and(|s| p.to_str().unwrap().contains(s))
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.note("create", &p);
        self.add(p)
    }
    fn mkdir(&self, dir: &PathBuf, name: &CStr) -> io::Result<()> {
        let p = Self::path(dir, name);
        self.note("mkdir", &p);
        self.add(p)
    }
    fn stat(&self, dir: &PathBuf, name: &CStr) -> io::Result<()> {
        let p = Self::path(dir, name);
        self.note("stat", &p);
        if self.vanish.as_deref() == name.to_str().ok() {
            return Err(enoent());
        }
        self.has(&p)
    }
    fn read(&self, dir: &PathBuf, name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
        let p = Self::path(dir, name);
        self.note("read", &p);
        self.has(&p).map(|()| buf.len())
    }
    fn rename(&self, dir: &PathBuf, from: &CStr, to: &CStr) -> io::Result<()> {
        let (f, t) = (Self::path(dir, from), Self::path(dir, to));
        self.note("rename", &f);
        self.remove(&f)?;
        self.add(t)
    }
    fn unlink(&self, dir: &PathBuf, name: &CStr) -> io::Result<()> {
        let p = Self::path(dir, name);
        self.note("unlink", &p);
        self.remove(&p)
    }
    fn rmdir(&self, dir: &PathBuf, name: &CStr) -> io::Result<()> {
        let p = Self::path(dir, name);
        self.note("rmdir", &p);
        self.remove(&p)
    }
    fn sync(&self) {
        self.syncs.fetch_add(1, Ordering::SeqCst);
    }
}

/// Ranks as threads: a barrier and a slot per rank.
struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<u64>>,
}

struct ThreadSync {
    shared: Arc<Shared>,
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
        self.shared.barrier.wait();
    }
    fn gather_all(&self, value: u64) -> Vec<u64> {
        self.shared.slots.lock().unwrap()[self.rank as usize] = value;
        self.barrier();
        let all = self.shared.slots.lock().unwrap().clone();
        self.barrier();
        all
    }
    fn any(&self, flag: bool) -> bool {
        self.gather_all(u64::from(flag)).iter().any(|&v| v != 0)
    }
}

/// Run `spec` on `ranks` threads over `fs`; every rank's phases, by rank.
fn run_ranks<F: MdFs>(fs: &F, spec: &MdSpec, base: &Path, ranks: u32) -> Vec<Vec<RankPhase>> {
    let shared = Arc::new(Shared {
        barrier: Barrier::new(ranks as usize),
        slots: Mutex::new(vec![0; ranks as usize]),
    });
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..ranks)
            .map(|rank| {
                let sync = ThreadSync {
                    shared: Arc::clone(&shared),
                    rank,
                    ranks,
                };
                s.spawn(move || run(fs, spec, base, &sync, &Control::new(), |_| {}).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn spec(files: u64) -> MdSpec {
    storlab_testkit::md_spec!(crate, files)
}

fn by_name<'a>(phases: &'a [RankPhase], name: &str) -> &'a RankPhase {
    phases
        .iter()
        .find(|p| p.phase.name() == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

#[test]
fn the_plan_orders_phases_and_adds_the_creates_the_measured_ops_need() {
    let names = |s: &MdSpec| {
        plan(s)
            .iter()
            .map(|p| (p.name(), p.timed))
            .collect::<Vec<_>>()
    };
    let mut s = spec(5);
    s.dirs = 5;
    s.ops = vec![Op::Delete, Op::Stat, Op::Read, Op::Create, Op::Rename];
    let all: Vec<String> = names(&s).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        all,
        [
            "dir-create",
            "dir-stat",
            "dir-rename",
            "dir-delete",
            "file-create",
            "file-stat",
            "file-read",
            "file-rename",
            "file-delete"
        ]
    );
    // Stat alone: the files are made untimed first; no directory phases.
    s.ops = vec![Op::Stat];
    s.dirs = 0;
    assert_eq!(
        names(&s),
        [
            ("file-create".to_string(), false),
            ("file-stat".to_string(), true)
        ]
    );
}

#[test]
fn the_tree_is_made_breadth_first_and_items_fill_it_in_blocks() {
    let fs = MemFs::default();
    let base = PathBuf::from("/b");
    fs.make_dir(&base).unwrap();
    let mut s = spec(26);
    s.depth = 2;
    s.branch = 3;
    s.ops = vec![Op::Create];
    let phases = run(&fs, &s, &base, &Solo, &Control::new(), |_| {}).unwrap();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0].items(), 26);
    let made = fs.made_dirs.lock().unwrap().clone();
    // /b, then shared, shared/tree and its 12 subdirectories.
    assert_eq!(made.len(), 1 + 1 + 13);
    assert_eq!(made[1], PathBuf::from("/b/shared"));
    assert_eq!(made[2], PathBuf::from("/b/shared/tree"));
    assert_eq!(made[3], PathBuf::from("/b/shared/tree/d1"));
    assert_eq!(made[14], PathBuf::from("/b/shared/tree/d3/d12"));
    // 26 items over 13 directories: 2 in each, in order.
    let created = fs.ops("create");
    assert_eq!(created.len(), 26);
    assert_eq!(created[0], PathBuf::from("/b/shared/tree/file.mdtest.0.0"));
    assert_eq!(
        created[2],
        PathBuf::from("/b/shared/tree/d1/file.mdtest.0.2")
    );
    assert_eq!(
        created[25],
        PathBuf::from("/b/shared/tree/d3/d12/file.mdtest.0.25")
    );
    for d in made.iter().skip(2) {
        let n = created.iter().filter(|p| p.parent() == Some(d)).count();
        assert_eq!(n, 2, "{} holds {n}", d.display());
    }
}

#[test]
fn a_stonewalled_create_is_followed_by_stat_and_delete_of_exactly_its_files() {
    // A real file system: 10 million files planned, 150 ms allowed.
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(10_000_000);
    s.depth = 1;
    s.branch = 4;
    s.stonewall_ns = Some(150_000_000);
    let phases = run(&Posix, &s, dir.path(), &Solo, &Control::new(), |_| {}).unwrap();
    let [create, stat, delete] = [&phases[0], &phases[1], &phases[2]];
    assert!(create.stonewalled);
    assert!(create.items() > 0 && create.items() < 10_000_000);
    assert_eq!(stat.planned, create.items());
    assert_eq!(stat.items(), create.items(), "{:?}", stat.error);
    assert_eq!(delete.items(), create.items(), "{:?}", delete.error);
    for p in &phases {
        assert!(p.errors.is_empty(), "{}: {:?}", p.phase.name(), p.errors);
        assert!(!p.stonewalled || p.phase.op == Op::Create);
    }
    // Every file made was deleted: only the (empty) tree is left.
    let left: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap().path();
        if e.is_dir() {
            out.extend(walk(&e));
        }
        out.push(e);
    }
    out
}

#[test]
fn with_four_ranks_a_rank_shift_stats_the_next_ranks_files_and_their_counts() {
    // Unique directories; rank 3 creates slowly, so the stonewall leaves it
    // with fewer files than the others: rank 2, which stats rank 3's files,
    // must stat exactly rank 3's count.
    let fs = MemFs {
        slow: Some("rank.3/".into()),
        ..MemFs::default()
    };
    let base = PathBuf::from("/m");
    fs.make_dir(&base).unwrap();
    let mut s = spec(1_000_000);
    s.unique_dir = true;
    s.rank_shift = 1;
    s.stonewall_ns = Some(100_000_000);
    s.ops = vec![Op::Create, Op::Stat, Op::Delete];
    let all = run_ranks(&fs, &s, &base, 4);
    let made: Vec<u64> = all
        .iter()
        .map(|p| by_name(p, "file-create").items())
        .collect();
    assert!(made[3] < made[0] && made[3] > 0, "{made:?}");
    for (r, phases) in all.iter().enumerate() {
        let stat = by_name(phases, "file-stat");
        let next = (r + 1) % 4;
        assert_eq!(stat.visited_rank as usize, next);
        assert_eq!(stat.items(), made[next], "rank {r}");
        assert!(stat.errors.is_empty(), "rank {r}: {:?}", stat.error);
        // Deletes stay with the rank's own files.
        assert_eq!(by_name(phases, "file-delete").items(), made[r]);
    }
    // Rank r's tree was statted exactly as often as rank r made files,
    // always under rank r's names (by rank r-1).
    let stats = fs.ops("stat");
    assert_eq!(stats.len() as u64, made.iter().sum::<u64>());
    for (r, &want) in made.iter().enumerate() {
        let n = stats
            .iter()
            .filter(|p| p.starts_with(format!("/m/rank.{r}")))
            .inspect(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                assert!(
                    name.starts_with(&format!("file.mdtest.{r}.")),
                    "{}",
                    p.display()
                );
            })
            .count() as u64;
        assert_eq!(n, want);
    }
    assert!(
        fs.entries
            .lock()
            .unwrap()
            .iter()
            .all(|p| !p.to_str().unwrap().contains("file."))
    );
}

#[test]
fn shared_directory_ranks_put_their_rank_in_the_names_and_stat_with_shift() {
    let fs = MemFs::default();
    let base = PathBuf::from("/s");
    fs.make_dir(&base).unwrap();
    let mut s = spec(10);
    s.rank_shift = 3;
    s.ops = vec![Op::Create, Op::Stat, Op::Read, Op::Delete];
    let all = run_ranks(&fs, &s, &base, 4);
    for (r, phases) in all.iter().enumerate() {
        assert_eq!(
            by_name(phases, "file-stat").visited_rank as usize,
            (r + 3) % 4
        );
        assert_eq!(by_name(phases, "file-read").items(), 10);
    }
    let created = fs.ops("create");
    assert_eq!(created.len(), 40);
    assert!(
        created
            .iter()
            .all(|p| p.parent() == Some(Path::new("/s/shared/tree")))
    );
}

#[test]
fn an_operation_that_fails_is_counted_as_an_error_never_as_an_item_and_stops_the_run() {
    let fs = MemFs {
        vanish: Some("file.mdtest.0.5".into()),
        ..MemFs::default()
    };
    let base = PathBuf::from("/e");
    fs.make_dir(&base).unwrap();
    let phases = run(&fs, &spec(10), &base, &Solo, &Control::new(), |_| {}).unwrap();
    assert_eq!(
        phases.len(),
        2,
        "the delete phase does not run after a failure"
    );
    let stat = &phases[1];
    assert_eq!(stat.items(), 5);
    assert_eq!(stat.errors.get("ENOENT"), Some(&1));
    assert!(stat.error.as_deref().unwrap().contains("file.mdtest.0.5"));
    assert_eq!(stat.counter.hist.len(), 5, "only successes have a latency");
}

#[test]
fn rename_then_delete_works_on_the_new_names_and_read_reads_what_was_written() {
    every_op_on_a_real_tree(&Posix);
}

#[test]
fn whole_paths_as_mdtest_names_them_do_the_same_work() {
    every_op_on_a_real_tree(&crate::PosixPaths);
}

fn every_op_on_a_real_tree<F: MdFs>(fs: &F) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(50);
    s.dirs = 20;
    s.depth = 1;
    s.branch = 2;
    s.write_bytes = 3000;
    s.read_bytes = 3000;
    s.ops = Op::ALL.to_vec();
    let mut seen = Vec::new();
    let phases = run(fs, &s, dir.path(), &Solo, &Control::new(), |p| {
        seen.push(p.phase.name())
    })
    .unwrap();
    assert_eq!(seen.len(), 9);
    for p in &phases {
        assert!(p.errors.is_empty(), "{}: {:?}", p.phase.name(), p.error);
        let want = if p.phase.item == Item::File { 50 } else { 20 };
        assert_eq!(p.items(), want, "{}", p.phase.name());
    }
    assert_eq!(by_name(&phases, "file-read").counter.bytes, 50 * 3000);
    assert_eq!(by_name(&phases, "file-create").counter.bytes, 50 * 3000);
    // Only the tree's own directories are left.
    let left = walk(dir.path());
    assert!(left.iter().all(|p| p.is_dir()), "{left:?}");
    assert_eq!(left.len(), 1 + 3);
}

#[test]
fn a_stop_request_interrupts_the_phase_and_no_later_phase_runs() {
    let fs = MemFs::default();
    let base = PathBuf::from("/i");
    fs.make_dir(&base).unwrap();
    let control = Control::new();
    control.request_stop("test");
    let phases = run(&fs, &spec(10), &base, &Solo, &control, |_| {}).unwrap();
    assert_eq!(phases.len(), 1);
    assert!(phases[0].interrupted);
    assert_eq!(phases[0].items(), 0);
    assert_eq!(control.stop_reason().as_deref(), Some("test"));
}

/// Two thread ranks step a stonewalled create (rank 1's creates are slow)
/// and then a stat shifted by one; each rank's (created, stated) counts.
fn stepped(wear_out: bool) -> Vec<(u64, u64)> {
    let fs = MemFs {
        slow: Some("file.mdtest.1.".into()),
        ..MemFs::default()
    };
    let spec = MdSpec {
        unique_dir: true,
        stonewall_ns: Some(40_000_000),
        ..spec(200)
    };
    let base = Path::new("/m");
    fs.make_dir(base).unwrap();
    let shared = Arc::new(Shared {
        barrier: Barrier::new(2),
        slots: Mutex::new(vec![0; 2]),
    });
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|rank| {
                let sync = ThreadSync {
                    shared: Arc::clone(&shared),
                    rank,
                    ranks: 2,
                };
                let (fs, spec) = (&fs, &spec);
                s.spawn(move || {
                    let c = Control::new();
                    let mut steps = Steps::new(fs, spec, base, &sync).unwrap();
                    let ph = |op| PlannedPhase {
                        item: Item::File,
                        op,
                        timed: true,
                    };
                    let (made, _) = steps.step(fs, &sync, &c, ph(Op::Create), 0, wear_out);
                    let (stated, stop) = steps.step(fs, &sync, &c, ph(Op::Stat), 1, false);
                    assert!(!stop, "{:?}", stated.error);
                    (made.items(), stated.items())
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn a_worn_out_create_brings_every_rank_to_the_busiest_ranks_count() {
    // Without wear-out the slow rank stops at the stonewall, short.
    let plain = stepped(false);
    assert_eq!(plain[0].0, 200);
    assert!(plain[1].0 < 200, "{plain:?}");
    // Each rank stats its neighbour's files: exactly what that one made.
    assert_eq!((plain[0].1, plain[1].1), (plain[1].0, plain[0].0));
    // With mdtest's wear-out every rank goes on to the busiest's count.
    let worn = stepped(true);
    assert_eq!(worn, vec![(200, 200), (200, 200)]);
}

/// One rank steps create, read and delete of `files` 3,901-byte files in
/// `dir` with mdtest's `-X` and `-Y` as asked; `between` runs after the
/// create. The read's and the create's figures.
fn checked_steps(
    fs: &impl MdFs,
    dir: &Path,
    verify: bool,
    sync: bool,
    between: impl FnOnce(),
) -> (RankPhase, RankPhase) {
    let spec = MdSpec {
        write_bytes: 3901,
        read_bytes: 3901,
        ops: vec![Op::Create, Op::Read, Op::Delete],
        ..spec(20)
    };
    let c = Control::new();
    let mut steps = Steps::new(fs, &spec, dir, &Solo)
        .unwrap()
        .verify_reads(verify)
        .sync_creates(sync);
    let ph = |op| PlannedPhase {
        item: Item::File,
        op,
        timed: true,
    };
    let (made, _) = steps.step(fs, &Solo, &c, ph(Op::Create), 0, false);
    between();
    let (read, _) = steps.step(fs, &Solo, &c, ph(Op::Read), 0, false);
    let (gone, _) = steps.step(fs, &Solo, &c, ph(Op::Delete), 0, false);
    assert_eq!(gone.items(), 20);
    (read, made)
}

#[test]
fn verified_reads_count_a_file_whose_bytes_changed_and_go_on() {
    let root = tempfile::tempdir().unwrap();
    let corrupt = |dir: &Path| {
        let f = walk(dir)
            .into_iter()
            .find(|p| p.is_file() && p.to_string_lossy().ends_with(".7"))
            .expect("file 7");
        let mut b = std::fs::read(&f).unwrap();
        b[3900] ^= 1;
        std::fs::write(&f, b).unwrap();
    };
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let (read, _) = checked_steps(&Posix, &a, true, false, || corrupt(&a));
    assert_eq!(read.items(), 20, "every file is read");
    assert_eq!(read.errors.get("mismatch"), Some(&1), "{:?}", read.errors);
    // Without -X the changed byte goes unseen.
    let (read, _) = checked_steps(&Posix, &b, false, false, || corrupt(&b));
    assert!(read.errors.is_empty(), "{:?}", read.errors);
}

#[test]
fn a_synced_create_syncs_once_per_rank_inside_its_window_and_nothing_else_does() {
    let fs = MemFs::default();
    let base = PathBuf::from("/y");
    fs.make_dir(&base).unwrap();
    checked_steps(&fs, &base, false, true, || {});
    assert_eq!(fs.syncs.load(Ordering::SeqCst), 1);
    let fs = MemFs::default();
    fs.make_dir(&base).unwrap();
    checked_steps(&fs, &base, false, false, || {});
    assert_eq!(fs.syncs.load(Ordering::SeqCst), 0);
}
