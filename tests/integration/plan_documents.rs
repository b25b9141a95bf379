//! Issue 27's `plan` items, end to end: plans that go into a document
//! (`--output-format md|csv`), random I/O against a run in IOPS at its queue
//! depth, hot spares in enclosure bays, one-field catalog overrides, costs
//! with their currency, the current drives, search's trivial differences
//! and ties, and the `--cores` verdict with `--check`.

use crate::util::{ok, run_in, stderr, stdout, storlab};
use serde_json::Value;

fn json_of(args: &[&str]) -> Value {
    let o = storlab(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// CSV text as rows of fields (no field here holds a quote or a comma
/// inside quotes that matters to the checks: they read numbers and names).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
            let mut fields = Vec::new();
            let mut cur = String::new();
            let mut quoted = false;
            for c in l.chars() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => fields.push(std::mem::take(&mut cur)),
                    c => cur.push(c),
                }
            }
            fields.push(cur);
            fields
        })
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", rows[0]))
}

#[test]
fn layout_and_search_print_markdown_and_csv() {
    let args = ["plan", "layout", "R60/12/48", "--drive", "exos-x18-18tb"];
    // Markdown: pipe tables with their rule, every workload a row.
    let md = storlab(&[&args[..], &["--output-format", "md"]].concat());
    assert_eq!(md.status.code(), Some(0), "{}", stderr(&md));
    let md = stdout(&md);
    assert!(md.contains("| workload | predicted | MB/s |"), "{md}");
    assert!(md.contains("| --- | --- |"), "{md}");
    assert!(md.contains("| sequential read 1 MiB |"), "{md}");
    assert!(
        !md.contains('┆') && !md.contains('│'),
        "terminal table in md: {md}"
    );
    // No prose line is indented into a code block.
    assert!(!md.lines().any(|l| l.starts_with("    ")), "{md}");

    // CSV: one row per workload, figures in machine units matching JSON.
    let csv = storlab(&[&args[..], &["--output-format", "csv"]].concat());
    assert_eq!(csv.status.code(), Some(0), "{}", stderr(&csv));
    let rows = csv_rows(&stdout(&csv));
    let v = json_of(&[&args[..], &["--json"]].concat());
    let perf = v["performance"].as_array().unwrap();
    assert_eq!(rows.len(), 1 + perf.len(), "{rows:?}");
    let bw = column(&rows, "predicted_bytes_per_s");
    let usable = column(&rows, "usable_bytes");
    for (row, p) in rows[1..].iter().zip(perf) {
        let got: f64 = row[bw].parse().unwrap();
        let want = p["bytes_per_s"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-6 * want, "{got} vs {want}");
        assert_eq!(row[usable], v["geometry"]["usable_bytes"].to_string());
    }

    // Search: every Pareto design a CSV row; Markdown has the table.
    let search = [
        "plan",
        "search",
        "--drives",
        "24..48",
        "--min-usable",
        "300TB",
    ];
    let csv = storlab(&[&search[..], &["--output-format", "csv"]].concat());
    assert_eq!(csv.status.code(), Some(0), "{}", stderr(&csv));
    let rows = csv_rows(&stdout(&csv));
    let v = json_of(&[&search[..], &["--json"]].concat());
    assert_eq!(rows.len(), 1 + v["pareto"].as_array().unwrap().len());
    let md = stdout(&storlab(
        &[&search[..], &["--output-format", "markdown"]].concat(),
    ));
    assert!(md.contains("| layout | ctrl | usable |"), "{md}");
}

