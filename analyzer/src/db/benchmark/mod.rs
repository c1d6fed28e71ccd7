//! The seed harness's benchmark database (`rocprofv3-benchmark`): its tables and views, the replay
//! bookkeeping on config rows (`derive_replay_config`, config-row reuse by hash), the column
//! migration of older databases, and the replay view. `krphase bench --db` and
//! `krphase import-benchmark` share this one implementation.

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use std::fmt;

/// Metric columns of `benchmark_metrics` and the unit stored with their statistics.
pub const METRICS: [(&str, &str); 10] = [
    ("wall_time", "sec"),
    ("cpu_time", "sec"),
    ("cpu_util", "%"),
    ("peak_rss", "MB"),
    ("page_rss", "MB"),
    ("virtual_memory", "MB"),
    ("major_page_faults", ""),
    ("minor_page_faults", ""),
    ("priority_context_switches", ""),
    ("voluntary_context_switches", ""),
];

/// Metrics that add up across runs, so a single-group figure times the group count projects an
/// application-replay cost. Every other metric gets no projection.
pub const ADDITIVE_METRICS: [&str; 2] = ["wall_time", "cpu_time"];

/// The benchmark modes a config row may carry.
pub const BENCHMARK_MODES: [&str; 5] = [
    "baseline",
    "disabled-sdk-contexts",
    "sdk-buffer-overhead",
    "sdk-callback-overhead",
    "tool-runtime-overhead",
];

/// The replay columns added to `benchmark_config` after the original schema (migrated in).
pub const ADDED_CONFIG_COLUMNS: [(&str, &str); 3] = [
    ("kernel_replay", "INTEGER"),
    ("counter_group_count", "INTEGER"),
    ("counter_collection_mode", "TEXT"),
];

/// How several counter groups are collected (`counter_collection_mode`, and the CSV `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectionMode {
    None,
    SinglePass,
    ApplicationReplay,
    Multiplexed,
    KernelReplay,
    Unknown,
}

impl CollectionMode {
    pub const ALL: [CollectionMode; 6] = [
        CollectionMode::None,
        CollectionMode::SinglePass,
        CollectionMode::ApplicationReplay,
        CollectionMode::Multiplexed,
        CollectionMode::KernelReplay,
        CollectionMode::Unknown,
    ];

    /// The hyphenated database / CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CollectionMode::None => "none",
            CollectionMode::SinglePass => "single-pass",
            CollectionMode::ApplicationReplay => "application-replay",
            CollectionMode::Multiplexed => "multiplexed",
            CollectionMode::KernelReplay => "kernel-replay",
            CollectionMode::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<CollectionMode> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl fmt::Display for CollectionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The replay columns of one config, derived from its rocprofv3 arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayConfig {
    /// Set only when the replay flag was present: its value.
    pub kernel_replay: Option<bool>,
    /// Set only when known (an input file makes it unknown).
    pub counter_group_count: Option<u32>,
    pub counter_collection_mode: CollectionMode,
    /// `--replay-mode kernel` was given. Newer rocprofv3 needs it (with the beta flag as the
    /// acknowledgement) to run kernel replay; the beta flag alone leaves it on application replay.
    pub replay_mode_kernel: bool,
}

impl ReplayConfig {
    /// True when the arguments ask for kernel replay with the beta flag but without
    /// `--replay-mode kernel`: newer rocprofv3 runs application replay (or rejects it), so the
    /// `kernel-replay` label describes what was asked for, not what ran.
    pub fn beta_flag_without_replay_mode(&self) -> bool {
        self.kernel_replay == Some(true) && !self.replay_mode_kernel
    }
}

/// A value of `--kernel-replay-beta-enabled` that is neither true nor false.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid value {value:?} for --kernel-replay-beta-enabled (expected one of y yes t true on 1 / n no f false off 0)"
)]
pub struct InvalidReplayFlag {
    pub value: String,
}

pub const REPLAY_FLAG: &str = "--kernel-replay-beta-enabled";

