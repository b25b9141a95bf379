//! The one output-format argument every command flattens:
//! `#[command(flatten)] out: OutputArgs<F>`.
//!
//! `--output-format FORMAT` (`--format` is accepted too, the older
//! spelling of `export`, `report` and `sim`) with `--json` as the shorthand
//! for `--output-format json`, resolved in one place ([`OutputArgs::format`]).
//! `F` is the command's own list of formats (a clap `ValueEnum` that
//! implements [`Format`]), so each command's `--help` lists exactly the
//! formats it has; [`TextFormat`] and [`TableFormat`] are the two lists most
//! commands share.

use crate::output::Rendering;
use clap::builder::EnumValueParser;
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Args, FromArgMatches, ValueEnum};

/// A command's list of output formats.
pub trait Format:
    ValueEnum + Clone + Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// The help of `--output-format`, naming the default.
    const HELP: &'static str;
    /// What `--json` stands for.
    const JSON: Self;
    /// Whether the list has a JSON form and so a `--json` flag (`report`'s
    /// HTML, SVG and PNG have none).
    const HAS_JSON: bool = true;
    /// The format when none is given. `None`: the command decides from
    /// other flags (`monitor`: none with `--listen`; `report`: from `-o`'s
    /// extension), through [`OutputArgs::chosen`].
    const DEFAULT: Option<Self>;
    /// How a result document is rendered in this format: `--json`'s format
    /// as JSON, any other for people unless the list says otherwise.
    fn rendering(self) -> Rendering {
        if self == Self::JSON {
            Rendering::Json
        } else {
            Rendering::Human
        }
    }
}

/// `--output-format FORMAT` and its shorthand `--json`.
///
/// A command whose `--json` means more than "the JSON document" says so
/// with `#[command(mut_arg("json", |a| a.help("...")))]` on its own
/// arguments. A format list without JSON (`report`: HTML, SVG, PNG) says
/// `HAS_JSON = false` and gets no `--json` at all.
#[derive(Debug, Clone, Copy)]
pub struct OutputArgs<F: Format> {
    output_format: Option<F>,
    json: bool,
}

// What `#[derive(Args)]` made before, by hand so that `--json` exists only
// for a format list that has JSON.
impl<F: Format> Args for OutputArgs<F> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let format = Arg::new("output_format")
            .long("output-format")
            .alias("format")
            .value_name("FORMAT")
            .value_parser(EnumValueParser::<F>::new())
            .action(ArgAction::Set)
            .help(F::HELP);
        let mut group = ArgGroup::new("OutputArgs").multiple(true);
        group = group.arg("output_format");
        let cmd = cmd.arg(format);
        if !F::HAS_JSON {
            return cmd.group(group);
        }
        let json = Arg::new("json")
            .long("json")
            .action(ArgAction::SetTrue)
            .conflicts_with("output_format")
            .help("Shorthand for --output-format json");
        cmd.arg(json).group(group.arg("json"))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<F: Format> FromArgMatches for OutputArgs<F> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut m.clone())
    }
    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        Ok(OutputArgs {
            output_format: m.remove_one::<F>("output_format"),
            json: F::HAS_JSON && m.remove_one::<bool>("json").unwrap_or(false),
        })
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl<F: Format> OutputArgs<F> {
    /// What the user asked for, if anything (`--json` counts as json).
    pub fn chosen(&self) -> Option<F> {
        if self.json {
            Some(F::JSON)
        } else {
            self.output_format
        }
    }

    /// The format to use: the one asked for, else the command's default.
    ///
    /// For a format list without a default (`F::DEFAULT` is `None`) use
    /// [`OutputArgs::chosen`] instead; here it falls back to `--json`'s
    /// format.
    pub fn format(&self) -> F {
        self.chosen().or(F::DEFAULT).unwrap_or(F::JSON)
    }

    /// How the result document is rendered.
    pub fn rendering(&self) -> Rendering {
        self.format().rendering()
    }
}

