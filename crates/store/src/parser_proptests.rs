//! Property tests of the store's user-input parsers at their extremes
//! (issue 9): run selectors and fio JSON never panic, and every rejection
//! names the input.

use crate::select::{RunSelector, parse_tag};
use proptest::prelude::*;
use storlab_fio as fio;

proptest! {
    #[test]
    fn run_ids_at_the_limits(n in any::<u64>()) {
        let text = n.to_string();
        match RunSelector::parse(&text) {
            Ok(RunSelector::Id(id)) => prop_assert!(id > 0 && id as u64 == n),
            Ok(other) => prop_assert!(false, "{text} parsed as {other:?}"),
            Err(e) => {
                prop_assert!(n == 0 || n > i64::MAX as u64, "{text}: {e}");
                prop_assert!(e.to_string().contains(&text), "{e}");
            }
        }
        let back = format!("latest~{n}");
        match RunSelector::parse(&back) {
            Ok(RunSelector::Latest { back: b }) => prop_assert_eq!(u64::from(b), n),
            Ok(other) => prop_assert!(false, "{back} parsed as {other:?}"),
            Err(e) => prop_assert!(n > u64::from(u32::MAX), "{back}: {e}"),
        }
    }

    #[test]
    fn selectors_and_tags_never_panic(s in "(tag:|latest~|-)?[\\PC]{0,60}") {
        if let Err(e) = RunSelector::parse(&s) {
            prop_assert!(!e.to_string().is_empty());
        }
        let _ = parse_tag(&s);
    }

    #[test]
    fn fio_json_with_extreme_numbers_never_panics(
        bytes in any::<u64>(), runtime in any::<i64>(), bw in any::<f64>(),
        jobs in 0usize..3, bs in "[0-9kKmM]{0,12}",
    ) {
        let job = format!(
            r#"{{"jobname":"j","groupid":0,"error":0,"job options":{{"rw":"randread","bs":"{bs}"}},
               "read":{{"io_bytes":{bytes},"bw_bytes":{bw},"iops":{bw},"runtime":{runtime},"total_ios":{bytes},
                        "clat_ns":{{"mean":{bw},"percentile":{{"99.000000":{bytes}}}}}}},
               "write":{{"io_bytes":0,"runtime":0,"total_ios":0}}}}"#,
            bw = if bw.is_finite() { bw } else { 0.0 },
        );
        let jobs: Vec<String> = (0..jobs).map(|_| job.clone()).collect();
        let text = format!(
            r#"{{"fio version":"fio-3.33","timestamp":1700000000,"global options":{{}},"jobs":[{}]}}"#,
            jobs.join(",")
        );
        let _ = fio::parse(&text, Some("host"));
    }
}
