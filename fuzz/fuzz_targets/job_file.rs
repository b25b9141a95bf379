//! TOML job files (`storlab bench --job FILE`), resolved into phases.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let path = std::path::Path::new("fuzz.toml");
    if let Ok(job) = storlab_bench::JobFile::parse(text, path) {
        let _ = job.phases(text, path, &Default::default(), &Default::default());
    }
});
