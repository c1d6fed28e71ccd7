//! Tests that follow data across steps: synthetic phase files imported, then answered by
//! `compare`, `export perfetto` and `plot`.

use serde_json::Value;

use crate::answers::run_report::run_report;
use crate::compare::phases::{compare, render_table};
use crate::export::perfetto::{TraceFormat, export};
use crate::export::plot::plot;
use crate::import::krp::import_phase_file;
use crate::synth::{SynthSpec, write_synthetic_file};

#[test]
fn trace_is_valid_json_with_nested_slices() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.krp");
    write_synthetic_file(
        &f,
        &SynthSpec {
            windows: 20,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    let run = import_phase_file(&mut c, &f, None).unwrap();
    let out = dir.path().join("trace.json");
    let n = export(&c, &[run], &out, TraceFormat::Json).unwrap().events;
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    assert_eq!(ev.len() as u64, n);
    let count = |name: &str| ev.iter().filter(|e| e["name"] == name).count();
    assert_eq!(
        count("window stream_copy") + count("window stream_triad"),
        20
    );
    assert_eq!(count("pass 0"), 20);
    assert_eq!(count("restore"), 20);
    assert_eq!(ev.iter().filter(|e| e["cat"] == "gpu").count(), 40 + 2);
    assert_eq!(
        ev.iter().filter(|e| e["ph"] == "i").count(),
        2,
        "two opt-outs"
    );
    // Every pass slice lies inside a window slice on the same track.
    let windows: Vec<(f64, f64)> = ev
        .iter()
        .filter(|e| e["cat"] == "window")
        .map(|e| {
            (
                e["ts"].as_f64().unwrap(),
                e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap(),
            )
        })
        .collect();
    for p in ev.iter().filter(|e| e["cat"] == "pass") {
        let (s, d) = (p["ts"].as_f64().unwrap(), p["dur"].as_f64().unwrap());
        assert!(windows.iter().any(|&(a, b)| a <= s && s + d <= b + 1e-6));
    }
    assert!(export(&c, &[99], &out, TraceFormat::Json).is_err());
}

#[test]
fn plots_breakdown_histograms_and_a_pass_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    let mut ids = Vec::new();
    for passes in [2, 3, 4] {
        let f = dir.path().join(format!("{passes}.krp"));
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 50,
                passes,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        ids.push(import_phase_file(&mut c, &f, None).unwrap());
    }
    let out = dir.path().join("plots");
    let files = plot(&c, &ids, &out).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"breakdown.svg".to_string()), "{names:?}");
    assert!(names.contains(&"hist-restore.svg".to_string()), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("sweep-passes-")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("sweep-depth-")),
        "{names:?}"
    );
    for f in &files {
        let s = std::fs::read_to_string(f).unwrap();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    }
}

#[test]
fn compare_synthetic_two_vs_four_passes() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    // Three runs a side (runs are the unit of evidence), interleaved.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for seed in 1..=3 {
        for (passes, side) in [(2, &mut a), (4, &mut b)] {
            let f = dir.path().join(format!("{passes}-{seed}.krp"));
            let spec = SynthSpec {
                windows: 300,
                passes,
                seed: seed * 10 + u64::from(passes),
                pid: 4000 + passes * 10 + seed as u32,
                ..SynthSpec::default()
            };
            write_synthetic_file(&f, &spec).unwrap();
            side.push(import_phase_file(&mut c, &f, None).unwrap());
        }
    }
    let cmp = compare(&c, &a, &b).unwrap();
    let v = |n: &str| {
        cmp.phases
            .iter()
            .find(|p| p.phase == n)
            .unwrap()
            .verdict
            .clone()
    };
    assert_eq!(v("restore"), "moved");
    assert_eq!(v("pass exec"), "moved");
    assert_eq!(v("pre-pass"), "equivalent within ±15%");
    assert_eq!(cmp.phases[0].phase, "window");
    assert_eq!(
        (cmp.a_restores_per_window, cmp.b_restores_per_window),
        (Some(1.0), Some(3.0))
    );
    // One run against one: the same data says nothing about the builds.
    let one = compare(&c, &a[..1], &b[..1]).unwrap();
    assert!(
        one.phases
            .iter()
            .all(|p| ["within-run only", "n/a"].contains(&p.verdict.as_str())),
        "{one:#?}"
    );
    let table = render_table(&cmp);
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
}

