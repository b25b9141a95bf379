//! Golden files: the full report (geometry, reliability, performance,
//! findings) of a set of layouts on built-in catalog hardware, compared with
//! `tests/golden/<name>.json`. Numbers compare with a relative tolerance of
//! 1e-9 so a last-digit difference in libm does not fail the test.
//!
//! After a deliberate model change, regenerate and review the diff:
//!
//! ```sh
//! STORLAB_UPDATE_GOLDEN=1 cargo test -p storlab-plan --test golden
//! # (the one variable of every golden file: storlab_testkit::golden)
//! git diff crates/plan/tests/golden
//! ```

use serde_json::Value;
use std::path::PathBuf;
use storlab_plan::catalog::Catalog;
use storlab_plan::design::Sizing;
use storlab_plan::hardware::Hardware;
use storlab_plan::layout::{FsStripe, Layout};
use storlab_plan::perf::Workload;
use storlab_plan::{Design, evaluate};
use storlab_testkit::golden;
use storlab_types::Pattern;

struct Case {
    name: &'static str,
    layout: &'static str,
    drive: &'static str,
    controller: &'static str,
    controllers: u32,
    enclosure: Option<&'static str>,
    hot_spares: u32,
    fs: Option<FsStripe>,
}

const fn case(name: &'static str, layout: &'static str, drive: &'static str) -> Case {
    Case {
        name,
        layout,
        drive,
        controller: "megaraid-9361-8i",
        controllers: 1,
        enclosure: None,
        hot_spares: 0,
        fs: None,
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            enclosure: Some("jbod-4u60-sas12"),
            ..case("r60-12-48-exos-x18", "R60/12/48", "exos-x18-18tb")
        },
        Case {
            hot_spares: 1,
            fs: Some(FsStripe {
                su_bytes: 256 << 10,
                sw: 10,
            }),
            ..case("r6-12-constellation", "R6/12", "constellation-es3-4tb")
        },
        case("r5-6-exos-x18", "R5/6", "exos-x18-18tb"),
        case(
            "r50-6-24-ultrastar",
            "R50/6/24,chunk=64k",
            "ultrastar-7k4000-4tb",
        ),
        case("r10-2-8-cheetah", "R10/2/8", "cheetah-15k7-600gb"),
        case("r0-8-dc-s3700", "R0/8", "dc-s3700-800gb"),
        case("r1-2-savvio", "R1/2", "savvio-15k3-300gb"),
        case(
            "lvm-4xr5-6-misaligned",
            "lvm(4*R5/6, stripe=1M)",
            "exos-x10-10tb",
        ),
        Case {
            controllers: 2,
            enclosure: Some("jbod-2u24-sas12"),
            ..case(
                "lvm-4xr6-10-two-controllers",
                "lvm(4*R6/10, stripe=2M)",
                "ultrastar-hc550-18tb",
            )
        },
        Case {
            controller: "md-nvme-direct",
            ..case("r5-4-nvme-md", "R5/4,chunk=512k", "pm1733-3.84tb")
        },
        Case {
            controller: "megaraid-320-2x",
            enclosure: Some("scsi-14-u320"),
            ..case(
                "r5-14-u320-scsi",
                "R50/7/14,chunk=64k",
                "cheetah-15k7-600gb",
            )
        },
        Case {
            controller: "hba-9300-8i-md",
            ..case("r6-10-wd-red-md", "R6/10", "wd-red-4tb")
        },
    ]
}

fn design(cat: &Catalog, c: &Case) -> Design {
    let layout: Layout = c.layout.parse().unwrap();
    Design {
        layout,
        hardware: Hardware {
            drive: cat.drive(c.drive).unwrap(),
            controller: cat.controller(c.controller).unwrap(),
            controllers: c.controllers,
            enclosure: c.enclosure.map(|e| cat.enclosure(e).unwrap()),
            host_bytes_per_s: None,
        },
        hot_spares: c.hot_spares,
        replace_delay_hours: 24.0,
        mission_hours: 5.0 * 8766.0,
        fleet: 10,
        workloads: Workload::standard(
            1 << 20,
            4096,
            Workload::new(
                Pattern::Mix {
                    read_pct: 50.0,
                    random: false,
                },
                8192,
            ),
        ),
        fs_stripe: c.fs,
        sizing: Some(Sizing {
            cores: 32,
            mb_per_s_per_core: 75.0,
        }),
    }
}

fn close(a: &Value, b: &Value, path: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if x == y || ((x - y) / x.abs().max(y.abs())).abs() < 1e-9 {
                Ok(())
            } else {
                Err(format!("{path}: {x} != {y}"))
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (p, q))| close(p, q, &format!("{path}[{i}]"))),
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            x.iter().try_for_each(|(k, v)| {
                let w = y.get(k).ok_or_else(|| format!("{path}.{k}: missing"))?;
                close(v, w, &format!("{path}.{k}"))
            })
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{path}: {a} != {b}")),
    }
}

#[test]
fn golden_reports() {
    let cat = Catalog::builtin();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut failures = Vec::new();
    for c in cases() {
        let report = evaluate(&design(&cat, &c)).unwrap();
        let got = serde_json::to_value(&report).unwrap();
        let path = dir.join(format!("{}.json", c.name));
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        let same = |want: &str, _: &str| {
            let want: Value = serde_json::from_str(want).map_err(|e| e.to_string())?;
            close(&got, &want, c.name)
        };
        if let Err(e) = golden::check_with(&path, &text, same) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}
