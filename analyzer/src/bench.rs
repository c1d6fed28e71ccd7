//! `krphase bench`: the seed's whole-run experiments (replay_perf.py's P1, P2, P3/P4, P6, and P5
//! which the seed could not measure), each measurement's runs carrying libkrphase.so phase files;
//! the CSV with replay_perf.py's columns; with `--db`, the measurements, their phase files, the
//! SDK log lines of P5 and the benchmark-database bookkeeping in the analyzer's database.

pub mod child;
pub mod command;
pub mod import_benchmark;
pub mod record;
pub mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use crate::benchdb::CollectionMode;
use crate::harness::{self, Failures, Row, Timing};
use child::{RunOutcome, Sink};
use command::{CommandSpec, Counters};

/// Experiments, in their default (sorted) order. `p4` names P3: one footprint sweep covers both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Experiment {
    P1,
    P2,
    #[value(alias = "p4")]
    P3,
    P5,
    P6,
}

impl Experiment {
    pub const ALL: [Experiment; 5] = [
        Experiment::P1,
        Experiment::P2,
        Experiment::P3,
        Experiment::P5,
        Experiment::P6,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Experiment::P1 => "P1",
            Experiment::P2 => "P2",
            Experiment::P3 => "P3",
            Experiment::P5 => "P5",
            Experiment::P6 => "P6",
        }
    }
}

/// `krphase bench` options (replay_perf.py's, plus `--tool`; `--db` is the global option).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// rocprofv3 launcher to run; may hold several words (e.g. "krphase-emu rocprofv3").
    /// Default: rocprofv3 on PATH.
    #[arg(long)]
    pub rocprofv3: Option<String>,
    /// Application and its arguments (arguments beginning with `-` are not supported).
    #[arg(long = "app", num_args = 1.., required = true)]
    pub app: Vec<String>,
    /// CSV path.
    #[arg(long, default_value = "replay_perf.csv")]
    pub output: PathBuf,
    /// Parent of the per-measurement rocprofv3 output directories.
    #[arg(long, default_value = "replay_perf_out")]
    pub workdir: PathBuf,
    /// Timed runs per measurement.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: u32,
    /// Untimed runs before the timed ones.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(0..))]
    pub warmup: i64,
    /// Number of counter groups G.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=5))]
    pub groups: u32,
    /// Element counts for P3/P4.
    #[arg(long, num_args = 1.., default_values_t = [262144u64, 1048576, 4194304, 16777216])]
    pub footprints: Vec<u64>,
    /// Experiments to run, in the order given (default: all, sorted).
    #[arg(long, num_args = 1.., value_enum)]
    pub only: Vec<Experiment>,
    /// Print the plan and exit; checks neither rocprofv3 nor the app.
    #[arg(long)]
    pub dry_run: bool,
    /// libkrphase.so preloaded into every run through ROCP_TOOL_LIBRARIES, in observe mode.
    /// Default: the one built next to this executable.
    #[arg(long, conflicts_with = "no_tool")]
    pub tool: Option<PathBuf>,
    /// Run without libkrphase.so (whole-run numbers only, no phase files).
    #[arg(long)]
    pub no_tool: bool,
}

/// One planned measurement: one CSV row.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub experiment: Experiment,
    pub variant: String,
    pub mode: CollectionMode,
    pub detail: String,
    pub spec: CommandSpec,
    /// Keep the SDK's INFO log (P3/P4 for the SDK's snapshot bytes, P5 for the drain).
    pub sdk_log: bool,
}

impl Measurement {
    pub fn outdir(&self) -> &Path {
        &self.spec.outdir
    }
}

