//! An answer as one self-contained HTML page: the same Markdown the `markdown` format writes,
//! turned into HTML, with the plots' SVG inlined, a list of runs linking to each run's section,
//! and a style sheet of its own. Nothing is fetched: no script, no external style sheet, font or
//! image, so the file reads the same offline or attached to a ticket.

use std::fmt::Write as _;

use pulldown_cmark::{Event, Options, Parser, html};

/// One part of the page, in order.
pub enum Part {
    /// Markdown, turned into HTML.
    Markdown(String),
    /// A heading and SVG plots `(name, svg text)`, inlined.
    Plots(String, Vec<(String, String)>),
    /// HTML made elsewhere (already escaped).
    Html(String),
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;\
margin:2rem auto;max-width:75rem;padding:0 1rem;color:#1d1d1f;background:#fff;line-height:1.4}\
h1{font-size:1.6rem;border-bottom:2px solid #4e79a7}h2{font-size:1.25rem;margin-top:2rem;\
border-bottom:1px solid #ddd}table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}\
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:right;white-space:nowrap}\
th:first-child,td:first-child{text-align:left}th{background:#eef2f7}\
tr:nth-child(even) td{background:#fafafa}pre{background:#f6f8fa;padding:.6rem;overflow:auto;\
font-size:.8rem}code{font-size:.85rem}.plots{display:flex;flex-wrap:wrap;gap:1rem}\
.plot{border:1px solid #ddd;padding:.3rem;max-width:100%;overflow:auto}\
.plot svg{max-width:100%;height:auto}nav.runs{font-size:.85rem;columns:3}\
.emulated{background:#fff3cd;border:1px solid #e0c060;padding:.4rem .6rem}";

/// `text` with HTML's special characters escaped.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            _ => s.push(c),
        }
    }
    s
}

/// Markdown (GitHub's flavour: pipe tables) as HTML. A line break inside a paragraph stays a
/// line break: the report's text lines are written one figure a line.
pub fn markdown_to_html(md: &str) -> String {
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).map(|e| match e {
        Event::SoftBreak => Event::HardBreak,
        e => e,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    anchor_runs(&out)
}

/// Gives each run's heading (`<h2>run N …`) the id `run-N`, the target of the runs list.
fn anchor_runs(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("<h2>run ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "<h2>run ".len()..];
        let id: String = after.chars().take_while(char::is_ascii_digit).collect();
        if id.is_empty() {
            out.push_str("<h2>run ");
        } else {
            let _ = write!(out, "<h2 id=\"run-{id}\">run ");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// An SVG file's text without its XML declaration (not allowed inside HTML).
fn inline_svg(svg: &str) -> &str {
    let s = svg.trim_start();
    match s.strip_prefix("<?xml") {
        Some(decl) => decl.find("?>").map_or(s, |e| decl[e + 2..].trim_start()),
        None => s,
    }
}

/// A list of links to the runs' sections: `(run id, label)`.
pub fn runs_nav(runs: &[(i64, Option<String>)]) -> String {
    let mut s = String::from("<h2>runs</h2>\n<nav class=\"runs\"><ul>\n");
    for (id, label) in runs {
        let _ = writeln!(
            s,
            "<li><a href=\"#run-{id}\">run {id}{}</a></li>",
            label
                .as_deref()
                .map_or(String::new(), |l| format!(" {}", escape(l)))
        );
    }
    s.push_str("</ul></nav>\n");
    s
}

/// The page: `title`, then each part in order.
pub fn page(title: &str, parts: &[Part]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    for part in parts {
        match part {
            Part::Markdown(md) => s.push_str(&markdown_to_html(md)),
            Part::Html(h) => s.push_str(h),
            Part::Plots(heading, plots) => {
                let _ = writeln!(s, "<h2>{}</h2>\n<div class=\"plots\">", escape(heading));
                for (name, svg) in plots {
                    let _ = writeln!(
                        s,
                        "<figure class=\"plot\" id=\"plot-{}\">{}<figcaption>{}</figcaption>\
                         </figure>",
                        escape(name),
                        inline_svg(svg),
                        escape(name)
                    );
                }
                s.push_str("</div>\n");
            }
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_get_anchors_and_svg_loses_its_declaration() {
        let h = page(
            "t",
            &[
                Part::Html(runs_nav(&[(3, Some("a<b".into()))])),
                Part::Markdown("## run 3 [x]\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".into()),
                Part::Plots(
                    "plots".into(),
                    vec![(
                        "p.svg".into(),
                        "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>"
                            .into(),
                    )],
                ),
            ],
        );
        assert!(h.contains("<h2 id=\"run-3\">run 3"), "{h}");
        assert!(h.contains("href=\"#run-3\">run 3 a&lt;b</a>"), "{h}");
        assert!(h.contains("<table>") && h.contains("<td>2</td>"), "{h}");
        assert!(!h.contains("<?xml"), "{h}");
        assert!(
            markdown_to_html("a\nb\n").contains("a<br />"),
            "one figure a line"
        );
        assert!(!h.contains("http://") || !h.contains("src=\"http"), "{h}");
        for external in ["<script", "<link", "@import", "url("] {
            assert!(!h.contains(external), "{external} in {h}");
        }
    }
}
