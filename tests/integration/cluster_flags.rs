//! The multi-client flags outside an MPI launch: the default build (no
//! `mpi` feature) and an MPI build started without mpirun both refuse them
//! with exit 2 and a message that says how to get a multi-client run.

use crate::util::{stderr, storlab};

#[test]
fn multi_client_flags_need_an_mpi_launch() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().display().to_string();
    for flags in [
        vec!["--clients", "1,2"],
        vec!["--stonewall", "5s"],
        vec!["--reorder-tasks"],
        vec!["--clients-by", "node"],
    ] {
        let mut args = vec!["bench", target.as_str(), "--rw", "write", "--size", "1M"];
        args.extend(flags.iter());
        let o = storlab(&args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(flags[0]), "{err}");
        assert!(err.contains("mpirun"), "{err}");
        if cfg!(not(feature = "mpi")) {
            assert!(err.contains("built without MPI"), "{err}");
            assert!(err.contains("--features mpi"), "{err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        // Nothing was written.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
    let o = storlab(&["bench", &target, "--clients", "4,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not increase"), "{}", stderr(&o));
}
