//! One run record and one output layer (issue 21): every command that
//! starts a run builds its record with the one constructor (the command
//! line kept as typed, never a panic on bytes that are not UTF-8), and
//! every spelling of the output format a command ever had gives the same
//! document.

use crate::util::{cmd, ok, run_in, stderr, stdout};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// `storlab md` built its record by hand with `std::env::args()`, which
/// panics on an argument that is not UTF-8: a directory named in Latin-1
/// crashed the run (exit 101) after its tree was made.
#[test]
fn md_keeps_a_non_utf8_argument_in_its_record_instead_of_panicking() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join(OsString::from_vec(b"caf\xe9".to_vec()));
    std::fs::create_dir(&target).unwrap();
    let o = cmd()
        .arg("md")
        .arg(&target)
        .args(["-n", "20", "--quiet"])
        .current_dir(d.path())
        .env("STORLAB_DB", d.path().join("results.db"))
        .output()
        .unwrap();
    assert!(
        o.status.success() && !stderr(&o).contains("panicked"),
        "exit {:?}\n{}",
        o.status.code(),
        stderr(&o)
    );
    let shown = ok(&run_in(d.path(), &["show", "latest", "--json"]));
    let runs: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let line: Vec<&str> = runs[0]["report"]["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(line.iter().any(|a| a.ends_with("caf\\xE9")), "{line:?}");
    assert_eq!(runs[0]["kind"], "md");
    assert_eq!(runs[0]["report"]["tool"]["name"], "storlab");
}

/// `--json`, `--output-format json` and `--format json` are one argument:
/// the same document from each, for commands that had only some of them.
#[test]
fn every_spelling_of_the_output_format_gives_the_same_document() {
    let d = tempfile::tempdir().unwrap();
    let fixture = crate::util::store_fixture("fio-3.33-randread.json");
    ok(&run_in(d.path(), &["import", fixture.to_str().unwrap()]));
    for command in [
        vec!["runs"],
        vec!["show", "latest"],
        vec!["export", "--all"],
    ] {
        let run = |extra: &[&str]| {
            let mut args = command.clone();
            args.extend_from_slice(extra);
            ok(&run_in(d.path(), &args))
        };
        let json = run(&["--json"]);
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap_or_else(|e| panic!("{command:?} --json: not JSON ({e})"));
        assert_eq!(run(&["--output-format", "json"]), json, "{command:?}");
        assert_eq!(run(&["--format", "json"]), json, "{command:?}");
        // Two formats at once are refused, naming both (exit 2).
        let mut args = command.clone();
        args.extend_from_slice(&["--json", "--output-format", "json"]);
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--json"), "{}", stderr(&o));
    }
    // The human forms are what they were: a table for runs, a record for
    // show, and export's other formats byte for byte as written to a file.
    assert!(ok(&run_in(d.path(), &["runs"])).starts_with(" ID "));
    assert!(ok(&run_in(d.path(), &["show", "latest"])).starts_with("run 1 · fio-import"));
    let csv = ok(&run_in(d.path(), &["export", "--all", "--format", "csv"]));
    ok(&run_in(
        d.path(),
        &["export", "--all", "--format", "csv", "-o", "runs.csv"],
    ));
    assert_eq!(
        std::fs::read_to_string(d.path().join("runs.csv")).unwrap(),
        csv
    );
    assert!(
        stdout(&run_in(
            d.path(),
            &["export", "--all", "--format", "csv", "-o", "runs.csv"]
        ))
        .is_empty()
    );
}
