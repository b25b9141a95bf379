//! `storlab sim`'s listing (`storlab_sim::listing`) in the one listing
//! style: a title line, the table, and the notes under it.

use storlab_sim::SweepPoint;

/// The listing of `points`, swept over `key` (none without `--vary`).
pub fn render(points: &[SweepPoint], key: Option<&str>) -> String {
    let l = storlab_sim::listing(points, key);
    let mut t = crate::style::list_table();
    t.set_header(l.header);
    for row in l.rows {
        t.add_row(row);
    }
    let mut out = l.title.map(|t| t + "\n").unwrap_or_default();
    out += &t.to_string();
    out.push('\n');
    for n in l.notes {
        out += &n;
        out.push('\n');
    }
    out
}
