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

/// Write human-readable `text` to stdout with control characters other than
/// line feeds and tabs escaped (`\x1b`): what users and files put into
/// notes, tags, phase names or host names never reaches the terminal as an
/// escape sequence. Tables and listings print through this.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    print(&storlab_types::text::escape_controls_in_text(text))
}

/// A warning line on stderr, its control characters escaped.
pub fn warn(text: &str) {
    eprintln!(
        "storlab: warning: {}",
        storlab_types::text::escape_controls_in_text(text)
    );
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
    let text = format!("{e:#}");
    eprintln!(
        "storlab: error: {}",
        storlab_types::text::escape_controls_in_text(&text)
    );
    let _ = std::io::stderr().flush();
}
