//! `storlab plan`: the CLI end to end, above all how it treats bad input
//! (exit 2, a message that names the problem and the fix).

use crate::util::{stderr, stdout, storlab};
use serde_json::Value;
use std::path::Path;

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--output-format", "json"]);
    let o = storlab(&a);
    assert!(o.status.success(), "{:?}: {}", args, stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("valid JSON")
}

/// Run, expect exit 2 and every `needles` in stderr.
fn bad(args: &[&str], needles: &[&str]) {
    refused(&storlab(args), args, needles);
}

/// `o` (the output of `args`) exited 2 with every `needles` in stderr.
fn refused(o: &std::process::Output, args: &[&str], needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected '{n}' in: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn layout_table_shows_capacity_reliability_and_bottleneck() {
    let o = storlab(&["plan", "layout", "R60/12/48", "--drive", "exos-x18-18tb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for s in [
        "4 x 12 drives (10 data + 2 redundant)",
        "720.0 TB",
        "MTTDL of the volume",
        "binds",
        "read-modify-write",
    ] {
        assert!(out.contains(s), "missing '{s}' in:\n{out}");
    }
}

#[test]
fn layout_json_has_schema_and_overrides_apply() {
    let v = json(&[
        "plan",
        "layout",
        "R6/12",
        "--drive",
        "constellation-es3-4tb",
        "--capacity",
        "2TB",
        "--mtbf",
        "600000h",
        "--ber",
        "1e-14",
        "--sector-size",
        "512",
        "--rebuild-rate",
        "50MB/s",
    ]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "plan.layout");
    assert_eq!(
        v["geometry"]["usable_bytes"].as_u64(),
        Some(10 * 2_000_000_000_000)
    );
    let rel = &v["reliability"];
    assert_eq!(rel["drive_mtbf_hours"].as_f64(), Some(600_000.0));
    // 2 TB at 50 MB/s = 40000 s.
    assert!((rel["rebuild_hours"].as_f64().unwrap() - 40_000.0 / 3600.0).abs() < 1e-9);
    let closed = rel["group_mttdl_hours"].as_f64().unwrap();
    let numerical = rel["group_mttdl_numerical_hours"].as_f64().unwrap();
    assert!(((closed - numerical) / closed).abs() < 1e-6);
    let v = json(&[
        "plan",
        "layout",
        "R5/6",
        "--afr",
        "1.5%",
        "--rebuild-time",
        "12h",
    ]);
    assert_eq!(v["reliability"]["rebuild_hours"].as_f64(), Some(12.0));
    assert!((v["reliability"]["drive_afr"].as_f64().unwrap() - 0.015).abs() < 1e-9);
    assert_eq!(v["performance"].as_array().unwrap().len(), 5);
}

#[test]
fn bad_layouts_show_form_and_example() {
    bad(
        &["plan", "layout", "R7/8"],
        &["invalid layout 'R7/8'", "examples: R60/12/48"],
    );
    bad(&["plan", "layout", "R60/12/50"], &["multiple of 12"]);
    bad(&["plan", "layout", "R6/12/48"], &["R60/12/48"]);
    bad(&["plan", "layout", "R60/12/x"], &["storlab plan search"]);
    bad(&["plan", "layout", "lvm(4*R5/6"], &["missing ')'"]);
}

#[test]
fn unknown_names_get_did_you_mean() {
    bad(
        &["plan", "layout", "R6/12", "--drive", "exos-x18-18t"],
        &[
            "unknown drive",
            "did you mean 'exos-x18-18tb'",
            "storlab plan catalog",
        ],
    );
    bad(
        &["plan", "layout", "R6/12", "--controller", "megaraid9361-8i"],
        &["did you mean 'megaraid-9361-8i'"],
    );
    bad(
        &["plan", "layout", "R6/12", "--host-link", "fc7x2"],
        &["unknown link", "fc8"],
    );
}

#[test]
fn bad_figures_are_refused_with_the_fix() {
    bad(
        &["plan", "layout", "R6/12", "--capacity", "2TX"],
        &["--capacity", "invalid size"],
    );
    bad(
        &["plan", "layout", "R6/12", "--ber", "often"],
        &["--ber", "1e-15"],
    );
    bad(
        &["plan", "layout", "R6/12", "--ber", "0.5"],
        &["not a per-bit error rate"],
    );
    bad(&["plan", "layout", "R6/12", "--afr", "150%"], &["--afr"]);
    bad(
        &["plan", "layout", "R6/12", "--mtbf", "1h", "--afr", "1%"],
        &["cannot be used with"],
    );
    bad(
        &["plan", "layout", "R6/12", "--rebuild-time", "0h"],
        &["--rebuild-time must be a positive"],
    );
    bad(
        &["plan", "layout", "R6/12", "--mission", "forever"],
        &["--mission", "invalid duration"],
    );
    bad(
        &["plan", "layout", "R6/12", "--seq-size", "0"],
        &["--seq-size: must be at least one byte"],
    );
    bad(
        &["plan", "layout", "R6/12", "--rpm", "0"],
        &["--rpm must be a positive"],
    );
    bad(
        &[
            "plan",
            "layout",
            "R6/12",
            "--drive",
            "p4510-4tb",
            "--rpm",
            "7200",
        ],
        &["is an SSD"],
    );
    bad(
        &["plan", "layout", "R60/10/40", "--controllers", "2"],
        &["lvm(4*R6/10)"],
    );
    bad(
        &["plan", "layout", "R6/12", "--stripe", "1M"],
        &["one group", "--chunk"],
    );
}

#[test]
fn bad_catalog_files_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, "[[drive]]\nname = \"x\"\ncolour = \"red\"\n").unwrap();
    let p = path.to_str().unwrap();
    bad(
        &["plan", "catalog", "--catalog", p],
        &["mine.toml:3:", "colour"],
    );
    std::fs::write(&path, "[[drive]\n").unwrap();
    bad(
        &["plan", "layout", "R6/12", "--catalog", p],
        &["mine.toml:1:"],
    );
    bad(
        &[
            "plan",
            "catalog",
            "--catalog",
            dir.path().join("absent.toml").to_str().unwrap(),
        ],
        &["cannot read catalog file"],
    );
    // A good file adds a drive with a price, and search can then use cost.
    std::fs::write(
        &path,
        "[[drive]]\nname = \"cheap-8tb\"\nkind = \"hdd\"\ncapacity = \"8TB\"\nrpm = 7200\navg_seek = \"8.5ms\"\n\
         seq_rate = \"200MB/s\"\nafr = \"1%\"\nber = 1e-15\nsector_size = 4096\nrebuild_rate = \"80MB/s\"\nprice = 150\nsource = \"test\"\n\n\
         [[controller]]\nname = \"priced-ctl\"\nwrite_back = true\nbackend = \"sas12x8\"\nhost = \"pcie3x8\"\nprice = 600\nsource = \"test\"\n",
    )
    .unwrap();
    let v = json(&[
        "plan",
        "search",
        "--catalog",
        p,
        "--drive",
        "cheap-8tb",
        "--controller",
        "priced-ctl",
        "--drives",
        "12..24",
        "--max-cost",
        "3000",
    ]);
    let front = v["pareto"].as_array().unwrap();
    assert!(!front.is_empty());
    for c in front {
        assert!(c["cost"]["total"].as_f64().unwrap() <= 3000.0);
    }
    // Without prices --max-cost is refused with the fix.
    bad(
        &["plan", "search", "--drives", "12", "--max-cost", "1000"],
        &["--max-cost needs prices", "price = "],
    );
}

