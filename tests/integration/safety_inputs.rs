//! Input that is not what a parser expects: command-line arguments that are
//! not UTF-8 (every subcommand, every option, discovered from `--help`),
//! wrongly typed fio JSON, and the messages for job files and notations.

use crate::util::{self, cmd, stderr, stdout};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// `dir/<prefix>caf\xE9<suffix>`: a name that is valid Latin-1, not UTF-8.
fn latin1(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let mut name = prefix.as_bytes().to_vec();
    name.extend_from_slice(b"caf\xe9");
    name.extend_from_slice(suffix.as_bytes());
    dir.join(OsString::from_vec(name))
}

/// Run storlab in `dir` (its own database there), killed after `limit`:
/// the output, and whether it ran to the end.
fn run_bounded(dir: &Path, args: &[OsString], limit: Duration) -> (Output, bool) {
    let mut child = cmd()
        .args(args)
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start storlab");
    let start = Instant::now();
    let finished = loop {
        if child.try_wait().expect("wait for storlab").is_some() {
            break true;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (child.wait_with_output().expect("collect output"), finished)
}

fn run_in(dir: &Path, args: &[&OsStr]) -> Output {
    let args: Vec<OsString> = args.iter().map(|a| a.to_os_string()).collect();
    let (out, finished) = run_bounded(dir, &args, Duration::from_secs(120));
    assert!(finished, "storlab {args:?} did not finish in 120 s");
    out
}

/// Exit 0, and no panic on the way.
fn ran(what: &str, out: &Output) -> String {
    let err = stderr(out);
    assert!(
        out.status.success() && !err.contains("panicked"),
        "{what}: exit {:?}\n{err}",
        out.status.code()
    );
    stdout(out)
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The subcommand paths (`["plan", "layout"]`, ...) listed by `--help`.
fn subcommands(path: &[String]) -> Vec<Vec<String>> {
    let help = help_of(path);
    let Some(start) = help.find("Commands:\n") else {
        return vec![path.to_vec()];
    };
    let mut found = Vec::new();
    for line in help[start + 10..].lines() {
        if line.trim().is_empty() {
            break;
        }
        // A command's line starts with two spaces; its wrapped help with more.
        let Some(name) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) else {
            continue;
        };
        let name = name.split_whitespace().next().unwrap_or_default();
        if name != "help" {
            let mut sub = path.to_vec();
            sub.push(name.to_string());
            found.extend(subcommands(&sub));
        }
    }
    found
}

fn help_of(path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let out = util::storlab(&args);
    assert!(out.status.success(), "storlab {args:?}: {}", stderr(&out));
    stdout(&out)
}

/// An option (`--json-out`) or positional (`TARGET`) and its value name.
#[derive(Debug)]
struct Arg {
    flag: Option<String>,
    value_name: String,
}

/// The arguments of one subcommand that take a value, from its `--help`.
fn value_args(help: &str) -> Vec<Arg> {
    let mut args = Vec::new();
    let mut section = "";
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let t = line.trim_start();
        if line.len() - t.len() > 6 {
            continue; // help text
        }
        if section == "Arguments:" {
            if let Some(rest) = t.strip_prefix('<').or_else(|| t.strip_prefix("[")) {
                let name = rest.split(['>', ']']).next().unwrap_or_default();
                args.push(Arg {
                    flag: None,
                    value_name: name.to_string(),
                });
            }
        } else if section == "Options:" {
            let t = t.split_once(", ").map_or(t, |(short, long)| {
                if short.starts_with('-') && !short.starts_with("--") {
                    long
                } else {
                    t
                }
            });
            // `--record [<FILE>]`: an optional value is tried too.
            if let Some((flag, rest)) = t.split_once(" <").or_else(|| t.split_once(" [<")) {
                if flag.starts_with("--") {
                    let name = rest.split('>').next().unwrap_or_default();
                    args.push(Arg {
                        flag: Some(flag.to_string()),
                        value_name: name.to_string(),
                    });
                }
            }
        }
    }
    args
}

/// Value names that are paths: such an argument must take any file name.
fn is_path(a: &Arg) -> bool {
    let n = a.value_name.as_str();
    matches!(
        n,
        "FILE" | "PATH" | "DIR" | "FILE.fio" | "FILE.html" | "SCENARIO"
    ) || (a.flag.is_none() && matches!(n, "TARGET" | "FILE" | "DEVICE"))
}

/// Flags that keep a command short while another argument is under test
/// (left out when they are the one under test).
fn quick_flags(sub: &[String]) -> &'static [(&'static str, &'static str)] {
    match sub.first().map(String::as_str) {
        Some("bench") => &[("--rw", "read"), ("--size", "64k"), ("--runtime", "100ms")],
        Some("sweep") => &[
            ("--vary", "bs=4k,8k"),
            ("--size", "64k"),
            ("--runtime", "100ms"),
        ],
        Some("monitor") => &[("--count", "1")],
        _ => &[],
    }
}

