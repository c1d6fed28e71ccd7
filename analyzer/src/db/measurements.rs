//! Whole-run measurements in the analyzer database (`krphase_measurement`, and
//! `krphase_measurement_run` linking a measurement to the phase-file runs it produced): the row
//! type every source produces, where rows come from, the writes, and the reads every answer uses
//! ([`read_measurements`], with the check of a row's replay claim, [`ReplayCheck`]). `krphase
//! bench` and the importers (`import-harness`, `import-benchmark`) share this one implementation.

use std::fmt;
use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, params};
use serde::Serialize;

use super::benchmark::{CollectionMode, derive_replay_config};

/// `krphase_measurement.source` of rows measured by `krphase bench`.
pub const SOURCE_BENCH: &str = "krphase-bench";
/// `krphase_measurement.source` of rows imported from a replay_perf.py (or `krphase bench`) CSV.
pub const SOURCE_REPLAY_PERF: &str = "replay_perf";
/// Why a replay_perf.py row has no SDK log, and how to keep one (one line).
pub const NO_SDK_LOG: &str = "no SDK log can be joined: replay_perf.py sends a successful \
    run's stderr, where the SDK logs, to a temporary file it deletes (it shows the tail only \
    when a run fails); to keep it, run the rows with `krphase bench` (each run's stderr lands \
    beside its phase file) or give replay_perf.py a --rocprofv3 wrapper that appends stderr to \
    a file, with ROCPROFILER_LOG_LEVEL=info, then `krphase import-log`";

/// `krphase_measurement.source` of rows imported from a rocprofv3-benchmark database.
pub const SOURCE_BENCHMARK_DB: &str = "rocprofv3-benchmark";

/// P6's tracing-cost rows (`krphase bench`): one counter group without rocprofv3's replay, and
/// libkrphase.so disabled, or driving replay with a filter that matches no kernel, without and
/// with dispatch tracing (`KRPHASE_GPU_TIMES=0` / `1`).
pub const P6_TOOL_OFF: &str = "krphase-off";
pub const P6_DRIVE_UNTRACED: &str = "krphase-drive-untraced";
pub const P6_DRIVE_TRACED: &str = "krphase-drive-traced";

/// Failed timed runs of a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failures {
    Count(u32),
    /// No timed run succeeded.
    All,
}

impl fmt::Display for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failures::Count(n) => write!(f, "{n}"),
            Failures::All => f.write_str("all"),
        }
    }
}

/// Statistics of the successful timed runs (absent when every run failed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub peak_child_rss_kib: u64,
}

/// One whole-run measurement: one CSV row, one `krphase_measurement` row.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRow {
    pub experiment: String,
    pub variant: String,
    pub mode: CollectionMode,
    pub detail: String,
    pub timing: Option<Timing>,
    pub samples: u32,
    pub failures: Failures,
    /// The full rocprofv3 command, arguments joined with single spaces.
    pub command: String,
}

impl MeasurementRow {
    /// The `-d` (or `--output-directory`) argument of the command, if any.
    pub fn output_dir(&self) -> Option<&str> {
        output_dir_of(&self.command)
    }

    /// The counter group count its command asks for (`--pmc` flags; `None` with an input file
    /// or no counters).
    pub fn counter_groups(&self) -> Option<u32> {
        counter_groups_of(&self.command)
    }

    /// The output directory of each command of the row: one, or several for a row derived from
    /// other measurements (commands joined with " ; ", e.g. P1's application-replay total).
    pub fn output_dirs(&self) -> Vec<&str> {
        self.command
            .split(" ; ")
            .filter_map(output_dir_of)
            .collect()
    }
}

/// The counter group count a rocprofv3 command asks for: its `--pmc` flags before `--` (`None`
/// for an input-file or counter-less command, or a row derived from several commands).
pub fn counter_groups_of(command: &str) -> Option<u32> {
    if command.contains(" ; ") {
        return None;
    }
    let args: Vec<&str> = command.split(' ').take_while(|t| *t != "--").collect();
    derive_replay_config(Some(&args))
        .ok()
        .flatten()
        .and_then(|r| r.counter_group_count)
        .filter(|n| *n > 0)
}

