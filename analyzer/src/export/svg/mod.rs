//! A small SVG writer for the plots: a document with title and subtitle ([`Doc`]), axes
//! ([`axis`]), and the charts: share bars ([`bars`]), small-multiple histograms
//! ([`histogram`]) and points with spread ([`points`]).
//!
//! Hand-written because plotters' SVG backend lays out text only with a font-metrics feature
//! (font-kit or a bundled TTF); these charts need positioned `<text>` elements and a width
//! estimate ([`text_width`]) to keep every label inside the view box.

pub mod axis;
pub mod bars;
pub mod histogram;
pub mod points;

use std::fmt::Write as _;

use super::palette;

/// The font the widths are estimated for, then the fallbacks.
const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, sans-serif";
/// Body text size (px).
pub const SIZE: f64 = 12.0;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Advance width of `c` in em, rounded up from DejaVu Sans' metrics (wider than most
/// sans-serif faces, so text that fits here fits in those too).
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' => 0.3,
        ' ' | 'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '-' => 0.4,
        'm' | 'w' | 'M' | 'W' | '%' | '…' | '—' => 1.0,
        'A'..='Z' => 0.76,
        _ => 0.64,
    }
}

/// Estimated width in px of `text` at `size` px.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().map(char_em).sum::<f64>() * size
}

/// Horizontal text alignment.
#[derive(Clone, Copy)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn attr(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// An SVG document being written: `w` × `h` px, title (and subtitle lines) at the top.
pub struct Doc {
    s: String,
    pub w: f64,
    pub h: f64,
}

/// Height of the title block for `subtitle` lines.
pub fn header_height(subtitle: &[String]) -> f64 {
    34.0 + subtitle.len() as f64 * 16.0
}

/// The width a document needs for its title and subtitle lines.
pub fn header_width(title: &str, subtitle: &[String]) -> f64 {
    let t = text_width(title, 15.0) * 1.1;
    let s = subtitle
        .iter()
        .map(|l| text_width(l, SIZE))
        .fold(0.0, f64::max);
    t.max(s) + 40.0
}

impl Doc {
    /// A document at least as wide as its title and subtitle need.
    pub fn new(w: f64, h: f64, title: &str, subtitle: &[String]) -> Doc {
        let w = w.max(header_width(title, subtitle)).ceil();
        let h = h.ceil();
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" font-size="{SIZE}">"#
        );
        let _ = write!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = write!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            w / 2.0,
            esc(title)
        );
        for (i, line) in subtitle.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle" fill="{}">{}</text>"#,
                w / 2.0,
                40.0 + i as f64 * 16.0,
                palette::NOTE,
                esc(line)
            );
        }
        Doc { s, w, h }
    }
    pub fn text(&mut self, x: f64, y: f64, anchor: Anchor, t: &str) {
        self.text_sized(x, y, anchor, t, SIZE);
    }
    pub fn text_sized(&mut self, x: f64, y: f64, anchor: Anchor, t: &str, size: f64) {
        let _ = write!(
            self.s,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{}" font-size="{size}">{}</text>"#,
            anchor.attr(),
            esc(t)
        );
    }
    /// A filled rectangle with a hover tip.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
        let _ = write!(
            self.s,
            r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="{fill}"><title>{}</title></rect>"#,
            w.max(0.0),
            h.max(0.0),
            esc(tip)
        );
    }
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) {
        let _ = write!(
            self.s,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"/>"#
        );
    }
    /// Raw SVG markup.
    pub fn raw(&mut self, markup: &str) {
        self.s.push_str(markup);
    }
    /// One legend entry a line from (x, y): a swatch and the series name; only what the
    /// caller passes, which must be what it drew.
    pub fn legend(&mut self, x: f64, y: f64, entries: &[(String, &str)]) {
        for (i, (name, colour)) in entries.iter().enumerate() {
            let yy = y + i as f64 * 18.0;
            let _ = write!(
                self.s,
                r#"<g class="legend-entry"><rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{:.1}" y="{yy:.1}">{}</text></g>"#,
                yy - 10.0,
                x + 18.0,
                esc(name)
            );
        }
    }
    pub fn finish(mut self) -> String {
        self.s.push_str("</svg>\n");
        self.s
    }
}

/// Width a legend of `names` needs.
pub fn legend_width(names: &[String]) -> f64 {
    names
        .iter()
        .map(|n| text_width(n, SIZE))
        .fold(0.0, f64::max)
        + 30.0
}

/// A plot that has nothing to draw: its title and why, instead of empty axes.
pub fn message(title: &str, why: &[String]) -> String {
    let h = header_height(&[]) + 30.0 + why.len() as f64 * 18.0;
    let w = why
        .iter()
        .map(|l| text_width(l, 13.0) + 40.0)
        .fold(560.0, f64::max);
    let mut d = Doc::new(w, h, title, &[]);
    for (i, line) in why.iter().enumerate() {
        d.text_sized(
            d.w / 2.0,
            64.0 + i as f64 * 18.0,
            Anchor::Middle,
            line,
            13.0,
        );
    }
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_the_document_closed() {
        let mut d = Doc::new(100.0, 100.0, "t <&>", &["sub".into()]);
        d.legend(10.0, 60.0, &[("a".into(), "#000000")]);
        let s = d.finish();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("t &lt;&amp;&gt;"));
        assert_eq!(s.matches("legend-entry").count(), 1);
        assert!(message("m", &["nothing".into()]).contains("nothing"));
    }

    #[test]
    fn the_document_widens_for_its_title() {
        let d = Doc::new(50.0, 50.0, &"x".repeat(100), &[]);
        assert!(d.w >= text_width(&"x".repeat(100), 15.0));
    }
}
