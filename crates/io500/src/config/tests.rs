use super::*;

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn io500s_own_sample_with_every_option_is_read_and_knows_every_section() {
    // What `io500 --list --mode=extended` of the release printed: every
    // section and option, each at its default.
    let text = fixture("config-list-extended.ini");
    let cfg = Config::parse(&text).expect("io500's own sample");
    let sections: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')))
        .collect();
    let ours: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
    assert_eq!(sections, ours, "the same sections in the same order");
    // Every `key =` line in the sample names an option we know.
    let keys = text
        .lines()
        .filter(|l| l.contains(" = ") || l.trim_end().ends_with(" ="))
        .count();
    let ours: usize = SECTIONS.iter().map(|s| s.options.len()).sum();
    assert_eq!(keys, ours);
    assert_eq!(cfg.stonewall_seconds(), 300);
    assert!(cfg.invalid_reasons().is_empty());
    assert_eq!(cfg.ior_easy_sizes(), Some((2 << 20, 9_920_000 << 20)));
}

#[test]
fn the_trial_config_of_the_fixture_run_is_invalid_for_the_reason_io500_gave() {
    let cfg = Config::parse(&fixture("io500-run/config.ini")).expect("the config the fixture ran");
    assert_eq!(cfg.stonewall_seconds(), 1);
    assert_eq!(
        cfg.invalid_reasons(),
        [Reason::StonewallTime {
            configured: 1,
            required: 300
        }]
    );
    assert_eq!(
        cfg.invalid_reasons()[0].to_string(),
        "stonewall-time 1s != 300s",
        "the words io500 wrote in the fixture's result.txt"
    );
    assert_eq!(cfg.files_per_proc("mdtest-hard"), Some(1000));
    assert_eq!(cfg.ior_hard_segments(), Some(400));
    assert_eq!(cfg.get("global", "datadir"), Some("/dev/shm/io5run/data"));
}

#[test]
fn values_follow_io500s_rules() {
    let cfg = Config::parse(
        "# comment\n[GLOBAL]  ; a comment\nscc = true\n\n[debug]\nstonewall-time = 30 # thirty\n[ior-easy]\nrun = 0\nAPI =\n",
    )
    .expect("valid");
    assert!(cfg.invalid_reasons().is_empty(), "scc's minimum is 30 s");
    assert!(!cfg.runs("ior-easy"));
    assert!(cfg.runs("ior-hard"));
    assert!(
        !cfg.is_set("ior-easy", "API"),
        "an empty value keeps the default"
    );
    assert!(cfg.is_set("global", "SCC"));
}

#[test]
fn refusals_name_the_line_and_the_fix() {
    let cases = [
        ("[ior-easyy]\n", "line 1: unknown section [ior-easyy]"),
        ("datadir = /x\n", "outside a section"),
        (
            "[ior-easy]\nblocksize = 1m\nfoo = 2\n",
            "line 3: unknown option \"foo\"",
        ),
        ("[mdtest-easy]\nn = -5\n", "expects integer >= 0"),
        ("[debug]\nstonewall-time = soon\n", "expects integer"),
        ("[global]\nscc = maybe\n", "expects bool (true|false)"),
        ("[mdworkbench]\nwaitingTime = x1\n", "expects float"),
        ("[global]\njust words\n", "line 2: unexpected content"),
    ];
    for (text, want) in cases {
        let e = Config::parse(text).expect_err(text);
        assert!(e.to_string().contains(want), "{text:?}: {e}");
    }
}

#[test]
fn ior_sizes_use_powers_of_1024() {
    assert_eq!(ior_size("2m"), Some(2 << 20));
    assert_eq!(ior_size("47008"), Some(47_008));
    assert_eq!(ior_size("1 G"), Some(1 << 30));
    assert_eq!(ior_size("m"), None);
    assert_eq!(
        ior_size("99999999999p"),
        None,
        "overflow is refused, not wrapped"
    );
}

proptest::proptest! {
    /// Any text: a value or an error, never a panic.
    #[test]
    fn parsing_never_panics(text in "\\PC{0,200}") {
        let _ = Config::parse(&text);
    }
}
