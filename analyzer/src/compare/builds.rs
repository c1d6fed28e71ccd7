//! `krphase compare A B`, build against build. A and B are labels (of bench runs, imports, or
//! both) or run ids, chosen by the one selection rule (`db/runs.rs`). When both sides name
//! whole-run measurements: per experiment row the medians, ratio, interval and verdict
//! (`measurements.rs`); for each kernel-replay row, its phases per window (`phases.rs`) and the
//! attribution of its wall change (`attribution.rs`) with declines, bytes
//! per window and effective GB/s of each side. When they name only phase-file runs: their phases
//! per window, pooled. Rendered as a table, CSV, JSON or a markdown section for a pull request
//! (`markdown.rs`).

use std::fmt::Write as _;

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use super::attribution::{Attribution, Wall, attribute, attribute_runs};
use super::measurements::MeasurementDelta;
use super::measurements::{MeasurementComparison, compare_measurements_with, row_name, side_rows};
use super::phases::{
    Comparison, compare_with, phase_table, render_table, signed_duration, unavailable_lines,
};
use super::provenance::Provenance;
use crate::answers::rocpd_counters::{self, SideRocpd};
use crate::db::benchmark::CollectionMode;
use crate::db::emulated;
use crate::db::measurements::StoredMeasurement;
use crate::render::fmt::{bytes, duration_short, markers, percent_unsigned_zero};

/// What `krphase compare` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareWhat {
    /// Measurement rows when both sides name some, else phase-file runs.
    Auto,
    Runs,
    Measurements,
}

/// The details of one kernel-replay row.
#[derive(Debug, Clone, Serialize)]
pub struct RowDetail {
    pub row: String,
    /// Its linked runs' phases per window.
    pub phases: Option<Comparison>,
    pub attribution: Option<Attribution>,
    /// Why there is no attribution (one line).
    pub refused: Option<String>,
    /// What the evidence behind the row lacks or left out, one line each (no SDK log, the
    /// phases observe mode cannot time, warm-up launches).
    pub notes: Vec<String>,
}

/// The whole answer.
#[derive(Debug, Clone, Serialize)]
pub struct BuildComparison {
    pub a: String,
    pub b: String,
    pub margin_pct: f64,
    pub rows: Option<MeasurementComparison>,
    pub details: Vec<RowDetail>,
    /// Phase-file runs pooled, when the sides name no measurements.
    pub runs: Option<Comparison>,
    /// Where the compared rows came from (measurements only).
    pub provenance: Option<Provenance>,
    /// Counters from rocpd beside the replay overhead, per run of each side that has an
    /// imported rocpd database (runs compared only).
    pub rocpd: Vec<SideRocpd>,
    /// Pass fidelity per kernel both sides ran (runs compared only).
    pub fidelity: Vec<super::fidelity::FidelityDelta>,
    /// Some compared figure came from the emulator (`db::emulated`): every format says so.
    pub emulated: bool,
}

/// Rows whose mode is kernel replay get the details (P6's filtered row too: its tax).
fn details(conn: &Connection, rows: &MeasurementComparison, margin: f64) -> Result<Vec<RowDetail>> {
    let mut out = Vec::new();
    for r in rows
        .rows
        .iter()
        .filter(|r| r.mode.as_deref() == Some(CollectionMode::KernelReplay.as_str()))
        .filter(|r| r.metric.as_deref().is_none_or(|m| m == "wall_time"))
    {
        let (a, b) = (r.a_row.as_ref(), r.b_row.as_ref());
        let linked = |m: Option<&crate::db::measurements::StoredMeasurement>| {
            m.map(|m| m.linked_runs.clone()).unwrap_or_default()
        };
        let (la, lb) = (linked(a), linked(b));
        let phases = if la.is_empty() || lb.is_empty() {
            None
        } else {
            Some(compare_with(conn, &la, &lb, margin)?)
        };
        let (attribution, refused) = match attribute(conn, a, b)? {
            Ok(x) => (Some(x), None),
            Err(why) => (None, Some(why)),
        };
        out.push(RowDetail {
            row: row_name(r),
            phases,
            attribution,
            refused,
            notes: super::evidence_notes::row_notes(conn, a, b)?,
        });
    }
    Ok(out)
}

