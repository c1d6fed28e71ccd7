//! `krphase demo [--out DIR]`: the whole story in one command. Builds the tool and the emulator
//! when run from the workspace, runs a set of workloads on the emulator with libkrphase.so in
//! drive mode (SDK log at INFO captured, ground truth recorded), imports everything, prints the
//! report and writes the database, a Perfetto trace, SVG plots and `report.md` into DIR.

pub mod stack;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::answers::measurements::MeasurementSection;
use crate::answers::{RunReport, run_report};
use crate::compare::provenance::Provenance;
use crate::export::perfetto::TraceFormat;
use crate::render::{Format, fmt, html};
use crate::{db, export, import, report};

/// One emulator run of the demo.
#[derive(Debug, Clone)]
pub struct DemoRun {
    /// Run label, also the file stem (`label.N` for the N-th repeat).
    pub label: &'static str,
    pub workload: &'static str,
    pub passes: u32,
    pub args: &'static [&'static str],
    /// `KRPHASE_KERNEL_FILTER`: kernels outside it are opted out (CONFIG pair only).
    pub filter: Option<&'static str>,
}

/// The demo's runs: STREAM at three footprints with 2 passes and at the middle one with 4,
/// saxpy, STREAM with a kernel filter (tool opt-outs), the queue-depth sweep, multi-queue, the
/// graph-launch decline and an SDK decline (untracked vmem).
const fn run(
    label: &'static str,
    workload: &'static str,
    passes: u32,
    args: &'static [&'static str],
) -> DemoRun {
    DemoRun {
        label,
        workload,
        passes,
        args,
        filter: None,
    }
}

const SMALL: &str = "65536";
/// The 2- vs 4-pass STREAM pair: same footprint, short runs so the pair interleaves finely.
/// Its copies are paced to a 3 GB/s link (12.6 MB: 4.2 ms a copy), slower than this machine
/// copies the bytes, so the emulated link sets the snapshot and restore times. At the default
/// 12 GB/s the host's own copy loop sets them instead, and its speed follows what the run did
/// before (CPU clock and caches warmed by more passes): 4-pass runs' snapshots then came out
/// 25 % faster in every run, a real difference of the host that the pass count's effect on
/// the SDK cannot explain.
const PAIR: &[&str] = &[
    "--elements",
    "524288",
    "--iterations",
    "2",
    "--link-gbps",
    "3",
];

pub const RUNS: &[DemoRun] = &[
    run(
        "stream-2p-256k",
        "stream",
        2,
        &["--elements", "262144", "--iterations", "4"],
    ),
    run(
        "stream-2p-4m",
        "stream",
        2,
        &["--elements", "4194304", "--iterations", "2"],
    ),
    // 2 and 4 passes at the same footprint, in counterbalanced order (A B B A A B B A A B) so
    // that slow drift in machine load, and what one run leaves behind for the next (page cache,
    // allocator state), fall on both sides of `compare stream-2p stream-4p`; plain alternation
    // puts every A after a B and every B after an A, and such a carry-over then reads as a
    // change between the labels.
    run("stream-2p", "stream", 2, PAIR),
    run("stream-4p", "stream", 4, PAIR),
    run("stream-4p", "stream", 4, PAIR),
    run("stream-2p", "stream", 2, PAIR),
    run("stream-2p", "stream", 2, PAIR),
    run("stream-4p", "stream", 4, PAIR),
    run("stream-4p", "stream", 4, PAIR),
    run("stream-2p", "stream", 2, PAIR),
    run("stream-2p", "stream", 2, PAIR),
    run("stream-4p", "stream", 4, PAIR),
    run(
        "saxpy",
        "saxpy",
        2,
        &["--elements", "1048576", "--iterations", "10"],
    ),
    // Only copy and triad replayed: the other kernels show the opt-out CONFIG-pair tax.
    DemoRun {
        filter: Some(r"^stream_(copy|triad)\("),
        ..run(
            "stream-filtered",
            "stream",
            2,
            &["--elements", SMALL, "--iterations", "4"],
        )
    },
    run(
        "queue-depth-1",
        "queue-depth",
        2,
        &["--elements", SMALL, "--depth", "1", "--iterations", "20"],
    ),
    run(
        "queue-depth-10",
        "queue-depth",
        2,
        &["--elements", SMALL, "--depth", "10", "--iterations", "2"],
    ),
    run(
        "queue-depth-100",
        "queue-depth",
        2,
        &["--elements", SMALL, "--depth", "100", "--iterations", "1"],
    ),
    run(
        "multi-queue",
        "multi-queue",
        2,
        &["--elements", SMALL, "--threads", "4", "--iterations", "5"],
    ),
    run(
        "graph",
        "graph",
        2,
        &["--elements", SMALL, "--iterations", "5"],
    ),
    run(
        "vmem-decline",
        "vmem",
        2,
        &["--elements", SMALL, "--iterations", "3"],
    ),
];

