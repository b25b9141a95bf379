//! Hand-written SVG charts: grouped bars and lines, each with a title, axis
//! labels carrying units, a legend and a tooltip (`<title>`) on every mark.
//! No scripts, no external resources: the output works inline in HTML, as a
//! standalone `.svg` file, and through `resvg` for PNG.

use crate::fmt::{truncate, xml_escape};
use std::fmt::Write as _;

/// Tableau 10 (distinguishable, fine for most colour vision), then ten
/// darker and lighter companions for charts with many series.
pub const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#7f7f7f", "#a0cbe8", "#ffbe7d", "#8c1d18", "#2f6f6a", "#8cd17d", "#b6992d",
    "#d4a6c8", "#d37295", "#d7b5a6", "#393b79",
];
/// Colour of the legend swatch for faded (noise) bars.
const FADED_SWATCH: usize = 9;

/// Fonts in order of preference; DejaVu Sans is on every Debian system.
pub const FONT_FAMILY: &str = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

const MIN_WIDTH: f64 = 820.0;
const MAX_WIDTH: f64 = 1320.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 24.0;
const PLOT_H: f64 = 280.0;
const FONT: f64 = 12.0;

/// Rough width of `s` in pixels at `size` (DejaVu Sans averages ~0.6 em).
fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

fn f(v: f64) -> String {
    // One decimal keeps files small and output stable.
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A number for an axis tick: `0`, `2.5`, `450`, `12k`, `1.5M`, `2G`.
pub fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    let trim = |x: f64| {
        let s = format!("{x:.2}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_string()
        } else {
            s.to_string()
        }
    };
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

/// Ticks at 1, 2 or 5 × 10^n covering `[lo, hi]` (about `n` of them).
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if hi == lo && lo != 0.0 {
        (lo.min(0.0), hi.max(0.0) * 1.1 + f64::EPSILON)
    } else {
        (0.0, 1.0)
    };
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut ticks = Vec::new();
    let mut i = 0;
    loop {
        let t = start + step * i as f64;
        // Round away float residue (0.6000000000000001 → 0.6, -1e-17 → 0).
        let scale = 10f64.powi((1 - step.log10().floor() as i32).max(0));
        let t = (t * scale).round() / scale;
        let t = if t == 0.0 { 0.0 } else { t };
        ticks.push(t);
        if t >= hi - step * 1e-9 || i > 100 {
            break;
        }
        i += 1;
    }
    ticks
}

struct Legend {
    rows: Vec<Vec<(f64, String, usize, bool)>>, // (x, label, colour index, faded)
    /// A line chart's dash pattern per colour index: its swatch is a
    /// stroke in that pattern, not a filled square.
    dashes: Option<Vec<Option<&'static str>>>,
    /// A line chart's colour per series (by entry index), when not its index.
    colours: Vec<usize>,
}

/// Lay legend entries out in rows that fit `width`.
fn legend_layout(entries: &[(String, usize, bool)], width: f64) -> Legend {
    let mut rows: Vec<Vec<(f64, String, usize, bool)>> = vec![Vec::new()];
    let mut x = LEFT;
    for (label, color, faded) in entries {
        let label = truncate(label, 60);
        let w = 18.0 + text_w(&label, FONT) + 18.0;
        if x + w > width - RIGHT && !rows.last().is_some_and(Vec::is_empty) {
            rows.push(Vec::new());
            x = LEFT;
        }
        if let Some(row) = rows.last_mut() {
            row.push((x, label, *color, *faded));
        }
        x += w;
    }
    Legend {
        rows,
        dashes: None,
        colours: Vec::new(),
    }
}