/// Builds the comparison of `a` with `b`.
pub fn compare_builds(
    conn: &Connection,
    a: &str,
    b: &str,
    what: CompareWhat,
    margin_pct: f64,
) -> Result<BuildComparison> {
    let mut out = BuildComparison {
        a: a.into(),
        b: b.into(),
        margin_pct,
        rows: None,
        details: Vec::new(),
        runs: None,
        provenance: None,
        rocpd: Vec::new(),
        fidelity: Vec::new(),
        emulated: false,
    };
    let measured = what != CompareWhat::Runs
        && !side_rows(conn, a)?.is_empty()
        && !side_rows(conn, b)?.is_empty();
    if measured || what == CompareWhat::Measurements {
        let rows = compare_measurements_with(conn, a, b, margin_pct)?;
        out.details = details(conn, &rows, margin_pct)?;
        let side =
            |tag: &str, sel: &str, pick: fn(&MeasurementDelta) -> Option<&StoredMeasurement>| {
                (
                    tag.to_string(),
                    sel.to_string(),
                    rows.rows.iter().filter_map(pick).collect(),
                )
            };
        let sides = [
            side("A", a, |r| r.a_row.as_ref()),
            side("B", b, |r| r.b_row.as_ref()),
        ];
        let provenance = Provenance::of_sides(
            conn,
            &sides,
            &format!("krphase compare {a} {b} --format markdown"),
        )?;
        out.emulated = provenance.emulated;
        out.provenance = Some(provenance);
        out.rows = Some(rows);
        return Ok(out);
    }
    let ra = crate::db::runs::select(conn, a)?;
    let rb = crate::db::runs::select(conn, b)?;
    out.emulated = emulated::any_run_emulated(conn, &[ra.as_slice(), rb.as_slice()].concat())?;
    out.runs = Some(compare_with(conn, &ra, &rb, margin_pct)?);
    out.rocpd = rocpd_counters::sides(conn, &ra, &rb)?;
    out.fidelity = super::fidelity::sides(conn, &ra, &rb)?;
    let (attribution, refused) = match attribute_runs(conn, (&ra, Wall::Spans), (&rb, Wall::Spans))?
    {
        Ok(x) => (Some(x), None),
        Err(why) => (None, Some(why)),
    };
    out.details.push(RowDetail {
        row: "runs".into(),
        phases: None,
        attribution,
        refused,
        notes: Vec::new(),
    });
    Ok(out)
}

fn ns_or_dash(v: Option<f64>) -> String {
    v.map_or("-".into(), duration_short)
}

/// The attribution as a table (≤ 100 columns).
pub fn attribution_table(x: &Attribution) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "part",
            "A per run",
            "B per run",
            "change",
            "of wall Δ",
            "basis",
        ]);
    t.add_row(vec![
        "wall (mean per run)".to_string(),
        duration_short(x.a_wall_ns),
        duration_short(x.b_wall_ns),
        signed_duration(x.wall_change_ns),
        "100%".into(),
        x.wall_basis.marker().into(),
    ]);
    for p in &x.parts {
        t.add_row(vec![
            p.item.clone(),
            ns_or_dash(p.a_ns),
            ns_or_dash(p.b_ns),
            signed_duration(p.change_ns),
            p.share.map_or("-".into(), percent_unsigned_zero),
            markers(&p.basis),
        ]);
    }
    crate::render::term_table::fit(&mut t);
    t
}