#[test]
fn against_shows_random_rows_in_iops_with_their_queue_depth() {
    let dir = tempfile::tempdir().unwrap();
    ok(&run_in(
        dir.path(),
        &[
            "bench",
            ".",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "8M",
            "--iodepth",
            "4",
            "--numjobs",
            "2",
            "--runtime",
            "300ms",
            "--time-based",
        ],
    ));
    ok(&run_in(
        dir.path(),
        &["bench", ".", "--rw", "read", "--bs", "1M", "--size", "8M"],
    ));
    let layout = [
        "plan",
        "layout",
        "R0/1",
        "--drive",
        "exos-x18-18tb",
        "--controller",
        "hba-9300-8i-md",
        "--against",
        "1",
        "--against",
        "2",
    ];
    let text = ok(&run_in(dir.path(), &layout));
    let random = text
        .lines()
        .find(|l| l.contains("1 / ") && l.contains("random read"))
        .unwrap_or_else(|| panic!("no random row: {text}"));
    assert!(random.contains("2 x QD 4"), "{random}");
    assert!(random.matches(" IOPS").count() >= 2, "{random}");
    let seq = text
        .lines()
        .find(|l| l.contains("2 / "))
        .unwrap_or_else(|| panic!("no sequential row: {text}"));
    assert!(seq.contains("MB/s") && !seq.contains("IOPS"), "{seq}");

    // The figures: measured IOPS is the run's own, predicted = bytes / size.
    let csv = ok(&run_in(
        dir.path(),
        &[&layout[..], &["--output-format", "csv"]].concat(),
    ));
    let rows = csv_rows(&csv);
    let r = &rows[1];
    assert_eq!(r[column(&rows, "random")], "true");
    assert_eq!(r[column(&rows, "jobs")], "2");
    assert_eq!(r[column(&rows, "iodepth")], "4");
    let iops: f64 = r[column(&rows, "measured_iops")].parse().unwrap();
    let bw: f64 = r[column(&rows, "measured_bytes_per_s")].parse().unwrap();
    assert!(
        iops > 0.0 && (bw / iops - 4096.0).abs() < 1.0,
        "{iops} {bw}"
    );
    let p_iops: f64 = r[column(&rows, "predicted_iops")].parse().unwrap();
    let p_bw: f64 = r[column(&rows, "predicted_bytes_per_s")].parse().unwrap();
    assert!((p_bw / p_iops - 4096.0).abs() < 1.0, "{p_iops} {p_bw}");
}

#[test]
fn hot_spares_take_enclosure_bays() {
    // 48 drives + 2 spares in 24-bay enclosures: 50 bays, three enclosures.
    let args = [
        "plan",
        "layout",
        "R60/12/48",
        "--enclosure",
        "jbod-2u24-sas12",
        "--hot-spares",
        "2",
    ];
    let text = ok(&storlab(&args));
    assert!(
        text.contains(
            "enclosures: 3 x jbod-2u24-sas12 (50 of 72 bays: 48 drives + 2 hot spare(s))"
        ),
        "{text}"
    );
    let v = json_of(&[&args[..], &["--json"]].concat());
    // The uplink part of the model counts the same enclosures.
    let part = v["performance"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| {
            p["name"]
                .as_str()
                .filter(|n| n.starts_with("enclosure uplink"))
        })
        .unwrap()
        .to_string();
    assert_eq!(part, "enclosure uplink sas12x4 (3 x jbod-2u24-sas12)");
    assert_eq!(v["enclosures"]["count"], 3);
    assert_eq!(v["enclosures"]["hot_spares"], 2);
    // Without spares the same design fills two.
    let v = json_of(&[
        "plan",
        "layout",
        "R60/12/48",
        "--enclosure",
        "jbod-2u24-sas12",
        "--json",
    ]);
    assert_eq!(v["enclosures"]["count"], 2);
}

