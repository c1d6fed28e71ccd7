//! What one pass over a run's windows counts: each phase's values, replayed and declined windows
//! (and why), stuck and opted-out ones, bytes and executed passes; or the same tally from the
//! run's stored summary, without reading a window.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;

use super::per_phase::PhaseSamples;
use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW, WindowRow};
use crate::db::summary::{RunSummary, covers};

/// What one pass over a run's windows counts (or its stored summary holds).
#[derive(Default)]
pub(super) struct WindowTally {
    /// In the order of [`PHASES`].
    pub(super) phases: Vec<PhaseSamples>,
    /// Per window: window time minus its top-level phases (the time no phase covers).
    pub(super) unattributed: PhaseSamples,
    pub(super) bytes_bases: BTreeMap<Basis, u64>,
    pub(super) replayed: u64,
    pub(super) declined: u64,
    /// Declined windows with no plain dispatch of their own (counted once as a dispatch).
    pub(super) declined_without_plain: u64,
    pub(super) stuck: u64,
    pub(super) stuck_ns: i64,
    pub(super) by_reason: BTreeMap<String, u64>,
    pub(super) declined_ns: i64,
    pub(super) opt_out_windows: u64,
    pub(super) opt_out_ns: i64,
    pub(super) snapshot_bytes: i64,
    pub(super) restore_bytes: i64,
    pub(super) log_joined: bool,
    pub(super) executed_passes: i64,
}

impl WindowTally {
    fn add_declined(&mut self, w: &WindowRow, has_plain: bool) {
        self.declined_without_plain += u64::from(!has_plain);
        self.declined += 1;
        if let Some(ns) = w.stuck_ns {
            self.stuck += 1;
            self.stuck_ns += ns.max(0);
        }
        *self.by_reason.entry(w.reason.clone()).or_default() += 1;
        let ns = w.phase_ns[WINDOW].unwrap_or(0);
        self.declined_ns += ns;
        if w.outcome == "opt_out" {
            self.opt_out_windows += 1;
            self.opt_out_ns += ns;
        }
    }

    fn add_replayed(&mut self, w: &WindowRow) {
        self.replayed += 1;
        self.executed_passes += w.executed_passes.unwrap_or(0);
        let mut covered = 0;
        for (k, (p, v)) in self.phases.iter_mut().zip(w.phase_ns).enumerate() {
            if let Some(v) = v {
                p.add_raw(v);
                let v = v.max(0);
                p.total += v;
                p.values.push(v);
                if let Some(b) = w.phase_basis[k] {
                    *p.bases.entry(b).or_default() += 1;
                }
                if covers(k, &w.phase_ns) {
                    covered += v;
                }
            }
        }
        if let Some(window) = w.phase_ns[WINDOW] {
            let u = &mut self.unattributed;
            let rest = window.max(0) - covered;
            u.add_raw(rest);
            u.values.push(rest);
            if let Some(b) = w.phase_basis[WINDOW] {
                *u.bases.entry(b).or_default() += 1;
            }
        }
        if let Some(b) = w.bytes_basis {
            *self.bytes_bases.entry(b).or_default() += 1;
        }
        self.log_joined |= w.phase_ns[phases::index("snapshot").expect("phase")].is_some();
        let b = w.snapshot_bytes.unwrap_or(0);
        self.snapshot_bytes += b;
        self.restore_bytes += b * w.restores.unwrap_or(0);
    }
}

/// Streams the run's windows once, counting replayed and declined ones.
pub(super) fn tally_windows(conn: &Connection, run_id: i64) -> Result<WindowTally> {
    let mut t = WindowTally {
        phases: PHASES.iter().map(|_| PhaseSamples::default()).collect(),
        ..WindowTally::default()
    };
    // A declined dispatch usually also ran once as a plain dispatch; count it once.
    let mut has_plain = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM krphase_dispatch WHERE run_id = ?1 AND dispatch_id = ?2)",
    )?;
    phases::for_each_window(conn, run_id, |w| {
        if w.replayed() {
            t.add_replayed(w);
        } else {
            let plain: bool = has_plain.query_row([run_id, w.dispatch_id], |r| r.get(0))?;
            t.add_declined(w, plain);
        }
        Ok(())
    })?;
    Ok(t)
}

/// The tally a stored summary holds: the same figures, without reading a window.
pub(super) fn tally_stored(s: RunSummary) -> WindowTally {
    let t = s.tallies;
    let mut phases = s.phases;
    let rest = phases.pop().unwrap_or_default();
    WindowTally {
        phases: phases
            .into_iter()
            .map(|p| PhaseSamples::stored(p, true))
            .collect(),
        unattributed: PhaseSamples::stored(rest, false),
        bytes_bases: t.bytes_bases,
        replayed: t.replayed,
        declined: t.declined,
        declined_without_plain: t.declined_without_plain,
        stuck: t.stuck,
        stuck_ns: t.stuck_ns,
        by_reason: t.declines_by_reason,
        declined_ns: t.declined_ns,
        opt_out_windows: t.opt_out_windows,
        opt_out_ns: t.opt_out_ns,
        snapshot_bytes: t.snapshot_bytes,
        restore_bytes: t.restore_bytes,
        log_joined: t.log_joined,
        executed_passes: t.executed_passes,
    }
}