fn declines(d: &std::collections::BTreeMap<String, u64>) -> String {
    if d.is_empty() {
        return "none".into();
    }
    d.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The wall change with its interval, then declines, bytes per window and GB/s of both sides.
pub fn side_lines(x: &Attribution) -> String {
    let mut s = String::new();
    let i = x.wall_interval;
    let _ = writeln!(
        s,
        "  wall change {}, 95% interval {} .. {} (n runs {}/{})",
        signed_duration(x.wall_change_ns),
        signed_duration(i.lo95),
        signed_duration(i.hi95),
        x.wall_runs.0,
        x.wall_runs.1
    );
    for (name, f) in [("A", &x.a), ("B", &x.b)] {
        let _ = writeln!(
            s,
            "  {name}: {} runs, {} replayed windows; declines: {}; snapshot {}/window at {}",
            f.runs,
            f.replayed_windows,
            declines(&f.declines_by_reason),
            f.snapshot_bytes_per_window.map_or("-".into(), bytes),
            f.snapshot_gbps.map_or("-".into(), |g| format!(
                "{g:.2} GB/s [{}]",
                f.snapshot_gbps_basis.map_or("-", |b| b.marker())
            )),
        );
    }
    s
}

/// What the parts that carry a note hold (the rests, and figures from outside the window).
pub fn part_notes(x: &Attribution) -> String {
    x.parts
        .iter()
        .filter_map(|p| Some((p, p.note.as_ref()?)))
        .map(|(p, n)| crate::render::fmt::wrap(&format!("{}: {n}", p.item), 98, "  - ", "    "))
        .collect()
}

/// The comparison as text tables.
pub fn render_text(c: &BuildComparison) -> String {
    let mut s = String::new();
    if c.emulated {
        let _ = writeln!(s, "{}\n", emulated::NOTE);
    }
    if let Some(r) = &c.runs {
        s.push_str(&render_table(r));
    }
    rocpd_counters::render_rocpd_sides(&c.rocpd, false, &mut s);
    super::fidelity::render(&c.fidelity, false, &mut s);
    if let Some(rows) = &c.rows {
        s.push_str(&super::measurements::render_table(rows));
    }
    for d in &c.details {
        if c.runs.is_none() {
            let _ = writeln!(s, "\n== {}: phases per window", d.row);
            match &d.phases {
                Some(p) => {
                    let _ = writeln!(s, "{}", phase_table(&p.phases));
                    s.push_str(&unavailable_lines(p));
                }
                None => s.push_str("  no phase files linked on both sides\n"),
            }
        }
        let _ = writeln!(s, "== {}: attribution of the wall change", d.row);
        match (&d.attribution, &d.refused) {
            (Some(x), _) => {
                let _ = writeln!(s, "{}", attribution_table(x));
                s.push_str(&side_lines(x));
                s.push_str(&part_notes(x));
            }
            (None, Some(why)) => {
                s.push_str(&crate::render::fmt::wrap(
                    &format!("cannot attribute: {why}"),
                    98,
                    "  ",
                    "    ",
                ));
            }
            (None, None) => {}
        }
        for n in &d.notes {
            s.push_str(&crate::render::fmt::wrap(n, 98, "  note: ", "    "));
        }
    }
    if !c.details.is_empty() {
        s.push_str(
            "parts: each phase's total per run (mean per window x windows, averaged over the \
             row's runs);\n  basis H harness, M in process, L SDK log, P SDK phase line, E \
             estimated, R a rest\n",
        );
        if let Some(p) = c.details.iter().find_map(|d| d.phases.as_ref()) {
            let _ = writeln!(s, "test: {}", p.test);
        }
        if c.runs.is_some() {
            s.push_str(
                "wall of phase-file runs: first to last event of each file (M), no harness \
                 around it\n",
            );
        }
    }
    s
}

/// The comparison as CSV: one line per row, phase and part, `section` saying which.
pub fn render_csv(c: &BuildComparison) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "section", "row", "item", "a", "b", "change", "lo95", "hi95", "verdict", "basis",
    ])?;
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    if c.emulated {
        let mut r = vec![String::new(); 10];
        r[0] = "provenance".into();
        r[2] = emulated::EMULATED.into();
        r[8] = emulated::NOTE.into();
        w.write_record(&r)?;
    }
    if let Some(rows) = &c.rows {
        for r in &rows.rows {
            w.write_record([
                "row".into(),
                row_name(r),
                "median_s".into(),
                f(r.a_median_s),
                f(r.b_median_s),
                f(r.ratio),
                f(r.interval.map(|i| i.lo95)),
                f(r.interval.map(|i| i.hi95)),
                if r.valid {
                    r.verdict.clone()
                } else {
                    "invalid".into()
                },
                "harness".into(),
            ])?;
        }
    }
    let phase_rows = c
        .details
        .iter()
        .filter_map(|d| Some((d.row.clone(), d.phases.as_ref()?)))
        .chain(c.runs.iter().map(|r| ("runs".to_string(), r)));
    for (row, p) in phase_rows {
        for ph in &p.phases {
            w.write_record([
                "phase".into(),
                row.clone(),
                ph.phase.clone(),
                f(ph.a_median_ns),
                f(ph.b_median_ns),
                f(ph.delta_median_ns),
                f(ph.delta_interval.map(|i| i.lo95)),
                f(ph.delta_interval.map(|i| i.hi95)),
                ph.verdict.clone(),
                String::new(),
            ])?;
        }
    }
    for d in &c.fidelity {
        w.write_record([
            "fidelity".into(),
            "runs".into(),
            d.kernel.clone(),
            f(d.a_median),
            f(d.b_median),
            f(d.change.map(|i| i.estimate)),
            f(d.change.map(|i| i.lo95)),
            f(d.change.map(|i| i.hi95)),
            d.verdict.words(),
            d.basis
                .iter()
                .map(|(_, b)| b.code())
                .collect::<Vec<_>>()
                .join("+"),
        ])?;
    }
    for d in &c.details {
        let Some(x) = &d.attribution else { continue };
        for p in &x.parts {
            w.write_record([
                "attribution".into(),
                d.row.clone(),
                p.item.clone(),
                f(p.a_ns),
                f(p.b_ns),
                format!("{}", p.change_ns),
                String::new(),
                String::new(),
                String::new(),
                crate::render::fmt::codes(&p.basis),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
