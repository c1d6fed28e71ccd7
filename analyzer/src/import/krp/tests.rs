//! Import of synthetic and golden phase files into the report, deduplication by content (also of
//! runs older databases named by SHA-256), truncated files and corrupt inputs.

use super::hash::legacy_hash;
use super::*;
use crate::answers as report;
use crate::synth::{SynthSpec, write_synthetic_file};

fn count(c: &Connection, table: &str) -> i64 {
    c.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn synthetic_file_round_trips_into_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.krp");
    let spec = SynthSpec {
        windows: 200,
        passes: 3,
        ..SynthSpec::default()
    };
    let truth = write_synthetic_file(&f, &spec).unwrap();
    let mut c = db::open(dir.path().join("k.db")).unwrap();
    let r = import_file(&mut c, &f, Some("synthetic")).unwrap();
    assert!(!r.already && !r.truncated);
    assert_eq!(r.events, truth.events, "the records the writer wrote");
    assert_eq!((r.windows, r.declines), (truth.windows, truth.opt_outs));
    let rep = report::run_report(&c, r.run_id).unwrap();
    let total = |n: &str| rep.phases.iter().find(|p| p.phase == n).unwrap().total_ns as u64;
    assert_eq!(total("pre-pass"), truth.prepass_ns);
    assert_eq!(total("pass exec"), truth.pass_ns);
    assert_eq!(total("gpu"), truth.gpu_ns);
    assert_eq!(total("restore"), truth.restore_ns);
    assert_eq!(total("tail"), truth.tail_ns);
    assert_eq!(total("window"), truth.window_ns);
    assert_eq!(rep.windows.replayed, truth.windows);
    assert_eq!(rep.declines_by_reason.get("opt_out"), Some(&truth.opt_outs));
    assert_eq!(rep.bytes.snapshot_bytes_total as u64, truth.bytes);
    assert_eq!(count(&c, "krphase_pass") as u64, truth.windows * 3);
    // Same content again: same run, nothing added.
    let rows = |c: &Connection| {
        [
            "krphase_window",
            "krphase_pass",
            "krphase_dispatch",
            "krphase_phase_stat",
        ]
        .map(|t| count(c, t))
    };
    let before = rows(&c);
    let again = import_file(&mut c, &f, None).unwrap();
    assert!(again.already);
    assert_eq!(again.run_id, r.run_id);
    assert_eq!(count(&c, "krphase_run"), 1);
    // Inserts begin before the hash is ready: those of known content are rolled back.
    assert_eq!(rows(&c), before, "nothing of the second import is kept");
    let hash: String = c
        .query_row("SELECT file_hash FROM krphase_run", [], |r| r.get(0))
        .unwrap();
    assert_eq!(hash, file_hash(&f).unwrap());
}

