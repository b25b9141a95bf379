//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Path of the storlab binary built for this test run.
pub fn storlab_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_storlab"))
}

static TEST_HOME: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();

/// Removes the test process's private home (database, config, data) when
/// the test binary exits: a `static` is never dropped, so without this every
/// run of the integration tests left a directory behind in the temp dir.
extern "C" fn remove_test_home() {
    if let Some(d) = TEST_HOME.get() {
        let _ = std::fs::remove_dir_all(d.path());
    }
}

/// A results database private to this test process, so no test ever
/// writes `./storlab.db` in the source tree; removed when the process exits.
pub fn test_db() -> PathBuf {
    TEST_HOME
        .get_or_init(|| {
            // SAFETY: registers a plain function with no captured state; it
            // runs once at process exit (the test harness ends with exit()).
            unsafe { libc::atexit(remove_test_home) };
            tempfile::tempdir().expect("temp dir for the test database")
        })
        .path()
        .join("storlab-test.db")
}

/// A storlab command with the test environment: private database, private
/// (empty) config and data directories — a developer's own
/// `~/.config/storlab/config.toml` never changes a test, and no test writes
/// to `~/.local/share` — no colours, no terminal on stdin.
pub fn cmd() -> Command {
    let home = test_db()
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let mut c = Command::new(storlab_bin());
    c.env("NO_COLOR", "1")
        .env("STORLAB_DB", test_db())
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .stdin(std::process::Stdio::null());
    c
}

/// Run storlab with `args`; never inherits a terminal.
pub fn storlab(args: &[&str]) -> Output {
    cmd().args(args).output().expect("run storlab")
}

/// The shared scaffolding (one definition each, in `crates/testkit`): the
/// skip rule (a failure with `CI=true`), root and tool probes, running a
/// system tool, loop devices and mounts undone on drop.
pub use storlab_testkit::{have, is_root, loopdev, root_with, run_tool, skip};

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fio/storlab result file shipped with the store crate's tests.
pub fn store_fixture(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/fio/fixtures")
        .join(name)
}

/// Run storlab in `dir` with `STORLAB_DB` pointing at `dir/results.db`.
pub fn run_in(dir: &std::path::Path, args: &[&str]) -> Output {
    cmd()
        .args(args)
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.db"))
        .output()
        .expect("run storlab")
}

