//! Property tests: whatever text users put in tags, notes and phase names,
//! the exports stay well-formed and the HTML report stays inert.

use storlab_testkit::fixtures as testdata;

use proptest::prelude::*;
use storlab_report::{CSV_COLUMNS, export_csv, export_md, html_report};

/// Split CSV text into records of fields (RFC 4180: quoted fields may hold
/// commas, doubled quotes and newlines).
fn parse_csv(s: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => rec.push(std::mem::take(&mut field)),
            (false, '\n') => {
                rec.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut rec));
            }
            (false, c) => field.push(c),
        }
    }
    records
}

fn user_text() -> impl Strategy<Value = String> {
    // Printable text plus the characters that break formats.
    prop::collection::vec(
        prop_oneof![
            any::<char>().prop_filter("printable", |c| !c.is_control()),
            Just(','),
            Just('"'),
            Just('\n'),
            Just('|'),
            Just('\\'),
            Just('<'),
            Just('>'),
            Just('&'),
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn csv_round_trips_any_note_and_tag(note in user_text(), key in user_text(), value in user_text()) {
        let mut runs = testdata::compare_runs();
        runs[0].note = Some(note.clone());
        runs[0].tags.insert(key.clone(), value.clone());
        let csv = export_csv(&runs);
        let recs = parse_csv(&csv);
        prop_assert_eq!(recs.len(), 1 + 9);
        for r in &recs {
            prop_assert_eq!(r.len(), CSV_COLUMNS.len());
        }
        let note_col = CSV_COLUMNS.iter().position(|c| *c == "note").unwrap();
        prop_assert_eq!(&recs[1][note_col], &note);
    }

    #[test]
    fn markdown_rows_keep_their_column_count(note in user_text(), name in user_text()) {
        let mut runs = testdata::compare_runs();
        runs[1].note = Some(note);
        runs[1].tags.insert("t".into(), name.clone());
        runs[1].report.phases[0].params.name = name;
        let md = export_md(&runs);
        let table: Vec<&str> = md.lines().take_while(|l| l.starts_with('|')).collect();
        prop_assert_eq!(table.len(), 2 + 9);
        for l in table {
            // Unescaped pipes (not after an odd run of backslashes) delimit
            // cells: 15 columns → 16 pipes.
            let mut pipes = 0;
            let mut backslashes = 0;
            for c in l.chars() {
                match c {
                    '\\' => backslashes += 1,
                    '|' if backslashes % 2 == 0 => {
                        pipes += 1;
                        backslashes = 0;
                    }
                    _ => backslashes = 0,
                }
            }
            prop_assert_eq!(pipes, 16, "{}", l);
        }
    }

    #[test]
    fn html_report_never_carries_markup_from_user_text(note in user_text(), name in user_text(), tag in user_text()) {
        let mut runs = testdata::compare_runs();
        let evil = format!("<script>{note}</script><img src=x>");
        runs[0].note = Some(evil.clone());
        runs[1].tags.insert(tag.clone(), evil.clone());
        runs[2].report.phases[0].params.name = format!("{name}</svg><script>");
        let html = html_report(&runs, Some(0));
        let lower = html.to_lowercase();
        prop_assert!(!lower.contains("<script"));
        prop_assert!(!lower.contains("<img"));
        // Every chart is still there and closed.
        prop_assert_eq!(html.matches("<svg ").count(), html.matches("</svg>").count());
    }
}