/// The measurements of the chosen experiments, in order.
pub fn plan(args: &BenchArgs) -> Vec<Measurement> {
    let g = args.groups as usize;
    let all = command::groups(g);
    let work = &args.workdir;
    let app = args.app.clone();
    let only: Vec<Experiment> = if args.only.is_empty() {
        Experiment::ALL.to_vec()
    } else {
        args.only.clone()
    };
    let spec = |groups: Vec<Vec<String>>, replay: bool, extra: &[&str], dir: String| CommandSpec {
        counters: Counters::Pmc(groups),
        replay,
        extra: extra.iter().map(|s| s.to_string()).collect(),
        outdir: work.join(dir),
        app: app.clone(),
    };
    let mut out = Vec::new();
    let mut push = |experiment, variant: String, mode, detail: String, spec, sdk_log| {
        out.push(Measurement {
            experiment,
            variant,
            mode,
            detail,
            spec,
            sdk_log,
        })
    };
    for e in only {
        match e {
            Experiment::P1 => {
                for (i, group) in all.iter().enumerate() {
                    push(
                        e,
                        format!("application-replay-run-{i}"),
                        CollectionMode::SinglePass,
                        command::UNIQUE_COUNTERS[i].to_string(),
                        spec(vec![group.clone()], false, &[], format!("p1-base-{i}")),
                        false,
                    );
                }
                push(
                    e,
                    "multiplexed-all-groups".into(),
                    CollectionMode::Multiplexed,
                    format!("{g} groups rotated across dispatches, one run"),
                    CommandSpec {
                        counters: Counters::InputFile(work.join(command::MULTIPLEX_FILE)),
                        ..spec(vec![], false, &[], "p1-multiplexed".into())
                    },
                    false,
                );
                push(
                    e,
                    "replay-all-groups".into(),
                    CollectionMode::KernelReplay,
                    format!("{g} groups, one run"),
                    spec(all.clone(), true, &[], "p1-replay".into()),
                    false,
                );
            }
            Experiment::P2 => {
                for n in 1..=g {
                    let replay = n > 1;
                    push(
                        e,
                        format!("passes-{n}"),
                        if replay {
                            CollectionMode::KernelReplay
                        } else {
                            CollectionMode::SinglePass
                        },
                        format!("{n} group{}", if n == 1 { "" } else { "s" }),
                        spec(all[..n].to_vec(), replay, &[], format!("p2-{n}")),
                        false,
                    );
                }
            }
            Experiment::P3 => {
                for &n in &args.footprints {
                    push(
                        e,
                        format!("elements-{n}"),
                        CollectionMode::KernelReplay,
                        format!("{n} elements"),
                        CommandSpec {
                            app: command::with_elements(&app, n),
                            ..spec(all.clone(), true, &[], format!("p3-{n}"))
                        },
                        true,
                    );
                }
            }
            Experiment::P5 => push(
                e,
                "drain-share".into(),
                CollectionMode::KernelReplay,
                format!("{g} groups, one run, SDK INFO log kept for the drain"),
                spec(all.clone(), true, &[], "p5-drain".into()),
                true,
            ),
            Experiment::P6 => {
                push(
                    e,
                    "no-replay".into(),
                    CollectionMode::SinglePass,
                    "single group, replay not configured".into(),
                    spec(all[..1].to_vec(), false, &[], "p6-baseline".into()),
                    false,
                );
                push(
                    e,
                    "replay-active-none-matched".into(),
                    CollectionMode::KernelReplay,
                    "replay configured, no kernel matches".into(),
                    spec(
                        all.clone(),
                        true,
                        &["--kernel-include-regex", command::NO_KERNEL_REGEX],
                        "p6-filtered".into(),
                    ),
                    false,
                );
            }
        }
    }
    out
}

/// Finds a program as a path or on PATH.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The launcher words: `--rocprofv3` split on whitespace, else rocprofv3 on PATH.
pub fn launcher(arg: Option<&str>) -> Vec<String> {
    match arg {
        Some(s) => s.split_whitespace().map(String::from).collect(),
        None => vec![
            find_program("rocprofv3")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "rocprofv3".into()),
        ],
    }
}

