//! `krphase report --by rank`: the summary (with the cross-rank lines), then one row per rank
//! instead of one section per run, in every report format.

use anyhow::{Result, bail};

use super::formats::head_text;
use crate::answers::ranks::CrossRank;
use crate::answers::run_report::RunReport;
use crate::answers::{findings, overview};
use crate::render::table::{push_table, table};
use crate::render::{Format, html};

/// The report of `reports` by rank; an error when fewer than two of them carry a rank.
pub fn render(reports: &[RunReport], format: Format) -> Result<String> {
    let o = overview::Overview::of(reports);
    let Some(c) = &o.cross_rank else {
        let ranked = reports.iter().filter(|r| r.rank.is_some()).count();
        bail!(
            "--by rank: {ranked} of the {} selected runs carry a rank (at least 2 needed); a rank \
             is recorded when the application was started by a launcher that sets \
             OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK, SLURM_PROCID or \
             RANK (phase files of format 3.1 or later)",
            reports.len()
        );
    };
    let found = findings::findings(&o);
    Ok(match format {
        Format::Json => {
            let v = serde_json::json!({ "summary": o, "findings": found, "ranks": c });
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Csv => csv(c)?,
        Format::Table | Format::Markdown => {
            let md = format == Format::Markdown;
            head_text(&o, &found, md) + &table_text(c, md)
        }
        Format::Html => html::page(
            "krphase report by rank",
            &[html::Part::Markdown(
                head_text(&o, &found, true) + &table_text(c, true),
            )],
        ),
    })
}

fn table_text(c: &CrossRank, md: bool) -> String {
    let (head, rows) = c.table();
    let mut out = String::new();
    out.push_str(if md {
        "## ranks\n\nWindows replayed, their time summed (replay), and the window's mean, p50, \
         p99 and max per rank.\n\n"
    } else {
        "== ranks (windows replayed, their time summed, and the window's mean, p50, p99, max)\n"
    });
    let mut t = table(md, &head);
    if !md {
        t.load_preset(comfy_table::presets::NOTHING);
    }
    for r in rows {
        t.add_row(r);
    }
    push_table(&mut out, &t, md);
    out
}

/// One CSV row per rank, times in ns (the table's durations are for reading).
fn csv(c: &CrossRank) -> Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rank",
        "run",
        "label",
        "host",
        "pid",
        "windows",
        "declined",
        "replay_ns",
        "mean_window_ns",
        "p50_window_ns",
        "p99_window_ns",
        "max_window_ns",
        "largest_phase",
        "largest_phase_share",
        "window_basis",
    ])?;
    let s = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in &c.ranks {
        let bases: Vec<&str> = r.window_basis.iter().map(|b| b.code()).collect();
        w.write_record([
            r.rank.to_string(),
            r.run_id.to_string(),
            r.label.clone().unwrap_or_default(),
            r.host.clone().unwrap_or_default(),
            s(r.pid),
            r.replayed.to_string(),
            r.declined.to_string(),
            r.replay_ns.to_string(),
            r.mean_window_ns
                .map(|m| format!("{m:.1}"))
                .unwrap_or_default(),
            s(r.p50_window_ns),
            s(r.p99_window_ns),
            s(r.max_window_ns),
            r.largest_phase
                .as_ref()
                .map(|p| p.0.clone())
                .unwrap_or_default(),
            r.largest_phase
                .as_ref()
                .map(|p| format!("{:.4}", p.1))
                .unwrap_or_default(),
            bases.join(";"),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
