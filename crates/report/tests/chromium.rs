//! End to end: the HTML report built from realistic runs opens in a real
//! headless Chromium without console errors, every chart is in the DOM the
//! browser built, and a screenshot shows the charts drawn (many colours, the
//! chart palette present), not a blank page.
//!
//! Needs Debian's `chromium` (`/usr/bin/chromium`, or `STORLAB_CHROMIUM`);
//! skips with a printed reason when it is absent. `.ci/run` installs it.

#[path = "support/chromium.rs"]
mod support;
use storlab_testkit::fixtures as testdata;

use support::{chromium, run_chromium};

use std::collections::HashSet;
use std::path::Path;

/// Console messages and uncaught errors from Chromium's log
/// (`...:INFO:CONSOLE:1] "message", source: ...`).
fn console_messages(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

struct Rgba {
    w: usize,
    h: usize,
    px: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Rgba {
    let bytes = std::fs::read(path).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let px = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    Rgba {
        w: info.width as usize,
        h: info.height as usize,
        px,
    }
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 3)
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let Some(bin) = chromium() else {
        storlab_testkit::skip(
            "html_report_renders_in_headless_chromium",
            "/usr/bin/chromium not found (apt-get install chromium, or set STORLAB_CHROMIUM)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // 1. The harness itself notices a console error (so a clean log below
    //    means something).
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>",
    )
    .unwrap();
    let (_, log) = run_chromium(&bin, dir.path(), &bad, &["--dump-dom"]);
    assert!(
        console_messages(&log)
            .iter()
            .any(|l| l.contains("undefinedFunction")),
        "the harness did not see a deliberate console error; log:\n{log}"
    );

    // 2. The real report.
    let runs = testdata::all_runs();
    let html = storlab_report::html_report(&runs, Some(0));
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let expected: Vec<String> = storlab_report::charts(&runs, Some(0))
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert!(expected.len() >= 10, "{expected:?}");

    // The DOM Chromium built holds every chart as an SVG with its marks.
    let (dom, log) = run_chromium(&bin, dir.path(), &page, &["--dump-dom"]);
    assert!(
        console_messages(&log).is_empty(),
        "console errors: {:?}",
        console_messages(&log)
    );
    assert_eq!(dom.matches("<svg").count(), expected.len(), "svg count");
    for id in &expected {
        assert!(
            dom.contains(&format!("id=\"chart-{id}\"")),
            "chart {id} missing"
        );
    }
    assert!(dom.matches("<rect").count() > 100);
    assert!(dom.matches("<polyline").count() >= 5);

    // A screenshot tall enough for the whole page.
    let shot = dir.path().join("report.png");
    let (_, log) = run_chromium(
        &bin,
        dir.path(),
        &page,
        &[
            "--window-size=1400,9000",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(
        console_messages(&log).is_empty(),
        "console errors: {:?}",
        console_messages(&log)
    );
    let img = decode(&shot);
    assert_eq!((img.w, img.h), (1400, 9000));
    // One pass over every other pixel of every other row (a quarter of the
    // image is plenty, and keeps the debug build fast).
    let palette: Vec<[u8; 3]> = storlab_report::svg::PALETTE
        .iter()
        .map(|c| hex(c))
        .collect();
    let band = 300;
    let mut band_marks = vec![0usize; img.h / band + 1];
    let (mut sampled, mut white, mut blue_px, mut orange_px) = (0usize, 0usize, 0usize, 0usize);
    let mut colours: HashSet<[u8; 3]> = HashSet::new();
    for y in (0..img.h).step_by(2) {
        for x in (0..img.w).step_by(2) {
            let p = img.px[y * img.w + x];
            sampled += 1;
            if p.iter().all(|c| *c >= 250) {
                white += 1;
                continue;
            }
            colours.insert(p);
            if let Some(i) = palette.iter().position(|c| near(p, *c)) {
                band_marks[y / band] += 1;
                match i {
                    0 => blue_px += 1,
                    1 => orange_px += 1,
                    _ => {}
                }
            }
        }
    }
    let non_white_pct = (sampled - white) as f64 * 100.0 / sampled as f64;
    eprintln!(
        "screenshot: {}×{}, {non_white_pct:.1} % non-white, {} colours; of the pixels sampled \
         (1 in 4): {blue_px} series-0 blue, {orange_px} series-1 orange",
        img.w,
        img.h,
        colours.len()
    );
    assert!(non_white_pct >= 3.0, "page looks blank");
    assert!(colours.len() > 200, "too few colours: {}", colours.len());
    // Chart palette colours, as drawn: series 0 in every chart, series 1 in most.
    assert!(blue_px > 5_000, "bars/lines in the first colour missing");
    assert!(orange_px > 2_500, "bars/lines in the second colour missing");
    // Every chart has drawing in it: the page's 300 px bands that show
    // chart colours are at least as many as the charts.
    let bands_with_marks = band_marks.iter().filter(|n| **n > 120).count();
    assert!(
        bands_with_marks >= expected.len(),
        "only {bands_with_marks} bands of 300 px show chart colours for {} charts",
        expected.len()
    );
    if let Some(keep) = std::env::var_os("STORLAB_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