/// One timed run's files.
#[derive(Debug, Clone)]
pub struct TimedRun {
    pub outcome: RunOutcome,
    /// Phase files this run wrote.
    pub phase_files: Vec<PathBuf>,
    /// Its stderr (the SDK log for P3/P4 and P5), kept next to its phase file.
    pub log: Option<PathBuf>,
}

/// What one measurement gave.
#[derive(Debug, Clone)]
pub struct Measured {
    pub row: Row,
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

/// Environment of every run: the tool preloaded in observe mode (it never claims replay), its
/// files left to land in rocprofv3's output directory; the SDK log at INFO for P3/P4 and P5.
fn run_env(tool: Option<&Path>, sdk_log: bool) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if let Some(t) = tool {
        env.push(("ROCP_TOOL_LIBRARIES".into(), t.display().to_string()));
        env.push(("KRPHASE_MODE".into(), "observe".into()));
    }
    if sdk_log {
        env.push(("ROCPROFILER_LOG_LEVEL".into(), "info".into()));
    }
    env
}

/// Runs one measurement: warm-ups (their files discarded), then the timed runs.
pub fn run_measurement(
    m: &Measurement,
    rocprofv3: &[String],
    tool: Option<&Path>,
    warmup: i64,
    repeats: u32,
    mut on_run: impl FnMut(),
    interrupted: &AtomicBool,
) -> Result<Measured> {
    let outdir = m.outdir().to_path_buf();
    if outdir.exists() {
        std::fs::remove_dir_all(&outdir)
            .with_context(|| format!("cannot clear {}", outdir.display()))?;
    }
    std::fs::create_dir_all(&outdir)
        .with_context(|| format!("cannot create {}", outdir.display()))?;
    let argv = m.spec.argv(rocprofv3);
    let env = run_env(tool, m.sdk_log);
    // The tool's files must land in rocprofv3's output directory, and the tool must run.
    let remove = ["KRPHASE_OUTPUT", "KRPHASE_DISABLE"];
    let mut runs = Vec::new();
    let (stats, _) = child::measure(warmup, repeats, |i, timed| {
        if interrupted.load(Ordering::SeqCst) {
            anyhow::bail!("interrupted");
        }
        let before = harness::phase_files(&outdir);
        let log = outdir.join(format!(
            "{}-{i}.stderr",
            if timed { "run" } else { "warmup" }
        ));
        // A launcher that cannot be started is a failed run (127, as a shell reports it).
        let outcome = child::run_child(&argv, &env, &remove, Sink::Null, Sink::File(&log))
            .unwrap_or_else(|e| {
                let _ = std::fs::write(&log, format!("{e:#}\n"));
                RunOutcome {
                    rc: 127,
                    wall_s: 0.0,
                    peak_rss_kib: 0,
                    cpu_s: 0.0,
                }
            });
        on_run();
        // Ctrl-C at a terminal reaches the whole foreground group: a child killed by SIGINT is
        // the same event, seen before (or without) the handler thread's flag.
        if outcome.rc == -libc::SIGINT {
            interrupted.store(true, Ordering::SeqCst);
        }
        let new: Vec<PathBuf> = harness::phase_files(&outdir)
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
        if !timed || !outcome.ok() {
            for f in &new {
                let _ = std::fs::remove_file(f);
            }
            let _ = std::fs::remove_file(&log);
            return Ok(outcome);
        }
        // Keep the stderr next to the phase file it belongs to.
        let kept = match new.as_slice() {
            [one] => {
                let dest = one.with_extension("log");
                std::fs::rename(&log, &dest).map(|_| dest).ok()
            }
            _ => Some(log),
        };
        let log = if m.sdk_log {
            kept
        } else {
            if let Some(k) = kept {
                let _ = std::fs::remove_file(k);
            }
            None
        };
        runs.push(TimedRun {
            outcome,
            phase_files: new,
            log,
        });
        Ok(outcome)
    })?;
    if interrupted.load(Ordering::SeqCst) {
        anyhow::bail!("interrupted");
    }
    let row = Row {
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
        command: argv.join(" "),
    };
    Ok(Measured { row, runs })
}

