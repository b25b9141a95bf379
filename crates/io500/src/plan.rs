//! What each IO500 phase does, as io500 (02091cf) builds it from the
//! config: the IOR, mdtest or pfind command line it runs (rendered exactly
//! as io500 writes it to `result.txt`'s `exe =` lines, so the shape can be
//! checked against a real run), and the same facts typed ([`Shape`]) for a
//! runner that does the work itself.
//!
//! The shape, from io500's `phase_*.c`:
//! * **ior-easy**: a file per process (`-F`, the config may turn it off),
//!   `transferSize` (2 MiB) transfers into a `blockSize` block, fsync on
//!   close (`-e`), kept between phases (`-k`); the write runs for the
//!   stonewall time and wears out (`-D S -O stoneWallingWearOut=1`: every
//!   rank then writes as many transfers as the busiest rank did); the read,
//!   later, reads exactly that back, shifted one node (`-C -Q 1`) and
//!   verified (`-R`).
//! * **ior-hard**: one shared file, 47,008-byte transfers, one transfer per
//!   block per segment (`-t 47008 -b 47008 -s segments`), so ranks
//!   interleave: strided, unaligned; same stonewall and read-back rules.
//! * **mdtest-easy**: a directory per process (`-u`), empty files at the
//!   leaf (`-L -F`), `n` per process; create for the stonewall time (`-C
//!   -W S -Y`), later stat (`-T`) and delete (`-r`) exactly what was
//!   created (`-x` keeps the count), each rank working on its neighbour's
//!   files (`-N 1`).
//! * **mdtest-hard**: one shared directory, files of 3,901 bytes written at
//!   create and read back (`-w 3901 -e 3901`), `n` per process; create
//!   (stonewalled), stat, read (`-E -X`, verified), delete.
//! * **find**: files newer than the timestamp taken after the easy writes,
//!   of 3,901 bytes, whose name holds `01` (`pfind … -newer T -size 3901c
//!   -name *01*`).
//! * **ior-rnd4K-easy-read**: 4 KiB random reads (`-z`) of ior-easy's files
//!   for the stonewall time.

use crate::config::Config;
use crate::phases::{self, Phase, fixed};
use serde::Serialize;

/// Read or write, for IOR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Write,
    Read,
}

/// A metadata operation of an mdtest phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MdOp {
    Create,
    Stat,
    Read,
    Delete,
}

/// What a phase does, typed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "tool", rename_all = "lowercase")]
pub enum Shape {
    Ior {
        access: Access,
        /// A file per process (`-F`), else one shared file.
        file_per_proc: bool,
        transfer: u64,
        block: u64,
        segments: u64,
        /// Random offsets (`-z`).
        random: bool,
        /// Stop issuing new transfers after this many seconds (`-D`).
        stonewall_s: Option<u64>,
        /// After the stonewall, every rank catches up with the busiest
        /// (`stoneWallingWearOut=1`).
        wear_out: bool,
        /// Ranks read the data of the rank this many nodes on (`-C -Q n`).
        task_shift: Option<u32>,
        /// Check the data read (`-R`).
        verify: bool,
        /// The file's path (`-o`), under datadir.
        path: String,
    },
    Mdtest {
        op: MdOp,
        files_per_proc: u64,
        /// A directory per process (`-u`), else one shared directory.
        unique_dir: bool,
        /// Bytes written at create and read back (`-w`/`-e`).
        file_bytes: u64,
        /// Create stops after this many seconds (`-W`).
        stonewall_s: Option<u64>,
        /// Ranks work on their neighbour's files (`-N 1`).
        rank_shift: u32,
        /// Files per directory (`-I`), which makes the run INVALID.
        files_per_dir: Option<u64>,
        dir: String,
    },
    Find {
        root: String,
        newer_than: String,
        size: u64,
        name: &'static str,
    },
    /// Records the time find's `-newer` compares with.
    Timestamp { file: String },
}

/// One phase as io500 runs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhasePlan {
    pub phase: &'static Phase,
    pub shape: Shape,
    /// The command line io500 runs for it (`exe =` in `result.txt`).
    pub argv: Vec<String>,
}