/// rocprofv3's truth table, case-insensitive.
pub fn parse_truth(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "y" | "yes" | "t" | "true" | "on" | "1" => Some(true),
        "n" | "no" | "f" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Derives the replay columns from one config's rocprofv3 arguments (the seed's rules, plus
/// `--replay-mode kernel` recognised: it turns replay on as it does in newer rocprofv3).
/// `Ok(None)`: not a counter run (no replay flag, no `--pmc`, group count known).
pub fn derive_replay_config<S: AsRef<str>>(
    args: Option<&[S]>,
) -> Result<Option<ReplayConfig>, InvalidReplayFlag> {
    let Some(args) = args else { return Ok(None) };
    if args.is_empty() {
        return Ok(None);
    }
    let mut replay: Option<bool> = None;
    let mut replay_mode_kernel = false;
    let mut groups: u32 = 0;
    let mut input_file = false;
    let mut i = 0;
    while i < args.len() {
        let token = args[i].as_ref();
        let (name, inline) = match token.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (token, None),
        };
        match name {
            REPLAY_FLAG => match inline {
                Some(v) => {
                    replay = Some(parse_truth(v).ok_or_else(|| InvalidReplayFlag {
                        value: v.to_string(),
                    })?)
                }
                None => match args.get(i + 1).and_then(|n| parse_truth(n.as_ref())) {
                    Some(v) => {
                        replay = Some(v);
                        i += 1;
                    }
                    None => replay = Some(true),
                },
            },
            "--pmc" => groups += 1,
            "-i" | "--input" => input_file = true,
            "--replay-mode" => {
                let value = match inline {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        args.get(i).map(|s| s.as_ref())
                    }
                };
                replay_mode_kernel = value == Some("kernel");
            }
            _ => {}
        }
        i += 1;
    }
    if replay_mode_kernel && replay.is_none() {
        replay = Some(true);
    }
    if replay.is_none() && groups == 0 && !input_file {
        return Ok(None);
    }
    let mode = if replay == Some(true) {
        CollectionMode::KernelReplay
    } else if input_file {
        CollectionMode::Unknown
    } else {
        match groups {
            0 => CollectionMode::None,
            1 => CollectionMode::SinglePass,
            _ => CollectionMode::ApplicationReplay,
        }
    };
    Ok(Some(ReplayConfig {
        kernel_replay: replay,
        counter_group_count: (!input_file).then_some(groups),
        counter_collection_mode: mode,
        replay_mode_kernel,
    }))
}

// ---------------------------------------------------------------------------------------------
// Schema

