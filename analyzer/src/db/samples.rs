//! The value of each successful timed run of a whole-run measurement
//! (`krphase_measurement_sample`): what an interval on a ratio of medians is built from. `krphase
//! bench` stores its runs' wall times, `import-benchmark` a database's metrics rows; a
//! replay_perf.py CSV holds only median, min and max, so its rows have none.

use anyhow::Result;
use rusqlite::{Connection, params};

/// Stores the per-run values of measurement `id` in run order, replacing any it had.
pub fn store_samples(conn: &Connection, id: i64, values: &[f64]) -> Result<()> {
    conn.execute(
        "DELETE FROM krphase_measurement_sample WHERE measurement_id = ?1",
        [id],
    )?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO krphase_measurement_sample (measurement_id, seq, value_s) VALUES (?1, ?2, ?3)",
    )?;
    for (seq, v) in values.iter().enumerate().filter(|(_, v)| v.is_finite()) {
        stmt.execute(params![id, seq as i64, v])?;
    }
    Ok(())
}

/// Records where each stored run of measurement `id` (in `seq` order) stood in an interleaved
/// bench, and the order in words.
pub fn store_order(conn: &Connection, id: i64, positions: &[u64], order: &str) -> Result<()> {
    conn.execute(
        "UPDATE krphase_measurement SET run_order = ?2 WHERE id = ?1",
        params![id, order],
    )?;
    let mut stmt = conn.prepare_cached(
        "UPDATE krphase_measurement_sample SET position = ?3 WHERE measurement_id = ?1 AND seq = ?2",
    )?;
    for (seq, p) in positions.iter().enumerate() {
        stmt.execute(params![id, seq as i64, *p as i64])?;
    }
    Ok(())
}

/// The order measurement `id`'s runs were interleaved in (`krphase bench --build`), in words.
pub fn run_order_of(conn: &Connection, id: i64) -> Result<Option<String>> {
    Ok(conn.query_row(
        "SELECT run_order FROM krphase_measurement WHERE id = ?1",
        [id],
        |r| r.get(0),
    )?)
}

/// The per-run values of measurement `id`, in run order (empty when none were stored).
pub fn samples_of(conn: &Connection, id: i64) -> Result<Vec<f64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT value_s FROM krphase_measurement_sample WHERE measurement_id = ?1 ORDER BY seq",
    )?;
    let v = stmt
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_and_replace() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch("INSERT INTO krphase_measurement (id, source) VALUES (3, 'krphase-bench')")
            .unwrap();
        store_samples(&c, 3, &[1.5, f64::NAN, 2.5]).unwrap();
        assert_eq!(samples_of(&c, 3).unwrap(), vec![1.5, 2.5]);
        store_samples(&c, 3, &[4.0]).unwrap();
        assert_eq!(samples_of(&c, 3).unwrap(), vec![4.0]);
        assert!(samples_of(&c, 9).unwrap().is_empty());
        store_order(&c, 3, &[7], "A B").unwrap();
        assert_eq!(run_order_of(&c, 3).unwrap().as_deref(), Some("A B"));
        let p: i64 = c
            .query_row("SELECT position FROM krphase_measurement_sample", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(p, 7);
        c.execute("DELETE FROM krphase_measurement WHERE id = 3", [])
            .unwrap();
        assert!(
            samples_of(&c, 3).unwrap().is_empty(),
            "deleted with its row"
        );
    }
}