/// What the plan needs beyond the config: the directories io500 resolved
/// (datadir and resultdir after the timestamp suffixes) and the per-phase
/// hashes io500 derives from its start time (`-G`).
#[derive(Debug, Clone)]
pub struct Context {
    pub datadir: String,
    pub resdir: String,
    /// `u_phase_unique_random_number` for ior-easy, mdtest-easy, ior-hard,
    /// mdtest-hard (a run's own values; any fixed numbers for a new run).
    pub hashes: [i64; 4],
    pub extended: bool,
}

struct Argv(Vec<String>);

impl Argv {
    fn push(&mut self, s: impl Into<String>) -> &mut Self {
        self.0.push(s.into());
        self
    }
    fn api(&mut self, cfg: &Config, dummy: &str, phase: &str) -> &mut Self {
        let api = cfg
            .get(phase, "API")
            .or_else(|| cfg.get(dummy, "API"))
            .or_else(|| cfg.get("global", "api"))
            .unwrap_or("POSIX");
        self.push("-a");
        for w in api.split_whitespace() {
            self.push(w);
        }
        self
    }
}

fn packet(cfg: &Config) -> String {
    format!(
        "--dataPacketType={}",
        cfg.get("global", "dataPacketType").unwrap_or("timestamp")
    )
}

fn ior_easy_base(cfg: &Config, cx: &Context, std_flags: bool) -> Argv {
    let mut a = Argv(Vec::new());
    a.push("./ior").push(packet(cfg));
    a.push("-g").push("-G").push(cx.hashes[0].to_string());
    a.push("-k").push("-e").push("-o");
    a.push(format!("{}/ior-easy/ior_file_easy", cx.datadir));
    if std_flags {
        a.push("-C").push("-Q").push("1").push("-O");
        a.push(format!(
            "stoneWallingStatusFile={}/ior-easy.stonewall",
            cx.resdir
        ));
        a.push("-t")
            .push(cfg.get("ior-easy", "transferSize").unwrap_or("2m"));
        a.push("-b")
            .push(cfg.get("ior-easy", "blockSize").unwrap_or("9920000m"));
    }
    if flag(cfg, "ior-easy", "uniqueDir") {
        a.push("-u");
    }
    if file_per_proc(cfg) {
        a.push("-F");
    }
    a
}

fn ior_hard_base(cfg: &Config, cx: &Context) -> Argv {
    let mut a = Argv(Vec::new());
    a.push("./ior").push(packet(cfg));
    a.push("-C").push("-Q").push("1").push("-g");
    a.push(format!("-G={}", cx.hashes[2]));
    a.push("-k").push("-e").push("-o");
    a.push(format!("{}/ior-hard/file", cx.datadir)).push("-O");
    a.push(format!(
        "stoneWallingStatusFile={}/ior-hard.stonewall",
        cx.resdir
    ));
    a.push("-t")
        .push("47008")
        .push("-b")
        .push("47008")
        .push("-s");
    a.push(segments(cfg).to_string());
    a
}

fn md_easy_base(cfg: &Config, cx: &Context) -> Argv {
    let mut a = Argv(Vec::new());
    a.push("./mdtest").push(packet(cfg)).push("-n");
    a.push(files(cfg, "mdtest-easy").to_string());
    a.push("-u").push("-L").push("-F").push("-P").push("-G");
    a.push(cx.hashes[1].to_string());
    a.push("-N").push("1").push("-d");
    a.push(format!("{}/mdtest-easy", cx.datadir)).push("-x");
    a.push(format!("{}/mdtest-easy.stonewall", cx.resdir));
    a
}

fn md_hard_base(cfg: &Config, cx: &Context) -> Argv {
    let mut a = Argv(Vec::new());
    a.push("./mdtest").push(packet(cfg)).push("-n");
    a.push(files(cfg, "mdtest-hard").to_string());
    if let Some(n) = files_per_dir(cfg) {
        a.push(format!("-I={n}"));
    }
    a.push("-t")
        .push("-w")
        .push("3901")
        .push("-e")
        .push("3901")
        .push("-P");
    a.push(format!("-G={}", cx.hashes[3]));
    a.push("-N").push("1").push("-F").push("-d");
    a.push(format!("{}/mdtest-hard", cx.datadir)).push("-x");
    a.push(format!("{}/mdtest-hard.stonewall", cx.resdir));
    a
}

fn flag(cfg: &Config, section: &str, option: &str) -> bool {
    cfg.get(section, option).is_some_and(|v| v.starts_with('T'))
}

fn file_per_proc(cfg: &Config) -> bool {
    flag(cfg, "ior-easy", "filePerProc")
}

