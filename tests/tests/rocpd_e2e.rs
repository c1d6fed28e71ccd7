//! rocpd in and out, end to end: the emulator's rocprofv3 stand-in writes a rocpd database under
//! kernel replay with libkrphase.so loaded; its rows are checked against the emulator's ground
//! truth; `krphase import-rocpd` attaches them to the run the tool recorded; `krphase export
//! rocpd` adds krphase's tables and views beside rocpd's, changing none of rocpd's rows; and
//! plain SQL over the exported views gives back what krphase holds. Refusals change nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use krphase_tests::{artifacts, krphase_db, krphase_db_ok, output_text, read_truth, scratch_dir};
use rusqlite::Connection;
use serde_json::Value;

/// One stand-in run: its directory, the rocpd database, the phase file, the truth.
struct Rv3Run {
    dir: PathBuf,
    rocpd: PathBuf,
    krp: PathBuf,
    truth: Vec<Value>,
    /// The wall clock (ms since the Unix epoch) before and after the run.
    wall_ms: (u64, u64),
}

impl Rv3Run {
    fn db(&self) -> PathBuf {
        self.dir.join("k.db")
    }
}

/// `rocprofv3 --replay-mode kernel --kernel-replay-beta-enabled --pmc … --output-format rocpd`
/// over `krphase-emu run stream`, libkrphase.so observing.
fn rocprofv3_rocpd(name: &str) -> Rv3Run {
    let a = artifacts();
    let dir = scratch_dir(name);
    let truth = dir.join("truth.jsonl");
    let before = unix_ms();
    let o = Command::new(&a.emu)
        .current_dir(&dir)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args([
            "--pmc",
            "SQ_WAVES",
            "GRBM_COUNT",
            "--pmc",
            "SQ_WAVES",
            "SQ_INSTS_VALU",
        ])
        .args(["-d", "out", "-o", "run", "--output-format", "rocpd", "--"])
        .arg(&a.emu)
        .args(["run", "stream", "--elements", "4096", "--iterations", "2"])
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_MODE", "observe")
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_OUTPUT")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .output()
        .expect("run krphase-emu rocprofv3");
    let wall_ms = (before, unix_ms());
    assert!(o.status.success(), "{}", output_text(&o));
    let out = dir.join("out");
    let krp = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "krp"))
        .expect("the tool's phase file in the output directory");
    assert!(
        !out.join(".rocprofv3-rocpd-buffer.json").exists(),
        "the counter tool's buffer is removed once the database is written"
    );
    Rv3Run {
        rocpd: out.join("run_results.db"),
        krp,
        truth: read_truth(&truth),
        dir,
        wall_ms,
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn rows(c: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut st = c.prepare(sql).unwrap_or_else(|e| panic!("{e}: {sql}"));
    let n = st.column_count();
    st.query_map([], |r| {
        (0..n)
            .map(|i| {
                let v: rusqlite::types::Value = r.get(i)?;
                Ok(format!("{v:?}"))
            })
            .collect::<rusqlite::Result<Vec<_>>>()
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// Truth per dispatch id: (kernel, pass 0's GPU start and end, every counter value delivered).
type Expected = BTreeMap<i64, (String, i64, i64, Vec<(String, f64)>)>;

/// The name rocprofv3 shows for a workload kernel: its code object's `.kd` symbol with `.kd`
/// stripped, through binutils' `c++filt`.
fn shown(kernel: &str) -> String {
    demangled(krphase_kernels::kernel_symbol(kernel).expect("a workload kernel"))
}

/// An SDK kernel name (mangled, `.kd`) as `c++filt` shows it with `(\.kd)$` stripped first.
fn demangled(raw: &str) -> String {
    krphase_tests::filters::cxxfilt(&[raw]).remove(0)
}

/// `rows` with column `col` (a raw kernel name) as `c++filt` shows it.
fn demangle_column(rows: Vec<Vec<String>>, col: usize) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|mut row| {
            let raw = row[col]
                .strip_prefix("Text(\"")
                .and_then(|t| t.strip_suffix("\")"))
                .expect("a kernel name")
                .to_string();
            row[col] = format!("{:?}", rusqlite::types::Value::Text(demangled(&raw)));
            row
        })
        .collect()
}

fn expected(truth: &[Value]) -> Expected {
    let mut m = Expected::new();
    for v in truth.iter().filter(|v| v["type"] == "window") {
        let p0 = &v["passes"][0];
        m.insert(
            v["dispatch_id"].as_i64().unwrap(),
            (
                shown(v["kernel"].as_str().unwrap()),
                p0["gpu_start"].as_i64().unwrap(),
                p0["gpu_end"].as_i64().unwrap(),
                Vec::new(),
            ),
        );
    }
    for v in truth.iter().filter(|v| v["type"] == "counter_record") {
        let e = m.get_mut(&v["dispatch_id"].as_i64().unwrap()).unwrap();
        for c in v["counters"].as_array().unwrap() {
            e.3.push((
                c["name"].as_str().unwrap().to_string(),
                c["value"].as_f64().unwrap(),
            ));
        }
    }
    for e in m.values_mut() {
        e.3.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    m
}

/// What a reader of rocpd's views gets per dispatch id, in the same shape.
fn from_rocpd_views(c: &Connection) -> Expected {
    let mut m = Expected::new();
    let mut st = c
        .prepare("SELECT dispatch_id, name, start, \"end\" FROM kernels")
        .unwrap();
    for r in st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
    {
        let (d, name, s, e): (i64, String, i64, i64) = r.unwrap();
        assert!(
            m.insert(d, (name, s, e, Vec::new())).is_none(),
            "one row per dispatch id"
        );
    }
    let mut st = c
        .prepare("SELECT dispatch_id, counter_name, counter_value FROM pmc_events")
        .unwrap();
    for r in st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
    {
        let (d, name, v): (i64, String, f64) = r.unwrap();
        m.get_mut(&d).unwrap().3.push((name, v));
    }
    for e in m.values_mut() {
        e.3.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    m
}

/// Every table that is not krphase's: (name, row count, hash of every row).
fn rocpd_tables(path: &Path) -> BTreeMap<String, (usize, u64)> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let c = Connection::open(path).unwrap();
    let names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'krphase%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(names.len() > 20, "{names:?}");
    names
        .into_iter()
        .map(|n| {
            let all = rows(&c, &format!("SELECT * FROM \"{n}\" ORDER BY rowid"));
            let mut h = DefaultHasher::new();
            all.hash(&mut h);
            (n, (all.len(), h.finish()))
        })
        .collect()
}

fn krphase_fails(db: &Path, args: &[&str]) -> String {
    let o = krphase_db(db, args);
    assert!(
        !o.status.success(),
        "{args:?} should fail: {}",
        output_text(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

fn file_bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn rocpd_written_imported_exported_and_read_back() {
    let run = rocprofv3_rocpd("rocpd-round-trip");
    // The stand-in's database, through rocpd's own views, is the emulator's ground truth: one
    // dispatch row per dispatch id with pass 0's GPU times, every pass's counter values.
    let truth = expected(&run.truth);
    assert_eq!(truth.len(), 10);
    let rocpd = Connection::open(&run.rocpd).unwrap();
    assert_eq!(from_rocpd_views(&rocpd), truth);
    let version: String = rocpd
        .query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, "3.0.3");
    check_identity(&rocpd, run.wall_ms);
    check_agents_queues_streams(&rocpd, &run.truth);
    // SQ_WAVES is in both groups: rocpd's counters_collection sums its two rows.
    let summed: f64 = rocpd
        .query_row(
            "SELECT value FROM counters_collection WHERE dispatch_id = 1 AND counter_name = 'SQ_WAVES'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        summed,
        2.0 * truth[&1].3.iter().find(|c| c.0 == "SQ_WAVES").unwrap().1
    );
    drop(rocpd);

    let db = run.db();
    krphase_db_ok(&db, &["import", run.krp.to_str().unwrap()]);
    let line = krphase_db_ok(&db, &["import-rocpd", run.rocpd.to_str().unwrap()]);
    assert!(
        line.contains("10 dispatches (10 on its windows), 40 counter rows"),
        "{line}"
    );
    check_attached(&db, &truth);
    // Idempotent: the same rows again, said so.
    let k = Connection::open(&db).unwrap();
    let attached = |k: &Connection| {
        (
            rows(
                k,
                "SELECT run_id, window_id, pass_index, rocpd_id, dispatch_id, kernel_id, kernel, agent_abs_index, queue_id, start, \"end\" FROM krphase_rocpd_dispatch ORDER BY dispatch_id",
            ),
            rows(
                k,
                "SELECT run_id, window_id, rocpd_id, dispatch_id, counter, value, occurrence FROM krphase_rocpd_counter ORDER BY rocpd_id",
            ),
        )
    };
    let before = attached(&k);
    let again = krphase_db_ok(&db, &["import-rocpd", run.rocpd.to_str().unwrap()]);
    assert!(again.contains("replaced the earlier import"), "{again}");
    assert_eq!(attached(&k), before);
    let files: i64 = k
        .query_row("SELECT COUNT(*) FROM krphase_rocpd_file", [], |r| r.get(0))
        .unwrap();
    assert_eq!(files, 1);

    // The report puts the counters beside each kernel's replay overhead, basis rocpd.
    let report: Value =
        serde_json::from_str(&krphase_db_ok(&db, &["report", "--format", "json"])).unwrap();
    let kernels = report["runs"][0]["rocpd"]["kernels"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(kernels.len(), 5, "{kernels:?}");
    for kr in &kernels {
        let waves = kr["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["counter"] == "SQ_WAVES")
            .unwrap();
        assert_eq!(waves["basis"], "rocpd");
        assert_eq!(waves["rows_per_dispatch"], 2.0);
        assert!(kr["overhead_mean_ns"].as_f64().unwrap() > 0.0);
    }
    // Compare shows each side's counters beside its overhead too.
    let cmp: Value = serde_json::from_str(&krphase_db_ok(
        &db,
        &["compare", "1", "1", "--format", "json"],
    ))
    .unwrap();
    let sides: Vec<(String, usize)> = cmp["rocpd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let n = s["section"]["kernels"].as_array().unwrap().len();
            (s["side"].as_str().unwrap().to_string(), n)
        })
        .collect();
    assert_eq!(sides, vec![("A".to_string(), 5), ("B".to_string(), 5)]);
    export_and_read_back(&run, &db);
}

/// The guid is a UUIDv7 of the run's start, the tables' suffix and `rocpd_metadata` are what
/// rocprofv3 writes for schema 3.0.3, and every row's node id is the node row's.
fn check_identity(c: &Connection, wall_ms: (u64, u64)) {
    let meta = rows(c, "SELECT tag, value FROM rocpd_metadata ORDER BY id");
    let tags: Vec<&str> = meta.iter().map(|r| r[0].as_str()).collect();
    let q = |v: &str| format!("Text({v:?})");
    assert_eq!(
        tags,
        [
            "schema_version",
            "schema_version_major",
            "schema_version_minor",
            "schema_version_patch",
            "schema_creation_time",
            "uuid",
            "guid"
        ]
        .map(q)
    );
    let value = |tag: &str| -> String {
        c.query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = ?1",
            [tag],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(
        ["3.0.3", "3", "0", "3"].map(String::from),
        [
            "schema_version",
            "schema_version_major",
            "schema_version_minor",
            "schema_version_patch"
        ]
        .map(value)
    );
    let created = value("schema_creation_time");
    assert!(
        regex::Regex::new(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
            .unwrap()
            .is_match(&created),
        "{created}"
    );
    let guid = value("guid");
    let shape =
        regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    assert!(
        shape.unwrap().is_match(&guid),
        "a v7 guid, RFC 4122 variant: {guid}"
    );
    let hex: String = guid.chars().filter(|c| *c != '-').collect();
    let ms = u64::from_str_radix(&hex[..12], 16).unwrap();
    assert!(
        wall_ms.0 <= ms && ms <= wall_ms.1,
        "the guid's time {ms} is within the run {wall_ms:?}"
    );
    assert_eq!(value("uuid"), format!("_{}", guid.replace('-', "_")));
    let suffixed: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [format!("rocpd_info_agent{}", value("uuid"))],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(suffixed, 1, "tables are suffixed with the metadata uuid");
    let (nid, hash): (i64, i64) = c
        .query_row("SELECT id, hash FROM rocpd_info_node", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        nid,
        hash % i64::from(u32::MAX),
        "node id = hash mod u32::MAX"
    );
    for table in [
        "info_process",
        "info_agent",
        "info_queue",
        "info_stream",
        "kernel_dispatch",
        "info_pmc",
    ] {
        let other: i64 = c
            .query_row(
                &format!("SELECT COUNT(*) FROM rocpd_{table} WHERE nid <> ?1 OR guid <> ?2"),
                rusqlite::params![nid, guid],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            other, 0,
            "rocpd_{table}: every row on node {nid}, guid {guid}"
        );
    }
}

/// Agents are every agent krphase-emu reports, keyed by KFD node id (the CPU agent, handle 1,
/// is node 0; GPU handle h is node h - 1), and rows name them by it; queues are keyed by
/// handle after the default queue; dispatches are on the default stream.
fn check_agents_queues_streams(c: &Connection, truth: &[Value]) {
    let t = |v: &str| format!("Text({v:?})");
    let i = |v: i64| format!("Integer({v})");
    assert_eq!(
        rows(
            c,
            "SELECT id, type, absolute_index, logical_index, type_index, name FROM rocpd_info_agent ORDER BY id"
        ),
        vec![
            vec![i(0), t("CPU"), i(0), i(0), i(0), t("krphase-emu CPU")],
            vec![i(1), t("GPU"), i(1), i(1), i(0), t("gfx942")],
        ]
    );
    let windows: Vec<&Value> = truth.iter().filter(|v| v["type"] == "window").collect();
    let mut queues: Vec<i64> = Vec::new();
    let mut dispatches: Vec<Vec<String>> = Vec::new();
    for w in &windows {
        let q = w["queue"].as_i64().unwrap();
        if !queues.contains(&q) {
            queues.push(q);
        }
        let node = w["agent"].as_i64().unwrap() - 1;
        dispatches.push(vec![
            i(w["dispatch_id"].as_i64().unwrap()),
            i(node),
            i(q),
            i(0),
        ]);
    }
    dispatches.sort();
    let mut got = rows(
        c,
        "SELECT dispatch_id, agent_id, queue_id, stream_id FROM rocpd_kernel_dispatch",
    );
    got.sort();
    assert_eq!(
        got, dispatches,
        "dispatches name agents by node id, queues by handle"
    );
    let mut expected_queues: Vec<(i64, String)> = vec![(0, "Default Queue".into())];
    for (n, q) in queues.iter().enumerate() {
        expected_queues.push((*q, format!("Queue {n}")));
    }
    expected_queues.sort();
    assert_eq!(
        rows(c, "SELECT id, name FROM rocpd_info_queue ORDER BY id"),
        expected_queues
            .iter()
            .map(|(q, name)| vec![i(*q), t(name)])
            .collect::<Vec<_>>(),
        "the default queue, then queues by handle named in order of first use"
    );
    assert_eq!(
        rows(c, "SELECT id, name FROM rocpd_info_stream"),
        vec![vec![i(0), t("Default Stream")]]
    );
    assert_eq!(
        rows(c, "SELECT DISTINCT agent_id FROM rocpd_info_pmc"),
        vec![vec![i(1)]],
        "counters name the GPU by node id"
    );
    assert_eq!(
        rows(
            c,
            "SELECT DISTINCT agent_type, agent_abs_index, queue, stream FROM kernels"
        ),
        vec![vec![t("GPU"), i(1), t("Queue 0"), t("Default Stream")]],
        "the kernels view finds agent, queue and stream"
    );
}

/// The windows' kernel names and counter values in the krphase database equal the truth.
fn check_attached(db: &Path, truth: &Expected) {
    let k = Connection::open(db).unwrap();
    let mut got = Expected::new();
    let mut st = k
        .prepare(
            "SELECT w.dispatch_id, d.kernel, d.start, d.\"end\", w.kernel, d.pass_index
             FROM krphase_rocpd_dispatch d JOIN krphase_window w ON w.id = d.window_id",
        )
        .unwrap();
    for r in st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .unwrap()
    {
        let (d, name, s, e, tool_name, pass): (i64, String, i64, i64, String, i64) = r.unwrap();
        assert_eq!(
            name,
            demangled(&tool_name),
            "rocpd shows the tool's name of dispatch {d} as rocprofv3 formats it"
        );
        assert_eq!(pass, 0, "a dispatch row carries the first pass's record");
        got.insert(d, (name, s, e, Vec::new()));
    }
    let mut st = k
        .prepare(
            "SELECT w.dispatch_id, c.counter, c.value FROM krphase_rocpd_counter c
             JOIN krphase_window w ON w.id = c.window_id",
        )
        .unwrap();
    for r in st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
    {
        let (d, name, v): (i64, String, f64) = r.unwrap();
        got.get_mut(&d).unwrap().3.push((name, v));
    }
    for e in got.values_mut() {
        e.3.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    assert_eq!(&got, truth);
}

/// Export into a copy of the database, twice; rocpd's tables survive row for row, and plain
/// joins over the exported views give back krphase's windows and passes; the metadata says
/// EMULATED (the run came from the emulator).
fn export_and_read_back(run: &Rv3Run, db: &Path) {
    let target = run.dir.join("exported.db");
    std::fs::copy(&run.rocpd, &target).unwrap();
    let before = rocpd_tables(&target);
    krphase_db_ok(db, &["export", "rocpd", "-o", target.to_str().unwrap()]);
    assert_eq!(rocpd_tables(&target), before, "rocpd's rows are unchanged");
    let c = Connection::open(&target).unwrap();
    let objects = |c: &Connection| {
        rows(
            c,
            "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'krphase%' ORDER BY name",
        )
    };
    let first = objects(&c);
    // The run came from the emulator: the export says so beside its rows.
    let metadata: String = c
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'krphase_metadata%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let emulated: String = c
        .query_row(
            &format!("SELECT value FROM \"{metadata}\" WHERE tag = 'emulated'"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(emulated.starts_with("EMULATED: "), "{emulated}");
    let read = |c: &Connection| {
        rows(
            c,
            "SELECT w.dispatch_id, k.name, w.outcome, w.window_ns, w.gpu_ns, w.executed_passes
             FROM krphase_replay_window w
             JOIN kernels k ON k.dispatch_id = w.dispatch_id AND k.guid = w.guid
             ORDER BY w.dispatch_id",
        )
    };
    let windows = read(&c);
    let k = Connection::open(db).unwrap();
    // krphase keeps the SDK's raw name; rocpd's view shows it demangled.
    let expected = demangle_column(
        rows(
            &k,
            "SELECT dispatch_id, kernel, outcome, window_ns, gpu_ns, executed_passes
             FROM krphase_window_phase ORDER BY dispatch_id",
        ),
        1,
    );
    assert_eq!(windows, expected, "windows joined to rocpd's kernels");
    let passes = rows(
        &c,
        "SELECT P.dispatch_id, P.replay_pass, S.display_name, P.gpu_end - P.gpu_start
         FROM krphase_replay_pass P
         JOIN rocpd_kernel_dispatch K ON K.dispatch_id = P.dispatch_id AND K.guid = P.guid
         JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
         ORDER BY P.dispatch_id, P.replay_pass",
    );
    let expected_passes = demangle_column(
        rows(
            &k,
            "SELECT w.dispatch_id, p.pass_index, w.kernel, p.gpu_end - p.gpu_start
             FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
             ORDER BY w.dispatch_id, p.pass_index",
        ),
        2,
    );
    assert_eq!(passes.len(), 20);
    assert_eq!(
        passes, expected_passes,
        "passes keyed on (dispatch_id, replay_pass)"
    );
    // The first pass's GPU span is rocpd's dispatch row's.
    let first_pass_is_rocpds: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM krphase_replay_passes P JOIN kernels K
               ON K.id = P.kernel_dispatch_id AND K.guid = P.guid
             WHERE P.replay_pass = 0 AND P.gpu_start = K.start AND P.gpu_end = K.\"end\"",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(first_pass_is_rocpds, 10);
    drop(c);
    // Exporting again replaces krphase's objects with the same ones.
    krphase_db_ok(db, &["export", "rocpd", "-o", target.to_str().unwrap()]);
    let c = Connection::open(&target).unwrap();
    assert_eq!(objects(&c), first);
    assert_eq!(read(&c), windows);
    assert_eq!(rocpd_tables(&target), before);
    drop(c);
    export_with_bare_uuid(run, db, &first, &windows);
}

/// rocprofv3 writes the metadata uuid with a leading `_`, other writers without: krphase names
/// its tables `krphase_*_<uuid without _>` for both, and exports and imports alike.
fn export_with_bare_uuid(run: &Rv3Run, db: &Path, first: &[Vec<String>], windows: &[Vec<String>]) {
    let c = Connection::open(&run.rocpd).unwrap();
    let uuid: String = c
        .query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = 'uuid'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(c);
    let bare = uuid
        .strip_prefix('_')
        .expect("rocprofv3's uuid starts with _");
    let names: Vec<&String> = first.iter().map(|r| &r[1]).collect();
    assert!(
        names.contains(&&format!("Text(\"krphase_replay_window_{bare}\")")),
        "{names:?}"
    );
    assert!(names.iter().all(|n| !n.contains("__")), "{names:?}");
    let target = run.dir.join("exported-bare-uuid.db");
    std::fs::copy(&run.rocpd, &target).unwrap();
    let c = Connection::open(&target).unwrap();
    c.execute(
        &format!("UPDATE \"rocpd_metadata{uuid}\" SET value = ?1 WHERE tag = 'uuid'"),
        [bare],
    )
    .unwrap();
    drop(c);
    krphase_db_ok(db, &["export", "rocpd", "-o", target.to_str().unwrap()]);
    let c = Connection::open(&target).unwrap();
    assert_eq!(
        rows(
            &c,
            "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'krphase%' ORDER BY name"
        ),
        first,
        "the same krphase objects for a bare uuid"
    );
    let read = rows(
        &c,
        "SELECT w.dispatch_id, k.name, w.outcome, w.window_ns, w.gpu_ns, w.executed_passes
         FROM krphase_replay_window w
         JOIN kernels k ON k.dispatch_id = w.dispatch_id AND k.guid = w.guid
         ORDER BY w.dispatch_id",
    );
    assert_eq!(read, windows);
    drop(c);
    let line = krphase_db_ok(db, &["import-rocpd", target.to_str().unwrap()]);
    assert!(line.contains("10 dispatches (10 on its windows)"), "{line}");
}

/// Refusals, each one line and changing nothing: import-rocpd of a file that is not rocpd, of
/// another process, without a matching run, of an unknown version whose views no longer match
/// (and the same unknown version read where they still do); export into a read-only file, a
/// database that is not rocpd, a version whose tables no longer match.
#[test]
fn rocpd_refusals_change_nothing() {
    let run = rocprofv3_rocpd("rocpd-refusals");
    let db = run.db();
    let rocpd = run.rocpd.to_str().unwrap();
    // Only another process's run imported: nothing to attach to.
    let synth = run.dir.join("synth.krp");
    let o = Command::new(&artifacts().krphase)
        .args(["gen-synthetic", "--windows", "5", "-o"])
        .arg(&synth)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", output_text(&o));
    krphase_db_ok(&db, &["import", synth.to_str().unwrap()]);
    let e = krphase_fails(&db, &["import-rocpd", rocpd]);
    assert!(e.contains("no imported run is process"), "{e}");
    krphase_db_ok(&db, &["import", run.krp.to_str().unwrap()]);
    let unchanged = |f: &dyn Fn() -> String, want: &str| {
        let before = file_bytes(&db);
        let e = f();
        assert!(e.contains(want), "{e} lacks {want:?}");
        assert_eq!(file_bytes(&db), before, "{e}: the krphase database changed");
    };
    unchanged(
        &|| krphase_fails(&db, &["import-rocpd", run.krp.to_str().unwrap()]),
        "not a SQLite database",
    );
    unchanged(
        &|| krphase_fails(&db, &["import-rocpd", db.to_str().unwrap()]),
        "not a rocpd database",
    );
    let variant = |name: &str, sql: &str| {
        let p = run.dir.join(name);
        std::fs::copy(&run.rocpd, &p).unwrap();
        let c = Connection::open(&p).unwrap();
        let process: String = c
            .query_row(
                "SELECT name FROM sqlite_master WHERE name LIKE 'rocpd_info_process_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let metadata: String = c
            .query_row(
                "SELECT name FROM sqlite_master WHERE name LIKE 'rocpd_metadata_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        c.execute_batch(
            &sql.replace("PROCESS", &process)
                .replace("METADATA", &metadata),
        )
        .unwrap();
        p
    };
    let other_pid = variant(
        "other-pid.db",
        "UPDATE \"PROCESS\" SET pid = pid + 100000, id = id + 100000;",
    );
    // The dispatch rows name the process by id: re-point them so the views still join.
    let c = Connection::open(&other_pid).unwrap();
    let kd: String = c
        .query_row(
            "SELECT name FROM sqlite_master WHERE name LIKE 'rocpd_kernel_dispatch_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    c.execute_batch(&format!("UPDATE \"{kd}\" SET pid = pid + 100000;"))
        .unwrap();
    drop(c);
    unchanged(
        &|| krphase_fails(&db, &["import-rocpd", other_pid.to_str().unwrap()]),
        "no imported run is process",
    );
    let earlier = variant(
        "earlier.db",
        "UPDATE \"PROCESS\" SET start = start - 1000000000000, \"end\" = start - 999000000000;",
    );
    unchanged(
        &|| krphase_fails(&db, &["import-rocpd", earlier.to_str().unwrap()]),
        "is another process",
    );
    let broken = variant(
        "newer-broken.db",
        "UPDATE \"METADATA\" SET value = '9.0.0' WHERE tag = 'schema_version';
         DROP VIEW pmc_events;
         CREATE VIEW pmc_events AS SELECT id, guid, pmc_id, value FROM rocpd_pmc_event;",
    );
    unchanged(
        &|| krphase_fails(&db, &["import-rocpd", broken.to_str().unwrap()]),
        "rocpd schema 9.0.0, unknown to krphase, does not match what krphase reads: pmc_events has no column pid",
    );
    // An unknown version whose views still match is read, and said so.
    let newer = variant(
        "newer.db",
        "UPDATE \"METADATA\" SET value = '9.0.0' WHERE tag = 'schema_version';",
    );
    let line = krphase_db_ok(&db, &["import-rocpd", newer.to_str().unwrap()]);
    assert!(
        line.contains("newer than the versions krphase knows; its views still match"),
        "{line}"
    );
    assert!(line.contains("40 counter rows"), "{line}");

    // Export refusals leave the target byte for byte as it was.
    let refused = |target: &Path, want: &str| {
        let before = file_bytes(target);
        let e = krphase_fails(&db, &["export", "rocpd", "-o", target.to_str().unwrap()]);
        assert!(e.contains(want), "{e} lacks {want:?}");
        assert_eq!(file_bytes(target), before, "{e}: the target changed");
    };
    let ro = run.dir.join("read-only.db");
    std::fs::copy(&run.rocpd, &ro).unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    perm.set_readonly(true);
    std::fs::set_permissions(&ro, perm).unwrap();
    refused(&ro, "read-only");
    refused(&db, "not a rocpd database");
    let no_tables = variant(
        "newer-tables.db",
        "UPDATE \"METADATA\" SET value = '9.0.0' WHERE tag = 'schema_version';
         DROP VIEW kernels; DROP VIEW pmc_events; DROP VIEW counters_collection;
         DROP VIEW rocpd_kernel_dispatch;
         CREATE VIEW rocpd_kernel_dispatch AS SELECT id, guid FROM rocpd_event;",
    );
    refused(
        &no_tables,
        "rocpd_kernel_dispatch has no column dispatch_id",
    );
}