fn draw_legend(out: &mut String, legend: &Legend, y0: f64) {
    for (r, row) in legend.rows.iter().enumerate() {
        let y = y0 + r as f64 * 20.0;
        for (x, label, color, faded) in row {
            let c = PALETTE[color % PALETTE.len()];
            if let Some(dashes) = &legend.dashes {
                let dash = dashes
                    .get(*color)
                    .copied()
                    .flatten()
                    .map(|d| format!(" stroke-dasharray=\"{d}\""))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\
                     <text x=\"{}\" y=\"{}\" font-size=\"{FONT}\">{}</text>",
                    f(*x - 4.0),
                    f(y - 4.0),
                    f(x + 14.0),
                    f(y - 4.0),
                    PALETTE[legend.colours.get(*color).copied().unwrap_or(*color) % PALETTE.len()],
                    f(x + 18.0),
                    f(y),
                    xml_escape(label)
                );
                continue;
            }
            let style = if *faded {
                format!("fill=\"{c}\" fill-opacity=\"0.3\" stroke=\"{c}\" stroke-dasharray=\"3 2\"")
            } else {
                format!("fill=\"{c}\"")
            };
            let _ = write!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" {style}/>\
                 <text x=\"{}\" y=\"{}\" font-size=\"{FONT}\">{}</text>",
                f(*x),
                f(y - 10.0),
                f(x + 18.0),
                f(y),
                xml_escape(label)
            );
        }
    }
}

/// Split a subtitle into lines that fit `width` pixels at 11 px.
fn wrap(s: &str, width: f64) -> Vec<String> {
    let max = ((width / (11.0 * 0.6)) as usize).max(20);
    let mut lines = vec![String::new()];
    for word in s.split_whitespace() {
        let cur = lines.last().map(|l| l.chars().count()).unwrap_or(0);
        if cur > 0 && cur + 1 + word.chars().count() > max {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(word);
        }
    }
    lines
}

/// Where the plot starts: below the title and the subtitle lines.
fn plot_top(subtitle: Option<&str>, w: f64) -> f64 {
    match subtitle {
        Some(s) => 48.0 + 14.0 * wrap(s, w - 40.0).len() as f64,
        None => 48.0,
    }
}

fn header(out: &mut String, w: f64, h: f64, title: &str, subtitle: Option<&str>) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"{FONT_FAMILY}\" role=\"img\" \
         aria-label=\"{t}\">{sig}<title>{t}</title>\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\
         <text x=\"{}\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#222\">{t}</text>",
        f(LEFT - 60.0),
        w = f(w),
        h = f(h),
        t = xml_escape(title),
        sig = crate::signature::SVG_SIGNATURE,
    );
    if let Some(s) = subtitle {
        for (i, line) in wrap(s, w - 40.0).iter().enumerate() {
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555\">{}</text>",
                f(LEFT - 60.0),
                f(42.0 + 14.0 * i as f64),
                xml_escape(line)
            );
        }
    }
}

fn y_axis_title(out: &mut String, label: &str, top: f64) {
    let cy = top + PLOT_H / 2.0;
    let _ = write!(
        out,
        "<text x=\"0\" y=\"0\" transform=\"translate(16 {}) rotate(-90)\" font-size=\"{FONT}\" \
         text-anchor=\"middle\" fill=\"#222\">{}</text>",
        f(cy),
        xml_escape(label)
    );
}

/// One series of a [`BarChart`]: a value (or none) per category.
#[derive(Debug, Clone, Default)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Text over each bar (drawn when the bars are wide enough).
    pub labels: Vec<Option<String>>,
    /// Bars drawn pale and dashed (e.g. a change within the noise).
    pub faded: Vec<bool>,
}

/// Grouped bars: one group per category, one bar per series.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub subtitle: Option<String>,
    /// With its unit, e.g. `Throughput (MB/s)`.
    pub y_label: String,
    pub x_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
    pub log_y: bool,
    /// Formats y tick labels.
    pub y_fmt: fn(f64) -> String,
    /// Legend entry explaining faded bars, if any are drawn.
    pub faded_legend: Option<String>,
}

impl BarChart {
    fn drawable(&self, v: Option<f64>) -> Option<f64> {
        v.filter(|v| v.is_finite() && (!self.log_y || *v > 0.0))
    }