const TABLES_SQL: &str = r#"
CREATE TABLE IF NOT EXISTS benchmarked_app (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hash_id TEXT NOT NULL,
    md5sum TEXT NOT NULL,
    revision INTEGER DEFAULT 0,
    command TEXT NOT NULL,
    compiler_id TEXT, compiler_version TEXT, library_arch TEXT,
    system_name TEXT, system_processor TEXT, system_version TEXT,
    threads BIGINT, hip_compiler_api BIGINT, hip_runtime_api BIGINT, hsa_api BIGINT,
    kernel_dispatch BIGINT, marker_api BIGINT, memory_allocation BIGINT, memory_copy BIGINT,
    ompt BIGINT, rccl_api BIGINT, rocdecode_api BIGINT, rocjpeg_api BIGINT,
    scratch_memory BIGINT,
    environment TEXT DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS benchmarked_sdk (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hash_id TEXT NOT NULL,
    version_major INTEGER, version_minor INTEGER, version_patch INTEGER, soversion INTEGER,
    compiler_id TEXT, compiler_version TEXT, git_revision TEXT, library_arch TEXT,
    system_name TEXT, system_processor TEXT, system_version TEXT
);
CREATE TABLE IF NOT EXISTS benchmark_config (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hash_id TEXT NOT NULL,
    sdk_id INTEGER REFERENCES benchmarked_sdk(id),
    label TEXT,
    benchmark_mode TEXT NOT NULL CHECK (benchmark_mode IN ('baseline', 'disabled-sdk-contexts',
        'sdk-buffer-overhead', 'sdk-callback-overhead', 'tool-runtime-overhead')),
    kernel_rename INTEGER, group_by_queue INTEGER, kernel_trace INTEGER, hsa_trace INTEGER,
    hip_runtime_trace INTEGER, hip_compiler_trace INTEGER, marker_trace INTEGER,
    memory_copy_trace INTEGER, memory_allocation_trace INTEGER, scratch_memory_trace INTEGER,
    dispatch_counter_collection INTEGER, rccl_trace INTEGER, rocdecode_trace INTEGER,
    rocjpeg_trace INTEGER,
    pmc_counters TEXT DEFAULT '[]',
    kernel_replay INTEGER,
    counter_group_count INTEGER,
    counter_collection_mode TEXT CHECK (counter_collection_mode IS NULL OR counter_collection_mode
        IN ('none', 'single-pass', 'application-replay', 'multiplexed', 'kernel-replay', 'unknown')),
    pc_sampling_host_trap INTEGER, pc_sampling_stocastic INTEGER, advanced_thread_trace INTEGER
);
CREATE TABLE IF NOT EXISTS benchmark_metrics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id INTEGER NOT NULL REFERENCES benchmarked_app(id),
    cfg_id INTEGER NOT NULL REFERENCES benchmark_config(id),
    sdk_id INTEGER REFERENCES benchmarked_sdk(id),
    executed_at TEXT,
    wall_time DOUBLE, cpu_time DOUBLE, cpu_util DOUBLE, peak_rss DOUBLE, page_rss DOUBLE,
    virtual_memory DOUBLE,
    major_page_faults BIGINT, minor_page_faults BIGINT, priority_context_switches BIGINT,
    voluntary_context_switches BIGINT
);
CREATE TABLE IF NOT EXISTS benchmark_statistics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id INTEGER, cfg_id INTEGER, sdk_id INTEGER,
    metric_name TEXT NOT NULL, metric_unit TEXT,
    count INTEGER, sum DOUBLE, mean DOUBLE, min DOUBLE, max DOUBLE, std_dev DOUBLE
);
"#;

/// The per-metric views; `{{metric}}` is replaced by each metric name. Written with
/// single-quoted literals so it parses with SQLite's DQS misfeature off.
const VIEWS_SQL: &str = r#"
CREATE VIEW IF NOT EXISTS benchmarked_app_without_env AS
SELECT id, hash_id, md5sum, revision, command, compiler_id, compiler_version, library_arch,
       system_name, system_processor, system_version, threads, hip_compiler_api, hip_runtime_api,
       hsa_api, kernel_dispatch, marker_api, memory_allocation, memory_copy, ompt, rccl_api,
       rocdecode_api, rocjpeg_api, scratch_memory
FROM benchmarked_app;

CREATE VIEW IF NOT EXISTS benchmark_analysis_{{metric}} AS
SELECT s.id, s.app_id, s.cfg_id, s.sdk_id, sdk.git_revision, app.command, s.metric_name,
       s.metric_unit, s.count, s.mean, s.std_dev AS "+/-",
       b.mean AS baseline_mean, b.std_dev AS "+/- (baseline)",
       (s.mean - b.mean) / b.mean * 100.0 AS "overhead (%)",
       c.benchmark_mode, c.label AS benchmark_label
FROM benchmark_statistics s
JOIN benchmark_config c ON c.id = s.cfg_id
LEFT JOIN benchmarked_sdk sdk ON sdk.id = s.sdk_id
LEFT JOIN benchmarked_app app ON app.id = s.app_id
LEFT JOIN benchmark_statistics b
       ON b.app_id = s.app_id AND b.metric_name = s.metric_name AND b.sdk_id IS NULL
WHERE s.sdk_id IS NOT NULL AND s.metric_name = '{{metric}}'
ORDER BY "overhead (%)" DESC;

CREATE VIEW IF NOT EXISTS benchmark_replay_{{metric}} AS
SELECT s.id, s.app_id, s.cfg_id, s.sdk_id, sdk.git_revision, app.command,
       c.label AS benchmark_label, c.benchmark_mode, c.counter_collection_mode,
       c.counter_group_count AS counter_groups, c.kernel_replay,
       s.metric_name, s.metric_unit, s.count, s.mean AS measured, s.std_dev AS "+/-",
       ref.single_group_measured,
       CASE WHEN s.metric_name IN ('wall_time', 'cpu_time')
            THEN ref.single_group_measured * c.counter_group_count END
           AS application_replay_projected,
       CASE WHEN s.metric_name IN ('wall_time', 'cpu_time') AND s.mean > 0
            THEN ref.single_group_measured * c.counter_group_count / s.mean END
           AS "speedup vs application replay"
