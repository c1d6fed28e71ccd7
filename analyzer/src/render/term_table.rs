//! The width terminal tables are laid out to, and the rule that keeps every word of a cell whole:
//! a cell wraps only between words, so `not significant` may become two lines but never
//! `not signi` / `ficant`.

use std::io::IsTerminal;

use comfy_table::{ColumnConstraint, ContentArrangement, Table, Width};

/// The widest table (and help line) when stdout is not a terminal (a file, a pager, a
/// pull-request comment).
pub const PIPED_MAX: usize = 100;

/// The width when stdout is not a terminal, given `COLUMNS`: [`PIPED_MAX`], or `COLUMNS` where
/// that is a narrower positive number.
pub fn piped_width(columns: Option<&str>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .map_or(PIPED_MAX, |c| c.min(PIPED_MAX))
}

/// The width tables are laid out to: the terminal's when stdout is one, else [`PIPED_MAX`] (or
/// `COLUMNS` where that is narrower).
pub fn columns() -> u16 {
    if std::io::stdout().is_terminal()
        && let Some(w) = terminal_width()
    {
        return w.max(40);
    }
    piped_width(std::env::var("COLUMNS").ok().as_deref())
        .try_into()
        .unwrap_or(100)
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

/// The longest word of `text` (split at spaces and line breaks, as comfy-table wraps), in
/// characters.
fn longest_word(text: &str) -> usize {
    text.split([' ', '\n'])
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0)
}

/// The widest line of `text`, in characters.
fn widest_line(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Per column: its longest word and its widest line (header included).
fn column_widths(t: &mut Table) -> Vec<(usize, usize)> {
    let mut widths = vec![(0usize, 0usize); t.column_count()];
    let header = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect::<Vec<_>>());
    let rows = t
        .row_iter()
        .map(|r| r.cell_iter().map(|c| c.content()).collect::<Vec<_>>());
    for row in header.into_iter().chain(rows) {
        for (i, text) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                w.0 = w.0.max(longest_word(text));
                w.1 = w.1.max(widest_line(text));
            }
        }
    }
    widths
}

/// Lays `t` out to [`columns`]: unwrapped when it fits; else each column gets at least its
/// longest word, and the width left over goes to the columns in proportion to what they would
/// need unwrapped, so cells wrap only between words. Only when even the longest words cannot
/// fit side by side do the columns with the longest words give up that floor (the table stays
/// within the width; a word in those columns may then break).
pub fn fit(t: &mut Table) {
    fit_to(t, columns());
}

/// [`fit`] to `columns` columns.
pub fn fit_to(t: &mut Table, columns: u16) {
    t.set_width(columns);
    let widths = column_widths(t);
    // Each column takes a space each side and one rule after it, plus the first rule.
    let avail = usize::from(columns).saturating_sub(3 * widths.len() + 1);
    let want: Vec<usize> = widths.iter().map(|w| w.1.max(1)).collect();
    if want.iter().sum::<usize>() <= avail {
        t.set_content_arrangement(ContentArrangement::Disabled);
        return;
    }
    t.set_content_arrangement(ContentArrangement::Dynamic);
    let floor: Vec<usize> = widths.iter().map(|w| w.0.max(1)).collect();
    if floor.iter().sum::<usize>() > avail {
        give_up_longest_words(t, &floor, avail);
        return;
    }
    let extra = avail - floor.iter().sum::<usize>();
    let need: Vec<usize> = want.iter().zip(&floor).map(|(w, f)| w - f).collect();
    let grant = share_out(&need, extra);
    for (i, (f, g)) in floor.iter().zip(&grant).enumerate() {
        let w = f + g;
        if let Some(col) = t.column_mut(i) {
            let cells = u16::try_from(w + 2).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(cells)));
        }
    }
}

/// Shares `extra` columns out to meet `need`: the smallest needs first and in full (a short
/// cell is never wrapped to make room), the rest split evenly among the columns still short.
fn share_out(need: &[usize], mut extra: usize) -> Vec<usize> {
    let mut grant = vec![0; need.len()];
    let mut order: Vec<usize> = (0..need.len()).collect();
    order.sort_by_key(|&i| need[i]);
    for (k, &i) in order.iter().enumerate() {
        grant[i] = need[i].min(extra / (order.len() - k));
        extra -= grant[i];
    }
    grant
}

/// Floors for every column but those with the longest words, dropped one by one until the rest
/// fit in `avail`.
fn give_up_longest_words(t: &mut Table, floor: &[usize], avail: usize) {
    let mut kept: Vec<Option<usize>> = floor.iter().copied().map(Some).collect();
    while kept.iter().map(|f| f.unwrap_or(1)).sum::<usize>() > avail {
        let Some(i) = (0..kept.len()).max_by_key(|&i| kept[i].unwrap_or(0)) else {
            break;
        };
        if kept[i].take().is_none() {
            break;
        }
    }
    for (i, f) in kept.into_iter().enumerate() {
        if let (Some(col), Some(w)) = (t.column_mut(i), f) {
            let cells = u16::try_from(w + 2).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(cells)));
        }
    }
}

#[cfg(test)]
mod tests {
    use comfy_table::presets;

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

    fn widest(t: &Table) -> usize {
        widest_line(&t.to_string())
    }

    #[test]
    fn cells_wrap_between_words_only() {
        let mut t = narrow_table();
        fit_to(&mut t, 60);
        let text = t.to_string();
        for word in ["P1/application-replay-run-0", "significant", "equivalent"] {
            assert!(text.contains(word), "{word} was broken:\n{text}");
        }
        assert!(widest(&t) <= 60, "{text}");
    }

    #[test]
    fn without_the_rule_the_layout_breaks_words() {
        // The failure the rule prevents: comfy-table alone splits a long word over two lines.
        let mut t = narrow_table();
        t.set_width(60);
        assert!(!t.to_string().contains("P1/application-replay-run-0"));
    }

    #[test]
    fn a_table_that_fits_is_not_wrapped_and_one_that_cannot_stays_within_the_width() {
        let mut t = narrow_table();
        fit_to(&mut t, 140);
        assert_eq!(t.to_string().lines().count(), 5, "{t}");
        let mut t = Table::new();
        t.set_header(vec!["a", "b"])
            .add_row(vec!["x".repeat(70), "y".repeat(70)]);
        fit_to(&mut t, 100);
        assert!(widest(&t) <= 100, "{t}");
    }

    #[test]
    fn short_needs_are_met_in_full_and_the_rest_split() {
        assert_eq!(share_out(&[3, 14, 2], 10), vec![3, 5, 2]);
        assert_eq!(share_out(&[1, 1], 10), vec![1, 1]);
        assert_eq!(share_out(&[10, 10], 6), vec![3, 3]);
    }

    #[test]
    fn piped_tables_are_at_most_100_columns() {
        assert!(usize::from(columns()) <= PIPED_MAX || std::io::stdout().is_terminal());
    }
}
