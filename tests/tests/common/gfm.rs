//! Checks that Markdown renders as written under GitHub-flavoured Markdown (pulldown-cmark with
//! tables): every table row in the source has as many cells as its header (a renderer silently
//! pads or drops cells, so a wrapped cell's continuation would become a row of its own), and
//! every source line inside a table's extent is a table line (a note written right after a table,
//! without a blank line, is taken into it as a row).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The cells of a source table line: `|`-separated, the outer pipes dropped, `\|` kept in a cell.
fn cells(line: &str) -> usize {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t
        .strip_suffix('|')
        .filter(|s| !s.ends_with('\\'))
        .unwrap_or(t);
    let mut n = 1;
    let mut escaped = false;
    for c in t.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => n += 1,
            _ => escaped = false,
        }
    }
    n
}

/// One line per problem, naming the file and the source line; empty when the tables are sound.
pub fn table_problems(name: &str, md: &str) -> Vec<String> {
    let line_of = |byte: usize| md[..byte].matches('\n').count() + 1;
    let mut problems = Vec::new();
    let mut tables = 0;
    let mut header: Option<usize> = None;
    for (event, range) in Parser::new_ext(md, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Table(_)) => {
                tables += 1;
                header = None;
                for (k, line) in md[range.clone()].lines().enumerate() {
                    if !line.trim_start().starts_with('|') {
                        problems.push(format!(
                            "{name}:{}: {line:?} is inside a table but is no table line",
                            line_of(range.start) + k
                        ));
                    }
                }
            }
            Event::Start(Tag::TableHead) => header = Some(cells(&md[range])),
            Event::Start(Tag::TableRow) => {
                let got = cells(&md[range.clone()]);
                if header.is_some_and(|h| h != got) {
                    problems.push(format!(
                        "{name}:{}: a row of {got} cells under a header of {}",
                        line_of(range.start),
                        header.unwrap_or(0)
                    ));
                }
            }
            Event::End(TagEnd::Table) => header = None,
            _ => {}
        }
    }
    if tables == 0 {
        problems.push(format!("{name}: no table at all"));
    }
    problems
}

#[test]
fn the_checker_finds_both_faults() {
    let good = "| a | b |\n|---|---|\n| 1 | 2 \\| 3 |\n\nnote\n";
    assert!(
        table_problems("good", good).is_empty(),
        "{:?}",
        table_problems("good", good)
    );
    let wrapped = "| a | b |\n|---|---|\n| long | cell |\n| wrapped |\n";
    assert_eq!(table_problems("w", wrapped).len(), 1);
    let absorbed = "| a | b |\n|---|---|\n| 1 | 2 |\nnote: after the table\n";
    let p = table_problems("n", absorbed);
    assert!(p.iter().any(|p| p.contains("no table line")), "{p:?}");
}
