//! Issue 27, what fio users see: reporting-only options, fio's flags on
//! the command line, `--dry-run`, `--output-format fio-json` and the import
//! of fio's JSON (helper `fioout`).

use crate::util::{cmd, have, json, ok, skip, stderr, stdout};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn in_db(dir: &Path) -> std::process::Command {
    let mut c = cmd();
    c.env("STORLAB_DB", dir.join("results.db"));
    c
}

/// fio's reporting-only options were refused "because they would change
/// the workload". They are accepted and honoured: percentile_list's
/// percentiles in the JSON and the table, unified_rw_reporting's one mixed
/// line, log_avg_msec's series interval, and a note for each fio log,
/// which storlab keeps as its own series.
#[test]
fn reporting_only_fio_options_are_accepted_and_honoured() {
    let d = tempfile::tempdir().unwrap();
    let job = write(
        d.path(),
        "r.fio",
        "[global]\nioengine=null\nsize=1m\nruntime=1\ntime_based\ngroup_reporting\n\
         percentile_list=95:99.5\nlat_percentiles=1\nclat_percentiles=1\n\
         write_bw_log=r\nwrite_lat_log=r\nwrite_iops_log=r\nlog_avg_msec=200\n\
         [mix]\nrw=randrw\nunified_rw_reporting=1\n",
    );
    let dir = d.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let run = |fmt: &str| {
        cmd()
            .args(["bench", "--fio-job", &job])
            .arg(&dir)
            .args(["--no-save", "-q", "--output-format", fmt])
            .output()
            .unwrap()
    };
    let out = run("json");
    let v = json(&out);
    let ph = &v["phases"][0];
    let pcts: Vec<f64> = ph["percentiles"]["total"]
        .as_array()
        .unwrap_or_else(|| panic!("no percentiles: {ph}"))
        .iter()
        .map(|p| p[0].as_f64().unwrap())
        .collect();
    assert_eq!(pcts, [95.0, 99.5]);
    let p95 = ph["percentiles"]["total"][0][1].as_u64().unwrap();
    let p99 = ph["total"]["lat_ns"]["p99"].as_u64().unwrap();
    let p50 = ph["total"]["lat_ns"]["p50"].as_u64().unwrap();
    assert!(p50 <= p95 && p95 <= p99, "p50 {p50} p95 {p95} p99 {p99}");
    assert_eq!(ph["params"]["report"]["unified_rw_reporting"], "mixed");
    assert_eq!(ph["params"]["log_interval_ns"], 200_000_000);
    let err = stderr(&out);
    assert!(err.contains("no fio log file is written"), "{err}");
    assert!(err.contains("clat_percentiles"), "{err}");
    assert!(!err.contains("would change the workload"), "{err}");

    let text = ok(&run("table"));
    assert!(text.contains("mix (mixed)"), "{text}");
    assert!(!text.contains("  read "), "one mixed line only:\n{text}");
    assert!(
        text.contains("mix mixed latency percentiles (percentile_list): p95 "),
        "{text}"
    );
}

/// `--norandommap`, `--zero_buffers`, `--randrepeat=0`, `--rwmixwrite`:
/// what fio's command line takes; a flag given twice takes its last value.
#[test]
fn fio_flags_on_the_command_line_and_the_last_value_wins() {
    let d = tempfile::tempdir().unwrap();
    let run = || {
        let out = cmd()
            .args(["bench"])
            .arg(d.path())
            .args([
                "--rw",
                "randrw",
                "--engine",
                "null",
                "--size",
                "1m",
                "--norandommap",
                "--zero_buffers",
                "--randrepeat=0",
                "--rwmixread",
                "10",
                "--rwmixwrite",
                "30",
                "--bs",
                "4k",
                "--bs",
                "8k",
                "--buffered=0",
                "--no-save",
                "-q",
                "--json",
            ])
            .output()
            .unwrap();
        json(&out)["phases"][0]["params"].clone()
    };
    let p = run();
    assert_eq!(p["random_with_replacement"], true);
    assert_eq!(p["buffer_pattern"]["kind"], "zero");
    assert_eq!(p["rwmixread"], 70, "--rwmixwrite 30 came last");
    assert_eq!(p["bs"][0]["bs_bytes"], 8192, "the last --bs wins");
    assert_eq!(p["cache"], "direct", "--buffered=0 is O_DIRECT");
    // randrepeat=0: a new seed each run.
    assert_ne!(p["seed"], run()["seed"]);
}

