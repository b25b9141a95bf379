use super::*;
use crate::offsets::Rng;

const K: u64 = 1024;

fn params(zone: u64) -> ZbdParams {
    ZbdParams {
        zone_size: zone,
        zone_capacity: zone,
        max_open_zones: 0,
        job_max_open_zones: 0,
        reset_threshold: 0.0,
        reset_frequency: 0.0,
        read_beyond_wp: false,
        zone_resets: 0,
    }
}

fn job(reg: &Registry, p: &ZbdParams, rw: RwMode, bs: u64, region: (u64, u64)) -> ZbdJob {
    ZbdJob::new(reg, p, rw, bs, (0, 0), region).unwrap()
}

/// Random writes over 8 zones of 64k: each lands at its zone's write
/// pointer (the zone's bytes so far), so inside a zone the offsets go up
/// one block at a time until the zone is full and reset.
#[test]
fn every_write_lands_at_its_zones_write_pointer() {
    let reg = Registry::default();
    let p = params(64 * K);
    let mut j = job(&reg, &p, RwMode::RandWrite, 16 * K, (0, 512 * K));
    let mut rng = Rng::new(3);
    let mut wp = [0u64; 8];
    let mut resets = 0;
    for _ in 0..400 {
        let hint = rng.below(32) * 16 * K;
        let io = j.place(Dir::Write, 16 * K, hint, false).unwrap();
        let z = (hint / (64 * K)) as usize;
        if wp[z] == 64 * K {
            wp[z] = 0;
            resets += 1;
        }
        assert_eq!(io.offset, z as u64 * 64 * K + wp[z], "zone {z}");
        assert_eq!(io.len, 16 * K);
        wp[z] += 16 * K;
    }
    assert!(resets > 50, "{resets} resets");
    assert_eq!(reg.resets(), resets);
}

/// max_open_zones=2: never more than two zones partly written at once.
#[test]
fn at_most_max_open_zones_are_written_at_once() {
    let reg = Registry::default();
    let mut p = params(64 * K);
    p.max_open_zones = 2;
    let mut j = job(&reg, &p, RwMode::RandWrite, 16 * K, (0, 1024 * K));
    let mut rng = Rng::new(5);
    let mut used = [0u64; 16];
    let mut touched = std::collections::BTreeSet::new();
    for _ in 0..1000 {
        let hint = rng.below(64) * 16 * K;
        let io = j.place(Dir::Write, 16 * K, hint, false).unwrap();
        let z = (io.offset / (64 * K)) as usize;
        if used[z] == 64 * K {
            used[z] = 0;
        }
        assert_eq!(io.offset % (64 * K), used[z]);
        used[z] += 16 * K;
        touched.insert(z);
        let open = used.iter().filter(|&&u| u > 0 && u < 64 * K).count();
        assert!(open <= 2, "{open} zones open: {used:?}");
    }
    assert!(touched.len() > 8, "the writes still spread: {touched:?}");
    // Without the limit, many zones are open at once.
    let reg = Registry::default();
    let mut j = job(
        &reg,
        &params(64 * K),
        RwMode::RandWrite,
        16 * K,
        (0, 1024 * K),
    );
    let mut used = [0u64; 16];
    let mut most = 0;
    for _ in 0..100 {
        let io = j
            .place(Dir::Write, 16 * K, rng.below(64) * 16 * K, false)
            .unwrap();
        let z = (io.offset / (64 * K)) as usize;
        used[z] = (used[z] % (64 * K)) + 16 * K;
        most = most.max(used.iter().filter(|&&u| u > 0 && u < 64 * K).count());
    }
    assert!(most > 2, "{most}");
}

/// A trim resets its zone: the next write to it starts at the zone's
/// start; a random trim of an empty zone goes to one with data, and none
/// left ends the trims.
#[test]
fn a_trim_resets_its_zone() {
    let reg = Registry::default();
    let p = params(64 * K);
    let mut w = job(&reg, &p, RwMode::Write, 16 * K, (0, 256 * K));
    for _ in 0..6 {
        w.place(Dir::Write, 16 * K, 64 * K, false).unwrap();
    }
    // Zone 1 is full after 4 writes and reset at the 5th: 2 blocks in it.
    let mut t = job(&reg, &p, RwMode::RandTrim, 64 * K, (0, 256 * K));
    let io = t.place(Dir::Write, 64 * K, 0, false).unwrap();
    assert_eq!(
        (io.offset, io.len),
        (64 * K, 64 * K),
        "zone 0 is empty: zone 1"
    );
    assert!(t.place(Dir::Write, 64 * K, 128 * K, false).is_none());
    let io = w.place(Dir::Write, 16 * K, 64 * K + 16 * K, false).unwrap();
    assert_eq!(io.offset, 64 * K, "after the trim, from the zone's start");
}

