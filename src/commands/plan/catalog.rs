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
    output::print(&storlab_plan::render::render_catalog(&cat, table))?;
    Ok(Outcome::Ok)
}
