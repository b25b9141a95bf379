//! storlab's test scaffolding, one definition of each piece the tests of
//! several crates (and the integration tests) share. A dev-dependency only:
//! no library or binary of storlab links it.
//!
//! * [`skip`]: the rule for a test that cannot run here (printed locally, a
//!   failure with `CI=true`).
//! * [`records`], [`fixtures`], [`json_records`]: result records to test
//!   with — quick plausible runs, the report's realistic fixture runs, and
//!   records built from JSON (fields added later take their serde default).
//! * [`loopdev`]: loop devices, partitions, file systems and mounts a test
//!   makes, undone in reverse order when dropped (a failed assertion too).
//! * [`golden`]: compare output with a committed file; one variable,
//!   [`golden::UPDATE_VAR`], regenerates every golden file.
//! * [`md_spec!`]: the md job of the metadata tests.
//! * [`run_tool`], [`have`], [`is_root`]: probing and running system tools.
#![forbid(unsafe_code)]

pub mod fixtures;
pub mod golden;
pub mod json_records;
pub mod loopdev;
pub mod md;
pub mod records;

use std::process::{Command, Stdio};

/// Whether this run is CI's (`CI=true` or `CI=1`), where every tool is
/// installed and a skipped test is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Say why a test cannot run here, or fail it in CI.
///
/// Tests that need root, io_uring, a loop device, MPI or a Debian tool probe
/// for it and call this when it is missing. Locally the reason is printed
/// straight to the process's stderr (not through `eprintln!`, which the test
/// harness captures) and the test returns early. In CI (`CI=true`) every
/// tool is installed by `.ci/run`, so a skip means a claim went unproven:
/// this panics and the run fails.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    if in_ci() {
        panic!("SKIP is a failure in CI (CI=true): {test}: {why}");
    }
    let _ = writeln!(std::io::stderr().lock(), "SKIP {test}: {why}");
}

/// Whether the process runs as root (loop devices, mounts, drop_caches):
/// the effective uid of `/proc/self/status`.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Whether a command is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Root and every one of `tools`, or `false` after [`skip`] with the reason
/// (`packages` names where the tools come from, e.g. "Debian: util-linux").
pub fn root_with(test: &str, tools: &[&str], why_root: &str, packages: &str) -> bool {
    if !is_root() {
        skip(test, &format!("needs root ({why_root})"));
        return false;
    }
    if let Some(t) = tools.iter().find(|t| !have(t)) {
        skip(test, &format!("{t} is not installed ({packages})"));
        return false;
    }
    true
}

/// Run a system tool (losetup, mkfs, ...); its trimmed stdout, or an error
/// naming the command and what it printed.
pub fn run_tool(cmd: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_root_agrees_with_the_owner_of_a_new_file() {
        use std::os::unix::fs::MetadataExt;
        let f = std::env::temp_dir().join(format!("storlab-testkit-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        let uid = std::fs::metadata(&f).unwrap().uid();
        std::fs::remove_file(&f).unwrap();
        assert_eq!(is_root(), uid == 0);
    }

    #[test]
    fn have_finds_sh_and_not_a_made_up_tool() {
        assert!(have("sh"));
        assert!(!have("storlab-no-such-tool-xyz"));
    }

    #[test]
    fn run_tool_returns_trimmed_stdout_or_names_the_failure() {
        assert_eq!(run_tool("echo", &[" hi "]).unwrap(), "hi");
        let e = run_tool("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
        assert!(e.starts_with("sh [") && e.ends_with("oops"), "{e}");
    }
}
