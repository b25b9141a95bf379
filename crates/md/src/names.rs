//! Item names, generated into one reusable buffer (never stored: a million
//! items cost no memory). A file is `file.mdtest.<rank>.<i>`, a directory
//! item `dir.mdtest.<rank>.<i>`, mdtest's own names; after the rename phase
//! both carry the suffix `.mv`.
//!
//! The names are mdtest's and not shorter ones on purpose: the length of
//! the names decides how many entries share a directory block, and on ext4
//! every create scans its leaf block (to look the name up and to find a
//! free slot), so shorter names (`file.0.<i>`, 7 bytes less) cost 11 % more
//! system time per create there than mdtest's (18.8 vs 16.8 µs, measured
//! in docs/PERFORMANCE.md). The same names make the same directories.

use std::ffi::CStr;

/// Formats item names without allocating per item.
#[derive(Debug, Default)]
pub struct NameBuf {
    buf: Vec<u8>,
}

fn push_num(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[k..]);
}

impl NameBuf {
    /// The name of item `i` of `rank` (`prefix` is `file` or `dir`).
    pub fn name(&mut self, prefix: &str, rank: u32, i: u64, renamed: bool) -> &CStr {
        self.buf.clear();
        self.buf.extend_from_slice(prefix.as_bytes());
        self.buf.extend_from_slice(b".mdtest.");
        push_num(&mut self.buf, u64::from(rank));
        self.buf.push(b'.');
        push_num(&mut self.buf, i);
        if renamed {
            self.buf.extend_from_slice(b".mv");
        }
        self.buf.push(0);
        // cannot fail: the buffer ends in its only NUL (prefixes are ASCII words).
        CStr::from_bytes_with_nul(&self.buf).expect("one trailing NUL")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_exact_and_reuse_one_buffer() {
        let mut n = NameBuf::default();
        // mdtest's names, byte for byte (its `file.mdtest.<rank>.<i>`).
        assert_eq!(
            n.name("file", 0, 0, false).to_str().unwrap(),
            "file.mdtest.0.0"
        );
        assert_eq!(
            n.name("file", 3, 150, false).to_str().unwrap(),
            "file.mdtest.3.150"
        );
        assert_eq!(
            n.name("dir", 12, 999_999, true).to_str().unwrap(),
            "dir.mdtest.12.999999.mv"
        );
        assert_eq!(
            n.name("file", u32::MAX, u64::MAX, false).to_str().unwrap(),
            format!("file.mdtest.{}.{}", u32::MAX, u64::MAX)
        );
        let cap = n.buf.capacity();
        for i in 0..10_000 {
            n.name("file", 3, i, false);
        }
        assert_eq!(n.buf.capacity(), cap, "no growth past the longest name");
    }
}
