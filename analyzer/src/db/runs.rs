//! Which runs a command works on: a run selector (numeric id or label) resolved to run ids.

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension};

/// Resolves a run selector: a numeric id or a label (the newest run with that label).
pub fn resolve_run(conn: &Connection, sel: &str) -> Result<i64> {
    if let Ok(id) = sel.parse::<i64>() {
        let found: Option<i64> = conn
            .query_row("SELECT id FROM krphase_run WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        return found.with_context(|| format!("unknown run id {id}"));
    }
    let found: Option<i64> = conn
        .query_row(
            "SELECT id FROM krphase_run WHERE label = ?1 ORDER BY id DESC LIMIT 1",
            [sel],
            |r| r.get(0),
        )
        .optional()?;
    found.with_context(|| format!("no run labelled {sel:?}"))
}

/// Run ids selected by `--run` / `--label` (all runs when neither is given).
pub fn select_runs(conn: &Connection, run: Option<&str>, label: Option<&str>) -> Result<Vec<i64>> {
    if let Some(r) = run {
        return Ok(vec![resolve_run(conn, r)?]);
    }
    let mut stmt =
        conn.prepare("SELECT id FROM krphase_run WHERE ?1 IS NULL OR label = ?1 ORDER BY id")?;
    let ids: Vec<i64> = stmt
        .query_map([label], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if ids.is_empty() {
        match label {
            Some(l) => bail!("no run labelled {l:?}"),
            None => bail!("the database holds no runs (run `krphase import` first)"),
        }
    }
    Ok(ids)
}

/// Run ids for one side of a comparison: a numeric id, or every run with that label.
pub fn select_pooled(conn: &Connection, sel: &str) -> Result<Vec<i64>> {
    if sel.parse::<i64>().is_ok() {
        return Ok(vec![resolve_run(conn, sel)?]);
    }
    select_runs(conn, None, Some(sel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_run_by_id_and_label() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, label, imported_at) VALUES (7, 'p', 'h', 'stream-2p', 'now')",
            [],
        )
        .unwrap();
        assert_eq!(resolve_run(&c, "7").unwrap(), 7);
        assert_eq!(resolve_run(&c, "stream-2p").unwrap(), 7);
        assert!(
            resolve_run(&c, "8")
                .unwrap_err()
                .to_string()
                .contains("unknown run id 8")
        );
        assert!(resolve_run(&c, "nope").is_err());
    }
}
