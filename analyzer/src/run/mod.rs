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
pub mod setup;
pub mod stderr_tee;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

pub use args::RunArgs;
use child::End;
use setup::Plan;

use crate::import::kind::Kind;
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
    let started = SystemTime::now();
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
    if let Err(e) = import_and_summarize(args, &plan, &db, started) {
        eprintln!("krphase run: the application ran, but: {e:#}");
    }
    Ok(end)
}

/// `krphase doctor`'s checks on the command as it will run; a trap stops the run unless forced.
fn check(plan: &Plan, force: bool) -> Result<()> {
    let mut words: Vec<String> = plan.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    words.extend(plan.argv.iter().cloned());
    let findings = crate::doctor::diagnose(&words).map_err(anyhow::Error::msg)?;
    for f in &findings {
        eprintln!("krphase doctor: {f}");
    }
    let traps = findings.iter().filter(|f| f.loses_run).count();
    if traps > 0 && !force {
        bail!("{traps} trap(s) above would lose the run; fix them, or run anyway with --force");
    }
    Ok(())
}

/// Runs the application to its end with its stderr copied to the plan's log.
fn run_app(plan: &Plan) -> Result<End> {
    let (source, stdio) = stderr_tee::child_stderr();
    let mut app = child::spawn(plan, stdio)?;
    let from: Box<dyn std::io::Read + Send> = match source {
        stderr_tee::Source::Pty(master) => Box::new(master),
        stderr_tee::Source::Pipe => Box::new(app.stderr.take().context("no stderr pipe")?),
    };
    let tee = stderr_tee::start(from, &plan.log)?;
    let status = app.wait().context("cannot wait for the application")?;
    if !tee.finish(STDERR_GRACE) {
        eprintln!(
            "krphase run: a process the application left behind still holds its stderr; {} holds \
             what came before",
            plan.log.display()
        );
    }
    Ok(End::from(status))
}

/// Imports the run's new phase files, its log and (under rocprofv3) its rocpd database, then
/// prints the summary of the runs it made.
fn import_and_summarize(args: &RunArgs, plan: &Plan, db: &Path, since: SystemTime) -> Result<()> {
    let files = new_files(&args.dir, since, db)?;
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
    let before = last_run(db)?;
    let opts = paths::Options {
        label: args.label.as_deref(),
        ..Default::default()
    };
    paths::import_found(db, &files, &opts)?;
    let conn = crate::db::open_existing(db)?;
    let runs = crate::db::runs::select(&conn, &format!("id > {before}"))?;
    let reports = runs
        .iter()
        .map(|&id| crate::answers::run_report(&conn, id))
        .collect::<Result<Vec<_>>>()?;
    print!("{}", crate::report::summary_screen(&reports));
    println!(
        "krphase run: {} ({} run(s)); `krphase report --db {}` for the detail",
        db.display(),
        runs.len(),
        db.display()
    );
    Ok(())
}

/// The highest run id in `db` (0 when it does not exist yet).
fn last_run(db: &Path) -> Result<i64> {
    if !db.exists() {
        return Ok(0);
    }
    let conn = crate::db::open_existing(db)?;
    Ok(
        conn.query_row("SELECT COALESCE(MAX(id), 0) FROM krphase_run", [], |r| {
            r.get(0)
        })?,
    )
}

/// Files under `dir` written since `since`, of the kinds a run makes, the database aside.
fn new_files(dir: &Path, since: SystemTime, db: &Path) -> Result<Vec<(Kind, PathBuf)>> {
    let found = paths::find(&[dir.to_path_buf()])?;
    let mut files = Vec::new();
    for (k, p) in found.files {
        let fresh = std::fs::metadata(&p)?.modified()? >= since;
        let wanted = matches!(k, Kind::Phase | Kind::SdkLog | Kind::Rocpd);
        if fresh && wanted && !same_file(&p, db) {
            files.push((k, p));
        }
    }
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
