//! Item names, generated into one reusable buffer (never stored: a million
//! items cost no memory). A file is `file.<rank>.<i>`, a directory item
//! `dir.<rank>.<i>`; after the rename phase both carry the suffix `.mv`.

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
        self.buf.push(b'.');
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
        assert_eq!(n.name("file", 0, 0, false).to_str().unwrap(), "file.0.0");
        assert_eq!(
            n.name("dir", 12, 999_999, true).to_str().unwrap(),
            "dir.12.999999.mv"
        );
        assert_eq!(
            n.name("file", u32::MAX, u64::MAX, false).to_str().unwrap(),
            format!("file.{}.{}", u32::MAX, u64::MAX)
        );
        let cap = n.buf.capacity();
        for i in 0..10_000 {
            n.name("file", 3, i, false);
        }
        assert_eq!(n.buf.capacity(), cap, "no growth past the longest name");
    }
}
