//! How each run behind a seed `benchmark_config` row asked rocprofv3 to collect its counter
//! groups. The seed hashes a config from rocprofv3's config JSON plus `derive_replay_config`,
//! which ignores `--replay-mode`, so a run with the beta flag alone (application replay on
//! current rocprofv3) and one with `--replay-mode kernel` land in one config row and are averaged
//! together. `krphase bench` keeps the seed's hash (so its rows match the seed's databases) and
//! records each run's mode here, in a table of its own beside the seed's; a config row with more
//! than one mode is mixed, and every figure built on it says which modes it mixes.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};

use super::benchmark::ReplayConfig;

const TABLE: &str = "CREATE TABLE IF NOT EXISTS krphase_config_replay_mode (
    cfg_id INTEGER NOT NULL,
    replay_mode TEXT NOT NULL,   -- how the runs asked rocprofv3 for their counter groups
    runs INTEGER NOT NULL,
    PRIMARY KEY (cfg_id, replay_mode)
)";

/// The mode a run's rocprofv3 arguments ask for, in words that tell the look-alikes apart.
pub fn replay_mode_of(r: Option<&ReplayConfig>) -> String {
    match r {
        None => "no counters".into(),
        Some(r) if r.replay_mode_kernel => "kernel-replay (--replay-mode kernel)".into(),
        Some(r) if r.beta_flag_without_replay_mode() => {
            "kernel-replay asked with the beta flag alone (application replay on current rocprofv3)"
                .into()
        }
        Some(r) => r.counter_collection_mode.as_str().into(),
    }
}

/// Counts `runs` more runs of `mode` behind config row `cfg_id`.
pub fn note_replay_mode(conn: &Connection, cfg_id: i64, mode: &str, runs: usize) -> Result<()> {
    conn.execute(TABLE, [])?;
    conn.execute(
        "INSERT INTO krphase_config_replay_mode (cfg_id, replay_mode, runs) VALUES (?1, ?2, ?3)
         ON CONFLICT (cfg_id, replay_mode) DO UPDATE SET runs = runs + excluded.runs",
        params![cfg_id, mode, runs as i64],
    )?;
    Ok(())
}

/// The modes behind config row `cfg_id` with their run counts, as `mode: n runs; …`, when the
/// row mixes more than one; `None` when it does not, or the database does not record them (a
/// database the seed's own harness wrote).
pub fn mixed_modes(conn: &Connection, cfg_id: i64) -> Result<Option<String>> {
    let has_table: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE name = 'krphase_config_replay_mode'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if has_table.is_none() {
        return Ok(None);
    }
    let mut stmt = conn.prepare(
        "SELECT replay_mode, runs FROM krphase_config_replay_mode WHERE cfg_id = ?1
         ORDER BY replay_mode",
    )?;
    let modes: Vec<(String, i64)> = stmt
        .query_map([cfg_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok((modes.len() > 1).then(|| {
        modes
            .iter()
            .map(|(m, n)| format!("{m}: {n} run(s)"))
            .collect::<Vec<_>>()
            .join("; ")
    }))
}

/// A kernel-replay config row of a database the seed's own harness wrote (no recorded modes)
/// that holds more runs than its session's baseline: several rocprofv3 configs of one job hash
/// to it (inferred from run counts). The seed runs the baseline once per iteration and each
/// config once per iteration and benchmark mode, so one config row per mode has as many runs as
/// the baseline; `k` configs that hash alike give `k` times as many. The session of SDK build
/// `sdk` is the time between the other builds' runs of the application, so a database holding
/// several sessions compares each with its own baseline. `None` when the counts agree, the row
/// is not kernel replay, or the application has no baseline runs.
pub fn mix_from_run_counts(
    conn: &Connection,
    app: i64,
    cfg: i64,
    sdk: Option<i64>,
) -> Result<Option<String>> {
    let kernel: Option<String> = conn
        .query_row(
            "SELECT counter_collection_mode FROM benchmark_config WHERE id = ?1",
            [cfg],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    if kernel.as_deref() != Some("kernel-replay") {
        return Ok(None);
    }
    let (runs, first, last): (i64, Option<String>, Option<String>) = conn.query_row(
        "SELECT COUNT(*), MIN(executed_at), MAX(executed_at) FROM benchmark_metrics
         WHERE app_id = ?1 AND cfg_id = ?2 AND sdk_id IS ?3",
        params![app, cfg, sdk],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let (Some(first), Some(last)) = (first, last) else {
        return Ok(None);
    };
    // The session: after the other builds' last run before it, before their first run after.
    let (lo, hi): (Option<String>, Option<String>) = conn.query_row(
        "SELECT (SELECT MAX(executed_at) FROM benchmark_metrics WHERE app_id = ?1
                   AND sdk_id IS NOT ?2 AND sdk_id IS NOT NULL AND executed_at < ?3),
                (SELECT MIN(executed_at) FROM benchmark_metrics WHERE app_id = ?1
                   AND sdk_id IS NOT ?2 AND sdk_id IS NOT NULL AND executed_at > ?4)",
        params![app, sdk, first, last],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let baseline: i64 = conn.query_row(
        "SELECT COUNT(*) FROM benchmark_metrics m JOIN benchmark_config c ON c.id = m.cfg_id
         WHERE m.app_id = ?1 AND c.benchmark_mode = 'baseline'
           AND (?2 IS NULL OR m.executed_at > ?2) AND (?3 IS NULL OR m.executed_at < ?3)",
        params![app, lo, hi],
        |r| r.get(0),
    )?;
    if baseline == 0 || runs <= baseline {
        return Ok(None);
    }
    Ok(Some(format!(
        "inferred from run counts: {runs} runs where the session has {baseline} baseline runs, \
         so about {:.1} rocprofv3 configs hash to this row",
        runs as f64 / baseline as f64
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::benchmark::{ConfigData, create_schema, insert_or_reuse_config};

    /// The seed's hash puts a beta-only run and a `--replay-mode kernel` run of the same groups
    /// in one config row; the recorded modes flag it.
    #[test]
    fn beta_only_and_replay_mode_kernel_share_a_row_and_are_flagged() {
        let c = Connection::open_in_memory().unwrap();
        create_schema(&c).unwrap();
        let beta = ["--pmc", "A", "--pmc", "B", "--kernel-replay-beta-enabled"];
        let kernel = [
            "--pmc",
            "A",
            "--pmc",
            "B",
            "--replay-mode",
            "kernel",
            "--kernel-replay-beta-enabled",
        ];
        let mut ids = Vec::new();
        for args in [&beta[..], &kernel[..]] {
            let d = ConfigData::from_args("tool-runtime-overhead", args).unwrap();
            let id = insert_or_reuse_config(&c, &d, None).unwrap();
            note_replay_mode(&c, id, &replay_mode_of(d.replay.as_ref()), 3).unwrap();
            ids.push(id);
        }
        assert_eq!(ids[0], ids[1], "the seed's hash ignores --replay-mode");
        let m = mixed_modes(&c, ids[0]).unwrap().expect("mixed");
        assert!(m.contains("--replay-mode kernel): 3 run(s)"), "{m}");
        assert!(m.contains("beta flag alone"), "{m}");
        // One mode only: not mixed.
        note_replay_mode(&c, 99, "single-pass", 2).unwrap();
        assert_eq!(mixed_modes(&c, 99).unwrap(), None);
    }
}
