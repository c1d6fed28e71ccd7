//! `krphase compare --format markdown`: a short section to paste into a pull request — the
//! end-to-end effect of each row with its interval, the phases that moved (those that moved
//! less than the margin, and those shown equivalent), and the attribution table of each
//! kernel-replay row.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::builds::BuildComparison;
use super::measurements::{MeasurementComparison, interval_text, mde_text, ratio_text, row_name};
use super::phases::{Comparison, n_text, signed_duration};
use crate::render::fmt::{duration_short, markers, percent_unsigned_zero, seconds};
use crate::stats::verdict::Verdict;

fn phase_lines(s: &mut String, row: &str, p: &Comparison) {
    for ph in p.phases.iter().filter(|p| p.verdict_code == Verdict::Moved) {
        let (Some(a), Some(b), Some(d)) = (ph.a_median_ns, ph.b_median_ns, ph.delta_median_ns)
        else {
            continue;
        };
        let ci = ph.delta_interval.map_or(String::new(), |i| {
            format!(
                "; 95% {} .. {}; n runs (windows) {}",
                signed_duration(i.lo95),
                signed_duration(i.hi95),
                n_text(ph)
            )
        });
        let _ = writeln!(
            s,
            "- {row}: **{}** {} → {} per window ({}{ci})",
            ph.phase,
            duration_short(a),
            duration_short(b),
            signed_duration(d)
        );
    }
}

/// The phases inside the margin, in two lines: those that moved less than it (real changes,
/// with their size) and those shown equivalent.
fn within_margin_lines(s: &mut String, row: &str, p: &Comparison) {
    let small: Vec<String> = p
        .phases
        .iter()
        .filter(|p| p.verdict_code == Verdict::MovedWithin)
        .map(|p| match p.delta_median_ns {
            Some(d) => format!("{} ({})", p.phase, signed_duration(d)),
            None => p.phase.clone(),
        })
        .collect();
    let eq: Vec<String> = p
        .phases
        .iter()
        .filter(|p| p.verdict_code == Verdict::Equivalent)
        .map(|p| p.phase.clone())
        .collect();
    let m = p.margin_pct;
    if !small.is_empty() {
        let _ = writeln!(s, "- {row}: moved, within ±{m:.0}%: {}", small.join(", "));
    }
    if !eq.is_empty() {
        let _ = writeln!(s, "- {row}: equivalent within ±{m:.0}%: {}", eq.join(", "));
    }
}

/// The end-to-end table, then one list item per interval note and per invalid row.
fn end_to_end(s: &mut String, rows: &MeasurementComparison) {
    s.push_str("End to end (median wall time of whole runs, measured by the harness):\n\n");
    s.push_str(
        "| row | A | B | B/A | 95% interval | n (runs A/B) | MDE | verdict |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {}/{} | {} | {} |",
            cell(&row_name(r)),
            seconds(r.a_median_s),
            seconds(r.b_median_s),
            ratio_text(r),
            cell(&interval_text(r)),
            r.a_runs,
            r.b_runs,
            cell(&mde_text(r)),
            cell(&r.verdict)
        );
    }
    s.push('\n');
    let notes: Vec<String> = rows
        .rows
        .iter()
        .filter_map(|r| Some(format!("{}: {}", row_name(r), r.interval_note.as_ref()?)))
        .chain(rows.rows.iter().filter_map(|r| {
            Some(format!(
                "{} INVALID: {}",
                row_name(r),
                r.invalid_reason.as_ref()?
            ))
        }))
        .collect();
    for n in &notes {
        let _ = writeln!(s, "- {n}");
    }
    if !notes.is_empty() {
        s.push('\n');
    }
}

/// A signed change, with no signed zero: `0 ns` where the sign would be noise.
pub fn change_text(ns: f64) -> String {
    let s = signed_duration(ns);
    if s.ends_with("0.00 ns") {
        "0 ns".into()
    } else {
        s
    }
}

/// Text safe inside a table cell: a `|` would end the cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The markdown section.
pub fn render_markdown(c: &BuildComparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### krphase: `{}` (A) against `{}` (B)\n", c.a, c.b);
    if let Some(p) = &c.provenance {
        s.push_str(&p.to_markdown());
        s.push('\n');
    } else if c.emulated {
        let _ = writeln!(s, "{}\n", crate::db::emulated::markdown_note());
    }
    if let Some(rows) = &c.rows {
        end_to_end(&mut s, rows);
    }
    crate::answers::rocpd_counters::render_rocpd_sides(&c.rocpd, true, &mut s);
    super::fidelity::render(&c.fidelity, true, &mut s);
    let phases: Vec<(String, &Comparison)> = c
        .details
        .iter()
        .filter_map(|d| Some((d.row.clone(), d.phases.as_ref()?)))
        .chain(c.runs.iter().map(|r| ("runs".to_string(), r)))
        .collect();
    if !phases.is_empty() {
        s.push_str("Phases that moved (median per window):\n\n");
        let before = s.len();
        for (row, p) in &phases {
            phase_lines(&mut s, row, p);
        }
        if s.len() == before {
            s.push_str("- none\n");
        }
        for (row, p) in &phases {
            within_margin_lines(&mut s, row, p);
        }
        for (row, p) in &phases {
            for u in &p.unavailable {
                let _ = writeln!(s, "- {row}: not measured: {u}");
            }
        }
        s.push('\n');
    }
    for d in &c.details {
        let Some(x) = &d.attribution else {
            match &d.refused {
                // The wall-change gate says "no attribution" itself.
                Some(why) if why.ends_with("no attribution") => {
                    let _ = writeln!(s, "{}: {why}.\n", d.row);
                }
                Some(why) => {
                    let _ = writeln!(s, "{}: no attribution ({why}).\n", d.row);
                }
                None => {}
            }
            continue;
        };
        let _ = writeln!(
            s,
            "Where {}'s wall change of {} per run went (means per run):\n",
            d.row,
            change_text(x.wall_change_ns)
        );
        s.push_str("| part | change | of wall change | basis |\n|---|---|---|---|\n");
        for p in &x.parts {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                cell(&p.item),
                change_text(p.change_ns),
                p.share.map_or("-".into(), percent_unsigned_zero),
                markers(&p.basis)
            );
        }
        for p in x
            .parts
            .iter()
            .filter(|p| p.item == super::attribution::UNEXPLAINED)
        {
            if let Some(n) = &p.note {
                let _ = writeln!(s, "\n{}: {n}", p.item);
            }
        }
        s.push('\n');
    }
    let notes: BTreeSet<&String> = c.details.iter().flat_map(|d| &d.notes).collect();
    for n in &notes {
        let _ = writeln!(s, "- {n}");
    }
    if !notes.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "<sub>krphase compare; runs are the unit: intervals from Welch's t on per-run values \
         (whole runs: their logarithms; phases: each run's median per window), moved at p < {}, \
         n = runs (windows) per side, MDE = the change found 80% of the time; equivalence \
         margin ±{:.0}%; basis H harness, M in process, L SDK log, P SDK phase line, E \
         estimated, R a rest.</sub>",
        crate::stats::verdict::ALPHA,
        c.margin_pct
    );
    s
}
