//! Capacities at the edge of 64 bits (issue 9): `R6/12 --capacity 15E`
//! once reported 150 % of raw as usable. Every layout with any drive size
//! either gives a geometry whose usable capacity never exceeds raw, or an
//! error that says the figure is too large.

use proptest::prelude::*;
use storlab_plan::Layout;

const LAYOUTS: &[&str] = &[
    "R0/8",
    "R1/2",
    "R5/6",
    "R6/12",
    "R10/2/8",
    "R50/6/24",
    "R60/12/48",
    "lvm(4*R6/10, stripe=2M)",
    "R6/12,chunk=1M",
];

#[test]
fn r6_12_with_15_exabyte_drives_is_an_error() {
    let l: Layout = "R6/12".parse().unwrap();
    let e = l.geometry(15 << 60).unwrap_err().to_string();
    assert!(e.contains("16 EiB"), "{e}");
}

proptest! {
    #[test]
    fn usable_never_exceeds_raw_for_any_drive_size(i in 0usize..LAYOUTS.len(), cap in any::<u64>()) {
        let l: Layout = LAYOUTS[i].parse().unwrap();
        match l.geometry(cap) {
            Ok(g) => {
                prop_assert!(g.usable_bytes <= g.raw_bytes, "{}: {g:?}", LAYOUTS[i]);
                prop_assert_eq!(u128::from(g.raw_bytes), u128::from(g.drives) * u128::from(cap));
            }
            Err(e) => prop_assert!(e.to_string().contains("16 EiB"), "{e}"),
        }
    }
}
