//! The fio options of issue 27's verify, error, priority, placement and
//! dedupe work, mapped to storlab's options of the same names (`verify.rs`,
//! `errors.rs`, `prio.rs`, `placement.rs`, `dedupe.rs` give them their
//! meaning).

use super::{Entry, fail, fio_flag, need};
use crate::options::SpecError;
use storlab_types::fio_size;

/// Check one option's value alone, so that a bad value names its line.
fn check(key: &str, v: &str) -> Result<(), String> {
    let s = crate::options::spec_from_pairs([(key, v)]).map_err(|e| e.0)?;
    let r = match key {
        "continue_on_error" | "ignore_error" => crate::errors::resolve(&s).map(drop),
        "numa_cpu_nodes" | "numa_mem_policy" => crate::placement::resolve(&s).map(drop),
        k if k.starts_with("dedupe") => crate::dedupe::resolve(&s, false).map(drop),
        // The engine is checked with the whole phase.
        _ => crate::prio::resolve(&s, storlab_types::EngineKind::Libaio).map(drop),
    };
    r.map_err(|e| {
        if e.0.starts_with(key) {
            e.0
        } else {
            format!("{key}={v}: {}", e.0)
        }
    })
}

/// Map `e` when it is one of these options: `Ok(false)` when it is not.
pub(super) fn map(
    e: &Entry,
    kb_base: u64,
    file: &str,
    pairs: &mut Vec<(String, String)>,
    notes: &mut Vec<String>,
) -> Result<bool, SpecError> {
    let key = e.key.as_str();
    let mut put = |k: &str, v: String| pairs.push((k.to_string(), v));
    let size = |v: &str| -> Result<String, SpecError> {
        fio_size(v, kb_base)
            .map(|b| b.to_string())
            .or_else(|m| fail(file, e.line, format!("{key}={v}: {m}")))
    };
    match key {
        "verify" => {
            let v = e.value.as_deref().unwrap_or("crc32c").trim();
            if !crate::verify::known_method(v) {
                return fail(
                    file,
                    e.line,
                    format!(
                        "verify={v}: not one of fio's verify methods (crc32c, md5, sha256, xxhash, meta, pattern, ...)"
                    ),
                );
            }
            let on = !matches!(v, "0" | "null");
            if on {
                notes.push(format!(
                    "verify={v}: storlab checks every unit with its own checksum and header \
                     (offset, file, run), which finds what fio's {v} finds"
                ));
                if v != "1" {
                    put("verify_method", v.to_string());
                }
            }
            put("verify", u8::from(on).to_string());
        }
        "verify_backlog" => put(key, need(e, file)?.trim().to_string()),
        "verify_dump" | "do_verify" | "fill_device" | "fill_fs" | "error_dump" | "log_prio"
        | "dedupe_global" => {
            let k = if key == "fill_fs" { "fill_device" } else { key };
            put(k, u8::from(fio_flag(e, file)?).to_string());
        }
        "verify_pattern" => {
            let v = need(e, file)?;
            crate::verify::parse_pattern(v).or_else(|m| fail(file, e.line, m))?;
            put(key, v.trim().to_string());
        }
        "verify_interval" | "offset" | "offset_increment" => {
            let v = need(e, file)?;
            if v.trim().ends_with('%') {
                return fail(
                    file,
                    e.line,
                    format!("{key}={v}: a percentage of the target is not supported; give a size"),
                );
            }
            put(key, size(v)?);
        }
        "verify_fatal" => put(key, u8::from(fio_flag(e, file)?).to_string()),
        "verify_async" => {
            let v = need(e, file)?.trim();
            if v.parse::<u64>().is_err() {
                return fail(file, e.line, format!("{key}={v}: give a number of threads"));
            }
            notes.push(format!(
                "verify_async={v}: recorded; storlab checks each unit on the job's own thread \
                 (fio's {v} offload threads change where a check runs, not what is checked)"
            ));
            put(key, v.to_string());
        }
        "verify_async_cpus" => notes.push(
            "verify_async_cpus: storlab has no verify threads to pin (it checks on each job's \
             own thread)"
                .into(),
        ),
        "continue_on_error"
        | "ignore_error"
        | "numa_cpu_nodes"
        | "numa_mem_policy"
        | "cmdprio_percentage"
        | "cmdprio_class"
        | "cmdprio"
        | "cmdprio_hint"
        | "cmdprio_bssplit"
        | "dedupe_mode"
        | "prio"
        | "prioclass"
        | "dedupe_percentage"
        | "dedupe_working_set_percentage" => {
            let v = need(e, file)?.trim();
            check(key, v).or_else(|m| fail(file, e.line, m))?;
            put(key, v.to_string());
        }
        "create_serialize" => notes.push(
            "create_serialize: storlab lays out every job's file before the timed phase".into(),
        ),
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::FioJobFile;
    use crate::options::resolve_phase;

    /// `verify_fatal` and `verify_async` reach the phase (they were notes
    /// only, so a mismatch never stopped a job); a bad thread count names
    /// its line; `verify_fatal` without `verify` is refused.
    #[test]
    fn verify_fatal_and_verify_async_reach_the_phase() {
        let text = "[j]\nsize=1m\nrw=randrw\nverify=crc32c\nverify_fatal=1\nverify_async=4\n";
        let got = FioJobFile::parse(text, "t.fio").unwrap();
        let p = resolve_phase(&got.phases[0], 0).unwrap();
        assert!(p.verify && p.verify_opts.fatal);
        assert_eq!(p.verify_opts.async_threads, 4);
        assert!(got.notes.iter().any(|n| n.contains("verify_async=4")));
        let e = FioJobFile::parse("[j]\nverify=md5\nverify_async=four\n", "t.fio")
            .unwrap_err()
            .0;
        assert!(
            e.contains("t.fio:3") && e.contains("verify_async=four"),
            "{e}"
        );
        let got = FioJobFile::parse("[j]\nsize=1m\nrw=write\nverify_fatal=1\n", "t.fio").unwrap();
        let e = resolve_phase(&got.phases[0], 0).unwrap_err().0;
        assert!(e.contains("verify_fatal need"), "{e}");
    }
}
