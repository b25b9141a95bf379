//! Job groups, the missing parts of issue 23: file sets (existing files
//! read in place, another group's files), `group_reporting`, and the import
//! of fio's JSON of a concurrent job file as the same phases and groups.

use crate::util::{json, stderr, storlab, u};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Bytes and modification time of every file in `dir`, sorted by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
                md.modified().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn bench_ok(args: &[&str]) -> Value {
    let mut a = vec!["bench"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--no-save", "--output-format", "json", "-q"]);
    let out = storlab(&a);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    json(&out)
}

/// A group reads existing files given by a glob, in place: each job one
/// file, the whole of the smallest file in whole blocks, the files'
/// bytes and times untouched, and nothing of them removed afterwards.
#[test]
fn a_group_reads_existing_files_in_place_and_never_writes_them() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    let out_dir = d.path().join("out");
    std::fs::create_dir(&input).unwrap();
    std::fs::create_dir(&out_dir).unwrap();
    for (i, len) in [3_000_000usize, 3_100_000, 3_200_000].iter().enumerate() {
        let data: Vec<u8> = (0..*len).map(|b| (b * 7 + i) as u8).collect();
        std::fs::write(input.join(format!("f{i}.dat")), data).unwrap();
    }
    std::fs::write(input.join("other.txt"), b"not matched").unwrap();
    let before = snapshot(&input);
    let glob = format!("{}/f*.dat", input.display());
    let v = bench_ok(&[
        s(&out_dir),
        "--group",
        &format!("name=r rw=read files={glob} numjobs=3 bs=64k cache=cold"),
        "--group",
        "name=w rw=write numjobs=1 size=1m bs=64k cache=cold",
    ]);
    let ph = &v["phases"][0];
    let groups = ph["groups"]["groups"].as_array().unwrap();
    let r = &groups[0];
    let files: Vec<&str> = r["params"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 3, "the glob matched the three .dat files");
    assert!(files[0].ends_with("in/f0.dat") && files[2].ends_with("in/f2.dat"));
    // Whole 64 KiB blocks of the smallest file (3,000,000 bytes: 45 blocks).
    let each = 3_000_000 / 65536 * 65536;
    assert_eq!(u(&r["params"]["size_bytes"]), each);
    assert_eq!(u(&r["read"]["bytes"]), 3 * each);
    assert_eq!(u(&r["write"]["bytes"]), 0);
    assert_eq!(u(&groups[1]["write"]["bytes"]), 1 << 20);
    let listed: Vec<&str> = v["target"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(listed.contains(&files[1]), "{listed:?}");
    assert_eq!(snapshot(&input), before, "existing files untouched");
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        0,
        "storlab removed its own files only"
    );
}

/// `files_of`: readers of the files another group writes (a share of the
/// phase's file set): the writer's files are laid out at the readers'
/// size first, the readers read them, no reader file of its own is used.
#[test]
fn a_group_reads_another_groups_files() {
    let d = tempfile::tempdir().unwrap();
    let v = bench_ok(&[
        s(d.path()),
        "--group",
        "name=w rw=write numjobs=2 size=1m bs=64k cache=cold",
        "--group",
        "name=r rw=read files_of=w numjobs=4 size=2m bs=64k cache=cold",
    ]);
    let ph = &v["phases"][0];
    let groups = ph["groups"]["groups"].as_array().unwrap();
    assert_eq!(groups[1]["params"]["files_of"], "w");
    assert_eq!(u(&groups[1]["read"]["bytes"]), 4 * (2 << 20));
    assert_eq!(u(&groups[0]["write"]["bytes"]), 2 * (1 << 20));
    // The readers read 2 MiB from files the writer group writes 1 MiB of:
    // its two files were made (and laid out) at the readers' size.
    assert_eq!(u(&ph["read"]["bytes"]), 8 << 20);
    assert_eq!(ph["errors"], serde_json::json!({}), "{ph}");
}

