//! The front end's shape (issue 21): a command uses the crates and the
//! shared front-end modules, never another command. A command is a module
//! whose `<X>Command` `src/main.rs` runs (`commands::<x>::<X>Command`);
//! every other module in `src/commands/` is shared (arguments, output,
//! config, runs, signals, ...).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The command modules: those whose `commands::<x>::<X>Command`
/// `src/main.rs` names.
fn command_modules() -> BTreeSet<String> {
    let main = std::fs::read_to_string(src().join("main.rs")).unwrap();
    let mut found = BTreeSet::new();
    for (i, _) in main.match_indices("commands::") {
        let rest = &main[i + "commands::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let item: String = rest[name.len()..]
            .strip_prefix("::")
            .unwrap_or_default()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && item.ends_with("Command") {
            found.insert(name);
        }
    }
    found
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without `//` comments (doc comments may name other commands).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module names a path prefix (`commands::` or `super::super::`)
/// reaches in `text`: `prefix name` and `prefix {a, b::c}`.
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        // `super::super::x` also contains `super::x`: only whole prefixes.
        if text[..i].ends_with("super::") {
            continue;
        }
        let rest = text[i + prefix.len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|s| ident(s.trim())));
        } else {
            names.push(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self" && n != "super");
    names
}

/// `(file, sibling)` for each place a command's file names another command.
fn sibling_references() -> Vec<(String, String)> {
    let commands = command_modules();
    let dir = src().join("commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&dir).unwrap();
        let parts: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        let owner = parts[0].clone();
        if !commands.contains(&owner) {
            continue; // a shared module
        }
        let text = code(&std::fs::read_to_string(&file).unwrap());
        let mut named = names_after(&text, "commands::");
        // `super::` reaches `commands` from `x.rs` and `x/mod.rs`;
        // `super::super::` from `x/y.rs`.
        let in_commands = parts.len() == 1 || parts.get(1).is_some_and(|p| p == "mod");
        if in_commands {
            named.extend(names_after(&text, "super::"));
        } else if parts.len() == 2 {
            named.extend(names_after(&text, "super::super::"));
        }
        for n in named {
            if n != owner && commands.contains(&n) {
                found.push((rel.display().to_string(), n));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_command_list_is_read_from_main() {
    let commands = command_modules();
    for c in ["bench", "runs", "show", "export", "sweep", "monitor", "man"] {
        assert!(commands.contains(c), "{c} missing from {commands:?}");
    }
    for shared in ["common", "outfmt", "outfile", "config", "child"] {
        assert!(!commands.contains(shared), "{shared} taken for a command");
    }
}

#[test]
fn the_check_finds_each_way_of_naming_a_sibling() {
    let text = code(
        "use crate::commands::bench::Signals;\n\
         use crate::commands::{common, sweep::x};\n\
         let a = super::plan::design(); // super::tune in a comment\n\
         let b = super::super::profiles::find();\n",
    );
    assert_eq!(
        names_after(&text, "commands::"),
        ["bench", "common", "sweep"]
    );
    assert_eq!(names_after(&text, "super::"), ["plan"]);
    assert_eq!(names_after(&text, "super::super::"), ["profiles"]);
}

#[test]
fn no_command_names_a_sibling_command() {
    let found = sibling_references();
    let lines: Vec<String> = found
        .iter()
        .map(|(file, sibling)| format!("src/commands/{file} names the {sibling} command"))
        .collect();
    assert!(
        found.is_empty(),
        "commands import only the crates and the shared front-end modules \
         (move what two commands share into a crate or a shared module):\n{}",
        lines.join("\n")
    );
}
