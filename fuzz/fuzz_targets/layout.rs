//! RAID layout notation (`R60/12/48`, `lvm(4*R6/10, stripe=2M)`) and its
//! geometry for any drive size.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, u64)| {
    let (text, drive) = input;
    if let Ok(l) = text.parse::<storlab_plan::Layout>() {
        // What the notation prints parses back to the same layout.
        assert_eq!(l.to_string().parse::<storlab_plan::Layout>().ok(), Some(l));
        if let Ok(g) = l.geometry(drive) {
            assert!(g.usable_bytes <= g.raw_bytes);
        }
    }
});
