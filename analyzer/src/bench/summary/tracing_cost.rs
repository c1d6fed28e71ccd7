//! P6's split of krphase's own dispatch tracing from replay's tax, from `krphase bench`'s three
//! interleaved rows (one counter group, no rocprofv3 replay): libkrphase.so disabled; krphase
//! driving replay with a filter that matches no kernel and `KRPHASE_GPU_TIMES=0`; the same with
//! dispatch tracing on. Runs are the unit: each figure is a difference of mean whole-run wall
//! times (Welch's t, 95 % interval, the runs a side stated) over the dispatches a run makes.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::emulated::command_is_emulated;
use crate::db::measurements::{P6_DRIVE_TRACED, P6_DRIVE_UNTRACED, P6_TOOL_OFF};
use crate::stats::run_test::welch;

/// One per-dispatch figure: B − A over the runs, per dispatch.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PerDispatch {
    pub estimate_ns: f64,
    pub lo95_ns: f64,
    pub hi95_ns: f64,
    /// Timed runs of the two sides (A, B).
    pub runs: (usize, usize),
}

/// One row's timed runs as the split uses them.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub measurement_id: i64,
    pub variant: String,
    pub wall_s: Vec<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TracingCost {
    pub tool_off: Side,
    pub untraced: Side,
    pub traced: Side,
    /// Dispatches per run: the replay windows (CONFIG callbacks) in each drive run's phase
    /// file, the same in every run of both drive rows.
    pub dispatches_per_run: Option<i64>,
    /// krphase's dispatch tracing: traced − untraced.
    pub tracing: Option<PerDispatch>,
    /// The replay tax with krphase's tracing: traced − tool off.
    pub tax_with_tracing: Option<PerDispatch>,
    /// The replay tax alone: untraced − tool off.
    pub tax_without_tracing: Option<PerDispatch>,
    /// The runs came from the emulator: the figures are EMULATED.
    pub emulated: bool,
    /// Why no figure is given (the rows do not hold what they claim, too few runs).
    pub refused: Option<String>,
}

/// What the basis of every figure is, as the summary states it.
pub const BASIS: &str = "whole-run wall time (H), difference of run means (Welch, 95 % \
                         interval), over the replay windows per run in the phase files";

fn side(conn: &Connection, variant: &str) -> Result<Option<Side>> {
    let id: Option<i64> = conn
        .query_row(
            "SELECT MAX(id) FROM krphase_measurement WHERE experiment = 'P6' AND variant = ?1",
            [variant],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    let Some(id) = id else { return Ok(None) };
    let mut stmt = conn.prepare(
        "SELECT value_s FROM krphase_measurement_sample WHERE measurement_id = ?1 ORDER BY seq",
    )?;
    let wall_s = stmt
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(Side {
        measurement_id: id,
        variant: variant.to_string(),
        wall_s,
    }))
}

/// A linked run of a drive row: its windows, whether GPU times were off, its mode, command.
struct LinkedRun {
    windows: i64,
    gpu_times_off: bool,
    mode: Option<String>,
    command: Option<String>,
}