    // long-function: one SVG drawn top to bottom (layout, ticks, bars, labels, axes, legend); the parts share a dozen layout values.
    pub fn render(&self) -> String {
        let n_cat = self.categories.len().max(1);
        // Compact groups: a category is as wide as the bars it has (series
        // without a value there take no room), plus half a bar of gap.
        let present: Vec<Vec<usize>> = (0..n_cat)
            .map(|ci| {
                (0..self.series.len())
                    .filter(|si| {
                        self.drawable(self.series[*si].values.get(ci).copied().flatten())
                            .is_some()
                    })
                    .collect()
            })
            .collect();
        let slots: f64 = present.iter().map(|p| p.len().max(1) as f64 + 0.5).sum();
        let cat_labels: Vec<String> = self.categories.iter().map(|c| truncate(c, 32)).collect();
        let layout = |left: f64| {
            // 18 px per bar, but no wider than a page (bars get thinner).
            let w = (left + RIGHT + slots * 18.0)
                .min(MAX_WIDTH)
                .max(MIN_WIDTH + left - LEFT);
            let unit = (w - left - RIGHT) / slots;
            let mut cat_x = Vec::with_capacity(n_cat); // (left, width) of each category
            let mut x = left;
            for p in &present {
                let cw = (p.len().max(1) as f64 + 0.5) * unit;
                cat_x.push((x, cw));
                x += cw;
            }
            (w, unit, cat_x)
        };
        let (mut w, mut unit, mut cat_x) = layout(LEFT);
        let rotate = cat_labels
            .iter()
            .zip(&cat_x)
            .any(|(c, (_, cw))| text_w(c, 11.0) > cw - 6.0);
        let mut left = LEFT;
        if rotate {
            // A label rotated by 35° reaches cos 35° ≈ 0.82 of its length to
            // the left of its category's centre: move the plot so none is cut.
            let need = cat_labels
                .iter()
                .zip(&cat_x)
                .map(|(c, (x, cw))| text_w(c, 11.0) * 0.82 - (x + cw / 2.0) + 8.0)
                .fold(0.0, f64::max);
            if need > 0.0 {
                left = LEFT + need;
                (w, unit, cat_x) = layout(left);
            }
        }
        let plot_w = w - left - RIGHT;
        let longest = cat_labels
            .iter()
            .map(|c| text_w(c, 11.0))
            .fold(0.0, f64::max);
        let xlab_h = if rotate { longest * 0.6 + 18.0 } else { 22.0 };

        let mut entries: Vec<(String, usize, bool)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i, false))
            .collect();
        let any_faded = self.series.iter().any(|s| s.faded.iter().any(|x| *x));
        if let (Some(fl), true) = (&self.faded_legend, any_faded) {
            entries.push((fl.clone(), FADED_SWATCH, true));
        }
        let legend = legend_layout(&entries, w);
        let top = plot_top(self.subtitle.as_deref(), w);
        let plot_bottom = top + PLOT_H;
        let legend_y = plot_bottom + xlab_h + 40.0;
        let h = legend_y + legend.rows.len() as f64 * 20.0 + 4.0;

        // Value range.
        let vals: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .filter(|v| self.drawable(Some(*v)).is_some())
            .collect();
        let (lo, hi) = if vals.is_empty() {
            (0.0, 1.0)
        } else {
            (
                vals.iter().copied().fold(f64::INFINITY, f64::min),
                vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        let (ticks, y_of): (Vec<f64>, Box<dyn Fn(f64) -> f64>) = if self.log_y {
            let e0 = lo.log10().floor() as i32;
            let e1 = (hi.log10().ceil() as i32).max(e0 + 1);
            let ticks: Vec<f64> = (e0..=e1).map(|e| 10f64.powi(e)).collect();
            let (a, b) = (f64::from(e0), f64::from(e1));
            (
                ticks,
                Box::new(move |v: f64| {
                    let v = v.max(10f64.powf(a));
                    plot_bottom - (v.log10() - a) / (b - a) * PLOT_H
                }),
            )
        } else {
            let ticks = nice_ticks(lo.min(0.0), hi.max(0.0), 5);
            let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
            let span = if b > a { b - a } else { 1.0 };
            (
                ticks,
                Box::new(move |v: f64| plot_bottom - (v - a) / span * PLOT_H),
            )
        };

        let mut out = String::new();
        header(&mut out, w, h, &self.title, self.subtitle.as_deref());
        // Grid and y ticks.
        for t in &ticks {
            let y = y_of(*t);
            let _ = write!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>\
                 <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">{}</text>",
                f(left),
                f(y),
                f(w - RIGHT),
                f(y),
                f(left - 6.0),
                f(y + 4.0),
                xml_escape(&(self.y_fmt)(*t))
            );
        }
        let base_y = if self.log_y { plot_bottom } else { y_of(0.0) };
        // Bars.
        // With few bars, keep a group's bars together instead of spreading
        // them over the whole width.
        let slot = unit.min(80.0);
        let bar_w = (slot * 0.92).min(72.0);
        for (ci, si_list) in present.iter().enumerate() {
            let (cx, cw) = cat_x[ci];
            let group_w = si_list.len() as f64 * slot;
            let x0 = cx + (cw - group_w) / 2.0;
            for (k, &si) in si_list.iter().enumerate() {
                let s = &self.series[si];
                let c = PALETTE[si % PALETTE.len()];
                let Some(v) = self.drawable(s.values.get(ci).copied().flatten()) else {
                    continue;
                };
                let x = x0 + k as f64 * slot + (slot - bar_w) / 2.0;
                let y = y_of(v);
                let (y_top, bh) = if y < base_y {
                    (y, base_y - y)
                } else {
                    (base_y, y - base_y)
                };
                let faded = s.faded.get(ci).copied().unwrap_or(false);
                let style = if faded {
                    format!(
                        "fill=\"{c}\" fill-opacity=\"0.3\" stroke=\"{c}\" stroke-dasharray=\"3 2\""
                    )
                } else {
                    format!("fill=\"{c}\"")
                };
                let label = s.labels.get(ci).cloned().flatten();
                let tip = format!(
                    "{} — {}: {}",
                    s.name,
                    self.categories.get(ci).map(String::as_str).unwrap_or(""),
                    label.clone().unwrap_or_else(|| (self.y_fmt)(v))
                );
                let _ = write!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {style}><title>{}</title></rect>",
                    f(x),
                    f(y_top),
                    f(bar_w.max(1.0)),
                    f(bh.max(0.5)),
                    xml_escape(&tip)
                );
                if let Some(l) = label.filter(|l| text_w(l, 10.0) <= slot + 4.0) {
                    let ty = if y < base_y { y - 4.0 } else { y + 12.0 };
                    let _ = write!(
                        out,
                        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
                        f(x + bar_w / 2.0),
                        f(ty),
                        xml_escape(&l)
                    );
                }
            }
        }
        // Axes: the zero line (or the bottom) and the left edge.
        let _ = write!(
            out,
            "<line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#333\"/>\
             <line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{pb}\" stroke=\"#333\"/>",
            l = f(left),
            r = f(w - RIGHT),
            b = f(base_y),
            t = f(top),
            pb = f(plot_bottom),
        );
        // Category labels.
        for (ci, c) in cat_labels.iter().enumerate() {
            let cx = cat_x[ci].0 + cat_x[ci].1 / 2.0;
            let y = plot_bottom + 16.0;
            if rotate {
                let _ = write!(
                    out,
                    "<text x=\"0\" y=\"0\" transform=\"translate({} {}) rotate(-35)\" font-size=\"11\" \
                     text-anchor=\"end\" fill=\"#222\">{}</text>",
                    f(cx + 4.0),
                    f(y - 4.0),
                    xml_escape(c)
                );
            } else {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
                    f(cx),
                    f(y),
                    xml_escape(c)
                );
            }
        }
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{FONT}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
            f(left + plot_w / 2.0),
            f(plot_bottom + xlab_h + 16.0),
            xml_escape(&self.x_label)
        );
        y_axis_title(&mut out, &self.y_label, top);
        draw_legend(&mut out, &legend, legend_y);
        out.push_str("</svg>\n");
        out
    }
}