/// True when a rocprofv3 command (before its `--`) carries `--replay-mode kernel`.
pub fn has_replay_mode_kernel(command: &str) -> bool {
    let args: Vec<&str> = command.split(' ').take_while(|t| *t != "--").collect();
    args.windows(2)
        .any(|w| w[0] == "--replay-mode" && w[1] == "kernel")
        || args.contains(&"--replay-mode=kernel")
}

fn output_dir_of(command: &str) -> Option<&str> {
    let mut tokens = command.split(' ');
    while let Some(t) = tokens.next() {
        if t == "--" {
            break;
        }
        if t == "-d" || t == "--output-directory" {
            return tokens.next();
        }
        if let Some(v) = t.strip_prefix("--output-directory=") {
            return Some(v);
        }
    }
    None
}

/// Inserts one measurement row and returns its id. With `replace`, an earlier row of the same
/// measurement (source, experiment, variant, command, output directory) goes first, so
/// re-importing a file does not duplicate it.
pub fn insert_measurement(
    conn: &Connection,
    source: &str,
    row: &MeasurementRow,
    outdir: Option<&Path>,
    label: Option<&str>,
    replace: bool,
) -> Result<i64> {
    let outdir = outdir.map(|p| p.display().to_string());
    if replace {
        delete_measurement(conn, source, row, outdir.as_deref())?;
    }
    let t = row.timing;
    conn.execute(
        "INSERT INTO krphase_measurement (source, experiment, variant, mode, detail, median_s, \
         min_s, max_s, peak_child_rss_kib, samples, failures, command, outdir, label, \
         imported_at, metric, counter_groups) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
         ?11, ?12, ?13, ?14, ?15, 'wall_time', ?16)",
        params![
            source,
            row.experiment,
            row.variant,
            row.mode.as_str(),
            row.detail,
            t.map(|t| t.median_s),
            t.map(|t| t.min_s),
            t.map(|t| t.max_s),
            t.map(|t| t.peak_child_rss_kib as i64),
            row.samples,
            row.failures.to_string(),
            row.command,
            outdir,
            label,
            super::now_utc(),
            row.counter_groups(),
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn delete_measurement(
    conn: &Connection,
    source: &str,
    row: &MeasurementRow,
    outdir: Option<&str>,
) -> Result<()> {
    let key = params![source, row.experiment, row.variant, row.command, outdir];
    conn.execute(
        "DELETE FROM krphase_measurement_run WHERE measurement_id IN (SELECT id FROM \
         krphase_measurement WHERE source = ?1 AND experiment = ?2 AND variant = ?3 AND command \
         = ?4 AND outdir IS ?5)",
        key,
    )?;
    conn.execute(
        "DELETE FROM krphase_measurement WHERE source = ?1 AND experiment = ?2 AND variant = ?3 \
         AND command = ?4 AND outdir IS ?5",
        key,
    )?;
    Ok(())
}

/// Links an imported run to a measurement (linking twice is a no-op).
pub fn link_run(conn: &Connection, measurement_id: i64, run_id: i64) -> Result<()> {
    link_run_in_launch(conn, measurement_id, run_id, None)
}

/// Links an imported run to a measurement as part of timed launch `launch` (one rocprofv3
/// command; `None`: the run is a launch of its own).
pub fn link_run_in_launch(
    conn: &Connection,
    measurement_id: i64,
    run_id: i64,
    launch: Option<i64>,
) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO krphase_measurement_run (measurement_id, run_id) VALUES (?1, ?2)",
        params![measurement_id, run_id],
    )?;
    if let Some(launch) = launch {
        conn.execute(
            "INSERT OR REPLACE INTO krphase_measurement_launch (measurement_id, run_id, launch) \
             VALUES (?1, ?2, ?3)",
            params![measurement_id, run_id, launch],
        )?;
    }
    Ok(())
}

/// Records a warm-up launch's run beside a measurement, outside every statistic.
pub fn link_warmup(conn: &Connection, measurement_id: i64, run_id: i64) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO krphase_measurement_warmup (measurement_id, run_id) VALUES (?1, ?2)",
        params![measurement_id, run_id],
    )?;
    Ok(())
}

