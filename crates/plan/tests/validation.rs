//! The model against published measurements of real arrays: each row is a
//! configuration from a cited source (docs/MODEL.md §7 lists the sources and
//! every assumption made to model the row), its measured throughput, and the
//! model's prediction from the built-in catalog. The test prints the table,
//! checks the mean absolute error against what docs/MODEL.md reports, and
//! checks that no measured ranking is reversed.

use storlab_plan::catalog::Catalog;
use storlab_plan::hardware::Hardware;
use storlab_plan::layout::Layout;
use storlab_plan::perf::{Pattern, Workload, predict};

struct Row {
    source: &'static str,
    layout: &'static str,
    drive: &'static str,
    controller: &'static str,
    host_link: Option<&'static str>,
    workload: Workload,
    measured_mb_s: f64,
}

fn rows() -> Vec<Row> {
    let seq_read =
        |size: u64, qd: u32| Workload::new(Pattern::SeqRead, size).with_concurrency(1, qd);
    // dd through the page cache: one reader or writer, 1 MiB requests.
    let buffered = |p: Pattern| Workload {
        buffered: true,
        ..Workload::new(p, 1 << 20).with_concurrency(1, 1)
    };
    vec![
        // Dell PERC 6 performance analysis report: sequential reads over both
        // external channels, 1,484 MB/s.
        Row {
            source: "Dell PERC 6 performance analysis (2008)",
            layout: "R0/30",
            drive: "cheetah-15k5-300gb",
            controller: "perc-6e",
            host_link: None,
            workload: seq_read(1 << 20, 64),
            measured_mb_s: 1484.0,
        },
        // techhead.co.uk PS4000XV review, part 4: 16 x 15K SAS, two GbE
        // ports load balanced, 64 outstanding I/Os, sequential read.
        Row {
            source: "EqualLogic PS4000XV review, RAID 50",
            layout: "R50/7/14",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 210.0,
        },
        Row {
            source: "EqualLogic PS4000XV review, RAID 5",
            layout: "R5/15",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 170.0,
        },
        Row {
            source: "EqualLogic PS4000XV review, RAID 6",
            layout: "R6/15",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 170.0,
        },
        // serverfault.com/questions/817041: software iSCSI target over GbE;
        // dd through the page cache; reads stayed at 95-99 MB/s in total
        // whatever the bonding (one link's worth), writes over two links
        // exceeded 200 MB/s. The controller behind the target is not named.
        Row {
            source: "serverfault 817041, iSCSI read, GbE",
            layout: "R5/6",
            drive: "wd-red-4tb",
            controller: "megaraid-9260-8i",
            host_link: Some("1gbe-iscsi"),
            workload: buffered(Pattern::SeqRead),
            measured_mb_s: 97.0,
        },
        Row {
            source: "serverfault 817041, iSCSI write, 2 x GbE",
            layout: "R5/6",
            drive: "wd-red-4tb",
            controller: "megaraid-9260-8i",
            host_link: Some("1gbe-iscsix2"),
            workload: buffered(Pattern::SeqWrite),
            measured_mb_s: 200.0,
        },
    ]
}

fn predict_row(cat: &Catalog, r: &Row) -> (f64, String) {
    let mut controller = cat.controller(r.controller).unwrap();
    if let Some(h) = r.host_link {
        controller.host = cat.link(h).unwrap();
    }
    let hw = Hardware {
        drive: cat.drive(r.drive).unwrap(),
        controller,
        controllers: 1,
        enclosure: None,
        host_bytes_per_s: None,
    };
    let layout: Layout = r.layout.parse().unwrap();
    let p = predict(&layout, &hw, &r.workload).unwrap();
    (p.bytes_per_s / 1e6, p.binding)
}

/// The mean absolute error docs/MODEL.md §7 reports, in percent.
const DOCUMENTED_MAE_PCT: f64 = 13.3;