fn linked_runs(conn: &Connection, measurement: i64) -> Result<Vec<LinkedRun>> {
    let mut stmt = conn.prepare(
        "SELECT (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id), r.gpu_times_off,
                r.mode, r.command
         FROM krphase_measurement_run mr JOIN krphase_run r ON r.id = mr.run_id
         WHERE mr.measurement_id = ?1 ORDER BY r.id",
    )?;
    let rows = stmt
        .query_map(params![measurement], |r| {
            Ok(LinkedRun {
                windows: r.get(0)?,
                gpu_times_off: r.get::<_, i64>(1)? != 0,
                mode: r.get(2)?,
                command: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Why a drive row's runs do not hold what the row claims, if they do not.
fn check_drive(s: &Side, runs: &[LinkedRun], gpu_times_off: bool) -> Option<String> {
    let what = format!("measurement {} ({})", s.measurement_id, s.variant);
    if runs.len() != s.wall_s.len() {
        return Some(format!(
            "{what}: {} timed runs but {} phase files linked (one per run needed)",
            s.wall_s.len(),
            runs.len()
        ));
    }
    if let Some(r) = runs.iter().find(|r| r.mode.as_deref() != Some("drive")) {
        return Some(format!(
            "{what}: a run is in mode {}, not drive (krphase did not own replay)",
            r.mode.as_deref().unwrap_or("?")
        ));
    }
    if runs.iter().any(|r| r.gpu_times_off != gpu_times_off) {
        return Some(format!(
            "{what}: a run's dispatch tracing is {}, not {} as the row says",
            if gpu_times_off { "on" } else { "off" },
            if gpu_times_off { "off" } else { "on" }
        ));
    }
    None
}

/// The dispatches per run: every drive run's window count, which must agree.
fn dispatches(runs: &[&LinkedRun]) -> Result<i64, String> {
    let first = runs.first().map(|r| r.windows).unwrap_or(0);
    if first <= 0 {
        return Err(
            "the drive runs' phase files hold no replay window to count dispatches by".into(),
        );
    }
    if let Some(r) = runs.iter().find(|r| r.windows != first) {
        return Err(format!(
            "the runs do not make the same dispatches ({first} and {} replay windows): the \
             workload must be deterministic for a per-dispatch figure",
            r.windows
        ));
    }
    Ok(first)
}

fn per_dispatch(a: &Side, b: &Side, n: i64) -> Option<PerDispatch> {
    let t = welch(&a.wall_s, &b.wall_s, 0.05)?;
    let k = 1e9 / n as f64;
    Some(PerDispatch {
        estimate_ns: t.interval.estimate * k,
        lo95_ns: t.interval.lo95 * k,
        hi95_ns: t.interval.hi95 * k,
        runs: (a.wall_s.len(), b.wall_s.len()),
    })
}

/// The split, when the database holds all three rows; `None` otherwise.
pub fn tracing_cost(conn: &Connection) -> Result<Option<TracingCost>> {
    let (Some(off), Some(untraced), Some(traced)) = (
        side(conn, P6_TOOL_OFF)?,
        side(conn, P6_DRIVE_UNTRACED)?,
        side(conn, P6_DRIVE_TRACED)?,
    ) else {
        return Ok(None);
    };
    let (ru, rt) = (
        linked_runs(conn, untraced.measurement_id)?,
        linked_runs(conn, traced.measurement_id)?,
    );
    let all: Vec<&LinkedRun> = ru.iter().chain(&rt).collect();
    let emulated = all
        .iter()
        .any(|r| r.command.as_deref().is_some_and(command_is_emulated));
    let few = [&off, &untraced, &traced]
        .iter()
        .find(|s| s.wall_s.len() < 2)
        .map(|s| {
            format!(
                "measurement {} ({}) has {} timed run(s); an interval needs 2 or more a side",
                s.measurement_id,
                s.variant,
                s.wall_s.len()
            )
        });
    let checked = few
        .or_else(|| check_drive(&untraced, &ru, true))
        .or_else(|| check_drive(&traced, &rt, false))
        .map_or_else(|| dispatches(&all), Err);
    let mut out = TracingCost {
        dispatches_per_run: checked.as_ref().ok().copied(),
        tracing: None,
        tax_with_tracing: None,
        tax_without_tracing: None,
        emulated,
        refused: checked.as_ref().err().cloned(),
        tool_off: off,
        untraced,
        traced,
    };
    if let Ok(n) = checked {
        out.tracing = per_dispatch(&out.untraced, &out.traced, n);
        out.tax_with_tracing = per_dispatch(&out.tool_off, &out.traced, n);
        out.tax_without_tracing = per_dispatch(&out.tool_off, &out.untraced, n);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three rows, two timed runs each; the drive rows' runs hold `windows[i]` windows and
    /// have GPU times off as given (untraced runs first).
    fn db(windows: [i64; 4], off: [bool; 4]) -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        let rows = [
            (1, P6_TOOL_OFF, [1.0, 1.2]),
            (2, P6_DRIVE_UNTRACED, [1.1, 1.3]),
            (3, P6_DRIVE_TRACED, [2.1, 2.3]),
        ];
        for (id, variant, walls) in rows {
            c.execute(
                "INSERT INTO krphase_measurement (id, source, experiment, variant, samples) \
                 VALUES (?1, 'krphase-bench', 'P6', ?2, 2)",
                params![id, variant],
            )
            .unwrap();
            for (seq, w) in walls.iter().enumerate() {
                c.execute(
                    "INSERT INTO krphase_measurement_sample (measurement_id, seq, value_s) \
                     VALUES (?1, ?2, ?3)",
                    params![id, seq as i64, w],
                )
                .unwrap();
            }
        }
        for run in 0..4i64 {
            let u = run as usize;
            c.execute(
                "INSERT INTO krphase_run (id, path, file_hash, imported_at, mode, command, \
                 gpu_times_off) VALUES (?1, 'f', ?2, 'now', 'drive', 'krphase-emu run saxpy', ?3)",
                params![run + 1, format!("h{run}"), off[u]],
            )
            .unwrap();
            c.execute(
                "INSERT INTO krphase_measurement_run VALUES (?1, ?2)",
                params![2 + run / 2, run + 1],
            )
            .unwrap();
            for d in 0..windows[u] {
                c.execute(
                    "INSERT INTO krphase_window (run_id, dispatch_id, outcome) \
                     VALUES (?1, ?2, 'opt_out')",
                    params![run + 1, d],
                )
                .unwrap();
            }
        }
        c
    }

    #[test]
    fn each_figure_is_a_difference_of_run_means_per_dispatch() {
        let c = tracing_cost(&db([100; 4], [true, true, false, false]))
            .unwrap()
            .expect("all three rows");
        assert_eq!(
            (c.refused.as_deref(), c.dispatches_per_run),
            (None, Some(100))
        );
        assert!(c.emulated);
        let near = |f: Option<PerDispatch>, ns: f64| {
            let f = f.expect("a figure");
            assert_eq!(f.runs, (2, 2));
            assert!((f.estimate_ns - ns).abs() < 1.0, "{f:?} vs {ns}");
            assert!(f.lo95_ns < ns && ns < f.hi95_ns, "{f:?}");
        };
        near(c.tracing, 1e7); // (2.2 - 1.2) s over 100 dispatches
        near(c.tax_with_tracing, 1.1e7);
        near(c.tax_without_tracing, 1e6);
    }

    #[test]
    fn rows_that_do_not_hold_what_they_claim_give_no_figure() {
        for (windows, off, why) in [
            (
                [100, 100, 100, 99],
                [true, true, false, false],
                "not make the same dispatches",
            ),
            (
                [100; 4],
                [true, false, false, false],
                "tracing is on, not off",
            ),
            (
                [100; 4],
                [true, true, true, false],
                "tracing is off, not on",
            ),
            ([0; 4], [true, true, false, false], "no replay window"),
        ] {
            let c = tracing_cost(&db(windows, off)).unwrap().unwrap();
            let r = c.refused.as_deref().unwrap_or("");
            assert!(r.contains(why), "{r:?} should say {why:?}");
            assert!(c.tracing.is_none() && c.tax_without_tracing.is_none());
        }
    }
}
