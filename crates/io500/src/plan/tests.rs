use super::*;
use std::collections::BTreeMap;

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/io500-run")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `exe = ...` of every phase in the real run's `result.txt`.
fn executed() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut section = String::new();
    for line in fixture("result.txt").lines() {
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_string();
        } else if let Some(exe) = line.strip_prefix("exe") {
            let exe = exe.trim_start().trim_start_matches('=').trim();
            out.insert(section.clone(), exe.to_string());
        }
    }
    out
}

fn hash_after(exe: &str, flag: &str) -> i64 {
    let rest = exe
        .split_once(flag)
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("{flag} in {exe}"));
    rest.trim_start_matches(['=', ' '])
        .split(' ')
        .next()
        .and_then(|h| h.parse().ok())
        .expect("a hash")
}

fn fixture_context() -> (Config, Context) {
    let cfg = Config::parse(&fixture("config.ini")).expect("config");
    let exe = executed();
    let hashes = [
        hash_after(&exe["ior-easy-write"], " -G"),
        hash_after(&exe["mdtest-easy-write"], " -G"),
        hash_after(&exe["ior-hard-write"], " -G"),
        hash_after(&exe["mdtest-hard-write"], " -G"),
    ];
    let cx = Context {
        datadir: "/dev/shm/io5run/data".into(),
        resdir: "/dev/shm/io5run/results".into(),
        hashes,
        extended: false,
    };
    (cfg, cx)
}

/// The shape test: every phase's command line is, word for word, the one
/// the real io500 ran for the same config (only the per-run hashes are
/// taken from that run), in the same order.
#[test]
fn every_phase_runs_what_the_real_io500_ran_in_its_order() {
    let (cfg, cx) = fixture_context();
    let plans = plan(&cfg, &cx);
    let exe = executed();
    let with_exe: Vec<&str> = plans
        .iter()
        .filter(|p| !p.argv.is_empty())
        .map(|p| p.phase.name)
        .collect();
    let mut in_order: Vec<(usize, &str)> = Vec::new();
    let text = fixture("result.txt");
    for name in exe.keys() {
        let at = text.find(&format!("[{name}]")).expect("section");
        in_order.push((at, name));
    }
    in_order.sort();
    let theirs: Vec<&str> = in_order.into_iter().map(|(_, n)| n).collect();
    assert_eq!(with_exe, theirs, "the same phases in the same order");
    for p in &plans {
        if let Some(e) = exe.get(p.phase.name) {
            assert_eq!(&p.argv.join(" "), e, "{}", p.phase.name);
        }
    }
}

#[test]
fn the_shapes_say_what_runs_on_which_files() {
    let (cfg, cx) = fixture_context();
    let plans = plan(&cfg, &cx);
    let shape = |n: &str| &plans.iter().find(|p| p.phase.name == n).expect(n).shape;
    match shape("ior-hard-write") {
        Shape::Ior {
            file_per_proc,
            transfer,
            block,
            segments,
            stonewall_s,
            wear_out,
            ..
        } => {
            assert!(!file_per_proc, "one shared file");
            assert_eq!((*transfer, *block, *segments), (47_008, 47_008, 400));
            assert_eq!(*stonewall_s, Some(1));
            assert!(*wear_out);
        }
        s => panic!("{s:?}"),
    }
    match shape("ior-easy-read") {
        Shape::Ior {
            access,
            file_per_proc,
            verify,
            stonewall_s,
            task_shift,
            ..
        } => {
            assert_eq!(*access, Access::Read);
            assert!(*file_per_proc && *verify);
            assert_eq!(*stonewall_s, None, "reads what was written, whole");
            assert_eq!(*task_shift, Some(1));
        }
        s => panic!("{s:?}"),
    }
    match shape("mdtest-hard-read") {
        Shape::Mdtest {
            op,
            unique_dir,
            file_bytes,
            files_per_proc,
            ..
        } => {
            assert_eq!(*op, MdOp::Read);
            assert!(!unique_dir, "one shared directory");
            assert_eq!((*file_bytes, *files_per_proc), (3_901, 1_000));
        }
        s => panic!("{s:?}"),
    }
    match shape("mdtest-easy-write") {
        Shape::Mdtest {
            unique_dir,
            file_bytes,
            stonewall_s,
            ..
        } => {
            assert!(*unique_dir);
            assert_eq!((*file_bytes, *stonewall_s), (0, Some(1)));
        }
        s => panic!("{s:?}"),
    }
}

#[test]
fn switched_off_phases_and_their_dummies_are_left_out() {
    let cfg = Config::parse("[ior-hard]\nrun = FALSE\n[find]\nrun = false\n").expect("config");
    let cx = Context {
        datadir: "/d".into(),
        resdir: "/r".into(),
        hashes: [1, 2, 3, 4],
        extended: false,
    };
    let names: Vec<&str> = plan(&cfg, &cx).iter().map(|p| p.phase.name).collect();
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("ior-hard") || *n == "find"),
        "{names:?}"
    );
    assert!(names.contains(&"ior-easy-write") && names.contains(&"mdtest-hard-delete"));
}

#[test]
fn files_per_dir_drops_the_create_stonewall_as_io500_does() {
    let cfg = Config::parse("[mdtest-hard]\nfiles-per-dir = 100\n").expect("config");
    let cx = Context {
        datadir: "/d".into(),
        resdir: "/r".into(),
        hashes: [1, 2, 3, 4],
        extended: false,
    };
    let p = plan(&cfg, &cx);
    let w = p
        .iter()
        .find(|p| p.phase.name == "mdtest-hard-write")
        .expect("planned");
    assert!(w.argv.contains(&"-I=100".to_string()) && !w.argv.contains(&"-W".to_string()));
    assert!(cfg.invalid_reasons().contains(&crate::Reason::FilesPerDir));
}
