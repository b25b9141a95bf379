use super::*;

/// A run killed while its scratch file existed: the next start's
/// recovery removes the file with the state (and restores the values).
#[test]
fn recovery_removes_the_scratch_file_a_killed_run_left() {
    let d = tempfile::tempdir().unwrap();
    let scratch = d.path().join("storlab-tune-readahead.1.dat");
    std::fs::write(&scratch, b"data").unwrap();
    let state = d.path().join("tune-readahead.json");
    let saved = SavedState {
        pid: u32::MAX, // no such process
        original_kb: BTreeMap::new(),
        scratch: Some(scratch.clone()),
        identity: BTreeMap::new(),
    };
    std::fs::write(&state, serde_json::to_string(&saved).unwrap()).unwrap();
    let r = recover(&state).unwrap().unwrap();
    assert!(
        r.restored.is_empty() && r.removed_scratch == [scratch.clone()],
        "{r:?}"
    );
    assert!(!scratch.exists() && !state.exists());
    // A state file of an older storlab (no scratch field) still loads.
    std::fs::write(&state, r#"{"pid": 4294967295, "original_kb": {}}"#).unwrap();
    assert!(
        recover(&state)
            .unwrap()
            .is_some_and(|r| r.restored.is_empty())
    );
}

/// A fake `/sys/block/loop3` over `image`, read-ahead `kb`.
fn fake_loop(sys: &Path, image: &Path, kb: u64) -> PathBuf {
    let dir = sys.join("loop3");
    std::fs::create_dir_all(dir.join("loop")).unwrap();
    std::fs::create_dir_all(dir.join("queue")).unwrap();
    std::fs::write(dir.join("dev"), "7:3\n").unwrap();
    std::fs::write(
        dir.join("loop/backing_file"),
        format!("{}\n", image.display()),
    )
    .unwrap();
    let ra = dir.join("queue/read_ahead_kb");
    std::fs::write(&ra, format!("{kb}\n")).unwrap();
    ra
}

/// What a fake loop device holds: the file at its `backing_file` path
/// (the real /dev/loop3 is not asked).
fn fake_identity(sys: &Path) -> Option<Identity> {
    Identity::read(sys, &|_, sys: &Path| {
        let p = std::fs::read_to_string(sys.join("loop/backing_file")).ok()?;
        storlab_host::blockstack::file_id(Path::new(p.trim()))
    })
}

/// The state saved for `ra` (its identity as now) with `kb` as the
/// original value.
fn save(state: &Path, ra: &Path, kb: u64) {
    let saved = SavedState {
        pid: u32::MAX,
        original_kb: [("loop3".to_string(), (ra.to_path_buf(), kb))].into(),
        scratch: None,
        identity: [(
            "loop3".to_string(),
            fake_identity(sys_dir(ra).unwrap()).unwrap(),
        )]
        .into(),
    };
    std::fs::write(state, serde_json::to_string(&saved).unwrap()).unwrap();
}

/// A loop device detached and attached to another image since the
/// state was saved: the old value is not written to it; the same
/// device (same image) gets its value back.
#[test]
fn recovery_writes_only_to_the_device_it_saved() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.img"), d.path().join("b.img"));
    std::fs::write(&a, b"a").unwrap();
    std::fs::write(&b, b"b").unwrap();
    let state = d.path().join("tune-readahead.loop3.json");
    let ra = fake_loop(d.path(), &a, 8192);
    save(&state, &ra, 256);
    // Re-attached to b.img: left alone, and the state is dropped.
    fake_loop(d.path(), &b, 128);
    let r = recover_with(&state, &fake_identity).unwrap().unwrap();
    assert!(r.restored.is_empty(), "{r:?}");
    assert!(
        r.dropped.len() == 1 && r.dropped[0].contains("b.img"),
        "{r:?}"
    );
    assert_eq!(read_kb(&ra).unwrap(), 128);
    assert!(!state.exists());
    // Detached (no backing file): left alone too.
    save(&state, &fake_loop(d.path(), &a, 8192), 256);
    std::fs::remove_file(d.path().join("loop3/loop/backing_file")).unwrap();
    let r = recover_with(&state, &fake_identity).unwrap().unwrap();
    assert!(
        r.restored.is_empty() && r.dropped[0].contains("gone"),
        "{r:?}"
    );
    assert_eq!(read_kb(&ra).unwrap(), 8192);
    // The same image: restored.
    save(&state, &fake_loop(d.path(), &a, 8192), 256);
    let r = recover_with(&state, &fake_identity).unwrap().unwrap();
    assert!(r.dropped.is_empty(), "{r:?}");
    assert_eq!(read_kb(&ra).unwrap(), 256);
}

