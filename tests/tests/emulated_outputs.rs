//! Every output krphase makes from emulator runs says EMULATED (in words where a reader looks,
//! as a field or column where a program does), and none made from other runs does: the runs
//! list, the report, the comparison, the Perfetto trace in both encodings, the plots and the
//! Parquet dataset.

use std::path::{Path, PathBuf};

use arrow_array::{Array, BooleanArray};
use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};
use krphase_tests::{krphase_db_ok, run_logged};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

/// A database of two runs of `dir`: two emulator runs of STREAM (drive mode), or two synthetic
/// phase files whose command is not the emulator's.
fn database(dir: &Path, emulated: bool) -> PathBuf {
    let db = dir.join("k.db");
    for i in 0..2u64 {
        let krp = if emulated {
            let passes = (2 + i).to_string();
            let run = run_logged(
                &format!("emulated-outputs-{i}"),
                &["stream", "--elements", "16384", "--iterations", "3"],
                &[("KRPHASE_PASSES", &passes)],
            );
            run.krp
        } else {
            let p = dir.join(format!("synthetic-{i}.krp"));
            let spec = SynthSpec {
                windows: 20,
                pid: 7000 + i as u32,
                seed: 70 + i,
                ..SynthSpec::default()
            };
            write_synthetic_file(&p, &spec).unwrap();
            p
        };
        krphase_db_ok(&db, &["import".as_ref(), krp.as_os_str()]);
    }
    db
}

/// Each output's name and whether it says EMULATED.
fn outputs(db: &Path, dir: &Path) -> Vec<(String, bool)> {
    let mut said = Vec::new();
    let text = |args: &[&str]| krphase_db_ok(db, args);
    for f in ["table", "markdown", "html", "csv"] {
        let report = text(&["report", "--format", f]);
        said.push((format!("report {f}"), report.contains("EMULATED")));
        let compare = text(&["compare", "1", "2", "--format", f]);
        said.push((format!("compare {f}"), compare.contains("EMULATED")));
        if f != "html" {
            let runs = text(&["runs", "--format", f]);
            let flagged = if f == "csv" {
                runs.lines().skip(1).all(|l| l.ends_with(",true"))
            } else {
                runs.contains("EMULATED")
            };
            said.push((format!("runs {f}"), flagged));
        }
    }
    let json = |args: &[&str]| -> Value {
        let out = text(&[args, &["--format", "json"]].concat());
        serde_json::from_str(&out).expect("JSON")
    };
    said.push((
        "report json".into(),
        json(&["report"])["summary"]["emulated"] == true,
    ));
    said.push((
        "compare json".into(),
        json(&["compare", "1", "2"])["emulated"] == true,
    ));
    let runs = json(&["runs"]);
    said.push((
        "runs json".into(),
        runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["emulated"] == true),
    ));
    for name in ["trace.pftrace", "trace.json"] {
        let p = dir.join(name);
        text(&["export", "perfetto", "-o", p.to_str().unwrap()]);
        let bytes = std::fs::read(&p).unwrap();
        let found = if name.ends_with(".pftrace") {
            trace_bytes(&bytes).windows(8).any(|w| w == b"EMULATED")
        } else {
            String::from_utf8(bytes).unwrap().contains("EMULATED")
        };
        said.push((format!("export perfetto {name}"), found));
    }
    let plots = dir.join("plots");
    text(&["plot", "-d", plots.to_str().unwrap()]);
    for e in std::fs::read_dir(&plots).unwrap() {
        let p = e.unwrap().path();
        let svg = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        said.push((format!("plot {name}"), svg.contains("EMULATED")));
    }
    let pq = dir.join("parquet");
    text(&["export", "parquet", "-d", pq.to_str().unwrap()]);
    for run in 1..=2 {
        let f = std::fs::File::open(pq.join(format!("runs/run={run}/part-0.parquet"))).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(f)
            .unwrap()
            .build()
            .unwrap();
        let mut all = true;
        for batch in reader {
            let batch = batch.unwrap();
            let col = batch
                .column_by_name("emulated")
                .expect("an emulated column");
            let col = col.as_any().downcast_ref::<BooleanArray>().unwrap();
            all &= (0..col.len()).all(|i| col.value(i));
        }
        said.push((format!("export parquet runs of run {run}"), all));
    }
    said
}

/// A protobuf varint at `*at`, advancing past it.
fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    v
}

/// The bytes of a Perfetto trace with every `compressed_packets` bundle (TracePacket field 50,
/// a zlib-deflated Trace) inflated, so that its strings can be searched. Only the framing is
/// read here: each top-level `packet` (field 1) and that one field of it.
fn trace_bytes(trace: &[u8]) -> Vec<u8> {
    let mut out = trace.to_vec();
    let mut at = 0;
    while at < trace.len() {
        let key = varint(trace, &mut at);
        assert_eq!(key, (1 << 3) | 2, "a Trace holds packets only");
        let len = varint(trace, &mut at) as usize;
        let packet = &trace[at..at + len];
        at += len;
        let mut p = 0;
        while p < packet.len() {
            let key = varint(packet, &mut p);
            let value_len = match key & 7 {
                0 => {
                    varint(packet, &mut p);
                    0
                }
                1 => 8,
                2 => varint(packet, &mut p) as usize,
                5 => 4,
                w => panic!("wire type {w}"),
            };
            if key >> 3 == 50 {
                let mut inflated = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::ZlibDecoder::new(&packet[p..p + value_len]),
                    &mut inflated,
                )
                .expect("compressed packets inflate");
                out.extend(inflated);
            }
            p += value_len;
        }
    }
    out
}

#[test]
fn every_output_of_emulator_runs_says_emulated() {
    let dir = krphase_tests::scratch_dir("emulated-outputs");
    let db = database(&dir, true);
    let silent: Vec<String> = outputs(&db, &dir)
        .into_iter()
        .filter(|(_, said)| !said)
        .map(|(name, _)| name)
        .collect();
    assert!(
        silent.is_empty(),
        "outputs that do not say EMULATED: {silent:?}"
    );
}

#[test]
fn outputs_of_other_runs_do_not_say_emulated() {
    let dir = krphase_tests::scratch_dir("emulated-outputs-not");
    let db = database(&dir, false);
    let said: Vec<String> = outputs(&db, &dir)
        .into_iter()
        .filter(|(_, said)| *said)
        .map(|(name, _)| name)
        .collect();
    assert!(
        said.is_empty(),
        "outputs that say EMULATED of synthetic runs: {said:?}"
    );
}
