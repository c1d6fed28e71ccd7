//! The basis of a figure: where its evidence comes from. Every figure krphase prints carries one,
//! so a reader can tell a clock reading from an inference or an estimate. The view
//! `krphase_window_phase` names the basis of each per-window phase next to its value (the same
//! CASE that picks the value picks the basis); report and export read it from there.

use serde::Serialize;

/// Where a figure's evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Measured in process: the tool's own timestamps (and the dispatch timestamps it records).
    InProcess,
    /// From the SDK's own log lines (`import-log`), at their printed precision: the
    /// `[kernel-replay]` outcome line.
    SdkLog,
    /// From the SDK's kernel-replay phase line (`lock+drain …, snapshot …, window …`), whose
    /// format the SDK has not published: read only when present, and said so.
    SdkPhaseLine,
    /// An in-process interval minus an SDK log figure (drain = pre-pass − the SDK's snapshot).
    InProcessMinusSdkLog,
    /// Inferred from dispatch records (observe mode: no CONFIG or PASS callback, the phase is a
    /// gap between dispatch records, so it also holds whatever else ran in that gap).
    Dispatch,
    /// Estimated: the tool's byte estimate, a rate over a lower-bound interval, a projection.
    Estimate,
    /// Measured by a harness around the whole run (replay_perf.py, rocprofv3-benchmark,
    /// `krphase bench`): wall time of the launcher, the tool and the application together.
    Harness,
    /// Measured in process by the SDK's dispatch counting service: hardware counter values the
    /// SDK reported for a pass (drive mode with `KRPHASE_PMC`), as the tool received them.
    SdkCounting,
    /// Read from a rocprofv3 rocpd database (`import-rocpd`): counter values its writer stored
    /// by dispatch id, with no pass (a counter collected in several passes has one row each).
    Rocpd,
    /// Read from rocprofv3's JSON output (`--output-format json`): counter values by dispatch
    /// id and `replay_pass`, as its writer stored them.
    Rocprofv3Json,
    /// A rest: one figure minus the others beside it, each with its own basis (`compare`'s
    /// attribution: the window time no measured phase covers, the wall change no figure
    /// explains).
    Rest,
}

impl Basis {
    pub const ALL: [Basis; 11] = [
        Basis::InProcess,
        Basis::SdkLog,
        Basis::SdkPhaseLine,
        Basis::InProcessMinusSdkLog,
        Basis::Dispatch,
        Basis::Estimate,
        Basis::Harness,
        Basis::SdkCounting,
        Basis::Rocpd,
        Basis::Rocprofv3Json,
        Basis::Rest,
    ];

    /// The name stored in the view and written in CSV, JSON and trace args.
    pub fn code(self) -> &'static str {
        match self {
            Basis::InProcess => "in_process",
            Basis::SdkLog => "sdk_log",
            Basis::SdkPhaseLine => "sdk_phase_line",
            Basis::InProcessMinusSdkLog => "in_process_minus_sdk_log",
            Basis::Dispatch => "dispatch",
            Basis::Estimate => "estimate",
            Basis::Harness => "harness",
            Basis::SdkCounting => "sdk_counting",
            Basis::Rocpd => "rocpd",
            Basis::Rocprofv3Json => "rocprofv3_json",
            Basis::Rest => "rest",
        }
    }

    /// The short marker of the table output.
    pub fn marker(self) -> &'static str {
        match self {
            Basis::InProcess => "M",
            Basis::SdkLog => "L",
            Basis::SdkPhaseLine => "P",
            Basis::InProcessMinusSdkLog => "M-L",
            Basis::Dispatch => "D",
            Basis::Estimate => "E",
            Basis::Harness => "H",
            Basis::SdkCounting => "C",
            Basis::Rocpd => "RD",
            Basis::Rocprofv3Json => "J",
            Basis::Rest => "R",
        }
    }

    /// A word or two for where the figure comes from (the summary's basis column).
    pub fn word(self) -> &'static str {
        match self {
            Basis::InProcess => "measured in process",
            Basis::SdkLog => "from SDK log",
            Basis::SdkPhaseLine => "from SDK phase line",
            Basis::InProcessMinusSdkLog => "measured minus SDK log",
            Basis::Dispatch => "inferred",
            Basis::Estimate => "estimated",
            Basis::Harness => "harness",
            Basis::SdkCounting => "SDK counters",
            Basis::Rocpd => "counters from rocpd",
            Basis::Rocprofv3Json => "from rocprofv3's JSON",
            Basis::Rest => "rest",
        }
    }

    /// One line saying what the marker means (the legend).
    pub fn what(self) -> &'static str {
        match self {
            Basis::InProcess => "measured in process (the tool's timestamps)",
            Basis::SdkLog => "from the SDK log's outcome line (its printed precision)",
            Basis::SdkPhaseLine => "from the SDK's phase line (unpublished format; when present)",
            Basis::InProcessMinusSdkLog => "in-process interval minus an SDK log figure",
            Basis::Dispatch => "inferred from dispatch records (observe mode; bound or span)",
            Basis::Estimate => "estimated (byte estimate, rate over a lower bound, projection)",
            Basis::Harness => "measured by the harness around the whole run",
            Basis::SdkCounting => "measured in process (SDK counting service)",
            Basis::Rocpd => "counters from a rocpd database (by dispatch id; no pass)",
            Basis::Rocprofv3Json => "from rocprofv3's JSON (by dispatch id and replay_pass)",
            Basis::Rest => "a rest: one figure minus the others beside it (each its own basis)",
        }
    }

    pub fn parse(code: &str) -> Option<Basis> {
        Self::ALL.into_iter().find(|b| b.code() == code)
    }

    /// [`Basis::parse`] of an SQL value (NULL and non-text give `None`).
    pub fn from_sql(v: rusqlite::types::ValueRef<'_>) -> Option<Basis> {
        match v {
            rusqlite::types::ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(Self::parse),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_markers_are_distinct() {
        let mut markers = std::collections::HashSet::new();
        for b in Basis::ALL {
            assert_eq!(Basis::parse(b.code()), Some(b));
            assert!(markers.insert(b.marker()), "{b:?}");
            assert_eq!(
                serde_json::to_value(b).unwrap(),
                serde_json::json!(b.code())
            );
        }
        assert_eq!(Basis::parse("guess"), None);
    }
}
