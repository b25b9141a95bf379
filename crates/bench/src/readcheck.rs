//! IOR's read check (`-R`, `READCHECK`) as io500 runs it, for
//! [`PhaseParams::check_reads`](storlab_types::PhaseParams): io500's IOR
//! writes one fixed buffer (its `timestamp` data packets: the buffer is
//! made once, never updated per transfer) and, reading back, compares every
//! 8-byte word of every transfer with what was written before the next
//! transfer, inside the timed window. storlab's counterpart writes
//! `buffer_pattern = ior` ([`storlab_types::ior_packet_word`]: no word is
//! zero, so a hole or a lost write reads back wrong, as with IOR's
//! rank-and-signature words) and checks every word of every read here.
//! Reads are the writes' transfers at the writes' offsets (IOR's phases),
//! so word `i` of a read is word `i` of the buffer that wrote it.

use crate::worker::{MAX_REPORTED_MISMATCHES, WorkerOut};
use storlab_types::ior_packet_word;

/// Fill `buf` with IOR's packets: word `i` is `ior_packet_word(i)`, a
/// partial last word its first bytes.
pub(crate) fn fill(buf: &mut [u8]) {
    let mut words = buf.chunks_exact_mut(8);
    for (i, w) in (&mut words).enumerate() {
        w.copy_from_slice(&ior_packet_word(i as u64).to_ne_bytes());
    }
    let i = (buf.len() / 8) as u64;
    let tail = buf.len() % 8;
    let at = buf.len() - tail;
    buf[at..].copy_from_slice(&ior_packet_word(i).to_ne_bytes()[..tail]);
}

/// Whether every byte of `buf` is what an `ior` write wrote. Every word is
/// looked at (no early exit), as IOR's `verify_memory_pattern` does.
pub(crate) fn words_match(buf: &[u8]) -> bool {
    let mut words = buf.chunks_exact(8);
    let mut acc = 0u64;
    for (i, w) in (&mut words).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        acc |= u64::from_ne_bytes(b) ^ ior_packet_word(i as u64);
    }
    let last = ior_packet_word((buf.len() / 8) as u64).to_ne_bytes();
    acc == 0 && words.remainder() == &last[..words.remainder().len()]
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
        // 47,008 bytes (ior-hard's transfer) is 5,876 whole words; 47,012
        // has a partial last word.
        for len in [47_008usize, 47_012] {
            let mut b = vec![0u8; len];
            assert!(!words_match(&b), "a hole (zeros) is not what was written");
            fill(&mut b);
            assert!(words_match(&b));
            b[len - 1] ^= 1; // in the last word
            assert!(!words_match(&b));
            b[len - 1] ^= 1;
            b[8 * 3000 + 5] ^= 0x80;
            assert!(!words_match(&b));
        }
        let mut b = vec![0u8; 47_008];
        fill(&mut b);
        b[8 * 3000 + 5] ^= 0x80;
        let mut out = WorkerOut::default();
        check(&mut out, &b, 4096);
        let mut good = [0u8; 16];
        fill(&mut good);
        check(&mut out, &good, 0);
        assert_eq!((out.verify_checked, out.verify_bad_count), (2, 1));
        assert_eq!(out.verify_bad[0].0, 4096);
    }
}
