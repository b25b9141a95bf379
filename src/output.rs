//! The one output layer: a command's result is a [`Document`], `main`
//! prints it ([`emit`]); and writing to stdout without panicking on a
//! closed pipe (`storlab ... | head`).
//!
//! # The pattern every command follows
//!
//! 1. Flatten the one format argument: `#[command(flatten)] out:
//!    OutputArgs<F>` (`src/commands/outfmt.rs`), `F` the command's list of
//!    formats (`TableFormat`, `TextFormat` or its own `ValueEnum` that
//!    implements `Format`). Old spellings (`--format`, `--json`) are
//!    aliases there, tested once.
//! 2. `execute(self) -> anyhow::Result<Reply>`: do the work through the
//!    crates, then `Ok(Reply::doc(doc, self.out.rendering()))`, where `doc`
//!    is a type of the owning crate or a small struct in the command that
//!    implements [`Document`] by calling the crate that words it (the table
//!    text lives in `crates/print` or the owning crate, never in `src/`).
//!    A command that judges (`check`) adds its exit status with
//!    [`Reply::with_outcome`]; one that wrote its result to a file returns
//!    the line that says so as a document too (`report`), or
//!    [`Reply::done`] when there is nothing to print.
//! 3. `main` calls `c.execute().and_then(output::emit)`: the document's
//!    note (human form only) goes to stderr, then the rendering to stdout
//!    (text for people with control characters escaped, JSON/CSV byte for
//!    byte).
//! 4. Long commands (bench, sweep, md, monitor, campaign) may print live
//!    progress on stderr while they run; their final result still goes
//!    through a [`Document`]. Warnings from a library come back typed and
//!    are worded here ([`warn`]) by the command.

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

/// How a result document is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// For people: a table or text, control characters escaped.
    Human,
    /// For programs: the serializer-made JSON document.
    Json,
    /// Rows for spreadsheets (machine units).
    Csv,
    /// A Markdown table (human units).
    Markdown,
}

/// A command's result: one interface for every way it is shown. The
/// command builds the document; `main` renders it in the chosen format
/// and prints it ([`emit`]).
pub trait Document {
    /// For people: a table or text (printed with control characters other
    /// than line feeds and tabs escaped).
    fn human(&self) -> anyhow::Result<String>;
    /// For programs: the JSON document, as [`json_text`] makes it.
    fn json(&self) -> anyhow::Result<String>;
    /// CSV rows, for documents that have them.
    fn csv(&self) -> anyhow::Result<String> {
        anyhow::bail!("this result has no CSV form; use --output-format json")
    }
    /// A Markdown table, for documents that have one.
    fn markdown(&self) -> anyhow::Result<String> {
        anyhow::bail!("this result has no Markdown form; use --output-format json")
    }
    /// A line for stderr that goes with the human form instead of (or
    /// besides) stdout, e.g. "no runs yet".
    fn note(&self) -> Option<String> {
        None
    }

    /// The document in `how`: what goes to stdout, and whether it is text
    /// for people (escaped when printed) or exact bytes for programs.
    fn render(&self, how: Rendering) -> anyhow::Result<Printout> {
        Ok(match how {
            Rendering::Human => Printout::Text(self.human()?),
            Rendering::Json => Printout::Exact(self.json()?),
            Rendering::Csv => Printout::Exact(self.csv()?),
            Rendering::Markdown => Printout::Exact(self.markdown()?),
        })
    }
}

/// A value a crate words for people (`text`) and serde writes for
/// programs ([`json_text`]): most commands' result, without a type of
/// their own. A note for stderr may go with the text.
pub struct Shown<T> {
    value: T,
    text: fn(&T) -> String,
    note: Option<String>,
}

impl<T: serde::Serialize> Shown<T> {
    pub fn new(value: T, text: fn(&T) -> String) -> Shown<T> {
        Shown {
            value,
            text,
            note: None,
        }
    }

    /// The same, with `note` on stderr before the text.
    pub fn with_note(mut self, note: Option<String>) -> Shown<T> {
        self.note = note;
        self
    }
}

impl<T: serde::Serialize> Document for Shown<T> {
    fn human(&self) -> anyhow::Result<String> {
        Ok((self.text)(&self.value))
    }
    fn json(&self) -> anyhow::Result<String> {
        json_text(&self.value)
    }
    fn note(&self) -> Option<String> {
        self.note.clone()
    }
}

/// A result already rendered both ways: the text for people and the JSON
/// document (with its final newline), and a note for stderr.
pub struct Rendered {
    pub text: String,
    pub json: String,
    pub note: Option<String>,
}

impl Rendered {
    pub fn new(text: String, json: String) -> Rendered {
        Rendered {
            text,
            json,
            note: None,
        }
    }

    /// One text for both (a profile's job file, a derived job, a
    /// document made in the format asked for).
    pub fn same(text: String) -> Rendered {
        Rendered::new(text.clone(), text)
    }
}

impl Document for Rendered {
    fn human(&self) -> anyhow::Result<String> {
        Ok(self.text.clone())
    }
    fn json(&self) -> anyhow::Result<String> {
        Ok(self.json.clone())
    }
    fn note(&self) -> Option<String> {
        self.note.clone()
    }
}

/// `doc` as one pretty JSON document with a final newline (what every
/// `--json` prints).
pub fn json_text<T: serde::Serialize + ?Sized>(doc: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(doc)? + "\n")
}

/// What goes to stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Printout {
    /// For people: control characters escaped ([`print_text`]).
    Text(String),
    /// For programs: byte for byte ([`print`]).
    Exact(String),
}

impl Printout {
    /// Print it to stdout.
    pub fn print(&self) -> anyhow::Result<()> {
        match self {
            Printout::Text(t) if t.is_empty() => Ok(()),
            Printout::Text(t) => print_text(t),
            Printout::Exact(t) => print(t),
        }
    }
}

/// What a command hands back to `main`: how it ended and the document to
/// show, if any.
pub struct Reply {
    pub outcome: crate::Outcome,
    doc: Option<(Box<dyn Document>, Rendering)>,
}

impl Reply {
    /// Show `doc` as `how`; the command ran to the end.
    pub fn doc(doc: impl Document + 'static, how: Rendering) -> Reply {
        Reply {
            outcome: crate::Outcome::Ok,
            doc: Some((Box::new(doc), how)),
        }
    }

    /// The same reply ending in `outcome` (a judging command's verdict:
    /// `check` exits 1 on a regression after printing its findings).
    pub fn with_outcome(mut self, outcome: crate::Outcome) -> Reply {
        self.outcome = outcome;
        self
    }

    /// Nothing more to show (the command wrote its result elsewhere).
    pub fn done(outcome: crate::Outcome) -> Reply {
        Reply { outcome, doc: None }
    }
}

/// Render and print a command's reply (`main` calls this): the document's
/// stderr note first, for the human form, then stdout.
pub fn emit(reply: Reply) -> anyhow::Result<crate::Outcome> {
    if let Some((doc, how)) = &reply.doc {
        let out = doc.render(*how)?;
        if *how == Rendering::Human
            && let Some(note) = doc.note()
        {
            eprintln!("{}", storlab_types::text::escape_controls_in_text(&note));
        }
        out.print()?;
    }
    Ok(reply.outcome)
}
