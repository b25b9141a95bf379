//! SVG → PNG with `resvg` (pure Rust), for `storlab report --format png`.
//!
//! Text needs a font: the system fonts are loaded through fontdb (Debian:
//! `fonts-dejavu-core`). Without any font a chart would lose every label, so
//! that is an error telling the user to install one or to use SVG.

use crate::error::ReportError;
use crate::svg::FONT_FAMILY;
use resvg::{tiny_skia, usvg};

/// A chart file's bytes: the SVG itself, or (`png`) rasterised at scale 2,
/// as `sweep --chart` and `sim --chart` write them.
pub fn chart_file(svg: String, png: bool) -> Result<Vec<u8>, ReportError> {
    if png {
        svg_to_png(&svg, 2.0)
    } else {
        Ok(svg.into_bytes())
    }
}

/// Render an SVG document to PNG bytes at `scale` (2.0 gives a crisp image
/// for documents and slides).
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, ReportError> {
    if !(scale.is_finite() && scale > 0.0 && scale <= 8.0) {
        return Err(ReportError::Png(format!(
            "scale {scale} is outside 0 < scale <= 8"
        )));
    }
    let mut opt = usvg::Options::default();
    {
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        if db.is_empty() {
            return Err(ReportError::Png(
                "no fonts found on this system (install fonts-dejavu-core)".into(),
            ));
        }
        // Generic `sans-serif` falls back to the first family we ask for
        // that exists.
        let want = FONT_FAMILY
            .split(',')
            .map(str::trim)
            .find(|fam| {
                db.faces()
                    .any(|f| f.families.iter().any(|(name, _)| name == fam))
            })
            .map(str::to_string);
        if let Some(fam) = want {
            db.set_sans_serif_family(fam);
        }
    }
    let tree = usvg::Tree::from_str(svg, &opt)
        .map_err(|e| ReportError::Png(format!("the SVG did not parse: {e}")))?;
    let size = tree.size().to_int_size();
    let (w, h) = (
        (size.width() as f32 * scale).ceil() as u32,
        (size.height() as f32 * scale).ceil() as u32,
    );
    let mut pixmap = tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| ReportError::Png(format!("an image of {w}×{h} pixels is not possible")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map(crate::signature::sign_png)
        .map_err(|e| ReportError::Png(format!("PNG encoding failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::compare_runs;

    /// An SVG chart file is the SVG as made.
    #[test]
    fn an_svg_chart_file_is_the_svg() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>".to_string();
        assert_eq!(chart_file(svg.clone(), false).unwrap(), svg.into_bytes());
    }

    fn have_fonts() -> bool {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        !db.is_empty()
    }

    #[test]
    fn renders_a_chart_with_text() {
        let runs = compare_runs();
        let chart = crate::chart(&runs, Some(0), "throughput").unwrap();
        if !have_fonts() {
            storlab_testkit::skip(
                "renders_a_chart_with_text",
                "no system fonts (apt-get install fonts-dejavu-core); checking the error says so instead",
            );
            let e = svg_to_png(&chart.svg, 1.0).unwrap_err().to_string();
            assert!(e.contains("fonts-dejavu-core"), "{e}");
            return;
        }
        let png = svg_to_png(&chart.svg, 1.0).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let img = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert!(img.width() >= 820);
        // Count dark pixels in the title band (text is drawn when a font exists).
        let dark = (0..img.width())
            .flat_map(|x| (8..30).map(move |y| (x, y)))
            .filter(|(x, y)| img.pixel(*x, *y).is_some_and(|p| p.red() < 100))
            .count();
        assert!(dark > 50, "title text missing: {dark} dark pixels");
        let twice = svg_to_png(&chart.svg, 2.0).unwrap();
        let img2 = resvg::tiny_skia::Pixmap::decode_png(&twice).unwrap();
        assert_eq!(img2.width(), img.width() * 2);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(svg_to_png("not svg", 1.0).is_err());
        assert!(svg_to_png("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", 0.0).is_err());
    }
}