/// Whether a row's claim to have run kernel replay holds. A row *claims* replay when its mode is
/// `kernel-replay` and it is not P6's `replay-active-none-matched` (which matches no kernel by
/// design). rocprofv3 runs application replay when given the beta flag without
/// `--replay-mode kernel`, so the mode column says what was asked for, not what ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ReplayCheck {
    /// The row does not claim kernel replay.
    NotClaimed,
    /// Its linked phase files hold replayed windows.
    Replayed { windows: i64 },
    /// Its linked phase files hold no replayed window: the claim is false.
    NoReplayedWindow { phase_files: i64 },
    /// No phase files; the command asks for kernel replay as rocprofv3 needs it.
    CommandOnly,
    /// No phase files, and the command lacks `--replay-mode kernel`: it ran application replay.
    NoReplayMode,
    /// Neither phase files nor a rocprofv3 command to judge by (benchmark databases).
    Unverifiable,
    /// Its phase files sit in `pass_<n>` directories: rocprofv3 launched the application once
    /// per counter group (application replay), whatever replayed inside each launch.
    ApplicationReplay { phase_files: i64 },
    /// P6's replay-active row replayed windows although its filter matches no kernel.
    FilterReplayed { windows: i64 },
    /// P6's replay-active row: replay configured (`--replay-mode kernel`), nothing replayed.
    Configured,
    /// P6's replay-active row whose command lacks `--replay-mode kernel` (replay_perf.py never
    /// writes it; a `--rocprofv3` wrapper can add it), but whose `groups` counter groups ran in
    /// one launch per timed run, no `pass_<n>` directory: rocprofv3 collects several groups in
    /// one launch only in kernel replay mode, so replay was configured (inferred from the
    /// launches), and nothing replayed.
    ConfiguredByLaunches { groups: i64, launches: usize },
}

impl ReplayCheck {
    /// Why figures built on the row are invalid; `None` when they are not.
    pub fn invalid_reason(&self) -> Option<String> {
        match self {
            ReplayCheck::NoReplayedWindow { phase_files } => Some(format!(
                "claims kernel replay but its {phase_files} linked phase file(s) hold no replayed window"
            )),
            ReplayCheck::NoReplayMode => Some(
                "claims kernel replay but its command lacks --replay-mode kernel (rocprofv3 then runs application replay)"
                    .into(),
            ),
            ReplayCheck::ApplicationReplay { phase_files } => Some(format!(
                "ran application replay, not kernel replay: its {phase_files} phase file(s) sit in rocprofv3's pass_<n> directories (one launch per group)"
            )),
            ReplayCheck::FilterReplayed { windows } => Some(format!(
                "claims replay active with no kernel matched but its phase files hold {windows} replayed window(s)"
            )),
            _ => None,
        }
    }
}

/// One stored measurement with its links, as every answer reads it.
#[derive(Debug, Clone, Serialize)]
pub struct StoredMeasurement {
    pub measurement_id: i64,
    pub source: Option<String>,
    pub label: Option<String>,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub mode: Option<String>,
    pub detail: Option<String>,
    pub metric: Option<String>,
    /// Counter groups: as stored, else from the command (`--pmc` flags) or a benchmark
    /// database row's `detail`.
    pub counter_groups: Option<i64>,
    pub median_s: Option<f64>,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub peak_child_rss_kib: Option<i64>,
    pub samples: Option<i64>,
    pub failures: Option<String>,
    /// The seed's application-replay projection (benchmark databases' replay view).
    pub projected_s: Option<f64>,
    /// The seed's speedup vs application replay (same view).
    pub speedup: Option<f64>,
    pub command: Option<String>,
    /// The output directory of a CSV row, or the file a benchmark database row came from.
    pub outdir: Option<String>,
    pub imported_at: Option<String>,
    /// The modes its benchmark config row mixes, when it mixes several (`config_modes`).
    pub mixed_modes: Option<String>,
    pub linked_runs: Vec<i64>,
    /// The linked runs grouped by timed launch (one rocprofv3 command each), in launch order.
    pub launches: Vec<Vec<i64>>,
    /// Runs of warm-up launches found beside the timed ones (kept out of every statistic).
    pub warmup_runs: Vec<i64>,
    pub replay_check: ReplayCheck,
}