/// A run an older krphase imported is named by the file's SHA-256: importing that file again
/// finds it, and a different file is still imported.
#[test]
fn runs_named_by_sha256_still_deduplicate() {
    let dir = tempfile::tempdir().unwrap();
    let (f, g) = (dir.path().join("f.krp"), dir.path().join("g.krp"));
    write_synthetic_file(
        &f,
        &SynthSpec {
            windows: 20,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    write_synthetic_file(
        &g,
        &SynthSpec {
            windows: 20,
            seed: 2,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    let mut c = db::open_in_memory().unwrap();
    let first = import_file(&mut c, &f, None).unwrap();
    let stored: String = c
        .query_row("SELECT file_hash FROM krphase_run", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, file_hash(&f).unwrap());
    assert!(stored.starts_with("blake3:") && stored.len() == 7 + 64);
    c.execute(
        "UPDATE krphase_run SET file_hash = ?1",
        [legacy_hash(&f).unwrap()],
    )
    .unwrap();
    let again = import_file(&mut c, &f, Some("old")).unwrap();
    assert!(again.already, "the SHA-256-named run is found");
    assert_eq!(again.run_id, first.run_id);
    let label: Option<String> = c
        .query_row("SELECT label FROM krphase_run", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        label.as_deref(),
        Some("old"),
        "found again, it takes the label"
    );
    assert!(!import_file(&mut c, &g, None).unwrap().already);
    assert_eq!(count(&c, "krphase_run"), 2);
}

/// The format crate's golden file: one 2-pass window, one opt-out, one plain dispatch, with
/// known timestamps.
#[test]
fn golden_file_imports_with_exact_phases() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/small.krp");
    let mut c = db::open_in_memory().unwrap();
    let r = import_file(&mut c, &golden, Some("golden")).unwrap();
    assert_eq!(
        (r.windows, r.declines, r.dispatches, r.truncated),
        (1, 1, 1, false)
    );
    let rep = report::run_report(&c, r.run_id).unwrap();
    let total = |n: &str| rep.phases.iter().find(|p| p.phase == n).unwrap().total_ns;
    assert_eq!(total("config"), 1020 - 1000);
    assert_eq!(total("pre-pass"), 2000 - 1020);
    assert_eq!(total("pass exec"), (3000 - 2000) + (4500 - 3500));
    assert_eq!(total("gpu"), (2900 - 2100) + (4400 - 3600));
    assert_eq!(total("restore"), 3500 - 3000);
    assert_eq!(total("tail"), 4600 - 4500);
    assert_eq!(total("window"), 4600 - 1000);
    assert_eq!(rep.declines_by_reason.get("opt_out"), Some(&1));
    assert_eq!(rep.dispatch_tax.plain_enqueue_mean_ns, Some(10.0));
    assert_eq!(rep.bytes.snapshot_bytes_total, 4096);
    assert_eq!(
        rep.dispatches_seen, 2,
        "the opt-out and its run-once are one dispatch"
    );
    let (kernel, queue): (String, i64) = c
        .query_row(
            "SELECT kernel, queue FROM krphase_window WHERE outcome = 'replayed'",
            [],
            |x| Ok((x.get(0)?, x.get(1)?)),
        )
        .unwrap();
    assert_eq!((kernel.as_str(), queue), ("stream_copy", 3));
}

#[test]
fn truncated_file_loads_complete_blocks_and_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.krp");
    let spec = SynthSpec {
        windows: 2000,
        ..SynthSpec::default()
    };
    write_synthetic_file(&f, &spec).unwrap();
    let bytes = std::fs::read(&f).unwrap();
    let cut = dir.path().join("cut.krp");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let mut c = db::open(dir.path().join("k.db")).unwrap();
    let r = import_file(&mut c, &cut, None).unwrap();
    assert!(r.truncated);
    assert!(r.windows > 100 && r.windows < 2000, "{}", r.windows);
    let t: i64 = c
        .query_row(
            "SELECT truncated FROM krphase_run WHERE id = ?1",
            [r.run_id],
            |x| x.get(0),
        )
        .unwrap();
    assert_eq!(t, 1);
}

#[test]
fn corrupt_inputs_are_rejected_with_the_offset_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.krp");
    write_synthetic_file(
        &f,
        &SynthSpec {
            windows: 500,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    let good = std::fs::read(&f).unwrap();
    let mut c = db::open(dir.path().join("k.db")).unwrap();

    let mut flipped = good.clone();
    let mid = good.len() / 2;
    flipped[mid] ^= 0xff;
    let bad = dir.path().join("bad.krp");
    std::fs::write(&bad, &flipped).unwrap();
    let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
    assert!(
        e.contains("bad.krp") && e.contains("offset") && e.contains("checksum"),
        "{e}"
    );

    let mut magic = good.clone();
    magic[0] = b'X';
    std::fs::write(&bad, &magic).unwrap();
    let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
    assert!(e.contains("offset 0") && e.contains("magic"), "{e}");

    let mut version = good.clone();
    version[4..8].copy_from_slice(&99u32.to_le_bytes());
    std::fs::write(&bad, &version).unwrap();
    let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
    assert!(
        e.ends_with("bad.krp: offset 4: written by a newer krphase, format 99.0; upgrade krphase"),
        "{e}"
    );

    let e = format!(
        "{:#}",
        import_file(&mut c, &dir.path().join("none.krp"), None).unwrap_err()
    );
    assert!(e.contains("none.krp"), "{e}");

    for t in [
        "krphase_run",
        "krphase_window",
        "krphase_pass",
        "krphase_dispatch",
    ] {
        assert_eq!(count(&c, t), 0, "{t}");
    }
}
