//! The model against published measurements of real arrays: each row is a
//! configuration from a cited source (docs/MODEL.md §7 lists the sources and
//! every assumption made to model the row), its measured throughput, and the
//! model's prediction from the built-in catalog. The test prints the table,
//! checks the mean absolute error against what docs/MODEL.md reports, and
//! checks that no measured ranking is reversed.

use storlab_plan::against::{mean_abs, relative_error};
use storlab_plan::catalog::Catalog;
use storlab_plan::hardware::Hardware;
use storlab_plan::layout::Layout;
use storlab_plan::perf::{Workload, predict};
use storlab_types::Pattern;

struct Row {
    /// Rows of one study are ranked against each other (the ranking check
    /// compares layouts measured on the same hardware by the same author).
    study: &'static str,
    source: &'static str,
    layout: &'static str,
    drive: &'static str,
    controller: &'static str,
    host_link: Option<&'static str>,
    /// Replaces the catalog controller's drive-side links.
    backend: Option<&'static str>,
    /// Controllers the groups are striped over.
    controllers: u32,
    workload: Workload,
    measured_mb_s: f64,
}

// long-function: a data table, one sourced measurement per row.
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
            study: "perc6",
            source: "Dell PERC 6 performance analysis (2008)",
            layout: "R0/30",
            drive: "cheetah-15k5-300gb",
            controller: "perc-6e",
            host_link: None,
            backend: None,
            controllers: 1,
            workload: seq_read(1 << 20, 64),
            measured_mb_s: 1484.0,
        },
        // techhead.co.uk PS4000XV review, part 4: 16 x 15K SAS, two GbE
        // ports load balanced, 64 outstanding I/Os, sequential read.
        Row {
            study: "ps4000",
            source: "EqualLogic PS4000XV review, RAID 50",
            layout: "R50/7/14",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            backend: None,
            controllers: 1,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 210.0,
        },
        Row {
            study: "ps4000",
            source: "EqualLogic PS4000XV review, RAID 5",
            layout: "R5/15",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            backend: None,
            controllers: 1,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 170.0,
        },
        Row {
            study: "ps4000",
            source: "EqualLogic PS4000XV review, RAID 6",
            layout: "R6/15",
            drive: "cheetah-15k5-300gb",
            controller: "equallogic-ps4000",
            host_link: None,
            backend: None,
            controllers: 1,
            workload: seq_read(256 << 10, 64),
            measured_mb_s: 170.0,
        },
        // serverfault.com/questions/817041: software iSCSI target over GbE;
        // dd through the page cache; reads stayed at 95-99 MB/s in total
        // whatever the bonding (one link's worth), writes over two links
        // exceeded 200 MB/s. The controller behind the target is not named.
        Row {
            study: "sf817041",
            source: "serverfault 817041, iSCSI read, GbE",
            layout: "R5/6",
            drive: "wd-red-4tb",
            controller: "megaraid-9260-8i",
            host_link: Some("1gbe-iscsi"),
            backend: None,
            controllers: 1,
            workload: buffered(Pattern::SeqRead),
            measured_mb_s: 97.0,
        },
        Row {
            study: "sf817041",
            source: "serverfault 817041, iSCSI write, 2 x GbE",
            layout: "R5/6",
            drive: "wd-red-4tb",
            controller: "megaraid-9260-8i",
            host_link: Some("1gbe-iscsix2"),
            backend: None,
            controllers: 1,
            workload: buffered(Pattern::SeqWrite),
            measured_mb_s: 200.0,
        },
        // Tom's Hardware, "Almost 20 TB (Or $50,000) Of SSD DC S3700 Drives,
        // Benchmarked" (2013): 4-24 x DC S3700 800 GB in Linux md RAID 0,
        // 64 KB chunks, on Intel RMSKB080/RMSJB080 cards ("mostly rebadged
        // LSI 9207-8i HBAs": SAS2308, 8 x 6Gb/s SAS, PCIe 3.0 x8) passing the
        // drives through; 32 threads, queue depth swept to 32 per thread (the
        // peak is taken at 32 x 32; assumption), no OS caching. The number
        // of cards is not given: 8 drives per card, the groups of 8 striped
        // over the cards (assumptions).
        // "almost 2 GB/s from the four-drive array"
        s3700(
            "Tom's HW DC S3700 x4 md RAID 0, 128 KB seq read",
            "R0/4,chunk=64k",
            1,
            Pattern::SeqRead,
            128 << 10,
            2000.0,
        ),
        // "more than 4.2 GB/s using 24"
        s3700(
            "Tom's HW DC S3700 x24 md RAID 0, 128 KB seq read",
            "lvm(3*R0/8, chunk=64k, stripe=64k)",
            3,
            Pattern::SeqRead,
            128 << 10,
            4200.0,
        ),
        // "The 16x and 8x configurations group together around 3 GB/s"
        s3700(
            "Tom's HW DC S3700 x8 md RAID 0, 128 KB seq write",
            "R0/8,chunk=64k",
            1,
            Pattern::SeqWrite,
            128 << 10,
            3000.0,
        ),
        s3700(
            "Tom's HW DC S3700 x16 md RAID 0, 128 KB seq write",
            "lvm(2*R0/8, chunk=64k, stripe=64k)",
            2,
            Pattern::SeqWrite,
            128 << 10,
            3000.0,
        ),
        // "The 24x array ... falling just short at 4.8 GB/s"
        s3700(
            "Tom's HW DC S3700 x24 md RAID 0, 128 KB seq write",
            "lvm(3*R0/8, chunk=64k, stripe=64k)",
            3,
            Pattern::SeqWrite,
            128 << 10,
            4800.0,
        ),
        // "the gulf between 8 x SSD DC S3700s and 16 drives is ... almost 100%, or
        // 400,000 IOPS": 8 drives about 400,000 IOPS, 16 about 800,000 (derived)
        s3700(
            "Tom's HW DC S3700 x8 md RAID 0, 4 KB random read",
            "R0/8,chunk=64k",
            1,
            Pattern::RandRead,
            4096,
            400_000.0 * 4096.0 / 1e6,
        ),
        s3700(
            "Tom's HW DC S3700 x16 md RAID 0, 4 KB random read",
            "lvm(2*R0/8, chunk=64k, stripe=64k)",
            2,
            Pattern::RandRead,
            4096,
            800_000.0 * 4096.0 / 1e6,
        ),
        // "getting to 1,010,755 IOPS with a 24-drive RAID 0 array"
        s3700(
            "Tom's HW DC S3700 x24 md RAID 0, 4 KB random read",
            "lvm(3*R0/8, chunk=64k, stripe=64k)",
            3,
            Pattern::RandRead,
            4096,
            1_010_755.0 * 4096.0 / 1e6,
        ),
    ]
}