/// The lock of a device is exclusive while held (by another open file
/// description, as another process would hold it) and names its pid.
#[test]
fn a_device_lock_is_exclusive_and_names_its_holder() {
    let d = tempfile::tempdir().unwrap();
    let held = lock_device(d.path(), "loop3").unwrap().unwrap();
    assert_eq!(
        lock_device(d.path(), "loop3").unwrap().err(),
        Some(Some(std::process::id()))
    );
    assert!(lock_device(d.path(), "loop4").unwrap().is_ok());
    drop(held);
    assert!(lock_device(d.path(), "loop3").unwrap().is_ok());
}

/// `losetup` with `args`, its stdout trimmed; panics on failure.
fn losetup(args: &[&str]) -> String {
    let o = std::process::Command::new("losetup")
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "losetup {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Detaches a loop device when dropped.
struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// A real loop device: its identity is the file it holds, as the kernel
/// reports it (`LOOP_GET_STATUS64`), not whatever file is at the path
/// sysfs shows. Saved over image A, then A deleted and image B moved to
/// A's old path while the device still holds A: the same device, its
/// value restored. Saved then and re-attached to B (at A's old path): not
/// the device saved, its value dropped. Both failed when the identity was
/// `stat` of `loop/backing_file`.
#[test]
fn recovery_tells_a_loop_image_from_another_moved_to_its_path() {
    let test = "recovery_tells_a_loop_image_from_another_moved_to_its_path";
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.img"), d.path().join("b.img"));
    std::fs::write(&a, vec![0u8; 1 << 20]).unwrap();
    std::fs::write(&b, vec![1u8; 1 << 20]).unwrap();
    // Attaching needs root and losetup: without them, skip.
    let attach = std::process::Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&a)
        .output();
    let dev = match attach {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        other => {
            storlab_testkit::skip(
                test,
                &format!("cannot attach a loop device (needs root and losetup): {other:?}"),
            );
            return;
        }
    };
    let _detach = Detach(dev.clone());
    let name = dev.trim_start_matches("/dev/").to_string();
    let ra = PathBuf::from(format!("/sys/block/{name}/queue/read_ahead_kb"));
    let orig = read_kb(&ra).unwrap();
    let state = d.path().join(format!("tune-readahead.{name}.json"));
    let save_now = |kb: u64| {
        let saved = SavedState {
            pid: u32::MAX,
            original_kb: [(name.clone(), (ra.clone(), kb))].into(),
            scratch: None,
            identity: [(name.clone(), Identity::of(sys_dir(&ra).unwrap()).unwrap())].into(),
        };
        std::fs::write(&state, serde_json::to_string(&saved).unwrap()).unwrap();
    };
    save_now(orig + 4);
    std::fs::remove_file(&a).unwrap();
    std::fs::rename(&b, &a).unwrap();
    let r = recover(&state).unwrap().unwrap();
    assert!(
        r.dropped.is_empty() && r.restored.len() == 1,
        "the same device was not restored: {r:?}"
    );
    assert_eq!(read_kb(&ra).unwrap(), orig + 4);
    save_now(orig + 8);
    losetup(&["-d", &dev]);
    losetup(&[&dev, a.to_str().unwrap()]);
    let before = read_kb(&ra).unwrap();
    let r = recover(&state).unwrap().unwrap();
    assert!(
        r.restored.is_empty() && r.dropped.len() == 1,
        "image A's value was put on image B: {r:?}"
    );
    assert_eq!(read_kb(&ra).unwrap(), before);
}

/// What a recovery did is told in order: scratch removed, values dropped,
/// values restored; a recovery that did nothing says nothing.
#[test]
fn a_recovery_tells_what_it_did() {
    assert!(Recovery::default().notes().is_empty());
    let r = Recovery {
        restored: vec![Restored {
            layer: "vda".into(),
            path: PathBuf::from("/sys/block/vda/queue/read_ahead_kb"),
            readahead_kb: 128,
        }],
        dropped: vec!["loop0 now holds another file".into()],
        removed_scratch: vec![PathBuf::from("/d/storlab-tune.tmp")],
    };
    let notes = r.notes();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes[0].starts_with("removed /d/storlab-tune.tmp "),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with("warning: ") && notes[1].ends_with("loop0 now holds another file")
    );
    assert!(notes[2].ends_with("left changed: vda 128 KiB"), "{notes:?}");
}