#[test]
fn every_argument_of_every_subcommand_survives_a_value_that_is_not_utf8() {
    let dir = tempfile::tempdir().expect("temp dir");
    let subs = subcommands(&[]);
    assert!(subs.len() >= 20, "subcommands found: {subs:?}");
    let mut tried = 0;
    let mut paths_accepted = Vec::new();
    let mut failures = Vec::new();
    for sub in &subs {
        let help = help_of(sub);
        for arg in value_args(&help) {
            let value = latin1(dir.path(), &format!("{}-", tried), "");
            tried += 1;
            let mut args: Vec<OsString> = sub.iter().map(OsString::from).collect();
            for (flag, v) in quick_flags(sub) {
                if arg.flag.as_deref() != Some(*flag) {
                    args.extend([OsString::from(flag), OsString::from(v)]);
                }
            }
            if let Some(flag) = &arg.flag {
                args.push(flag.into());
            }
            args.push(value.into_os_string());
            let (out, _) = run_bounded(dir.path(), &args, Duration::from_secs(10));
            let err = stderr(&out);
            let what = format!("storlab {args:?}");
            if out.status.code() == Some(101) || err.contains("panicked") {
                failures.push(format!("{what}: panicked\n{err}"));
                continue;
            }
            let refused_as_text = err.contains("invalid UTF-8");
            if refused_as_text && out.status.code() != Some(2) {
                failures.push(format!("{what}: refused with exit {:?}", out.status.code()));
            }
            if is_path(&arg) {
                if refused_as_text {
                    failures.push(format!(
                        "{what}: a path that is not UTF-8 was refused\n{err}"
                    ));
                } else {
                    paths_accepted.push(what);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(tried > 150, "only {tried} arguments found in --help");
    // bench TARGET/--filename/--json-out/--db, sim SCENARIO/--chart, ...
    assert!(
        paths_accepted.len() > 20,
        "paths tried: {paths_accepted:#?}"
    );
    for flag in [
        "\"--record\"",
        "\"--json-out\"",
        "\"--chart\"",
        "\"--catalog\"",
    ] {
        assert!(
            paths_accepted.iter().any(|w| w.contains(flag)),
            "{flag} tried: {paths_accepted:#?}"
        );
    }
}

/// inspect and monitor of a path whose name is not UTF-8 (the device under
/// its file system; they were refused as text before).
fn inspect_and_monitor_take_a_non_utf8_path(d: &Path) {
    let plain = latin1(d, "plain-", "");
    std::fs::create_dir(&plain).expect("mkdir");
    let inspected = run_in(d, &[OsStr::new("inspect"), plain.as_os_str()]);
    if inspected.status.code() != Some(0) {
        // A temp dir on tmpfs has no block device: that is a refusal that
        // names the path, never the parser's "invalid UTF-8".
        assert!(
            !stderr(&inspected).contains("invalid UTF-8") && inspected.status.code() == Some(2),
            "inspect: {}",
            stderr(&inspected)
        );
    }
    let watched = run_in(
        d,
        &[
            OsStr::new("monitor"),
            plain.as_os_str(),
            OsStr::new("0.05"),
            OsStr::new("1"),
        ],
    );
    assert!(
        !stderr(&watched).contains("invalid UTF-8") && watched.status.code() != Some(101),
        "monitor: {}",
        stderr(&watched)
    );
}

/// The commands that record their command line (bench, sweep, sim, monitor
/// --record) ran, then panicked in `std::env::args()` while saving; each
/// now runs to the end with paths that are not UTF-8, and the record keeps
/// the command line with the odd byte escaped.
#[test]
fn paths_that_are_not_utf8_work_from_start_to_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let db = latin1(d, "db-", ".db");
    let target = latin1(d, "target-", "");
    std::fs::create_dir(&target).expect("target directory");
    let json = latin1(d, "out-", ".json");
    let o = |s: &str| OsString::from(s);
    let bench = [
        o("bench"),
        target.clone().into(),
        o("--rw"),
        o("write"),
        o("--size"),
        o("256k"),
        o("--runtime"),
        o("100ms"),
        o("--json-out"),
        json.clone().into(),
        o("--db"),
        db.clone().into(),
    ];
    let refs: Vec<&OsStr> = bench.iter().map(OsString::as_os_str).collect();
    ran("bench", &run_in(d, &refs));
    assert!(json.is_file(), "--json-out written to its non-UTF-8 name");
    let shown = ran(
        "show",
        &run_in(
            d,
            &[
                OsStr::new("show"),
                OsStr::new("latest"),
                OsStr::new("--db"),
                db.as_os_str(),
            ],
        ),
    );
    assert!(
        shown.contains("target-caf\\xE9"),
        "command line kept, escaped:\n{shown}"
    );

    // sweep into the same directory.
    ran(
        "sweep",
        &run_in(
            d,
            &[
                OsStr::new("sweep"),
                target.as_os_str(),
                OsStr::new("--vary"),
                OsStr::new("bs=4k,8k"),
                OsStr::new("--rw"),
                OsStr::new("read"),
                OsStr::new("--size"),
                OsStr::new("64k"),
                OsStr::new("--runtime"),
                OsStr::new("100ms"),
                OsStr::new("--db"),
                db.as_os_str(),
            ],
        ),
    );

    // monitor --record of a replay file with a non-UTF-8 name.
    let replay = latin1(d, "replay-", ".txt");
    std::fs::copy(repo("tests/fixtures/monitor/loopstack/replay.txt"), &replay).expect("copy");
    ran(
        "monitor --record",
        &run_in(
            d,
            &[
                OsStr::new("monitor"),
                OsStr::new("--record"),
                OsStr::new("--replay"),
                replay.as_os_str(),
                OsStr::new("--output-format"),
                OsStr::new("none"),
                OsStr::new("--db"),
                db.as_os_str(),
            ],
        ),
    );

    inspect_and_monitor_take_a_non_utf8_path(d);

    // sim with a non-UTF-8 scenario and chart.
    let scenario = latin1(d, "scenario-", ".toml");
    std::fs::copy(repo("examples/sim/fast-cache-slow-backend.toml"), &scenario).expect("copy");
    let chart = latin1(d, "chart-", ".svg");
    ran(
        "sim",
        &run_in(
            d,
            &[
                OsStr::new("sim"),
                scenario.as_os_str(),
                OsStr::new("--chart"),
                chart.as_os_str(),
                OsStr::new("--db"),
                db.as_os_str(),
            ],
        ),
    );
    assert!(chart.is_file(), "chart written");

    // import of a non-UTF-8 file name, then export to one.
    let fio = latin1(d, "fio-", ".json");
    std::fs::copy(util::store_fixture("fio-3.33-randread.json"), &fio).expect("copy");
    ran(
        "import",
        &run_in(
            d,
            &[
                OsStr::new("import"),
                fio.as_os_str(),
                OsStr::new("--db"),
                db.as_os_str(),
            ],
        ),
    );
    let listed = ran(
        "runs",
        &run_in(d, &[OsStr::new("runs"), OsStr::new("--db"), db.as_os_str()]),
    );
    for kind in ["bench", "sweep", "monitor", "sim"] {
        assert!(listed.contains(kind), "a {kind} run saved:\n{listed}");
    }
}

/// A value that is not a path and not UTF-8 is refused by the parser:
/// exit 2, clap's message naming the problem, nothing run or saved.
#[test]
fn a_tag_that_is_not_utf8_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let tag = OsStr::from_bytes(b"site=caf\xe9");
    for sub in [
        &["bench", "--rw", "read", "--size", "64k"][..],
        &["sim", "scenario.toml"],
        &["monitor", "--record"],
    ] {
        let mut args: Vec<&OsStr> = sub.iter().map(OsStr::new).collect();
        args.extend([OsStr::new("--tag"), tag]);
        let out = run_in(d, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{sub:?}: {err}");
        assert!(
            err.contains("invalid UTF-8") && !err.contains("panicked"),
            "{sub:?}: {err}"
        );
    }
    assert!(!d.join("results.db").exists(), "nothing saved");
}

/// fio JSON whose fields have the wrong type was imported with made-up
/// figures (a field read as 0); now it is refused naming the file, the
/// field's JSON path and what fio writes there, exit 2, nothing saved.
#[test]
fn import_refuses_wrongly_typed_fio_fields_naming_file_and_json_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good =
        std::fs::read_to_string(util::store_fixture("fio-3.33-randread.json")).expect("fixture");
    let doc: serde_json::Value = serde_json::from_str(&good).expect("fixture parses");
    for (field, value, want) in [
        ("trim", "abc", "jobs[0].trim: expected an object"),
        (
            "total_ios",
            "1e400",
            "jobs[0].read.total_ios: expected a number",
        ),
    ] {
        let mut bad = doc.clone();
        if field == "trim" {
            bad["jobs"][0]["trim"] = value.into();
        } else {
            bad["jobs"][0]["read"][field] = value.into();
        }
        let file = d.join(format!("bad-{field}.json"));
        std::fs::write(&file, bad.to_string()).expect("write");
        let out = util::run_in(d, &["import", file.to_str().expect("utf-8 temp path")]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(
            err.contains(&file.display().to_string()),
            "names the file: {err}"
        );
        assert!(err.contains(want), "names the field: {err}");
        assert!(
            err.contains(&format!("{value:?}")),
            "shows the value: {err}"
        );
    }
    assert!(!d.join("results.db").exists(), "nothing saved");
    // The document itself imports.
    let file = d.join("good.json");
    std::fs::write(&file, doc.to_string()).expect("write");
    util::ok(&util::run_in(
        d,
        &["import", file.to_str().expect("utf-8 temp path")],
    ));
}

/// A job file, fio job file, scenario or catalog that is not UTF-8 was
/// refused with "stream did not contain valid UTF-8" and nothing more; the
/// message now says the line, column and byte offset of the first bad byte.
#[test]
fn text_files_that_are_not_utf8_are_refused_at_their_line_and_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let latin1 = b"caf\xe9";
    let write = |name: &str, head: &[u8]| {
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(b"# ");
        bytes.extend_from_slice(latin1);
        bytes.push(b'\n');
        let p = d.join(name);
        std::fs::write(&p, bytes).expect("write");
        p.display().to_string()
    };
    let scenario = std::fs::read(repo("examples/sim/fast-cache-slow-backend.toml")).expect("read");
    let lines = scenario.iter().filter(|&&b| b == b'\n').count() + 1;
    let cases = [
        (
            vec![
                "bench".to_string(),
                "--job".into(),
                write("job.toml", b"[global]\nrw = \"read\"\n"),
            ],
            3,
        ),
        (
            vec![
                "bench".to_string(),
                "--fio-job".into(),
                write("job.fio", b"[global]\nrw=read\n"),
            ],
            3,
        ),
        (
            vec!["sim".to_string(), write("scenario.toml", &scenario)],
            lines,
        ),
        (
            vec![
                "plan".to_string(),
                "catalog".into(),
                "--catalog".into(),
                write("catalog.toml", b""),
            ],
            1,
        ),
    ];
    for (args, line) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = util::run_in(d, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "not UTF-8 text: line {line}, column 6 (byte offset"
            )) && err.contains("0xE9")
                && err.contains(args[args.len() - 1]),
            "{args:?}: {err}"
        );
    }
}

