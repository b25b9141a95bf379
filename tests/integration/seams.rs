//! The seams where sysadmins, IOR/MPI users and report readers bring their
//! habits: a tuner that says "inconclusive" instead of recommending from
//! points it flags itself, a bench that says when O_DIRECT stops above the
//! disk, and the everyday comforts (completions, man pages, `runs`).

use crate::util::loopdev::{Loop, Stack};
use crate::util::{cmd, needs_root_and, stderr, stdout};
use std::path::Path;

/// Every point of this tuning is flagged (each reads a 32 MiB loop device
/// again and again for 0.5 s, from the page cache): the tuner says
/// "inconclusive" with the reasons and prints no `blockdev`/udev line; in
/// JSON there is no `best`. (It used to print "Best: …" and the commands
/// to set it from these very points.)
#[test]
fn tune_readahead_with_every_point_flagged_is_inconclusive_and_recommends_nothing() {
    let t = "tune_readahead_with_every_point_flagged_is_inconclusive_and_recommends_nothing";
    if !needs_root_and(t, &["losetup", "truncate"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let lo = Loop::sparse(&d.path().join("disk.img"), 32 << 20).unwrap();
    let state = d.path().join("state");
    let out = cmd()
        .args(["tune", "readahead", &lo.dev, "--no-save"])
        .args(["--values", "128k,1m", "--runtime", "500ms"])
        .env("STORLAB_STATE_DIR", &state)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(text.contains("Inconclusive"), "{text}");
    assert!(text.contains("under 1 s"), "{text}");
    assert!(text.contains("2 of 2 point(s) cannot be trusted"), "{text}");
    assert!(!text.contains("blockdev"), "{text}");
    assert!(!text.contains("udev"), "{text}");
    assert!(!text.contains("Best:"), "{text}");

    let out = cmd()
        .args(["tune", "readahead", &lo.dev, "--no-save", "--json"])
        .args(["--values", "128k,1m", "--runtime", "500ms"])
        .env("STORLAB_STATE_DIR", &state)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    assert_eq!(j["verdict"]["conclusion"], "inconclusive", "{j:#}");
    assert!(j["best"].is_null(), "{j:#}");
    for p in j["points"].as_array().unwrap() {
        assert!(!p["flags"].as_array().unwrap().is_empty(), "{p:#}");
    }
    // The best two were read again: the noise is measured and shown.
    assert_eq!(j["noise"]["repeats"].as_array().unwrap().len(), 2, "{j:#}");
}

/// The warning that the figures are the page cache's, in the record and
/// on stderr, for a small O_DIRECT read under `dir`.
fn bench_warns_page_cache(dir: &Path, what: &str) {
    let json = dir.join("r.json");
    let out = cmd()
        .arg("bench")
        .arg(dir)
        .args(["--rw=read", "--bs=1M", "--size=8M", "--no-save", "-q"])
        .arg("--json-out")
        .arg(&json)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{what}: {err}");
    assert!(
        err.contains("the figures are the page cache's, not the device's"),
        "{what}: {err}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let warned = j["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("page cache's, not the device's")
    });
    assert!(warned, "{what}: {:#}", j["warnings"]);
}

/// ext4 on a buffered loop device (its backing file in the page cache):
/// O_DIRECT stops at the loop device, and bench says so.
#[test]
fn bench_on_a_buffered_loop_device_says_the_figures_are_the_page_caches() {
    let t = "bench_on_a_buffered_loop_device_says_the_figures_are_the_page_caches";
    if !needs_root_and(t, &["losetup", "truncate", "mkfs.ext4", "mount"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut lo = Loop::sparse(&d.path().join("disk.img"), 64 << 20).unwrap();
    let dev = lo.dev.clone();
    lo.stack().mkfs("ext4", &["-q", "-F"], &dev).unwrap();
    let at = d.path().join("mnt");
    lo.stack().mount(&dev, &at, &[]).unwrap();
    bench_warns_page_cache(&at, "ext4 on a buffered loop device");
    // The loop device itself as the target (read in place).
    lo.stack().umount(&at);
    let out = cmd()
        .args([
            "bench",
            &lo.dev,
            "--rw=read",
            "--bs=1M",
            "--size=8M",
            "--no-save",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("the figures are the page cache's, not the device's"),
        "{}",
        stderr(&out)
    );
}

/// A file on tmpfs: there is no device under it.
#[test]
fn bench_on_tmpfs_says_the_figures_are_the_page_caches() {
    let t = "bench_on_tmpfs_says_the_figures_are_the_page_caches";
    if !needs_root_and(t, &["mount"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let at = d.path().join("mnt");
    let mut m = Stack::new();
    m.mount("tmpfs", &at, &["-t", "tmpfs", "-o", "size=64m"])
        .unwrap();
    bench_warns_page_cache(&at, "tmpfs");
}

/// A bandwidth phase of large transfers that ran the 10 s the warning
/// itself advises (null engine, 16 MiB I/Os paced at 20 ms: about 500
/// I/Os) is not "too short to trust"; it used to be flagged for doing
/// fewer than 2,000 I/Os, whatever its length. A short one still is.
#[test]
fn a_long_bandwidth_phase_of_few_large_ios_is_not_too_short_to_trust() {
    let d = tempfile::tempdir().unwrap();
    let run = |runtime: &str| {
        let out = cmd()
            .arg("bench")
            .arg(d.path())
            .args(["--engine=null", "--rw=write", "--bs=16m", "--size=256m"])
            .args(["--null-latency=20ms", "--time-based", "--runtime", runtime])
            .args(["--no-save", "-q", "--output-format=json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ph = &v["phases"][0];
        assert!(ph["total"]["ops"].as_u64().unwrap() < 2000, "{ph:#}");
        ph["warnings"].to_string()
    };
    let long = run("10s");
    assert!(!long.contains("too short to trust"), "{long}");
    let short = run("2s");
    assert!(short.contains("fewer than 2,000 I/Os"), "{short}");
}

/// IOR's flags run as a translation: `--ior '-a POSIX -t 64k -b 1m -s 4
/// -F -e -w -r'` writes then reads 4 MiB per process in 64 KiB transfers
/// with the sync on; `--dry-run` prints each flag's mapping; a flag
/// storlab cannot honour is refused by name (exit 2). (`--ior` was an
/// unknown argument.)
#[test]
fn ior_flags_are_translated_run_shown_with_dry_run_and_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .arg("bench")
        .arg(d.path())
        .args([
            "--ior",
            "-a POSIX -t 64k -b 1m -s 4 -F -e -w -r -k",
            "--no-save",
            "-q",
        ])
        .args(["--output-format=json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phases = v["phases"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["write", "read"]);
    for p in phases {
        assert_eq!(p["params"]["bs"][0]["bs_bytes"], 65536, "{:#}", p["params"]);
        assert_eq!(p["params"]["size_bytes"], 4 << 20, "{:#}", p["params"]);
        assert_eq!(p["params"]["engine"], "psync", "{:#}", p["params"]);
        assert_eq!(p["total"]["bytes"], 4 << 20);
    }
    assert_eq!(phases[0]["params"]["end_fsync"], true);
    assert_eq!(v["target"]["kept"], true, "-k keeps the files");

    let out = cmd()
        .args([
            "bench",
            "--ior",
            "-t 1m -b 16m -s 4 -C -D 30 -i 3",
            "--dry-run",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for line in [
        "-t 1m",
        "--bs 1 MiB",
        "-C",
        "--reorder-tasks",
        "-D 30",
        "--stonewall 30s",
        "-i 3",
        "--repeat 3",
        "--shared-file --stride 16 MiB --size 64 MiB",
        "Phases: write, read",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }

    for (flags, named) in [("-a MPIIO -w", "-a MPIIO"), ("-w -c", "-c"), ("-W", "-W")] {
        let out = cmd()
            .args(["bench", "--ior", flags, "--dry-run"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags}");
        assert!(stderr(&out).contains(named), "{flags}: {}", stderr(&out));
    }
}

/// The everyday comforts: `runs` with no history yet exits 0 and says so
/// (it was exit 2, "no storlab database"); `storlab man bench` prints the
/// bench page (it was "unexpected argument") and every page has EXIT
/// STATUS, ENVIRONMENT (STORLAB_DB), FILES and EXAMPLES; an unknown page
/// lists the pages (exit 2); the completion script offers the values of
/// --rw, --engine, --cache and --chart.
#[test]
fn runs_on_no_history_man_pages_and_completion_values() {
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .arg("runs")
        .env("STORLAB_DB", d.path().join("none.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("no runs yet"), "{}", stderr(&out));
    assert!(
        !d.path().join("none.db").exists(),
        "runs creates no database"
    );
    let out = cmd()
        .args(["runs", "--json"])
        .env("STORLAB_DB", d.path().join("none.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "[]");

    for page in [
        &["man", "bench"][..],
        &["man"],
        &["man", "tune", "readahead"],
    ] {
        let out = cmd().args(page).output().unwrap();
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{page:?}: {}", stderr(&out));
        for section in [
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            "STORLAB_DB",
            ".SH FILES",
            "config.toml",
            ".SH EXAMPLES",
        ] {
            assert!(text.contains(section), "{page:?}: {section}");
        }
    }
    let out = cmd().args(["man", "bench"]).output().unwrap();
    assert!(
        stdout(&out).contains(".TH storlab-bench 1"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(r"\fB\-\-ior\fR"),
        "the bench page has bench's options"
    );
    let out = cmd().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bench, runs"), "{}", stderr(&out));

    let out = cmd().args(["completions", "bash"]).output().unwrap();
    let script = stdout(&out);
    // The option table's words, in the order its refusals list them.
    for values in [
        "read write randread randwrite readwrite rw randrw rmw",
        "io_uring libaio psync null",
        "direct cold warm",
        "linear poisson",
        "vs-bs",
    ] {
        assert!(script.contains(values), "{values}");
    }
}

/// The runs of one block-size sweep are compared along bs without being
/// told: `compare`, `report` and `check` read the runs' sweep tags (they
/// said "not compared … name the parameter under study, e.g. --vary bs",
/// and check refused with "no phase in common").
#[test]
fn a_sweeps_runs_are_compared_along_what_was_varied_without_vary() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let run = |args: &[&str]| cmd().args(args).env("STORLAB_DB", &db).output().unwrap();
    let dir = d.path().to_str().unwrap();
    let out = run(&[
        "sweep",
        dir,
        "--vary",
        "bs=4k,64k",
        "--engine",
        "null",
        "--rw",
        "read",
        "--size",
        "4M",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["compare", "1", "2", "--baseline", "1"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!text.contains("not compared"), "{text}");
    assert!(
        text.contains("bs 64 KiB (base 4 KiB) [under study]"),
        "{text}"
    );
    assert!(
        stderr(&out).contains("comparing along bs"),
        "{}",
        stderr(&out)
    );

    let html = d.path().join("r.html");
    let out = run(&["report", "1", "2", "-o", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("to pair different ones"),
        "report still asks for --vary"
    );
    assert!(page.contains("[under study]"));

    // check judges the figures (exit 0 or 1), not "no phase in common" (2).
    let out = run(&["check", "2", "--baseline", "1"]);
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).contains("[under study]"), "{}", stdout(&out));
}

/// `report -o x.svg` / `-o x.png` writes that chart (the extension chooses
/// the format when --output-format is not given: it wrote the HTML report
/// into x.svg); an unknown chart id lists the
/// ids; the bars of a sweep's runs are labelled by what differs and the
/// phase (`#2 bs=64k · 1-read`), not a truncated `sweep=sw-2026…` tag.
#[test]
fn report_output_extension_chooses_the_format_and_bar_labels_name_the_phase() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("s.db");
    let run = |args: &[&str]| cmd().args(args).env("STORLAB_DB", &db).output().unwrap();
    let dir = d.path().to_str().unwrap();
    let out = run(&[
        "sweep",
        dir,
        "--vary",
        "bs=4k,64k",
        "--engine",
        "null",
        "--rw",
        "read",
        "--size",
        "4M",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg = d.path().join("x.svg");
    let out = run(&["report", "1", "2", "-o", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..80.min(text.len())]);
    assert!(text.contains("#1 bs=4k · 1-read"), "{text}");
    assert!(text.contains("#2 bs=64k · 1-read"), "{text}");
    assert!(!text.contains("sweep=sw-"), "{text}");

    let png = d.path().join("x.png");
    let out = run(&[
        "report",
        "1",
        "2",
        "--chart",
        "vs-bs",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");

    let other = d.path().join("y.svg");
    let out = run(&[
        "report",
        "1",
        "2",
        "--chart",
        "nope",
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no chart 'nope'") && stderr(&out).contains("throughput, iops"),
        "{}",
        stderr(&out)
    );
    assert!(!other.exists());
}
