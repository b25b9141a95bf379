//! Input files (job files, campaign and scenario files, catalogs, fio JSON,
//! traces) are read only when they are regular files: a FIFO would block
//! without a word, a device or `/dev/zero` never ends, a directory cannot
//! be read.

use crate::Error;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What a special file is, in words.
pub fn special_kind(ft: std::fs::FileType) -> &'static str {
    if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// `what` and `path` for messages ("job file x.toml"; `what` may be empty).
fn input_label(what: &str, path: &Path) -> String {
    if what.is_empty() {
        path.display().to_string()
    } else {
        format!("{what} {}", path.display())
    }
}

/// Open an input file (`what` names it in messages: "job file", "campaign
/// file"), refusing anything but a regular file. The type is checked
/// before opening and again on the open file.
pub fn open_input(path: &Path, what: &str) -> Result<File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let label = || input_label(what, path);
    let refuse = |ft: std::fs::FileType| Error::InputNotRegular {
        label: label(),
        kind: special_kind(ft),
    };
    let read = |err| Error::Read {
        label: label(),
        err,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    if !meta.is_file() {
        return Err(refuse(meta.file_type()));
    }
    // O_NONBLOCK: should it have become a FIFO since, the open does not wait.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read)?;
    let meta = f.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(refuse(meta.file_type()));
    }
    Ok(f)
}

/// The bytes of an input file ([`open_input`]'s rules).
pub fn read_input_bytes(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    open_input(path, what)?
        .read_to_end(&mut bytes)
        .map_err(|err| Error::Read {
            label: input_label(what, path),
            err,
        })?;
    Ok(bytes)
}

/// The text of an input file ([`open_input`]'s rules); it must be UTF-8,
/// or the error names the line, column and byte offset of the first byte
/// that is not ([`crate::text`]).
pub fn read_input(path: &Path, what: &str) -> Result<String, Error> {
    crate::text::utf8(read_input_bytes(path, what)?).map_err(|err| Error::NotUtf8 {
        label: input_label(what, path),
        err,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_files_must_be_regular() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", fifo.display());
        let e = read_input(&fifo, "job file").unwrap_err().to_string();
        assert!(e.contains("FIFO") && e.contains("job file"), "{e}");
        let e = read_input(d.path(), "job file").unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        let e = read_input(Path::new("/dev/zero"), "job file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let f = d.path().join("job.toml");
        std::fs::write(&f, "[global]\n").unwrap();
        assert_eq!(read_input(&f, "job file").unwrap(), "[global]\n");
        std::fs::write(&f, b"[global]\n\xff").unwrap();
        let e = read_input(&f, "job file").unwrap_err().to_string();
        assert!(
            e.starts_with("job file ") && e.contains("line 2, column 1"),
            "{e}"
        );
    }
}
