//! `krphase run [OPTIONS] -d DIR -- APP [ARGS...]`: one command that profiles an application and
//! answers, as `rocprofv3 ... -d out -- ./app` does. It sets the tool list, the mode, the SDK's
//! log level and the output names ([`setup`]); runs `krphase doctor`'s checks on that command
//! first; runs the application with its stdout untouched and its stderr passed through while a
//! copy is kept ([`stderr_tee`]), passing SIGINT and SIGTERM on ([`child`]); then imports the
//! phase files and the log into `DIR/krphase.db` and prints the one-screen summary. krphase
//! ends as the application did. One rank of a parallel job only writes its files: `krphase
//! import DIR` merges them afterwards.

pub mod args;
pub mod child;
pub mod outputs;
pub mod setup;
pub mod stderr_tee;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

pub use args::RunArgs;
use child::End;
use setup::Plan;

use crate::import::kind::{self, Kind};
use crate::import::paths;

/// How long the stderr copy may go on after the application ended (a process it started may
/// still hold its stderr).
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// Runs the application; returns how it ended. Errors are krphase's own, before the
/// application ran; after it ran, a failed import is reported and its end is still returned.
pub fn run_command(args: &RunArgs, db: Option<&Path>) -> Result<End> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let tool = setup::find_tool(args.tool.as_deref())?;
    let plan = setup::plan(args, &tool, &|k| std::env::var(k).ok())?;
    check(&plan, args.force)?;
    let before = outputs::list(&args.dir)?;
    let end = run_app(&plan)?;
    if let Some((var, rank)) = &plan.rank {
        eprintln!(
            "krphase run: rank {rank} ({var}): its files are in {}; after the job, `krphase import \
             {}` merges every rank's",
            args.dir.display(),
            args.dir.display()
        );
        return Ok(end);
    }
    let db = db.map_or_else(|| args.dir.join("krphase.db"), Path::to_path_buf);
    let made = outputs::list(&args.dir).map(|after| before.made_until(&after));
    if let Err(e) = after_the_run(|| import_and_summarize(args, &plan, &db, &made?)) {
        eprintln!("krphase run: the application ran, but: {e:#}");
    }
    Ok(end)
}

/// Runs `step` so that nothing in it costs the application's exit status: a panic (such as
/// `println!` into a closed stdout, `krphase run ... | head`) becomes an error like any other.
fn after_the_run(step: impl FnOnce() -> Result<()>) -> Result<()> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(step));
    std::panic::set_hook(hook);
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        bail!("{what}")
    })
}

/// `krphase doctor`'s checks on the command as it will run. A trap stops the run unless forced:
/// each is one line, and the error that follows says how to run anyway.
fn check(plan: &Plan, force: bool) -> Result<()> {
    let mut words: Vec<String> = plan.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    words.extend(plan.argv.iter().cloned());
    let findings = crate::doctor::diagnose(&words).map_err(anyhow::Error::msg)?;
    let traps: Vec<_> = findings.iter().filter(|f| f.loses_run).collect();
    if !traps.is_empty() && !force {
        let lines: Vec<String> = traps.iter().map(|f| f.to_string()).collect();
        bail!(
            "not run: krphase doctor: {} (--force runs anyway)",
            lines.join("; ")
        );
    }
    for f in &findings {
        eprintln!("krphase run: doctor: {f}");
    }
    Ok(())
}

/// Runs the application to its end with its stderr copied to the plan's log.
fn run_app(plan: &Plan) -> Result<End> {
    let (source, stdio) = stderr_tee::child_stderr();
    let mut app = child::spawn(plan, stdio)?;
    let from: Box<dyn std::io::Read + Send> = match source {
        stderr_tee::Source::Pty(master) => Box::new(master),
        stderr_tee::Source::Pipe => Box::new(app.take_stderr().context("no stderr pipe")?),
    };
    let tee = stderr_tee::start(from, &plan.log)?;
    let end = app.wait()?;
    if !tee.finish(STDERR_GRACE) {
        eprintln!(
            "krphase run: a process the application left behind still holds its stderr; {} holds \
             what came before",
            plan.log.display()
        );
    }
    Ok(end)
}

