//! The md ranks' agreement on one job: every rank digests what decides
//! what it does (the resolved spec, the target as it resolves, the storlab
//! version) and the ranks compare the digests before anything is made.

use crate::MdSpec;
use std::path::Path;
use storlab_types::STORLAB_VERSION;

/// The digest every rank of an md run compares (same job, same value).
pub fn job_digest(spec: &MdSpec, target: &Path) -> u64 {
    fnv(&job_text(spec, target))
}

/// FNV-1a, 64 bits: a digest of the resolved job every rank computes.
fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The text the digest is made of: everything that decides what a rank does.
fn job_text(spec: &MdSpec, target: &Path) -> String {
    let real = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    format!("{spec:?}|{}|{STORLAB_VERSION}", real.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_tells_jobs_apart() {
        let dir = std::env::temp_dir();
        let a = MdSpec {
            files: 10,
            dirs: 0,
            depth: 0,
            branch: 1,
            unique_dir: false,
            write_bytes: 0,
            read_bytes: 0,
            ops: vec![crate::Op::Create],
            rank_shift: 0,
            stonewall_ns: None,
        };
        let b = MdSpec {
            files: 11,
            ..a.clone()
        };
        assert_eq!(job_digest(&a, &dir), job_digest(&a.clone(), &dir));
        assert_ne!(job_digest(&a, &dir), job_digest(&b, &dir));
        assert_ne!(
            job_digest(&a, &dir),
            job_digest(&a, Path::new("/elsewhere"))
        );
        // FNV-1a 64 of "" is its offset basis; of "a", the published value.
        assert_eq!(fnv(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
