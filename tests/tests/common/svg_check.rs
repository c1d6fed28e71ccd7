//! Checks on a plot's SVG, read with an XML parser: every text lies inside the view box, every
//! legend entry names a series the plot draws, and one name keeps one colour across plots.
//!
//! Text extents are estimated with the analyzer's own width model (DejaVu Sans' advance widths,
//! the widest common sans-serif face), so a label that fits here fits in narrower faces too.

use std::collections::BTreeMap;

use krphase_analyzer::export::svg::text_width;
use roxmltree::{Document, Node};

fn num(n: Node, attr: &str) -> Option<f64> {
    n.attribute(attr)?.trim_end_matches("px").parse().ok()
}

/// An attribute of `n` or the nearest ancestor that has it (SVG presentation inheritance).
fn inherited<'a>(n: Node<'a, 'a>, attr: &str) -> Option<&'a str> {
    n.ancestors().find_map(|a| a.attribute(attr))
}

/// The view box (x, y, w, h) of the root element.
fn view_box(doc: &Document) -> Result<[f64; 4], String> {
    let vb = doc
        .root_element()
        .attribute("viewBox")
        .ok_or("no viewBox")?;
    let v: Vec<f64> = vb
        .split_whitespace()
        .map(|s| s.parse().map_err(|e| format!("viewBox {vb:?}: {e}")))
        .collect::<Result<_, _>>()?;
    v.try_into().map_err(|_| format!("viewBox {vb:?}"))
}

/// Each `<text>` whose estimated box leaves the view box: one message each.
fn text_outside(doc: &Document) -> Result<Vec<String>, String> {
    let [vx, vy, vw, vh] = view_box(doc)?;
    let mut bad = Vec::new();
    for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let s: String = t
            .descendants()
            .filter(|d| d.is_text())
            .filter_map(|d| d.text())
            .collect();
        if s.trim().is_empty() {
            continue;
        }
        if inherited(t, "transform").is_some() {
            bad.push(format!("{s:?}: transformed text is not checked; avoid it"));
            continue;
        }
        let size = inherited(t, "font-size")
            .and_then(|v| v.trim_end_matches("px").parse().ok())
            .unwrap_or(16.0);
        let (x, y) = (num(t, "x").unwrap_or(0.0), num(t, "y").unwrap_or(0.0));
        let w = text_width(&s, size);
        let x0 = match inherited(t, "text-anchor").unwrap_or("start") {
            "middle" => x - w / 2.0,
            "end" => x - w,
            _ => x,
        };
        let (top, bottom) = (y - 0.8 * size, y + 0.25 * size);
        if x0 < vx || x0 + w > vx + vw || top < vy || bottom > vy + vh {
            bad.push(format!(
                "{s:?} spans x {x0:.0}..{:.0}, y {top:.0}..{bottom:.0}; view box {vw}x{vh}",
                x0 + w
            ));
        }
    }
    Ok(bad)
}

/// The fill of a mark that covers area: a rect with positive width and height, a circle, a
/// path or polygon; for a polyline or line, its stroke.
fn drawn_colour(n: Node) -> Option<String> {
    let fill = || inherited(n, "fill").map(str::to_lowercase);
    let stroke = || inherited(n, "stroke").map(str::to_lowercase);
    match n.tag_name().name() {
        "rect" => (num(n, "width")? > 0.0 && num(n, "height")? > 0.0)
            .then(fill)
            .flatten(),
        "circle" => (num(n, "r")? > 0.0).then(fill).flatten(),
        "path" | "polygon" => fill().filter(|f| f != "none").or_else(stroke),
        "polyline" | "line" => stroke(),
        _ => None,
    }
}

/// Legend entries (name, swatch colour). A legend is a `<g class="legend">` of swatch + text
/// pairs; a plot without one is read by its layout: a 12 px square swatch followed by its text.
fn legend_entries(doc: &Document) -> Vec<(String, String, roxmltree::NodeId)> {
    let mut out = Vec::new();
    let groups: Vec<Node> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("legend-entry"))
        .collect();
    if !groups.is_empty() {
        for g in groups {
            let swatch = g
                .children()
                .find(|c| c.is_element() && c.tag_name().name() != "text");
            let text = g.children().find(|c| c.has_tag_name("text"));
            if let (Some(s), Some(t)) = (swatch, text) {
                let colour = inherited(s, "fill")
                    .filter(|f| *f != "none")
                    .or_else(|| inherited(s, "stroke"))
                    .unwrap_or("")
                    .to_lowercase();
                out.push((t.text().unwrap_or("").to_string(), colour, s.id()));
            }
        }
        return out;
    }
    for r in doc.descendants().filter(|n| n.has_tag_name("rect")) {
        let square = num(r, "width") == Some(12.0) && num(r, "height") == Some(12.0);
        let next = r.next_sibling_element();
        if let (true, Some(t)) = (square, next.filter(|t| t.has_tag_name("text"))) {
            let colour = inherited(r, "fill").unwrap_or("").to_lowercase();
            out.push((t.text().unwrap_or("").to_string(), colour, r.id()));
        }
    }
    out
}

/// Legend entries whose colour no drawn mark outside the legend carries: one message each.
fn legend_without_series(doc: &Document) -> Vec<(String, String)> {
    let entries = legend_entries(doc);
    let swatches: Vec<roxmltree::NodeId> = entries.iter().map(|e| e.2).collect();
    let in_legend = |n: Node| {
        n.ancestors()
            .any(|a| swatches.contains(&a.id()) || a.attribute("class") == Some("legend-entry"))
    };
    let drawn: Vec<String> = doc
        .descendants()
        .filter(|n| n.is_element() && !in_legend(*n))
        .filter_map(drawn_colour)
        .collect();
    entries
        .into_iter()
        .filter(|(_, c, _)| !drawn.contains(c))
        .map(|(n, c, _)| (n, c))
        .collect()
}

/// What one SVG file breaks, one message a problem; `colours` gathers the legend's name →
/// colours across files.
pub fn check_svg(
    name: &str,
    text: &str,
    colours: &mut BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<String> {
    let doc = match Document::parse(text) {
        Ok(d) => d,
        Err(e) => return vec![format!("{name}: not XML: {e}")],
    };
    let mut bad = match text_outside(&doc) {
        Ok(v) => v.into_iter().map(|m| format!("{name}: text {m}")).collect(),
        Err(e) => vec![format!("{name}: {e}")],
    };
    for (series, colour) in legend_without_series(&doc) {
        bad.push(format!(
            "{name}: legend names {series:?} ({colour}), which the plot does not draw"
        ));
    }
    for (series, colour, _) in legend_entries(&doc) {
        colours
            .entry(series)
            .or_default()
            .insert(colour, name.to_string());
    }
    bad
}

/// Names given more than one colour across the checked files: one message each.
pub fn colour_conflicts(colours: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    colours
        .iter()
        .filter(|(_, c)| c.len() > 1)
        .map(|(n, c)| format!("{n:?} has colours {c:?} (colour: a file using it)"))
        .collect()
}
