//! fio iologs, versions 2 and 3 (fio's `iolog.c`, HOWTO "Trace file
//! format v2/v3"): a first line `fio version N iolog`, then lines
//! `[timestamp] filename action [offset length]`. The timestamp (v3 only)
//! is in microseconds from the start of the run; v2 spaces I/O with
//! `wait` lines (microseconds since the previous wait). Actions: add, open,
//! close (file management); read, write, sync, datasync, trim (I/O).
//! File names have no white space (fio reads them with `%256s`).

use crate::{At, FileId, Op, TraceError, TraceRecord, err};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Longest line accepted (fio reads lines into 4 KiB).
const MAX_LINE: u64 = 64 * 1024;

pub(crate) struct Reader {
    path: PathBuf,
    input: BufReader<File>,
    version: u32,
    line: u64,
    files: Vec<String>,
    ids: HashMap<String, FileId>,
    /// v2: time reached by `wait` lines, in µs.
    clock_us: u64,
    buf: Vec<u8>,
    /// The file of the previous I/O line: a log names the same file line
    /// after line, so its id is found without hashing the name again.
    last: Option<FileId>,
}

impl Reader {
    pub(crate) fn new(path: &Path, file: File) -> Result<Reader, TraceError> {
        let mut r = Reader {
            path: path.to_path_buf(),
            input: BufReader::new(file),
            version: 0,
            line: 0,
            files: Vec::new(),
            ids: HashMap::new(),
            clock_us: 0,
            buf: Vec::new(),
            last: None,
        };
        if !r.read_line()? {
            return Err(err(path, At::Line(1), "the file is empty"));
        }
        let first = r.text()?.trim_end().to_string();
        r.version = match first.as_str() {
            "fio version 2 iolog" => 2,
            "fio version 3 iolog" => 3,
            other => {
                return Err(err(
                    path,
                    At::Line(1),
                    format!(
                        "`{}` is not an iolog version storlab reads: only `fio version 2 iolog` \
                         and `fio version 3 iolog` (fio 1.17 and later)",
                        other.chars().take(60).collect::<String>()
                    ),
                ));
            }
        };
        Ok(r)
    }

    pub(crate) fn version(&self) -> u32 {
        self.version
    }

    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    /// Read the next line into `buf` (newline stripped); false at the end.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        self.line += 1;
        let n = (&mut self.input)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| err(&self.path, At::Line(self.line), format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        if n as u64 == MAX_LINE && self.buf.last() != Some(&b'\n') {
            return Err(err(
                &self.path,
                At::Line(self.line),
                format!(
                    "the line is longer than {MAX_LINE} bytes; an iolog line is `[timestamp] file action [offset length]`"
                ),
            ));
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(true)
    }

    /// The current line as text.
    fn text(&self) -> Result<&str, TraceError> {
        std::str::from_utf8(&self.buf).map_err(|_| {
            err(
                &self.path,
                At::Line(self.line),
                "the line is not UTF-8 text",
            )
        })
    }

    fn bad(&self, reason: impl Into<String>) -> TraceError {
        err(&self.path, At::Line(self.line), reason)
    }

    pub(crate) fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            // The line is taken out of `self` while its fields are read.
            let buf = std::mem::take(&mut self.buf);
            let result = self.parse_line(&buf);
            self.buf = buf;
            if let Some(rec) = result? {
                return Ok(Some(rec));
            }
        }
    }

    fn parse_line(&mut self, buf: &[u8]) -> Result<Option<TraceRecord>, TraceError> {
        let line = std::str::from_utf8(buf).map_err(|_| self.bad("the line is not UTF-8 text"))?;
        let mut fields = [""; 6];
        let mut n = 0;
        // fio reads fields with scanf's %s: ASCII white space separates.
        for f in line.split_ascii_whitespace() {
            if n == fields.len() {
                n += 1;
                break;
            }
            fields[n] = f;
            n += 1;
        }
        let fields = &fields[..n.min(6)];
        if fields.is_empty() {
            return Ok(None);
        }
        if n > 6 {
            return Err(
                self.bad("too many fields; a line is `[timestamp] file action [offset length]`")
            );
        }
        let (time_us, rest) = if self.version == 3 {
            let t = parse_num(fields[0]).ok_or_else(|| {
                self.bad(format!(
                    "`{}` is not a timestamp (whole microseconds); a v3 line is `timestamp file action [offset length]`",
                    fields[0]
                ))
            })?;
            (Some(t), &fields[1..])
        } else {
            (None, fields)
        };
        self.line_record(time_us, rest)
    }

    fn file_id(&mut self, name: &str) -> Result<FileId, TraceError> {
        if let Some(id) = self.last
            && self.files.get(id as usize).is_some_and(|f| f == name)
        {
            return Ok(id);
        }
        let id = self.ids.get(name).copied().ok_or_else(|| {
            self.bad(format!(
                "file `{name}` is used before a `{name} add` line; fio iologs add each file first"
            ))
        })?;
        self.last = Some(id);
        Ok(id)
    }

    fn line_record(
        &mut self,
        time_us: Option<u64>,
        fields: &[&str],
    ) -> Result<Option<TraceRecord>, TraceError> {
        let shape = if self.version == 3 {
            "timestamp file action [offset length]"
        } else {
            "file action [offset length]"
        };
        let (name, action) = match fields {
            [name, action] | [name, action, _, _] => (*name, *action),
            _ => {
                return Err(self.bad(format!(
                    "expected `{shape}`, found {} field{}",
                    fields.len() + usize::from(time_us.is_some()),
                    if fields.len() == 1 { "" } else { "s" }
                )));
            }
        };
        let start_us = time_us.unwrap_or(self.clock_us);
        let start_ns = start_us
            .checked_mul(1000)
            .ok_or_else(|| self.bad("the timestamp is beyond 584 years"))?;
        if fields.len() == 2 {
            let op = match action {
                "add" => {
                    if !self.ids.contains_key(name) {
                        let id = FileId::try_from(self.files.len())
                            .map_err(|_| self.bad("more than 2^32 files"))?;
                        self.ids.insert(name.to_string(), id);
                        self.files.push(name.to_string());
                    }
                    return Ok(None);
                }
                "open" => Op::Open,
                "close" => Op::Close,
                other => {
                    return Err(self.bad(format!(
                        "unknown file action `{other}`; a two-field action is add, open or close"
                    )));
                }
            };
            let file = self.file_id(name)?;
            return Ok(Some(TraceRecord {
                rank: 0,
                file,
                op,
                offset: 0,
                length: 0,
                start_ns,
                end_ns: None,
            }));
        }
        let offset = parse_num(fields[2]).ok_or_else(|| {
            self.bad(format!(
                "offset `{}` is not a whole number of bytes",
                fields[2]
            ))
        })?;
        let length = parse_num(fields[3]).ok_or_else(|| {
            self.bad(format!(
                "length `{}` is not a whole number of bytes",
                fields[3]
            ))
        })?;
        let op = match action {
            "wait" if self.version == 2 => {
                // fio: wait `offset` microseconds, relative to the previous wait.
                self.clock_us = self
                    .clock_us
                    .checked_add(offset)
                    .ok_or_else(|| self.bad("the waits add up to more than 584 years"))?;
                return Ok(None);
            }
            "wait" => return Err(self.bad("`wait` is not allowed in a version 3 iolog (fio refuses it too); the timestamps space the I/O")),
            "read" => Op::Read,
            "write" => Op::Write,
            "sync" => Op::Fsync,
            "datasync" => Op::Fdatasync,
            "trim" => Op::Trim,
            other => {
                return Err(self.bad(format!(
                    "unknown I/O action `{other}`; fio's are read, write, sync, datasync, trim{}",
                    if self.version == 2 { ", wait" } else { "" }
                )));
            }
        };
        if offset.checked_add(length).is_none() {
            return Err(self.bad("offset + length is beyond 2^64 bytes"));
        }
        let file = self.file_id(name)?;
        let (offset, length) = if op.is_data() || op == Op::Trim {
            (offset, length)
        } else {
            (0, 0)
        };
        Ok(Some(TraceRecord {
            rank: 0,
            file,
            op,
            offset,
            length,
            start_ns,
            end_ns: None,
        }))
    }
}

