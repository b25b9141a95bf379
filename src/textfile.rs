//! Reading the text files a user hands storlab (job files, fio job files,
//! sim scenarios, catalogs). `std::fs::read_to_string` says only "stream did
//! not contain valid UTF-8"; here the error says where the first byte that
//! is not UTF-8 is (line, column, byte offset) and how to convert the file.

use std::io;
use std::path::Path;

/// The file's text, or an error; one that is not UTF-8 names the line,
/// column and byte offset of its first bad byte.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        io::Error::new(io::ErrorKind::InvalidData, not_utf8(e.as_bytes(), offset))
    })
}

/// "not UTF-8 text at line L, column C (byte N, 0xXX)" and the fix.
fn not_utf8(bytes: &[u8], offset: usize) -> String {
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    // Columns count characters; everything before `offset` is valid UTF-8.
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    let byte = bytes.get(offset).copied().unwrap_or(0);
    format!(
        "not UTF-8 text: line {line}, column {column} (byte offset {offset}, 0x{byte:02X}); \
         save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_located_by_line_column_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.toml");
        std::fs::write(&p, b"[global]\n# d\xc3\xa9j\xe0 vu\n").unwrap();
        let e = read_to_string(&p).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let msg = e.to_string();
        assert!(
            msg.contains("line 2, column 6 (byte offset 15, 0xE0)"),
            "{msg}"
        );
        std::fs::write(&p, "[global]\n# déjà vu\n").unwrap();
        assert_eq!(read_to_string(&p).unwrap(), "[global]\n# déjà vu\n");
    }
}