#[test]
fn model_against_published_measurements() {
    let cat = Catalog::builtin();
    let mut errors = Vec::new();
    let mut preds = Vec::new();
    println!("| source | layout | measured MB/s | predicted MB/s | error | binds |");
    for r in rows() {
        let (p, binding) = predict_row(&cat, &r);
        let e = (p - r.measured_mb_s) / r.measured_mb_s;
        println!(
            "| {} | {} | {:.0} | {:.0} | {:+.1}% | {} |",
            r.source,
            r.layout,
            r.measured_mb_s,
            p,
            e * 100.0,
            binding
        );
        errors.push(e.abs());
        preds.push((r.measured_mb_s, p));
    }
    let mae = errors.iter().sum::<f64>() / errors.len() as f64 * 100.0;
    println!("mean absolute error {mae:.1}% over {} rows", errors.len());
    assert!(
        (mae - DOCUMENTED_MAE_PCT).abs() < 0.05,
        "MAE {mae:.2}% differs from the {DOCUMENTED_MAE_PCT}% docs/MODEL.md reports; update both"
    );
    assert!(mae <= 15.0, "MAE {mae:.1}% is over the 15% goal");
    // Ranking: where two measurements differ by more than 10 %, the model
    // must not put them the other way round (a tie is allowed).
    for (i, a) in preds.iter().enumerate() {
        for b in &preds[i + 1..] {
            if a.0 > 1.1 * b.0 {
                assert!(a.1 >= b.1 * 0.98, "ranking reversed: {a:?} vs {b:?}");
            }
        }
    }
}

/// Predicted MB/s of 1 MiB sequential reads at queue depth 4 (one stream)
/// on `layout` of catalog drives behind one catalog controller.
fn seq_read_qd4(drive: &str, controller: &str, layout: &str) -> f64 {
    let cat = Catalog::builtin();
    let hw = Hardware {
        drive: cat.drive(drive).unwrap(),
        controller: cat.controller(controller).unwrap(),
        controllers: 1,
        enclosure: None,
        host_bytes_per_s: None,
    };
    let w = Workload::new(Pattern::SeqRead, 1 << 20).with_concurrency(1, 4);
    predict(&layout.parse::<Layout>().unwrap(), &hw, &w)
        .unwrap()
        .bytes_per_s
}

/// Published relations without absolute figures: xbitlabs' review of the
/// 3ware 9650SE (sequential read, IOMeter, queue depth 4): "RAID5 arrays
/// with N disks are as fast as RAID0 arrays with N-1 disks", and "the
/// two-disk RAID1 equals the single disk". The model must reproduce both
/// within 5 %.
#[test]
fn model_reproduces_published_relations() {
    let rate = |l: &str| seq_read_qd4("constellation-es3-4tb", "megaraid-9260-8i", l);
    for n in [3u32, 4, 6, 8] {
        let r5 = rate(&format!("R5/{n}"));
        let r0 = rate(&format!("R0/{}", n - 1));
        assert!(
            (r5 / r0 - 1.0).abs() < 0.05,
            "R5/{n} {r5} vs R0/{} {r0}",
            n - 1
        );
    }
    let r1 = rate("R1/2");
    let one = rate("R0/1");
    assert!((r1 / one - 1.0).abs() < 0.05, "R1/2 {r1} vs one disk {one}");
}

/// A book on PostgreSQL hardware benchmarking (the excerpt at
/// trantor.is/content/1ZKEauKGGGlT9rjs/...; by its content G. Smith,
/// *PostgreSQL High Performance*, Packt): bonnie++ ZCAV over one WD1600AAJS
/// (7,200 rpm SATA, on an Areca ARC-1210) and over three of them in a
/// Linux software RAID 0 read 37 -> 110 MB/s at the inner edge and
/// 77 -> 230 MB/s at the outer ("3 X 37 = 111 MB theoretical min; actual is
/// 110 MB; 3 X 77 = 231 MB theoretical max; actual is 230 MB"). The drive
/// is not in the catalog, so this is checked as a relation with a catalog
/// 7,200 rpm SATA drive behind Linux md: three striped drives stream three
/// times one drive, within 5 %.
#[test]
fn md_raid0_streams_n_times_one_drive() {
    // ZCAV reads sequentially in large blocks; 1 MiB at queue depth 4 is an
    // assumption (its read size and queue depth are not given).
    let rate = |l: &str| seq_read_qd4("ultrastar-7k4000-4tb", "hba-9300-8i-md", l);
    let ratio = rate("R0/3") / rate("R0/1");
    println!("R0/3 / one drive: model {ratio:.3}, published 110/37 = 2.97, 230/77 = 2.99");
    assert!(
        (ratio / 3.0 - 1.0).abs() < 0.05,
        "R0/3 is {ratio:.3} x one drive"
    );
}