/// No fio spelling of any option of the table (its key, flag and every
/// alias, and the translated fio names) is unknown to the command line:
/// clap's tip "to pass '--x' as a value, use '-- --x'" never appears.
#[test]
fn every_fio_spelling_is_a_flag() {
    let d = tempfile::tempdir().unwrap();
    let mut spellings: Vec<String> = Vec::new();
    for o in storlab_bench::OPTIONS {
        spellings.push(o.key.to_string());
        spellings.push(o.long.to_string());
        spellings.extend(o.aliases.iter().map(|a| a.to_string()));
        spellings.extend(o.aliases.iter().map(|a| a.replace('_', "-")));
    }
    for f in storlab_bench::FIO_FLAGS {
        spellings.push(f.name.to_string());
        spellings.push(f.name.replace('_', "-"));
    }
    spellings.sort();
    spellings.dedup();
    assert!(spellings.contains(&"norandommap".to_string()));
    assert!(spellings.contains(&"zero_buffers".to_string()));
    assert!(spellings.contains(&"randrepeat".to_string()));
    for s in &spellings {
        let out = cmd()
            .arg("bench")
            .arg(d.path())
            .arg(format!("--{s}=1"))
            .args(["--rw", "read", "--engine", "null", "--dry-run"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(
            !err.contains("tip:") && !err.contains("unexpected argument"),
            "--{s}: {err}"
        );
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// A size refused on the command line ends with bench's own usage line.
#[test]
fn a_refused_size_names_the_bench_usage_line() {
    let out = cmd()
        .args(["bench", "--rw", "read", "--size", "4q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--size"), "{err}");
    assert!(
        err.contains("Usage: storlab bench [OPTIONS] [TARGET]"),
        "{err}"
    );
    assert!(!err.contains("Usage: storlab [COMMAND]"), "{err}");
}

/// `--dry-run` (fio's `--showcmd`) shows every value of every phase and its
/// source, for a job file, an fio job file, a profile and the quick check,
/// and runs nothing: no file, no stored run.
#[test]
fn dry_run_shows_every_value_and_its_source_and_runs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let toml = write(
        d.path(),
        "j.toml",
        "[global]\nengine = \"null\"\nsize = \"1m\"\n\n[[phase]]\nname = \"w\"\nrw = \"write\"\nbs = \"64k\"\n",
    );
    let fio = write(
        d.path(),
        "j.fio",
        "[global]\nsize=1m\n[r]\nrw=randread\nbs=8k\n",
    );
    let target = d.path().join("t");
    let line = |text: &str, key: &str| -> String {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} line in\n{text}"))
            .to_string()
    };
    let dry = |args: &[&str]| {
        let out = in_db(d.path())
            .arg("bench")
            .arg(&target)
            .args(args)
            .output()
            .unwrap();
        ok(&out)
    };
    let t = dry(&["--job", &toml, "--dry-run", "--iodepth", "4"]);
    assert!(t.contains("Dry run: nothing is run"), "{t}");
    assert!(line(&t, "bs").ends_with("j.toml:8"), "{t}");
    assert!(line(&t, "engine").ends_with("j.toml:2"), "{t}");
    assert!(line(&t, "iodepth").contains(" 4 ") && line(&t, "iodepth").ends_with("flag"));
    assert!(line(&t, "numjobs").ends_with("default"), "{t}");

    let t = dry(&["--fio-job", &fio, "--showcmd"]);
    assert!(line(&t, "bs").ends_with("j.fio:5"), "{t}");
    assert!(line(&t, "size").ends_with("j.fio:2"), "{t}");
    assert!(line(&t, "engine").ends_with("fio default"), "{t}");
    assert!(line(&t, "name").ends_with("j.fio:3"), "{t}");

    let t = dry(&["--dry-run", "--engine", "null"]);
    for phase in ["seq-write", "seq-read", "rand-read", "rand-write"] {
        assert!(t.contains(phase), "{t}");
    }
    assert!(line(&t, "rw").ends_with("quick check"), "{t}");

    let t = dry(&["--profile", "seq", "--dry-run", "--size", "1m"]);
    assert!(line(&t, "size").ends_with("flag"), "{t}");

    let out = in_db(d.path())
        .arg("bench")
        .arg(&target)
        .args(["--job", &toml, "--dry-run", "--json"])
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["phases"][0]["name"], "w");

    assert!(!target.exists(), "a dry run created its target");
    assert!(
        !d.path().join("results.db").exists(),
        "a dry run stored a run"
    );
}

/// `--output-format fio-json` writes fio's layout with the keys fio-plot
/// reads (fio_plot/fiolib/jsonparsing.py: `fio version`, `jobs[].jobname`,
/// `job options` iodepth/numjobs/bs/rw, `read`/`write` bw, iops,
/// iops_stddev, lat_ns mean/stddev, `latency_ms`/`_us`/`_ns`, `usr_cpu`,
/// `sys_cpu`), and `storlab import` reads it back with the same figures.
#[test]
fn fio_json_has_fio_plots_keys_and_imports_back_with_the_same_figures() {
    let d = tempfile::tempdir().unwrap();
    let record = d.path().join("record.json");
    let out = in_db(d.path())
        .arg("bench")
        .arg(d.path().join("t"))
        .args([
            "--rw",
            "randrw",
            "--bssplit",
            "4k/50:64k/50",
            "--engine",
            "null",
            "--size",
            "4m",
            "--runtime",
            "1s",
            "--time-based",
            "--percentile-list",
            "95",
            "--no-save",
            "-q",
            "--output-format",
            "fio-json",
            "--json-out",
        ])
        .arg(&record)
        .output()
        .unwrap();
    let fio = json(&out);
    assert!(fio["fio version"].as_str().unwrap().starts_with("storlab-"));
    let job = &fio["jobs"][0];
    assert_eq!(job["jobname"], "1-randrw");
    for k in ["iodepth", "numjobs", "bs", "rw"] {
        assert!(job["job options"][k].is_string(), "job options.{k}: {job}");
    }
    for dir in ["read", "write"] {
        for k in ["bw", "iops", "iops_stddev", "io_bytes", "runtime"] {
            assert!(job[dir][k].is_number(), "{dir}.{k}: {job}");
        }
        for k in ["mean", "stddev"] {
            assert!(job[dir]["lat_ns"][k].is_number(), "{dir}.lat_ns.{k}");
        }
        assert!(job[dir]["clat_ns"]["percentile"]["95.000000"].is_number());
        assert!(job[dir]["clat_ns"]["percentile"]["99.000000"].is_number());
    }
    for k in ["latency_ms", "latency_us", "latency_ns"] {
        assert!(job[k].is_object(), "{k}");
    }
    let shares: f64 = ["latency_ms", "latency_us", "latency_ns"]
        .iter()
        .flat_map(|k| job[*k].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!(
        (shares - 100.0).abs() < 0.01,
        "the buckets hold every I/O: {shares}"
    );
    for k in ["usr_cpu", "sys_cpu"] {
        assert!(job[k].is_number(), "{k}");
    }

    let fio_file = write(d.path(), "fio.json", &stdout(&out));
    ok(&in_db(d.path())
        .args(["import", &fio_file])
        .output()
        .unwrap());
    let shown = json(
        &in_db(d.path())
            .args(["show", "1", "--json"])
            .output()
            .unwrap(),
    );
    let back = &shown[0]["report"];
    assert_eq!(back["tool"]["name"], "storlab");
    let orig: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let (a, b) = (&orig["phases"][0], &back["phases"][0]);
    for dir in ["read", "write"] {
        assert_eq!(a[dir]["bytes"], b[dir]["bytes"], "{dir}");
        assert_eq!(a[dir]["ops"], b[dir]["ops"], "{dir}");
        assert_eq!(a[dir]["iops"], b[dir]["iops"], "{dir}");
        assert_eq!(a[dir]["lat_ns"], b[dir]["lat_ns"], "{dir}");
        let bw = |v: &serde_json::Value| v[dir]["bw_bytes_per_s"].as_f64().unwrap();
        assert!(
            (bw(a) - bw(b)).abs() <= 1.0,
            "{dir}: {} vs {}",
            bw(a),
            bw(b)
        );
    }
    assert_eq!(a["params"]["bs"], b["params"]["bs"]);
    assert_eq!(a["params"]["time_based"], b["params"]["time_based"]);
}

/// fio 3.33 leaves options given without a value out of its JSON
/// (`time_based`, `group_reporting`); the import read them as off, and
/// `compare` against a storlab run of the same job named differences that
/// are not there. Now only the tool differs.
#[test]
fn an_imported_fio_run_and_a_storlab_run_of_the_same_job_differ_only_in_the_tool() {
    if !have("fio") {
        skip(
            "an_imported_fio_run_and_a_storlab_run_of_the_same_job_differ_only_in_the_tool",
            "fio is not installed (Debian: fio)",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let job = write(
        d.path(),
        "same.fio",
        "[global]\nioengine=psync\nsize=4m\nruntime=1\ntime_based\ngroup_reporting\n\
         log_avg_msec=500\nthinktime=0\n[t]\nrw=randread\nbs=4k\nnumjobs=2\n",
    );
    let fio_out = d.path().join("fio.json");
    let st = std::process::Command::new("fio")
        .args(["--output-format=json", "--output"])
        .arg(&fio_out)
        .arg(format!("--directory={}", dir.display()))
        .arg(&job)
        .stdin(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    ok(&in_db(d.path())
        .args(["import", fio_out.to_str().unwrap()])
        .output()
        .unwrap());
    ok(&in_db(d.path())
        .args(["bench", "--fio-job", &job])
        .arg(&dir)
        .arg("-q")
        .output()
        .unwrap());
    let v = json(
        &in_db(d.path())
            .args(["compare", "--baseline", "1", "2", "--json"])
            .output()
            .unwrap(),
    );
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["run_id"] == 2), "{v}");
    for r in rows.iter().filter(|r| r["run_id"] == 2) {
        let keys: Vec<&str> = r["config"]["other"]
            .as_array()
            .unwrap()
            .iter()
            .chain(r["config"]["under_study"].as_array().unwrap())
            .map(|d| d["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["tool"], "{r}");
    }
}

/// The workload flags as a dry run reads them (key → value of phase 1),
/// or the error the user reads.
fn flags(args: &[&str]) -> Result<std::collections::BTreeMap<String, String>, String> {
    let d = tempfile::tempdir().unwrap();
    let out = cmd()
        .arg("bench")
        .arg(d.path())
        .args(args)
        .args(["--dry-run", "--json"])
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(stderr(&out));
    }
    let v = json(&out);
    Ok(v["phases"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let s = |k: &str| o[k].as_str().unwrap().to_string();
            (s("key"), s("value"))
        })
        .collect())
}

/// Moved from the unit tests of `src/commands/workload.rs` (the command
/// line's workload flags), now through the binary: fio's value forms
/// (`--direct`, `--direct=0`, `--iodepth_batch=2`, `--ioengine`).
#[test]
fn workload_flags_take_fios_value_forms() {
    let w = flags(&[
        "--rw",
        "randread",
        "--direct",
        "--iodepth_batch=2",
        "--iodepth",
        "4",
    ])
    .unwrap();
    assert_eq!(w["rw"], "randread");
    assert_eq!(w["direct"], "true");
    assert_eq!(w["iodepth_batch"], "2");
    assert_eq!(w["iodepth"], "4");
    let w = flags(&["--direct=0", "--ioengine", "psync", "--no-end-fsync"]).unwrap();
    assert_eq!(w["direct"], "false");
    assert_eq!(w["engine"], "psync");
    assert_eq!(w["end_fsync"], "false");
    // No --rw: the quick check's first phase.
    assert_eq!(w["rw"], "write");
}

/// fio's spellings take fio's units (`--blocksize=4KiB` is 4000 with
/// kb_base 1024); storlab's own flags keep SI/IEC.
#[test]
fn fio_spellings_take_fio_units_and_storlab_flags_keep_si_iec() {
    let bs = |a: &[&str]| {
        let mut args = vec!["--rw", "read"];
        args.extend_from_slice(a);
        flags(&args).map(|w| w["bs"].clone())
    };
    // fio: KiB is 1000 with kb_base 1024 (4000 is then no block size).
    let e = bs(&["--blocksize=4KiB"]).unwrap_err();
    assert!(e.contains("block size 4000"), "{e}");
    assert_eq!(bs(&["--blocksize=4k"]).unwrap(), "4096");
    assert_eq!(bs(&["--blocksize=4KiB", "--kb_base=1000"]).unwrap(), "4096");
    assert_eq!(
        bs(&["--bs=4KiB"]).unwrap(),
        "4096",
        "storlab's own flag: IEC"
    );
    let e = bs(&["--bs=4kB"]).unwrap_err();
    assert!(e.contains("block size 4000"), "storlab's own flag: SI: {e}");
    assert!(bs(&["--blocksize=4k", "--bs=8k"]).is_err());
    let e = bs(&["--blocksize=4q"]).unwrap_err();
    assert!(e.contains("--blocksize"), "{e}");
}

/// `--fallocate` takes its word with a space, as the README writes it; a
/// yes/no flag's value stays attached (`--direct` does not eat a word).
#[test]
fn fallocate_takes_its_word_and_yes_no_values_stay_attached() {
    for a in [&["--fallocate", "none"][..], &["--fallocate=none"]] {
        assert_eq!(flags(a).unwrap()["fallocate"], "false", "{a:?}");
    }
    assert_eq!(
        flags(&["--fallocate", "native"]).unwrap()["fallocate"],
        "true"
    );
    let e = flags(&["--fallocate", "maybe"]).unwrap_err();
    assert!(e.contains("--fallocate"), "{e}");
    // The refusal names the words the help names (native|none), not 1/0.
    assert!(e.contains("use native or none"), "{e}");
    assert!(flags(&["--direct", "psync"]).is_err());
}

/// A bad value names its flag.
#[test]
fn bad_workload_values_name_the_flag() {
    let e = flags(&["--iodepth", "many"]).unwrap_err();
    assert!(e.contains("--iodepth") && e.contains("whole number"), "{e}");
    let e = flags(&["--verify=maybe"]).unwrap_err();
    assert!(e.contains("--verify"), "{e}");
    assert!(flags(&["--end-fsync=1", "--no-end-fsync"]).is_err());
}
