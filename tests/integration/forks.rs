//! Notions that had forked and now have one definition (issue 21 step 7),
//! checked end to end through the binary: fio's size units read the same
//! way by `bench --fio-job` and by `import` of fio's JSON output.

use crate::util::{ok, run_in, store_fixture};
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The block size of the first phase of a record.
fn first_bs(record: &Value) -> u64 {
    record["phases"][0]["params"]["bs"][0]["bs_bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("no bs_bytes in {record}"))
}

/// `bs=64KiB` is 64,000 bytes in fio (default `kb_base=1024`: the `iB`
/// form is the decimal one). A job file run by `bench --fio-job` always
/// read it so; `import` of fio's JSON output read 65,536, so the same job
/// stored two block sizes. With `kb_base=1000` both read 65,536.
#[test]
fn a_fio_size_is_the_same_bytes_in_a_job_file_and_in_imported_fio_json() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let fixture: Value =
        json(&std::fs::read_to_string(store_fixture("fio-3.33-randread.json")).unwrap());
    for (kb_base, want) in [(None, 64_000u64), (Some("1000"), 65_536)] {
        let extra = kb_base.map_or(String::new(), |k| format!("kb_base={k}\n"));
        let job = dir.join("j.fio");
        std::fs::write(
            &job,
            format!(
                "[j]\n{extra}ioengine=null\nrw=read\nsize=1m\nbs=64KiB\ndirectory={}\n",
                dir.display()
            ),
        )
        .unwrap();
        let ran = json(&ok(&run_in(
            dir,
            &[
                "bench",
                "--fio-job",
                job.to_str().unwrap(),
                "--no-save",
                "--output-format=json",
                "-q",
            ],
        )));
        assert_eq!(first_bs(&ran), want, "bench --fio-job, kb_base {kb_base:?}");

        let mut doc = fixture.clone();
        let opts = doc["jobs"][0]["job options"].as_object_mut().unwrap();
        opts.insert("bs".into(), "64KiB".into());
        if let Some(k) = kb_base {
            opts.insert("kb_base".into(), k.into());
        }
        let f = dir.join("fio.json");
        std::fs::write(&f, doc.to_string()).unwrap();
        ok(&run_in(dir, &["import", f.to_str().unwrap()]));
        let shown = json(&ok(&run_in(
            dir,
            &["show", "latest", "--output-format=json"],
        )));
        assert_eq!(
            first_bs(&shown[0]["report"]),
            want,
            "import, kb_base {kb_base:?}"
        );
    }
}
