//! Text that users hand storlab in files (job files, fio job files, sim
//! scenarios, catalogs, campaign files: [`crate::read_input`]).
//! `std::fs::read_to_string` says only "stream did not contain valid
//! UTF-8"; here the error says where the first byte that is not UTF-8 is
//! (line, column, byte offset) and how to convert the file.

/// Text that is not UTF-8: where its first bad byte is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not UTF-8 text: line {line}, column {column} (byte offset {offset}, 0x{byte:02X}); \
     save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW)"
)]
pub struct NotUtf8 {
    pub line: usize,
    /// In characters, counting from 1.
    pub column: usize,
    pub offset: usize,
    pub byte: u8,
}

/// `bytes` as text, or where its first byte that is not UTF-8 is.
pub fn utf8(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = &bytes[..offset];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        NotUtf8 {
            line: before.iter().filter(|&&b| b == b'\n').count() + 1,
            // Everything before `offset` is valid UTF-8.
            column: String::from_utf8_lossy(&before[line_start..])
                .chars()
                .count()
                + 1,
            offset,
            byte: bytes.get(offset).copied().unwrap_or(0),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_located_by_line_column_and_offset() {
        let e = utf8(b"[global]\n# d\xc3\xa9j\xe0 vu\n".to_vec()).unwrap_err();
        assert_eq!(
            (e.line, e.column, e.offset, e.byte),
            (2, 6, 15, 0xE0),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("line 2, column 6 (byte offset 15, 0xE0)"),
            "{e}"
        );
        let e = utf8(b"\xff".to_vec()).unwrap_err();
        assert_eq!((e.line, e.column, e.offset), (1, 1, 0));
        assert_eq!(
            utf8("[global]\n# déjà vu\n".into()).unwrap(),
            "[global]\n# déjà vu\n"
        );
    }
}
