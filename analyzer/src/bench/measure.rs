//! Measuring one planned measurement: warm-up and timed runs of its command, each run's phase
//! files and SDK log collected, and the whole-run row they make.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use super::child::{self, RunOutcome, Sink};
use super::plan::PlannedMeasurement;
use crate::db::measurements::{Failures, MeasurementRow, Timing};
use crate::import::krp::phase_files;

/// One timed run's files.
#[derive(Debug, Clone)]
pub struct TimedRun {
    pub outcome: RunOutcome,
    /// Phase files this run wrote.
    pub phase_files: Vec<PathBuf>,
    /// Its stderr (the SDK log for P3/P4 and P5), kept next to its phase file.
    pub log: Option<PathBuf>,
    /// Its place among all timed runs of an interleaved bench (`--build`).
    pub position: Option<u64>,
}

/// What one measurement gave.
#[derive(Debug, Clone)]
pub struct MeasurementResult {
    pub row: MeasurementRow,
    pub runs: Vec<TimedRun>,
}

fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let start = text.len().saturating_sub(n);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].to_string()
}

/// The emulator's variable naming the SDK build it plays (`krphase-emu --sdk-build`).
pub const EMU_SDK_BUILD_VAR: &str = "KRPHASE_EMU_SDK_BUILD";

/// Environment of every run: the tool preloaded in observe mode (it never claims replay), its
/// files left to land in rocprofv3's output directory; the SDK log at INFO for P3/P4 and P5;
/// the emulated SDK build with `--sdk-build` (a real SDK ignores the variable).
pub(super) fn run_env(tool: Option<&Path>, m: &PlannedMeasurement) -> Vec<(String, String)> {
    let sdk_log = m.sdk_log;
    let mut env = Vec::new();
    if let Some(b) = &m.sdk_build {
        env.push((EMU_SDK_BUILD_VAR.into(), b.clone()));
    }
    if let Some(t) = tool {
        env.push(("ROCP_TOOL_LIBRARIES".into(), t.display().to_string()));
        env.push(("KRPHASE_MODE".into(), "observe".into()));
    }
    if sdk_log {
        env.push(("ROCPROFILER_LOG_LEVEL".into(), "info".into()));
    }
    if tool.is_some() {
        // Set after the bench's own, so a measurement's setting wins.
        env.extend(m.tool_env.iter().cloned());
    }
    env
}

/// One measurement being run: its command, environment and output directory, and the timed
/// runs so far. Runs one at a time, so that `krphase bench --build` can interleave builds.
pub struct Runner<'a> {
    m: &'a PlannedMeasurement,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    outdir: PathBuf,
    runs: Vec<TimedRun>,
    timed: Vec<RunOutcome>,
    /// The next timed run's place in an interleaved bench.
    pub position: Option<u64>,
}

