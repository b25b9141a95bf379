//! bench, md and tune end by handing `main` one result document (issue
//! 21): what they print goes through the one output layer, so md's table
//! is escaped like every other table, and the workload table's refusal of
//! a flag's value reaches the user as the command's typed error, worded as
//! before and named once under an MPI launcher.

use crate::util::{cmd, stderr, stdout};

/// A control character in what md prints after its table (here the
/// database path of "Saved as run N in ...") reaches the terminal escaped,
/// never as an escape sequence: md's table printed raw before.
#[test]
fn md_output_escapes_control_characters_like_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db\u{1b}[31m");
    std::fs::create_dir(&db_dir).unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = cmd()
        .env("STORLAB_DB", db_dir.join("runs.db"))
        .args(["md", target.to_str().unwrap(), "--files", "10", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("file-create"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached stdout: {text:?}"
    );
    assert!(text.contains("db\\x1b[31m"), "{text}");
}

/// A value the option table refuses is the command's error: worded as
/// every storlab error, exit 2; under an MPI launcher only the rank that
/// speaks for the command line names it, the others exit 2 quietly.
#[test]
fn a_refused_workload_value_is_the_commands_error_named_once_under_mpi() {
    let dir = tempfile::tempdir().unwrap();
    let run = |rank: Option<&str>, args: &[&str]| {
        let mut c = cmd();
        c.current_dir(dir.path()).args(args);
        for v in [
            "OMPI_COMM_WORLD_RANK",
            "PMIX_RANK",
            "PMI_RANK",
            "SLURM_PROCID",
        ] {
            c.env_remove(v);
        }
        if let Some(r) = rank {
            c.env("OMPI_COMM_WORLD_RANK", r);
        }
        c.output().unwrap()
    };
    for args in [
        &["bench", "--iodepth", "many"][..],
        &["sweep", "--iodepth", "many", "."],
    ] {
        let alone = run(None, args);
        assert_eq!(alone.status.code(), Some(2), "{args:?}");
        // Then the command's usage line, as clap ends its own errors.
        assert_eq!(
            stderr(&alone),
            format!(
                "storlab: error: invalid value 'many' for --iodepth: expected a whole number\n\n\
                 Usage: storlab {} [OPTIONS] [TARGET]\n\nFor more information, try 'storlab {} --help'.\n",
                args[0], args[0]
            ),
            "{args:?}"
        );
        let rank0 = run(Some("0"), args);
        assert_eq!(rank0.status.code(), Some(2));
        assert_eq!(stderr(&rank0), stderr(&alone), "{args:?}");
        let rank1 = run(Some("1"), args);
        assert_eq!(rank1.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&rank1), "", "{args:?}");
    }
    let fio = run(None, &["bench", "--blocksize=4q"]);
    assert_eq!(fio.status.code(), Some(2));
    assert!(
        stderr(&fio).starts_with("storlab: error: --blocksize: invalid size '4q'")
            && stderr(&fio).contains("(fio's units, kb_base 1024)\n")
            && stderr(&fio).contains("Usage: storlab bench [OPTIONS] [TARGET]"),
        "{}",
        stderr(&fio)
    );
    // Nothing was made.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