/// P1's application-replay row: the sum of the G single-group medians (min and max summed too),
/// the largest peak RSS, the smallest sample count; `all` when any single-group run always
/// failed.
pub fn application_replay_row(base: &[&Row], g: u32) -> Option<Row> {
    if base.is_empty() {
        return None;
    }
    let timings: Option<Vec<Timing>> = base.iter().map(|r| r.timing).collect();
    let failures: u32 = base
        .iter()
        .map(|r| match r.failures {
            Failures::Count(n) => n,
            Failures::All => 0,
        })
        .sum();
    let (timing, samples, failures) = match timings {
        Some(t) => (
            Some(Timing {
                median_s: t.iter().map(|t| t.median_s).sum(),
                min_s: t.iter().map(|t| t.min_s).sum(),
                max_s: t.iter().map(|t| t.max_s).sum(),
                peak_child_rss_kib: t.iter().map(|t| t.peak_child_rss_kib).max().unwrap_or(0),
            }),
            base.iter().map(|r| r.samples).min().unwrap_or(0),
            Failures::Count(failures),
        ),
        None => (None, 0, Failures::All),
    };
    Some(Row {
        experiment: "P1".into(),
        variant: "application-replay-all-groups".into(),
        mode: CollectionMode::ApplicationReplay,
        detail: format!("sum of the {g} single-group runs"),
        timing,
        samples,
        failures,
        command: base
            .iter()
            .map(|r| r.command.as_str())
            .collect::<Vec<_>>()
            .join(" ; "),
    })
}

fn default_tool() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("libkrphase.so"))
}

