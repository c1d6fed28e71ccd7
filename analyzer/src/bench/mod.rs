//! `krphase bench`: the seed's whole-run experiments (replay_perf.py's P1, P2, P3/P4, P6, and P5
//! which the seed could not measure), each measurement's runs carrying libkrphase.so phase files;
//! the CSV with replay_perf.py's columns; with `--db`, the measurements, their phase files, the
//! SDK log lines of P5 and the benchmark-database bookkeeping in the analyzer's database.
//!
//! The arguments travel one way through this folder: [`args`] → [`plan`] (which measurements,
//! each a [`command`]) → [`measure`] (its runs, each a [`child`] process) → [`record`] (into the
//! database) → the [`summary`] (which `krphase report` prints too).

pub mod application_replay;
pub mod args;
pub mod child;
pub mod command;
pub mod interleave;
pub mod measure;
pub mod plan;
pub mod progress;
pub mod record;
pub mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use crate::db::measurements::MeasurementRow;
use crate::import::measurement_csv;
use application_replay::application_replay_row;
pub use args::{BenchArgs, Experiment};
use command::{Counters, find_program, launcher};
use measure::{MeasurementResult, run_measurement};
use plan::{PlannedMeasurement, plan};
use record::Recorder;

/// Exit code of a run that could not start (a launcher, application or tool not found).
const EXIT_NOT_FOUND: u8 = 2;
/// Exit code of a run stopped by Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;

fn default_tool() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join("libkrphase.so"))
}

fn print_plan(args: &BenchArgs, plan: &[PlannedMeasurement], rocprofv3: &[String]) {
    println!(
        "krphase bench plan: {} measurements x ({} warm-up + {} timed) runs",
        plan.len(),
        args.warmup,
        args.repeats
    );
    for m in plan {
        println!(
            "  {} {:<28} {:<14} {}",
            m.experiment.name(),
            m.variant,
            m.mode,
            m.spec.argv(rocprofv3).join(" ")
        );
    }
}

/// Checks that the launcher and the application exist and finds the tool library: `Err` with
/// the exit code after saying what is missing.
fn find_inputs(args: &BenchArgs, rocprofv3: &[String]) -> Result<Option<PathBuf>, u8> {
    if rocprofv3.is_empty() || find_program(&rocprofv3[0]).is_none() {
        eprintln!(
            "krphase bench: rocprofv3 launcher not found: {:?}",
            rocprofv3.join(" ")
        );
        return Err(EXIT_NOT_FOUND);
    }
    if find_program(&args.app[0]).is_none() {
        eprintln!("krphase bench: application not found: {}", args.app[0]);
        return Err(EXIT_NOT_FOUND);
    }
    if args.no_tool {
        return Ok(None);
    }
    match args.tool.clone().or_else(default_tool) {
        Some(t) if t.is_file() => Ok(Some(std::fs::canonicalize(&t).unwrap_or(t))),
        other => {
            eprintln!(
                "krphase bench: tool library not found: {} (build krphase-tool, or pass --tool PATH or --no-tool)",
                other.map(|p| p.display().to_string()).unwrap_or_default()
            );
            Err(EXIT_NOT_FOUND)
        }
    }
}

/// Creates the work directory, with the multiplexing input file when a measurement needs it.
fn prepare_workdir(args: &BenchArgs, plan: &[PlannedMeasurement]) -> Result<()> {
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
    Ok(())
}

/// A Ctrl-C flag: set by the handler (the first one installed in this process stays).
fn interrupt_flag() -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    // A second handler cannot be installed (tests call run twice): keep the first.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    interrupted
}