fn segments(cfg: &Config) -> u64 {
    cfg.ior_hard_segments().unwrap_or(10_000_000)
}

fn files(cfg: &Config, section: &str) -> u64 {
    cfg.files_per_proc(section).unwrap_or(1_000_000)
}

fn files_per_dir(cfg: &Config) -> Option<u64> {
    cfg.get("mdtest-hard", "files-per-dir")
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
}

fn csv(a: &mut Argv, cx: &Context, phase: &str, ior: bool) {
    if ior {
        a.push("-O");
        a.push(format!(
            "saveRankPerformanceDetailsCSV={}/{phase}.csv",
            cx.resdir
        ));
    } else {
        a.push(format!(
            "--saveRankPerformanceDetails={}/{phase}.csv",
            cx.resdir
        ));
    }
}

fn ior_plan(cfg: &Config, cx: &Context, name: &str) -> (Shape, Argv) {
    let wall = cfg.stonewall_seconds();
    let easy = name.contains("easy");
    let write = name.ends_with("write");
    let (transfer, block) = if easy {
        cfg.ior_easy_sizes().unwrap_or((2 << 20, 9_920_000 << 20))
    } else {
        (fixed::IOR_HARD_TRANSFER, fixed::IOR_HARD_TRANSFER)
    };
    let mut a = if easy {
        ior_easy_base(cfg, cx, true)
    } else {
        ior_hard_base(cfg, cx)
    };
    let dummy = if easy { "ior-easy" } else { "ior-hard" };
    let collective = || {
        let v = cfg
            .get(name, "collective")
            .or_else(|| cfg.get(dummy, "collective"));
        v.is_some_and(|v| v.starts_with('T'))
    };
    match (easy, write) {
        (true, true) => {
            a.push("-w")
                .push("-D")
                .push(wall.to_string())
                .push("-O")
                .push("stoneWallingWearOut=1");
            a.api(cfg, dummy, name);
            csv(&mut a, cx, name, true);
        }
        (true, false) => {
            a.push("-r").push("-R");
            a.api(cfg, dummy, name);
            csv(&mut a, cx, name, true);
        }
        (false, true) => {
            a.push("-w");
            if collective() {
                a.push("-c");
            }
            a.push("-D").push(wall.to_string());
            a.api(cfg, dummy, name);
            csv(&mut a, cx, name, true);
            a.push("-O").push("stoneWallingWearOut=1");
        }
        (false, false) => {
            a.push("-r").push("-R");
            if collective() {
                a.push("-c");
            }
            a.api(cfg, dummy, name);
            csv(&mut a, cx, name, true);
        }
    }
    let shape = Shape::Ior {
        access: if write { Access::Write } else { Access::Read },
        file_per_proc: easy && file_per_proc(cfg),
        transfer,
        block,
        segments: if easy { 1 } else { segments(cfg) },
        random: false,
        stonewall_s: write.then_some(wall),
        wear_out: write,
        task_shift: Some(1),
        verify: !write,
        path: if easy {
            format!("{}/ior-easy/ior_file_easy", cx.datadir)
        } else {
            format!("{}/ior-hard/file", cx.datadir)
        },
    };
    (shape, a)
}

fn rnd_plan(cfg: &Config, cx: &Context, name: &str) -> (Shape, Argv) {
    let wall = cfg.stonewall_seconds();
    let mut a = ior_easy_base(cfg, cx, false);
    a.push("-r")
        .push("-D")
        .push(wall.to_string())
        .push("-z")
        .push("-z");
    a.api(cfg, "ior-easy", name);
    csv(&mut a, cx, name, true);
    a.push("-t=4096").push("-b=4096").push("-s=10000000");
    a.push("-O").push("stoneWallingWearOut=1");
    let fpp = file_per_proc(cfg);
    if fpp {
        a.push("-C").push("-Q").push("2");
    }
    let shape = Shape::Ior {
        access: Access::Read,
        file_per_proc: fpp,
        transfer: fixed::IOR_RND_TRANSFER,
        block: fixed::IOR_RND_TRANSFER,
        segments: 10_000_000,
        random: true,
        stonewall_s: Some(wall),
        wear_out: true,
        task_shift: fpp.then_some(2),
        verify: false,
        path: format!("{}/ior-easy/ior_file_easy", cx.datadir),
    };
    (shape, a)
}