FROM benchmark_statistics s
JOIN benchmark_config c ON c.id = s.cfg_id
LEFT JOIN benchmarked_sdk sdk ON sdk.id = s.sdk_id
LEFT JOIN benchmarked_app app ON app.id = s.app_id
LEFT JOIN (
    SELECT s2.app_id, s2.sdk_id, c2.benchmark_mode, MIN(s2.mean) AS single_group_measured
    FROM benchmark_statistics s2
    JOIN benchmark_config c2 ON c2.id = s2.cfg_id
    WHERE c2.counter_collection_mode = 'single-pass' AND s2.metric_name = '{{metric}}'
    GROUP BY s2.app_id, s2.sdk_id, c2.benchmark_mode
) ref ON ref.app_id = s.app_id AND ref.sdk_id IS s.sdk_id
     AND ref.benchmark_mode = c.benchmark_mode
WHERE s.metric_name = '{{metric}}' AND c.counter_group_count > 0;
"#;

/// Lets SQL written with double-quoted string literals (the seed's views and CHECKs) parse even
/// in an SQLite built with `SQLITE_DQS=0`.
pub fn enable_dqs(conn: &Connection) -> Result<()> {
    use rusqlite::config::DbConfig;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, true)
        .context("enable double-quoted string literals (DML)")?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DDL, true)
        .context("enable double-quoted string literals (DDL)")?;
    Ok(())
}

/// Creates the tables (if absent), migrates the replay columns in, and creates the views once
/// per metric. Idempotent.
pub fn create_schema(conn: &Connection) -> Result<()> {
    conn.execute_batch(TABLES_SQL)
        .context("create the benchmark tables")?;
    migrate_config_columns(conn)?;
    create_views(conn)
}

/// Runs the views script once per metric (`CREATE VIEW IF NOT EXISTS`: re-running is harmless).
pub fn create_views(conn: &Connection) -> Result<()> {
    for (metric, _) in METRICS {
        conn.execute_batch(&VIEWS_SQL.replace("{{metric}}", metric))
            .with_context(|| format!("create the benchmark views for {metric}"))?;
    }
    Ok(())
}

/// Adds the replay columns that an older `benchmark_config` lacks; returns the names added.
/// Columns only: no CHECK is added to an old table, and rows keep NULL in the new columns.
pub fn migrate_config_columns(conn: &Connection) -> Result<Vec<&'static str>> {
    let existing = table_columns(conn, "benchmark_config")?;
    if existing.is_empty() {
        bail!("the database has no benchmark_config table");
    }
    let mut added = Vec::new();
    for (name, ty) in ADDED_CONFIG_COLUMNS {
        if !existing.iter().any(|c| c == name) {
            conn.execute_batch(&format!(
                "ALTER TABLE benchmark_config ADD COLUMN {name} {ty}"
            ))
            .with_context(|| format!("add column benchmark_config.{name}"))?;
            added.push(name);
        }
    }
    Ok(added)
}

