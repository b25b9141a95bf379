//! Writing to stdout without panicking on a closed pipe (`storlab ... | head`).

use std::io::Write;

/// Write `text` to stdout. A closed pipe comes back as an error that
/// [`is_broken_pipe`] recognises, so `main` can exit quietly with 0; any
/// other failure (`> /dev/full`, a full disk) names standard output.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| anyhow::Error::new(e).context("cannot write to standard output"))
}

/// Print `doc` as one pretty JSON document (what every `--json` prints).
pub fn print_json<T: serde::Serialize + ?Sized>(doc: &T) -> anyhow::Result<()> {
    print(&(serde_json::to_string_pretty(doc)? + "\n"))
}

/// Whether an error is (caused by) writing to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Print an error the way every command ends on one, and flush it (an MPI
/// rank may be killed right after).
pub fn print_error(e: &anyhow::Error) {
    eprintln!("storlab: error: {e:#}");
    let _ = std::io::stderr().flush();
}