/// A row of the Tom's Hardware DC S3700 md RAID 0 study (see rows()): the
/// drives on 6Gb/s SAS HBAs in PCIe 3.0 x8 slots, 32 threads x QD 32.
fn s3700(
    source: &'static str,
    layout: &'static str,
    controllers: u32,
    pattern: Pattern,
    request_bytes: u64,
    measured_mb_s: f64,
) -> Row {
    Row {
        study: "s3700",
        source,
        layout,
        drive: "dc-s3700-800gb",
        controller: "hba-9300-8i-md",
        host_link: None,
        backend: Some("sas6x8"),
        controllers,
        workload: Workload::new(pattern, request_bytes).with_concurrency(32, 32),
        measured_mb_s,
    }
}

fn predict_row(cat: &Catalog, r: &Row) -> (f64, String) {
    let mut controller = cat.controller(r.controller).unwrap();
    if let Some(h) = r.host_link {
        controller.host = cat.link(h).unwrap();
    }
    if let Some(b) = r.backend {
        controller.backend = cat.link(b).unwrap();
    }
    let hw = Hardware {
        drive: cat.drive(r.drive).unwrap(),
        controller,
        controllers: r.controllers,
        enclosure: None,
        host_bytes_per_s: None,
    };
    let layout: Layout = r.layout.parse().unwrap();
    let p = predict(&layout, &hw, &r.workload).unwrap();
    (p.bytes_per_s / 1e6, p.binding)
}

/// How docs/MODEL.md §7 names each study where it gives the study's MAE.
const STUDY_LABELS: [(&str, &str); 4] = [
    ("perc6", "PERC 6"),
    ("ps4000", "PS4000"),
    ("sf817041", "serverfault"),
    ("s3700", "DC S3700 md arrays"),
];

fn mae_pct(errors: &[f64]) -> f64 {
    mean_abs(errors.iter().copied()).expect("rows").0 * 100.0
}

