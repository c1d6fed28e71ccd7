//! The demo's "stack" step: BabelStream-like STREAM under the emulated SDK builds — the
//! baseline, each optimization alone and all of them together — measured by one `krphase bench
//! --build BUILD=BUILD …` (rocprofv3's stand-in owning replay, the tool observing) that runs the
//! builds interleaved, so the machine's drift falls on all of them — each compared with the
//! baseline; the stack table, the attribution of the device-side build,
//! a markdown summary, and the emulated end-to-end factor of the device-side build beside
//! #10916's published ~9.4x, with what that factor does and does not mean.

pub mod markdown;
pub mod pacing;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::OptionalExtension;

use crate::compare::builds::{
    BuildComparison, CompareWhat, attribution_table, compare_builds, part_notes,
};
use crate::render::fmt::{factor, seconds};
use crate::stats::verdict::DEFAULT_MARGIN_PCT;

/// The step's plan, from `krphase-emu stack-plan`: the emulator owns its builds, the STREAM size
/// and repeats that keep the step within about two minutes, and measures this machine's memcpy
/// rate once, so that every build is paced by the same factor (each run measuring its own would
/// vary with the load) and that factor is the real one (the device-local copies run at the CPU's
/// own memcpy speed, so a rate assumed above it would slow them against the paced kinds).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct StackPlan {
    /// Baseline first, each switch alone, then all together; labels are the `--sdk-build` lists.
    pub builds: Vec<String>,
    pub elements: u64,
    pub iterations: u64,
    pub passes: u64,
    pub repeats: u64,
    pub warmup: u64,
    pub device_gbps: f64,
}

/// Asks the emulator for the plan.
fn stack_plan(emu: &Path) -> Result<StackPlan> {
    let out = Command::new(emu)
        .arg("stack-plan")
        .stdin(Stdio::null())
        .output()
        .context("cannot run krphase-emu stack-plan")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let plan: StackPlan = serde_json::from_str(text.trim()).with_context(|| {
        format!(
            "krphase-emu stack-plan printed no plan ({}): {}",
            out.status,
            text.trim()
        )
    })?;
    if plan.builds.first().map(String::as_str) != Some("baseline")
        || !plan.builds.iter().any(|b| b == "device-side")
        || !(plan.device_gbps.is_finite() && plan.device_gbps > 0.0)
    {
        bail!("krphase-emu stack-plan: unexpected plan {}", text.trim());
    }
    Ok(plan)
}

/// STREAM launches five kernels per iteration (copy, mul, add, triad, dot): one window each.
const WINDOWS_PER_ITERATION: u64 = 5;

/// #10916's quoted end-to-end improvement on BabelStream (against #7960).
pub const PUBLISHED_FACTOR: f64 = 9.4;

/// Short names for the table.
fn short(build: &str) -> &str {
    if build.contains(',') {
        "all four"
    } else {
        build
    }
}

/// The emulator's truth file of the stack step (every build's runs, each after its build line).
const TRUTH: &str = "truth-stack.jsonl";

/// Runs one `krphase bench` over every build, interleaved (`--build B=B` each), into
/// `dir/stack.db`; its output goes to `bench-stack.log`.
fn bench(dir: &Path, emu: &Path, tool: &Path, plan: &StackPlan) -> Result<()> {
    let exe = std::env::current_exe().context("cannot locate the krphase executable")?;
    let log = dir.join("bench-stack.log");
    // The emulator appends to its truth file: start it afresh, so an earlier step's runs do
    // not count in this one's slow-down and pacing lines.
    let truth = dir.join(TRUTH);
    if truth.exists() {
        std::fs::remove_file(&truth)
            .with_context(|| format!("cannot remove {}", truth.display()))?;
    }
    let out =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let emu_s = emu.display().to_string();
    let builds: Vec<String> = plan
        .builds
        .iter()
        .flat_map(|b| ["--build".to_string(), format!("{b}={b}")])
        .collect();
    let status = Command::new(exe)
        .current_dir(dir)
        .args(["--db", "stack.db", "bench"])
        .args(&builds)
        .args(["--rocprofv3", &format!("{emu_s} rocprofv3")])
        .args(["--tool", &tool.display().to_string()])
        .args(["--repeats", &plan.repeats.to_string()])
        .args(["--warmup", &plan.warmup.to_string()])
        .args(["--groups", &plan.passes.to_string()])
        .args(["--only", "p3", "--footprints", &plan.elements.to_string()])
        .args(["--workdir", "out", "--output", "stack.csv"])
        .args(["--app", &emu_s, "run", "stream"])
        .arg("--app-arg=--iterations")
        .arg(format!("--app-arg={}", plan.iterations))
        .env(
            "KRPHASE_EMU_DEVICE_GBPS",
            format!("{:.3}", plan.device_gbps),
        )
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_EMU_SDK_BUILD")
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()
        .context("cannot run krphase bench")?;
    if !status.success() {
        bail!(
            "krphase bench --build (the SDK-build stack) failed ({status}); see {}",
            log.display()
        );
    }
    Ok(())
}