#[test]
fn a_catalog_file_overrides_one_field_and_costs_name_their_currency() {
    let dir = tempfile::tempdir().unwrap();
    let f = crate::util::write(
        dir.path(),
        "prices.toml",
        "[override.drive.\"exos-x18-18tb\"]\nprice = 300\ncurrency = \"EUR\"\n\n\
         [override.controller.\"megaraid-9361-8i\"]\nprice = 900\ncurrency = \"EUR\"\nmax_read = \"1GB/s\"\n",
    );
    let f = f.to_str().unwrap();
    let v = json_of(&["plan", "layout", "R6/12", "--catalog", f, "--json"]);
    let hw = &v["design"]["hardware"];
    assert_eq!(hw["drive"]["price"], 300.0);
    // Every other field is the built-in entry's.
    assert_eq!(hw["drive"]["capacity_bytes"], 18_000_000_000_000u64);
    assert_eq!(hw["drive"]["mtbf_hours"], 2_500_000.0);
    assert_eq!(hw["controller"]["max_read_bytes_per_s"], 1e9);
    assert_eq!(hw["controller"]["host"]["name"], "pcie3x8");
    assert_eq!(v["cost"]["currency"], "EUR");
    assert_eq!(v["cost"]["total"], 12.0 * 300.0 + 900.0);
    let text = ok(&storlab(&["plan", "layout", "R6/12", "--catalog", f]));
    assert!(text.contains("cost: 4,500 EUR"), "{text}");
    // The listing says what the file changed.
    let list = ok(&storlab(&["plan", "catalog", "--catalog", f]));
    assert!(list.contains("price, currency set by"), "{list}");

    // A price with no currency is in the default one, and says so.
    let g = crate::util::write(
        dir.path(),
        "usd.toml",
        "[override.drive.\"exos-x18-18tb\"]\nprice = 300\n[override.controller.\"megaraid-9361-8i\"]\nprice = 900\n",
    );
    let v = json_of(&[
        "plan",
        "layout",
        "R6/12",
        "--catalog",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["cost"]["currency"], "USD");
    let s = json_of(&[
        "plan",
        "search",
        "--drives",
        "12",
        "--catalog",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(s["pareto"][0]["cost"]["currency"], "USD");

    // Two currencies are not added up.
    let h = crate::util::write(
        dir.path(),
        "mixed.toml",
        "[override.drive.\"exos-x18-18tb\"]\nprice = 300\ncurrency = \"EUR\"\n[override.controller.\"megaraid-9361-8i\"]\nprice = 900\n",
    );
    let o = storlab(&["plan", "layout", "R6/12", "--catalog", h.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("prices in different currencies (drive EUR, controller USD)"));
    assert!(!stdout(&o).contains("\ncost:"));

    // An override of an entry that does not exist is refused with the fix.
    let bad = crate::util::write(
        dir.path(),
        "bad.toml",
        "[override.drive.\"exos-x18-18t\"]\nprice = 300\n",
    );
    let o = storlab(&[
        "plan",
        "layout",
        "R6/12",
        "--catalog",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml:1:1") && e.contains("did you mean 'exos-x18-18tb'"),
        "{e}"
    );
    // And a field the entry cannot have is named.
    let bad = crate::util::write(
        dir.path(),
        "bad2.toml",
        "[override.drive.\"exos-x18-18tb\"]\nprise = 300\n",
    );
    let o = storlab(&[
        "plan",
        "layout",
        "R6/12",
        "--catalog",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("prise"), "{}", stderr(&o));
}

#[test]
fn the_catalog_has_current_drives_with_their_sources() {
    let v = json_of(&["plan", "catalog", "--json"]);
    let drives = v["drives"].as_array().unwrap();
    for (name, kind) in [
        ("exos-x24-24tb", "hdd"),
        ("exos-x20-20tb", "hdd"),
        ("d5-p5336-61.44tb", "ssd"),
        ("pm9a3-7.68tb", "ssd"),
    ] {
        let d = drives
            .iter()
            .find(|d| d["entry"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in the catalog"));
        assert_eq!(d["entry"]["kind"], kind);
        let source = d["entry"]["source"].as_str().unwrap();
        assert!(
            source.contains("data sheet") || source.contains("specifications"),
            "{source}"
        );
        assert!(d["resolved"].is_object(), "{name} does not resolve");
    }
    // QLC: reads far ahead of writes, as its data sheet says.
    let q = drives
        .iter()
        .find(|d| d["entry"]["name"] == "d5-p5336-61.44tb")
        .unwrap();
    assert_eq!(q["entry"]["read_iops"], 1_005_000.0);
    assert_eq!(q["entry"]["write_iops"], 38_000.0);
    let x24 = drives
        .iter()
        .find(|d| d["entry"]["name"] == "exos-x24-24tb")
        .unwrap();
    assert_eq!(x24["resolved"]["capacity_bytes"], 24_000_000_000_000u64);
    assert_eq!(x24["resolved"]["seq_outer_bytes_per_s"], 285e6);
    ok(&storlab(&[
        "plan",
        "layout",
        "R6/12",
        "--drive",
        "exos-x24-24tb",
    ]));
}

#[test]
fn search_prunes_trivial_differences_and_says_ties() {
    // R60/9/45 is ahead of R60/8/48 only on throughput, by 1.6 %: a
    // trivial difference, left out and counted.
    let args = [
        "plan",
        "search",
        "--drives",
        "24..48",
        "--min-usable",
        "300TB",
    ];
    let v = json_of(&[&args[..], &["--json"]].concat());
    let layouts: Vec<&str> = v["pareto"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["layout"].as_str().unwrap())
        .collect();
    assert!(
        layouts.iter().any(|l| l.starts_with("R60/8/48")),
        "{layouts:?}"
    );
    assert!(
        !layouts.iter().any(|l| l.starts_with("R60/9/45")),
        "{layouts:?}"
    );
    assert!(v["pruned_trivial"].as_u64().unwrap() > 0);
    let text = ok(&storlab(&args));
    assert!(text.contains("only trivially"), "{text}");

    // Controller striping and LVM over the same groups tie: one row that
    // names the others.
    let args = [
        "plan",
        "search",
        "--drives",
        "24",
        "--levels",
        "r6",
        "--spans",
        "12",
        "--max-controllers",
        "2",
    ];
    let v = json_of(&[&args[..], &["--json"]].concat());
    let front = v["pareto"].as_array().unwrap();
    assert_eq!(front.len(), 1, "{front:?}");
    let ties: Vec<&str> = front[0]["ties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        ties.iter().any(|t| t.starts_with("lvm(2*R6/12")),
        "{ties:?}"
    );
    let text = ok(&storlab(&args));
    assert!(text.contains("ties with lvm(2*R6/12"), "{text}");
}

#[test]
fn a_design_short_of_cores_is_a_verdict_with_exit_one_only_under_check() {
    let args = [
        "plan",
        "layout",
        "R6/8",
        "--drive",
        "wd-red-4tb",
        "--cores",
        "1000",
    ];
    let o = storlab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("verdict: SHORT of 1000 cores x 75 MB/s"),
        "{}",
        stdout(&o)
    );
    let v = json_of(&[&args[..], &["--json"]].concat());
    assert_eq!(v["sizing"]["meets"], false);
    assert!(
        v["sizing"]["verdict"]
            .as_str()
            .unwrap()
            .starts_with("SHORT")
    );
    let o = storlab(&[&args[..], &["--check"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A design that meets it passes the check.
    let o = storlab(&[
        "plan",
        "layout",
        "R6/8",
        "--drive",
        "wd-red-4tb",
        "--cores",
        "2",
        "--check",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("verdict: meets"));
    // A lower figure per core is the one held against the design.
    let slow = [&args[..5], &["--cores", "2", "--mbps-per-core", "25"]].concat();
    let o = storlab(&slow);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("x 25 MB/s"), "{}", stdout(&o));
    // --check without --cores has nothing to check: refused by clap.
    let o = storlab(&["plan", "layout", "R6/8", "--check"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn calibrate_prints_markdown_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = String::from(
        "[global]\nsize = \"16M\"\ncache = \"direct\"\niodepth = 1\nruntime = \"150ms\"\ntime_based = true\n",
    );
    for bs in ["4k", "64k", "1M"] {
        job.push_str(&format!(
            "\n[[phase]]\nname = \"read-{bs}\"\nrw = \"read\"\nbs = \"{bs}\"\n"
        ));
    }
    let job = crate::util::write(dir.path(), "sweep.toml", &job);
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let o = run_in(
        dir.path(),
        &["bench", "data", "--job", job.to_str().unwrap()],
    );
    if !o.status.success() && stderr(&o).contains("O_DIRECT") {
        crate::util::skip("calibrate_prints_markdown_and_csv", "no O_DIRECT here");
        return;
    }
    ok(&o);
    let base = [
        "plan",
        "calibrate",
        "1",
        "--as",
        "d",
        "--like",
        "exos-x18-18tb",
    ];
    let csv = ok(&run_in(
        dir.path(),
        &[&base[..], &["--output", "a.toml", "--output-format", "csv"]].concat(),
    ));
    let rows = csv_rows(&csv);
    assert_eq!(
        rows[0],
        ["phase", "measured_iops", "fitted_iops", "error", "role"]
    );
    assert_eq!(rows.len(), 4, "{csv}");
    assert!(
        rows[1..].iter().all(|r| r[1].parse::<f64>().unwrap() > 0.0),
        "{csv}"
    );
    let md = ok(&run_in(
        dir.path(),
        &[&base[..], &["--output", "b.toml", "--output-format", "md"]].concat(),
    ));
    assert!(
        md.contains("| fitted | read | write |\n| --- | --- | --- |"),
        "{md}"
    );
    assert!(md.contains("wrote b.toml"), "{md}");
}