/// Measures the plan in order, recording each measurement; stops early on Ctrl-C. Returns the
/// CSV rows, P1's application-replay total following its last single-group run.
fn measure_all(
    args: &BenchArgs,
    plan: &[PlannedMeasurement],
    rocprofv3: &[String],
    tool: Option<&Path>,
    recorder: &mut Recorder,
    interrupted: &AtomicBool,
) -> Result<Vec<MeasurementRow>> {
    let per = args.warmup.max(0) as u64 + u64::from(args.repeats);
    let bar = progress::Progress::new(plan.len() as u64 * per, plan.len());
    let mut rows: Vec<MeasurementRow> = Vec::new();
    let mut done: Vec<MeasurementResult> = Vec::new();
    let mut position = 0u64;
    for (i, m) in plan.iter().enumerate() {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        if m.interleaved {
            // The first of a group of interleaved measurements runs the whole group.
            if i > 0 && plan[i - 1].interleaved {
                continue;
            }
            let group: Vec<&PlannedMeasurement> =
                plan[i..].iter().take_while(|x| x.interleaved).collect();
            bar.start(&format!(
                "{} {} (interleaved)",
                m.experiment.name(),
                m.variant
            ));
            let measured = match interleave::measure_one(
                &group,
                (rocprofv3, tool),
                (args.warmup, args.repeats),
                &mut position,
                &|| bar.inc(),
                interrupted,
            ) {
                Ok(x) => x,
                Err(_) if interrupted.load(Ordering::SeqCst) => break,
                Err(e) => return Err(e),
            };
            for (g, x) in group.iter().zip(measured) {
                if let Err(e) = recorder.record(g, &x) {
                    bar.line(&format!("warning: {e:#}"));
                }
                rows.push(x.row.clone());
                done.push(x);
            }
            continue;
        }
        bar.start(&format!("{} {}", m.experiment.name(), m.variant));
        let measured = match run_measurement(
            m,
            rocprofv3,
            tool,
            args.warmup,
            args.repeats,
            || bar.inc(),
            interrupted,
        ) {
            Ok(x) => x,
            Err(_) if interrupted.load(Ordering::SeqCst) => break,
            Err(e) => return Err(e),
        };
        if let Err(e) = recorder.record(m, &measured) {
            bar.line(&format!("warning: {e:#}"));
        }
        rows.push(measured.row.clone());
        if m.experiment == Experiment::P1
            && m.variant == format!("application-replay-run-{}", args.groups - 1)
        {
            add_application_replay_total(args, &mut rows, &done, &measured, recorder, &bar);
        }
        done.push(measured);
    }
    bar.finish();
    Ok(rows)
}

/// P1's application-replay total, recorded and linked to the single-group runs it sums.
fn add_application_replay_total(
    args: &BenchArgs,
    rows: &mut Vec<MeasurementRow>,
    done: &[MeasurementResult],
    last: &MeasurementResult,
    recorder: &mut Recorder,
    bar: &progress::Progress,
) {
    let is_single_group = |variant: &str| variant.starts_with("application-replay-run-");
    let base: Vec<&MeasurementRow> = rows
        .iter()
        .filter(|r| is_single_group(&r.variant))
        .collect();
    let Some(total) = application_replay_row(&base, args.groups) else {
        return;
    };
    let runs: Vec<&MeasurementResult> = done
        .iter()
        .filter(|x| is_single_group(&x.row.variant))
        .chain(std::iter::once(last))
        .collect();
    if let Err(e) = recorder.record_derived(&total, &runs) {
        bar.line(&format!("warning: {e:#}"));
    }
    rows.push(total);
}

