//! IOR's read check (`-R`, `READCHECK`) as io500 runs it, for
//! [`PhaseParams::check_reads`](storlab_types::PhaseParams): io500's IOR
//! writes one fixed buffer (its `timestamp` data packets: the buffer is
//! made once, never updated per transfer) and, reading back, compares every
//! 8-byte word of every transfer with what was written before the next
//! transfer, inside the timed window. storlab's counterpart writes
//! `buffer_pattern = zero` and checks every word of every read here.

use crate::worker::{MAX_REPORTED_MISMATCHES, WorkerOut};

/// Whether every byte of `buf` is what a `zero` write wrote. Every word is
/// looked at (no early exit), as IOR's `verify_memory_pattern` does.
pub(crate) fn words_match(buf: &[u8]) -> bool {
    let mut words = buf.chunks_exact(8);
    let mut acc = 0u64;
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        acc |= u64::from_ne_bytes(b);
    }
    acc == 0 && words.remainder().iter().all(|&b| b == 0)
}

/// Check one completed read of `buf` at `offset` into the worker's verify
/// figures (the worker's hook for `check_reads`).
pub(crate) fn check(out: &mut WorkerOut, buf: &[u8], offset: u64) {
    out.verify_checked += 1;
    if !words_match(buf) {
        out.verify_bad_count += 1;
        if out.verify_bad.len() < MAX_REPORTED_MISMATCHES {
            out.verify_bad.push((
                offset,
                "read data differs from what was written (IOR's read check)".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_checked_including_the_tail() {
        let mut b = vec![0u8; 47_008];
        assert!(words_match(&b));
        b[47_007] = 1; // in the last, partial word
        assert!(!words_match(&b));
        b[47_007] = 0;
        b[8 * 3000 + 5] = 0x80;
        assert!(!words_match(&b));
        let mut out = WorkerOut::default();
        check(&mut out, &b, 4096);
        check(&mut out, &[0u8; 16], 0);
        assert_eq!((out.verify_checked, out.verify_bad_count), (2, 1));
        assert_eq!(out.verify_bad[0].0, 4096);
    }
}
