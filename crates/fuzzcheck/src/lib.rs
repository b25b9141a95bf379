//! The checks of storlab's fuzz targets, one function per input format,
//! each `fn(&[u8])`: it feeds the bytes to one parser of user input and
//! panics when a property fails (a panic inside the parser counts too).
//! Both drivers call these same functions:
//!
//! * the cargo-fuzz targets in `fuzz/fuzz_targets/` (nightly, coverage
//!   guided, run by hand: docs/SAFETY.md §6);
//! * the stable pass in `tests/pass.rs` (in `cargo test`, so in CI): each
//!   target's seed corpus `fuzz/corpus/<target>/` plus seeded random
//!   mutations, bounded to a few seconds per target
//!   (`STORLAB_FUZZ_ITERS=1000000` for a longer run).
//!
//! Text formats take the bytes as the CLI does: files read as text that
//! must be UTF-8 skip other input (the CLI refuses it before parsing); fio
//! JSON is read lossily, as `storlab import` reads it.
#![forbid(unsafe_code)]

use std::path::Path;
use std::sync::OnceLock;

/// A target: its name (the corpus directory and cargo-fuzz bin) and check.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `cargo fuzz list` shows them.
pub const TARGETS: &[Target] = &[
    ("units", units),
    ("select", select),
    ("fio_json", fio_json),
    ("job_file", job_file),
    ("fio_job", fio_job),
    ("layout", layout),
    ("replay", replay),
    ("campaign", campaign),
    ("sim_scenario", sim_scenario),
    ("plan_catalog", plan_catalog),
    ("design", design),
    ("vary", vary),
];

/// The built-in plan catalog, parsed once (it is 25 kB of TOML; parsing it
/// for every input would leave little time for the input).
fn plan_builtin() -> storlab_plan::catalog::Catalog {
    static CAT: OnceLock<storlab_plan::catalog::Catalog> = OnceLock::new();
    CAT.get_or_init(storlab_plan::catalog::Catalog::builtin)
        .clone()
}

/// The built-in sim catalog, parsed once.
fn sim_builtin() -> &'static storlab_sim::SimCatalog {
    static CAT: OnceLock<storlab_sim::SimCatalog> = OnceLock::new();
    CAT.get_or_init(storlab_sim::SimCatalog::builtin)
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Sizes, durations, rates and percentages as typed on the command line:
/// a parsed size is exact (printing and parsing it again agrees), a
/// percentage is within 0..=100, a rate and a duration are finite.
pub fn units(data: &[u8]) {
    use storlab_types::{parse_duration, parse_percent, parse_rate, parse_size};
    let Some(t) = text(data) else { return };
    if let Ok(v) = parse_size(t) {
        assert_eq!(parse_size(&v.to_string()).ok(), Some(v), "size {t:?}");
    }
    let _ = parse_duration(t);
    if let Ok(r) = parse_rate(t) {
        assert!(r.is_finite() && r >= 0.0, "rate {t:?} = {r}");
    }
    if let Ok(p) = parse_percent(t) {
        assert!((0.0..=100.0).contains(&p), "percent {t:?} = {p}");
    }
}

/// Run selectors (`12`, `latest~2`, `tag:a=1,b=2`) and `--tag KEY=VALUE`:
/// what parses prints back to something that parses the same.
pub fn select(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(sel) = storlab_store::RunSelector::parse(t) {
        let again = storlab_store::RunSelector::parse(&sel.to_string()).ok();
        assert_eq!(again, Some(sel), "selector {t:?}");
    }
    if let Ok((k, _)) = storlab_store::parse_tag(t) {
        assert!(!k.is_empty(), "tag {t:?} has an empty key");
    }
}

/// fio's JSON output as `storlab import` reads it (lossily decoded): an
/// import or a refusal; an import serialises (the store saves it as JSON)
/// and its figures are finite.
pub fn fio_json(data: &[u8]) {
    let t = String::from_utf8_lossy(data);
    if let Ok(imp) = storlab_fio::parse(&t, Some("fuzz-host")) {
        assert!(!imp.report.phases.is_empty(), "an import has phases");
        if let Err(e) = serde_json::to_string(&imp.report) {
            panic!("an imported report does not serialise: {e}");
        }
        for p in &imp.report.phases {
            for d in [&p.read, &p.write] {
                assert!(d.bw_bytes_per_s.is_finite() && d.iops.is_finite(), "{d:?}");
            }
        }
    }
}

/// TOML job files (`storlab bench --job FILE`), resolved into phases.
pub fn job_file(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let path = Path::new("fuzz.toml");
    if let Ok(job) = storlab_bench::JobFile::parse(t, path) {
        let _ = job.phases(t, path, &Default::default(), &Default::default());
    }
}

/// fio job files (`storlab bench --fio-job FILE.fio`), each phase resolved
/// as the run would resolve it.
pub fn fio_job(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(job) = storlab_bench::FioJobFile::parse(t, "fuzz.fio") {
        assert!(!job.phases.is_empty(), "a fio job file has jobs");
        for (i, p) in job.phases.iter().enumerate() {
            let _ = storlab_bench::resolve_phase(p, i);
        }
    }
}

/// RAID layout notation and its geometry. The first line is the drive
/// size in bytes (4 TB when it is not a number), the rest the notation:
/// what the notation prints parses back to the same layout, and usable
/// capacity never exceeds raw.
pub fn layout(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let (drive, notation) = match t.split_once('\n') {
        Some((n, rest)) => (n.trim().parse().unwrap_or(4_000_000_000_000), rest),
        None => (4_000_000_000_000, t),
    };
    if let Ok(l) = notation.parse::<storlab_plan::Layout>() {
        let printed = l.to_string();
        assert_eq!(
            printed.parse::<storlab_plan::Layout>().ok(),
            Some(l),
            "{notation:?} printed as {printed:?}"
        );
        if let Ok(g) = l.geometry(drive) {
            assert!(
                g.usable_bytes <= g.raw_bytes,
                "{notation:?} with {drive}: {g:?}"
            );
        }
    }
}

