//! `krphase compare A B`: two builds (labels or run ids) side by side. Whole-run measurement rows
//! ([`measurements`]), phases per window of phase-file runs ([`phases`]), the attribution of a
//! kernel-replay row's wall change to its phases ([`attribution`]) with what its evidence lacks
//! ([`evidence_notes`]), pass fidelity per kernel ([`fidelity`]), all put together per pair of sides ([`builds`]) and written as a table,
//! CSV, JSON, a pull-request section in Markdown ([`markdown`]) or an HTML page, with where the
//! numbers came from ([`provenance`]).

pub mod attribution;
pub mod builds;
pub mod evidence_notes;
pub mod fidelity;
pub mod markdown;
pub mod measurements;
pub mod phases;
pub mod provenance;

use std::path::Path;

use anyhow::{Context, Result};

use crate::render::{Format, html};

/// `krphase compare A B`: builds the comparison and prints it in `format` (or, with `output`,
/// writes it into that file and says so).
pub fn compare_command(
    db: &Path,
    a: &str,
    b: &str,
    what: builds::CompareWhat,
    format: Format,
    margin_pct: f64,
    output: Option<&Path>,
) -> Result<()> {
    if !(margin_pct > 0.0 && margin_pct < 100.0) {
        anyhow::bail!("--margin must be a percentage between 0 and 100, not {margin_pct}");
    }
    let conn = crate::db::open_existing(db)?;
    let c = builds::compare_builds(&conn, a, b, what, margin_pct)?;
    let text = match format {
        Format::Table => builds::render_text(&c),
        Format::Csv => builds::render_csv(&c)?,
        Format::Json => serde_json::to_string_pretty(&c)? + "\n",
        Format::Markdown => markdown::render_markdown(&c),
        Format::Html => html::page(
            &format!("krphase compare {a} {b}"),
            &[html::Part::Markdown(markdown::render_markdown(&c))],
        ),
    };
    match output {
        None => print!("{text}"),
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}