/// Messages and value forms: a layout error quotes the layout as typed
/// (`chunk=8E` was shown as `chunk=8796093022208m`); `--fallocate native`
/// with a space (as README writes it) is taken; a fio job file's quoted
/// values are read as fio reads them; a scenario value of the wrong type
/// names the form expected, not serde's untagged enum.
#[test]
fn messages_quote_the_input_and_fio_value_forms_are_taken() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    for (typed, quoted) in [
        (
            &["plan", "layout", "R6/12,chunk=8E"][..],
            "layout 'R6/12,chunk=8E'",
        ),
        (
            &["plan", "layout", "r6/12, chunk = 8E"],
            "layout 'r6/12, chunk = 8E'",
        ),
        (
            &["plan", "layout", "R6/12", "--chunk", "8E"],
            "layout 'R6/12' --chunk 8E",
        ),
    ] {
        let out = util::run_in(d, typed);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{typed:?}: {err}");
        assert!(
            err.contains(quoted) && err.contains("16 EiB"),
            "{typed:?}: {err}"
        );
        assert!(!err.contains("8796093022208m"), "{typed:?}: {err}");
    }

    let target = d.join("t");
    std::fs::create_dir(&target).expect("mkdir");
    let t = target.to_str().expect("utf-8 temp path");
    for fallocate in [
        &["--fallocate", "none"][..],
        &["--fallocate", "native"],
        &["--fallocate=none"],
    ] {
        let mut args = vec![
            "bench",
            t,
            "--rw",
            "write",
            "--size",
            "64k",
            "--runtime",
            "100ms",
            "--no-save",
        ];
        args.extend(fallocate);
        ran(&format!("{args:?}"), &util::run_in(d, &args));
    }

    let fio = d.join("quoted.fio");
    std::fs::write(
        &fio,
        "[global]\nioengine=\"psync\"\n[j]\nrw='read'\nbs=\"4k\"\nsize=64k\nruntime=0.1\n",
    )
    .expect("write");
    let text = ran(
        "quoted fio job",
        &util::run_in(
            d,
            &[
                "bench",
                "--fio-job",
                fio.to_str().expect("utf-8"),
                t,
                "--no-save",
            ],
        ),
    );
    assert!(text.contains("psync") || text.contains("read"), "{text}");

    let scenario = std::fs::read_to_string(repo("examples/sim/fast-cache-slow-backend.toml"))
        .expect("read")
        .replace("cache = \"2GiB\"", "cache = true");
    let file = d.join("wrong-type.toml");
    std::fs::write(&file, &scenario).expect("write");
    let line = scenario
        .lines()
        .position(|l| l.starts_with("cache = true"))
        .expect("line")
        + 1;
    let out = util::run_in(d, &["sim", file.to_str().expect("utf-8")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("wrong-type.toml:{line}:"))
            && err.contains("expected a number or a string with a unit")
            && !err.contains("untagged"),
        "{err}"
    );
}
