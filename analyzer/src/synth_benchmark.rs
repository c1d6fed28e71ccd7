//! A synthetic rocprofv3-benchmark database for tests: the seed's tables with one application,
//! a single-pass reference config and a 3-group kernel-replay config, each with its runs' wall
//! times as given (cpu time half of each, peak RSS 100), and the statistics the seed derives.

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