/// Demo options.
#[derive(Debug, Clone)]
pub struct DemoOpts {
    pub out: PathBuf,
    /// Use the emulator and tool next to this executable; do not run cargo.
    pub no_build: bool,
    pub emu: Option<PathBuf>,
    pub tool: Option<PathBuf>,
    /// Only the runs with these labels (all when empty).
    pub only: Vec<String>,
}

/// Files the demo produced.
#[derive(Debug)]
pub struct DemoResult {
    pub db: PathBuf,
    pub trace: PathBuf,
    pub report_md: PathBuf,
    pub plots: Vec<PathBuf>,
    pub runs: Vec<(String, i64)>,
}

/// A step line, wrapped to 100 columns.
fn step(n: usize, total: usize, msg: &str) {
    eprint!(
        "{}",
        fmt::wrap(&format!("[{n}/{total}] {msg}"), 100, "", "        ")
    );
}

/// The workspace root this binary was built from, when its sources are still there.
fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .to_path_buf();
    root.join("Cargo.toml").is_file().then_some(root)
}

/// Locates (building when needed) libkrphase.so and krphase-emu.
fn artifacts(opts: &DemoOpts) -> Result<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe().context("cannot locate the krphase executable")?;
    let exe_dir = exe
        .parent()
        .context("executable has no directory")?
        .to_path_buf();
    let (emu, tool) = match (&opts.emu, &opts.tool) {
        (Some(e), Some(t)) => (e.clone(), t.clone()),
        _ if opts.no_build => (exe_dir.join("krphase-emu"), exe_dir.join("libkrphase.so")),
        _ => match workspace_root() {
            Some(root) => {
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
                // The workspace's default members are what the demo runs, so this is the
                // README's own `cargo build --release`: after it, nothing to do.
                let status = Command::new(&cargo)
                    .current_dir(&root)
                    .args(["build", "--release"])
                    .status()
                    .with_context(|| format!("cannot run {cargo}"))?;
                if !status.success() {
                    bail!(
                        "cargo build of krphase-tool, krphase-emu and krphase-emu-driver failed ({status})"
                    );
                }
                let target = std::env::var_os("CARGO_TARGET_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| root.join("target"));
                let rel = target.join("release");
                (rel.join("krphase-emu"), rel.join("libkrphase.so"))
            }
            None => (exe_dir.join("krphase-emu"), exe_dir.join("libkrphase.so")),
        },
    };
    // The rocprofv3 stand-in preloads its counter tool from beside the emulator.
    let driver = std::env::var_os("KRPHASE_EMU_DRIVER_LIBRARY")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || emu.with_file_name("libkrphase_emu_driver.so"),
            PathBuf::from,
        );
    for p in [&emu, &tool, &driver] {
        if !p.is_file() {
            bail!(
                "{} not found (build krphase-tool, krphase-emu and krphase-emu-driver, or pass --emu/--tool)",
                p.display()
            );
        }
    }
    Ok((emu, tool))
}

/// Removes an earlier demo database at `db_path`: the demo's figures are exactly this
/// invocation's. Only a krphase database is replaced; anything else at that path is left alone.
fn remove_earlier_database(db_path: &Path) -> Result<()> {
    if db_path.exists() {
        db::open_existing(db_path).with_context(|| {
            format!(
                "refusing to replace {} (not a krphase database)",
                db_path.display()
            )
        })?;
        std::fs::remove_file(db_path)
            .with_context(|| format!("cannot remove {}", db_path.display()))?;
    }
    Ok(())
}

/// The files one demo run writes.
struct RunFiles {
    krp: PathBuf,
    log: PathBuf,
    truth: PathBuf,
}