/// Runs `krphase bench`; returns the process exit code.
pub fn run(args: &BenchArgs, db: Option<&Path>) -> Result<u8> {
    if !args.builds.is_empty() {
        return interleave::run(args, db);
    }
    let rocprofv3 = launcher(args.rocprofv3.as_deref());
    let plan = plan(args);
    if args.dry_run {
        print_plan(args, &plan, &rocprofv3);
        return Ok(0);
    }
    let tool = match find_inputs(args, &rocprofv3) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    prepare_workdir(args, &plan)?;
    let mut recorder = Recorder::open(db, args.label.as_deref())?;
    let interrupted = interrupt_flag();
    let rows = measure_all(
        args,
        &plan,
        &rocprofv3,
        tool.as_deref(),
        &mut recorder,
        &interrupted,
    )?;
    let was_interrupted = interrupted.load(Ordering::SeqCst);
    if measurement_csv::write_csv(&args.output, &rows)? {
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
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(0)
}

/// `krphase bench`: runs it and exits with its code when that is not 0 (2: an input not found,
/// 130: interrupted).
pub fn bench_command(args: &BenchArgs, db: Option<&Path>) -> Result<()> {
    let code = run(args, db)?;
    if code != 0 {
        std::process::exit(i32::from(code));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::benchmark::CollectionMode;
    use crate::db::measurements::{Failures, MeasurementRow, Timing};
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
    fn app_args_may_begin_with_a_dash_and_follow_the_app() {
        let a = parse("--app emu run --app-arg=--iterations --groups 2 --app-arg 1").unwrap();
        assert_eq!(a.app_command(), ["emu", "run", "--iterations", "1"]);
        assert_eq!(a.groups, 2);
    }

    #[test]
    fn builds_are_label_equals_sdk_build_and_exclude_label() {
        let a = parse("--app app --build base=baseline --build dev=device-side").unwrap();
        assert_eq!(
            a.builds,
            vec![
                ("base".to_string(), "baseline".to_string()),
                ("dev".to_string(), "device-side".to_string())
            ]
        );
        assert!(parse("--app app --build base").is_err());
        assert!(parse("--app app --build =x").is_err());
        assert!(parse("--app app --build a=b --label c").is_err());
        assert!(parse("--app app --build a=b --sdk-build c").is_err());
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
            ("krphase-off", "w/p6-tool-off"),
            ("krphase-drive-untraced", "w/p6-drive-untraced"),
            ("krphase-drive-traced", "w/p6-drive-traced"),
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
        // Every detail text replay_perf.py writes, verbatim (P5 is krphase's own).
        let details: Vec<(&str, &str)> = p
            .iter()
            .map(|m| (m.variant.as_str(), m.detail.as_str()))
            .collect();
        for want in [
            ("application-replay-run-0", "GRBM_COUNT"),
            (
                "multiplexed-all-groups",
                "3 groups rotated across dispatches, one run",
            ),
            ("replay-all-groups", "3 groups, one run"),
            ("passes-1", "1 group(s)"),
            ("passes-2", "2 group(s)"),
            ("passes-3", "3 group(s)"),
            ("elements-64", "64 elements"),
            ("no-replay", "single group, replay not configured"),
            (
                "replay-active-none-matched",
                "replay configured, no kernel matches",
            ),
        ] {
            assert!(details.contains(&want), "{want:?} not in {details:?}");
        }
        assert!(p[10].sdk_log && p[8].sdk_log && !p[0].sdk_log);
        // P6's tracing split: interleaved, one group, no rocprofv3 replay; the tool's settings.
        assert!(p[13..].iter().all(|m| m.interleaved && !m.spec.replay));
        assert!(
            p[..13]
                .iter()
                .all(|m| !m.interleaved && m.tool_env.is_empty())
        );
        let gpu = |i: usize| {
            p[i].tool_env
                .iter()
                .find(|(k, _)| k == "KRPHASE_GPU_TIMES")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            (gpu(13), gpu(14), gpu(15)),
            (None, Some("0".into()), Some("1".into()))
        );
        assert!(
            p[13]
                .tool_env
                .contains(&("KRPHASE_DISABLE".into(), "1".into()))
        );
        let no_tool = plan(&parse("--app app --only p6 --no-tool").unwrap());
        assert_eq!(
            no_tool.len(),
            2,
            "without the tool there is nothing to split"
        );
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
        let r = |m: f64, f: Failures| MeasurementRow {
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