/// A whole decimal number (fio's `%llu`), no sign; `None` past 2^64 − 1.
/// (One pass over the digits: every field of every line goes through it.)
fn parse_num(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for b in s.bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use crate::{At, Op, OpenOptions, TraceReader};

    fn read(text: &str) -> Result<Vec<crate::TraceRecord>, crate::TraceError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.iolog");
        std::fs::write(&p, text).unwrap();
        TraceReader::open(&p, &OpenOptions::default())?.collect()
    }

    #[test]
    fn v2_waits_space_the_io() {
        let recs = read(
            "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 1500 0\n/f write 4096 8192\n/f sync 0 0\n/f close\n",
        )
        .unwrap();
        let ops: Vec<Op> = recs.iter().map(|r| r.op).collect();
        assert_eq!(ops, [Op::Open, Op::Read, Op::Write, Op::Fsync, Op::Close]);
        assert_eq!(recs[1].start_ns, 0);
        assert_eq!(recs[2].start_ns, 1_500_000);
        assert_eq!((recs[2].offset, recs[2].length), (4096, 8192));
    }

    #[test]
    fn v3_timestamps_are_microseconds() {
        let recs =
            read("fio version 3 iolog\n0 /f add\n1 /f open\n25 /f read 0 4096\n1000 /f close\n")
                .unwrap();
        assert_eq!(recs[1].start_ns, 25_000);
        assert_eq!(recs[2].start_ns, 1_000_000);
    }

    #[test]
    fn refusals_name_the_line() {
        let cases = [
            ("fio version 4 iolog\n", 1, "version"),
            (
                "fio version 2 iolog\n/f add\n/g read 0 1\n",
                3,
                "before a `/g add`",
            ),
            (
                "fio version 3 iolog\n0 /f add\n5 /f wait 10 0\n",
                3,
                "not allowed",
            ),
            (
                "fio version 3 iolog\n0 /f add\nx /f read 0 1\n",
                3,
                "timestamp",
            ),
            ("fio version 2 iolog\n/f add\n/f read -1 1\n", 3, "offset"),
            (
                "fio version 2 iolog\n/f add\n/f frob 0 1\n",
                3,
                "unknown I/O action",
            ),
            ("fio version 2 iolog\n/f add\n/f read 0\n", 3, "expected"),
        ];
        for (text, line, why) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(e.at, At::Line(line), "{text:?}: {e}");
            assert!(e.to_string().contains(why), "{text:?}: {e}");
            assert!(e.to_string().contains("t.iolog"), "{e}");
        }
    }
}
