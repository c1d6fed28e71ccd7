//! The width terminal tables are laid out to, and the rule that keeps every word of a cell whole:
//! a cell wraps only between words, so `not significant` may become two lines but never
//! `not signi` / `ficant`.

use std::io::IsTerminal;

use comfy_table::{ColumnConstraint, Table, Width};

/// The widest table when stdout is not a terminal (a file, a pager, a pull-request comment).
pub const PIPED_MAX: u16 = 100;

/// The width tables are laid out to: the terminal's when stdout is one, else [`PIPED_MAX`] (or
/// `COLUMNS` where that is narrower).
pub fn columns() -> u16 {
    if std::io::stdout().is_terminal() {
        if let Some(w) = terminal_width() {
            return w.max(40);
        }
    }
    crate::cli::width::piped_width(std::env::var("COLUMNS").ok().as_deref())
        .try_into()
        .unwrap_or(PIPED_MAX)
}

/// The terminal's width in columns, from `COLUMNS` (a terminal's shell sets it) or comfy-table's
/// own query of the terminal.
fn terminal_width() -> Option<u16> {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0);
    from_env.or_else(|| Table::new().width().filter(|&w| w > 0))
}

/// The longest word (run of non-space characters) of `text`, in characters.
fn longest_word(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0)
}

/// Lays `t` out to [`columns`] and gives each column at least the width of its longest word
/// (header included), so the layout wraps cells only between words.
pub fn fit(t: &mut Table) {
    t.set_width(columns());
    let n = t.column_count();
    let mut widest = vec![0usize; n];
    let header = t.header().map(|h| h.cell_iter().map(|c| c.content()).collect::<Vec<_>>());
    for (i, text) in header.into_iter().flatten().enumerate() {
        widest[i] = widest[i].max(longest_word(&text));
    }
    for row in t.row_iter() {
        for (i, c) in row.cell_iter().enumerate() {
            if let Some(w) = widest.get_mut(i) {
                *w = (*w).max(longest_word(&c.content()));
            }
        }
    }
    for (i, w) in widest.into_iter().enumerate() {
        if let Some(col) = t.column_mut(i) {
            // Padding (one space each side) comes on top of the content width.
            let content = u16::try_from(w).unwrap_or(u16::MAX).saturating_add(2);
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(content)));
        }
    }
}

#[cfg(test)]
mod tests {
    use comfy_table::{ContentArrangement, presets};

    use super::*;

    fn narrow_table() -> Table {
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(vec!["label", "verdict", "note"])
            .add_row(vec![
                "P1/application-replay-run-0",
                "not significant",
                "equivalent within the margin of fifteen percent of side A, n = 5 runs a side",
            ]);
        t
    }

    #[test]
    fn cells_wrap_between_words_only() {
        let mut t = narrow_table();
        fit(&mut t);
        t.set_width(60);
        let text = t.to_string();
        for word in ["P1/application-replay-run-0", "significant", "equivalent"] {
            assert!(text.contains(word), "{word} was broken:\n{text}");
        }
    }

    #[test]
    fn without_the_rule_the_layout_breaks_words() {
        // The failure the rule prevents: comfy-table alone splits a long word over two lines.
        let mut t = narrow_table();
        t.set_width(60);
        assert!(!t.to_string().contains("P1/application-replay-run-0"));
    }

    #[test]
    fn piped_tables_are_at_most_100_columns() {
        assert!(columns() <= PIPED_MAX || std::io::stdout().is_terminal());
    }
}
