//! `storlab plan catalog`: the hardware catalog with sources.

use super::*;

#[derive(Args, Debug)]
pub(super) struct CatalogArgs {
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[command(flatten)]
    out: super::OutputArgs,
}

/// One section of the catalog listing: the shared table style, wrapped to
/// 160 columns.
fn section(header: Vec<&str>) -> Table {
    let mut t = table();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(160);
    t.set_header(header);
    t
}

/// A rate that may be absent from the catalog.
fn opt_rate(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), format_rate)
}

pub(super) fn catalog(a: CatalogArgs) -> Result<Outcome> {
    let cat = load_catalog(&a.catalog)?;
    if a.out.format() == Format::Json {
        let doc = serde_json::json!({
            "schema_version": storlab_plan::PLAN_SCHEMA_VERSION,
            "kind": "plan.catalog",
            "drives": cat.drives().map(|d| serde_json::json!({
                "entry": d,
                "resolved": cat.drive(d.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
            "controllers": cat.controllers().map(|c| serde_json::json!({
                "entry": c,
                "resolved": cat.controller(c.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
            "enclosures": cat.enclosures().collect::<Vec<_>>(),
            "links": cat.links().map(|l| serde_json::json!({
                "entry": l,
                "resolved": cat.link(l.name.get_ref()).ok(),
            })).collect::<Vec<_>>(),
        });
        output::print_json(&doc)?;
        return Ok(Outcome::Ok);
    }
    let mut out = String::new();
    let mut t = section(vec![
        "drive",
        "capacity",
        "performance",
        "MTBF (AFR)",
        "BER",
        "source",
    ]);
    for e in cat.drives() {
        let Ok(d) = cat.drive(e.name.get_ref()) else {
            continue;
        };
        let perf = match &d.media {
            DriveMedia::Hdd {
                rpm,
                avg_seek_s,
                seq_bytes_per_s,
            } => format!(
                "{rpm:.0} rpm, seek {:.1} ms, {}",
                avg_seek_s * 1e3,
                format_rate(*seq_bytes_per_s)
            ),
            DriveMedia::Ssd {
                read_iops,
                write_iops,
                seq_read_bytes_per_s,
                seq_write_bytes_per_s,
            } => format!(
                "SSD {}/{} IOPS, {}/{}",
                thousands(*read_iops as u64),
                thousands(*write_iops as u64),
                format_rate(*seq_read_bytes_per_s),
                format_rate(*seq_write_bytes_per_s)
            ),
        };
        t.add_row(vec![
            d.name.clone(),
            format!("{:.2} TB", d.capacity_bytes as f64 / 1e12),
            perf,
            format!(
                "{} h ({:.2}%)",
                thousands(d.mtbf_hours.round() as u64),
                afr_from_mtbf(d.mtbf_hours) * 100.0
            ),
            format!("{:.0e}", d.ber_per_bit),
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = section(vec![
        "controller",
        "back-end",
        "host",
        "write-back",
        "limit read / write",
        "source",
    ]);
    for e in cat.controllers() {
        let Ok(c) = cat.controller(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            c.name.clone(),
            format!(
                "{} ({})",
                c.backend.name,
                format_rate(c.backend.bytes_per_s)
            ),
            format!("{} ({})", c.host.name, format_rate(c.host.bytes_per_s)),
            if c.write_back { "yes" } else { "no" }.to_string(),
            format!(
                "{} / {}",
                opt_rate(c.max_read_bytes_per_s.or(c.max_bytes_per_s)),
                opt_rate(c.max_write_bytes_per_s.or(c.max_bytes_per_s))
            ),
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = section(vec!["enclosure", "slots", "uplink", "source"]);
    for e in cat.enclosures() {
        let Ok(c) = cat.enclosure(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            c.name.clone(),
            c.slots.to_string(),
            format!("{} ({})", c.uplink.name, format_rate(c.uplink.bytes_per_s)),
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = section(vec![
        "link (add x<N> for lanes/ports)",
        "usable per lane, read / write",
        "source",
    ]);
    for e in cat.links() {
        let Ok(l) = cat.link(e.name.get_ref()) else {
            continue;
        };
        t.add_row(vec![
            format!(
                "{}{}",
                l.name,
                if l.shared_bus { " (shared bus)" } else { "" }
            ),
            format!(
                "{} / {}",
                format_rate(l.bytes_per_s),
                format_rate(l.write_rate())
            ),
            e.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    output::print(&out)?;
    Ok(Outcome::Ok)
}