impl StoredMeasurement {
    /// Why figures built on this row are invalid; `None` when they are not.
    pub fn invalid_reason(&self) -> Option<String> {
        if let Some(m) = &self.mixed_modes {
            return Some(format!(
                "averages the runs of several rocprofv3 configs in one benchmark config row \
                 ({m}): the seed's config hash ignores --replay-mode, so --replay-mode kernel \
                 runs and beta-flag-only runs (application replay on current rocprofv3) land \
                 in one row"
            ));
        }
        self.replay_check.invalid_reason()
    }

    /// What a valid row's figures cannot show (one line), when something.
    pub fn caveat(&self) -> Option<String> {
        if let ReplayCheck::ConfiguredByLaunches { groups, launches } = self.replay_check {
            return Some(format!(
                "measurement {} ({}/{}): replay configured, inferred: its command lacks \
                 --replay-mode kernel, but its {groups} counter groups ran in one launch per \
                 timed run ({launches} launch(es), no pass_<n> directory), which rocprofv3 does \
                 only in kernel replay mode",
                self.measurement_id,
                self.experiment.as_deref().unwrap_or("?"),
                self.variant.as_deref().unwrap_or("?")
            ));
        }
        (self.replay_check == ReplayCheck::Unverifiable && self.claims_replay()).then(|| {
            format!(
                "measurement {} ({}/{}): kernel replay unverifiable: a rocprofv3-benchmark \
                 database keeps no phase files and no rocprofv3 arguments, and its config hash \
                 ignores --replay-mode, so the row may average --replay-mode kernel runs with \
                 beta-flag-only runs (application replay on current rocprofv3)",
                self.measurement_id,
                self.experiment.as_deref().unwrap_or("?"),
                self.variant.as_deref().unwrap_or("?")
            )
        })
    }

    /// The one warning line of a row whose figures are invalid (import and report print it).
    pub fn warning(&self) -> Option<String> {
        let why = self.invalid_reason()?;
        Some(format!(
            "measurement {} ({} {}/{}): {why}; figures built on it are marked invalid",
            self.measurement_id,
            self.source.as_deref().unwrap_or("?"),
            self.experiment.as_deref().unwrap_or("?"),
            self.variant.as_deref().unwrap_or("?")
        ))
    }

    fn claims_replay(&self) -> bool {
        self.mode.as_deref() == Some(CollectionMode::KernelReplay.as_str())
    }

    /// P6's replay-active row: replay configured, and by design no kernel matches.
    fn matches_nothing(&self) -> bool {
        self.variant.as_deref() == Some("replay-active-none-matched")
    }
}

/// Which measurements to read.
#[derive(Debug, Clone, PartialEq)]
pub enum MeasurementFilter {
    All,
    /// The one row with this id.
    Id(i64),
    /// Rows carrying this label (`--label` of the import).
    Label(String),
    /// Rows linked to any of these runs.
    LinkedTo(Vec<i64>),
    /// Rows any of these filters keeps.
    Any(Vec<MeasurementFilter>),
}

impl MeasurementFilter {
    fn keeps(&self, m: &StoredMeasurement) -> bool {
        match self {
            MeasurementFilter::All => true,
            MeasurementFilter::Id(id) => m.measurement_id == *id,
            MeasurementFilter::Label(l) => m.label.as_deref() == Some(l.as_str()),
            MeasurementFilter::LinkedTo(ids) => m.linked_runs.iter().any(|r| ids.contains(r)),
            MeasurementFilter::Any(fs) => fs.iter().any(|f| f.keeps(m)),
        }
    }
}

/// `key=value` from a benchmark database row's `detail`.
fn detail_field<'a>(detail: &'a str, key: &str) -> Option<&'a str> {
    detail
        .split(' ')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The measurements `filter` selects, in id order, each with its linked runs and replay check.