/// Assert success; return stdout.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// The quick check ran: exit 0, its four phases and the main columns in the
/// table, the default scratch directory under `dir` removed, no progress
/// noise without a terminal. Returns stdout.
pub fn assert_quick_check(out: &Output, dir: &std::path::Path) -> String {
    let text = ok(out);
    for needle in [
        "seq-write",
        "seq-read",
        "rand-read",
        "rand-write",
        "MB/s",
        "IOPS",
        "p99",
        "in flight",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    assert!(
        !dir.join("storlab-scratch").exists(),
        "default scratch directory removed"
    );
    assert!(!stderr(out).contains('\r'));
    text
}

/// Root and every one of `tools`, or `false` after a printed reason to skip
/// (the root tests that make loop devices, mounts and /sys writes).
pub fn needs_root_and(test: &str, tools: &[&str]) -> bool {
    root_with(
        test,
        tools,
        "loop devices, mounts, /sys writes",
        "Debian: util-linux e2fsprogs xfsprogs btrfs-progs procps coreutils",
    )
}

/// A loop device over a file of `size` bytes in a temporary directory of its
/// own; detached, then the file removed, on drop. None (with a printed
/// reason) when not root or losetup fails.
pub struct LoopDev {
    pub dev: PathBuf,
    lo: loopdev::Loop,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    pub fn new(size: u64) -> Option<LoopDev> {
        if !is_root() {
            skip("loop device test", "needs root to create a loop device");
            return None;
        }
        // A scratch file that cannot be made is a failure, never a skip.
        let dir = tempfile::tempdir().expect("temporary directory");
        let backing = dir.path().join("backing.img");
        std::fs::File::create(&backing)
            .and_then(|f| f.set_len(size))
            .expect("backing file");
        match loopdev::Loop::over(&backing) {
            Ok(lo) => Some(LoopDev {
                dev: PathBuf::from(&lo.dev),
                lo,
                _dir: dir,
            }),
            Err(e) => {
                skip("loop device test", &format!("losetup failed: {e}"));
                None
            }
        }
    }
    pub fn name(&self) -> String {
        self.lo.name().to_string()
    }
    /// Its path as text.
    pub fn path(&self) -> String {
        s(&self.dev)
    }
    /// The stack it belongs to: a file system made and mounted there is
    /// unmounted before the device is detached, on every path.
    pub fn stack(&mut self) -> &mut loopdev::Stack {
        self.lo.stack()
    }
}

/// A tmpfs of `size` mounted on a new temporary directory (root only);
/// unmounted, then the directory removed, on drop.
pub struct Tmpfs {
    mount: loopdev::Stack,
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// None (with a printed reason) when not root or the mount fails.
    pub fn new(test: &str, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            skip(test, "needs root to mount a small tmpfs");
            return None;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut mount = loopdev::Stack::new();
        let opts = format!("size={size}");
        if let Err(e) = mount.mount("tmpfs", dir.path(), &["-t", "tmpfs", "-o", &opts]) {
            skip(test, &format!("cannot mount tmpfs: {e}"));
            return None;
        }
        Some(Tmpfs { mount, dir })
    }
    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
    /// Remount it read-only; whether that worked.
    pub fn remount_read_only(&self) -> bool {
        run_tool(
            "mount",
            &["-o", "remount,ro", &self.dir.path().to_string_lossy()],
        )
        .is_ok()
    }
}

/// `dir`'s path as text (for argument lists).
pub fn s(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A storlab command run in `dir` with `STORLAB_DB` at `dir/results.db`.
pub fn in_dir(dir: &std::path::Path) -> Command {
    let mut c = cmd();
    c.current_dir(dir).env("STORLAB_DB", dir.join("results.db"));
    c
}

/// stdout parsed as JSON, or a failure showing stdout and stderr.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// `storlab bench DIR ARGS... --no-save --output-format json -q`, which must
/// succeed; its JSON document.
pub fn bench_json(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let d = dir.to_str().unwrap();
    let mut a = vec!["bench", d];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--no-save", "--output-format", "json", "-q"]);
    let out = storlab(&a);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        stderr(&out),
        stdout(&out)
    );
    json(&out)
}

/// A JSON number as u64, or a failure naming the value.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

/// Wait for a child with a deadline; kill it and fail if it hangs.
pub fn wait_at_most(child: std::process::Child, limit: std::time::Duration) -> Output {
    wait_named(child, limit, "storlab")
}

/// [`wait_at_most`], naming `what` ran in the failure.
pub fn wait_named(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> Output {
    let t = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: storlab did not finish within {limit:?} (blocked?)\nstderr:\n{}",
                stderr(&out)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether `dir` takes O_DIRECT and the kernel has io_uring (the engine
/// tests on the real device), or why not.
pub fn uring_and_direct(dir: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join("probe");
    std::fs::write(&probe, vec![0u8; 4096]).map_err(|e| e.to_string())?;
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = std::fs::remove_file(&probe);
    if !direct {
        return Err(format!("{} does not support O_DIRECT", dir.display()));
    }
    storlab_bench::uring_available().map_err(|e| format!("io_uring is not available: {e}"))
}

/// Write `text` to `dir/name`; its path.
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `storlab campaign ARGS --yes` with its directory (`dir/campaigns`) and
/// database (`dir/r.db`) in `dir`.
pub fn campaign_cmd(dir: &std::path::Path, args: &[&str]) -> Command {
    let mut c = cmd();
    c.arg("campaign")
        .args(args)
        .args(["--yes", "--dir"])
        .arg(dir.join("campaigns"))
        .arg("--db")
        .arg(dir.join("r.db"));
    c
}

/// [`campaign_cmd`], run to the end.
pub fn campaign(dir: &std::path::Path, args: &[&str]) -> Output {
    campaign_cmd(dir, args).output().unwrap()
}

/// `mpirun -np N LAUNCH...` with the test environment, bounded by `secs`
/// (`timeout`, so a hang fails instead of blocking CI), oversubscribed and
/// allowed as root; `LAUNCH` is storlab and its arguments, or `sh -c
/// SCRIPT`. None (a printed skip for `test`) without mpirun.
pub fn mpirun<S: AsRef<std::ffi::OsStr>>(
    test: &str,
    np: u32,
    secs: u32,
    launch: impl IntoIterator<Item = S>,
) -> Option<Output> {
    if !have("mpirun") {
        skip(
            test,
            "mpirun not found (Debian: openmpi-bin libopenmpi-dev)",
        );
        return None;
    }
    let mut c = Command::new("timeout");
    c.arg(secs.to_string()).arg("mpirun");
    if is_root() {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-np", &np.to_string()]);
    c.args(launch);
    for (k, v) in cmd().get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.stdin(std::process::Stdio::null());
    Some(c.output().expect("run mpirun"))
}

/// [`mpirun`] of `storlab WORDS` (shell text) on `np` ranks, each in a
/// shell that sees `$r` (its rank).
pub fn mpirun_sh(test: &str, np: u32, secs: u32, words: &str) -> Option<Output> {
    let script = format!(
        "r=$OMPI_COMM_WORLD_RANK; exec '{}' {words}",
        storlab_bin().display()
    );
    mpirun(test, np, secs, ["sh", "-c", &script])
}

/// `storlab ARGS --db DB` was refused before it stored anything: exit 2,
/// standard error naming each of `needles`, and no database at `db`.
pub fn refused_storing_nothing(args: &[&std::ffi::OsStr], db: &std::path::Path, needles: &[&str]) {
    let out = cmd().args(args).arg("--db").arg(db).output().expect("run");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no '{n}' in: {err}");
    }
    assert!(
        !db.exists(),
        "{args:?}: a database was made before the refusal"
    );
}

/// The phase named `name` of a run record (JSON).
pub fn phase<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["params"]["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name} in {v}"))
}
