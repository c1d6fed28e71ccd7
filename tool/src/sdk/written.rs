//! The one stderr line at finalize, always said: where the phase file went and what it holds
//! (windows, declines, events, records dropped by kind, the application's wait), from what the
//! writer reports having written (no file is opened or read on the application's thread), or,
//! when the file ends without its trailer, what the tool counted and why the trailer is missing.

use crate::recorder::{Finished, NotWritten};
use krphase_format::{Mode, Trailer};
use std::path::Path;

/// The finalize line for the file at `path`, recorded in `mode`.
pub fn line(path: &Path, mode: Mode, f: &Finished) -> String {
    match f {
        Finished::Written(w) => {
            let t = &w.trailer;
            format!(
                "wrote {}: {}, {} declines, {} events, {}{}",
                path.display(),
                windows(mode, t.windows, w.observed_windows),
                t.declines,
                t.events_written,
                dropped(t),
                waited(t.stall_ns)
            )
        }
        Finished::NotWritten(t, why, unwritten) => format!(
            "{} ends without its trailer ({}; krphase reports it truncated): {}, {} declines, {}, {unwritten} more recorded but not written{}",
            path.display(),
            match why {
                NotWritten::Budget => "the writer did not finish within the tool's wait limit",
                NotWritten::WriteFailed => "writing it failed",
            },
            windows(mode, t.windows, 0),
            t.declines,
            dropped(t),
            waited(crate::recorder::stall_ns())
        ),
    }
}

/// Drive mode: the windows the tool saw open. Observe mode: the tool sees no window open; the
/// dispatches seen more than once are the windows the reader will find.
fn windows(mode: Mode, seen: u64, observed: u64) -> String {
    match mode {
        Mode::Observe => format!("{observed} windows (observed: dispatches run more than once)"),
        _ => format!("{seen} windows"),
    }
}

/// Records dropped, by kind, and kernel names dropped.
fn dropped(t: &Trailer) -> String {
    let records = t.dropped_dispatch + t.dropped_allocation + t.dropped_window;
    let mut s = format!("{records} dropped");
    if records > 0 {
        s += &format!(
            " (dispatch {}, allocation {}, window {})",
            t.dropped_dispatch, t.dropped_allocation, t.dropped_window
        );
    }
    if t.dropped_names > 0 {
        s += &format!(", {} kernel names dropped", t.dropped_names);
    }
    s
}

/// The application's wait on the output, when there was one.
fn waited(ns: u64) -> String {
    if ns == 0 {
        String::new()
    } else {
        format!(
            "; the application waited {:.1} ms on the output",
            ns as f64 / 1e6
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::Written;

    #[test]
    fn the_line_names_every_drop_and_both_modes() {
        let p = Path::new("/x/a.krp");
        let t = Trailer {
            windows: 3,
            declines: 1,
            events_written: 40,
            ..Trailer::default()
        };
        let w = |t: Trailer, observed| {
            Finished::Written(Written {
                trailer: t,
                observed_windows: observed,
            })
        };
        assert_eq!(
            line(p, Mode::Drive, &w(t, 0)),
            "wrote /x/a.krp: 3 windows, 1 declines, 40 events, 0 dropped"
        );
        // Drops in the last counters of the trailer (the encoder stops at the last non-zero).
        let lossy = Trailer {
            dropped_dispatch: 5,
            dropped_window: 2,
            dropped_names: 1,
            stall_ns: 26_400_000,
            ..t
        };
        assert_eq!(
            line(p, Mode::Drive, &w(lossy, 0)),
            "wrote /x/a.krp: 3 windows, 1 declines, 40 events, 7 dropped (dispatch 5, allocation 0, window 2), 1 kernel names dropped; the application waited 26.4 ms on the output"
        );
        assert_eq!(
            line(p, Mode::Observe, &w(Trailer::default(), 5)),
            "wrote /x/a.krp: 5 windows (observed: dispatches run more than once), 0 declines, 0 events, 0 dropped"
        );
        let cut = line(
            p,
            Mode::Drive,
            &Finished::NotWritten(lossy, NotWritten::Budget, 9),
        );
        assert!(
            cut.starts_with("/x/a.krp ends without its trailer (the writer did not finish within the tool's wait limit; krphase reports it truncated): 3 windows, 1 declines, 7 dropped (dispatch 5"),
            "{cut}"
        );
        assert!(cut.contains(", 9 more recorded but not written"), "{cut}");
    }
}