/// Column names of a table (empty when the table does not exist).
pub fn table_columns(conn: &Connection, table: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt
        .query_map([table], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

// ---------------------------------------------------------------------------------------------
// Config rows

/// One feature of a config row, in the fixed column order the hash uses.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

/// The data of one config row before hashing: features in column order, then the replay fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConfigData {
    /// `benchmark_mode` plus every truthy feature column, in the table's column order.
    pub features: Vec<(String, FeatureValue)>,
    /// Settings with no column of their own (e.g. the kernel include regex): hashed and named in
    /// the label, so runs that differ in them get separate rows.
    pub hash_only: Vec<(String, String)>,
    pub replay: Option<ReplayConfig>,
}

impl ConfigData {
    /// A config for `benchmark_mode` from rocprofv3 arguments: `--pmc` counters become
    /// `pmc_counters` (with `dispatch_counter_collection`), `--kernel-trace` becomes `kernel_trace`.
    pub fn from_args<S: AsRef<str>>(benchmark_mode: &str, args: &[S]) -> Result<ConfigData> {
        if !BENCHMARK_MODES.contains(&benchmark_mode) {
            bail!("unknown benchmark mode {benchmark_mode:?}");
        }
        let mut features = vec![(
            "benchmark_mode".to_string(),
            FeatureValue::Text(benchmark_mode.to_string()),
        )];
        if benchmark_mode == "baseline" {
            return Ok(ConfigData {
                features,
                ..Default::default()
            });
        }
        let mut counters: Vec<String> = Vec::new();
        let mut kernel_trace = false;
        let mut hash_only = Vec::new();
        let mut it = args.iter().map(|a| a.as_ref()).peekable();
        while let Some(a) = it.next() {
            if a == "--" {
                break;
            }
            if let Some(v) = a.strip_prefix("--pmc=") {
                counters.extend(
                    v.split([' ', ','])
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
            } else if a == "--pmc" {
                while let Some(next) = it.peek() {
                    if next.starts_with('-') {
                        break;
                    }
                    counters.extend(
                        next.split([' ', ','])
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    );
                    it.next();
                }
            } else if a == "--kernel-trace" {
                kernel_trace = true;
            } else if (a == "--kernel-include-regex" || a == "--kernel-exclude-regex")
                && let Some(v) = it.next()
            {
                hash_only.push((a.trim_start_matches("--").replace('-', "_"), v.to_string()));
            }
        }
        if kernel_trace {
            features.push(("kernel_trace".into(), FeatureValue::Bool(true)));
        }
        if !counters.is_empty() {
            features.push((
                "dispatch_counter_collection".into(),
                FeatureValue::Bool(true),
            ));
            features.push((
                "pmc_counters".into(),
                FeatureValue::Text(serde_json::to_string(&counters)?),
            ));
        }
        let replay = derive_replay_config(Some(args)).map_err(anyhow::Error::from)?;
        Ok(ConfigData {
            features,
            hash_only,
            replay,
        })
    }

    /// The hash text: a JSON object of the data, spaces and newlines removed.
    pub fn hash_text(&self) -> String {
        let mut obj = serde_json::Map::new();
        for (k, v) in &self.features {
            let v = match v {
                FeatureValue::Bool(b) => serde_json::Value::Bool(*b),
                FeatureValue::Int(i) => serde_json::Value::from(*i),
                FeatureValue::Text(s) => serde_json::Value::String(s.clone()),
            };
            obj.insert(k.clone(), v);
        }
        for (k, v) in &self.hash_only {
            obj.insert(k.clone(), serde_json::Value::String(v.clone()));
        }
        if let Some(r) = &self.replay {
            if let Some(k) = r.kernel_replay {
                obj.insert("kernel_replay".into(), serde_json::Value::from(k as i64));
            }
            if let Some(n) = r.counter_group_count {
                obj.insert("counter_group_count".into(), serde_json::Value::from(n));
            }
            obj.insert(
                "counter_collection_mode".into(),
                serde_json::Value::String(r.counter_collection_mode.as_str().into()),
            );
        }
        serde_json::Value::Object(obj)
            .to_string()
            .replace([' ', '\n'], "")
    }

    pub fn hash_id(&self) -> String {
        md5_hex(self.hash_text().as_bytes())
    }

    /// Sorted feature names, plus "Kernel Replay" and "Counter Groups=N", joined with " + ".
    pub fn label(&self) -> String {
        let mut names: Vec<String> = self
            .features
            .iter()
            .filter(|(k, _)| k != "benchmark_mode")
            .map(|(k, v)| feature_label(k, v))
            .chain(
                self.hash_only
                    .iter()
                    .map(|(k, v)| format!("{}={v}", feature_label(k, &FeatureValue::Bool(true)))),
            )
            .collect();
        names.sort();
        if let Some(r) = &self.replay {
            if r.kernel_replay == Some(true) {
                names.push("Kernel Replay".into());
            }
            if let Some(n) = r.counter_group_count.filter(|n| *n > 0) {
                names.push(format!("Counter Groups={n}"));
            }
        }
        names.join(" + ")
    }

    fn benchmark_mode(&self) -> &str {
        self.features
            .iter()
            .find_map(|(k, v)| match (k.as_str(), v) {
                ("benchmark_mode", FeatureValue::Text(s)) => Some(s.as_str()),
                _ => None,
            })
            .unwrap_or("baseline")
    }
}

fn feature_label(key: &str, value: &FeatureValue) -> String {
    let base = key
        .trim_end_matches("_trace")
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ");
    match (key, value) {
        ("pmc_counters", FeatureValue::Text(t)) => format!("PMC={t}"),
        _ => base,
    }
}

/// md5 hex digest (the seed's hash function, kept so hashes match its databases).
pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    let digest = md5::Md5::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Finds the config row with this data's hash, or inserts one. The sdk id is not hashed: a
/// reused row keeps the sdk id of its first insert.
pub fn insert_or_reuse_config(
    conn: &Connection,
    data: &ConfigData,
    sdk_id: Option<i64>,
) -> Result<i64> {
    let hash = data.hash_id();
    if let Some(id) = first_id(
        conn,
        "SELECT id FROM benchmark_config WHERE hash_id = ?1 ORDER BY id LIMIT 1",
        [&hash],
    )? {
        return Ok(id);
    }
    let mut cols = vec![
        "hash_id".to_string(),
        "sdk_id".into(),
        "label".into(),
        "benchmark_mode".into(),
    ];
    let mut values: Vec<rusqlite::types::Value> = vec![
        hash.clone().into(),
        sdk_id.into(),
        data.label().into(),
        data.benchmark_mode().to_string().into(),
    ];
    for (k, v) in &data.features {
        if k == "benchmark_mode" {
            continue;
        }
        cols.push(k.clone());
        values.push(match v {
            FeatureValue::Bool(b) => (*b as i64).into(),
            FeatureValue::Int(i) => (*i).into(),
            FeatureValue::Text(s) => s.clone().into(),
        });
    }
    if let Some(r) = &data.replay {
        cols.push("kernel_replay".into());
        values.push(r.kernel_replay.map(|b| b as i64).into());
        cols.push("counter_group_count".into());
        values.push(r.counter_group_count.map(i64::from).into());
        cols.push("counter_collection_mode".into());
        values.push(r.counter_collection_mode.as_str().to_string().into());
    }
    let placeholders = (1..=cols.len())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    conn.execute(
        &format!(
            "INSERT INTO benchmark_config ({}) VALUES ({placeholders})",
            cols.join(", ")
        ),
        rusqlite::params_from_iter(values),
    )
    .context("insert a benchmark_config row")?;
    Ok(conn.last_insert_rowid())
}

/// Finds or inserts the app row for a command and its environment (hashed as the seed does:
/// command JSON and environment text, spaces and newlines removed; `md5sum` of the executable
/// when it can be read). Runs that differ only in environment get separate rows.
pub fn insert_or_reuse_app(
    conn: &Connection,
    command: &[String],
    environment: &std::collections::BTreeMap<String, String>,
    md5sum: &str,
) -> Result<i64> {
    let command_json = serde_json::to_string(command)?;
    let env_json = serde_json::to_string(environment)?;
    let hash = md5_hex(
        format!("{command_json}{env_json}")
            .replace([' ', '\n'], "")
            .as_bytes(),
    );
    if let Some(id) = first_id(
        conn,
        "SELECT id FROM benchmarked_app WHERE hash_id = ?1 AND md5sum = ?2 ORDER BY id LIMIT 1",
        params![hash, md5sum],
    )? {
        return Ok(id);
    }
    conn.execute(
        "INSERT INTO benchmarked_app (hash_id, md5sum, command, environment) VALUES (?1, ?2, ?3, \
         ?4)",
        params![hash, md5sum, command_json, env_json],
    )?;
    Ok(conn.last_insert_rowid())
}

/// One timed run's metrics (NULL where not measured).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunMetrics {
    pub wall_time: Option<f64>,
    pub cpu_time: Option<f64>,
    pub peak_rss: Option<f64>,
}

pub fn insert_metrics(
    conn: &Connection,
    app_id: i64,
    cfg_id: i64,
    sdk_id: Option<i64>,
    executed_at: &str,
    m: &RunMetrics,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO benchmark_metrics (app_id, cfg_id, sdk_id, executed_at, wall_time, cpu_time, \
         peak_rss) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            app_id,
            cfg_id,
            sdk_id,
            executed_at,
            m.wall_time,
            m.cpu_time,
            m.peak_rss
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The id the query's first row holds, if any.
fn first_id(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Option<i64>> {
    Ok(conn.query_row(sql, params, |r| r.get(0)).optional()?)
}

/// The raw, non-NULL values of one metric column for an (app, cfg, sdk) group, as REAL.
pub fn metric_values(
    conn: &Connection,
    metric: &str,
    app: i64,
    cfg: i64,
    sdk: Option<i64>,
) -> Result<Vec<f64>> {
    Ok(conn
        .prepare(&format!(
            "SELECT CAST({metric} AS REAL) FROM benchmark_metrics WHERE app_id = ?1 AND \
             cfg_id = ?2 AND sdk_id IS ?3 AND {metric} IS NOT NULL"
        ))?
        .query_map(params![app, cfg, sdk], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Recomputes `benchmark_statistics` for every (app, cfg, sdk) and metric from the metrics rows,
/// updating an existing row for the same ids and metric. std_dev is the sample standard
/// deviation, NULL below two samples.
pub fn generate_statistics(conn: &Connection) -> Result<()> {
    let groups: Vec<(i64, i64, Option<i64>)> = conn
        .prepare("SELECT DISTINCT app_id, cfg_id, sdk_id FROM benchmark_metrics")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (app, cfg, sdk) in groups {
        for (metric, unit) in METRICS {
            let values = metric_values(conn, metric, app, cfg, sdk)?;
            if values.is_empty() {
                continue;
            }
            let n = values.len() as f64;
            let sum: f64 = values.iter().sum();
            let mean = sum / n;
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let std_dev = (values.len() > 1).then(|| {
                (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
            });
            let existing: Option<i64> = conn
                .query_row(
                    "SELECT id FROM benchmark_statistics WHERE app_id = ?1 AND cfg_id = ?2 AND \
                     sdk_id IS ?3 AND metric_name = ?4",
                    params![app, cfg, sdk, metric],
                    |r| r.get(0),
                )
                .optional()?;
            match existing {
                Some(id) => conn.execute(
                    "UPDATE benchmark_statistics SET metric_unit = ?2, count = ?3, sum = ?4, \
                     mean = ?5, min = ?6, max = ?7, std_dev = ?8 WHERE id = ?1",
                    params![id, unit, values.len() as i64, sum, mean, min, max, std_dev],
                )?,
                None => conn.execute(
                    "INSERT INTO benchmark_statistics (app_id, cfg_id, sdk_id, metric_name, \
                     metric_unit, count, sum, mean, min, max, std_dev) VALUES (?1, ?2, ?3, ?4, \
                     ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    params![
                        app,
                        cfg,
                        sdk,
                        metric,
                        unit,
                        values.len() as i64,
                        sum,
                        mean,
                        min,
                        max,
                        std_dev
                    ],
                )?,
            };
        }
    }
    Ok(())
}

/// Finds or inserts the sdk row for a version text ("X.Y.Z"; other text leaves the numbers NULL).
pub fn insert_or_reuse_sdk(conn: &Connection, version: &str) -> Result<i64> {
    let hash = md5_hex(format!("krphase-sdk-version:{version}").as_bytes());
    if let Some(id) = first_id(
        conn,
        "SELECT id FROM benchmarked_sdk WHERE hash_id = ?1 ORDER BY id LIMIT 1",
        [&hash],
    )? {
        return Ok(id);
    }
    let parts: Vec<Option<i64>> = version.split('.').map(|p| p.parse().ok()).collect();
    let part = |i: usize| parts.get(i).copied().flatten();
    conn.execute(
        "INSERT INTO benchmarked_sdk (hash_id, version_major, version_minor, version_patch, \
         git_revision) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![hash, part(0), part(1), part(2), version],
    )?;
    Ok(conn.last_insert_rowid())
}

#[cfg(test)]
mod tests;