/// A design string (`bench --design`, tag `planned_as`): what parses has a
/// canonical form that parses back to the same design and is its own
/// canonical form; resolving it against the built-in catalog and
/// evaluating it returns an answer or an error, never a panic.
pub fn design(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let Ok(spec) = storlab_plan::DesignSpec::parse(t) else {
        return;
    };
    let canonical = spec.to_string();
    let back = storlab_plan::DesignSpec::parse(&canonical);
    assert_eq!(
        back.as_ref().ok(),
        Some(&spec),
        "{t:?} printed as {canonical:?}: {back:?}"
    );
    if let Ok(back) = back {
        assert_eq!(back.to_string(), canonical, "{t:?}");
    }
    if let Ok(d) = spec.design(&plan_builtin()) {
        let _ = storlab_plan::evaluate(&d);
    }
}

/// `storlab monitor --replay` files (diskstats snapshots): a file that
/// parses never yields a rate beyond the physical bound (`rates::check`:
/// 100 GB/s, 100 M requests or merges per second).
pub fn replay(data: &[u8]) {
    use storlab_monitor::rates::{MAX_BYTES_PER_S, MAX_IOS_PER_S};
    let Some(t) = text(data) else { return };
    let Ok(snaps) = storlab_monitor::replay::parse(t) else {
        return;
    };
    let mut m = storlab_monitor::Monitor::new(None);
    for s in snaps {
        // Times increase in a parsed file, so push never fails.
        let i = match m.push(s) {
            Ok(i) => i,
            Err(e) => panic!("a parsed replay file's snapshot was refused: {e}"),
        };
        for d in i.iter().flat_map(|i| i.devices.iter()) {
            let bytes = d.r_bytes_per_s + d.w_bytes_per_s + d.d_bytes_per_s;
            assert!(bytes <= MAX_BYTES_PER_S * (1.0 + 1e-9), "{d:?}");
            let ios = d.r_per_s + d.w_per_s + d.d_per_s + d.f_per_s;
            assert!(ios <= MAX_IOS_PER_S * (1.0 + 1e-9), "{d:?}");
            let merges = d.rrqm_per_s + d.wrqm_per_s + d.drqm_per_s;
            assert!(merges <= MAX_IOS_PER_S * (1.0 + 1e-9), "{d:?}");
        }
    }
}

/// Campaign files (`storlab campaign FILE`): parsed and expanded into
/// cells, never more than the limit.
pub fn campaign(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(file) = storlab_campaign::spec::CampaignFile::parse(t, Path::new("fuzz.toml")) {
        if let Ok(c) = file.expand("fuzz") {
            assert!(
                c.cells.len() <= storlab_campaign::spec::MAX_CELLS,
                "{} cells",
                c.cells.len()
            );
        }
    }
}

/// `storlab sim` scenario files, resolved against the built-in catalog.
pub fn sim_scenario(data: &[u8]) {
    let Some(t) = text(data) else { return };
    if let Ok(s) = storlab_sim::Scenario::parse("fuzz.toml", t) {
        let _ = s.resolve(sim_builtin());
    }
}

/// Plan catalog files (`--catalog FILE`): added to the built-in catalog,
/// every entry then resolves or is refused.
pub fn plan_catalog(data: &[u8]) {
    let Some(t) = text(data) else { return };
    let mut cat = plan_builtin();
    if cat.extend("fuzz.toml", t).is_ok() {
        for n in cat.drive_names() {
            let _ = cat.drive(n);
        }
        for n in cat.controller_names() {
            let _ = cat.controller(n);
        }
        for n in cat.enclosure_names() {
            let _ = cat.enclosure(n);
        }
        for n in cat.link_names() {
            let _ = cat.link(n);
        }
    }
}

/// `--vary` lists in the one range grammar (`storlab_types::range`): a
/// sweep's `OPTION=LIST` parses or is refused, never more than its point
/// limit, every value of a whole-number range rises from FROM and stays
/// at most TO; a list read as whole numbers with doubling bare ranges (as
/// `sim --vary` reads it) does the same.
pub fn vary(data: &[u8]) {
    use storlab_types::range::{Bare, MAX_VALUES, expand_list, parse_item, whole};
    let Some(t) = text(data) else { return };
    if let Ok(v) = storlab_bench::Vary::parse(t) {
        assert!(
            !v.values.is_empty() && v.values.len() <= storlab_bench::MAX_POINTS,
            "{t:?}"
        );
    }
    let list = t.split_once('=').map_or(t, |(_, l)| l);
    if let Ok(values) = expand_list(list, Bare::Doubling, whole, |v| v.to_string()) {
        assert!(values.len() <= MAX_VALUES, "{t:?}");
        // A single range item: its values rise within FROM..=TO.
        if !list.contains(',')
            && let Ok(storlab_types::range::Item::Range { from, to, .. }) = parse_item(list)
        {
            let (lo, hi): (u64, u64) = (from.parse().unwrap_or(0), to.parse().unwrap_or(0));
            let n: Vec<u64> = values.iter().filter_map(|v| v.parse().ok()).collect();
            assert_eq!(n.len(), values.len(), "{t:?}");
            assert_eq!(n.first(), Some(&lo), "{t:?}");
            assert!(n.windows(2).all(|w| w[0] < w[1]), "{t:?}: {n:?}");
            assert!(n.last().is_some_and(|l| *l <= hi), "{t:?}");
        }
    }
}
