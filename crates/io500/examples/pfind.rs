//! storlab's io500 find alone, to hold beside pfind on one kept data
//! directory (docs/PERFORMANCE.md, "storlab io500 vs io500"):
//!
//! ```text
//! cargo run --release -p storlab-io500 --features run --example pfind -- DIR TIMESTAMPFILE RANKS
//! mpirun -np RANKS pfind DIR -newer TIMESTAMPFILE -size 3901c -name '*01*' -C -q 10000
//! ```
//!
//! Prints what io500's find phase prints: files found, files looked at,
//! the time and the rate in kIOPS (`total_files / runtime / 1000`).

use std::os::unix::fs::MetadataExt;
use std::sync::atomic::AtomicBool;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, stamp, ranks] = args.as_slice() else {
        eprintln!("usage: pfind DIR TIMESTAMPFILE RANKS");
        std::process::exit(2);
    };
    let ctime = match std::fs::symlink_metadata(stamp) {
        Ok(m) => m.ctime(),
        Err(e) => {
            eprintln!("cannot stat {stamp}: {e}");
            std::process::exit(2);
        }
    };
    let Ok(ranks) = ranks.parse::<u32>() else {
        eprintln!("RANKS is a number: {ranks}");
        std::process::exit(2);
    };
    let c = storlab_io500::run::pfind(
        std::path::Path::new(dir),
        ctime,
        ranks,
        &AtomicBool::new(false),
    );
    let s = c.elapsed_ns as f64 / 1e9;
    println!(
        "found {} total-files {} errors {} time {s:.3} s rate {:.3} kIOPS",
        c.found,
        c.total,
        c.errors,
        c.total as f64 / s / 1000.0
    );
}
