//! Charts of a sweep (`storlab sweep --chart`): MB/s against the first
//! varied option with one line per value of the second ([`sweep_lines`],
//! log axis where the x values are powers of two), and the IOzone-style
//! heat map of file size × record size coloured by MB/s with the RAM and
//! page-cache sizes marked ([`heat_map`]). Pure: data in, SVG text out.

use crate::fmt::xml_escape;
use crate::svg::{FONT_FAMILY, LineChart, LineSeries, XScale, fmt_tick};
use std::fmt::Write as _;

/// A size in bytes as an axis label: `4 KiB`, `1 MiB`, `2 GiB`.
pub fn size_label(v: f64) -> String {
    let v = v.max(0.0);
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let d = (1u64 << shift) as f64;
        if v >= d {
            let x = v / d;
            return if (x - x.round()).abs() < 1e-9 {
                format!("{} {unit}", x.round())
            } else {
                format!("{x:.1} {unit}")
            };
        }
    }
    format!("{v:.0} B")
}

fn is_power_of_two(v: f64) -> bool {
    v >= 1.0 && v.fract() == 0.0 && (v as u64).is_power_of_two()
}

/// MB/s against one varied option. `x_is_size` labels the axis in bytes;
/// the axis is log 2 when every x is a power of two. `ram_bytes` marks the
/// RAM on a size axis.
pub fn sweep_lines(
    title: &str,
    subtitle: Option<String>,
    x_label: &str,
    x_is_size: bool,
    series: Vec<LineSeries>,
    ram_bytes: Option<f64>,
) -> String {
    let log = series
        .iter()
        .flat_map(|s| s.points.iter())
        .all(|&(x, _)| is_power_of_two(x));
    LineChart {
        title: title.to_string(),
        subtitle,
        x_label: x_label.to_string(),
        y_label: "throughput (MB/s, 10^6 bytes/s)".into(),
        series,
        x_scale: if log { XScale::Log2 } else { XScale::Linear },
        x_fmt: if x_is_size { size_label } else { fmt_tick },
        y_fmt: fmt_tick,
        y_max: None,
        x_marker: ram_bytes
            .filter(|_| x_is_size)
            .map(|r| (r, format!("RAM {}", size_label(r)))),
        x_spans: Vec::new(),
    }
    .render()
}

/// A rate for a cell: `850`, `3450`, `18.3k`.
fn short_rate(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.1}k", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One cell of the heat map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeatCell {
    pub file_bytes: u64,
    pub record_bytes: u64,
    pub mb_per_s: f64,
}

/// Viridis-like ramp from dark blue (low) to yellow (high), `t` in 0..=1.
fn ramp(t: f64) -> String {
    const STOPS: [(f64, [f64; 3]); 5] = [
        (0.0, [68.0, 1.0, 84.0]),
        (0.25, [59.0, 82.0, 139.0]),
        (0.5, [33.0, 145.0, 140.0]),
        (0.75, [94.0, 201.0, 98.0]),
        (1.0, [253.0, 231.0, 37.0]),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let i = STOPS.iter().rposition(|(s, _)| *s <= t).unwrap_or(0).min(3);
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let f = (t - a.0) / (b.0 - a.0);
    let c: Vec<u8> = (0..3)
        .map(|k| (a.1[k] + (b.1[k] - a.1[k]) * f).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The IOzone-style matrix: rows = file size (small at the top), columns =
/// record (block) size, colour = MB/s on a log scale. Horizontal lines mark
/// where the file size passes the page cache and the RAM.
pub fn heat_map(
    title: &str,
    cells: &[HeatCell],
    ram_bytes: u64,
    page_cache_bytes: Option<u64>,
) -> String {
    let mut rows: Vec<u64> = cells.iter().map(|c| c.file_bytes).collect();
    rows.sort_unstable();
    rows.dedup();
    let mut cols: Vec<u64> = cells.iter().map(|c| c.record_bytes).collect();
    cols.sort_unstable();
    cols.dedup();
    let (cw, ch) = (78.0, 34.0);
    let (left, top) = (110.0, 70.0);
    let plot_w = cw * cols.len().max(1) as f64;
    let plot_h = ch * rows.len().max(1) as f64;
    let title_w = title.chars().count() as f64 * 16.0 * 0.62 + left + 20.0;
    let width = (left + plot_w + 300.0).max(560.0).max(title_w);
    let height = top + plot_h + 90.0;
    let vals: Vec<f64> = cells
        .iter()
        .map(|c| c.mb_per_s)
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(0.0, f64::max);
    let scale = |v: f64| {
        if v.is_nan() || v <= 0.0 || hi <= lo {
            0.5
        } else {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        }
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"{FONT_FAMILY}\" font-size=\"12\">{}\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"{left}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{left}\" y=\"44\" fill=\"#555\">MB/s (10^6 bytes/s) by file size and record size; colour on a log scale</text>\n",
        crate::signature::SVG_SIGNATURE,
        xml_escape(title)
    );
    for (ci, c) in cols.iter().enumerate() {
        let x = left + ci as f64 * cw + cw / 2.0;
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top + plot_h + 18.0,
            size_label(*c as f64)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">record size (block size)</text>",
        left + plot_w / 2.0,
        top + plot_h + 40.0
    );
    let _ = writeln!(
        s,
        "<text x=\"20\" y=\"{:.1}\" transform=\"rotate(-90 20 {:.1})\" text-anchor=\"middle\">file size</text>",
        top + plot_h / 2.0,
        top + plot_h / 2.0
    );
    for (ri, r) in rows.iter().enumerate() {
        let y = top + ri as f64 * ch;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + ch / 2.0 + 4.0,
            size_label(*r as f64)
        );
        for (ci, c) in cols.iter().enumerate() {
            let x = left + ci as f64 * cw;
            let cell = cells
                .iter()
                .find(|k| k.file_bytes == *r && k.record_bytes == *c);
            match cell {
                Some(k) => {
                    let t = scale(k.mb_per_s);
                    let ink = if t > 0.6 { "#000" } else { "#fff" };
                    let _ = writeln!(
                        s,
                        "<g><title>file {}, record {}: {:.1} MB/s</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw}\" height=\"{ch}\" fill=\"{}\" stroke=\"#fff\"/>\
                         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text></g>",
                        size_label(*r as f64),
                        size_label(*c as f64),
                        k.mb_per_s,
                        ramp(t),
                        x + cw / 2.0,
                        y + ch / 2.0 + 4.0,
                        short_rate(k.mb_per_s)
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw}\" height=\"{ch}\" fill=\"#eeeeee\" stroke=\"#fff\"><title>not measured</title></rect>"
                    );
                }
            }
        }
    }
    // Where the file size passes the page cache and the RAM: a line between
    // the last row below and the first row at or above the size.
    let mut used: Vec<usize> = Vec::new();
    let mut mark = |bytes: u64, label: String, dash: &str, colour: &str| {
        let i = rows.iter().position(|r| *r >= bytes).unwrap_or(rows.len());
        let y = top + i as f64 * ch;
        // Two marks on one boundary: the second label goes below the first.
        let label_dy = 14.0 * used.iter().filter(|&&u| u == i).count() as f64;
        used.push(i);
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"3\" stroke-dasharray=\"{dash}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{}</text>",
            left - 4.0,
            left + plot_w + 4.0,
            left + plot_w + 8.0,
            y + 4.0 + label_dy,
            xml_escape(&label)
        );
    };
    if let Some(pc) = page_cache_bytes {
        mark(
            pc,
            format!("page cache {} (available)", size_label(pc as f64)),
            "6 4",
            "#d62728",
        );
    }
    if ram_bytes > 0 {
        mark(
            ram_bytes,
            format!("RAM {}", size_label(ram_bytes as f64)),
            "none",
            "#000000",
        );
    }
    colour_key(&mut s, left, top + plot_h + 56.0, lo, hi);
    s.push_str("</svg>\n");
    s
}

