//! What the detector reads from the database, per kernel and window: each pass's GPU and host
//! time, and the counters collected in more than one pass of a window (drive mode's counters,
//! rocprofv3's JSON), each by pass index.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;

use crate::db::basis::Basis;

/// One pass of one replayed window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassTimes {
    pub pass: i64,
    pub gpu_ns: Option<i64>,
    pub host_ns: Option<i64>,
}

/// A replayed window's passes, complete ones only, in pass order.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowTimes {
    pub window_id: i64,
    pub kernel: String,
    pub passes: Vec<PassTimes>,
}

/// Every replayed window of `run` with its complete passes, in window order.
pub fn window_times(conn: &Connection, run: i64) -> Result<Vec<WindowTimes>> {
    let mut st = conn.prepare_cached(
        "SELECT w.id, COALESCE(krphase_kernel_name(w.kernel), '?'), p.pass_index,
                p.gpu_end - p.gpu_start, p.\"end\" - p.\"start\"
         FROM krphase_window w JOIN krphase_pass p ON p.window_id = w.id
         WHERE w.run_id = ?1 AND w.outcome = 'replayed' AND p.incomplete = 0
         ORDER BY w.id, p.pass_index",
    )?;
    let mut rows = st.query([run])?;
    let mut out: Vec<WindowTimes> = Vec::new();
    while let Some(r) = rows.next()? {
        let window_id: i64 = r.get(0)?;
        let pass = PassTimes {
            pass: r.get(2)?,
            gpu_ns: r.get::<_, Option<i64>>(3)?.filter(|v| *v > 0),
            host_ns: r.get::<_, Option<i64>>(4)?.filter(|v| *v > 0),
        };
        match out.last_mut() {
            Some(w) if w.window_id == window_id => w.passes.push(pass),
            _ => out.push(WindowTimes {
                window_id,
                kernel: r.get(1)?,
                passes: vec![pass],
            }),
        }
    }
    Ok(out)
}

/// The values of one counter in one window (or one dispatch, for rocprofv3's JSON) by pass.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatedCounter {
    pub kernel: String,
    pub counter: String,
    pub basis: Basis,
    /// (pass index, value), in pass order; at least two.
    pub passes: Vec<(i64, f64)>,
}

/// Counters collected in more than one pass of a window: the tool's (`krphase_counter`) and
/// those imported from rocprofv3's JSON (`krphase_json_counter`).
pub fn repeated_counters(conn: &Connection, run: i64) -> Result<Vec<RepeatedCounter>> {
    let mut out = Vec::new();
    let sources = [
        (
            Basis::SdkCounting,
            "SELECT c.window_id, COALESCE(krphase_kernel_name(w.kernel), '?'),
                    COALESCE(c.name, 'counter ' || c.counter_id), c.pass_index, c.value
             FROM krphase_counter c JOIN krphase_window w ON w.id = c.window_id
             WHERE c.run_id = ?1 ORDER BY c.window_id, 3, c.pass_index",
        ),
        (
            Basis::Rocprofv3Json,
            "SELECT c.window_id, COALESCE(krphase_kernel_name(w.kernel), '?'),
                    c.counter, c.pass_index, c.value
             FROM krphase_json_counter c JOIN krphase_window w ON w.id = c.window_id
             WHERE c.run_id = ?1 ORDER BY c.window_id, 3, c.pass_index",
        ),
    ];
    for (basis, sql) in sources {
        let mut st = conn.prepare_cached(sql)?;
        let mut rows = st.query([run])?;
        let mut by: BTreeMap<(i64, String), RepeatedCounter> = BTreeMap::new();
        while let Some(r) = rows.next()? {
            let counter: String = r.get(2)?;
            let e = by
                .entry((r.get(0)?, counter.clone()))
                .or_insert(RepeatedCounter {
                    kernel: r.get(1)?,
                    counter,
                    basis,
                    passes: Vec::new(),
                });
            e.passes.push((r.get(3)?, r.get(4)?));
        }
        out.extend(by.into_values().filter(|c| c.passes.len() >= 2));
    }
    Ok(out)
}
