//! What the emulator's truth files say of the emulated device in the demo's stack step: its
//! slow-down against a GPU, and how faithfully it kept to its cost model: the paced work
//! (snapshot and restore copies, drain-signal creation, kernels) over what it was paced to, and
//! the share of each build's wall time that nothing paces (host work: thread hand-offs,
//! callbacks, bookkeeping), which runs at this CPU's own speed and grows when the machine is
//! shared. The emulated factor follows the model only as far as the first is about 1 and the
//! second stays small.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::compare::builds::BuildComparison;

/// Paced work over one build's runs, ns, and the emulated device's slow-down against a GPU.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Paced {
    pub took_ns: f64,
    pub model_ns: f64,
    /// Runs in the truth file (one `totals` line each, warm-ups included).
    pub runs: usize,
    /// From the first `sdk_build` line.
    pub slowdown: Option<f64>,
}

impl Paced {
    /// Time taken over time modelled (a sleep only overshoots, so at least about 1).
    pub fn fidelity(&self) -> Option<f64> {
        (self.model_ns > 0.0).then(|| self.took_ns / self.model_ns)
    }

    /// The share of a run of `wall_s` that no pacing accounts for.
    pub fn unpaced_share(&self, wall_s: f64) -> Option<f64> {
        (self.runs > 0 && wall_s > 0.0)
            .then(|| 1.0 - self.took_ns / self.runs as f64 / (wall_s * 1e9))
    }

    fn add(&mut self, took: f64, model: f64) {
        self.took_ns += took;
        self.model_ns += model;
    }
}

fn span_ns(v: &Value) -> f64 {
    v["end"].as_f64().unwrap_or(0.0) - v["start"].as_f64().unwrap_or(0.0)
}

fn copies_model_ns(v: &Value) -> f64 {
    v["copies"].as_array().map_or(0.0, |c| {
        c.iter().filter_map(|c| c["model_ns"].as_f64()).sum()
    })
}

/// Adds one truth `window` line's paced work.
fn add_window(p: &mut Paced, w: &Value) {
    let restores = w["restores"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for c in std::iter::once(&w["snapshot"]).chain(restores) {
        p.add(span_ns(c), copies_model_ns(c));
    }
    if let Some(m) = w["drain_signal_model_ns"].as_f64() {
        p.add(span_ns(&w["drain_signal"]), m);
    }
    let kernel = w["kernel_model_ns"].as_f64().unwrap_or(0.0);
    for pass in w["passes"].as_array().into_iter().flatten() {
        let gpu =
            pass["gpu_end"].as_f64().unwrap_or(0.0) - pass["gpu_start"].as_f64().unwrap_or(0.0);
        p.add(gpu, kernel);
    }
}

/// The paced work of the truth lines in `text`.
pub fn from_truth(text: &str) -> Paced {
    from_truth_of(text, None)
}

/// The paced work of the truth lines in `text` that build `build` wrote (each run's lines follow
/// its `sdk_build` line, runs one after another: an interleaved bench's one file holds every
/// build's); every line with `None`.
pub fn from_truth_of(text: &str, build: Option<&str>) -> Paced {
    let mut p = Paced::default();
    let mut current: Option<String> = None;
    for v in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        if v["type"] == "sdk_build" {
            current = v["build"].as_str().map(String::from);
        }
        if build.is_some() && current.as_deref() != build {
            continue;
        }
        match v["type"].as_str() {
            Some("window") => add_window(&mut p, &v),
            Some("totals") => p.runs += 1,
            Some("sdk_build") if p.slowdown.is_none() => p.slowdown = v["slowdown"].as_f64(),
            _ => {}
        }
    }
    p
}

/// What the truth file `file` in `dir` says of build `build` (`None`: no file).
pub fn read(dir: &Path, file: &str, build: &str) -> Option<Paced> {
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    Some(from_truth_of(&text, Some(build)))
}

/// The closing note's pacing lines for the baseline and the device-side build of `device`
/// (`paced`, in that order), with a warning when either kept badly to the model or its unpaced
/// share is over half.
pub fn note(paced: [Option<Paced>; 2], device: &BuildComparison) -> String {
    let row = device.rows.as_ref().and_then(|r| r.rows.first());
    let walls = [
        row.and_then(|r| r.a_median_s),
        row.and_then(|r| r.b_median_s),
    ];
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0));
    let x = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}x"));
    let fid: Vec<Option<f64>> = paced.iter().map(|p| p.and_then(|p| p.fidelity())).collect();
    let unpaced: Vec<Option<f64>> = paced
        .iter()
        .zip(walls)
        .map(|(p, w)| p.zip(w).and_then(|(p, w)| p.unpaced_share(w)))
        .collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  pacing: the paced copies, signal and kernels took {} (baseline) and {} \
         (device-side) of their\n  modelled time; unpaced host work was {} and {} of the two \
         builds' median wall time",
        x(fid[0]),
        x(fid[1]),
        pct(unpaced[0]),
        pct(unpaced[1])
    );
    let late = fid.iter().flatten().any(|&f| f > 1.10);
    let hosty = unpaced.iter().flatten().any(|&u| u > 0.5);
    if late || hosty {
        let _ = writeln!(
            s,
            "  warning: {},\n  so the factor says more about this CPU's host work than \
             about the model: run the step\n  again on a quiet machine",
            if late {
                "the paced work overran its model by over 10 %"
            } else {
                "over half a build's wall time is unpaced host work"
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRUTH: &str = r#"{"type":"sdk_build","slowdown":100.0}
{"type":"window","snapshot":{"start":0,"end":110,"copies":[{"model_ns":100}]},"restores":[{"start":200,"end":250,"copies":[{"model_ns":50}]}],"drain_signal":{"start":300,"end":320},"drain_signal_model_ns":20,"kernel_model_ns":30,"passes":[{"gpu_start":400,"gpu_end":430},{"gpu_start":500,"gpu_end":530}]}
not json
{"type":"totals"}
"#;

    #[test]
    fn paced_work_sums_copies_signal_and_kernels() {
        let p = from_truth(TRUTH);
        assert_eq!(p.took_ns, 110.0 + 50.0 + 20.0 + 60.0);
        assert_eq!(p.model_ns, 100.0 + 50.0 + 20.0 + 60.0);
        assert_eq!(p.runs, 1);
        assert_eq!(p.slowdown, Some(100.0));
        assert!((p.fidelity().unwrap() - 240.0 / 230.0).abs() < 1e-12);
        // 240 ns paced of a 960 ns run: three quarters unpaced.
        assert!((p.unpaced_share(960e-9).unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(from_truth("").fidelity(), None);
        // Two builds' runs in one file: each build gets its own lines only.
        let other = TRUTH.replace(r#""slowdown":100.0"#, r#""slowdown":50.0,"build":"b""#);
        let both = format!(
            "{}{other}",
            TRUTH.replace(r#""slowdown""#, r#""build":"a","slowdown""#)
        );
        let (a, b) = (
            from_truth_of(&both, Some("a")),
            from_truth_of(&both, Some("b")),
        );
        assert_eq!((a.runs, a.slowdown, a.took_ns), (1, Some(100.0), p.took_ns));
        assert_eq!((b.runs, b.slowdown), (1, Some(50.0)));
        assert_eq!(from_truth_of(&both, Some("c")).runs, 0);
        assert_eq!(from_truth("").unpaced_share(1.0), None);
    }
}
