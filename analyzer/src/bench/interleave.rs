//! `krphase bench --build LABEL=SDK_BUILD …`: several builds measured interleaved. For each
//! planned measurement, every build's warm-ups, then its timed runs in rounds whose order
//! alternates (A B, B A, A B, …): slow drift of the machine (load, thermal state, page cache)
//! then falls on every build alike instead of on whichever ran last, and the alternation
//! cancels a linear drift's first-runner advantage. Each build keeps its own label, work
//! directory and CSV; each measurement stores the order in words and each timed run its place
//! in it (`krphase_measurement.run_order`, `krphase_measurement_sample.position`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};

use super::command::launcher;
use super::measure::{MeasurementResult, Runner};
use super::plan::{PlannedMeasurement, plan};
use super::record::Recorder;
use super::{
    BenchArgs, EXIT_INTERRUPTED, add_application_replay_total, find_inputs, interrupt_flag,
    prepare_workdir, print_plan,
};
use crate::db::measurements::MeasurementRow;
use crate::import::measurement_csv;

/// The builds' indices in round `r`: in the given order on even rounds, reversed on odd ones.
pub fn round_order(builds: usize, r: u32) -> Vec<usize> {
    let mut v: Vec<usize> = (0..builds).collect();
    if r % 2 == 1 {
        v.reverse();
    }
    v
}

