//! A design string (`bench --design`, tag `planned_as`) is one domain
//! object, `storlab_plan::DesignSpec`: the store keeps its canonical form,
//! and the report predicts from it what `plan layout` predicts.

use serde_json::Value;

/// Flags in any order and `--flag=value` are stored in the one canonical
/// order as `--flag value`; the report reads the stored form back.
#[test]
fn a_design_is_stored_in_its_canonical_form_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::util::ok(&crate::util::run_in(
        d,
        &[
            "bench",
            ".",
            "--engine",
            "null",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--size",
            "1M",
            "--design",
            "R0/1 --qd=4 --controller hba-9300-8i-md --streams 1 --drive=exos-x18-18tb",
        ],
    ));
    let runs = crate::util::ok(&crate::util::run_in(d, &["runs", "--json"]));
    let v: Value = serde_json::from_str(&runs).unwrap();
    assert_eq!(
        v[0]["tags"]["planned_as"],
        "R0/1 --drive exos-x18-18tb --controller hba-9300-8i-md --streams 1 --qd 4",
        "{v}"
    );
    let o = crate::util::run_in(d, &["report", "latest", "-o", "r.html"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(
        html.contains("id=\"predicted\""),
        "no prediction in the report"
    );
}

/// A design that does not read as `plan layout`'s arguments is refused
/// with exit 2, naming the design and the flag, before anything is written.
#[test]
fn a_design_with_a_repeated_flag_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = crate::util::run_in(
        dir.path(),
        &[
            "bench",
            ".",
            "--design",
            "R0/1 --drive exos-x18-18tb --drive p4510-4tb",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("design 'R0/1 --drive exos-x18-18tb --drive p4510-4tb'")
            && err.contains("'--drive' cannot be used multiple times"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