/// Conflicting file sets are refused with exit 2, naming the problem and
/// the fix, before any file is made; existing files are never written.
#[test]
fn bad_file_sets_are_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    let out_dir = d.path().join("out");
    std::fs::create_dir(&input).unwrap();
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(input.join("a.dat"), vec![1u8; 1 << 20]).unwrap();
    let before = snapshot(&input);
    let a = format!("{}/a.dat", input.display());
    let missing = format!("{}/missing.dat", input.display());
    let none = format!("{}/zz*.dat", input.display());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![format!("rw=read files={missing}"), "rw=write".into()],
            "no group writes it",
        ),
        (
            vec![format!("rw=read files={none}"), "rw=write".into()],
            "matches no file",
        ),
        (
            vec![format!("rw=write files={a}"), "rw=read".into()],
            "never writes a file it did not create",
        ),
        (
            vec![format!("rw=read files={a} size=2m"), "rw=write".into()],
            "holds 1048576 bytes",
        ),
        (
            vec![
                "name=w rw=write".into(),
                "name=w2 rw=randwrite files_of=w".into(),
            ],
            "both write the same files",
        ),
        (
            vec![
                "name=w rw=write".into(),
                "name=r rw=read files_of=zz".into(),
            ],
            "no group of this phase is named zz",
        ),
        (
            vec![
                format!("rw=read files={a} files_of=w"),
                "name=w rw=write".into(),
            ],
            "not both",
        ),
    ];
    for (groups, says) in cases {
        let mut args = vec!["bench", s(&out_dir), "--engine", "null", "--no-save", "-q"];
        for g in &groups {
            args.extend_from_slice(&["--group", g]);
        }
        let out = storlab(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{groups:?}: {err}");
        assert!(err.contains(says), "{groups:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(
            std::fs::read_dir(&out_dir).unwrap().count(),
            0,
            "{groups:?}: files were made"
        );
    }
    // Outside a group, files= means nothing yet: refused, not ignored.
    let out = storlab(&["bench", s(&out_dir), "--no-save", "-q", "--files", &a]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("options of a job group"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&input), before);
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0);
}

/// `group_reporting` (fio's, and storlab's `--group-reporting`): one line
/// per reporting group instead of one per job. In an fio file the
/// concurrent jobs that no `new_group` separates are one reporting group,
/// figures merged exactly (bytes add up, its own window and latency);
/// storlab's own groups each report on their own.
#[test]
fn group_reporting_gives_one_line_per_reporting_group() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let job = d.path().join("mix.fio");
    let text = "[global]\nioengine=null\nsize=4m\nbs=64k\ngroup_reporting\n\
                [r1]\nrw=read\nnumjobs=2\n[r2]\nrw=read\n[w]\nnew_group\nrw=write\nnumjobs=2\n";
    std::fs::write(&job, text).unwrap();
    let run = |fmt: &str| {
        let out = storlab(&[
            "bench",
            "--fio-job",
            s(&job),
            "--directory",
            s(&data),
            "--no-save",
            "--output-format",
            fmt,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let v = json(&run("json"));
    let ph = &v["phases"][0];
    let rep = ph["groups"]["reporting"].as_array().unwrap();
    let names: Vec<&str> = rep.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["r1+r2", "w"], "new_group splits [w] off");
    assert_eq!(u(&rep[0]["params"]["numjobs"]), 3);
    assert_eq!(u(&rep[0]["read"]["bytes"]), 3 * (4 << 20));
    assert_eq!(u(&rep[1]["write"]["bytes"]), 2 * (4 << 20));
    let groups = ph["groups"]["groups"].as_array().unwrap();
    let r_start = u(&groups[0]["start_ns"]).min(u(&groups[1]["start_ns"]));
    let r_end = u(&groups[0]["end_ns"]).max(u(&groups[1]["end_ns"]));
    assert_eq!(u(&rep[0]["elapsed_ns"]), r_end - r_start, "its own window");
    assert!(rep[0]["read"]["lat_ns"]["p99"].is_number(), "{}", rep[0]);
    let table = crate::util::stdout(&run("table"));
    assert!(table.contains("group r1+r2"), "{table}");
    assert!(!table.contains("job 0"), "no job lines: {table}");
    // Without group_reporting: every job on its own line, no reporting.
    std::fs::write(&job, text.replace("group_reporting\n", "")).unwrap();
    let table = crate::util::stdout(&run("table"));
    assert!(
        table.contains("job 0") && table.contains("group r1 "),
        "{table}"
    );
    let v = json(&run("json"));
    assert!(v["phases"][0]["groups"].get("reporting").is_none());
    // storlab's own groups: --group-reporting drops the job lines, each
    // group keeps its line (no new_group needed).
    let out = storlab(&[
        "bench",
        s(&data),
        "--engine",
        "null",
        "--no-save",
        "--group-reporting",
        "--group",
        "name=rd rw=read numjobs=2 size=1m",
        "--group",
        "name=wr rw=write numjobs=2 size=1m",
    ]);
    let table = crate::util::stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        table.contains("group rd") && table.contains("group wr"),
        "{table}"
    );
    assert!(!table.contains("job 0"), "{table}");
}

