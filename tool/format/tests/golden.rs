//! Golden files pin the format, one per version, kept forever (`tests/golden/`):
//!
//! * `small.krp` / `small.json`: format 1.0, frozen. The test writer must still reproduce its
//!   bytes and today's reader must still decode it to the same JSON.
//! * `v2.0.krp` / `v2.0.json`: format 2.0, frozen: every 2.0 record kind, a stuck and an
//!   indefinite window.
//! * `v2.1-future-minor.krp` / `.json`: a newer minor of 2; read with what was skipped.
//! * `v3.0.krp` / `v3.0.json`: format 3.0, frozen: the 2.0 timeline in TSC ticks with
//!   calibration pairs and COMPLETE_AT records; it reads back as the 2.0 golden's windows.
//! * `v3.1.krp` / `v3.1.json`: format 3.1, frozen: the 3.0 file with a launcher's rank in its
//!   header.
//! * `v4.0.krp` / `v4.0.json`: format 4.0, the 3.1 file's header and records in 4.0's EVENTS
//!   blocks, an ENQUEUE ENTER right before its EXIT as one ENQUEUE_PAIR; it decodes to the same
//!   events as `v3.1.krp`.
//! * `v5.0-newer-major.krp`: a newer major; refused with the upgrade line.
//!
//! This test checks the bytes and what the reader decodes (header, events, trailer, what was
//! skipped); the `outputs` in each JSON, the windows reconstructed from the file, are checked by
//! `krphase-windows`' golden test.
//!
//! `KRPHASE_BLESS=1 cargo test -p krphase-format --test golden` rewrites the current version's
//! files and the fixtures from the test writers (never the frozen older versions), keeping each
//! JSON's `outputs`; `KRPHASE_BLESS=1 cargo test -p krphase-windows --test golden` then rewrites
//! those. A change that alters the current version's bytes must bump
//! [`krphase_format::FORMAT_VERSION`] (a minor for an addition, a major for a change of meaning)
//! and add that version's golden beside these.

mod common;

use common::golden_files::{self, FUTURE_HEADER_BYTES, FUTURE_KIND, FUTURE_TAG};
use krphase_format::event::kind;
use krphase_format::read::ReadErrorKind;
use krphase_format::{FileReader, FormatVersion};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn blessing() -> bool {
    std::env::var_os("KRPHASE_BLESS").is_some()
}

/// What the reader decodes from a golden, as JSON (its JSON file without the `outputs`).
fn decode_to_json(path: &Path) -> serde_json::Value {
    let mut r = FileReader::open(path).expect("open golden");
    let events: Vec<_> = r.by_ref().map(|e| e.expect("golden decodes")).collect();
    let mut v = serde_json::json!({
        "version": r.version().to_word(),
        "header": r.header(),
        "events": events,
        "trailer": r.trailer(),
        "truncated": r.truncated(),
    });
    // Only files of a newer minor have something skipped (the 1.0 decoding stays as it was).
    if !r.skipped().is_empty() {
        v["skipped"] = serde_json::to_value(r.skipped()).expect("skipped");
    }
    v
}

/// Checks `name` against the writer's `bytes` (rewriting it first when blessing and not
/// `frozen`) and, with `json`, its decoding.
fn check(name: &str, bytes: &[u8], json: Option<&str>, frozen: bool) {
    let dir = golden_dir();
    let krp = dir.join(name);
    if blessing() && !frozen {
        std::fs::write(&krp, bytes).expect("write golden");
        if let Some(j) = json {
            let mut v = decode_to_json(&krp);
            // The outputs are blessed by the window crate's golden test: keep them.
            let old = std::fs::read_to_string(dir.join(j)).ok();
            if let Some(outputs) = old
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|mut o| o.get_mut("outputs").map(serde_json::Value::take))
            {
                v["outputs"] = outputs;
            }
            let text = serde_json::to_string_pretty(&v).expect("json") + "\n";
            std::fs::write(dir.join(j), text).expect("write golden json");
        }
    }
    let golden =
        std::fs::read(&krp).unwrap_or_else(|e| panic!("{name}: {e} (bless with KRPHASE_BLESS=1)"));
    assert!(
        bytes == golden,
        "{name}: the writer's bytes changed: a format change needs a version bump{}",
        if frozen {
            " (this version's golden is frozen)"
        } else {
            ""
        }
    );
    if let Some(j) = json {
        let mut want: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(j)).expect("golden json"))
                .expect("parse");
        if let Some(o) = want.as_object_mut() {
            o.remove("outputs");
        }
        assert_eq!(decode_to_json(&krp), want, "{j}");
    }
}

