//! Loop devices, partitions, file systems and mounts made by a test, undone
//! when dropped — in reverse order of making, also when an assertion fails
//! (a panic unwinds through the drop).
//!
//! Root tests only: call [`crate::root_with`] (or [`crate::skip`]) first.
//! A test never touches a device or mount it did not make here.

use crate::run_tool;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One thing made, and so one thing to undo.
#[derive(Debug)]
enum Made {
    File(PathBuf),
    Loop(String),
    Partition { disk: String, number: String },
    Mount(PathBuf),
}

/// What a test made, undone in reverse order on drop: mounts unmounted
/// (retried: a loop device detaches lazily), loop devices detached,
/// partitions deleted, files removed; then, for a stack made with
/// [`Stack::in_tempdir`], its directory removed, and checked gone.
#[derive(Debug, Default)]
pub struct Stack {
    made: Vec<Made>,
    /// The stack's own temporary directory, removed after everything in it
    /// is undone.
    dir: Option<tempfile::TempDir>,
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Stack {
    pub fn new() -> Stack {
        Stack::default()
    }

    /// A stack with a temporary directory of its own ([`Stack::dir`]) for
    /// its images and mount points, removed when the stack is dropped,
    /// after every mount in it is undone. A `TempDir` dropped before the
    /// stack that mounted in it cannot be removed (the mount is busy) and
    /// leaves its empty mount point in /tmp; here the order is the
    /// stack's, whatever order a test declares things in. A directory
    /// still there after the drop fails the test.
    pub fn in_tempdir() -> Result<Stack, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
        Ok(Stack {
            made: Vec::new(),
            dir: Some(dir),
        })
    }

    /// The directory of a stack made with [`Stack::in_tempdir`].
    ///
    /// # Panics
    /// For a stack made with [`Stack::new`] (a test's mistake).
    pub fn dir(&self) -> &Path {
        match &self.dir {
            Some(d) => d.path(),
            None => panic!("Stack::dir: this stack was made with Stack::new, not in_tempdir"),
        }
    }

    /// A sparse file of `size` bytes at `path` (created or resized), removed
    /// on drop.
    pub fn file(&mut self, path: &Path, size: u64) -> Result<PathBuf, String> {
        std::fs::File::create(path)
            .and_then(|f| f.set_len(size))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.made.push(Made::File(path.to_path_buf()));
        Ok(path.to_path_buf())
    }

    /// Attach a loop device over `backing` (a file or another device), with
    /// `extra` losetup options (`-P`, `--direct-io=on`); its `/dev` path.
    pub fn attach(&mut self, backing: &Path, extra: &[&str]) -> Result<String, String> {
        let mut args = vec!["-f", "--show"];
        args.extend_from_slice(extra);
        let b = s(backing);
        args.push(&b);
        let dev = run_tool("losetup", &args)?;
        self.made.push(Made::Loop(dev.clone()));
        Ok(dev)
    }

    /// A loop device over a new sparse file of `size` bytes at `img` (the
    /// file is left to the test's temporary directory).
    pub fn sparse_loop(&mut self, img: &Path, size: u64) -> Result<String, String> {
        std::fs::File::create(img)
            .and_then(|f| f.set_len(size))
            .map_err(|e| format!("{}: {e}", img.display()))?;
        self.attach(img, &[])
    }

    /// Partition `number` of `disk` from sector `start`, `sectors` long,
    /// through BLKPG (`addpart`); its device path (`{disk}p{number}`).
    pub fn add_partition(
        &mut self,
        disk: &str,
        number: &str,
        start: &str,
        sectors: &str,
    ) -> Result<String, String> {
        run_tool("addpart", &[disk, number, start, sectors])?;
        self.made.push(Made::Partition {
            disk: disk.to_string(),
            number: number.to_string(),
        });
        Ok(format!("{disk}p{number}"))
    }

    /// `mkfs.FS ARGS... DEV` (nothing to undo: the device goes with its loop).
    pub fn mkfs(&mut self, fs: &str, args: &[&str], dev: &str) -> Result<(), String> {
        let mut a = args.to_vec();
        a.push(dev);
        run_tool(&format!("mkfs.{fs}"), &a).map(|_| ())
    }