/// How the x axis of a [`LineChart`] is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    Linear,
    /// Log base 2, ticks at the data's x values (block sizes, job counts).
    Log2,
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, Default)]
pub struct LineSeries {
    pub name: String,
    /// `(x, y)`, drawn in the order given.
    pub points: Vec<(f64, f64)>,
}

/// Lines with point markers over a numeric x axis.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub subtitle: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<LineSeries>,
    pub x_scale: XScale,
    pub x_fmt: fn(f64) -> String,
    pub y_fmt: fn(f64) -> String,
    /// Fix the top of the y axis (e.g. 100 for a percentage).
    pub y_max: Option<f64>,
    /// A labelled vertical line (e.g. the host's RAM on a file-size axis).
    pub x_marker: Option<(f64, String)>,
    /// Labelled x ranges drawn as pale bands with dashed edges (e.g. the
    /// phases of a run on a time axis).
    pub x_spans: Vec<(f64, f64, String)>,
}

impl LineChart {
    pub fn render(&self) -> String {
        self.render_styled(&[], &[])
    }

    /// [`render`](Self::render) with series `i` drawn in colour
    /// `colours[i]` and dash pattern `dashes[i]` (an SVG
    /// `stroke-dasharray`; none: solid); the legend shows each as a stroke
    /// in its pattern, so lines of one colour are told apart.
    // long-function: one SVG drawn top to bottom (scales, grid, phase bands, marker, lines, axes, legend); the parts share the scales.
    pub fn render_styled(&self, colours: &[usize], dashes: &[Option<&'static str>]) -> String {
        let w = MIN_WIDTH;
        let plot_w = w - LEFT - RIGHT;
        let entries: Vec<(String, usize, bool)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i, false))
            .collect();
        let mut legend = legend_layout(&entries, w);
        if !dashes.is_empty() {
            // Entries are indexed by series; each series' colour and dash.
            let mut d: Vec<Option<&'static str>> = dashes.to_vec();
            d.resize(self.series.len(), None);
            legend.dashes = Some(d);
            legend.colours = colours.to_vec();
        }
        let top = plot_top(self.subtitle.as_deref(), w);
        let plot_bottom = top + PLOT_H;
        let legend_y = plot_bottom + 22.0 + 40.0;
        let h = legend_y + legend.rows.len() as f64 * 20.0 + 4.0;

        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| {
                x.is_finite() && y.is_finite() && (self.x_scale == XScale::Linear || *x > 0.0)
            })
            .collect();
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let x_lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let x_hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let y_hi = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        let y_ticks = nice_ticks(0.0, self.y_max.unwrap_or(y_hi).max(y_hi), 5);
        let y_top = y_ticks[y_ticks.len() - 1].max(f64::MIN_POSITIVE);
        let y_of = |v: f64| plot_bottom - v / y_top * PLOT_H;

        let (x_ticks, x_of): (Vec<f64>, Box<dyn Fn(f64) -> f64>) = match self.x_scale {
            XScale::Log2 if !xs.is_empty() => {
                let mut t = xs.clone();
                t.sort_by(f64::total_cmp);
                t.dedup();
                let (a, b) = (x_lo.log2(), x_hi.log2());
                let span = if b > a { b - a } else { 1.0 };
                let pad = plot_w * 0.05;
                (
                    t,
                    Box::new(move |x: f64| {
                        LEFT + pad + (x.log2() - a) / span * (plot_w - 2.0 * pad)
                    }),
                )
            }
            _ => {
                let (lo, hi) = if xs.is_empty() {
                    (0.0, 1.0)
                } else {
                    (x_lo.min(0.0), x_hi)
                };
                let t = nice_ticks(lo, hi, 8);
                let (a, b) = (t[0], t[t.len() - 1]);
                let span = if b > a { b - a } else { 1.0 };
                (t, Box::new(move |x: f64| LEFT + (x - a) / span * plot_w))
            }
        };

        let mut out = String::new();
        header(&mut out, w, h, &self.title, self.subtitle.as_deref());
        for t in &y_ticks {
            let y = y_of(*t);
            let _ = write!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e3e3\"/>\
                 <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#333\">{}</text>",
                f(LEFT),
                f(y),
                f(w - RIGHT),
                f(y),
                f(LEFT - 6.0),
                f(y + 4.0),
                xml_escape(&(self.y_fmt)(*t))
            );
        }
        // Thin out x tick labels that would overlap.
        let mut last_x = f64::NEG_INFINITY;
        for t in &x_ticks {
            let x = x_of(*t);
            let label = (self.x_fmt)(*t);
            let lw = text_w(&label, 11.0);
            let _ = write!(
                out,
                "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#e3e3e3\"/>",
                f(top),
                f(plot_bottom),
                x = f(x)
            );
            if x - lw / 2.0 > last_x + 4.0 {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">{}</text>",
                    f(x),
                    f(plot_bottom + 16.0),
                    xml_escape(&label)
                );
                last_x = x + lw / 2.0;
            }
        }
        for (i, (a, b, label)) in self.x_spans.iter().enumerate() {
            let (xa, xb) = (x_of(*a), x_of(*b));
            if !(xa.is_finite() && xb.is_finite()) || xb < xa {
                continue;
            }
            let (xa, xb) = (xa.max(LEFT), xb.min(w - RIGHT));
            let _ = write!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#7f7f7f\" \
                 fill-opacity=\"0.07\"><title>{}</title></rect>\
                 <line x1=\"{xa}\" y1=\"{t}\" x2=\"{xa}\" y2=\"{pb}\" stroke=\"#888\" stroke-dasharray=\"3 3\"/>\
                 <line x1=\"{xb}\" y1=\"{t}\" x2=\"{xb}\" y2=\"{pb}\" stroke=\"#888\" stroke-dasharray=\"3 3\"/>\
                 <text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\">{}</text>",
                f(xa),
                f(top),
                f((xb - xa).max(0.5)),
                f(PLOT_H),
                xml_escape(label),
                f(xa + 3.0),
                // Alternate label heights so neighbours do not overlap.
                f(top + 11.0 + (i % 2) as f64 * 12.0),
                xml_escape(&truncate(label, ((xb - xa) / 6.0).max(4.0) as usize)),
                xa = f(xa),
                xb = f(xb),
                t = f(top),
                pb = f(plot_bottom),
            );
        }
        if let Some((mx, label)) = &self.x_marker {
            let x = x_of(*mx);
            if x.is_finite() && (LEFT..=w - RIGHT).contains(&x) {
                let _ = write!(
                    out,
                    "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#c0392b\" \
                     stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" font-size=\"11\" \
                     fill=\"#c0392b\">{}</text>",
                    f(top),
                    f(plot_bottom),
                    f(x + 4.0),
                    f(top + 12.0),
                    xml_escape(label),
                    x = f(x)
                );
            }
        }
        for (si, s) in self.series.iter().enumerate() {
            let c = PALETTE[colours.get(si).copied().unwrap_or(si) % PALETTE.len()];
            let dash = dashes
                .get(si)
                .copied()
                .flatten()
                .map(|d| format!(" stroke-dasharray=\"{d}\""))
                .unwrap_or_default();
            let p: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|(x, y)| {
                    x.is_finite() && y.is_finite() && (self.x_scale == XScale::Linear || *x > 0.0)
                })
                .collect();
            // A point with a non-finite y breaks the line (a gap between
            // phases, where nothing of that series was measured).
            for segment in s.points.split(|(_, y)| !y.is_finite()) {
                let path: Vec<String> = segment
                    .iter()
                    .filter(|(x, _)| x.is_finite() && (self.x_scale == XScale::Linear || *x > 0.0))
                    .map(|(x, y)| format!("{},{}", f(x_of(*x)), f(y_of(*y))))
                    .collect();
                if path.is_empty() {
                    continue;
                }
                let _ = write!(
                    out,
                    "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{dash}/>",
                    path.join(" ")
                );
            }
            if p.len() <= 40 {
                for (x, y) in &p {
                    let _ = write!(
                        out,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{c}\"><title>{}: {} → {}</title></circle>",
                        f(x_of(*x)),
                        f(y_of(*y)),
                        xml_escape(&s.name),
                        xml_escape(&(self.x_fmt)(*x)),
                        xml_escape(&(self.y_fmt)(*y))
                    );
                }
            }
        }
        let _ = write!(
            out,
            "<line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#333\"/>\
             <line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\" stroke=\"#333\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"{FONT}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
            f(LEFT + plot_w / 2.0),
            f(plot_bottom + 38.0),
            xml_escape(&self.x_label),
            l = f(LEFT),
            r = f(w - RIGHT),
            b = f(plot_bottom),
            t = f(top),
        );
        y_axis_title(&mut out, &self.y_label, top);
        draw_legend(&mut out, &legend, legend_y);
        out.push_str("</svg>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 1000.0, 5),
            vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]
        );
        let t = nice_ticks(0.0, 1061.8, 5);
        assert_eq!(t[0], 0.0);
        assert!(*t.last().unwrap() >= 1061.8);
        assert!(t.len() <= 8, "{t:?}");
        let t = nice_ticks(-53.0, 113.0, 5);
        assert!(
            t.contains(&0.0) && t[0] <= -53.0 && *t.last().unwrap() >= 113.0,
            "{t:?}"
        );
        assert_eq!(nice_ticks(0.0, 0.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }

    #[test]
    fn tick_labels() {
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(fmt_tick(2.5), "2.5");
        assert_eq!(fmt_tick(450.0), "450");
        assert_eq!(fmt_tick(12_000.0), "12k");
        assert_eq!(fmt_tick(1_500_000.0), "1.5M");
        assert_eq!(fmt_tick(2e9), "2G");
    }

    fn bars() -> BarChart {
        BarChart {
            title: "T <&>".into(),
            subtitle: Some("sub".into()),
            y_label: "Throughput (MB/s)".into(),
            x_label: "Run".into(),
            categories: vec!["a".into(), "b".into()],
            series: vec![
                BarSeries {
                    name: "s1".into(),
                    values: vec![Some(10.0), None],
                    labels: vec![Some("+10 %".into()), None],
                    faded: vec![false, false],
                },
                BarSeries {
                    name: "s2".into(),
                    values: vec![Some(-5.0), Some(3.0)],
                    labels: vec![],
                    faded: vec![true, false],
                },
            ],
            log_y: false,
            y_fmt: fmt_tick,
            faded_legend: Some("noise".into()),
        }
    }

    #[test]
    fn bar_chart_has_title_axes_legend_and_bars() {
        let svg = bars().render();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("T &lt;&amp;&gt;"), "title is escaped");
        assert!(svg.contains(">Throughput (MB/s)</text>"));
        assert!(svg.contains(">Run</text>"));
        assert!(svg.contains(">s1</text>") && svg.contains(">s2</text>"));
        assert!(svg.contains(">noise</text>"));
        // Three bars drawn (one value missing), one faded.
        assert_eq!(svg.matches("<rect").count(), 1 + 3 + 3, "{svg}");
        assert_eq!(svg.matches("fill-opacity=\"0.3\"").count(), 2);
        assert!(svg.contains(">+10 %</text>"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn log_scale_bars_skip_non_positive_values() {
        let mut c = bars();
        c.log_y = true;
        let svg = c.render();
        // -5 cannot be drawn on a log axis.
        assert_eq!(svg.matches("<rect").count(), 1 + 2 + 3);
        assert!(svg.contains(">1</text>") && svg.contains(">10</text>"));
    }

    #[test]
    fn line_chart_log2_ticks_at_the_data() {
        let c = LineChart {
            title: "Throughput vs block size".into(),
            subtitle: None,
            x_label: "Block size".into(),
            y_label: "MB/s".into(),
            series: vec![LineSeries {
                name: "read".into(),
                points: vec![(4096.0, 300.0), (65536.0, 900.0), (1048576.0, 1400.0)],
            }],
            x_scale: XScale::Log2,
            x_fmt: |x| storlab_types::format_bytes(x as u64),
            y_fmt: fmt_tick,
            y_max: None,
            x_marker: Some((262144.0, "RAM".into())),
            x_spans: Vec::new(),
        };
        let svg = c.render();
        assert!(svg.contains(">RAM</text>"));
        for l in [">4 KiB<", ">64 KiB<", ">1 MiB<"] {
            assert!(svg.contains(l), "missing tick {l}");
        }
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
    }
}
