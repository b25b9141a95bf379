//! `storlab inspect`: recorded and constructed trees, the live root file
//! system, JSON output and bad input.

use crate::util::loopdev::Stack;
use crate::util::{is_root, run_tool, skip, stderr, stdout, storlab};
use serde_json::Value;
use std::path::Path;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn raid_stack_with_reasons() {
    let o = storlab(&["inspect", "/data", "--sys-root", &fixture("md-lvm")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "xfs on /data",
        "unit 512 KiB, width 1.50 MiB",
        "raid5, chunk 512 KiB, 4 disks (3 with data per stripe)",
        "read-ahead 128 KiB on dm-0 (vg0-data) is low",
        "try: storlab tune readahead /data",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let o = storlab(&[
        "inspect",
        "/scratch",
        "--sys-root",
        &fixture("md-lvm"),
        "--output-format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["filesystem"]["fs_type"], "ext4");
    assert_eq!(v["stack"][1]["md"]["data_disks"], 3);
    let recs = v["recommendations"].as_array().unwrap();
    assert!(
        recs.iter()
            .any(|r| r["message"].as_str().unwrap().contains("does not match")),
        "{recs:?}"
    );
    let o = storlab(&["inspect", "/", "--sys-root", &fixture("md-lvm")]);
    assert!(
        stdout(&o).contains("about half as fast as ext4 and XFS"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn live_root_file_system() {
    let o = storlab(&[
        "inspect",
        env!("CARGO_MANIFEST_DIR"),
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fs = &v["filesystem"];
    assert!(fs["mount_point"].as_str().unwrap().starts_with('/'));
    assert!(fs["block_size_bytes"].as_u64().unwrap() >= 512);
    // Whatever the machine, a block device or a note that there is none.
    let stack = v["stack"].as_array().unwrap();
    if stack.is_empty() {
        assert!(!v["notes"].as_array().unwrap().is_empty(), "{v}");
    } else {
        assert!(stack[0]["logical_block_size_bytes"].as_u64().unwrap() >= 512);
    }
}

#[test]
fn bad_target_exits_2() {
    let o = storlab(&["inspect", "/no/such/path"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let o = storlab(&["inspect", "nosuchdisk"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("storlab monitor --tree"),
        "{}",
        stderr(&o)
    );
}

/// ext4 and XFS made with stripe geometry on a loop device: inspect reads
/// it back from the superblock / mount options, and the loop facts.
#[test]
fn live_stripe_geometry_on_loop_devices() {
    const NAME: &str = "inspect::live_stripe_geometry_on_loop_devices";
    if !is_root() {
        return skip(NAME, "needs root (loop devices, mount)");
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    // Unmounted, detached and removed on every path out of the test.
    let mut st = Stack::new();
    st.file(&img, 400 << 20).unwrap();
    let dev = match st.attach(&img, &[]) {
        Ok(d) => d,
        Err(e) => return skip(NAME, &format!("cannot attach a loop device: {e}")),
    };
    let mnt = dir.path().join("mnt");
    let m = mnt.to_string_lossy().into_owned();

    let mut cases: Vec<(&str, Vec<&str>, u64, u64)> = Vec::new();
    if run_tool("sh", &["-c", "command -v mkfs.ext4"]).is_ok() {
        cases.push((
            "mkfs.ext4",
            vec!["-q", "-F", "-b", "4096", "-E", "stride=16,stripe_width=64"],
            65536,
            262144,
        ));
    }
    if run_tool("sh", &["-c", "command -v mkfs.xfs"]).is_ok() {
        cases.push((
            "mkfs.xfs",
            vec!["-q", "-f", "-d", "su=128k,sw=2,agcount=2", "-l", "size=64m"],
            131072,
            262144,
        ));
    }
    if cases.is_empty() {
        return skip(NAME, "neither mkfs.ext4 nor mkfs.xfs is installed");
    }
    for (mkfs, args, su, sw) in cases {
        let mut a = args.clone();
        a.push(&dev);
        run_tool(mkfs, &a).unwrap();
        st.mount(&dev, &mnt, &[]).unwrap();
        let o = storlab(&["inspect", &m, "--output-format", "json"]);
        st.umount(&mnt);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let fs = &v["filesystem"];
        assert_eq!(fs["stripe_unit_bytes"].as_u64(), Some(su), "{mkfs}: {v}");
        assert_eq!(fs["stripe_width_bytes"].as_u64(), Some(sw), "{mkfs}: {v}");
        let top = &v["stack"][0];
        assert_eq!(top["kind"], "loop");
        assert_eq!(top["loop"]["direct_io"], false);
        assert!(
            top["loop"]["backing_file"]
                .as_str()
                .unwrap()
                .ends_with("fs.img")
        );
    }
}

/// A symlink to a block device outside /dev is that device, not a path on
/// devtmpfs (it was reported as "devtmpfs on /dev"; `monitor` and
/// `tune readahead` resolve paths the same way).
#[test]
fn a_symlink_to_a_loop_device_is_inspected_as_the_device() {
    let Some(lo) = crate::util::LoopDev::new(8 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("alias");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    let o = storlab(&["inspect", link.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let name = lo.dev.file_name().unwrap().to_str().unwrap();
    assert_eq!(v["device"], name, "{v}");
    let m = storlab(&["monitor", link.to_str().unwrap(), "0.05", "1"]);
    assert!(m.status.success(), "{}", stderr(&m));
    assert!(stdout(&m).contains(name), "{}", stdout(&m));
}
