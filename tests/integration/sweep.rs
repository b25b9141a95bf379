//! `storlab sweep` and `storlab profiles`: points stored with their tags,
//! files laid out once, a failing point recorded while the sweep goes on,
//! a killed sweep resumed, charts written, every shipped profile run
//! briefly.

use crate::util::{cmd, ok, stderr, stdout};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

/// Run storlab with its database in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    cmd()
        .args(args)
        .env("STORLAB_DB", dir.join("results.db"))
        .output()
        .expect("run storlab")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", stdout(o), stderr(o)))
}

/// Tags of every run in `dir`'s database: run id → tags.
fn tags(dir: &Path) -> BTreeMap<i64, BTreeMap<String, String>> {
    let db = rusqlite::Connection::open(dir.join("results.db")).unwrap();
    let mut st = db
        .prepare("SELECT run_id, key, value FROM run_tags ORDER BY run_id")
        .unwrap();
    let mut out: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .unwrap();
    for r in rows {
        let (id, k, v) = r.unwrap();
        out.entry(id).or_default().insert(k, v);
    }
    out
}

fn status(dir: &Path, id: i64) -> String {
    let db = rusqlite::Connection::open(dir.join("results.db")).unwrap();
    db.query_row("SELECT status FROM runs WHERE id = ?1", [id], |r| r.get(0))
        .unwrap()
}

#[test]
fn sweep_stores_every_point_and_lays_out_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    let out = run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--vary",
            "bs=4k..64k:x4",
            "--vary",
            "rw=read,randread",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "--size",
            "4m",
            "--output-format",
            "json",
            "--tag",
            "site=lab",
        ],
    );
    let doc = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = doc["sweep_id"].as_str().unwrap().to_string();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    // One 4 MiB file, laid out once for all six points.
    assert_eq!(doc["layout_bytes"], 4 << 20);
    assert!(doc["wall_ns"].as_u64().unwrap() >= doc["measured_ns"].as_u64().unwrap());
    let all = tags(d);
    for (i, p) in points.iter().enumerate() {
        assert!(p["error"].is_null(), "{p}");
        let ph = &p["phases"][0];
        assert!(ph["bw_bytes_per_s"].as_f64().unwrap() > 0.0, "{p}");
        let run = p["run_id"].as_i64().unwrap();
        let tg = &all[&run];
        assert_eq!(tg["sweep"], id);
        assert_eq!(tg["sweep_point"], i.to_string());
        assert_eq!(tg["site"], "lab");
        let label = format!(
            "bs={},rw={}",
            p["params"]["bs"].as_str().unwrap(),
            p["params"]["rw"].as_str().unwrap()
        );
        assert_eq!(tg["sweep_params"], label);
        assert_eq!(status(d, run), "finished");
    }
    // The first option changes slowest.
    assert_eq!(points[1]["params"]["bs"], "4k");
    assert_eq!(points[1]["params"]["rw"], "randread");
    // The scratch files are gone.
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("storlab."))
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

#[test]
fn growing_sizes_extend_the_file_instead_of_laying_it_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run(
        d,
        &[
            "sweep",
            d.to_str().unwrap(),
            "-q",
            "--vary",
            "size=1m,2m,4m",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "--bs",
            "64k",
            "--output-format",
            "json",
            "--no-save",
        ],
    );
    let doc = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    // 1 + 1 + 2 MiB: each point lays out only what it adds.
    assert_eq!(doc["layout_bytes"], 4 << 20);
    for p in doc["points"].as_array().unwrap() {
        assert!(
            p["phases"][0]["bw_bytes_per_s"].as_f64().unwrap() > 0.0,
            "{p}"
        );
    }
}