/// Imports the run's phase files, its log and (under rocprofv3) its rocpd database, all of them
/// among `made` (the files the run wrote), then prints the summary of the runs it made.
fn import_and_summarize(args: &RunArgs, plan: &Plan, db: &Path, made: &[PathBuf]) -> Result<()> {
    let files = of_a_run(made, &plan.log, db)?;
    if !files.iter().any(|(k, _)| *k == Kind::Phase) {
        bail!(
            "no phase file was written in {}: the application never loaded the SDK (no HIP/HSA), \
             or krphase was left out of its tool list",
            args.dir.display()
        );
    }
    if !files
        .iter()
        .any(|(k, p)| *k == Kind::SdkLog && *p == plan.log)
    {
        eprintln!(
            "krphase run: note: {} holds no kernel-replay log line, so drain and snapshot are not \
             split (the SDK printed none at ROCPROFILER_LOG_LEVEL=info)",
            plan.log.display()
        );
    }
    let opts = paths::Options {
        label: args.label.as_deref(),
        ..Default::default()
    };
    // The runs first; a log or rocpd database that fails its join is said, and the summary of
    // the runs still follows.
    let (phase, joined): (Vec<_>, Vec<_>) = files.into_iter().partition(|(k, _)| *k == Kind::Phase);
    paths::import_found(db, &phase, &opts)?;
    for file in joined {
        if let Err(e) = paths::import_found(db, std::slice::from_ref(&file), &opts) {
            eprintln!("krphase run: {} not imported: {e:#}", file.1.display());
        }
    }
    let conn = crate::db::open_existing(db)?;
    let runs = runs_of(&conn, &phase)?;
    let reports = runs
        .iter()
        .map(|&id| crate::answers::run_report(&conn, id))
        .collect::<Result<Vec<_>>>()?;
    // A closed stdout (`| head`) must not cost the application's exit status: not written, and
    // nothing else lost.
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", crate::report::summary_screen(&reports));
    let _ = writeln!(
        out,
        "krphase run: {} ({} run(s): {}); `krphase report --db {}` for the detail",
        db.display(),
        runs.len(),
        crate::db::runs::id_list(&runs),
        db.display()
    );
    Ok(())
}

/// The runs the phase files `phase` were imported as, in id order.
fn runs_of(conn: &rusqlite::Connection, phase: &[(Kind, PathBuf)]) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare("SELECT id FROM krphase_run WHERE path = ?1")?;
    let mut ids = Vec::new();
    for (_, p) in phase {
        let found = stmt
            .query_map([p.display().to_string()], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        ids.extend(found);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// Of the files the run made, those of the kinds a run makes (phase files, its log, a rocpd
/// database, rocprofv3's JSON), the database aside; sorted by kind as an import takes them.
fn of_a_run(made: &[PathBuf], log: &Path, db: &Path) -> Result<Vec<(Kind, PathBuf)>> {
    let mut files = Vec::new();
    for p in made {
        if same_file(p, db) {
            continue;
        }
        let k = kind::of(p)?;
        if let Some(k) = k.filter(|k| {
            matches!(
                k,
                Kind::Phase | Kind::SdkLog | Kind::Rocpd | Kind::Rocprofv3Json
            )
        }) {
            files.push((k, p.clone()));
        }
    }
    // The log is always this run's (rewritten by it), even when its length and time read as
    // before.
    if !made.iter().any(|p| p == log)
        && let Some(Kind::SdkLog) = kind::of(log)?
    {
        files.push((Kind::SdkLog, log.to_path_buf()));
    }
    files.sort_by_key(|(k, _)| *k);
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
