//! The chart registry seen from the CLI: a chart that cannot be drawn says
//! why and names a command that makes the runs it needs, and that command
//! works.

use crate::util::{self, ok, run_in, stderr};

/// A database in `dir` holding one imported fio run (id 1).
fn one_run(dir: &std::path::Path) {
    let fio = util::store_fixture("fio-3.33-randread.json");
    ok(&run_in(dir, &["import", fio.to_str().unwrap()]));
}

/// `report --chart clients` said "no chart 'clients'" though `clients` is
/// a chart: now it says why (no multi-client runs) and what to run.
#[test]
fn report_chart_clients_says_why_and_what_to_run() {
    let d = tempfile::tempdir().unwrap();
    one_run(d.path());
    let svg = d.path().join("clients.svg");
    let o = run_in(
        d.path(),
        &[
            "report",
            "1",
            "--chart",
            "clients",
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("no chart 'clients'"), "{e}");
    assert!(
        e.contains("chart 'clients' cannot be drawn")
            && e.contains("no phase was measured by several clients")
            && e.contains("mpirun -np 4 storlab bench TARGET --clients 1,2,4"),
        "{e}"
    );
    assert!(!svg.exists(), "nothing written");
}

/// The hint for a missing scaling chart named `storlab sweep iodepth=...`,
/// which sweep reads as a target path. The command it names now runs as
/// given (here with the null engine on a tiny file, not saved) and sweeps
/// the four queue depths.
#[test]
fn the_scaling_hint_is_a_sweep_that_runs() {
    let d = tempfile::tempdir().unwrap();
    one_run(d.path());
    let o = run_in(
        d.path(),
        &[
            "report",
            "1",
            "--output-format",
            "svg",
            "--chart",
            "vs-iodepth",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    let hint = e
        .split("e.g. ")
        .nth(1)
        .and_then(|h| h.split(';').next())
        .unwrap_or_else(|| panic!("no example command: {e}"));
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let mut argv: Vec<String> = hint
        .split_whitespace()
        .map(|w| {
            if w == "TARGET" {
                target.to_string_lossy().into_owned()
            } else {
                w.to_string()
            }
        })
        .collect();
    assert_eq!(argv.first().map(String::as_str), Some("storlab"), "{hint}");
    argv.remove(0);
    for extra in [
        "--engine",
        "null",
        "--size",
        "64k",
        "--runtime",
        "10ms",
        "--no-save",
    ] {
        argv.push(extra.into());
    }
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = ok(&run_in(d.path(), &args));
    assert!(out.contains("4 points, 0 failed"), "`{hint}`: {out}");
}

/// A remedy that tags runs with a design names one `storlab plan layout`
/// accepts (the example `R6/10/20` it was copied from is refused: a RAID 6
/// group of 10 is not 20 drives).
#[test]
fn remedy_designs_are_layouts_plan_accepts() {
    let mut seen = 0;
    for r in storlab_report::Remedy::all() {
        let argv = r.argv();
        let Some(i) = argv.iter().position(|w| w == "--design") else {
            continue;
        };
        let design = &argv[i + 1];
        let mut args = vec!["plan", "layout"];
        args.extend(design.split_whitespace());
        let o = util::storlab(&args);
        assert!(o.status.success(), "`{r}`: {}", stderr(&o));
        seen += 1;
    }
    assert!(seen > 0, "no remedy names a design");
}