impl<'a> Runner<'a> {
    /// Clears the measurement's output directory.
    pub fn start(
        m: &'a PlannedMeasurement,
        rocprofv3: &[String],
        tool: Option<&Path>,
    ) -> Result<Runner<'a>> {
        let outdir = m.outdir().to_path_buf();
        if outdir.exists() {
            std::fs::remove_dir_all(&outdir)
                .with_context(|| format!("cannot clear {}", outdir.display()))?;
        }
        std::fs::create_dir_all(&outdir)
            .with_context(|| format!("cannot create {}", outdir.display()))?;
        Ok(Runner {
            m,
            argv: m.spec.argv(rocprofv3),
            env: run_env(tool, m),
            outdir,
            runs: Vec::new(),
            timed: Vec::new(),
            position: None,
        })
    }

    /// Runs warm-up (`timed` false: its files discarded) or timed run `i`.
    pub fn run(&mut self, i: u32, timed: bool, interrupted: &AtomicBool) -> Result<RunOutcome> {
        if interrupted.load(Ordering::SeqCst) {
            anyhow::bail!("interrupted");
        }
        let (m, outdir) = (self.m, &self.outdir);
        // The tool's files must land in rocprofv3's output directory, and the tool must run.
        let remove = ["KRPHASE_OUTPUT", "KRPHASE_DISABLE"];
        let before = phase_files(outdir);
        let log = outdir.join(format!(
            "{}-{i}.stderr",
            if timed { "run" } else { "warmup" }
        ));
        // A launcher that cannot be started is a failed run (127, as a shell reports it).
        let outcome =
            child::run_child(&self.argv, &self.env, &remove, Sink::Null, Sink::File(&log))
                .unwrap_or_else(|e| {
                    let _ = std::fs::write(&log, format!("{e:#}\n"));
                    RunOutcome {
                        rc: 127,
                        wall_s: 0.0,
                        peak_rss_kib: 0,
                        cpu_s: 0.0,
                    }
                });
        // Ctrl-C at a terminal reaches the whole foreground group: a child killed by SIGINT is
        // the same event, seen before (or without) the handler thread's flag.
        if outcome.rc == -libc::SIGINT {
            interrupted.store(true, Ordering::SeqCst);
        }
        let new: Vec<PathBuf> = phase_files(outdir)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        if !outcome.ok() {
            eprintln!(
                "krphase bench: {} {} run {i} failed (rc {}): {}",
                m.experiment.name(),
                m.variant,
                outcome.rc,
                tail(&log, 2000).trim_end()
            );
        }
        if timed {
            self.timed.push(outcome);
        }
        if !timed || !outcome.ok() {
            for f in &new {
                let _ = std::fs::remove_file(f);
            }
            let _ = std::fs::remove_file(&log);
            return Ok(outcome);
        }
        self.keep(outcome, new, log);
        Ok(outcome)
    }

    /// Keeps a successful timed run's files: its stderr next to the phase file it belongs to.
    fn keep(&mut self, outcome: RunOutcome, new: Vec<PathBuf>, log: PathBuf) {
        let kept = match new.as_slice() {
            [one] => {
                let dest = one.with_extension("log");
                std::fs::rename(&log, &dest).map(|_| dest).ok()
            }
            _ => Some(log),
        };
        let log = if self.m.sdk_log {
            kept
        } else {
            if let Some(k) = kept {
                let _ = std::fs::remove_file(k);
            }
            None
        };
        self.runs.push(TimedRun {
            outcome,
            phase_files: new,
            log,
            position: self.position,
        });
    }

    /// The whole-run row its timed runs make.
    pub fn finish(self) -> MeasurementResult {
        let m = self.m;
        let stats = child::stats(&self.timed);
        let row = MeasurementRow {
            experiment: m.experiment.name().into(),
            variant: m.variant.clone(),
            mode: m.mode,
            detail: m.detail.clone(),
            timing: stats.as_ref().map(|s| Timing {
                median_s: s.median_s,
                min_s: s.min_s,
                max_s: s.max_s,
                peak_child_rss_kib: s.peak_rss_kib,
            }),
            samples: stats.as_ref().map_or(0, |s| s.samples),
            failures: stats
                .as_ref()
                .map_or(Failures::All, |s| Failures::Count(s.failures)),
            command: self.argv.join(" "),
        };
        MeasurementResult {
            row,
            runs: self.runs,
        }
    }
}

/// Runs one measurement: warm-ups (their files discarded), then the timed runs.
pub fn run_measurement(
    m: &PlannedMeasurement,
    rocprofv3: &[String],
    tool: Option<&Path>,
    warmup: i64,
    repeats: u32,
    mut on_run: impl FnMut(),
    interrupted: &AtomicBool,
) -> Result<MeasurementResult> {
    let mut runner = Runner::start(m, rocprofv3, tool)?;
    child::measure(warmup, repeats, |i, timed| {
        let o = runner.run(i, timed, interrupted);
        on_run();
        o
    })?;
    if interrupted.load(Ordering::SeqCst) {
        anyhow::bail!("interrupted");
    }
    Ok(runner.finish())
}