fn md_plan(cfg: &Config, cx: &Context, name: &str) -> (Shape, Argv) {
    let wall = cfg.stonewall_seconds();
    let easy = name.contains("easy");
    let dummy = if easy { "mdtest-easy" } else { "mdtest-hard" };
    let mut a = if easy {
        md_easy_base(cfg, cx)
    } else {
        md_hard_base(cfg, cx)
    };
    let op = match name.rsplit('-').next() {
        Some("write") => MdOp::Create,
        Some("stat") => MdOp::Stat,
        Some("read") => MdOp::Read,
        _ => MdOp::Delete,
    };
    let fpd = if easy { None } else { files_per_dir(cfg) };
    let mut stonewall = None;
    match op {
        MdOp::Create => {
            a.push("-C").push("-Y");
            if fpd.is_none() {
                a.push("-W").push(wall.to_string());
                stonewall = Some(wall);
            }
        }
        MdOp::Stat => {
            a.push("-T");
        }
        MdOp::Read => {
            a.push("-E").push("-X");
        }
        MdOp::Delete => {
            a.push("-r");
        }
    }
    csv(&mut a, cx, name, false);
    a.api(cfg, dummy, name);
    let shape = Shape::Mdtest {
        op,
        files_per_proc: files(cfg, dummy),
        unique_dir: easy,
        file_bytes: if easy {
            0
        } else {
            fixed::MDTEST_HARD_FILE_SIZE
        },
        stonewall_s: stonewall,
        rank_shift: 1,
        files_per_dir: fpd,
        dir: format!("{}/{dummy}", cx.datadir),
    };
    (shape, a)
}

fn find_plan(cfg: &Config, cx: &Context, name: &str) -> (Shape, Argv) {
    let mut a = Argv(Vec::new());
    a.push("./pfind").push(cx.datadir.clone()).push("-newer");
    a.push(format!("{}/timestampfile", cx.resdir));
    a.push("-size")
        .push("3901c")
        .push("-name")
        .push("*01*")
        .push("-C");
    if flag(cfg, name, "pfind-steal-next") {
        a.push("-N");
    }
    if flag(
        cfg,
        name,
        "pfind-parallelize-single-dir-access-using-hashing",
    ) {
        a.push("-H").push("1");
    }
    a.push("-q")
        .push(cfg.get(name, "pfind-queue-length").unwrap_or("10000"));
    let shape = Shape::Find {
        root: cx.datadir.clone(),
        newer_than: format!("{}/timestampfile", cx.resdir),
        size: fixed::MDTEST_HARD_FILE_SIZE,
        name: "*01*",
    };
    (shape, a)
}

/// The phases a run of `cfg` does, in io500's order, each with its shape
/// and command line. Phases switched off (`run = FALSE`) and, outside
/// extended mode, the optional ones are left out, as io500 does. The
/// mdworkbench and find-easy/find-hard phases of extended mode have no
/// shape here yet and are left out too.
pub fn plan(cfg: &Config, cx: &Context) -> Vec<PhasePlan> {
    let mut out = Vec::new();
    for p in phases::PHASES {
        let name = p.name;
        if (p.optional && !cx.extended) || (p.dummy && name != "timestamp") {
            continue;
        }
        let built = match name {
            "timestamp" => Some((
                Shape::Timestamp {
                    file: format!("{}/timestampfile", cx.resdir),
                },
                Argv(Vec::new()),
            )),
            "ior-rnd4K-easy-read" => Some(rnd_plan(cfg, cx, name)),
            n if n.starts_with("ior-") => Some(ior_plan(cfg, cx, n)),
            n if n.starts_with("mdtest-") => Some(md_plan(cfg, cx, n)),
            "find" => Some(find_plan(cfg, cx, name)),
            _ => None,
        };
        let Some((shape, argv)) = built else { continue };
        let dummy_off = |d: &str| !cfg.runs(d);
        let parent = name
            .strip_suffix("-write")
            .or_else(|| name.strip_suffix("-read"))
            .or_else(|| name.strip_suffix("-stat"))
            .or_else(|| name.strip_suffix("-delete"))
            .map(|s| if s == "ior-rnd4K-easy" { "ior-easy" } else { s });
        if !cfg.runs(name) || parent.is_some_and(dummy_off) {
            continue;
        }
        out.push(PhasePlan {
            phase: p,
            shape,
            argv: argv.0,
        });
    }
    out
}

#[cfg(test)]
mod tests;