/// Runs one workload on the emulator with the tool driving replay; its phase file, SDK log and
/// ground truth land in `files`.
fn run_on_emulator(emu: &Path, tool: &Path, r: &DemoRun, files: &RunFiles) -> Result<()> {
    let RunFiles { krp, log, truth } = files;
    for f in [krp, log, truth] {
        let _ = std::fs::remove_file(f);
    }
    let stderr =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut cmd = Command::new(emu);
    match r.filter {
        Some(f) => cmd.env("KRPHASE_KERNEL_FILTER", f),
        None => cmd.env_remove("KRPHASE_KERNEL_FILTER"),
    };
    let output = cmd
        .arg("run")
        .arg(r.workload)
        .args(r.args)
        .env("ROCP_TOOL_LIBRARIES", tool)
        .env("KRPHASE_MODE", "drive")
        .env("KRPHASE_PASSES", r.passes.to_string())
        .env("KRPHASE_OUTPUT", krp)
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env("KRPHASE_EMU_TRUTH", truth)
        .env_remove("KRPHASE_DISABLE")
        .stdin(Stdio::null())
        .stderr(stderr)
        .output()
        .with_context(|| format!("cannot run {}", emu.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result = stdout.lines().last().unwrap_or("").to_string();
    if !output.status.success() {
        bail!(
            "{} failed ({}): {result}; stderr in {}",
            r.label,
            output.status,
            log.display()
        );
    }
    if !krp.is_file() {
        bail!(
            "{}: the tool wrote no phase file at {}",
            r.label,
            krp.display()
        );
    }
    Ok(())
}

/// Joins a demo run's SDK log; says how many records joined. A run the SDK never offered for
/// replay (graph launches) prints no replay line: its log is refused, and the step says so.
fn log_step(conn: &mut rusqlite::Connection, log: &Path, run_id: i64) -> Result<Option<u64>> {
    use import::sdk_log::refusal::NotAReplayLog;
    match import::sdk_log::import_log(conn, log, Some(run_id)) {
        Ok(l) => Ok(Some(l.joined as u64)),
        Err(e) if matches!(e.downcast_ref(), Some(NotAReplayLog::NoReplayLines { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the demo's files hold beside the runs: the comparison of the 2- and 4-pass STREAM runs
/// and the stack step's text.
struct Extras {
    compare: Option<String>,
    stack: Option<stack::StackText>,
}

/// The Markdown sections of `extras` (terminal text in a code block, as the terminal shows it).
fn extra_sections(extras: &Extras) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &extras.compare {
        out.push(format!(
            "## compare stream-2p (A) with stream-4p (B)\n\n```text\n{c}```\n\n"
        ));
    }
    if let Some(st) = &extras.stack {
        out.push(format!(
            "## the SDK-build stack (emulated)\n\n```text\n{}```\n\n",
            st.full
        ));
    }
    out
}

/// The files [`write_answers`] writes.
struct Answers {
    report_md: PathBuf,
    report_html: PathBuf,
    trace: PathBuf,
    /// What the trace holds: runs, windows, sizes.
    trace_note: String,
    plots: Vec<PathBuf>,
}

/// Writes the demo's answers: `report.md` and `report.html` (summary, findings, the runs, the
/// comparison, the stack; the page also the plots and the provenance), the Perfetto trace of
/// one run, the plots. Prints the summary screen.
fn write_answers(
    conn: &rusqlite::Connection,
    ids: &[(String, i64)],
    out: &Path,
    extras: &Extras,
) -> Result<Answers> {
    let run_ids: Vec<i64> = ids.iter().map(|(_, id)| *id).collect();
    let reports = run_ids
        .iter()
        .map(|&id| run_report(conn, id))
        .collect::<Result<Vec<_>>>()?;
    let sections = extra_sections(extras);
    let report_md = out.join("report.md");
    let mut md = report::render(&reports, Format::Markdown)?;
    md.extend(sections.iter().map(String::as_str));
    let prov = Provenance::of_runs(conn, &run_ids, "krphase demo")?;
    md.push_str(&format!("## provenance\n\n{}", prov.to_markdown()));
    std::fs::write(&report_md, md)
        .with_context(|| format!("cannot write {}", report_md.display()))?;
    let report_html = out.join("report.html");
    let parts = sections.into_iter().map(html::Part::Markdown).collect();
    let m = MeasurementSection::default();
    let page = report::render_html(
        conn,
        &reports,
        &m,
        (parts, export::inline_plots),
        "krphase demo",
    )?;
    std::fs::write(&report_html, page)
        .with_context(|| format!("cannot write {}", report_html.display()))?;
    // Every run's windows in one trace, the protobuf for the Perfetto UI and the JSON beside it
    // for tools that read only JSON.
    let trace = out.join("trace.pftrace");
    let pf = export::perfetto::export(conn, &run_ids, &trace, TraceFormat::Pftrace)?;
    let json =
        export::perfetto::export(conn, &run_ids, &out.join("trace.json"), TraceFormat::Json)?;
    let trace_note = trace_note(conn, &run_ids, pf.bytes, json.bytes)?;
    let plots = export::plot::plot(conn, &run_ids, out)?;
    print!("{}", report::summary_screen(&reports));
    if let Some(st) = &extras.stack {
        print!("{}", st.short);
    }
    Ok(Answers {
        report_md,
        report_html,
        trace,
        trace_note,
        plots,
    })
}

/// What the demo's trace holds, for its file list: runs, windows (replayed and declined) and
/// the two files' sizes.
fn trace_note(conn: &rusqlite::Connection, runs: &[i64], pf: u64, json: u64) -> Result<String> {
    let (mut replayed, mut declined) = (0i64, 0i64);
    for &r in runs {
        let (a, b): (i64, i64) = conn.query_row(
            "SELECT COUNT(*) FILTER (WHERE outcome = 'replayed'),
                    COUNT(*) FILTER (WHERE outcome <> 'replayed')
             FROM krphase_window WHERE run_id = ?1",
            [r],
            |x| Ok((x.get(0)?, x.get(1)?)),
        )?;
        replayed += a;
        declined += b;
    }
    Ok(format!(
        "every run: {} runs, {} windows ({replayed} replayed, {declined} declined); {} KB, \
         trace.json beside it {} KB",
        runs.len(),
        replayed + declined,
        pf.div_ceil(1000),
        json.div_ceil(1000)
    ))
}

/// The comparison of the 2- and 4-pass STREAM runs, when the demo ran both.
fn compare_pair(conn: &rusqlite::Connection, ids: &[(String, i64)]) -> Result<Option<String>> {
    let pooled = |label: &str| -> Vec<i64> {
        ids.iter()
            .filter(|(s, _)| s.split('.').next() == Some(label))
            .map(|(_, id)| *id)
            .collect()
    };
    let (a, b) = (pooled("stream-2p"), pooled("stream-4p"));
    if a.is_empty() || b.is_empty() {
        return Ok(None);
    }
    let c = crate::compare::phases::compare(conn, &a, &b)?;
    Ok(Some(crate::compare::phases::render_table(&c)))
}

/// One label's runs so far: what its step line says once its last run is in.
#[derive(Default)]
struct LabelTally {
    runs: usize,
    replayed: u64,
    declined: u64,
    reasons: std::collections::BTreeMap<String, u64>,
    plain: u64,
    /// Log records joined; runs whose log had no kernel-replay line.
    joined: u64,
    no_replay_lines: usize,
    seconds: f64,
}

impl LabelTally {
    fn add(&mut self, r: &RunReport, joined: Option<u64>, seconds: f64) {
        self.runs += 1;
        self.replayed += r.windows.replayed;
        self.declined += r.windows.declined;
        for (k, v) in &r.declines_by_reason {
            *self.reasons.entry(k.clone()).or_default() += v;
        }
        self.plain += r.dispatch_tax.plain_dispatches;
        match joined {
            Some(n) => self.joined += n,
            None => self.no_replay_lines += 1,
        }
        self.seconds += seconds;
    }

    /// What the logs joined: records, or that a log had no kernel-replay line.
    fn log_text(&self) -> String {
        match (self.no_replay_lines, self.runs) {
            (0, _) => format!("log: {} joined", self.joined),
            (n, r) if n == r => "log: no replay lines".into(),
            (n, _) => format!("log: {} joined, {n} without replay lines", self.joined),
        }
    }

    /// The step line: the counts the report shows (replayed, declined by reason).
    fn line(&self, label: &str) -> String {
        let reasons = if self.reasons.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                crate::answers::overview::reasons_text(&self.reasons)
            )
        };
        let runs = if self.runs > 1 {
            format!("{} runs: ", self.runs)
        } else {
            String::new()
        };
        format!(
            "{label:<16} {runs}{} replayed, {} declined{reasons}, {} plain; {} ({:.1} s)",
            self.replayed,
            self.declined,
            self.plain,
            self.log_text(),
            self.seconds
        )
    }
}

/// Runs the demo.
pub fn demo(opts: &DemoOpts) -> Result<DemoResult> {
    let started = Instant::now();
    let runs: Vec<&DemoRun> = RUNS
        .iter()
        .filter(|r| opts.only.is_empty() || opts.only.iter().any(|o| o == r.label))
        .collect();
    let stack = opts.only.is_empty() || opts.only.iter().any(|o| o == "stack");
    let labels: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.label).collect();
    let total = labels.len() + 2 + usize::from(stack);
    let out = &opts.out;
    let raw = out.join("runs");
    std::fs::create_dir_all(&raw).with_context(|| format!("cannot create {}", raw.display()))?;
    let db_path = out.join("krphase.db");
    remove_earlier_database(&db_path)?;
    step(
        1,
        total,
        "locating (or building) libkrphase.so and krphase-emu",
    );
    let (emu, tool) = artifacts(opts)?;
    let mut conn = db::open(&db_path)?;
    let ids = run_all(&mut conn, (&emu, &tool), &runs, &raw, total)?;
    let stack_text = if stack {
        step(
            total - 1,
            total,
            "the SDK-build stack: one interleaved krphase bench --build, each build against \
             baseline",
        );
        Some(stack::run_stack(&out.join("stack"), &emu, &tool, |m| {
            eprintln!("  {m}")
        })?)
    } else {
        None
    };
    step(
        total,
        total,
        "summary, report files, Perfetto trace and plots",
    );
    let extras = Extras {
        compare: compare_pair(&conn, &ids)?,
        stack: stack_text,
    };
    let a = if ids.is_empty() {
        Answers {
            report_md: out.join("report.md"),
            report_html: out.join("report.html"),
            trace: out.join("trace.pftrace"),
            trace_note: "no runs".into(),
            plots: Vec::new(),
        }
    } else {
        write_answers(&conn, &ids, out, &extras)?
    };
    print_files(out, &db_path, &a, stack, started);
    Ok(DemoResult {
        db: db_path,
        trace: a.trace,
        report_md: a.report_md,
        plots: a.plots,
        runs: ids,
    })
}

/// The file list the demo ends with (stderr).
fn print_files(out: &Path, db_path: &Path, a: &Answers, stack: bool, started: Instant) {
    eprintln!(
        "done in {:.1} s; the files, in {}:\n  database {}\n  report   {}\n  page     {} (one \
         page: summary, findings, tables, plots, comparison, stack)\n  trace    {} ({}; open it \
         in the Perfetto UI)\n  plots    {} SVG files in {}",
        started.elapsed().as_secs_f64(),
        out.display(),
        db_path.display(),
        a.report_md.display(),
        a.report_html.display(),
        a.trace.display(),
        a.trace_note,
        a.plots.len(),
        out.display()
    );
    if stack {
        eprintln!(
            "  stack    {}",
            out.join("stack").join("stack.md").display()
        );
    }
}

/// Runs every demo run on the emulator (`bins`: the emulator and the tool) and imports it; one
/// step line per label, once its last run is in. Returns each run's file stem and run id.
fn run_all(
    conn: &mut rusqlite::Connection,
    bins: (&Path, &Path),
    runs: &[&DemoRun],
    raw: &Path,
    total: usize,
) -> Result<Vec<(String, i64)>> {
    let mut ids = Vec::new();
    let mut tallies: std::collections::BTreeMap<&str, LabelTally> = Default::default();
    let mut done = 1;
    for (i, r) in runs.iter().enumerate() {
        // Repeated labels get numbered file stems.
        let nth = runs[..i].iter().filter(|x| x.label == r.label).count();
        let stem = match nth {
            0 => r.label.to_string(),
            n => format!("{}.{n}", r.label),
        };
        let files = RunFiles {
            krp: raw.join(format!("{stem}.krp")),
            log: raw.join(format!("{stem}.stderr.log")),
            truth: raw.join(format!("{stem}.truth.jsonl")),
        };
        let t0 = Instant::now();
        run_on_emulator(bins.0, bins.1, r, &files)?;
        let imp = import::krp::import_file(conn, &files.krp, Some(r.label))?;
        let log = log_step(conn, &files.log, imp.run_id)?;
        let rep = run_report(conn, imp.run_id)?;
        let tally = tallies.entry(r.label).or_default();
        tally.add(&rep, log, t0.elapsed().as_secs_f64());
        if !runs[i + 1..].iter().any(|x| x.label == r.label) {
            done += 1;
            step(done, total, &tally.line(r.label));
        }
        ids.push((stem, imp.run_id));
    }
    Ok(ids)
}

/// `krphase demo`.
pub fn demo_command(opts: DemoOpts) -> Result<()> {
    demo(&opts)?;
    Ok(())
}