/// The order of one measurement's runs in words: `warm-up: a b | timed: a b, b a, a b`.
pub fn order_text(labels: &[String], warmup: i64, repeats: u32) -> String {
    let round = |r: u32| {
        round_order(labels.len(), r)
            .into_iter()
            .map(|k| labels[k].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let warm: Vec<String> = (0..warmup.max(0) as u32).map(round).collect();
    let timed: Vec<String> = (0..repeats).map(round).collect();
    format!(
        "interleaved per measurement; warm-up: {}; timed: {}",
        if warm.is_empty() {
            "none".into()
        } else {
            warm.join(", ")
        },
        timed.join(", ")
    )
}

/// A label as a file-name part.
fn file_part(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One build's own arguments: its label and SDK build, its work directory and CSV.
fn build_args(args: &BenchArgs, label: &str, build: &str) -> BenchArgs {
    let part = file_part(label);
    let stem = args
        .output
        .file_stem()
        .map_or("replay_perf".into(), |s| s.to_string_lossy().into_owned());
    let mut out = args.clone();
    out.builds.clear();
    out.label = Some(label.to_string());
    out.sdk_build = Some(build.to_string());
    out.workdir = args.workdir.join(&part);
    out.output = args.output.with_file_name(format!("{stem}-{part}.csv"));
    out
}

/// Every build's warm-ups, then the timed rounds, of one measurement; `position` counts the
/// bench's timed runs.
pub(super) fn measure_one(
    ms: &[&PlannedMeasurement],
    (rocprofv3, tool): (&[String], Option<&Path>),
    (warmup, repeats): (i64, u32),
    position: &mut u64,
    on_run: &dyn Fn(),
    interrupted: &AtomicBool,
) -> Result<Vec<MeasurementResult>> {
    let mut runners = ms
        .iter()
        .map(|m| Runner::start(m, rocprofv3, tool))
        .collect::<Result<Vec<_>>>()?;
    for w in 0..warmup.max(0) as u32 {
        for k in round_order(ms.len(), w) {
            runners[k].run(w, false, interrupted)?;
            on_run();
        }
    }
    for i in 0..repeats {
        for k in round_order(ms.len(), i) {
            runners[k].position = Some(*position);
            *position += 1;
            runners[k].run(i, true, interrupted)?;
            on_run();
        }
    }
    if interrupted.load(Ordering::SeqCst) {
        bail!("interrupted");
    }
    Ok(runners.into_iter().map(Runner::finish).collect())
}

/// What each build measured so far.
struct Done {
    rows: Vec<MeasurementRow>,
    results: Vec<MeasurementResult>,
}

/// Runs `krphase bench --build …`; returns the process exit code.
pub fn run(args: &BenchArgs, db: Option<&Path>) -> Result<u8> {
    let labels: Vec<String> = args.builds.iter().map(|(l, _)| l.clone()).collect();
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) || labels[..i].iter().any(|o| file_part(o) == file_part(l)) {
            bail!("--build: label {l:?} given twice");
        }
    }
    let per: Vec<BenchArgs> = args
        .builds
        .iter()
        .map(|(l, b)| build_args(args, l, b))
        .collect();
    let plans: Vec<Vec<PlannedMeasurement>> = per.iter().map(plan).collect();
    let rocprofv3 = launcher(args.rocprofv3.as_deref());
    let order = order_text(&labels, args.warmup, args.repeats);
    if args.dry_run {
        for (a, p) in per.iter().zip(&plans) {
            println!("build {}:", a.label.as_deref().unwrap_or(""));
            print_plan(a, p, &rocprofv3);
        }
        println!("run order: {order}");
        return Ok(0);
    }
    let tool = match find_inputs(args, &rocprofv3) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    for (a, p) in per.iter().zip(&plans) {
        prepare_workdir(a, p)?;
    }
    println!("krphase bench: {} builds, run order: {order}", labels.len());
    let mut recorder = Recorder::open(db, None)?;
    recorder.set_run_order(Some(order));
    let interrupted = interrupt_flag();
    let done = measure_all(
        args,
        &per,
        &plans,
        (&rocprofv3, tool.as_deref()),
        &mut recorder,
        &interrupted,
    )?;
    for (a, d) in per.iter().zip(&done) {
        if measurement_csv::write_csv(&a.output, &d.rows)? {
            println!("wrote {} ({} rows)", a.output.display(), d.rows.len());
        }
    }
    recorder.finish()?;
    print!("{}", super::summary::render(recorder.conn())?);
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("krphase bench: interrupted; finished rows written");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(0)
}

/// Measures every planned measurement of every build, interleaved, recording each build's
/// result under its label; stops early on Ctrl-C.
fn measure_all(
    args: &BenchArgs,
    per: &[BenchArgs],
    plans: &[Vec<PlannedMeasurement>],
    inputs: (&[String], Option<&Path>),
    recorder: &mut Recorder,
    interrupted: &AtomicBool,
) -> Result<Vec<Done>> {
    let runs_each = args.warmup.max(0) as u64 + u64::from(args.repeats);
    let bar = super::progress::Progress::new(
        plans[0].len() as u64 * runs_each * per.len() as u64,
        plans[0].len() * per.len(),
    );
    let mut done: Vec<Done> = per
        .iter()
        .map(|_| Done {
            rows: Vec::new(),
            results: Vec::new(),
        })
        .collect();
    let mut position = 0;
    for j in 0..plans[0].len() {
        let ms: Vec<&PlannedMeasurement> = plans.iter().map(|p| &p[j]).collect();
        bar.start(&format!("{} {}", ms[0].experiment.name(), ms[0].variant));
        let results = match measure_one(
            &ms,
            inputs,
            (args.warmup, args.repeats),
            &mut position,
            &|| bar.inc(),
            interrupted,
        ) {
            Ok(x) => x,
            Err(_) if interrupted.load(Ordering::SeqCst) => break,
            Err(e) => return Err(e),
        };
        for (k, x) in results.into_iter().enumerate() {
            let a = &per[k];
            recorder.set_label(a.label.as_deref().unwrap_or_default());
            if let Err(e) = recorder.record(ms[k], &x) {
                bar.line(&format!("warning: {e:#}"));
            }
            let d = &mut done[k];
            d.rows.push(x.row.clone());
            if ms[k].experiment == super::Experiment::P1
                && ms[k].variant == format!("application-replay-run-{}", a.groups - 1)
            {
                add_application_replay_total(a, &mut d.rows, &d.results, &x, recorder, &bar);
            }
            d.results.push(x);
        }
    }
    bar.finish();
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_and_the_order_is_said() {
        assert_eq!(round_order(2, 0), vec![0, 1]);
        assert_eq!(round_order(2, 1), vec![1, 0]);
        assert_eq!(round_order(3, 3), vec![2, 1, 0]);
        let l = ["a".to_string(), "b".to_string()];
        assert_eq!(
            order_text(&l, 1, 3),
            "interleaved per measurement; warm-up: a b; timed: a b, b a, a b"
        );
        assert_eq!(
            order_text(&l, 0, 1),
            "interleaved per measurement; warm-up: none; timed: a b"
        );
        assert_eq!(file_part("x/y z"), "x_y_z");
    }
}
