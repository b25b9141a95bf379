//! `storlab plan catalog`: the hardware catalog with sources.

use super::*;

#[derive(Args, Debug)]
pub(super) struct CatalogArgs {
    /// Extra catalog file(s) (TOML); entries with a built-in name replace it, and
    /// [override.drive."NAME"] tables change single fields of one
    #[arg(long, value_name = "FILE")]
    catalog: Vec<PathBuf>,
    #[command(flatten)]
    out: super::OutputArgs,
}

/// The catalog, listed.
struct Listing(Catalog);

impl Document for Listing {
    fn human(&self) -> Result<String> {
        Ok(storlab_plan::render::render_catalog(
            &self.0,
            Style::terminal(table),
        ))
    }
    fn json(&self) -> Result<String> {
        let doc = storlab_plan::workflow::CatalogDoc::new(&self.0);
        crate::output::json_text(&serde_json::to_value(&doc)?)
    }
}

pub(super) fn catalog(a: CatalogArgs) -> Result<Reply> {
    let cat = load_catalog(&a.catalog)?;
    Ok(Reply::doc(Listing(cat), a.out.rendering()))
}