pub fn read_measurements(
    conn: &Connection,
    filter: &MeasurementFilter,
) -> Result<Vec<StoredMeasurement>> {
    let mut stmt = conn.prepare(
        "SELECT id, source, label, experiment, variant, mode, detail, metric, counter_groups,
                median_s, min_s, max_s, peak_child_rss_kib, samples, failures, projected_s,
                speedup, command, outdir, imported_at, mixed_modes
         FROM krphase_measurement ORDER BY id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok(StoredMeasurement {
                measurement_id: r.get(0)?,
                source: r.get(1)?,
                label: r.get(2)?,
                experiment: r.get(3)?,
                variant: r.get(4)?,
                mode: r.get(5)?,
                detail: r.get(6)?,
                metric: r.get(7)?,
                counter_groups: r.get(8)?,
                median_s: r.get(9)?,
                min_s: r.get(10)?,
                max_s: r.get(11)?,
                peak_child_rss_kib: r.get(12)?,
                samples: r.get(13)?,
                failures: r.get(14)?,
                projected_s: r.get(15)?,
                speedup: r.get(16)?,
                command: r.get(17)?,
                outdir: r.get(18)?,
                imported_at: r.get(19)?,
                mixed_modes: r.get(20)?,
                linked_runs: Vec::new(),
                launches: Vec::new(),
                warmup_runs: Vec::new(),
                replay_check: ReplayCheck::NotClaimed,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for mut m in rows {
        read_links(conn, &mut m)?;
        if !filter.keeps(&m) {
            continue;
        }
        fill_older_columns(&mut m);
        m.replay_check = replay_check(conn, &m)?;
        out.push(m);
    }
    Ok(out)
}

/// The measurement's linked runs, their launches and its warm-up runs.
fn read_links(conn: &Connection, m: &mut StoredMeasurement) -> Result<()> {
    let mut links = conn.prepare_cached(
        "SELECT mr.run_id, l.launch FROM krphase_measurement_run mr
         LEFT JOIN krphase_measurement_launch l
           ON l.measurement_id = mr.measurement_id AND l.run_id = mr.run_id
         WHERE mr.measurement_id = ?1 ORDER BY l.launch, mr.run_id",
    )?;
    let links: Vec<(i64, Option<i64>)> = links
        .query_map([m.measurement_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut launches: Vec<(Option<i64>, Vec<i64>)> = Vec::new();
    for (run, launch) in &links {
        match launches.last_mut() {
            Some((l, runs)) if launch.is_some() && l == launch => runs.push(*run),
            _ => launches.push((*launch, vec![*run])),
        }
    }
    m.launches = launches.into_iter().map(|(_, r)| r).collect();
    m.linked_runs = links.into_iter().map(|(r, _)| r).collect();
    m.linked_runs.sort_unstable();
    let mut warm = conn.prepare_cached(
        "SELECT run_id FROM krphase_measurement_warmup WHERE measurement_id = ?1 ORDER BY run_id",
    )?;
    m.warmup_runs = warm
        .query_map([m.measurement_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(())
}

/// Rows imported before the metric and group columns existed: the same facts from `detail`
/// (benchmark databases) or the command (CSV and bench rows).
fn fill_older_columns(m: &mut StoredMeasurement) {
    let from_db = m.source.as_deref() == Some(SOURCE_BENCHMARK_DB);
    let detail = m.detail.clone().unwrap_or_default();
    if m.metric.is_none() {
        m.metric = if from_db {
            detail_field(&detail, "metric").map(String::from)
        } else {
            Some("wall_time".into())
        };
    }
    if m.counter_groups.is_none() {
        m.counter_groups = if from_db {
            detail_field(&detail, "groups").and_then(|g| g.parse().ok())
        } else {
            m.command
                .as_deref()
                .and_then(counter_groups_of)
                .map(i64::from)
        };
    }
    if from_db {
        let num = |k: &str| detail_field(&detail, k).and_then(|v| v.parse::<f64>().ok());
        m.projected_s = m
            .projected_s
            .or_else(|| num("application_replay_projected"));
        m.speedup = m.speedup.or_else(|| num("speedup_vs_application_replay"));
    }
}

/// How many of the measurement's linked runs sit in a `pass_<n>` directory.
fn runs_in_pass_dirs(conn: &Connection, m: &StoredMeasurement) -> Result<i64> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.path FROM krphase_run r JOIN krphase_measurement_run mr ON mr.run_id = r.id
         WHERE mr.measurement_id = ?1",
    )?;
    let paths: Vec<String> = stmt
        .query_map([m.measurement_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(paths
        .iter()
        .filter(|p| super::runs::pass_dir(p).is_some())
        .count() as i64)
}

/// The counter groups of a row whose several groups ran in one launch per timed run: phase
/// files linked, none in a `pass_<n>` directory (the caller has checked), two or more groups
/// in its command. Application replay would have launched the application once per group,
/// each in its own `pass_<n>`.
fn groups_in_one_launch(m: &StoredMeasurement) -> Option<i64> {
    let groups = m.counter_groups.filter(|g| *g >= 2)?;
    (!m.linked_runs.is_empty()).then_some(groups)
}

fn replay_check(conn: &Connection, m: &StoredMeasurement) -> Result<ReplayCheck> {
    if !m.claims_replay() {
        return Ok(ReplayCheck::NotClaimed);
    }
    if !m.linked_runs.is_empty() && runs_in_pass_dirs(conn, m)? > 0 {
        return Ok(ReplayCheck::ApplicationReplay {
            phase_files: m.linked_runs.len() as i64,
        });
    }
    let windows: i64 = conn.query_row(
        "SELECT COUNT(*) FROM krphase_window w JOIN krphase_measurement_run mr
           ON mr.run_id = w.run_id
         WHERE mr.measurement_id = ?1 AND w.outcome = 'replayed'",
        [m.measurement_id],
        |r| r.get(0),
    )?;
    if m.matches_nothing() {
        let configured = m.command.as_deref().is_some_and(has_replay_mode_kernel);
        return Ok(if windows > 0 {
            ReplayCheck::FilterReplayed { windows }
        } else if configured {
            ReplayCheck::Configured
        } else if let Some(groups) = groups_in_one_launch(m) {
            ReplayCheck::ConfiguredByLaunches {
                groups,
                launches: m.launches.len(),
            }
        } else if m.source.as_deref() == Some(SOURCE_BENCHMARK_DB) {
            ReplayCheck::Unverifiable
        } else {
            ReplayCheck::NoReplayMode
        });
    }
    if !m.linked_runs.is_empty() {
        return Ok(if windows > 0 {
            ReplayCheck::Replayed { windows }
        } else {
            ReplayCheck::NoReplayedWindow {
                phase_files: m.linked_runs.len() as i64,
            }
        });
    }
    if m.source.as_deref() == Some(SOURCE_BENCHMARK_DB) {
        return Ok(ReplayCheck::Unverifiable);
    }
    Ok(match m.command.as_deref() {
        Some(c) if has_replay_mode_kernel(c) => ReplayCheck::CommandOnly,
        Some(_) => ReplayCheck::NoReplayMode,
        None => ReplayCheck::Unverifiable,
    })
}

/// The labels that name measurements (import `--label`), sorted.
pub fn measurement_labels(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT DISTINCT label FROM krphase_measurement WHERE label IS NOT NULL ORDER BY label",
    )?;
    let labels = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_replay_mode_come_from_the_command() {
        let c = "rocprofv3 --pmc A B --pmc A C --kernel-replay-beta-enabled -d o -- app --pmc X";
        assert_eq!(counter_groups_of(c), Some(2));
        assert!(!has_replay_mode_kernel(c));
        assert!(has_replay_mode_kernel(
            "rocprofv3 --pmc A --replay-mode kernel --kernel-replay-beta-enabled -- app"
        ));
        assert_eq!(counter_groups_of("rocprofv3 -i g.json -d o -- app"), None);
        assert_eq!(counter_groups_of("a --pmc X ; b --pmc Y"), None);
    }

    /// The claim check: beta flag alone without phase files; phase files without a replayed
    /// window; P6's filtered row without `--replay-mode kernel`; a replayed run clears the row.
    #[test]
    fn replay_claims_are_checked_against_phase_files_then_the_command() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, imported_at) VALUES
               (1, 'a', 'h1', 'now'), (2, 'b', 'h2', 'now');
             INSERT INTO krphase_window (run_id, dispatch_id, outcome) VALUES (2, 1, 'replayed');
             INSERT INTO krphase_measurement (id, source, experiment, variant, mode, command) VALUES
               (1, 'replay_perf', 'P1', 'replay-all-groups', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled -d x -- app'),
               (2, 'replay_perf', 'P2', 'passes-2', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled -d y -- app'),
               (3, 'replay_perf', 'P6', 'replay-active-none-matched', 'kernel-replay',
                'rocprofv3 --pmc A --kernel-replay-beta-enabled -- app'),
               (4, 'krphase-bench', 'P3', 'elements-8', 'kernel-replay',
                'rocprofv3 --pmc A --replay-mode kernel --kernel-replay-beta-enabled -- app'),
               (5, 'replay_perf', 'P3', 'elements-9', 'kernel-replay', 'rocprofv3 --pmc A -- app'),
               (6, 'rocprofv3-benchmark', 'tool-runtime-overhead', 'r', 'kernel-replay', 'app');
             INSERT INTO krphase_measurement_run VALUES (2, 1), (5, 2);",
        )
        .unwrap();
        let m = read_measurements(&c, &MeasurementFilter::All).unwrap();
        let checks: Vec<&ReplayCheck> = m.iter().map(|m| &m.replay_check).collect();
        assert_eq!(
            checks,
            [
                &ReplayCheck::NoReplayMode,
                &ReplayCheck::NoReplayedWindow { phase_files: 1 },
                &ReplayCheck::NoReplayMode,
                &ReplayCheck::CommandOnly,
                &ReplayCheck::Replayed { windows: 1 },
                &ReplayCheck::Unverifiable,
            ]
        );
        let invalid: Vec<bool> = m.iter().map(|m| m.invalid_reason().is_some()).collect();
        assert_eq!(invalid, [true, true, true, false, false, false]);
        assert_eq!(m[0].counter_groups, Some(2), "from the command");
        let linked = read_measurements(&c, &MeasurementFilter::LinkedTo(vec![2])).unwrap();
        assert_eq!(linked.len(), 1);
        assert_eq!(linked[0].measurement_id, 5);
    }

    /// P6's replay-active row is judged like P1's: valid only with replay configured, never
    /// when rocprofv3 ran application replay (files in pass_<n>) or when something replayed.
    #[test]
    fn p6_replay_active_row_is_checked() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, imported_at) VALUES
               (1, 'w/p6-filtered/pass_1/k-1.krp', 'h1', 'now'),
               (2, 'w/p6-filtered/pass_2/k-2.krp', 'h2', 'now'),
               (3, 'w/p6-filtered/k-3.krp', 'h3', 'now'),
               (4, 'w/p6-filtered/k-4.krp', 'h4', 'now');
             INSERT INTO krphase_window (run_id, dispatch_id, outcome) VALUES (4, 1, 'replayed');
             INSERT INTO krphase_measurement (id, source, experiment, variant, mode, command) VALUES
               (1, 'replay_perf', 'P6', 'replay-active-none-matched', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled --kernel-include-regex x -d w -- app'),
               (2, 'krphase-bench', 'P6', 'replay-active-none-matched', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --replay-mode kernel --kernel-replay-beta-enabled -d w -- app'),
               (3, 'krphase-bench', 'P6', 'replay-active-none-matched', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --replay-mode kernel --kernel-replay-beta-enabled -d w -- app'),
               (4, 'krphase-bench', 'P1', 'replay-all-groups', 'kernel-replay',
                'rocprofv3 --pmc A --pmc B --replay-mode kernel --kernel-replay-beta-enabled -d w -- app');
             INSERT INTO krphase_measurement_run (measurement_id, run_id) VALUES
               (1, 1), (1, 2), (2, 3), (3, 4), (4, 1);",
        )
        .unwrap();
        let m = read_measurements(&c, &MeasurementFilter::All).unwrap();
        let checks: Vec<&ReplayCheck> = m.iter().map(|m| &m.replay_check).collect();
        assert_eq!(
            checks,
            [
                &ReplayCheck::ApplicationReplay { phase_files: 2 },
                &ReplayCheck::Configured,
                &ReplayCheck::FilterReplayed { windows: 1 },
                &ReplayCheck::ApplicationReplay { phase_files: 1 },
            ]
        );
        let invalid: Vec<bool> = m.iter().map(|m| m.invalid_reason().is_some()).collect();
        assert_eq!(invalid, [true, false, true, true]);
        assert!(
            m[0].invalid_reason()
                .unwrap()
                .contains("application replay")
        );
    }
}