/// `storlab import` of fio's JSON of a concurrent job file (two jobs that
/// run together, one clone each and one with two, then a `stonewall`ed
/// job) yields the phases and groups `--fio-job` of that file yields, so
/// `compare` pairs them phase by phase and group by group, and only the
/// target and tool differ. The fio JSON is made here by fio itself.
#[test]
fn an_imported_concurrent_fio_json_pairs_with_its_fio_job_run() {
    if !crate::util::have("fio") {
        crate::util::skip(
            "an_imported_concurrent_fio_json_pairs_with_its_fio_job_run",
            "fio is not installed",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let at = |args: &[&str]| {
        let out = crate::util::cmd()
            .env("STORLAB_DB", &db)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        out
    };
    let job = d.path().join("mix.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nsize=2m\nbs=64k\n\n\
         [reader]\nrw=read\n\n[writer]\nrw=write\nnumjobs=2\n\n\
         [after]\nstonewall\nrw=randread\nbs=4k\n",
    )
    .unwrap();
    let fio_dir = d.path().join("fio");
    let data = d.path().join("data");
    std::fs::create_dir(&fio_dir).unwrap();
    std::fs::create_dir(&data).unwrap();
    let out = std::process::Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--directory={}", fio_dir.display()))
        .arg(&job)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let fio_json = d.path().join("fio.json");
    std::fs::write(&fio_json, &out.stdout).unwrap();
    at(&["import", s(&fio_json)]);
    at(&["bench", "--fio-job", s(&job), "--directory", s(&data), "-q"]);
    // The imported run as stored: the groups of one phase, then `after`.
    let shown = json(&at(&["show", "1", "--output-format", "json"]));
    let rec = shown.as_array().map_or(&shown, |a| &a[0]);
    let rec = rec.get("report").unwrap_or(rec);
    let phases = rec["phases"].as_array().unwrap_or_else(|| panic!("{rec}"));
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["reader+writer", "after"]);
    let groups = phases[0]["groups"]["groups"].as_array().unwrap();
    let g: Vec<(&str, u64, u64)> = groups
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap(),
                u(&g["first_job"]),
                u(&g["params"]["numjobs"]),
            )
        })
        .collect();
    assert_eq!(g, [("reader", 0, 1), ("writer", 1, 2)]);
    assert_eq!(u(&groups[1]["write"]["bytes"]), 2 * (2 << 20));
    assert_eq!(
        u(&phases[0]["read"]["bytes"]) + u(&phases[0]["write"]["bytes"]),
        3 * (2 << 20),
        "the phase is its groups' bytes"
    );
    // compare pairs them: every row of the bench run has its partner, and
    // nothing but where and with what differs.
    let cmp = json(&at(&[
        "compare",
        "--baseline",
        "1",
        "2",
        "--output-format",
        "json",
    ]));
    let rows: Vec<&Value> = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["run_id"] == 2)
        .collect();
    let paired: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["phase"].as_str().unwrap(),
                r["baseline_phase"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    for want in [
        "reader+writer",
        "reader+writer/reader",
        "reader+writer/writer",
        "after",
    ] {
        assert!(paired.contains(&(want, want)), "{want}: {paired:?}");
    }
    for r in &rows {
        for d in r["differs"].as_array().unwrap() {
            let d = d.as_str().unwrap();
            assert!(d.starts_with("target ") || d.starts_with("tool "), "{d}");
        }
    }
    assert_eq!(cmp["unmatched"].as_array().map_or(0, Vec::len), 0, "{cmp}");
}