#[test]
fn report_p50_and_compare_median_are_the_same_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    let mut runs = Vec::new();
    // An even window count, so a median falls between two samples.
    for windows in [40, 41] {
        let f = dir.path().join(format!("{windows}.krp"));
        let spec = SynthSpec {
            windows,
            ..SynthSpec::default()
        };
        write_synthetic_file(&f, &spec).unwrap();
        runs.push(import_phase_file(&mut c, &f, None).unwrap());
    }
    let cmp = compare(&c, &runs[..1], &runs[1..]).unwrap();
    let (a, b) = (
        run_report(&c, runs[0]).unwrap(),
        run_report(&c, runs[1]).unwrap(),
    );
    let mut checked = 0;
    for d in &cmp.phases {
        let p50 = |r: &crate::answers::RunReport| {
            r.phases
                .iter()
                .find(|p| p.phase == d.phase)
                .and_then(|p| p.p50_ns)
        };
        if let (Some(pa), Some(pb)) = (p50(&a), p50(&b)) {
            assert_eq!(d.a_median_ns, Some(pa as f64), "{}", d.phase);
            assert_eq!(d.b_median_ns, Some(pb as f64), "{}", d.phase);
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} phases in both");
}

#[test]
fn dropped_records_are_reported_by_kind_and_the_figures_built_on_them_marked() {
    use krphase_format::Trailer;
    use krphase_format::trailer::flags;
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    let mut runs = Vec::new();
    for (name, drops) in [
        ("clean.krp", Trailer::default()),
        (
            "lossy.krp",
            Trailer {
                dropped_dispatch: 7,
                dropped_window: 3,
                dropped_names: 1,
                first_drop_ns: 20_000_000,
                last_drop_ns: 32_500_000,
                stall_ns: 51_200_000,
                flags: flags::STALLED,
                ..Trailer::default()
            },
        ),
    ] {
        let f = dir.path().join(name);
        let spec = SynthSpec {
            windows: 30,
            drops,
            ..SynthSpec::default()
        };
        write_synthetic_file(&f, &spec).unwrap();
        let note = crate::import::krp::import_file(&mut c, &f, None)
            .unwrap()
            .drop_note;
        runs.push((run_report(&c, runs.len() as i64 + 1).unwrap(), note));
    }
    let (clean, lossy) = (&runs[0], &runs[1]);
    assert_eq!(clean.1, "");
    assert_eq!(
        lossy.1,
        "; 7 dispatch, 0 allocation, 3 window records dropped, 1 kernel names dropped over 12.5 ms (the application waited 51.2 ms on the tool's output, its wait budget ran out)"
    );
    let text = |r| crate::report::render(&[r], crate::render::Format::Table).unwrap();
    let clean_text = text(clean.0.clone());
    assert!(!clean_text.contains("dropped by the tool"), "{clean_text}");
    assert!(!clean_text.contains("(!)"), "{clean_text}");
    let t = text(lossy.0.clone());
    assert!(
        t.contains(
            "dropped by the tool: 7 dispatch, 0 allocation, 3 window records, 1 kernel names;"
        ),
        "{t}"
    );
    assert!(t.contains("(the tool's wait budget ran out)"), "{t}");
    for marked in [
        "dispatches seen (!)",
        "phase (!)",
        "snapshot bytes (!)",
        "dispatch tax (!)",
    ] {
        assert!(t.contains(marked), "{marked}: {t}");
    }
}

/// An export that cannot write says so in one line and leaves nothing behind: no file at the
/// destination, no temporary file beside it; an earlier trace there survives a failed export.
#[test]
fn a_failed_trace_export_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.krp");
    write_synthetic_file(
        &f,
        &SynthSpec {
            windows: 5,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
    let run = import_phase_file(&mut c, &f, None).unwrap();
    for format in [TraceFormat::Pftrace, TraceFormat::Json] {
        let out = dir.path().join("missing").join("t.pftrace");
        let e = export(&c, &[run], &out, format).unwrap_err();
        let line = format!("{e:#}");
        assert!(
            line.starts_with("cannot write ") && !line.contains('\n'),
            "{line}"
        );
        assert!(!dir.path().join("missing").exists());
        // A run that does not exist fails after the temporary file was made: it goes.
        let kept = dir.path().join("kept.pftrace");
        std::fs::write(&kept, b"earlier").unwrap();
        assert!(export(&c, &[run, 99], &kept, format).is_err());
        assert_eq!(std::fs::read(&kept).unwrap(), b"earlier");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with(".krphase-trace-")),
            "{names:?}"
        );
    }
}
