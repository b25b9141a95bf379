//! Headless Chromium for the report's browser tests (`chromium.rs`,
//! `print.rs`): where to find it, and one run of it with a fresh profile.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's `chromium`, or `STORLAB_CHROMIUM`; `None` when absent.
pub fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("STORLAB_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    p.exists().then_some(p)
}

/// Run Chromium headless on `page` with `extra` flags and a fresh profile in
/// `dir`; returns (stdout, stderr log). Killed after 90 s.
pub fn run_chromium(bin: &Path, dir: &Path, page: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir_in(dir).unwrap();
    let out_path = dir.join(format!("stdout-{}.txt", extra.len()));
    let err_path = dir.join(format!("stderr-{}.txt", extra.len()));
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        std::fs::read_to_string(&out_path).unwrap_or_default(),
        std::fs::read_to_string(&err_path).unwrap_or_default(),
    )
}
