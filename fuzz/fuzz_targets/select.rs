//! Run selectors (`12`, `latest~2`, `tag:a=1,b=2`) and `--tag KEY=VALUE`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(sel) = storlab_store::RunSelector::parse(text) {
        // What parses prints back to something that parses the same.
        assert_eq!(storlab_store::RunSelector::parse(&sel.to_string()).ok(), Some(sel));
    }
    let _ = storlab_store::parse_tag(text);
});
