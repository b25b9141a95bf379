//! The command line as a whole: shell completions and the man page are
//! generated from the same definitions as `--help`, and work.

use crate::util::{have, ok, skip, storlab};

#[test]
fn completions_for_every_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = ok(&storlab(&["completions", shell]));
        for word in ["bench", "monitor", "campaign", "iodepth"] {
            assert!(text.contains(word), "{shell}: no {word}");
        }
    }
    if !have("bash") {
        skip(
            "completions_for_every_shell_name_the_subcommands",
            "bash is not installed",
        );
        return;
    }
    // The bash script is valid bash, and completes `storlab be` to bench.
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("storlab.bash");
    std::fs::write(&script, ok(&storlab(&["completions", "bash"]))).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && COMP_WORDS=(storlab be) && COMP_CWORD=1 && _storlab storlab be storlab && echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .unwrap();
    let words = ok(&out);
    assert!(words.split_whitespace().any(|w| w == "bench"), "{words}");
}

#[test]
fn the_man_page_renders_and_covers_every_subcommand() {
    let page = ok(&storlab(&["man"]));
    assert!(
        page.starts_with(".ie") || page.contains(".TH storlab 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for word in ["bench", "monitor", "plan"] {
        assert!(page.contains(word), "no {word}");
    }
    let d = tempfile::tempdir().unwrap();
    ok(&storlab(&["man", "--dir", d.path().to_str().unwrap()]));
    for page in ["storlab.1", "storlab-bench.1", "storlab-monitor.1"] {
        assert!(d.path().join(page).exists(), "{page} not written");
    }
    if !have("man") {
        skip(
            "the_man_page_renders_and_covers_every_subcommand",
            "man is not installed (Debian: man-db)",
        );
        return;
    }
    let out = std::process::Command::new("man")
        .arg("-l")
        .arg(d.path().join("storlab-bench.1"))
        .env("MANPAGER", "cat")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(text.contains("--iodepth"), "{text}");
}

#[test]
fn the_config_file_sets_database_host_label_and_default_tags() {
    let d = tempfile::tempdir().unwrap();
    let conf = d.path().join("config/storlab");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(
        conf.join("config.toml"),
        "database = \"results.db\"\nhost = \"oss01\"\n[tags]\nsite = \"lab\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        crate::util::cmd()
            .env_remove("STORLAB_DB")
            .env("XDG_CONFIG_HOME", d.path().join("config"))
            .args(args)
            .output()
            .unwrap()
    };
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    ok(&run(&[
        "bench",
        t.to_str().unwrap(),
        "--rw=read",
        "--engine=null",
        "--size=1M",
        "--tag",
        "site=override",
    ]));
    // The database is relative to the config file's directory.
    assert!(conf.join("results.db").exists());
    let json = ok(&run(&["show", "latest", "--json"]));
    assert!(json.contains("\"hostname\": \"oss01\""), "{json}");
    assert!(
        json.contains("\"site\": \"override\""),
        "a --tag beats the default: {json}"
    );
    // A typo in the file is named, exit 2.
    std::fs::write(conf.join("config.toml"), "databse = \"x\"\n").unwrap();
    let out = run(&["runs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        crate::util::stderr(&out).contains("databse"),
        "{}",
        crate::util::stderr(&out)
    );
}