#[test]
fn search_prints_pareto_and_fails_when_nothing_fits() {
    let v = json(&[
        "plan",
        "search",
        "--drive",
        "constellation-es3-4tb",
        "--drives",
        "24..48",
        "--min-usable",
        "100TB",
        "--min-mttdl",
        "1000y",
    ]);
    assert_eq!(v["schema_version"], 1);
    let front = v["pareto"].as_array().unwrap();
    assert!(!front.is_empty());
    for c in front {
        assert!(c["usable_bytes"].as_u64().unwrap() >= 100_000_000_000_000);
        assert!(c["volume_mttdl_hours"].as_f64().unwrap() >= 1000.0 * 8760.0);
        assert!(!c["tradeoff"].as_str().unwrap().is_empty());
    }
    let o = storlab(&[
        "plan",
        "search",
        "--drives",
        "12..24",
        "--min-usable",
        "10PB",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no design meets the constraints"));
    bad(
        &["plan", "search", "--drives", "48..24"],
        &["--drives", "24..96"],
    );
    bad(
        &["plan", "search", "--drives", "many"],
        &["a count (48) or a range"],
    );
    bad(
        &["plan", "search", "--drives", "24", "--levels", "r7"],
        &["--levels", "r6"],
    );
    bad(
        &["plan", "search", "--drives", "24", "--chunks", "100"],
        &["multiple of 512"],
    );
}

#[test]
fn catalog_lists_models_with_sources() {
    let o = storlab(&["plan", "catalog"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for s in [
        "exos-x18-18tb",
        "megaraid-9361-8i",
        "jbod-4u60-sas12",
        "sas12",
        "u320",
        "Seagate",
    ] {
        assert!(out.contains(s), "missing {s}");
    }
    let v = json(&["plan", "catalog"]);
    assert!(v["drives"].as_array().unwrap().len() >= 10);
}

#[test]
fn stripe_alignment_is_checked_end_to_end() {
    // LVM stripe 1 MiB over RAID 6 groups of 12 (full stripe 2.5 MiB).
    let o = storlab(&["plan", "layout", "lvm(4*R6/12, stripe=1M)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("warning: LVM stripe 1 MiB is not a multiple"),
        "{out}"
    );
    assert!(out.contains("use stripe=2560k"), "{out}");
    // File system stripe given: wrong width warns, the right one is ok.
    let o = storlab(&[
        "plan", "layout", "R6/10", "--fs-su", "256k", "--fs-sw", "10",
    ]);
    assert!(stdout(&o).contains("su=256k,sw=8"), "{}", stdout(&o));
    let v = json(&["plan", "layout", "R6/10", "--fs-su", "256k", "--fs-sw", "8"]);
    let findings = v["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["severity"] != "warning"
            || !f["message"].as_str().unwrap().contains("file system"))
    );
    bad(
        &["plan", "layout", "R6/10", "--fs-su", "256k"],
        &["--fs-sw"],
    );
}

#[test]
fn search_options_shape_the_space() {
    let v = json(&[
        "plan",
        "search",
        "--drive",
        "constellation-es3-4tb",
        "--drives",
        "24",
        "--levels",
        "r6",
        "--spans",
        "6..12",
        "--chunks",
        "256k",
        "--hot-spares",
        "2",
    ]);
    let front = v["pareto"].as_array().unwrap();
    assert!(!front.is_empty());
    for c in front {
        let l = c["layout"].as_str().unwrap();
        assert!(l.contains("R6"), "{l}");
        let span: u32 = l
            .split(['/', ')', ','])
            .nth(1)
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("span in {l}"));
        assert!((6..=12).contains(&span), "{l}");
    }
    bad(
        &["plan", "search", "--drives", "24", "--spans", "12..6"],
        &["--spans"],
    );
}

#[test]
fn plan_trust_breakers_are_gone() {
    // RAID6/12 is R6/12.
    let o = storlab(&["plan", "layout", "RAID6/12"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A suggestion is itself a valid layout.
    bad(&["plan", "layout", "R6/12/50"], &["R60/12/48"]);
    let o = storlab(&["plan", "layout", "R60/12/48"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Overridden figures are shown as overridden; capacities in TB only.
    let o = storlab(&[
        "plan",
        "layout",
        "R6/12",
        "--drive",
        "exos-x18-18tb",
        "--capacity",
        "2TB",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("exos-x18-18tb (capacity overridden to 2.00 TB)"),
        "{out}"
    );
    assert!(!out.contains("TiB"), "{out}");
    // P(loss) in one format.
    let line = out
        .lines()
        .find(|l| l.contains("P(loss) in"))
        .expect("P(loss) row");
    assert!(line.contains("e-") && !line.contains('%'), "{line}");
    // The misalignment warning and the table agree.
    let o = storlab(&["plan", "layout", "lvm(4*R6/12, stripe=1M)"]);
    let out = stdout(&o);
    assert!(out.contains("full-stripe (cache)"), "{out}");
    let warn = out
        .lines()
        .find(|l| l.starts_with("warning:") && l.contains("not a multiple"))
        .expect("misalignment warning");
    assert!(warn.contains("full-stripe (cache)"), "{warn}");
}

#[test]
fn read_and_write_paths_bind_their_own_workloads() {
    // Parts that apply to some workloads only (a read path, a write path)
    // get '-' elsewhere in the parts table, and the reason is spelled out.
    let o = storlab(&[
        "plan",
        "layout",
        "R6/12",
        "--controller",
        "perc-6e",
        "--controller-max-write",
        "400MB/s",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("controller perc-6e read path"), "{out}");
    assert!(
        out.contains("sequential write 1 MiB: bound by the controller's write path (given with --controller-max-write)"),
        "{out}"
    );
    assert!(
        out.contains("sequential read 1 MiB: bound by the controller's read path"),
        "{out}"
    );
}

#[test]
fn search_has_a_reliability_floor_the_user_can_lower() {
    let args = [
        "plan",
        "search",
        "--drive",
        "exos-x18-18tb",
        "--drives",
        "12..24",
        "--levels",
        "r0,r5,r6",
    ];
    let v = json(&args);
    let n = v["pareto"].as_array().unwrap().len();
    assert!(n > 0);
    for c in v["pareto"].as_array().unwrap() {
        assert!(c["loss_probability"].as_f64().unwrap() <= 0.01, "{c}");
    }
    let mut all = args.to_vec();
    all.extend(["--max-loss", "100%"]);
    let w = json(&all);
    assert!(w["pareto"].as_array().unwrap().len() > n);
    let o = storlab(&args);
    assert!(
        stdout(&o).contains("left out (--max-loss"),
        "{}",
        stdout(&o)
    );
    bad(
        &["plan", "search", "--drives", "24", "--max-loss", "0%"],
        &["--max-loss"],
    );
    bad(&["plan", "layout", "R6/12", "--qd", "0"], &["--qd"]);
}

/// A QD 1 block-size sweep of sequential direct reads on this machine,
/// `repeats` times, into `db`. None when O_DIRECT is not available here.
fn real_sweep(dir: &std::path::Path, repeats: usize) -> Option<()> {
    let job = dir.join("sweep.toml");
    let mut text = String::from(
        "[global]\nsize = \"32M\"\ncache = \"direct\"\niodepth = 1\nruntime = \"200ms\"\ntime_based = true\n",
    );
    for bs in ["4k", "16k", "64k", "256k", "1M"] {
        text.push_str(&format!(
            "\n[[phase]]\nname = \"read-{bs}\"\nrw = \"read\"\nbs = \"{bs}\"\n"
        ));
    }
    std::fs::write(&job, text).unwrap();
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for _ in 0..repeats {
        let o = crate::util::run_in(
            dir,
            &[
                "bench",
                data.to_str().unwrap(),
                "--job",
                job.to_str().unwrap(),
            ],
        );
        if !o.status.success() {
            let err = stderr(&o);
            // Only a file system without O_DIRECT is a reason to skip; any
            // other failure fails the test.
            if err.contains("O_DIRECT") {
                crate::util::skip("real_sweep", &format!("no O_DIRECT here: {err}"));
                return None;
            }
            panic!("bench failed: {err}");
        }
    }
    Some(())
}

/// The same runs as a controller entry (measured limits, links from the
/// model named), which plans too.
fn controller_entry_plans(dir: &Path) {
    let ctl = dir.join("ctl.toml");
    let c = crate::util::run_in(
        dir,
        &[
            "plan",
            "calibrate",
            "--all",
            "--as",
            "this-ctl",
            "--like",
            "perc-h800",
            "--output",
            ctl.to_str().unwrap(),
        ],
    );
    assert!(crate::util::ok(&c).contains("--controller this-ctl"));
    let text = std::fs::read_to_string(&ctl).unwrap();
    assert!(
        text.contains("max_read") && text.contains("not identified: max_write"),
        "{text}"
    );
    let p = crate::util::run_in(
        dir,
        &[
            "plan",
            "layout",
            "R6/12",
            "--catalog",
            ctl.to_str().unwrap(),
            "--controller",
            "this-ctl",
        ],
    );
    let layout = crate::util::ok(&p);
    assert!(layout.contains("1 x this-ctl"), "{layout}");
    // The calibrated read limit binds only where it is below what the
    // twelve drives stream (1,902.5 MB/s): this machine's measured rate
    // varies with its load and page cache, and above that the drives
    // bind and the controller is not named.
    let max_read_mb_s: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("max_read = \""))
        .and_then(|v| {
            v.trim_end_matches('"')
                .trim_end_matches("MB/s")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no max_read in {text}"));
    if max_read_mb_s < 1800.0 {
        assert!(layout.contains("this-ctl read path"), "{layout}");
    }
}

/// How much the held-out size's own repeats disagreed (the middle three of
/// five): a prediction cannot be held to less than that.
fn held_out_spread(cal: &Value) -> f64 {
    let mut rep: Vec<f64> = cal["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["held_out"] == true)
        .map(|p| p["measured_iops"].as_f64().unwrap())
        .collect();
    rep.sort_by(f64::total_cmp);
    (rep[rep.len() * 3 / 4] - rep[rep.len() / 4]) / rep[rep.len() / 2]
}

#[test]
fn calibrate_fits_this_machines_sweep_and_predicts_a_held_out_point() {
    // This machine's disk is shared and noisy: the fit takes the median of
    // five repeats per size, and a whole sweep is retried twice. The goal is
    // 15 %; on the last attempt a machine so loaded that the held-out size's
    // own repeats disagree by more than that (the full test suite runs
    // I/O-heavy tests in parallel) is held to that spread instead.
    let mut last = String::new();
    for attempt in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        if real_sweep(dir.path(), 5).is_none() {
            return;
        }
        let out = dir.path().join("fitted.toml");
        let o = crate::util::run_in(
            dir.path(),
            &[
                "plan",
                "calibrate",
                "--all",
                "--as",
                "this-disk",
                "--like",
                "exos-x18-18tb",
                "--hold-out",
                "256k",
                "--output",
                out.to_str().unwrap(),
                "--output-format",
                "json",
            ],
        );
        let v: Value = serde_json::from_str(&crate::util::ok(&o)).unwrap();
        let cal = &v["calibration"];
        assert!(cal["read"]["rate_bytes_per_s"].as_f64().unwrap() > 0.0);
        let nid = cal["not_identified"].to_string();
        assert!(nid.contains("write streaming rate"), "{nid}");
        // The entry loads and plans.
        let p = crate::util::run_in(
            dir.path(),
            &[
                "plan",
                "layout",
                "R0/1",
                "--catalog",
                out.to_str().unwrap(),
                "--drive",
                "this-disk",
                "--against",
                "latest",
            ],
        );
        let text = crate::util::ok(&p);
        assert!(text.contains("predicted vs measured"), "{text}");
        assert!(text.contains("read-256k"), "{text}");
        // Writing the same file twice is refused, never overwritten.
        let again = crate::util::run_in(
            dir.path(),
            &[
                "plan",
                "calibrate",
                "--all",
                "--as",
                "this-disk",
                "--like",
                "exos-x18-18tb",
                "--output",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
        controller_entry_plans(dir.path());
        let held = cal["held_out_error"].as_f64().unwrap();
        println!(
            "attempt {attempt}: fit error {:.1}%, held-out 256 KiB error {:.1}%",
            cal["fit_error"].as_f64().unwrap() * 100.0,
            held * 100.0
        );
        let spread = held_out_spread(cal);
        println!(
            "  repeats at 256 KiB spread {:.1}% around their median",
            spread * 100.0
        );
        // The fit itself must describe the sizes it saw; a noisy machine
        // may excuse the held-out point only up to its repeats' own spread,
        // and never past 30 %.
        let fit = cal["fit_error"].as_f64().unwrap();
        if fit < 0.20 && (held < 0.15 || (attempt == 2 && held < spread.min(0.30))) {
            return;
        }
        last = format!(
            "fit error {:.1}%, held-out error {:.1}% (repeats spread {:.1}%): {}",
            fit * 100.0,
            held * 100.0,
            spread * 100.0,
            cal["points"]
        );
    }
    panic!(
        "the fit mispredicted the held-out 256 KiB point three times, by more than 15 % and more than the repeats' own spread (at most 30 %), or fitted its own sizes worse than 20 %: {last}"
    );
}

#[test]
fn calibrate_and_against_name_their_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let db = db.to_str().unwrap();
    bad(
        &[
            "plan",
            "calibrate",
            "1",
            "--as",
            "my disk",
            "--like",
            "exos-x18-18tb",
            "--db",
            db,
        ],
        &["--as 'my disk' is not a catalog name"],
    );
    bad(
        &[
            "plan",
            "calibrate",
            "1",
            "--as",
            "d",
            "--like",
            "exos-x18",
            "--db",
            db,
        ],
        &["did you mean 'exos-x18-18tb'"],
    );
    bad(
        &[
            "plan",
            "calibrate",
            "1",
            "--as",
            "d",
            "--like",
            "exos-x18-18tb",
            "--hold-out",
            "lots",
            "--db",
            db,
        ],
        &["--hold-out"],
    );
    // No database yet: says how to make one.
    let o = storlab(&[
        "plan",
        "calibrate",
        "1",
        "--as",
        "d",
        "--like",
        "exos-x18-18tb",
        "--db",
        db,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = storlab(&["plan", "layout", "R6/12", "--against", "1", "--db", db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    bad(
        &["plan", "layout", "R6/12", "--against", "nonsense!"],
        &["nonsense!"],
    );
    bad(&["plan", "layout", "R6/12", "--fill", "0%"], &["--fill"]);
    bad(
        &[
            "plan",
            "layout",
            "R6/12",
            "--drive",
            "p4510-4tb",
            "--fill",
            "50%",
        ],
        &["--fill needs the disk's outer and inner media rates"],
    );
}

/// A design that does not parse, or names what the catalog lacks, is
/// refused before the run: no database, no scratch file.
#[test]
fn a_bad_design_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused_in = |args: &[&str], needle: &str| {
        refused(&crate::util::run_in(d, args), args, &[needle]);
    };
    let typo = "R6/x --drive exos-x18-18tb";
    refused_in(&["bench", ".", "--size", "4M", "--design", typo], "R6/x");
    let unknown = "R0/1 --drive no-such-drive";
    refused_in(&["bench", ".", "--design", unknown], "no-such-drive");
    // Parses, but plan layout refuses it: two controllers for one group.
    let invalid = "R0/1 --drive exos-x18-18tb --controllers 2";
    refused_in(&["bench", ".", "--design", invalid], "controllers");
    refused_in(
        &["report", "--all", "--design", invalid, "-o", "r.html"],
        "controllers",
    );
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "files written");
}

/// A design's `--catalog FILE` is recorded by absolute path: a report made
/// in another directory reads the same file.
#[test]
fn a_designs_catalog_is_recorded_by_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("cat.toml"),
        "[[drive]]\nname = \"my-ssd\"\nkind = \"ssd\"\ncapacity = \"1TB\"\nread_iops = 90000\n\
         write_iops = 30000\nseq_read = \"500MB/s\"\nseq_write = \"450MB/s\"\nmtbf = \"2000000h\"\n\
         ber = 1e-17\nsector_size = 512\nrebuild_rate = \"200MB/s\"\nsource = \"test\"\n",
    )
    .unwrap();
    let t = d.join("t");
    std::fs::create_dir(&t).unwrap();
    crate::util::ok(&crate::util::run_in(
        d,
        &[
            "bench",
            "t",
            "--engine",
            "null",
            "--size",
            "1M",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--design",
            "R0/1 --drive my-ssd --catalog cat.toml",
        ],
    ));
    let runs = crate::util::ok(&crate::util::run_in(d, &["runs", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&runs).unwrap();
    let abs = d.join("cat.toml").display().to_string();
    assert_eq!(
        v[0]["tags"]["planned_as"],
        format!("R0/1 --drive my-ssd --catalog {abs}").as_str(),
        "{v}"
    );
    // From elsewhere, the report still predicts it.
    let html = d.join("r.html");
    let db = d.join("results.db");
    let o = crate::util::run_in(
        &t,
        &[
            "report",
            "latest",
            "-o",
            html.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("Predicted vs measured") && text.contains("my-ssd"),
        "{text}"
    );
}

/// A run planned as a design (`bench --design`) carries it (tag `planned_as`),
/// and `storlab report` shows every phase's prediction beside the measured
/// figure: the same numbers `plan layout --against` prints for that run.
#[test]
fn a_run_tagged_with_its_design_is_reported_beside_the_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let design = "R0/1 --drive exos-x18-18tb --controller hba-9300-8i-md --streams 1 --qd 4";
    // Two phases with the design, one untagged run after it.
    crate::util::ok(&crate::util::run_in(
        dir.path(),
        &[
            "bench",
            ".",
            "--rw",
            "write",
            "--bs",
            "256k",
            "--size",
            "8M",
            "--iodepth",
            "4",
            "--design",
            design,
        ],
    ));
    crate::util::ok(&crate::util::run_in(
        dir.path(),
        &["bench", ".", "--rw", "read", "--bs", "64k", "--size", "8M"],
    ));
    let runs = crate::util::ok(&crate::util::run_in(
        dir.path(),
        &["runs", "--output-format", "json"],
    ));
    assert!(
        runs.contains(&format!("\"planned_as\": \"{design}\"")),
        "{runs}"
    );

    // What plan says for run 1 ...
    let plan = crate::util::ok(&crate::util::run_in(
        dir.path(),
        &[
            "plan",
            "layout",
            "R0/1",
            "--drive",
            "exos-x18-18tb",
            "--controller",
            "hba-9300-8i-md",
            "--streams",
            "1",
            "--qd",
            "4",
            "--against",
            "1",
            "--output-format",
            "json",
        ],
    ));
    let v: Value = serde_json::from_str(&plan).unwrap();
    let rows = v["against"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{plan}");
    let predicted = rows[0]["predicted_bytes_per_s"].as_f64().unwrap();
    let measured = rows[0]["measured_bytes_per_s"].as_f64().unwrap();
    assert!(predicted > 0.0 && measured > 0.0, "{plan}");

    // ... is what the report shows beside the measurement, for run 1 only.
    crate::util::ok(&crate::util::run_in(
        dir.path(),
        &["report", "1", "2", "-o", "r.html"],
    ));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    let i = html
        .find("id=\"predicted\"")
        .expect("a Predicted vs measured section");
    let section = &html[i..html[i..].find("<h2").map_or(html.len(), |j| i + j)];
    for needle in [
        format!("{:.1}", predicted / 1e6),
        format!("{:.1}", measured / 1e6),
        "Run #1".to_string(),
        "R0/1 --drive exos-x18-18tb".to_string(),
        "Mean absolute error".to_string(),
        format!("{:+.1} %", (predicted - measured) / measured * 100.0),
    ] {
        assert!(section.contains(&needle), "{needle} missing from {section}");
    }
    assert!(
        !section.contains("Run #2"),
        "the untagged run has no design: {section}"
    );
    // The chart alone, and the same for an untagged run given --design.
    let svg = crate::util::ok(&crate::util::run_in(
        dir.path(),
        &[
            "report",
            "1",
            "--chart",
            "predicted",
            "--output-format",
            "svg",
            "-o",
            "p.svg",
        ],
    ));
    assert!(svg.contains("Predicted vs measured"), "{svg}");
    assert!(
        std::fs::read_to_string(dir.path().join("p.svg"))
            .unwrap()
            .contains("<svg")
    );
    crate::util::ok(&crate::util::run_in(
        dir.path(),
        &[
            "report",
            "2",
            "--design",
            "R0/1 --drive exos-x18-18tb",
            "-o",
            "r2.html",
        ],
    ));
    let html = std::fs::read_to_string(dir.path().join("r2.html")).unwrap();
    assert!(html.contains("Run #2") && html.contains("id=\"predicted\""));
    // No design anywhere: no such chart, said with exit 2.
    let chart = [
        "report",
        "2",
        "--chart",
        "predicted",
        "--output-format",
        "svg",
        "-o",
        "q.svg",
    ];
    refused(
        &crate::util::run_in(dir.path(), &chart),
        &chart,
        &["--design"],
    );
}