/// docs/MODEL.md with every run of white space made one space, so that a
/// figure the test computes can be looked up across line breaks.
fn model_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/MODEL.md");
    let text = std::fs::read_to_string(path).expect("read docs/MODEL.md");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn model_against_published_measurements() {
    let cat = Catalog::builtin();
    let mut errors = Vec::new();
    let mut preds: Vec<(String, f64, f64)> = Vec::new();
    println!("| source | layout | measured MB/s | predicted MB/s | error | binds |");
    for r in rows() {
        let (p, binding) = predict_row(&cat, &r);
        let e = relative_error(p, r.measured_mb_s).expect("a measured figure");
        println!(
            "| {} | {} | {:.0} | {:.0} | {:+.1}% | {} |",
            r.source,
            r.layout,
            r.measured_mb_s,
            p,
            e * 100.0,
            binding
        );
        errors.push((r.study, e.abs()));
        // Layouts are ranked under one workload of one study.
        let key = format!("{} {}", r.study, r.workload.label());
        preds.push((key, r.measured_mb_s, p));
    }
    // The figures docs/MODEL.md §7 gives are the ones computed here.
    let doc = model_md();
    let all: Vec<f64> = errors.iter().map(|e| e.1).collect();
    let mae = mae_pct(&all);
    println!("mean absolute error {mae:.1}% over {} rows", all.len());
    let overall = format!("Mean absolute error: {mae:.1} % over {} rows", all.len());
    assert!(
        doc.contains(&overall),
        "docs/MODEL.md should say '{overall}'"
    );
    let studies: std::collections::BTreeSet<&str> = errors.iter().map(|e| e.0).collect();
    for study in studies {
        let label = STUDY_LABELS
            .iter()
            .find(|l| l.0 == study)
            .unwrap_or_else(|| panic!("study {study} has no label in STUDY_LABELS"))
            .1;
        let of: Vec<f64> = errors
            .iter()
            .filter(|e| e.0 == study)
            .map(|e| e.1)
            .collect();
        let m = mae_pct(&of);
        println!("  {study}: {m:.1}% over {} rows", of.len());
        let said = format!("{label} {m:.1} %");
        assert!(doc.contains(&said), "docs/MODEL.md should say '{said}'");
    }
    // The goal (a MAE of at most 15 %) is reported as met or not met as it is.
    let goal = if mae <= 15.0 {
        "(goal: at most 15 %)"
    } else {
        "(goal: at most 15 %; **not met**)"
    };
    assert!(doc.contains(goal), "docs/MODEL.md should say '{goal}'");
    // Ranking of layouts: where two measurements of one workload in one
    // study differ by more than 10 %, the model must not put them the other
    // way round (a tie is allowed).
    for (i, a) in preds.iter().enumerate() {
        for b in preds[i + 1..].iter().filter(|b| b.0 == a.0) {
            for (hi, lo) in [(a, b), (b, a)] {
                if hi.1 > 1.1 * lo.1 {
                    assert!(hi.2 >= lo.2 * 0.98, "ranking reversed: {hi:?} vs {lo:?}");
                }
            }
        }
    }
}

/// `plan layout` warns of the host on SSD arrays with the figures this
/// validation found (design::SSD_HOST_NOTE): the md SSD arrays of 8 drives
/// and more measured 1.2-2.9 times below the model.
#[test]
fn ssd_host_note_states_what_the_validation_found() {
    let cat = Catalog::builtin();
    let ratios: Vec<f64> = rows()
        .iter()
        .filter(|r| r.study == "s3700")
        .filter(|r| {
            let l: Layout = r.layout.parse().unwrap();
            l.geometry(cat.drive(r.drive).unwrap().capacity_bytes)
                .unwrap()
                .drives
                >= 8
        })
        .map(|r| predict_row(&cat, r).0 / r.measured_mb_s)
        .collect();
    let lo = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().cloned().fold(0.0, f64::max);
    let range = format!("{lo:.1}-{hi:.1} times below");
    assert!(
        storlab_plan::design::SSD_HOST_NOTE.contains(&range),
        "the note should say {range}: {}",
        storlab_plan::design::SSD_HOST_NOTE
    );
    assert!(storlab_plan::design::SSD_HOST_NOTE.contains("8-24 SATA SSDs"));
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