/// The shipped profiles run their sources' concurrency: what the source
/// runs at once is one phase of groups (`sas`: sequential 8 KiB readers and
/// writers at once, which the profile had as one alternating read/write
/// stream per job; `sas-dd`: 6 dd readers and 3 writers), what it runs one
/// after another is phases (IOR's write then read, IOzone's, Iometer's
/// access specifications, the solver's passes). Each shipped profile's
/// shape is listed here, so a new one is reviewed too.
#[test]
fn every_shipped_profile_has_its_sources_shape() {
    // (profile, [(phase, [(group, rw, numjobs)] or the phase's own rw)])
    type Shape = Vec<(&'static str, Vec<(&'static str, &'static str, u64)>)>;
    let seq = |a: &'static str, b: &'static str, rw_a: &'static str, rw_b: &'static str| -> Shape {
        vec![(a, vec![("", rw_a, 0)]), (b, vec![("", rw_b, 0)])]
    };
    let shapes: Vec<(&str, Shape)> = vec![
        (
            "sas",
            vec![(
                "sas-8k-mix",
                vec![("sas-read", "read", 2), ("sas-write", "write", 2)],
            )],
        ),
        (
            "sas-dd",
            vec![("dd", vec![("dd-read", "read", 6), ("dd-write", "write", 3)])],
        ),
        ("seq", seq("seq-write", "seq-read", "write", "read")),
        ("ior-fpp", seq("ior-write", "ior-read", "write", "read")),
        ("ior-shared", seq("ior-write", "ior-read", "write", "read")),
        ("ooc", seq("write-panels", "update-panels", "write", "rmw")),
        (
            "iops",
            vec![
                ("randread-4k", vec![("", "randread", 0)]),
                ("randread-8k", vec![("", "randread", 0)]),
                ("randwrite-4k", vec![("", "randwrite", 0)]),
                ("randwrite-8k", vec![("", "randwrite", 0)]),
            ],
        ),
        ("oltp", vec![("*", vec![("", "randrw", 0)])]),
        ("scaling", vec![("*", vec![("", "read", 0)])]),
        ("cache", vec![("*", vec![("", "read", 0)])]),
    ];
    let listed = crate::util::stdout(&storlab(&["profiles"]));
    let shipped: Vec<&str> = listed
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with(char::is_whitespace))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(shipped.len() >= 10, "{listed}");
    for name in &shipped {
        assert!(
            shapes.iter().any(|(n, _)| n == name),
            "profile {name} is shipped but its shape is not reviewed here"
        );
    }
    let d = tempfile::tempdir().unwrap();
    for (name, shape) in &shapes {
        let v = bench_ok(&[
            s(d.path()),
            "--profile",
            name,
            "--engine",
            "null",
            "--size",
            "8m",
            "--runtime",
            "0.2s",
        ]);
        let phases = v["phases"].as_array().unwrap();
        assert_eq!(phases.len(), shape.len(), "{name}: phases");
        for (ph, (pname, groups)) in phases.iter().zip(shape) {
            if *pname != "*" {
                assert_eq!(ph["params"]["name"], *pname, "{name}");
            }
            match ph["groups"]["groups"].as_array() {
                Some(got) => {
                    let got: Vec<(&str, &str, u64)> = got
                        .iter()
                        .map(|g| {
                            (
                                g["name"].as_str().unwrap(),
                                g["params"]["rw"].as_str().unwrap(),
                                u(&g["params"]["numjobs"]),
                            )
                        })
                        .collect();
                    assert_eq!(&got, groups, "{name}: groups");
                    // Both directions moved data in the one phase.
                    assert!(u(&ph["read"]["bytes"]) > 0 && u(&ph["write"]["bytes"]) > 0);
                }
                None => {
                    assert_eq!(
                        groups.len(),
                        1,
                        "{name}: expected groups, got a plain phase"
                    );
                    assert_eq!(groups[0].0, "", "{name}: expected groups");
                    assert_eq!(ph["params"]["rw"], groups[0].1, "{name}");
                }
            }
        }
    }
    // `sas` takes the stream count per group from --numjobs (campaigns
    // and the sweep vary it).
    let v = bench_ok(&[
        s(d.path()),
        "--profile",
        "sas",
        "--engine",
        "null",
        "--size",
        "1m",
        "--runtime",
        "0.2s",
        "--numjobs",
        "3",
    ]);
    let g = v["phases"][0]["groups"]["groups"].as_array().unwrap();
    assert_eq!(
        (u(&g[0]["params"]["numjobs"]), u(&g[1]["params"]["numjobs"])),
        (3, 3)
    );
    assert_eq!(g[0]["params"]["bs"][0]["bs_bytes"], 8192);
    assert_eq!(g[1]["params"]["cache"], "cold");
}