    /// `mount ARGS... SOURCE AT` (`at` created if missing; `args` such as
    /// `["-o", "noatime"]` or `["-t", "tmpfs", "-o", "size=64m"]`);
    /// unmounted on drop.
    pub fn mount(&mut self, source: &str, at: &Path, args: &[&str]) -> Result<(), String> {
        std::fs::create_dir_all(at).map_err(|e| format!("{}: {e}", at.display()))?;
        let at_s = s(at);
        let mut a = args.to_vec();
        a.extend([source, at_s.as_str()]);
        run_tool("mount", &a)?;
        self.made.push(Made::Mount(at.to_path_buf()));
        Ok(())
    }

    /// ext4 on `dev` (no lazy initialisation, which would write in the
    /// background while a test measures) mounted `noatime` on `at`.
    pub fn ext4_mounted(&mut self, dev: &str, at: &Path) -> Result<(), String> {
        self.mkfs(
            "ext4",
            &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
            dev,
        )?;
        self.mount(dev, at, &["-o", "noatime"])
    }

    /// Unmount `at` now (retrying briefly) instead of on drop.
    pub fn umount(&mut self, at: &Path) {
        umount_retrying(at);
        self.made
            .retain(|m| !matches!(m, Made::Mount(p) if p.as_path() == at));
    }

    /// Detach `dev` now and wait until the kernel has let go of its backing.
    pub fn detach(&mut self, dev: &str) {
        self.made
            .retain(|m| !matches!(m, Made::Loop(l) if l == dev));
        detach_waiting(dev);
    }
}

/// `losetup -d`, then wait (up to 4 s) until the kernel has let go of the
/// backing: the detach is lazy, and a test that checks right after (or
/// removes the backing's directory) must find it gone.
fn detach_waiting(dev: &str) {
    let _ = run_tool("losetup", &["-d", dev]);
    let backing = PathBuf::from(format!("/sys/block/{}/loop/backing_file", name(dev)));
    for _ in 0..40 {
        if !backing.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        while let Some(m) = self.made.pop() {
            match m {
                Made::Mount(at) => umount_retrying(&at),
                Made::Loop(dev) => detach_waiting(&dev),
                Made::Partition { disk, number } => {
                    let _ = run_tool("delpart", &[&disk, &number]);
                }
                Made::File(f) => {
                    let _ = std::fs::remove_file(f);
                }
            }
        }
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            let closed = dir.close();
            if (closed.is_err() || path.exists()) && !std::thread::panicking() {
                panic!(
                    "the test's directory {} is left behind: {closed:?}",
                    path.display()
                );
            }
        }
    }
}

/// A device's kernel name: `/dev/loop3` → `loop3`.
pub fn name(dev: &str) -> &str {
    dev.trim_start_matches("/dev/")
}

/// The read-ahead file of a whole device (`/sys/block/NAME/queue/read_ahead_kb`).
pub fn read_ahead_file(dev: &str) -> PathBuf {
    PathBuf::from(format!("/sys/block/{}/queue/read_ahead_kb", name(dev)))
}

