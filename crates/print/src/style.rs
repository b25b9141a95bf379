//! The table styles: one for results (boxed, condensed), one for
//! listings (plain aligned columns), and the trim that listings get.

use comfy_table::{Table, presets};

/// The one table style for results (boxed, condensed): bench, sweep,
/// repeats, clients, campaign, tune and plan tables all look alike.
pub fn result_table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t
}

/// The one style for listings (`runs`, `show`, `sim`): plain aligned
/// columns, as `ls -l` and `ps` print them.
pub fn list_table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t
}

/// A borderless comfy-table without the padding at line ends, newline-terminated.
pub fn trim_table(table: &str) -> String {
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_tables_are_boxed_and_listings_plain_and_trimmed() {
        let mut r = result_table();
        r.set_header(["a", "bb"]).add_row(["1", "2"]);
        assert_eq!(
            r.to_string(),
            "┌───┬────┐\n│ a ┆ bb │\n╞═══╪════╡\n│ 1 ┆ 2  │\n└───┴────┘"
        );
        let mut l = list_table();
        l.set_header(["a", "bb"]).add_row(["1", "2"]);
        assert_eq!(trim_table(&l.to_string()), " a  bb\n 1  2\n");
    }
}