#[test]
fn v1_0_golden_is_reproduced_and_still_decodes_to_its_json() {
    check("small.krp", &golden_files::v1_0(), Some("small.json"), true);
    let r = FileReader::open(golden_dir().join("small.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::V1_0);
}

#[test]
fn v2_0_golden_is_reproduced_and_decodes_to_its_json() {
    check("v2.0.krp", &golden_files::v2_0(), Some("v2.0.json"), true);
}

#[test]
fn v3_0_golden_is_reproduced_and_decodes_to_its_json() {
    check("v3.0.krp", &golden_files::v3_0(), Some("v3.0.json"), true);
}

#[test]
fn v3_1_golden_is_reproduced_and_decodes_to_its_json() {
    check("v3.1.krp", &golden_files::v3_1(), Some("v3.1.json"), true);
}

#[test]
fn v4_0_golden_is_reproduced_and_decodes_to_its_json() {
    check("v4.0.krp", &golden_files::v4_0(), Some("v4.0.json"), false);
}

/// The 4.0 golden holds the 3.1 golden's records in fewer bytes, and both read back as the same
/// header, events and trailer.
#[test]
fn v4_0_and_v3_1_goldens_give_identical_events() {
    let (new, old) = (golden_dir().join("v4.0.krp"), golden_dir().join("v3.1.krp"));
    let (mut a, mut b) = (decode_to_json(&new), decode_to_json(&old));
    assert_eq!(a["version"], FormatVersion::V4_0.to_word());
    assert_eq!(b["version"], FormatVersion::V3_1.to_word());
    for v in [&mut a, &mut b] {
        v.as_object_mut().expect("object").remove("version");
        // The trailer's block count is the writer's own (the same here: one events block).
    }
    assert_eq!(a, b);
    let size = |p: &Path| std::fs::metadata(p).expect("size").len();
    assert!(size(&new) < size(&old), "{} vs {}", size(&new), size(&old));
    // The 4.0 golden holds enqueues in both forms: ENQUEUE_PAIR records and, where a placement
    // follows the ENTER, ENQUEUE ENTER and EXIT apart.
    let words = golden_files::v4_0_words();
    let count = |k: u8| words.iter().filter(|w| w[0] as u8 == k).count();
    assert!(count(krphase_format::enqueue_pair::ENQUEUE_PAIR) >= 5);
    assert!(count(kind::ENQUEUE_ENTER) >= 1 && count(kind::ENQUEUE_EXIT) >= 1);
}

#[test]
fn v3_1_golden_carries_the_rank() {
    let r = FileReader::open(golden_dir().join("v3.1.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::V3_1);
    let rank = r.header().rank.clone().expect("ranked");
    assert_eq!((rank.rank, rank.world_size), (3, Some(256)));
    let old = FileReader::open(golden_dir().join("v3.0.krp")).expect("open");
    assert_eq!(old.header().rank, None, "3.0 files have no rank");
}

/// The record kinds among `events`.
fn kinds_of(events: &[krphase_format::Event]) -> BTreeSet<u8> {
    events
        .iter()
        .filter_map(|e| e.to_record())
        .map(|r| r.kind)
        .collect()
}

#[test]
fn v3_0_golden_covers_every_kind() {
    let mut r = FileReader::open(golden_dir().join("v3.0.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::V3_0);
    assert!(r.calibration().is_some(), "a TSC-clock file is converted");
    let events: Vec<_> = r.by_ref().map(|e| e.expect("decodes")).collect();
    assert_eq!(
        kinds_of(&events),
        (kind::CONFIG_ENTER..=kind::COMPLETE_AT).collect(),
        "all 21 kinds"
    );
}

#[test]
fn v2_0_golden_covers_every_kind() {
    let mut r = FileReader::open(golden_dir().join("v2.0.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::V2_0);
    let events: Vec<_> = r.by_ref().map(|e| e.expect("decodes")).collect();
    assert_eq!(
        kinds_of(&events),
        (kind::CONFIG_ENTER..=kind::COUNTER_VALUE).collect(),
        "all 19 kinds"
    );
    assert!(r.skipped().is_empty(), "{:?}", r.skipped());
}

#[test]
fn future_minor_fixture_reads_and_says_what_it_skipped() {
    check(
        "v2.1-future-minor.krp",
        &golden_files::v2_1_future_minor(),
        Some("v2.1-future-minor.json"),
        false,
    );
    let mut r = FileReader::open(golden_dir().join("v2.1-future-minor.krp")).expect("open");
    assert_eq!(r.version(), FormatVersion::new(2, 1));
    let events: Vec<_> = r.by_ref().map(|e| e.expect("decodes")).collect();
    let n = events.len();
    assert!(r.trailer().is_some() && !r.truncated());
    let s = r.skipped();
    assert_eq!(s.blocks.get(&FUTURE_TAG), Some(&(1, 16)));
    assert_eq!(s.kinds.get(&FUTURE_KIND), Some(&2));
    assert_eq!(s.header_bytes, FUTURE_HEADER_BYTES as u64);
    assert_eq!(s.trailer_counters, 2);
    assert_eq!(
        n,
        golden_files::v2_0_records().len() + 2 + 5,
        "records, future records, names"
    );
}

#[test]
fn newer_major_fixture_is_refused_with_the_upgrade_line() {
    check(
        "v5.0-newer-major.krp",
        &golden_files::v5_0_newer_major(),
        None,
        false,
    );
    let e = FileReader::open(golden_dir().join("v5.0-newer-major.krp"))
        .err()
        .expect("refused");
    assert!(matches!(e.kind, ReadErrorKind::TooNew(v) if v == FormatVersion::new(5, 0)));
    assert_eq!(
        e.to_string(),
        "offset 4: written by a newer krphase, format 5.0; upgrade krphase"
    );
}