/// Unmount, retrying for up to ~4.5 s (a loop device over a file in the
/// mount detaches lazily; a child may still be leaving).
pub fn umount_retrying(at: &Path) {
    for _ in 0..30 {
        if run_tool("umount", &[&s(at)]).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// One loop device over a sparse file: the common case.
#[derive(Debug)]
pub struct Loop {
    /// Its `/dev` path.
    pub dev: String,
    stack: Stack,
}

impl Loop {
    /// A loop device over a new sparse file of `size` bytes at `img`.
    pub fn sparse(img: &Path, size: u64) -> Result<Loop, String> {
        let mut stack = Stack::new();
        let dev = stack.sparse_loop(img, size)?;
        Ok(Loop { dev, stack })
    }

    /// A loop device over an existing file (or device) `backing`.
    pub fn over(backing: &Path) -> Result<Loop, String> {
        let mut stack = Stack::new();
        let dev = stack.attach(backing, &[])?;
        Ok(Loop { dev, stack })
    }

    /// Its kernel name (`loop3`).
    pub fn name(&self) -> &str {
        name(&self.dev)
    }

    /// Its read-ahead file (`/sys/block/NAME/queue/read_ahead_kb`).
    pub fn ra_file(&self) -> PathBuf {
        read_ahead_file(&self.dev)
    }

    /// Its read-ahead in KiB (panics when unreadable: for tests).
    pub fn ra(&self) -> u64 {
        let f = self.ra_file();
        let text =
            std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        text.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", f.display()))
    }

    /// Set its read-ahead in KiB (panics when refused: for tests).
    pub fn set_ra(&self, kb: u64) {
        let f = self.ra_file();
        std::fs::write(&f, kb.to_string()).unwrap_or_else(|e| panic!("write {}: {e}", f.display()));
    }

    /// The stack it belongs to: make a file system and mount it there, undone
    /// before the device is detached.
    pub fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_read_ahead_paths() {
        assert_eq!(name("/dev/loop7"), "loop7");
        assert_eq!(name("loop7"), "loop7");
        assert_eq!(
            read_ahead_file("/dev/loop7"),
            PathBuf::from("/sys/block/loop7/queue/read_ahead_kb")
        );
    }

    /// Files are removed on drop, in reverse order, and on a panic too.
    #[test]
    fn files_made_are_removed_on_drop_and_on_panic() {
        let d = std::env::temp_dir().join(format!("storlab-loopdev-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (a, b) = (d.join("a.img"), d.join("b.img"));
        {
            let mut st = Stack::new();
            st.file(&a, 1 << 20).unwrap();
            assert_eq!(std::fs::metadata(&a).unwrap().len(), 1 << 20);
        }
        assert!(!a.exists());
        let b2 = b.clone();
        let r = std::panic::catch_unwind(move || {
            let mut st = Stack::new();
            st.file(&b2, 4096).unwrap();
            panic!("a failed assertion");
        });
        assert!(r.is_err());
        assert!(!b.exists(), "removed while unwinding");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// With root and losetup: a stack in its own directory, with ext4
    /// mounted there over a loop device on an image there, leaves nothing
    /// behind (no directory, no mount, no loop device). The monitor test
    /// that mounted under a `TempDir` declared after its stack left its
    /// empty `mnt` in /tmp on every run.
    #[test]
    fn a_stack_in_its_own_directory_leaves_nothing_behind() {
        const T: &str = "loopdev::a_stack_in_its_own_directory_leaves_nothing_behind";
        if !crate::root_with(
            T,
            &["losetup", "mkfs.ext4", "mount", "umount"],
            "loop devices, mounts",
            "Debian: util-linux, e2fsprogs",
        ) {
            return;
        }
        let (dir, dev, img);
        {
            let mut st = Stack::in_tempdir().unwrap();
            dir = st.dir().to_path_buf();
            img = st.file(&dir.join("disk.img"), 32 << 20).unwrap();
            dev = st.attach(&img, &[]).unwrap();
            let mnt = dir.join("mnt");
            st.ext4_mounted(&dev, &mnt).unwrap();
            std::fs::write(mnt.join("f"), b"x").unwrap();
        }
        assert!(!dir.exists(), "{} left behind", dir.display());
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        assert!(!mounts.lines().any(|l| l.starts_with(&format!("{dev} "))));
        let backing = PathBuf::from(format!("/sys/block/{}/loop/backing_file", name(&dev)));
        let attached = std::fs::read_to_string(backing).is_ok_and(|f| f.trim() == s(&img));
        assert!(!attached, "{dev} still attached");
    }

    /// With root and losetup: a mounted ext4 on a loop device is unmounted
    /// and detached on drop.
    #[test]
    fn a_mounted_loop_is_unmounted_and_detached_on_drop() {
        const T: &str = "loopdev::a_mounted_loop_is_unmounted_and_detached_on_drop";
        if !crate::root_with(
            T,
            &["losetup", "mkfs.ext4", "mount", "umount"],
            "loop devices, mounts",
            "Debian: util-linux, e2fsprogs",
        ) {
            return;
        }
        let d = std::env::temp_dir().join(format!("storlab-loopdev-m-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let mnt = d.join("mnt");
        let dev;
        {
            let mut lo = Loop::sparse(&d.join("disk.img"), 32 << 20).unwrap();
            dev = lo.dev.clone();
            lo.stack().ext4_mounted(&dev, &mnt).unwrap();
            let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
            assert!(mounts.lines().any(|l| l.starts_with(&format!("{dev} "))));
        }
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        assert!(
            !mounts.lines().any(|l| l.starts_with(&format!("{dev} "))),
            "unmounted"
        );
        let backing = PathBuf::from(format!("/sys/block/{}/loop/backing_file", name(&dev)));
        let attached =
            |b: &Path| std::fs::read_to_string(b).is_ok_and(|f| f.trim() == s(&d.join("disk.img")));
        assert!(!attached(&backing), "detached");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
