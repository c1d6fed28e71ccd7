//! The one phase → colour mapping every plot uses, so a colour means the same phase in every
//! figure krphase draws.
//!
//! The colours are Paul Tol's "muted" scheme (designed to stay distinct under the common forms
//! of colour blindness and in greyscale print), with black for the whole window and greys for
//! what is not a phase of its own. Phases next to each other in a stacked bar get colours far
//! apart in that scheme.

/// Phase name (as in `db::phases::PHASES`) → fill colour.
pub const PHASE_COLOURS: &[(&str, &str)] = &[
    ("config", "#332288"),    // indigo: CONFIG ENTER to pass-count return (lock)
    ("pre-pass", "#88ccee"),  // cyan: lock + drain + snapshot, when not split
    ("drain", "#44aa99"),     // teal: pre-pass minus the SDK's snapshot
    ("snapshot", "#ddcc77"),  // sand: the SDK's snapshot
    ("pass exec", "#cc6677"), // rose: PASS ENTER to EXIT, summed
    ("gpu", "#882255"),       // wine: the passes' GPU time (a part of pass exec)
    ("continue", "#999933"),  // olive: the SDK's loop decision after each pass
    ("restore", "#117733"),   // green: restore between passes
    ("restore bound", "#aa4499"), // purple: observe mode's upper bound on restore
    ("tail", "#bbbbbb"),      // grey: last PASS EXIT to CONFIG EXIT
    ("window", "#000000"),    // black: the whole window
];

/// Declined and opted-out dispatches (no phases of their own).
pub const DECLINE: &str = "#777777";

/// Lines and text that are not data.
pub const GRID: &str = "#dddddd";
pub const AXIS: &str = "#333333";
pub const NOTE: &str = "#555555";

/// The colour of phase `name`; [`DECLINE`]'s grey for a name that is no phase.
pub fn phase_colour(name: &str) -> &'static str {
    PHASE_COLOURS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(DECLINE, |(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::phases::PHASES;

    #[test]
    fn every_phase_has_its_own_colour() {
        for p in PHASES {
            assert!(
                PHASE_COLOURS.iter().any(|(n, _)| *n == p.name),
                "{} has no colour",
                p.name
            );
        }
        let mut all: Vec<&str> = PHASE_COLOURS.iter().map(|(_, c)| *c).collect();
        all.extend([DECLINE, GRID, AXIS, NOTE]);
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a colour is used twice");
        assert_eq!(phase_colour("restore"), "#117733");
        assert_eq!(phase_colour("declined"), DECLINE);
    }
}