/// Runs `krphase bench`; returns the process exit code.
pub fn run(args: &BenchArgs, db: Option<&Path>) -> Result<u8> {
    let rocprofv3 = launcher(args.rocprofv3.as_deref());
    let plan = plan(args);
    if args.dry_run {
        println!(
            "krphase bench plan: {} measurements x ({} warm-up + {} timed) runs",
            plan.len(),
            args.warmup,
            args.repeats
        );
        for m in &plan {
            println!(
                "  {} {:<28} {:<14} {}",
                m.experiment.name(),
                m.variant,
                m.mode,
                m.spec.argv(&rocprofv3).join(" ")
            );
        }
        return Ok(0);
    }
    if rocprofv3.is_empty() || find_program(&rocprofv3[0]).is_none() {
        eprintln!(
            "krphase bench: rocprofv3 launcher not found: {:?}",
            rocprofv3.join(" ")
        );
        return Ok(2);
    }
    if find_program(&args.app[0]).is_none() {
        eprintln!("krphase bench: application not found: {}", args.app[0]);
        return Ok(2);
    }
    let tool = if args.no_tool {
        None
    } else {
        let t = args.tool.clone().or_else(default_tool);
        match t {
            Some(t) if t.is_file() => Some(std::fs::canonicalize(&t).unwrap_or(t)),
            other => {
                eprintln!(
                    "krphase bench: tool library not found: {} (build krphase-tool, or pass --tool PATH or --no-tool)",
                    other.map(|p| p.display().to_string()).unwrap_or_default()
                );
                return Ok(2);
            }
        }
    };
    std::fs::create_dir_all(&args.workdir)
        .with_context(|| format!("cannot create {}", args.workdir.display()))?;
    if plan
        .iter()
        .any(|m| matches!(m.spec.counters, Counters::InputFile(_)))
    {
        let p = args.workdir.join(command::MULTIPLEX_FILE);
        let json = command::multiplex_json(&command::groups(args.groups as usize));
        std::fs::write(&p, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let mut recorder = record::Recorder::open(db)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // A second handler cannot be installed (tests call run twice): keep the first.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let per = args.warmup.max(0) as u64 + u64::from(args.repeats);
    let bar = indicatif::ProgressBar::new(plan.len() as u64 * per);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta} | {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );

    let mut rows: Vec<Row> = Vec::new();
    let mut done: Vec<(Measurement, Measured)> = Vec::new();
    for m in &plan {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        bar.set_message(format!("{} {}", m.experiment.name(), m.variant));
        let measured = match run_measurement(
            m,
            &rocprofv3,
            tool.as_deref(),
            args.warmup,
            args.repeats,
            || bar.inc(1),
            &interrupted,
        ) {
            Ok(x) => x,
            Err(e) if interrupted.load(Ordering::SeqCst) => {
                let _ = e;
                break;
            }
            Err(e) => return Err(e),
        };
        if let Err(e) = recorder.record(m, &measured) {
            bar.suspend(|| eprintln!("krphase bench: warning: {e:#}"));
        }
        rows.push(measured.row.clone());
        // The application-replay total follows the last single-group run of P1.
        if m.experiment == Experiment::P1
            && m.variant == format!("application-replay-run-{}", args.groups - 1)
        {
            let base: Vec<&Row> = rows
                .iter()
                .filter(|r| r.variant.starts_with("application-replay-run-"))
                .collect();
            if let Some(total) = application_replay_row(&base, args.groups) {
                let runs: Vec<&Measured> = done
                    .iter()
                    .map(|(_, x)| x)
                    .filter(|x| x.row.variant.starts_with("application-replay-run-"))
                    .chain(std::iter::once(&measured))
                    .collect();
                if let Err(e) = recorder.record_derived(&total, &runs) {
                    bar.suspend(|| eprintln!("krphase bench: warning: {e:#}"));
                }
                rows.push(total);
            }
        }
        done.push((m.clone(), measured));
    }
    bar.finish_and_clear();
    let was_interrupted = interrupted.load(Ordering::SeqCst);
    if harness::write_csv(&args.output, &rows)? {
        println!("wrote {} ({} rows)", args.output.display(), rows.len());
    }
    recorder.finish()?;
    print!("{}", summary::render(recorder.conn())?);
    if let Some(db) = db {
        println!(
            "database: {} (try `krphase --db {} report`)",
            db.display(),
            db.display()
        );
    }
    if was_interrupted {
        eprintln!(
            "krphase bench: interrupted; {} finished rows written",
            rows.len()
        );
        return Ok(130);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn parse(s: &str) -> Result<BenchArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench").chain(s.split_whitespace())).map(|c| c.bench)
    }

    #[test]
    fn defaults_include_a_warmup() {
        let a = parse("--app app").unwrap();
        assert_eq!((a.warmup, a.repeats, a.groups), (1, 3, 5));
        assert_eq!(a.footprints, vec![262144, 1048576, 4194304, 16777216]);
        assert_eq!(a.output, PathBuf::from("replay_perf.csv"));
        assert_eq!(a.workdir, PathBuf::from("replay_perf_out"));
    }

    #[test]
    fn repeats_must_be_positive() {
        assert!(parse("--app app --repeats 0").is_err());
    }

    #[test]
    fn warmup_cannot_be_negative() {
        assert!(parse("--app app --warmup -1").is_err());
    }

    #[test]
    fn groups_are_one_to_five() {
        assert!(parse("--app app --groups 0").is_err());
        assert!(parse("--app app --groups 6").is_err());
        assert!(parse("--app app --groups 5").is_ok());
    }

    #[test]
    fn every_experiment_runs_by_default() {
        let a = parse("--app app").unwrap();
        let exps: Vec<Experiment> = plan(&a).iter().map(|m| m.experiment).collect();
        let mut uniq = exps.clone();
        uniq.dedup();
        assert_eq!(uniq, Experiment::ALL.to_vec());
        let a = parse("--app app --only p6 p4 p1").unwrap();
        let mut order: Vec<Experiment> = plan(&a).iter().map(|m| m.experiment).collect();
        order.dedup();
        assert_eq!(order, vec![Experiment::P6, Experiment::P3, Experiment::P1]);
    }

    #[test]
    fn plan_matches_the_seed_variants_and_outdirs() {
        let a = parse("--app app 1024 --groups 3 --footprints 64 128 --workdir w").unwrap();
        let p = plan(&a);
        let names: Vec<(String, String)> = p
            .iter()
            .map(|m| (m.variant.clone(), m.outdir().display().to_string()))
            .collect();
        let want = [
            ("application-replay-run-0", "w/p1-base-0"),
            ("application-replay-run-1", "w/p1-base-1"),
            ("application-replay-run-2", "w/p1-base-2"),
            ("multiplexed-all-groups", "w/p1-multiplexed"),
            ("replay-all-groups", "w/p1-replay"),
            ("passes-1", "w/p2-1"),
            ("passes-2", "w/p2-2"),
            ("passes-3", "w/p2-3"),
            ("elements-64", "w/p3-64"),
            ("elements-128", "w/p3-128"),
            ("drain-share", "w/p5-drain"),
            ("no-replay", "w/p6-baseline"),
            ("replay-active-none-matched", "w/p6-filtered"),
        ];
        assert_eq!(
            names,
            want.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        );
        assert_eq!(p[5].mode, CollectionMode::SinglePass);
        assert!(!p[5].spec.replay);
        assert_eq!(p[6].mode, CollectionMode::KernelReplay);
        assert_eq!(p[8].spec.app, vec!["app", "64"]);
        assert_eq!(p[1].detail, "GRBM_GUI_ACTIVE");
        assert!(p[10].sdk_log && p[8].sdk_log && !p[0].sdk_log);
        assert!(
            p[12]
                .spec
                .extra
                .contains(&command::NO_KERNEL_REGEX.to_string())
        );
    }

    #[test]
    fn dry_run_needs_neither_rocprofv3_nor_the_application() {
        let a = parse(
            "--rocprofv3 /no/such/rocprofv3 --app /no/such/app --dry-run --workdir /no/such/dir",
        )
        .unwrap();
        assert_eq!(run(&a, None).unwrap(), 0);
        assert!(!Path::new("/no/such/dir").exists());
    }

    #[test]
    fn missing_rocprofv3_is_an_error() {
        let a = parse("--rocprofv3 /no/such/rocprofv3 --app sh").unwrap();
        assert_eq!(run(&a, None).unwrap(), 2);
        let a = parse("--rocprofv3 sh --app /no/such/app").unwrap();
        assert_eq!(run(&a, None).unwrap(), 2);
    }

    #[test]
    fn application_replay_total_sums_the_single_group_runs() {
        let r = |m: f64, f: Failures| Row {
            experiment: "P1".into(),
            variant: "application-replay-run-0".into(),
            mode: CollectionMode::SinglePass,
            detail: String::new(),
            timing: matches!(f, Failures::Count(_)).then_some(Timing {
                median_s: m,
                min_s: m - 0.5,
                max_s: m + 0.5,
                peak_child_rss_kib: (m * 10.0) as u64,
            }),
            samples: if matches!(f, Failures::All) { 0 } else { 2 },
            failures: f,
            command: format!("c{m}"),
        };
        let a = r(1.0, Failures::Count(0));
        let b = r(2.0, Failures::Count(1));
        let t = application_replay_row(&[&a, &b], 2).unwrap();
        assert_eq!(t.mode, CollectionMode::ApplicationReplay);
        let tt = t.timing.unwrap();
        assert_eq!(
            (tt.median_s, tt.min_s, tt.max_s, tt.peak_child_rss_kib),
            (3.0, 2.0, 4.0, 20)
        );
        assert_eq!((t.samples, t.failures), (2, Failures::Count(1)));
        assert_eq!(t.command, "c1 ; c2");
        let c = r(1.0, Failures::All);
        let t = application_replay_row(&[&a, &c], 2).unwrap();
        assert_eq!((t.timing, t.failures), (None, Failures::All));
    }
}