/// zone_reset_threshold=0.5, zone_reset_frequency=0.25: once half the
/// region is below the write pointers, every 4th write resets its zone.
#[test]
fn the_reset_threshold_resets_every_nth_write_past_it() {
    let reg = Registry::default();
    let mut p = params(64 * K);
    p.reset_threshold = 0.5;
    p.reset_frequency = 0.25;
    let mut j = job(&reg, &p, RwMode::Write, 16 * K, (0, 512 * K));
    let mut offs = Vec::new();
    for i in 0..24u64 {
        offs.push(
            j.place(Dir::Write, 16 * K, i * 16 * K, false)
                .unwrap()
                .offset,
        );
    }
    // 16 writes (256k, half the region) at the pointer; from then on every
    // 4th write starts its zone over.
    assert_eq!(offs[..16], (0..16).map(|i| i * 16 * K).collect::<Vec<_>>());
    assert!(reg.resets() >= 2, "{offs:?}");
    let starts = offs[16..].iter().filter(|&&o| o % (64 * K) == 0).count();
    assert!(starts >= 3, "{offs:?}");
    // Without a frequency: no reset before a zone is full.
    let reg = Registry::default();
    let mut j = job(&reg, &params(64 * K), RwMode::Write, 16 * K, (0, 512 * K));
    for i in 0..24u64 {
        j.place(Dir::Write, 16 * K, i * 16 * K, false).unwrap();
    }
    assert_eq!(reg.resets(), 0);
}

/// read_beyond_wp=0: reads stay below the write pointers; a sequential
/// read skips empty zones and starts a new pass past the last written;
/// nothing written ends the job at once.
#[test]
fn reads_stay_below_the_write_pointers() {
    let reg = Registry::default();
    let p = params(64 * K);
    let mut r = job(&reg, &p, RwMode::Read, 16 * K, (0, 256 * K));
    assert!(r.place(Dir::Read, 16 * K, 0, false).is_none());
    let mut w = job(&reg, &p, RwMode::Write, 16 * K, (0, 256 * K));
    // 32k in zone 0, 48k in zone 2.
    for h in [0, 16 * K, 128 * K, 144 * K, 160 * K] {
        w.place(Dir::Write, 16 * K, h, false).unwrap();
    }
    let mut r = job(&reg, &p, RwMode::Read, 16 * K, (0, 256 * K));
    let got: Vec<(u64, bool)> = (0..7)
        .map(|_| {
            let io = r.place(Dir::Read, 16 * K, 0, false).unwrap();
            (io.offset / K, io.wrapped)
        })
        .collect();
    assert_eq!(
        got,
        [
            (0, false),
            (16, false),
            (128, false),
            (144, false),
            (160, false),
            (0, true),
            (16, false)
        ]
    );
    // Random reads: only below the pointers.
    let mut r = job(&reg, &p, RwMode::RandRead, 16 * K, (0, 256 * K));
    let mut rng = Rng::new(1);
    for _ in 0..200 {
        let io = r
            .place(Dir::Read, 16 * K, rng.below(16) * 16 * K, false)
            .unwrap();
        let ok = io.offset < 32 * K || (128 * K..176 * K).contains(&io.offset);
        assert!(ok && io.offset % (16 * K) == 0, "{}", io.offset);
    }
}

/// fio's checks: a zone size is needed, a trim is one zone, a region of
/// less than a zone is refused, job_max_open_zones needs max_open_zones.
#[test]
fn resolve_refuses_what_fio_refuses() {
    let spec = |pairs: &[(&str, &str)]| {
        let mut all = vec![("zonemode", "zbd")];
        all.extend_from_slice(pairs);
        crate::options::spec_from_pairs(all.iter().copied())
            .and_then(|s| crate::options::resolve_phase(&s, 0))
    };
    let e = |pairs: &[(&str, &str)]| spec(pairs).unwrap_err().0;
    assert!(e(&[("rw", "randwrite")]).contains("needs --zonesize"));
    assert!(e(&[("rw", "randtrim"), ("zonesize", "1m"), ("bs", "64k")]).contains("zone size"));
    assert!(
        e(&[("rw", "write"), ("zonesize", "1m"), ("size", "512k")])
            .contains("smaller than one zone")
    );
    assert!(
        e(&[
            ("rw", "write"),
            ("zonesize", "1m"),
            ("size", "4m"),
            ("job_max_open_zones", "2")
        ])
        .contains("needs max_open_zones")
    );
    assert!(
        e(&[
            ("rw", "write"),
            ("zonesize", "64k"),
            ("size", "4m"),
            ("bs", "128k")
        ])
        .contains("does not fit")
    );
    let p = spec(&[
        ("rw", "randwrite"),
        ("zonesize", "1m"),
        ("size", "4m"),
        ("max_open_zones", "3"),
        ("zone_reset_threshold", "0.7"),
        ("zone_reset_frequency", "0.125"),
    ])
    .unwrap();
    let z = p.zbd.unwrap();
    assert_eq!(
        (z.zone_size, z.zone_capacity, z.max_open_zones),
        (1 << 20, 1 << 20, 3)
    );
    assert_eq!((z.reset_threshold, z.reset_frequency), (0.7, 0.125));
    assert_eq!(p.zone_size_bytes, 0, "not strided");
}
