//! The windows reconstructed from the golden files in `tests/golden/`: the `outputs` of each
//! golden's JSON. `krphase-format`'s golden test writes and checks the files' bytes and the rest
//! of their JSON; this one reads each file back through the reconstruction, with the meaning of
//! its version.
//!
//! * `small.json`, `v2.0.json`, `v3.0.json`: frozen, like their files.
//! * `v3.0.krp` reads back as the 2.0 golden's windows, `v3.1.krp` as the 3.0 golden's,
//!   `v4.0.krp` as the 3.1 golden's.
//! * `v2.0.krp` holds an indefinite loop, a stuck window, counter values held and late, and
//!   sticky placements.
//!
//! `KRPHASE_BLESS=1 cargo test -p krphase-windows --test golden` rewrites the `outputs` of the
//! current version's JSON and of the fixtures' (after the format's golden test has blessed the
//! files themselves).

mod common;

use krphase_format::{FileReader, FormatVersion};
use krphase_windows::Output;
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn blessing() -> bool {
    std::env::var_os("KRPHASE_BLESS").is_some()
}

/// The outputs reconstructed from golden `name`, as JSON.
fn outputs_of(name: &str) -> serde_json::Value {
    let mut r = FileReader::open(golden_dir().join(name)).expect("open golden");
    let events: Vec<_> = r.by_ref().map(|e| e.expect("golden decodes")).collect();
    let (mut outputs, after) = common::reconstruct_as(r.version(), &events);
    outputs.extend(after);
    serde_json::to_value(outputs).expect("outputs")
}

/// Checks the `outputs` of `json` against the reconstruction of `name` (rewriting them first
/// when blessing and not `frozen`).
fn check(name: &str, json: &str, frozen: bool) {
    let path = golden_dir().join(json);
    let mut want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("golden json")).expect("parse");
    if blessing() && !frozen {
        want["outputs"] = outputs_of(name);
        let text = serde_json::to_string_pretty(&want).expect("json") + "\n";
        std::fs::write(&path, text).expect("write golden json");
    }
    assert_eq!(outputs_of(name), want["outputs"], "{json}");
}

#[test]
fn v1_0_golden_still_decodes_to_its_windows() {
    check("small.krp", "small.json", true);
}

#[test]
fn v2_0_golden_decodes_to_its_windows() {
    check("v2.0.krp", "v2.0.json", true);
}

#[test]
fn v3_0_golden_decodes_to_its_windows() {
    check("v3.0.krp", "v3.0.json", true);
}

#[test]
fn v3_1_golden_decodes_to_its_windows() {
    check("v3.1.krp", "v3.1.json", true);
}

#[test]
fn v4_0_golden_decodes_to_its_windows() {
    check("v4.0.krp", "v4.0.json", false);
}

#[test]
fn v4_0_golden_reads_back_as_the_3_1_timeline() {
    assert_eq!(outputs_of("v4.0.krp"), outputs_of("v3.1.krp"));
}

#[test]
fn future_minor_fixture_decodes_to_its_windows() {
    check("v2.1-future-minor.krp", "v2.1-future-minor.json", false);
}

#[test]
fn v3_1_golden_reads_back_as_the_3_0_timeline() {
    assert_eq!(outputs_of("v3.1.krp"), outputs_of("v3.0.krp"));
}

#[test]
fn v3_0_golden_reads_back_as_the_2_0_timeline() {
    // Ticks converted through the pairs: the same windows, phases and own times, in ns, as
    // the 2.0 golden's (which stores ns).
    assert_eq!(outputs_of("v3.0.krp"), outputs_of("v2.0.krp"));
}

#[test]
fn v2_0_golden_has_a_stuck_and_an_indefinite_window() {
    let mut r = FileReader::open(golden_dir().join("v2.0.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::V2_0);
    let events: Vec<_> = r.by_ref().map(|e| e.expect("decodes")).collect();
    let (mut out, rest) = common::reconstruct_as(r.version(), &events);
    out.extend(rest);
    let windows: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Window(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(windows.len(), 3);
    let indefinite = windows.iter().find(|w| w.dispatch_id == 2).expect("2");
    assert_eq!(indefinite.requested_passes, Some(0));
    assert_eq!(indefinite.executed_passes, 3);
    assert_eq!(indefinite.continues.len(), 3);
    assert!(indefinite.continues.iter().all(|c| c.total == 0));
    // Counter values held with their window are on its passes; one reaching the file after
    // its window was emitted comes out on its own.
    let fixed = windows.iter().find(|w| w.dispatch_id == 1).expect("1");
    let names: Vec<Vec<_>> = fixed
        .passes
        .iter()
        .map(|p| p.counters.iter().map(|c| c.name.as_deref()).collect())
        .collect();
    assert_eq!(names, [[Some("SQ_WAVES")], [Some("GRBM_COUNT")]]);
    assert_eq!(fixed.passes[1].counters[0].value.0, 123_456.0);
    let late: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Counter(c) => Some((c.dispatch_id, c.pass, c.name.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(late, [(2, 2, Some("SQ_WAVES"))]);
    let stuck = windows.iter().find(|w| w.dispatch_id == 3).expect("3");
    assert!(stuck.stuck.is_some() && stuck.passes[1].incomplete);
    let placed: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Plain(p) => Some((p.dispatch_id, p.queue)),
            _ => None,
        })
        .collect();
    assert_eq!(
        placed,
        [(4, Some(3)), (5, Some(3)), (6, Some(5)), (7, Some(5))],
        "sticky placement per thread"
    );
}
