//! The demo stack step's pull-request text (`stack/stack.md`): the provenance of every build's
//! runs, one table with every build of the stack against the baseline (median, ratio with its
//! interval and n, verdict, the largest parts of the change and the unexplained rest), then the
//! detailed section of the combined build.

use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;

use crate::compare::attribution::UNEXPLAINED;
use crate::compare::builds::BuildComparison;
use crate::compare::markdown::{cell, change_text, render_markdown};
use crate::compare::measurements::{MeasurementDelta, interval_text, ratio_text};
use crate::compare::provenance::{Provenance, Side};
use crate::db::measurements::StoredMeasurement;
use crate::render::fmt::{percent_unsigned_zero, seconds};

/// The first (P3) row of a comparison.
fn first_row(c: &BuildComparison) -> Option<&MeasurementDelta> {
    c.rows.as_ref().and_then(|r| r.rows.first())
}

/// The two largest parts of a comparison's attribution, and its unexplained rest's share.
fn parts(c: &BuildComparison) -> (String, String) {
    let Some(x) = c.details.first().and_then(|d| d.attribution.as_ref()) else {
        let why = c.details.first().and_then(|d| d.refused.clone());
        return (why.map_or("-".into(), |w| format!("none: {w}")), "-".into());
    };
    let top: Vec<String> = x
        .parts
        .iter()
        .filter(|p| p.item != UNEXPLAINED)
        .take(2)
        .map(|p| {
            format!(
                "{} {} ({})",
                p.item,
                change_text(p.change_ns),
                p.share.map_or("-".into(), percent_unsigned_zero)
            )
        })
        .collect();
    let rest = x
        .parts
        .last()
        .and_then(|p| p.share)
        .map_or("-".into(), percent_unsigned_zero);
    (top.join(", "), rest)
}

/// The sides for the provenance: the baseline as `A`, each build as the next letter.
fn sides<'a>(base: &str, comps: &'a [(String, BuildComparison)]) -> Vec<Side<'a>> {
    let rows = |c: &'a BuildComparison, a: bool| -> Vec<&'a StoredMeasurement> {
        c.rows
            .iter()
            .flat_map(|r| &r.rows)
            .filter_map(|r| {
                if a {
                    r.a_row.as_ref()
                } else {
                    r.b_row.as_ref()
                }
            })
            .collect()
    };
    let mut out = Vec::new();
    if let Some((_, c)) = comps.first() {
        out.push(("A".to_string(), base.to_string(), rows(c, true)));
    }
    for (k, (build, c)) in comps.iter().enumerate() {
        let tag = char::from(b'B' + (k as u8 % 25)).to_string();
        out.push((tag, build.clone(), rows(c, false)));
    }
    out
}

/// `stack.md`: `comps` are (build, comparison against `base`) in stack order.
pub fn stack_markdown(
    conn: &Connection,
    base: &str,
    comps: &[(String, BuildComparison)],
    setup: &str,
) -> Result<String> {
    let mut s = String::new();
    let _ = writeln!(s, "### krphase: the SDK-build stack against `{base}`\n");
    let _ = writeln!(s, "{setup}\n");
    let p = Provenance::of_sides(
        conn,
        &sides(base, comps),
        "krphase --db stack/stack.db compare baseline BUILD --format markdown",
    )?;
    s.push_str(&p.to_markdown());
    s.push('\n');
    s.push_str(
        "| build | median (H) | B/A | 95% interval | n (runs A/B) | verdict | largest parts of \
         the change | unexplained rest |\n|---|---|---|---|---|---|---|---|\n",
    );
    if let Some(r) = comps.first().and_then(|(_, c)| first_row(c)) {
        let _ = writeln!(
            s,
            "| {} | {} | 1x | - | {} | - | - | - |",
            cell(base),
            seconds(r.a_median_s),
            r.a_runs
        );
    }
    for (build, c) in comps {
        let Some(r) = first_row(c) else { continue };
        let (top, rest) = parts(c);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}/{} | {} | {} | {} |",
            cell(build),
            seconds(r.b_median_s),
            ratio_text(r),
            cell(&interval_text(r)),
            r.a_runs,
            r.b_runs,
            cell(&r.verdict),
            cell(&top),
            rest
        );
    }
    s.push('\n');
    if let Some((_, last)) = comps.last() {
        let mut detail = last.clone();
        detail.provenance = None;
        s.push_str(&render_markdown(&detail));
    }
    Ok(s)
}
