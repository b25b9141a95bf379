//! The HTML report prints: headless Chromium prints it to PDF (the way a
//! storage engineer attaches it to an acceptance document), and poppler's
//! `pdftotext` finds every column header of every table in the PDF's text
//! (a table cut at the right edge loses its last columns' headers), every
//! chart's title, and the landscape page size.
//!
//! Needs Debian's `chromium` (`/usr/bin/chromium`, or `STORLAB_CHROMIUM`)
//! and `pdftotext` (poppler-utils); skips with a printed reason when either
//! is absent. `.ci/run` installs both.

#[path = "support/chromium.rs"]
mod support;
use storlab_testkit::fixtures as testdata;

use support::{chromium, run_chromium};

use std::path::Path;
use std::process::{Command, Stdio};

fn have_pdftotext() -> bool {
    Command::new("pdftotext")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Print `page` to `pdf` with headless Chromium (fresh profile, killed
/// after 90 s).
fn print_to_pdf(bin: &Path, dir: &Path, page: &Path, pdf: &Path) {
    let to = format!("--print-to-pdf={}", pdf.display());
    run_chromium(bin, dir, page, &["--no-pdf-header-footer", &to]);
    assert!(pdf.exists(), "no PDF written");
}

fn pdftotext(pdf: &Path, extra: &[&str]) -> String {
    let out = Command::new("pdftotext")
        .args(extra)
        .arg(pdf)
        .arg("-")
        .output()
        .expect("run pdftotext");
    assert!(out.status.success(), "pdftotext failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Collapse runs of white space (line and page breaks included) to one space.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of every `<th>` in the HTML, unescaped.
fn headers(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<th>") {
        let after = &rest[i + 4..];
        let end = after.find("</th>").expect("closed th");
        let text = after[..end]
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'");
        out.push(squash(&text));
        rest = &after[end..];
    }
    out
}

#[test]
fn the_report_prints_with_every_column_and_chart() {
    let Some(bin) = chromium() else {
        storlab_testkit::skip(
            "the_report_prints_with_every_column_and_chart",
            "/usr/bin/chromium not found (apt-get install chromium, or set STORLAB_CHROMIUM)",
        );
        return;
    };
    if !have_pdftotext() {
        storlab_testkit::skip(
            "the_report_prints_with_every_column_and_chart",
            "pdftotext not found (apt-get install poppler-utils)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let runs = testdata::all_runs();
    let html = storlab_report::html_report(&runs, Some(0));
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let pdf = dir.path().join("report.pdf");
    print_to_pdf(&bin, dir.path(), &page, &pdf);

    if let Some(keep) = std::env::var_os("STORLAB_KEEP_PDF") {
        std::fs::copy(&pdf, keep).unwrap();
    }
    let text = squash(&pdftotext(&pdf, &[]));
    let heads = headers(&html);
    assert!(heads.len() > 50, "the report has its tables: {heads:?}");
    let missing: Vec<&String> = heads
        .iter()
        .filter(|h| !text.contains(h.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "column headers missing from the printed PDF (cut off?): {missing:?}"
    );
    // The last column of the widest tables is really there, with content.
    for h in ["Lat p99.9", "Differs from baseline", "Device", "Verify"] {
        assert!(text.contains(h), "{h}");
    }
    for c in storlab_report::charts(&runs, Some(0)) {
        let title = squash(&c.title);
        assert!(
            text.contains(&title),
            "chart '{title}' missing from the PDF"
        );
    }
    // Landscape pages: wider than tall.
    let info = pdftotext_info(&pdf);
    let size = info
        .lines()
        .find(|l| l.starts_with("Page size:"))
        .unwrap_or_else(|| panic!("no page size in pdfinfo output:\n{info}"));
    let nums: Vec<f64> = size
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        nums.len() >= 2 && nums[0] > nums[1],
        "not landscape: {size}"
    );
}

/// `pdfinfo` output (poppler-utils, like pdftotext).
fn pdftotext_info(pdf: &Path) -> String {
    let out = Command::new("pdfinfo")
        .arg(pdf)
        .output()
        .expect("run pdfinfo (poppler-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A one-run report prints on a few pages (the sections flow; a page per
/// section made nine mostly empty pages), no word of the prose or headers
/// is split across lines inside a word, and a phase without ramp shows
/// "–", not "0 ns".
#[test]
fn a_one_run_report_prints_on_a_few_pages_without_broken_words() {
    let t = "a_one_run_report_prints_on_a_few_pages_without_broken_words";
    let Some(bin) = chromium() else {
        storlab_testkit::skip(t, "/usr/bin/chromium not found (apt-get install chromium)");
        return;
    };
    if !have_pdftotext() {
        storlab_testkit::skip(t, "pdftotext not found (apt-get install poppler-utils)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut runs: Vec<_> = testdata::all_runs().into_iter().take(1).collect();
    for p in &mut runs[0].report.phases {
        p.params.ramp_ns = 0;
    }
    let html = storlab_report::html_report(&runs, None);
    assert!(!html.contains(">0 ns<"), "Ramp 0 ns is shown as –");
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let pdf = dir.path().join("report.pdf");
    print_to_pdf(&bin, dir.path(), &page, &pdf);
    let info = pdftotext_info(&pdf);
    let pages: u32 = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no page count:\n{info}"));
    assert!(pages <= 4, "a one-run report printed on {pages} pages");
    // Every word of the report's own text (not the charts) is whole in
    // the PDF's text: a word broken inside itself is not.
    let text = squash(&pdftotext(&pdf, &[]));
    let missing: Vec<String> = words(&html)
        .into_iter()
        .filter(|w| !text.contains(w.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "words broken (or lost) in print: {missing:?}"
    );
}

/// The words (letters only, 5 or more) of the HTML's text outside style
/// and SVG.
fn words(html: &str) -> Vec<String> {
    let mut body = html.to_string();
    // The navigation bar is not printed.
    for (open, close) in [
        ("<style", "</style>"),
        ("<svg", "</svg>"),
        ("<nav", "</nav>"),
    ] {
        while let Some(i) = body.find(open) {
            let Some(j) = body[i..].find(close) else {
                break;
            };
            body.replace_range(i..i + j + close.len(), " ");
        }
    }
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let mut out: Vec<String> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 5)
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}
