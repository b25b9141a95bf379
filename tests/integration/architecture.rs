//! The map of the code (`docs/ARCHITECTURE.md`) stays true: its crate
//! diagram is what the manifests say (`scripts/crate-graph.py`), and every
//! `crates/...` and `src/...` path it names exists.

use crate::util::{have, skip};
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn crate_diagram_matches_the_manifests() {
    const T: &str = "architecture::crate_diagram_matches_the_manifests";
    if !have("python3") {
        return skip(T, "python3 is not installed (Debian: python3)");
    }
    let out = Command::new("python3")
        .arg(root().join("scripts/crate-graph.py"))
        .arg("--check")
        .arg(root().join("docs/ARCHITECTURE.md"))
        .output()
        .expect("run scripts/crate-graph.py");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one level of braces, as the map writes them).
fn expand(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .flat_map(|alt| expand(&format!("{}{alt}{}", &path[..open], &path[close + 1..])))
            .collect(),
        _ => vec![path.to_string()],
    }
}

/// Every `crates/...` and `src/...` path in `text` (not part of a longer
/// path), braces expanded, trailing punctuation dropped; a placeholder such
/// as `<sub>` or a glob stands for its directory.
fn paths_named(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for start in ["crates/", "src/"] {
        for (i, _) in text.match_indices(start) {
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || b"_./-".contains(&bytes[i - 1])) {
                continue;
            }
            let len = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_./-{},<>*".contains(c)))
                .unwrap_or(text.len() - i);
            let raw = text[i..i + len].trim_end_matches(['.', ',', ':']);
            for p in expand(raw) {
                let p = match p.find(['<', '*']) {
                    Some(cut) => p[..cut]
                        .rsplit_once('/')
                        .map(|(d, _)| d)
                        .unwrap_or("")
                        .to_string(),
                    None => p,
                };
                if !p.is_empty() {
                    found.push(p);
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn every_path_the_map_names_exists() {
    let map = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("read the map");
    let named = paths_named(&map);
    assert!(named.len() > 30, "found the paths: {named:?}");
    let missing: Vec<&String> = named.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn paths_named_expands_braces_and_placeholders() {
    let text = "`src/commands/{runs,show}.rs` and crates/bench/src/run.rs, \
                `src/commands/<sub>.rs`, ../src/x.rs, crates/report/src/testdata.rs.";
    assert_eq!(
        paths_named(text),
        [
            "crates/bench/src/run.rs",
            "crates/report/src/testdata.rs",
            "src/commands",
            "src/commands/runs.rs",
            "src/commands/show.rs",
        ]
    );
}
