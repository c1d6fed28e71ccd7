//! Counter values per pass (`krphase_counter`, from the SDK's dispatch counting service): what
//! `report` and `export perfetto` read.

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use super::basis::Basis;

/// One counter of one pass of a replay window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterValue {
    pub window_id: Option<i64>,
    pub dispatch_id: i64,
    pub kernel: Option<String>,
    pub pass: i64,
    pub counter: String,
    pub value: f64,
    /// Dimension instances the tool summed into `value`.
    pub instances: i64,
    pub basis: Basis,
}

/// Every counter value of run `run_id`, by window, pass and counter name (an unnamed counter
/// shows as `counter <id>`).
pub fn run_counters(conn: &Connection, run_id: i64) -> Result<Vec<CounterValue>> {
    let mut st = conn.prepare_cached(
        "SELECT c.window_id, c.dispatch_id, krphase_kernel_name(w.kernel), c.pass_index,
                COALESCE(c.name, 'counter ' || c.counter_id), c.value, c.instances
         FROM krphase_counter c LEFT JOIN krphase_window w ON w.id = c.window_id
         WHERE c.run_id = ?1
         ORDER BY c.window_id IS NULL, c.window_id, c.dispatch_id, c.pass_index, c.rowid",
    )?;
    let rows = st.query_map([run_id], |r| {
        Ok(CounterValue {
            window_id: r.get(0)?,
            dispatch_id: r.get(1)?,
            kernel: r.get(2)?,
            pass: r.get(3)?,
            counter: r.get(4)?,
            value: r.get(5)?,
            instances: r.get(6)?,
            basis: Basis::SdkCounting,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The counter values of one window, by pass (for trace args).
pub fn window_counters(conn: &Connection, window_id: i64) -> Result<Vec<(i64, String, f64)>> {
    let mut st = conn.prepare_cached(
        "SELECT pass_index, COALESCE(name, 'counter ' || counter_id), value
         FROM krphase_counter WHERE window_id = ?1 ORDER BY pass_index, rowid",
    )?;
    let rows = st.query_map([window_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