impl OutputArgs<RunFormat> {
    /// Whether fio-json was asked for; the command that renders it (bench)
    /// takes it here, and JSON stands in for it from then on.
    pub fn take_fio_json(&mut self) -> bool {
        let asked = self.output_format == Some(RunFormat::FioJson);
        if asked {
            self.output_format = Some(RunFormat::Json);
        }
        asked
    }
}

/// For commands whose human output is prose or a record (`check`, `show`,
/// `import`, `inspect`, `profiles show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    // For people. (Plain comments, not doc comments: values with help
    // would switch every command's --help to clap's long layout.)
    Text,
    // For programs: the full, serializer-made document.
    Json,
}

impl Format for TextFormat {
    const HELP: &'static str = "Output format [default: text]";
    const JSON: Self = TextFormat::Json;
    const DEFAULT: Option<Self> = Some(TextFormat::Text);
}

/// For commands whose human output is a table (`compare`, `runs`, `bench`,
/// `sweep`, `plan`, `sim`, `trace summary`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    // A table for the terminal (plain comments: see TextFormat).
    Table,
    // For programs: the full, serializer-made document.
    Json,
}

impl Format for TableFormat {
    const HELP: &'static str = "Output format [default: table]";
    const JSON: Self = TableFormat::Json;
    const DEFAULT: Option<Self> = Some(TableFormat::Table);
}

/// For commands that run phases (`bench`, `sweep`, `md`): a table, the
/// JSON document, or (bench only) fio's JSON layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    // A table for the terminal (plain comments: see TextFormat).
    Table,
    // For programs: the full, serializer-made document.
    Json,
    // fio's JSON layout (bench only).
    FioJson,
}

impl Format for RunFormat {
    const HELP: &'static str = "Output format: table, json, or fio-json (bench: fio's JSON layout, for fio's tools) [default: table]";
    const JSON: Self = RunFormat::Json;
    const DEFAULT: Option<Self> = Some(RunFormat::Table);
    fn rendering(self) -> Rendering {
        match self {
            RunFormat::Table => Rendering::Human,
            _ => Rendering::Json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cmd {
        #[command(flatten)]
        out: OutputArgs<TableFormat>,
    }

    fn parse(args: &[&str]) -> Result<Cmd, clap::Error> {
        Cmd::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
    }

    /// Every spelling a command had keeps working and means the same.
    #[test]
    fn every_spelling_resolves_the_same_way() {
        let f = |a: &[&str]| parse(a).unwrap().out.format();
        assert_eq!(f(&[]), TableFormat::Table);
        assert_eq!(f(&["--json"]), TableFormat::Json);
        assert_eq!(f(&["--output-format", "json"]), TableFormat::Json);
        assert_eq!(f(&["--output-format=table"]), TableFormat::Table);
        assert_eq!(f(&["--format", "json"]), TableFormat::Json);
        assert_eq!(parse(&["--json"]).unwrap().out.rendering(), Rendering::Json);
        assert_eq!(parse(&[]).unwrap().out.chosen(), None);
        // --json with another format is a contradiction, named by clap.
        let e = parse(&["--json", "--output-format", "table"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict);
        let e = parse(&["--output-format", "xml"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
    enum Pictures {
        Svg,
        Png,
    }

    impl Format for Pictures {
        const HELP: &'static str = "Pictures";
        const JSON: Self = Pictures::Svg;
        const HAS_JSON: bool = false;
        const DEFAULT: Option<Self> = None;
    }

    #[derive(Parser, Debug)]
    struct NoJson {
        #[command(flatten)]
        out: OutputArgs<Pictures>,
    }

    /// A format list without JSON has no --json flag at all (not even a
    /// hidden one that shell completion would offer).
    #[test]
    fn a_list_without_json_has_no_json_flag() {
        let p = |a: &[&str]| NoJson::try_parse_from(std::iter::once("x").chain(a.iter().copied()));
        assert_eq!(
            p(&["--format", "png"]).unwrap().out.chosen(),
            Some(Pictures::Png)
        );
        assert_eq!(p(&[]).unwrap().out.chosen(), None);
        let e = p(&["--json"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
        let cmd = <NoJson as clap::CommandFactory>::command();
        assert!(cmd.get_arguments().all(|a| a.get_long() != Some("json")));
    }
}
