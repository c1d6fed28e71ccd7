//! The report's table style, shared by every table an answer prints: first column left-aligned,
//! the rest right-aligned; fitted to the terminal, or never wrapped in Markdown.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets};

/// A table in the report's style: first column left-aligned, the rest right-aligned. For the
/// terminal, cells wrap to fit 100 columns; in Markdown they never wrap (a wrapped cell's second
/// line would be a row of its own).
pub fn table(markdown: bool, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(if markdown {
        presets::ASCII_MARKDOWN
    } else {
        presets::UTF8_FULL_CONDENSED
    })
    .set_content_arrangement(if markdown {
        ContentArrangement::Disabled
    } else {
        ContentArrangement::Dynamic
    })
    .set_width(100)
    .set_header(header.iter().map(Cell::new));
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Appends a table; in Markdown followed by a blank line, so that the next line starts a
/// paragraph instead of continuing the table as a row.
pub fn push_table(out: &mut String, t: &Table, markdown: bool) {
    if markdown {
        let _ = writeln!(out, "{t}\n");
    } else {
        let mut t = t.clone();
        super::term_table::fit(&mut t);
        let _ = writeln!(out, "{t}");
    }
}
