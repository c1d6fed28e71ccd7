//! Which runs a command works on, and the runs themselves: the one selection rule every command
//! shares, the run list (`krphase runs`), and relabelling.
//!
//! **The selection rule.** A selector is a run id (all digits) or a label. An id selects that run;
//! a label selects *every* run carrying it, in id order. Commands that pool (`compare`) pool them;
//! commands that answer per run (`report`, `plot`, `export perfetto`) answer for each of them.
//! Only a command that needs exactly one run (`import-log --run`) refuses a label that selects
//! several, naming their ids.

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// The runs `sel` selects: the run with that id, or every run with that label (id order).
/// Unknown ids and labels are errors.
pub fn select(conn: &Connection, sel: &str) -> Result<Vec<i64>> {
    if let Ok(id) = sel.parse::<i64>() {
        let found: Option<i64> = conn
            .query_row("SELECT id FROM krphase_run WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        return Ok(vec![found.with_context(|| format!("unknown run id {id}"))?]);
    }
    let ids = labelled(conn, sel)?;
    if ids.is_empty() {
        bail!("no run labelled {sel:?}; {}", known_labels(conn)?);
    }
    Ok(ids)
}

/// The labels a selector may name (runs' and measurements'), for an error about one that
/// names nothing.
pub fn known_labels(conn: &Connection) -> Result<String> {
    let mut labels: Vec<String> = conn
        .prepare_cached(
            "SELECT label FROM krphase_run WHERE label IS NOT NULL
             UNION SELECT label FROM krphase_measurement WHERE label IS NOT NULL ORDER BY 1",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    const SHOWN: usize = 20;
    Ok(match labels.len() {
        0 => "the database holds no labelled run or measurement".into(),
        n if n > SHOWN => {
            labels.truncate(SHOWN);
            format!(
                "the labels are: {} (and {} more)",
                labels.join(", "),
                n - SHOWN
            )
        }
        _ => format!("the labels are: {}", labels.join(", ")),
    })
}

/// Every run labelled `label`, in id order (empty when none).
pub fn labelled(conn: &Connection, label: &str) -> Result<Vec<i64>> {
    let mut stmt =
        conn.prepare_cached("SELECT id FROM krphase_run WHERE label = ?1 ORDER BY id")?;
    let ids = stmt
        .query_map([label], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}

/// Exactly one run: an id, or a label that only one run carries. A label on several runs is
/// refused with their ids, so the caller can pick one.
pub fn resolve_run(conn: &Connection, sel: &str) -> Result<i64> {
    let ids = select(conn, sel)?;
    match ids.as_slice() {
        [one] => Ok(*one),
        _ => bail!(
            "label {sel:?} selects {} runs ({}); give one run id",
            ids.len(),
            id_list(&ids)
        ),
    }
}

/// Runs selected by several selectors, each once, in the order first selected; every run when
/// `sels` is empty (an empty database is then an error).
pub fn select_all(conn: &Connection, sels: &[String]) -> Result<Vec<i64>> {
    if sels.is_empty() {
        let ids = all_runs(conn)?;
        if ids.is_empty() {
            bail!("the database holds no runs (run `krphase import` first)");
        }
        return Ok(ids);
    }
    let mut out: Vec<i64> = Vec::new();
    for s in sels {
        for id in select(conn, s)? {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    Ok(out)
}

/// Every run id, in order (empty for a database without runs).
pub fn all_runs(conn: &Connection) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare("SELECT id FROM krphase_run ORDER BY id")?;
    let ids = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}

/// Run ids as `3, 5, 7`.
pub fn id_list(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row of `krphase runs`.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub run_id: i64,
    pub label: Option<String>,
    pub pid: Option<i64>,
    pub host: Option<String>,
    pub mode: Option<String>,
    /// Replayed windows.
    pub windows: i64,
    /// Declined windows (SDK declines and tool opt-outs).
    pub declines: i64,
    /// First to last event timestamp of the file.
    pub wall_ns: Option<i64>,
    pub file: String,
    pub imported_at: String,
    pub truncated: bool,
    /// The run came from the emulator (`db::emulated`).
    pub emulated: bool,
}

/// Every run with its counts, in id order.
pub fn list_runs(conn: &Connection) -> Result<Vec<RunRow>> {
    let mut stmt = conn.prepare(
        "SELECT r.id, r.label, r.pid, r.host, r.mode,
                (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND w.outcome = 'replayed'),
                (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND w.outcome <> 'replayed'),
                r.\"end\" - r.\"start\", r.path, r.imported_at, r.truncated, r.command
         FROM krphase_run r ORDER BY r.id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                label: r.get(1)?,
                pid: r.get(2)?,
                host: r.get(3)?,
                mode: r.get(4)?,
                windows: r.get(5)?,
                declines: r.get(6)?,
                wall_ns: r.get(7)?,
                file: r.get(8)?,
                imported_at: r.get(9)?,
                truncated: r.get::<_, i64>(10)? != 0,
                emulated: r
                    .get::<_, Option<String>>(11)?
                    .is_some_and(|c| super::emulated::command_is_emulated(&c)),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// The label of a run (`None`: unlabelled). Errors for an unknown id.
pub fn label_of(conn: &Connection, run_id: i64) -> Result<Option<String>> {
    conn.query_row(
        "SELECT label FROM krphase_run WHERE id = ?1",
        [run_id],
        |r| r.get(0),
    )
    .optional()?
    .with_context(|| format!("unknown run id {run_id}"))
}

/// Sets a run's label; returns the label it had.
pub fn relabel(conn: &Connection, run_id: i64, label: &str) -> Result<Option<String>> {
    let old = label_of(conn, run_id)?;
    conn.execute(
        "UPDATE krphase_run SET label = ?1 WHERE id = ?2",
        params![label, run_id],
    )?;
    Ok(old)
}

/// The `n` of the `pass_<n>` directory a run's phase file sits in, if any: rocprofv3 writes
/// each launch of application replay (one per counter group) under `pass_1`, `pass_2`, ….
pub fn pass_dir(path: &str) -> Option<u32> {
    path.split(['/', '\\'])
        .filter_map(|c| c.strip_prefix("pass_")?.parse().ok())
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, label, imported_at) VALUES
               (7, 'a', 'h7', 'stream-2p', 'now'), (8, 'b', 'h8', 'stream-2p', 'now'),
               (9, 'c', 'h9', 'solo', 'now'), (10, 'd', 'h10', NULL, 'now');",
        )
        .unwrap();
        c
    }

    #[test]
    fn an_id_selects_one_run_and_a_label_all_of_its_runs() {
        let c = db();
        assert_eq!(select(&c, "7").unwrap(), vec![7]);
        assert_eq!(select(&c, "stream-2p").unwrap(), vec![7, 8]);
        assert!(
            select(&c, "11")
                .unwrap_err()
                .to_string()
                .contains("unknown run id 11")
        );
        assert!(select(&c, "nope").unwrap_err().to_string().contains("nope"));
        assert_eq!(resolve_run(&c, "solo").unwrap(), 9);
        let e = resolve_run(&c, "stream-2p").unwrap_err().to_string();
        assert!(e.contains("selects 2 runs (7, 8)"), "{e}");
        assert_eq!(
            select_all(&c, &["solo".into(), "stream-2p".into(), "7".into()]).unwrap(),
            vec![9, 7, 8]
        );
        assert_eq!(select_all(&c, &[]).unwrap(), vec![7, 8, 9, 10]);
    }

    #[test]
    fn relabel_returns_the_old_label() {
        let c = db();
        assert_eq!(relabel(&c, 10, "x").unwrap(), None);
        assert_eq!(relabel(&c, 10, "y").unwrap(), Some("x".into()));
        assert_eq!(label_of(&c, 10).unwrap(), Some("y".into()));
        assert!(relabel(&c, 99, "z").is_err());
        let rows = list_runs(&c).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[3].label.as_deref(), Some("y"));
    }
}
