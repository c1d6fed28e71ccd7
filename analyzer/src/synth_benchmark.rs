//! Synthetic rocprofv3-benchmark databases for tests, in the seed's tables with the statistics
//! the seed derives: [`write_benchmark_db`], one application with a single-pass reference config
//! and a 3-group kernel-replay config and their runs' wall times as given; and
//! [`write_seed_session`], a whole session as the seed's harness records it (baseline runs and
//! every config once per iteration), optionally with a beta-flag-only config beside the
//! `--replay-mode kernel` one, which the seed's config hash puts in the same row.

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use crate::db::benchmark as b;

/// The benchmark mode of both configs.
const MODE: &str = "tool-runtime-overhead";

/// Writes the database at `path` for application `app`: `single` are the single-pass config's
/// wall times, `replay` the kernel-replay config's (seconds per run).
pub fn write_benchmark_db(
    path: &Path,
    app: &[String],
    single: &[f64],
    replay: &[f64],
) -> Result<()> {
    let c = Connection::open(path)?;
    b::create_schema(&c)?;
    let app = b::insert_or_reuse_app(&c, app, &Default::default(), "m")?;
    let one = b::ConfigData::from_args(MODE, &["--pmc", "SQ_WAVES"])?;
    let three = b::ConfigData::from_args(
        MODE,
        &[
            "--replay-mode",
            "kernel",
            "--kernel-replay-beta-enabled",
            "--pmc",
            "A",
            "--pmc",
            "B",
            "--pmc",
            "C",
        ],
    )?;
    for (cfg, walls) in [(one, single), (three, replay)] {
        let id = b::insert_or_reuse_config(&c, &cfg, None)?;
        for w in walls {
            let m = b::RunMetrics {
                wall_time: Some(*w),
                cpu_time: Some(w / 2.0),
                peak_rss: Some(100.0),
            };
            b::insert_metrics(&c, app, id, None, "2026-01-01 00:00:00+00:00", &m)?;
        }
    }
    b::generate_statistics(&c)
}

/// One session of the seed's harness for [`write_seed_session`].
#[derive(Debug, Clone)]
pub struct SeedSession<'a> {
    /// The SDK build the session ran (`benchmarked_sdk`).
    pub sdk_version: &'a str,
    /// Timed iterations (`-n`).
    pub iterations: usize,
    /// Add `replay_4_groups_beta_only`: the four groups with the beta flag alone (application
    /// replay on current rocprofv3), which hashes to the same config row as `replay_4_groups`.
    pub beta_only_config: bool,
    /// The first run's time, seconds after 2026-01-01 00:00:00 UTC (sessions one after another).
    pub start_s: u64,
}

/// The wall time of a single-group run of the session's application, in seconds; the other
/// configs' times follow from it (application replay: one run per group; kernel replay: twice).
pub const SEED_SINGLE_S: f64 = 1.0;

/// Appends one session to the database at `path` (created when missing), as the seed's
/// `rocprofv3-benchmark.py` records it for `kernel-replay.yaml`'s default configs
/// `counters_only`, `application_replay_4_groups` and `replay_4_groups`, in benchmark mode
/// `tool-runtime-overhead`: per iteration one baseline run, then one run of each config, each
/// run one second after the last. Wall times: baseline 0.9 s, single group [`SEED_SINGLE_S`],
/// application replay and the beta-only config 4x it, kernel replay 2x it.
pub fn write_seed_session(path: &Path, app: &[String], session: &SeedSession<'_>) -> Result<()> {
    let c = Connection::open(path)?;
    b::create_schema(&c)?;
    let app = b::insert_or_reuse_app(&c, app, &Default::default(), "m")?;
    let sdk = b::insert_or_reuse_sdk(&c, session.sdk_version)?;
    let pmc4 = [
        "--pmc",
        "SQ_WAVES",
        "--pmc",
        "GRBM_COUNT",
        "--pmc",
        "SQ_INSTS_VALU",
        "--pmc",
        "SQ_BUSY_CYCLES",
    ];
    let with = |flags: &[&'static str]| -> Vec<&'static str> {
        flags.iter().chain(pmc4.iter()).copied().collect()
    };
    let mut configs: Vec<(Vec<&str>, f64)> = vec![
        (vec!["--pmc", "SQ_WAVES"], SEED_SINGLE_S),
        (with(&[]), 4.0 * SEED_SINGLE_S),
        (
            with(&["--replay-mode", "kernel", "--kernel-replay-beta-enabled"]),
            2.0 * SEED_SINGLE_S,
        ),
    ];
    if session.beta_only_config {
        configs.push((with(&["--kernel-replay-beta-enabled"]), 4.0 * SEED_SINGLE_S));
    }
    let no_args: [&str; 0] = [];
    let baseline =
        b::insert_or_reuse_config(&c, &b::ConfigData::from_args("baseline", &no_args)?, None)?;
    let mut t = session.start_s;
    let mut at = || {
        t += 1;
        executed_at(t)
    };
    for _ in 0..session.iterations {
        let run = |w: f64| b::RunMetrics {
            wall_time: Some(w),
            cpu_time: Some(w / 2.0),
            peak_rss: Some(100.0),
        };
        b::insert_metrics(&c, app, baseline, None, &at(), &run(0.9 * SEED_SINGLE_S))?;
        for (args, wall) in &configs {
            let cfg =
                b::insert_or_reuse_config(&c, &b::ConfigData::from_args(MODE, args)?, Some(sdk))?;
            b::insert_metrics(&c, app, cfg, Some(sdk), &at(), &run(*wall))?;
        }
    }
    b::generate_statistics(&c)
}

/// `executed_at` as the seed's Python stores it, `t` seconds after 2026-01-01 00:00:00 UTC.
fn executed_at(t: u64) -> String {
    let days = crate::db::calendar::days_from_civil(2026, 1, 1) + (t / 86_400) as i64;
    let (y, m, d) = crate::db::calendar::civil_from_days(days);
    let s = t % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}+00:00",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}