#[test]
fn a_failing_point_is_recorded_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run(
        d,
        &[
            "sweep",
            d.to_str().unwrap(),
            "-q",
            // Within the vocabulary's bounds (which are checked before any
            // point runs) but more than the iodepth: refused by its point.
            "--vary",
            "iodepth_batch=1,8,2",
            "--iodepth",
            "2",
            "--engine",
            "null",
            "--size",
            "1m",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let p = doc["points"].as_array().unwrap();
    assert!(
        p[1]["error"].as_str().unwrap().contains("iodepth_batch 8"),
        "{}",
        p[1]
    );
    assert!(p[0]["error"].is_null() && p[2]["error"].is_null());
    assert_eq!(
        p[2]["phases"].as_array().unwrap().len(),
        1,
        "ran after the failure"
    );
    assert_eq!(doc["tool"]["name"], "storlab", "{doc}");
    // The failure is stored, tagged, with its error.
    let failed = p[1]["run_id"].as_i64().unwrap();
    assert_eq!(tags(d)[&failed]["sweep_params"], "iodepth_batch=8");
    let show = ok(&run(d, &["show", &failed.to_string()]));
    assert!(show.contains("iodepth_batch 8"), "{show}");
}

#[test]
fn a_killed_sweep_resumes_with_only_the_missing_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    let args = [
        "sweep",
        t,
        "--vary",
        "iodepth=1..32:x2",
        "--engine",
        "null",
        "--size",
        "1m",
        "--runtime",
        "0.5s",
        "--time-based",
    ];
    let mut child = cmd()
        .args(args)
        .env("STORLAB_DB", d.join("results.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let id = first
        .strip_prefix("storlab: sweep ")
        .and_then(|r| r.split(':').next())
        .unwrap_or_else(|| panic!("no sweep id in {first:?}"))
        .to_string();
    // Kill it while point 3 runs (points 1 and 2 are stored).
    for l in lines.by_ref() {
        if l.unwrap().contains("point 3/6") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().unwrap();
    child.wait().unwrap();
    let before: Vec<i64> = tags(d)
        .into_iter()
        .filter(|(_, t)| t.get("sweep") == Some(&id))
        .map(|(id, _)| id)
        .collect();
    assert!(before.len() >= 3, "{before:?}");
    // --resume alone: the options come from the stored points.
    let out = run(
        d,
        &["sweep", "--resume", &id, "-q", "--output-format", "json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let p = doc["points"].as_array().unwrap();
    assert_eq!(p.len(), 6);
    let resumed: Vec<bool> = p.iter().map(|x| x["resumed"].as_bool().unwrap()).collect();
    assert_eq!(&resumed[..2], &[true, true], "{resumed:?}");
    assert!(!resumed[3..].iter().any(|r| *r), "{resumed:?}");
    assert!(
        p.iter()
            .all(|x| !x["phases"].as_array().unwrap().is_empty())
    );
    // Every point is stored exactly once as finished; the killed one is not.
    let finished: Vec<String> = tags(d)
        .into_iter()
        .filter(|(_, t)| t.get("sweep") == Some(&id))
        .filter(|(run, _)| status(d, *run) == "finished")
        .map(|(_, t)| t["sweep_params"].clone())
        .collect();
    assert_eq!(finished.len(), 6, "{finished:?}");
    // An unknown sweep id is an error that says so.
    let bad = run(d, &["sweep", t, "--vary", "bs=4k", "--resume", "sw-nope"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("no runs tagged sweep=sw-nope"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn charts_are_valid_svg_and_png_and_the_matrix_is_a_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    let svg = d.join("lines.svg");
    ok(&run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--vary",
            "bs=4k,16k,64k",
            "--vary",
            "numjobs=1,2",
            "--engine",
            "null",
            "--size",
            "1m",
            "--no-save",
            "--chart",
            svg.to_str().unwrap(),
        ],
    ));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(
        text.contains("numjobs=1") && text.contains("numjobs=2"),
        "one line each"
    );
    assert!(text.contains("16 KiB"), "x axis in bytes");
    let png = d.join("heat.png");
    ok(&run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--vary",
            "size=1m,2m",
            "--vary",
            "bs=4k,64k",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "--no-save",
            "--chart",
            png.to_str().unwrap(),
        ],
    ));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let heat = d.join("heat.svg");
    ok(&run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--vary",
            "size=1m,2m",
            "--vary",
            "bs=4k,64k",
            "--engine",
            "psync",
            "--cache",
            "cold",
            "--no-save",
            "--chart",
            heat.to_str().unwrap(),
        ],
    ));
    let h = std::fs::read_to_string(&heat).unwrap();
    assert!(
        h.contains("RAM ") && h.contains("record size"),
        "heat map with RAM marked"
    );
    // Drawn again over our own PNG: fine; over a file storlab did not
    // write: refused before anything runs.
    ok(&run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--vary",
            "bs=4k,64k",
            "--engine",
            "null",
            "--size",
            "1m",
            "--no-save",
            "--chart",
            png.to_str().unwrap(),
        ],
    ));
    let theirs = d.join("notes.svg");
    std::fs::write(&theirs, "my own notes, not a chart\n").unwrap();
    let o = run(
        d,
        &[
            "sweep",
            t,
            "--vary",
            "bs=4k",
            "--engine",
            "null",
            "--chart",
            theirs.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("storlab did not write it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "my own notes, not a chart\n"
    );
    // A chart name we cannot write is refused before anything runs.
    let bad = run(d, &["sweep", t, "--vary", "bs=4k", "--chart", "x.jpg"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains(".svg or .png"));
}

#[test]
fn bad_vary_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (arg, needle) in [
        ("blcksize=4k", "unknown option 'blcksize'"),
        ("bs=4k..1m", "needs a step"),
        ("iodepth=1,x", "whole number"),
    ] {
        let o = run(d, &["sweep", d.to_str().unwrap(), "--vary", arg]);
        assert_eq!(o.status.code(), Some(2), "{arg}");
        assert!(stderr(&o).contains(needle), "{arg}: {}", stderr(&o));
    }
    let o = run(d, &["sweep", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nothing to sweep"), "{}", stderr(&o));
}

const PROFILES: [&str; 10] = [
    "seq",
    "iops",
    "cache",
    "scaling",
    "sas",
    "sas-dd",
    "oltp",
    "ooc",
    "ior-fpp",
    "ior-shared",
];

#[test]
fn every_shipped_profile_is_listed_shown_and_runs_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    let list = ok(&run(d, &["profiles"]));
    for name in PROFILES {
        assert!(
            list.lines().any(|l| l.starts_with(name)),
            "{name} not listed:\n{list}"
        );
        let shown = ok(&run(d, &["profiles", "show", name]));
        assert!(
            shown.contains("[profile]") && shown.contains("about"),
            "{name}"
        );
        // Tiny and quick: flags override the profile's values.
        let mut text = String::new();
        for engine in ["psync", "null"] {
            let out = run(
                d,
                &[
                    "bench",
                    t,
                    "-q",
                    "--profile",
                    name,
                    "--engine",
                    engine,
                    "--size",
                    "4m",
                    "--runtime",
                    "0.2s",
                    "--cache",
                    "cold",
                    "--no-save",
                ],
            );
            text = ok(&out);
            assert!(text.contains("MB/s"), "{name} on {engine}: {text}");
        }
        if name == "sas-dd" {
            assert!(
                text.contains("MB/s per core") && text.contains("75"),
                "{text}"
            );
        }
    }
    // A profile's sweep, on the null engine.
    let out = run(
        d,
        &[
            "sweep",
            t,
            "-q",
            "--profile",
            "iops",
            "--engine",
            "null",
            "--size",
            "1m",
            "--runtime",
            "0.1s",
            "--no-save",
            "--output-format",
            "json",
        ],
    );
    let doc = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = doc["points"].as_array().unwrap();
    assert_eq!(p.len(), 7, "iodepth 1..64:x2");
    assert_eq!(
        p[0]["phases"].as_array().unwrap().len(),
        4,
        "all four phases per point"
    );
    let bad = run(d, &["profiles", "show", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("no profile named 'nope'"));
}

/// The shipped profile files: (name, `[[phase]]` names in file order).
fn shipped_profiles() -> Vec<(String, Vec<String>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut out: Vec<(String, Vec<String>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let doc: toml::Value = toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let phases = doc
                .get("phase")
                .and_then(toml::Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|ph| ph.get("name")?.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                phases,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn profiles_list_and_show_print_json_documents() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shipped = shipped_profiles();
    assert!(shipped.len() >= 10, "{shipped:?}");
    for args in [
        &["profiles", "--json"][..],
        &["profiles", "list", "--json"],
        &["profiles", "list", "--output-format", "json"],
    ] {
        let out = run(d, args);
        let doc = json(&out);
        assert!(out.status.success(), "{}", stderr(&out));
        let list = doc.as_array().unwrap();
        for (name, _) in &shipped {
            let p = list
                .iter()
                .find(|p| p["name"] == name.as_str())
                .unwrap_or_else(|| panic!("{name} not in {args:?}:\n{doc:#}"));
            assert_eq!(p["origin"], "built-in", "{p}");
            assert!(p["path"].is_null(), "{p}");
            assert!(!p["about"].as_str().unwrap().is_empty(), "{p}");
            assert!(!p["source"].as_str().unwrap().is_empty(), "{p}");
            assert!(p["vary"].is_array(), "{p}");
            assert!(!p["phases"].as_array().unwrap().is_empty(), "{p}");
        }
    }
    for (name, phases) in &shipped {
        let out = run(d, &["profiles", "show", name, "--json"]);
        let doc = json(&out);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(doc["name"], name.as_str());
        let got: Vec<&str> = doc["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(got, *phases, "{name}: {doc:#}");
        let written: Vec<&str> = doc["job"]["phase"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(written, *phases, "{name}");
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("profiles/{name}.toml")),
        )
        .unwrap();
        assert_eq!(doc["text"], text.as_str(), "{name}");
    }
    // The text spelling stays, and the two spellings cannot both be given.
    let out = run(d, &["profiles", "show", "seq", "--output-format", "text"]);
    assert!(ok(&out).contains("[profile]"));
    let out = run(
        d,
        &[
            "profiles",
            "show",
            "seq",
            "--json",
            "--output-format",
            "text",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let bad = run(d, &["profiles", "show", "nope", "--json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stdout(&bad).is_empty());
}

#[test]
fn user_profiles_are_found_and_win() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pdir = d.join("cfg/storlab/profiles");
    std::fs::create_dir_all(&pdir).unwrap();
    std::fs::write(
        pdir.join("mine.toml"),
        "[profile]\nabout = \"my nightly check\"\nsource = \"our site\"\nvary = [\"bs=4k,8k\"]\n[global]\nrw = \"randread\"\nsize = \"1m\"\nengine = \"null\"\n",
    )
    .unwrap();
    let o = cmd()
        .args(["profiles"])
        .env("XDG_CONFIG_HOME", d.join("cfg"))
        .output()
        .unwrap();
    let list = ok(&o);
    assert!(
        list.contains("my nightly check") && list.contains("seq"),
        "{list}"
    );
    let o = cmd()
        .args(["profiles", "list", "--json"])
        .env("XDG_CONFIG_HOME", d.join("cfg"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    let mine = doc
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mine")
        .unwrap();
    assert_eq!(mine["origin"], "user");
    assert_eq!(
        mine["path"],
        pdir.join("mine.toml").display().to_string().as_str()
    );
    assert_eq!(mine["vary"][0], "bs=4k,8k");
    let o = cmd()
        .args([
            "sweep",
            d.to_str().unwrap(),
            "-q",
            "--profile",
            "mine",
            "--no-save",
        ])
        .env("XDG_CONFIG_HOME", d.join("cfg"))
        .output()
        .unwrap();
    let text = ok(&o);
    assert!(text.contains("8k") && text.contains("randread"), "{text}");
}

#[test]
fn ooc_reads_each_block_before_writing_it_back_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run(
        d,
        &[
            "bench",
            d.to_str().unwrap(),
            "-q",
            "--profile",
            "ooc",
            "--size",
            "8m",
            "--bs",
            "1m",
            "--engine",
            "psync",
            "--verify",
            "--no-save",
            "--output-format",
            "json",
        ],
    );
    let doc = json(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    let ph = &phases[1];
    assert_eq!(ph["params"]["rw"], "rmw");
    // Three passes: every panel read (and checked), then written back, each pass.
    assert_eq!(ph["read"]["ops"], 3 * 8, "{ph}");
    assert_eq!(ph["write"]["ops"], 3 * 8, "{ph}");
    assert_eq!(ph["verify"]["mismatches"], 0, "{ph}");
    assert!(ph["verify"]["blocks_checked"].as_u64().unwrap() >= 3 * 8 * 256);
}

/// A two-point sweep of the null engine in `d`, without output options.
fn tiny_null_sweep(d: &Path) -> Vec<&str> {
    let d = d.to_str().unwrap();
    vec![
        "sweep", d, "-q", "--vary", "bs=4k,8k", "--engine", "null", "--size", "1m",
    ]
}

/// `--json-out` of a sweep run again overwrites its own earlier document
/// (it says storlab wrote it), never a file storlab did not write.
#[test]
fn a_sweep_rerun_overwrites_its_own_json_but_not_a_strangers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = |out: &str| {
        let mut args = tiny_null_sweep(d);
        args.extend(["--json-out", out]);
        run(d, &args)
    };
    let out = d.join("s.json");
    let o = out.to_str().unwrap();
    ok(&sweep(o));
    let first = std::fs::read_to_string(&out).unwrap();
    ok(&sweep(o));
    let second = std::fs::read_to_string(&out).unwrap();
    assert_ne!(
        first, second,
        "the second sweep's document replaced the first"
    );
    let v: serde_json::Value = serde_json::from_str(&second).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 2, "{v}");
    let other = d.join("notes.json");
    std::fs::write(&other, "{\"mine\": true}\n").unwrap();
    let refused = sweep(other.to_str().unwrap());
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "{\"mine\": true}\n"
    );
}

/// A sweep started by an MPI launcher as several processes is refused
/// (each would run the whole sweep on the same storage at once): rank 0
/// says why and exits 2, the others exit quietly with 0 (so mpirun cannot
/// kill rank 0 before its message is out), nothing is written; as one
/// process it runs.
#[test]
fn a_sweep_under_mpirun_with_several_processes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = tiny_null_sweep(d);
    let as_rank = |rank: &str, size: &str| {
        crate::util::cmd()
            .args(&args)
            .current_dir(d)
            .env("STORLAB_DB", d.join("results.db"))
            .env("OMPI_COMM_WORLD_SIZE", size)
            .env("OMPI_COMM_WORLD_RANK", rank)
            .output()
            .unwrap()
    };
    let o = as_rank("0", "4");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--clients"), "{}", stderr(&o));
    let o = as_rank("3", "4");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "files written");
    ok(&as_rank("0", "1"));
}