/// The order the bench ran the builds in, as it stored it.
fn run_order(conn: &rusqlite::Connection) -> Result<Option<String>> {
    Ok(conn.query_row(
        "SELECT run_order FROM krphase_measurement WHERE run_order IS NOT NULL ORDER BY id LIMIT 1",
        [],
        |r| r.get(0),
    ).optional()?.flatten())
}

/// The two largest parts of a comparison's attribution and its unexplained rest's share.
fn parts_text(c: &BuildComparison) -> (String, String) {
    let Some(x) = c.details.first().and_then(|d| d.attribution.as_ref()) else {
        return ("-".into(), "-".into());
    };
    let top: Vec<String> = x
        .parts
        .iter()
        .filter(|p| p.item != crate::compare::attribution::UNEXPLAINED)
        .take(2)
        .map(|p| {
            format!(
                "{} {} ({:.0}%)",
                p.item,
                crate::compare::phases::signed_duration(p.change_ns),
                p.share.unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    let rest = x
        .parts
        .last()
        .and_then(|p| p.share)
        .map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
    (top.join(", "), rest)
}

/// Compares every build with the baseline and renders the stack table.
fn stack_table(
    conn: &rusqlite::Connection,
    builds: &[String],
) -> Result<(String, Vec<BuildComparison>)> {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "build",
            "median H",
            "B/A",
            "95% interval",
            "verdict",
            "largest parts of Δ",
            "rest",
        ]);
    let mut all = Vec::new();
    let base = builds[0].as_str();
    for b in &builds[1..] {
        let c = compare_builds(conn, base, b, CompareWhat::Measurements, DEFAULT_MARGIN_PCT)?;
        let r = c
            .rows
            .as_ref()
            .and_then(|r| r.rows.first())
            .context("no P3 row")?;
        // A build whose timed runs all failed has no median: its log says why.
        for (build, m) in [(base, r.a_median_s), (b.as_str(), r.b_median_s)] {
            if m.is_none() {
                bail!(
                    "the stack step's build {build} has no successful timed run (see \
                     bench-stack.log)"
                );
            }
        }
        if all.is_empty() {
            t.add_row(vec![
                "baseline".into(),
                seconds(r.a_median_s),
                "1x".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        let (top, rest) = parts_text(&c);
        t.add_row(vec![
            short(b).to_string(),
            seconds(r.b_median_s),
            factor(r.ratio),
            crate::compare::measurements::interval_text(r),
            r.verdict.clone(),
            top,
            rest,
        ]);
        all.push(c);
    }
    crate::render::term_table::fit(&mut t);
    Ok((t.to_string(), all))
}

/// The closing note: the emulated factor beside the published one, and what it means.
fn factor_note(device: &BuildComparison, slowdown: Option<f64>, plan: &StackPlan) -> String {
    let device_gbps = plan.device_gbps;
    let (elements, passes) = (plan.elements, plan.passes);
    let windows = plan.iterations * WINDOWS_PER_ITERATION;
    let r = device.rows.as_ref().and_then(|r| r.rows.first());
    let f = r.and_then(|r| r.ratio).map(|x| 1.0 / x);
    let iv = r.and_then(|r| r.interval);
    let mut s = String::new();
    let headline = format!(
        "EMULATED: device-side build against the baseline, end to end: {} faster{}; \
         #10916 quotes ~{PUBLISHED_FACTOR}x on BabelStream (#10916 alone against #7960).",
        f.map_or("-".into(), |f| format!("{f:.1}x")),
        iv.map_or(String::new(), |i| format!(
            " (95% interval {:.1}x .. {:.1}x)",
            1.0 / i.hi95,
            1.0 / i.lo95
        )),
    );
    s.push_str(&crate::render::fmt::wrap(&headline, 100, "", "  "));
    let _ = writeln!(
        s,
        "  what it means: the same replay protocol and copy kinds, copy costs in the ratios \
         measured on a PCIe\n  Gen5 host (fresh host pages ~1.6 GB/s, kept pinned staging \
         ~55 GB/s, device-local ~2 TB/s, ~6.5 us\n  per small region, ~200 us per drain \
         signal); the whole emulated device runs {} slower than a GPU\n  (one factor: a memcpy \
         rate of {device_gbps:.2} GB/s, this CPU's own, measured once, stands for the\n  \
         device-local ~2 TB/s).",
        slowdown.map_or("an unknown factor".into(), |x| format!("{x:.0}x")),
    );
    let _ = writeln!(
        s,
        "  what it does not mean: a measurement of #10916 on a GPU. Kernels are modelled as \
         their memory traffic\n  only (paced as device-local copies, so every build runs them \
         alike), host work runs unscaled;\n  {elements} elements, {passes} passes and {windows} \
         windows a run are this demo's\n  choice (the PR gives no array size, pass count or GPU)."
    );
    s
}

/// The stack in brief, for the terminal: each build's median, ratio to the baseline with its
/// interval, and verdict (the parts of the change are in the files).
fn brief_stack_table(builds: &[String], all: &[BuildComparison]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["build", "median H", "B/A", "95% interval", "verdict"]);
    for (i, c) in all.iter().enumerate() {
        let Some(r) = c.rows.as_ref().and_then(|r| r.rows.first()) else {
            continue;
        };
        if i == 0 {
            t.add_row(vec![
                "baseline".into(),
                seconds(r.a_median_s),
                "1x".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        t.add_row(vec![
            short(&builds[i + 1]).to_string(),
            seconds(r.b_median_s),
            factor(r.ratio),
            crate::compare::measurements::interval_text(r),
            r.verdict.clone(),
        ]);
    }
    crate::render::term_table::fit(&mut t);
    t.to_string()
}

/// What the stack step says: the short form the demo prints (the table and the end-to-end
/// factor) and the whole text (with the attribution and the pacing notes) for the report files.
pub struct StackText {
    pub short: String,
    pub full: String,
}

/// Runs the stack step into `dir`: the stack table, the device-side attribution, the factor
/// note, and `stack.md` (the markdown summary of the combined stack).
pub fn run_stack(
    dir: &Path,
    emu: &Path,
    tool: &Path,
    mut progress: impl FnMut(&str),
) -> Result<StackText> {
    use std::fmt::Write as _;
    let (mut brief, mut full) = (String::new(), String::new());
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Absolute, because each bench runs in `dir` and hands the truth path to the emulator.
    let dir =
        &std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    let db_path = dir.join("stack.db");
    if db_path.exists() {
        crate::db::open_existing(&db_path)?;
        std::fs::remove_file(&db_path)?;
    }
    let plan = stack_plan(emu)?;
    let t0 = std::time::Instant::now();
    bench(dir, emu, tool, &plan)?;
    // One line after the bench (the step line before it says what runs): the demo's first
    // screen has room for no more.
    progress(&format!(
        "stack: {} builds, interleaved, each paced at this machine's memcpy rate {:.2} GB/s \
         ({:.1} s)",
        plan.builds.len(),
        plan.device_gbps,
        t0.elapsed().as_secs_f64()
    ));
    let conn = crate::db::open_existing(&db_path)?;
    let (table, all) = stack_table(&conn, &plan.builds)?;
    let brief_table = brief_stack_table(&plan.builds, &all);
    let head = format!(
        "== the SDK-build stack on the emulator: STREAM, {} elements, {} passes, {} windows a run, P3\n{table}\n",
        plan.elements,
        plan.passes,
        plan.iterations * WINDOWS_PER_ITERATION
    );
    brief.push_str(&format!(
        "== the SDK-build stack (emulated; each build against the baseline, P3, n = {} timed runs \
         a build)\n{brief_table}\n",
        plan.repeats
    ));
    full.push_str(&head);
    let _ = writeln!(
        full,
        "rest: the unexplained share of the wall change; parts: share of the wall change.\n\
         rocprofv3 owns replay here (observe mode), and the SDK prints only snap_seconds and\n\
         restore_seconds: each window's lock, drain, CONFIG and tail are in the rest, unmeasured"
    );
    if let Some(order) = run_order(&conn)? {
        let _ = writeln!(full, "run order (each build's label): {order}");
    }
    let device = plan.builds[1..]
        .iter()
        .position(|b| b == "device-side")
        .and_then(|i| all.get(i))
        .context("no device-side comparison")?;
    if let Some(x) = device.details.first().and_then(|d| d.attribution.as_ref()) {
        let _ = writeln!(
            full,
            "== device-side against baseline: attribution of the wall change"
        );
        let _ = writeln!(full, "{}", attribution_table(x));
        full.push_str(&part_notes(x));
    }
    let paced = [
        pacing::read(dir, TRUTH, "baseline"),
        pacing::read(dir, TRUTH, "device-side"),
    ];
    let slowdown = paced[0].and_then(|p| p.slowdown);
    let factor = factor_note(device, slowdown, &plan);
    brief.push_str(
        factor
            .lines()
            .take_while(|l| !l.starts_with("  what it"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .as_str(),
    );
    full.push_str(&factor);
    full.push_str(&pacing::note(paced, device));
    let md = dir.join("stack.md");
    let comps: Vec<(String, BuildComparison)> = plan.builds[1..]
        .iter()
        .map(|b| short(b).to_string())
        .zip(all)
        .collect();
    let setup = format!(
        "EMULATED: STREAM, {} elements, {} passes, {} windows a run, P3 (`krphase bench \
         --sdk-build BUILD --label BUILD`); the last section details all four switches together.",
        plan.elements,
        plan.passes,
        plan.iterations * WINDOWS_PER_ITERATION
    );
    let text = markdown::stack_markdown(&conn, &plan.builds[0], &comps, &setup)?;
    std::fs::write(&md, text).with_context(|| format!("cannot write {}", md.display()))?;
    let _ = writeln!(
        full,
        "markdown summary (every build against baseline): {}",
        md.display()
    );
    Ok(StackText { short: brief, full })
}