/// The colour ramp with the lowest and highest MB/s it spans.
fn colour_key(s: &mut String, left: f64, ky: f64, lo: f64, hi: f64) {
    for i in 0..10 {
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{ky:.1}\" width=\"20\" height=\"12\" fill=\"{}\"/>",
            left + i as f64 * 20.0,
            ramp(i as f64 / 9.0)
        );
    }
    if hi > 0.0 {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{} … {} MB/s</text>",
            left + 210.0,
            ky + 11.0,
            short_rate(lo),
            short_rate(hi)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells() -> Vec<HeatCell> {
        let mut v = Vec::new();
        for (i, f) in [1u64 << 20, 64 << 20, 4 << 30].into_iter().enumerate() {
            for (j, r) in [4096u64, 65536, 1 << 20].into_iter().enumerate() {
                v.push(HeatCell {
                    file_bytes: f,
                    record_bytes: r,
                    mb_per_s: 100.0 * (3 - i) as f64 * (j + 1) as f64,
                });
            }
        }
        v
    }

    #[test]
    fn heat_map_is_valid_svg_with_marks() {
        let svg = heat_map("reads", &cells(), 1 << 30, Some(512 << 20));
        assert!(well_formed(&svg), "well-formed");
        assert!(svg.contains("RAM 1 GiB"));
        assert!(svg.contains("page cache 512 MiB"));
        assert_eq!(svg.matches("<g><title>file").count(), 9);
        assert!(svg.contains("4 GiB") && svg.contains("64 KiB"));
        // The PNG renderer accepts it.
        if let Ok(png) = crate::svg_to_png(&svg, 1.0) {
            assert_eq!(&png[1..4], b"PNG");
        }
    }

    #[test]
    fn lines_use_log_axes_for_powers_of_two() {
        let s = vec![LineSeries {
            name: "numjobs=1".into(),
            points: vec![(4096.0, 100.0), (65536.0, 400.0)],
        }];
        let svg = sweep_lines("bs sweep", None, "block size", true, s.clone(), Some(8e9));
        assert!(svg.contains("4 KiB") && svg.contains("64 KiB"), "{svg}");
        assert!(well_formed(&svg));
        assert_eq!(size_label(1536.0), "1.5 KiB");
        assert!(is_power_of_two(4096.0) && !is_power_of_two(3.0) && !is_power_of_two(0.5));
        assert_eq!(ramp(0.0), "#440154");
        assert_eq!(ramp(1.0), "#fde725");
        assert_eq!(ramp(f64::NAN), "#440154");
    }

    /// Parsed as SVG by usvg (the PNG renderer's parser).
    fn well_formed(svg: &str) -> bool {
        resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).is_ok()
    }
}
