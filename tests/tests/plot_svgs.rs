//! Every SVG the demo and `krphase plot` write, parsed as XML: all text inside the view box,
//! legends that name only drawn series, and one colour per phase across all plots.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::svg_check;

/// The demo's workload runs (not its SDK-build stack, which draws no plot) into a fresh
/// directory; returns it.
fn demo_without_stack() -> PathBuf {
    let a = krphase_tests::artifacts();
    let out = krphase_tests::scratch_dir("plot-svgs");
    let mut cmd = Command::new(&a.krphase);
    cmd.args(["demo", "--no-build", "-d"]).arg(&out);
    for r in krphase_analyzer::demo::RUNS {
        cmd.args(["--only", r.label]);
    }
    let o = cmd.output().expect("run krphase demo");
    assert!(
        o.status.success(),
        "demo failed: {}",
        krphase_tests::output_text(&o)
    );
    out
}

fn svgs_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    v.sort();
    v
}

/// Checks every SVG in `dirs`; panics listing every problem.
fn check_all(dirs: &[PathBuf]) {
    let mut colours = BTreeMap::new();
    let mut bad = Vec::new();
    let mut n = 0;
    for d in dirs {
        for f in svgs_in(d) {
            let text = std::fs::read_to_string(&f).unwrap();
            let name = f.strip_prefix(d.parent().unwrap()).unwrap_or(&f);
            bad.extend(svg_check::check_svg(
                &name.display().to_string(),
                &text,
                &mut colours,
            ));
            n += 1;
        }
    }
    bad.extend(svg_check::colour_conflicts(&colours));
    assert!(n >= 8, "only {n} SVG files in {dirs:?}");
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Each SVG in `dir` has a PNG beside it, listed by the command, at twice the SVG's size.
fn check_pngs(dir: &Path, listed: &str) {
    for svg in svgs_in(dir) {
        let png = svg.with_extension("png");
        assert!(
            listed.lines().any(|l| Path::new(l) == png),
            "{} not listed:\n{listed}",
            png.display()
        );
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", png.display());
        let be = |o: usize| u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
        let text = std::fs::read_to_string(&svg).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let w: f64 = doc
            .root_element()
            .attribute("width")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(f64::from(be(16)), (w * 2.0).round(), "{}", png.display());
    }
}

#[test]
fn every_plot_keeps_its_text_inside_and_its_legend_to_drawn_series() {
    let out = demo_without_stack();
    let db = out.join("krphase.db");
    // `krphase plot` on one label, and on a run with no replayed window (graph launches).
    let one = out.join("plot-stream-2p");
    let listed = krphase_tests::krphase_db_ok(
        &db,
        &["plot", "stream-2p", "-d", one.to_str().unwrap(), "--png"],
    );
    check_pngs(&one, &listed);
    let none = out.join("plot-graph");
    krphase_tests::krphase_db_ok(&db, &["plot", "graph", "-d", none.to_str().unwrap()]);
    check_all(&[out, one, none]);
}

#[test]
fn the_checker_finds_text_outside_and_a_legend_for_an_undrawn_series() {
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 50" font-size="12">
        <rect x="0" y="0" width="40" height="10" fill="#111111"/>
        <rect x="0" y="20" width="0" height="10" fill="#222222"/>
        <rect x="60" y="5" width="12" height="12" fill="#111111"/><text x="78" y="15">a</text>
        <rect x="60" y="25" width="12" height="12" fill="#222222"/><text x="78" y="35">b</text>
        <text x="95" y="45">far too long</text>
    </svg>"##;
    let mut colours = BTreeMap::new();
    let bad = svg_check::check_svg("t.svg", svg, &mut colours);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].contains("far too long"), "{bad:?}");
    assert!(bad[1].contains("\"b\""), "{bad:?}");
    let again = svg.replace("#111111", "#333333");
    let _ = svg_check::check_svg("u.svg", &again, &mut colours);
    let conflicts = svg_check::colour_conflicts(&colours);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert!(conflicts[0].starts_with("\"a\""), "{conflicts:?}");
}
